/*
 * vfs.h - the tree the mount shows, independent of FUSE.
 *
 * Both front ends (the FUSE mount and `xprofs cat/ls`) resolve paths, list
 * directories and read files through these calls, so they show the same bytes.
 *
 *   /README.txt
 *   /<run...>/                       nested run names are nested directories
 *       <tool files>                 from tool_table, TOOL_RUN scope
 *       hosts/<host>/<tool files>    TOOL_HOST scope
 *       raw/<source file>            the source files, passed through
 *       cli/<command>.json           XProf's agent commands (agent/agent_tools.h)
 *
 * A file name may carry `?options`; such names are found by lookup only.
 */
#ifndef XPROFS_VFS_H
#define XPROFS_VFS_H

#include <stdint.h>
#include <sys/types.h>

#include <pthread.h>

#include "cache.h"
#include "session/catalog.h"
#include "base/err.h"
#include "live_blob.h"
#include "out/out.h"
#include "store/store.h"
#include "tools/tool.h"

enum vfs_kind {
    VFS_DIR,    /* a directory */
    VFS_TOOL,   /* a produced file */
    VFS_RAW,    /* a source file passed through */
    VFS_README, /* the root README.txt */
};

struct vfs_node {
    enum vfs_kind kind;      /* what it is */
    struct session *session; /* run it belongs to, referenced; NULL above runs */
    const struct tool *tool; /* VFS_TOOL */
    char *host;              /* VFS_TOOL in hosts/<host>/; else NULL */
    char *query;             /* VFS_TOOL: the text after '?', or NULL */
    char *key;               /* VFS_TOOL: cache key */
    char *raw_path;          /* VFS_RAW: absolute path of the source */
    off_t raw_size;          /* VFS_RAW: its size */
    int64_t mtime_ns;        /* newest source mtime (0 above runs) */
};

/* Computed data (decoded profiles, indexes) is kept for this many runs at
 * most, and dropped from a run idle for VFS_IDLE_MS; produced files stay in
 * the blob cache either way. */
#define VFS_MAX_LIVE_RUNS 4
#define VFS_IDLE_MS (10 * 60 * 1000)

/* Files vfs_open_file makes at once; the others wait their turn. Their
 * threads run at nice VFS_MAKING_NICE (the tools' parallel workers inherit
 * it), so a reader of a file already made, served by a thread at the
 * mount's own priority, does not wait for the CPU behind them. */
#define VFS_MAX_MAKING 8
#define VFS_MAKING_NICE 10

struct vfs_producing; /* a file being made for vfs_open_file (private) */

struct mirror;

struct vfs {
    struct catalog *cat;             /* the runs */
    struct mirror *mirror;           /* the remote store LOGDIR copies, or NULL */
    struct source_hook *hook;        /* the catalog's hook to it, or NULL */
    struct cache cache;              /* produced files */
    struct store *store;             /* persistent cache (cache_dir=), or NULL */
    int max_live_runs;               /* runs whose computed data is kept */
    pthread_mutex_t lock;            /* guards the six fields below */
    struct vfs_producing *producing; /* files being made in threads of their own */
    pthread_cond_t produced;         /* signalled when one of them is done */
    int producing_now;               /* of those, how many are making theirs */
    pthread_cond_t turn;             /* signalled when one of them stops making */
    int making;                      /* files being made now, by any thread */
    int untrimmed;                   /* memory freed since the last malloc_trim */
};

/* Open LOGDIR. cache_bytes bounds the blob cache. vfs_close waits for the
 * files vfs_open_file is still making. */
int vfs_open(const char *logdir, size_t cache_bytes, struct vfs **vp, struct xp_err *err);
/* The same for a LOGDIR that is a remote store's copy (catalog_open_source). */
int vfs_open_source(const char *logdir, const struct source_hook *hook, size_t cache_bytes,
                    struct vfs **vp, struct xp_err *err);
void vfs_close(struct vfs *v);

/* Keep produced files in st too (-o cache_dir=, --cache-dir): a file found
 * there is mapped back instead of made, one made is written there. v takes
 * st and closes it. Call before the first read. */
void vfs_use_store(struct vfs *v, struct store *st);

/* The persistent cache key of a produced file node (malloc'd; NULL when
 * out of memory): the xprofs version, the entry format, the run, the
 * file with its host and canonical query, and every source file's name,
 * size, mtime and inode. In a one-host run a file of both scopes has the
 * run's key under hosts/HOST/ too: the two are the same bytes. */
char *vfs_store_key(const struct vfs_node *node, const struct snapshot *snap);

/* vfs_open of a LOGDIR, or of a remote store's URL (s3://bucket/prefix,
 * gs://bucket/prefix) through a local copy (src/remote/mirror.h); mo may
 * be NULL, and its NULL fields default to $XPROFS_ENDPOINT,
 * $XPROFS_S3_STYLE, $XPROFS_CACHE_DIR (and cache_bytes 0 to
 * $XPROFS_CACHE_BYTES). Close with vfs_close_location. */
struct mirror_opts;
int vfs_open_location(const char *where, const struct mirror_opts *mo, size_t cache_bytes,
                      struct vfs **vp, struct xp_err *err);
void vfs_close_location(struct vfs *v);

/* The local copy of a store's URL alone, with vfs_open_location's
 * defaults, for callers that read its files without a vfs (the agent
 * commands): 0 and *mp (mirror_close it), or a negative errno with err. */
int vfs_open_mirror(const char *url, const struct mirror_opts *mo, struct mirror **mp,
                    struct xp_err *err);

/* Drop the data of runs past max_live_runs or idle too long and, when no
 * file is being made and something was freed since the last time (a file
 * made, a run dropped, or freed: the caller let a file's memory go), give
 * the heap's free pages back. After each read, and for the front end when
 * it lets a file go. */
void vfs_trim(struct vfs *v, int freed);

/* 1 and the reason in buf when the log directory (given: as the user named
 * it) holds no run yet; *misplaced is 1 when it is a run folder or inside
 * one, not a log directory. See catalog_empty_reason. */
int vfs_empty_reason(struct vfs *v, const char *given, char *buf, size_t n, int *misplaced);

/* Whether a trace index built for a zoomed-out request is completed on a
 * thread of its own once that request is answered (the mount: the zoom that
 * follows finds it complete), or left until a request reads deeper (the
 * default). vfs_close waits for such completions. */
void vfs_complete_traces(struct vfs *v, int on);

/* Resolve a path relative to the root ("" = root, no leading slash needed).
 * Returns 0 and *node (free with vfs_node_free), -ENOENT, or -EINVAL for a
 * bad query string. Never converts anything. */
int vfs_lookup(struct vfs *v, const char *path, struct vfs_node *node, struct xp_err *err);

void vfs_node_free(struct vfs_node *node);

/* List a directory: fn(arg, name, is_dir) per entry, sorted by name within
 * its kind. Returns 0, -ENOENT or -ENOTDIR. */
int vfs_list(struct vfs *v, const char *path, int (*fn)(void *arg, const char *name, int is_dir),
             void *arg, struct xp_err *err);

/* The content of a file node (VFS_TOOL or VFS_README; VFS_RAW through
 * vfs_open_raw). *finalp is 0 when a source is still being written
 * and the bytes must not be cached as final. */
int vfs_read(struct vfs *v, const struct vfs_node *node, struct blob **blob, struct xp_err *err);

/* A read-only descriptor of a VFS_RAW node's file into *fdp, copied from
 * its remote store first when it lives in one (a lookup copies nothing).
 * 0, or a negative errno with err (-EIO: the store's reason). */
int vfs_open_raw(struct vfs *v, const struct vfs_node *node, int *fdp, struct xp_err *err);

/* Open a file node (VFS_TOOL or VFS_README) for reading. Like vfs_read,
 * except that a file not yet made is made in a thread of its own, and when
 * it grows past OUT_SPILL_THRESHOLD this returns as soon as that much is
 * made, with *live set instead of *blob: its reader reads the bytes while the
 * rest is being made (live_blob.h). Others opening the same file meanwhile
 * follow the same live blob. Exactly one of *blob and *live is set on
 * success. Returns 0 or -errno with err. */
int vfs_open_file(struct vfs *v, const struct vfs_node *node, struct blob **blob,
                  struct live_blob **live, struct xp_err *err);

/* Bytes of a produced file `xprofs cat` holds before it writes to its fd:
 * every tool's answer but the trace viewer's big ones fits, so those are
 * all or nothing, and a big trace needs only a few output chunks. */
#define VFS_CAT_STREAM_AT ((size_t)4 << 20)

/* Write a file node (VFS_TOOL or VFS_README) to fd, for `xprofs cat`. A
 * produced file is made afresh, outside the blob cache, and past
 * VFS_CAT_STREAM_AT bytes it goes to fd while it is being produced
 * instead of to a spill file (so a failure after that point leaves the
 * bytes already written). Returns 0 or -errno with err. */
int vfs_read_to(struct vfs *v, const struct vfs_node *node, int fd, struct xp_err *err);

/* The size of a file node if known without converting, else 0. */
off_t vfs_known_size(struct vfs *v, const struct vfs_node *node);

/* The generation of the node's session snapshot (0 above runs); changes when
 * a source changes. Cheap: checks fingerprints with stat. */
uint64_t vfs_generation(struct vfs *v, const struct vfs_node *node);

#endif
