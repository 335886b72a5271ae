/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growable byte buffer with a hard size cap and a sticky error, for the
 * small documents the proxy builds itself (runs, hosts, error texts).
 * Appends never fail loudly: the first failure is kept in `err` and later
 * appends do nothing, so a caller checks once with ui_buf_finish().
 */
#ifndef UI_BUF_H
#define UI_BUF_H

#include <stddef.h>

struct ui_buf {
    char *data; /* NUL-terminated when non-NULL */
    size_t len; /* bytes used, without the NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* hard limit on len */
    int err;    /* 0, -ENOMEM or -E2BIG; sticky */
};

/* Starts an empty buffer that may grow to max bytes; allocates nothing. */
void ui_buf_init(struct ui_buf *b, size_t max);

/* Appends n bytes; on failure records the error and appends nothing. */
void ui_buf_add(struct ui_buf *b, const void *p, size_t n);

/* Appends a NUL-terminated string. */
void ui_buf_adds(struct ui_buf *b, const char *s);

/* Appends printf-style formatted text. */
void ui_buf_addf(struct ui_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Returns 0, or the first error any append met (negative errno). */
int ui_buf_finish(const struct ui_buf *b);

/*
 * Hands the bytes to the caller (free() them) and leaves the buffer empty.
 * Returns a valid empty string when nothing was appended, NULL on OOM.
 */
char *ui_buf_detach(struct ui_buf *b, size_t *len);

/* Frees the bytes; the buffer may be reused after ui_buf_init(). */
void ui_buf_release(struct ui_buf *b);

#endif
