/*
 * agent_regex.c - Python re -> POSIX ERE (see agent_regex.h). One pass
 * checks the pattern as Python's sre_parse would (the common errors, at
 * the same positions) while writing the translation.
 */
#include "agent_regex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *msg, size_t n, const char *what, size_t pos)
{
    snprintf(msg, n, "%s at position %zu", what, pos);
    return 1;
}

static void put(char *out, size_t *at, const char *s)
{
    size_t len = strlen(s);
    memcpy(out + *at, s, len);
    *at += len;
}

/* A class escape's POSIX set body (no brackets), or NULL. */
static const char *class_body(char c)
{
    switch (c) {
    case 'd':
        return "0-9";
    case 'w':
        return "[:alnum:]_";
    case 's':
        return " \t\n\r\f\v";
    default:
        return NULL;
    }
}

/* An escape Python knows outside a class (besides class escapes). */
static int known_escape(char c)
{
    return strchr("AZbBnrtfva0123456789xuUN", c) != NULL ||
           !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

/* Copy an escaped literal character c into a POSIX ERE. */
static void put_literal(char *out, size_t *at, char c)
{
    switch (c) {
    case 'n':
        out[(*at)++] = '\n';
        return;
    case 't':
        out[(*at)++] = '\t';
        return;
    case 'r':
        out[(*at)++] = '\r';
        return;
    case 'f':
        out[(*at)++] = '\f';
        return;
    case 'v':
        out[(*at)++] = '\v';
        return;
    case 'a':
        out[(*at)++] = '\a';
        return;
    default:
        break;
    }
    if (strchr(".[]()*+?{}|^$\\", c) != NULL)
        out[(*at)++] = '\\';
    out[(*at)++] = c;
}

/* Translate a [...] set starting at p[i] == '['; *i ends after ']'. */
static int translate_set(const char *p, size_t *i, char *out, size_t *at, char *msg, size_t n)
{
    size_t start = *i, j = *i + 1;
    int negate = 0, first = 1;
    char close_later = 0;

    if (p[j] == '^') {
        negate = 1;
        j++;
    }
    out[(*at)++] = '[';
    if (negate)
        out[(*at)++] = '^';
    for (;; first = 0) {
        char c = p[j];
        if (c == '\0')
            return bad(msg, n, "unterminated character set", start);
        if (c == ']' && !first)
            break;
        if (c == '\\') {
            char e = p[j + 1];
            const char *body;
            if (e == '\0')
                return bad(msg, n, "unterminated character set", start);
            if ((body = class_body(e)) != NULL) {
                put(out, at, body);
            } else if (e == 'D' || e == 'W' || e == 'S') {
                /* a negated class inside a set has no POSIX spelling */
                snprintf(msg, n, "unsupported: \\%c inside a character set at position %zu", e, j);
                return 2;
            } else if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
                if (strchr("nrtfvab", e) == NULL) {
                    snprintf(msg, n, "bad escape \\%c at position %zu", e, j);
                    return 1;
                }
                put_literal(out, at, e == 'b' ? '\b' : e);
            } else if (e == ']') {
                close_later = 1; /* POSIX: ']' must come first */
            } else if (e == '\\') {
                out[(*at)++] = '\\';
            } else if (e == '^') {
                out[(*at)++] = '\\'; /* placeholder ordering: a literal ^ not first */
                out[*at - 1] = '^';
                if (*at >= 2 && out[*at - 2] == '[') {
                    /* ^ right after [ would negate: move it behind a dummy */
                    out[*at - 1] = '_';
                    out[(*at)++] = '^';
                }
            } else if (e == '-') {
                out[(*at)++] = '-';
            } else {
                out[(*at)++] = e;
            }
            j += 2;
            continue;
        }
        out[(*at)++] = c;
        j++;
    }
    if (close_later) {
        /* put ']' first after [ or [^ */
        size_t open = *at;
        while (open > 0 && out[open - 1] != '[')
            open--;
        if (negate)
            open++;
        memmove(out + open + 1, out + open, *at - open);
        out[open] = ']';
        (*at)++;
    }
    out[(*at)++] = ']';
    *i = j + 1;
    return 0;
}

int agent_regex_compile(struct agent_regex *r, const char *pattern, char *msg, size_t n)
{
    size_t len = strlen(pattern), i = 0, at = 0, depth = 0, opens[256];
    char *out = malloc(len * 16 + 16);
    int cflags = REG_EXTENDED | REG_NOSUB, rc, can_repeat = 0, last_repeat = 0;

    r->compiled = 0;
    if (out == NULL)
        return -ENOMEM;
    /* leading inline flags: (?i), (?s), (?m), (?x), (?a), (?u), (?L) */
    while (pattern[i] == '(' && pattern[i + 1] == '?' &&
           strchr("aiLmsux", pattern[i + 2] ? pattern[i + 2] : '#')) {
        size_t j = i + 2;
        while (pattern[j] && strchr("aiLmsux", pattern[j]))
            j++;
        if (pattern[j] != ')')
            break;
        if (memchr(pattern + i + 2, 'i', j - i - 2))
            cflags |= REG_ICASE;
        i = j + 1;
    }
    while (pattern[i] != '\0') {
        char c = pattern[i];
        if (c == '\\') {
            char e = pattern[i + 1];
            const char *body;
            if (e == '\0') {
                free(out);
                return bad(msg, n, "bad escape (end of pattern)", i);
            }
            if (!known_escape(e) && class_body(e) == NULL && !strchr("DWS", e)) {
                free(out);
                snprintf(msg, n, "bad escape \\%c at position %zu", e, i);
                return 1;
            }
            if ((body = class_body(e)) != NULL) {
                out[at++] = '[';
                put(out, &at, body);
                out[at++] = ']';
            } else if (e == 'D' || e == 'W' || e == 'S') {
                out[at++] = '[';
                out[at++] = '^';
                put(out, &at, class_body((char)(e + 32)));
                out[at++] = ']';
            } else if (e == 'A') {
                out[at++] = '^';
            } else if (e == 'Z') {
                out[at++] = '$';
            } else if (e == 'b' || e == 'B' || e == 'w' || e == 's') {
                out[at++] = '\\';
                out[at++] = e;
            } else if (e >= '1' && e <= '9') {
                out[at++] = '\\';
                out[at++] = e;
            } else {
                put_literal(out, &at, e);
            }
            i += 2;
            can_repeat = 1;
            last_repeat = 0;
            continue;
        }
        if (c == '[') {
            rc = translate_set(pattern, &i, out, &at, msg, n);
            if (rc != 0) {
                free(out);
                return rc;
            }
            can_repeat = 1;
            last_repeat = 0;
            continue;
        }
        if (c == '(') {
            if (depth >= sizeof(opens) / sizeof(opens[0])) {
                free(out);
                snprintf(msg, n, "too many groups");
                return 1;
            }
            opens[depth++] = i;
            out[at++] = '(';
            i++;
            if (pattern[i] == '?') {
                if (pattern[i + 1] == ':') {
                    i += 2;
                } else if (pattern[i + 1] == 'P' && pattern[i + 2] == '<') {
                    const char *gt = strchr(pattern + i, '>');
                    if (gt == NULL) {
                        free(out);
                        return bad(msg, n, "missing >, unterminated name", i + 3);
                    }
                    i = (size_t)(gt - pattern) + 1;
                } else {
                    free(out);
                    snprintf(msg, n,
                             "unsupported: (?%c at position %zu (lookaround and inline flags past "
                             "the start)",
                             pattern[i + 1] ? pattern[i + 1] : ' ', i - 1);
                    return 2;
                }
            }
            can_repeat = 0;
            last_repeat = 0;
            continue;
        }
        if (c == ')') {
            if (depth == 0) {
                free(out);
                return bad(msg, n, "unbalanced parenthesis", i);
            }
            depth--;
            out[at++] = ')';
            i++;
            can_repeat = 1;
            last_repeat = 0;
            continue;
        }
        if (c == '|') {
            out[at++] = '|';
            i++;
            can_repeat = 0;
            last_repeat = 0;
            continue;
        }
        if (c == '*' || c == '+' || c == '?' ||
            (c == '{' && strspn(pattern + i + 1, "0123456789,") > 0 &&
             pattern[i + 1 + strspn(pattern + i + 1, "0123456789,")] == '}')) {
            size_t q = i;
            if (last_repeat && c != '?') {
                free(out);
                return bad(msg, n, "multiple repeat", q);
            }
            if (!can_repeat) {
                free(out);
                return bad(msg, n, "nothing to repeat", q);
            }
            if (last_repeat && c == '?') {
                /* lazy quantifier: the same matches for search */
                i++;
                last_repeat = 0;
                continue;
            }
            if (c == '{') {
                size_t close = i + 1 + strspn(pattern + i + 1, "0123456789,");
                const char *comma = memchr(pattern + i + 1, ',', close - i - 1);
                long lo = strtol(pattern + i + 1, NULL, 10);
                char q[64];
                if (comma == NULL)
                    snprintf(q, sizeof(q), "{%ld}", lo);
                else if (comma[1] == '}')
                    snprintf(q, sizeof(q), "{%ld,}", lo);
                else {
                    long hi = strtol(comma + 1, NULL, 10);
                    if (hi < lo) {
                        free(out);
                        return bad(msg, n, "min repeat greater than max repeat", i + 1);
                    }
                    snprintf(q, sizeof(q), "{%ld,%ld}", lo, hi);
                }
                put(out, &at, q);
                i = close + 1;
            } else {
                out[at++] = c;
                i++;
            }
            last_repeat = 1;
            continue;
        }
        if (c == '{' || c == '}') {
            put_literal(out, &at, c); /* Python: a brace that is no quantifier is literal */
            i++;
            can_repeat = 1;
            last_repeat = 0;
            continue;
        }
        out[at++] = c;
        i++;
        can_repeat = c != '^';
        last_repeat = 0;
    }
    if (depth > 0) {
        free(out);
        return bad(msg, n, "missing ), unterminated subpattern", opens[depth - 1]);
    }
    out[at] = '\0';
    if (at == 0) {
        out[0] = '(';
        out[1] = ')';
        out[2] = '\0';
    }
    rc = regcomp(&r->re, out, cflags);
    if (rc != 0) {
        char why[256];
        regerror(rc, &r->re, why, sizeof(why));
        snprintf(msg, n, "unsupported pattern (%s)", why);
        free(out);
        return 2;
    }
    free(out);
    r->compiled = 1;
    return 0;
}

int agent_regex_search(const struct agent_regex *r, const char *s)
{
    return regexec(&r->re, s, 0, NULL, 0) == 0;
}

void agent_regex_free(struct agent_regex *r)
{
    if (r->compiled)
        regfree(&r->re);
    r->compiled = 0;
}
