/*
 * err.h - the error record every core call fills.
 *
 * Core functions return 0 on success or a negative errno (-EIO for bad input,
 * -EINVAL for a bad request, -ENOMEM, -ENOENT) and describe the failure in a
 * struct xp_err: one line, naming the file and the byte offset when known.
 * Nothing in the core prints or exits; front ends turn the record into EIO and a
 * line in errors.txt, a stderr message, or an HTTP status.
 */
#ifndef XPROFS_ERR_H
#define XPROFS_ERR_H

#include <stddef.h>

#define XP_ERR_MAX 512

struct xp_err {
    int code;             /* negative errno of the failure, 0 if none */
    char msg[XP_ERR_MAX]; /* one-line reason, NUL-terminated */
};

/* Record a failure and return code (a negative errno), so callers can write
 * `return xp_err_set(err, -EIO, "%s: truncated", path);`. err may be NULL. */
int xp_err_set(struct xp_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the message already in err with more context ("file: "). */
void xp_err_prefix(struct xp_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reset err to "no error". */
void xp_err_clear(struct xp_err *err);

#endif
