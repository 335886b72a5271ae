/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From XProf's /data parameters to a file name of the mount: the tag
 * names the file (trace_viewer@ -> trace_viewer.json), the remaining
 * parameters become the file's query string
 * (trace_viewer.json?start_time_ms=1&end_time_ms=2&resolution=8000).
 */
#ifndef UI_QUERY_H
#define UI_QUERY_H

#include "buf.h"

/* Returns 1 when tag is [A-Za-z0-9_]+ with an optional trailing '@'. */
int ui_tag_ok(const char *tag);

/* Returns 1 when key is [A-Za-z0-9_]+ (at most 64 bytes). */
int ui_key_ok(const char *key);

/*
 * Appends the mount file name of tool tag with extension ext (".json" or
 * ".csv") to b: trace_viewer@ is trace_viewer, trace_viewer is
 * trace_viewer_legacy, any other tag is itself.
 */
void ui_query_file(struct ui_buf *b, const char *tag, const char *ext);

/*
 * Returns 1 when /data parameter key must not reach the mount: the ones
 * the proxy consumes (run, tag, host, hosts), the ones XProf accepts but
 * does not use (tqx, use_saved_result, session_path, run_path) and the
 * ones the UI sends and XProf ignores (spec 4.3).
 */
int ui_query_dropped(const char *key);

/*
 * Appends one option to a file name in b: "?key=value" when first, else
 * "&key=value". In value, the bytes a file name or the mount's query
 * syntax cannot hold ('%', '&', '=', '#', '?', '/', controls) are written
 * as %XX.
 */
void ui_query_add(struct ui_buf *b, int first, const char *key, const char *value);

/*
 * The content type XProf sends for /data of tag, given the parameters
 * that change it (NULL when absent): graph_viewer's type, format=pb,
 * megascale_stats' perfetto, memory_viewer's allocation timeline.
 */
const char *ui_query_type(const char *tag, const char *type, const char *format,
                          const char *perfetto, const char *timeline);

#endif
