/*
 * vfs_remote.c - a vfs over a LOGDIR or over a remote store's URL
 * (s3://, gs://): the store's copy (src/remote/mirror.h) is the LOGDIR, and
 * its fetch and refresh the catalog's source hook.
 */
#include "remote/mirror.h"
#include "vfs.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>

static const char *env_or(const char *given, const char *name)
{
    const char *v = getenv(name);
    return given != NULL ? given : (v != NULL && v[0] != '\0' ? v : NULL);
}

int vfs_open_mirror(const char *url, const struct mirror_opts *mo, struct mirror **mp,
                    struct xp_err *err)
{
    struct mirror_opts o = {0};

    *mp = NULL;
    if (mo != NULL)
        o = *mo;
    o.endpoint = env_or(o.endpoint, "XPROFS_ENDPOINT");
    o.style = env_or(o.style, "XPROFS_S3_STYLE");
    o.cache_dir = env_or(o.cache_dir, "XPROFS_CACHE_DIR");
    if (o.cache_bytes == 0 && getenv("XPROFS_CACHE_BYTES") != NULL)
        o.cache_bytes = strtoll(getenv("XPROFS_CACHE_BYTES"), NULL, 10);
    if (o.timeout_s == 0 && getenv("XPROFS_STORE_TIMEOUT") != NULL) {
        char *end;
        long t = strtol(getenv("XPROFS_STORE_TIMEOUT"), &end, 10);
        if (end == getenv("XPROFS_STORE_TIMEOUT") || *end != '\0' || t < 1 || t > 86400)
            return xp_err_set(err, -EINVAL, "XPROFS_STORE_TIMEOUT=%s: seconds from 1 to 86400",
                              getenv("XPROFS_STORE_TIMEOUT"));
        o.timeout_s = (int)t;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return xp_err_set(err, -EIO, "libcurl cannot start");
    return mirror_open(url, &o, mp, err);
}

int vfs_open_location(const char *where, const struct mirror_opts *mo, size_t cache_bytes,
                      struct vfs **vp, struct xp_err *err)
{
    struct source_hook *hook;
    struct mirror *m;
    int rc;

    *vp = NULL;
    if (!mirror_is_url(where))
        return vfs_open(where, cache_bytes, vp, err);
    hook = calloc(1, sizeof(*hook));
    if (hook == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = vfs_open_mirror(where, mo, &m, err);
    if (rc != 0) {
        free(hook);
        return rc;
    }
    hook->fetch = mirror_fetch_dir;
    hook->refresh = mirror_refresh;
    hook->pending = mirror_pending;
    hook->arg = m;
    rc = vfs_open_source(mirror_root(m), hook, cache_bytes, vp, err);
    if (rc != 0) {
        mirror_close(m);
        free(hook);
        return rc;
    }
    (*vp)->mirror = m;
    (*vp)->hook = hook;
    return 0;
}

void vfs_close_location(struct vfs *v)
{
    struct mirror *m;
    struct source_hook *hook;

    if (v == NULL)
        return;
    m = v->mirror;
    hook = v->hook;
    vfs_close(v);
    mirror_close(m);
    free(hook);
}
