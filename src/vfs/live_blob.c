/*
 * live_blob.c - a produced file readers follow while it is made; see
 * live_blob.h.
 */
#include "live_blob.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct live_blob *live_new(void)
{
    struct live_blob *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    l->refs = 1;
    l->fd = -1;
    return l;
}

struct live_blob *live_ref(struct live_blob *l)
{
    pthread_mutex_lock(&l->lock);
    l->refs++;
    pthread_mutex_unlock(&l->lock);
    return l;
}

void live_unref(struct live_blob *l)
{
    int last;

    if (l == NULL)
        return;
    pthread_mutex_lock(&l->lock);
    last = --l->refs == 0;
    pthread_mutex_unlock(&l->lock);
    if (!last)
        return;
    if (l->fd >= 0)
        close(l->fd);
    blob_unref(l->blob);
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

struct live_blob *live_follow(struct live_blob *l)
{
    struct live_blob *r = NULL;

    pthread_mutex_lock(&l->lock);
    if (!l->stop) {
        l->refs++;
        r = l;
    }
    pthread_mutex_unlock(&l->lock);
    return r;
}

void live_stop(struct live_blob *l)
{
    pthread_mutex_lock(&l->lock);
    l->stop = 1;
    pthread_mutex_unlock(&l->lock);
}

int live_stopped(struct live_blob *l)
{
    int stop;

    pthread_mutex_lock(&l->lock);
    stop = l->stop;
    pthread_mutex_unlock(&l->lock);
    return stop;
}

int live_publish(void *arg, int fd, size_t spilled)
{
    struct live_blob *l = arg;
    int rc = 0;

    pthread_mutex_lock(&l->lock);
    if (l->refs == 1)
        l->stop = 1; /* every reader has gone */
    if (l->stop) {
        rc = -ECANCELED;
    } else {
        if (l->fd < 0)
            l->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        /* Without a descriptor of our own readers wait for the end instead. */
        if (l->fd >= 0 && spilled > l->ready)
            l->ready = spilled;
        pthread_cond_broadcast(&l->cond);
    }
    pthread_mutex_unlock(&l->lock);
    return rc;
}

void live_finish(struct live_blob *l, int rc, struct blob *blob, const struct xp_err *err)
{
    pthread_mutex_lock(&l->lock);
    l->done = 1;
    l->rc = rc;
    if (rc == 0) {
        l->blob = blob;
    } else {
        blob_unref(blob);
        l->err = *err;
        if (l->err.msg[0] == '\0')
            xp_err_set(&l->err, rc, "%s", strerror(-rc));
    }
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

int live_wait_started(struct live_blob *l)
{
    int done;

    pthread_mutex_lock(&l->lock);
    while (!l->done && l->ready == 0)
        pthread_cond_wait(&l->cond, &l->lock);
    done = l->done;
    pthread_mutex_unlock(&l->lock);
    return done;
}

static ssize_t pread_full(int fd, char *dst, size_t n, size_t off)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = pread(fd, dst + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0) {
            errno = EIO; /* the file holds less than it published */
            return -1;
        }
        got += (size_t)r;
    }
    return (ssize_t)got;
}

ssize_t live_read(struct live_blob *l, size_t off, void *dst, size_t n)
{
    size_t want = off > SIZE_MAX - n ? SIZE_MAX : off + n;
    int fd;

    pthread_mutex_lock(&l->lock);
    while (!l->done && l->ready < want)
        pthread_cond_wait(&l->cond, &l->lock);
    if (l->done) {
        int rc = l->rc;
        struct blob *b = l->blob;
        pthread_mutex_unlock(&l->lock);
        if (rc != 0) {
            errno = -rc;
            return -1;
        }
        /* blob is set once and kept until the last reference goes. */
        return blob_read(b, off, dst, n);
    }
    fd = l->fd; /* open until the last reference goes, which we hold */
    pthread_mutex_unlock(&l->lock);
    return pread_full(fd, dst, n, off);
}

int live_error(struct live_blob *l, struct xp_err *err)
{
    int failed;

    pthread_mutex_lock(&l->lock);
    failed = l->done && l->rc != 0;
    if (failed)
        *err = l->err;
    pthread_mutex_unlock(&l->lock);
    return failed;
}
