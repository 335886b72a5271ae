/*
 * group_search.c - walks over the event forest: breadth-first searches up
 * the parents (an ancestor of a type or root level, a context stat) and the
 * downward propagation of a group id (PropagateGroupId).
 */
#include "group_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Root level of a root node (callers check NF_ROOT first). */
static int32_t root_level(const struct forest *f, uint32_t node)
{
    const struct root_node *r = f->roots.v;
    size_t lo = 0, hi = f->roots.n;

    if (!(f->flags[node] & NF_ROOT))
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->roots.n && r[lo].node == node ? r[lo].level : 0;
}

/* First index in a sorted edge array whose key (child or parent) >= node. */
static size_t edge_lower(const struct edge *v, size_t m, int by_child, uint32_t node)
{
    size_t lo = 0, hi = m;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((by_child ? v[mid].child : v[mid].parent) < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Start an upward search: an empty visited set. */
static int vis_start(struct forest *f)
{
    if (f->vis_cap == 0) {
        f->vis_cap = 64;
        f->vis_key = calloc(f->vis_cap, sizeof(uint32_t));
        f->vis_gen = calloc(f->vis_cap, sizeof(uint32_t));
        if (f->vis_key == NULL || f->vis_gen == NULL)
            return -ENOMEM;
    }
    if (++f->vis_stamp == 0) {
        memset(f->vis_gen, 0, f->vis_cap * sizeof(uint32_t));
        f->vis_stamp = 1;
    }
    f->queue.n = 0;
    f->vis_self = NO_NODE;
    return 0;
}

static int vis_insert_slot(struct forest *f, uint32_t node)
{
    uint32_t mask = f->vis_cap - 1, s = (uint32_t)((node * 0x9e3779b9u) >> 7) & mask;

    while (f->vis_gen[s] == f->vis_stamp) {
        if (f->vis_key[s] == node)
            return 0;
        s = (s + 1) & mask;
    }
    f->vis_gen[s] = f->vis_stamp;
    f->vis_key[s] = node;
    return 1;
}

/* Mark node visited and queue it; 0 if it was already visited. */
static int vis_add(struct forest *f, uint32_t node, int *rc)
{
    uint32_t *q;

    if ((f->queue.n + 2) * 2 > f->vis_cap) {
        /* grow: every visited node is in the queue */
        uint32_t cap = f->vis_cap * 2;
        uint32_t *k = calloc(cap, sizeof(uint32_t)), *g = calloc(cap, sizeof(uint32_t));
        size_t i;
        if (k == NULL || g == NULL) {
            free(k);
            free(g);
            *rc = -ENOMEM;
            return 0;
        }
        free(f->vis_key);
        free(f->vis_gen);
        f->vis_key = k;
        f->vis_gen = g;
        f->vis_cap = cap;
        f->vis_stamp = 1;
        if (f->vis_self != NO_NODE)
            vis_insert_slot(f, f->vis_self);
        for (i = 0; i < f->queue.n; i++)
            vis_insert_slot(f, ((uint32_t *)f->queue.v)[i]);
    }
    if (!vis_insert_slot(f, node))
        return 0;
    q = gr_vec_push(&f->queue);
    if (q == NULL) {
        *rc = -ENOMEM;
        return 0;
    }
    *q = node;
    return 1;
}

/* Queue the parents of x (nesting parent first, then the cross links in
 * edge order) that were not visited yet. */
static void add_parents(struct forest *f, uint32_t x, int *rc)
{
    if (f->nest_parent[x] != NO_NODE)
        vis_add(f, f->nest_parent[x], rc);
    if (f->flags[x] & NF_XPARENT) {
        size_t i = edge_lower(f->by_child, f->cross.n, 1, x);
        for (; i < f->cross.n && f->by_child[i].child == x && *rc == 0; i++)
            vis_add(f, f->by_child[i].parent, rc);
    }
}

/* Breadth-first search over parents from node (itself included when
 * include_self) for the first node that has `want_type`, or whose root level
 * equals `level` (when want_type < 0). Returns the node or NO_NODE; *rc is
 * set on allocation failure. */
uint32_t gr_find_ancestor(struct forest *f, uint32_t node, int include_self, int want_type,
                          int32_t level, int *rc)
{
    size_t head = 0;

    if ((*rc = vis_start(f)) != 0)
        return NO_NODE;
    if (include_self) {
        vis_add(f, node, rc);
    } else {
        vis_insert_slot(f, node);
        f->vis_self = node;
        add_parents(f, node, rc);
    }
    while (head < f->queue.n && *rc == 0) {
        uint32_t x = ((uint32_t *)f->queue.v)[head++];
        if (want_type >= 0 ? f->type[x] == want_type
                           : (f->flags[x] & NF_ROOT) && root_level(f, x) == level)
            return x;
        add_parents(f, x, rc);
    }
    return NO_NODE;
}

/* GetContextStat: the stat on node or its nearest ancestor (BFS). */
int gr_context_stat(struct forest *f, uint32_t node, enum xp_stat_type t, struct xp_stat *st,
                    int *rc)
{
    size_t head = 0;

    if ((*rc = vis_start(f)) != 0)
        return 0;
    vis_add(f, node, rc);
    while (head < f->queue.n && *rc == 0) {
        uint32_t x = ((uint32_t *)f->queue.v)[head++];
        if (gr_node_stat(f, x, t, st))
            return 1;
        add_parents(f, x, rc);
    }
    return 0;
}

/* The end (exclusive) of the line holding node. */
static uint32_t line_end(const struct forest *f, uint32_t node)
{
    return f->line_base[gr_node_line(f, node) + 1];
}

/* A node of group `met` reached by the propagation of g: g becomes a parent
 * of met in the group metadata. */
static int meet(struct forest *f, int32_t g, int32_t met)
{
    struct group_link *k;

    if (met == g)
        return 0;
    if ((k = gr_vec_push(&f->links)) == NULL)
        return -ENOMEM;
    k->parent = g;
    k->child = met;
    return 0;
}

/* PropagateGroupId: every node reachable from root through nodes not yet
 * grouped gets g; the groups met at grouped nodes are recorded as its
 * children (meet). Nesting subtrees are walked as ranges (a grouped node's
 * subtree is skipped whole); cross links go through a queue of nodes. */
int gr_propagate(struct forest *f, uint32_t root, int32_t g)
{
    struct vec *q = &f->queue;
    size_t head = 0;

    if (f->gid[root] >= 0)
        return 0;
    f->gid[root] = g;
    q->n = 0;
    {
        uint32_t *r = gr_vec_push(q);
        if (r == NULL)
            return -ENOMEM;
        *r = root;
    }
    while (head < q->n) {
        uint32_t x = ((uint32_t *)q->v)[head++], i, end = line_end(f, x);
        size_t next_edge = f->cross.n; /* by_parent index after the last node's edges */
        /* the nesting subtree of x */
        for (i = x + 1; i < end;) {
            if (f->flags[i] & NF_ASYNC) {
                i++;
                continue;
            }
            if (f->nest_parent[i] == NO_NODE || f->nest_parent[i] < x)
                break; /* past the subtree */
            if (f->gid[i] >= 0) {
                /* grouped already: skip its subtree */
                uint32_t y = i++;
                if (meet(f, g, f->gid[y]) != 0)
                    return -ENOMEM;
                while (i < end && ((f->flags[i] & NF_ASYNC) ||
                                   (f->nest_parent[i] != NO_NODE && f->nest_parent[i] >= y)))
                    i++;
                continue;
            }
            f->gid[i] = g;
            if (f->flags[i] & NF_XCHILD) {
                /* its cross children: queue them (its subtree is walked here);
                 * the walk goes up in node order, so the edges are found
                 * from where the last node's ended */
                size_t k = next_edge;
                if (k >= f->cross.n || f->by_parent[k].parent > i ||
                    (k + 8 < f->cross.n && f->by_parent[k + 8].parent < i))
                    k = edge_lower(f->by_parent, f->cross.n, 0, i);
                else
                    while (k < f->cross.n && f->by_parent[k].parent < i)
                        k++;
                for (; k < f->cross.n && f->by_parent[k].parent == i; k++) {
                    uint32_t c = f->by_parent[k].child, *r;
                    if (f->gid[c] >= 0) {
                        if (meet(f, g, f->gid[c]) != 0)
                            return -ENOMEM;
                        continue;
                    }
                    f->gid[c] = g;
                    if ((r = gr_vec_push(q)) == NULL)
                        return -ENOMEM;
                    *r = c;
                }
                next_edge = k;
            }
            i++;
        }
        if (f->flags[x] & NF_XCHILD) {
            size_t k = edge_lower(f->by_parent, f->cross.n, 0, x);
            for (; k < f->cross.n && f->by_parent[k].parent == x; k++) {
                uint32_t c = f->by_parent[k].child, *r;
                if (f->gid[c] >= 0) {
                    if (meet(f, g, f->gid[c]) != 0)
                        return -ENOMEM;
                    continue;
                }
                f->gid[c] = g;
                if ((r = gr_vec_push(q)) == NULL)
                    return -ENOMEM;
                *r = c;
            }
        }
    }
    return 0;
}
