/*
 * mirror.h - a local copy of a log directory in an object store.
 *
 * `s3://bucket/prefix` (or `gs://`, through an S3-compatible endpoint) is
 * listed, and its tree laid out under the cache directory as the local
 * catalog reads a LOGDIR: directories as they are in the store, each object
 * not yet copied a dangling symlink (the catalog sees the name, a snapshot
 * skips it, so no byte of a missing file is ever read). A run directory's
 * files are copied on first need (mirror_fetch_dir), in parallel ranges,
 * into a temporary file renamed over the name, so a snapshot sees the old
 * file or the new one, never a part. The store is listed again in a thread
 * of its own (lister.h), at most every 5 seconds and only while asked; an
 * asker waits for a listing at most 3 seconds, then goes on with the last
 * one, so a store that hangs holds no lookup for long. An object whose
 * size and ETag are those of its copy is not
 * copied again (cache_dir/index keeps them across mounts). With a
 * cache_bytes bound, the copies of the runs least recently asked for (and
 * not within the last recheck_ms) become placeholders again once the copies
 * pass it. Nothing is ever written to the store.
 */
#ifndef XPROFS_MIRROR_H
#define XPROFS_MIRROR_H

#include <stdint.h>

#include "base/err.h"

struct mirror;

struct mirror_opts {
    const char *endpoint;  /* -o endpoint=URL, or NULL */
    const char *style;     /* -o s3_style=path|virtual, or NULL */
    const char *cache_dir; /* -o cache_dir=DIR, or NULL: $XDG_CACHE_HOME or ~/.cache */
    int recheck_ms;        /* how old a listing may be (5000) */
    int list_wait_ms;      /* how long an asker waits for a listing (3000) */
    int timeout_s;         /* -o store_timeout=SECONDS: bound of each request (60) */
    long long cache_bytes; /* bound of the copies (LRU by run), 0: none */
};

/* 1 if s names a store ("s3://" or "gs://"). */
int mirror_is_url(const char *s);

/* List url once and lay out its tree. 0 and *mp, or a negative errno with
 * err (a wrong key, a missing bucket, a store that does not answer). */
int mirror_open(const char *url, const struct mirror_opts *o, struct mirror **mp,
                struct xp_err *err);
void mirror_close(struct mirror *m);

/* The local directory standing for the store's prefix (a LOGDIR). */
const char *mirror_root(const struct mirror *m);

/* A listing at most recheck_ms old: new runs appear, removed objects go.
 * Waits for one at most list_wait_ms. 0; 1 with err when the last listing
 * failed or is still under way (the tree stays as last listed). arg is the
 * mirror. */
int mirror_refresh(void *arg, struct xp_err *err);

/* 1 and the listed *size if path (in the tree) is an object not copied
 * yet (its placeholder); else 0. arg is the mirror. */
int mirror_pending(void *arg, const char *path, int64_t *size);

/* Bring the files directly in run directory dir up to date with the store.
 * 0; 1 with err when the store failed but every file has a copy (older,
 * perhaps); a negative errno with err when some file has none. */
int mirror_fetch_dir(void *arg, const char *dir, struct xp_err *err);

#endif
