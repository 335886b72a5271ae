/*
 * pt_pyrepr.c - Python repr() texts for TraceLens's PyTorch DataFrame cells
 * (see pt_pyrepr.h). The JSON reader here is a small recursive scanner over
 * the args text the trace model keeps: it tells integers from floats, which
 * json.loads does and cJSON does not.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "pt_pyrepr.h"
#include "base/hexval.h"

#define MAX_DEPTH 200

/* ---- the buffer -------------------------------------------------------------- */

void pt_buf_write(struct pt_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        char *p;
        while (cap < b->n + n)
            cap *= 2;
        p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

void pt_buf_puts(struct pt_buf *b, const char *s)
{
    pt_buf_write(b, s, strlen(s));
}

void pt_buf_putc(struct pt_buf *b, char c)
{
    pt_buf_write(b, &c, 1);
}

void pt_buf_free(struct pt_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

/* ---- floats ------------------------------------------------------------------ */

/* Python's layout of digits d[0..nd) with decimal exponent exp10. */
static void layout(int neg, const char *d, int nd, int exp10, char *buf, size_t n)
{
    char tmp[64];
    int p = 0, k;

    if (neg)
        tmp[p++] = '-';
    if (exp10 < -4 || exp10 >= 16) {
        tmp[p++] = d[0];
        if (nd > 1) {
            tmp[p++] = '.';
            for (k = 1; k < nd; k++)
                tmp[p++] = d[k];
        }
        snprintf(tmp + p, sizeof(tmp) - (size_t)p, "e%c%02d", exp10 < 0 ? '-' : '+',
                 exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 < 0) {
        tmp[p++] = '0';
        tmp[p++] = '.';
        for (k = 0; k < -exp10 - 1; k++)
            tmp[p++] = '0';
        for (k = 0; k < nd; k++)
            tmp[p++] = d[k];
        tmp[p] = 0;
    } else {
        for (k = 0; k <= exp10 || k < nd; k++) {
            if (k == exp10 + 1)
                tmp[p++] = '.';
            tmp[p++] = k < nd ? d[k] : '0';
        }
        if (nd <= exp10 + 1) {
            tmp[p++] = '.';
            tmp[p++] = '0';
        }
        tmp[p] = 0;
    }
    snprintf(buf, n, "%s", tmp);
}

void pt_float_repr(double v, char *buf, size_t n)
{
    char tmp[40], d[24], *e;
    int nd = 0, k;

    /* The project's formatter gives the shortest digits up to 16; a value
     * that needs 17 takes the correctly rounded 17. */
    gt_pyrepr(v, buf, n);
    if (!isfinite(v) || strtod(buf, NULL) == v)
        return;
    snprintf(tmp, sizeof(tmp), "%.16e", fabs(v));
    e = strchr(tmp, 'e');
    for (k = 0; tmp + k < e; k++) {
        if (tmp[k] != '.')
            d[nd++] = tmp[k];
    }
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    layout(v < 0, d, nd, atoi(e + 1), buf, n);
}

double pt_round2(double v)
{
    char tmp[512];

    if (!isfinite(v))
        return v;
    snprintf(tmp, sizeof(tmp), "%.2f", v);
    return strtod(tmp, NULL);
}

double pt_np_round2(double v)
{
    if (!isfinite(v))
        return v;
    return rint(v * 100.0) / 100.0;
}

/* ---- strings ----------------------------------------------------------------- */

/* Code point of the UTF-8 sequence at s (length in *len; invalid bytes are
 * taken one at a time as themselves). */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *len)
{
    uint32_t c = s[0];
    size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1, k;

    if (need == 1 || need > n) {
        *len = 1;
        return c;
    }
    c &= 0x3f >> (need - 1);
    for (k = 1; k < need; k++) {
        if ((s[k] & 0xc0) != 0x80) {
            *len = 1;
            return s[0];
        }
        c = (c << 6) | (s[k] & 0x3f);
    }
    *len = need;
    return c;
}

/* Code points str.isprintable() rejects, beyond ASCII controls: the C1
 * controls and the separators / format characters a trace can plausibly
 * hold (an approximation of Unicode categories Z* and C*). */
static int unprintable(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0xa0) || c == 0xad || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
           (c >= 0x205f && c <= 0x206f) || c == 0x3000 || (c >= 0xd800 && c <= 0xdfff) ||
           c == 0xfeff || (c >= 0xe000 && c <= 0xf8ff);
}

void pt_str_repr(struct pt_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    char quote = '\'';
    size_t i, len;

    if (memchr(s, '\'', n) != NULL && memchr(s, '"', n) == NULL)
        quote = '"';
    pt_buf_putc(b, quote);
    for (i = 0; i < n; i += len) {
        uint32_t c = utf8_next(u + i, n - i, &len);
        if (c == (uint32_t)quote || c == '\\') {
            pt_buf_putc(b, '\\');
            pt_buf_putc(b, (char)c);
        } else if (c == '\t') {
            pt_buf_puts(b, "\\t");
        } else if (c == '\n') {
            pt_buf_puts(b, "\\n");
        } else if (c == '\r') {
            pt_buf_puts(b, "\\r");
        } else if (unprintable(c)) {
            char esc[12];
            snprintf(esc, sizeof(esc), c < 0x100 ? "\\x%02x" : "\\u%04x", c);
            pt_buf_puts(b, esc);
        } else {
            pt_buf_write(b, s + i, len);
        }
    }
    pt_buf_putc(b, quote);
}

/* ---- JSON -------------------------------------------------------------------- */

static size_t skip_ws(const char *t, size_t len, size_t p)
{
    while (p < len && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r'))
        p++;
    return p;
}

static int hex4(const char *t, size_t len, size_t p, uint32_t *v)
{
    size_t k;

    *v = 0;
    if (p + 4 > len)
        return 0;
    for (k = 0; k < 4; k++) {
        int h = hexval(t[p + k]);
        if (h < 0)
            return 0;
        *v = (*v << 4) | (uint32_t)h;
    }
    return 1;
}

static size_t put_utf8(char *b, uint32_t c)
{
    if (c < 0x80) {
        b[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        b[0] = (char)(0xc0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        b[0] = (char)(0xe0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    b[0] = (char)(0xf0 | (c >> 18));
    b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    b[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* Decode the string whose quote is at t[p] into buf (room for at least the
 * raw length + 1; decoding never grows text). Returns the position after the
 * closing quote and *n, or 0 on bad text. */
static size_t decode_string(const char *t, size_t len, size_t p, char *buf, size_t *n)
{
    size_t w = 0;

    if (p >= len || t[p] != '"')
        return 0;
    for (p++; p < len && t[p] != '"'; p++) {
        uint32_t c, lo;
        if (t[p] != '\\') {
            buf[w++] = t[p];
            continue;
        }
        if (++p >= len)
            return 0;
        switch (t[p]) {
        case 'n':
            buf[w++] = '\n';
            break;
        case 't':
            buf[w++] = '\t';
            break;
        case 'r':
            buf[w++] = '\r';
            break;
        case 'b':
            buf[w++] = '\b';
            break;
        case 'f':
            buf[w++] = '\f';
            break;
        case 'u':
            if (!hex4(t, len, p + 1, &c))
                return 0;
            p += 4;
            if (c >= 0xd800 && c < 0xdc00 && p + 6 < len && t[p + 1] == '\\' && t[p + 2] == 'u' &&
                hex4(t, len, p + 3, &lo) && lo >= 0xdc00 && lo < 0xe000) {
                c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            }
            w += put_utf8(buf + w, c);
            break;
        default:
            buf[w++] = t[p];
            break;
        }
    }
    if (p >= len)
        return 0;
    *n = w;
    return p + 1;
}

/* The end of the string starting at t[p] (its quote), or 0. */
static size_t skip_string(const char *t, size_t len, size_t p)
{
    for (p++; p < len && t[p] != '"'; p++) {
        if (t[p] == '\\')
            p++;
    }
    return p < len ? p + 1 : 0;
}

static size_t skip_value(const char *t, size_t len, size_t p, int depth)
{
    p = skip_ws(t, len, p);
    if (p >= len || depth > MAX_DEPTH)
        return 0;
    if (t[p] == '"')
        return skip_string(t, len, p);
    if (t[p] == '[' || t[p] == '{') {
        char close = t[p] == '[' ? ']' : '}';
        p = skip_ws(t, len, p + 1);
        if (p < len && t[p] == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_ws(t, len, p);
                if (p >= len || t[p] != '"' || (p = skip_string(t, len, p)) == 0)
                    return 0;
                p = skip_ws(t, len, p);
                if (p >= len || t[p] != ':')
                    return 0;
                p++;
            }
            p = skip_value(t, len, p, depth + 1);
            if (p == 0)
                return 0;
            p = skip_ws(t, len, p);
            if (p < len && t[p] == ',') {
                p++;
                continue;
            }
            return p < len && t[p] == close ? p + 1 : 0;
        }
    }
    while (p < len && t[p] != ',' && t[p] != ']' && t[p] != '}' && t[p] != ' ' && t[p] != '\n' &&
           t[p] != '\r' && t[p] != '\t')
        p++;
    return p;
}

static int put_string(struct pt_buf *b, const char *t, size_t len, size_t *p)
{
    size_t end = skip_string(t, len, *p), n;
    char *buf;

    if (end == 0)
        return -EINVAL;
    buf = malloc(end - *p + 1);
    if (buf == NULL)
        return -ENOMEM;
    if (decode_string(t, len, *p, buf, &n) == 0) {
        free(buf);
        return -EINVAL;
    }
    pt_str_repr(b, buf, n);
    free(buf);
    *p = end;
    return 0;
}

/* A number or literal token t[s..e) as Python prints what json.loads makes. */
static int put_scalar(struct pt_buf *b, const char *t, size_t s, size_t e)
{
    char tok[64], buf[48];
    size_t n = e - s, k;
    int is_float = 0;

    if (n == 4 && memcmp(t + s, "true", 4) == 0)
        pt_buf_puts(b, "True");
    else if (n == 5 && memcmp(t + s, "false", 5) == 0)
        pt_buf_puts(b, "False");
    else if (n == 4 && memcmp(t + s, "null", 4) == 0)
        pt_buf_puts(b, "None");
    else if (n == 3 && memcmp(t + s, "NaN", 3) == 0)
        pt_buf_puts(b, "nan");
    else if (n == 8 && memcmp(t + s, "Infinity", 8) == 0)
        pt_buf_puts(b, "inf");
    else if (n == 9 && memcmp(t + s, "-Infinity", 9) == 0)
        pt_buf_puts(b, "-inf");
    else {
        if (n == 0 || n >= sizeof(tok))
            return n == 0 ? -EINVAL : (pt_buf_write(b, t + s, n), 0);
        for (k = 0; k < n; k++) {
            char c = t[s + k];
            if (c == '.' || c == 'e' || c == 'E')
                is_float = 1;
            else if (!(c == '-' || c == '+' || (c >= '0' && c <= '9')))
                return -EINVAL;
        }
        memcpy(tok, t + s, n);
        tok[n] = 0;
        if (is_float) {
            pt_float_repr(strtod(tok, NULL), buf, sizeof(buf));
            pt_buf_puts(b, buf);
        } else if (strcmp(tok, "-0") == 0) {
            pt_buf_putc(b, '0');
        } else {
            pt_buf_puts(b, tok);
        }
    }
    return 0;
}

static int put_value(struct pt_buf *b, const char *t, size_t len, size_t *pp, int tuples, int depth)
{
    size_t p = skip_ws(t, len, *pp), e;
    int rc, count = 0;

    if (p >= len || depth > MAX_DEPTH)
        return -EINVAL;
    if (t[p] == '"') {
        rc = put_string(b, t, len, &p);
        *pp = p;
        return rc;
    }
    if (t[p] == '[' || t[p] == '{') {
        int dict = t[p] == '{';
        char close = dict ? '}' : ']';
        pt_buf_putc(b, dict ? '{' : tuples ? '(' : '[');
        p = skip_ws(t, len, p + 1);
        if (p < len && t[p] == close) {
            p++;
        } else {
            for (;;) {
                if (count++ > 0)
                    pt_buf_puts(b, ", ");
                if (dict) {
                    p = skip_ws(t, len, p);
                    if (p >= len || t[p] != '"')
                        return -EINVAL;
                    rc = put_string(b, t, len, &p);
                    if (rc != 0)
                        return rc;
                    p = skip_ws(t, len, p);
                    if (p >= len || t[p] != ':')
                        return -EINVAL;
                    p++;
                    pt_buf_puts(b, ": ");
                }
                rc = put_value(b, t, len, &p, tuples && !dict, depth + 1);
                if (rc != 0)
                    return rc;
                p = skip_ws(t, len, p);
                if (p < len && t[p] == ',') {
                    p++;
                    continue;
                }
                if (p >= len || t[p] != close)
                    return -EINVAL;
                p++;
                break;
            }
        }
        if (!dict && tuples && count == 1)
            pt_buf_putc(b, ',');
        pt_buf_putc(b, dict ? '}' : tuples ? ')' : ']');
        *pp = p;
        return 0;
    }
    e = skip_value(t, len, p, depth);
    if (e == 0)
        return -EINVAL;
    rc = put_scalar(b, t, p, e);
    *pp = e;
    return rc;
}

int pt_json_repr(struct pt_buf *b, const char *text, size_t len, int tuples)
{
    size_t p = 0;

    return put_value(b, text, len, &p, tuples, 0);
}

int pt_json_member(const char *t, size_t len, const char *key, const char **val, size_t *vlen)
{
    size_t p = skip_ws(t, len, 0), klen = strlen(key);
    int found = 0;

    if (p >= len || t[p] != '{')
        return 0;
    p = skip_ws(t, len, p + 1);
    if (p < len && t[p] == '}')
        return 0;
    for (;;) {
        size_t ks, ke, vs, ve;
        p = skip_ws(t, len, p);
        if (p >= len || t[p] != '"')
            return 0;
        ks = p + 1;
        ke = skip_string(t, len, p);
        if (ke == 0)
            return 0;
        p = skip_ws(t, len, ke);
        if (p >= len || t[p] != ':')
            return 0;
        vs = skip_ws(t, len, p + 1);
        ve = skip_value(t, len, vs, 0);
        if (ve == 0)
            return 0;
        /* Keys with escapes are compared undecoded; the last duplicate
         * wins, as in json.loads. */
        if (ke - 1 - ks == klen && memcmp(t + ks, key, klen) == 0) {
            *val = t + vs;
            *vlen = ve - vs;
            found = 1;
        }
        p = skip_ws(t, len, ve);
        if (p < len && t[p] == ',') {
            p++;
            continue;
        }
        return found;
    }
}

int pt_json_string(const char *text, size_t len, char *buf, size_t n)
{
    size_t end = skip_string(text, len, 0), m;
    char *tmp;

    if (len == 0 || text[0] != '"' || end == 0 || n == 0)
        return 0;
    tmp = malloc(end + 1);
    if (tmp == NULL)
        return 0;
    if (decode_string(text, len, 0, tmp, &m) == 0) {
        free(tmp);
        return 0;
    }
    if (m >= n)
        m = n - 1;
    memcpy(buf, tmp, m);
    buf[m] = 0;
    free(tmp);
    return 1;
}
