/*
 * gt_pt_links.c - TraceLens's Trace2Tree linking of a PyTorch trace (see
 * gt_pt_links in gpu_timeline.h): which cuda_runtime / cuda_driver event
 * reaches each GPU event, through its ac2g flow pair (matched by
 * correlation or External id) or a graph launch of its id.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "gt_int.h"
#include "reader/ctrace.h"
#include "base/hash.h"

/* A map from (pid, tid, link id, flags) to an event index; last write wins. */
struct link_map {
    int64_t (*key)[3];
    uint16_t *flags;
    uint32_t *val; /* UINT32_MAX = empty */
    size_t mask;
};

static size_t link_hash(const int64_t k[3], uint16_t f)
{
    uint64_t h = FNV64_OFFSET;
    int i;

    for (i = 0; i < 3; i++)
        h = fnv64_add_word(h, (uint64_t)k[i]);
    h = fnv64_add_word(h, f);
    return (size_t)(h ^ (h >> 29));
}

static int link_map_init(struct link_map *m, size_t n)
{
    size_t size = 16;

    while (size < n * 2)
        size <<= 1;
    m->key = malloc(size * sizeof(*m->key));
    m->flags = malloc(size * sizeof(*m->flags));
    m->val = malloc(size * sizeof(*m->val));
    m->mask = size - 1;
    if (m->key == NULL || m->flags == NULL || m->val == NULL)
        return -ENOMEM;
    memset(m->val, 0xff, size * sizeof(*m->val));
    return 0;
}

static void link_map_free(struct link_map *m)
{
    free(m->key);
    free(m->flags);
    free(m->val);
}

/* The slot of key: its entry, or the empty slot where it goes. */
static size_t link_slot(const struct link_map *m, const int64_t k[3], uint16_t f)
{
    size_t i = link_hash(k, f) & m->mask;

    while (m->val[i] != UINT32_MAX && !(m->key[i][0] == k[0] && m->key[i][1] == k[1] &&
                                        m->key[i][2] == k[2] && m->flags[i] == f))
        i = (i + 1) & m->mask;
    return i;
}

static void link_put(struct link_map *m, const int64_t k[3], uint16_t f, uint32_t v)
{
    size_t i = link_slot(m, k, f);

    m->key[i][0] = k[0];
    m->key[i][1] = k[1];
    m->key[i][2] = k[2];
    m->flags[i] = f;
    m->val[i] = v;
}

static uint32_t link_get(const struct link_map *m, const int64_t k[3], uint16_t f)
{
    return m->val[link_slot(m, k, f)];
}

/* The string ids the linking looks for; 0 where the trace lacks one. */
struct link_ids {
    uint32_t cat_rt;     /* "cuda_runtime" */
    uint32_t cat_drv;    /* "cuda_driver" */
    uint32_t cat_ac2g;   /* "ac2g" (flow events) */
    uint32_t cat_kernel; /* "kernel" */
    uint32_t cat_memcpy; /* "gpu_memcpy" */
    uint32_t cat_memset; /* "gpu_memset" */
    uint32_t graph1;     /* "cudaGraphLaunch" */
    uint32_t graph2;     /* "hipGraphLaunch" */
};

/* The state of one linking. */
struct linker {
    const struct ctrace *ct;
    struct link_ids ids;
    int use_corr;           /* link by correlation, else by External id */
    struct link_map start;  /* flow id -> its ac2g start ('s') */
    struct link_map end;    /* flow id -> its ac2g end ('f') */
    struct link_map ptl;    /* (pid, tid, link id, string flags) -> event */
    struct link_map graphs; /* link id -> its last graph launch */
    uint32_t *parent;       /* per event: its launcher, or UINT32_MAX */
};

static void find_link_ids(const struct ctrace *ct, struct link_ids *ids)
{
    ids->cat_rt = ctrace_str_find(ct, "cuda_runtime");
    ids->cat_drv = ctrace_str_find(ct, "cuda_driver");
    ids->cat_ac2g = ctrace_str_find(ct, "ac2g");
    ids->cat_kernel = ctrace_str_find(ct, "kernel");
    ids->cat_memcpy = ctrace_str_find(ct, "gpu_memcpy");
    ids->cat_memset = ctrace_str_find(ct, "gpu_memset");
    ids->graph1 = ctrace_str_find(ct, "cudaGraphLaunch");
    ids->graph2 = ctrace_str_find(ct, "hipGraphLaunch");
}

/* A cuda_runtime / cuda_driver event. */
static int is_runtime(const struct link_ids *ids, const struct ctrace_event *ev)
{
    return ev->cat != 0 && (ev->cat == ids->cat_rt || ev->cat == ids->cat_drv);
}

/* A kernel / gpu_memcpy / gpu_memset event. */
static int is_gpu(const struct link_ids *ids, const struct ctrace_event *ev)
{
    return ev->cat != 0 &&
           (ev->cat == ids->cat_kernel || ev->cat == ids->cat_memcpy || ev->cat == ids->cat_memset);
}

/* A cudaGraphLaunch / hipGraphLaunch event. */
static int is_graph_launch(const struct link_ids *ids, const struct ctrace_event *ev)
{
    return ev->name != 0 && (ev->name == ids->graph1 || ev->name == ids->graph2);
}

/* The event's link id: its correlation or its External id. */
static int64_t link_id(const struct linker *lk, const struct ctrace_event *ev)
{
    return lk->use_corr ? ev->correlation : ev->external_id;
}

/* The event has args and a link id in them. */
static int has_link_id(const struct linker *lk, const struct ctrace_event *ev)
{
    return ev->args_len != 0 && link_id(lk, ev) != CT_NONE;
}

/* The key of a map by one id. */
static void id_key(int64_t k[3], int64_t id)
{
    k[0] = id;
    k[1] = k[2] = 0;
}

/* A name holding "launch", in any case. */
static int is_launch_name(const char *name)
{
    char lower[256];
    size_t k;

    for (k = 0; name[k] && k < sizeof(lower) - 1; k++)
        lower[k] = (char)tolower((unsigned char)name[k]);
    lower[k] = 0;
    if (strstr(lower, "launch") != NULL)
        return 1;
    /* Longer than the buffer: search the whole name. */
    return strlen(name) >= sizeof(lower) - 1 && gt_contains_nocase(name, "launch");
}

/* The linking key: "correlation" if the first launch has it in its args. */
static int first_launch_has_correlation(const struct ctrace *ct, const struct link_ids *ids)
{
    uint32_t i;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (!is_runtime(ids, ev) || !is_launch_name(ctrace_str(ct, ev->name)))
            continue;
        return ev->args_len > 0 &&
               memmem(ct->text + ev->args_off, ev->args_len, "\"correlation\"", 13) != NULL;
    }
    return 0;
}

/* Frees what lk holds (after linker_init, failed or not). */
static void linker_free(struct linker *lk)
{
    link_map_free(&lk->start);
    link_map_free(&lk->end);
    link_map_free(&lk->ptl);
    link_map_free(&lk->graphs);
    free(lk->parent);
}

static int linker_init(struct linker *lk, const struct ctrace *ct)
{
    size_t nparent = ct->nevents ? ct->nevents : 1;

    memset(lk, 0, sizeof(*lk));
    lk->ct = ct;
    find_link_ids(ct, &lk->ids);
    lk->use_corr = first_launch_has_correlation(ct, &lk->ids);
    lk->parent = malloc(nparent * sizeof(*lk->parent));
    if (lk->parent == NULL)
        return -ENOMEM;
    memset(lk->parent, 0xff, nparent * sizeof(*lk->parent));
    if (link_map_init(&lk->start, ct->nevents) != 0 || link_map_init(&lk->end, ct->nevents) != 0 ||
        link_map_init(&lk->ptl, ct->nevents) != 0 || link_map_init(&lk->graphs, ct->nevents) != 0)
        return -ENOMEM;
    return 0;
}

/* Index an ac2g flow event i: its start or end by flow id. */
static void index_flow(struct linker *lk, uint32_t i)
{
    const struct ctrace_event *ev = &lk->ct->events[i];
    int64_t k[3];

    if (ev->id == CT_NONE)
        return;
    id_key(k, ev->id);
    if (ev->ph == 's')
        link_put(&lk->start, k, 0, i);
    else if (ev->ph == 'f')
        link_put(&lk->end, k, 0, i);
}

/* Index another event i by (pid, tid, link id) and how its pid and tid were
 * written, if it has all three. */
static void index_linked(struct linker *lk, uint32_t i)
{
    const struct ctrace_event *ev = &lk->ct->events[i];
    int64_t k[3];

    if (!has_link_id(lk, ev))
        return;
    if (ev->pid == CT_NONE || ev->tid == CT_NONE)
        return;
    k[0] = ev->pid;
    k[1] = ev->tid;
    k[2] = link_id(lk, ev);
    link_put(&lk->ptl, k, ev->flags & (CT_PID_STR | CT_TID_STR), i);
}

/* Fill the start, end and ptl maps (last event wins). */
static void index_events(struct linker *lk)
{
    uint32_t i;

    for (i = 0; i < lk->ct->nevents; i++) {
        const struct ctrace_event *ev = &lk->ct->events[i];
        if (ev->cat != 0 && ev->cat == lk->ids.cat_ac2g)
            index_flow(lk, i);
        else
            index_linked(lk, i);
    }
}

/* Runtime event i: a graph launch is recorded by its link id (it links
 * every GPU event of that id: link_graph_events, once); another launch
 * links the GPU event its flow ends on: the flow of its link id ends at
 * (pid, tid, flow id) of that event. */
static void link_launch(struct linker *lk, uint32_t i)
{
    const struct ctrace_event *ev = &lk->ct->events[i], *f;
    uint32_t s, fi, g;
    int64_t k[3];

    if (!has_link_id(lk, ev))
        return;
    id_key(k, link_id(lk, ev));
    if (is_graph_launch(&lk->ids, ev)) {
        link_put(&lk->graphs, k, 0, i);
        return;
    }
    s = link_get(&lk->start, k, 0);
    fi = link_get(&lk->end, k, 0);
    if (s == UINT32_MAX || fi == UINT32_MAX)
        return;
    f = &lk->ct->events[fi];
    k[0] = f->pid;
    k[1] = f->tid;
    k[2] = f->id;
    g = link_get(&lk->ptl, k, f->flags & (CT_PID_STR | CT_TID_STR));
    if (g != UINT32_MAX && is_gpu(&lk->ids, &lk->ct->events[g]))
        lk->parent[g] = i;
}

static void link_launches(struct linker *lk)
{
    uint32_t i;

    for (i = 0; i < lk->ct->nevents; i++) {
        if (is_runtime(&lk->ids, &lk->ct->events[i]))
            link_launch(lk, i);
    }
}

/* Graph launches, in TraceLens's terms: each one, in file order, links
 * every GPU event of its id, overwriting earlier links. So a GPU event's
 * parent is the later of the last graph launch of its id and its flow
 * link (graphs maps an id to its last graph launch). */
static void link_graph_events(struct linker *lk)
{
    uint32_t i, g;
    int64_t k[3];

    for (i = 0; i < lk->ct->nevents; i++) {
        const struct ctrace_event *gv = &lk->ct->events[i];
        if (!is_gpu(&lk->ids, gv) || !has_link_id(lk, gv))
            continue;
        id_key(k, link_id(lk, gv));
        g = link_get(&lk->graphs, k, 0);
        if (g != UINT32_MAX && (lk->parent[i] == UINT32_MAX || g > lk->parent[i]))
            lk->parent[i] = g;
    }
}

int gt_pt_links(const struct ctrace *ct, uint32_t **parentp)
{
    struct linker lk;
    int rc;

    *parentp = NULL;
    rc = linker_init(&lk, ct);
    if (rc == 0) {
        index_events(&lk);
        link_launches(&lk);
        link_graph_events(&lk);
        *parentp = lk.parent;
        lk.parent = NULL;
    }
    linker_free(&lk);
    return rc;
}
