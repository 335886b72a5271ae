/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The access log line (access_log.h), built whole and written with one
 * call so lines of parallel requests do not mix.
 */
#include <stdio.h>

#include "access_log.h"
#include "buf.h"
#include "json.h"

#define LOG_LINE_MAX 16384

void ui_access_log(const char *method, const char *url, unsigned int status, double seconds)
{
    struct ui_buf b;

    ui_buf_init(&b, LOG_LINE_MAX);
    ui_buf_adds(&b, "{\"httpRequest\": {\"requestMethod\": ");
    ui_json_add_str(&b, method);
    ui_buf_adds(&b, ", \"requestUrl\": ");
    ui_json_add_str(&b, url);
    ui_buf_addf(&b, ", \"status\": %u, \"latency\": \"%.9fs\"}}\n", status, seconds);
    if (ui_buf_finish(&b) == 0 && fwrite(b.data, 1, b.len, stderr) != b.len)
        clearerr(stderr);
    ui_buf_release(&b);
}
