/*
 * trace_index.c - building the per-host trace index: strings, processes,
 * tracks, events, flows, group ids and frames while a builder
 * (trace_xplane.c, trace_ctrace.c) fills it, and freeing it. Requests read
 * it in trace_select.c; its place among the snapshot's intermediates is
 * trace_index_get.c; sorting and zoom levels are in trace_levels*.c.
 */
#include "base/sort.h"
#include "trace_index.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/bigalloc.h"
#include "base/grow.h"
#include "trace_levels.h"
#include "base/hash.h"
#include "base/intern.h"

/* --- strings -------------------------------------------------------------- */

/* A table of its own for each host: ids 1 and up in the order first seen. */
static struct intern *strtab_new(void)
{
    struct intern *t = malloc(sizeof(*t));

    if (t != NULL && intern_init(t) != 0) {
        intern_free(t);
        free(t);
        t = NULL;
    }
    return t;
}

static void strtab_free(struct intern *t)
{
    intern_free(t);
    free(t);
}

uint32_t tv_str(struct tv_host *h, const char *s, size_t n)
{
    uint32_t id;

    return intern_add(h->strings, s, n, &id) == 0 ? id : 0;
}

uint32_t tv_cstr(struct tv_host *h, const char *s)
{
    return tv_str(h, s, strlen(s));
}

const char *tv_text(const struct tv_host *h, uint32_t id)
{
    return id < h->strings->n ? h->strings->text[id] : "";
}

size_t tv_len(const struct tv_host *h, uint32_t id)
{
    return id < h->strings->n ? h->strings->len[id] : 0;
}

uint32_t tv_str_count(const struct tv_host *h)
{
    return h->strings->n;
}

/* --- building --------------------------------------------------------------- */

struct tv_host *tv_host_new(const char *hostname)
{
    struct tv_host *h = calloc(1, sizeof(*h));

    if (h == NULL)
        return NULL;
    h->hostname = strdup(hostname);
    h->strings = strtab_new();
    h->build = calloc(1, sizeof(*h->build));
    if (h->hostname == NULL || h->strings == NULL || h->build == NULL) {
        tv_host_free(h);
        return NULL;
    }
    pthread_mutex_init(&h->build->lock, NULL);
    pthread_mutex_init(&h->complete_lock, NULL);
    return h;
}

int tv_add_device(struct tv_host *h, uint32_t pid, const char *name)
{
    struct tv_build *b = h->build;
    uint32_t i, name_id = tv_cstr(h, name);
    struct tv_device *d;

    if (name_id == 0 || b == NULL)
        return -1;
    i = idmap_get(&b->devices, pid);
    if (i != IDMAP_NONE) {
        h->devices[i].name = name_id;
        return (int)i;
    }
    if (h->ndevices >= INT32_MAX ||
        xp_grow((void **)&h->devices, &b->device_cap, h->ndevices, sizeof(*d)) != 0 ||
        idmap_set(&b->devices, pid, h->ndevices) != 0)
        return -1;
    d = &h->devices[h->ndevices];
    memset(d, 0, sizeof(*d));
    d->pid = pid;
    d->name = name_id;
    return (int)h->ndevices++;
}

int tv_add_resource(struct tv_host *h, uint32_t pid, uint32_t tid, uint32_t name)
{
    struct tv_build *b = h->build;
    int64_t key = (int64_t)(((uint64_t)pid << 32) | tid);
    uint32_t i = b != NULL ? idmap_get(&b->devices, pid) : IDMAP_NONE, r;
    struct tv_device *d;

    if (i == IDMAP_NONE)
        return -ENOENT;
    d = &h->devices[i];
    r = idmap_get(&b->threads, key);
    if (r != IDMAP_NONE) {
        d->res[r].name = name;
        return 0;
    }
    if (xp_grow((void **)&d->res, &d->res_cap, d->nres, sizeof(*d->res)) != 0 ||
        idmap_set(&b->threads, key, d->nres) != 0)
        return -ENOMEM;
    d->res[d->nres].tid = tid;
    d->res[d->nres].name = name;
    d->nres++;
    return 0;
}

static void build_free(struct tv_build *b)
{
    if (b == NULL)
        return;
    free(b->slots);
    big_free(b->track_of);
    free(b->runs);
    free(b->moves);
    pthread_mutex_destroy(&b->lock);
    idmap_free(&b->devices);
    idmap_free(&b->threads);
    free(b);
}

static int resource_cmp(const void *a, const void *b, void *ctx)
{
    const struct tv_resource *x = a, *y = b;

    (void)ctx;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void tv_build_end(struct tv_host *h)
{
    uint32_t i;

    /* each tid once (tv_add_resource renames); on no memory the threads
     * stay in the order they came */
    for (i = 0; i < h->ndevices; i++)
        (void)xp_sort_runs(h->devices[i].res, h->devices[i].nres, sizeof(*h->devices[i].res),
                           resource_cmp, NULL);
    build_free(h->build);
    h->build = NULL;
}

/* Find or add a track with this key. */
static int64_t track_get(struct tv_host *h, uint32_t pid, uint32_t key, int has_tid)
{
    struct tv_build *b = h->build;
    uint64_t k = ((uint64_t)pid << 33) | ((uint64_t)(has_tid ? 1 : 0) << 32) | key;
    uint32_t s, i;
    struct tv_track *t;

    if (b->nslots == 0 || (h->ntracks + 1) * 2 > b->nslots) {
        uint32_t nslots = b->nslots ? b->nslots * 2 : 64;
        uint32_t *slots = malloc(nslots * sizeof(*slots));
        if (slots == NULL)
            return -1;
        memset(slots, 0xff, nslots * sizeof(*slots));
        for (i = 0; i < h->ntracks; i++) {
            const struct tv_track *o = &h->tracks[i];
            uint64_t ok = ((uint64_t)o->pid << 33) | ((uint64_t)o->has_tid << 32) |
                          (o->has_tid ? o->tid : o->name);
            s = (uint32_t)(fnv64((const char *)&ok, sizeof(ok)) & (nslots - 1));
            while (slots[s] != UINT32_MAX)
                s = (s + 1) & (nslots - 1);
            slots[s] = i;
        }
        free(b->slots);
        b->slots = slots;
        b->nslots = nslots;
    }
    s = (uint32_t)(fnv64((const char *)&k, sizeof(k)) & (b->nslots - 1));
    while (b->slots[s] != UINT32_MAX) {
        t = &h->tracks[b->slots[s]];
        if (t->pid == pid && t->has_tid == has_tid && (has_tid ? t->tid : t->name) == key)
            return b->slots[s];
        s = (s + 1) & (b->nslots - 1);
    }
    if (xp_grow((void **)&h->tracks, &b->track_cap, h->ntracks, sizeof(*t)) != 0)
        return -1;
    t = &h->tracks[h->ntracks];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    t->has_tid = has_tid;
    if (has_tid)
        t->tid = key;
    else
        t->name = key;
    b->slots[s] = h->ntracks;
    return h->ntracks++;
}

int64_t tv_track_thread(struct tv_host *h, uint32_t pid, uint32_t tid)
{
    return track_get(h, pid, tid, 1);
}

int64_t tv_track_channel(struct tv_host *h, uint32_t pid, uint32_t name)
{
    return track_get(h, pid, name, 0);
}

/* Events are the bulk of an index: keep them at 24 bytes. */
_Static_assert(sizeof(struct tv_event) == 24, "struct tv_event grew");

int tv_reserve(struct tv_host *h, size_t n)
{
    struct tv_build *b = h->build;
    struct tv_event *e;
    uint32_t *t;

    if (n <= b->cap)
        return 0;
    if (n > UINT32_MAX - 1)
        return -ENOMEM;
    e = big_realloc(h->events, n * sizeof(*e));
    if (e == NULL)
        return -ENOMEM;
    h->events = e;
    if (!b->runs_mode) {
        t = big_realloc(b->track_of, n * sizeof(*t));
        if (t == NULL)
            return -ENOMEM;
        b->track_of = t;
    }
    b->cap = n;
    return 0;
}

int tv_runs_begin(struct tv_host *h)
{
    struct tv_build *b = h->build;

    if (b == NULL || h->nevents > 0)
        return -EINVAL;
    big_free(b->track_of);
    b->track_of = NULL;
    b->runs_mode = 1;
    return 0;
}

int tv_add_run(struct tv_host *h, uint32_t first, uint32_t n, uint32_t track)
{
    struct tv_build *b = h->build;

    if (n == 0)
        return 0;
    if (xp_grow((void **)&b->runs, &b->runs_cap, b->nruns, sizeof(*b->runs)) != 0)
        return -ENOMEM;
    b->runs[b->nruns].first = first;
    b->runs[b->nruns].n = n;
    b->runs[b->nruns].track = track;
    b->nruns++;
    return 0;
}

int tv_move_event(struct tv_host *h, uint32_t i, uint32_t track)
{
    struct tv_build *b = h->build;
    int rc = 0;

    pthread_mutex_lock(&b->lock);
    if (xp_grow((void **)&b->moves, &b->moves_cap, b->nmoves, sizeof(*b->moves)) != 0) {
        rc = -ENOMEM;
    } else {
        b->moves[b->nmoves].slot = i;
        b->moves[b->nmoves].track = track;
        b->nmoves++;
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

int tv_put_event(struct tv_host *h, uint32_t i, const struct tv_new_event *n)
{
    struct tv_build *b = h->build;
    struct tv_event *e = &h->events[i];

    e->ts = n->ts;
    e->dur48 = n->dur < TV_DUR_LONG ? n->dur : TV_DUR_LONG;
    e->serial = 0;
    e->level = 0;
    e->flags = n->flags & 7;
    e->has_flow = n->has_flow ? 1 : 0;
    e->name = n->name;
    e->src = n->src;
    if (!b->runs_mode)
        b->track_of[i] = n->track;
    if (n->dur >= TV_DUR_LONG) {
        int rc = 0;
        pthread_mutex_lock(&b->lock);
        if (xp_grow((void **)&h->long_durs, &b->long_cap, h->nlong_durs, sizeof(*h->long_durs)) !=
            0) {
            rc = -ENOMEM;
        } else {
            h->long_durs[h->nlong_durs].src = n->src;
            h->long_durs[h->nlong_durs].dur = n->dur;
            h->nlong_durs++;
        }
        pthread_mutex_unlock(&b->lock);
        return rc;
    }
    return 0;
}

void tv_mark_flows(struct tv_host *h, uint32_t track)
{
    if (track < h->ntracks)
        h->tracks[track].flows = 1;
}

void tv_flows_marked(struct tv_host *h)
{
    const struct tv_build *b = h->build;
    uint32_t k;

    /* Moved events carry their flows to their new tracks. */
    for (k = 0; b != NULL && k < b->nmoves; k++) {
        if (b->moves[k].slot < h->nevents && h->events[b->moves[k].slot].has_flow)
            tv_mark_flows(h, b->moves[k].track);
    }
    h->flows_marked = 1;
}

int tv_add_event(struct tv_host *h, const struct tv_new_event *e)
{
    struct tv_build *b = h->build;

    if (h->nevents == b->cap) {
        size_t cap = b->cap ? b->cap + b->cap / 2 : 4096;
        if (tv_reserve(h, cap) != 0)
            return -ENOMEM;
    }
    if (e->has_flow)
        tv_mark_flows(h, e->track);
    return tv_put_event(h, h->nevents++, e);
}

int tv_alloc_events(struct tv_host *h, size_t n, uint32_t *first)
{
    if (n > UINT32_MAX - 1 - h->nevents || tv_reserve(h, h->nevents + n) != 0)
        return -ENOMEM;
    *first = h->nevents;
    h->nevents += (uint32_t)n;
    return 0;
}

uint64_t tv_long_dur(const struct tv_host *h, const struct tv_event *e)
{
    uint32_t lo = 0, hi = h->nlong_durs;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->long_durs[mid].src < e->src)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->nlong_durs && h->long_durs[lo].src == e->src ? h->long_durs[lo].dur
                                                                : TV_DUR_LONG;
}

uint32_t tv_track_at(const struct tv_host *h, uint32_t i)
{
    uint32_t lo = 0, hi = h->ntracks;

    /* The block's first and last events bound the search: usually one
     * track holds the whole block. */
    if (h->track_block != NULL) {
        uint32_t blk = i >> TV_TRACK_BLOCK_SHIFT;
        lo = h->track_block[blk];
        hi = h->track_block[blk + 1] + 1;
    }
    /* the last track starting at or before i (empty ones start where the
     * next one does) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->tracks[mid].first <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int tv_track_blocks(struct tv_host *h)
{
    uint32_t nblk = (h->nevents >> TV_TRACK_BLOCK_SHIFT) + 1, blk, last, *block;

    free(h->track_block);
    h->track_block = NULL;
    if (h->nevents == 0 || h->ntracks == 0)
        return 0;
    block = malloc(((size_t)nblk + 1) * sizeof(*block));
    if (block == NULL)
        return -ENOMEM;
    /* entry blk: the track of the block's first event; the one after the
     * last block: the track of the last event */
    last = tv_track_at(h, h->nevents - 1);
    for (blk = 0; blk <= nblk; blk++) {
        block[blk] = blk < nblk ? tv_track_at(h, blk << TV_TRACK_BLOCK_SHIFT) : last;
        if (block[blk] > last)
            block[blk] = last;
    }
    h->track_block = block;
    return 0;
}

/* Room for n flows in all. */
static int reserve_flows(struct tv_host *h, size_t n)
{
    struct tv_build *b = h->build;
    uint64_t *f;

    if (n <= b->flow_cap)
        return 0;
    if (n > UINT32_MAX - 1)
        return -ENOMEM;
    f = big_realloc(h->flows, n * sizeof(*f));
    if (f == NULL)
        return -ENOMEM;
    h->flows = f;
    b->flow_cap = (uint32_t)n;
    return 0;
}

int tv_alloc_flows(struct tv_host *h, size_t n)
{
    if (reserve_flows(h, n) != 0)
        return -ENOMEM;
    if (n > h->nflows)
        h->nflows = (uint32_t)n;
    return 0;
}

int tv_alloc_groups(struct tv_host *h, size_t n)
{
    int32_t *g;

    if (n > UINT32_MAX - 1)
        return -ENOMEM;
    g = big_realloc(h->groups_own, (n ? n : 1) * sizeof(*g));
    if (g == NULL)
        return -ENOMEM;
    h->groups = h->groups_own = g;
    h->ngroups = (uint32_t)n;
    return 0;
}

void tv_share_groups(struct tv_host *h, const int32_t *groups, uint32_t n)
{
    big_free(h->groups_own);
    h->groups_own = NULL;
    h->groups = groups;
    h->ngroups = n;
}

int32_t tv_event_group(const struct tv_host *h, const struct tv_event *e)
{
    if (e->src < h->ngroups)
        return h->groups_own != NULL || h->groups[e->src] >= 0 ? h->groups[e->src] : TV_NO_GROUP;
    return h->group_of != NULL ? h->group_of(h, e) : TV_NO_GROUP;
}

uint64_t tv_flow_pack(uint64_t id, unsigned type, unsigned category)
{
    return (id & ((1ull << 56) - 1)) | ((uint64_t)(type & 3) << 56) |
           ((uint64_t)(category & 63) << 58);
}

int tv_set_flow(struct tv_host *h, uint32_t src, uint64_t id, unsigned type, unsigned category)
{
    struct tv_build *b = h->build;

    if (src >= b->flow_cap) {
        size_t cap = b->flow_cap ? (size_t)b->flow_cap * 2 : 1024;
        if (cap <= src)
            cap = (size_t)src + 1;
        if (reserve_flows(h, cap) != 0)
            return -ENOMEM;
    }
    h->flows[src] = tv_flow_pack(id, type, category);
    if (src >= h->nflows)
        h->nflows = src + 1;
    return 0;
}

int tv_add_frame(struct tv_host *h, const char *text, size_t n)
{
    struct tv_build *b = h->build;
    uint32_t id = tv_str(h, text, n);
    char small[256];
    char *buf = n + 2 <= sizeof(small) ? small : malloc(n + 2);
    struct tv_frame *f;

    if (id == 0 || buf == NULL)
        return -ENOMEM;
    memcpy(buf, "@@", 2);
    memcpy(buf + 2, text, n);
    if (h->nframes == b->frame_cap) {
        uint32_t cap = b->frame_cap ? b->frame_cap * 2 : 64;
        f = realloc(h->frames, cap * sizeof(*f));
        if (f == NULL) {
            if (buf != small)
                free(buf);
            return -ENOMEM;
        }
        h->frames = f;
        b->frame_cap = cap;
    }
    h->frames[h->nframes].hash = std_hash_bytes(buf, n + 2);
    h->frames[h->nframes].text = id;
    h->nframes++;
    if (buf != small)
        free(buf);
    return 0;
}

void tv_host_free(struct tv_host *h)
{
    uint32_t i;

    if (h == NULL)
        return;
    if (h->source_free != NULL)
        h->source_free(h->source);
    for (i = 0; i < h->ndevices; i++)
        free(h->devices[i].res);
    free(h->devices);
    free(h->tracks);
    big_free(h->events);
    while (h->levels != NULL) {
        struct tv_levels *older = h->levels->older;
        big_free(h->levels->by_level);
        free(h->levels);
        h->levels = older;
    }
    tvl_rest_free(h->rest);
    pthread_mutex_destroy(&h->complete_lock);
    big_free(h->flows);
    big_free(h->groups_own);
    free(h->long_durs);
    free(h->track_block);
    free(h->frames);
    free(h->name_rank);
    build_free(h->build);
    strtab_free(h->strings);
    free(h->hostname);
    free(h);
}
