/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Building replies (reply.h): bodies, error texts and the errno to HTTP
 * status mapping the issue asks for (missing 404, EINVAL 400, EIO 500).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reply.h"

#define TEXT_MAX 4096 /* bytes of an error text */

const char ui_csp_xprof[] =
    "default-src 'self';"
    "script-src 'self' 'unsafe-eval' 'unsafe-inline' https://www.gstatic.com;"
    "object-src 'none';"
    "style-src 'self' 'unsafe-inline' https://fonts.googleapis.com https://www.gstatic.com;"
    "font-src 'self' https://fonts.googleapis.com https://fonts.gstatic.com data:;"
    "connect-src 'self' data: www.gstatic.com;"
    "img-src 'self' blob: data:;"
    "frame-src 'self' https://ui.perfetto.dev;"
    "script-src-elem 'self' 'unsafe-inline' https://cdn.jsdelivr.net/npm/ https://www.gstatic.com";

const char ui_csp_page[] = "default-src 'self';object-src 'none';img-src 'self' data: blob:;"
                           "base-uri 'none';form-action 'none';frame-ancestors 'none'";

void ui_reply_init(struct ui_reply *r)
{
    memset(r, 0, sizeof(*r));
    r->status = 500;
    r->type = UI_TYPE_TEXT;
    r->body = UI_BODY_EMPTY;
    r->fd = -1;
    r->csp = ui_csp_xprof;
}

/* Drops the current body only. */
static void drop_body(struct ui_reply *r)
{
    free(r->data);
    r->data = NULL;
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    r->sdata = NULL;
    r->len = 0;
    r->body = UI_BODY_EMPTY;
}

void ui_reply_release(struct ui_reply *r)
{
    drop_body(r);
    free(r->disposition);
    ui_reply_init(r);
}

void ui_reply_text(struct ui_reply *r, unsigned int status, const char *fmt, ...)
{
    char *text = malloc(TEXT_MAX);
    va_list ap;
    int n;

    drop_body(r);
    r->status = status;
    r->type = UI_TYPE_TEXT;
    if (!text)
        return;
    va_start(ap, fmt);
    n = vsnprintf(text, TEXT_MAX - 1, fmt, ap);
    va_end(ap);
    if (n < 0) {
        free(text);
        return;
    }
    if (n > TEXT_MAX - 2)
        n = TEXT_MAX - 2;
    text[n++] = '\n';
    text[n] = '\0';
    r->data = text;
    r->len = (size_t)n;
    r->body = UI_BODY_OWNED;
}

void ui_reply_buf(struct ui_reply *r, unsigned int status, const char *type, struct ui_buf *b)
{
    int err = ui_buf_finish(b);
    char *data;
    size_t len;

    if (err) {
        ui_buf_release(b);
        ui_reply_errno(r, err, "reply");
        return;
    }
    data = ui_buf_detach(b, &len);
    if (!data) {
        ui_reply_errno(r, -ENOMEM, "reply");
        return;
    }
    drop_body(r);
    r->status = status;
    r->type = type;
    r->data = data;
    r->len = len;
    r->body = UI_BODY_OWNED;
}

void ui_reply_static(struct ui_reply *r, const char *type, const void *p, size_t len)
{
    drop_body(r);
    r->status = 200;
    r->type = type;
    r->sdata = p;
    r->len = len;
    r->body = UI_BODY_STATIC;
}

void ui_reply_file(struct ui_reply *r, const char *type, int fd)
{
    drop_body(r);
    r->status = 200;
    r->type = type;
    r->fd = fd;
    r->body = UI_BODY_FILE;
}

unsigned int ui_status_of_errno(int err)
{
    switch (-err) {
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
        return 404;
    case EINVAL:
    case ENAMETOOLONG:
    case ERANGE:
    case EDOM:
        return 400;
    case EACCES:
    case EPERM:
        return 403;
    default:
        return 500;
    }
}

void ui_reply_errno(struct ui_reply *r, int err, const char *subject)
{
    unsigned int status = ui_status_of_errno(err);
    const char *what = status == 404 ? "not found" : status == 400 ? "bad request" : "error";

    ui_reply_text(r, status, "%s: '%s': %s", what, subject, strerror(-err));
}
