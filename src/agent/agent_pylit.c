/*
 * agent_pylit.c - Fire's value parsing (see agent_pylit.h): numbers with
 * Python's syntax (underscores between digits, 0x/0o/0b, exponents, a
 * sign), True/False/None, quoted strings with the common escapes, bracketed
 * literals kept as text; anything else is the string as written.
 */
#include "agent_pylit.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_pyjson.h"

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);

    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Digits of base with single underscores between them: copied without
 * the underscores into out (size n). 1 if s is such a run, else 0. */
static int digit_run(const char *s, int base, char *out, size_t n)
{
    size_t at = 0;
    int prev_digit = 0;

    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        int c = (unsigned char)*s, ok;
        if (c == '_') {
            if (!prev_digit)
                return 0;
            prev_digit = 0;
            continue;
        }
        ok = base == 16   ? isxdigit(c)
             : base == 10 ? isdigit(c)
             : base == 8  ? (c >= '0' && c <= '7')
                          : (c == '0' || c == '1');
        if (!ok || at + 1 >= n)
            return 0;
        out[at++] = (char)c;
        prev_digit = 1;
    }
    out[at] = '\0';
    return prev_digit;
}

/* An int literal: 1 and *v, else 0. */
static int parse_int(const char *s, long long *v, char *digits, size_t n)
{
    int base = 10;
    const char *p = s;

    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, p = s + 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, p = s + 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, p = s + 2;
    if (base != 10 && *p == '_')
        p++; /* 0x_ff is allowed */
    if (!digit_run(p, base, digits, n))
        return 0;
    if (base == 10 && digits[0] == '0' && strspn(digits, "0") != strlen(digits))
        return 0; /* 012 is a syntax error */
    errno = 0;
    *v = strtoll(digits, NULL, base);
    if (errno == ERANGE)
        *v = digits[0] == '-' ? LLONG_MIN : LLONG_MAX;
    if (base != 10)
        snprintf(digits, n, "%lld", *v);
    return 1;
}

/* A float literal (1.5, .5, 5., 1e3, 1_0.5): 1 and *v, else 0. */
static int parse_float(const char *s, double *v)
{
    char clean[256];
    size_t at = 0;
    int seen_digit = 0, seen_dot = 0, seen_e = 0;
    const char *p;

    for (p = s; *p; p++) {
        int c = (unsigned char)*p;
        if (at + 2 >= sizeof(clean))
            return 0;
        if (isdigit(c)) {
            seen_digit = 1;
            clean[at++] = (char)c;
        } else if (c == '_') {
            if (!isdigit((unsigned char)p[1]) || p == s || !isdigit((unsigned char)p[-1]))
                return 0;
        } else if (c == '.' && !seen_dot && !seen_e) {
            seen_dot = 1;
            clean[at++] = '.';
        } else if ((c == 'e' || c == 'E') && seen_digit && !seen_e) {
            seen_e = 1;
            clean[at++] = 'e';
            if (p[1] == '+' || p[1] == '-')
                clean[at++] = *++p;
            if (!isdigit((unsigned char)p[1]))
                return 0;
        } else {
            return 0;
        }
    }
    if (!seen_digit || (!seen_dot && !seen_e))
        return 0;
    clean[at] = '\0';
    *v = strtod(clean, NULL);
    return 1;
}

/* A quoted string with Python's common escapes: malloc'd value in *out,
 * 1; 0 if s is not exactly one such literal; -1 out of memory. */
static int parse_quoted(const char *s, char **out)
{
    char q = s[0];
    size_t n = strlen(s), i, at = 0;
    char *p;

    if ((q != '\'' && q != '"') || n < 2 || s[n - 1] != q)
        return 0;
    p = malloc(n);
    if (p == NULL)
        return -1;
    for (i = 1; i < n - 1; i++) {
        char c = s[i];
        if (c == q) {
            free(p);
            return 0;
        }
        if (c == '\\' && i + 1 < n - 1) {
            char e = s[++i];
            switch (e) {
            case 'n':
                p[at++] = '\n';
                break;
            case 't':
                p[at++] = '\t';
                break;
            case 'r':
                p[at++] = '\r';
                break;
            case '\\':
            case '\'':
            case '"':
                p[at++] = e;
                break;
            default:
                p[at++] = '\\';
                p[at++] = e;
                break;
            }
            continue;
        }
        if (c == '\\') {
            free(p);
            return 0; /* the backslash escapes the closing quote */
        }
        p[at++] = c;
    }
    p[at] = '\0';
    *out = p;
    return 1;
}

int pylit_parse(const char *text, struct pyval *v)
{
    const char *s = text;
    char digits[128];
    int neg = 0, q;

    memset(v, 0, sizeof(*v));
    if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
        v->kind = PY_BOOL;
        v->i = s[0] == 'T';
        return 0;
    }
    if (strcmp(s, "None") == 0) {
        v->kind = PY_NONE;
        return 0;
    }
    q = parse_quoted(s, &v->text);
    if (q < 0)
        return -ENOMEM;
    if (q > 0) {
        v->kind = PY_STR;
        return 0;
    }
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        s++;
    }
    if (parse_int(s, &v->i, digits, sizeof(digits))) {
        char full[140];
        v->kind = PY_INT;
        if (neg)
            v->i = -v->i;
        snprintf(full, sizeof(full), "%s%s", neg && strcmp(digits, "0") != 0 ? "-" : "", digits);
        v->text = strdup(full);
        return v->text ? 0 : -ENOMEM;
    }
    if (parse_float(s, &v->f)) {
        v->kind = PY_FLOAT;
        if (neg)
            v->f = -v->f;
        return 0;
    }
    if ((text[0] == '[' && text[strlen(text) - 1] == ']') ||
        (text[0] == '(' && text[strlen(text) - 1] == ')') ||
        (text[0] == '{' && text[strlen(text) - 1] == '}')) {
        v->kind = PY_OTHER;
        v->text = strdup(text);
        return v->text ? 0 : -ENOMEM;
    }
    v->kind = PY_STR;
    v->text = strdup(text);
    return v->text ? 0 : -ENOMEM;
}

int pyval_copy(const struct pyval *v, struct pyval *out)
{
    *out = *v;
    if (v->text != NULL) {
        out->text = strdup(v->text);
        if (out->text == NULL)
            return -ENOMEM;
    }
    return 0;
}

void pyval_free(struct pyval *v)
{
    free(v->text);
    v->text = NULL;
}

const char *pyval_type(const struct pyval *v)
{
    switch (v->kind) {
    case PY_NONE:
        return "NoneType";
    case PY_BOOL:
        return "bool";
    case PY_INT:
        return "int";
    case PY_FLOAT:
        return "float";
    case PY_STR:
        return "str";
    case PY_OTHER:
        return v->text && v->text[0] == '{'   ? "dict"
               : v->text && v->text[0] == '[' ? "list"
                                              : "tuple";
    }
    return "object";
}

char *pyval_str(const struct pyval *v)
{
    char buf[64];

    switch (v->kind) {
    case PY_NONE:
        return strdup("None");
    case PY_BOOL:
        return strdup(v->i ? "True" : "False");
    case PY_FLOAT:
        py_float_repr(v->f, buf, sizeof(buf));
        if (strcmp(buf, "Infinity") == 0)
            return strdup("inf");
        if (strcmp(buf, "-Infinity") == 0)
            return strdup("-inf");
        return strdup(strcmp(buf, "NaN") == 0 ? "nan" : buf);
    case PY_INT:
    case PY_STR:
    case PY_OTHER:
        return dup_n(v->text ? v->text : "", v->text ? strlen(v->text) : 0);
    }
    return NULL;
}
