/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /data, /data_csv and /data_txt: the tag and host choose a file of the run
 * (R/<tool>.json, or R/hosts/H/<tool>.json for one host), the other
 * parameters become its query string, and the file is streamed back as
 * it is. Errors of the mount become statuses: missing 404, EINVAL 400,
 * EIO 500, with the matching line of R/errors.txt as the reason.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "files.h"
#include "query.h"
#include "routes.h"

#define ERRORS_MAX (1u << 20) /* bytes of errors.txt searched for a reason */
#define REASON_MAX 512        /* bytes of a reason quoted */

/* Collects the file's query string from the request parameters. */
struct params {
    struct ui_buf *name; /* file name being built */
    int n;               /* options added so far */
    const char *bad;     /* first parameter with a bad name, or NULL */
};

static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    struct params *p = cls;

    (void)kind;
    if (ui_query_dropped(key) || !value || !*value)
        return MHD_YES;
    if (!ui_key_ok(key)) {
        p->bad = key;
        return MHD_NO;
    }
    ui_query_add(p->name, p->n == 0, key, value);
    p->n++;
    return MHD_YES;
}

/*
 * The one host a request is about, or NULL for the run-level file:
 * "hosts" with a single entry (trace viewers), else "host" unless
 * ALL_HOSTS.
 */
static const char *one_host(const struct ui_req *q, const char *tag)
{
    const char *hosts = ui_req_arg(q, "hosts");
    const char *host = ui_req_arg(q, "host");

    if (hosts && *hosts && strncmp(tag, "trace_viewer", 12) == 0)
        return strchr(hosts, ',') ? NULL : hosts;
    if (!host || !*host || strcmp(host, "ALL_HOSTS") == 0)
        return NULL;
    return host;
}

/*
 * Opens the directory the tool file lives in: the run, or its
 * hosts/<host>/. Returns an fd, or -1 with r filled.
 */
static int open_tool_dir(const struct ui_req *q, const char *tag, struct ui_reply *r)
{
    const char *host = one_host(q, tag);
    int runfd = ui_req_open_run(q, r);
    int hostsfd, fd;

    if (runfd < 0 || !host)
        return runfd;
    if (!ui_name_ok(host)) {
        close(runfd);
        ui_reply_text(r, 400, "bad request: bad host name '%s'", host);
        return -1;
    }
    hostsfd = ui_open_dir_at(runfd, "hosts");
    fd = hostsfd < 0 ? hostsfd : ui_open_dir_at(hostsfd, host);
    if (hostsfd >= 0)
        close(hostsfd);
    close(runfd);
    if (fd < 0)
        ui_reply_text(r, 404, "not found: unknown host '%s'", host);
    return fd < 0 ? -1 : fd;
}

/* errors.txt starts each line with its time, "2026-12-03T21:40:12.345Z ". */
#define LOG_TIME_LEN 25

static int has_log_time(const char *line, size_t n)
{
    return n > LOG_TIME_LEN && line[4] == '-' && line[10] == 'T' && line[23] == 'Z' &&
           line[24] == ' ';
}

/* Copies into reason the last line of errors.txt about name: one that
 * holds "name: " (the mount writes "<time> <file?query>: <reason>"),
 * without its time. */
static void find_reason(const struct ui_req *q, const char *name, char *reason, size_t n)
{
    struct ui_reply ignored;
    struct ui_buf text;
    const char *line, *end, *best = NULL;
    size_t best_len = 0;
    char needle[1024];
    int runfd, fd, rc;

    reason[0] = '\0';
    if (snprintf(needle, sizeof(needle), "%s: ", name) >= (int)sizeof(needle))
        return;
    ui_reply_init(&ignored);
    runfd = ui_req_open_run(q, &ignored);
    ui_reply_release(&ignored);
    if (runfd < 0)
        return;
    fd = ui_open_file_at(runfd, "errors.txt");
    close(runfd);
    if (fd < 0)
        return;
    ui_buf_init(&text, ERRORS_MAX);
    rc = ui_read_all(fd, ERRORS_MAX, &text);
    close(fd);
    for (line = text.data; rc == 0 && line && *line; line = *end ? end + 1 : end) {
        end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        if (memmem(line, (size_t)(end - line), needle, strlen(needle))) {
            best = line;
            best_len = (size_t)(end - line);
        }
    }
    if (best && has_log_time(best, best_len)) {
        best += LOG_TIME_LEN;
        best_len -= LOG_TIME_LEN;
    }
    if (best) {
        if (best_len >= n)
            best_len = n - 1;
        memcpy(reason, best, best_len);
        reason[best_len] = '\0';
    }
    ui_buf_release(&text);
}

/* Turns a failed open of the tool file into a reply with a reason. */
static void open_failed(const struct ui_req *q, int err, const char *name, struct ui_reply *r)
{
    const char *run = ui_req_arg(q, "run");
    char base[NAME_MAX + 1];
    char reason[REASON_MAX];
    size_t n = strcspn(name, "?");
    unsigned int status = ui_status_of_errno(err);

    reason[0] = '\0';
    if (status == 400 || status == 500) {
        memcpy(base, name, n);
        base[n] = '\0';
        /* A refused request has a line of its own; a failed file (500) the
         * line of its tool, whatever the query. */
        find_reason(q, name, reason, sizeof(reason));
        if (!reason[0] && status == 500)
            find_reason(q, base, reason, sizeof(reason));
    }
    if (status == 404)
        ui_reply_text(r, 404, "not found: '%s/%s'", run, name);
    else
        ui_reply_text(r, status, "%s: '%s/%s': %s%s%s", status == 400 ? "bad request" : "error",
                      run, name, strerror(-err), reason[0] ? ": " : "", reason);
}

/*
 * Opens the tool file a /data or /data_csv request names (extension ext)
 * and returns its fd, or -1 with r filled.
 */
static int open_tool_file(const struct ui_req *q, const char *tag, const char *ext,
                          struct ui_reply *r)
{
    struct ui_buf name;
    struct params p;
    int dfd, fd;

    ui_buf_init(&name, NAME_MAX);
    ui_query_file(&name, tag, ext);
    p.name = &name;
    p.n = 0;
    p.bad = NULL;
    MHD_get_connection_values(q->conn, MHD_GET_ARGUMENT_KIND, add_param, &p);
    if (p.bad) {
        ui_reply_text(r, 400, "bad request: bad parameter name '%s'", p.bad);
        ui_buf_release(&name);
        return -1;
    }
    if (ui_buf_finish(&name)) {
        ui_reply_text(r, 400, "bad request: query too long for a file name");
        ui_buf_release(&name);
        return -1;
    }
    dfd = open_tool_dir(q, tag, r);
    if (dfd < 0) {
        ui_buf_release(&name);
        return -1;
    }
    fd = ui_open_file_at(dfd, name.data);
    close(dfd);
    if (fd < 0)
        open_failed(q, fd, name.data, r);
    ui_buf_release(&name);
    return fd < 0 ? -1 : fd;
}

/* The tag of a /data request, or NULL with r filled. */
static const char *tag_of(const struct ui_req *q, struct ui_reply *r)
{
    const char *tag = ui_req_arg(q, "tag");

    if (!tag || !*tag) {
        ui_reply_text(r, 404, "No Data");
        return NULL;
    }
    if (!ui_tag_ok(tag)) {
        ui_reply_text(r, 400, "bad request: bad tag '%s'", tag);
        return NULL;
    }
    return tag;
}

/* XProf's content type for the /data answer of this request. */
static const char *type_of(const struct ui_req *q, const char *tag)
{
    return ui_query_type(tag, ui_req_arg(q, "type"), ui_req_arg(q, "format"),
                         ui_req_arg(q, "perfetto"),
                         ui_req_arg(q, "view_memory_allocation_timeline"));
}

void ui_route_data(const struct ui_req *q, struct ui_reply *r)
{
    const char *tag = tag_of(q, r);
    int fd;

    if (!tag)
        return;
    fd = open_tool_file(q, tag, ".json", r);
    if (fd >= 0)
        ui_reply_file(r, type_of(q, tag), fd);
}

/* Keeps [A-Za-z0-9_-] of s, writing '_' for the rest (XProf's rule). */
static void add_safe(struct ui_buf *b, const char *s)
{
    for (; *s; s++) {
        int ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                 *s == '_' || *s == '-';

        ui_buf_add(b, ok ? s : "_", 1);
    }
}

/* Content-Disposition as XProf builds it: <tag>_<run>_<host suffix>.csv. */
static char *csv_disposition(const struct ui_req *q, const char *tag)
{
    const char *run = ui_req_arg(q, "run");
    const char *host = ui_req_arg(q, "host");
    const char *suffix = host ? strrchr(host, '-') : NULL;
    struct ui_buf b;

    suffix = suffix ? suffix + 1 : host;
    ui_buf_init(&b, 4096);
    ui_buf_adds(&b, "attachment; filename=\"");
    add_safe(&b, tag);
    if (run && *run) {
        ui_buf_adds(&b, "_");
        add_safe(&b, run);
    }
    if (suffix && *suffix) {
        ui_buf_adds(&b, "_");
        add_safe(&b, suffix);
    }
    ui_buf_adds(&b, ".csv\"");
    if (ui_buf_finish(&b)) {
        ui_buf_release(&b);
        return NULL;
    }
    return ui_buf_detach(&b, NULL);
}

void ui_route_data_csv(const struct ui_req *q, struct ui_reply *r)
{
    const char *tag = tag_of(q, r);
    int fd;

    if (!tag)
        return;
    if (strcmp(type_of(q, tag), UI_TYPE_JSON) != 0) {
        ui_reply_text(r, 400, "bad request: CSV is only offered for JSON tools");
        return;
    }
    fd = open_tool_file(q, tag, ".csv", r);
    if (fd < 0)
        return;
    ui_reply_file(r, UI_TYPE_CSV, fd);
    r->disposition = csv_disposition(q, tag);
}

/* Ours, for the bundled page: the text files of a run (modules.txt,
 * call_tree.txt, errors.txt), with the same tag, host and query rules. */
void ui_route_data_txt(const struct ui_req *q, struct ui_reply *r)
{
    const char *tag = tag_of(q, r);
    int fd;

    if (!tag)
        return;
    fd = open_tool_file(q, tag, ".txt", r);
    if (fd >= 0)
        ui_reply_file(r, UI_TYPE_TEXT, fd);
}
