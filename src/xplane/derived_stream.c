/*
 * derived_stream.c - the derived lines of one GPU stream (XProf's
 * DeriveEventsFromAnnotationsForLines): Framework Name Scope, Framework Ops,
 * XLA Modules, XLA Ops and Source code, from each kernel's hlo_module /
 * hlo_op / program_id / tf_op stats and the HLO symbol resolver.
 *
 * Speed: a stream is read in place when already in start order; only the
 * wanted stats of an event are decoded; event names are stored once each
 * (equal names, equal addresses, so merging compares pointers) and not
 * even built while a kernel repeats the last one's module or op.
 */
#include "derived_int.h"
#include "base/bigalloc.h"
#include "reader/xstat_usual.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- reading event stats -------------------------------------------------------- */

/* Parse an XStat body. Returns 0 or -1 on corrupt bytes. */
static int lite_stat_parse(struct wire w, struct lite_stat *st)
{
    st->meta_id = 0;
    st->kind = XP_STAT_NONE;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        uint64_t v;
        struct wire sub;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t == WIRE_VARINT && (f == 1 || f == 3 || f == 4 || f == 7)) {
            if (wire_varint(&w, &v) != 0)
                return -1;
            if (f == 1) {
                st->meta_id = (int64_t)v;
            } else {
                st->kind = f == 3 ? XP_STAT_UINT : f == 4 ? XP_STAT_INT : XP_STAT_REF;
                st->u = v;
            }
        } else if (t == WIRE_LEN && (f == 5 || f == 6 || f == 8)) {
            if (wire_bytes(&w, &sub) != 0)
                return -1;
            st->kind = f == 5 ? XP_STAT_STR : XP_STAT_BYTES;
            st->str = (const char *)sub.p;
            st->len = (size_t)(sub.end - sub.p);
        } else if (t == WIRE_I64 && f == 2) {
            if (wire_fixed64(&w, &v) != 0)
                return -1;
            st->kind = XP_STAT_DOUBLE;
        } else if (wire_skip(&w, t) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Call fn(ctx, plane, k, stat) for each stat of the event (its own, not its
 * metadata's) whose metadata id is ids[k], in order; stops at corrupt bytes. */
void dv_each_stat(const struct xp_plane *pl, const struct xp_line *ln, const struct xp_event *ev,
                  const int64_t *ids, int nids,
                  void (*fn)(void *, const struct xp_plane *, int, const struct lite_stat *),
                  void *ctx)
{
    struct xp_stat_iter it;
    struct wire w, sub;

    xp_stat_iter_init(&it, pl, ln, ev);
    w = it.w;
    while (xp_next_stat_body(&w, &sub) == 1) {
        struct lite_stat st;
        struct xp_stat usual;
        int k;

        /* A stat of the usual shape (one id, one value) that is not wanted
         * is skipped without more; any other shape is read in full (where
         * a second id wins). */
        if (xp_stat_parse_usual(&sub, &usual)) {
            for (k = 0; k < nids && ids[k] != usual.meta_id; k++)
                ;
            if (k == nids)
                continue;
        }
        if (lite_stat_parse(sub, &st) != 0)
            return;
        for (k = 0; k < nids; k++) {
            if (ids[k] == st.meta_id && ids[k] != XP_NO_STAT) {
                fn(ctx, pl, k, &st);
                break;
            }
        }
    }
}

/* --- XLA Modules / XLA Ops / Framework lines per stream ------------------------------ */

/* What DeriveEventsFromAnnotations reads from a kernel event's own stats
 * (GpuEventStats; the last of repeated stats wins). */
struct kernel_stats {
    int is_kernel;         /* kernel_details non-empty */
    const char *module;    /* hlo_module */
    size_t module_len;     /* its length */
    const char *ops;       /* hlo_op ("a::b" for nested) */
    size_t ops_len;        /* its length */
    int has_ops;           /* hlo_op present (IsXlaOp, even when empty) */
    const char *tf_op;     /* tf_op */
    size_t tf_op_len;      /* its length */
    int has_program;       /* program_id present */
    uint64_t program;      /* its value */
    struct ref_text *refs; /* texts of referenced stats seen lately */
    uint32_t refs_mask;    /* entries in refs - 1 */
};

enum { KS_KERNEL, KS_MODULE, KS_OP, KS_TF_OP, KS_PROGRAM, KS__COUNT };

/* The stream's caches below (referenced texts, symbol lookups, XLA Ops
 * names) are direct-mapped, sized by the stream's events between these
 * (a program's ops are a few hundred to a few thousand: fewer slots than
 * that thrash as the steps repeat them; a stream of a few events needs a
 * few). */
#define STREAM_CACHE_MIN 16
#define STREAM_CACHE_MAX 4096

/* The text of a referenced stat metadata, remembered by id (kernels refer
 * to the same few module and op names over and over). */
struct ref_text {
    uint64_t id;   /* stat metadata id + 1, or 0: empty slot */
    const char *s; /* its name */
    size_t n;      /* its length */
};

static void ref_lookup(struct ref_text *cache, uint32_t mask, const struct xp_plane *pl,
                       uint64_t id, const char **s, size_t *n)
{
    struct ref_text *c = &cache[id & mask];

    if (c->id != id + 1) {
        const struct xp_stat_meta *m = xp_plane_stat_meta(pl, (int64_t)id);
        c->id = id + 1;
        c->s = m != NULL ? m->name : "";
        c->n = strlen(c->s);
    }
    *s = c->s;
    *n = c->n;
}

static void kernel_stat(void *ctx, const struct xp_plane *pl, int which, const struct lite_stat *st)
{
    struct kernel_stats *ks = ctx;
    const char *s;
    size_t n;

    if (which == KS_PROGRAM) {
        if (st->kind == XP_STAT_INT || st->kind == XP_STAT_UINT) {
            ks->has_program = 1;
            ks->program = st->u;
        }
        return;
    }
    if (st->kind == XP_STAT_REF) {
        ref_lookup(ks->refs, ks->refs_mask, pl, st->u, &s, &n);
    } else if (st->kind == XP_STAT_STR) {
        s = st->str;
        n = st->len;
    } else {
        return;
    }
    if (which == KS_KERNEL) {
        ks->is_kernel = n > 0;
    } else if (which == KS_MODULE) {
        ks->module = s;
        ks->module_len = n;
    } else if (which == KS_OP) {
        ks->has_ops = 1;
        ks->ops = s;
        ks->ops_len = n;
    } else {
        ks->tf_op = s;
        ks->tf_op_len = n;
    }
}

/* Give back the unused part of a line sized by its hint. */
void dvb_shrink(struct builder_line *b)
{
    struct dv_line *l = dvb_line(b);
    struct dv_event *ev;

    if (l == NULL || l->nev == 0 || l->cap == l->nev)
        return;
    ev = big_realloc(l->ev, l->nev * sizeof(*ev));
    if (ev != NULL) {
        l->ev = ev;
        l->cap = l->nev;
    }
}

/* Recent symbol lookups by the op name's bytes: a referenced stat's text
 * (the usual case) keeps its address, so the address, length and program
 * identify the name. */
struct lookup_entry {
    const char *op;            /* op name bytes, or NULL */
    size_t len;                /* their length */
    uint64_t program;          /* program id */
    const struct dh_instr *in; /* what it resolved to (may be NULL) */
};

/* Recent XLA Ops names by what they are built from (name_key): the op's
 * text keeps its address (a referenced stat's name, or the stat's bytes),
 * so a key seen before names the same stored string. */
struct op_name {
    struct name_key key; /* what it was built from (key.a NULL: empty slot) */
    const char *stored;  /* the interned name */
    size_t op_at;        /* where the op starts in it */
};

/* The five derived lines of one stream. */
struct stream_lines {
    struct builder_line name_scope; /* Framework Name Scope */
    struct builder_line tf_ops;     /* Framework Ops */
    struct builder_line modules;    /* XLA Modules */
    struct builder_line ops;        /* XLA Ops */
    struct builder_line source;     /* Source code */
    uint32_t mask;                  /* entries in each cache - 1 */
    struct lookup_entry *cache;     /* symbol lookups */
    struct op_name *op_names;       /* XLA Ops names */
    struct ref_text *refs;          /* referenced stat texts */
};

static void stream_lines_free(struct stream_lines *s)
{
    free(s->cache);
    free(s->op_names);
    free(s->refs);
    free(s);
}

/* The HLO instruction of (program, op) (XProf's symbol resolver). */
static const struct dh_instr *find_instr(struct stream_lines *s, const struct derived_hlo *hlo,
                                         uint64_t program, const char *op, size_t len)
{
    struct lookup_entry *c = &s->cache[(((uintptr_t)op >> 3) ^ (uintptr_t)program ^ len) & s->mask];

    if (c->op != op || c->len != len || c->program != program) {
        c->op = op;
        c->len = len;
        c->program = program;
        c->in = derived_hlo_find(hlo, program, op, len);
    }
    return c->in;
}

/* XProf's ProcessTfOpEvent with a resolved op: name scopes (TensorFlow and
 * JAX ops), then the op itself. */
static int add_tf_op(struct stream_lines *s, const struct dh_instr *in, uint64_t ts, uint64_t dur,
                     int32_t group)
{
    uint32_t k;
    int rc = 0;

    if (in->nscopes > 0) {
        for (k = 0; k < in->nscopes && rc == 0; k++)
            rc = dvb_expand_or_add(&s->name_scope, in->scopes[k], NULL, 1, NULL, ts, dur, group,
                                   (int)k);
        if (rc == 0)
            dvb_reset(&s->name_scope, (int)in->nscopes);
    }
    if (rc == 0)
        rc = dvb_expand_or_add(&s->tf_ops, in->tf_op, in->tf_shown, 1, NULL, ts, dur, group, 0);
    return rc;
}

/* Adds one name scope of an event's own tf_op stat. */
struct scope_adder {
    struct stream_lines *s; /* the lines */
    uint64_t ts, dur;       /* the event's span */
    int32_t group;          /* its group */
    int level;              /* next level */
};

static int add_scope(void *arg, const char *p, size_t n)
{
    struct scope_adder *a = arg;
    const char *name = dv_intern(a->s->name_scope.dv, p, n);

    if (name == NULL)
        return -ENOMEM;
    return dvb_expand_or_add(&a->s->name_scope, name, NULL, 1, NULL, a->ts, a->dur, a->group,
                             a->level++);
}

/* ProcessTfOpEvent for a kernel's own tf_op stat (TensorFlow kernels). */
static int add_event_tf_op(struct stream_lines *s, const char *op, size_t n, uint64_t ts,
                           uint64_t dur, int32_t group)
{
    struct scope_adder a = {s, ts, dur, group, 0};
    const char *shown, *full, *disp = NULL;
    size_t shown_len;
    int iter, rc;

    /* These names are not the HLO's: equal names may differ in address. */
    s->name_scope.unique_names = 0;
    s->tf_ops.unique_names = 0;
    rc = derived_tf_op_scopes(op, n, add_scope, &a);
    if (rc == 0 && a.level > 0)
        dvb_reset(&s->name_scope, a.level);
    if (rc != 0)
        return rc;
    full = dv_intern(s->tf_ops.dv, op, n);
    if (full == NULL)
        return -ENOMEM;
    shown = derived_tf_op_shown(full, n, &shown_len, &iter);
    if (iter) {
        char *buf = malloc(shown_len + 11);
        if (buf == NULL)
            return -ENOMEM;
        memcpy(buf, "Iterator::", 10);
        memcpy(buf + 10, shown, shown_len);
        disp = dv_intern(s->tf_ops.dv, buf, shown_len + 10);
        free(buf);
    } else if (shown_len > 0) {
        disp = dv_intern(s->tf_ops.dv, shown, shown_len);
    }
    if ((iter || shown_len > 0) && disp == NULL)
        return -ENOMEM;
    return dvb_expand_or_add(&s->tf_ops, full, disp, 1, NULL, ts, dur, group, 0);
}

/* The XLA Modules event of one kernel: "<module>(<program id>)". */
static int add_module(struct stream_lines *s, const struct kernel_stats *ks, uint64_t ts,
                      uint64_t dur, int32_t group)
{
    struct name_key key = {ks->module, ks->module_len, NULL, 0, ks->program, ks->has_program};
    char small[256];
    char *name;
    const char *stored;
    size_t n = ks->module_len;

    if (dvb_expand_same_key(&s->modules, 0, &key, group, ts, dur))
        return 0;
    name = ks->module_len + 32 <= sizeof(small) ? small : malloc(ks->module_len + 32);
    if (name == NULL)
        return -ENOMEM;
    memcpy(name, ks->module, ks->module_len);
    if (ks->has_program) {
        name[n++] = '(';
        n += dv_u64_dec(name + n, ks->program);
        name[n++] = ')';
    }
    stored = dv_intern(s->modules.dv, name, n);
    if (name != small)
        free(name);
    if (stored == NULL)
        return -ENOMEM;
    return dvb_expand_or_add(&s->modules, stored, NULL, 1, &key, ts, dur, group, 0);
}

/* The stored name "<program id>/<op>" (or "<module>/<op>") of key (its op
 * is key->a), built and interned on a miss of the recent names; NULL when
 * out of memory. */
static const char *op_name(struct stream_lines *s, const struct name_key *key, size_t *op_at)
{
    struct op_name *c = &s->op_names[(((uintptr_t)key->a >> 3) ^ (uintptr_t)key->number ^
                                      (uintptr_t)key->b ^ key->a_len) &
                                     s->mask];
    char small[512];
    size_t need = key->b_len + 24 + key->a_len, plen;
    char *full;
    const char *stored;

    if (c->key.a == key->a && c->key.a_len == key->a_len && c->key.b == key->b &&
        c->key.b_len == key->b_len && c->key.has_number == key->has_number &&
        c->key.number == key->number) {
        *op_at = c->op_at;
        return c->stored;
    }
    full = need <= sizeof(small) ? small : malloc(need);
    if (full == NULL)
        return NULL;
    if (key->has_number) {
        plen = dv_u64_dec(full, key->number);
    } else {
        /* (no module: b is NULL, and memcpy must not see it) */
        if (key->b_len > 0)
            memcpy(full, key->b, key->b_len);
        plen = key->b_len;
    }
    full[plen++] = '/';
    if (key->a_len > 0)
        memcpy(full + plen, key->a, key->a_len);
    stored = dv_intern(s->ops.dv, full, plen + key->a_len);
    if (full != small)
        free(full);
    if (stored == NULL)
        return NULL;
    c->key = *key;
    c->stored = stored;
    c->op_at = plen;
    *op_at = plen;
    return stored;
}

/* The XLA Ops events of one kernel: one level per "::"-separated op, named
 * "<program id>/<op>" (or "<module>/<op>") and shown as the op; *last_op is
 * the innermost op. */
static int add_ops(struct stream_lines *s, const struct kernel_stats *ks, uint64_t ts, uint64_t dur,
                   int32_t group, const char **last_op, size_t *last_len)
{
    size_t start = 0;
    int level = 0, rc = 0;

    while (rc == 0) {
        const char *sep = NULL;
        size_t k, end;
        struct name_key key;
        for (k = start; k + 1 < ks->ops_len; k++) {
            if (ks->ops[k] == ':' && ks->ops[k + 1] == ':') {
                sep = ks->ops + k;
                break;
            }
        }
        end = sep != NULL ? (size_t)(sep - ks->ops) : ks->ops_len;
        *last_op = ks->ops + start;
        *last_len = end - start;
        key.a = ks->ops + start;
        key.a_len = end - start;
        key.b = ks->has_program ? NULL : ks->module;
        key.b_len = ks->has_program ? 0 : ks->module_len;
        key.number = ks->program;
        key.has_number = ks->has_program;
        if (!dvb_expand_same_key(&s->ops, level, &key, group, ts, dur)) {
            /* "<program id>/<op>" or "<module>/<op>", stored once. */
            size_t plen;
            const char *stored = op_name(s, &key, &plen);
            if (stored == NULL)
                return -ENOMEM;
            /* Shown as the op; an empty display name is not set. */
            rc = dvb_expand_or_add(&s->ops, stored, end > start ? stored + plen : NULL, 1, &key, ts,
                                   dur, group, level);
        }
        level++;
        if (sep == NULL)
            break;
        start = end + 2;
    }
    if (rc == 0)
        dvb_reset(&s->ops, level);
    return rc;
}

/* Visit the events of one line in XProf's sorted order (start, longer
 * first, then line order): directly when already in that order. */
struct line_order {
    struct sorted_ev *v; /* sorted copy, or NULL: events in line order */
    uint32_t n;          /* events */
};

static int line_order_init(const struct xp_plane *pl, uint32_t l, struct line_order *o)
{
    const struct xp_line *ln = &pl->lines[l];
    uint32_t e;

    o->v = NULL;
    o->n = ln->nevents;
    for (e = 1; e < ln->nevents; e++) {
        int64_t a = ln->events[e - 1].offset_ps, b = ln->events[e].offset_ps;
        if (a > b || (a == b && ln->events[e - 1].duration_ps < ln->events[e].duration_ps))
            return dv_sorted_events(pl, l, &o->v, &o->n);
    }
    return 0;
}

/* Derive the lines of one stream. */
int dv_derive_stream(struct derived *dv, const struct xspace *xs, uint32_t p, uint32_t l,
                     int64_t first_id, const struct xp_groups *g, const struct derived_hlo *hlo)
{
    static const struct {
        int offset;       /* from the first derived id */
        const char *name; /* XProf's line name */
    } names[5] = {{OFF_NAME_SCOPE, "Framework Name Scope"},
                  {OFF_TF_OP, "Framework Ops"},
                  {OFF_MODULE, "XLA Modules"},
                  {OFF_OP, "XLA Ops"},
                  {OFF_SOURCE, "Source code"}};
    const struct xp_plane *pl = &xs->planes[p];
    const struct xp_line *stream = &pl->lines[l];
    struct stream_lines *s = calloc(1, sizeof(*s));
    struct builder_line *lines[5];
    int64_t ids[KS__COUNT];
    struct line_order order;
    uint32_t i;
    int rc = 0, k;

    if (s == NULL)
        return -ENOMEM;
    lines[0] = &s->name_scope;
    lines[1] = &s->tf_ops;
    lines[2] = &s->modules;
    lines[3] = &s->ops;
    lines[4] = &s->source;
    for (s->mask = STREAM_CACHE_MIN - 1;
         s->mask + 1 < STREAM_CACHE_MAX && s->mask + 1 < stream->nevents;)
        s->mask = 2 * s->mask + 1;
    s->cache = calloc(s->mask + 1, sizeof(*s->cache));
    s->op_names = calloc(s->mask + 1, sizeof(*s->op_names));
    s->refs = calloc(s->mask + 1, sizeof(*s->refs));
    if (s->cache == NULL || s->op_names == NULL || s->refs == NULL)
        rc = -ENOMEM;
    for (k = 0; k < 5 && rc == 0; k++) {
        char name[64];
        const char *copy;
        snprintf(name, sizeof(name), "%s - from #%lld", names[k].name, (long long)stream->id);
        copy = dv_strdup(dv, name, strlen(name));
        if (copy == NULL)
            rc = -ENOMEM;
        dvb_init(lines[k], dv, p, first_id + names[k].offset, copy);
        /* Names are stored once (the HLO's, or dv_intern's). */
        lines[k]->unique_names = 1;
    }
    s->name_scope.dep[0] = &s->tf_ops;
    s->modules.dep[0] = &s->name_scope;
    s->modules.dep[1] = &s->ops;
    if (rc == 0)
        rc = line_order_init(pl, l, &order);
    if (rc != 0) {
        stream_lines_free(s);
        return rc;
    }
    /* At most one op event per kernel (modules are few: no hint). */
    s->ops.hint = order.n;
    ids[KS_KERNEL] = pl->stat_id[XS_KERNEL_DETAILS];
    ids[KS_MODULE] = pl->stat_id[XS_HLO_MODULE];
    ids[KS_OP] = pl->stat_id[XS_HLO_OP];
    ids[KS_TF_OP] = pl->stat_id[XS_TF_OP];
    ids[KS_PROGRAM] = pl->stat_id[XS_PROGRAM_ID];
    for (i = 0; i < order.n && rc == 0; i++) {
        uint32_t e = order.v != NULL ? order.v[i].event : i;
        const struct xp_event *ev = &stream->events[e];
        uint64_t ts = (uint64_t)xp_event_start_ps(stream, ev), dur = (uint64_t)ev->duration_ps;
        struct kernel_stats ks;
        int32_t grp = g != NULL ? xp_group_of(g, p, l, e) : -1;
        memset(&ks, 0, sizeof(ks));
        ks.refs = s->refs;
        ks.refs_mask = s->mask;
        dv_each_stat(pl, stream, ev, ids, KS__COUNT, kernel_stat, &ks);
        if (!ks.is_kernel)
            continue;
        if (ks.module_len > 0)
            rc = add_module(s, &ks, ts, dur, grp);
        if (rc == 0 && ks.has_ops) {
            const char *last_op;
            size_t last_len;
            const struct dh_instr *in = NULL;
            rc = add_ops(s, &ks, ts, dur, grp, &last_op, &last_len);
            /* The symbol resolver needs the program id. */
            if (rc == 0 && ks.has_program)
                in = find_instr(s, hlo, ks.program, last_op, last_len);
            if (rc == 0 && in != NULL)
                rc = add_tf_op(s, in, ts, dur, grp);
            if (rc == 0 && in != NULL && in->source != NULL)
                rc = dvb_expand_or_add(&s->source, in->source, NULL, 1, NULL, ts, dur, grp, 0);
        } else if (rc == 0 && ks.tf_op_len > 0) {
            rc = add_event_tf_op(s, ks.tf_op, ks.tf_op_len, ts, dur, grp);
        }
    }
    big_free(order.v);
    for (k = 0; k < 5; k++)
        dvb_shrink(lines[k]);
    stream_lines_free(s);
    return rc;
}
