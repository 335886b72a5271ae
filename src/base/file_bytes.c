/*
 * file_bytes.c - a whole file read into memory in parallel pieces; see
 * file_bytes.h.
 */
#include "file_bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bigalloc.h"
#include "parallel.h"

/* Bytes one task reads. */
#define READ_PIECE ((size_t)16 << 20)

struct read_job {
    int fd;       /* the file */
    uint8_t *buf; /* its bytes */
    size_t size;  /* bytes to read */
    int *err;     /* [piece] errno of a failed read, 0 if fine */
    size_t *got;  /* [piece] bytes read (short: the file shrank) */
};

/* Bytes [i * READ_PIECE, ...) of the file (a parallel_for item). */
static int read_piece(void *arg, size_t i)
{
    struct read_job *job = arg;
    size_t off = i * READ_PIECE;
    size_t want = job->size - off < READ_PIECE ? job->size - off : READ_PIECE;

    while (job->got[i] < want) {
        ssize_t n = pread(job->fd, job->buf + off + job->got[i], want - job->got[i],
                          (off_t)(off + job->got[i]));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            job->err[i] = errno;
            return -EIO;
        }
        if (n == 0)
            break;
        job->got[i] += (size_t)n;
    }
    return 0;
}

int file_read_all(const char *path, int fd, size_t size, uint8_t **bufp, size_t *lenp,
                  struct xp_err *err)
{
    size_t npieces = (size + READ_PIECE - 1) / READ_PIECE, i, len = 0;
    struct read_job job = {fd, big_malloc(size ? size : 1), size, NULL, NULL};
    int rc = 0;

    job.err = calloc(npieces ? npieces : 1, sizeof(*job.err));
    job.got = calloc(npieces ? npieces : 1, sizeof(*job.got));
    if (job.buf == NULL || job.err == NULL || job.got == NULL) {
        rc = xp_err_set(err, -ENOMEM, "%s: out of memory reading %zu bytes", path, size);
        goto out;
    }
    if (parallel_for(npieces, 0, read_piece, &job) != 0) {
        for (i = 0; i < npieces && job.err[i] == 0; i++)
            ;
        rc = xp_err_set(err, -(i < npieces ? job.err[i] : EIO), "%s: %s", path,
                        strerror(i < npieces ? job.err[i] : EIO));
        goto out;
    }
    /* The file shrank while we read it: keep the bytes up to the first gap. */
    for (i = 0; i < npieces; i++) {
        len += job.got[i];
        if (job.got[i] < READ_PIECE)
            break;
    }
    *bufp = job.buf;
    *lenp = len;
    job.buf = NULL;
out:
    big_free(job.buf);
    free(job.err);
    free(job.got);
    return rc;
}
