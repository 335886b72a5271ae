/*
 * ctrace_scan.c - the Chrome-trace reader's JSON scanner: validating and
 * skipping any value of the text, and reading number and string tokens.
 *
 * The scanner is iterative (an explicit depth counter, no recursion) and
 * checks every index against the buffer end; every error names the file and
 * byte offset.
 */
#include "ctrace_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/hexval.h"

int ctr_bad(struct scan *sc, const char *what)
{
    return xp_err_set(sc->err, -EIO, "%s: bad JSON at byte %zu: %s", sc->path, sc->i, what);
}

/* Skip a string token at sc->i (on the quote). *escaped = 1 if it holds
 * backslash escapes. On return sc->i is past the closing quote. */
int ctr_skip_string(struct scan *sc, int *escaped)
{
    size_t i = sc->i + 1;

    *escaped = 0;
    while (i < sc->n) {
        unsigned char c = (unsigned char)sc->s[i];
        if (c == '"') {
            sc->i = i + 1;
            return 0;
        }
        if (c < 0x20) {
            sc->i = i;
            return ctr_bad(sc, "control character in string");
        }
        if (c == '\\') {
            *escaped = 1;
            if (i + 1 >= sc->n)
                break;
            c = (unsigned char)sc->s[i + 1];
            if (c == 'u') {
                int k;
                if (i + 6 > sc->n)
                    break;
                for (k = 2; k < 6; k++) {
                    if (hexval(sc->s[i + k]) < 0) {
                        sc->i = i;
                        return ctr_bad(sc, "bad \\u escape");
                    }
                }
                i += 6;
                continue;
            }
            if (strchr("\"\\/bfnrt", c) == NULL || c == 0) {
                sc->i = i;
                return ctr_bad(sc, "bad escape");
            }
            i += 2;
            continue;
        }
        i++;
    }
    sc->i = sc->n;
    return ctr_bad(sc, "unterminated string");
}

/* Skip a number token (JSON grammar). */
static int skip_number(struct scan *sc)
{
    size_t i = sc->i, digits;

    if (i < sc->n && sc->s[i] == '-')
        i++;
    if (i >= sc->n)
        return ctr_bad(sc, "truncated number");
    if (sc->s[i] == '0') {
        i++;
    } else if (sc->s[i] >= '1' && sc->s[i] <= '9') {
        while (i < sc->n && sc->s[i] >= '0' && sc->s[i] <= '9')
            i++;
    } else {
        return ctr_bad(sc, "bad number");
    }
    if (i < sc->n && sc->s[i] == '.') {
        i++;
        digits = i;
        while (i < sc->n && sc->s[i] >= '0' && sc->s[i] <= '9')
            i++;
        if (i == digits) {
            sc->i = i;
            return ctr_bad(sc, "bad fraction");
        }
    }
    if (i < sc->n && (sc->s[i] == 'e' || sc->s[i] == 'E')) {
        i++;
        if (i < sc->n && (sc->s[i] == '+' || sc->s[i] == '-'))
            i++;
        digits = i;
        while (i < sc->n && sc->s[i] >= '0' && sc->s[i] <= '9')
            i++;
        if (i == digits) {
            sc->i = i;
            return ctr_bad(sc, "bad exponent");
        }
    }
    sc->i = i;
    return 0;
}

static int skip_literal(struct scan *sc)
{
    static const char *const words[] = {"true", "false", "null", "NaN", "Infinity", "-Infinity"};
    size_t k;

    for (k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
        size_t len = strlen(words[k]);
        if (sc->n - sc->i >= len && memcmp(sc->s + sc->i, words[k], len) == 0) {
            sc->i += len;
            return 0;
        }
    }
    return ctr_bad(sc, "unexpected character");
}

/* Skip one scalar (string, number, literal) at sc->i. */
static int skip_scalar(struct scan *sc)
{
    int esc;
    char c = sc->s[sc->i];

    if (c == '"')
        return ctr_skip_string(sc, &esc);
    if (c == '-' && sc->n - sc->i >= 9 && memcmp(sc->s + sc->i, "-Infinity", 9) == 0)
        return skip_literal(sc);
    if (c == '-' || (c >= '0' && c <= '9'))
        return skip_number(sc);
    return skip_literal(sc);
}

/* Skip and validate any JSON value at sc->i (after whitespace). Iterative:
 * 'stack' remembers, per open container, whether it is an object. */
int ctr_next_key(struct scan *sc, size_t *ka, size_t *kb, int *escaped)
{
    int rc;

    ctr_skip_ws(sc);
    if (sc->i >= sc->n || sc->s[sc->i] == '}')
        return 0;
    if (sc->s[sc->i] == ',') {
        sc->i++;
        ctr_skip_ws(sc);
    }
    *ka = sc->i;
    rc = ctr_skip_string(sc, escaped);
    if (rc != 0)
        return rc;
    *kb = sc->i;
    ctr_skip_ws(sc);
    sc->i++; /* ':' */
    ctr_skip_ws(sc);
    return 1;
}

int ctr_json_skip(struct scan *sc)
{
    unsigned char stack[CT_MAX_DEPTH];
    int depth = 0, rc;

    ctr_skip_ws(sc);
    if (sc->i >= sc->n)
        return ctr_bad(sc, "truncated value");
    if (sc->s[sc->i] != '{' && sc->s[sc->i] != '[')
        return skip_scalar(sc);
    for (;;) {
        /* At the start of a value. */
        ctr_skip_ws(sc);
        if (sc->i >= sc->n)
            return ctr_bad(sc, "truncated value");
        if (sc->s[sc->i] == '{' || sc->s[sc->i] == '[') {
            int obj = sc->s[sc->i] == '{';
            if (depth >= CT_MAX_DEPTH)
                return ctr_bad(sc, "nesting too deep");
            stack[depth++] = (unsigned char)obj;
            sc->i++;
            ctr_skip_ws(sc);
            if (sc->i < sc->n && sc->s[sc->i] == (obj ? '}' : ']')) {
                sc->i++;
                depth--;
                goto after_value;
            }
            if (obj)
                goto object_key;
            continue;
        }
        rc = skip_scalar(sc);
        if (rc != 0)
            return rc;
    after_value:
        if (depth == 0)
            return 0;
        ctr_skip_ws(sc);
        if (sc->i >= sc->n)
            return ctr_bad(sc, "truncated container");
        if (sc->s[sc->i] == ',') {
            sc->i++;
            if (stack[depth - 1])
                goto object_key;
            continue;
        }
        if (sc->s[sc->i] == (stack[depth - 1] ? '}' : ']')) {
            sc->i++;
            depth--;
            goto after_value;
        }
        return ctr_bad(sc, "expected ',' or closing bracket");
    object_key:
        ctr_skip_ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] != '"')
            return ctr_bad(sc, "expected object key");
        {
            int esc;
            rc = ctr_skip_string(sc, &esc);
            if (rc != 0)
                return rc;
        }
        ctr_skip_ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] != ':')
            return ctr_bad(sc, "expected ':'");
        sc->i++;
    }
}

/* ---- token readers ------------------------------------------------------- */

/* Copy the number token s[a..b) into buf; 0 if it fits. */
static int number_text(const struct scan *sc, size_t a, size_t b, char *buf, size_t n)
{
    if (b - a >= n)
        return -1;
    memcpy(buf, sc->s + a, b - a);
    buf[b - a] = 0;
    return 0;
}

/* The token s[a..b) as a double (Python's float of a JSON number). */
int ctr_token_double(const struct scan *sc, size_t a, size_t b, double *v)
{
    char buf[400];

    if (b > a && (sc->s[a] == '-' || (sc->s[a] >= '0' && sc->s[a] <= '9')) &&
        number_text(sc, a, b, buf, sizeof(buf)) == 0) {
        *v = strtod(buf, NULL);
        return 1;
    }
    return 0;
}

/* The token s[a..b) as an integer: JSON integers, integral doubles, and
 * strings holding a decimal or 0x-hex integer. 1 if it is one. */
int ctr_token_int(const struct scan *sc, size_t a, size_t b, int64_t *v)
{
    char buf[64], *end;
    size_t k;

    if (b <= a)
        return 0;
    if (sc->s[a] == '"') {
        a++;
        b--;
        if (b <= a || number_text(sc, a, b, buf, sizeof(buf)) != 0)
            return 0;
        errno = 0;
        if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
            *v = (int64_t)strtoull(buf + 2, &end, 16);
        else
            *v = strtoll(buf, &end, 10);
        return errno == 0 && *end == 0 && end != buf;
    }
    if (sc->s[a] != '-' && (sc->s[a] < '0' || sc->s[a] > '9'))
        return 0;
    if (number_text(sc, a, b, buf, sizeof(buf)) != 0)
        return 0;
    for (k = 0; buf[k] != 0; k++) {
        if (buf[k] == '.' || buf[k] == 'e' || buf[k] == 'E') {
            double d = strtod(buf, NULL);
            if (d != floor(d) || fabs(d) > 9.2e18)
                return 0;
            *v = (int64_t)d;
            return 1;
        }
    }
    errno = 0;
    *v = strtoll(buf, &end, 10);
    return errno == 0;
}
