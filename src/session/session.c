/*
 * session.c - runs, their snapshots and single-flight intermediates; see session.h.
 */
#include "base/sort.h"
#include "session.h"
#include "base/hash.h"
#include "base/version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define SESSION_MAX_FILES 100000

struct intermediate {
    struct intermediate *next;        /* list link */
    const struct snapshot_part *part; /* kind */
    char *key;                        /* host and variant within the kind */
    int state;                        /* 0 building, 1 done */
    int rc;                           /* build result */
    struct xp_err err;                /* build error */
    void *value;                      /* built value */
};

static int64_t stat_mtime_ns(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static int64_t stat_ctime_ns(const struct stat *st)
{
    return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* Classify a file name; sets *host to a malloc'd host/module name. */
static int classify(const char *name, enum source_kind *kind, char **host)
{
    static const struct {
        const char *suffix;
        enum source_kind kind;
    } rules[] = {
        {".xplane.pb.gz", SRC_XPLANE},       {".xplane.pb", SRC_XPLANE},
        {".pt.trace.json.gz", SRC_PT_TRACE}, {".pt.trace.json", SRC_PT_TRACE},
        {".trace.json.gz", SRC_TRACE_JSON},  {".trace.json", SRC_TRACE_JSON},
        {".hlo_proto.pb", SRC_HLO_PROTO},
    };
    size_t i;

    if (strcmp(name, "perfetto_trace.json.gz") == 0) {
        *kind = SRC_TRACE_JSON;
        *host = strdup("perfetto_trace");
        return *host ? 1 : -ENOMEM;
    }
    for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        if (ends_with(name, rules[i].suffix)) {
            *kind = rules[i].kind;
            *host = strndup(name, strlen(name) - strlen(rules[i].suffix));
            return *host ? 1 : -ENOMEM;
        }
    }
    return 0;
}

#define SNIFF_BYTES 65536 /* of a trace JSON read to tell PyTorch's from others */

/* Up to n bytes of the start of path into buf, inflated when gz is set;
 * returns how many, or 0 when it cannot be read. */
static size_t read_start(const char *path, int gz, char *buf, size_t n)
{
    gzFile f;
    ssize_t got;
    int fd;

    if (gz) {
        f = gzopen(path, "rb");
        if (f == NULL)
            return 0;
        got = gzread(f, buf, (unsigned)n);
        gzclose(f);
        return got > 0 ? (size_t)got : 0;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    got = read(fd, buf, n);
    close(fd);
    return got > 0 ? (size_t)got : 0;
}

/*
 * 1 if the Chrome trace at path is PyTorch's (Kineto's), whatever its name:
 * its start has Kineto's top-level "schemaVersion" or "deviceProperties",
 * or events of its categories cpu_op / python_function. A
 * <host>.trace.json.gz under plugins/profile/<run>/ may be either.
 */
static int is_pytorch_trace(const char *path)
{
    static const char *const marks[] = {"\"schemaVersion\"", "\"deviceProperties\"", "\"cpu_op\"",
                                        "\"python_function\""};
    char *buf = malloc(SNIFF_BYTES);
    size_t n, i;
    int yes = 0;

    if (buf == NULL)
        return 0;
    n = read_start(path, ends_with(path, ".gz"), buf, SNIFF_BYTES);
    for (i = 0; i < sizeof(marks) / sizeof(marks[0]) && !yes; i++)
        yes = memmem(buf, n, marks[i], strlen(marks[i])) != NULL;
    free(buf);
    return yes;
}

/* 1 if path (resolved) lies inside logdir. */
static int inside(const char *logdir, const char *path)
{
    size_t n = strlen(logdir);
    return strncmp(logdir, path, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void files_free(struct source_file *files, uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        free(files[i].name);
        free(files[i].path);
        free(files[i].host);
    }
    free(files);
}

static int file_cmp(const void *a, const void *b)
{
    return strcmp(((const struct source_file *)a)->name, ((const struct source_file *)b)->name);
}

static int host_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Fill f's fingerprint and path for name in dir; 0, or 1 to skip the file. */
static int probe_file(struct session *s, int dfd, const char *name, struct source_file *f)
{
    struct stat st;
    char path[PATH_MAX];

    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 1;
    if (S_ISLNK(st.st_mode)) {
        char joined[PATH_MAX];
        int64_t listed;
        snprintf(joined, sizeof(joined), "%s/%s", s->dir, name);
        if (realpath(joined, path) == NULL && s->hook != NULL && s->hook->pending != NULL &&
            s->hook->pending(s->hook->arg, joined, &listed)) {
            /* A store's object not copied yet: its name and listed size. */
            f->path = strdup(joined);
            if (f->path == NULL)
                return -ENOMEM;
            f->pending = 1;
            f->dev = st.st_dev;
            f->ino = st.st_ino;
            f->size = (off_t)listed;
            f->mtime_ns = stat_mtime_ns(&st);
            f->ctime_ns = stat_ctime_ns(&st);
            return 0;
        }
        if (realpath(joined, path) == NULL || !inside(s->logdir, path))
            return 1; /* dangling, or escaping LOGDIR */
        if (stat(path, &st) != 0)
            return 1;
    } else {
        snprintf(path, sizeof(path), "%s/%s", s->dir, name);
    }
    if (!S_ISREG(st.st_mode))
        return 1;
    f->path = strdup(path);
    if (f->path == NULL)
        return -ENOMEM;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->size = st.st_size;
    f->mtime_ns = stat_mtime_ns(&st);
    f->ctime_ns = stat_ctime_ns(&st);
    return 0;
}

/* List the run directory into a new snapshot. */
static int snapshot_build(struct session *s, struct snapshot **snapp, struct xp_err *err)
{
    struct snapshot *snap;
    DIR *d;
    struct dirent *de;
    uint32_t cap = 0, i;
    int dfd;

    snap = calloc(1, sizeof(*snap));
    if (snap == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    snap->refs = 1;
    snap->session = s;
    pthread_mutex_init(&snap->lock, NULL);
    pthread_cond_init(&snap->cond, NULL);
    d = opendir(s->dir);
    if (d == NULL) {
        int e = errno;
        snapshot_unref(snap);
        return xp_err_set(err, -e, "%s: %s", s->dir, strerror(e));
    }
    dfd = dirfd(d);
    while ((de = readdir(d)) != NULL) {
        struct source_file f;
        int rc;

        memset(&f, 0, sizeof(f));
        rc = classify(de->d_name, &f.kind, &f.host);
        if (rc == 0)
            continue;
        if (rc < 0 || snap->nfiles >= SESSION_MAX_FILES)
            goto next_fail;
        rc = probe_file(s, dfd, de->d_name, &f);
        if (rc != 0) {
            free(f.host);
            free(f.path);
            if (rc < 0)
                goto next_fail;
            continue;
        }
        if (f.kind == SRC_TRACE_JSON && !f.pending && is_pytorch_trace(f.path))
            f.kind = SRC_PT_TRACE;
        f.name = strdup(de->d_name);
        if (f.name == NULL)
            goto next_fail;
        if (snap->nfiles == cap) {
            uint32_t ncap = cap ? cap * 2 : 16;
            struct source_file *nf = realloc(snap->files, ncap * sizeof(*nf));
            if (nf == NULL) {
                free(f.name);
                goto next_fail;
            }
            snap->files = nf;
            cap = ncap;
        }
        snap->files[snap->nfiles++] = f;
        if (f.mtime_ns > snap->newest_mtime_ns)
            snap->newest_mtime_ns = f.mtime_ns;
        continue;
    next_fail:
        free(f.host);
        free(f.path);
        closedir(d);
        snapshot_unref(snap);
        return xp_err_set(err, -ENOMEM, "%s: out of memory or too many files", s->dir);
    }
    closedir(d);
    if (snap->nfiles > 0)
        xp_qsort(snap->files, snap->nfiles, sizeof(*snap->files), file_cmp);

    /* Hosts: from xplane files; a run without any takes its trace files. */
    snap->hosts = calloc(snap->nfiles ? snap->nfiles : 1, sizeof(*snap->hosts));
    if (snap->hosts == NULL) {
        snapshot_unref(snap);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < snap->nfiles; i++) {
        if (snap->files[i].kind == SRC_XPLANE && snapshot_host_index(snap, snap->files[i].host) < 0)
            snap->hosts[snap->nhosts++] = snap->files[i].host;
    }
    if (snap->nhosts == 0) {
        for (i = 0; i < snap->nfiles; i++) {
            enum source_kind k = snap->files[i].kind;
            if ((k == SRC_TRACE_JSON || k == SRC_PT_TRACE) &&
                snapshot_host_index(snap, snap->files[i].host) < 0)
                snap->hosts[snap->nhosts++] = snap->files[i].host;
        }
    }
    xp_qsort(snap->hosts, snap->nhosts, sizeof(*snap->hosts), host_cmp);
    *snapp = snap;
    return 0;
}

struct session *session_new(const char *name, const char *dir, const char *logdir)
{
    struct session *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->name = strdup(name);
    s->dir = strdup(dir);
    s->logdir = strdup(logdir);
    if (s->name == NULL || s->dir == NULL || s->logdir == NULL) {
        free(s->name);
        free(s->dir);
        free(s->logdir);
        free(s);
        return NULL;
    }
    s->refs = 1;
    s->next_gen = 1;
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

struct session *session_ref(struct session *s)
{
    if (s != NULL)
        __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
    return s;
}

void session_unref(struct session *s)
{
    if (s == NULL || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    snapshot_unref(s->snap);
    pthread_mutex_destroy(&s->lock);
    free(s->name);
    free(s->dir);
    free(s->logdir);
    free(s);
}

/* 1 if the directory listing or any file's fingerprint differs from snap. */
/* 1 if source f is no longer what the snapshot listed (a pending one:
 * its placeholder, whose own size is not the listed one). */
static int source_moved(const struct source_file *f)
{
    struct stat st;

    if ((f->pending ? lstat(f->path, &st) : stat(f->path, &st)) != 0)
        return 1;
    return st.st_dev != f->dev || st.st_ino != f->ino || (!f->pending && st.st_size != f->size) ||
           stat_mtime_ns(&st) != f->mtime_ns || stat_ctime_ns(&st) != f->ctime_ns;
}

static int snapshot_stale(struct session *s, const struct snapshot *snap, int64_t dir_mtime_ns)
{
    uint32_t i;

    if (dir_mtime_ns != s->dir_mtime_ns)
        return 1;
    for (i = 0; i < snap->nfiles; i++) {
        if (source_moved(&snap->files[i]))
            return 1;
    }
    return 0;
}

int snapshot_sources_unchanged(const struct snapshot *snap, struct xp_err *err)
{
    uint32_t i;

    for (i = 0; i < snap->nfiles; i++) {
        const struct source_file *f = &snap->files[i];
        if (source_moved(f))
            return xp_err_set(
                err, -EIO, "%s changed while this file was made from it; read it again", f->name);
    }
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A hash of the sources' names and fingerprints: equal hashes, same content. */
static uint64_t snapshot_fp_hash(const struct snapshot *snap)
{
    uint64_t h = FNV64_OFFSET;
    uint32_t i;

    for (i = 0; i < snap->nfiles; i++) {
        const struct source_file *f = &snap->files[i];
        uint64_t v[5] = {(uint64_t)f->dev, (uint64_t)f->ino, (uint64_t)f->size,
                         (uint64_t)f->mtime_ns, (uint64_t)f->ctime_ns};
        int k;
        h = fnv64_add_str(h, f->name);
        for (k = 0; k < 5; k++)
            h = fnv64_add_word(h, v[k]);
    }
    return h;
}

/* What the remote store's fetch said, kept by the snapshot. */
static void note_fetch(struct snapshot *snap, int frc, const char *msg)
{
    pthread_mutex_lock(&snap->lock);
    free(snap->fetch_error);
    snap->fetch_error = frc < 0 ? strdup(msg) : NULL;
    pthread_mutex_unlock(&snap->lock);
    if (frc != 0)
        snapshot_log(snap, "%s", msg);
}

int snapshot_fetch_failed(struct snapshot *snap, struct xp_err *err)
{
    uint32_t i;
    int rc = 0;

    pthread_mutex_lock(&snap->lock);
    if (snap->fetch_error != NULL)
        rc = xp_err_set(err, -EIO, "%s", snap->fetch_error);
    pthread_mutex_unlock(&snap->lock);
    for (i = 0; rc == 0 && i < snap->nfiles; i++) {
        if (snap->files[i].pending)
            rc = xp_err_set(err, -EIO, "%s: not copied from the store yet; read it again",
                            snap->files[i].name);
    }
    return rc;
}

/* How session_get treats a remote store's copy. */
enum get_mode {
    GET_CACHED, /* as it is; copied if there is no snapshot yet */
    GET_FULL,   /* sources checked, the run's objects copied first */
    GET_LISTED, /* sources checked, the store's listing only */
};

static int session_get(struct session *s, enum get_mode mode, struct snapshot **snapp,
                       struct xp_err *err)
{
    struct stat st;
    int64_t dir_mtime = 0;
    int rc = 0, frc = 0, check = mode != GET_CACHED;
    struct xp_err ferr = {0};

    *snapp = NULL;
    if (s->hook != NULL && mode == GET_LISTED)
        frc = s->hook->refresh(s->hook->arg, &ferr);
    else if (s->hook != NULL && (check || s->snap == NULL))
        frc = s->hook->fetch(s->hook->arg, s->dir, &ferr);
    if (stat(s->dir, &st) != 0)
        return xp_err_set(err, -ENOENT, "%s: %s", s->dir, strerror(errno));
    dir_mtime = stat_mtime_ns(&st);
    pthread_mutex_lock(&s->lock);
    __atomic_store_n(&s->last_used_ms, now_ms(), __ATOMIC_RELAXED);
    if (s->snap == NULL || (check && snapshot_stale(s, s->snap, dir_mtime))) {
        struct snapshot *fresh = NULL;
        rc = snapshot_build(s, &fresh, err);
        if (rc == 0) {
            uint64_t h = snapshot_fp_hash(fresh);
            s->dir_mtime_ns = dir_mtime;
            if (s->snap != NULL && h == s->fp_hash) {
                /* Only unrelated files changed: keep what was computed. */
                snapshot_unref(fresh);
            } else {
                /* Unchanged sources after a release keep their generation. */
                fresh->gen = (s->gen != 0 && h == s->fp_hash) ? s->gen : s->next_gen++;
                s->gen = fresh->gen;
                s->fp_hash = h;
                snapshot_unref(s->snap);
                s->snap = fresh;
            }
        }
    }
    if (rc == 0 && s->hook != NULL && mode == GET_LISTED && frc != 0)
        snapshot_log(s->snap, "%s", ferr.msg); /* the listing's failure: no copy's */
    else if (rc == 0 && s->hook != NULL && mode != GET_LISTED && (check || frc != 0))
        note_fetch(s->snap, frc, ferr.msg);
    if (rc == 0)
        *snapp = snapshot_ref(s->snap);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int session_release(struct session *s)
{
    struct snapshot *old = NULL;

    pthread_mutex_lock(&s->lock);
    if (s->snap != NULL && s->snap->inter != NULL) {
        old = s->snap;
        s->snap = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    snapshot_unref(old);
    return old != NULL;
}

int session_holds_data(struct session *s)
{
    int yes;

    pthread_mutex_lock(&s->lock);
    yes = s->snap != NULL && s->snap->inter != NULL;
    pthread_mutex_unlock(&s->lock);
    return yes;
}

int64_t session_last_used_ms(const struct session *s)
{
    return __atomic_load_n(&s->last_used_ms, __ATOMIC_RELAXED);
}

int session_snapshot(struct session *s, struct snapshot **snapp, struct xp_err *err)
{
    return session_get(s, GET_FULL, snapp, err);
}

int session_snapshot_listed(struct session *s, struct snapshot **snapp, struct xp_err *err)
{
    return session_get(s, GET_LISTED, snapp, err);
}

int session_snapshot_cached(struct session *s, struct snapshot **snapp, struct xp_err *err)
{
    return session_get(s, GET_CACHED, snapp, err);
}

struct snapshot *snapshot_ref(struct snapshot *snap)
{
    if (snap != NULL)
        __atomic_add_fetch(&snap->refs, 1, __ATOMIC_RELAXED);
    return snap;
}

void snapshot_unref(struct snapshot *snap)
{
    struct intermediate *it;
    uint32_t i;

    if (snap == NULL || __atomic_sub_fetch(&snap->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    it = snap->inter;
    while (it != NULL) {
        struct intermediate *next = it->next;
        if (it->rc == 0 && it->value != NULL)
            it->part->free(it->value);
        free(it->key);
        free(it);
        it = next;
    }
    for (i = 0; i < snap->nerrors; i++)
        free(snap->errors[i]);
    free(snap->errors);
    free(snap->fetch_error);
    free(snap->hosts);
    files_free(snap->files, snap->nfiles);
    pthread_mutex_destroy(&snap->lock);
    pthread_cond_destroy(&snap->cond);
    free(snap);
}

int snapshot_is_fresh(const struct snapshot *snap, int secs)
{
    struct timespec now;

    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - snap->newest_mtime_ns <
           (int64_t)secs * 1000000000;
}

const struct source_file *snapshot_host_file(const struct snapshot *snap, const char *host,
                                             enum source_kind kind)
{
    uint32_t i;

    for (i = 0; i < snap->nfiles; i++) {
        if (snap->files[i].kind == kind && strcmp(snap->files[i].host, host) == 0)
            return &snap->files[i];
    }
    return NULL;
}

int snapshot_host_index(const struct snapshot *snap, const char *host)
{
    uint32_t i;

    for (i = 0; i < snap->nhosts; i++) {
        if (strcmp(snap->hosts[i], host) == 0)
            return (int)i;
    }
    return -1;
}

uint32_t snapshot_count(const struct snapshot *snap, enum source_kind kind)
{
    uint32_t i, n = 0;

    for (i = 0; i < snap->nfiles; i++)
        n += snap->files[i].kind == kind;
    return n;
}

/* "<host>" or "*" for the whole run, with "/<variant>" appended when there
 * is one (a host name holds no '/', so any variant text keeps keys apart).
 * Returns 0 and *keyp (free it), or -ENOMEM with err filled. */
static int part_key(const struct snapshot_part *part, const char *host, const char *variant,
                    char **keyp, struct xp_err *err)
{
    int n;

    if (host == NULL)
        host = "*";
    if (variant != NULL)
        n = asprintf(keyp, "%s/%s", host, variant);
    else
        n = asprintf(keyp, "%s", host);
    if (n < 0) {
        *keyp = NULL;
        return xp_err_set(err, -ENOMEM, "%s: out of memory", part->name);
    }
    return 0;
}

int snapshot_part_each(struct snapshot *snap, const struct snapshot_part *part,
                       int (*fn)(void *value, void *arg), void *arg)
{
    const struct intermediate *it;
    int rc = 0;

    pthread_mutex_lock(&snap->lock);
    for (it = snap->inter; it != NULL && rc == 0; it = it->next) {
        if (it->part == part && it->state == 1 && it->rc == 0)
            rc = fn(it->value, arg);
    }
    pthread_mutex_unlock(&snap->lock);
    return rc;
}

int snapshot_part(struct snapshot *snap, const struct snapshot_part *part, const char *host,
                  const char *variant, const void *arg, void **value, struct xp_err *err)
{
    struct intermediate *it;
    char *key;
    int rc;

    *value = NULL;
    if ((rc = part_key(part, host, variant, &key, err)) != 0)
        return rc;
    pthread_mutex_lock(&snap->lock);
    for (it = snap->inter; it != NULL; it = it->next) {
        if (it->part == part && strcmp(it->key, key) == 0)
            break;
    }
    if (it != NULL) {
        while (it->state == 0)
            pthread_cond_wait(&snap->cond, &snap->lock);
    } else {
        it = calloc(1, sizeof(*it));
        if (it == NULL) {
            pthread_mutex_unlock(&snap->lock);
            free(key);
            return xp_err_set(err, -ENOMEM, "out of memory");
        }
        it->part = part;
        it->key = key;
        key = NULL;
        it->next = snap->inter;
        snap->inter = it;
        pthread_mutex_unlock(&snap->lock);
        it->rc = part->build(snap, arg, &it->value, &it->err);
        pthread_mutex_lock(&snap->lock);
        it->state = 1;
        pthread_cond_broadcast(&snap->cond);
    }
    rc = it->rc;
    if (rc == 0)
        *value = it->value;
    else if (err != NULL)
        *err = it->err;
    pthread_mutex_unlock(&snap->lock);
    free(key);
    return rc;
}

void snapshot_log(struct snapshot *snap, const char *fmt, ...)
{
    char line[SNAPSHOT_LOG_TIME_LEN + XP_ERR_MAX + 64];
    const char *msg = line + SNAPSHOT_LOG_TIME_LEN;
    struct timespec now;
    struct tm tm;
    va_list ap;
    uint32_t i;
    char **v;

    /* "2026-12-03T21:40:12.345Z ": when it happened, in UTC. */
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    snprintf(line, SNAPSHOT_LOG_TIME_LEN + 1, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ",
             (tm.tm_year + 1900) % 10000, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
             tm.tm_sec, now.tv_nsec / 1000000);
    va_start(ap, fmt);
    vsnprintf(line + SNAPSHOT_LOG_TIME_LEN, sizeof(line) - SNAPSHOT_LOG_TIME_LEN, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&snap->lock);
    /* A reason already logged keeps its first line (and time). */
    for (i = 0; i < snap->nerrors; i++) {
        if (strcmp(snap->errors[i] + SNAPSHOT_LOG_TIME_LEN, msg) == 0)
            goto out;
    }
    if (snap->nerrors >= 1000)
        goto out;
    v = realloc(snap->errors, (snap->nerrors + 1) * sizeof(*v));
    if (v == NULL)
        goto out;
    snap->errors = v;
    v[snap->nerrors] = strdup(line);
    if (v[snap->nerrors] != NULL)
        snap->nerrors++;
out:
    pthread_mutex_unlock(&snap->lock);
}

char *snapshot_intermediate_key(const struct snapshot *snap, const char *kind, const char *host)
{
    size_t n = strlen(kind) + strlen(host) + 16;
    char *what = malloc(n), *key;

    if (what == NULL)
        return NULL;
    snprintf(what, n, "intermediate %s %s", kind, host);
    key = snapshot_key_text(snap, what);
    free(what);
    return key;
}

char *snapshot_key_text(const struct snapshot *snap, const char *what)
{
    size_t cap = strlen(XPROFS_VERSION) + strlen(snap->session->name) + strlen(what) + 32, n;
    char *key;
    uint32_t i;

    for (i = 0; i < snap->nfiles; i++)
        cap += strlen(snap->files[i].name) + 72;
    key = malloc(cap);
    if (key == NULL)
        return NULL;
    n = (size_t)snprintf(key, cap, "xprofs %s\nrun %s\n%s\n", XPROFS_VERSION, snap->session->name,
                         what);
    for (i = 0; i < snap->nfiles && n < cap; i++) {
        const struct source_file *f = &snap->files[i];
        n += (size_t)snprintf(key + n, cap - n, "src %s %lld %lld %llu\n", f->name,
                              (long long)f->size, (long long)f->mtime_ns,
                              (unsigned long long)f->ino);
    }
    return key;
}
