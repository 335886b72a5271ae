/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From a struct ui_reply to an MHD response (respond.h). Small bodies are
 * sent with a Content-Length (gzipped in one go); files longer than one
 * block are streamed with chunked encoding.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "files.h"
#include "gzip.h"
#include "respond.h"
#include "stream.h"

#define STREAM_CHUNK (32 * 1024) /* bytes MHD asks the stream for at once */

/* Adds the headers every response carries; 0 or -ENOMEM. */
static int add_headers(struct MHD_Response *resp, const struct ui_reply *r, int gzip)
{
    int ok = 1;

    ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type) == MHD_YES;
    ok &= MHD_add_response_header(resp, "Content-Security-Policy", r->csp) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") == MHD_YES;
    ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding") == MHD_YES;
    if (gzip)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip") == MHD_YES;
    if (r->disposition)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, r->disposition) ==
              MHD_YES;
    if (r->allow)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow) == MHD_YES;
    return ok ? 0 : -ENOMEM;
}

/*
 * Reads the first block of a file body. A short file becomes an owned
 * body; a read error becomes an error reply. Returns the open stream for
 * a long file (taking r's fd), else NULL with r rewritten.
 */
static struct ui_stream *read_ahead(struct ui_reply *r, int gzip)
{
    char *head = malloc(UI_STREAM_BLOCK);
    struct ui_stream *s;
    long n;
    int fd;

    if (!head) {
        ui_reply_errno(r, -ENOMEM, "file");
        return NULL;
    }
    n = ui_read_full(r->fd, head, UI_STREAM_BLOCK);
    if (n < 0) {
        free(head);
        ui_reply_errno(r, (int)n, "file");
        return NULL;
    }
    if (n < UI_STREAM_BLOCK) {
        close(r->fd);
        r->fd = -1;
        r->data = head;
        r->len = (size_t)n;
        r->body = UI_BODY_OWNED;
        return NULL;
    }
    fd = r->fd;
    r->fd = -1;
    r->body = UI_BODY_EMPTY;
    s = ui_stream_new(fd, head, (size_t)n, gzip);
    if (!s)
        ui_reply_errno(r, -ENOMEM, "file");
    return s;
}

/*
 * Makes the response for a body held in memory, compressed if asked. An
 * owned body is handed to MHD (r->data becomes NULL).
 */
static struct MHD_Response *memory_response(struct ui_reply *r, int gzip)
{
    const void *p = r->body == UI_BODY_STATIC ? r->sdata : r->data;
    size_t len = r->body == UI_BODY_EMPTY ? 0 : r->len;
    struct MHD_Response *resp;
    char *z;
    size_t n_z;

    if (gzip) {
        if (ui_gzip_buf(len ? p : "", len, &z, &n_z) != 0)
            return NULL;
        resp = MHD_create_response_from_buffer(n_z, z, MHD_RESPMEM_MUST_FREE);
        if (!resp)
            free(z);
        return resp;
    }
    if (r->body == UI_BODY_OWNED && len) {
        resp = MHD_create_response_from_buffer(len, r->data, MHD_RESPMEM_MUST_FREE);
        if (resp)
            r->data = NULL;
        return resp;
    }
    return MHD_create_response_from_buffer(len, (void *)(len ? p : ""), MHD_RESPMEM_PERSISTENT);
}

enum MHD_Result ui_respond(struct MHD_Connection *conn, struct ui_reply *r, int gzip,
                           unsigned int *status)
{
    struct MHD_Response *resp = NULL;
    struct ui_stream *s = NULL;
    enum MHD_Result ret = MHD_NO;

    if (r->body == UI_BODY_FILE)
        s = read_ahead(r, gzip);
    if (s) {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_CHUNK, ui_stream_read, s,
                                                 ui_stream_free);
        if (!resp)
            ui_stream_free(s);
    } else {
        resp = memory_response(r, gzip);
    }
    if (resp && add_headers(resp, r, gzip) == 0) {
        *status = r->status;
        ret = MHD_queue_response(conn, r->status, resp);
    }
    if (resp)
        MHD_destroy_response(resp);
    ui_reply_release(r);
    return ret;
}
