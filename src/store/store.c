/*
 * store.c - the persistent cache's entries: lookup with checksum checks,
 * crash-safe writes, the owner check and the LRU bound; see store.h.
 */
#include "store.h"

#include "base/crc32c.h"

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

#include "base/file_map.h"
#include "base/hash.h"

static struct store_counters counters; /* atomic adds */

static void count(uint64_t *c)
{
    __atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static struct store *shared; /* atomic loads and stores */

void store_set_shared(struct store *st)
{
    __atomic_store_n(&shared, st, __ATOMIC_RELEASE);
}

struct store *store_shared(void)
{
    return __atomic_load_n(&shared, __ATOMIC_ACQUIRE);
}

void store_counters(struct store_counters *c)
{
    c->hits = __atomic_load_n(&counters.hits, __ATOMIC_RELAXED);
    c->misses = __atomic_load_n(&counters.misses, __ATOMIC_RELAXED);
    c->stored = __atomic_load_n(&counters.stored, __ATOMIC_RELAXED);
    c->dropped = __atomic_load_n(&counters.dropped, __ATOMIC_RELAXED);
    c->evicted = __atomic_load_n(&counters.evicted, __ATOMIC_RELAXED);
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* CRC-32C of n bytes (format 2; format 1 had zlib's CRC-32, whose
 * table code took 4 times a copy's time to check a big entry). */
static uint32_t crc_add(uint32_t crc, const void *p, size_t n)
{
    return crc32c(crc, p, n);
}

static size_t header_size(size_t klen)
{
    return (STORE_HEADER_FIXED + klen + 7) & ~(size_t)7;
}

void store_entry_name(const char *key, char name[33])
{
    uint64_t a = fnv64_str(key);
    uint64_t b = fnv64_add_str(0x9e3779b97f4a7c15ull, key);

    snprintf(name, 33, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

/* ---- opening: the directory and its owner ----------------------------------- */

/* mkdir -p with mode 0700 for what it creates. Returns 0 or -errno. */
static int make_dirs(const char *dir)
{
    char buf[PATH_MAX];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof(buf))
        return -ENAMETOOLONG;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -errno;
        buf[i] = c;
    }
    return 0;
}

/* dir must be a directory of ours that nobody else may write. */
static int check_owner(const char *dir, struct xp_err *err)
{
    struct stat st;

    if (stat(dir, &st) != 0)
        return xp_err_set(err, -errno, "cache directory %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return xp_err_set(err, -ENOTDIR, "cache directory %s: not a directory", dir);
    if (st.st_uid != geteuid())
        return xp_err_set(err, -EPERM, "cache directory %s: owned by another user (uid %u)", dir,
                          (unsigned)st.st_uid);
    if ((st.st_mode & 022) != 0)
        return xp_err_set(err, -EPERM, "cache directory %s: others may write it (mode %03o)", dir,
                          (unsigned)(st.st_mode & 0777));
    return 0;
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);

    if (s != NULL)
        snprintf(s, n, "%s/%s", a, b);
    return s;
}

/* Bytes of the entries now in the directory. */
static size_t count_bytes(const char *entries)
{
    DIR *d = opendir(entries);
    struct dirent *de;
    size_t total = 0;

    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (de->d_name[0] == '.')
            continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            total += (size_t)st.st_size;
    }
    closedir(d);
    return total;
}

int store_open(const char *dir, size_t max_bytes, struct store **sp, struct xp_err *err)
{
    struct store *st;
    int rc;

    *sp = NULL;
    rc = make_dirs(dir);
    if (rc != 0)
        return xp_err_set(err, rc, "cache directory %s: %s", dir, strerror(-rc));
    rc = check_owner(dir, err);
    if (rc != 0)
        return rc;
    st = calloc(1, sizeof(*st));
    if (st == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    /* Absolute: a mount changes its directory to / when it goes to the background. */
    st->dir = realpath(dir, NULL);
    if (st->dir != NULL) {
        st->entries = join(st->dir, "entries");
        st->tmp = join(st->dir, "tmp");
    }
    st->max_bytes = max_bytes;
    pthread_mutex_init(&st->lock, NULL);
    if (st->dir == NULL || st->entries == NULL || st->tmp == NULL) {
        store_close(st);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    if ((mkdir(st->entries, 0700) != 0 && errno != EEXIST) ||
        (mkdir(st->tmp, 0700) != 0 && errno != EEXIST)) {
        rc = xp_err_set(err, -errno, "cache directory %s: %s", dir, strerror(errno));
        store_close(st);
        return rc;
    }
    if ((rc = check_owner(st->entries, err)) != 0 || (rc = check_owner(st->tmp, err)) != 0) {
        store_close(st);
        return rc;
    }
    st->bytes = count_bytes(st->entries);
    *sp = st;
    return 0;
}

void store_close(struct store *st)
{
    if (st == NULL)
        return;
    pthread_mutex_destroy(&st->lock);
    free(st->dir);
    free(st->entries);
    free(st->tmp);
    free(st);
}

/* ---- lookup ---------------------------------------------------------------- */

/* An entry's bytes, mapped or (where it cannot be mapped) read. */
struct store_map {
    const uint8_t *buf; /* the whole file */
    size_t size;        /* its bytes */
    int mapped;         /* 1: file_map, 0: malloc */
};

static void map_release(void *arg)
{
    struct store_map *m = arg;

    if (m->mapped)
        file_unmap(m->buf, m->size);
    else
        free((void *)m->buf);
    free(m);
}

/* Read the whole of fd (size bytes) into memory. */
static int read_all(int fd, size_t size, const uint8_t **bufp)
{
    uint8_t *buf = malloc(size ? size : 1);
    size_t done = 0;

    if (buf == NULL)
        return -ENOMEM;
    while (done < size) {
        ssize_t r = pread(fd, buf + done, size - done, (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            return r < 0 ? -errno : -EIO;
        }
        done += (size_t)r;
    }
    *bufp = buf;
    return 0;
}

/* 1 if buf[0..size) is a valid entry of key, 0 if it is another key's, -1
 * if corrupt. *payload_off is where its payload starts. */
static int check_entry(const uint8_t *buf, size_t size, const char *key, size_t *payload_off)
{
    size_t klen = strlen(key), hlen, stored_klen;
    unsigned char fixed[STORE_HEADER_FIXED];
    uint64_t plen;
    uint32_t crc;

    if (size < STORE_HEADER_FIXED || memcmp(buf, STORE_MAGIC, 8) != 0 ||
        get_le32(buf + 8) != STORE_FORMAT)
        return -1;
    stored_klen = get_le32(buf + 28);
    if (stored_klen > STORE_MAX_KEY)
        return -1;
    hlen = header_size(stored_klen);
    plen = get_le64(buf + 16);
    if (hlen > size || plen != size - hlen)
        return -1;
    memcpy(fixed, buf, sizeof(fixed));
    put_le32(fixed + 12, 0);
    crc = crc_add(0, fixed, sizeof(fixed));
    crc = crc_add(crc, buf + STORE_HEADER_FIXED, hlen - STORE_HEADER_FIXED);
    if (crc != get_le32(buf + 12))
        return -1;
    if (crc_add(0, buf + hlen, (size_t)plen) != get_le32(buf + 24))
        return -1;
    if (stored_klen != klen || memcmp(buf + STORE_HEADER_FIXED, key, klen) != 0)
        return 0;
    *payload_off = hlen;
    return 1;
}

/* Remove a corrupt entry, if it is still the file we read (a writer may
 * have renamed a good one over it since). */
static void drop_entry(struct store *st, const char *name, const struct stat *seen)
{
    char path[PATH_MAX];
    struct stat now;

    snprintf(path, sizeof(path), "%s/%s", st->entries, name);
    if (lstat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev &&
        unlink(path) == 0) {
        count(&counters.dropped);
        pthread_mutex_lock(&st->lock);
        st->bytes -= st->bytes < (size_t)seen->st_size ? st->bytes : (size_t)seen->st_size;
        pthread_mutex_unlock(&st->lock);
    }
}

struct blob *store_get(struct store *st, const char *key)
{
    char name[33], path[PATH_MAX];
    struct store_map *m;
    struct stat sb;
    struct blob *b;
    size_t off = 0;
    int fd, ok;

    store_entry_name(key, name);
    snprintf(path, sizeof(path), "%s/%s", st->entries, name);
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        count(&counters.misses);
        return NULL;
    }
    m = calloc(1, sizeof(*m));
    if (m == NULL || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        free(m);
        close(fd);
        count(&counters.misses);
        return NULL;
    }
    m->size = (size_t)sb.st_size;
    /* A small entry is one read (cheaper than a mapping, and the mappings'
     * SIGBUS guard slots are shared with the profiles); a big one is mapped. */
    if (m->size >= STORE_MAP_AT && file_map(fd, m->size, &m->buf) == 0)
        m->mapped = 1;
    else if (read_all(fd, m->size, &m->buf) != 0) {
        free(m);
        close(fd);
        count(&counters.misses);
        return NULL;
    }
    close(fd);
    ok = check_entry(m->buf, m->size, key, &off);
    if (ok == 1 && m->mapped && file_map_cut(m->buf))
        ok = -1;
    if (ok != 1) {
        map_release(m);
        if (ok < 0)
            drop_entry(st, name, &sb);
        count(&counters.misses);
        return NULL;
    }
    b = blob_from_map((const char *)m->buf + off, m->size - off, map_release, m);
    if (b == NULL) {
        map_release(m);
        count(&counters.misses);
        return NULL;
    }
    /* Last use, for the bound: the atime alone (relatime or not). */
    struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    (void)utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
    count(&counters.hits);
    return b;
}

/* ---- writing --------------------------------------------------------------- */

struct store_writer {
    struct store *st;   /* the store */
    char *key;          /* the key */
    char name[33];      /* entry name */
    char tmp[PATH_MAX]; /* the temporary file */
    int fd;             /* open on tmp */
    size_t hlen;        /* header bytes */
    uint64_t plen;      /* payload bytes so far */
    uint32_t crc;       /* payload CRC so far */
    int failed;         /* a write failed: only abort is left */
};

static int write_full(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int store_put_begin(struct store *st, const char *key, struct store_writer **wp, struct xp_err *err)
{
    static unsigned seq;
    struct store_writer *w;
    size_t klen = strlen(key);
    unsigned char zeros[4096] = {0};
    size_t left;
    int rc = 0;

    *wp = NULL;
    if (klen > STORE_MAX_KEY)
        return xp_err_set(err, -ENAMETOOLONG, "cache key too long");
    w = calloc(1, sizeof(*w));
    if (w == NULL || (w->key = strdup(key)) == NULL) {
        free(w);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    w->st = st;
    store_entry_name(key, w->name);
    snprintf(w->tmp, sizeof(w->tmp), "%s/%s.%ld.%ld.%u", st->tmp, w->name, (long)getpid(),
             (long)gettid(), __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        rc = xp_err_set(err, -errno, "cache %s: %s", w->tmp, strerror(errno));
        free(w->key);
        free(w);
        return rc;
    }
    w->hlen = header_size(klen);
    for (left = w->hlen; rc == 0 && left > 0;) {
        size_t n = left < sizeof(zeros) ? left : sizeof(zeros);
        rc = write_full(w->fd, zeros, n);
        left -= n;
    }
    if (rc != 0) {
        xp_err_set(err, rc, "cache %s: %s", w->tmp, strerror(-rc));
        store_put_abort(w);
        return rc;
    }
    *wp = w;
    return 0;
}

int store_put_write(struct store_writer *w, const void *p, size_t n)
{
    int rc;

    if (w->failed)
        return -EIO;
    rc = write_full(w->fd, p, n);
    if (rc != 0) {
        w->failed = 1;
        return rc;
    }
    w->crc = crc_add(w->crc, p, n);
    w->plen += n;
    return 0;
}

void store_put_abort(struct store_writer *w)
{
    if (w == NULL)
        return;
    close(w->fd);
    unlink(w->tmp);
    free(w->key);
    free(w);
}

/* fsync a directory, so a rename in it survives a crash. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int store_put_commit(struct store_writer *w, struct xp_err *err)
{
    struct store *st = w->st;
    size_t klen = strlen(w->key);
    unsigned char *h;
    char path[PATH_MAX];
    int rc = 0;

    if (w->failed) {
        store_put_abort(w);
        return xp_err_set(err, -EIO, "cache entry: a write failed");
    }
    if (st->max_bytes > 0 && w->hlen + (size_t)w->plen > st->max_bytes) {
        store_put_abort(w); /* bigger than the bound: never kept */
        return 0;
    }
    h = calloc(1, w->hlen);
    if (h == NULL) {
        store_put_abort(w);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    memcpy(h, STORE_MAGIC, 8);
    put_le32(h + 8, STORE_FORMAT);
    put_le64(h + 16, w->plen);
    put_le32(h + 24, w->crc);
    put_le32(h + 28, (uint32_t)klen);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    put_le64(h + 32, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
    memcpy(h + STORE_HEADER_FIXED, w->key, klen);
    put_le32(h + 12, crc_add(0, h, w->hlen));
    if (pwrite(w->fd, h, w->hlen, 0) != (ssize_t)w->hlen || fsync(w->fd) != 0)
        rc = -(errno ? errno : EIO);
    free(h);
    snprintf(path, sizeof(path), "%s/%s", st->entries, w->name);
    if (rc == 0 && rename(w->tmp, path) != 0)
        rc = -errno;
    if (rc != 0) {
        xp_err_set(err, rc, "cache entry %s: %s", w->name, strerror(-rc));
        store_put_abort(w);
        return rc;
    }
    sync_dir(st->entries);
    close(w->fd);
    count(&counters.stored);
    pthread_mutex_lock(&st->lock);
    st->bytes += w->hlen + (size_t)w->plen;
    int over = st->max_bytes > 0 && st->bytes > st->max_bytes;
    pthread_mutex_unlock(&st->lock);
    free(w->key);
    free(w);
    if (over)
        store_trim(st);
    return 0;
}

int store_put_blob(struct store *st, const char *key, const struct blob *b, struct xp_err *err)
{
    struct store_writer *w;
    size_t piece = (size_t)4 << 20, off;
    char *buf;
    int rc;

    if (st->max_bytes > 0 && b->size + header_size(strlen(key)) > st->max_bytes)
        return 0;
    rc = store_put_begin(st, key, &w, err);
    if (rc != 0)
        return rc;
    if (b->mem != NULL) {
        rc = store_put_write(w, b->mem, b->size);
    } else {
        buf = malloc(piece);
        rc = buf == NULL ? -ENOMEM : 0;
        for (off = 0; rc == 0 && off < b->size;) {
            ssize_t r = blob_read(b, off, buf, piece);
            if (r <= 0) {
                rc = r < 0 ? -errno : -EIO;
                break;
            }
            rc = store_put_write(w, buf, (size_t)r);
            off += (size_t)r;
        }
        free(buf);
    }
    if (rc != 0) {
        store_put_abort(w);
        return xp_err_set(err, rc, "cache entry: %s", strerror(-rc));
    }
    return store_put_commit(w, err);
}

/* ---- the bound --------------------------------------------------------------- */

struct lru_item {
    char name[40];       /* entry file name */
    struct timespec use; /* last use (atime) */
    size_t size;         /* bytes */
};

static int by_use(const void *a, const void *b)
{
    const struct lru_item *x = a, *y = b;

    if (x->use.tv_sec != y->use.tv_sec)
        return x->use.tv_sec < y->use.tv_sec ? -1 : 1;
    if (x->use.tv_nsec != y->use.tv_nsec)
        return x->use.tv_nsec < y->use.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Remove temporary files of writers that died (older than STORE_STALE_TMP_S). */
static void remove_stale_tmp(struct store *st)
{
    DIR *d = opendir(st->tmp);
    struct dirent *de;
    time_t now = time(NULL);

    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        struct stat sb;
        if (de->d_name[0] == '.')
            continue;
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
            now - sb.st_mtim.tv_sec > STORE_STALE_TMP_S)
            (void)unlinkat(dirfd(d), de->d_name, 0);
    }
    closedir(d);
}

int store_trim(struct store *st)
{
    DIR *d;
    struct dirent *de;
    struct lru_item *items = NULL, *grown;
    size_t n = 0, cap = 0, total = 0, i;
    int removed = 0;

    remove_stale_tmp(st);
    d = opendir(st->entries);
    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        struct stat sb;
        if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(items->name))
            continue;
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            grown = realloc(items, cap * sizeof(*items));
            if (grown == NULL)
                break;
            items = grown;
        }
        snprintf(items[n].name, sizeof(items[n].name), "%s", de->d_name);
        items[n].use = sb.st_atim;
        items[n].size = (size_t)sb.st_size;
        total += items[n].size;
        n++;
    }
    if (n > 0)
        qsort(items, n, sizeof(*items), by_use);
    /* Down to 90% of the bound, so that the next writes do not each list
     * the directory again. */
    size_t target = st->max_bytes - st->max_bytes / 10;
    for (i = 0; st->max_bytes > 0 && total > st->max_bytes && i < n; i++) {
        if (unlinkat(dirfd(d), items[i].name, 0) == 0) {
            total -= items[i].size;
            removed++;
            count(&counters.evicted);
        }
        if (total <= target)
            break;
    }
    closedir(d);
    free(items);
    pthread_mutex_lock(&st->lock);
    st->bytes = total;
    pthread_mutex_unlock(&st->lock);
    return removed;
}
