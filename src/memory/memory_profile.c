/*
 * memory_profile.c - the allocator timeline of one host (memory_profile.h):
 * snapshots from the host plane's allocator events, then XProf's
 * post-processing per allocator.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/idmap.h"
#include "base/parallel.h"
#include "base/sort.h"
#include "memory_profile.h"

#define ERASED (IDMAP_NONE - 1) /* an idmap value: the key was removed */

/* The stats XProf reads from an allocator event (its StatType names). */
enum mp_stat {
    MS_NONE,
    MS_INDEX_ON_HOST,
    MS_DEVICE_ORDINAL,
    MS_ALLOCATOR_NAME,
    MS_BYTES_RESERVED,
    MS_BYTES_ALLOCATED,
    MS_BYTES_AVAILABLE,
    MS_FRAGMENTATION,
    MS_PEAK_BYTES_IN_USE,
    MS_REQUESTED_BYTES,
    MS_ALLOCATION_BYTES,
    MS_ADDRESS,
    MS_TF_OP,
    MS_GROUP_ID,
    MS_REGION_TYPE,
    MS_DATA_TYPE,
    MS_TENSOR_SHAPES,
};

static const char *const stat_names[] = {
    [MS_INDEX_ON_HOST] = "index_on_host",
    [MS_DEVICE_ORDINAL] = "device_ordinal",
    [MS_ALLOCATOR_NAME] = "allocator_name",
    [MS_BYTES_RESERVED] = "bytes_reserved",
    [MS_BYTES_ALLOCATED] = "bytes_allocated",
    [MS_BYTES_AVAILABLE] = "bytes_available",
    [MS_FRAGMENTATION] = "fragmentation",
    [MS_PEAK_BYTES_IN_USE] = "peak_bytes_in_use",
    [MS_REQUESTED_BYTES] = "requested_bytes",
    [MS_ALLOCATION_BYTES] = "allocation_bytes",
    [MS_ADDRESS] = "addr",
    [MS_TF_OP] = "tf_op",
    [MS_GROUP_ID] = "group_id",
    [MS_REGION_TYPE] = "region_type",
    [MS_DATA_TYPE] = "data_type",
    [MS_TENSOR_SHAPES] = "shape",
};

/* int64 arithmetic that wraps as the machine does instead of overflowing
 * (hostile byte counts), as XProf's int64 sums do in practice. */
static int64_t add64(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t sub64(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t in_use(const struct mp_stats *st)
{
    return add64(st->stack_reserved_bytes, st->heap_allocated_bytes);
}

/* XStatVisitor's IntValue, DoubleValue and StrOrRefValue: the value of the
 * one kind asked for, else 0 or "". */
static int64_t int_value(const struct xp_stat *st)
{
    return st->kind == XP_STAT_INT ? st->v.i : 0;
}

static double double_value(const struct xp_stat *st)
{
    return st->kind == XP_STAT_DOUBLE ? st->v.d : 0;
}

static const char *const dtype_names[] = {
    "INVALID",
    "float",
    "double",
    "int32",
    "uint8",
    "int16",
    "int8",
    "string",
    "complex64",
    "int64",
    "bool",
    "qint8",
    "quint8",
    "qint32",
    "bfloat16",
    "qint16",
    "quint16",
    "uint16",
    "complex128",
    "half",
    "resource",
    "variant",
    "uint32",
    "uint64",
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2fnuz",
    "int4",
    "uint4",
};

#define NDTYPES ((int64_t)(sizeof(dtype_names) / sizeof(dtype_names[0])))
#define REF_OFFSET 100 /* kDataTypeRefOffset */

size_t mp_data_type_string(int64_t dtype, char *buf, size_t n)
{
    /* TensorflowDataType is an int enum: the stat's value as an int32 */
    int32_t d = (int32_t)(uint32_t)(uint64_t)dtype;
    int ref = d > REF_OFFSET;
    int32_t base = ref ? d - REF_OFFSET : d;
    int len;

    if (base >= 0 && base < NDTYPES)
        len = snprintf(buf, n, "%s%s", dtype_names[base], ref ? "_ref" : "");
    else
        len = snprintf(buf, n, "unknown dtype enum (%" PRId32 ")%s", base, ref ? "_ref" : "");
    return len < 0 ? 0 : (size_t)len < n ? (size_t)len : n - 1;
}

/* ---- reading the events ------------------------------------------------- */

static struct mp_allocator *find_allocator(struct mp_profile *mp, uint32_t *cap, const char *id,
                                           size_t n, struct xp_err *err)
{
    struct mp_allocator *a;
    uint32_t i;

    for (i = mp->nallocators; i-- > 0;) {
        a = &mp->allocators[i];
        if (strlen(a->memory_id) == n && memcmp(a->memory_id, id, n) == 0)
            return a;
    }
    if (xp_grow((void **)&mp->allocators, cap, mp->nallocators, sizeof(*a)) != 0)
        goto oom;
    a = &mp->allocators[mp->nallocators];
    memset(a, 0, sizeof(*a));
    a->memory_id = malloc(n + 1);
    if (a->memory_id == NULL)
        goto oom;
    memcpy(a->memory_id, id, n);
    a->memory_id[n] = 0;
    mp->nallocators++;
    return a;
oom:
    xp_err_set(err, -ENOMEM, "out of memory");
    return NULL;
}

/* XProf's UpdateProfileSummary, in event order. */
static void update_summary(struct mp_summary *s, const struct mp_stats *st, int64_t offset)
{
    s->peak_bytes_usage_lifetime = st->peak_bytes_in_use;
    if (in_use(st) >= s->peak_stats.peak_bytes_in_use) {
        s->peak_stats = *st;
        s->peak_stats.peak_bytes_in_use = in_use(st);
        s->peak_stats_time_ps = offset;
        s->memory_capacity = add64(in_use(st), st->free_memory_bytes);
    }
}

/*
 * Reading the allocator events. The host plane's allocator events are
 * numbered in line and event order; chunks of them are read on every core
 * straight into one array of snapshots (sized once: no regrowth, every
 * page touched once), each event's allocator noted by index. Strings are
 * interned under a lock, behind a per-chunk cache of the last string of
 * each field (allocator events repeat their ops, regions and shapes), so
 * the lock is rarely taken. Then the snapshots go to their allocators in
 * event order (one allocator takes the array as is) and each allocator's
 * summary is updated in that order, as XProf's single pass does.
 */
#define MP_CHUNK 65536

struct mp_chunk {
    uint32_t line;  /* line index */
    uint32_t first; /* first event of the line in the chunk */
    uint32_t end;   /* one past its last */
    size_t slot;    /* snapshot index of its first allocator event */
};

struct mp_reader {
    struct mp_profile *mp;
    const struct xp_plane *p;
    uint32_t plane;
    const uint8_t *kinds, *types;
    const struct xp_groups *g;
    struct mp_snapshot *all; /* every allocator event's snapshot */
    uint32_t *alloc_of;      /* its allocator */
    struct mp_chunk *chunks;
    uint32_t cap; /* mp->allocators capacity */
    int fast;     /* pick: slot k - 1 holds stat kind k */
    struct xp_pick pick;
    pthread_mutex_t lock; /* mp->strings, mp->allocators, err */
    struct xp_err *err;
};

/* The last string of one field a chunk interned. */
struct mp_cached {
    const char *s;
    size_t n;
    uint32_t id;
    int set;
};

static int cached_intern(struct mp_reader *r, struct mp_cached *c, const char *s, size_t n,
                         uint32_t *id)
{
    int rc;

    if (c->set && c->n == n && memcmp(c->s, s, n) == 0) {
        *id = c->id;
        return 0;
    }
    pthread_mutex_lock(&r->lock);
    rc = intern_add(&r->mp->strings, s, n, id);
    pthread_mutex_unlock(&r->lock);
    if (rc == 0) {
        c->s = s;
        c->n = n;
        c->id = *id;
        c->set = 1;
    }
    return rc;
}

static int cached_str(struct mp_reader *r, struct mp_cached *c, const struct xp_stat *st,
                      uint32_t *id)
{
    *id = 0;
    if ((st->kind != XP_STAT_STR && st->kind != XP_STAT_REF) || st->len == 0)
        return 0;
    return cached_intern(r, c, st->str, st->len, id);
}

struct mp_chunk_cache {
    struct mp_cached tf_op, region, shape, alloc;
    int64_t dtype;
    uint32_t dtype_id;
    int dtype_set;
};

/* The allocator named id: its index (found or made, under the lock). */
static int allocator_index(struct mp_reader *r, struct mp_cached *c, const char *id, size_t n,
                           uint32_t *ix)
{
    struct mp_allocator *a;

    if (c->set && c->n == n && memcmp(c->s, id, n) == 0) {
        *ix = c->id;
        return 0;
    }
    pthread_mutex_lock(&r->lock);
    a = find_allocator(r->mp, &r->cap, id, n, r->err);
    if (a != NULL)
        *ix = (uint32_t)(a - r->mp->allocators);
    pthread_mutex_unlock(&r->lock);
    if (a == NULL)
        return -ENOMEM;
    /* the name may be the event's number text: keep the allocator's copy */
    c->s = r->mp->allocators[*ix].memory_id;
    c->n = n;
    c->id = *ix;
    c->set = 1;
    return 0;
}

/* What one stat of kind says about the event. */
struct mp_event_ids {
    const char *id; /* allocator id text */
    size_t idlen;
    char num[24];
};

static int apply_stat(struct mp_reader *r, struct mp_chunk_cache *cc, enum mp_stat kind,
                      const struct xp_stat *st, struct mp_snapshot *sn, struct mp_event_ids *ev)
{
    char dtype[64];
    int rc = 0;

    switch (kind) {
    case MS_INDEX_ON_HOST:
    case MS_DEVICE_ORDINAL:
        ev->idlen = (size_t)snprintf(ev->num, sizeof(ev->num), "%" PRId64, int_value(st));
        ev->id = ev->num;
        break;
    case MS_ALLOCATOR_NAME:
        ev->id = (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF) ? st->str : "";
        ev->idlen = (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF) ? st->len : 0;
        break;
    case MS_BYTES_RESERVED:
        sn->stats.stack_reserved_bytes = int_value(st);
        break;
    case MS_BYTES_ALLOCATED:
        sn->stats.heap_allocated_bytes = int_value(st);
        break;
    case MS_BYTES_AVAILABLE:
        sn->stats.free_memory_bytes = int_value(st);
        break;
    case MS_FRAGMENTATION:
        sn->stats.fragmentation = double_value(st);
        break;
    case MS_PEAK_BYTES_IN_USE:
        sn->stats.peak_bytes_in_use = int_value(st);
        break;
    case MS_REQUESTED_BYTES:
        sn->meta.requested_bytes = int_value(st);
        break;
    case MS_ALLOCATION_BYTES:
        sn->meta.allocation_bytes = int_value(st);
        break;
    case MS_ADDRESS:
        sn->meta.address = (uint64_t)int_value(st);
        break;
    case MS_TF_OP:
        rc = cached_str(r, &cc->tf_op, st, &sn->meta.tf_op_name);
        break;
    case MS_GROUP_ID:
        sn->meta.step_id = int_value(st);
        break;
    case MS_REGION_TYPE:
        rc = cached_str(r, &cc->region, st, &sn->meta.region_type);
        break;
    case MS_DATA_TYPE: {
        int64_t v = int_value(st);
        if (cc->dtype_set && cc->dtype == v) {
            sn->meta.data_type = cc->dtype_id;
        } else {
            size_t n = mp_data_type_string(v, dtype, sizeof(dtype));
            pthread_mutex_lock(&r->lock);
            rc = intern_add(&r->mp->strings, dtype, n, &sn->meta.data_type);
            pthread_mutex_unlock(&r->lock);
            cc->dtype = v;
            cc->dtype_id = sn->meta.data_type;
            cc->dtype_set = rc == 0;
        }
        break;
    }
    case MS_TENSOR_SHAPES:
        rc = cached_str(r, &cc->shape, st, &sn->meta.tensor_shape);
        break;
    case MS_NONE:
        break;
    }
    return rc;
}

/* The stat kinds that name the allocator: their order among the stats
 * decides which one does, so an event with two takes the slow path. */
#define MP_ID_KINDS                                                                                \
    ((1u << (MS_INDEX_ON_HOST - 1)) | (1u << (MS_DEVICE_ORDINAL - 1)) |                            \
     (1u << (MS_ALLOCATOR_NAME - 1)))

/* One allocator event into *sn and its allocator's index: the plane's
 * allocator stats picked in one scan (each kind's last value), else every
 * stat in order (an event naming its allocator twice, or a plane whose
 * stat names repeat). */
static int read_event(struct mp_reader *r, struct mp_chunk_cache *cc, const struct xp_line *l,
                      uint32_t li, uint32_t ei, struct mp_snapshot *sn, uint32_t *alloc)
{
    const struct xp_plane *p = r->p;
    const struct xp_event *e = &l->events[ei];
    struct mp_event_ids ev = {"", 0, {0}};
    int k = 0, rc = 0;

    memset(sn, 0, sizeof(*sn));
    sn->time_offset_ps = e->offset_ps;
    sn->meta.activity = (enum mp_activity)r->types[e->meta];
    sn->meta.step_id = -1;
    if (r->fast) {
        struct xp_stat st[XP_PICK_MAX];
        uint32_t found = xp_pick_event(&r->pick, l, e, st), ids = found & MP_ID_KINDS;
        if ((ids & (ids - 1)) == 0) {
            for (k = 1; rc == 0 && k <= MS_TENSOR_SHAPES; k++)
                if (found & (1u << (k - 1)))
                    rc = apply_stat(r, cc, (enum mp_stat)k, &st[k - 1], sn, &ev);
            k = 0;
            goto done;
        }
    }
    {
        struct xp_stat_iter it;
        struct xp_stat st;
        xp_stat_iter_init(&it, p, l, e);
        while (rc == 0 && (k = xp_stat_next(&it, &st)) > 0) {
            uint32_t ix = idmap_get(&p->smeta_index, st.meta_id);
            rc = apply_stat(r, cc, ix == IDMAP_NONE ? MS_NONE : (enum mp_stat)r->kinds[ix], &st, sn,
                            &ev);
        }
    }
done:
    if (rc != 0)
        return -ENOMEM;
    if (k < 0)
        return -EIO;
    if (r->g != NULL && !r->g->pre_grouped) {
        int32_t group = xp_group_of(r->g, r->plane, li, ei);
        if (group >= 0)
            sn->meta.step_id = group; /* the grouping's group_id, added last */
    }
    return allocator_index(r, &cc->alloc, ev.id, ev.idlen, alloc);
}

static int read_chunk(void *arg, size_t i)
{
    struct mp_reader *r = arg;
    const struct mp_chunk *c = &r->chunks[i];
    const struct xp_line *l = &r->p->lines[c->line];
    struct mp_chunk_cache cc;
    size_t slot = c->slot;
    uint32_t ei;
    int rc;

    memset(&cc, 0, sizeof(cc));
    for (ei = c->first; ei < c->end; ei++) {
        if (r->types[l->events[ei].meta] == 0)
            continue;
        rc = read_event(r, &cc, l, c->line, ei, &r->all[slot], &r->alloc_of[slot]);
        if (rc != 0) {
            pthread_mutex_lock(&r->lock);
            if (rc == -EIO)
                xp_err_set(r->err, -EIO, "corrupt stats on an allocator event of line %s", l->name);
            else
                xp_err_set(r->err, -ENOMEM, "out of memory");
            pthread_mutex_unlock(&r->lock);
            return rc;
        }
        slot++;
    }
    return 0;
}

/* The chunks of the plane's allocator events, numbered; *nchunks, *nevents. */
static int plan_chunks(struct mp_reader *r, uint32_t *nchunks, size_t *nevents)
{
    const struct xp_plane *p = r->p;
    uint32_t li, ei, cap = 0, n = 0;
    size_t slot = 0;

    for (li = 0; li < p->nlines; li++) {
        const struct xp_line *l = &p->lines[li];
        for (ei = 0; ei < l->nevents; ei += MP_CHUNK) {
            uint32_t end = l->nevents - ei < MP_CHUNK ? l->nevents : ei + MP_CHUNK, k;
            size_t typed = 0;
            for (k = ei; k < end; k++)
                typed += r->types[l->events[k].meta] != 0;
            if (typed == 0)
                continue;
            if (xp_grow((void **)&r->chunks, &cap, n, sizeof(*r->chunks)) != 0)
                return -ENOMEM;
            r->chunks[n++] = (struct mp_chunk){li, ei, end, slot};
            slot += typed;
        }
    }
    *nchunks = n;
    *nevents = slot;
    return 0;
}

/* The snapshots to their allocators, in event order, with the summaries. */
static int distribute(struct mp_reader *r, size_t n)
{
    struct mp_profile *mp = r->mp;
    uint32_t a;
    size_t i;

    if (mp->nallocators == 1) {
        mp->allocators[0].snaps = r->all;
        mp->allocators[0].nsnaps = (uint32_t)n;
        mp->allocators[0].cap = (uint32_t)n;
        r->all = NULL;
    } else {
        for (i = 0; i < n; i++)
            mp->allocators[r->alloc_of[i]].cap++;
        for (a = 0; a < mp->nallocators; a++) {
            mp->allocators[a].snaps =
                malloc((size_t)mp->allocators[a].cap * sizeof(struct mp_snapshot));
            if (mp->allocators[a].snaps == NULL && mp->allocators[a].cap > 0)
                return -ENOMEM;
        }
        for (i = 0; i < n; i++) {
            struct mp_allocator *al = &mp->allocators[r->alloc_of[i]];
            al->snaps[al->nsnaps++] = r->all[i];
        }
    }
    for (a = 0; a < mp->nallocators; a++) {
        struct mp_allocator *al = &mp->allocators[a];
        for (i = 0; i < al->nsnaps; i++)
            update_summary(&al->summary, &al->snaps[i].stats, al->snaps[i].time_offset_ps);
    }
    return 0;
}

static int read_host_plane(struct mp_profile *mp, const struct xspace *xs, uint32_t plane,
                           const struct xp_groups *g, struct xp_err *err)
{
    const struct xp_plane *p = &xs->planes[plane];
    uint8_t *kinds = calloc(p->nsmeta ? p->nsmeta : 1, 1);
    uint8_t *types = calloc(p->nemeta ? p->nemeta : 1, 1);
    struct mp_reader r;
    uint32_t i, nchunks = 0;
    size_t n = 0;
    int rc = 0;

    memset(&r, 0, sizeof(r));
    if (kinds == NULL || types == NULL) {
        free(kinds);
        free(types);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < p->nsmeta; i++) {
        int k;
        for (k = 1; k <= MS_TENSOR_SHAPES; k++) {
            if (strcmp(p->smeta[i].name, stat_names[k]) == 0)
                kinds[i] = (uint8_t)k;
        }
    }
    for (i = 0; i < p->nemeta; i++) {
        if (strcmp(p->emeta[i].name, "MemoryAllocation") == 0)
            types[i] = MP_ALLOCATION;
        else if (strcmp(p->emeta[i].name, "MemoryDeallocation") == 0)
            types[i] = MP_DEALLOCATION;
    }
    r.mp = mp;
    r.p = p;
    r.plane = plane;
    r.kinds = kinds;
    r.types = types;
    r.g = g;
    r.err = err;
    pthread_mutex_init(&r.lock, NULL);
    {
        /* the fast path needs one stat metadata per name */
        int64_t ids[MS_TENSOR_SHAPES];
        int k, once = 1;
        for (k = 0; k < MS_TENSOR_SHAPES; k++)
            ids[k] = XP_NO_STAT;
        for (i = 0; i < p->nsmeta; i++) {
            if (kinds[i] == MS_NONE)
                continue;
            if (ids[kinds[i] - 1] != XP_NO_STAT)
                once = 0;
            ids[kinds[i] - 1] = p->smeta[i].id;
        }
        if (once && xp_pick_init(&r.pick, p, ids, MS_TENSOR_SHAPES, 1) == 0)
            r.fast = 1;
    }
    if (plan_chunks(&r, &nchunks, &n) != 0 || n > UINT32_MAX) {
        rc = xp_err_set(err, -ENOMEM,
                        n > UINT32_MAX ? "more than 2^32 allocator events" : "out of memory");
    } else if (n > 0) {
        r.all = malloc(n * sizeof(*r.all));
        r.alloc_of = malloc(n * sizeof(*r.alloc_of));
        if (r.all == NULL || r.alloc_of == NULL)
            rc = xp_err_set(err, -ENOMEM, "out of memory for %zu allocator events", n);
        if (rc == 0)
            rc = parallel_for(nchunks, 0, read_chunk, &r);
        if (rc == 0 && distribute(&r, n) != 0)
            rc = xp_err_set(err, -ENOMEM, "out of memory");
    }
    free(r.all);
    free(r.alloc_of);
    free(r.chunks);
    if (r.fast)
        xp_pick_free(&r.pick);
    pthread_mutex_destroy(&r.lock);
    free(kinds);
    free(types);
    return rc;
}

static int read_hlo_modules(struct mp_profile *mp, const struct xspace *xs, struct xp_err *err)
{
    uint32_t pi, li, ei, cap = 0;

    for (pi = 0; pi < xs->nplanes; pi++) {
        const struct xp_plane *p = &xs->planes[pi];
        uint32_t plane_name;
        if (strncmp(p->name, "/device:TPU:", 12) != 0)
            continue;
        if (intern_add(&mp->strings, p->name + 8, strlen(p->name + 8), &plane_name) != 0)
            return xp_err_set(err, -ENOMEM, "out of memory");
        for (li = 0; li < p->nlines; li++) {
            const struct xp_line *l = &p->lines[li];
            if (strcmp(l->name, "XLA Modules") != 0)
                continue;
            for (ei = 0; ei < l->nevents; ei++) {
                const struct xp_event *e = &l->events[ei];
                const char *name = xp_event_meta(p, e)->name;
                struct mp_hlo_module *m;
                if (xp_grow((void **)&mp->hlo_modules, &cap, mp->nhlo_modules, sizeof(*m)) != 0)
                    return xp_err_set(err, -ENOMEM, "out of memory");
                m = &mp->hlo_modules[mp->nhlo_modules];
                if (intern_add(&mp->strings, name, strlen(name), &m->name) != 0)
                    return xp_err_set(err, -ENOMEM, "out of memory");
                m->start_time_ps = e->offset_ps;
                m->end_time_ps = add64(e->offset_ps, e->duration_ps);
                m->id = mp->nhlo_modules;
                m->plane_name = plane_name;
                mp->nhlo_modules++;
            }
        }
    }
    return 0;
}

/* ---- XProf's post-processing per allocator -------------------------------- */

static int by_time(const void *a, const void *b, void *ctx)
{
    const struct mp_snapshot *x = a, *y = b;

    (void)ctx;
    return (x->time_offset_ps > y->time_offset_ps) - (x->time_offset_ps < y->time_offset_ps);
}

/* UpdateStepId: an invalid step id becomes the last valid one + 1. */
static void update_step_ids(struct mp_allocator *a)
{
    int64_t last_valid = -1;
    uint32_t i;

    for (i = 0; i < a->nsnaps; i++) {
        if (a->snaps[i].meta.step_id == -1)
            a->snaps[i].meta.step_id = add64(last_valid, 1);
        else
            last_valid = a->snaps[i].meta.step_id;
    }
}

static int contains(const struct idmap *m, uint64_t key)
{
    uint32_t v = idmap_get(m, (int64_t)key);
    return v != IDMAP_NONE && v != ERASED;
}

/* UpdateDeallocation: a deallocation takes the op, region, type and shape
 * of the allocation at its address, which is then forgotten. */
static int update_deallocations(struct mp_allocator *a)
{
    struct idmap alloc_at;
    uint32_t i;

    memset(&alloc_at, 0, sizeof(alloc_at));
    for (i = 0; i < a->nsnaps; i++) {
        struct mp_meta *m = &a->snaps[i].meta;
        if (m->activity == MP_DEALLOCATION) {
            if (contains(&alloc_at, m->address)) {
                const struct mp_meta *from =
                    &a->snaps[idmap_get(&alloc_at, (int64_t)m->address)].meta;
                m->tf_op_name = from->tf_op_name;
                m->region_type = from->region_type;
                m->data_type = from->data_type;
                m->tensor_shape = from->tensor_shape;
                if (idmap_set(&alloc_at, (int64_t)m->address, ERASED) != 0)
                    goto oom;
            }
        } else if (!contains(&alloc_at, m->address)) {
            if (idmap_set(&alloc_at, (int64_t)m->address, i) != 0)
                goto oom;
        }
    }
    idmap_free(&alloc_at);
    return 0;
oom:
    idmap_free(&alloc_at);
    return -ENOMEM;
}

/* SampleMemoryProfileTimeline: at most max snapshots, each the biggest of
 * its box (boxes of width w, then w + 1). */
static int sample_timeline(struct mp_allocator *a, uint32_t max)
{
    uint32_t n = a->nsnaps, i;

    a->sampled = malloc((n < max ? n : max) * sizeof(uint32_t) + 1);
    if (a->sampled == NULL)
        return -ENOMEM;
    if (n <= max) {
        for (i = 0; i < n; i++)
            a->sampled[i] = i;
        a->nsampled = n;
        return 0;
    }
    {
        uint64_t width = n / max;
        uint64_t count1 = (uint64_t)max * (width + 1) - n;
        uint64_t count2 = max - count1;
        uint64_t box, w, start, k;
        for (box = 0; box < count1 + count2; box++) {
            uint32_t best;
            int64_t best_bytes;
            w = box < count1 ? width : width + 1;
            start = box < count1 ? width * box : width * count1 + (width + 1) * (box - count1);
            best = (uint32_t)start;
            best_bytes = in_use(&a->snaps[start].stats);
            for (k = start + 1; k < start + w; k++) {
                if (in_use(&a->snaps[k].stats) > best_bytes) {
                    best = (uint32_t)k;
                    best_bytes = in_use(&a->snaps[k].stats);
                }
            }
            a->sampled[a->nsampled++] = best;
        }
    }
    return 0;
}

/* An active allocation before merging: a snapshot index (negative for the
 * specials) and its metadata. */
struct live {
    int64_t index;
    const struct mp_meta *meta;
};

static int text_cmp(const struct mp_profile *mp, uint32_t a, uint32_t b)
{
    size_t la, lb;
    const char *sa = mp_text(mp, a, &la), *sb = mp_text(mp, b, &lb);
    int c = memcmp(sa, sb, la < lb ? la : lb);

    return c != 0 ? c : (la > lb) - (la < lb);
}

/* MetadataComparator's key order; 0 when XProf's operator== holds. */
static int meta_cmp(const struct mp_profile *mp, const struct mp_meta *a, const struct mp_meta *b)
{
    int c;

    if (a->allocation_bytes != b->allocation_bytes)
        return a->allocation_bytes > b->allocation_bytes ? -1 : 1;
    if (a->requested_bytes != b->requested_bytes)
        return a->requested_bytes > b->requested_bytes ? -1 : 1;
    if ((c = text_cmp(mp, a->tf_op_name, b->tf_op_name)) != 0 ||
        (c = text_cmp(mp, a->region_type, b->region_type)) != 0 ||
        (c = text_cmp(mp, a->data_type, b->data_type)) != 0)
        return c;
    return text_cmp(mp, a->tensor_shape, b->tensor_shape);
}

static int live_cmp(const void *pa, const void *pb, void *ctx)
{
    const struct live *a = pa, *b = pb;
    int c = meta_cmp(ctx, a->meta, b->meta);

    if (c != 0)
        return c;
    return (a->index > b->index) - (a->index < b->index);
}

static void add_special(struct mp_profile *mp, struct mp_allocator *a, int64_t bytes, int64_t step,
                        uint32_t op, uint32_t region, uint32_t dtype, uint32_t shape)
{
    struct mp_meta *s = &a->special[a->nspecial++];

    (void)mp;
    memset(s, 0, sizeof(*s));
    s->activity = MP_ALLOCATION;
    s->requested_bytes = bytes;
    s->allocation_bytes = bytes;
    s->tf_op_name = op;
    s->step_id = step;
    s->region_type = region;
    s->data_type = dtype;
    s->tensor_shape = shape;
}

/* GetPeakMemoryStep, ProcessActiveAllocations and
 * SaveActiveAllocationSnapshots. */
static int active_allocations(struct mp_profile *mp, struct mp_allocator *a)
{
    const struct mp_summary *s = &a->summary;
    int64_t peak_step = 0, unmapped = s->peak_stats.heap_allocated_bytes, unmapped_dealloc = 0;
    uint32_t i, nlive = 0, ids[6];
    struct idmap at;
    struct live *live;
    int rc = -ENOMEM;

    for (i = 0; i < a->nsnaps; i++) {
        if (in_use(&a->snaps[i].stats) == s->peak_stats.peak_bytes_in_use)
            peak_step = a->snaps[i].meta.step_id;
    }
    memset(&at, 0, sizeof(at));
    for (i = 0; i < a->nsnaps; i++) {
        const struct mp_meta *m = &a->snaps[i].meta;
        if (a->snaps[i].time_offset_ps > s->peak_stats_time_ps)
            break;
        if (m->step_id != peak_step)
            continue;
        if (m->activity == MP_ALLOCATION) {
            if (idmap_set(&at, (int64_t)m->address, i) != 0)
                goto out;
            unmapped = sub64(unmapped, m->allocation_bytes);
        } else {
            if (contains(&at, m->address)) {
                if (idmap_set(&at, (int64_t)m->address, ERASED) != 0)
                    goto out;
            } else {
                unmapped_dealloc = add64(unmapped_dealloc, m->allocation_bytes);
            }
            unmapped = add64(unmapped, m->allocation_bytes);
        }
    }
    unmapped = sub64(unmapped, unmapped_dealloc);

    if (intern_add(&mp->strings, "unused preallocated device memory", 33, &ids[0]) != 0 ||
        intern_add(&mp->strings, "persist/dynamic", 15, &ids[1]) != 0 ||
        intern_add(&mp->strings, "INVALID", 7, &ids[2]) != 0 ||
        intern_add(&mp->strings, "unknown", 7, &ids[3]) != 0 ||
        intern_add(&mp->strings, "stack", 5, &ids[4]) != 0)
        goto out;
    if (unmapped > 0)
        add_special(mp, a, unmapped, peak_step, ids[0], ids[1], ids[2], ids[3]);
    if (s->peak_stats.stack_reserved_bytes > 0)
        add_special(mp, a, s->peak_stats.stack_reserved_bytes, peak_step, ids[4], ids[4], ids[2],
                    ids[3]);

    live = malloc(((size_t)a->nsnaps + 2) * sizeof(*live));
    if (live == NULL)
        goto out;
    /* the allocations still mapped: those their address still points to */
    for (i = 0; i < a->nsnaps; i++) {
        const struct mp_meta *m = &a->snaps[i].meta;
        if (m->activity == MP_ALLOCATION && idmap_get(&at, (int64_t)m->address) == i) {
            live[nlive].index = i;
            live[nlive++].meta = m;
        }
    }
    for (i = 0; i < a->nspecial; i++) {
        live[nlive].index = -(int64_t)i - 1;
        live[nlive++].meta = &a->special[i];
    }
    if (xp_sort_runs(live, nlive, sizeof(*live), live_cmp, mp) != 0) {
        free(live);
        goto out;
    }
    a->active = malloc((nlive + 1) * sizeof(*a->active));
    a->kept = malloc((nlive + 1) * sizeof(*a->kept));
    if (a->active == NULL || a->kept == NULL) {
        free(live);
        goto out;
    }
    for (i = 0; i < nlive; i++) {
        struct mp_active *r = &a->active[a->nactive++];
        r->num_occurrences = 1;
        if (live[i].index < 0) {
            r->snapshot_index = live[i].index;
            r->special_index = -live[i].index - 1;
        } else {
            r->snapshot_index = a->nkept;
            r->special_index = -1;
            a->kept[a->nkept++] = (uint32_t)live[i].index;
        }
        while (i + 1 < nlive && meta_cmp(mp, live[i].meta, live[i + 1].meta) == 0) {
            r->num_occurrences++;
            i++;
        }
    }
    free(live);
    rc = 0;
out:
    idmap_free(&at);
    return rc;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const struct mp_allocator *)a)->memory_id,
                  ((const struct mp_allocator *)b)->memory_id);
}

int mp_profile_build(const struct xspace *xs, const struct xp_groups *g, uint32_t max_snapshots,
                     struct mp_profile **mpp, struct xp_err *err)
{
    struct mp_profile *mp = calloc(1, sizeof(*mp));
    uint32_t i;
    int rc = 0;

    *mpp = NULL;
    if (mp == NULL || intern_init(&mp->strings) != 0) {
        mp_profile_free(mp);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (max_snapshots == 0)
        max_snapshots = 1;
    for (i = 0; i < xs->nplanes && rc == 0; i++) {
        if (strcmp(xs->planes[i].name, "/host:CPU") == 0) {
            mp->has_host_plane = 1;
            rc = read_host_plane(mp, xs, i, g, err);
            break;
        }
    }
    if (rc == 0 && mp->has_host_plane)
        rc = read_hlo_modules(mp, xs, err);
    if (rc == 0)
        xp_qsort(mp->allocators, mp->nallocators, sizeof(*mp->allocators), by_id);
    for (i = 0; rc == 0 && i < mp->nallocators; i++) {
        struct mp_allocator *a = &mp->allocators[i];
        if (xp_sort_runs(a->snaps, a->nsnaps, sizeof(*a->snaps), by_time, NULL) != 0) {
            rc = xp_err_set(err, -ENOMEM, "out of memory");
            break;
        }
        update_step_ids(a);
        if (update_deallocations(a) != 0 || sample_timeline(a, max_snapshots) != 0 ||
            active_allocations(mp, a) != 0)
            rc = xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (rc != 0) {
        mp_profile_free(mp);
        return rc;
    }
    *mpp = mp;
    return 0;
}

void mp_profile_free(struct mp_profile *mp)
{
    uint32_t i;

    if (mp == NULL)
        return;
    for (i = 0; i < mp->nallocators; i++) {
        free(mp->allocators[i].memory_id);
        free(mp->allocators[i].snaps);
        free(mp->allocators[i].kept);
        free(mp->allocators[i].active);
        free(mp->allocators[i].sampled);
    }
    free(mp->allocators);
    free(mp->hlo_modules);
    intern_free(&mp->strings);
    free(mp);
}
