/* SPDX-License-Identifier: Apache-2.0 */
/*
 * zlib wrappers for gzip response bodies (gzip.h). Level 1: on loopback
 * the time to compress matters more than the last bytes saved.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gzip.h"

#define GZIP_LEVEL 1
#define GZIP_WINDOW (15 + 16) /* 32 KiB window, gzip wrapper */
#define GZIP_MEMLEVEL 8

/* Returns 1 when the parameters of one coding ("; q=0.5") leave q > 0. */
static int q_positive(const char *params, size_t n)
{
    const char *q = NULL;
    size_t i;

    for (i = 0; i + 1 < n; i++) {
        if ((params[i] == 'q' || params[i] == 'Q') && params[i + 1] == '=') {
            q = params + i + 2;
            break;
        }
    }
    if (!q)
        return 1;
    for (; q < params + n && *q != ',' && *q != ';'; q++)
        if (*q >= '1' && *q <= '9')
            return 1;
    return 0;
}

int ui_gzip_accepted(const char *accept_encoding)
{
    const char *p = accept_encoding;
    size_t len, name;

    if (!p)
        return 0;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        len = strcspn(p, ",");
        name = strcspn(p, ";, \t");
        if (name > len)
            name = len;
        if ((name == 4 && strncasecmp(p, "gzip", 4) == 0) ||
            (name == 6 && strncasecmp(p, "x-gzip", 6) == 0) || (name == 1 && p[0] == '*'))
            return q_positive(p + name, len - name);
        p += len;
    }
    return 0;
}

int ui_gzip_begin(z_stream *zs)
{
    memset(zs, 0, sizeof(*zs));
    if (deflateInit2(zs, GZIP_LEVEL, Z_DEFLATED, GZIP_WINDOW, GZIP_MEMLEVEL, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return -ENOMEM;
    return 0;
}

long ui_gzip_step(z_stream *zs, void *out, size_t n, int finish, int *ended)
{
    int rc;

    zs->next_out = out;
    zs->avail_out = (uInt)n;
    rc = deflate(zs, finish ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_END)
        *ended = 1;
    else if (rc != Z_OK && rc != Z_BUF_ERROR)
        return -EIO;
    return (long)(n - zs->avail_out);
}

void ui_gzip_end(z_stream *zs)
{
    deflateEnd(zs);
}

int ui_gzip_buf(const void *in, size_t n, char **out, size_t *n_out)
{
    z_stream zs;
    size_t cap;
    char *buf;
    long got;
    int ended = 0;

    if (n > (size_t)UINT32_MAX / 2)
        return -EFBIG;
    if (ui_gzip_begin(&zs))
        return -ENOMEM;
    cap = deflateBound(&zs, (uLong)n) + 32;
    buf = malloc(cap);
    if (!buf) {
        ui_gzip_end(&zs);
        return -ENOMEM;
    }
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)n;
    got = ui_gzip_step(&zs, buf, cap, 1, &ended);
    ui_gzip_end(&zs);
    if (got < 0 || !ended) {
        free(buf);
        return -EIO;
    }
    *out = buf;
    *n_out = (size_t)got;
    return 0;
}
