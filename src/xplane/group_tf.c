/*
 * group_tf.c - TensorFlow specifics of the grouping: the loops
 * (ProcessTensorFlowLoop), the tf.data step ids that are no steps, and the
 * eagerly executed ops (MarkEagerlyExecuted*).
 */
#include "group_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/sort.h"

int gr_is_tfdata_id(const struct forest *f, int64_t id)
{
    return f->tfdata_ids.n > 0 &&
           bsearch(&id, f->tfdata_ids.v, f->tfdata_ids.n, sizeof(int64_t), gr_cmp_i64) != NULL;
}

/* ProcessTensorFlowLoop: the first executor event of each iteration of a
 * real loop becomes a root and parents the iteration's other events. */
int gr_tf_loops(struct forest *f)
{
    struct keyed *v = f->executors.v;
    size_t n = f->executors.n, i = 0, j, k;
    struct vec firsts = {.size = sizeof(uint32_t)};
    int rc = 0;

    if (n > 1)
        xp_qsort(v, n, sizeof(*v), gr_keyed_cmp);
    while (i < n) {
        size_t loop_end = i, iters = 0;
        int only_zero;
        while (loop_end < n && v[loop_end].k1 == v[i].k1)
            loop_end++;
        for (j = i; j < loop_end; j = k) {
            for (k = j; k < loop_end && v[k].k2 == v[j].k2; k++)
                ;
            iters++;
        }
        only_zero = iters == 1 && v[i].k2 == 0;
        if (!gr_is_tfdata_id(f, (int64_t)v[i].k1) && !only_zero) {
            for (j = i; j < loop_end; j = k) {
                uint32_t first = v[j].node;
                int64_t fb, fd;
                gr_node_span(f, first, &fb, &fd);
                for (k = j; k < loop_end && v[k].k2 == v[j].k2; k++) {
                    int64_t b, d;
                    gr_node_span(f, v[k].node, &b, &d);
                    if (gr_span_less(b, d, fb, fd)) {
                        first = v[k].node;
                        fb = b;
                        fd = d;
                    }
                }
                for (k = j; k < loop_end && v[k].k2 == v[j].k2; k++) {
                    if (v[k].node != first && gr_add_cross(f, first, v[k].node) != 0) {
                        rc = -ENOMEM;
                        goto out;
                    }
                }
                {
                    uint32_t *r = gr_vec_push(&firsts);
                    if (r == NULL) {
                        rc = -ENOMEM;
                        goto out;
                    }
                    *r = first;
                }
            }
        }
        i = loop_end;
    }
    /* iterations in time order of their first events (insertion sort: few) */
    {
        uint32_t *r = firsts.v;
        for (i = 1; i < firsts.n; i++) {
            uint32_t x = r[i];
            int64_t xb, xd;
            gr_node_span(f, x, &xb, &xd);
            for (j = i; j > 0; j--) {
                int64_t yb, yd;
                gr_node_span(f, r[j - 1], &yb, &yd);
                if (!gr_span_less(xb, xd, yb, yd))
                    break;
                r[j] = r[j - 1];
            }
            r[j] = x;
        }
    }
    f->loop_roots = firsts;
    return 0;
out:
    gr_vec_free(&firsts);
    return rc;
}

/* MarkEagerlyExecuted*: kernels and TensorFlow ops under an EagerExecute
 * whose is_func is 0. */
int gr_mark_eager(struct forest *f)
{
    uint32_t i;
    int rc = 0;

    f->eager = big_calloc(f->n ? f->n : 1, 1);
    if (f->eager == NULL)
        return -ENOMEM;
    for (i = 0; i < f->n; i++) {
        uint32_t x, p, l, e;
        struct xp_stat st;
        const struct xp_plane *pl;
        int64_t id;
        if (f->type[i] != ET_KERNEL_EXECUTE && f->type[i] != ET_TFOP_RUN)
            continue;
        x = gr_find_ancestor(f, i, 1, ET_EAGER_EXECUTE, 0, &rc);
        if (rc != 0)
            return rc;
        if (x == NO_NODE)
            continue;
        gr_node_where(f, x, &p, &l, &e);
        pl = &f->xs->planes[p];
        id = xp_plane_stat_id_by_name(pl, "is_func");
        if (xp_event_own_stat(pl, &pl->lines[l], &pl->lines[l].events[e], id, &st) &&
            xp_stat_int(&st) == 0)
            f->eager[i] = 1;
    }
    return 0;
}
