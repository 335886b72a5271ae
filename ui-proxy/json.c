/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON string writer compatible with Python's json.dumps, and a small
 * validating reader that collects the strings of a flat list (json.h).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH 64
#define JSON_MAX_STRING (1u << 20) /* bytes of one decoded string */

/* Length of the UTF-8 sequence at s (at most n bytes) and its code point. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len, i;
    uint32_t c = s[0];

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        c &= 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        c &= 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        c &= 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)))
        return 0;
    if (c >= 0xd800 && c <= 0xdfff)
        return 0;
    *cp = c;
    return len;
}

static void add_u(struct ui_buf *b, uint32_t u)
{
    ui_buf_addf(b, "\\u%04x", (unsigned int)u);
}

void ui_json_add_str(struct ui_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    uint32_t cp;
    size_t len;

    ui_buf_add(b, "\"", 1);
    while (n) {
        if (*p == '"' || *p == '\\') {
            ui_buf_add(b, "\\", 1);
            ui_buf_add(b, p, 1);
        } else if (*p == '\n') {
            ui_buf_adds(b, "\\n");
        } else if (*p == '\r') {
            ui_buf_adds(b, "\\r");
        } else if (*p == '\t') {
            ui_buf_adds(b, "\\t");
        } else if (*p == '\b') {
            ui_buf_adds(b, "\\b");
        } else if (*p == '\f') {
            ui_buf_adds(b, "\\f");
        } else if (*p >= 0x20 && *p < 0x7f) {
            ui_buf_add(b, p, 1);
        } else {
            len = utf8_decode(p, n, &cp);
            if (len == 0) {
                add_u(b, 0xdc00u + *p);
                len = 1;
            } else if (cp >= 0x10000) {
                cp -= 0x10000;
                add_u(b, 0xd800u + (cp >> 10));
                add_u(b, 0xdc00u + (cp & 0x3ff));
            } else {
                add_u(b, cp);
            }
            p += len;
            n -= len;
            continue;
        }
        p++;
        n--;
    }
    ui_buf_add(b, "\"", 1);
}

/* Reader state; `err` is sticky. */
struct reader {
    const char *p;       /* next byte */
    const char *end;     /* end of the text */
    const char *key;     /* member collected from list objects, or NULL */
    struct ui_strv *out; /* collected strings */
    int err;             /* 0 or negative errno */
};

enum { SKIP, ELEMENT, MEMBER }; /* what a value is to the collector */

static int fail(struct reader *r, int err)
{
    if (!r->err)
        r->err = err;
    return r->err;
}

static void skip_ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int hex4(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    int i;

    for (i = 0; i < 4; i++) {
        char c = p[i];

        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -EINVAL;
    }
    *out = v;
    return 0;
}

static void add_utf8(struct ui_buf *b, uint32_t c)
{
    unsigned char o[4];
    size_t n;

    if (c < 0x80) {
        o[0] = (unsigned char)c;
        n = 1;
    } else if (c < 0x800) {
        o[0] = (unsigned char)(0xc0 | (c >> 6));
        o[1] = (unsigned char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (c >> 12));
        o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        o[0] = (unsigned char)(0xf0 | (c >> 18));
        o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
        o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        o[3] = (unsigned char)(0x80 | (c & 0x3f));
        n = 4;
    }
    ui_buf_add(b, o, n);
}

/* Decodes a \u escape (r->p after the 'u'), joining surrogate pairs. */
static int unicode_escape(struct reader *r, struct ui_buf *dst)
{
    uint32_t hi, lo;

    if (r->end - r->p < 4 || hex4(r->p, &hi))
        return fail(r, -EINVAL);
    r->p += 4;
    if (hi >= 0xd800 && hi <= 0xdbff && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' &&
        hex4(r->p + 2, &lo) == 0 && lo >= 0xdc00 && lo <= 0xdfff) {
        r->p += 6;
        hi = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
    }
    add_utf8(dst, hi);
    return 0;
}

/* Parses a string (r->p at the opening quote) into dst. */
static int parse_string(struct reader *r, struct ui_buf *dst)
{
    const char *esc = "\"\"\\\\//b\bf\fn\nr\rt\t";
    const char *hit;

    r->p++;
    while (r->p < r->end && *r->p != '"') {
        unsigned char c = (unsigned char)*r->p++;

        if (c < 0x20)
            return fail(r, -EINVAL);
        if (c != '\\') {
            ui_buf_add(dst, &c, 1);
            continue;
        }
        if (r->p >= r->end)
            return fail(r, -EINVAL);
        c = (unsigned char)*r->p++;
        if (c == 'u') {
            if (unicode_escape(r, dst))
                return r->err;
            continue;
        }
        hit = strchr(esc, c);
        if (!c || !hit || (hit - esc) % 2)
            return fail(r, -EINVAL);
        ui_buf_add(dst, hit + 1, 1);
    }
    if (r->p >= r->end)
        return fail(r, -EINVAL);
    r->p++;
    if (ui_buf_finish(dst))
        return fail(r, ui_buf_finish(dst));
    return 0;
}

static int parse_value(struct reader *r, int depth, int role);

/* Parses a string value and collects it when its role asks for that. */
static int string_value(struct reader *r, int role)
{
    struct ui_buf s;
    int rc;

    ui_buf_init(&s, JSON_MAX_STRING);
    rc = parse_string(r, &s);
    if (rc == 0 && role != SKIP)
        rc = ui_strv_addn(r->out, s.data ? s.data : "", s.len);
    ui_buf_release(&s);
    return rc ? fail(r, rc) : 0;
}

static int parse_object(struct reader *r, int depth, int role)
{
    struct ui_buf name;
    int want;

    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return 0;
    }
    for (;;) {
        skip_ws(r);
        if (r->p >= r->end || *r->p != '"')
            return fail(r, -EINVAL);
        ui_buf_init(&name, JSON_MAX_STRING);
        if (parse_string(r, &name)) {
            ui_buf_release(&name);
            return r->err;
        }
        want = role == ELEMENT && r->key && name.data && strcmp(name.data, r->key) == 0;
        ui_buf_release(&name);
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':')
            return fail(r, -EINVAL);
        r->p++;
        if (parse_value(r, depth + 1, want ? MEMBER : SKIP))
            return r->err;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return 0;
        }
        return fail(r, -EINVAL);
    }
}

static int parse_array(struct reader *r, int depth, int role)
{
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        if (parse_value(r, depth + 1, role))
            return r->err;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return 0;
        }
        return fail(r, -EINVAL);
    }
}

/* Skips a number or a literal (true, false, null). */
static int parse_scalar(struct reader *r)
{
    static const char *const words[] = {"true", "false", "null"};
    const char *start = r->p;
    size_t i, n;

    for (i = 0; i < 3; i++) {
        n = strlen(words[i]);
        if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i], n) == 0) {
            r->p += n;
            return 0;
        }
    }
    while (r->p < r->end && strchr("+-0123456789.eE", *r->p) && *r->p)
        r->p++;
    return r->p == start ? fail(r, -EINVAL) : 0;
}

/*
 * Parses any value. `role` says what the collector wants from it: ELEMENT
 * for an element of the top-level list, MEMBER for the value of `key`.
 */
static int parse_value(struct reader *r, int depth, int role)
{
    if (depth > JSON_MAX_DEPTH)
        return fail(r, -EINVAL);
    skip_ws(r);
    if (r->p >= r->end)
        return fail(r, -EINVAL);
    switch (*r->p) {
    case '"':
        return string_value(r, role);
    case '{':
        return parse_object(r, depth, role);
    case '[':
        return parse_array(r, depth, SKIP);
    default:
        return parse_scalar(r);
    }
}

int ui_json_strings(const char *text, size_t len, const char *key, struct ui_strv *out)
{
    struct reader r = {text, text + len, key, out, 0};

    skip_ws(&r);
    if (r.p >= r.end || *r.p != '[')
        return -EINVAL;
    if (parse_array(&r, 1, ELEMENT))
        return r.err;
    skip_ws(&r);
    return r.p == r.end ? 0 : -EINVAL;
}
