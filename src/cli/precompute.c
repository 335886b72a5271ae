/*
 * precompute.c - `xprofs precompute LOGDIR [RUN] [--host H | --task I --tasks N]
 * [--all-hosts] [--files F,...] --cache-dir DIR`; see precompute.h.
 *
 * For every run (or RUN), every host of this call's share (--host H; task I
 * of N: the hosts whose index in the sorted host list is I modulo N; all
 * hosts by default) gets its hosts/<host>/ files made into DIR, with their
 * default options. The run's all-hosts files are made too when this call
 * covers every host (no --host, N = 1) or with --all-hosts (a final combine
 * step after the array tasks). A file found in DIR already is not made
 * again. One line per run on stdout (with the profiles it decoded: 0 for a
 * combine step whose files all combine the hosts' entries in DIR); one line
 * per file that failed on stderr. Exit 0, 1 (no such run or host), 2 (usage), 3 (a file failed).
 */
#include "precompute.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "vfs/vfs.h"

struct share {
    const char *host;  /* --host, or NULL */
    long task, tasks;  /* --task I --tasks N */
    int all_hosts;     /* --all-hosts */
    const char *files; /* --files a,b (NULL: every listed file) */
};

struct tally {
    int made, cached, failed, skipped;
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether file is one of the comma-separated names of list (NULL: all). */
static int wanted(const char *list, const char *file)
{
    size_t n = strlen(file);
    const char *p = list;

    if (list == NULL)
        return 1;
    while ((p = strstr(p, file)) != NULL) {
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
        p += n;
    }
    return 0;
}

/* 1 if the file of node is in the store already (a valid entry). */
static int in_store(struct vfs *v, const struct vfs_node *node)
{
    struct snapshot *snap;
    struct blob *b = NULL;
    char *key;

    if (session_snapshot(node->session, &snap, NULL) != 0)
        return 0;
    key = vfs_store_key(node, snap);
    if (key != NULL)
        b = store_get(v->store, key);
    free(key);
    snapshot_unref(snap);
    blob_unref(b);
    return b != NULL;
}

/* Make one file (path inside the tree) into the store. */
static void make_one(struct vfs *v, const char *path, struct tally *t)
{
    struct vfs_node node;
    struct xp_err err = {0};
    struct blob *b;
    int rc;

    rc = vfs_lookup(v, path, &node, &err);
    if (rc == 0 && in_store(v, &node)) {
        vfs_node_free(&node);
        t->cached++;
        return;
    }
    if (rc == 0) {
        rc = vfs_read(v, &node, &b, &err);
        vfs_node_free(&node);
        if (rc == 0) {
            blob_unref(b);
            t->made++;
            return;
        }
    }
    if (rc == -EINVAL) {
        /* a file that needs an option (module_name=...): nothing to make */
        t->skipped++;
        return;
    }
    fprintf(stderr, "xprofs precompute: %s: %s\n", path, err.msg[0] ? err.msg : strerror(-rc));
    t->failed++;
}

/* The files of scope (TOOL_HOST under hosts/<host>/, or TOOL_RUN). */
static void make_scope(struct vfs *v, struct snapshot *snap, const char *run, const char *host,
                       const struct share *sh, struct tally *t)
{
    char path[8192];

    for (int i = 0; tool_table[i] != NULL; i++) {
        const struct tool *tl = tool_table[i];
        unsigned scope = host ? TOOL_HOST : TOOL_RUN;
        if (!(tl->scope & scope) || (tl->flags & (TOOL_UNCACHED | TOOL_UNLISTED)) ||
            (tl->listed != NULL && !tl->listed(snap)) || !wanted(sh->files, tl->file))
            continue;
        if (scope == TOOL_RUN && (tl->flags & TOOL_ONE_HOST) && snap->nhosts > 1)
            continue;
        if (host)
            snprintf(path, sizeof(path), "%s/hosts/%s/%s", run, host, tl->file);
        else
            snprintf(path, sizeof(path), "%s/%s", run, tl->file);
        make_one(v, path, t);
        vfs_trim(v, 1);
    }
}

static int precompute_run(struct vfs *v, struct session *s, const struct share *sh)
{
    struct snapshot *snap;
    struct xp_err err = {0};
    struct tally t = {0};
    double t0 = now_s();
    uint64_t decoded0 = snapshot_profiles_opened();
    int mine = 0, rc;

    rc = session_snapshot(s, &snap, &err);
    if (rc != 0) {
        fprintf(stderr, "xprofs precompute: %s: %s\n", s->name, err.msg);
        return 3;
    }
    if (sh->host != NULL && snapshot_host_index(snap, sh->host) < 0) {
        fprintf(stderr, "xprofs precompute: %s: no host %s\n", s->name, sh->host);
        snapshot_unref(snap);
        return 1;
    }
    for (uint32_t i = 0; i < snap->nhosts; i++) {
        const char *h = snap->hosts[i];
        if (sh->host != NULL ? strcmp(h, sh->host) != 0 : (long)(i % sh->tasks) != sh->task)
            continue;
        make_scope(v, snap, s->name, h, sh, &t);
        mine++;
    }
    int whole = sh->all_hosts || (sh->host == NULL && sh->tasks == 1) ||
                (sh->host != NULL && snap->nhosts == 1);
    if (whole)
        make_scope(v, snap, s->name, NULL, sh, &t);
    printf("%s: %d of %u hosts%s: %d files made, %d already cached, %d need options, %d failed, "
           "%llu profiles decoded, %.3f s\n",
           s->name, mine, snap->nhosts, whole ? " and the all-hosts files" : "", t.made, t.cached,
           t.skipped, t.failed, (unsigned long long)(snapshot_profiles_opened() - decoded0),
           now_s() - t0);
    snapshot_unref(snap);
    return t.failed > 0 ? 3 : 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: xprofs precompute LOGDIR [RUN] [--host H | --task I --tasks N] "
                    "[--all-hosts] [--files F,...] --cache-dir DIR [--cache-bytes N]\n");
    return 2;
}

static int parse_long(const char *s, long min, long *v)
{
    char *end;
    long x;

    errno = 0;
    x = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || x < min)
        return -1;
    *v = x;
    return 0;
}

int cmd_precompute(int argc, char **argv, const char *cache_dir, size_t cache_bytes)
{
    struct share sh = {NULL, 0, 1, 0, NULL};
    const char *logdir = NULL, *run = NULL;
    struct xp_err err = {0};
    struct store *st;
    struct vfs *v;
    int rc = 0, task_given = 0, tasks_given = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--host") == 0 && i + 1 < argc)
            sh.host = argv[++i];
        else if (strcmp(a, "--task") == 0 && i + 1 < argc) {
            if (parse_long(argv[++i], 0, &sh.task) != 0)
                return usage();
            task_given = 1;
        } else if (strcmp(a, "--tasks") == 0 && i + 1 < argc) {
            if (parse_long(argv[++i], 1, &sh.tasks) != 0)
                return usage();
            tasks_given = 1;
        } else if (strcmp(a, "--files") == 0 && i + 1 < argc)
            sh.files = argv[++i];
        else if (strcmp(a, "--all-hosts") == 0)
            sh.all_hosts = 1;
        else if (a[0] == '-') {
            fprintf(stderr, "xprofs precompute: unknown option '%s'\n", a);
            return usage();
        } else if (logdir == NULL)
            logdir = a;
        else if (run == NULL)
            run = a;
        else
            return usage();
    }
    if (logdir == NULL || cache_dir == NULL || task_given != tasks_given || sh.task >= sh.tasks ||
        (sh.host != NULL && task_given)) {
        if (cache_dir == NULL)
            fprintf(stderr, "xprofs precompute: --cache-dir DIR is required\n");
        return usage();
    }
    if (vfs_open(logdir, (size_t)64 << 20, &v, &err) != 0) {
        fprintf(stderr, "xprofs precompute: %s\n", err.msg);
        return 1;
    }
    if (store_open(cache_dir, cache_bytes, &st, &err) != 0) {
        fprintf(stderr, "xprofs precompute: %s\n", err.msg);
        vfs_close(v);
        return 3;
    }
    vfs_use_store(v, st);
    /* Only the store keeps what is made: the memory cache holds nothing. */
    if (run != NULL) {
        struct session *s = catalog_find(v->cat, run);
        if (s == NULL) {
            fprintf(stderr, "xprofs precompute: no run %s in %s\n", run, logdir);
            rc = 1;
        } else {
            rc = precompute_run(v, s, &sh);
            session_unref(s);
        }
    } else {
        size_t n;
        struct session **runs;
        pthread_mutex_lock(&v->cat->lock);
        n = v->cat->nruns;
        runs = calloc(n ? n : 1, sizeof(*runs));
        for (size_t i = 0; runs != NULL && i < n; i++)
            runs[i] = session_ref(v->cat->runs[i]);
        pthread_mutex_unlock(&v->cat->lock);
        if (runs == NULL) {
            fprintf(stderr, "xprofs precompute: out of memory\n");
            rc = 3;
            n = 0;
        } else if (n == 0) {
            fprintf(stderr, "xprofs precompute: no run in %s\n", logdir);
            rc = 1;
        }
        for (size_t i = 0; i < n; i++) {
            int one = precompute_run(v, runs[i], &sh);
            if (one > rc)
                rc = one;
            session_unref(runs[i]);
        }
        free(runs);
    }
    vfs_close(v);
    return rc;
}
