/*
 * op_stats_build.c - ConvertXSpaceToOpStats for one host, and the combined
 * op_stats of a run, as snapshot intermediates (see op_stats.h).
 *
 * Per host: grouping (snapshot_groups), the HLO map, then per GPU plane the
 * device op metrics / step events / kernel reports, the host plane, the
 * step db. The combined op_stats of a single-host run is that host's own.
 * Strings of a combined op_stats may point into the per-host op_stats it
 * was made from: all are intermediates of the same snapshot and go together.
 */
#include "op_stats_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbg_timer.h"

void op_stats_free(struct op_stats *os)
{
    if (os == NULL)
        return;
    op_db_free(&os->device_db);
    op_db_free(&os->host_db);
    free(os->steps);
    free(os->kernels);
    arena_free(&os->arena);
    free(os);
}

static struct op_stats *op_stats_new(void)
{
    struct op_stats *os = calloc(1, sizeof(*os));

    if (os == NULL)
        return NULL;
    arena_init(&os->arena);
    op_db_init(&os->device_db);
    op_db_init(&os->host_db);
    os->device_type = "";
    return os;
}

/* ConvertXSpaceToOpStats (GPU / CPU; TPU device planes are not converted). */
static int convert_host(const struct xspace *xs, const struct xp_groups *groups,
                        struct op_stats **osp, struct xp_err *err)
{
    struct host_ctx ctx;
    struct hlo_map *hlo = NULL;
    struct step_events host_steps;
    struct op_stats *os = op_stats_new();
    uint32_t p;
    int rc, has_device = 0, host_plane = -1;

    *osp = NULL;
    memset(&ctx, 0, sizeof(ctx));
    memset(&host_steps, 0, sizeof(host_steps));
    if (os == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    double w0 = dbg_now(), c0 = dbg_cpu();
    if ((rc = hlo_map_build(xs, &hlo, err)) != 0) {
        op_stats_free(os);
        return rc;
    }
    ctx.xs = xs;
    ctx.groups = groups;
    ctx.hlo = hlo;
    ctx.os = os;
    DBG_T("o.hlo_map", w0, c0);
    if ((rc = op_stats_env(&ctx)) != 0)
        goto fail;
    DBG_T("o.env", w0, c0);
    if ((rc = step_events_init(&ctx.steps, groups->ngroups)) != 0)
        goto fail;
    for (p = 0; p < xs->nplanes; p++) {
        const char *name = xs->planes[p].name;
        if (strncmp(name, "/device:TPU:", 12) == 0 ||
            (os->hardware_type == HW_GPU && strncmp(name, "/device:GPU:", 12) == 0))
            has_device = 1;
        if (strcmp(name, "/host:CPU") == 0 && host_plane < 0)
            host_plane = (int)p;
    }
    if (os->hardware_type == HW_GPU) {
        for (p = 0; p < xs->nplanes; p++) {
            struct op_metrics_db db;
            if (strncmp(xs->planes[p].name, "/device:GPU:", 12) != 0)
                continue;
            op_db_init(&db);
            rc = op_stats_gpu_plane(&ctx, p, &db);
            if (rc == 0) {
                op_db_combine(&os->device_db, &os->arena, &db, 1);
                if (os->device_db.oom)
                    rc = -ENOMEM;
            }
            op_db_free(&db);
            if (rc != 0)
                goto fail;
        }
    }
    DBG_T("o.gpu_planes", w0, c0);
    if ((rc = kernel_map_to_db(&ctx.kernels, os)) != 0)
        goto fail;
    DBG_T("o.kernel_db", w0, c0);
    if (host_plane >= 0) {
        if ((rc = step_events_init(&host_steps, groups->ngroups)) != 0)
            goto fail;
        if ((rc = op_stats_host_plane(&ctx, (uint32_t)host_plane, has_device, &host_steps)) != 0)
            goto fail;
        if (!has_device && (rc = step_events_union(&ctx.steps, &host_steps)) != 0)
            goto fail;
    }
    DBG_T("o.host_plane", w0, c0);
    if ((rc = op_stats_step_db(os, &ctx.steps, has_device)) != 0)
        goto fail;
    DBG_T("o.step_db", w0, c0);
    step_events_free(&ctx.steps);
    step_events_free(&host_steps);
    kernel_map_free(&ctx.kernels);
    hlo_map_free(hlo);
    *osp = os;
    return 0;
fail:
    step_events_free(&ctx.steps);
    step_events_free(&host_steps);
    kernel_map_free(&ctx.kernels);
    hlo_map_free(hlo);
    op_stats_free(os);
    if (rc == -ENOMEM)
        return xp_err_set(err, rc, "%s: op_stats: out of memory", xs->path);
    return xp_err_set(err, rc, "%s: op_stats failed", xs->path);
}

static int build_host(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct xspace *xs;
    const struct xp_groups *groups;
    struct op_stats *os;
    int rc;

    double w0 = dbg_now(), c0 = dbg_cpu();
    if ((rc = snapshot_xspace_decoded(snap, host, &xs, err)) != 0)
        return rc;
    DBG_T("decode", w0, c0);
    if ((rc = snapshot_groups(snap, host, &groups, err)) != 0)
        return rc;
    rc = convert_host(xs, groups, &os, err);
    *value = os;
    return rc;
}

static void free_op_stats(void *value)
{
    op_stats_free(value);
}

/* The hosts of snap that have an xplane file, in host order. */
static uint32_t xplane_hosts(const struct snapshot *snap, const char **hosts)
{
    uint32_t i, n = 0;

    for (i = 0; i < snap->nhosts; i++) {
        if (snapshot_host_file(snap, snap->hosts[i], SRC_XPLANE) != NULL)
            hosts[n++] = snap->hosts[i];
    }
    return n;
}

static int build_all(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char **hosts = malloc((snap->nhosts ? snap->nhosts : 1) * sizeof(*hosts));
    const struct op_stats **parts;
    struct op_stats *os;
    uint32_t n, i;
    int rc;

    (void)arg;
    if (hosts == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    n = xplane_hosts(snap, hosts);
    parts = malloc((n ? n : 1) * sizeof(*parts));
    os = op_stats_new();
    if (parts == NULL || os == NULL) {
        free(hosts);
        free(parts);
        op_stats_free(os);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        if ((rc = snapshot_op_stats(snap, hosts[i], &parts[i], err)) != 0) {
            free(hosts);
            free(parts);
            op_stats_free(os);
            return rc;
        }
    }
    rc = op_stats_combine(os, parts, n);
    free(hosts);
    free(parts);
    if (rc != 0) {
        op_stats_free(os);
        return xp_err_set(err, rc, "combining op_stats: out of memory");
    }
    *value = os;
    return 0;
}

int snapshot_op_stats(struct snapshot *snap, const char *host, const struct op_stats **osp,
                      struct xp_err *err)
{
    char key[512];
    void *v;
    int rc;

    *osp = NULL;
    if (host == NULL) {
        const char **hosts = malloc((snap->nhosts ? snap->nhosts : 1) * sizeof(*hosts));
        uint32_t n;
        if (hosts == NULL)
            return xp_err_set(err, -ENOMEM, "out of memory");
        n = xplane_hosts(snap, hosts);
        if (n == 0) {
            free(hosts);
            return xp_err_set(err, -ENOENT, "no xplane profile in this run");
        }
        if (n == 1) {
            rc = snapshot_op_stats(snap, hosts[0], osp, err);
            free(hosts);
            return rc;
        }
        free(hosts);
        rc = snapshot_intermediate(snap, "op_stats:*", build_all, free_op_stats, NULL, &v, err);
    } else {
        if (snapshot_host_file(snap, host, SRC_XPLANE) == NULL)
            return xp_err_set(err, -ENOENT, "%s: no xplane profile for this host", host);
        snprintf(key, sizeof(key), "op_stats:%s", host);
        rc = snapshot_intermediate(snap, key, build_host, free_op_stats, host, &v, err);
    }
    if (rc == 0)
        *osp = v;
    return rc;
}
