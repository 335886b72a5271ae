/*
 * gpu_timeline.c - TraceLens's GPU timeline metrics per device (see
 * gpu_timeline.h), computed once per snapshot and host from the host's
 * source: its .xplane.pb (gt_xspace.c), else its PyTorch trace
 * (gt_pt_trace.c) or JAX Chrome trace (gt_jax_trace.c). With a persistent
 * cache (store.h) a host's metrics are kept there too, so the all-hosts
 * files of a new process read them instead of the host's profile.
 *
 * Entry payload (native byte order): "GTHOST01", u32 GT_NMETRICS, u32
 * pytorch, u32 devices, then per device i64 gpu_pid, u32 name length and
 * bytes, u64 events, GT_NMETRICS doubles. A host without GPU events has
 * the 8 bytes "GTNONE01" alone: it gives the same error without a read.
 */
#include "gpu_timeline.h"
#include "gt_int.h"
#include "session/session.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GT_PERSIST_MAGIC "GTHOST01"

static void save(const struct gt_host *g, struct out *o)
{
    uint32_t u[3] = {GT_NMETRICS, (uint32_t)g->pytorch, g->ndevices};

    out_write(o, GT_PERSIST_MAGIC, 8);
    out_write(o, u, sizeof(u));
    for (uint32_t i = 0; i < g->ndevices; i++) {
        const struct gt_device *d = &g->devices[i];
        uint32_t n = d->name ? (uint32_t)strlen(d->name) : 0;
        out_write(o, &d->gpu_pid, sizeof(d->gpu_pid));
        out_write(o, &n, sizeof(n));
        out_write(o, d->name, n);
        out_write(o, &d->nevents, sizeof(d->nevents));
        out_write(o, d->metric, sizeof(d->metric));
    }
}

/* Take n bytes at *p (left bytes remain) into dst; -1 when too few. */
static int take(const char **p, size_t *left, void *dst, size_t n)
{
    if (*left < n)
        return -1;
    memcpy(dst, *p, n);
    *p += n;
    *left -= n;
    return 0;
}

/* The timeline save wrote to p[0..n), or NULL (not such bytes, no memory). */
static struct gt_host *load(const char *p, size_t n)
{
    struct gt_host *g = calloc(1, sizeof(*g));
    uint32_t u[3];
    char magic[8];

    if (g == NULL || take(&p, &n, magic, 8) != 0 || memcmp(magic, GT_PERSIST_MAGIC, 8) != 0 ||
        take(&p, &n, u, sizeof(u)) != 0 || u[0] != GT_NMETRICS || u[2] > n / 24) {
        free(g);
        return NULL;
    }
    g->pytorch = (int)u[1];
    g->devices = calloc(u[2] ? u[2] : 1, sizeof(*g->devices));
    if (g->devices == NULL) {
        free(g);
        return NULL;
    }
    for (uint32_t i = 0; i < u[2]; i++) {
        struct gt_device *d = &g->devices[i];
        uint32_t len;
        g->ndevices = i + 1;
        if (take(&p, &n, &d->gpu_pid, sizeof(d->gpu_pid)) != 0 ||
            take(&p, &n, &len, sizeof(len)) != 0 || len > n ||
            (d->name = malloc(len + 1)) == NULL || take(&p, &n, d->name, len) != 0 ||
            take(&p, &n, &d->nevents, sizeof(d->nevents)) != 0 ||
            take(&p, &n, d->metric, sizeof(d->metric)) != 0) {
            gt_host_free(g);
            return NULL;
        }
        d->name[len] = '\0';
    }
    if (n != 0) {
        gt_host_free(g);
        return NULL;
    }
    return g;
}

/* The entry of a host without GPU events, and the error it gives. */
#define GT_NONE_MAGIC "GTNONE01"
#define GT_NONE_MSG "no GPU events found in the trace"

static int is_none(const char *p, size_t n)
{
    return n == 8 && memcmp(p, GT_NONE_MAGIC, 8) == 0;
}

static int build_host(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    struct gt_host *g = NULL;
    struct store *st = store_shared();
    char *key = st != NULL ? snapshot_intermediate_key(snap, "gpu_timeline", host) : NULL;
    int rc, conv_rc = 0;

    if (key != NULL) {
        struct blob *b = store_get(st, key);
        int none = b != NULL && is_none(b->mem, b->size);
        if (b != NULL && !none)
            g = load(b->mem, b->size);
        blob_unref(b);
        if (g != NULL || none) {
            free(key);
            if (none)
                return xp_err_set(err, -ENOENT, "%s", GT_NONE_MSG);
            *value = g;
            return 0;
        }
    }
    if (snapshot_host_file(snap, host, SRC_XPLANE) != NULL) {
        struct xspace *xs;
        rc = snapshot_xspace_decoded(snap, host, &xs, err);
        if (rc == 0)
            rc = conv_rc = gt_from_xspace(xs, &g, err);
    } else {
        const struct ctrace *ct;
        rc = snapshot_ctrace(snap, host, &ct, err);
        if (rc == 0) {
            if (snapshot_host_file(snap, host, SRC_PT_TRACE) != NULL)
                rc = conv_rc = gt_from_pt_trace(ct, &g, err);
            else
                rc = conv_rc = gt_from_jax_trace(ct, &g, err);
        }
    }
    /* A host without GPU events is kept as such: its answer is known too. */
    int no_gpu = conv_rc == -ENOENT && err != NULL && strcmp(err->msg, GT_NONE_MSG) == 0;
    if ((rc == 0 || no_gpu) && key != NULL && !snapshot_is_fresh(snap, 2)) {
        struct xp_err serr = {0};
        struct blob *b;
        struct out o;
        out_init(&o);
        if (no_gpu)
            out_write(&o, GT_NONE_MAGIC, 8);
        else
            save(g, &o);
        if (out_finish(&o, &b) == 0) {
            (void)store_put_blob(st, key, b, &serr);
            blob_unref(b);
        }
    }
    free(key);
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
