/*
 * mirror.c - the local copy of a store's log directory; see mirror.h.
 */
#include "mirror.h"
#include "gcs_auth.h"
#include "lister.h"
#include "s3.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PLACEHOLDER ".xprofs-not-copied-yet"

/* One object of the listing, and what its local copy is. */
struct mobj {
    char *rel;           /* key below the prefix */
    int64_t size;        /* listed size */
    char etag[128];      /* listed ETag */
    int64_t mtime;       /* listed LastModified (s), 0: unknown */
    int64_t have_size;   /* the copy's size, -1 when there is none */
    char have_etag[128]; /* the copy's ETag */
};

/* A run directory's last fetch. */
struct mdir {
    char *rel;         /* directory below the root, "" or "a/b" */
    int64_t when_ms;   /* when it was last brought up to date */
    uint64_t list_gen; /* the listing it was checked against */
    int rc;            /* what that gave */
    int busy;          /* a fetch of it is copying files */
    int64_t used_ms;   /* when it was last asked for */
    char msg[XP_ERR_MAX];
};

struct mirror {
    struct s3_conf conf;
    struct gcs_auth *gcs; /* gs:// without HMAC keys: OAuth tokens */
    char *url;            /* as given, for messages */
    char *prefix;         /* key prefix, "" or ending in '/' */
    char *cache;          /* cache directory */
    char *root;           /* cache/tree, realpath */
    int recheck_ms;
    long long cache_bytes; /* bound of the copies, 0: none */
    struct lister lister;  /* lists the store again, in its own thread */
    int lister_on;         /* lister started */
    int cancel;            /* closing: requests in flight stop (atomic) */
    pthread_mutex_t lock;
    pthread_cond_t cond; /* a directory's fetch is done */
    struct mobj *objs;   /* sorted by rel */
    size_t nobjs;
    uint64_t list_gen; /* listings made */
    int list_rc;       /* what the last listing gave */
    char list_msg[XP_ERR_MAX];
    struct mdir *dirs;
    size_t ndirs;
};

static int64_t now_ms(void)
{
    return lister_now_ms();
}

int mirror_is_url(const char *s)
{
    return strncmp(s, "s3://", 5) == 0 || strncmp(s, "gs://", 5) == 0;
}

const char *mirror_root(const struct mirror *m)
{
    return m->root;
}

/* mkdir -p of path's directories, 0700. */
static int mkdirs(const char *path, int include_last)
{
    char buf[PATH_MAX];
    size_t i, n = strlen(path);

    if (n >= sizeof(buf))
        return -ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    for (i = 1; i <= n; i++) {
        if (buf[i] == '/' || (include_last && buf[i] == '\0')) {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return -errno;
            buf[i] = c;
        }
    }
    return 0;
}

/* 1 if rel is a key name that stays inside the tree: no empty, "." or ".."
 * component, no component starting with ".xprofs-", no tab or newline. */
static int rel_ok(const char *rel)
{
    const char *p = rel;

    if (rel[0] == '\0' || strlen(rel) >= 2048 || strpbrk(rel, "\t\n\r") != NULL)
        return 0; /* (cache_dir/index is tab- and line-separated) */
    for (;;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.') ||
            strncmp(p, ".xprofs-", 8) == 0)
            return 0;
        if (e == NULL)
            return 1;
        p = e + 1;
    }
}

static int mobj_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mobj *)a)->rel, ((const struct mobj *)b)->rel);
}

static struct mobj *find_obj(struct mobj *objs, size_t n, const char *rel)
{
    struct mobj key = {.rel = (char *)rel};
    return bsearch(&key, objs, n, sizeof(*objs), mobj_cmp);
}

static void objs_free(struct mobj *objs, size_t n)
{
    size_t i;

    for (i = 0; objs != NULL && i < n; i++)
        free(objs[i].rel);
    free(objs);
}

/* cache/index: "size<TAB>etag<TAB>rel" for every copy made. */
static void index_save(struct mirror *m)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    FILE *f;
    size_t i;

    snprintf(path, sizeof(path), "%s/index", m->cache);
    snprintf(tmp, sizeof(tmp), "%s/.index.tmp", m->cache);
    f = fopen(tmp, "w");
    if (f == NULL)
        return;
    for (i = 0; i < m->nobjs; i++) {
        if (m->objs[i].have_size >= 0)
            fprintf(f, "%lld\t%s\t%s\n", (long long)m->objs[i].have_size, m->objs[i].have_etag,
                    m->objs[i].rel);
    }
    if (fclose(f) == 0)
        rename(tmp, path);
    else
        unlink(tmp);
}

/* The copies an earlier mount made, still in the tree at their size. */
static void index_load(struct mirror *m, struct mobj *objs, size_t n)
{
    char path[PATH_MAX], line[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/index", m->cache);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL, *nl;
        struct mobj *o;
        struct stat st;
        char local[PATH_MAX];
        if (t2 == NULL)
            continue;
        *t1 = *t2 = '\0';
        if ((nl = strchr(t2 + 1, '\n')) != NULL)
            *nl = '\0';
        o = find_obj(objs, n, t2 + 1);
        if (o == NULL)
            continue;
        snprintf(local, sizeof(local), "%s/%s", m->root, o->rel);
        if (lstat(local, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != strtoll(line, NULL, 10))
            continue;
        o->have_size = st.st_size;
        snprintf(o->have_etag, sizeof(o->have_etag), "%s", t1 + 1);
    }
    fclose(f);
}

/* Lay out listing so (n objects, freed here): placeholders for new
 * objects, the copies of removed ones gone. Caller holds the lock. */
static int install_locked(struct mirror *m, struct s3_object *so, size_t n, struct xp_err *err)
{
    struct mobj *objs;
    size_t i, k = 0;

    objs = calloc(n ? n : 1, sizeof(*objs));
    if (objs == NULL) {
        s3_objects_free(so, n);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        const char *rel = so[i].key + strlen(m->prefix);
        size_t len = strlen(rel);
        if (len > 0 && rel[len - 1] == '/')
            continue; /* a folder marker */
        if (!rel_ok(rel))
            continue;
        objs[k].rel = strdup(rel);
        if (objs[k].rel == NULL) {
            objs_free(objs, k);
            s3_objects_free(so, n);
            return xp_err_set(err, -ENOMEM, "out of memory");
        }
        objs[k].size = so[i].size;
        snprintf(objs[k].etag, sizeof(objs[k].etag), "%s", so[i].etag);
        objs[k].mtime = so[i].mtime;
        objs[k].have_size = -1;
        k++;
    }
    s3_objects_free(so, n);
    qsort(objs, k, sizeof(*objs), mobj_cmp);
    /* What the copies are: from the last listing, else from the index. */
    if (m->list_gen == 0) {
        index_load(m, objs, k);
    } else {
        for (i = 0; i < k; i++) {
            struct mobj *old = find_obj(m->objs, m->nobjs, objs[i].rel);
            if (old != NULL) {
                objs[i].have_size = old->have_size;
                memcpy(objs[i].have_etag, old->have_etag, sizeof(old->have_etag));
            }
        }
    }
    /* Removed objects: their copies go. */
    for (i = 0; i < m->nobjs; i++) {
        if (find_obj(objs, k, m->objs[i].rel) == NULL) {
            char local[PATH_MAX];
            snprintf(local, sizeof(local), "%s/%s", m->root, m->objs[i].rel);
            unlink(local);
        }
    }
    /* New objects: a placeholder each. */
    for (i = 0; i < k; i++) {
        char local[PATH_MAX];
        struct stat st;
        snprintf(local, sizeof(local), "%s/%s", m->root, objs[i].rel);
        if (objs[i].have_size >= 0 || lstat(local, &st) == 0)
            continue;
        if (mkdirs(local, 0) == 0 && symlink(PLACEHOLDER, local) != 0 && errno != EEXIST) {
            /* Laid out next time. */
        }
    }
    objs_free(m->objs, m->nobjs);
    m->objs = objs;
    m->nobjs = k;
    m->list_gen++;
    index_save(m);
    return 0;
}

/* List the store (no lock held while it answers), then lay the listing
 * out under the lock. 0 or a negative errno with err. */
static int relist(struct mirror *m, struct xp_err *err)
{
    struct s3_object *so = NULL;
    struct xp_err le = {0};
    size_t n = 0;
    int rc;

    rc = s3_list(&m->conf, m->prefix, &so, &n, &le);
    pthread_mutex_lock(&m->lock);
    if (rc == 0)
        rc = install_locked(m, so, n, &le);
    m->list_rc = rc;
    if (rc != 0)
        snprintf(m->list_msg, sizeof(m->list_msg), "%s", le.msg);
    pthread_mutex_unlock(&m->lock);
    return rc != 0 ? xp_err_set(err, rc, "%s", le.msg) : 0;
}

/* The lister's job: one listing; its result stays in m. */
static void relist_job(void *arg)
{
    relist(arg, NULL);
}

/* A listing recent enough, waited for at most the lister's wait: 0 when
 * the last listing is fresh and answered; 1 with err when it failed or is
 * still under way (the runs as last listed). */
static int listing(struct mirror *m, struct xp_err *err)
{
    int fresh = lister_ask(&m->lister), rc = 0;

    pthread_mutex_lock(&m->lock);
    if (m->list_rc != 0) {
        xp_err_set(err, 1, "%s", m->list_msg);
        rc = 1;
    } else if (!fresh) {
        xp_err_set(err, 1, "%s: the store's listing is still under way; the runs as last listed",
                   m->url);
        rc = 1;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

int mirror_refresh(void *arg, struct xp_err *err)
{
    return listing(arg, err);
}

int mirror_pending(void *arg, const char *path, int64_t *size)
{
    struct mirror *m = arg;
    size_t rlen = strlen(m->root);
    struct mobj *o;
    int yes = 0;

    if (strncmp(path, m->root, rlen) != 0 || path[rlen] != '/')
        return 0;
    pthread_mutex_lock(&m->lock);
    o = find_obj(m->objs, m->nobjs, path + rlen + 1);
    if (o != NULL && o->have_size < 0) {
        *size = o->size;
        yes = 1;
    }
    pthread_mutex_unlock(&m->lock);
    return yes;
}

/* Copy object o into the tree: a temporary file renamed over its name. */
static int copy_obj(struct mirror *m, struct mobj *o, struct xp_err *err)
{
    char local[PATH_MAX], tmp[PATH_MAX], key[4096];
    int fd, rc;

    snprintf(local, sizeof(local), "%s/%s", m->root, o->rel);
    snprintf(key, sizeof(key), "%s%s", m->prefix, o->rel);
    rc = mkdirs(local, 0);
    if (rc != 0)
        return xp_err_set(err, -EIO, "%s: cannot make its folder: %s", local, strerror(-rc));
    snprintf(tmp, sizeof(tmp), "%s", local);
    {
        char *slash = strrchr(tmp, '/');
        snprintf(slash + 1, sizeof(tmp) - (size_t)(slash + 1 - tmp), ".xprofs-copy-XXXXXX");
    }
    fd = mkstemp(tmp);
    if (fd < 0)
        return xp_err_set(err, -EIO, "%s: cannot make a copy: %s", local, strerror(errno));
    rc = s3_download(&m->conf, key, o->size, o->etag[0] ? o->etag : NULL, fd, err);
    /* The copy has the object's time: a whole object is not a profile still
     * being written (snapshot_is_fresh), and its produced files are kept. */
    if (rc == 0 && o->mtime > 0) {
        struct timespec ts[2] = {{(time_t)o->mtime, 0}, {(time_t)o->mtime, 0}};
        (void)futimens(fd, ts);
    }
    if (close(fd) != 0 && rc == 0)
        rc = xp_err_set(err, -EIO, "%s: %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, local) != 0)
        rc = xp_err_set(err, -EIO, "%s: %s", local, strerror(errno));
    if (rc != 0) {
        unlink(tmp);
        return rc;
    }
    o->have_size = o->size;
    memcpy(o->have_etag, o->etag, sizeof(o->etag));
    return 0;
}

static struct mdir *dir_state(struct mirror *m, const char *rel)
{
    size_t i;
    struct mdir *d;

    for (i = 0; i < m->ndirs; i++) {
        if (strcmp(m->dirs[i].rel, rel) == 0)
            return &m->dirs[i];
    }
    d = realloc(m->dirs, (m->ndirs + 1) * sizeof(*d));
    if (d == NULL)
        return NULL;
    m->dirs = d;
    d = &m->dirs[m->ndirs];
    memset(d, 0, sizeof(*d));
    d->rel = strdup(rel);
    if (d->rel == NULL)
        return NULL;
    d->when_ms = INT64_MIN / 2;
    m->ndirs++;
    return d;
}

/* 1 if rel is directly inside directory drel ("" = the root). */
static int directly_in(const char *rel, const char *drel)
{
    size_t n = strlen(drel);

    if (n == 0)
        return strchr(rel, '/') == NULL;
    return strncmp(rel, drel, n) == 0 && rel[n] == '/' && strchr(rel + n + 1, '/') == NULL;
}

/* Past cache_bytes, the copies of the least recently asked-for runs idle
 * for recheck_ms (never keep's) become placeholders again. Caller holds
 * the lock. */
static void evict_locked(struct mirror *m, const char *keep)
{
    long long total = 0;
    size_t i;

    if (m->cache_bytes <= 0)
        return;
    for (i = 0; i < m->nobjs; i++)
        total += m->objs[i].have_size > 0 ? m->objs[i].have_size : 0;
    while (total > m->cache_bytes) {
        struct mdir *lru = NULL;
        for (i = 0; i < m->ndirs; i++) {
            struct mdir *d = &m->dirs[i];
            if (d->busy || strcmp(d->rel, keep) == 0 || now_ms() - d->used_ms < m->recheck_ms ||
                d->when_ms == INT64_MIN / 2)
                continue;
            if (lru == NULL || d->used_ms < lru->used_ms)
                lru = d;
        }
        if (lru == NULL)
            return; /* every copy is in use: over the bound until one is not */
        for (i = 0; i < m->nobjs; i++) {
            struct mobj *o = &m->objs[i];
            char local[PATH_MAX];
            if (o->have_size < 0 || !directly_in(o->rel, lru->rel))
                continue;
            snprintf(local, sizeof(local), "%s/%s", m->root, o->rel);
            if (unlink(local) == 0 || errno == ENOENT) {
                if (symlink(PLACEHOLDER, local) != 0) {
                    /* Laid out again by the next listing. */
                }
                total -= o->have_size;
                o->have_size = -1;
                o->have_etag[0] = '\0';
            }
        }
        lru->when_ms = INT64_MIN / 2; /* copied again when asked for */
    }
}

int mirror_fetch_dir(void *arg, const char *dir, struct xp_err *err)
{
    struct mirror *m = arg;
    size_t rlen = strlen(m->root), i, nc = 0, ndone = 0;
    const char *drel;
    struct mdir *d;
    struct mobj *copies = NULL;
    int rc = 0, missing = 0;
    struct xp_err e = {0};

    if (strncmp(dir, m->root, rlen) != 0 || (dir[rlen] != '\0' && dir[rlen] != '/'))
        return 0; /* not ours */
    drel = dir[rlen] == '/' ? dir + rlen + 1 : "";
    /* A listing at most recheck_ms old, waited for the lister's wait at
     * most: late, the copies follow the last one. */
    lister_ask(&m->lister);
    pthread_mutex_lock(&m->lock);
    /* One fetch of a directory at a time; the others wait for its answer. */
    while ((d = dir_state(m, drel)) != NULL && d->busy)
        pthread_cond_wait(&m->cond, &m->lock);
    if (d == NULL) {
        pthread_mutex_unlock(&m->lock);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    d->used_ms = now_ms();
    if (now_ms() - d->when_ms < m->recheck_ms && d->list_gen == m->list_gen) {
        /* Checked moments ago: the same answer. */
        rc = d->rc;
        if (rc != 0)
            xp_err_set(err, rc, "%s", d->msg);
        pthread_mutex_unlock(&m->lock);
        return rc;
    }
    if (m->list_rc != 0) {
        /* The store did not answer: what is copied stays. */
        xp_err_set(&e, -EIO, "%s", m->list_msg);
        rc = 1;
    }
    /* What to copy, taken out of the listing: the lock is let go while the
     * bytes come, so other runs' files keep answering. */
    copies = calloc(m->nobjs ? m->nobjs : 1, sizeof(*copies));
    if (copies == NULL) {
        pthread_mutex_unlock(&m->lock);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    for (i = 0; rc <= 0 && i < m->nobjs; i++) {
        struct mobj *o = &m->objs[i];
        if (directly_in(o->rel, drel) &&
            (o->have_size != o->size || strcmp(o->have_etag, o->etag) != 0)) {
            copies[nc] = *o;
            copies[nc].rel = strdup(o->rel);
            if (copies[nc].rel == NULL) {
                rc = 1;
                xp_err_set(&e, -ENOMEM, "out of memory");
                break;
            }
            nc++;
        }
    }
    d->busy = 1;
    pthread_mutex_unlock(&m->lock);
    for (ndone = 0; ndone < nc; ndone++) {
        struct xp_err ce = {0};
        if (copy_obj(m, &copies[ndone], &ce) != 0) {
            if (e.code == 0)
                e = ce;
            rc = 1;
            break;
        }
    }
    pthread_mutex_lock(&m->lock);
    for (i = 0; i < ndone; i++) {
        struct mobj *o = find_obj(m->objs, m->nobjs, copies[i].rel);
        if (o != NULL && o->size == copies[i].size && strcmp(o->etag, copies[i].etag) == 0) {
            o->have_size = copies[i].have_size;
            memcpy(o->have_etag, copies[i].have_etag, sizeof(o->have_etag));
        }
    }
    for (i = 0; i < m->nobjs; i++) {
        if (directly_in(m->objs[i].rel, drel) && m->objs[i].have_size < 0)
            missing = 1;
    }
    d = dir_state(m, drel); /* m->dirs may have moved meanwhile */
    if (rc != 0) {
        if (missing)
            rc = -EIO;
        xp_err_set(err, rc, "%s", e.msg);
        if (d != NULL)
            snprintf(d->msg, sizeof(d->msg), "%s", e.msg);
    }
    if (d != NULL) {
        d->rc = rc;
        d->when_ms = now_ms();
        d->list_gen = m->list_gen;
        d->busy = 0;
    }
    pthread_cond_broadcast(&m->cond);
    if (nc > 0) {
        evict_locked(m, drel);
        index_save(m);
    }
    pthread_mutex_unlock(&m->lock);
    for (i = 0; i < nc; i++)
        free(copies[i].rel);
    free(copies);
    return rc;
}

/* url's bucket and prefix into m; the endpoint a gs:// URL implies. */
static int parse_url(struct mirror *m, const char *url, char *bucket, size_t n, struct xp_err *err)
{
    const char *p = url + 5, *slash = strchr(p, '/');
    size_t blen = slash ? (size_t)(slash - p) : strlen(p), plen;

    if (blen == 0 || blen >= n)
        return xp_err_set(err, -EINVAL, "%s: no bucket name", url);
    memcpy(bucket, p, blen);
    bucket[blen] = '\0';
    p = slash ? slash + 1 : "";
    plen = strlen(p);
    m->prefix = malloc(plen + 2);
    if (m->prefix == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    memcpy(m->prefix, p, plen + 1);
    while (plen > 0 && m->prefix[plen - 1] == '/')
        m->prefix[--plen] = '\0';
    if (plen > 0 && !rel_ok(m->prefix))
        return xp_err_set(err, -EINVAL, "%s: a prefix with an empty, '.' or '..' part", url);
    if (plen > 0)
        strcat(m->prefix, "/");
    return 0;
}

/* cache/source names the store a cache directory copies: one directory
 * is the copy of one store prefix, never of two mixed. */
static int check_source(struct mirror *m, const char *cache, struct xp_err *err)
{
    char path[PATH_MAX], want[4096], have[4096];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/source", cache);
    snprintf(want, sizeof(want), "%s %s/%s%s\n", m->conf.endpoint, m->conf.bucket, m->prefix,
             m->conf.path_style ? "" : " virtual");
    f = fopen(path, "r");
    if (f != NULL) {
        n = fread(have, 1, sizeof(have) - 1, f);
        have[n] = '\0';
        fclose(f);
        if (strcmp(have, want) == 0)
            return 0;
        if (strchr(have, '\n') != NULL)
            *strchr(have, '\n') = '\0';
        return xp_err_set(err, -EEXIST, "cache_dir %s holds the copy of %s; give another", cache,
                          have);
    }
    f = fopen(path, "w");
    if (f == NULL || fputs(want, f) < 0 || fclose(f) != 0)
        return xp_err_set(err, -EIO, "%s: cannot write", path);
    return 0;
}

/* The cache directory: given, else
 * $XDG_CACHE_HOME/xprofs/remote/<scheme>/<endpoint host>/<bucket>/<prefix>. */
static int cache_dir(struct mirror *m, const char *given, const char *scheme, const char *bucket,
                     struct xp_err *err)
{
    char buf[PATH_MAX];
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    struct stat st;
    int rc;

    const char *h = strstr(m->conf.endpoint, "://");
    char host[256];
    size_t i;

    /* The endpoint's host:port names the default directory, made safe. */
    snprintf(host, sizeof(host), "%s", h ? h + 3 : m->conf.endpoint);
    for (i = 0; host[i]; i++) {
        if (!(isalnum((unsigned char)host[i]) || host[i] == '.' || host[i] == '-'))
            host[i] = '_';
    }
    if (strcmp(host, "..") == 0 || strcmp(host, ".") == 0)
        host[0] = '_';
    if (given != NULL)
        snprintf(buf, sizeof(buf), "%s", given);
    else if (xdg != NULL && xdg[0] == '/')
        snprintf(buf, sizeof(buf), "%s/xprofs/remote/%s/%s/%s/%s", xdg, scheme, host, bucket,
                 m->prefix);
    else if (home != NULL)
        snprintf(buf, sizeof(buf), "%s/.cache/xprofs/remote/%s/%s/%s/%s", home, scheme, host,
                 bucket, m->prefix);
    else
        return xp_err_set(err, -EINVAL, "no cache directory: give -o cache_dir=DIR");
    rc = mkdirs(buf, 1);
    if (rc != 0)
        return xp_err_set(err, rc, "%s: %s", buf, strerror(-rc));
    /* Owner-only: the copies may hold what the store keeps private. */
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        return xp_err_set(err, -ENOTDIR, "%s: not a directory", buf);
    if (st.st_uid != getuid())
        return xp_err_set(err, -EPERM, "%s: not yours", buf);
    if (chmod(buf, 0700) != 0)
        return xp_err_set(err, -errno, "%s: %s", buf, strerror(errno));
    m->cache = strdup(buf);
    rc = check_source(m, buf, err);
    if (rc != 0)
        return rc;
    snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/tree");
    rc = mkdirs(buf, 1);
    if (rc != 0)
        return xp_err_set(err, rc, "%s: %s", buf, strerror(-rc));
    m->root = realpath(buf, NULL);
    if (m->cache == NULL || m->root == NULL)
        return xp_err_set(err, -ENOMEM, "%s: %s", buf, strerror(errno));
    return 0;
}

int mirror_open(const char *url, const struct mirror_opts *o, struct mirror **mp,
                struct xp_err *err)
{
    struct mirror *m;
    char bucket[256];
    const char *endpoint = o->endpoint, *style = o->style;
    int gs = strncmp(url, "gs://", 5) == 0, rc;

    *mp = NULL;
    if (!mirror_is_url(url))
        return xp_err_set(err, -EINVAL, "%s: not an s3:// or gs:// URL", url);
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    m->recheck_ms = o->recheck_ms > 0 ? o->recheck_ms : 5000;
    m->cache_bytes = o->cache_bytes > 0 ? o->cache_bytes : 0;
    m->url = strdup(url);
    rc = m->url == NULL ? xp_err_set(err, -ENOMEM, "out of memory")
                        : parse_url(m, url, bucket, sizeof(bucket), err);
    /* gs:// reads Cloud Storage's XML API, signed with HMAC keys. */
    if (rc == 0 && gs && endpoint == NULL)
        endpoint = "https://storage.googleapis.com";
    if (rc == 0)
        rc = s3_conf_init(&m->conf, bucket, endpoint, style, err);
    if (rc == 0 && gs)
        m->conf.scheme = "gs";
    if (rc == 0 && gs && m->conf.access_key == NULL) {
        m->gcs = calloc(1, sizeof(*m->gcs));
        rc =
            m->gcs == NULL ? xp_err_set(err, -ENOMEM, "out of memory") : gcs_auth_init(m->gcs, err);
        m->conf.bearer = gcs_auth_token;
        m->conf.bearer_arg = m->gcs;
    }
    if (rc == 0)
        rc = cache_dir(m, o->cache_dir, gs ? "gs" : "s3", bucket, err);
    if (rc == 0) {
        int64_t begun = now_ms();
        m->conf.timeout_s = o->timeout_s > 0 ? o->timeout_s : m->conf.timeout_s;
        m->conf.cancel = &m->cancel;
        rc = relist(m, err);
        if (rc == 0) {
            rc = lister_start(&m->lister, relist_job, m, m->recheck_ms,
                              o->list_wait_ms > 0 ? o->list_wait_ms : 3000, begun);
            m->lister_on = rc == 0;
            if (rc != 0)
                xp_err_set(err, rc, "cannot start the store's lister: %s", strerror(-rc));
        }
    }
    if (rc != 0) {
        mirror_close(m);
        return rc;
    }
    *mp = m;
    return 0;
}

void mirror_close(struct mirror *m)
{
    size_t i;

    if (m == NULL)
        return;
    __atomic_store_n(&m->cancel, 1, __ATOMIC_RELAXED);
    if (m->lister_on)
        lister_stop(&m->lister);
    s3_conf_free(&m->conf);
    if (m->gcs != NULL)
        gcs_auth_free(m->gcs);
    free(m->gcs);
    objs_free(m->objs, m->nobjs);
    for (i = 0; i < m->ndirs; i++)
        free(m->dirs[i].rel);
    free(m->dirs);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->cond);
    free(m->url);
    free(m->prefix);
    free(m->cache);
    free(m->root);
    free(m);
}
