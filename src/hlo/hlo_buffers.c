/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_buffers.c - an HloProto's module and BufferAssignmentProto read into
 * the indexed tables of struct hlo_mem (hlo_buffers.h), as XProf's
 * HloProtoBufferWrapper indexes them: logical buffers by id (those assigned
 * to an allocation and defined by a known instruction), allocations by
 * index, each trace attached to the allocation of its first event's buffer.
 * The replay is hlo_buffers_sim.c's, the timeline hlo_buffers_dot.c's.
 */
#include "hlo_buffers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "base/wire.h"
#include "hlo_buffers_int.h"
#include "hlo_module_int.h"
#include "hlo_text.h"

/* A LogicalBufferProto as read. */
struct raw_lb {
    int64_t id, size, color, instr;
    const int64_t *shape_index;
    uint32_t nshape_index;
    uint32_t order; /* position in the proto */
};

/* (id, position) pairs for "last of an id wins" lookups. */
struct id_pos {
    int64_t id;
    uint32_t pos;
};

/* What a read collects besides m. */
struct reader {
    struct hlo_mem *m;
    struct raw_lb *lbs; /* in proto order */
    uint32_t nlbs;
    struct hlo_mem_alloc *allocs; /* in proto order */
    uint32_t nallocs;
    struct id_pos *lb_ids;    /* lbs by id */
    struct id_pos *instr_ids; /* instructions by id */
};

static int id_pos_cmp(const void *a, const void *b)
{
    const struct id_pos *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The position of the last pair of id in v[0..n) (sorted), or -1. */
static int64_t id_pos_last(const struct id_pos *v, uint32_t n, int64_t id)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].id <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && v[lo - 1].id == id ? (int64_t)v[lo - 1].pos : -1;
}

int32_t hlo_mem_lbuf_find(const struct hlo_mem *m, int64_t id)
{
    uint32_t lo = 0, hi = m->nlbufs;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->lbufs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nlbufs && m->lbufs[lo].id == id ? (int32_t)lo : HLO_MEM_NO_ID;
}

int hlo_mem_indefinite(const struct hlo_mem_alloc *a)
{
    return a->thread_local || a->entry_param || a->constant || a->live_out;
}

const char *hlo_mem_category(const struct hlo_mem_alloc *a)
{
    if (a->entry_param)
        return "Parameter";
    if (a->live_out)
        return "Output";
    if (a->thread_local)
        return "Thread-local";
    if (a->constant)
        return "Constant";
    return "Temporary";
}

/* Count the sub-messages of field f in w; -1 when malformed. */
static int64_t count_field(struct wire w, uint32_t want)
{
    int64_t n = 0;

    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0 || wire_skip(&w, t) != 0)
            return -1;
        n += f == want && t == WIRE_LEN;
    }
    return n;
}

/* A varint field as a bool. 0 or -1. */
static int read_bool(struct wire *w, int t, int *out)
{
    int64_t v = *out;
    int rc = hlo_read_varint(w, t, &v);

    *out = v != 0;
    return rc;
}

/* LogicalBufferProto.Location into lb. 0, -1 or -ENOMEM. */
static int read_location(struct arena *a, struct wire w, struct raw_lb *lb)
{
    struct i64vec idx = {0};
    int rc = 0, ok = 1;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            rc = -1;
        else if (f == 4)
            rc = hlo_read_varint(&w, t, &lb->instr);
        else if (f == 3)
            rc = hlo_read_i64s(&w, t, &idx) != 0 ? -1 : 0;
        else
            rc = wire_skip(&w, t) != 0 ? -1 : 0;
    }
    if (rc == 0) {
        lb->shape_index = hlo_vec_keep(a, &idx, &ok);
        lb->nshape_index = idx.n;
        rc = ok ? 0 : -ENOMEM;
    }
    free(idx.v);
    return rc;
}

/* One LogicalBufferProto. 0, -1 or -ENOMEM. */
static int read_lb(struct arena *a, struct wire w, struct raw_lb *lb)
{
    int rc = 0;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 3 && t == WIRE_LEN)
            rc = wire_bytes(&w, &s) != 0 ? -1 : read_location(a, s, lb);
        else if (f == 1 || f == 2 || f == 4)
            rc = hlo_read_varint(&w, t, f == 1 ? &lb->id : f == 2 ? &lb->size : &lb->color);
        else
            rc = wire_skip(&w, t) != 0 ? -1 : 0;
    }
    return rc;
}

/* One BufferAllocationProto.Assigned. 0 or -1. */
static int read_assigned(struct wire w, struct hlo_mem_assigned *as)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        int64_t *v = NULL;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        v = f == 1 ? &as->lb_id : f == 2 ? &as->offset : f == 3 ? &as->size : NULL;
        if (v != NULL ? hlo_read_varint(&w, t, v) != 0 : wire_skip(&w, t) != 0)
            return -1;
    }
    return 0;
}

/* A field of BufferAllocationProto other than assigned. 0 or -1. */
static int read_alloc_field(struct wire *w, uint32_t f, int t, struct hlo_mem_alloc *al)
{
    switch (f) {
    case 1:
        return hlo_read_varint(w, t, &al->index);
    case 2:
        return hlo_read_varint(w, t, &al->size);
    case 3:
        return read_bool(w, t, &al->thread_local);
    case 5:
        return read_bool(w, t, &al->entry_param);
    case 7:
        return read_bool(w, t, &al->live_out);
    case 8:
        return hlo_read_varint(w, t, &al->color);
    case 11:
        return read_bool(w, t, &al->tuple);
    case 12:
        return read_bool(w, t, &al->constant);
    default:
        return wire_skip(w, t) != 0 ? -1 : 0;
    }
}

/* One BufferAllocationProto, its assigned entries appended to m. 0 or -1. */
static int read_alloc(struct wire w, struct hlo_mem *m, struct hlo_mem_alloc *al)
{
    memset(al, 0, sizeof(*al));
    al->first = m->nassigned;
    al->trace = HLO_MEM_NO_ID;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 9 && t == WIRE_LEN) {
            struct hlo_mem_assigned *as = &m->assigned[m->nassigned];
            memset(as, 0, sizeof(*as));
            as->lbuf = HLO_MEM_NO_ID;
            if (wire_bytes(&w, &s) != 0 || read_assigned(s, as) != 0)
                return -1;
            m->nassigned++;
        } else if (read_alloc_field(&w, f, t, al) != 0) {
            return -1;
        }
    }
    al->nassigned = m->nassigned - al->first;
    return 0;
}

/* One HeapSimulatorTrace.Event. 0 or -1. */
static int read_event(struct wire w, struct hlo_mem_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->name = "";
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 4 && t == WIRE_LEN) {
            if (wire_bytes(&w, &s) != 0 || s.end - s.p > UINT32_MAX)
                return -1;
            ev->name = (const char *)s.p;
            ev->name_len = (uint32_t)(s.end - s.p);
        } else if (f == 1 || f == 2 || f == 5) {
            int64_t *v = f == 1 ? &ev->kind : f == 2 ? &ev->buffer_id : &ev->share_id;
            if (hlo_read_varint(&w, t, v) != 0)
                return -1;
        } else if (wire_skip(&w, t) != 0) {
            return -1;
        }
    }
    /* an enum is an int32 on the wire */
    ev->kind = (int32_t)ev->kind;
    return 0;
}

/* One HeapSimulatorTrace, its events appended to m. 0 or -1. */
static int read_trace(struct wire w, struct hlo_mem *m, struct hlo_mem_trace *tr)
{
    tr->first = m->nevents;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (f == 1 && t == WIRE_LEN) {
            if (wire_bytes(&w, &s) != 0 || read_event(s, &m->events[m->nevents]) != 0)
                return -1;
            m->nevents++;
        } else if (wire_skip(&w, t) != 0) {
            return -1;
        }
    }
    tr->n = m->nevents - tr->first;
    return 0;
}

/* Sizes of the arrays of a BufferAssignmentProto. 0 or -1. */
static int count_assignment(struct wire w, int64_t counts[5])
{
    memset(counts, 0, 5 * sizeof(counts[0]));
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        int64_t k;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN || (f != 1 && f != 3 && f != 4)) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        k = f == 1 ? 0 : count_field(s, f == 3 ? 9 : 1);
        if (k < 0)
            return -1;
        counts[f == 1 ? 0 : f == 3 ? 1 : 3]++;
        counts[f == 3 ? 2 : 4] += f == 1 ? 0 : k;
    }
    return 0;
}

/* An array of n elements of size bytes from the arena (n may be 0). */
static void *arena_array(struct arena *a, int64_t n, size_t size)
{
    void *p;

    if (n < 0 || (uint64_t)n > UINT32_MAX / 2 || (uint64_t)n > SIZE_MAX / size / 2)
        return NULL;
    p = arena_alloc(a, (size_t)(n ? n : 1) * size);
    if (p != NULL)
        memset(p, 0, (size_t)(n ? n : 1) * size);
    return p;
}

/* Read the BufferAssignmentProto w into m and r. 0, -1 (malformed), -2
 * (more entries than HLO_MEM_MAX_ENTRIES) or -ENOMEM. */
static int read_assignment(struct wire w, struct reader *r)
{
    struct hlo_mem *m = r->m;
    int64_t counts[5];
    int rc = 0, i;

    if (count_assignment(w, counts) != 0)
        return -1;
    for (i = 0; i < 5; i++) {
        if (counts[i] > HLO_MEM_MAX_ENTRIES)
            return -2;
    }
    r->lbs = arena_array(&m->arena, counts[0], sizeof(*r->lbs));
    r->allocs = arena_array(&m->arena, counts[1], sizeof(*r->allocs));
    m->assigned = arena_array(&m->arena, counts[2], sizeof(*m->assigned));
    m->traces = arena_array(&m->arena, counts[3], sizeof(*m->traces));
    m->events = arena_array(&m->arena, counts[4], sizeof(*m->events));
    if (!r->lbs || !r->allocs || !m->assigned || !m->traces || !m->events)
        return -ENOMEM;
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN || (f != 1 && f != 3 && f != 4)) {
            rc = wire_skip(&w, t) != 0 ? -1 : 0;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        if (f == 1) {
            r->lbs[r->nlbs].order = r->nlbs;
            rc = read_lb(&m->arena, s, &r->lbs[r->nlbs++]);
        } else if (f == 3) {
            rc = read_alloc(s, m, &r->allocs[r->nallocs++]);
        } else {
            rc = read_trace(s, m, &m->traces[m->ntraces++]);
        }
    }
    return rc;
}

/* The first hlo_module (1) and buffer_assignment (3) of HloProto bytes.
 * Returns 0 or -1; a missing one has a NULL p. */
static int split_proto(const uint8_t *p, size_t n, struct wire *module, struct wire *assign)
{
    struct wire w;

    module->p = module->end = assign->p = assign->end = NULL;
    wire_init(&w, p, n);
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if ((f != 1 && f != 3) || t != WIRE_LEN) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &s) != 0)
            return -1;
        if (f == 1 && module->p == NULL)
            *module = s;
        else if (f == 3 && assign->p == NULL)
            *assign = s;
    }
    return 0;
}

/* The ids of the instructions of module w, in the order the graph holds
 * them, into r->instr_ids (sorted after), and the entry computation name.
 * Returns 0, -1 (the count differs from the graph's) or -ENOMEM. */
static int read_instr_ids(struct wire w, struct reader *r)
{
    struct hlo_mem *m = r->m;
    uint32_t k = 0;

    r->instr_ids = arena_array(&m->arena, m->g.nnodes, sizeof(*r->instr_ids));
    if (r->instr_ids == NULL)
        return -ENOMEM;
    while (!wire_eof(&w)) {
        uint32_t f, cf;
        int t, ct;
        struct wire c, iw;
        if (wire_key(&w, &f, &t) != 0)
            return -1;
        if (t != WIRE_LEN || (f != 2 && f != 3)) {
            if (wire_skip(&w, t) != 0)
                return -1;
            continue;
        }
        if (wire_bytes(&w, &c) != 0)
            return -1;
        if (f == 2) {
            m->entry_name = hlo_keep_str(&m->arena, c);
            if (m->entry_name == NULL)
                return -ENOMEM;
            continue;
        }
        while (!wire_eof(&c)) {
            if (wire_key(&c, &cf, &ct) != 0)
                return -1;
            if (cf != 2 || ct != WIRE_LEN) {
                if (wire_skip(&c, ct) != 0)
                    return -1;
                continue;
            }
            if (wire_bytes(&c, &iw) != 0 || k >= m->g.nnodes)
                return -1;
            r->instr_ids[k] = (struct id_pos){0, k};
            while (!wire_eof(&iw)) {
                uint32_t inf;
                int it;
                if (wire_key(&iw, &inf, &it) != 0)
                    return -1;
                if (inf == 35 ? hlo_read_varint(&iw, it, &r->instr_ids[k].id) != 0
                              : wire_skip(&iw, it) != 0)
                    return -1;
            }
            k++;
        }
    }
    if (k != m->g.nnodes)
        return -1;
    xp_qsort(r->instr_ids, k, sizeof(*r->instr_ids), id_pos_cmp);
    return 0;
}

/* Bytes of shape s without padding (XProf's old ShapeUnpaddedSize, which
 * XLA's ComputeLogicalBufferUnpaddedSizes replaced): the default layout's
 * ShapeUtil::ByteSizeOf with 8-byte pointers, so a tuple is its index
 * table. Saturates at INT64_MAX. */
static int64_t unpadded_bytes(const struct hlo_shape *s)
{
    int64_t n = 1, bytes;
    int bits;
    uint32_t i;

    if (s->type == HLO_TUPLE)
        return 8 * (int64_t)s->ntuple;
    if (s->type == HLO_TOKEN)
        return 0;
    if (s->type == HLO_OPAQUE)
        return 8;
    for (i = 0; i < s->ndims; i++) {
        if (s->dims[i] <= 0)
            return 0;
        if (__builtin_mul_overflow(n, s->dims[i], &n))
            return INT64_MAX;
    }
    bits = hlo_type_bits(s->type);
    bytes = bits <= 0 ? 0 : (bits + 7) / 8;
    return __builtin_mul_overflow(n, bytes, &n) ? INT64_MAX : n;
}

/* The shape at the last entry of the shape index (XProf's historical rule:
 * only one level into a tuple). */
static const struct hlo_shape *resolve_shape(const struct hlo_shape *s, const int64_t *idx,
                                             uint32_t n)
{
    int64_t i;

    if (n == 0)
        return s;
    i = idx[n - 1];
    return i >= 0 && (uint64_t)i < s->ntuple ? &s->tuple[i] : s;
}

/* s with its layout as XLA prints it, copied into the arena through the
 * scratch writer o; NULL on no memory. */
static const char *shape_string(struct arena *a, struct out *o, const struct hlo_shape *s)
{
    size_t len, i, off = 0;
    char *str;

    out_rewind(o);
    hlo_shape_print(o, s, 1);
    if (out_failed(o))
        return NULL;
    len = out_len(o);
    str = arena_alloc(a, len + 1);
    if (str == NULL)
        return NULL;
    for (i = 0; off < len; i++) {
        size_t k = len - off < OUT_CHUNK ? len - off : OUT_CHUNK;
        memcpy(str + off, o->chunks[i], k);
        off += k;
    }
    str[len] = '\0';
    return str;
}

/* Order of candidate logical buffers: by id, then by assignment order. */
static int lbuf_cmp(const void *a, const void *b)
{
    const struct hlo_mem_lbuf *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->refs < y->refs ? -1 : x->refs > y->refs;
}

/* One candidate logical buffer for assignment as of allocation al (its
 * position in m->allocs); 0 when XProf would skip it. */
static int make_lbuf(struct reader *r, const struct hlo_mem_assigned *as, uint32_t al,
                     struct hlo_mem_lbuf *lb)
{
    const struct raw_lb *raw;
    int64_t pos = id_pos_last(r->lb_ids, r->nlbs, as->lb_id), node;

    if (pos < 0)
        return 0;
    raw = &r->lbs[pos];
    node = id_pos_last(r->instr_ids, r->m->g.nnodes, raw->instr);
    if (node < 0)
        return 0;
    memset(lb, 0, sizeof(*lb));
    lb->id = raw->id;
    lb->size = raw->size;
    lb->color = raw->color;
    lb->offset = as->offset;
    lb->alloc = al;
    lb->node = (uint32_t)node;
    lb->shape_index = raw->shape_index;
    lb->nshape_index = raw->nshape_index;
    lb->shape = resolve_shape(&r->m->g.nodes[node].shape, raw->shape_index, raw->nshape_index);
    lb->unpadded = unpadded_bytes(lb->shape);
    return 1;
}

/* Reject sizes and offsets XProf would wrap into size_t. 0 or -EIO. */
static int check_sizes(const struct reader *r, struct xp_err *err)
{
    uint32_t i;

    for (i = 0; i < r->nlbs; i++) {
        if (r->lbs[i].size < 0)
            return xp_err_set(err, -EIO, "logical buffer %lld has a negative size (%lld)",
                              (long long)r->lbs[i].id, (long long)r->lbs[i].size);
    }
    for (i = 0; i < r->nallocs; i++) {
        if (r->allocs[i].size < 0)
            return xp_err_set(err, -EIO, "buffer allocation %lld has a negative size (%lld)",
                              (long long)r->allocs[i].index, (long long)r->allocs[i].size);
    }
    for (i = 0; i < r->m->nassigned; i++) {
        if (r->m->assigned[i].offset < 0 || r->m->assigned[i].size < 0)
            return xp_err_set(err, -EIO,
                              "logical buffer %lld has a negative offset or size in "
                              "its allocation",
                              (long long)r->m->assigned[i].lb_id);
    }
    return 0;
}

static int alloc_index_cmp(const void *a, const void *b)
{
    const struct hlo_mem_alloc *x = a, *y = b;

    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sort the allocations by index into m->allocs, keeping in r->allocs'
 * trace field the position each proto entry got. 0, -EIO (an index twice)
 * or -ENOMEM. */
static int sort_allocs(struct reader *r, struct xp_err *err)
{
    struct hlo_mem *m = r->m;
    uint32_t i;

    m->allocs = arena_array(&m->arena, r->nallocs, sizeof(*m->allocs));
    if (m->allocs == NULL)
        return -ENOMEM;
    for (i = 0; i < r->nallocs; i++) {
        m->allocs[i] = r->allocs[i];
        m->allocs[i].trace = (int32_t)i; /* proto position, for a moment */
    }
    m->nallocs = r->nallocs;
    xp_qsort(m->allocs, m->nallocs, sizeof(*m->allocs), alloc_index_cmp);
    for (i = 0; i < m->nallocs; i++) {
        if (i > 0 && m->allocs[i].index == m->allocs[i - 1].index)
            return xp_err_set(err, -EIO, "buffer allocation index %lld appears twice",
                              (long long)m->allocs[i].index);
        r->allocs[m->allocs[i].trace].trace = (int32_t)i;
        m->allocs[i].trace = HLO_MEM_NO_ID;
    }
    return 0;
}

/* The logical buffers XProf indexes, by id: every assignment of a known
 * buffer whose instruction is known, the last of an id winning. 0 or
 * -ENOMEM. */
static int index_lbufs(struct reader *r)
{
    struct hlo_mem *m = r->m;
    uint32_t i, j, n = 0, out = 0;

    m->lbufs = arena_array(&m->arena, m->nassigned, sizeof(*m->lbufs));
    if (m->lbufs == NULL)
        return -ENOMEM;
    for (i = 0; i < r->nallocs; i++) {
        const struct hlo_mem_alloc *al = &r->allocs[i];
        for (j = 0; j < al->nassigned; j++) {
            if (make_lbuf(r, &m->assigned[al->first + j], (uint32_t)al->trace, &m->lbufs[n])) {
                m->lbufs[n].refs = n; /* assignment order, for the sort */
                n++;
            }
        }
    }
    xp_qsort(m->lbufs, n, sizeof(*m->lbufs), lbuf_cmp);
    for (i = 0; i < n; i++) {
        if (i + 1 < n && m->lbufs[i + 1].id == m->lbufs[i].id)
            continue;
        m->lbufs[out] = m->lbufs[i];
        m->lbufs[out].refs = 0;
        m->lbufs[out].canonical = m->lbufs[out].display = HLO_MEM_NO_ID;
        m->lbufs[out].heap_color = HLO_MEM_NO_ID;
        out++;
    }
    m->nlbufs = out;
    for (i = 0; i < m->nassigned; i++)
        m->assigned[i].lbuf = hlo_mem_lbuf_find(m, m->assigned[i].lb_id);
    return 0;
}

/* Shape strings of the indexed buffers and each trace's allocation.
 * 0 or -ENOMEM. */
static int finish_index(struct hlo_mem *m)
{
    struct out o;
    uint32_t i;
    int rc = 0;

    memset(&o, 0, sizeof(o));
    out_init(&o);
    for (i = 0; i < m->nlbufs && rc == 0; i++) {
        m->lbufs[i].shape_str = shape_string(&m->arena, &o, m->lbufs[i].shape);
        if (m->lbufs[i].shape_str == NULL)
            rc = -ENOMEM;
    }
    out_discard(&o);
    for (i = 0; i < m->ntraces && rc == 0; i++) {
        int32_t lb;
        if (m->traces[i].n == 0)
            continue;
        lb = hlo_mem_lbuf_find(m, m->events[m->traces[i].first].buffer_id);
        if (lb != HLO_MEM_NO_ID)
            m->allocs[m->lbufs[lb].alloc].trace = (int32_t)i;
    }
    return rc;
}

/* Index what read_assignment read (XProf's HloProtoBufferWrapper::Init).
 * 0, -EIO or -ENOMEM with err. */
static int index_all(struct reader *r, struct xp_err *err)
{
    struct hlo_mem *m = r->m;
    uint32_t i;
    int rc = check_sizes(r, err);

    if (rc != 0)
        return rc;
    r->lb_ids = arena_array(&m->arena, r->nlbs, sizeof(*r->lb_ids));
    if (r->lb_ids == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    for (i = 0; i < r->nlbs; i++)
        r->lb_ids[i] = (struct id_pos){r->lbs[i].id, i};
    xp_qsort(r->lb_ids, r->nlbs, sizeof(*r->lb_ids), id_pos_cmp);
    rc = sort_allocs(r, err);
    if (rc == 0)
        rc = index_lbufs(r);
    if (rc == 0)
        rc = finish_index(m);
    if (rc == -ENOMEM)
        return xp_err_set(err, rc, "out of memory");
    return rc;
}

/* Read the module and the assignment. 0, -ENOENT, -EIO or -ENOMEM. */
static int read_all(const uint8_t *p, size_t n, struct reader *r, struct xp_err *err)
{
    struct hlo_mem *m = r->m;
    /* no texts (unused here); stack frames as XProf's memory viewer builds
     * them; bad fields only the cost model reads are no fault here */
    struct hlo_read_opts opts = {HLO_READ_JOINED, NULL, NULL};
    struct hlo_read_status st = {0, 0};
    struct wire module, assign;
    int rc;

    if (split_proto(p, n, &module, &assign) != 0)
        return xp_err_set(err, -EIO, "malformed HloProto");
    if (module.p == NULL)
        return xp_err_set(err, -ENOENT, "the HloProto has no HLO module");
    if (assign.p == NULL)
        return xp_err_set(err, -ENOENT, "the HLO module has no buffer assignment");
    rc = hlo_read_module_opts(module.p, (size_t)(module.end - module.p), &m->g, &st, &opts);
    if (rc != 0)
        return xp_err_set(err, rc == -ENOMEM ? rc : -EIO,
                          rc == -ENOMEM ? "out of memory" : "malformed HLO module");
    m->module_name = m->g.name;
    rc = read_instr_ids(module, r);
    if (rc == -1)
        return xp_err_set(err, -EIO,
                          "malformed HLO module: its instruction ids do not read as its "
                          "%u instructions",
                          m->g.nnodes);
    if (rc == 0)
        rc = read_assignment(assign, r);
    if (rc == -ENOMEM)
        return xp_err_set(err, rc, "out of memory");
    if (rc == -2)
        return xp_err_set(err, -EIO,
                          "buffer assignment too large: more than %d buffers, allocations "
                          "or trace events",
                          HLO_MEM_MAX_ENTRIES);
    if (rc != 0)
        return xp_err_set(err, -EIO, "malformed buffer assignment");
    return index_all(r, err);
}

int hlo_mem_build(const uint8_t *p, size_t n, int64_t color, struct hlo_mem *m, struct xp_err *err)
{
    struct reader r;
    int rc;

    memset(m, 0, sizeof(*m));
    memset(&r, 0, sizeof(r));
    arena_init(&m->arena);
    m->module_name = m->entry_name = m->scoped_instr = "";
    m->color = color;
    m->trace = HLO_MEM_NO_ID;
    r.m = m;
    rc = read_all(p, n, &r, err);
    if (rc == 0)
        rc = hlo_mem_simulate(m, err);
    if (rc == 0)
        rc = hlo_mem_timeline(m, err);
    if (rc != 0)
        hlo_mem_free(m);
    return rc;
}

void hlo_mem_free(struct hlo_mem *m)
{
    if (m == NULL)
        return;
    hlo_graph_free(&m->g);
    free(m->heap);
    free(m->unpadded_heap);
    free(m->names);
    free(m->name_lens);
    free(m->objects);
    free(m->by_size);
    free(m->spans);
    free(m->blocks);
    free(m->rects);
    arena_free(&m->arena);
    memset(m, 0, sizeof(*m));
}
