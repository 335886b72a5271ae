/*
 * gt_devices.c - the devices of a host's GPU timeline: growable interval
 * lists per device that the sources fill, their order (the iteration order
 * of a CPython set of pids, gt_pyset_order), and the finished host with the
 * metrics of each device.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "gt_int.h"
#include "pt_pyset.h"

size_t gt_pyset_order(const int64_t *v, size_t n, int64_t *out)
{
    struct pt_pyset s;
    size_t i, m = 0;

    if (pt_pyset_init(&s) != 0)
        goto fallback;
    for (i = 0; i < n; i++) {
        if (pt_pyset_add(&s, v[i]) != 0)
            goto fallback;
    }
    m = pt_pyset_items(&s, out);
    pt_pyset_free(&s);
    return m;
fallback: /* out of memory: first-seen order */
    pt_pyset_free(&s);
    for (i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < m && out[k] != v[i]; k++)
            ;
        if (k == m)
            out[m++] = v[i];
    }
    return m;
}

int gt_acc_reserve(struct gt_acc *a, enum gt_class c, size_t n)
{
    struct gt_interval *v;

    if (a->n[c] + n <= a->cap[c])
        return 0;
    v = realloc(a->v[c], (a->n[c] + n) * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    a->v[c] = v;
    a->cap[c] = a->n[c] + n;
    return 0;
}

int gt_acc_add(struct gt_acc *a, enum gt_class c, double ts, double dur)
{
    if (a->n[c] == a->cap[c]) {
        size_t cap = a->cap[c] ? a->cap[c] * 2 : 256;
        struct gt_interval *v = realloc(a->v[c], cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        a->v[c] = v;
        a->cap[c] = cap;
    }
    a->v[c][a->n[c]].start = ts;
    a->v[c][a->n[c]].end = ts + dur;
    a->n[c]++;
    a->nevents++;
    return 0;
}

void gt_acc_free(struct gt_acc *a)
{
    int k;

    for (k = 0; k < 3; k++)
        free(a->v[k]);
    free(a->name);
}

void gt_host_free(void *value)
{
    struct gt_host *g = value;
    uint32_t i;

    if (g == NULL)
        return;
    for (i = 0; i < g->ndevices; i++)
        free(g->devices[i].name);
    free(g->devices);
    free(g);
}

int gt_host_finish(struct gt_acc *acc, size_t nacc, int pytorch, struct gt_host **gp,
                   struct xp_err *err)
{
    struct gt_host *g = calloc(1, sizeof(*g));
    size_t i;
    int rc;

    if (g == NULL || (g->devices = calloc(nacc ? nacc : 1, sizeof(*g->devices))) == NULL) {
        free(g);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    g->pytorch = pytorch;
    for (i = 0; i < nacc; i++) {
        struct gt_device *d = &g->devices[g->ndevices];
        if (acc[i].nevents == 0)
            continue;
        rc = gt_metrics(acc[i].v, acc[i].n, d->metric);
        if (rc != 0) {
            gt_host_free(g);
            return xp_err_set(err, rc, "out of memory");
        }
        d->gpu_pid = acc[i].pid;
        d->nevents = acc[i].nevents;
        d->name = acc[i].name;
        acc[i].name = NULL;
        g->ndevices++;
    }
    if (g->ndevices == 0) {
        gt_host_free(g);
        return xp_err_set(err, -ENOENT, "no GPU events found in the trace");
    }
    *gp = g;
    return 0;
}

int gt_acc_order(struct gt_acc *acc, size_t nacc, const int64_t *seen, size_t nseen)
{
    int64_t *ord = malloc((nseen ? nseen : 1) * sizeof(*ord));
    struct gt_acc *copy = malloc((nacc ? nacc : 1) * sizeof(*copy));
    size_t m, i, k, w = 0;

    if (ord == NULL || copy == NULL) {
        free(ord);
        free(copy);
        return -ENOMEM;
    }
    m = gt_pyset_order(seen, nseen, ord);
    memcpy(copy, acc, nacc * sizeof(*acc));
    for (i = 0; i < m; i++) {
        for (k = 0; k < nacc; k++) {
            if (copy[k].pid == ord[i] && copy[k].name != NULL) {
                acc[w++] = copy[k];
                copy[k].name = NULL;
                break;
            }
        }
    }
    for (k = 0; k < nacc; k++) {
        if (copy[k].name != NULL)
            acc[w++] = copy[k];
    }
    free(ord);
    free(copy);
    return 0;
}

int gt_devices_finish(struct gt_acc *acc, size_t nacc, int64_t *seen, size_t nseen, int rc,
                      struct gt_host **gp, struct xp_err *err)
{
    size_t i;

    if (rc == 0)
        rc = gt_acc_order(acc, nacc, seen, nseen);
    if (rc == 0)
        rc = gt_host_finish(acc, nacc, 0, gp, err);
    else
        xp_err_set(err, rc, "out of memory");
    for (i = 0; i < nacc; i++)
        gt_acc_free(&acc[i]);
    free(acc);
    free(seen);
    return rc;
}
