/*
 * gpu_timeline.c - TraceLens's GPU timeline metrics per device (see
 * gpu_timeline.h), computed once per snapshot and host from the host's
 * source: its .xplane.pb (gt_xspace.c), else its PyTorch trace
 * (gt_pt_trace.c) or JAX Chrome trace (gt_jax_trace.c).
 */
#include "gpu_timeline.h"
#include "gt_int.h"
#include "session/session.h"

static int build_host(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct gt_host *g = NULL;
    int rc;

    if (snapshot_host_file(snap, host, SRC_XPLANE) != NULL) {
        struct xspace *xs;
        rc = snapshot_xspace_decoded(snap, host, &xs, err);
        if (rc == 0)
            rc = gt_from_xspace(xs, &g, err);
    } else {
        const struct ctrace *ct;
        rc = snapshot_ctrace(snap, host, &ct, err);
        if (rc == 0) {
            if (snapshot_host_file(snap, host, SRC_PT_TRACE) != NULL)
                rc = gt_from_pt_trace(ct, &g, err);
            else
                rc = gt_from_jax_trace(ct, &g, err);
        }
    }
    if (rc != 0)
        return rc;
    *value = g;
    return 0;
}

static const struct snapshot_part gpu_timeline_part = {"gpu_timeline", build_host, gt_host_free};

int snapshot_gpu_timeline(struct snapshot *snap, const char *host, const struct gt_host **gp,
                          struct xp_err *err)
{
    void *v;
    int rc;

    rc = snapshot_part(snap, &gpu_timeline_part, host, NULL, host, &v, err);
    *gp = rc == 0 ? v : NULL;
    return rc;
}
