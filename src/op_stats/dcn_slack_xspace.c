/*
 * dcn_slack_xspace.c - one host's DCN slack analysis from its profile
 * (ConvertXSpaceToDcnSlackAnalysis, xspace_to_dcn_slack_analysis.cc, with no
 * host plane nor topology, as the megascale_stats tool calls it):
 *   - no TensorCore plane: an empty analysis;
 *   - on /device:TPU:0, every event of the "XLA Ops" lines, in file order:
 *     the "XLA Modules" event containing it (XEventContextTracker, which only
 *     moves forward), and if its metadata's hlo_category contains
 *     "host send" or "host recv", the instruction of that module named by
 *     the event's display name (module `name(program_id)` as the module
 *     event names it, its HloProto found as the HLO tools find it);
 *   - a found instruction is visited by the tracker (dcn_slack.c), with the
 *     replica group size from the op metadata's dcn_collective_info stat.
 * An instruction's size is its shape's array bytes (a tuple: the sum of its
 * arrays; nested tuples and opaque elements, where XLA's ByteSizeOf would
 * abort, count 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/wire.h"
#include "dcn_slack.h"
#include "hlo/hlo_module.h"
#include "hlo/hlo_proto_find.h"
#include "reader/stats.h"
#include "reader/tpu_planes.h"
#include "reader/xspace.h"
#include "session/session.h"

/* One instruction of a module, named by its bytes in the HloProto. */
struct named_instr {
    const char *name;
    size_t name_len;
    uint32_t order; /* position in the module (FindInstruction takes the first) */
    struct dcn_instr in;
};

#define MAX_MODULE_LOOKUPS 4096 /* distinct module names looked up per host */

/* One module of the host as the ops name it. */
struct dcn_module {
    int found;                  /* its HloProto was found and read */
    struct hlo_proto_bytes b;   /* its bytes */
    struct named_instr *instrs; /* sorted by name, then order */
    uint32_t ninstrs;
};

struct walk {
    struct snapshot *snap;
    const char *host;
    const struct xp_plane *pl;
    struct intern names;     /* module names -> mods index + 1 */
    struct dcn_module *mods; /* by name id - 1 */
    uint32_t nmods, mods_cap;
    uint64_t nmissing;     /* names with no HLO module */
    uint64_t nmalformed;   /* names whose module is malformed */
    uint64_t ncapped;      /* ops of names past MAX_MODULE_LOOKUPS */
    int64_t dcn_info_stat; /* stat metadata id of dcn_collective_info */
    struct xp_err *err;
};

int dcn_xspace_has_megascale(const struct xspace *xs)
{
    const struct xp_plane *pl = xspace_find_plane(xs, "/host:CPU");
    uint32_t m;

    if (pl == NULL)
        return 0;
    for (m = 1; m < pl->nemeta; m++) {
        if (strncmp(pl->emeta[m].name, "MegaScale:", 10) == 0)
            return 1;
    }
    return 0;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_mul_overflow(a, b, &r))
        return INT64_MAX;
    return r;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r))
        return INT64_MAX;
    return r;
}

/* ShapeProto: element_type = 2, dimensions = 3, tuple_shapes = 4,
 * layout = 5 (element_size_in_bits = 7). Bytes of an array shape, or
 * -1 for a tuple (tuple_out then covers its element shapes). */
static int64_t array_bytes(struct wire w, int *is_tuple)
{
    uint64_t type = 0, v, bits_in_layout = 0;
    int64_t elements = 1;
    struct wire sub, lay;
    uint32_t field, f2;
    int wt, t2, bits;

    *is_tuple = 0;
    while (!wire_eof(&w)) {
        if (wire_key(&w, &field, &wt) != 0)
            return 0;
        if (field == 2 && wt == WIRE_VARINT) {
            if (wire_varint(&w, &type) != 0)
                return 0;
        } else if (field == 3 && wt == WIRE_VARINT) {
            if (wire_varint(&w, &v) != 0)
                return 0;
            elements = sat_mul(elements, (int64_t)v < 0 ? 0 : (int64_t)v);
        } else if (field == 3 && wt == WIRE_LEN) {
            if (wire_bytes(&w, &sub) != 0)
                return 0;
            while (!wire_eof(&sub)) {
                if (wire_varint(&sub, &v) != 0)
                    return 0;
                elements = sat_mul(elements, (int64_t)v < 0 ? 0 : (int64_t)v);
            }
        } else if (field == 5 && wt == WIRE_LEN) {
            if (wire_bytes(&w, &lay) != 0)
                return 0;
            while (!wire_eof(&lay)) {
                if (wire_key(&lay, &f2, &t2) != 0)
                    return 0;
                if (f2 == 7 && t2 == WIRE_VARINT) {
                    if (wire_varint(&lay, &bits_in_layout) != 0)
                        return 0;
                } else if (wire_skip(&lay, t2) != 0) {
                    return 0;
                }
            }
        } else if (wire_skip(&w, wt) != 0) {
            return 0;
        }
    }
    if (type == HLO_TUPLE) {
        *is_tuple = 1;
        return 0;
    }
    if (type == 0 || type == HLO_OPAQUE || type == HLO_TOKEN || type > 0x7fffffff)
        return 0;
    if (bits_in_layout != 0 && bits_in_layout < 1024)
        return sat_mul(elements, (int64_t)bits_in_layout) / 8 +
               (sat_mul(elements, (int64_t)bits_in_layout) % 8 != 0);
    bits = hlo_type_bits((int32_t)type);
    return sat_mul(elements, (bits + 7) / 8);
}

/* The size InstrMetadata gives a result shape. */
static int64_t shape_size(struct wire shape)
{
    int is_tuple, sub_tuple;
    int64_t n = array_bytes(shape, &is_tuple), total = 0;
    struct wire sub;
    uint32_t field;
    int wt;

    if (!is_tuple)
        return n;
    while (!wire_eof(&shape)) {
        if (wire_key(&shape, &field, &wt) != 0)
            return total;
        if (field == 4 && wt == WIRE_LEN) {
            if (wire_bytes(&shape, &sub) != 0)
                return total;
            n = array_bytes(sub, &sub_tuple);
            total = sat_add(total, sub_tuple ? 0 : n);
        } else if (wire_skip(&shape, wt) != 0) {
            return total;
        }
    }
    return total;
}

/* FrontendAttributes.map = 1 (key = 1, value = 2): the last entry of key. */
static void frontend_attr(struct wire fa, const char *key, const char **v, size_t *vn)
{
    struct wire e, k, val;
    uint32_t field, f2;
    int wt, t2;
    size_t klen = strlen(key);

    while (!wire_eof(&fa)) {
        int key_match = 0, has_val = 0;
        if (wire_key(&fa, &field, &wt) != 0)
            return;
        if (field != 1 || wt != WIRE_LEN) {
            if (wire_skip(&fa, wt) != 0)
                return;
            continue;
        }
        if (wire_bytes(&fa, &e) != 0)
            return;
        memset(&val, 0, sizeof(val));
        while (!wire_eof(&e)) {
            if (wire_key(&e, &f2, &t2) != 0)
                break;
            if (f2 == 1 && t2 == WIRE_LEN) {
                if (wire_bytes(&e, &k) != 0)
                    break;
                key_match = (size_t)(k.end - k.p) == klen && memcmp(k.p, key, klen) == 0;
            } else if (f2 == 2 && t2 == WIRE_LEN) {
                if (wire_bytes(&e, &val) != 0)
                    break;
                has_val = 1;
            } else if (wire_skip(&e, t2) != 0) {
                break;
            }
        }
        if (key_match) {
            *v = has_val ? (const char *)val.p : "";
            *vn = has_val ? (size_t)(val.end - val.p) : 0;
        }
    }
}

static enum dcn_opcode opcode_of(const uint8_t *p, size_t n)
{
    static const struct {
        const char *s;
        enum dcn_opcode op;
    } ops[] = {{"send", DCN_SEND},
               {"recv", DCN_RECV},
               {"send-done", DCN_SEND_DONE},
               {"recv-done", DCN_RECV_DONE}};
    size_t i;

    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (strlen(ops[i].s) == n && memcmp(ops[i].s, p, n) == 0)
            return ops[i].op;
    }
    return DCN_OTHER;
}

/* HloInstructionProto: name = 1, opcode = 2, shape = 3, channel_id = 26,
 * frontend_attributes = 68. */
static int read_instr(struct wire w, struct named_instr *ni)
{
    struct wire sub, shape = {NULL, NULL}, fa = {NULL, NULL};
    uint32_t field;
    int wt;
    uint64_t v;

    memset(ni, 0, sizeof(*ni));
    ni->name = "";
    while (!wire_eof(&w)) {
        if (wire_key(&w, &field, &wt) != 0)
            return -1;
        if (wt == WIRE_LEN && (field == 1 || field == 2 || field == 3 || field == 68)) {
            if (wire_bytes(&w, &sub) != 0)
                return -1;
            if (field == 1) {
                ni->name = (const char *)sub.p;
                ni->name_len = (size_t)(sub.end - sub.p);
            } else if (field == 2) {
                ni->in.opcode = opcode_of(sub.p, (size_t)(sub.end - sub.p));
            } else if (field == 3) {
                shape = sub;
            } else {
                fa = sub;
            }
        } else if (field == 26 && wt == WIRE_VARINT) {
            if (wire_varint(&w, &v) != 0)
                return -1;
            ni->in.channel_id = (int64_t)v > 0 ? v : 0;
        } else if (wire_skip(&w, wt) != 0) {
            return -1;
        }
    }
    if (shape.p != NULL)
        ni->in.size = shape_size(shape);
    if (fa.p != NULL) {
        frontend_attr(fa, "_xla_host_transfer_rendezvous", &ni->in.rendezvous,
                      &ni->in.rendezvous_len);
        frontend_attr(fa, "_xla_megascale_transfer_type", &ni->in.transfer_type,
                      &ni->in.transfer_type_len);
    }
    return 0;
}

static int cmp_named(const void *a, const void *b)
{
    const struct named_instr *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);

    if (c != 0)
        return c;
    if (x->name_len != y->name_len)
        return x->name_len < y->name_len ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The instructions of an HloProto (hlo_module = 1; computations = 3;
 * instructions = 2). 0, -1 for bad bytes, -ENOMEM. */
static int read_module(struct dcn_module *m)
{
    struct wire w, mod, comp, ins;
    uint32_t field, cap = 0;
    int wt, rc = 0;

    wire_init(&w, m->b.p, m->b.n);
    while (!wire_eof(&w) && rc == 0) {
        if (wire_key(&w, &field, &wt) != 0)
            return -1;
        if (field != 1 || wt != WIRE_LEN) {
            if (wire_skip(&w, wt) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &mod) != 0)
            return -1;
        while (!wire_eof(&mod) && rc == 0) {
            if (wire_key(&mod, &field, &wt) != 0)
                return -1;
            if (field != 3 || wt != WIRE_LEN) {
                if (wire_skip(&mod, wt) != 0)
                    return -1;
                continue;
            }
            if (wire_bytes(&mod, &comp) != 0)
                return -1;
            while (!wire_eof(&comp) && rc == 0) {
                if (wire_key(&comp, &field, &wt) != 0)
                    return -1;
                if (field != 2 || wt != WIRE_LEN) {
                    if (wire_skip(&comp, wt) != 0)
                        return -1;
                    continue;
                }
                if (wire_bytes(&comp, &ins) != 0)
                    return -1;
                if (xp_grow((void **)&m->instrs, &cap, m->ninstrs, sizeof(*m->instrs)) != 0)
                    return -ENOMEM;
                if (read_instr(ins, &m->instrs[m->ninstrs]) != 0)
                    return -1;
                m->instrs[m->ninstrs].order = m->ninstrs;
                m->ninstrs++;
            }
        }
    }
    qsort(m->instrs, m->ninstrs, sizeof(*m->instrs), cmp_named);
    return 0;
}

/* The module named name (read on first use), or NULL when none. Names are
 * looked up once each, at most MAX_MODULE_LOOKUPS of them (a lookup scans
 * the host's metadata): ops of further names count as of no module. */
static int module_of(struct walk *wk, const char *name, struct dcn_module **mp)
{
    const char *host = wk->host;
    struct dcn_module *m;
    uint32_t id;
    int rc;

    *mp = NULL;
    id = intern_find(&wk->names, name, strlen(name));
    if (id != 0) {
        *mp = wk->mods[id - 1].found ? &wk->mods[id - 1] : NULL;
        return 0;
    }
    if (wk->nmods >= MAX_MODULE_LOOKUPS) {
        wk->ncapped++;
        return 0;
    }
    if (xp_grow((void **)&wk->mods, &wk->mods_cap, wk->nmods, sizeof(*wk->mods)) != 0 ||
        intern_add(&wk->names, name, strlen(name), &id) != 0)
        return -ENOMEM;
    m = &wk->mods[wk->nmods++];
    memset(m, 0, sizeof(*m));
    rc = hlo_proto_find(wk->snap, &host, 1, name, NULL, &m->b, wk->err);
    if (rc == -ENOENT || rc == -EINVAL) {
        xp_err_clear(wk->err);
        if (wk->nmissing++ == 0)
            snapshot_log(wk->snap, "megascale_stats.json: %s: no HLO module %s for its DCN ops",
                         wk->host, name);
        return 0;
    }
    if (rc != 0)
        return rc;
    rc = read_module(m);
    if (rc == -ENOMEM)
        return rc;
    if (rc != 0) {
        if (wk->nmalformed++ == 0)
            snapshot_log(wk->snap, "megascale_stats.json: %s: HLO module %s is malformed", wk->host,
                         name);
        return 0;
    }
    m->found = 1;
    *mp = m;
    return 0;
}

static const struct named_instr *find_instr(const struct dcn_module *m, const char *name)
{
    struct named_instr key = {name, strlen(name), 0, {0}};
    uint32_t lo = 0, hi = m->ninstrs;

    /* lower bound of (name, order 0) */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmp_named(&m->instrs[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->ninstrs && m->instrs[lo].name_len == key.name_len &&
        memcmp(m->instrs[lo].name, name, key.name_len) == 0)
        return &m->instrs[lo];
    return NULL;
}

/* The event metadata's own stat of metadata id want, or NULL. */
static const struct xp_stat *meta_stat(const struct xp_event_meta *em, int64_t want)
{
    uint32_t i;

    if (want == XP_NO_STAT)
        return NULL;
    for (i = 0; i < em->nstats; i++) {
        if (em->stats[i].meta_id == want)
            return &em->stats[i];
    }
    return NULL;
}

struct group_ctx {
    const struct xp_event_meta *em;
    int64_t stat;
};

static int group_size_of_meta(const void *ctx)
{
    const struct group_ctx *g = ctx;
    const struct xp_stat *st = meta_stat(g->em, g->stat);

    if (st == NULL || (st->kind != XP_STAT_BYTES && st->kind != XP_STAT_STR))
        return 0;
    return dcn_group_size_of_info((const uint8_t *)st->str, st->len);
}

/* XEventContextTracker over the module line. */
struct context {
    const struct xp_line *line; /* NULL: no module line */
    int64_t cur;                /* current event, -1 = none */
};

static const struct xp_event *containing(struct context *c, uint64_t b, uint64_t e)
{
    const struct xp_line *l = c->line;
    uint32_t i;

    if (l == NULL)
        return NULL;
    if (c->cur >= 0) {
        const struct xp_event *m = &l->events[c->cur];
        if ((uint64_t)xp_event_start_ps(l, m) <= b && e <= (uint64_t)xp_event_end_ps(l, m))
            return m;
    }
    for (i = (uint32_t)(c->cur + 1); i < l->nevents; i++) {
        const struct xp_event *m = &l->events[i];
        if ((uint64_t)xp_event_start_ps(l, m) > e)
            break;
        if ((uint64_t)xp_event_end_ps(l, m) < b)
            continue;
        c->cur = i;
        if ((uint64_t)xp_event_start_ps(l, m) <= b && e <= (uint64_t)xp_event_end_ps(l, m))
            return m;
        break;
    }
    return NULL;
}

static int contains(const struct xp_stat *st, const char *needle)
{
    size_t n = strlen(needle), i;

    if (st == NULL || (st->kind != XP_STAT_STR && st->kind != XP_STAT_REF) || st->len < n)
        return 0;
    for (i = 0; i + n <= st->len; i++) {
        if (memcmp(st->str + i, needle, n) == 0)
            return 1;
    }
    return 0;
}

static int walk_line(struct walk *wk, struct dcn_tracker *t, struct context *ctx,
                     const struct xp_line *l)
{
    const struct xp_plane *pl = wk->pl;
    int64_t cat_stat = pl->stat_id[XS_HLO_CATEGORY];
    uint32_t i;
    int rc;

    for (i = 0; i < l->nevents; i++) {
        const struct xp_event *e = &l->events[i];
        const struct xp_event_meta *em = xp_event_meta(pl, e);
        const struct xp_stat *cat = meta_stat(em, cat_stat);
        uint64_t b = (uint64_t)xp_event_start_ps(l, e), end = b + (uint64_t)e->duration_ps;
        const struct xp_event *mod = containing(ctx, b, end);
        const char *disp = em->display_name[0] != '\0' ? em->display_name : em->name;
        struct dcn_module *m;
        const struct named_instr *ni;
        struct group_ctx g = {em, wk->dcn_info_stat};
        uint64_t ts_ns;

        if (mod == NULL || !(contains(cat, "host send") || contains(cat, "host recv")))
            continue;
        if ((rc = module_of(wk, xp_event_meta(pl, mod)->name, &m)) != 0)
            return rc;
        if (m == NULL || (ni = find_instr(m, disp)) == NULL) {
            t->an->nunknown_instr++;
            continue;
        }
        ts_ns = (uint64_t)(l->timestamp_ns + e->offset_ps / 1000);
        if ((rc = dcn_tracker_visit(t, &ni->in, disp, b, ts_ns, (uint64_t)e->duration_ps,
                                    group_size_of_meta, &g)) != 0)
            return rc;
    }
    return 0;
}

static void walk_free(struct walk *wk)
{
    uint32_t i;

    if (wk->nmissing > 1)
        snapshot_log(wk->snap, "megascale_stats.json: %s: %llu module names have no HLO module",
                     wk->host, (unsigned long long)wk->nmissing);
    if (wk->ncapped > 0)
        snapshot_log(wk->snap,
                     "megascale_stats.json: %s: %llu DCN ops of modules past the first %d "
                     "module names left out",
                     wk->host, (unsigned long long)wk->ncapped, MAX_MODULE_LOOKUPS);
    intern_free(&wk->names);
    for (i = 0; i < wk->nmods; i++) {
        free(wk->mods[i].instrs);
        hlo_proto_bytes_release(&wk->mods[i].b);
    }
    free(wk->mods);
}

int dcn_host_analysis(struct snapshot *snap, const char *host, struct dcn_analysis *an,
                      const char **why, struct xp_err *err)
{
    struct walk wk = {.snap = snap, .host = host, .dcn_info_stat = XP_NO_STAT, .err = err};
    struct dcn_tracker t = {0};
    struct context ctx = {NULL, -1};
    struct xspace *xs;
    uint32_t p, ncores = 0, l;
    int rc;

    *why = NULL;
    if ((rc = snapshot_xspace_decoded(snap, host, &xs, err)) != 0)
        return rc;
    for (p = 0; p < xs->nplanes; p++)
        ncores += tpu_plane_core(xs->planes[p].name) == TPU_TENSOR_CORE;
    if (ncores == 0) {
        *why = "it has no TensorCore plane (/device:TPU:<n>)";
        return 0;
    }
    if ((wk.pl = xspace_find_plane(xs, "/device:TPU:0")) == NULL) {
        *why = "it has no /device:TPU:0 plane (XProf reads TensorCore 0 only)";
        return 0;
    }
    for (l = 0; l < wk.pl->nlines && ctx.line == NULL; l++) {
        if (strcmp(wk.pl->lines[l].name, "XLA Modules") == 0)
            ctx.line = &wk.pl->lines[l];
    }
    wk.dcn_info_stat = xp_plane_stat_id_by_name(wk.pl, "dcn_collective_info");
    if ((rc = intern_init(&wk.names)) != 0 || (rc = dcn_tracker_init(&t, an)) != 0) {
        dcn_tracker_free(&t);
        walk_free(&wk);
        return xp_err_set(err, rc, "out of memory");
    }
    for (l = 0; l < wk.pl->nlines && rc == 0; l++) {
        if (strcmp(wk.pl->lines[l].name, "XLA Ops") == 0)
            rc = walk_line(&wk, &t, &ctx, &wk.pl->lines[l]);
    }
    if (rc == 0)
        rc = dcn_tracker_finish(&t);
    dcn_tracker_free(&t);
    walk_free(&wk);
    if (rc == -ENOMEM && err->code == 0)
        xp_err_set(err, rc, "out of memory");
    return rc;
}
