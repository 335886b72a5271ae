/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_kernel_metadata.c - XProf's ExtractXprofKernelMetadata
 * (hlo_kernel_metadata.h). XProf parses the expression with XLA's HLO
 * parser, takes the root instruction's frontend attribute
 * "kernel_metadata", parses it with nlohmann::json (no exceptions), and
 * when it is an object with an "xprof_metadata" member dumps that member,
 * parsed once more first when it is a string.
 *
 * Here: the expression's top-level ", frontend_attributes={...}" is read as
 * XLA's parser reads it (key=value pairs, a value a C-escaped "string" or a
 * JSON dict as the printer leaves it, the last of a repeated key kept); the
 * JSON is parsed as nlohmann's strict parser does (UTF-8 checked, escapes
 * and surrogate pairs decoded, integers signed / unsigned / double as
 * nlohmann types them, a repeated key keeping its last value) and dumped
 * as dump() writes it (keys sorted bytewise, no blanks, its string escapes,
 * doubles as its grisu2 shortest form with ".0" or "e+NN", non-finite ones
 * as null).
 *
 * Differences: the rest of the expression is not checked to be valid HLO
 * (XProf answers "" when XLA's parser rejects it); JSON nested deeper than
 * HLO_KMETA_MAX_DEPTH counts as invalid.
 */
#include "hlo_kernel_metadata.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/grow.h"
#include "base/shortest.h"

enum { J_NULL, J_TRUE, J_FALSE, J_INT, J_UINT, J_FLOAT, J_STR, J_ARR, J_OBJ };

/* One JSON value; objects hold key, value, key, value ... in kids. */
struct jv {
    int kind;
    const char *s; /* J_STR: the decoded bytes */
    size_t n;      /* their length */
    int64_t i;     /* J_INT */
    uint64_t u;    /* J_UINT */
    double d;      /* J_FLOAT */
    struct jv *kids;
    uint32_t nkids;
};

/* A growing byte buffer. */
struct buf {
    char *p;
    size_t n, cap;
    int oom;
};

static void buf_put(struct buf *b, const void *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        char *p;
        while (cap < b->n + n + 1)
            cap *= 2;
        if ((p = realloc(b->p, cap)) == NULL) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void buf_putc(struct buf *b, char c)
{
    buf_put(b, &c, 1);
}

/* ---- the JSON parser ---- */

struct jparse {
    const unsigned char *p, *end;
    struct arena *a;
    int oom;
};

static void skip_ws(struct jparse *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int hex4(const unsigned char *p, const unsigned char *end, uint32_t *v)
{
    int i;

    *v = 0;
    if (end - p < 4)
        return -1;
    for (i = 0; i < 4; i++) {
        unsigned char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

static void put_utf8(struct buf *b, uint32_t cp)
{
    char u[4];

    if (cp < 0x80) {
        buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        buf_put(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        buf_put(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        buf_put(b, u, 4);
    }
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629, as nlohmann's
 * lexer checks it), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = *p;
    size_t n, i;
    unsigned char lo = 0x80, hi = 0xBF;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (i = 2; i < n; i++) {
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    }
    return n;
}

/* A string from its opening quote into v. 0 or -1. */
static int parse_string(struct jparse *j, struct jv *v)
{
    struct buf b = {0};
    int rc = -1;

    j->p++;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = *j->p;
        if (c < 0x20)
            goto out;
        if (c == '\\') {
            uint32_t cp, lo;
            if (j->end - j->p < 2)
                goto out;
            c = j->p[1];
            j->p += 2;
            switch (c) {
            case '"':
            case '\\':
            case '/':
                buf_putc(&b, (char)c);
                continue;
            case 'b':
                buf_putc(&b, '\b');
                continue;
            case 'f':
                buf_putc(&b, '\f');
                continue;
            case 'n':
                buf_putc(&b, '\n');
                continue;
            case 'r':
                buf_putc(&b, '\r');
                continue;
            case 't':
                buf_putc(&b, '\t');
                continue;
            case 'u':
                if (hex4(j->p, j->end, &cp) != 0)
                    goto out;
                j->p += 4;
                if (cp >= 0xDC00 && cp <= 0xDFFF)
                    goto out;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' ||
                        hex4(j->p + 2, j->end, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
                        goto out;
                    j->p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                put_utf8(&b, cp);
                continue;
            default:
                goto out;
            }
        } else {
            size_t n = utf8_len(j->p, j->end);
            if (n == 0)
                goto out;
            buf_put(&b, j->p, n);
            j->p += n;
        }
    }
    if (j->p == j->end)
        goto out;
    j->p++;
    if (b.oom) {
        j->oom = 1;
        goto out;
    }
    v->kind = J_STR;
    v->n = b.n;
    v->s = b.n ? arena_strndup(j->a, b.p, b.n) : "";
    if (v->s == NULL) {
        j->oom = 1;
        goto out;
    }
    rc = 0;
out:
    free(b.p);
    return rc;
}

static int is_digit(const unsigned char *p, const unsigned char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* A number into v, typed as nlohmann's lexer types it. 0 or -1. */
static int parse_number(struct jparse *j, struct jv *v)
{
    const unsigned char *s = j->p, *p = j->p;
    char text[512];
    int integer = 1;
    size_t n;
    char *endp;

    if (*p == '-')
        p++;
    if (!is_digit(p, j->end))
        return -1;
    if (*p == '0')
        p++;
    else
        while (is_digit(p, j->end))
            p++;
    if (p < j->end && *p == '.') {
        integer = 0;
        p++;
        if (!is_digit(p, j->end))
            return -1;
        while (is_digit(p, j->end))
            p++;
    }
    if (p < j->end && (*p == 'e' || *p == 'E')) {
        integer = 0;
        p++;
        if (p < j->end && (*p == '+' || *p == '-'))
            p++;
        if (!is_digit(p, j->end))
            return -1;
        while (is_digit(p, j->end))
            p++;
    }
    j->p = p;
    n = (size_t)(p - s);
    if (n >= sizeof(text)) {
        /* strtod of a long literal: through a heap copy */
        char *big = malloc(n + 1);
        if (big == NULL) {
            j->oom = 1;
            return -1;
        }
        memcpy(big, s, n);
        big[n] = 0;
        v->kind = J_FLOAT;
        v->d = strtod(big, NULL);
        free(big);
        return 0;
    }
    memcpy(text, s, n);
    text[n] = 0;
    if (integer) {
        errno = 0;
        if (text[0] == '-') {
            long long x = strtoll(text, &endp, 10);
            if (errno == 0 && *endp == 0) {
                v->kind = J_INT;
                v->i = x;
                return 0;
            }
        } else {
            unsigned long long x = strtoull(text, &endp, 10);
            if (errno == 0 && *endp == 0) {
                v->kind = J_UINT;
                v->u = x;
                return 0;
            }
        }
    }
    v->kind = J_FLOAT;
    v->d = strtod(text, NULL);
    return 0;
}

static int parse_value(struct jparse *j, struct jv *v, int depth);

/* The members of an object or the elements of an array from its opening
 * bracket. 0 or -1. */
static int parse_container(struct jparse *j, struct jv *v, int depth)
{
    int obj = *j->p == '{';
    char close = obj ? '}' : ']';
    struct jv *kids = NULL, *k;
    uint32_t cap = 0, n = 0;
    int rc = -1;

    if (depth >= HLO_KMETA_MAX_DEPTH)
        return -1;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        goto done;
    }
    for (;;) {
        if (obj) {
            if (xp_grow((void **)&kids, &cap, n, sizeof(*kids)) != 0) {
                j->oom = 1;
                goto out;
            }
            skip_ws(j);
            if (j->p == j->end || *j->p != '"' || parse_string(j, &kids[n]) != 0)
                goto out;
            n++;
            skip_ws(j);
            if (j->p == j->end || *j->p != ':')
                goto out;
            j->p++;
        }
        if (xp_grow((void **)&kids, &cap, n, sizeof(*kids)) != 0) {
            j->oom = 1;
            goto out;
        }
        if (parse_value(j, &kids[n], depth + 1) != 0)
            goto out;
        n++;
        skip_ws(j);
        if (j->p == j->end)
            goto out;
        if (*j->p == close) {
            j->p++;
            break;
        }
        if (*j->p != ',')
            goto out;
        j->p++;
    }
done:
    v->kind = obj ? J_OBJ : J_ARR;
    v->nkids = n;
    v->kids = NULL;
    if (n > 0) {
        if ((k = arena_alloc(j->a, n * sizeof(*k))) == NULL) {
            j->oom = 1;
            goto out;
        }
        memcpy(k, kids, n * sizeof(*k));
        v->kids = k;
    }
    rc = 0;
out:
    free(kids);
    return rc;
}

static int literal(struct jparse *j, const char *word, int kind, struct jv *v)
{
    size_t n = strlen(word);

    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return -1;
    j->p += n;
    v->kind = kind;
    return 0;
}

static int parse_value(struct jparse *j, struct jv *v, int depth)
{
    memset(v, 0, sizeof(*v));
    skip_ws(j);
    if (j->p == j->end)
        return -1;
    switch (*j->p) {
    case '{':
    case '[':
        return parse_container(j, v, depth);
    case '"':
        return parse_string(j, v);
    case 't':
        return literal(j, "true", J_TRUE, v);
    case 'f':
        return literal(j, "false", J_FALSE, v);
    case 'n':
        return literal(j, "null", J_NULL, v);
    default:
        return parse_number(j, v);
    }
}

/* nlohmann::json::parse(s, nullptr, false): 0, 1 when discarded, or -ENOMEM. */
static int json_parse(struct arena *a, const char *s, size_t n, struct jv *v)
{
    struct jparse j = {(const unsigned char *)s, (const unsigned char *)s + n, a, 0};
    int rc = parse_value(&j, v, 0);

    if (j.oom)
        return -ENOMEM;
    if (rc != 0)
        return 1;
    skip_ws(&j);
    return j.p == j.end ? 0 : 1;
}

/* ---- the dump ---- */

static int key_cmp(const struct jv *x, const struct jv *y)
{
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->s, y->s, n) : 0;

    if (c != 0)
        return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* Member order: by key, then by position (the last of equal keys wins). */
static int member_cmp(const void *a, const void *b)
{
    const struct jv *const *x = a, *const *y = b;
    int c = key_cmp(x[0], y[0]);

    if (c != 0)
        return c;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void dump_string(struct buf *b, const char *s, size_t n)
{
    size_t i;
    char esc[8];

    buf_putc(b, '"');
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '\b':
            buf_put(b, "\\b", 2);
            break;
        case '\t':
            buf_put(b, "\\t", 2);
            break;
        case '\n':
            buf_put(b, "\\n", 2);
            break;
        case '\f':
            buf_put(b, "\\f", 2);
            break;
        case '\r':
            buf_put(b, "\\r", 2);
            break;
        case '"':
            buf_put(b, "\\\"", 2);
            break;
        case '\\':
            buf_put(b, "\\\\", 2);
            break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof(esc), "\\u%04x", c);
                buf_put(b, esc, 6);
            } else {
                buf_putc(b, (char)c);
            }
        }
    }
    buf_putc(b, '"');
}

/* A double as nlohmann's to_chars and format_buffer write it. */
static void dump_double(struct buf *b, double v)
{
    char digits[20], exp[16];
    int k, e10, n, i;

    if (!isfinite(v)) {
        buf_put(b, "null", 4);
        return;
    }
    if (signbit(v)) {
        buf_putc(b, '-');
        v = -v;
    }
    if (v == 0) {
        buf_put(b, "0.0", 3);
        return;
    }
    k = shortest_digits(v, digits, &e10);
    n = e10 + 1; /* the decimal point after n digits */
    if (k <= n && n <= 15) {
        buf_put(b, digits, (size_t)k);
        for (i = k; i < n; i++)
            buf_putc(b, '0');
        buf_put(b, ".0", 2);
    } else if (0 < n && n <= 15) {
        buf_put(b, digits, (size_t)n);
        buf_putc(b, '.');
        buf_put(b, digits + n, (size_t)(k - n));
    } else if (-4 < n && n <= 0) {
        buf_put(b, "0.", 2);
        for (i = 0; i < -n; i++)
            buf_putc(b, '0');
        buf_put(b, digits, (size_t)k);
    } else {
        buf_putc(b, digits[0]);
        if (k > 1) {
            buf_putc(b, '.');
            buf_put(b, digits + 1, (size_t)(k - 1));
        }
        e10 = n - 1;
        snprintf(exp, sizeof(exp), "e%c%02d", e10 < 0 ? '-' : '+', e10 < 0 ? -e10 : e10);
        buf_put(b, exp, strlen(exp));
    }
}

/* v as dump() writes it. 0 or -ENOMEM. */
static int dump(struct buf *b, const struct jv *v, int depth)
{
    char num[32];
    const struct jv **m;
    uint32_t i, n;
    int first = 1;

    switch (v->kind) {
    case J_NULL:
        buf_put(b, "null", 4);
        return 0;
    case J_TRUE:
        buf_put(b, "true", 4);
        return 0;
    case J_FALSE:
        buf_put(b, "false", 5);
        return 0;
    case J_INT:
        snprintf(num, sizeof(num), "%lld", (long long)v->i);
        buf_put(b, num, strlen(num));
        return 0;
    case J_UINT:
        snprintf(num, sizeof(num), "%llu", (unsigned long long)v->u);
        buf_put(b, num, strlen(num));
        return 0;
    case J_FLOAT:
        dump_double(b, v->d);
        return 0;
    case J_STR:
        dump_string(b, v->s, v->n);
        return 0;
    case J_ARR:
        buf_putc(b, '[');
        for (i = 0; i < v->nkids; i++) {
            if (i > 0)
                buf_putc(b, ',');
            if (dump(b, &v->kids[i], depth + 1) != 0)
                return -ENOMEM;
        }
        buf_putc(b, ']');
        return 0;
    default:
        break;
    }
    n = v->nkids / 2;
    if (n > 0 && (m = malloc(n * sizeof(*m))) == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        m[i] = &v->kids[2 * i];
    if (n > 0)
        qsort(m, n, sizeof(*m), member_cmp);
    buf_putc(b, '{');
    for (i = 0; i < n; i++) {
        if (i + 1 < n && key_cmp(m[i], m[i + 1]) == 0)
            continue; /* the last value of a key */
        if (!first)
            buf_putc(b, ',');
        first = 0;
        dump_string(b, m[i]->s, m[i]->n);
        buf_putc(b, ':');
        if (dump(b, m[i] + 1, depth + 1) != 0) {
            free(m);
            return -ENOMEM;
        }
    }
    buf_putc(b, '}');
    if (n > 0)
        free(m);
    return 0;
}

/* The value of member key of object v (the last of equal keys), or NULL. */
static const struct jv *member(const struct jv *v, const char *key)
{
    const struct jv *found = NULL;
    size_t n = strlen(key);
    uint32_t i;

    if (v->kind != J_OBJ)
        return NULL;
    for (i = 0; i + 1 < v->nkids; i += 2) {
        if (v->kids[i].n == n && memcmp(v->kids[i].s, key, n) == 0)
            found = &v->kids[i + 1];
    }
    return found;
}

/* ---- the frontend attribute ---- */

/* Past the "..." string (backslash escapes) at s[i], or n. */
static size_t skip_quoted(const char *s, size_t n, size_t i)
{
    for (i++; i < n && s[i] != '"'; i++) {
        if (s[i] == '\\')
            i++;
    }
    return i < n ? i + 1 : n;
}

/* The offset of '{' of the top-level ", frontend_attributes={" of s, or n. */
static size_t find_frontend(const char *s, size_t n)
{
    static const char name[] = "frontend_attributes";
    const size_t len = sizeof(name) - 1;
    size_t i = 0, j;
    int64_t depth = 0;
    int after_comma = 0;

    while (i < n) {
        char c = s[i];
        if (c == '"') {
            i = skip_quoted(s, n, i);
            after_comma = 0;
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            depth--;
        if (depth == 0 && c == ',') {
            after_comma = 1;
        } else if (depth == 0 && after_comma && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            after_comma = 0;
            if (n - i > len && memcmp(s + i, name, len) == 0) {
                j = i + len;
                while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
                    j++;
                if (j < n && s[j] == '=') {
                    j++;
                    while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
                        j++;
                    if (j < n && s[j] == '{')
                        return j;
                }
            }
        }
        i++;
    }
    return n;
}

static size_t skip_blank(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The quoted string at s[i] C-unescaped (absl::CUnescape) into b; the
 * offset past it, or n on a bad string. */
static size_t unquote(const char *s, size_t n, size_t i, struct buf *b)
{
    for (i++; i < n && s[i] != '"'; i++) {
        char c = s[i];
        if (c != '\\') {
            buf_putc(b, c);
            continue;
        }
        if (++i == n)
            return n;
        c = s[i];
        if (c >= '0' && c <= '7') {
            unsigned v = 0, k;
            for (k = 0; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++, i++)
                v = v * 8 + (unsigned)(s[i] - '0');
            i--;
            if (v > 0xFF)
                return n;
            buf_putc(b, (char)v);
        } else if (c == 'x' || c == 'X') {
            unsigned v = 0, k = 0;
            while (i + 1 < n && strchr("0123456789abcdefABCDEF", s[i + 1]) != NULL &&
                   s[i + 1] != 0) {
                char h = s[++i];
                v = v * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
                if (v > 0xFF)
                    return n;
                k++;
            }
            if (k == 0)
                return n;
            buf_putc(b, (char)v);
        } else {
            const char *from = "abfnrtv\\'\"?", *to = "\a\b\f\n\r\t\v\\'\"?";
            const char *at = strchr(from, c);
            if (at == NULL || c == 0)
                return n;
            buf_putc(b, to[at - from]);
        }
    }
    return i < n ? i + 1 : n;
}

/* Past the JSON dict at s[i] (balanced braces outside strings), or n. */
static size_t skip_dict(const char *s, size_t n, size_t i)
{
    int64_t depth = 0;

    while (i < n) {
        if (s[i] == '"') {
            i = skip_quoted(s, n, i);
            continue;
        }
        if (s[i] == '{')
            depth++;
        else if (s[i] == '}' && --depth == 0)
            return i + 1;
        i++;
    }
    return n;
}

/* The value of kernel_metadata in the attribute map at s[i] ('{') into b:
 * 1 found, 0 not (or a map XLA's parser rejects). */
static int kernel_attr(const char *s, size_t n, size_t i, struct buf *b)
{
    static const char key[] = "kernel_metadata";
    int found = 0;

    i = skip_blank(s, n, i + 1);
    if (i < n && s[i] == '}')
        return 0;
    for (;;) {
        size_t k = i, kend, v;
        struct buf val = {0};
        while (i < n &&
               (s[i] == '_' || s[i] == '.' || s[i] == '-' || (s[i] >= '0' && s[i] <= '9') ||
                ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z')))
            i++;
        kend = i;
        i = skip_blank(s, n, i);
        if (kend == k || i == n || s[i] != '=')
            return 0;
        i = skip_blank(s, n, i + 1);
        if (i == n)
            return 0;
        if (s[i] == '"')
            v = unquote(s, n, i, &val);
        else if (s[i] == '{')
            v = skip_dict(s, n, i);
        else
            return 0;
        if (v == n) { /* the map's '}' is still to come */
            free(val.p);
            return 0;
        }
        if (s[i] == '{')
            buf_put(&val, s + i, v - i);
        if (kend - k == sizeof(key) - 1 && memcmp(s + k, key, kend - k) == 0) {
            free(b->p);
            *b = val;
            found = 1;
        } else {
            free(val.p);
        }
        i = skip_blank(s, n, v);
        if (i < n && s[i] == ',') {
            i = skip_blank(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == '}')
            return found && !b->oom;
        return 0;
    }
}

int hlo_kernel_metadata(const char *s, size_t n, char **out)
{
    struct buf attr = {0}, res = {0};
    struct arena a;
    struct jv top, inner;
    const struct jv *m;
    size_t at;
    int rc = 0, pr;

    *out = NULL;
    if (n < 14 || memmem(s, n, "xprof_metadata", 14) == NULL)
        return 0;
    at = find_frontend(s, n);
    if (at == n || !kernel_attr(s, n, at, &attr)) {
        rc = attr.oom ? -ENOMEM : 0;
        free(attr.p);
        return rc;
    }
    arena_init(&a);
    pr = json_parse(&a, attr.p ? attr.p : "", attr.n, &top);
    if (pr != 0 || (m = member(&top, "xprof_metadata")) == NULL)
        goto out;
    if (m->kind == J_STR) {
        if ((pr = json_parse(&a, m->s, m->n, &inner)) != 0)
            goto out;
        m = &inner;
    }
    if (dump(&res, m, 0) != 0 || res.oom) {
        pr = -ENOMEM;
        goto out;
    }
    *out = res.p;
    res.p = NULL;
out:
    if (pr < 0)
        rc = pr;
    free(res.p);
    free(attr.p);
    arena_free(&a);
    return rc;
}
