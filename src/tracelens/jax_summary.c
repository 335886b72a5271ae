/*
 * jax_summary.c - the rows of kernel_launchers_summary.csv,
 * kernel_launchers_summary_by_category.csv and xla_summary.csv (see
 * jax_launchers.h): the kernels grouped by name, category or digit-less XLA
 * name with pandas' Kahan group sums, ordered as groupby then
 * sort_values(ascending=False) order them, with numpy's pairwise total, the
 * percentages, their running sum and the time per GPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jax_launchers_int.h"
#include "base/np_arith.h"
#include "base/sort.h"
#include "base/hash.h"

/* The groups being built, keyed by name or category, with pandas' Kahan
 * group sums. */
struct group_ctx {
    enum jax_group_by by;
    char **stripped; /* JAX_BY_XLA_NAME: the digit-less names (group keys) */
    size_t nstripped, stripped_cap;
    struct jax_group *groups;
    size_t ngroups, cap;
    uint32_t *slots; /* hash slots: group index + 1, 0 = empty */
    size_t nslots;
    /* In front of the slots: key pointer -> group index + 1 (a metadata
     * hands over the same name pointer for all its kernels). */
    const char **ptr_keys;
    uint32_t *ptr_groups;
    size_t nptr_slots, nptrs;
    int64_t pids[512]; /* distinct pids seen (xplane gpu pids are at most 500) */
    size_t npids;
};

/* Double the text slots (256 at first) and rehash. 0 or -ENOMEM. */
static int group_slots_grow(struct group_ctx *g)
{
    size_t nslots = g->nslots ? g->nslots * 2 : 256, i;
    uint32_t *slots = calloc(nslots, sizeof(*slots));

    if (slots == NULL)
        return -ENOMEM;
    for (i = 0; i < g->ngroups; i++) {
        size_t s = fnv64_str(g->groups[i].key) & (nslots - 1);
        while (slots[s] != 0)
            s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)(i + 1);
    }
    free(g->slots);
    g->slots = slots;
    g->nslots = nslots;
    return 0;
}

/* Hash of a key pointer. */
static size_t ptr_hash(const char *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32);
}

/* Double the pointer slots (256 at first) and rehash. 0 or -ENOMEM. */
static int ptr_slots_grow(struct group_ctx *g)
{
    size_t nslots = g->nptr_slots ? g->nptr_slots * 2 : 256, i;
    const char **keys = calloc(nslots, sizeof(*keys));
    uint32_t *groups = calloc(nslots, sizeof(*groups));

    if (keys == NULL || groups == NULL) {
        free(keys);
        free(groups);
        return -ENOMEM;
    }
    for (i = 0; i < g->nptr_slots; i++) {
        size_t s;
        if (g->ptr_groups[i] == 0)
            continue;
        s = ptr_hash(g->ptr_keys[i]) & (nslots - 1);
        while (groups[s] != 0)
            s = (s + 1) & (nslots - 1);
        keys[s] = g->ptr_keys[i];
        groups[s] = g->ptr_groups[i];
    }
    free(g->ptr_keys);
    free(g->ptr_groups);
    g->ptr_keys = keys;
    g->ptr_groups = groups;
    g->nptr_slots = nslots;
    return 0;
}

/* The group of key by the string: index + 1, 0 when out of memory. */
static uint32_t group_by_text(struct group_ctx *g, const char *key)
{
    size_t s;

    if ((g->ngroups + 1) * 2 > g->nslots && group_slots_grow(g) != 0)
        return 0;
    s = fnv64_str(key) & (g->nslots - 1);
    while (g->slots[s] != 0 && strcmp(g->groups[g->slots[s] - 1].key, key) != 0)
        s = (s + 1) & (g->nslots - 1);
    if (g->slots[s] == 0) {
        if (g->ngroups == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 64;
            struct jax_group *v = realloc(g->groups, cap * sizeof(*v));
            if (v == NULL)
                return 0;
            g->groups = v;
            g->cap = cap;
        }
        memset(&g->groups[g->ngroups], 0, sizeof(*g->groups));
        g->groups[g->ngroups].key = key;
        g->slots[s] = (uint32_t)(++g->ngroups);
    }
    return g->slots[s];
}

/* TraceLens's xla_summary key: the name with every digit removed
 * (loop_slice_fusion_202 -> loop_slice_fusion_), kept in g->stripped. */
static const char *strip_digits(struct group_ctx *g, const char *name)
{
    size_t n = strlen(name), i, j = 0;
    char *key;

    if (g->nstripped == g->stripped_cap) {
        size_t cap = g->stripped_cap ? g->stripped_cap * 2 : 64;
        char **v = realloc(g->stripped, cap * sizeof(*v));
        if (v == NULL)
            return NULL;
        g->stripped = v;
        g->stripped_cap = cap;
    }
    key = malloc(n + 1);
    if (key == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        if (name[i] < '0' || name[i] > '9')
            key[j++] = name[i];
    }
    key[j] = '\0';
    g->stripped[g->nstripped++] = key;
    return key;
}

/* jax_visit callback: add k's duration to its group (XLA kernels only for
 * JAX_BY_XLA_NAME) and note its pid. 0 or -ENOMEM. */
static int add_to_group(void *arg, const struct jax_kernel *k)
{
    struct group_ctx *g = arg;
    const char *key = g->by == JAX_BY_CATEGORY ? k->category : k->name;
    struct jax_group *gr;
    size_t s, i;
    double y, t;
    if (g->by == JAX_BY_XLA_NAME && strcmp(k->category, JAX_UNCATEGORIZED) != 0)
        return 0;
    for (i = 0; i < g->npids && g->pids[i] != k->pid; i++)
        ;
    if (i == g->npids && g->npids < sizeof(g->pids) / sizeof(g->pids[0]))
        g->pids[g->npids++] = k->pid;
    if ((g->nptrs + 1) * 2 > g->nptr_slots && ptr_slots_grow(g) != 0)
        return -ENOMEM;
    s = ptr_hash(key) & (g->nptr_slots - 1);
    while (g->ptr_groups[s] != 0 && g->ptr_keys[s] != key)
        s = (s + 1) & (g->nptr_slots - 1);
    if (g->ptr_groups[s] == 0) {
        const char *text = g->by == JAX_BY_XLA_NAME ? strip_digits(g, key) : key;
        uint32_t group = text != NULL ? group_by_text(g, text) : 0;
        if (group == 0)
            return -ENOMEM;
        g->ptr_keys[s] = key;
        g->ptr_groups[s] = group;
        g->nptrs++;
    }
    gr = &g->groups[g->ptr_groups[s] - 1];
    y = k->dur - gr->comp;
    t = gr->sum + y;
    gr->comp = t - gr->sum - y;
    gr->sum = t;
    gr->count++;
    return 0;
}

/* Order of groups by key (groupby's). */
static int group_key_cmp(const void *a, const void *b)
{
    return strcmp(((const struct jax_group *)a)->key, ((const struct jax_group *)b)->key);
}

/* Reorder g's groups as pandas' sort_values(ascending=False) by sum does
 * (tmp: room for ngroups doubles). Returns 0 or -ENOMEM. */
static int sort_groups_desc(struct group_ctx *g, double *tmp)
{
    size_t *order = malloc((g->ngroups + 1) * sizeof(*order));
    struct jax_group *sorted = malloc((g->ngroups + 1) * sizeof(*sorted));
    size_t i;
    int rc;

    if (order == NULL || sorted == NULL) {
        free(order);
        free(sorted);
        return -ENOMEM;
    }
    for (i = 0; i < g->ngroups; i++)
        tmp[i] = g->groups[i].sum;
    rc = np_order_desc(tmp, g->ngroups, order);
    if (rc == 0) {
        for (i = 0; i < g->ngroups; i++)
            sorted[i] = g->groups[order[i]];
        if (g->ngroups > 0)
            memcpy(g->groups, sorted, g->ngroups * sizeof(*sorted));
    }
    free(order);
    free(sorted);
    return rc;
}

/* Free everything g holds. */
static void group_ctx_free(struct group_ctx *g)
{
    size_t i;

    for (i = 0; i < g->nstripped; i++)
        free(g->stripped[i]);
    free(g->stripped);
    free(g->groups);
    free(g->slots);
    free(g->ptr_keys);
    free(g->ptr_groups);
}

/* Visit, group, order, then the totals and percentages. */
int jax_summarize(const struct host_list *hl, enum jax_group_by by, struct jax_summary *s,
                  struct xp_err *err)
{
    struct group_ctx g;
    double *ms = NULL, total, cum = 0;
    size_t i;
    int rc;

    memset(s, 0, sizeof(*s));
    memset(&g, 0, sizeof(g));
    g.by = by;
    rc = jax_visit(hl, 0, by != JAX_BY_NAME, add_to_group, &g, err);
    if (rc == 0 && (ms = malloc((g.ngroups + 1) * sizeof(*ms))) == NULL)
        rc = xp_err_set(err, -ENOMEM, "out of memory");
    if (rc != 0) {
        group_ctx_free(&g);
        return rc;
    }
    /* groupby sorts by key; then sort_values(ascending=False), with
     * numpy's order of ties. */
    xp_qsort(g.groups, g.ngroups, sizeof(*g.groups), group_key_cmp);
    rc = sort_groups_desc(&g, ms);
    if (rc != 0) {
        free(ms);
        group_ctx_free(&g);
        return xp_err_set(err, rc, "out of memory");
    }
    for (i = 0; i < g.ngroups; i++)
        ms[i] = g.groups[i].ms = g.groups[i].sum / 1000;
    total = np_sum(ms, g.ngroups);
    for (i = 0; i < g.ngroups; i++) {
        struct jax_group *gr = &g.groups[i];
        gr->pct = gr->ms / total * 100;
        cum = i == 0 ? gr->pct : cum + gr->pct;
        gr->cum = cum;
        gr->ms_per_gpu = gr->ms / (double)g.npids;
    }
    free(ms);
    /* The rows and their keys move to s; the hash tables go. */
    s->groups = g.groups;
    s->ngroups = g.ngroups;
    s->stripped = g.stripped;
    s->nstripped = g.nstripped;
    g.groups = NULL;
    g.stripped = NULL;
    g.nstripped = 0;
    group_ctx_free(&g);
    return 0;
}

/* Free the rows and owned keys; NULL is fine. */
void jax_summary_free(struct jax_summary *s)
{
    size_t i;

    if (s == NULL)
        return;
    for (i = 0; i < s->nstripped; i++)
        free(s->stripped[i]);
    free(s->stripped);
    free(s->groups);
    memset(s, 0, sizeof(*s));
}
