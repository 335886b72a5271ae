/*
 * main.c - xprofs-mount: a LOGDIR of profiles as a read-only FUSE file system.
 *
 *   xprofs-mount LOGDIR MOUNTPOINT [-f] [-d] [-s] [-o cache_mb=N,...]
 *
 * Uses libfuse3's low-level API. The tree and its content come from the core
 * (src/vfs/vfs.h); this file only translates between kernel requests and vfs
 * calls. How caching works: a produced file reports st_size 0 until it has
 * been computed; open() computes it (or takes it from the blob cache) and
 * answers with keep_cache when the kernel's copy is still current, so a second
 * read is served from the page cache without reaching us. Reads past the
 * cached size make the kernel ask getattr again, which then reports the true
 * size. When a source changes its generation changes, and the next open
 * answers without keep_cache, which drops the stale pages. A file that grows
 * past 64 MiB while open() makes it is opened with direct_io once that much
 * is made, and its reads follow it as it grows (vfs_open_file, live_blob.h).
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inodes.h"
#include "base/malloc_tune.h"
#include "base/version.h"
#include "remote/mirror.h"
#include "vfs/vfs.h"

#define XFS_DIR_TIMEOUT 1.0

/* Worker threads unless -o max_threads=N says otherwise (libfuse's own
 * default is 10). A reader of a file being made holds its worker until the
 * file is made (vfs.h bounds how many are made at once), so with 10 the
 * readers of files already made waited behind 10 such readers; 256 is the
 * connections xprofs-ui serves at once. Idle workers beyond
 * max_idle_threads end, so this costs threads only while they are used. */
#define XFS_MAX_THREADS 256
#define KEY_MAX_THREADS 1

/* Links an open file or directory into its mount's list of open ones:
 * the kernel sends no RELEASE for those still open at unmount (a close
 * racing a SIGTERM), so the mount frees what is left when it ends. */
struct xfs_open_link {
    struct xfs_open_link *prev, *next;
};

struct xfs {
    struct vfs *v;                   /* the core */
    pthread_mutex_t open_lock;       /* guards the two lists below */
    struct xfs_open_link open_files; /* xfs_handle: list head, circular */
    struct xfs_open_link open_dirs;  /* xfs_dir: list head, circular */
    struct inode_table inodes;       /* path <-> ino */
    uid_t uid;                       /* owner shown for every file */
    gid_t gid;                       /* group shown for every file */
    int debug;                       /* log every error to stderr */
};

/* What an open file holds: exactly one of the three. */
struct xfs_handle {
    struct xfs_open_link link; /* first: in xfs.open_files */
    struct blob *blob;         /* produced content, or NULL */
    struct live_blob *live;    /* content still being produced, or NULL */
    int fd;                    /* raw pass-through file, or -1 */
    int logged;                /* live: its failure went to stderr */
};

/* A directory listing made at opendir. */
struct xfs_dir {
    struct xfs_open_link link; /* first: in xfs.open_dirs */
    char **names;              /* entry names */
    char *is_dir;              /* 1 for directories */
    size_t n;                  /* entries */
    size_t cap;                /* allocated */
};

struct xfs_opts {
    char *logdir;             /* first non-option argument */
    char *cache_mb_arg;       /* -o cache_mb=N, as written */
    char *max_runs_arg;       /* -o max_runs=N */
    char *trace_complete_arg; /* -o trace_complete=0|1 */
    char *endpoint;           /* -o endpoint=URL (s3:// and gs:// LOGDIRs) */
    char *s3_style;           /* -o s3_style=path|virtual */
    char *cache_dir;          /* -o cache_dir=DIR: the persistent cache (and a store's
                                 local copy) */
    char *cache_bytes;        /* -o cache_bytes=N[KMGT]: bound of each */
    char *store_timeout_arg;  /* -o store_timeout=SECONDS: bound of each store request */
    int cache_mb;             /* their values, checked */
    int max_runs;
    int trace_complete;
    int store_timeout;     /* its value, checked (0: the default) */
    int max_threads_given; /* -o max_threads=N was given (libfuse reads N) */
};

static struct xfs *xfs_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

static void open_list_init(struct xfs_open_link *head)
{
    head->prev = head->next = head;
}

static void open_add(struct xfs *fs, struct xfs_open_link *head, struct xfs_open_link *l)
{
    pthread_mutex_lock(&fs->open_lock);
    l->next = head->next;
    l->prev = head;
    head->next->prev = l;
    head->next = l;
    pthread_mutex_unlock(&fs->open_lock);
}

static void open_del(struct xfs *fs, struct xfs_open_link *l)
{
    pthread_mutex_lock(&fs->open_lock);
    l->prev->next = l->next;
    l->next->prev = l->prev;
    pthread_mutex_unlock(&fs->open_lock);
}

/* Frees an open file's handle; 1 if that freed its blob. */
static int handle_free(struct xfs_handle *h)
{
    int freed = blob_unref(h->blob);

    live_unref(h->live);
    if (h->fd >= 0)
        close(h->fd);
    free(h);
    return freed;
}

static void log_err(const char *path, const struct xp_err *err, int rc)
{
    fprintf(stderr, "xprofs-mount: %s: %s\n", path[0] ? path : "/",
            err->msg[0] ? err->msg : strerror(-rc));
}

/* Path of a child: parent "" + name = name. NULL when out of memory. */
static char *child_path(const char *parent, const char *name)
{
    size_t a = strlen(parent), b = strlen(name);
    char *p = malloc(a + b + 2);

    if (p == NULL)
        return NULL;
    if (a == 0) {
        memcpy(p, name, b + 1);
    } else {
        memcpy(p, parent, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* Fill st for a node; ino is its number. */
static void fill_attr(struct xfs *fs, uint64_t ino, const struct vfs_node *node, struct stat *st)
{
    memset(st, 0, sizeof(*st));
    st->st_ino = ino;
    st->st_uid = fs->uid;
    st->st_gid = fs->gid;
    st->st_mtim.tv_sec = node->mtime_ns / 1000000000;
    st->st_mtim.tv_nsec = node->mtime_ns % 1000000000;
    st->st_ctim = st->st_mtim;
    st->st_atim = st->st_mtim;
    if (node->kind == VFS_DIR) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
    } else {
        off_t size = vfs_known_size(fs->v, node);
        if (size == 0 && node->kind == VFS_TOOL) {
            off_t served = inodes_served_size(&fs->inodes, ino, vfs_generation(fs->v, node) + 1);
            if (served > 0)
                size = served;
        }
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = size;
        st->st_blocks = (size + 511) / 512;
    }
    st->st_blksize = 128 * 1024;
}

static void xfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct xfs *fs = xfs_of(req);
    struct fuse_entry_param e;
    struct vfs_node node;
    struct xp_err err = {0};
    char *ppath, *path;
    int rc;

    ppath = inodes_path(&fs->inodes, parent);
    if (ppath == NULL)
        return (void)fuse_reply_err(req, ENOENT);
    path = child_path(ppath, name);
    free(ppath);
    if (path == NULL)
        return (void)fuse_reply_err(req, ENOMEM);
    rc = vfs_lookup(fs->v, path, &node, &err);
    if (rc != 0) {
        if (rc != -ENOENT || fs->debug)
            log_err(path, &err, rc);
        free(path);
        return (void)fuse_reply_err(req, -rc);
    }
    memset(&e, 0, sizeof(e));
    e.ino = inodes_lookup(&fs->inodes, path);
    if (e.ino == 0) {
        vfs_node_free(&node);
        free(path);
        return (void)fuse_reply_err(req, ENOMEM);
    }
    fill_attr(fs, e.ino, &node, &e.attr);
    e.attr_timeout = node.kind == VFS_DIR ? XFS_DIR_TIMEOUT : 0;
    e.entry_timeout = XFS_DIR_TIMEOUT;
    vfs_node_free(&node);
    free(path);
    fuse_reply_entry(req, &e);
}

static void xfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    inodes_forget(&xfs_of(req)->inodes, ino, nlookup);
    fuse_reply_none(req);
}

static void xfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    size_t i;

    for (i = 0; i < count; i++)
        inodes_forget(&xfs_of(req)->inodes, forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

/* Resolve ino to a node (and its path into *pathp, when asked: free it).
 * Returns 0, or the errno the caller replies with. */
static int node_of(fuse_req_t req, fuse_ino_t ino, struct vfs_node *node, char **pathp)
{
    struct xfs *fs = xfs_of(req);
    struct xp_err err = {0};
    char *path = inodes_path(&fs->inodes, ino);
    int rc;

    if (path == NULL)
        return ENOENT;
    rc = vfs_lookup(fs->v, path, node, &err);
    if (rc != 0) {
        if (rc != -ENOENT || fs->debug)
            log_err(path, &err, rc);
        free(path);
        return -rc;
    }
    if (pathp != NULL)
        *pathp = path;
    else
        free(path);
    return 0;
}

static void xfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    const struct xfs_handle *h = fi != NULL ? (const struct xfs_handle *)(uintptr_t)fi->fh : NULL;
    struct vfs_node node;
    struct stat st;
    int rc;

    if ((rc = node_of(req, ino, &node, NULL)) != 0)
        return (void)fuse_reply_err(req, rc);
    fill_attr(xfs_of(req), ino, &node, &st);
    /* Asked for an open file (the kernel does so before a read past the
     * size it knows): the size of what that file holds, which its reads
     * return even once a source changed and the path's new content is not
     * made yet (reported as 0, it would read as empty). */
    if (node.kind == VFS_TOOL && h != NULL && h->blob != NULL) {
        st.st_size = (off_t)h->blob->size;
        st.st_blocks = (st.st_size + 511) / 512;
    }
    fuse_reply_attr(req, &st, node.kind == VFS_DIR ? XFS_DIR_TIMEOUT : 0);
    vfs_node_free(&node);
}

static void xfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct xfs *fs = xfs_of(req);
    struct xfs_handle *h;
    struct vfs_node node;
    struct xp_err err = {0};
    char *path;
    int rc;

    if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
        return (void)fuse_reply_err(req, EROFS);
    if ((rc = node_of(req, ino, &node, &path)) != 0)
        return (void)fuse_reply_err(req, rc);
    if (node.kind == VFS_DIR) {
        vfs_node_free(&node);
        free(path);
        return (void)fuse_reply_err(req, EISDIR);
    }
    h = calloc(1, sizeof(*h));
    if (h == NULL) {
        vfs_node_free(&node);
        free(path);
        return (void)fuse_reply_err(req, ENOMEM);
    }
    h->fd = -1;
    if (node.kind == VFS_RAW) {
        rc = vfs_open_raw(fs->v, &node, &h->fd, &err);
        if (rc == 0) {
            uint64_t gen = (uint64_t)node.mtime_ns ^ (uint64_t)node.raw_size;
            fi->keep_cache = inodes_served(&fs->inodes, ino, gen, node.raw_size) == gen;
        }
    } else {
        rc = vfs_open_file(fs->v, &node, &h->blob, &h->live, &err);
        if (rc == 0 && h->live != NULL) {
            /* Still being produced: read it as it grows, size unknown. */
            fi->direct_io = 1;
            fi->keep_cache = 0;
        } else if (rc == 0) {
            int uncached = node.kind == VFS_TOOL && (node.tool->flags & TOOL_UNCACHED);
            uint64_t old = inodes_served(&fs->inodes, ino, h->blob->gen + 1, h->blob->size);
            fi->keep_cache = !uncached && h->blob->final && old == h->blob->gen + 1;
            fi->direct_io = uncached;
        }
    }
    if (rc != 0) {
        log_err(path, &err, rc);
        free(h);
        vfs_node_free(&node);
        free(path);
        return (void)fuse_reply_err(req, -rc);
    }
    fi->fh = (uint64_t)(uintptr_t)h;
    vfs_node_free(&node);
    free(path);
    open_add(fs, &fs->open_files, &h->link);
    if (fuse_reply_open(req, fi) != 0) {
        open_del(fs, &h->link);
        handle_free(h);
    }
}

static void xfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    struct xfs_handle *h = (struct xfs_handle *)(uintptr_t)fi->fh;
    char *buf;
    ssize_t n;

    (void)ino;
    if (off < 0)
        return (void)fuse_reply_err(req, EINVAL);
    buf = malloc(size ? size : 1);
    if (buf == NULL)
        return (void)fuse_reply_err(req, ENOMEM);
    if (h->blob != NULL)
        n = (ssize_t)blob_read(h->blob, (size_t)off, buf, size);
    else if (h->live != NULL)
        n = live_read(h->live, (size_t)off, buf, size);
    else
        n = pread(h->fd, buf, size, off);
    if (n < 0 && h->live != NULL && !h->logged) {
        struct xp_err err;
        h->logged = 1;
        if (live_error(h->live, &err))
            fprintf(stderr, "xprofs-mount: %s\n", err.msg);
    }
    if (n < 0)
        fuse_reply_err(req, errno);
    else
        fuse_reply_buf(req, buf, (size_t)n);
    free(buf);
}

static void xfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct xfs_handle *h = (struct xfs_handle *)(uintptr_t)fi->fh;
    struct xfs *fs = xfs_of(req);
    struct vfs *v = fs->v;
    int freed;

    (void)ino;
    open_del(fs, &h->link);
    freed = handle_free(h);
    fuse_reply_err(req, 0); /* req is gone from here on */
    /* A file the cache does not hold went with its last reader: give its
     * memory back (a cached file's close costs nothing). */
    if (freed)
        vfs_trim(v, 1);
}

static int dir_add(void *arg, const char *name, int is_dir)
{
    struct xfs_dir *d = arg;

    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 32;
        char **names = realloc(d->names, cap * sizeof(*names));
        char *flags;
        if (names == NULL)
            return -ENOMEM;
        d->names = names;
        flags = realloc(d->is_dir, cap);
        if (flags == NULL)
            return -ENOMEM;
        d->is_dir = flags;
        d->cap = cap;
    }
    d->names[d->n] = strdup(name);
    if (d->names[d->n] == NULL)
        return -ENOMEM;
    d->is_dir[d->n++] = (char)is_dir;
    return 0;
}

static void dir_free(struct xfs_dir *d)
{
    size_t i;

    for (i = 0; i < d->n; i++)
        free(d->names[i]);
    free(d->names);
    free(d->is_dir);
    free(d);
}

/* After the session: what the kernel never released. The handles are
 * first in their structs (link), so a link is its handle. */
static void free_still_open(struct xfs *fs)
{
    while (fs->open_files.next != &fs->open_files) {
        struct xfs_open_link *l = fs->open_files.next;
        open_del(fs, l);
        handle_free((struct xfs_handle *)l);
    }
    while (fs->open_dirs.next != &fs->open_dirs) {
        struct xfs_open_link *l = fs->open_dirs.next;
        open_del(fs, l);
        dir_free((struct xfs_dir *)l);
    }
}

static void xfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct xfs *fs = xfs_of(req);
    struct xp_err err = {0};
    struct xfs_dir *d;
    char *path = inodes_path(&fs->inodes, ino);
    int rc;

    if (path == NULL)
        return (void)fuse_reply_err(req, ENOENT);
    d = calloc(1, sizeof(*d));
    if (d == NULL) {
        free(path);
        return (void)fuse_reply_err(req, ENOMEM);
    }
    rc = dir_add(d, ".", 1);
    if (rc == 0)
        rc = dir_add(d, "..", 1);
    if (rc == 0)
        rc = vfs_list(fs->v, path, dir_add, d, &err);
    if (rc != 0) {
        if (rc != -ENOENT)
            log_err(path, &err, rc);
        free(path);
        dir_free(d);
        return (void)fuse_reply_err(req, -rc);
    }
    free(path);
    fi->fh = (uint64_t)(uintptr_t)d;
    fi->cache_readdir = 0;
    open_add(fs, &fs->open_dirs, &d->link);
    if (fuse_reply_open(req, fi) != 0) {
        open_del(fs, &d->link);
        dir_free(d);
    }
}

static void xfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                        struct fuse_file_info *fi)
{
    struct xfs_dir *d = (struct xfs_dir *)(uintptr_t)fi->fh;
    char *buf = malloc(size ? size : 1);
    size_t used = 0, i;

    (void)ino;
    if (buf == NULL)
        return (void)fuse_reply_err(req, ENOMEM);
    for (i = off < 0 ? 0 : (size_t)off; i < d->n; i++) {
        struct stat st;
        size_t need;

        memset(&st, 0, sizeof(st));
        st.st_ino = 0xffffffffu; /* unknown until looked up */
        st.st_mode = d->is_dir[i] ? S_IFDIR : S_IFREG;
        need = fuse_add_direntry(req, buf + used, size - used, d->names[i], &st, (off_t)(i + 1));
        if (need > size - used)
            break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void xfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct xfs_dir *d = (struct xfs_dir *)(uintptr_t)fi->fh;

    (void)ino;
    open_del(xfs_of(req), &d->link);
    dir_free(d);
    fuse_reply_err(req, 0);
}

static void xfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
    struct statvfs sv;

    (void)ino;
    memset(&sv, 0, sizeof(sv));
    sv.f_bsize = 4096;
    sv.f_frsize = 4096;
    sv.f_namemax = 4095;
    sv.f_flag = ST_RDONLY;
    fuse_reply_statfs(req, &sv);
}

/* Every request that would change something: the mount is read-only. */
static void xfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                        struct fuse_file_info *fi)
{
    (void)ino, (void)attr, (void)to_set, (void)fi;
    fuse_reply_err(req, EROFS);
}

static void xfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)parent, (void)name, (void)mode, (void)rdev;
    fuse_reply_err(req, EROFS);
}

static void xfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    (void)parent, (void)name, (void)mode;
    fuse_reply_err(req, EROFS);
}

static void xfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    (void)parent, (void)name;
    fuse_reply_err(req, EROFS);
}

static void xfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    (void)link, (void)parent, (void)name;
    fuse_reply_err(req, EROFS);
}

static void xfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                       const char *newname, unsigned int flags)
{
    (void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
    fuse_reply_err(req, EROFS);
}

static void xfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    (void)ino, (void)newparent, (void)newname;
    fuse_reply_err(req, EROFS);
}

static void xfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                       struct fuse_file_info *fi)
{
    (void)parent, (void)name, (void)mode, (void)fi;
    fuse_reply_err(req, EROFS);
}

static void xfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                      struct fuse_file_info *fi)
{
    (void)ino, (void)buf, (void)size, (void)off, (void)fi;
    fuse_reply_err(req, EROFS);
}

static const struct fuse_lowlevel_ops xfs_ops = {
    .lookup = xfs_lookup,
    .forget = xfs_forget,
    .forget_multi = xfs_forget_multi,
    .getattr = xfs_getattr,
    .setattr = xfs_setattr,
    .mknod = xfs_mknod,
    .mkdir = xfs_mkdir,
    .unlink = xfs_unlink,
    .rmdir = xfs_unlink,
    .symlink = xfs_symlink,
    .rename = xfs_rename,
    .link = xfs_link,
    .open = xfs_open,
    .read = xfs_read,
    .write = xfs_write,
    .release = xfs_release,
    .opendir = xfs_opendir,
    .readdir = xfs_readdir,
    .releasedir = xfs_releasedir,
    .statfs = xfs_statfs,
    .create = xfs_create,
};

static const struct fuse_opt xfs_opt_spec[] = {
    {"cache_mb=%s", offsetof(struct xfs_opts, cache_mb_arg), 0},
    {"max_runs=%s", offsetof(struct xfs_opts, max_runs_arg), 0},
    {"trace_complete=%s", offsetof(struct xfs_opts, trace_complete_arg), 0},
    {"endpoint=%s", offsetof(struct xfs_opts, endpoint), 0},
    {"s3_style=%s", offsetof(struct xfs_opts, s3_style), 0},
    {"cache_dir=%s", offsetof(struct xfs_opts, cache_dir), 0},
    {"cache_bytes=%s", offsetof(struct xfs_opts, cache_bytes), 0},
    {"store_timeout=%s", offsetof(struct xfs_opts, store_timeout_arg), 0},
    FUSE_OPT_KEY("max_threads=", KEY_MAX_THREADS),
    FUSE_OPT_END,
};

/* -o name=arg as an integer in [min, max] into *v (unchanged when the
 * option was not given); 0, or -1 with a message. */
static int opt_int(const char *name, const char *arg, long min, long max, int *v)
{
    char *end;
    long x;

    if (arg == NULL)
        return 0;
    errno = 0;
    x = strtol(arg, &end, 10);
    if (end == arg || *end != '\0' || errno != 0 || x < min || x > max) {
        fprintf(stderr, "xprofs-mount: -o %s=%s: must be an integer from %ld to %ld\n", name, arg,
                min, max);
        return -1;
    }
    *v = (int)x;
    return 0;
}

/* -o cache_bytes=N, with an optional K, M, G or T (powers of 1024), into
 * *v; 0, or -1 with a message. */
static int opt_bytes(const char *arg, unsigned long long *v)
{
    unsigned long long x, mul = 1;
    char *end;

    if (arg == NULL)
        return 0;
    errno = 0;
    x = strtoull(arg, &end, 10);
    if (*end == 'K' || *end == 'k')
        mul = 1ull << 10;
    else if (*end == 'M' || *end == 'm')
        mul = 1ull << 20;
    else if (*end == 'G' || *end == 'g')
        mul = 1ull << 30;
    else if (*end == 'T' || *end == 't')
        mul = 1ull << 40;
    if (mul != 1)
        end++;
    if (end == arg || arg[0] == '-' || *end != '\0' || errno != 0 || x > (~0ull >> 1) / mul) {
        fprintf(stderr,
                "xprofs-mount: -o cache_bytes=%s: must be a byte count (K, M, G, T allowed)\n",
                arg);
        return -1;
    }
    *v = x * mul;
    return 0;
}

/* Take the first non-option argument as LOGDIR; leave the mount point and
 * -o max_threads=N (noted) to libfuse. */
static int xfs_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    struct xfs_opts *o = data;

    (void)outargs;
    if (key == KEY_MAX_THREADS) {
        o->max_threads_given = 1;
        return 1;
    }
    if (key == FUSE_OPT_KEY_NONOPT && o->logdir == NULL) {
        o->logdir = strdup(arg);
        return 0;
    }
    return 1;
}

static void usage(const char *prog)
{
    printf("usage: %s LOGDIR MOUNTPOINT [options]\n"
           "Mounts the profiles under LOGDIR read-only at MOUNTPOINT.\n"
           "  -f                 stay in the foreground\n"
           "  -d                 debug: log every request\n"
           "  -s                 single-threaded\n"
           "  -o cache_mb=N      memory for produced files (default 1024)\n"
           "  -o max_runs=N      runs whose decoded profiles stay in memory (default 4)\n"
           "  -o max_threads=N   worker threads (default %d)\n"
           "  -o cache_dir=DIR   keep produced files in DIR across mounts (created 0700)\n"
           "  -o cache_bytes=N   bound on DIR's entries (K, M, G, T; default: none)\n"
           "  -o trace_complete=0  do not complete a trace index in the background after a\n"
           "                     zoomed-out first request (default 1: the next zoom finds it)\n"
           "  -o endpoint=URL    S3-compatible store of an s3:// or gs:// LOGDIR\n"
           "  -o s3_style=path|virtual  bucket in the path or in the host name (default:\n"
           "                     virtual for amazonaws.com, path for another endpoint)\n"
           "  -o store_timeout=SECONDS  bound of each request to the store (default 60);\n"
           "                     a lookup waits for the store's listing 3 s at most\n"
           "                     (for such a LOGDIR cache_dir also holds the store's local copy,\n"
           "                     default ~/.cache/xprofs/remote, and cache_bytes bounds it too:\n"
           "                     least recently read runs go first; produced files: DIR/produced)\n"
           "Environment:\n"
           "  XPROFS_SPILL_DIR   where files past 64 MiB spill (default $TMPDIR or /tmp)\n"
           "  XPROFS_PLAIN_MALLOC=1  keep glibc's default malloc (no huge pages)\n"
           "Unmount with: fusermount3 -u MOUNTPOINT\n",
           prog, XFS_MAX_THREADS);
}

/* The multi-threaded loop with -o clone_fd, max_idle_threads and
 * max_threads (XFS_MAX_THREADS unless given). */
static int loop_mt(struct fuse_session *se, const struct fuse_cmdline_opts *opts,
                   int max_threads_given)
{
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    int ret;

    if (config == NULL) {
        fprintf(stderr, "xprofs-mount: out of memory\n");
        return -1;
    }
    fuse_loop_cfg_set_clone_fd(config, (unsigned)opts->clone_fd);
    fuse_loop_cfg_set_idle_threads(config,
                                   opts->max_idle_threads > 1000 ? 16 : opts->max_idle_threads);
    fuse_loop_cfg_set_max_threads(config, max_threads_given ? opts->max_threads : XFS_MAX_THREADS);
    ret = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    return ret;
}

/* 1 if path is the root of a mount (its device differs from its parent's,
 * or it is its parent). Mounting over it would hide that mount. */
static int is_mount_point(const char *path)
{
    char parent[PATH_MAX];
    struct stat st, pst;

    if (snprintf(parent, sizeof(parent), "%s/..", path) >= (int)sizeof(parent) ||
        stat(path, &st) != 0 || stat(parent, &pst) != 0)
        return 0; /* not there: FUSE says so */
    return st.st_dev != pst.st_dev || st.st_ino == pst.st_ino;
}

/* A log directory without runs: a warning (runs may appear as a job writes
 * them), or -1 and an error when it is a run folder or inside one. */
static int warn_if_empty(struct vfs *v, const char *logdir)
{
    char why[PATH_MAX + 256];
    int misplaced;

    if (!vfs_empty_reason(v, logdir, why, sizeof(why), &misplaced))
        return 0;
    if (misplaced) {
        fprintf(stderr, "xprofs-mount: %s\n", why);
        return -1;
    }
    fprintf(stderr, "xprofs-mount: warning: %s; mounted anyway: runs appear as they are written\n",
            why);
    return 0;
}

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts opts;
    struct xfs_opts xo = {.cache_mb = 1024, .max_runs = VFS_MAX_LIVE_RUNS, .trace_complete = 1};
    struct mirror_opts mo = {0};
    unsigned long long cache_bytes = 0;
    struct xfs fs;
    struct xp_err err = {0};
    struct fuse_session *se;
    int ret = 1;

    malloc_tune(argv);
    malloc_tune_one_arena();

    memset(&fs, 0, sizeof(fs));
    pthread_mutex_init(&fs.open_lock, NULL);
    open_list_init(&fs.open_files);
    open_list_init(&fs.open_dirs);
    if (argc == 2 && strcmp(argv[1], "help") == 0) {
        usage(argv[0]);
        fuse_cmdline_help();
        return 0;
    }
    if (fuse_opt_parse(&args, &xo, xfs_opt_spec, xfs_opt_proc) != 0)
        return 1;
    if (fuse_parse_cmdline(&args, &opts) != 0)
        goto err_out1;
    if (opts.show_help) {
        usage(argv[0]);
        fuse_cmdline_help();
        ret = 0;
        goto err_out2;
    }
    if (opts.show_version) {
        printf("xprofs-mount %s, FUSE library %s\n", XPROFS_VERSION, fuse_pkgversion());
        ret = 0;
        goto err_out2;
    }
    if (xo.logdir == NULL || opts.mountpoint == NULL) {
        usage(argv[0]);
        goto err_out2;
    }
    if (opt_int("cache_mb", xo.cache_mb_arg, 0, 1 << 30, &xo.cache_mb) != 0 ||
        opt_int("max_runs", xo.max_runs_arg, 1, 1 << 20, &xo.max_runs) != 0 ||
        opt_int("trace_complete", xo.trace_complete_arg, 0, 1, &xo.trace_complete) != 0 ||
        opt_int("store_timeout", xo.store_timeout_arg, 1, 86400, &xo.store_timeout) != 0 ||
        opt_bytes(xo.cache_bytes, &cache_bytes) != 0)
        goto err_out2;
    if (is_mount_point(opts.mountpoint)) {
        fprintf(stderr,
                "xprofs-mount: %s already holds a mount; unmount it first (fusermount3 -u %s)\n",
                opts.mountpoint, opts.mountpoint);
        goto err_out2;
    }
    mo.endpoint = xo.endpoint;
    mo.style = xo.s3_style;
    mo.cache_dir = xo.cache_dir;
    mo.cache_bytes = (long long)cache_bytes;
    mo.timeout_s = xo.store_timeout;
    if (vfs_open_location(xo.logdir, &mo, (size_t)xo.cache_mb << 20, &fs.v, &err) != 0) {
        fprintf(stderr, "xprofs-mount: %s\n", err.msg);
        goto err_out2;
    }
    if (warn_if_empty(fs.v, xo.logdir) != 0)
        goto err_out3;
    if (xo.cache_dir != NULL) {
        /* A store's local copy lays its tree out in DIR: the produced
         * files go beside it, in DIR/produced. */
        char sdir[PATH_MAX];
        struct store *st;
        snprintf(sdir, sizeof(sdir), "%s%s", xo.cache_dir,
                 mirror_is_url(xo.logdir) ? "/produced" : "");
        if (store_open(sdir, (size_t)cache_bytes, &st, &err) != 0) {
            fprintf(stderr, "xprofs-mount: %s\n", err.msg);
            goto err_out3;
        }
        vfs_use_store(fs.v, st);
    }
    fs.v->max_live_runs = xo.max_runs;
    vfs_complete_traces(fs.v, xo.trace_complete != 0);
    if (inodes_init(&fs.inodes) != 0) {
        fprintf(stderr, "xprofs-mount: out of memory\n");
        goto err_out3;
    }
    fs.uid = getuid();
    fs.gid = getgid();
    fs.debug = opts.debug;
    if (fuse_opt_add_arg(&args, "-oro,fsname=xprofs,subtype=xprofs") != 0)
        goto err_out4;
    se = fuse_session_new(&args, &xfs_ops, sizeof(xfs_ops), &fs);
    if (se == NULL)
        goto err_out4;
    if (fuse_set_signal_handlers(se) != 0)
        goto err_out5;
    if (fuse_session_mount(se, opts.mountpoint) != 0)
        goto err_out6;
    fuse_daemonize(opts.foreground);
    if (opts.singlethread) {
        ret = fuse_session_loop(se);
    } else {
        ret = loop_mt(se, &opts, xo.max_threads_given);
    }
    /* A stop by signal (systemd's SIGTERM, ^C) is a clean end too: the
     * loop returns the signal's number. */
    if (ret == SIGTERM || ret == SIGINT || ret == SIGHUP)
        ret = 0;
    fuse_session_unmount(se);
err_out6:
    fuse_remove_signal_handlers(se);
err_out5:
    fuse_session_destroy(se);
    free_still_open(&fs);
err_out4:
    inodes_destroy(&fs.inodes);
err_out3:
    vfs_close_location(fs.v);
err_out2:
    free(opts.mountpoint);
err_out1:
    fuse_opt_free_args(&args);
    free(xo.logdir);
    free(xo.cache_mb_arg);
    free(xo.max_runs_arg);
    free(xo.trace_complete_arg);
    free(xo.endpoint);
    free(xo.s3_style);
    free(xo.cache_dir);
    free(xo.cache_bytes);
    free(xo.store_timeout_arg);
    pthread_mutex_destroy(&fs.open_lock);
    return ret ? 1 : 0;
}
