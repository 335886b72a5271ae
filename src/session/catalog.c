/*
 * catalog.c - finding runs under LOGDIR; see catalog.h.
 */
#include "base/sort.h"
#include "catalog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CATALOG_MAX_DEPTH 24
#define CATALOG_MAX_RUNS 200000

struct found {
    char **names; /* run names */
    char **dirs;  /* absolute run directories */
    size_t n;     /* entries */
    size_t cap;   /* allocated */
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int found_add(struct found *f, const char *name, const char *dir)
{
    if (f->n >= CATALOG_MAX_RUNS)
        return 0;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        char **n = realloc(f->names, cap * sizeof(*n));
        if (n == NULL)
            return -ENOMEM;
        f->names = n;
        n = realloc(f->dirs, cap * sizeof(*n));
        if (n == NULL)
            return -ENOMEM;
        f->dirs = n;
        f->cap = cap;
    }
    f->names[f->n] = strdup(name);
    f->dirs[f->n] = strdup(dir);
    if (f->names[f->n] == NULL || f->dirs[f->n] == NULL) {
        free(f->names[f->n]);
        free(f->dirs[f->n]);
        return -ENOMEM;
    }
    f->n++;
    return 0;
}

static void found_free(struct found *f)
{
    size_t i;

    for (i = 0; i < f->n; i++) {
        free(f->names[i]);
        free(f->dirs[i]);
    }
    free(f->names);
    free(f->dirs);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcmp(s + n - m, suf) == 0;
}

/* 1 if name is a real directory (not a symlink) inside dfd. */
static int is_dir_at(int dfd, const char *name, unsigned char d_type)
{
    struct stat st;

    if (d_type == DT_DIR)
        return 1;
    if (d_type != DT_UNKNOWN)
        return 0;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Join a relative name: "" + x = x, a + x = a/x. */
static void join(char *dst, size_t n, const char *a, const char *b)
{
    if (a[0] == '\0')
        snprintf(dst, n, "%s", b);
    else
        snprintf(dst, n, "%s/%s", a, b);
}

/* Add every subdirectory of <abs>/plugins/profile as a run of tbrun rel. */
static int add_profile_runs(struct found *f, const char *abs, const char *rel)
{
    char pdir[PATH_MAX];
    DIR *d;
    struct dirent *de;
    int rc = 0;

    snprintf(pdir, sizeof(pdir), "%s/plugins/profile", abs);
    d = opendir(pdir);
    if (d == NULL)
        return 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char name[PATH_MAX], dir[PATH_MAX];
        if (de->d_name[0] == '.' || !is_dir_at(dirfd(d), de->d_name, de->d_type))
            continue;
        join(name, sizeof(name), rel, de->d_name);
        snprintf(dir, sizeof(dir), "%s/%s", pdir, de->d_name);
        rc = found_add(f, name, dir);
    }
    closedir(d);
    return rc;
}

/* Walk directory abs (relative name rel) for runs. */
static int walk(struct found *f, const char *abs, const char *rel, int depth)
{
    DIR *d;
    struct dirent *de;
    int rc = 0, has_pt = 0;
    char **subdirs = NULL;
    size_t nsub = 0, i;

    if (depth > CATALOG_MAX_DEPTH)
        return 0;
    d = opendir(abs);
    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (has_suffix(de->d_name, ".pt.trace.json") ||
            has_suffix(de->d_name, ".pt.trace.json.gz")) {
            has_pt = 1;
            continue;
        }
        if (is_dir_at(dirfd(d), de->d_name, de->d_type)) {
            char **ns = realloc(subdirs, (nsub + 1) * sizeof(*ns));
            if (ns == NULL) {
                rc = -ENOMEM;
                break;
            }
            subdirs = ns;
            subdirs[nsub] = strdup(de->d_name);
            if (subdirs[nsub] == NULL) {
                rc = -ENOMEM;
                break;
            }
            nsub++;
        }
    }
    closedir(d);
    if (rc == 0 && has_pt && rel[0] != '\0')
        rc = found_add(f, rel, abs);
    for (i = 0; rc == 0 && i < nsub; i++) {
        char cabs[PATH_MAX], crel[PATH_MAX];
        if (strcmp(subdirs[i], "plugins") == 0) {
            rc = add_profile_runs(f, abs, rel);
            continue; /* runs do not nest inside plugins/ */
        }
        snprintf(cabs, sizeof(cabs), "%s/%s", abs, subdirs[i]);
        join(crel, sizeof(crel), rel, subdirs[i]);
        rc = walk(f, cabs, crel, depth + 1);
    }
    for (i = 0; i < nsub; i++)
        free(subdirs[i]);
    free(subdirs);
    return rc;
}

static int session_cmp(const void *a, const void *b)
{
    return strcmp((*(struct session *const *)a)->name, (*(struct session *const *)b)->name);
}

/* Binary search for name; index or -1. Caller holds the lock. */
static long find_locked(struct catalog *cat, const char *name)
{
    size_t lo = 0, hi = cat->nruns;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(cat->runs[mid]->name, name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int rescan_locked(struct catalog *cat)
{
    struct found f = {0};
    struct session **runs;
    size_t i, n = 0;
    int rc;

    if (cat->hook != NULL && cat->hook->refresh != NULL)
        cat->hook->refresh(cat->hook->arg, NULL); /* on failure, the copy as it is */
    rc = walk(&f, cat->logdir, "", 0);
    if (rc != 0) {
        found_free(&f);
        return rc;
    }
    runs = calloc(f.n ? f.n : 1, sizeof(*runs));
    if (runs == NULL) {
        found_free(&f);
        return -ENOMEM;
    }
    for (i = 0; i < f.n; i++) {
        long old = find_locked(cat, f.names[i]);
        struct session *s = NULL;
        if (old >= 0 && strcmp(cat->runs[old]->dir, f.dirs[i]) == 0)
            s = session_ref(cat->runs[old]);
        else
            s = session_new(f.names[i], f.dirs[i], cat->logdir);
        if (s != NULL)
            s->hook = cat->hook;
        if (s != NULL)
            runs[n++] = s;
    }
    xp_qsort(runs, n, sizeof(*runs), session_cmp);
    /* Drop duplicates (a name reached two ways keeps its first directory). */
    if (n > 1) {
        size_t w = 1;
        for (i = 1; i < n; i++) {
            if (strcmp(runs[i]->name, runs[w - 1]->name) == 0)
                session_unref(runs[i]);
            else
                runs[w++] = runs[i];
        }
        n = w;
    }
    for (i = 0; i < cat->nruns; i++)
        session_unref(cat->runs[i]);
    free(cat->runs);
    cat->runs = runs;
    cat->nruns = n;
    cat->last_scan_ms = now_ms();
    found_free(&f);
    return 0;
}

int catalog_open(const char *logdir, struct catalog **catp, struct xp_err *err)
{
    return catalog_open_source(logdir, NULL, catp, err);
}

int catalog_open_source(const char *logdir, const struct source_hook *hook, struct catalog **catp,
                        struct xp_err *err)
{
    struct catalog *cat;
    char real[PATH_MAX];
    struct stat st;
    int rc;

    *catp = NULL;
    if (realpath(logdir, real) == NULL)
        return xp_err_set(err, -errno, "%s: %s", logdir, strerror(errno));
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
        return xp_err_set(err, -ENOTDIR, "%s: not a directory", logdir);
    cat = calloc(1, sizeof(*cat));
    if (cat == NULL || (cat->logdir = strdup(real)) == NULL) {
        free(cat);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    pthread_mutex_init(&cat->lock, NULL);
    cat->rescan_ms = 1000;
    cat->hook = hook;
    pthread_mutex_lock(&cat->lock);
    rc = rescan_locked(cat);
    pthread_mutex_unlock(&cat->lock);
    if (rc != 0) {
        catalog_close(cat);
        return xp_err_set(err, rc, "%s: cannot walk: %s", logdir, strerror(-rc));
    }
    *catp = cat;
    return 0;
}

/* 1 if dir directly holds a file whose name ends with suffix. */
static int holds_suffix(const char *dir, const char *suffix)
{
    size_t ns = strlen(suffix);
    struct dirent *e;
    DIR *d = opendir(dir);
    int yes = 0;

    if (d == NULL)
        return 0;
    while (!yes && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        yes = n > ns && strcmp(e->d_name + n - ns, suffix) == 0;
    }
    closedir(d);
    return yes;
}

/* 1 if path's last components are the given names (last one first). */
static int ends_with_dirs(const char *path, const char *const *names, int n)
{
    size_t end = strlen(path);
    int i;

    for (i = 0; i < n; i++) {
        size_t len = strlen(names[i]), start;
        if (end < len + 1)
            return 0;
        start = end - len;
        if (strncmp(path + start, names[i], len) != 0 || path[start - 1] != '/')
            return 0;
        end = start - 1;
    }
    return 1;
}

int catalog_empty_reason(struct catalog *cat, const char *given, char *buf, size_t n,
                         int *misplaced)
{
    static const char *const profile[] = {"profile", "plugins"};
    static const char *const plugins[] = {"plugins"};
    const char *dir = cat->logdir, *hint = "";
    char parent[PATH_MAX];
    size_t nruns;

    pthread_mutex_lock(&cat->lock);
    nruns = cat->nruns;
    pthread_mutex_unlock(&cat->lock);
    *misplaced = 0;
    if (nruns > 0)
        return 0;
    snprintf(parent, sizeof(parent), "%s", dir);
    if (strrchr(parent, '/') != NULL)
        *strrchr(parent, '/') = '\0';
    if (ends_with_dirs(parent, profile, 2))
        hint = "; did you mean ../../.. (this is a run folder)?";
    else if (ends_with_dirs(dir, profile, 2))
        hint = "; did you mean ../..?";
    else if (ends_with_dirs(dir, plugins, 1))
        hint = "; did you mean ..?";
    else if (holds_suffix(dir, ".xplane.pb") || holds_suffix(dir, ".xplane.pb.gz"))
        hint = "; its .xplane.pb files belong in plugins/profile/<run>/ under the log directory";
    else if (holds_suffix(dir, ".pt.trace.json") || holds_suffix(dir, ".pt.trace.json.gz"))
        hint = "; did you mean .. (a folder of PyTorch traces is a run of the directory above)?";
    *misplaced = hint[0] != '\0';
    snprintf(buf, n,
             "no profiles under %s: looked for plugins/profile/*/*.xplane.pb and "
             "*.pt.trace.json*%s",
             given, hint);
    return 1;
}

void catalog_close(struct catalog *cat)
{
    size_t i;

    if (cat == NULL)
        return;
    for (i = 0; i < cat->nruns; i++)
        session_unref(cat->runs[i]);
    free(cat->runs);
    pthread_mutex_destroy(&cat->lock);
    free(cat->logdir);
    free(cat);
}

int catalog_rescan(struct catalog *cat, int force)
{
    int rc = 0;

    pthread_mutex_lock(&cat->lock);
    if (force || now_ms() - cat->last_scan_ms >= cat->rescan_ms)
        rc = rescan_locked(cat);
    pthread_mutex_unlock(&cat->lock);
    return rc;
}

struct session *catalog_find(struct catalog *cat, const char *name)
{
    struct session *s = NULL;
    long i;

    pthread_mutex_lock(&cat->lock);
    i = find_locked(cat, name);
    if (i >= 0)
        s = session_ref(cat->runs[i]);
    pthread_mutex_unlock(&cat->lock);
    return s;
}

/* First index whose name is >= key. Caller holds the lock. */
static size_t lower_bound(struct catalog *cat, const char *key)
{
    size_t lo = 0, hi = cat->nruns;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(cat->runs[mid]->name, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A session with its last use, read once (it changes under other locks). */
struct live_run {
    struct session *s;
    int64_t last_used_ms;
};

static int by_last_used_desc(const void *a, const void *b)
{
    const struct live_run *x = a, *y = b;
    return (x->last_used_ms < y->last_used_ms) - (x->last_used_ms > y->last_used_ms);
}

int catalog_trim(struct catalog *cat, int max_live, int64_t idle_ms)
{
    struct live_run *live;
    size_t n = 0, i;
    int dropped = 0;
    int64_t now = now_ms();

    pthread_mutex_lock(&cat->lock);
    live = malloc((cat->nruns ? cat->nruns : 1) * sizeof(*live));
    if (live != NULL) {
        for (i = 0; i < cat->nruns; i++) {
            if (session_holds_data(cat->runs[i])) {
                live[n].s = session_ref(cat->runs[i]);
                live[n++].last_used_ms = session_last_used_ms(cat->runs[i]);
            }
        }
    }
    pthread_mutex_unlock(&cat->lock);
    if (live == NULL)
        return 0;
    xp_qsort(live, n, sizeof(*live), by_last_used_desc);
    for (i = 0; i < n; i++) {
        if ((int)i >= max_live || now - live[i].last_used_ms > idle_ms)
            dropped += session_release(live[i].s);
        session_unref(live[i].s);
    }
    free(live);
    return dropped;
}

int catalog_is_dir(struct catalog *cat, const char *prefix)
{
    char key[PATH_MAX];
    size_t i, n;
    int yes = 0;

    if (prefix[0] == '\0')
        return 1;
    n = (size_t)snprintf(key, sizeof(key), "%s/", prefix);
    if (n >= sizeof(key))
        return 0;
    pthread_mutex_lock(&cat->lock);
    i = lower_bound(cat, key);
    yes = i < cat->nruns && strncmp(cat->runs[i]->name, key, n) == 0;
    pthread_mutex_unlock(&cat->lock);
    return yes;
}

int catalog_children(struct catalog *cat, const char *prefix,
                     int (*fn)(void *arg, const char *name, int is_run), void *arg)
{
    char key[PATH_MAX], last[PATH_MAX] = "";
    size_t i, n = 0;
    int rc = 0;

    if (prefix[0] != '\0') {
        n = (size_t)snprintf(key, sizeof(key), "%s/", prefix);
        if (n >= sizeof(key))
            return 0;
    } else {
        key[0] = '\0';
    }
    pthread_mutex_lock(&cat->lock);
    for (i = lower_bound(cat, key); rc == 0 && i < cat->nruns; i++) {
        const char *name = cat->runs[i]->name;
        const char *rest, *slash;
        char child[PATH_MAX];
        size_t clen;

        if (strncmp(name, key, n) != 0)
            break;
        rest = name + n;
        slash = strchr(rest, '/');
        clen = slash ? (size_t)(slash - rest) : strlen(rest);
        if (clen == 0 || clen >= sizeof(child))
            continue;
        memcpy(child, rest, clen);
        child[clen] = '\0';
        if (strcmp(child, last) == 0)
            continue;
        if (slash != NULL) {
            /* "x" sorts before "x-y" before "x/z": a run named exactly x was
             * reported already, as a run. */
            char exact[PATH_MAX];
            snprintf(exact, sizeof(exact), "%s%s", key, child);
            if (find_locked(cat, exact) >= 0)
                continue;
        }
        snprintf(last, sizeof(last), "%s", child);
        /* Sorted order puts "x" before "x/...", so is_run is known here. */
        rc = fn(arg, child, slash == NULL);
    }
    pthread_mutex_unlock(&cat->lock);
    return rc;
}
