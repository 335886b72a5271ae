/*
 * session.h - one profile run (an XProf "session") and its snapshots.
 *
 * A session is a run directory: LOGDIR/.../plugins/profile/<run>, or a
 * directory of PyTorch traces. Its content at one moment is a snapshot: the
 * source files with their fingerprints (device, inode, size, mtime, ctime), the hosts
 * derived from their names, and everything computed from them (opened
 * profiles, shared intermediates such as the trace index or op_stats, the
 * error log behind errors.txt). When a source changes, the next
 * session_snapshot() makes a fresh snapshot; the old one lives on until its
 * last user releases it, so a tool never sees files change under it.
 *
 * Intermediates are computed once per snapshot, on first need, by whichever
 * thread asks first; other askers wait for that result (single flight).
 */
#ifndef XPROFS_SESSION_H
#define XPROFS_SESSION_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "reader/xspace.h"

enum source_kind {
    SRC_XPLANE,     /* <host>.xplane.pb or .xplane.pb.gz */
    SRC_TRACE_JSON, /* Chrome-trace JSON: <host>.trace.json.gz, perfetto_trace.json.gz */
    SRC_PT_TRACE,   /* PyTorch profiler: <worker>.pt.trace.json[.gz] */
    SRC_HLO_PROTO,  /* <module>.hlo_proto.pb */
};

struct source_file {
    char *name;            /* file name inside the run directory */
    char *path;            /* absolute path (symlinks resolved inside LOGDIR) */
    enum source_kind kind; /* what it holds */
    char *host;            /* host (worker) or module name from the file name */
    dev_t dev;             /* fingerprint: device */
    ino_t ino;             /* fingerprint: inode */
    off_t size;            /* fingerprint: size */
    int64_t mtime_ns;      /* fingerprint: modification time */
    int64_t ctime_ns;      /* fingerprint: status change time (moves with any
                            * write, even one that puts the mtime back) */
    int pending;           /* a remote store's object not copied yet: size is
                            * the listed one, the rest its placeholder's, and
                            * path holds no bytes (source_hook.fetch copies it) */
};

struct intermediate;

/* Where a run directory's files come from when they are a local copy of a
 * remote store's (src/remote/mirror.h; NULL for a local LOGDIR). fetch is
 * asked before a snapshot that files are made from (session_snapshot): 0
 * when its files are up to date; > 0 with err when the store failed but
 * every file has a copy (logged to errors.txt); < 0 with err when some file
 * has none (the snapshot keeps the reason, fetch_error, and files made from
 * it are EIO). refresh is asked before the catalog walks LOGDIR again and
 * before a listed snapshot (session_snapshot_listed): 0, or > 0 with err
 * when the store's listing failed or is late (logged). pending says whether
 * a path of the copy is an object not copied yet, and its listed size: a
 * listed snapshot has such files (pending), so a run is listed and its
 * files looked up from the store's listing alone. */
struct source_hook {
    int (*fetch)(void *arg, const char *dir, struct xp_err *err);
    int (*refresh)(void *arg, struct xp_err *err);
    int (*pending)(void *arg, const char *path, int64_t *size);
    void *arg;
};

struct snapshot {
    int refs;                   /* references; atomic */
    uint64_t gen;               /* generation, unique per session */
    struct session *session;    /* owner (not referenced: owner outlives) */
    struct source_file *files;  /* sorted by name */
    uint32_t nfiles;            /* entries in files */
    const char **hosts;         /* sorted host names (point into files) */
    uint32_t nhosts;            /* entries in hosts */
    int64_t newest_mtime_ns;    /* newest source mtime: "still being written" test */
    pthread_mutex_t lock;       /* guards inter and errors */
    pthread_cond_t cond;        /* signalled when an intermediate is ready */
    struct intermediate *inter; /* computed values */
    char **errors;              /* lines of errors.txt, each after its time */
    uint32_t nerrors;           /* entries in errors */
    char *fetch_error;          /* the store's reason some source has no copy; guarded by lock */
};

struct session {
    char *name;                     /* run name as XProf's runs list names it */
    char *dir;                      /* absolute path of the run directory */
    char *logdir;                   /* LOGDIR (realpath), for the symlink check */
    int refs;                       /* references; atomic */
    pthread_mutex_t lock;           /* guards snap and next_gen */
    struct snapshot *snap;          /* current snapshot, NULL until first asked */
    uint64_t next_gen;              /* generation for the next snapshot */
    int64_t dir_mtime_ns;           /* run directory mtime when snap was listed */
    uint64_t fp_hash;               /* fingerprint of the sources of the last snapshot */
    uint64_t gen;                   /* generation of the last snapshot */
    int64_t last_used_ms;           /* monotonic time of the last session_snapshot*() */
    const struct source_hook *hook; /* remote store's copy, or NULL (set by the catalog) */
};

/* Create a session for run directory dir named name. NULL on no memory. */
struct session *session_new(const char *name, const char *dir, const char *logdir);

struct session *session_ref(struct session *s);
void session_unref(struct session *s);

/* The current snapshot, refreshed if any source changed. Returns 0 and a
 * referenced *snapp (release with snapshot_unref), or a negative errno. */
int session_snapshot(struct session *s, struct snapshot **snapp, struct xp_err *err);

/* The same for listing and looking up files, not for making them: a
 * remote store's objects not copied yet are in it (pending), and none is
 * copied. Same contract as session_snapshot. */
int session_snapshot_listed(struct session *s, struct snapshot **snapp, struct xp_err *err);

/* The current snapshot without checking sources (cheap, may be stale); made
 * if there is none. Same contract as session_snapshot. */
int session_snapshot_cached(struct session *s, struct snapshot **snapp, struct xp_err *err);

/* Drop the current snapshot's computed data (profiles, intermediates) if it
 * has any; users holding it keep it until they release it. The next
 * snapshot of unchanged sources gets the same generation, so produced files
 * stay valid. Returns 1 if something was dropped. */
int session_release(struct session *s);

/* 1 if the session's current snapshot holds computed data. */
int session_holds_data(struct session *s);

/* last_used_ms, read safely while other threads take snapshots. */
int64_t session_last_used_ms(const struct session *s);

struct snapshot *snapshot_ref(struct snapshot *snap);
void snapshot_unref(struct snapshot *snap);

/* 1 if a source changed within the last `secs` seconds (still being written). */
int snapshot_is_fresh(const struct snapshot *snap, int secs);

/* The hosts one computation covers: a single host, or every host of a
 * snapshot. The engines that combine hosts (the TraceLens tables) take one,
 * so they need not know who asked. */
struct host_list {
    struct snapshot *snap;    /* the run */
    const char *const *names; /* host names, sorted */
    int n;                    /* entries in names */
};

/* The source file of a host of the given kind, or NULL. */
const struct source_file *snapshot_host_file(const struct snapshot *snap, const char *host,
                                             enum source_kind kind);

/* Index of host in snap->hosts, or -1. */
int snapshot_host_index(const struct snapshot *snap, const char *host);

/* Count source files of a kind. */
uint32_t snapshot_count(const struct snapshot *snap, enum source_kind kind);

/*
 * One kind of intermediate a snapshot computes on first need and keeps: the
 * opened profile, XProf's grouping, op_stats, the trace index, the GPU
 * timeline, ... Each kind is one constant row, defined beside its builder
 * (docs/design.md lists them), and read through snapshot_part(), the one
 * accessor; typed wrappers such as snapshot_groups() name the value's type.
 */
struct snapshot_part {
    const char *name; /* kind, for messages: "groups" */
    /* Makes the value from snap and the caller's arg: returns 0 and *value,
     * or a negative errno with err filled. */
    int (*build)(struct snapshot *snap, const void *arg, void **value, struct xp_err *err);
    void (*free)(void *value); /* frees a built value */
};

/* The value of part for host (NULL: the whole run) and variant (NULL: none;
 * any other text is a separate value), built by part->build(snap, arg) by
 * the first asker while later askers wait (single flight). A failed build is
 * remembered as well (same error on later calls). The value belongs to the
 * snapshot and is freed with part->free when it goes. */
int snapshot_part(struct snapshot *snap, const struct snapshot_part *part, const char *host,
                  const char *variant, const void *arg, void **value, struct xp_err *err);

/* fn(value, arg) for each value of part built so far without error, under
 * the snapshot's lock (fn must not ask the snapshot for anything), until
 * one returns nonzero: that is returned; else 0. */
int snapshot_part_each(struct snapshot *snap, const struct snapshot_part *part,
                       int (*fn)(void *value, void *arg), void *arg);

/* -EIO with err if a profile this snapshot opened was cut short under its
 * mapping since (xspace_cut_short): what was made from it read zeros
 * there. Else 0. */
int snapshot_sources_cut(struct snapshot *snap, struct xp_err *err);

/* -EIO with err (naming the file) if a source file of snap is no longer
 * the bytes the snapshot listed: another inode, size, mtime or ctime (a
 * rewrite in place of the same size moves the ctime). What was made from
 * the snapshot while that happened may mix old and new bytes. Else 0. */
int snapshot_sources_unchanged(const struct snapshot *snap, struct xp_err *err);

/* The opened and indexed profile of host (xspace_open once per snapshot). */
int snapshot_xspace(struct snapshot *snap, const char *host, struct xspace **xsp,
                    struct xp_err *err);

/* Same, with every event decoded (xspace_decode). */
int snapshot_xspace_decoded(struct snapshot *snap, const char *host, struct xspace **xsp,
                            struct xp_err *err);

/* The loaded Chrome trace of host (its SRC_PT_TRACE file, else its
 * SRC_TRACE_JSON file, ctrace_load once per snapshot). The trace belongs to
 * the snapshot: valid while the caller holds its reference. -ENOENT if the
 * host has no trace JSON. Failures are also logged to errors.txt. */
struct ctrace;
int snapshot_ctrace(struct snapshot *snap, const char *host, const struct ctrace **ctp,
                    struct xp_err *err);

/* The text that keys what is made from snap in the persistent cache
 * (store.h), malloc'd (NULL when out of memory): "xprofs VERSION", "run
 * NAME", what (the file with its host and query, or an intermediate), then
 * "src NAME SIZE MTIME_NS INODE" for every source file. No path and no
 * device number, so that machines mounting LOGDIR elsewhere share entries. */
char *snapshot_key_text(const struct snapshot *snap, const char *what);

/* snapshot_key_text of a per-host intermediate: what is "intermediate KIND
 * HOST" (KIND may hold spaces: "piece summary"). malloc'd, or NULL. */
char *snapshot_intermediate_key(const struct snapshot *snap, const char *kind, const char *host);

/* Profiles this process has opened (xplane reader or Chrome-trace reader,
 * one per host and snapshot, failures included): 0 for a process that
 * served everything from the persistent cache. */
uint64_t snapshot_profiles_opened(void);

/* -EIO with err (the store's reason) if a source of snap could not be
 * copied from the remote store it lives in, or is not copied yet (pending:
 * a listed snapshot, or an object listed since the copy); else 0. */
int snapshot_fetch_failed(struct snapshot *snap, struct xp_err *err);

/* Add a line to errors.txt, after the time it happened ("2026-12-03T21:40:12.345Z ",
 * UTC, SNAPSHOT_LOG_TIME_LEN bytes); a reason already there is not added again. */
#define SNAPSHOT_LOG_TIME_LEN 25
void snapshot_log(struct snapshot *snap, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
