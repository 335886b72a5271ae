/*
 * group_links.c - the links across threads (ConnectInterThread): iterators
 * to executors, KernelLaunch -> KernelExecute by correlation_id, context
 * producers to consumers; then the links sorted by child and by parent.
 */
#include "group_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/sort.h"

static size_t hash_cap(size_t n)
{
    size_t cap = 16;

    while (cap < n * 2)
        cap *= 2;
    return cap;
}

/* Connect parents to children that share a key (ConnectInterThread); for a
 * key held by several parents the last inserted one wins. */
int gr_connect_keyed(struct forest *f, struct vec *parents, struct vec *children, int match_tag,
                     uint32_t tag)
{
    struct keyed *pv = parents->v, *cv = children->v;
    uint32_t *slot;
    size_t cap, i, mask;

    if (parents->n == 0 || children->n == 0)
        return 0;
    cap = hash_cap(parents->n);
    mask = cap - 1;
    slot = calloc(cap, sizeof(uint32_t));
    if (slot == NULL)
        return -ENOMEM;
    for (i = 0; i < parents->n; i++) {
        uint64_t h = (pv[i].k1 * 0x9e3779b97f4a7c15ULL) ^ (pv[i].k2 * 0xc2b2ae3d27d4eb4fULL);
        size_t s = (size_t)(h >> 17) & mask;
        while (slot[s] != 0) {
            struct keyed *o = &pv[slot[s] - 1];
            if (o->k1 == pv[i].k1 && o->k2 == pv[i].k2)
                break;
            s = (s + 1) & mask;
        }
        if (slot[s] == 0 || pv[slot[s] - 1].seq < pv[i].seq)
            slot[s] = (uint32_t)i + 1;
    }
    for (i = 0; i < children->n; i++) {
        uint64_t h = (cv[i].k1 * 0x9e3779b97f4a7c15ULL) ^ (cv[i].k2 * 0xc2b2ae3d27d4eb4fULL);
        size_t s = (size_t)(h >> 17) & mask;
        if (match_tag && cv[i].tag != tag)
            continue;
        while (slot[s] != 0) {
            struct keyed *o = &pv[slot[s] - 1];
            if (o->k1 == cv[i].k1 && o->k2 == cv[i].k2) {
                if (gr_add_cross(f, o->node, cv[i].node) != 0) {
                    free(slot);
                    return -ENOMEM;
                }
                break;
            }
            s = (s + 1) & mask;
        }
    }
    free(slot);
    return 0;
}

void gr_free_kernel_lists(struct forest *f)
{
    uint32_t i;

    for (i = 0; i < f->nlines; i++) {
        if (f->launches != NULL)
            gr_vec_free(&f->launches[i]);
        if (f->executes != NULL)
            gr_vec_free(&f->executes[i]);
    }
}

/* KernelLaunch -> KernelExecute by correlation id; the last launch of an id
 * wins. Launches and executes are read line by line in line order (the order
 * one pass would have seen them). The lists are released afterwards. */
int gr_connect_kernels(struct forest *f)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t nl = 0, ne = 0, i;
    uint32_t l;
    int rc = 0;

    for (l = 0; l < f->nlines; l++) {
        const struct corr_node *pv = f->launches[l].v;
        nl += f->launches[l].n;
        ne += f->executes[l].n;
        for (i = 0; i < f->launches[l].n; i++) {
            if (pv[i].corr < lo)
                lo = pv[i].corr;
            if (pv[i].corr > hi)
                hi = pv[i].corr;
        }
    }
    if (nl == 0 || ne == 0)
        goto out;
    if (f->cross.cap < f->cross.n + ne) {
        struct edge *v = big_realloc(f->cross.v, (f->cross.n + ne) * sizeof(*v));
        if (v == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        f->cross.v = v;
        f->cross.cap = f->cross.n + ne;
    }
    if (hi - lo < (uint64_t)nl * 4) {
        /* dense ids (the usual case): a direct table of launch node + 1 */
        uint32_t *slot = big_calloc((size_t)(hi - lo) + 1, sizeof(uint32_t));
        if (slot == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (l = 0; l < f->nlines; l++) {
            const struct corr_node *pv = f->launches[l].v;
            for (i = 0; i < f->launches[l].n; i++)
                slot[pv[i].corr - lo] = pv[i].node + 1;
        }
        for (l = 0; l < f->nlines && rc == 0; l++) {
            const struct corr_node *cv = f->executes[l].v;
            for (i = 0; i < f->executes[l].n && rc == 0; i++) {
                uint64_t c = cv[i].corr;
                if (c >= lo && c <= hi && slot[c - lo] != 0)
                    rc = gr_add_cross(f, slot[c - lo] - 1, cv[i].node);
            }
        }
        big_free(slot);
    } else {
        size_t cap = hash_cap(nl), mask = cap - 1;
        struct corr_node *tab = big_malloc(cap * sizeof(*tab));
        if (tab == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (i = 0; i < cap; i++)
            tab[i].node = NO_NODE;
        for (l = 0; l < f->nlines; l++) {
            const struct corr_node *pv = f->launches[l].v;
            for (i = 0; i < f->launches[l].n; i++) {
                size_t s = (size_t)((pv[i].corr * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
                while (tab[s].node != NO_NODE && tab[s].corr != pv[i].corr)
                    s = (s + 1) & mask;
                tab[s] = pv[i];
            }
        }
        for (l = 0; l < f->nlines && rc == 0; l++) {
            const struct corr_node *cv = f->executes[l].v;
            for (i = 0; i < f->executes[l].n && rc == 0; i++) {
                size_t s = (size_t)((cv[i].corr * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
                while (tab[s].node != NO_NODE) {
                    if (tab[s].corr == cv[i].corr) {
                        rc = gr_add_cross(f, tab[s].node, cv[i].node);
                        break;
                    }
                    s = (s + 1) & mask;
                }
            }
        }
        big_free(tab);
    }
out:
    gr_free_kernel_lists(f);
    return rc;
}

/* Producers of a context become parents of all its consumers, unless both
 * sides hold 64 or more events (ConnectContextGroups). */
int gr_connect_contexts(struct forest *f)
{
    struct keyed *v = f->contexts.v;
    size_t n = f->contexts.n, i = 0, j, a, b;

    if (n > 1)
        xp_qsort(v, n, sizeof(*v), gr_keyed_cmp);
    while (i < n) {
        size_t nprod = 0, ncons = 0;
        for (j = i; j < n && v[j].k1 == v[i].k1 && v[j].k2 == v[i].k2 && v[j].k3 == v[i].k3 &&
                    (v[j].tag & 1) == (v[i].tag & 1);
             j++) {
            if (v[j].tag & 2)
                ncons++;
            else
                nprod++;
        }
        if (!(nprod >= 64 && ncons >= 64)) {
            for (a = i; a < j; a++) {
                if (v[a].tag & 2)
                    continue;
                for (b = i; b < j; b++) {
                    if ((v[b].tag & 2) && gr_add_cross(f, v[a].node, v[b].node) != 0)
                        return -ENOMEM;
                }
            }
        }
        i = j;
    }
    return 0;
}

/* Stable LSD radix sort of edges by child (by_child = 1) or parent, 16 bits
 * a pass; tmp holds n edges. The result ends in v. */
static int radix_edges(struct edge *v, struct edge *tmp, size_t n, int by_child)
{
    size_t *count = malloc(65536 * sizeof(size_t));
    int pass;

    if (count == NULL)
        return -ENOMEM;
    for (pass = 0; pass < 2; pass++) {
        int sh = pass * 16;
        size_t i, sum = 0;
        struct edge *src = pass == 0 ? v : tmp, *dst = pass == 0 ? tmp : v;
        memset(count, 0, 65536 * sizeof(size_t));
        for (i = 0; i < n; i++)
            count[((by_child ? src[i].child : src[i].parent) >> sh) & 0xffff]++;
        for (i = 0; i < 65536; i++) {
            size_t c = count[i];
            count[i] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++)
            dst[count[((by_child ? src[i].child : src[i].parent) >> sh) & 0xffff]++] = src[i];
    }
    free(count);
    return 0;
}

/* The cross edges sorted by child and by parent, and the node flags. */
int gr_sort_cross(struct forest *f)
{
    size_t m = f->cross.n, i;
    struct edge *tmp;

    if (m == 0)
        return 0;
    f->by_child = f->cross.v;
    f->cross.v = NULL;
    f->cross.n = f->cross.cap = 0;
    f->by_parent = big_malloc(m * sizeof(struct edge));
    tmp = big_malloc(m * sizeof(struct edge));
    f->cross.n = m; /* by_child still holds them for forest_free */
    if (f->by_parent == NULL || tmp == NULL) {
        big_free(tmp);
        return -ENOMEM;
    }
    for (i = 0; i < m; i++) {
        f->flags[f->by_child[i].child] |= NF_XPARENT;
        f->flags[f->by_child[i].parent] |= NF_XCHILD;
    }
    memcpy(f->by_parent, f->by_child, m * sizeof(struct edge));
    if (radix_edges(f->by_child, tmp, m, 1) != 0 || radix_edges(f->by_parent, tmp, m, 0) != 0) {
        big_free(tmp);
        return -ENOMEM;
    }
    big_free(tmp);
    return 0;
}
