/*
 * hlo_module.c - HloModuleProto bytes into a struct hlo_graph (see
 * hlo_module.h), and the HLO modules of a host read once per snapshot. Two
 * passes: the first counts computations and instructions, the second reads
 * them; operand ids are resolved within the computation of the instruction,
 * called computation ids within the module.
 *
 * Errors come in two kinds. Bad framing of the messages every reader walks
 * (module, computations, instructions, their names, opcodes and metadata)
 * makes the module corrupt. Bad bytes inside what only the cost model reads
 * (shapes, packed id lists, dimension numbers, replica groups, windows) or
 * ids that do not resolve leave the names readable and the graph not
 * linked.
 */
#include "hlo_module.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "sort.h"
#include "stats.h"
#include "wire.h"
#include "xspace.h"

/* A growable int64 list used while one message is read. */
struct i64vec {
    int64_t *v;   /* values */
    uint32_t n;   /* entries */
    uint32_t cap; /* allocated entries */
};

static int vec_push(struct i64vec *x, int64_t v)
{
    if (x->n == x->cap) {
        uint32_t nc = x->cap ? x->cap * 2 : 8;
        int64_t *nv = realloc(x->v, nc * sizeof(*nv));
        if (nv == NULL)
            return -ENOMEM;
        x->v = nv;
        x->cap = nc;
    }
    x->v[x->n++] = v;
    return 0;
}

/* A repeated int64 field, packed (LEN) or not (VARINT), appended to x.
 * Returns 0, -1 (bad framing), -2 (bad packed values) or -ENOMEM. */
static int read_i64s(struct wire *w, int type, struct i64vec *x)
{
    uint64_t v;

    if (type == WIRE_VARINT) {
        if (wire_varint(w, &v) != 0)
            return -1;
        return vec_push(x, (int64_t)v);
    }
    if (type == WIRE_LEN) {
        struct wire s;
        if (wire_bytes(w, &s) != 0)
            return -1;
        while (!wire_eof(&s)) {
            int rc;
            if (wire_varint(&s, &v) != 0)
                return -2;
            rc = vec_push(x, (int64_t)v);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    return wire_skip(w, type) != 0 ? -1 : 0;
}

/* A copy of x in the arena (NULL for an empty list); *ok cleared on OOM. */
static const int64_t *vec_keep(struct arena *a, const struct i64vec *x, int *ok)
{
    int64_t *c;

    if (x->n == 0)
        return NULL;
    c = arena_alloc(a, x->n * sizeof(*c));
    if (c == NULL) {
        *ok = 0;
        return NULL;
    }
    memcpy(c, x->v, x->n * sizeof(*c));
    return c;
}

static int read_varint_field(struct wire *w, int type, int64_t *out)
{
    uint64_t v;

    if (type != WIRE_VARINT)
        return wire_skip(w, type) != 0 ? -1 : 0;
    if (wire_varint(w, &v) != 0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static const char *keep_str(struct arena *a, struct wire s)
{
    return arena_strndup(a, (const char *)s.p, (size_t)(s.end - s.p));
}

/* LayoutProto into s. */
static int read_layout(struct arena *a, struct wire w, struct hlo_shape *s)
{
    struct i64vec m2m = {0};
    int rc = 0, ok = 1;

    s->has_layout = 1;
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 1)
            rc = read_i64s(&w, t, &m2m);
        else if (f == 7)
            rc = read_varint_field(&w, t, &s->element_bits);
        else if (f == 8)
            rc = read_varint_field(&w, t, &s->memory_space);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    if (rc == 0) {
        s->nminor = m2m.n;
        s->minor_to_major = vec_keep(a, &m2m, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    free(m2m.v);
    return rc;
}

/* ShapeProto into s (tuple elements allocated in the arena). */
static int read_shape(struct arena *a, struct wire w, struct hlo_shape *s, int depth)
{
    struct wire scan = w;
    struct i64vec dims = {0};
    struct hlo_shape *tuple = NULL;
    uint32_t ntuple = 0, k = 0;
    int rc = 0, ok = 1;

    memset(s, 0, sizeof(*s));
    if (depth > 64)
        return -1;
    while (!wire_eof(&scan)) { /* count the tuple elements first */
        uint32_t f;
        int t;
        if (wire_key(&scan, &f, &t) != 0 || wire_skip(&scan, t) != 0)
            return -1;
        if (f == 4 && t == WIRE_LEN)
            ntuple++;
    }
    if (ntuple > 0) {
        tuple = arena_alloc(a, ntuple * sizeof(*tuple));
        if (tuple == NULL)
            return -ENOMEM;
    }
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        int64_t v = 0;
        struct wire sub;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 2) {
            rc = read_varint_field(&w, t, &v);
            s->type = (int32_t)v;
        } else if (f == 3) {
            rc = read_i64s(&w, t, &dims);
        } else if ((f == 4 || f == 5) && t == WIRE_LEN) {
            if (wire_bytes(&w, &sub) != 0)
                rc = -1;
            else if (f == 4)
                rc = read_shape(a, sub, &tuple[k++], depth + 1);
            else
                rc = read_layout(a, sub, s);
        } else if (wire_skip(&w, t) != 0) {
            rc = -1;
        }
    }
    if (rc == 0) {
        s->ndims = dims.n;
        s->dims = vec_keep(a, &dims, &ok);
        s->ntuple = ntuple;
        s->tuple = tuple;
        if (!ok)
            rc = -ENOMEM;
    }
    free(dims.v);
    return rc;
}

static int read_window(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct wire scan = w;
    uint32_t n = 0;

    while (!wire_eof(&scan)) {
        uint32_t f;
        int t;
        if (wire_key(&scan, &f, &t) != 0 || wire_skip(&scan, t) != 0)
            return -1;
        n += f == 1 && t == WIRE_LEN;
    }
    nd->nwindow = 0;
    nd->window = n ? arena_alloc(a, n * sizeof(*nd->window)) : NULL;
    if (n && nd->window == NULL)
        return -ENOMEM;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire dw;
        struct hlo_window_dim *d;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f != 1 || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &dw) != 0)
            return -1;
        d = &nd->window[nd->nwindow++];
        memset(d, 0, sizeof(*d));
        while (!wire_eof(&dw)) {
            uint32_t df;
            int dt;
            int64_t *dst = NULL;
            if (wire_key(&dw, &df, &dt) != 0)
                return -1;
            if (df == 1)
                dst = &d->size;
            else if (df == 2)
                dst = &d->stride;
            else if (df == 3)
                dst = &d->pad_low;
            else if (df == 4)
                dst = &d->pad_high;
            else if (df == 5)
                dst = &d->window_dilation;
            else if (df == 6)
                dst = &d->base_dilation;
            if (dst != NULL) {
                if (read_varint_field(&dw, dt, dst) != 0)
                    return -1;
                if (dt == WIRE_VARINT && df == 5 && *dst != 1)
                    nd->window_dilated = 1;
                if (dt == WIRE_VARINT && df == 6 && *dst != 1)
                    nd->base_dilated = 1;
            } else if (wire_skip(&dw, dt) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

static int read_conv_dims(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct i64vec in = {0}, ker = {0}, out = {0};
    int rc = 0, ok = 1;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 6)
            rc = read_i64s(&w, t, &ker);
        else if (f == 11)
            rc = read_i64s(&w, t, &in);
        else if (f == 12)
            rc = read_i64s(&w, t, &out);
        else if (f == 7)
            rc = read_varint_field(&w, t, &nd->in_batch_dim);
        else if (f == 8)
            rc = read_varint_field(&w, t, &nd->in_feature_dim);
        else if (f == 10)
            rc = read_varint_field(&w, t, &nd->out_feature_dim);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    if (rc == 0) {
        uint32_t n = in.n;
        if (ker.n < n)
            n = ker.n;
        if (out.n < n)
            n = out.n;
        nd->nspatial = n;
        nd->in_spatial = vec_keep(a, &in, &ok);
        nd->kernel_spatial = vec_keep(a, &ker, &ok);
        nd->out_spatial = vec_keep(a, &out, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    free(in.v);
    free(ker.v);
    free(out.v);
    return rc;
}

/* The lhs_contracting_dimensions of a DotDimensionNumbers, appended to c.
 * Returns 0, -1 / -2 (bad bytes) or -ENOMEM. */
static int read_contracting(struct wire w, struct i64vec *c)
{
    int rc = 0;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1)
            rc = read_i64s(&w, t, c);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    return rc;
}

static int read_dot_dims(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct i64vec c = {0};
    int rc, ok = 1;

    rc = read_contracting(w, &c);
    if (rc == 0) {
        nd->ncontracting = c.n;
        nd->contracting = vec_keep(a, &c, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    free(c.v);
    return rc;
}

/* RaggedDotDimensionNumbers: the contracting dimensions of its
 * dot_dimension_numbers and the number of rhs_group_dimensions. */
static int read_ragged_dims(struct arena *a, struct wire w, struct hlo_node *nd)
{
    struct i64vec c = {0}, groups = {0};
    int rc = 0, ok = 1;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 1 && t == WIRE_LEN) {
            if (wire_bytes(&w, &s) != 0)
                rc = -1;
            else
                rc = read_contracting(s, &c);
        } else if (f == 3) {
            rc = read_i64s(&w, t, &groups);
        } else if (wire_skip(&w, t) != 0) {
            rc = -1;
        }
    }
    if (rc == 0) {
        nd->ragged_ncontracting = c.n;
        nd->ragged_contracting = vec_keep(a, &c, &ok);
        nd->ragged_ngroups = groups.n;
        if (!ok)
            rc = -ENOMEM;
    }
    free(c.v);
    free(groups.v);
    return rc;
}

/* Size of one ReplicaGroup (count of replica_ids). */
static int group_size(struct wire w, int64_t *size)
{
    struct i64vec ids = {0};
    int rc = 0;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            rc = -1;
        else if (f == 1)
            rc = read_i64s(&w, t, &ids);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    *size = ids.n;
    free(ids.v);
    return rc;
}

/* CollectiveDeviceListProto: the largest group, from explicit groups or the
 * iota list. */
static int read_device_list(struct wire w, struct hlo_node *nd)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if ((f != 1 && f != 2) || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        if (f == 1) {
            int64_t size;
            int rc = group_size(s, &size);
            if (rc != 0)
                return rc;
            nd->group_list_given = 1;
            if (size > nd->largest_group)
                nd->largest_group = size;
        } else {
            int64_t ngroups = 0, per_group = 0;
            while (!wire_eof(&s)) {
                uint32_t sf;
                int st;
                if (wire_key(&s, &sf, &st) != 0)
                    return -1;
                if (sf == 1) {
                    if (read_varint_field(&s, st, &ngroups) != 0)
                        return -1;
                } else if (sf == 2) {
                    if (read_varint_field(&s, st, &per_group) != 0)
                        return -1;
                } else if (wire_skip(&s, st) != 0) {
                    return -1;
                }
            }
            if (ngroups > 0) {
                nd->group_list_given = 1;
                if (per_group > nd->largest_group)
                    nd->largest_group = per_group;
            }
        }
    }
    return 0;
}

/* OpMetadata into nd. Returns 0, -1 (bad wire data) or -ENOMEM. */
static int read_metadata(struct arena *a, struct wire w, struct hlo_node *nd)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        const char *v;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 4 && t == WIRE_VARINT) {
            uint64_t line;
            if (wire_varint(&w, &line) != 0)
                return -1;
            nd->source_line = (int32_t)(uint32_t)line;
            continue;
        }
        if (t != WIRE_LEN || (f != 1 && f != 2 && f != 3 && f != 12)) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        v = keep_str(a, s);
        if (v == NULL)
            return -ENOMEM;
        if (f == 1) {
            nd->op_type = v;
            nd->op_type_len = (size_t)(s.end - s.p);
        } else if (f == 2) {
            nd->op_name = v;
            nd->op_name_len = (size_t)(s.end - s.p);
        } else if (f == 3) {
            nd->source_file = v;
            nd->source_file_len = (size_t)(s.end - s.p);
        } else {
            nd->dedup_name = v;
        }
    }
    return 0;
}

/* Ids read with an instruction, resolved once the computation is known. */
struct raw_ids {
    int64_t id;             /* the instruction's id */
    struct i64vec operands; /* operand ids */
    struct i64vec called;   /* called computation ids */
};

/* Whether the fields only the cost model reads were readable. */
struct read_status {
    int graph_bad;      /* some were not */
    int window_corrupt; /* a window was not (op_stats reads windows too) */
};

/* The result rc of reading a field only the cost model reads: bad bytes
 * inside it are noted in st and cleared; -ENOMEM and framing_rc (the result
 * that means the field itself was badly framed: -1 from read_i64s, 0 for a
 * sub-message whose bytes were already taken) are returned. */
static int graph_field(int rc, int framing_rc, struct read_status *st)
{
    if (rc == 0 || rc == -ENOMEM || rc == framing_rc)
        return rc;
    st->graph_bad = 1;
    return 0;
}

static int read_instr(struct arena *a, struct wire w, struct hlo_node *nd, struct raw_ids *ids,
                      struct read_status *st)
{
    struct i64vec dims = {0}, fft = {0};
    int rc = 0, ok = 1;

    memset(nd, 0, sizeof(*nd));
    nd->name = nd->opcode = nd->fusion_kind = nd->custom_call_target = "";
    nd->op_type = nd->op_name = nd->dedup_name = nd->source_file = "";
    nd->backend_config = "";
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        switch (f) {
        case 9:
            rc = read_varint_field(&w, t, &nd->parameter_number);
            continue;
        case 13:
            rc = read_varint_field(&w, t, &nd->tuple_index);
            continue;
        case 14:
            rc = graph_field(read_i64s(&w, t, &dims), -1, st);
            continue;
        case 26:
            rc = read_varint_field(&w, t, &nd->channel_id);
            continue;
        case 32:
            rc = graph_field(read_i64s(&w, t, &fft), -1, st);
            continue;
        case 35:
            rc = read_varint_field(&w, t, &ids->id);
            continue;
        case 36:
            rc = graph_field(read_i64s(&w, t, &ids->operands), -1, st);
            continue;
        case 38:
            rc = graph_field(read_i64s(&w, t, &ids->called), -1, st);
            continue;
        case 50:
            rc = read_varint_field(&w, t, &nd->feature_group_count);
            continue;
        case 58:
            rc = read_varint_field(&w, t, &nd->batch_group_count);
            continue;
        case 71: {
            int64_t v = 0;
            rc = read_varint_field(&w, t, &v);
            nd->use_global_device_ids = v != 0;
            continue;
        }
        default:
            break;
        }
        if (t != WIRE_LEN ||
            (f != 1 && f != 2 && f != 3 && f != 7 && f != 11 && f != 15 && f != 16 && f != 28 &&
             f != 30 && f != 43 && f != 49 && f != 87 && f != 90)) {
            if (wire_skip(&w, t) != 0)
                rc = -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0) {
            rc = -1;
            break;
        }
        if (f == 1 || f == 2 || f == 11 || f == 28 || f == 43) {
            const char *v = keep_str(a, s);
            if (v == NULL) {
                rc = -ENOMEM;
                break;
            }
            if (f == 1) {
                nd->name = v;
                nd->name_len = (size_t)(s.end - s.p);
            } else if (f == 2) {
                nd->opcode = v;
            } else if (f == 11) {
                nd->fusion_kind = v;
            } else if (f == 28) {
                nd->custom_call_target = v;
            } else {
                nd->backend_config = v;
                nd->backend_config_len = (size_t)(s.end - s.p);
            }
        } else if (f == 7) {
            rc = read_metadata(a, s, nd);
        } else if (f == 3) {
            rc = graph_field(read_shape(a, s, &nd->shape, 0), 0, st);
        } else if (f == 15) {
            rc = read_window(a, s, nd);
            if (rc != 0 && rc != -ENOMEM) {
                st->window_corrupt = 1;
                rc = graph_field(rc, 0, st);
            }
        } else if (f == 16) {
            rc = graph_field(read_conv_dims(a, s, nd), 0, st);
        } else if (f == 30) {
            rc = graph_field(read_dot_dims(a, s, nd), 0, st);
        } else if (f == 90) {
            rc = graph_field(read_ragged_dims(a, s, nd), 0, st);
        } else if (f == 49) {
            int64_t size;
            rc = graph_field(group_size(s, &size), 0, st);
            nd->group_list_given = 1;
            if (size > nd->largest_group)
                nd->largest_group = size;
        } else {
            rc = graph_field(read_device_list(s, nd), 0, st);
        }
    }
    if (rc == 0) {
        nd->ndims = dims.n;
        nd->dims = vec_keep(a, &dims, &ok);
        nd->nfft = fft.n;
        nd->fft_length = vec_keep(a, &fft, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    if (nd->feature_group_count < 1)
        nd->feature_group_count = 1;
    if (nd->batch_group_count < 1)
        nd->batch_group_count = 1;
    free(dims.v);
    free(fft.v);
    return rc;
}

/* (id, index) pairs sorted by id, for operand and computation lookups. */
struct id_ix {
    int64_t id;
    uint32_t ix;
};

static int id_cmp(const void *a, const void *b)
{
    const struct id_ix *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* The index of id in v[0..n) (first of equal ids), or -1. */
static int64_t id_find(const struct id_ix *v, uint32_t n, int64_t id)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].id == id ? (int64_t)v[lo].ix : -1;
}

/* Per-computation data collected in the second pass. */
struct raw_comp {
    int64_t id;      /* computation id */
    int64_t root_id; /* root instruction id, or -1 */
};

static void free_raw(struct raw_ids *r, uint32_t n)
{
    uint32_t i;

    if (r == NULL)
        return;
    for (i = 0; i < n; i++) {
        free(r[i].operands.v);
        free(r[i].called.v);
    }
    free(r);
}

/* Count computations and instructions of the module. */
static int count_module(struct wire w, uint32_t *ncomps, uint32_t *nnodes)
{
    *ncomps = *nnodes = 0;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire c;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f != 3 || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &c) != 0)
            return -1;
        (*ncomps)++;
        while (!wire_eof(&c)) {
            uint32_t cf;
            int ct;
            if (wire_key(&c, &cf, &ct) != 0 || wire_skip(&c, ct) != 0)
                return -1;
            *nnodes += cf == 2 && ct == WIRE_LEN;
        }
    }
    return 0;
}

/* Resolve ids into indices, fill roots, parameters and users. */
static int link_graph(struct hlo_graph *g, struct raw_ids *raw, struct raw_comp *rc,
                      int64_t entry_id, const char *entry_name)
{
    struct id_ix *comp_ids = malloc((g->ncomps ? g->ncomps : 1) * sizeof(*comp_ids));
    struct id_ix *local = malloc((g->nnodes ? g->nnodes : 1) * sizeof(*local));
    uint32_t *nusers = calloc(g->nnodes ? g->nnodes : 1, sizeof(*nusers));
    uint32_t c, i, j;
    int ret = 0;

    if (comp_ids == NULL || local == NULL || nusers == NULL) {
        ret = -ENOMEM;
        goto out;
    }
    for (c = 0; c < g->ncomps; c++)
        comp_ids[c] = (struct id_ix){rc[c].id, c};
    xp_qsort(comp_ids, g->ncomps, sizeof(*comp_ids), id_cmp);
    g->entry = g->ncomps ? g->ncomps - 1 : 0;
    for (c = 0; c < g->ncomps; c++) {
        if (entry_id >= 0 ? rc[c].id == entry_id : strcmp(g->comps[c].name, entry_name) == 0) {
            g->entry = c;
            break;
        }
    }
    for (c = 0; c < g->ncomps; c++) {
        struct hlo_comp *cp = &g->comps[c];
        struct id_ix *loc = local + cp->first;
        uint32_t *params;
        uint32_t np = 0;
        for (i = 0; i < cp->n; i++)
            loc[i] = (struct id_ix){raw[cp->first + i].id, cp->first + i};
        xp_qsort(loc, cp->n, sizeof(*loc), id_cmp);
        if (cp->n == 0) {
            ret = -1;
            goto out;
        }
        cp->root = cp->first + cp->n - 1;
        if (rc[c].root_id >= 0) {
            int64_t r = id_find(loc, cp->n, rc[c].root_id);
            if (r < 0) {
                ret = -1;
                goto out;
            }
            cp->root = (uint32_t)r;
        }
        for (i = 0; i < cp->n; i++) {
            struct hlo_node *nd = &g->nodes[cp->first + i];
            struct raw_ids *ri = &raw[cp->first + i];
            uint32_t *ops = NULL, *called = NULL;
            if (strcmp(nd->opcode, "parameter") == 0 && nd->parameter_number >= 0 &&
                (uint64_t)nd->parameter_number + 1 > np)
                np = (uint32_t)nd->parameter_number + 1;
            if (ri->operands.n) {
                ops = arena_alloc(&g->arena, ri->operands.n * sizeof(*ops));
                if (ops == NULL) {
                    ret = -ENOMEM;
                    goto out;
                }
            }
            for (j = 0; j < ri->operands.n; j++) {
                int64_t r = id_find(loc, cp->n, ri->operands.v[j]);
                if (r < 0) {
                    ret = -1;
                    goto out;
                }
                ops[j] = (uint32_t)r;
                nusers[r]++;
            }
            if (ri->called.n) {
                called = arena_alloc(&g->arena, ri->called.n * sizeof(*called));
                if (called == NULL) {
                    ret = -ENOMEM;
                    goto out;
                }
            }
            for (j = 0; j < ri->called.n; j++) {
                int64_t r = id_find(comp_ids, g->ncomps, ri->called.v[j]);
                if (r < 0) {
                    ret = -1;
                    goto out;
                }
                called[j] = (uint32_t)r;
            }
            nd->operands = ops;
            nd->noperands = ri->operands.n;
            nd->called = called;
            nd->ncalled = ri->called.n;
        }
        params = np ? arena_alloc(&g->arena, np * sizeof(*params)) : NULL;
        if (np && params == NULL) {
            ret = -ENOMEM;
            goto out;
        }
        for (i = 0; i < np; i++)
            params[i] = UINT32_MAX;
        for (i = 0; i < cp->n; i++) {
            struct hlo_node *nd = &g->nodes[cp->first + i];
            if (strcmp(nd->opcode, "parameter") == 0 && nd->parameter_number >= 0 &&
                params[nd->parameter_number] == UINT32_MAX)
                params[nd->parameter_number] = cp->first + i;
        }
        for (i = 0; i < np; i++) {
            if (params[i] == UINT32_MAX) {
                ret = -1;
                goto out;
            }
        }
        cp->params = params;
        cp->nparams = np;
    }
    for (i = 0; i < g->nnodes; i++) {
        if (nusers[i] == 0)
            continue;
        g->nodes[i].users = arena_alloc(&g->arena, nusers[i] * sizeof(uint32_t));
        if (g->nodes[i].users == NULL) {
            ret = -ENOMEM;
            goto out;
        }
    }
    for (i = 0; i < g->nnodes; i++) {
        const struct hlo_node *nd = &g->nodes[i];
        for (j = 0; j < nd->noperands; j++) {
            struct hlo_node *op = &g->nodes[nd->operands[j]];
            uint32_t k;
            for (k = 0; k < op->nusers && op->users[k] != i; k++)
                ;
            if (k == op->nusers) /* a user is listed once (XLA's users()) */
                op->users[op->nusers++] = i;
        }
    }
out:
    free(comp_ids);
    free(local);
    free(nusers);
    return ret;
}

/* Read the module into g, linked when whole. Returns 0, -1 (corrupt: g is
 * empty) or -ENOMEM (g is empty). */
static int read_module(const uint8_t *p, size_t n, struct hlo_graph *g, struct read_status *st)
{
    struct wire w;
    struct raw_ids *raw = NULL;
    struct raw_comp *rcomp = NULL;
    uint32_t ncomps, nnodes, c = 0, k = 0;
    int64_t entry_id = -1;
    const char *entry_name = "";
    int rc;

    memset(g, 0, sizeof(*g));
    arena_init(&g->arena);
    g->name = "";
    wire_init(&w, p, n);
    rc = count_module(w, &ncomps, &nnodes);
    if (rc != 0)
        goto fail;
    g->comps = arena_alloc(&g->arena, (ncomps ? ncomps : 1) * sizeof(*g->comps));
    g->nodes = arena_alloc(&g->arena, (nnodes ? nnodes : 1) * sizeof(*g->nodes));
    raw = calloc(nnodes ? nnodes : 1, sizeof(*raw));
    rcomp = calloc(ncomps ? ncomps : 1, sizeof(*rcomp));
    if (g->comps == NULL || g->nodes == NULL || raw == NULL || rcomp == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire cw;
        struct hlo_comp *cp;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            goto fail;
        }
        if (f == 6 && t == WIRE_VARINT) {
            if (read_varint_field(&w, t, &entry_id) != 0) {
                rc = -1;
                goto fail;
            }
            continue;
        }
        if ((f != 1 && f != 2 && f != 3) || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0) {
                rc = -1;
                goto fail;
            }
            continue;
        }
        if (wire_bytes(&w, &cw) != 0) {
            rc = -1;
            goto fail;
        }
        if (f == 1 || f == 2) {
            const char *v = keep_str(&g->arena, cw);
            if (v == NULL) {
                rc = -ENOMEM;
                goto fail;
            }
            if (f == 1)
                g->name = v;
            else
                entry_name = v;
            continue;
        }
        cp = &g->comps[c];
        memset(cp, 0, sizeof(*cp));
        cp->name = "";
        cp->first = k;
        rcomp[c].root_id = -1;
        while (!wire_eof(&cw)) {
            uint32_t cf;
            int ct;
            struct wire iw;
            if (wire_key(&cw, &cf, &ct) != 0) {
                rc = -1;
                goto fail;
            }
            if (cf == 5 || cf == 6) {
                if (read_varint_field(&cw, ct, cf == 5 ? &rcomp[c].id : &rcomp[c].root_id) != 0) {
                    rc = -1;
                    goto fail;
                }
                continue;
            }
            if ((cf != 1 && cf != 2) || ct != WIRE_LEN) {
                if (wire_skip(&cw, ct) != 0) {
                    rc = -1;
                    goto fail;
                }
                continue;
            }
            if (wire_bytes(&cw, &iw) != 0) {
                rc = -1;
                goto fail;
            }
            if (cf == 1) {
                cp->name = keep_str(&g->arena, iw);
                if (cp->name == NULL) {
                    rc = -ENOMEM;
                    goto fail;
                }
                continue;
            }
            raw[k].id = -1;
            rc = read_instr(&g->arena, iw, &g->nodes[k], &raw[k], st);
            if (rc != 0)
                goto fail;
            if (raw[k].id < 0)
                raw[k].id = (int64_t)(k - cp->first);
            g->nodes[k].comp = c;
            k++;
        }
        cp->n = k - cp->first;
        c++;
    }
    g->ncomps = c;
    g->nnodes = k;
    rc = st->graph_bad ? -1 : link_graph(g, raw, rcomp, entry_id, entry_name);
    if (rc == -ENOMEM)
        goto fail;
    g->linked = rc == 0;
    free_raw(raw, nnodes);
    free(rcomp);
    return 0;
fail:
    free_raw(raw, nnodes);
    free(rcomp);
    hlo_graph_free(g);
    return rc;
}

int hlo_graph_read(const uint8_t *p, size_t n, struct hlo_graph *g)
{
    struct read_status st = {0, 0};
    int rc = read_module(p, n, g, &st);

    if (rc == 0 && !g->linked) {
        hlo_graph_free(g);
        rc = -1;
    }
    return rc;
}

void hlo_graph_free(struct hlo_graph *g)
{
    if (g == NULL)
        return;
    arena_free(&g->arena);
    memset(g, 0, sizeof(*g));
}

/* --- the modules of a host ---------------------------------------------------- */

/* The HloModuleProto inside HloProto bytes (its first hlo_module field).
 * Returns 0 or -1. */
static int module_of_proto(const uint8_t *p, size_t n, struct wire *module)
{
    struct wire w;

    wire_init(&w, p, n);
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN)
            return wire_bytes(&w, module) != 0 ? -1 : 0;
        if (wire_skip(&w, t) != 0)
            return -1;
    }
    return -1;
}

void hlo_modules_free(struct hlo_modules *m)
{
    uint32_t i;

    if (m == NULL)
        return;
    for (i = 0; i < m->nmods; i++)
        hlo_graph_free(&m->mods[i].g);
    free(m->mods);
    free(m);
}

/* Whether an earlier module of program_id is one every reader accepts. */
static int program_taken(const struct hlo_modules *m, uint64_t program_id)
{
    uint32_t i;

    for (i = 0; i < m->nmods; i++) {
        if (m->mods[i].program_id == program_id && !m->mods[i].window_corrupt)
            return 1;
    }
    return 0;
}

/* Add the module of one metadata event, if it has one worth reading.
 * Returns 0 or -ENOMEM. */
static int add_module(struct hlo_modules *m, const struct xp_event_meta *em, int64_t proto_id,
                      int64_t pid_id, uint32_t *cap)
{
    const struct xp_stat *proto = NULL;
    struct hlo_proto_module mod;
    struct read_status st = {0, 0};
    struct wire mw;
    uint32_t j;
    int rc;

    memset(&mod, 0, sizeof(mod));
    mod.program_id = (uint64_t)em->id;
    for (j = 0; j < em->nstats; j++) {
        if (em->stats[j].meta_id == proto_id && proto == NULL)
            proto = &em->stats[j];
    }
    if (proto == NULL || proto->kind != XP_STAT_BYTES)
        return 0;
    for (j = 0; j < em->nstats; j++) {
        if (pid_id != XP_NO_STAT && em->stats[j].meta_id == pid_id) {
            mod.program_id = (uint64_t)xp_stat_int(&em->stats[j]);
            break;
        }
    }
    if (program_taken(m, mod.program_id))
        return 0;
    if (module_of_proto((const uint8_t *)proto->str, proto->len, &mw) != 0)
        return 0;
    rc = read_module(mw.p, (size_t)(mw.end - mw.p), &mod.g, &st);
    if (rc != 0)
        return rc == -ENOMEM ? rc : 0;
    mod.window_corrupt = st.window_corrupt;
    if (m->nmods == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        struct hlo_proto_module *v = realloc(m->mods, nc * sizeof(*v));
        if (v == NULL) {
            hlo_graph_free(&mod.g);
            return -ENOMEM;
        }
        m->mods = v;
        *cap = nc;
    }
    m->mods[m->nmods++] = mod;
    return 0;
}

int hlo_modules_read(const struct xspace *xs, struct hlo_modules **mp, struct xp_err *err)
{
    struct hlo_modules *m = calloc(1, sizeof(*m));
    uint32_t p, i, cap = 0;
    int rc = 0;

    *mp = NULL;
    if (m == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory reading HLO", xs->path);
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
            rc = add_module(m, &pl->emeta[i], proto_id, pl->stat_id[XS_PROGRAM_ID], &cap);
    }
    if (rc != 0) {
        hlo_modules_free(m);
        return xp_err_set(err, rc, "%s: out of memory reading HLO", xs->path);
    }
    *mp = m;
    return 0;
}

static int build_modules(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    struct xspace *xs;
    struct hlo_modules *m;
    int rc = snapshot_xspace_decoded(snap, arg, &xs, err);

    if (rc != 0)
        return rc;
    rc = hlo_modules_read(xs, &m, err);
    *value = m;
    return rc;
}

static void free_modules(void *value)
{
    hlo_modules_free(value);
}

int snapshot_hlo_modules(struct snapshot *snap, const char *host, const struct hlo_modules **mp,
                         struct xp_err *err)
{
    char *key;
    void *v;
    int rc;

    rc = snapshot_host_key("hlo_modules", host, NULL, &key, err);
    if (rc == 0) {
        rc = snapshot_intermediate(snap, key, build_modules, free_modules, host, &v, err);
        free(key);
    }
    *mp = rc == 0 ? v : NULL;
    return rc;
}

int64_t hlo_shape_elements(const struct hlo_shape *s)
{
    int64_t n = 1;
    uint32_t i;

    if (s->type == HLO_TUPLE)
        return 0;
    for (i = 0; i < s->ndims; i++)
        n *= s->dims[i];
    return n;
}

int64_t hlo_shape_elements_recursive(const struct hlo_shape *s)
{
    int64_t n = 0;
    uint32_t i;

    if (s->type != HLO_TUPLE)
        return s->type == HLO_TOKEN || s->type == HLO_OPAQUE ? 0 : hlo_shape_elements(s);
    for (i = 0; i < s->ntuple; i++)
        n += hlo_shape_elements_recursive(&s->tuple[i]);
    return n;
}

int hlo_type_bits(int32_t type)
{
    switch (type) {
    case 1:
    case 30:
    case 31:
        return 1;
    case 26:
    case 27:
        return 2;
    case 21:
    case 22:
    case 32:
        return 4;
    case 35:
    case 36:
        return 6;
    case 2:
    case 6:
    case 19:
    case 20:
    case 23:
    case 24:
    case 25:
    case 28:
    case 29:
    case 33:
        return 8;
    case 3:
    case 7:
    case 10:
    case 16:
        return 16;
    case 4:
    case 8:
    case 11:
        return 32;
    case 5:
    case 9:
    case 12:
    case 15:
        return 64;
    case 18:
        return 128;
    default:
        return 0;
    }
}
