/*
 * compare_run.c - the numbers of one side of a comparison (compare.h): its
 * steps and regions, ops, kernels and GPUs, from the parts its own files
 * are made of.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "op_stats/op_stats.h"
#include "xplane/steps.h"

int cmp_item_order(const struct cmp_item *a, const struct cmp_item *b)
{
    int c = strcmp(a->kind, b->kind);

    if (c == 0)
        c = strcmp(a->name, b->name);
    if (c == 0 && strcmp(a->kind, "kernel") == 0)
        c = strcmp(a->detail, b->detail);
    return c;
}

static int item_cmp(const void *pa, const void *pb)
{
    return cmp_item_order(pa, pb);
}

/* Sort v[0..*n) and add up the items of one key (an HLO op of the same
 * name in two modules, a kernel on two hosts). */
static void items_merge(struct cmp_item *v, size_t *n)
{
    size_t i, m = 0;

    if (*n == 0)
        return;
    qsort(v, *n, sizeof(*v), item_cmp);
    for (i = 1; i < *n; i++) {
        if (cmp_item_order(&v[m], &v[i]) == 0) {
            v[m].total_us += v[i].total_us;
            v[m].count += v[i].count;
        } else {
            v[++m] = v[i];
        }
    }
    *n = m + 1;
}

static int gather_steps(struct cmp_run *r)
{
    struct region_filter all = {NULL, 0, INT64_MAX};
    struct region_collect c;
    uint32_t h, s;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    for (h = 0; h < r->snap->nhosts && rc == 0; h++) {
        const char *host = r->snap->hosts[h];
        const struct xp_steps *m;
        struct xp_err err = {0};
        int64_t *v;
        if (snapshot_host_file(r->snap, host, SRC_XPLANE) == NULL &&
            snapshot_host_file(r->snap, host, SRC_TRACE_JSON) == NULL &&
            snapshot_host_file(r->snap, host, SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_steps(r->snap, host, NULL, &m, &err);
        if (rc != 0) {
            if (rc != -ENOMEM)
                run_warn(&r->warnings, "%s: steps of %s: %s", r->name, host, err.msg);
            rc = rc == -ENOMEM ? rc : 0;
            continue;
        }
        if (m->nsteps == 0)
            continue;
        if (r->step_name == NULL && m->nstep_names > 0)
            r->step_name = m->step_names[0];
        if (m->nsteps > r->steps_per_host)
            r->steps_per_host = m->nsteps;
        v = realloc(r->step_ps, (r->nsteps + m->nsteps) * sizeof(*v));
        if (v == NULL)
            rc = -ENOMEM;
        else
            r->step_ps = v;
        for (s = 0; s < m->nsteps && rc == 0; s++)
            r->step_ps[r->nsteps++] = m->rows[m->steps[s].row].dur_ps;
        if (rc == 0)
            rc = region_collect_model(&c, m, &all);
    }
    if (rc == 0)
        rc = region_stats_of(&c, &r->regions, &r->nregions);
    region_collect_free(&c);
    if (rc == 0) {
        int64_t *copy = malloc((r->nsteps + 1) * sizeof(*copy));
        if (copy == NULL)
            return -ENOMEM;
        if (r->nsteps > 0)
            memcpy(copy, r->step_ps, r->nsteps * sizeof(*copy));
        stat5_of(copy, r->nsteps, 1e6, &r->step_us);
        free(copy);
    }
    return rc;
}

/* Room for n more items in *v. */
static int items_grow(struct cmp_item **v, size_t used, size_t n)
{
    struct cmp_item *nv = realloc(*v, (used + n + 1) * sizeof(*nv));

    if (nv == NULL)
        return -ENOMEM;
    *v = nv;
    return 0;
}

static int gather_xplane(struct cmp_run *r)
{
    const struct op_stats *os;
    struct xp_err err = {0};
    uint32_t i, nk;
    int rc = snapshot_op_stats(r->snap, NULL, &os, &err);

    if (rc != 0) {
        if (rc != -ENOMEM)
            run_warn(&r->warnings, "%s: ops and kernels: %s", r->name, err.msg);
        return rc == -ENOMEM ? rc : 0;
    }
    r->device_type = os->device_type;
    if ((rc = run_fw_ops(os, &r->fw, &r->nfw)) != 0 ||
        (rc = run_xp_kernels(os, &r->xk, &nk)) != 0 ||
        (rc = items_grow(&r->ops, 0, os->device_db.nrows + r->nfw)) != 0 ||
        (rc = items_grow(&r->kernels, 0, nk)) != 0)
        return rc;
    for (i = 0; i < os->device_db.nrows; i++) {
        const struct op_metrics *m = &os->device_db.rows[i];
        if (op_is_idle(m))
            continue;
        r->ops[r->nops++] = (struct cmp_item){
            "hlo_op", m->name, m->category, (double)m->self_time_ps / 1e6, (double)m->occurrences};
    }
    for (i = 0; i < r->nfw; i++)
        r->ops[r->nops++] = (struct cmp_item){"framework_op", r->fw[i].name, r->fw[i].category,
                                              r->fw[i].self_us, (double)r->fw[i].occurrences};
    for (i = 0; i < nk; i++)
        r->kernels[r->nkernels++] =
            (struct cmp_item){"kernel", r->xk[i].name, r->xk[i].op ? r->xk[i].op : "",
                              r->xk[i].total_us, (double)r->xk[i].occurrences};
    return 0;
}

static int gather_pytorch(struct cmp_run *r)
{
    struct host_list hl = {r->snap, r->snap->hosts, (int)r->snap->nhosts};
    struct xp_err err = {0};
    size_t i, nk;
    int rc = pt_summary_build(&hl, PT_SUMMARY_BY_NAME, &r->pt_ops, &err);

    if (rc == -ENOMEM)
        return rc;
    if (rc != 0)
        run_warn(&r->warnings, "%s: CPU ops: %s", r->name, err.msg);
    rc = run_pt_kernels(r->snap, r->snap->hosts, (int)r->snap->nhosts, &r->ptk, &nk, &r->warnings);
    if (rc == 0)
        rc = items_grow(&r->ops, 0, r->pt_ops.n);
    if (rc == 0)
        rc = items_grow(&r->kernels, 0, nk);
    if (rc != 0)
        return rc;
    for (i = 0; i < r->pt_ops.n; i++) {
        const struct pt_summary_row *op = &r->pt_ops.rows[i];
        r->ops[r->nops++] =
            (struct cmp_item){"cpu_op", op->key, op->ncategories > 0 ? op->categories[0] : "",
                              op->direct_us, (double)op->count};
    }
    for (i = 0; i < nk; i++)
        r->kernels[r->nkernels++] = (struct cmp_item){
            "kernel", r->ptk[i].name, "", r->ptk[i].total_us, (double)r->ptk[i].occurrences};
    return 0;
}

int cmp_run_gather(struct snapshot *snap, struct cmp_run *r)
{
    int rc;

    memset(r, 0, sizeof(*r));
    r->snap = snap;
    r->name = snap->session->name;
    r->device_type = "";
    r->kind = snapshot_count(snap, SRC_XPLANE) > 0     ? "xplane"
              : snapshot_count(snap, SRC_PT_TRACE) > 0 ? "pytorch_trace"
                                                       : "chrome_trace";
    rc = gather_steps(r);
    r->per_step = r->steps_per_host > 0 ? r->steps_per_host : 1;
    if (rc == 0 && strcmp(r->kind, "xplane") == 0)
        rc = gather_xplane(r);
    else if (rc == 0 && strcmp(r->kind, "pytorch_trace") == 0)
        rc = gather_pytorch(r);
    if (rc == 0)
        rc = run_gpus(snap, snap->hosts, (int)snap->nhosts, &r->gpus, &r->ngpus, &r->warnings);
    if (rc == 0) {
        items_merge(r->ops, &r->nops);
        items_merge(r->kernels, &r->nkernels);
    }
    return rc;
}

void cmp_run_free(struct cmp_run *r)
{
    free(r->step_ps);
    free(r->regions);
    free(r->ops);
    free(r->kernels);
    free(r->gpus);
    run_fw_ops_free(r->fw, r->nfw);
    free(r->xk);
    free(r->ptk);
    pt_summary_release(&r->pt_ops);
    memset(r, 0, sizeof(*r));
}
