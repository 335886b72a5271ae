/*
 * catalog.h - the runs found under LOGDIR.
 *
 * The catalog walks LOGDIR (never following directory symlinks) and finds runs
 * as XProf does: every directory under `<tbrun>/plugins/profile/` is a run
 * named `<run>` (tbrun = LOGDIR) or `<tbrun>/<run>`; a directory elsewhere that
 * holds PyTorch traces (`*.pt.trace.json[.gz]`) is a run named by its path.
 * It never reads a profile. catalog_rescan() walks again at most once per
 * rescan interval unless forced, keeping the session objects of runs that
 * are still there.
 */
#ifndef XPROFS_CATALOG_H
#define XPROFS_CATALOG_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "session.h"

struct catalog {
    char *logdir;                   /* LOGDIR, resolved with realpath */
    pthread_mutex_t lock;           /* guards runs, nruns, last_scan_ms */
    struct session **runs;          /* sorted by name */
    size_t nruns;                   /* entries in runs */
    int64_t last_scan_ms;           /* monotonic time of the last walk */
    int rescan_ms;                  /* minimum time between walks */
    const struct source_hook *hook; /* LOGDIR is a remote store's copy, or NULL */
};

/* Open LOGDIR and walk it once. Returns 0 and *catp, or a negative errno. */
int catalog_open(const char *logdir, struct catalog **catp, struct xp_err *err);

/* The same for a LOGDIR that is a remote store's local copy: hook (which
 * must outlive the catalog) is asked before each walk and each run read. */
int catalog_open_source(const char *logdir, const struct source_hook *hook, struct catalog **catp,
                        struct xp_err *err);

void catalog_close(struct catalog *cat);

/* When the last walk found no run: 1 and, in buf, why, with a hint at the
 * likely mistake ("did you mean ../../..?" when LOGDIR is itself a run
 * folder); *misplaced is 1 when LOGDIR is inside or holds a run's files,
 * so that it cannot be what was meant. 0 when there are runs. */
int catalog_empty_reason(struct catalog *cat, const char *given, char *buf, size_t n,
                         int *misplaced);

/* Walk LOGDIR again if the last walk is older than rescan_ms (or force). */
int catalog_rescan(struct catalog *cat, int force);

/* The run named name, referenced (session_unref), or NULL. */
struct session *catalog_find(struct catalog *cat, const char *name);

/* Keep computed data (decoded profiles, intermediates) for at most max_live
 * runs, the most recently used ones, and for none idle longer than idle_ms:
 * memory stays bounded however many runs are read. Returns the number of
 * runs whose data was dropped. */
int catalog_trim(struct catalog *cat, int max_live, int64_t idle_ms);

/* 1 if some run name starts with prefix + "/" (prefix "" means any run):
 * prefix is a directory on the way to runs. */
int catalog_is_dir(struct catalog *cat, const char *prefix);

/* Call fn for each direct child name of directory prefix ("" = root): the
 * next path component of every run under it, once each. is_run is 1 when
 * the child is itself a run. Stops early if fn returns non-zero. */
int catalog_children(struct catalog *cat, const char *prefix,
                     int (*fn)(void *arg, const char *name, int is_run), void *arg);

#endif
