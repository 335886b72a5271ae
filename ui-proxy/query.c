/* SPDX-License-Identifier: Apache-2.0 */
/*
 * XProf /data parameters to mount file names and content types (query.h).
 * The tables below are data: one line per name.
 */
#include <string.h>
#include <strings.h>

#include "query.h"
#include "reply.h"

/* Parameters that never reach the mount (sorted). */
static const char *const dropped[] = {
    "base_session_id",    "graph_type",   "host",          "hosts", "is_oss",
    "mpmd_pipeline_view", "new_backend",  "replace_model", "run",   "run_path",
    "selected_group_ids", "session_path", "tag",           "tqx",   "trace_filter_config",
    "use_saved_result",   "view_end",     "view_start",
};

/* graph_viewer types answered as application/octet-stream. */
static const char *const graph_binary_types[] = {"pb", "pbtxt", "json", "short_txt", "long_txt"};

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int ui_key_ok(const char *key)
{
    size_t i;

    for (i = 0; key[i]; i++)
        if (!is_word_char(key[i]) || i >= 64)
            return 0;
    return i > 0;
}

int ui_tag_ok(const char *tag)
{
    size_t i;

    for (i = 0; tag[i]; i++) {
        if (tag[i] == '@' && tag[i + 1] == '\0' && i > 0)
            return 1;
        if (!is_word_char(tag[i]) || i >= 64)
            return 0;
    }
    return i > 0;
}

void ui_query_file(struct ui_buf *b, const char *tag, const char *ext)
{
    if (strcmp(tag, "trace_viewer@") == 0)
        ui_buf_adds(b, "trace_viewer");
    else if (strcmp(tag, "trace_viewer") == 0)
        ui_buf_adds(b, "trace_viewer_legacy");
    else
        ui_buf_adds(b, tag);
    ui_buf_adds(b, ext);
}

int ui_query_dropped(const char *key)
{
    size_t i;

    for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
        if (strcmp(key, dropped[i]) == 0)
            return 1;
    return 0;
}

void ui_query_add(struct ui_buf *b, int first, const char *key, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p;
    char esc[3];

    ui_buf_adds(b, first ? "?" : "&");
    ui_buf_adds(b, key);
    ui_buf_adds(b, "=");
    for (p = (const unsigned char *)value; *p; p++) {
        if (*p < 0x20 || *p == 0x7f || strchr("%&=#?/", *p)) {
            esc[0] = '%';
            esc[1] = hex[*p >> 4];
            esc[2] = hex[*p & 15];
            ui_buf_add(b, esc, 3);
        } else {
            ui_buf_add(b, p, 1);
        }
    }
}

static const char *graph_viewer_type(const char *type)
{
    size_t i;

    if (type && strcmp(type, "graph") == 0)
        return UI_TYPE_HTML;
    for (i = 0; type && i < sizeof(graph_binary_types) / sizeof(graph_binary_types[0]); i++)
        if (strcmp(type, graph_binary_types[i]) == 0)
            return UI_TYPE_BINARY;
    return UI_TYPE_TEXT;
}

const char *ui_query_type(const char *tag, const char *type, const char *format,
                          const char *perfetto, const char *timeline)
{
    if (strcmp(tag, "graph_viewer") == 0)
        return graph_viewer_type(type);
    if (strcmp(tag, "memory_viewer") == 0 && timeline && *timeline)
        return UI_TYPE_HTML;
    if ((strcmp(tag, "trace_viewer") == 0 || strcmp(tag, "trace_viewer@") == 0) && format &&
        strcmp(format, "pb") == 0)
        return UI_TYPE_BINARY;
    if (strcmp(tag, "megascale_stats") == 0 && perfetto && strcasecmp(perfetto, "true") == 0)
        return UI_TYPE_BINARY;
    return UI_TYPE_JSON;
}
