/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_buffers_sim.c - XProf's replay of one heap-simulator trace
 * (ProcessHeapSimulatorTrace, HeapSimulatorStats) and the peak picture
 * built from it (PeakUsageSnapshot, GeneratePreprocessResult,
 * NoteSpecialAllocations) for struct hlo_mem (hlo_buffers.h).
 *
 * XProf copies the list of live buffers at every new peak; here the replay
 * notes where the peak is, then replays the trace up to that event once
 * more and reads the list there, so a trace of n events costs O(n), not
 * O(n^2). Shared buffers point at their canonical buffer; chains are kept
 * acyclic (a SHARE_WITH that would close a cycle, which sends XProf into
 * endless recursion, is refused) and their walks are bounded in total.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "hlo_buffers_int.h"

#define CHAIN_STEPS_MAX ((uint64_t)1 << 28) /* canonical-chain steps of one replay */

enum { EV_ALLOC = 0, EV_FREE = 1, EV_SHARE_WITH = 2 };

/* XProf's std::list of live buffer ids, in heap order: a doubly linked list
 * of nodes, each buffer's nodes chained so removing all of a buffer's
 * entries costs what it removes. */
struct live {
    uint32_t *prev, *next; /* per node */
    uint32_t *lb;          /* per node: the buffer */
    uint32_t *same;        /* per node: the buffer's next node */
    uint32_t *first;       /* per buffer: its first node */
    uint32_t head, tail;   /* ends, NONE when empty */
    uint32_t n;            /* nodes used */
};

#define NONE UINT32_MAX

/* One replay of the chosen trace. */
struct replay {
    struct hlo_mem *m;
    const struct hlo_mem_trace *tr;
    int32_t *evlb;    /* per event: its buffer, or HLO_MEM_NO_ID */
    int32_t *evshare; /* per event: the canonical buffer of a SHARE_WITH */
    struct live live;
    int64_t heap, unpadded;
    int64_t peak, peak_unpadded, peak_position;
    int64_t peak_event; /* event that set the peak, -1 */
    uint32_t nseen;     /* allocations the trace touched */
    uint64_t steps;     /* chain steps walked */
    int record;         /* fill m's timelines */
    struct xp_err *err;
};

static void live_reset(struct live *l, uint32_t nlbufs)
{
    uint32_t i;

    for (i = 0; i < nlbufs; i++)
        l->first[i] = NONE;
    l->head = l->tail = NONE;
    l->n = 0;
}

/* Append buffer lb (room for one node per event was made). */
static void live_push(struct live *l, uint32_t lb)
{
    uint32_t k = l->n++;

    l->lb[k] = lb;
    l->prev[k] = l->tail;
    l->next[k] = NONE;
    if (l->tail != NONE)
        l->next[l->tail] = k;
    else
        l->head = k;
    l->tail = k;
    l->same[k] = l->first[lb];
    l->first[lb] = k;
}

/* Remove every entry of buffer lb (std::list::remove). */
static void live_remove(struct live *l, uint32_t lb)
{
    uint32_t k;

    for (k = l->first[lb]; k != NONE; k = l->same[k]) {
        if (l->prev[k] != NONE)
            l->next[l->prev[k]] = l->next[k];
        else
            l->head = l->next[k];
        if (l->next[k] != NONE)
            l->prev[l->next[k]] = l->prev[k];
        else
            l->tail = l->prev[k];
    }
    l->first[lb] = NONE;
}

/* The root of lb's canonical chain, or -1 past the step budget (err set). */
static int64_t root_of(struct replay *r, int32_t lb)
{
    while (r->m->lbufs[lb].canonical != HLO_MEM_NO_ID) {
        if (++r->steps > CHAIN_STEPS_MAX) {
            xp_err_set(r->err, -EIO, "heap simulator trace: buffer sharing chains too long");
            return -1;
        }
        lb = r->m->lbufs[lb].canonical;
    }
    return lb;
}

/* XProf's IncreaseMemoryUsage at event e. 0 or -EIO. */
static int increase(struct replay *r, int32_t lb, int init_span, int64_t e)
{
    struct hlo_mem_lbuf *b = &r->m->lbufs[lb];

    live_push(&r->live, (uint32_t)lb);
    if (__builtin_add_overflow(r->heap, b->size, &r->heap))
        return xp_err_set(r->err, -EIO, "heap simulator trace: heap size overflows");
    r->unpadded = hlo_mem_add_sat(r->unpadded, b->unpadded);
    if (r->heap > r->peak) {
        r->peak = r->heap;
        r->peak_position = e;
        r->peak_unpadded = r->unpadded;
        r->peak_event = e;
    }
    if (init_span) {
        b->has_span = 1;
        b->span_start = e;
        b->span_end = (int64_t)r->tr->n - 1;
    }
    return 0;
}

/* XProf's DecreaseMemoryUsage at event e. 0 or -EIO. */
static int decrease(struct replay *r, int32_t lb, int64_t e)
{
    struct hlo_mem_lbuf *b = &r->m->lbufs[lb];

    live_remove(&r->live, (uint32_t)lb);
    r->heap -= b->size;
    if (r->heap < 0)
        return xp_err_set(r->err, -EIO,
                          "heap simulator trace: heap size should be non-negative, but is %lld",
                          (long long)r->heap);
    r->unpadded = hlo_mem_add_sat(r->unpadded, -b->unpadded);
    if (b->has_span)
        b->span_end = e;
    return 0;
}

/* A FREE of lb at event e. 0 or -EIO. */
static int on_free(struct replay *r, int32_t lb, int64_t e)
{
    struct hlo_mem_lbuf *b = &r->m->lbufs[lb];
    int64_t root = root_of(r, lb);
    int rc = 0;

    if (root < 0)
        return -EIO;
    if (--r->m->lbufs[root].refs < 0)
        return xp_err_set(r->err, -EIO, "heap simulator trace: buffer %lld is freed more than once",
                          (long long)b->id);
    if (r->m->lbufs[root].refs == 0)
        rc = decrease(r, (int32_t)root, e);
    if (b->has_span && b->canonical != HLO_MEM_NO_ID)
        b->span_end = e;
    return rc;
}

/* A SHARE_WITH of lb with canonical c at event e. 0 or -EIO. */
static int on_share(struct replay *r, int32_t lb, int32_t c, int64_t e)
{
    struct hlo_mem_lbuf *b = &r->m->lbufs[lb];
    int32_t k = c;
    int64_t root;

    for (;;) {
        if (k == lb)
            return xp_err_set(r->err, -EIO,
                              "heap simulator trace: buffer %lld shares with itself through %lld",
                              (long long)b->id, (long long)r->m->lbufs[c].id);
        if (r->m->lbufs[k].canonical == HLO_MEM_NO_ID)
            break;
        if (++r->steps > CHAIN_STEPS_MAX)
            return xp_err_set(r->err, -EIO, "heap simulator trace: buffer sharing chains too long");
        k = r->m->lbufs[k].canonical;
    }
    root = k;
    b->canonical = c;
    if (++r->m->lbufs[root].refs != 1)
        return 0;
    /* the canonical's memory comes back: the sharer is what the chart shows */
    r->m->lbufs[root].display = lb;
    b->has_span = 1;
    b->span_start = e;
    b->span_end = (int64_t)r->tr->n - 1;
    return increase(r, (int32_t)root, 0, e);
}

/* One event e. 0 or -EIO. */
static int on_event(struct replay *r, int64_t e)
{
    struct hlo_mem *m = r->m;
    const struct hlo_mem_event *ev = &m->events[r->tr->first + e];
    int32_t lb = r->evlb[e];
    int64_t root;

    if (r->record) {
        m->heap[e] = r->heap;
        m->unpadded_heap[e] = r->unpadded;
        m->names[e] = ev->name;
        m->name_lens[e] = ev->name_len;
    }
    if (lb == HLO_MEM_NO_ID)
        return 0;
    m->lbufs[lb].seen = 1;
    if (!m->allocs[m->lbufs[lb].alloc].seen) {
        m->allocs[m->lbufs[lb].alloc].seen = 1;
        r->nseen++;
    }
    switch (ev->kind) {
    case EV_ALLOC:
        root = root_of(r, lb);
        if (root < 0)
            return -EIO;
        m->lbufs[root].refs++;
        return increase(r, lb, 1, e);
    case EV_FREE:
        return on_free(r, lb, e);
    case EV_SHARE_WITH:
        return r->evshare[e] == HLO_MEM_NO_ID ? 0 : on_share(r, lb, r->evshare[e], e);
    default:
        return xp_err_set(r->err, -EIO, "heap simulator trace: unhandled event kind %lld",
                          (long long)ev->kind);
    }
}

/* Replay the trace from the start up to event stop (all of it when -1,
 * then the final timeline point and the one-allocation check). 0 or -EIO. */
static int replay_run(struct replay *r, int64_t stop)
{
    struct hlo_mem *m = r->m;
    int64_t e, n = r->tr->n;
    uint32_t i;
    int rc = 0;

    for (i = 0; i < m->nlbufs; i++) {
        m->lbufs[i].refs = 0;
        m->lbufs[i].canonical = m->lbufs[i].display = HLO_MEM_NO_ID;
        m->lbufs[i].has_span = m->lbufs[i].seen = 0;
    }
    for (i = 0; i < m->nallocs; i++)
        m->allocs[i].seen = 0;
    live_reset(&r->live, m->nlbufs);
    r->heap = r->unpadded = r->peak = r->peak_unpadded = r->peak_position = 0;
    r->peak_event = -1;
    r->nseen = 0;
    r->steps = 0;
    for (e = 0; e < n && rc == 0; e++) {
        rc = on_event(r, e);
        if (e == stop)
            return rc;
    }
    if (rc != 0)
        return rc;
    if (r->record) {
        m->heap[n] = r->heap;
        m->unpadded_heap[n] = r->unpadded;
        m->names[n] = "";
        m->name_lens[n] = 0;
    }
    if (r->nseen != 1)
        return xp_err_set(r->err, -EIO,
                          "heap simulator trace: all heap simulation should work out of a single "
                          "buffer allocation, but it touches %u",
                          r->nseen);
    return 0;
}

/* XProf's GetHeapSimulatorTraceId: the trace of the first non-indefinite
 * allocation of the colour that has one, else the trace with most events
 * of buffers of that colour; HLO_MEM_NO_ID for none. */
static int32_t choose_trace(const struct hlo_mem *m)
{
    int64_t best_count = 0;
    int32_t best = HLO_MEM_NO_ID;
    uint32_t i, e;

    for (i = 0; i < m->nallocs; i++) {
        const struct hlo_mem_alloc *a = &m->allocs[i];
        if (a->color == m->color && !hlo_mem_indefinite(a) && a->trace != HLO_MEM_NO_ID)
            return a->trace;
    }
    for (i = 0; i < m->ntraces; i++) {
        int64_t count = 0;
        for (e = 0; e < m->traces[i].n; e++) {
            int32_t lb = hlo_mem_lbuf_find(m, m->events[m->traces[i].first + e].buffer_id);
            count += lb != HLO_MEM_NO_ID && m->lbufs[lb].color == m->color;
        }
        if (count > best_count) {
            best_count = count;
            best = (int32_t)i;
        }
    }
    return best;
}

/* Room for a replay of trace tr. 0 or -ENOMEM. */
static int replay_init(struct replay *r, struct hlo_mem *m, const struct hlo_mem_trace *tr)
{
    size_t n = (size_t)tr->n + 1, nb = m->nlbufs ? m->nlbufs : 1;
    uint32_t e;

    r->m = m;
    r->tr = tr;
    r->evlb = malloc(n * sizeof(*r->evlb));
    r->evshare = malloc(n * sizeof(*r->evshare));
    r->live.prev = malloc(n * sizeof(uint32_t));
    r->live.next = malloc(n * sizeof(uint32_t));
    r->live.lb = malloc(n * sizeof(uint32_t));
    r->live.same = malloc(n * sizeof(uint32_t));
    r->live.first = malloc(nb * sizeof(uint32_t));
    m->heap = malloc(n * sizeof(*m->heap));
    m->unpadded_heap = malloc(n * sizeof(*m->unpadded_heap));
    m->names = malloc(n * sizeof(*m->names));
    m->name_lens = malloc(n * sizeof(*m->name_lens));
    if (!r->evlb || !r->evshare || !r->live.prev || !r->live.next || !r->live.lb || !r->live.same ||
        !r->live.first || !m->heap || !m->unpadded_heap || !m->names || !m->name_lens)
        return -ENOMEM;
    for (e = 0; e < tr->n; e++) {
        const struct hlo_mem_event *ev = &m->events[tr->first + e];
        r->evlb[e] = hlo_mem_lbuf_find(m, ev->buffer_id);
        r->evshare[e] =
            ev->kind == EV_SHARE_WITH ? hlo_mem_lbuf_find(m, ev->share_id) : HLO_MEM_NO_ID;
    }
    m->ntimeline = tr->n + 1;
    return 0;
}

static void replay_release(struct replay *r)
{
    free(r->evlb);
    free(r->evshare);
    free(r->live.prev);
    free(r->live.next);
    free(r->live.lb);
    free(r->live.same);
    free(r->live.first);
}

/* The heap objects of the peak (XProf's PeakUsageSnapshot). */
struct objects {
    struct hlo_mem *m;
    int64_t small; /* bytes of the small buffers */
    int32_t colorno;
};

/* XProf's AddHeapObject. */
static void add_object(struct objects *os, int32_t lb)
{
    struct hlo_mem *m = os->m;
    struct hlo_mem_lbuf *b = &m->lbufs[lb];

    if (b->size < HLO_MEM_SMALL_BUFFER) {
        os->small = hlo_mem_add_sat(os->small, b->size);
        return;
    }
    b->heap_color = os->colorno;
    m->objects[m->nobjects++] = (struct hlo_mem_object){os->colorno++, lb, b->size, b->unpadded};
}

/* The indefinite allocations of the colour: each one's largest buffer (for
 * colour 0 a heap object too), its allocation's bytes added to every heap
 * size. */
static void indefinite_objects(struct objects *os)
{
    struct hlo_mem *m = os->m;
    uint32_t i, j;

    for (i = 0; i < m->nallocs; i++) {
        const struct hlo_mem_alloc *a = &m->allocs[i];
        int32_t best = HLO_MEM_NO_ID;
        int64_t best_size = 0;
        if (a->color != m->color || !hlo_mem_indefinite(a))
            continue;
        for (j = 0; j < a->nassigned; j++) {
            int32_t lb = m->assigned[a->first + j].lbuf;
            if (lb != HLO_MEM_NO_ID && m->lbufs[lb].size > best_size) {
                best_size = m->lbufs[lb].size;
                best = lb;
            }
        }
        if (best == HLO_MEM_NO_ID)
            continue;
        m->indefinite_bytes =
            hlo_mem_add_sat(m->indefinite_bytes, m->allocs[m->lbufs[best].alloc].size);
        if (m->color == 0)
            add_object(os, best);
    }
}

/* Order of heap objects: larger first, then in peak order. */
static int by_size_cmp(const void *a, const void *b, void *ctx)
{
    const struct hlo_mem_object *o = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (o[x].size != o[y].size)
        return o[x].size > o[y].size ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The heap objects: the indefinite ones, then the buffers live at the peak
 * (peak[0..npeak), shown through the buffer now using their memory), then
 * one for the small ones. 0 or -ENOMEM. */
static int build_objects(struct hlo_mem *m, const int32_t *peak, const int32_t *shown,
                         uint32_t npeak)
{
    struct objects os = {m, 0, 0};
    uint32_t i;

    m->objects = malloc(((size_t)m->nallocs + npeak + 1) * sizeof(*m->objects));
    m->by_size = malloc(((size_t)m->nallocs + npeak + 1) * sizeof(*m->by_size));
    if (m->objects == NULL || m->by_size == NULL)
        return -ENOMEM;
    indefinite_objects(&os);
    for (i = 0; i < npeak; i++)
        add_object(&os, shown[i] != HLO_MEM_NO_ID ? shown[i] : peak[i]);
    if (os.small != 0)
        m->objects[m->nobjects++] =
            (struct hlo_mem_object){os.colorno++, HLO_MEM_NO_ID, os.small, 0};
    for (i = 0; i < m->nobjects; i++)
        m->by_size[i] = i;
    xp_qsort_r(m->by_size, m->nobjects, sizeof(*m->by_size), by_size_cmp, m->objects);
    return 0;
}

static int span_cmp(const void *a, const void *b, void *ctx)
{
    const struct hlo_mem_span *x = a, *y = b;

    (void)ctx;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The lifetimes of the buffers the trace named (a map keyed by the int32
 * id: of ids equal there, the last buffer wins). 0 or -ENOMEM. */
static int build_spans(struct hlo_mem *m)
{
    uint32_t i, n = 0, out = 0;

    m->spans = malloc((m->nlbufs ? m->nlbufs : 1) * sizeof(*m->spans));
    if (m->spans == NULL)
        return -ENOMEM;
    for (i = 0; i < m->nlbufs; i++) {
        const struct hlo_mem_lbuf *b = &m->lbufs[i];
        if (b->seen && b->has_span)
            m->spans[n++] =
                (struct hlo_mem_span){(int32_t)b->id, (int32_t)b->span_start, (int32_t)b->span_end};
    }
    /* qsort is not stable: equal keys are kept apart by a stable merge */
    if (xp_sort_runs(m->spans, n, sizeof(*m->spans), span_cmp, NULL) != 0)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        if (i + 1 < n && m->spans[i + 1].id == m->spans[i].id)
            continue;
        m->spans[out++] = m->spans[i];
    }
    m->nspans = out;
    return 0;
}

/* XProf's NoteSpecialAllocations sums (ComputeTotalAllocationBytes and
 * ComputeIndefiniteAllocationsInBytes for the last two). */
static void allocation_sums(struct hlo_mem *m)
{
    uint32_t i;

    for (i = 0; i < m->nallocs; i++) {
        const struct hlo_mem_alloc *a = &m->allocs[i];
        if (a->color != m->color)
            continue;
        if (a->entry_param)
            m->entry_param_bytes = hlo_mem_add_sat(m->entry_param_bytes, a->size);
        if (a->thread_local || a->tuple)
            m->non_reusable_bytes = hlo_mem_add_sat(m->non_reusable_bytes, a->size);
        if (a->live_out)
            m->live_out_bytes = hlo_mem_add_sat(m->live_out_bytes, a->size);
        if (hlo_mem_indefinite(a))
            m->indefinite_alloc_bytes = hlo_mem_add_sat(m->indefinite_alloc_bytes, a->size);
        m->total_bytes = hlo_mem_add_sat(m->total_bytes, a->size);
    }
}

/* A JSON int64 as XProf's get_int64 reads it: a number, or a string of
 * one; 0 otherwise. */
static int64_t json_int64(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    char *end;
    long long x;

    if (cJSON_IsNumber(v))
        return v->valuedouble >= -9.2e18 && v->valuedouble <= 9.2e18 ? (int64_t)v->valuedouble : 0;
    if (!cJSON_IsString(v) || v->valuestring == NULL)
        return 0;
    errno = 0;
    x = strtoll(v->valuestring, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    return errno == 0 && end != v->valuestring && *end == '\0' ? (int64_t)x : 0;
}

/* Colour 1 (VMEM): the largest used_scoped_memory_configs size of that
 * memory space in any instruction's backend config. */
static void scoped_memory(struct hlo_mem *m)
{
    uint32_t i;

    if (m->color != 1)
        return;
    for (i = 0; i < m->g.nnodes; i++) {
        const struct hlo_node *nd = &m->g.nodes[i];
        cJSON *j, *cfgs, *e;
        if (nd->backend_config_len == 0)
            continue;
        j = cJSON_ParseWithLength(nd->backend_config, nd->backend_config_len);
        cfgs = j ? cJSON_GetObjectItemCaseSensitive(j, "used_scoped_memory_configs") : NULL;
        if (cJSON_IsArray(cfgs)) {
            cJSON_ArrayForEach(e, cfgs)
            {
                int64_t size = json_int64(e, "size");
                if (json_int64(e, "memory_space") == m->color && size > m->scoped_bytes) {
                    m->scoped_bytes = size;
                    m->scoped_instr = nd->name;
                }
            }
        }
        cJSON_Delete(j);
    }
}

/* Replay the chosen trace and read the peak: the timelines and the end
 * state from a whole replay, the live buffers from a second replay that
 * stops at the peak. 0, -EIO or -ENOMEM. */
static int replay_trace(struct hlo_mem *m, struct xp_err *err)
{
    struct replay r;
    struct hlo_mem_lbuf *end = NULL;
    int32_t *peak = NULL, *shown = NULL;
    uint32_t npeak = 0, k;
    int rc;

    memset(&r, 0, sizeof(r));
    r.err = err;
    r.record = 1;
    rc = replay_init(&r, m, &m->traces[m->trace]);
    if (rc == 0)
        rc = replay_run(&r, -1);
    m->peak = r.peak;
    m->peak_unpadded = r.peak_unpadded;
    m->peak_position = r.peak_position;
    if (rc == 0 && r.peak_event >= 0) {
        end = malloc(m->nlbufs * sizeof(*end));
        peak = malloc(((size_t)m->traces[m->trace].n + 1) * sizeof(*peak));
        shown = malloc(((size_t)m->traces[m->trace].n + 1) * sizeof(*shown));
        rc = end && peak && shown ? 0 : -ENOMEM;
    }
    if (rc == 0 && end != NULL) {
        memcpy(end, m->lbufs, m->nlbufs * sizeof(*end));
        r.record = 0;
        rc = replay_run(&r, r.peak_event);
        for (k = r.live.head; rc == 0 && k != NONE; k = r.live.next[k]) {
            peak[npeak] = (int32_t)r.live.lb[k];
            shown[npeak++] = m->lbufs[r.live.lb[k]].display;
        }
        memcpy(m->lbufs, end, m->nlbufs * sizeof(*end));
    }
    if (rc == 0)
        rc = build_objects(m, peak, shown, npeak);
    replay_release(&r);
    free(end);
    free(peak);
    free(shown);
    return rc;
}

int hlo_mem_simulate(struct hlo_mem *m, struct xp_err *err)
{
    int rc = 0;

    m->trace = choose_trace(m);
    if (m->trace != HLO_MEM_NO_ID)
        rc = replay_trace(m, err);
    else
        rc = build_objects(m, NULL, NULL, 0);
    if (rc == 0)
        rc = build_spans(m);
    if (rc == -ENOMEM)
        return xp_err_set(err, rc, "out of memory");
    if (rc != 0)
        return rc;
    allocation_sums(m);
    scoped_memory(m);
    return 0;
}
