/*
 * err.c - filling and prefixing struct xp_err.
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int xp_err_set(struct xp_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

void xp_err_prefix(struct xp_err *err, const char *fmt, ...)
{
    char prefix[XP_ERR_MAX];
    char old[XP_ERR_MAX];
    va_list ap;

    if (err == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    snprintf(err->msg, sizeof(err->msg), "%s%s", prefix, old);
}

void xp_err_clear(struct xp_err *err)
{
    if (err == NULL)
        return;
    err->code = 0;
    err->msg[0] = '\0';
}
