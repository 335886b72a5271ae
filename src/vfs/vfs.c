/*
 * vfs.c - resolving, listing and reading the mount's tree; see vfs.h.
 */
#include "vfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_tools.h"
#include "base/bigalloc.h"
#include "trace/trace_index.h"

/* A file being made in a thread of its own for vfs_open_file. */
struct vfs_producing {
    struct vfs_producing *next; /* in vfs.producing */
    struct vfs *v;              /* the tree */
    struct vfs_node node;       /* the file (the thread's own copy) */
    struct snapshot *snap;      /* the snapshot it is made from */
    struct live_blob *live;     /* what its readers follow (one reference) */
};

static const char readme_text[] =
    "xprofs: XProf profiles as plain files.\n"
    "\n"
    "Each directory is a profiling run (LOGDIR/.../plugins/profile/<run>), named as\n"
    "XProf's runs list names it. In a run:\n"
    "  summary.json      planes, lines, event counts and time spans of every host\n"
    "  hosts.json        the hosts (one .xplane.pb each)\n"
    "  tools.json        the XProf tools available for this run\n"
    "  errors.txt        why a file of this run could not be made\n"
    "  hosts/<host>/     the same files for one host\n"
    "  raw/              the source files, unchanged\n"
    "  cli/<command>.json  XProf's agent CLI: what `xprofs <command> RUN --flag=v`\n"
    "                    prints, as cli/<command>.json?flag=v\n"
    "\n"
    "Files are computed when first read, then served from the page cache.\n"
    "A file past 64 MiB is read while it is being made: it shows size 0 until\n"
    "it is complete (reads wait for their bytes; mmap needs a second open).\n"
    "Options go after '?', as XProf's HTTP parameters name them; quote them:\n"
    "  cat 'RUN/trace_viewer.json?start_time_ms=100&end_time_ms=200'\n"
    "An unknown option or a bad value fails with EINVAL (Invalid argument).\n";

int vfs_open(const char *logdir, size_t cache_bytes, struct vfs **vp, struct xp_err *err)
{
    return vfs_open_source(logdir, NULL, cache_bytes, vp, err);
}

int vfs_open_source(const char *logdir, const struct source_hook *hook, size_t cache_bytes,
                    struct vfs **vp, struct xp_err *err)
{
    struct vfs *v = calloc(1, sizeof(*v));
    int rc;

    *vp = NULL;
    if (v == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    v->max_live_runs = VFS_MAX_LIVE_RUNS;
    pthread_mutex_init(&v->lock, NULL);
    pthread_cond_init(&v->produced, NULL);
    pthread_cond_init(&v->turn, NULL);
    rc = catalog_open_source(logdir, hook, &v->cat, err);
    if (rc == 0 && cache_init(&v->cache, cache_bytes) != 0)
        rc = xp_err_set(err, -ENOMEM, "out of memory");
    if (rc != 0) {
        catalog_close(v->cat);
        pthread_cond_destroy(&v->turn);
        pthread_cond_destroy(&v->produced);
        pthread_mutex_destroy(&v->lock);
        free(v);
        return rc;
    }
    *vp = v;
    return 0;
}

void vfs_close(struct vfs *v)
{
    struct vfs_producing *p;

    if (v == NULL)
        return;
    pthread_mutex_lock(&v->lock);
    for (p = v->producing; p != NULL; p = p->next) {
        if (p->live != NULL)
            live_stop(p->live);
    }
    while (v->producing != NULL)
        pthread_cond_wait(&v->produced, &v->lock);
    pthread_mutex_unlock(&v->lock);
    trace_index_drain();
    cache_destroy(&v->cache);
    vfs_use_store(v, NULL);
    catalog_close(v->cat);
    pthread_cond_destroy(&v->turn);
    pthread_cond_destroy(&v->produced);
    pthread_mutex_destroy(&v->lock);
    free(v);
}

void vfs_use_store(struct vfs *v, struct store *st)
{
    if (v->store != NULL && store_shared() == v->store)
        store_set_shared(NULL);
    store_close(v->store);
    v->store = st;
    if (st != NULL)
        store_set_shared(st);
}

/* The persistent cache's key of a node's file. A file of both scopes of a
 * one-host run is the same file under RUN/ and RUN/hosts/HOST/ (the run's
 * hosts are that host), so both take the run's key: one entry, not two. */
char *vfs_store_key(const struct vfs_node *node, const struct snapshot *snap)
{
    size_t n = strlen(node->key) + 8;
    char *what = malloc(n), *key;
    const char *rest = NULL;

    if (what == NULL)
        return NULL;
    if (snap->nhosts == 1 && node->host != NULL && node->kind == VFS_TOOL &&
        (node->tool->scope & TOOL_RUN) && (node->tool->scope & TOOL_HOST) &&
        strncmp(node->key, node->session->name, strlen(node->session->name)) == 0 &&
        node->key[strlen(node->session->name)] == '|')
        rest = strchr(node->key + strlen(node->session->name) + 1, '|');
    if (rest != NULL)
        snprintf(what, n, "file %s|%s", node->session->name, rest);
    else
        snprintf(what, n, "file %s", node->key);
    key = snapshot_key_text(snap, what);
    free(what);
    return key;
}

/* Whether a node's file may be kept in the persistent cache: not one made
 * afresh on every open (errors.txt, compare.*, cache_stats.json). */
static int storable(const struct vfs *v, const struct vfs_node *node)
{
    return v->store != NULL && node->kind == VFS_TOOL && !(node->tool->flags & TOOL_UNCACHED);
}

int vfs_empty_reason(struct vfs *v, const char *given, char *buf, size_t n, int *misplaced)
{
    return catalog_empty_reason(v->cat, given, buf, n, misplaced);
}

void vfs_complete_traces(struct vfs *v, int on)
{
    (void)v;
    trace_index_background(on);
}

void vfs_node_free(struct vfs_node *node)
{
    session_unref(node->session);
    free(node->host);
    free(node->query);
    free(node->key);
    free(node->raw_path);
    memset(node, 0, sizeof(*node));
}

/* A name component must be non-empty, not "." or "..", without '/' or NUL. */
static int bad_component(const char *s, size_t n)
{
    return n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.') ||
           memchr(s, '/', n) != NULL;
}

/* Split "a/b/c" into up to max components (pointers into buf). Options are
 * not split: in "run/compare.md?base=jax/s1" the last component is
 * "compare.md?base=jax/s1" (xprofs cat; a FUSE lookup never holds '/'). */
static int split_path(char *buf, char **parts, int max)
{
    int n = 0;
    char *p = buf;

    while (*p == '/')
        p++;
    while (*p != '\0') {
        char *slash = strchr(p, '/'), *qm = strchr(p, '?');
        if (qm != NULL && (slash == NULL || qm < slash))
            slash = NULL;
        if (n == max)
            return -1;
        parts[n++] = p;
        if (slash == NULL)
            break;
        *slash = '\0';
        p = slash + 1;
        while (*p == '/')
            p++;
    }
    return n;
}

/* Fill a VFS_TOOL node for file[?query] in the run (host may be NULL;
 * cli: an agent command of cli/). */
static int resolve_tool(struct session *s, struct snapshot *snap, const char *host, int cli,
                        const char *file, struct vfs_node *node, struct xp_err *err)
{
    const char *qm = strchr(file, '?');
    char name[NAME_MAX + 1];
    size_t nlen = qm ? (size_t)(qm - file) : strlen(file);
    const struct tool *t;
    struct query q;
    char canon[2048];
    size_t klen;
    int rc;

    if (nlen > NAME_MAX)
        return -ENOENT;
    memcpy(name, file, nlen);
    name[nlen] = '\0';
    t = cli ? agent_cli_tool(name) : tool_find(name, host ? TOOL_HOST : TOOL_RUN);
    if (t == NULL || (t->listed != NULL && !t->listed(snap)))
        return -ENOENT;
    rc = query_parse(qm ? qm + 1 : "", t->keys, &q, err);
    if (rc != 0) {
        /* errors.txt says why, under the name asked for (the query too, so
         * each request finds its own reason), since read() can only say
         * EINVAL */
        snapshot_log(snap, "%s%s%s%s%s: %s", host ? "hosts/" : "", host ? host : "",
                     host ? "/" : "", cli ? "cli/" : "", file, err->msg);
        return rc;
    }
    query_canonical(&q, canon, sizeof(canon));
    query_free(&q);
    node->kind = VFS_TOOL;
    node->tool = t;
    node->session = session_ref(s);
    node->mtime_ns = snap->newest_mtime_ns;
    if (host != NULL && (node->host = strdup(host)) == NULL)
        return -ENOMEM;
    if (qm != NULL && (node->query = strdup(qm + 1)) == NULL)
        return -ENOMEM;
    klen = strlen(s->name) + strlen(t->file) + strlen(canon) + (host ? strlen(host) : 0) + 16;
    node->key = malloc(klen);
    if (node->key == NULL)
        return -ENOMEM;
    snprintf(node->key, klen, "%s|%s|%s?%s", s->name, host ? host : "", t->file, canon);
    return 0;
}

/* Tool files named "dir/file" (perf_report/NAME.csv) make a subdirectory of a
 * run or host directory: 1 if name[0..n) is such a dir with a tool listed in
 * scope for snap. */
static int tool_dir_listed(struct snapshot *snap, unsigned scope, const char *name, size_t n)
{
    int i;

    for (i = 0; tool_table[i] != NULL; i++) {
        const struct tool *t = tool_table[i];
        if (strncmp(t->file, name, n) == 0 && t->file[n] == '/' && (t->scope & scope) &&
            (t->listed == NULL || t->listed(snap)))
            return 1;
    }
    return 0;
}

/* Resolve "dir/file" of a tool directory (host may be NULL). */
static int resolve_dir_tool(struct session *s, struct snapshot *snap, const char *host,
                            const char *dir, const char *file, struct vfs_node *node,
                            struct xp_err *err)
{
    char joined[NAME_MAX + 1];

    if (snprintf(joined, sizeof(joined), "%s/%s", dir, file) >= (int)sizeof(joined))
        return -ENOENT;
    return resolve_tool(s, snap, host, 0, joined, node, err);
}

/* Resolve parts[0..n) inside run s. */
static int resolve_in_run(struct session *s, char **parts, int n, struct vfs_node *node,
                          struct xp_err *err)
{
    struct snapshot *snap;
    int rc = -ENOENT;

    /* The store's listing names the files: none is copied for a lookup
     * (a source the store cannot give makes the file EIO when read). */
    rc = session_snapshot_listed(s, &snap, err);
    if (rc != 0)
        return rc;
    rc = -ENOENT;
    node->mtime_ns = snap->newest_mtime_ns;
    if (n == 0) {
        node->kind = VFS_DIR;
        node->session = session_ref(s);
        node->mtime_ns = snap->newest_mtime_ns;
        rc = 0;
    } else if (strcmp(parts[0], "raw") == 0) {
        if (n == 1) {
            node->kind = VFS_DIR;
            node->session = session_ref(s);
            rc = 0;
        } else if (n == 2) {
            uint32_t i;
            for (i = 0; i < snap->nfiles; i++) {
                if (strcmp(snap->files[i].name, parts[1]) == 0) {
                    node->kind = VFS_RAW;
                    node->session = session_ref(s);
                    node->raw_path = strdup(snap->files[i].path);
                    node->raw_size = snap->files[i].size;
                    node->mtime_ns = snap->files[i].mtime_ns;
                    rc = node->raw_path ? 0 : -ENOMEM;
                    break;
                }
            }
        }
    } else if (strcmp(parts[0], "hosts") == 0) {
        if (n == 1) {
            node->kind = VFS_DIR;
            node->session = session_ref(s);
            rc = 0;
        } else if (snapshot_host_index(snap, parts[1]) >= 0) {
            if (n == 2) {
                node->kind = VFS_DIR;
                node->session = session_ref(s);
                rc = 0;
            } else if (n == 3 && tool_dir_listed(snap, TOOL_HOST, parts[2], strlen(parts[2]))) {
                node->kind = VFS_DIR;
                node->session = session_ref(s);
                rc = 0;
            } else if (n == 3) {
                rc = resolve_tool(s, snap, parts[1], 0, parts[2], node, err);
            } else if (n == 4 && tool_dir_listed(snap, TOOL_HOST, parts[2], strlen(parts[2]))) {
                rc = resolve_dir_tool(s, snap, parts[1], parts[2], parts[3], node, err);
            }
        }
    } else if (strcmp(parts[0], "cli") == 0 && tool_listed_xplane(snap)) {
        if (n == 1) {
            node->kind = VFS_DIR;
            node->session = session_ref(s);
            rc = 0;
        } else if (n == 2) {
            rc = resolve_tool(s, snap, NULL, 1, parts[1], node, err);
        }
    } else if (n == 1 && tool_dir_listed(snap, TOOL_RUN, parts[0], strlen(parts[0]))) {
        node->kind = VFS_DIR;
        node->session = session_ref(s);
        rc = 0;
    } else if (n == 1) {
        rc = resolve_tool(s, snap, NULL, 0, parts[0], node, err);
    } else if (n == 2 && tool_dir_listed(snap, TOOL_RUN, parts[0], strlen(parts[0]))) {
        rc = resolve_dir_tool(s, snap, NULL, parts[0], parts[1], node, err);
    }
    snapshot_unref(snap);
    return rc;
}

/* The modification time of LOGDIR: what the root, README.txt and the
 * directories on the way to runs show (0 if it cannot be read). */
static int64_t logdir_mtime_ns(const struct vfs *v)
{
    struct stat st;

    if (stat(v->cat->logdir, &st) != 0)
        return 0;
    return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int vfs_lookup(struct vfs *v, const char *path, struct vfs_node *node, struct xp_err *err)
{
    char buf[PATH_MAX];
    char *parts[64];
    char prefix[PATH_MAX] = "";
    int n, k, rc;

    memset(node, 0, sizeof(*node));
    if (strlen(path) >= sizeof(buf))
        return xp_err_set(err, -ENAMETOOLONG, "path too long");
    strcpy(buf, path);
    n = split_path(buf, parts, 64);
    if (n < 0)
        return xp_err_set(err, -ENOENT, "path too deep");
    for (k = 0; k < n; k++) {
        const char *q = strchr(parts[k], '?');
        size_t clen = q ? (size_t)(q - parts[k]) : strlen(parts[k]);
        if (bad_component(parts[k], clen) || (q != NULL && k != n - 1))
            return xp_err_set(err, -ENOENT, "no such file");
    }
    if (n == 0) {
        node->kind = VFS_DIR;
        node->mtime_ns = logdir_mtime_ns(v);
        return 0;
    }
    if (n == 1 && strcmp(parts[0], "README.txt") == 0) {
        node->kind = VFS_README;
        node->mtime_ns = logdir_mtime_ns(v);
        return 0;
    }
    /* Walk down through directories on the way to runs; at each prefix that is
     * a run, try the rest inside it. */
    for (k = 0; k < n; k++) {
        struct session *s;
        size_t len = strlen(prefix);

        if (snprintf(prefix + len, sizeof(prefix) - len, "%s%s", len ? "/" : "", parts[k]) >=
            (int)(sizeof(prefix) - len))
            return xp_err_set(err, -ENOENT, "path too long");
        s = catalog_find(v->cat, prefix);
        if (s == NULL && k == 0) {
            /* A run that appeared since the last walk shows up without a remount. */
            catalog_rescan(v->cat, 0);
            s = catalog_find(v->cat, prefix);
        }
        if (s != NULL) {
            rc = resolve_in_run(s, parts + k + 1, n - k - 1, node, err);
            session_unref(s);
            if (rc != -ENOENT)
                return rc;
            vfs_node_free(node);
        }
        if (!catalog_is_dir(v->cat, prefix))
            break;
        if (k == n - 1) {
            node->kind = VFS_DIR;
            node->mtime_ns = logdir_mtime_ns(v);
            return 0;
        }
    }
    return xp_err_set(err, -ENOENT, "no such file");
}

struct list_ctx {
    int (*fn)(void *arg, const char *name, int is_dir);
    void *arg;
};

static int list_child(void *arg, const char *name, int is_run)
{
    struct list_ctx *lc = arg;
    (void)is_run;
    return lc->fn(lc->arg, name, 1);
}

/* List the tool files of scope in a run: those of tool directory dir (NULL:
 * the files of the run or host directory itself, and each tool directory
 * once, where the tool's name holds a '/'). */
static int list_tools(struct snapshot *snap, unsigned scope, const char *dir,
                      int (*fn)(void *arg, const char *name, int is_dir), void *arg)
{
    size_t dlen = dir != NULL ? strlen(dir) : 0;
    int i, j, rc = 0;

    for (i = 0; rc == 0 && tool_table[i] != NULL; i++) {
        const struct tool *t = tool_table[i];
        const char *slash = strchr(t->file, '/');
        if (scope == TOOL_RUN && (t->flags & TOOL_ONE_HOST) && snap->nhosts > 1)
            continue;
        if ((t->flags & TOOL_UNLISTED) != 0)
            continue;
        if (!(t->scope & scope) || (t->listed != NULL && !t->listed(snap)))
            continue;
        if (dir != NULL) {
            if (strncmp(t->file, dir, dlen) == 0 && t->file[dlen] == '/')
                rc = fn(arg, t->file + dlen + 1, 0);
        } else if (slash == NULL) {
            rc = fn(arg, t->file, 0);
        } else {
            /* the directory, at its first listed tool */
            size_t n = (size_t)(slash - t->file);
            char name[NAME_MAX + 1];
            for (j = 0; j < i; j++) {
                const struct tool *u = tool_table[j];
                if (strncmp(u->file, t->file, n + 1) == 0 && (u->scope & scope) &&
                    !(u->flags & TOOL_UNLISTED) && (u->listed == NULL || u->listed(snap)))
                    break;
            }
            if (j == i && n <= NAME_MAX) {
                memcpy(name, t->file, n);
                name[n] = '\0';
                rc = fn(arg, name, 1);
            }
        }
    }
    return rc;
}

int vfs_list(struct vfs *v, const char *path, int (*fn)(void *arg, const char *name, int is_dir),
             void *arg, struct xp_err *err)
{
    struct vfs_node node;
    struct list_ctx lc = {fn, arg};
    char buf[PATH_MAX];
    char *parts[64];
    int n, rc;

    rc = vfs_lookup(v, path, &node, err);
    if (rc != 0)
        return rc;
    if (node.kind != VFS_DIR) {
        vfs_node_free(&node);
        return xp_err_set(err, -ENOTDIR, "%s: not a directory", path);
    }
    snprintf(buf, sizeof(buf), "%s", path);
    n = split_path(buf, parts, 64);
    if (node.session == NULL) {
        char prefix[PATH_MAX] = "";
        int k;
        for (k = 0; k < n; k++) {
            size_t len = strlen(prefix);
            snprintf(prefix + len, sizeof(prefix) - len, "%s%s", len ? "/" : "", parts[k]);
        }
        if (n == 0) {
            catalog_rescan(v->cat, 0);
            rc = fn(arg, "README.txt", 0);
        }
        if (rc == 0)
            rc = catalog_children(v->cat, prefix, list_child, &lc);
    } else {
        struct session *s = node.session;
        struct snapshot *snap;
        int depth = 0, k;
        size_t slen = strlen(s->name);
        /* Components below the run directory. */
        char joined[PATH_MAX] = "";
        for (k = 0; k < n; k++) {
            size_t len = strlen(joined);
            snprintf(joined + len, sizeof(joined) - len, "%s%s", len ? "/" : "", parts[k]);
            if (strlen(joined) == slen && strcmp(joined, s->name) == 0) {
                depth = n - k - 1;
                break;
            }
        }
        rc = session_snapshot_listed(s, &snap, err);
        if (rc == 0) {
            char **sub = parts + (n - depth);
            if (depth == 0) {
                rc = list_tools(snap, TOOL_RUN, NULL, fn, arg);
                if (rc == 0)
                    rc = fn(arg, "hosts", 1);
                if (rc == 0)
                    rc = fn(arg, "raw", 1);
                if (rc == 0 && tool_listed_xplane(snap))
                    rc = fn(arg, "cli", 1);
                if (rc == 0 && catalog_is_dir(v->cat, s->name))
                    rc = catalog_children(v->cat, s->name, list_child, &lc);
            } else if (depth == 1 && strcmp(sub[0], "hosts") == 0) {
                uint32_t i;
                for (i = 0; rc == 0 && i < snap->nhosts; i++)
                    rc = fn(arg, snap->hosts[i], 1);
            } else if (depth == 1 && strcmp(sub[0], "cli") == 0) {
                rc = agent_cli_list(fn, arg);
            } else if (depth == 1 && strcmp(sub[0], "raw") == 0) {
                uint32_t i;
                for (i = 0; rc == 0 && i < snap->nfiles; i++)
                    rc = fn(arg, snap->files[i].name, 0);
            } else if (depth == 1) {
                rc = list_tools(snap, TOOL_RUN, sub[0], fn, arg);
            } else if (depth == 2) {
                rc = list_tools(snap, TOOL_HOST, NULL, fn, arg);
            } else if (depth == 3) {
                rc = list_tools(snap, TOOL_HOST, sub[2], fn, arg);
            }
            snapshot_unref(snap);
        }
    }
    vfs_node_free(&node);
    return rc;
}

struct fill_arg {
    struct vfs *v;
    const struct vfs_node *node;
    struct snapshot *snap;
    struct live_blob *live; /* told as the spill file grows, or NULL */
};

/* Where produced files go past OUT_SPILL_THRESHOLD bytes: $XPROFS_SPILL_DIR,
 * else $TMPDIR, else /tmp. */
static const char *spill_dir(void)
{
    const char *dir = getenv("XPROFS_SPILL_DIR");

    if (dir == NULL || dir[0] == '\0')
        dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    return dir;
}

/* Run the node's tool into o; on failure o is emptied and the failure
 * logged where errors.txt reads it. */
static int produce_tool(struct fill_arg *a, struct out *o, struct xp_err *err)
{
    const struct tool *t = a->node->tool;
    struct tool_ctx ctx;
    struct query q;
    int rc;

    /* A source the remote store could not give: the run's files are EIO,
     * but for errors.txt, which says why. */
    if (!(t->flags & TOOL_NO_SOURCES) && snapshot_fetch_failed(a->snap, err) != 0) {
        out_discard(o);
        return -EIO;
    }
    rc = query_parse(a->node->query ? a->node->query : "", t->keys, &q, err);
    if (rc != 0) {
        out_discard(o);
        return rc;
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.snap = a->snap;
    ctx.host = a->node->host;
    ctx.q = &q;
    ctx.err = err;
    ctx.cat = a->v->cat;
    ctx.tool = t;
    /* Its transient arrays' pages go to the arrays made after them. */
    big_pool_hold();
    rc = t->produce(&ctx, o);
    big_pool_release();
    query_free(&q);
    /* A mapped profile cut short while the tool read it gave it zeros, and
     * a source rewritten meanwhile may have given it both old and new
     * bytes: that, not whatever the tool made of them, is the failure, and
     * such a file is neither served nor kept. */
    if (snapshot_sources_cut(a->snap, err) != 0 || snapshot_sources_unchanged(a->snap, err) != 0)
        rc = err->code;
    if (a->live != NULL && live_stopped(a->live)) {
        /* Nobody reads it any more: no failure to report. */
        out_discard(o);
        return xp_err_set(err, -ECANCELED, "%s: nobody reads it any more", t->file);
    }
    if (rc != 0) {
        out_discard(o);
        if (rc == -EIO || rc == -ENOMEM)
            snapshot_log(a->snap, "%s%s%s%s: %s", a->node->host ? "hosts/" : "",
                         a->node->host ? a->node->host : "", a->node->host ? "/" : "", t->file,
                         err->msg);
        else if (rc == -EINVAL)
            snapshot_log(a->snap, "%s%s%s%s%s%s: %s", a->node->host ? "hosts/" : "",
                         a->node->host ? a->node->host : "", a->node->host ? "/" : "", t->file,
                         a->node->query ? "?" : "", a->node->query ? a->node->query : "", err->msg);
    }
    return rc;
}

/* Where the bytes of a finished writer could not go (spill file or fd):
 * logged, and EIO for the reader unless the disk is full. */
static int output_failed(struct fill_arg *a, int rc, const char *where, struct xp_err *err)
{
    const struct tool *t = a->node->tool;
    int code = rc == -ENOSPC || rc == -EDQUOT ? rc : -EIO;

    snapshot_log(a->snap, "%s%s%s%s: %s: %s", a->node->host ? "hosts/" : "",
                 a->node->host ? a->node->host : "", a->node->host ? "/" : "", t->file, where,
                 strerror(-rc));
    return xp_err_set(err, code, "%s: %s: %s", t->file, where, strerror(-rc));
}

/* Count a file starting (+1) or done (-1: what it freed is untrimmed). */
static void making(struct vfs *v, int d)
{
    pthread_mutex_lock(&v->lock);
    v->making += d;
    v->untrimmed |= d < 0;
    pthread_mutex_unlock(&v->lock);
}

/* What tools freed (their transient arrays, the runs just dropped, a file
 * too big for the cache when its reader goes) would otherwise stay in the
 * process (malloc_trim gives it back), and an idle mount would hold the
 * peak of whatever it made. A read served from the cache frees nothing:
 * no trim. */
void vfs_trim(struct vfs *v, int freed)
{
    int dropped = catalog_trim(v->cat, v->max_live_runs, VFS_IDLE_MS), trim;

    pthread_mutex_lock(&v->lock);
    v->untrimmed |= freed || dropped > 0;
    trim = v->making == 0 && v->untrimmed;
    if (trim)
        v->untrimmed = 0;
    pthread_mutex_unlock(&v->lock);
    if (trim)
        malloc_trim(0);
}

static int fill_tool(void *argp, struct blob **blob, struct xp_err *err)
{
    struct fill_arg *a = argp;
    struct out o;
    char where[4096];
    char *skey = NULL;
    int rc;

    if (storable(a->v, a->node) && (skey = vfs_store_key(a->node, a->snap)) != NULL) {
        *blob = store_get(a->v->store, skey);
        if (*blob != NULL) {
            free(skey);
            (*blob)->gen = a->snap->gen;
            return 0;
        }
    }
    out_init(&o);
    out_spill(&o, spill_dir());
    if (a->live != NULL)
        out_on_spill(&o, live_publish, a->live);
    making(a->v, 1);
    rc = produce_tool(a, &o, err);
    making(a->v, -1);
    if (rc == 0) {
        rc = out_finish(&o, blob);
        if (rc == -ENOMEM) {
            rc = xp_err_set(err, rc, "%s: out of memory", a->node->tool->file);
        } else if (rc != 0) {
            /* A missing or unwritable directory is no fault of the file read. */
            snprintf(where, sizeof(where), "spill file in %s", spill_dir());
            rc = output_failed(a, rc, where, err);
        }
    }
    if (rc != 0) {
        free(skey);
        return rc;
    }
    (*blob)->gen = a->snap->gen;
    (*blob)->final = !snapshot_is_fresh(a->snap, 2);
    if (skey != NULL && (*blob)->final) {
        struct xp_err serr = {0};
        /* A file that cannot be kept is still served: the reason is logged. */
        if (store_put_blob(a->v->store, skey, *blob, &serr) != 0)
            snapshot_log(a->snap, "%s: not kept in the cache directory: %s", a->node->tool->file,
                         serr.msg);
    }
    free(skey);
    return 0;
}

/* The snapshot node's file is made from: its sources copied from a remote
 * store first, unless the file reads none (errors.txt). */
static int node_snapshot(const struct vfs_node *node, struct snapshot **snapp, struct xp_err *err)
{
    if (node->tool != NULL && (node->tool->flags & TOOL_NO_SOURCES))
        return session_snapshot_listed(node->session, snapp, err);
    return session_snapshot(node->session, snapp, err);
}

int vfs_open_raw(struct vfs *v, const struct vfs_node *node, int *fdp, struct xp_err *err)
{
    struct snapshot *snap;
    int rc;

    (void)v;
    *fdp = -1;
    if (node->kind != VFS_RAW)
        return xp_err_set(err, -EINVAL, "not a source file");
    /* Copied from the store first, if it lives in one. */
    rc = session_snapshot(node->session, &snap, err);
    if (rc != 0)
        return rc;
    rc = snapshot_fetch_failed(snap, err);
    snapshot_unref(snap);
    if (rc != 0)
        return rc;
    *fdp = open(node->raw_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (*fdp < 0)
        return xp_err_set(err, -errno, "%s: %s", node->raw_path, strerror(errno));
    return 0;
}

int vfs_read(struct vfs *v, const struct vfs_node *node, struct blob **blob, struct xp_err *err)
{
    struct fill_arg a;
    int rc;

    *blob = NULL;
    if (node->kind == VFS_README) {
        *blob = blob_from_mem(readme_text, sizeof(readme_text) - 1);
        return *blob ? 0 : xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (node->kind != VFS_TOOL)
        return xp_err_set(err, -EISDIR, "not a produced file");
    a.v = v;
    a.node = node;
    a.live = NULL;
    rc = node_snapshot(node, &a.snap, err);
    if (rc != 0)
        return rc;
    rc = cache_get(&v->cache, node->key, a.snap->gen, !(node->tool->flags & TOOL_UNCACHED),
                   fill_tool, &a, blob, err);
    snapshot_unref(a.snap);
    vfs_trim(v, 0);
    return rc;
}

/* --- files made in a thread of their own (vfs_open_file) ------------------ */

static int node_copy(const struct vfs_node *src, struct vfs_node *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->kind = src->kind;
    dst->tool = src->tool;
    dst->raw_size = src->raw_size;
    dst->mtime_ns = src->mtime_ns;
    dst->session = session_ref(src->session);
    if ((src->host != NULL && (dst->host = strdup(src->host)) == NULL) ||
        (src->query != NULL && (dst->query = strdup(src->query)) == NULL) ||
        (src->key != NULL && (dst->key = strdup(src->key)) == NULL) ||
        (src->raw_path != NULL && (dst->raw_path = strdup(src->raw_path)) == NULL)) {
        vfs_node_free(dst);
        return -ENOMEM;
    }
    return 0;
}

static void producing_free(struct vfs_producing *p)
{
    live_unref(p->live);
    snapshot_unref(p->snap);
    vfs_node_free(&p->node);
    free(p);
}

/*
 * Waits for one of the VFS_MAX_MAKING turns and lowers this thread's
 * priority. Returns 0, or -ECANCELED when vfs_close stopped the file while
 * it waited.
 */
static int take_turn(struct vfs *v, struct live_blob *live)
{
    pthread_mutex_lock(&v->lock);
    while (v->producing_now >= VFS_MAX_MAKING)
        pthread_cond_wait(&v->turn, &v->lock);
    v->producing_now++;
    pthread_mutex_unlock(&v->lock);
    /* Linux: the nice value of this thread alone. On failure the file is
     * made at the mount's priority, which is slower for others only. */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), VFS_MAKING_NICE);
    return live_stopped(live) ? -ECANCELED : 0;
}

static void give_turn(struct vfs *v)
{
    pthread_mutex_lock(&v->lock);
    v->producing_now--;
    pthread_cond_signal(&v->turn);
    pthread_mutex_unlock(&v->lock);
}

static void *produce_thread(void *arg)
{
    struct vfs_producing *p = arg, **pp;
    struct vfs *v = p->v;
    struct fill_arg a = {.v = v, .node = &p->node, .snap = p->snap, .live = p->live};
    struct xp_err err = {0};
    struct blob *b = NULL;
    struct live_blob *live;
    struct snapshot *snap;
    struct vfs_node node;
    int rc;

    rc = take_turn(v, p->live);
    if (rc == 0)
        rc = cache_get(&v->cache, p->node.key, p->snap->gen, 1, fill_tool, &a, &b, &err);
    else
        xp_err_set(&err, rc, "%s: not made: the mount is closing", p->node.tool->file);
    give_turn(v);
    live_finish(p->live, rc, b, &err);
    /* Done: openers from now on find the blob (or make the file again). */
    pthread_mutex_lock(&v->lock);
    live = p->live;
    snap = p->snap;
    node = p->node;
    p->live = NULL;
    p->snap = NULL;
    memset(&p->node, 0, sizeof(p->node));
    pthread_mutex_unlock(&v->lock);
    live_unref(live);
    snapshot_unref(snap);
    vfs_node_free(&node);
    vfs_trim(v, 0);
    /* The last touch of v: vfs_close may free it once p is unlinked. */
    pthread_mutex_lock(&v->lock);
    for (pp = &v->producing; *pp != p; pp = &(*pp)->next)
        ;
    *pp = p->next;
    pthread_cond_broadcast(&v->produced);
    pthread_mutex_unlock(&v->lock);
    free(p);
    return NULL;
}

/* Start making node in a thread of its own (v->lock held); returns a
 * reference to what its readers follow, or NULL if it could not start. */
static struct live_blob *start_producing(struct vfs *v, const struct vfs_node *node,
                                         struct snapshot *snap)
{
    struct vfs_producing *p = calloc(1, sizeof(*p));
    pthread_attr_t attr;
    pthread_t tid;
    int rc;

    if (p == NULL)
        return NULL;
    p->v = v;
    p->live = live_new();
    if (p->live == NULL || node_copy(node, &p->node) != 0) {
        live_unref(p->live);
        free(p);
        return NULL;
    }
    p->snap = snapshot_ref(snap);
    if (pthread_attr_init(&attr) != 0) {
        producing_free(p);
        return NULL;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    p->next = v->producing;
    v->producing = p;
    rc = pthread_create(&tid, &attr, produce_thread, p);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        v->producing = p->next;
        producing_free(p);
        return NULL;
    }
    return live_ref(p->live);
}

int vfs_open_file(struct vfs *v, const struct vfs_node *node, struct blob **blob,
                  struct live_blob **live, struct xp_err *err)
{
    struct vfs_producing *p;
    struct live_blob *l = NULL;
    struct snapshot *snap;
    int rc;

    *blob = NULL;
    *live = NULL;
    if (node->kind != VFS_TOOL || (node->tool->flags & TOOL_UNCACHED))
        return vfs_read(v, node, blob, err);
    rc = node_snapshot(node, &snap, err);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&v->lock);
    for (p = v->producing; p != NULL && l == NULL; p = p->next) {
        if (p->live != NULL && p->snap->gen == snap->gen && strcmp(p->node.key, node->key) == 0)
            l = live_follow(p->live); /* NULL if stopped: make it afresh */
    }
    if (l == NULL) {
        *blob = cache_peek(&v->cache, node->key, snap->gen);
        if (*blob == NULL)
            l = start_producing(v, node, snap);
    }
    pthread_mutex_unlock(&v->lock);
    snapshot_unref(snap);
    if (*blob != NULL)
        return 0;
    if (l == NULL) /* no thread: make it here */
        return vfs_read(v, node, blob, err);
    if (!live_wait_started(l)) {
        *live = l;
        return 0;
    }
    /* Finished before it grew past the threshold; done fields are final. */
    rc = l->rc;
    if (rc == 0)
        *blob = blob_ref(l->blob);
    else if (err != NULL)
        *err = l->err;
    live_unref(l);
    return rc;
}

/* out_on_stream: the streamed bytes into the cache entry being written
 * (a failed write only makes the commit fail: the file still streams). */
static void tee_to_entry(void *arg, const void *p, size_t n)
{
    (void)store_put_write(arg, p, n);
}

/* vfs_read_to of a file the persistent cache keeps: a hit is copied to fd;
 * a miss streams to fd as it is made, each byte also written once into
 * the entry's temporary file, which is committed (fsync, rename) once the
 * file is whole. A file of a source still being written is not kept. */
static int read_to_store(struct vfs *v, const struct vfs_node *node, int fd, struct xp_err *err)
{
    struct store_writer *w = NULL;
    struct xp_err serr = {0};
    struct fill_arg a;
    struct blob *b = NULL;
    struct out o;
    char *skey;
    int rc;

    a.v = v;
    a.node = node;
    a.live = NULL;
    if ((rc = node_snapshot(node, &a.snap, err)) != 0)
        return rc;
    skey = vfs_store_key(node, a.snap);
    if (skey != NULL && (b = store_get(v->store, skey)) != NULL) {
        rc = blob_write_fd(b, fd);
        if (rc != 0)
            xp_err_set(err, rc, "write: %s", strerror(-rc));
        goto done;
    }
    if (skey != NULL && !snapshot_is_fresh(a.snap, 2) &&
        store_put_begin(v->store, skey, &w, &serr) != 0)
        snapshot_log(a.snap, "%s: not kept in the cache directory: %s", node->tool->file, serr.msg);
    out_init(&o);
    out_stream_at(&o, fd, VFS_CAT_STREAM_AT);
    if (w != NULL)
        out_on_stream(&o, tee_to_entry, w);
    making(v, 1);
    rc = produce_tool(&a, &o, err);
    making(v, -1);
    if (rc == 0) {
        rc = out_finish_to(&o, fd);
        if (rc == -ENOMEM)
            rc = xp_err_set(err, rc, "%s: out of memory", node->tool->file);
        else if (rc != 0)
            rc = output_failed(&a, rc, "write", err);
    } else {
        out_discard(&o);
    }
    if (rc == 0 && w != NULL) {
        if (store_put_commit(w, &serr) != 0)
            snapshot_log(a.snap, "%s: not kept in the cache directory: %s", node->tool->file,
                         serr.msg);
    } else {
        store_put_abort(w);
    }
    vfs_trim(v, 1);
done:
    blob_unref(b);
    free(skey);
    snapshot_unref(a.snap);
    return rc;
}

int vfs_read_to(struct vfs *v, const struct vfs_node *node, int fd, struct xp_err *err)
{
    struct fill_arg a;
    struct blob *b;
    struct out o;
    int rc;

    if (node->kind != VFS_TOOL) {
        rc = vfs_read(v, node, &b, err);
        if (rc == 0) {
            rc = blob_write_fd(b, fd);
            blob_unref(b);
            if (rc != 0)
                xp_err_set(err, rc, "write: %s", strerror(-rc));
        }
        return rc;
    }
    if (storable(v, node))
        return read_to_store(v, node, fd, err);
    a.v = v;
    a.node = node;
    a.live = NULL;
    rc = node_snapshot(node, &a.snap, err);
    if (rc != 0)
        return rc;
    out_init(&o);
    out_stream_at(&o, fd, VFS_CAT_STREAM_AT);
    rc = produce_tool(&a, &o, err);
    if (rc == 0) {
        rc = out_finish_to(&o, fd);
        if (rc == -ENOMEM)
            rc = xp_err_set(err, rc, "%s: out of memory", node->tool->file);
        else if (rc != 0)
            rc = output_failed(&a, rc, "write", err);
    }
    snapshot_unref(a.snap);
    vfs_trim(v, 0);
    return rc;
}

off_t vfs_known_size(struct vfs *v, const struct vfs_node *node)
{
    struct snapshot *snap;
    long long size;

    if (node->kind == VFS_README)
        return (off_t)(sizeof(readme_text) - 1);
    if (node->kind == VFS_RAW)
        return node->raw_size;
    if (node->kind != VFS_TOOL || session_snapshot_listed(node->session, &snap, NULL) != 0)
        return 0;
    size = cache_known_size(&v->cache, node->key, snap->gen);
    snapshot_unref(snap);
    return size > 0 ? (off_t)size : 0;
}

uint64_t vfs_generation(struct vfs *v, const struct vfs_node *node)
{
    struct snapshot *snap;
    uint64_t gen;

    (void)v;
    if (node->session == NULL || session_snapshot_listed(node->session, &snap, NULL) != 0)
        return 0;
    gen = snap->gen;
    snapshot_unref(snap);
    return gen;
}
