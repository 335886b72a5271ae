/*
 * zstd_out.h - one zstd frame streamed into an output writer.
 *
 * Bytes written here are buffered (one zstd input block), compressed with
 * zstd's streaming API and appended to a struct out as compressed bytes come
 * out, so memory stays bounded by the compressed output plus two small
 * buffers. The uncompressed size is pledged up front, so the frame header
 * carries it (as ZSTD_compress writes it; XProf's Decompress requires it),
 * and zstd itself checks that exactly that many bytes arrive.
 */
#ifndef XPROFS_ZSTD_OUT_H
#define XPROFS_ZSTD_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

struct zstd_out {
    void *cctx;         /* ZSTD_CCtx */
    struct out *o;      /* where compressed bytes go */
    unsigned char *in;  /* pending uncompressed bytes */
    size_t in_len;      /* bytes pending in `in` */
    size_t in_cap;      /* size of `in` */
    unsigned char *buf; /* compressed bytes on their way to o */
    size_t buf_cap;     /* size of `buf` */
    uint64_t total;     /* uncompressed bytes accepted so far */
    int err;            /* sticky: 0, -ENOMEM or -EIO (zstd failed) */
};

/* Start a frame of exactly content_size bytes at compression level. Returns
 * 0 or -ENOMEM (nothing to release then). */
int zo_begin(struct zstd_out *z, struct out *o, int level, uint64_t content_size);

/* Append n bytes (errors are sticky, reported by zo_end). */
void zo_write(struct zstd_out *z, const void *p, size_t n);

/* Room for at least n more bytes at the end of the pending buffer (n at most
 * 64); NULL after an error. The caller fills them and calls zo_commit. */
unsigned char *zo_reserve(struct zstd_out *z, size_t n);
void zo_commit(struct zstd_out *z, size_t n);

/* Close the frame and release the compressor. Returns 0, -ENOMEM, or -EIO
 * (zstd failed, or the byte count differs from the pledged size). */
int zo_end(struct zstd_out *z);

#endif
