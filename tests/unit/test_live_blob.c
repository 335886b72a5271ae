/*
 * test_live_blob.c - following a file while it is being made: readers
 * waiting for bytes a producer thread spills, the switch to the finished
 * blob, a failure after the first bytes, and stopping the writer once every
 * reader has gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vfs/live_blob.h"

#define THRESHOLD ((size_t)OUT_CHUNK) /* spill from the second chunk on */
#define TOTAL ((size_t)OUT_CHUNK * 5 + 12345)

static unsigned char byte_at(size_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13);
}

struct producer {
    struct live_blob *live; /* one reference, the producer's */
    size_t total;           /* bytes to write */
    int fail_after;         /* > 0: fail with -EIO once this many bytes are out */
    sem_t *hold;            /* or NULL: wait for it before finishing (or failing) */
    int rc;                 /* what out_finish returned */
};

/* Writes the pattern through a spilling writer that tells the live blob,
 * in small steps so readers interleave with it. */
static void *produce(void *arg)
{
    struct producer *p = arg;
    struct blob *b = NULL;
    struct xp_err err = {0};
    unsigned char piece[4000];
    struct out o;
    size_t done = 0, i;

    out_init(&o);
    out_spill_at(&o, "/tmp", THRESHOLD);
    out_on_spill(&o, live_publish, p->live);
    while (done < p->total && !out_failed(&o)) {
        size_t take = p->total - done < sizeof(piece) ? p->total - done : sizeof(piece);
        for (i = 0; i < take; i++)
            piece[i] = byte_at(done + i);
        out_write(&o, piece, take);
        done += take;
        if (p->fail_after > 0 && done >= (size_t)p->fail_after)
            break;
    }
    if (p->hold != NULL)
        sem_wait(p->hold);
    if (p->fail_after > 0) {
        out_discard(&o);
        p->rc = xp_err_set(&err, -EIO, "made-up failure after %zu bytes", done);
    } else {
        p->rc = out_finish(&o, &b);
        if (p->rc != 0)
            xp_err_set(&err, p->rc, "writer stopped");
    }
    live_finish(p->live, p->rc, b, &err);
    live_unref(p->live);
    return NULL;
}

static void check_bytes(const unsigned char *buf, size_t off, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (buf[i] != byte_at(off + i))
            fail_msg("byte %zu differs", off + i);
    }
}

static void test_follow_while_made(void **state)
{
    struct producer p = {.total = TOTAL};
    static unsigned char buf[3 * OUT_CHUNK];
    struct live_blob *reader;
    pthread_t tid;
    sem_t hold;
    size_t off = 0;
    ssize_t n;

    (void)state;
    sem_init(&hold, 0, 0);
    p.hold = &hold; /* not finished before we looked */
    p.live = live_new();
    assert_non_null(p.live);
    reader = live_ref(p.live);
    assert_int_equal(pthread_create(&tid, NULL, produce, &p), 0);
    /* Started means bytes are in the spill file, or the file is done. */
    assert_int_equal(live_wait_started(reader), 0);
    n = live_read(reader, 0, buf, 1000);
    assert_int_equal(n, 1000);
    check_bytes(buf, 0, 1000);
    sem_post(&hold);
    /* Sequential reads of odd sizes cross chunks and the end. */
    while ((n = live_read(reader, off, buf, 131072 + 7)) > 0) {
        check_bytes(buf, off, (size_t)n);
        off += (size_t)n;
    }
    assert_int_equal(n, 0);
    assert_int_equal(off, TOTAL);
    /* Reads past the end and across it, after the end. */
    assert_int_equal(live_read(reader, TOTAL + 5, buf, 10), 0);
    n = live_read(reader, TOTAL - 100, buf, sizeof(buf));
    assert_int_equal(n, 100);
    check_bytes(buf, TOTAL - 100, 100);
    pthread_join(tid, NULL);
    assert_int_equal(p.rc, 0);
    assert_int_equal(live_wait_started(reader), 1);
    sem_destroy(&hold);
    live_unref(reader);
}

static void test_random_reads_wait(void **state)
{
    struct producer p = {.total = TOTAL};
    static unsigned char buf[OUT_CHUNK];
    struct live_blob *reader;
    pthread_t tid;
    ssize_t n;

    (void)state;
    p.live = live_new();
    reader = live_ref(p.live);
    assert_int_equal(pthread_create(&tid, NULL, produce, &p), 0);
    /* The last bytes first: waits for the whole file. */
    n = live_read(reader, TOTAL - 3000, buf, 5000);
    assert_int_equal(n, 3000);
    check_bytes(buf, TOTAL - 3000, 3000);
    n = live_read(reader, OUT_CHUNK - 10, buf, 20);
    assert_int_equal(n, 20);
    check_bytes(buf, OUT_CHUNK - 10, 20);
    pthread_join(tid, NULL);
    live_unref(reader);
}

static void test_failure_after_first_bytes(void **state)
{
    struct producer p = {.total = TOTAL, .fail_after = (int)(3 * OUT_CHUNK + 10)};
    static unsigned char buf[4096];
    struct live_blob *reader;
    struct xp_err err;
    pthread_t tid;
    sem_t hold;
    ssize_t n;

    (void)state;
    sem_init(&hold, 0, 0);
    p.hold = &hold;
    p.live = live_new();
    reader = live_ref(p.live);
    assert_int_equal(pthread_create(&tid, NULL, produce, &p), 0);
    assert_int_equal(live_error(reader, &err), 0);
    n = live_read(reader, 100, buf, sizeof(buf));
    assert_int_equal(n, (ssize_t)sizeof(buf));
    check_bytes(buf, 100, sizeof(buf));
    sem_post(&hold);
    /* Bytes never made: the producer's error. */
    errno = 0;
    assert_int_equal(live_read(reader, TOTAL - 10, buf, 10), -1);
    assert_int_equal(errno, EIO);
    assert_int_equal(live_error(reader, &err), 1);
    assert_non_null(strstr(err.msg, "made-up failure"));
    /* Every read fails now, even of bytes that were in the file. */
    assert_int_equal(live_read(reader, 0, buf, 10), -1);
    pthread_join(tid, NULL);
    sem_destroy(&hold);
    live_unref(reader);
}

static void test_stops_without_readers(void **state)
{
    struct producer p = {.total = TOTAL};
    pthread_t tid;

    (void)state;
    /* Nobody but the producer holds it: the first publish stops the
     * writer, which then fails with -ECANCELED. */
    p.live = live_new();
    assert_int_equal(pthread_create(&tid, NULL, produce, &p), 0);
    pthread_join(tid, NULL);
    assert_int_equal(p.rc, -ECANCELED);
}

static void test_stop_and_follow(void **state)
{
    struct live_blob *l = live_new(), *r;

    (void)state;
    r = live_follow(l);
    assert_ptr_equal(r, l);
    assert_int_equal(live_stopped(l), 0);
    assert_int_equal(live_publish(l, 1, OUT_CHUNK), 0); /* a reader: go on */
    live_stop(l);
    assert_int_equal(live_stopped(l), 1);
    assert_null(live_follow(l));
    assert_int_equal(live_publish(l, 1, 2 * OUT_CHUNK), -ECANCELED);
    live_unref(r);
    live_unref(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follow_while_made),
        cmocka_unit_test(test_random_reads_wait),
        cmocka_unit_test(test_failure_after_first_bytes),
        cmocka_unit_test(test_stops_without_readers),
        cmocka_unit_test(test_stop_and_follow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
