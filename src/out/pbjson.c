/*
 * pbjson.c - protobuf's JSON spelling of strings and numbers (pbjson.h).
 */
#include "pbjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Unicode scalars protobuf's JSON writer escapes beyond the controls
 * (json/internal/writer.cc), as [first, last] ranges. */
static const uint32_t escaped_ranges[][2] = {
    {0x7f, 0x9f},     {0xad, 0xad},     {0x600, 0x603},     {0x6dd, 0x6dd},     {0x70f, 0x70f},
    {0x17b4, 0x17b5}, {0x200b, 0x200f}, {0x2028, 0x202e},   {0x2060, 0x2064},   {0x206a, 0x206f},
    {0xfeff, 0xfeff}, {0xfff9, 0xfffb}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001}, {0xe0020, 0xe007f},
};

/* The UTF-8 scalar at s[0..n) into *u as protobuf's ConsumeUtf8Scalar
 * decodes it: no check for overlong forms or surrogates; a bad lead byte
 * is one byte, a bad continuation byte is taken with what came before.
 * Returns the bytes taken; *u is UINT32_MAX when the scalar is malformed. */
static size_t utf8_scalar(const unsigned char *s, size_t n, uint32_t *u)
{
    size_t more, i;
    uint32_t v = s[0];

    *u = UINT32_MAX;
    if (v >= 0xf0 && v < 0xf8)
        more = 3, v &= 0x07;
    else if (v >= 0xe0)
        more = 2, v &= 0x0f;
    else if (v >= 0xc0)
        more = 1, v &= 0x1f;
    else
        return 1;
    if (s[0] >= 0xf8)
        return 1;
    for (i = 1; i <= more; i++) {
        if (i >= n)
            return i;
        if ((s[i] & 0xc0) != 0x80)
            return i + 1;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v <= 0x10ffff)
        *u = v;
    return more + 1;
}

/* Whether protobuf escapes scalar u (above ASCII). */
static int must_escape(uint32_t u)
{
    size_t i;

    for (i = 0; i < sizeof(escaped_ranges) / sizeof(escaped_ranges[0]); i++) {
        if (u >= escaped_ranges[i][0] && u <= escaped_ranges[i][1])
            return 1;
    }
    return 0;
}

/* \uXXXX, as a surrogate pair above the BMP. */
static void u_escape(struct out *o, uint32_t u)
{
    if (u >= 0x10000) {
        u -= 0x10000;
        out_printf(o, "\\u%04x\\u%04x", 0xd800 + (u >> 10), 0xdc00 + (u & 0x3ff));
    } else {
        out_printf(o, "\\u%04x", u);
    }
}

/* s[0..n) as a JSON string the way protobuf writes it: short escapes for
 * the usual controls, \u escapes for the rest, for < and > and for the
 * invisible scalars; a malformed scalar becomes a space. */
void pbjson_str(struct out *o, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, start = 0;

    out_putc(o, '"');
    while (i < n) {
        unsigned char c = p[i];
        const char *esc = NULL;
        uint32_t u = 0;
        size_t len = 1;
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>') {
            i++;
            continue;
        }
        if (c >= 0x80) {
            len = utf8_scalar(p + i, n - i, &u);
            if (u != UINT32_MAX && !must_escape(u)) {
                i += len;
                continue;
            }
            if (u == UINT32_MAX)
                esc = " "; /* protobuf's spelling of a scalar it cannot decode */
        } else {
            u = c;
            esc = c == '"'    ? "\\\""
                  : c == '\\' ? "\\\\"
                  : c == '\n' ? "\\n"
                  : c == '\r' ? "\\r"
                  : c == '\t' ? "\\t"
                  : c == '\b' ? "\\b"
                  : c == '\f' ? "\\f"
                              : NULL;
        }
        out_write(o, s + start, i - start);
        if (esc != NULL)
            out_puts(o, esc);
        else
            u_escape(o, u);
        i += len;
        start = i;
    }
    out_write(o, s + start, n - start);
    out_putc(o, '"');
}

/* A double as protobuf's JSON writer prints it (SimpleDtoa: %.15g when
 * that reads back, else %.17g; NaN and infinities as strings). */
void pbjson_double(struct out *o, double v)
{
    char buf[40];

    if (isnan(v)) {
        out_puts(o, "\"NaN\"");
        return;
    }
    if (isinf(v)) {
        out_puts(o, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
    }
    snprintf(buf, sizeof(buf), "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof(buf), "%.17g", v);
    out_puts(o, buf);
}

void pbjson_u64(struct out *o, uint64_t v)
{
    out_printf(o, "\"%llu\"", (unsigned long long)v);
}

void pbjson_i64(struct out *o, int64_t v)
{
    out_printf(o, "\"%lld\"", (long long)v);
}
