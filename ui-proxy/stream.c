/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A file streamed as a response body (stream.h). One stream per response;
 * MHD calls ui_stream_read() from the connection's own thread, so a stream
 * needs no lock.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "gzip.h"
#include "stream.h"

struct ui_stream {
    int fd;        /* the file, owned */
    int gzip;      /* compress the body */
    int eof;       /* the file is read to its end */
    int ended;     /* the gzip trailer is written */
    z_stream zs;   /* compressor, when gzip */
    char *in;      /* UI_STREAM_BLOCK bytes of input */
    size_t n_in;   /* bytes of input in `in` */
    size_t pos_in; /* identity: bytes of `in` already sent */
};

struct ui_stream *ui_stream_new(int fd, char *head, size_t n, int gzip)
{
    struct ui_stream *s = calloc(1, sizeof(*s));

    if (!s) {
        close(fd);
        free(head);
        return NULL;
    }
    s->fd = fd;
    s->in = head;
    s->n_in = n;
    s->gzip = gzip;
    if (gzip) {
        if (ui_gzip_begin(&s->zs)) {
            s->gzip = 0;
            ui_stream_free(s);
            return NULL;
        }
        s->zs.next_in = (Bytef *)s->in;
        s->zs.avail_in = (uInt)n;
    }
    return s;
}

static ssize_t read_identity(struct ui_stream *s, char *out, size_t max)
{
    size_t n;
    long got;

    if (s->pos_in < s->n_in) {
        n = s->n_in - s->pos_in;
        if (n > max)
            n = max;
        memcpy(out, s->in + s->pos_in, n);
        s->pos_in += n;
        return (ssize_t)n;
    }
    got = ui_read_full(s->fd, out, max);
    if (got < 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (got == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    return (ssize_t)got;
}

static ssize_t read_gzip(struct ui_stream *s, char *out, size_t max)
{
    long got;

    for (;;) {
        if (s->ended)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (s->zs.avail_in == 0 && !s->eof) {
            got = ui_read_full(s->fd, s->in, UI_STREAM_BLOCK);
            if (got < 0)
                return MHD_CONTENT_READER_END_WITH_ERROR;
            s->eof = got == 0;
            s->zs.next_in = (Bytef *)s->in;
            s->zs.avail_in = (uInt)got;
        }
        got = ui_gzip_step(&s->zs, out, max, s->eof, &s->ended);
        if (got < 0)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (got > 0)
            return (ssize_t)got;
    }
}

ssize_t ui_stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    struct ui_stream *s = cls;

    (void)pos;
    if (max == 0)
        return 0;
    return s->gzip ? read_gzip(s, out, max) : read_identity(s, out, max);
}

void ui_stream_free(void *cls)
{
    struct ui_stream *s = cls;

    if (!s)
        return;
    if (s->gzip)
        ui_gzip_end(&s->zs);
    if (s->fd >= 0)
        close(s->fd);
    free(s->in);
    free(s);
}
