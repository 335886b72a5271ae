/*
 * group_forest.c - the event forest's small shared pieces: growable arrays,
 * where a node sits (plane, line, event), its span and stats, and the orders
 * the passes sort by.
 */
#include "group_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void gr_vec_free(struct vec *a)
{
    big_free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* Append src's elements to dst (same element size) and free src. */
int gr_vec_append(struct vec *dst, struct vec *src)
{
    if (src->n == 0) {
        gr_vec_free(src);
        return 0;
    }
    if (dst->n == 0 && dst->cap == 0) {
        *dst = *src;
        memset(src, 0, sizeof(*src));
        src->size = dst->size;
        return 0;
    }
    if (dst->n + src->n > dst->cap) {
        size_t cap = dst->n + src->n;
        void *v = big_realloc(dst->v, cap * dst->size);
        if (v == NULL)
            return -ENOMEM;
        dst->v = v;
        dst->cap = cap;
    }
    memcpy((char *)dst->v + dst->n * dst->size, src->v, src->n * src->size);
    dst->n += src->n;
    gr_vec_free(src);
    return 0;
}

uint32_t gr_node_line(const struct forest *f, uint32_t node)
{
    uint32_t lo = 0, hi = f->nlines;

    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->line_base[mid] <= node)
            lo = mid;
        else
            hi = mid;
    }
    /* skip empty lines that share the base */
    while (lo + 1 < f->nlines && f->line_base[lo + 1] <= node)
        lo++;
    return lo;
}

/* Where node sits: plane, line and event. */
void gr_node_where(const struct forest *f, uint32_t node, uint32_t *p, uint32_t *l, uint32_t *e)
{
    uint32_t lo = gr_node_line(f, node);

    *p = f->line_plane[lo];
    *l = f->line_index[lo];
    *e = node - f->line_base[lo];
}

void gr_node_span(const struct forest *f, uint32_t node, int64_t *begin, int64_t *dur)
{
    uint32_t p, l, e;
    const struct xp_line *ln;

    gr_node_where(f, node, &p, &l, &e);
    ln = &f->xs->planes[p].lines[l];
    *begin = xp_event_start_ps(ln, &ln->events[e]);
    *dur = ln->events[e].duration_ps;
}

int gr_node_stat(const struct forest *f, uint32_t node, enum xp_stat_type t, struct xp_stat *st)
{
    uint32_t p, l, e;
    const struct xp_plane *pl;

    gr_node_where(f, node, &p, &l, &e);
    pl = &f->xs->planes[p];
    return xp_event_own_stat(pl, &pl->lines[l], &pl->lines[l].events[e], pl->stat_id[t], st);
}

int gr_keyed_cmp(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;

    if (x->k1 != y->k1)
        return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2 ? -1 : 1;
    if (x->k3 != y->k3)
        return x->k3 < y->k3 ? -1 : 1;
    if ((x->tag & 1) != (y->tag & 1)) /* pid flag groups apart */
        return (x->tag & 1) < (y->tag & 1) ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int gr_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}
