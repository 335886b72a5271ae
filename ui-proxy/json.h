/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The little JSON the proxy needs: writing strings exactly as Python's
 * json.dumps does (XProf's server is Python), and reading the string lists
 * of hosts.json and module_list.json. Anything bigger is passed through
 * from the mount untouched.
 */
#ifndef UI_JSON_H
#define UI_JSON_H

#include <stddef.h>

#include "buf.h"
#include "strv.h"

/*
 * Appends s as a JSON string the way Python's json.dumps(ensure_ascii=True)
 * writes it: non-ASCII as \uXXXX (surrogate pairs above U+FFFF), bytes that
 * are not valid UTF-8 as \udcXX (Python's surrogateescape).
 */
void ui_json_add_str(struct ui_buf *b, const char *s);

/*
 * Reads a JSON document whose top level is an array and collects into out
 * its string elements, and, when key is not NULL, the string value of
 * member `key` of its object elements. Returns 0, -EINVAL for malformed
 * JSON (or nesting deeper than 64), -ENOMEM or -E2BIG.
 */
int ui_json_strings(const char *text, size_t len, const char *key, struct ui_strv *out);

#endif
