/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Growable, capped byte buffer with a sticky error (see buf.h). Used for
 * every body the proxy composes itself; file bodies are streamed instead.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void ui_buf_init(struct ui_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
    b->err = 0;
}

/* Makes room for n more bytes plus the NUL; 0 or a negative errno. */
static int grow(struct ui_buf *b, size_t n)
{
    size_t want, cap;
    char *p;

    if (n > b->max || b->len > b->max - n)
        return -E2BIG;
    want = b->len + n + 1;
    if (want <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < want)
        cap *= 2;
    p = realloc(b->data, cap);
    if (!p)
        return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

void ui_buf_add(struct ui_buf *b, const void *p, size_t n)
{
    int rc;

    if (b->err)
        return;
    rc = grow(b, n);
    if (rc) {
        b->err = rc;
        return;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ui_buf_adds(struct ui_buf *b, const char *s)
{
    ui_buf_add(b, s, strlen(s));
}

void ui_buf_addf(struct ui_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    int rc;

    if (b->err)
        return;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->err = -EINVAL;
        return;
    }
    rc = grow(b, (size_t)n);
    if (rc) {
        b->err = rc;
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->err = -EINVAL;
        return;
    }
    b->len += (size_t)n;
}

int ui_buf_finish(const struct ui_buf *b)
{
    return b->err;
}

char *ui_buf_detach(struct ui_buf *b, size_t *len)
{
    char *p = b->data;

    if (!p)
        p = calloc(1, 1);
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

void ui_buf_release(struct ui_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->err = 0;
}
