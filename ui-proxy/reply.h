/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A reply being prepared by a route: status, content type, headers and a
 * body that is a composed buffer, static bytes or an open file. Routes
 * fill one; respond.c turns it into an HTTP response, exactly once.
 */
#ifndef UI_REPLY_H
#define UI_REPLY_H

#include <stddef.h>

#include "buf.h"

#define UI_TYPE_JSON "application/json"
#define UI_TYPE_TEXT "text/plain"
#define UI_TYPE_HTML "text/html"
#define UI_TYPE_CSV "text/csv"
#define UI_TYPE_BINARY "application/octet-stream"

/* The Content-Security-Policy XProf's server sends with every response. */
extern const char ui_csp_xprof[];
/* The stricter policy of the bundled page: nothing but this origin. */
extern const char ui_csp_page[];

enum ui_body {
    UI_BODY_EMPTY,  /* no body */
    UI_BODY_OWNED,  /* data: malloc'd, freed by the reply */
    UI_BODY_STATIC, /* sdata: lives as long as the program */
    UI_BODY_FILE,   /* fd: open file, streamed, closed by the reply */
};

struct ui_reply {
    unsigned int status; /* HTTP status */
    const char *type;    /* Content-Type, a static string */
    enum ui_body body;   /* which field holds the body */
    char *data;          /* UI_BODY_OWNED bytes */
    const void *sdata;   /* UI_BODY_STATIC bytes */
    size_t len;          /* bytes in data or sdata */
    int fd;              /* UI_BODY_FILE descriptor, -1 otherwise */
    char *disposition;   /* Content-Disposition value (owned) or NULL */
    const char *csp;     /* Content-Security-Policy value */
    const char *allow;   /* Allow header (405 replies) or NULL */
};

/* Starts an empty 500 reply with XProf's CSP. */
void ui_reply_init(struct ui_reply *r);

/* Frees the body and headers; the reply is empty (init state) afterwards. */
void ui_reply_release(struct ui_reply *r);

/* Replaces the body by a text/plain message ending in a newline. */
void ui_reply_text(struct ui_reply *r, unsigned int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Takes the bytes of b as the body (b is left empty). When b holds an
 * error, the reply becomes a 500 text saying so instead.
 */
void ui_reply_buf(struct ui_reply *r, unsigned int status, const char *type, struct ui_buf *b);

/* Uses bytes that outlive the reply (embedded assets) as the body. */
void ui_reply_static(struct ui_reply *r, const char *type, const void *p, size_t len);

/* Streams open file fd as the body; the reply owns and closes fd. */
void ui_reply_file(struct ui_reply *r, const char *type, int fd);

/*
 * Replaces the body by the text of a negative errno for subject: 404 for a
 * missing file, 400 for EINVAL (bad name or query), 500 for EIO and the
 * rest, 403 for EACCES/EPERM.
 */
void ui_reply_errno(struct ui_reply *r, int err, const char *subject);

/* HTTP status for a negative errno, as ui_reply_errno() chooses it. */
unsigned int ui_status_of_errno(int err);

#endif
