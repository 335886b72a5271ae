/*
 * test_out.c - the output writer: chunk boundaries, JSON and CSV escaping,
 * number formats, blobs, spilling to a file and writing a blob to an fd,
 * the pages a small answer touches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "out/out.h"

/* This test's open(), which the writer's calls reach before the C
 * library's: while refuse_tmpfile is set it answers O_TMPFILE as a file
 * system without it does (EOPNOTSUPP), so the writer's mkstemp fallback
 * runs; everything else goes to the kernel unchanged. */
static int refuse_tmpfile;
static int refused;

int open(const char *path, int flags, ...)
{
    mode_t mode = 0;

    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (refuse_tmpfile && (flags & O_TMPFILE) == O_TMPFILE) {
        refused++;
        errno = EOPNOTSUPP;
        return -1;
    }
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* The whole blob as one NUL-terminated string. */
static char *blob_str(struct blob *b)
{
    char *s = malloc(b->size + 1);
    assert_int_equal(blob_read(b, 0, s, b->size), b->size);
    s[b->size] = '\0';
    return s;
}

static char *finish(struct out *o)
{
    struct blob *b;
    char *s;

    assert_int_equal(out_finish(o, &b), 0);
    s = blob_str(b);
    blob_unref(b);
    return s;
}

static void test_json_escape(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    out_json_str(&o, "a\"b\\c\n\t\x01\x7f\xc3\xa9", 11);
    s = finish(&o);
    assert_string_equal(s, "\"a\\\"b\\\\c\\n\\t\\u0001\x7f\xc3\xa9\"");
    free(s);
}

static void test_csv_escape(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    out_csv_str(&o, "plain", 5);
    out_putc(&o, ',');
    out_csv_str(&o, "a,b", 3);
    out_putc(&o, ',');
    out_csv_str(&o, "say \"hi\"", 8);
    out_putc(&o, ',');
    out_csv_str(&o, "", 0);
    s = finish(&o);
    assert_string_equal(s, "plain,\"a,b\",\"say \"\"hi\"\"\",");
    free(s);
}

static void test_numbers(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    out_double17(&o, 0.1);
    out_putc(&o, ' ');
    out_double17(&o, 1234.5);
    out_putc(&o, ' ');
    out_double17(&o, NAN);
    out_putc(&o, ' ');
    out_double17(&o, -INFINITY);
    out_putc(&o, ' ');
    out_i64(&o, INT64_MIN);
    out_putc(&o, ' ');
    out_u64(&o, UINT64_MAX);
    out_putc(&o, ' ');
    out_i64(&o, 0);
    out_putc(&o, ' ');
    out_u64(&o, 0);
    out_putc(&o, ' ');
    out_i64(&o, -7);
    s = finish(&o);
    assert_string_equal(s, "0.10000000000000001 1234.5 null null -9223372036854775808 "
                           "18446744073709551615 0 0 -7");
    free(s);
}

/* out_number: integers as integers, shortest digits, plain decimal in
 * 1e-6..1e15; out_decimal shifts the digits without a second rounding. */
static void test_people_numbers(void **state)
{
    static const struct {
        double v;
        int shift;
        const char *want;
    } cases[] = {
        {0, 0, "0"},
        {-0.0, 0, "0"},
        {1234567, 0, "1234567"},
        {-42, 0, "-42"},
        {0.1, 0, "0.1"},
        {21.3, 0, "21.3"},
        {1e-6, 0, "0.000001"},
        {1.5e-7, 0, "1.5e-07"},
        {1e15, 0, "1e+15"},
        {123456789012345.0, 0, "123456789012345"},
        {NAN, 0, "null"},
        {INFINITY, 0, "null"},
        {1500000, -6, "1.5"},
        {1, -6, "0.000001"},
        {1234567, -3, "1234.567"},
        {1500, 3, "1500000"},
        {0.1, -3, "0.0001"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct out o;
        char *s;

        out_init(&o);
        if (cases[i].shift == 0)
            out_number(&o, cases[i].v);
        else
            out_decimal(&o, cases[i].v, cases[i].shift);
        s = finish(&o);
        if (strcmp(s, cases[i].want) != 0)
            fail_msg("case %zu: %g shift %d gave %s, want %s", i, cases[i].v, cases[i].shift, s,
                     cases[i].want);
        free(s);
    }
}

static void test_format_i64(void **state)
{
    char buf[OUT_I64_MAX];

    (void)state;
    assert_int_equal(out_format_i64(buf, INT64_MIN), 20);
    assert_memory_equal(buf, "-9223372036854775808", 20);
    assert_int_equal(out_format_i64(buf, INT64_MAX), 19);
    assert_memory_equal(buf, "9223372036854775807", 19);
    assert_int_equal(out_format_i64(buf, 0), 1);
    assert_memory_equal(buf, "0", 1);
}

/* out_u64, out_i64 and out_format_i64 against snprintf for values of every
 * length (the formatters take two digits at a time). */
static void test_integers_match_printf(void **state)
{
    uint64_t x = 88172645463325252ull;
    char want[64], buf[OUT_I64_MAX];
    struct out o;
    size_t k, n;
    char *s, *line;

    (void)state;
    out_init(&o);
    for (k = 0; k < 20000; k++) {
        uint64_t u;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        u = x >> (x % 64);
        out_u64(&o, u);
        out_putc(&o, ' ');
        out_i64(&o, (int64_t)u);
        out_putc(&o, '\n');
        n = out_format_i64(buf, -(int64_t)(u >> 1));
        snprintf(want, sizeof(want), "%lld", -(long long)(u >> 1));
        assert_int_equal(n, strlen(want));
        assert_memory_equal(buf, want, n);
    }
    s = finish(&o);
    x = 88172645463325252ull;
    line = s;
    for (k = 0; k < 20000; k++) {
        uint64_t u;
        char *nl = strchr(line, '\n');
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        u = x >> (x % 64);
        assert_non_null(nl);
        *nl = '\0';
        snprintf(want, sizeof(want), "%llu %lld", (unsigned long long)u, (long long)(int64_t)u);
        assert_string_equal(line, want);
        line = nl + 1;
    }
    free(s);
}

static void test_chunk_boundaries(void **state)
{
    struct out o;
    struct blob *b;
    size_t i, n = 3 * OUT_CHUNK + 17;
    char piece[7] = "abcdefg";
    char *s;

    (void)state;
    out_init(&o);
    for (i = 0; i < n / 7; i++)
        out_write(&o, piece, 7);
    out_printf(&o, "%s", "tail");
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->size, (n / 7) * 7 + 4);
    s = blob_str(b);
    for (i = 0; i < (n / 7) * 7; i++)
        assert_int_equal(s[i], piece[i % 7]);
    assert_memory_equal(s + (n / 7) * 7, "tail", 4);
    /* Reads across chunk edges and past the end. */
    char buf[10];
    assert_int_equal(blob_read(b, OUT_CHUNK - 3, buf, 10), 10);
    assert_memory_equal(buf, s + OUT_CHUNK - 3, 10);
    assert_int_equal(blob_read(b, b->size - 2, buf, 10), 2);
    assert_int_equal(blob_read(b, b->size + 5, buf, 10), 0);
    free(s);
    blob_unref(blob_ref(b));
    blob_unref(b);
}

static void test_empty(void **state)
{
    struct out o;
    char *s;

    (void)state;
    out_init(&o);
    s = finish(&o);
    assert_string_equal(s, "");
    free(s);
}

/* Byte i of the spill tests' content: not periodic in the chunk size. */
static char pattern_byte(size_t i)
{
    return (char)((i * 2654435761u) >> 13);
}

/* A writer spilling into dir past threshold, fed n pattern bytes in pieces
 * of varying size (so appends straddle chunk edges). */
static void feed_pattern(struct out *o, size_t n)
{
    char piece[4099];
    size_t done = 0, step = 1;

    while (done < n) {
        size_t take = step < n - done ? step : n - done;
        size_t i;

        for (i = 0; i < take; i++)
            piece[i] = pattern_byte(done + i);
        out_write(o, piece, take);
        done += take;
        step = step * 7 % sizeof(piece) + 1;
    }
}

static void write_pattern(struct out *o, const char *dir, size_t threshold, size_t n)
{
    out_init(o);
    out_spill_at(o, dir, threshold);
    feed_pattern(o, n);
}

/* Number of open file descriptors of this process. */
static int open_fds(void)
{
    int fd, n = 0;

    for (fd = 0; fd < 1024; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
}

/* Check blob_read of [off, off+len) against the pattern. */
static void check_range(const struct blob *b, char *buf, size_t off, size_t len)
{
    size_t want = off >= b->size ? 0 : (len < b->size - off ? len : b->size - off);
    size_t i;

    assert_int_equal(blob_read(b, off, buf, len), want);
    for (i = 0; i < want; i++)
        if (buf[i] != pattern_byte(off + i))
            fail_msg("byte %zu of a read at %zu differs", i, off);
}

static void test_spill_reads(void **state)
{
    size_t n = 5 * OUT_CHUNK + 12345, threshold = OUT_CHUNK + 1000;
    size_t edges[] = {0,
                      OUT_CHUNK - 1,
                      OUT_CHUNK,
                      2 * OUT_CHUNK - 7,
                      4 * OUT_CHUNK - 1,
                      5 * OUT_CHUNK - 3,
                      5 * OUT_CHUNK,
                      n - 1,
                      n,
                      n + 10};
    struct out o;
    struct blob *b;
    char *buf = malloc(n + 100);
    size_t i;
    int fds = open_fds();

    (void)state;
    write_pattern(&o, "/tmp", threshold, n);
    assert_int_equal(out_len(&o), n);
    assert_int_equal(open_fds(), fds + 1);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->size, n);
    /* Chunks 0..4 are full and went to the file; the partial one stays. */
    assert_int_equal(b->file_bytes, 5 * OUT_CHUNK);
    for (i = 0; i < 5; i++)
        assert_null(b->chunks[i]);
    assert_non_null(b->chunks[5]);
    check_range(b, buf, 0, n);
    for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        check_range(b, buf, edges[i], 1);
        check_range(b, buf, edges[i] >= 5 ? edges[i] - 5 : 0, 11);
        check_range(b, buf, edges[i] >= OUT_CHUNK ? edges[i] - OUT_CHUNK : 0, OUT_CHUNK + 3);
    }
    srand(7);
    for (i = 0; i < 300; i++) {
        size_t off = (size_t)rand() % (n + 100);
        size_t len = (size_t)rand() % (i % 3 == 0 ? 3 * OUT_CHUNK : 5000);
        check_range(b, buf, off, len);
    }
    blob_unref(blob_ref(b));
    blob_unref(b);
    assert_int_equal(open_fds(), fds);
    free(buf);
}

/* Below or exactly at the threshold nothing goes to a file; one byte more
 * does. An empty spilling writer makes an empty blob. */
static void test_spill_threshold(void **state)
{
    struct out o;
    struct blob *b;
    char *buf = malloc(3 * OUT_CHUNK);
    int fds = open_fds();

    (void)state;
    write_pattern(&o, "/tmp", 2 * OUT_CHUNK, 0);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->size, 0);
    assert_int_equal(b->file_bytes, 0);
    assert_int_equal(blob_read(b, 0, buf, 10), 0);
    blob_unref(b);

    write_pattern(&o, "/tmp", 2 * OUT_CHUNK, 2 * OUT_CHUNK);
    assert_int_equal(open_fds(), fds);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->file_bytes, 0);
    check_range(b, buf, 0, 2 * OUT_CHUNK);
    blob_unref(b);

    write_pattern(&o, "/tmp", 2 * OUT_CHUNK, 2 * OUT_CHUNK + 1);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->file_bytes, 2 * OUT_CHUNK);
    check_range(b, buf, 0, 2 * OUT_CHUNK + 1);
    check_range(b, buf, 2 * OUT_CHUNK - 2, 10);
    blob_unref(b);

    /* The default threshold is far above this test's sizes. */
    out_init(&o);
    out_spill(&o, "/tmp");
    out_write(&o, "abc", 3);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->file_bytes, 0);
    assert_int_equal(o.spill_at, OUT_SPILL_THRESHOLD);
    blob_unref(b);
    assert_int_equal(open_fds(), fds);
    free(buf);
}

/* A spill directory that does not exist: the writer fails like an
 * allocation failure, with the file's errno, and releases everything. */
static void test_spill_bad_dir(void **state)
{
    struct out o;
    struct blob *b = (struct blob *)&o;
    int fds = open_fds();

    (void)state;
    write_pattern(&o, "/nonexistent-xprofs-spill-dir", 0, 3 * OUT_CHUNK + 5);
    assert_true(o.oom);
    /* The first chunk filled; the second could not start. */
    assert_int_equal(out_len(&o), OUT_CHUNK);
    assert_int_equal(out_finish(&o, &b), -ENOENT);
    assert_null(b);
    assert_int_equal(open_fds(), fds);
    /* The writer is empty and usable again, still set to spill there. */
    out_write(&o, "x", 1);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->size, 1);
    blob_unref(b);
    write_pattern(&o, "/nonexistent-xprofs-spill-dir", 0, 2 * OUT_CHUNK + 1);
    out_discard(&o);
    assert_int_equal(out_len(&o), 0);
}

/* Entries of dir other than . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* A file system without O_TMPFILE: the writer spills to a named file it
 * unlinks at once, and reads back the same bytes; nothing is left in the
 * directory, during or after. */
static void test_spill_without_tmpfile(void **state)
{
    size_t n = 3 * OUT_CHUNK + 777;
    char dir[] = "/tmp/xprofs-test-spill-XXXXXX";
    char *buf = malloc(n);
    struct out o;
    struct blob *b;
    int fds = open_fds();

    (void)state;
    assert_non_null(mkdtemp(dir));
    refuse_tmpfile = 1;
    refused = 0;
    write_pattern(&o, dir, 0, n);
    refuse_tmpfile = 0;
    assert_int_equal(refused, 1);
    assert_false(o.oom);
    assert_int_equal(open_fds(), fds + 1);
    assert_int_equal(dir_entries(dir), 0);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->size, n);
    assert_int_equal(b->file_bytes, 3 * OUT_CHUNK);
    check_range(b, buf, 0, n);
    check_range(b, buf, OUT_CHUNK - 3, 10);
    blob_unref(b);
    assert_int_equal(open_fds(), fds);
    assert_int_equal(dir_entries(dir), 0);
    assert_int_equal(rmdir(dir), 0);
    free(buf);
}

/* Reading a pipe to its end from a thread while the blob is written. */
struct drain {
    int fd;
    char *buf;
    size_t cap, len;
};

static void *drain_pipe(void *arg)
{
    struct drain *d = arg;
    ssize_t r;

    while ((r = read(d->fd, d->buf + d->len, d->cap - d->len)) > 0)
        d->len += (size_t)r;
    return NULL;
}

static void check_pattern(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (s[i] != pattern_byte(i))
            fail_msg("byte %zu differs", i);
}

static void test_blob_write_fd(void **state)
{
    size_t sizes[] = {0, 10, OUT_CHUNK, 3 * OUT_CHUNK + 77, 4 * OUT_CHUNK};
    size_t k;

    (void)state;
    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        char path[] = "/tmp/test_out_XXXXXX";
        struct drain d = {0};
        struct out o;
        struct blob *b;
        pthread_t th;
        int pipefd[2], fd;
        char *back;

        write_pattern(&o, "/tmp", OUT_CHUNK / 2, n);
        assert_int_equal(out_finish(&o, &b), 0);
        assert_int_equal(b->file_bytes > 0, n > OUT_CHUNK);

        /* To a file. */
        fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        assert_int_equal(blob_write_fd(b, fd), 0);
        assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)n);
        back = malloc(n + 1);
        assert_int_equal(pread(fd, back, n, 0), (ssize_t)n);
        check_pattern(back, n);
        free(back);
        close(fd);

        /* To a pipe, read by another thread. */
        assert_int_equal(pipe(pipefd), 0);
        d.fd = pipefd[0];
        d.cap = n + 1;
        d.buf = malloc(d.cap);
        assert_int_equal(pthread_create(&th, NULL, drain_pipe, &d), 0);
        assert_int_equal(blob_write_fd(b, pipefd[1]), 0);
        close(pipefd[1]);
        pthread_join(th, NULL);
        close(pipefd[0]);
        assert_int_equal(d.len, n);
        check_pattern(d.buf, n);
        free(d.buf);

        /* To an O_APPEND file, which sendfile refuses: copied through memory. */
        memcpy(path + sizeof(path) - 7, "XXXXXX", 6);
        fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        fd = open(path, O_RDWR | O_APPEND);
        assert_true(fd >= 0);
        unlink(path);
        assert_int_equal(blob_write_fd(b, fd), 0);
        back = malloc(n + 1);
        assert_int_equal(pread(fd, back, n + 1, 0), (ssize_t)n);
        check_pattern(back, n);
        free(back);
        close(fd);

        blob_unref(b);
    }
}

/* A closed fd: the error comes back, nothing is leaked. */
static void test_blob_write_fd_error(void **state)
{
    struct out o;
    struct blob *b;
    int pipefd[2];

    (void)state;
    write_pattern(&o, "/tmp", 0, 2 * OUT_CHUNK + 9);
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(pipe(pipefd), 0);
    close(pipefd[0]);
    close(pipefd[1]);
    assert_int_equal(blob_write_fd(b, pipefd[1]), -EBADF);
    blob_unref(b);
}

/* A streaming writer: past the threshold full chunks reach the fd while
 * the writer is fed, no file of its own is opened, out_finish_to writes the
 * rest, and the fd gets exactly the bytes written. */
static void test_stream(void **state)
{
    size_t sizes[] = {0, 10, OUT_CHUNK, OUT_CHUNK + 1000, 5 * OUT_CHUNK + 12345, 6 * OUT_CHUNK};
    size_t threshold = OUT_CHUNK + 1000, k;
    int fds = open_fds();

    (void)state;
    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k], early;
        char path[] = "/tmp/test_out_XXXXXX";
        struct out o;
        char *back;
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        unlink(path);
        out_init(&o);
        out_stream_at(&o, fd, threshold);
        feed_pattern(&o, n);
        assert_int_equal(out_len(&o), n);
        /* Whole chunks before the one being filled went out already. */
        early = n > threshold ? ((n - 1) / OUT_CHUNK) * OUT_CHUNK : 0;
        assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)early);
        assert_int_equal(open_fds(), fds + 1);
        assert_int_equal(out_finish_to(&o, fd), 0);
        assert_int_equal(out_len(&o), 0);
        assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)n);
        back = malloc(n + 1);
        assert_int_equal(pread(fd, back, n + 1, 0), (ssize_t)n);
        check_pattern(back, n);
        free(back);
        close(fd);
    }
    assert_int_equal(open_fds(), fds);
}

/* Misuse and failures of streaming: a blob cannot be made from a streaming
 * writer, a spilled writer cannot be finished to an fd, and a write error
 * is sticky and reported by out_finish_to; nothing leaks. */
static void test_stream_errors(void **state)
{
    struct out o;
    struct blob *b;
    int pipefd[2], fds = open_fds();

    (void)state;
    out_init(&o);
    out_stream_at(&o, 1, OUT_CHUNK);
    out_write(&o, "abc", 3);
    assert_int_equal(out_finish(&o, &b), -EINVAL);
    assert_null(b);

    write_pattern(&o, "/tmp", OUT_CHUNK / 2, 2 * OUT_CHUNK + 9);
    assert_int_equal(out_finish_to(&o, 1), -EINVAL);
    assert_int_equal(open_fds(), fds);

    /* A writer that never spills is written whole. */
    assert_int_equal(pipe(pipefd), 0);
    out_init(&o);
    out_write(&o, "hello", 5);
    assert_int_equal(out_finish_to(&o, pipefd[1]), 0);
    {
        char buf[8] = {0};
        assert_int_equal(read(pipefd[0], buf, sizeof(buf)), 5);
        assert_string_equal(buf, "hello");
    }
    close(pipefd[0]);
    close(pipefd[1]);

    /* A closed fd past the threshold: the writer turns into a no-op. */
    assert_int_equal(pipe(pipefd), 0);
    close(pipefd[0]);
    close(pipefd[1]);
    out_init(&o);
    out_stream_at(&o, pipefd[1], 0);
    feed_pattern(&o, 3 * OUT_CHUNK);
    assert_int_equal(o.oom, 1);
    assert_int_equal(out_finish_to(&o, pipefd[1]), -EBADF);
    assert_int_equal(open_fds(), fds);
}

/* A rewound writer writes its next bytes into the chunks it holds; a blob
 * made from it and out_append copy exactly the bytes written since. */
static void test_rewind_append(void **state)
{
    struct out a, all;
    struct blob *b;
    char *buf = malloc(3 * OUT_CHUNK);
    char *first = NULL;
    size_t round, total = 0, sizes[] = {3 * OUT_CHUNK - 5, 10, OUT_CHUNK, 0, OUT_CHUNK + 1};

    (void)state;
    out_init(&a);
    out_init(&all);
    for (round = 0; round < sizeof(sizes) / sizeof(sizes[0]); round++) {
        out_rewind(&a);
        assert_int_equal(out_len(&a), 0);
        feed_pattern(&a, sizes[round]);
        assert_int_equal(out_len(&a), sizes[round]);
        if (round == 0)
            first = a.chunks[0];
        else
            assert_ptr_equal(a.chunks[0], first); /* the same memory */
        /* The chunks of the longest round stay. */
        assert_int_equal(a.nchunks, 3);
        out_append(&all, &a);
        total += sizes[round];
        assert_int_equal(out_len(&all), total);
    }
    /* A blob of the last round holds only its bytes, in full chunks. */
    assert_int_equal(out_finish(&a, &b), 0);
    assert_int_equal(b->size, OUT_CHUNK + 1);
    assert_int_equal(b->nchunks, 2);
    check_range(b, buf, 0, OUT_CHUNK + 1);
    blob_unref(b);
    /* Each round's pattern restarts at byte 0. */
    assert_int_equal(out_finish(&all, &b), 0);
    assert_int_equal(b->size, total);
    check_range(b, buf, 0, sizes[0]);
    assert_int_equal(blob_read(b, sizes[0] + 10, buf, OUT_CHUNK), OUT_CHUNK);
    check_pattern(buf, OUT_CHUNK);
    blob_unref(b);
    free(buf);
}

#ifndef __SANITIZE_ADDRESS__
/* Resident pages of a chunk (mincore). */
static size_t resident_pages(const char *chunk)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = OUT_CHUNK / page, i, count = 0;
    unsigned char *vec = malloc(n);

    assert_non_null(vec);
    assert_int_equal(mincore((void *)chunk, OUT_CHUNK, vec), 0);
    for (i = 0; i < n; i++)
        count += vec[i] & 1;
    free(vec);
    return count;
}
#endif

/* A small answer touches the pages it writes, not a 2 MiB huge page (to
 * clear: milliseconds on a VM's fresh memory); a writer that expects to
 * fill its chunk still gets the same bytes. Chunks are mapped only outside
 * AddressSanitizer (where they come from malloc, and pages are not ours to
 * count). */
static void test_small_answer_pages(void **state)
{
    struct out o, big;
    struct blob *b;
    char buf[16];
    int i;

    (void)state;
    out_init(&o);
    for (i = 0; i < 100; i++)
        out_puts(&o, "0123456789"); /* 1,000 bytes */
#ifndef __SANITIZE_ADDRESS__
    assert_true(resident_pages(o.chunks[0]) <= 2);
#endif
    assert_int_equal(out_finish(&o, &b), 0);
    assert_int_equal(b->size, 1000);
    blob_unref(b);

    out_init(&big);
    out_expect(&big, OUT_CHUNK);
    for (i = 0; i < 300000; i++) {
        snprintf(buf, sizeof(buf), "%09d,", i);
        out_puts(&big, buf);
    }
    assert_int_equal(out_len(&big), 3000000);
    assert_int_equal(big.nchunks, 2);
    assert_int_equal(memcmp(big.chunks[0], "000000000,000000001,", 20), 0);
    assert_int_equal(memcmp(big.chunks[1] + (3000000 - OUT_CHUNK) - 10, "000299999,", 10), 0);
    out_discard(&big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_escape),      cmocka_unit_test(test_csv_escape),
        cmocka_unit_test(test_numbers),          cmocka_unit_test(test_people_numbers),
        cmocka_unit_test(test_format_i64),       cmocka_unit_test(test_integers_match_printf),
        cmocka_unit_test(test_chunk_boundaries), cmocka_unit_test(test_empty),
        cmocka_unit_test(test_spill_reads),      cmocka_unit_test(test_spill_threshold),
        cmocka_unit_test(test_spill_bad_dir),    cmocka_unit_test(test_spill_without_tmpfile),
        cmocka_unit_test(test_blob_write_fd),    cmocka_unit_test(test_blob_write_fd_error),
        cmocka_unit_test(test_stream),           cmocka_unit_test(test_stream_errors),
        cmocka_unit_test(test_rewind_append),    cmocka_unit_test(test_small_answer_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
