/*
 * jax_launchers.c - the visit of a JAX/XLA run's GPU kernels (see
 * jax_launchers.h): host by host, the launches by correlation id when the
 * latency is asked for (jax_launches.c), then the kernels in trace order
 * from the xspace (jax_kernels_xspace.c) or the JAX Chrome trace
 * (jax_kernels_json.c), each handed to the caller with its latency; with
 * a persistent cache, each host's kernels as kept there
 * (jax_kernels_cache.c).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "jax_launchers_int.h"
#include "store/store.h"

/* Whether s[0..n) needs no CSV quoting. */
int jax_csv_plain(const char *s, size_t n)
{
    return memchr(s, ',', n) == NULL && memchr(s, '"', n) == NULL && memchr(s, '\n', n) == NULL &&
           memchr(s, '\r', n) == NULL;
}

/* Count k, fill its launch latency when asked, hand it to the caller. */
int jax_emit(struct jax_visit_state *v, struct jax_kernel *k)
{
    v->count++;
    k->launch_latency = NAN;
    if (v->want_latency && k->corr != CT_NONE)
        k->launch_latency = k->ts - jax_launch_ts(&v->launches, k->corr);
    return v->fn(v->arg, k);
}

/* One host's launches when asked, then its kernels, as host index i.
 * Hosts with a PyTorch trace (and without a profile) are left out. */
int jax_visit_host(struct snapshot *snap, const char *host, int i, struct jax_visit_state *v,
                   struct xp_err *err)
{
    int rc = 0;

    memset(&v->launches, 0, sizeof(v->launches));
    if (snapshot_host_file(snap, host, SRC_XPLANE) != NULL) {
        struct xspace *xs;
        if ((rc = snapshot_xspace_decoded(snap, host, &xs, err)) != 0)
            return rc;
        if (v->want_latency)
            rc = jax_xspace_launches(xs, &v->launches);
        if (rc == 0)
            rc = jax_visit_xspace(xs, i, v);
    } else if (snapshot_host_file(snap, host, SRC_TRACE_JSON) != NULL &&
               snapshot_host_file(snap, host, SRC_PT_TRACE) == NULL) {
        const struct ctrace *ct;
        if ((rc = snapshot_ctrace(snap, host, &ct, err)) != 0)
            return rc;
        if (v->want_latency)
            rc = jax_json_launches(ct, &v->launches);
        if (rc == 0)
            rc = jax_visit_json(ct, i, v);
    }
    jax_launches_free(&v->launches);
    if (rc == -ENOMEM)
        return xp_err_set(err, rc, "out of memory");
    return rc;
}

/* Every covered host: from the persistent cache's copy of its kernels
 * when there is a cache (jax_kernels_cache.c), else from its profile. */
int jax_visit(const struct host_list *hl, int want_latency, int want_category, jax_kernel_fn fn,
              void *arg, struct xp_err *err)
{
    struct jax_visit_state v;
    int i, rc = 0;

    memset(&v, 0, sizeof(v));
    v.fn = fn;
    v.arg = arg;
    v.want_latency = want_latency;
    v.want_category = want_category;
    for (i = 0; i < hl->n && rc == 0; i++) {
        if (store_shared() != NULL)
            rc = jax_visit_cached(hl->snap, hl->names[i], i, &v, err);
        else
            rc = jax_visit_host(hl->snap, hl->names[i], i, &v, err);
    }
    if (rc == 0 && v.count == 0)
        return xp_err_set(err, -ENOENT, "no GPU kernels found (JAX/XLA profiles only)");
    return rc;
}
