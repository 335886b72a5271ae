/*
 * snapshot_profiles.c - the opened profiles of a snapshot, one per host and
 * reader: the xplane reader's indexed (and decoded) XSpace and the
 * Chrome-trace reader's event model, each a part (session.h) built on first
 * need, its failure logged to errors.txt.
 */
#include <errno.h>

#include "reader/ctrace.h"
#include "reader/xspace.h"
#include "session.h"

static uint64_t profiles_opened; /* atomic adds */

uint64_t snapshot_profiles_opened(void)
{
    return __atomic_load_n(&profiles_opened, __ATOMIC_RELAXED);
}

/* ---- xplane ---------------------------------------------------------------- */

static int build_xspace(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    const struct source_file *f = snapshot_host_file(snap, host, SRC_XPLANE);
    struct xspace *xs;
    int rc;

    if (f == NULL)
        return xp_err_set(err, -ENOENT, "no xplane file for host %s", host);
    __atomic_add_fetch(&profiles_opened, 1, __ATOMIC_RELAXED);
    rc = xspace_open(f->path, &xs, err);
    if (rc != 0) {
        snapshot_log(snap, "%s", err->msg);
        return rc;
    }
    *value = xs;
    return 0;
}

static void free_xspace(void *v)
{
    xspace_close(v);
}

static const struct snapshot_part xspace_part = {"xspace", build_xspace, free_xspace};

static int cut_short(void *value, void *err)
{
    return xspace_cut_short(value, err);
}

int snapshot_sources_cut(struct snapshot *snap, struct xp_err *err)
{
    return snapshot_part_each(snap, &xspace_part, cut_short, err);
}

int snapshot_xspace(struct snapshot *snap, const char *host, struct xspace **xsp,
                    struct xp_err *err)
{
    void *v;
    int rc = snapshot_part(snap, &xspace_part, host, NULL, host, &v, err);

    *xsp = rc == 0 ? v : NULL;
    return rc;
}

int snapshot_xspace_decoded(struct snapshot *snap, const char *host, struct xspace **xsp,
                            struct xp_err *err)
{
    int rc = snapshot_xspace(snap, host, xsp, err);

    if (rc == 0) {
        rc = xspace_decode(*xsp, 0, err);
        if (rc != 0) {
            snapshot_log(snap, "%s", err->msg);
            *xsp = NULL;
        }
    }
    return rc;
}

/* ---- Chrome-trace JSON ------------------------------------------------------ */

static int build_ctrace(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    const struct source_file *f = snapshot_host_file(snap, host, SRC_PT_TRACE);
    struct ctrace *ct;
    int rc;

    if (f == NULL)
        f = snapshot_host_file(snap, host, SRC_TRACE_JSON);
    if (f == NULL)
        return xp_err_set(err, -ENOENT, "%s: no trace JSON", host);
    __atomic_add_fetch(&profiles_opened, 1, __ATOMIC_RELAXED);
    rc = ctrace_load(f->path, &ct, err);
    if (rc != 0) {
        snapshot_log(snap, "%s", err->msg);
        return rc;
    }
    *value = ct;
    return 0;
}

static void free_ctrace(void *value)
{
    ctrace_free(value);
}

static const struct snapshot_part ctrace_part = {"ctrace", build_ctrace, free_ctrace};

int snapshot_ctrace(struct snapshot *snap, const char *host, const struct ctrace **ctp,
                    struct xp_err *err)
{
    void *v;
    int rc = snapshot_part(snap, &ctrace_part, host, NULL, host, &v, err);

    *ctp = rc == 0 ? v : NULL;
    return rc;
}
