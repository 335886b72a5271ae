/*
 * derived_hlo.c - the HLO instructions' framework ops and sources for the
 * derived GPU lines (see derived_hlo.h), read at the wire level.
 *
 * Field numbers (xla/service/hlo.proto, xla/xla_data.proto):
 *   HloProto.hlo_module = 1; HloModuleProto.computations = 3;
 *   HloComputationProto.instructions = 2;
 *   HloInstructionProto: name = 1, metadata = 7;
 *   OpMetadata: op_type = 1, op_name = 2, source_file = 3, source_line = 4.
 * The modules are found as op_stats_hlo.c finds them (XProf's HloProtoMap).
 */
#include "derived_hlo.h"
#include "sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_stats_tfop.h"
#include "wire.h"

struct span {
    const char *p; /* bytes (not NUL-terminated), or NULL */
    size_t n;      /* length */
};

/* One instruction as read from the wire. */
struct raw_instr {
    struct span name, op_type, op_name, source_file;
    int32_t source_line;
};

/* --- framework op names (tf_op_utils.cc) ------------------------------------- */

const char *derived_tf_op_shown(const char *s, size_t n, size_t *len, int *iterator_prefix)
{
    struct tfop op;

    tfop_parse(s, n, &op);
    *iterator_prefix = 0;
    if (op.category == TFOP_UNKNOWN) {
        size_t k = op.name_len;
        while (k > 0 &&
               (op.name[k - 1] == ' ' || op.name[k - 1] == '\t' || op.name[k - 1] == '\n' ||
                op.name[k - 1] == '\r' || op.name[k - 1] == '\f' || op.name[k - 1] == '\v'))
            k--;
        *len = k;
        return op.name;
    }
    if (op.category == TFOP_TFDATA) {
        /* DatasetOpEventName: "Iterator::" and the last "::" part. */
        size_t i = op.name_len;
        while (i >= 2 && !(op.name[i - 1] == ':' && op.name[i - 2] == ':'))
            i--;
        if (i < 2)
            i = 0;
        *iterator_prefix = 1;
        *len = op.name_len - i;
        return op.name + i;
    }
    *len = op.type_len;
    return op.type;
}

int derived_tf_op_scopes(const char *s, size_t n, int (*fn)(void *, const char *, size_t),
                         void *ctx)
{
    struct tfop op;
    size_t i = 0;

    tfop_parse(s, n, &op);
    if (op.category != TFOP_TENSORFLOW && op.category != TFOP_JAX)
        return 0;
    /* Every '/'-separated part but the last, empty parts included. */
    while (i <= op.name_len) {
        const char *slash = memchr(op.name + i, '/', op.name_len - i);
        size_t end;
        int rc;
        if (slash == NULL)
            break;
        end = (size_t)(slash - op.name);
        rc = fn(ctx, op.name + i, end - i);
        if (rc != 0)
            return rc;
        i = end + 1;
    }
    return 0;
}

/* --- interned strings --------------------------------------------------------- */

static uint32_t str_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

static int intern_grow(struct derived_hlo *h)
{
    uint32_t cap = h->interned_cap ? h->interned_cap * 2 : 256, i;
    const char **t = calloc(cap, sizeof(*t));

    if (t == NULL)
        return -ENOMEM;
    for (i = 0; i < h->interned_cap; i++) {
        const char *s = h->interned[i];
        uint32_t k;
        if (s == NULL)
            continue;
        k = str_hash(s, strlen(s)) & (cap - 1);
        while (t[k] != NULL)
            k = (k + 1) & (cap - 1);
        t[k] = s;
    }
    free(h->interned);
    h->interned = t;
    h->interned_cap = cap;
    return 0;
}

/* The stored copy of s[0..n), or NULL when out of memory. */
static const char *intern(struct derived_hlo *h, const char *s, size_t n)
{
    uint32_t k;
    char *copy;

    if (2 * (h->ninterned + 1) > h->interned_cap && intern_grow(h) != 0)
        return NULL;
    k = str_hash(s, n) & (h->interned_cap - 1);
    while (h->interned[k] != NULL) {
        const char *t = h->interned[k];
        if (memchr(s, '\0', n) == NULL && strncmp(t, s, n) == 0 && t[n] == '\0')
            return t;
        k = (k + 1) & (h->interned_cap - 1);
    }
    copy = arena_strndup(&h->arena, n ? s : "", n);
    if (copy == NULL)
        return NULL;
    h->interned[k] = copy;
    h->ninterned++;
    return copy;
}

/* --- reading instructions ------------------------------------------------------- */

static int read_metadata(struct wire w, struct raw_instr *ri)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        uint64_t v;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t == WIRE_LEN && f >= 1 && f <= 3) {
            if (wire_bytes(&w, &s) != 0)
                return -1;
            struct span sp = {(const char *)s.p, (size_t)(s.end - s.p)};
            if (f == 1)
                ri->op_type = sp;
            else if (f == 2)
                ri->op_name = sp;
            else
                ri->source_file = sp;
        } else if (t == WIRE_VARINT && f == 4) {
            if (wire_varint(&w, &v) != 0)
                return -1;
            ri->source_line = (int32_t)(uint32_t)v;
        } else if (wire_skip(&w, t) != 0) {
            return -1;
        }
    }
    return 0;
}

static int read_instr(struct wire w, struct raw_instr *ri)
{
    memset(ri, 0, sizeof(*ri));
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN || (f != 1 && f != 7)) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        if (f == 1) {
            ri->name.p = (const char *)s.p;
            ri->name.n = (size_t)(s.end - s.p);
        } else if (read_metadata(s, ri) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Collects the interned name scopes of one op. */
struct scope_list {
    struct derived_hlo *h; /* owner of the strings */
    const char **v;        /* scopes so far */
    uint32_t n;            /* entries */
    uint32_t cap;          /* allocated */
};

static int add_scope(void *arg, const char *s, size_t n)
{
    struct scope_list *sl = arg;
    const char *str;

    if (sl->n == sl->cap) {
        uint32_t cap = sl->cap ? sl->cap * 2 : 8;
        const char **v = realloc(sl->v, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        sl->v = v;
        sl->cap = cap;
    }
    str = intern(sl->h, s, n);
    if (str == NULL)
        return -ENOMEM;
    sl->v[sl->n++] = str;
    return 0;
}

/* Fill in the resolved names of one instruction. */
static int resolve(struct derived_hlo *h, const struct raw_instr *ri, struct dh_instr *in,
                   struct scope_list *sl)
{
    size_t full_len = ri->op_name.n + 1 + ri->op_type.n, shown_len;
    char small[512];
    char *full = full_len + 16 <= sizeof(small) ? small : malloc(full_len + 16);
    const char *shown;
    int iter, rc = 0;

    if (full == NULL)
        return -ENOMEM;
    if (ri->op_name.n)
        memcpy(full, ri->op_name.p, ri->op_name.n);
    full[ri->op_name.n] = ':';
    if (ri->op_type.n)
        memcpy(full + ri->op_name.n + 1, ri->op_type.p, ri->op_type.n);
    full[full_len] = '\0';
    in->name = intern(h, ri->name.n ? ri->name.p : "", ri->name.n);
    in->name_len = ri->name.n;
    in->tf_op = intern(h, full, full_len);
    if (in->name == NULL || in->tf_op == NULL)
        rc = -ENOMEM;
    shown = derived_tf_op_shown(in->tf_op, full_len, &shown_len, &iter);
    if (rc == 0 && (shown_len > 0 || iter)) {
        if (iter) {
            char *s = malloc(shown_len + 11);
            if (s == NULL) {
                rc = -ENOMEM;
            } else {
                memcpy(s, "Iterator::", 10);
                memcpy(s + 10, shown, shown_len);
                in->tf_shown = intern(h, s, shown_len + 10);
                free(s);
            }
        } else {
            in->tf_shown = intern(h, shown, shown_len);
        }
        if (rc == 0 && in->tf_shown == NULL)
            rc = -ENOMEM;
    }
    if (rc == 0) {
        sl->n = 0;
        rc = derived_tf_op_scopes(in->tf_op, full_len, add_scope, sl);
    }
    if (rc == 0 && sl->n > 0) {
        in->scopes = arena_alloc(&h->arena, sl->n * sizeof(*in->scopes));
        if (in->scopes == NULL)
            rc = -ENOMEM;
        else
            memcpy(in->scopes, sl->v, sl->n * sizeof(*in->scopes));
        in->nscopes = sl->n;
    }
    if (rc == 0 && ri->source_file.n > 0) {
        /* tsl::io::Basename: the part after the last '/'. */
        const char *base = ri->source_file.p;
        size_t bn = ri->source_file.n, k;
        char *s;
        for (k = bn; k > 0 && base[k - 1] != '/'; k--)
            ;
        base += k;
        bn -= k;
        s = bn + 16 <= sizeof(small) ? small : malloc(bn + 16);
        if (s == NULL) {
            rc = -ENOMEM;
        } else {
            memcpy(s, base, bn);
            snprintf(s + bn, 16, ":%d", (int)ri->source_line);
            in->source = intern(h, s, strlen(s));
            if (in->source == NULL)
                rc = -ENOMEM;
            if (s != small)
                free(s);
        }
    }
    if (full != small)
        free(full);
    return rc;
}

static int instr_cmp(const void *a, const void *b)
{
    const struct dh_instr *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return x < y ? -1 : x > y; /* keep the first of equal names first */
}

/* Hash the instruction names of mod (the first of equal names wins). */
static int index_module(struct dh_module *mod)
{
    uint32_t cap = 16, i, k;

    while (cap < 2 * mod->ninstrs)
        cap *= 2;
    mod->index = calloc(cap, sizeof(*mod->index));
    if (mod->index == NULL)
        return -ENOMEM;
    mod->index_cap = cap;
    for (i = 0; i < mod->ninstrs; i++) {
        const struct dh_instr *in = &mod->instrs[i];
        for (k = str_hash(in->name, in->name_len) & (cap - 1); mod->index[k] != 0;
             k = (k + 1) & (cap - 1)) {
            const struct dh_instr *o = &mod->instrs[mod->index[k] - 1];
            if (o->name_len == in->name_len && memcmp(o->name, in->name, in->name_len) == 0)
                break;
        }
        if (mod->index[k] == 0)
            mod->index[k] = i + 1;
    }
    return 0;
}

/* Parse one HloProto into mod. Returns 0, -1 (corrupt, skip) or -ENOMEM. */
static int parse_module(struct derived_hlo *h, const uint8_t *p, size_t n, struct dh_module *mod,
                        struct scope_list *sl)
{
    struct wire w, mw;
    int have_module = 0;
    size_t cap = 0;

    wire_init(&w, p, n);
    memset(mod, 0, sizeof(*mod));
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN) {
            if (wire_bytes(&w, &mw) != 0)
                return -1;
            have_module = 1;
            break;
        }
        if (wire_skip(&w, t) != 0)
            return -1;
    }
    if (!have_module)
        return -1;
    while (!wire_eof(&mw)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&mw, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN || f != 3) {
            if (wire_skip(&mw, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&mw, &s) != 0)
            return -1;
        while (!wire_eof(&s)) { /* a computation */
            uint32_t cf;
            int ct, rc;
            struct wire iw;
            struct raw_instr ri;
            if (wire_key(&s, &cf, &ct) != 0)
                return -1;
            if (cf != 2 || ct != WIRE_LEN) {
                if (wire_skip(&s, ct) != 0)
                    return -1;
                continue;
            }
            if (wire_bytes(&s, &iw) != 0 || read_instr(iw, &ri) != 0)
                return -1;
            if (mod->ninstrs == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct dh_instr *v = realloc(mod->instrs, nc * sizeof(*v));
                if (v == NULL)
                    return -ENOMEM;
                mod->instrs = v;
                cap = nc;
            }
            memset(&mod->instrs[mod->ninstrs], 0, sizeof(mod->instrs[0]));
            rc = resolve(h, &ri, &mod->instrs[mod->ninstrs], sl);
            if (rc != 0)
                return rc;
            mod->ninstrs++;
        }
    }
    if (mod->ninstrs > 1)
        xp_qsort(mod->instrs, mod->ninstrs, sizeof(*mod->instrs), instr_cmp);
    return index_module(mod);
}

static int mod_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct dh_module *)a)->program_id;
    uint64_t y = ((const struct dh_module *)b)->program_id;

    return x < y ? -1 : x > y;
}

void derived_hlo_free(struct derived_hlo *h)
{
    uint32_t i;

    if (h == NULL)
        return;
    for (i = 0; i < h->nmods; i++) {
        free(h->mods[i].instrs);
        free(h->mods[i].index);
    }
    free(h->mods);
    free(h->interned);
    arena_free(&h->arena);
    free(h);
}

/* Add the module of one metadata event, unless its program is known. */
static int add_module(struct derived_hlo *h, const struct xp_event_meta *em, int64_t proto_id,
                      int64_t pid_id, uint32_t *cap, struct scope_list *sl)
{
    const struct xp_stat *proto = NULL;
    uint64_t program_id = (uint64_t)em->id;
    struct dh_module mod;
    uint32_t j;
    int rc;

    for (j = 0; j < em->nstats; j++) {
        if (em->stats[j].meta_id == proto_id && proto == NULL)
            proto = &em->stats[j];
    }
    if (proto == NULL || proto->kind != XP_STAT_BYTES)
        return 0;
    for (j = 0; j < em->nstats; j++) {
        if (pid_id != XP_NO_STAT && em->stats[j].meta_id == pid_id) {
            program_id = (uint64_t)xp_stat_int(&em->stats[j]);
            break;
        }
    }
    for (j = 0; j < h->nmods; j++) {
        if (h->mods[j].program_id == program_id)
            return 0;
    }
    rc = parse_module(h, (const uint8_t *)proto->str, proto->len, &mod, sl);
    if (rc != 0) {
        free(mod.instrs);
        free(mod.index);
        return rc == -ENOMEM ? rc : 0;
    }
    mod.program_id = program_id;
    if (h->nmods == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        struct dh_module *v = realloc(h->mods, nc * sizeof(*v));
        if (v == NULL) {
            free(mod.instrs);
            free(mod.index);
            return -ENOMEM;
        }
        h->mods = v;
        *cap = nc;
    }
    h->mods[h->nmods++] = mod;
    return 0;
}

int derived_hlo_build(const struct xspace *xs, struct derived_hlo **hp, struct xp_err *err)
{
    struct derived_hlo *h = calloc(1, sizeof(*h));
    struct scope_list sl;
    uint32_t p, i, cap = 0;
    int rc = 0;

    *hp = NULL;
    if (h == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory reading HLO", xs->path);
    arena_init(&h->arena);
    memset(&sl, 0, sizeof(sl));
    sl.h = h;
    for (p = 0; p < xs->nplanes && rc == 0; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t proto_id = pl->stat_id[XS_HLO_PROTO];
        if (strcmp(pl->name, "/host:metadata") != 0)
            continue;
        if (proto_id == XP_NO_STAT)
            proto_id = xp_plane_stat_id_by_name(pl, "HLO Proto");
        if (proto_id == XP_NO_STAT)
            continue;
        for (i = 1; i < pl->nemeta && rc == 0; i++)
            rc = add_module(h, &pl->emeta[i], proto_id, pl->stat_id[XS_PROGRAM_ID], &cap, &sl);
    }
    free(sl.v);
    if (rc != 0) {
        derived_hlo_free(h);
        return xp_err_set(err, rc, "%s: out of memory reading HLO", xs->path);
    }
    if (h->nmods > 1)
        xp_qsort(h->mods, h->nmods, sizeof(*h->mods), mod_cmp);
    *hp = h;
    return 0;
}

const struct dh_instr *derived_hlo_find(const struct derived_hlo *h, uint64_t program_id,
                                        const char *name, size_t n)
{
    uint32_t lo = 0, hi, k;
    const struct dh_module *mod;

    if (h == NULL)
        return NULL;
    hi = h->nmods;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->mods[mid].program_id < program_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == h->nmods || h->mods[lo].program_id != program_id)
        return NULL;
    mod = &h->mods[lo];
    for (k = str_hash(name, n) & (mod->index_cap - 1); mod->index[k] != 0;
         k = (k + 1) & (mod->index_cap - 1)) {
        const struct dh_instr *in = &mod->instrs[mod->index[k] - 1];
        if (in->name_len == n && memcmp(in->name, name, n) == 0)
            return in;
    }
    return NULL;
}
