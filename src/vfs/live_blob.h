/*
 * live_blob.h - a produced file that readers follow while it is being made.
 *
 * The mount's first read of a big file need not wait for the whole file. Its
 * writer spills past OUT_SPILL_THRESHOLD (out.h); a live blob is told how
 * many bytes the spill file holds after every chunk the writer adds there
 * (live_publish, the writer's spill hook), and readers read those bytes from
 * the file through a descriptor of their own, waiting for more as they catch
 * up. When the producer is done (live_finish) readers read its blob, or get
 * its error. One producer, any number of readers; every call is thread-safe.
 *
 * When the last reader has gone, or the owner stops it (live_stop), the next
 * publish tells the writer to stop (-ECANCELED): nobody would read the rest.
 */
#ifndef XPROFS_LIVE_BLOB_H
#define XPROFS_LIVE_BLOB_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"
#include "out/out.h"

struct live_blob {
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* signalled on every publish and at the end */
    int refs;             /* references */
    int fd;               /* our copy of the spill file's descriptor, or -1 */
    size_t ready;         /* bytes [0, ready) are in the spill file */
    int done;             /* the producer has finished */
    int stop;             /* the writer was (or is to be) told to stop */
    int rc;               /* when done: 0, or the producer's negative errno */
    struct xp_err err;    /* when done with rc != 0: why */
    struct blob *blob;    /* when done with rc == 0: the whole file */
};

/* A live blob with one reference and nothing produced yet; NULL when out of
 * memory. */
struct live_blob *live_new(void);

struct live_blob *live_ref(struct live_blob *l);
void live_unref(struct live_blob *l); /* NULL is a no-op */

/* A new reader's reference, or NULL when the writer is told to stop. */
struct live_blob *live_follow(struct live_blob *l);

/* Tell the writer to stop at its next publish; live_stopped says if so. */
void live_stop(struct live_blob *l);
int live_stopped(struct live_blob *l);

/* The writer's spill hook (out_on_spill, arg = the live blob): bytes
 * [0, spilled) of the output are now in the spill file fd. Returns 0, or
 * -ECANCELED when stopped or when only the producer's reference is left. */
int live_publish(void *arg, int fd, size_t spilled);

/* The producer is done: with rc 0 blob is the whole file (the live blob takes
 * that reference), else err says why. Wakes every reader. */
void live_finish(struct live_blob *l, int rc, struct blob *blob, const struct xp_err *err);

/* Wait until the spill file holds bytes or the producer is done; returns 1
 * when it is done. */
int live_wait_started(struct live_blob *l);

/* Copy up to n bytes from offset off into dst, waiting until they exist or
 * the file is finished; returns the number copied (short only at the end of
 * the file), or -1 with errno set (the producer's failure, or reading the
 * spill file failed). */
ssize_t live_read(struct live_blob *l, size_t off, void *dst, size_t n);

/* 1 and the producer's failure in *err when it has failed, else 0. */
int live_error(struct live_blob *l, struct xp_err *err);

#endif
