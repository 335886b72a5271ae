/*
 * agent_pyjson.c - Python's json.dumps layout of a cJSON tree (see
 * agent_pyjson.h): ", " / ": " separators, two-space indentation,
 * ensure_ascii escapes, and floats in Python's repr.
 */
#include "agent_pyjson.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/shortest.h"

void py_float_repr(double v, char *buf, size_t n)
{
    char digits[18];
    int exp10, nd, decpt, i;
    size_t at = 0;

    if (isnan(v)) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (v == 0) {
        snprintf(buf, n, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    nd = shortest_digits(v, digits, &exp10);
    decpt = exp10 + 1; /* v = 0.d1d2... x 10^decpt */
    if (v < 0 && at + 1 < n)
        buf[at++] = '-';
    if (decpt <= -4 || decpt > 16) {
        /* d[.ddd]e[+-]XX */
        char tail[16];
        if (at + 1 < n)
            buf[at++] = digits[0];
        if (nd > 1) {
            if (at + 1 < n)
                buf[at++] = '.';
            for (i = 1; i < nd && at + 1 < n; i++)
                buf[at++] = digits[i];
        }
        snprintf(tail, sizeof(tail), "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
        for (i = 0; tail[i] && at + 1 < n; i++)
            buf[at++] = tail[i];
    } else if (decpt <= 0) {
        /* 0.000ddd */
        const char *lead = "0.";
        for (i = 0; lead[i] && at + 1 < n; i++)
            buf[at++] = lead[i];
        for (i = 0; i < -decpt && at + 1 < n; i++)
            buf[at++] = '0';
        for (i = 0; i < nd && at + 1 < n; i++)
            buf[at++] = digits[i];
    } else {
        /* ddd.ddd, at least one digit after the point */
        for (i = 0; i < decpt && at + 1 < n; i++)
            buf[at++] = i < nd ? digits[i] : '0';
        if (at + 1 < n)
            buf[at++] = '.';
        if (nd <= decpt) {
            if (at + 1 < n)
                buf[at++] = '0';
        } else {
            for (i = decpt; i < nd && at + 1 < n; i++)
                buf[at++] = digits[i];
        }
    }
    buf[at < n ? at : n - 1] = '\0';
}

void py_str_repr(const char *s, char *buf, size_t n)
{
    char quote = strchr(s, '\'') != NULL && strchr(s, '"') == NULL ? '"' : '\'';
    size_t at = 0;

    if (n < 3) {
        if (n > 0)
            buf[0] = '\0';
        return;
    }
    buf[at++] = quote;
    for (; *s && at + 5 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == (unsigned char)quote) {
            buf[at++] = '\\';
            buf[at++] = (char)c;
        } else if (c == '\n') {
            buf[at++] = '\\';
            buf[at++] = 'n';
        } else if (c == '\t') {
            buf[at++] = '\\';
            buf[at++] = 't';
        } else if (c < 0x20 || c == 0x7f) {
            at += (size_t)snprintf(buf + at, n - at, "\\x%02x", c);
        } else {
            buf[at++] = (char)c;
        }
    }
    buf[at++] = quote;
    buf[at] = '\0';
}

double py_round(double v, int ndigits)
{
    char buf[400];

    if (!isfinite(v))
        return v;
    /* printf rounds the exact binary value half to even, as round() does */
    snprintf(buf, sizeof(buf), "%.*f", ndigits, v);
    return strtod(buf, NULL);
}

cJSON *pyj_float(double v)
{
    char buf[40];

    py_float_repr(v, buf, sizeof(buf));
    return cJSON_CreateRaw(buf);
}

int pyj_set(cJSON *obj, const char *key, cJSON *item)
{
    if (item == NULL)
        return -ENOMEM;
    if (cJSON_GetObjectItemCaseSensitive(obj, key) != NULL)
        return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item) ? 0 : -ENOMEM;
    return cJSON_AddItemToObject(obj, key, item) ? 0 : -ENOMEM;
}

int pyj_add_float(cJSON *obj, const char *key, double v)
{
    return pyj_set(obj, key, pyj_float(v));
}

int pyj_add_int(cJSON *obj, const char *key, double v)
{
    return pyj_set(obj, key, cJSON_CreateNumber(v));
}

int pyj_add_str(cJSON *obj, const char *key, const char *s)
{
    return pyj_set(obj, key, cJSON_CreateString(s));
}

int pyj_add_bool(cJSON *obj, const char *key, int b)
{
    return pyj_set(obj, key, cJSON_CreateBool(b));
}

/* A growing string. */
struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->p, cap);
        if (p == NULL) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

/* Decode one UTF-8 sequence at s (len bytes left); *cp gets U+FFFD for a
 * malformed one. Returns the bytes used (>= 1). */
static size_t utf8_next(const unsigned char *s, size_t len, unsigned *cp)
{
    unsigned c = s[0], need, v, i;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if ((c & 0xe0) == 0xc0) {
        need = 1;
        v = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        need = 2;
        v = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        need = 3;
        v = c & 0x07;
    } else {
        *cp = 0xfffd;
        return 1;
    }
    if (need >= len) {
        *cp = 0xfffd;
        return 1;
    }
    for (i = 1; i <= need; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *cp = 0xfffd;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3f);
    }
    *cp = v;
    return need + 1;
}

static void sb_json_string(struct sbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s), i = 0;
    char esc[16];

    sb_put(b, "\"", 1);
    while (i < len) {
        unsigned cp;
        size_t used = utf8_next(p + i, len - i, &cp);
        i += used;
        switch (cp) {
        case '"':
            sb_str(b, "\\\"");
            continue;
        case '\\':
            sb_str(b, "\\\\");
            continue;
        case '\n':
            sb_str(b, "\\n");
            continue;
        case '\r':
            sb_str(b, "\\r");
            continue;
        case '\t':
            sb_str(b, "\\t");
            continue;
        case '\b':
            sb_str(b, "\\b");
            continue;
        case '\f':
            sb_str(b, "\\f");
            continue;
        default:
            break;
        }
        if (cp >= 0x20 && cp < 0x7f) {
            char c = (char)cp;
            sb_put(b, &c, 1);
        } else if (cp < 0x10000) {
            snprintf(esc, sizeof(esc), "\\u%04x", cp);
            sb_str(b, esc);
        } else {
            unsigned v = cp - 0x10000;
            snprintf(esc, sizeof(esc), "\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
            sb_str(b, esc);
        }
    }
    sb_put(b, "\"", 1);
}

static void sb_newline(struct sbuf *b, int indent, int depth)
{
    int i;

    sb_put(b, "\n", 1);
    for (i = 0; i < indent * depth; i++)
        sb_put(b, " ", 1);
}

static void sb_number(struct sbuf *b, double v)
{
    char buf[64];

    if (v == (double)(long long)v && fabs(v) < 9.2e18)
        snprintf(buf, sizeof(buf), "%lld", (long long)v);
    else
        snprintf(buf, sizeof(buf), "%.0f", v); /* an int past 2^63 */
    sb_str(b, buf);
}

static void sb_value(struct sbuf *b, const cJSON *v, int indent, int depth)
{
    const cJSON *c;
    int container = cJSON_IsArray(v) || cJSON_IsObject(v);

    if (cJSON_IsNull(v) || cJSON_IsInvalid(v))
        sb_str(b, "null");
    else if (cJSON_IsTrue(v))
        sb_str(b, "true");
    else if (cJSON_IsFalse(v))
        sb_str(b, "false");
    else if (cJSON_IsRaw(v))
        sb_str(b, v->valuestring);
    else if (cJSON_IsNumber(v))
        sb_number(b, v->valuedouble);
    else if (cJSON_IsString(v))
        sb_json_string(b, v->valuestring);
    if (!container)
        return;
    if (v->child == NULL) {
        sb_str(b, cJSON_IsArray(v) ? "[]" : "{}");
        return;
    }
    sb_str(b, cJSON_IsArray(v) ? "[" : "{");
    for (c = v->child; c != NULL; c = c->next) {
        if (indent >= 0)
            sb_newline(b, indent, depth + 1);
        if (cJSON_IsObject(v)) {
            sb_json_string(b, c->string ? c->string : "");
            sb_str(b, ": ");
        }
        sb_value(b, c, indent, depth + 1);
        if (c->next != NULL)
            sb_str(b, indent >= 0 ? "," : ", ");
    }
    if (indent >= 0)
        sb_newline(b, indent, depth);
    sb_str(b, cJSON_IsArray(v) ? "]" : "}");
}

char *pyj_dumps(const cJSON *v, int indent)
{
    struct sbuf b = {0};

    sb_value(&b, v, indent, 0);
    if (b.failed || b.p == NULL) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
