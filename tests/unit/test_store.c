/*
 * test_store.c - the persistent cache's entries (src/store/): hit and miss,
 * another key or format version, a changed source's key, a corrupt and a
 * truncated entry (dropped, then made again), two processes writing one key
 * while a third reads, a writer killed mid-write (no entry, its temporary
 * file removed once stale), the directory's mode and owner checks, and the
 * bound on bytes (least recently used entries go first).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/test_store.XXXXXX");
    assert_non_null(mkdtemp(root));
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static void sub(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", root, name);
}

static unsigned char byte_at(size_t i, unsigned seed)
{
    return (unsigned char)(((i + seed) * 2654435761u) >> 13);
}

static struct blob *pattern(size_t n, unsigned seed)
{
    char *p = malloc(n);
    struct blob *b;

    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)byte_at(i, seed);
    b = blob_from_mem(p, n);
    free(p);
    assert_non_null(b);
    return b;
}

/* 1 if b holds pattern(n, seed). */
static int holds(const struct blob *b, size_t n, unsigned seed)
{
    char *p;
    int ok;

    if (b == NULL || b->size != n)
        return 0;
    p = malloc(n ? n : 1);
    assert_non_null(p);
    ok = blob_read(b, 0, p, n) == (ssize_t)n;
    for (size_t i = 0; ok && i < n; i++)
        ok = (unsigned char)p[i] == byte_at(i, seed);
    free(p);
    return ok;
}

static void entry_path(const struct store *st, const char *key, char *buf, size_t n)
{
    char name[33];

    store_entry_name(key, name);
    snprintf(buf, n, "%s/%s", st->entries, name);
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

static struct store *open_store(const char *name, size_t max)
{
    char dir[300];
    struct store *st;
    struct xp_err err = {0};

    sub(dir, sizeof(dir), name);
    assert_int_equal(store_open(dir, max, &st, &err), 0);
    return st;
}

static void put(struct store *st, const char *key, size_t n, unsigned seed)
{
    struct blob *b = pattern(n, seed);
    struct xp_err err = {0};

    assert_int_equal(store_put_blob(st, key, b, &err), 0);
    blob_unref(b);
}

static void test_hit_and_miss(void **state)
{
    struct store *st = open_store("c", 0);
    struct store_counters before, after;
    struct blob *b;
    char path[600], out[300];
    int fd;

    (void)state;
    store_counters(&before);
    assert_null(store_get(st, "key one"));
    put(st, "key one", 3 * OUT_CHUNK + 17, 1);
    put(st, "key two", 0, 2); /* an empty file is an entry too */
    b = store_get(st, "key one");
    assert_true(holds(b, 3 * OUT_CHUNK + 17, 1));
    assert_non_null(b->mem); /* one piece of memory (mapped), not chunks */
    /* written out whole, as xprofs cat does */
    sub(out, sizeof(out), "out");
    fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(blob_write_fd(b, fd), 0);
    close(fd);
    assert_int_equal(system("true"), 0);
    struct stat sb;
    assert_int_equal(stat(out, &sb), 0);
    assert_int_equal(sb.st_size, 3 * OUT_CHUNK + 17);
    blob_unref(b);
    b = store_get(st, "key two");
    assert_non_null(b);
    assert_int_equal(b->size, 0);
    blob_unref(b);
    assert_null(store_get(st, "key three"));
    store_counters(&after);
    assert_int_equal(after.hits - before.hits, 2);
    assert_int_equal(after.misses - before.misses, 2);
    assert_int_equal(after.stored - before.stored, 2);
    /* A new store over the same directory (a new process) finds them. */
    store_close(st);
    st = open_store("c", 0);
    b = store_get(st, "key one");
    assert_true(holds(b, 3 * OUT_CHUNK + 17, 1));
    blob_unref(b);
    entry_path(st, "key one", path, sizeof(path));
    assert_true(exists(path));
    store_close(st);
}

/* The keys vfs_store_key writes name the version and every source's
 * fingerprint: a key that differs in either is another entry. An entry
 * file that holds another key (a hash collision) is a miss and stays. */
static void test_version_and_source_change(void **state)
{
    struct store *st = open_store("c", 0);
    const char *k1 = "xprofs 0.2.0\nformat 1\nrun r\nfile r||summary.json?\n"
                     "src h.xplane.pb 100 1700000000000000000 42\n";
    const char *k_version = "xprofs 0.2.1\nformat 1\nrun r\nfile r||summary.json?\n"
                            "src h.xplane.pb 100 1700000000000000000 42\n";
    const char *k_source = "xprofs 0.2.0\nformat 1\nrun r\nfile r||summary.json?\n"
                           "src h.xplane.pb 100 1700000000000000001 42\n";
    char p1[600], p2[600];
    struct blob *b;

    (void)state;
    put(st, k1, 1000, 7);
    assert_null(store_get(st, k_version));
    assert_null(store_get(st, k_source));
    b = store_get(st, k1);
    assert_true(holds(b, 1000, 7));
    blob_unref(b);
    /* k1's entry under k_version's name: a miss, not dropped */
    entry_path(st, k1, p1, sizeof(p1));
    entry_path(st, k_version, p2, sizeof(p2));
    assert_int_equal(link(p1, p2), 0);
    assert_null(store_get(st, k_version));
    assert_true(exists(p2));
    /* a format version we do not know is a corrupt entry: dropped */
    int fd = open(p1, O_RDWR);
    assert_true(fd >= 0);
    unsigned char v = 9;
    assert_int_equal(pwrite(fd, &v, 1, 8), 1);
    close(fd);
    assert_null(store_get(st, k1));
    assert_false(exists(p1));
    store_close(st);
}

static void test_corrupt_and_truncated(void **state)
{
    struct store *st = open_store("c", 0);
    struct store_counters before, after;
    size_t n = OUT_CHUNK + 5;
    char path[600];
    struct blob *b;
    int fd;

    (void)state;
    entry_path(st, "k", path, sizeof(path));
    store_counters(&before);
    /* one flipped payload byte */
    put(st, "k", n, 3);
    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    struct stat sb;
    assert_int_equal(fstat(fd, &sb), 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, sb.st_size - 100), 1);
    c ^= 0x20;
    assert_int_equal(pwrite(fd, &c, 1, sb.st_size - 100), 1);
    close(fd);
    assert_null(store_get(st, "k"));
    assert_false(exists(path));
    /* recomputed: written again, and served */
    put(st, "k", n, 3);
    b = store_get(st, "k");
    assert_true(holds(b, n, 3));
    blob_unref(b);
    /* a flipped header byte (the key) */
    fd = open(path, O_RDWR);
    c = 'K';
    assert_int_equal(pwrite(fd, &c, 1, STORE_HEADER_FIXED), 1);
    close(fd);
    assert_null(store_get(st, "k"));
    assert_false(exists(path));
    /* cut short by one byte, and to less than a header */
    put(st, "k", n, 3);
    assert_int_equal(truncate(path, (off_t)(sb.st_size - 1)), 0);
    assert_null(store_get(st, "k"));
    assert_false(exists(path));
    put(st, "k", n, 3);
    assert_int_equal(truncate(path, 10), 0);
    assert_null(store_get(st, "k"));
    assert_false(exists(path));
    /* grown by a byte */
    put(st, "k", n, 3);
    fd = open(path, O_WRONLY | O_APPEND);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
    assert_null(store_get(st, "k"));
    assert_false(exists(path));
    store_counters(&after);
    assert_int_equal(after.dropped - before.dropped, 5);
    store_close(st);
}

/* Two processes write the same key over and over with different bytes
 * while this one reads: every hit is one writer's bytes, whole. */
static void test_concurrent_writers(void **state)
{
    struct store *st = open_store("c", 0);
    size_t n = 3 * OUT_CHUNK + 999;
    pid_t pids[2];
    int hits = 0, status;

    (void)state;
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            struct store *mine = open_store("c", 0);
            struct blob *b = pattern(n, 100 + (unsigned)w);
            struct xp_err err = {0};
            int bad = 0;
            for (int i = 0; i < 25; i++)
                bad |= store_put_blob(mine, "shared", b, &err) != 0;
            blob_unref(b);
            store_close(mine);
            _exit(bad);
        }
    }
    for (int i = 0; i < 400; i++) {
        struct blob *b = store_get(st, "shared");
        if (b != NULL) {
            assert_true(holds(b, n, 100) || holds(b, n, 101));
            hits++;
            blob_unref(b);
        }
        if (waitpid(pids[0], &status, WNOHANG) == pids[0]) {
            assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            pids[0] = -1;
        }
        if (pids[0] < 0 && i > 50)
            break;
    }
    for (int w = 0; w < 2; w++) {
        if (pids[w] < 0)
            continue;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    struct blob *b = store_get(st, "shared");
    assert_true(holds(b, n, 100) || holds(b, n, 101));
    blob_unref(b);
    assert_int_equal(count_files(st->tmp), 0); /* no temporary file left */
    assert_int_equal(count_files(st->entries), 1);
    (void)hits;
    store_close(st);
}

/* A writer killed after half its bytes: no entry, only its temporary file,
 * which a trim removes once it is stale. */
static void test_killed_mid_write(void **state)
{
    struct store *st = open_store("c", 0);
    char path[600];
    int status;
    pid_t pid;

    (void)state;
    entry_path(st, "k", path, sizeof(path));
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct store_writer *w;
        struct xp_err err = {0};
        char buf[65536];
        memset(buf, 'a', sizeof(buf));
        if (store_put_begin(st, "k", &w, &err) != 0)
            _exit(1);
        for (int i = 0; i < 16; i++)
            store_put_write(w, buf, sizeof(buf));
        kill(getpid(), SIGKILL);
        _exit(2);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_false(exists(path));
    assert_null(store_get(st, "k"));
    assert_int_equal(count_files(st->tmp), 1);
    /* not stale yet: kept (its writer may be alive on another machine) */
    store_trim(st);
    assert_int_equal(count_files(st->tmp), 1);
    /* two hours old: removed */
    DIR *d = opendir(st->tmp);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        struct timespec ts[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
        assert_int_equal(utimensat(dirfd(d), de->d_name, ts, 0), 0);
    }
    closedir(d);
    store_trim(st);
    assert_int_equal(count_files(st->tmp), 0);
    /* and the key can be written whole afterwards */
    put(st, "k", 100, 5);
    struct blob *b = store_get(st, "k");
    assert_true(holds(b, 100, 5));
    blob_unref(b);
    store_close(st);
}

static void test_owner_checks(void **state)
{
    char dir[300], file[300];
    struct store *st;
    struct xp_err err = {0};
    struct stat sb;

    (void)state;
    /* created owner-only, parents too */
    sub(dir, sizeof(dir), "new/deeper/cache");
    assert_int_equal(store_open(dir, 0, &st, &err), 0);
    store_close(st);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    sub(dir, sizeof(dir), "new");
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    /* others may write it */
    sub(dir, sizeof(dir), "open");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(store_open(dir, 0, &st, &err), -EPERM);
    assert_non_null(strstr(err.msg, "others may write"));
    /* a file */
    sub(file, sizeof(file), "file");
    int fd = open(file, O_WRONLY | O_CREAT, 0600);
    close(fd);
    assert_int_equal(store_open(file, 0, &st, &err), -ENOTDIR);
    /* another user's */
    if (geteuid() == 0) {
        sub(dir, sizeof(dir), "theirs");
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(chown(dir, 65534, 65534), 0);
        assert_int_equal(store_open(dir, 0, &st, &err), -EPERM);
    } else {
        assert_int_equal(store_open("/", 0, &st, &err), -EPERM);
    }
    assert_non_null(strstr(err.msg, "owned by another user"));
    /* an entries folder of another user's inside our own */
    if (geteuid() == 0) {
        sub(dir, sizeof(dir), "mixed");
        assert_int_equal(store_open(dir, 0, &st, &err), 0);
        assert_int_equal(chown(st->entries, 65534, 65534), 0);
        store_close(st);
        assert_int_equal(store_open(dir, 0, &st, &err), -EPERM);
    }
}

static void set_use(struct store *st, const char *key, time_t when)
{
    char path[600];
    struct timespec ts[2] = {{when, 0}, {0, UTIME_OMIT}};

    entry_path(st, key, path, sizeof(path));
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_size_bound(void **state)
{
    size_t n = 100000, each = n + 48; /* payload + header of a 1-byte key */
    struct store *st = open_store("c", 3 * each + each / 2);
    struct store_counters before, after;
    char pa[600], pb[600], pc[600], pd[600];
    struct blob *b;

    (void)state;
    store_counters(&before);
    put(st, "A", n, 1);
    put(st, "B", n, 2);
    put(st, "C", n, 3);
    set_use(st, "A", 1000);
    set_use(st, "B", 2000);
    set_use(st, "C", 3000);
    b = store_get(st, "A"); /* A is the most recently used now */
    assert_true(holds(b, n, 1));
    blob_unref(b);
    put(st, "D", n, 4);
    entry_path(st, "A", pa, sizeof(pa));
    entry_path(st, "B", pb, sizeof(pb));
    entry_path(st, "C", pc, sizeof(pc));
    entry_path(st, "D", pd, sizeof(pd));
    assert_true(exists(pa));
    assert_false(exists(pb)); /* the least recently used */
    assert_true(exists(pc));
    assert_true(exists(pd));
    store_counters(&after);
    assert_int_equal(after.evicted - before.evicted, 1);
    assert_true(st->bytes <= st->max_bytes - st->max_bytes / 10); /* down to 90% */
    /* a file bigger than the whole bound is not kept */
    put(st, "E", 4 * each, 5);
    assert_null(store_get(st, "E"));
    assert_true(exists(pa) && exists(pc) && exists(pd));
    /* a second process with the same bound sees the same total */
    store_close(st);
    st = open_store("c", 3 * each + each / 2);
    assert_int_equal(st->bytes, 3 * each);
    store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_and_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_and_source_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_and_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_mid_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_bound, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
