/*
 * test_file_map.c - mapped files: the bytes are the file's; a file cut
 * short under its mapping reads zeros where it lost pages and says so,
 * without a signal reaching the process; a SIGBUS elsewhere still goes to
 * the handler before ours, or ends the process as it would have; released
 * pages leave resident memory and read the same when read again; an xplane
 * cut short between opening and decoding fails to decode with a message
 * that says why, and one cut short after it makes the snapshot that opened
 * it say so (the check every produced file passes before it is served); an
 * xplane is copied under XS_MAP_FROM bytes and mapped from there, and lets
 * go of its pages on release only from XS_RELEASE_FROM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file_map.h"
#include "pbw.h"
#include "session/session.h"
#include "reader/xspace.h"

#define PAGES 4

/* A temporary file of n bytes, byte i = i % 251 + 1 (never zero). */
static int make_file(char *path, size_t pathlen, size_t n)
{
    char tmpl[] = "/tmp/test_file_map_XXXXXX";
    unsigned char *b = malloc(n);
    size_t i;
    int fd = mkstemp(tmpl);

    assert_non_null(b);
    assert_true(fd >= 0);
    for (i = 0; i < n; i++)
        b[i] = (unsigned char)(i % 251 + 1);
    assert_int_equal(write(fd, b, n), (ssize_t)n);
    free(b);
    snprintf(path, pathlen, "%s", tmpl);
    return fd;
}

static void test_bytes_are_the_files(void **state)
{
    size_t n = PAGES * 4096 + 100, i;
    char path[64];
    int fd = make_file(path, sizeof(path), n);
    const uint8_t *m = NULL;

    (void)state;
    assert_int_equal(file_map(fd, n, &m), 0);
    for (i = 0; i < n; i++)
        assert_int_equal(m[i], i % 251 + 1);
    assert_int_equal(file_map_cut(m), 0);
    file_unmap(m, n);
    /* Nothing to map. */
    assert_int_equal(file_map(fd, 0, &m), -EAGAIN);
    close(fd);
    unlink(path);
}

static void test_cut_short_reads_zeros(void **state)
{
    size_t n = PAGES * 4096, i;
    char path[64];
    int fd = make_file(path, sizeof(path), n);
    const volatile uint8_t *v;
    const uint8_t *m = NULL;

    (void)state;
    assert_int_equal(file_map(fd, n, &m), 0);
    assert_int_equal(ftruncate(fd, 4096 + 10), 0);
    v = m;
    /* The page the file still reaches: its bytes, then zeros. */
    assert_int_equal(v[4096 + 9], (4096 + 9) % 251 + 1);
    assert_int_equal(v[4096 + 10], 0);
    assert_int_equal(file_map_cut(m), 0);
    /* The lost pages: zeros, and the mapping says it was cut. */
    for (i = 2 * 4096; i < n; i += 512)
        assert_int_equal(v[i], 0);
    assert_int_equal(v[n - 1], 0);
    assert_int_equal(file_map_cut(m), 1);
    /* The pages before are untouched. */
    assert_int_equal(v[100], 100 % 251 + 1);
    file_unmap(m, n);
    close(fd);
    unlink(path);
}

/* Resident KiB of the mapping holding addr (/proc/self/smaps). */
static long resident_kib(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    long rss = -1;
    int in = 0;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) /* a mapping's first line */
            in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        else if (in && sscanf(line, "Rss: %ld kB", &rss) == 1)
            break;
    }
    fclose(f);
    return rss;
}

static void test_release_keeps_bytes(void **state)
{
    size_t n = 64 * 4096, i;
    char path[64];
    int fd = make_file(path, sizeof(path), n);
    const uint8_t *m = NULL;
    unsigned sum = 0;
    long before, after;

    (void)state;
    assert_int_equal(file_map(fd, n, &m), 0);
    for (i = 0; i < n; i++)
        sum += m[i];
    before = resident_kib(m);
    assert_true(before >= 64 * 4);
    /* Pages 11..49 lie wholly inside the range: they go. */
    file_map_release(m, 10 * 4096 + 100, 40 * 4096);
    after = resident_kib(m);
    assert_true(after <= before - 39 * 4);
    for (i = 0; i < n; i++)
        assert_int_equal(m[i], i % 251 + 1);
    assert_true(sum > 0);
    file_unmap(m, n);
    close(fd);
    unlink(path);
}

/* In a child: map a file with file_map (putting the guard in place over
 * `before`), then read a lost page of a mapping made without it. */
static void unguarded_fault(void (*before)(int))
{
    size_t n = PAGES * 4096;
    char path[64];
    int fd = make_file(path, sizeof(path), n);
    const uint8_t *guarded = NULL;
    const volatile uint8_t *bare;

    signal(SIGBUS, before);
    if (file_map(fd, n, &guarded) != 0)
        _exit(10);
    bare = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bare == MAP_FAILED)
        _exit(11);
    unlink(path);
    if (ftruncate(fd, 0) != 0)
        _exit(12);
    (void)bare[2 * 4096];
    _exit(13);
}

static void exit_42(int sig)
{
    (void)sig;
    _exit(42);
}

static int run_child(void (*before)(int))
{
    int status;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0)
        unguarded_fault(before);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void test_other_faults_pass_on(void **state)
{
    int status;

    (void)state;
    /* With no handler before ours, the process ends by SIGBUS. */
    status = run_child(SIG_DFL);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGBUS);
    /* With one, it runs. */
    status = run_child(exit_42);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 42);
}

/* An xplane of one line with many events, several pages long, then an
 * unknown field of pad bytes (a hole in the file: no disk used). */
static void write_profile(const char *path, size_t pad)
{
    struct pbw space = {0}, plane = {0}, line = {0}, meta = {0}, entry = {0};
    int fd, i;

    for (i = 0; i < 4000; i++) {
        struct pbw ev = {0};
        pbw_uint(&ev, 1, 1);                 /* metadata_id */
        pbw_uint(&ev, 2, (uint64_t)i * 100); /* offset_ps */
        pbw_uint(&ev, 3, 50);                /* duration_ps */
        pbw_msg(&line, 4, &ev);
        free(ev.p);
    }
    pbw_uint(&line, 1, 1);
    pbw_str(&line, 2, "line");
    pbw_uint(&meta, 1, 1);
    pbw_str(&meta, 2, "op");
    pbw_uint(&entry, 1, 1);
    pbw_msg(&entry, 2, &meta);
    pbw_uint(&plane, 1, 1);
    pbw_str(&plane, 2, "/host:CPU");
    pbw_msg(&plane, 3, &line);
    pbw_msg(&plane, 4, &entry);
    pbw_msg(&space, 1, &plane);
    pbw_key(&space, 15, 2);
    pbw_varint(&space, pad);
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, space.p, space.n), (ssize_t)space.n);
    assert_int_equal(ftruncate(fd, (off_t)(space.n + pad)), 0);
    close(fd);
    free(space.p);
    free(plane.p);
    free(line.p);
    free(meta.p);
    free(entry.p);
}

static void test_xplane_cut_before_decoding(void **state)
{
    char path[] = "/tmp/test_file_map_XXXXXX.xplane.pb";
    struct xp_err err = {0};
    struct xspace *xs = NULL;
    int fd = mkstemps(path, 10);

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    /* Small: read into memory, so cutting the file changes nothing. */
    write_profile(path, 100);
    assert_int_equal(xspace_open(path, &xs, &err), 0);
    assert_int_equal(xs->mapped, 0);
    assert_int_equal(truncate(path, 4096), 0);
    assert_int_equal(xspace_decode(xs, 2, &err), 0);
    assert_int_equal(xs->nevents, 4000);
    xspace_close(xs);
    /* Big: mapped; cut before its events are decoded. */
    write_profile(path, XS_MAP_FROM);
    assert_int_equal(xspace_open(path, &xs, &err), 0);
    assert_int_equal(xs->mapped, 1);
    assert_int_equal(truncate(path, 4096), 0);
    assert_int_equal(xspace_decode(xs, 2, &err), -EIO);
    assert_non_null(strstr(err.msg, "cut short while being read"));
    xspace_close(xs);
    /* Opened again, it is a truncated profile like any other. */
    assert_int_equal(xspace_open(path, &xs, &err), -EIO);
    assert_null(strstr(err.msg, "cut short while being read"));
    unlink(path);
}

/* A profile of pad bytes written at path and opened: it must be mapped.
 * Every page is read, then all are released; *before and *after are the
 * mapping's resident KiB around the release. It still decodes after. */
static void mapped_and_released(const char *path, size_t pad, long *before, long *after)
{
    struct xp_err err = {0};
    struct xspace *xs = NULL;
    const volatile uint8_t *v;
    size_t i;

    write_profile(path, pad);
    assert_int_equal(xspace_open(path, &xs, &err), 0);
    assert_int_equal(xs->mapped, 1);
    v = xs->data;
    for (i = 0; i < xs->size; i += 4096)
        (void)v[i];
    *before = resident_kib(xs->data);
    xspace_release(xs, 0, xs->size);
    *after = resident_kib(xs->data);
    assert_int_equal(xspace_decode(xs, 2, &err), 0);
    assert_int_equal(xs->nevents, 4000);
    xspace_close(xs);
}

static void test_xplane_mapped_and_released_by_size(void **state)
{
    char path[] = "/tmp/test_file_map_XXXXXX.xplane.pb";
    struct xp_err err = {0};
    struct xspace *xs = NULL;
    long before, after;
    int fd = mkstemps(path, 10);

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    /* Under XS_MAP_FROM: copied (release has nothing to let go). */
    write_profile(path, XS_MAP_FROM / 2);
    assert_int_equal(xspace_open(path, &xs, &err), 0);
    assert_int_equal(xs->mapped, 0);
    xspace_close(xs);
    /* Mapped, but under XS_RELEASE_FROM: its pages stay, for the passes
     * that read it again. */
    mapped_and_released(path, XS_MAP_FROM, &before, &after);
    assert_true(before >= (long)(XS_MAP_FROM / 1024));
    assert_int_equal(after, before);
    /* From XS_RELEASE_FROM: they go (the page cache keeps them). */
    mapped_and_released(path, XS_RELEASE_FROM, &before, &after);
    assert_true(before >= (long)(XS_RELEASE_FROM / 1024));
    assert_true(after < before / 100);
    unlink(path);
}

static void test_snapshot_sees_the_cut(void **state)
{
    char dir[] = "/tmp/test_file_map_XXXXXX", path[128];
    struct xp_err err = {0};
    struct snapshot *snap = NULL;
    struct xspace *xs = NULL;
    struct session *s;
    const volatile uint8_t *v;
    int fd;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/h.xplane.pb", dir);
    fd = open(path, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    write_profile(path, XS_MAP_FROM);
    s = session_new("run", dir, dir);
    assert_non_null(s);
    assert_int_equal(session_snapshot(s, &snap, &err), 0);
    assert_int_equal(snapshot_xspace_decoded(snap, "h", &xs, &err), 0);
    assert_int_equal(xs->mapped, 1);
    assert_int_equal(snapshot_sources_cut(snap, &err), 0);
    /* Cut after decoding, while a tool still reads it. */
    assert_int_equal(truncate(path, 4096), 0);
    v = xs->data;
    assert_int_equal(v[xs->size - 1], 0);
    assert_int_equal(snapshot_sources_cut(snap, &err), -EIO);
    assert_non_null(strstr(err.msg, "cut short while being read"));
    snapshot_unref(snap);
    session_unref(s);
    unlink(path);
    rmdir(dir);
}

/* A source rewritten in place, same size, its mtime put back: the ctime
 * still moves, and the snapshot knows its bytes are not the ones it
 * listed. */
static void test_snapshot_sees_a_rewrite(void **state)
{
    char dir[] = "/tmp/test_file_map_XXXXXX", path[128];
    struct xp_err err = {0};
    struct snapshot *snap = NULL, *again = NULL;
    struct timespec times[2];
    struct session *s;
    struct stat st;
    int fd;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/h.xplane.pb", dir);
    fd = open(path, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    write_profile(path, 65536);
    s = session_new("run", dir, dir);
    assert_non_null(s);
    assert_int_equal(session_snapshot(s, &snap, &err), 0);
    assert_int_equal(snapshot_sources_unchanged(snap, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    usleep(20000); /* a ctime tick apart */
    fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "rewritten", 9, 1000), 9);
    close(fd);
    times[0] = st.st_atim;
    times[1] = st.st_mtim;
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
    assert_int_equal(snapshot_sources_unchanged(snap, &err), -EIO);
    assert_string_equal(err.msg,
                        "h.xplane.pb changed while this file was made from it; read it again");
    /* The next snapshot lists the new bytes. */
    assert_int_equal(session_snapshot(s, &again, &err), 0);
    assert_ptr_not_equal(again, snap);
    assert_int_equal(snapshot_sources_unchanged(again, &err), 0);
    snapshot_unref(again);
    snapshot_unref(snap);
    session_unref(s);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_are_the_files),
        cmocka_unit_test(test_cut_short_reads_zeros),
        cmocka_unit_test(test_release_keeps_bytes),
        cmocka_unit_test(test_other_faults_pass_on),
        cmocka_unit_test(test_xplane_cut_before_decoding),
        cmocka_unit_test(test_xplane_mapped_and_released_by_size),
        cmocka_unit_test(test_snapshot_sees_the_cut),
        cmocka_unit_test(test_snapshot_sees_a_rewrite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
