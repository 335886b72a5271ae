/*
 * zstd_out.c - one zstd frame streamed into an output writer (zstd_out.h).
 *
 * Pending bytes are handed to ZSTD_compressStream2 whenever the input
 * buffer (ZSTD_CStreamInSize, one block) is full; whatever it emits goes to
 * the struct out at once. ZSTD_e_end flushes the last block and the
 * epilogue.
 */
#include "zstd_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

int zo_begin(struct zstd_out *z, struct out *o, int level, uint64_t content_size)
{
    ZSTD_CCtx *cctx;

    memset(z, 0, sizeof(*z));
    cctx = ZSTD_createCCtx();
    if (cctx == NULL)
        return -ENOMEM;
    z->in_cap = ZSTD_CStreamInSize();
    z->buf_cap = ZSTD_CStreamOutSize();
    z->in = malloc(z->in_cap);
    z->buf = malloc(z->buf_cap);
    if (z->in == NULL || z->buf == NULL) {
        free(z->in);
        free(z->buf);
        ZSTD_freeCCtx(cctx);
        return -ENOMEM;
    }
    z->cctx = cctx;
    z->o = o;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, content_size)))
        z->err = -EIO;
    return 0;
}

/* Compress the pending bytes with mode (continue or end), appending what
 * comes out to z->o. */
static void drain(struct zstd_out *z, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {z->in, z->in_len, 0};
    size_t left;

    if (z->err != 0)
        return;
    do {
        ZSTD_outBuffer ob = {z->buf, z->buf_cap, 0};
        left = ZSTD_compressStream2(z->cctx, &ob, &in, mode);
        if (ZSTD_isError(left)) {
            z->err = -EIO;
            return;
        }
        out_write(z->o, z->buf, ob.pos);
    } while (mode == ZSTD_e_end ? left != 0 : in.pos < in.size);
    z->in_len = 0;
}

void zo_write(struct zstd_out *z, const void *p, size_t n)
{
    const unsigned char *s = p;

    z->total += n;
    while (n > 0 && z->err == 0) {
        size_t room = z->in_cap - z->in_len, k = n < room ? n : room;
        memcpy(z->in + z->in_len, s, k);
        z->in_len += k;
        s += k;
        n -= k;
        if (z->in_len == z->in_cap)
            drain(z, ZSTD_e_continue);
    }
}

unsigned char *zo_reserve(struct zstd_out *z, size_t n)
{
    if (z->in_cap - z->in_len < n)
        drain(z, ZSTD_e_continue);
    return z->err == 0 ? z->in + z->in_len : NULL;
}

void zo_commit(struct zstd_out *z, size_t n)
{
    z->in_len += n;
    z->total += n;
}

int zo_end(struct zstd_out *z)
{
    int rc;

    drain(z, ZSTD_e_end);
    rc = z->err;
    ZSTD_freeCCtx(z->cctx);
    free(z->in);
    free(z->buf);
    memset(z, 0, sizeof(*z));
    return rc;
}
