/*
 * ctrace.c - loading a Chrome-trace JSON file into the compact event model
 * of ctrace.h.
 *
 * One pass over the text with a validating scanner (json_skip): it walks the
 * top-level object, and inside "traceEvents" each event object's keys, reading
 * the few fields every tool needs (numbers with strtod/strtoll on the token,
 * strings decoded with cJSON when they hold escapes). Every other value is
 * validated and skipped, its span kept so cJSON can parse it on demand. The
 * scanner is iterative (an explicit depth counter, no recursion) and checks
 * every index against the buffer end.
 */
#include "sort.h"
#include "ctrace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "arena.h"

#define CT_MAX_DEPTH 1000                  /* deepest nesting accepted */
#define CT_MAX_INFLATED ((size_t)32 << 30) /* decompression bomb guard */

/* Interned strings: open addressing over ids; text in an arena. */
struct ctrace_strtab {
    struct arena arena; /* string bytes */
    const char **text;  /* id -> text; [0] = "" */
    uint32_t *len;      /* id -> length */
    uint32_t n;         /* ids in use, including 0 */
    uint32_t cap;       /* slots in text/len */
    uint32_t *slots;    /* hash slots holding ids (0 = empty) */
    uint32_t nslots;    /* power of two */
};

/* The scanner's state. */
struct scan {
    const char *s;    /* text */
    size_t n;         /* its length */
    size_t i;         /* position */
    const char *path; /* for messages */
    struct xp_err *err;
};

static int bad(struct scan *sc, const char *what)
{
    return xp_err_set(sc->err, -EIO, "%s: bad JSON at byte %zu: %s", sc->path, sc->i, what);
}

static void skip_ws(struct scan *sc)
{
    while (sc->i < sc->n) {
        char c = sc->s[sc->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        sc->i++;
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Skip a string token at sc->i (on the quote). *escaped = 1 if it holds
 * backslash escapes. On return sc->i is past the closing quote. */
static int skip_string(struct scan *sc, int *escaped)
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
            return bad(sc, "control character in string");
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
                        return bad(sc, "bad \\u escape");
                    }
                }
                i += 6;
                continue;
            }
            if (strchr("\"\\/bfnrt", c) == NULL || c == 0) {
                sc->i = i;
                return bad(sc, "bad escape");
            }
            i += 2;
            continue;
        }
        i++;
    }
    sc->i = sc->n;
    return bad(sc, "unterminated string");
}

/* Skip a number token (JSON grammar). */
static int skip_number(struct scan *sc)
{
    size_t i = sc->i, digits;

    if (i < sc->n && sc->s[i] == '-')
        i++;
    if (i >= sc->n)
        return bad(sc, "truncated number");
    if (sc->s[i] == '0') {
        i++;
    } else if (sc->s[i] >= '1' && sc->s[i] <= '9') {
        while (i < sc->n && sc->s[i] >= '0' && sc->s[i] <= '9')
            i++;
    } else {
        return bad(sc, "bad number");
    }
    if (i < sc->n && sc->s[i] == '.') {
        i++;
        digits = i;
        while (i < sc->n && sc->s[i] >= '0' && sc->s[i] <= '9')
            i++;
        if (i == digits) {
            sc->i = i;
            return bad(sc, "bad fraction");
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
            return bad(sc, "bad exponent");
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
    return bad(sc, "unexpected character");
}

/* Skip one scalar (string, number, literal) at sc->i. */
static int skip_scalar(struct scan *sc)
{
    int esc;
    char c = sc->s[sc->i];

    if (c == '"')
        return skip_string(sc, &esc);
    if (c == '-' && sc->n - sc->i >= 9 && memcmp(sc->s + sc->i, "-Infinity", 9) == 0)
        return skip_literal(sc);
    if (c == '-' || (c >= '0' && c <= '9'))
        return skip_number(sc);
    return skip_literal(sc);
}

/* Skip and validate any JSON value at sc->i (after whitespace). Iterative:
 * 'stack' remembers, per open container, whether it is an object. */
static int json_skip(struct scan *sc)
{
    unsigned char stack[CT_MAX_DEPTH];
    int depth = 0, rc;

    skip_ws(sc);
    if (sc->i >= sc->n)
        return bad(sc, "truncated value");
    if (sc->s[sc->i] != '{' && sc->s[sc->i] != '[')
        return skip_scalar(sc);
    for (;;) {
        /* At the start of a value. */
        skip_ws(sc);
        if (sc->i >= sc->n)
            return bad(sc, "truncated value");
        if (sc->s[sc->i] == '{' || sc->s[sc->i] == '[') {
            int obj = sc->s[sc->i] == '{';
            if (depth >= CT_MAX_DEPTH)
                return bad(sc, "nesting too deep");
            stack[depth++] = (unsigned char)obj;
            sc->i++;
            skip_ws(sc);
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
        skip_ws(sc);
        if (sc->i >= sc->n)
            return bad(sc, "truncated container");
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
        return bad(sc, "expected ',' or closing bracket");
    object_key:
        skip_ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] != '"')
            return bad(sc, "expected object key");
        {
            int esc;
            rc = skip_string(sc, &esc);
            if (rc != 0)
                return rc;
        }
        skip_ws(sc);
        if (sc->i >= sc->n || sc->s[sc->i] != ':')
            return bad(sc, "expected ':'");
        sc->i++;
    }
}

/* ---- interned strings ---------------------------------------------------- */

static uint32_t str_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int strtab_init(struct ctrace_strtab *t)
{
    memset(t, 0, sizeof(*t));
    arena_init(&t->arena);
    t->cap = 256;
    t->text = malloc(t->cap * sizeof(*t->text));
    t->len = malloc(t->cap * sizeof(*t->len));
    t->nslots = 512;
    t->slots = calloc(t->nslots, sizeof(*t->slots));
    if (t->text == NULL || t->len == NULL || t->slots == NULL)
        return -ENOMEM;
    t->text[0] = "";
    t->len[0] = 0;
    t->n = 1;
    return 0;
}

static void strtab_free(struct ctrace_strtab *t)
{
    if (t == NULL)
        return;
    arena_free(&t->arena);
    free(t->text);
    free(t->len);
    free(t->slots);
}

static uint32_t strtab_lookup(const struct ctrace_strtab *t, const char *s, size_t n)
{
    uint32_t mask = t->nslots - 1, i = str_hash(s, n) & mask;

    while (t->slots[i] != 0) {
        uint32_t id = t->slots[i];
        if (t->len[id] == n && memcmp(t->text[id], s, n) == 0)
            return id;
        i = (i + 1) & mask;
    }
    return 0;
}

static int strtab_grow(struct ctrace_strtab *t)
{
    uint32_t nslots = t->nslots * 2, id, *slots;

    if (nslots < t->nslots)
        return -ENOMEM;
    slots = calloc(nslots, sizeof(*slots));
    if (slots == NULL)
        return -ENOMEM;
    for (id = 1; id < t->n; id++) {
        uint32_t i = str_hash(t->text[id], t->len[id]) & (nslots - 1);
        while (slots[i] != 0)
            i = (i + 1) & (nslots - 1);
        slots[i] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

/* Intern s[0..n); *id = its id (0 for ""). */
static int strtab_add(struct ctrace_strtab *t, const char *s, size_t n, uint32_t *id)
{
    uint32_t mask, i;
    char *copy;

    if (n == 0) {
        *id = 0;
        return 0;
    }
    if (n > UINT32_MAX)
        return -EIO;
    *id = strtab_lookup(t, s, n);
    if (*id != 0)
        return 0;
    if ((uint64_t)(t->n + 1) * 2 > t->nslots && strtab_grow(t) != 0)
        return -ENOMEM;
    if (t->n == t->cap) {
        uint32_t cap = t->cap * 2;
        const char **text;
        uint32_t *len;
        if (cap < t->cap)
            return -ENOMEM;
        text = realloc(t->text, cap * sizeof(*text));
        if (text == NULL)
            return -ENOMEM;
        t->text = text;
        len = realloc(t->len, cap * sizeof(*len));
        if (len == NULL)
            return -ENOMEM;
        t->len = len;
        t->cap = cap;
    }
    copy = arena_strndup(&t->arena, s, n);
    if (copy == NULL)
        return -ENOMEM;
    t->text[t->n] = copy;
    t->len[t->n] = (uint32_t)n;
    mask = t->nslots - 1;
    i = str_hash(s, n) & mask;
    while (t->slots[i] != 0)
        i = (i + 1) & mask;
    t->slots[i] = t->n;
    *id = t->n++;
    return 0;
}

/* ---- token readers ------------------------------------------------------- */

/* Intern the string token s[a..b) (quotes included). */
static int intern_token(struct ctrace *ct, struct scan *sc, size_t a, size_t b, int escaped,
                        uint32_t *id)
{
    cJSON *v;
    int rc;

    if (!escaped)
        return strtab_add(ct->strings, sc->s + a + 1, b - a - 2, id);
    v = cJSON_ParseWithLength(sc->s + a, b - a);
    if (v == NULL || !cJSON_IsString(v)) {
        cJSON_Delete(v);
        sc->i = a;
        return bad(sc, "bad string");
    }
    rc = strtab_add(ct->strings, v->valuestring, strlen(v->valuestring), id);
    cJSON_Delete(v);
    return rc;
}

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
static int token_double(const struct scan *sc, size_t a, size_t b, double *v)
{
    char buf[400];

    if (b > a && (sc->s[a] == '-' || (sc->s[a] >= '0' && sc->s[a] <= '9')) &&
        number_text(sc, a, b, buf, sizeof(buf)) == 0) {
        *v = strtod(buf, NULL);
        return 1;
    }
    return 0;
}

/* 1 if the number token s[a..b) is a JSON integer (no '.', 'e' or 'E'):
 * Python's json module reads it as an int, not a float. */
static int token_is_integer(const struct scan *sc, size_t a, size_t b)
{
    for (; a < b; a++) {
        if (sc->s[a] == '.' || sc->s[a] == 'e' || sc->s[a] == 'E')
            return 0;
    }
    return 1;
}

/* The token s[a..b) as an integer: JSON integers, integral doubles, and
 * strings holding a decimal or 0x-hex integer. 1 if it is one. */
static int token_int(const struct scan *sc, size_t a, size_t b, int64_t *v)
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

/* ---- events -------------------------------------------------------------- */

struct builder {
    struct ctrace *ct;
    uint32_t cap; /* slots in ct->events */
};

static int key_is(const struct scan *sc, size_t a, size_t b, const char *k)
{
    size_t n = strlen(k);
    return b - a == n + 2 && memcmp(sc->s + a + 1, k, n) == 0;
}

/* Read the args object at s[a..b): correlation ids. */
static int read_args(struct scan *sc, size_t a, size_t b, struct ctrace_event *ev)
{
    struct scan sub = *sc;
    int64_t corr2 = CT_NONE;

    sub.i = a + 1;
    sub.n = b;
    for (;;) {
        size_t ka, kb, va;
        int esc, rc;
        skip_ws(&sub);
        if (sub.i >= sub.n || sub.s[sub.i] == '}')
            break;
        if (sub.s[sub.i] == ',') {
            sub.i++;
            skip_ws(&sub);
        }
        ka = sub.i;
        rc = skip_string(&sub, &esc);
        if (rc != 0)
            return rc;
        kb = sub.i;
        skip_ws(&sub);
        sub.i++; /* ':' (validated by json_skip already) */
        skip_ws(&sub);
        va = sub.i;
        rc = json_skip(&sub);
        if (rc != 0)
            return rc;
        if (key_is(&sub, ka, kb, "correlation")) {
            int64_t v;
            if (token_int(&sub, va, sub.i, &v))
                ev->correlation = v;
        } else if (key_is(&sub, ka, kb, "correlation_id")) {
            int64_t v;
            if (token_int(&sub, va, sub.i, &v))
                corr2 = v;
        } else if (key_is(&sub, ka, kb, "External id")) {
            int64_t v;
            if (token_int(&sub, va, sub.i, &v))
                ev->external_id = v;
        }
    }
    if (ev->correlation == CT_NONE)
        ev->correlation = corr2;
    return 0;
}

/* Read the id / pid / tid value token into *v, setting flag if a string. */
static int read_id_field(struct ctrace *ct, struct scan *sc, size_t a, size_t b, int esc,
                         int64_t *v, uint16_t *flags, uint16_t str_flag)
{
    uint32_t id;
    int rc;

    if (sc->s[a] == '"') {
        rc = intern_token(ct, sc, a, b, esc, &id);
        if (rc != 0)
            return rc;
        *v = id;
        *flags |= str_flag;
        return 0;
    }
    if (!token_int(sc, a, b, v))
        *v = CT_NONE;
    return 0;
}

/* Parse one event object at sc->i into ev. */
static int read_event(struct ctrace *ct, struct scan *sc, struct ctrace_event *ev)
{
    size_t start = sc->i;
    struct scan sub;
    int rc;

    memset(ev, 0, sizeof(*ev));
    ev->pid = CT_NONE;
    ev->tid = CT_NONE;
    ev->id = CT_NONE;
    ev->correlation = CT_NONE;
    ev->external_id = CT_NONE;
    rc = json_skip(sc); /* validates the whole event first */
    if (rc != 0)
        return rc;
    sub = *sc;
    sub.i = start + 1;
    sub.n = sc->i;
    for (;;) {
        size_t ka, kb, va, vb;
        int kesc, vesc = 0;
        skip_ws(&sub);
        if (sub.i >= sub.n || sub.s[sub.i] == '}')
            break;
        if (sub.s[sub.i] == ',') {
            sub.i++;
            skip_ws(&sub);
        }
        ka = sub.i;
        rc = skip_string(&sub, &kesc);
        if (rc != 0)
            return rc;
        kb = sub.i;
        skip_ws(&sub);
        sub.i++; /* ':' */
        skip_ws(&sub);
        va = sub.i;
        if (sub.s[va] == '"')
            rc = skip_string(&sub, &vesc);
        else
            rc = json_skip(&sub);
        if (rc != 0)
            return rc;
        vb = sub.i;
        if (kesc)
            continue; /* keys we read never need escapes */
        switch (kb - ka) {
        case 4: /* "ts" "ph" "id" */
            if (key_is(&sub, ka, kb, "ts")) {
                if (token_double(&sub, va, vb, &ev->ts))
                    ev->flags |= CT_HAS_TS | (token_is_integer(&sub, va, vb) ? CT_TS_INT : 0);
            } else if (key_is(&sub, ka, kb, "ph")) {
                if (sub.s[va] == '"' && vb - va > 2)
                    ev->ph = sub.s[va + 1];
            } else if (key_is(&sub, ka, kb, "id")) {
                if (!token_int(&sub, va, vb, &ev->id))
                    ev->id = CT_NONE;
            } else if (key_is(&sub, ka, kb, "bp")) {
                if (vb - va == 3 && sub.s[va + 1] == 'e')
                    ev->flags |= CT_BIND_ENCLOSING;
            }
            break;
        case 5: /* "dur" "pid" "tid" "cat" */
            if (key_is(&sub, ka, kb, "dur")) {
                if (token_double(&sub, va, vb, &ev->dur))
                    ev->flags |= CT_HAS_DUR | (token_is_integer(&sub, va, vb) ? CT_DUR_INT : 0);
            } else if (key_is(&sub, ka, kb, "pid")) {
                rc = read_id_field(ct, &sub, va, vb, vesc, &ev->pid, &ev->flags, CT_PID_STR);
            } else if (key_is(&sub, ka, kb, "tid")) {
                rc = read_id_field(ct, &sub, va, vb, vesc, &ev->tid, &ev->flags, CT_TID_STR);
            } else if (key_is(&sub, ka, kb, "cat") && sub.s[va] == '"') {
                rc = intern_token(ct, &sub, va, vb, vesc, &ev->cat);
            }
            break;
        case 6: /* "name" "args" */
            if (key_is(&sub, ka, kb, "name") && sub.s[va] == '"') {
                rc = intern_token(ct, &sub, va, vb, vesc, &ev->name);
            } else if (key_is(&sub, ka, kb, "args") && sub.s[va] == '{') {
                if (vb - va > UINT32_MAX) {
                    sub.i = va;
                    return bad(&sub, "args object too large");
                }
                ev->args_off = va;
                ev->args_len = (uint32_t)(vb - va);
                rc = read_args(&sub, va, vb, ev);
            }
            break;
        default:
            break;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int push_event(struct builder *b, struct ctrace_event **evp)
{
    struct ctrace *ct = b->ct;

    if (ct->nevents == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 4096;
        struct ctrace_event *v;
        if (cap < b->cap)
            return -ENOMEM;
        v = realloc(ct->events, (size_t)cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        ct->events = v;
        b->cap = cap;
    }
    *evp = &ct->events[ct->nevents];
    return 0;
}

/* The traceEvents array at sc->i. */
static int read_events(struct ctrace *ct, struct scan *sc)
{
    struct builder b = {ct, 0};
    int rc;

    if (sc->i >= sc->n || sc->s[sc->i] != '[')
        return bad(sc, "traceEvents is not an array");
    sc->i++;
    skip_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == ']') {
        sc->i++;
        return 0;
    }
    for (;;) {
        skip_ws(sc);
        if (sc->i >= sc->n)
            return bad(sc, "truncated traceEvents");
        if (sc->s[sc->i] == '{') {
            struct ctrace_event *ev;
            if (ct->nevents == UINT32_MAX)
                return bad(sc, "too many events");
            rc = push_event(&b, &ev);
            if (rc != 0)
                return xp_err_set(sc->err, rc, "%s: out of memory", sc->path);
            rc = read_event(ct, sc, ev);
            if (rc == -ENOMEM)
                return xp_err_set(sc->err, rc, "%s: out of memory", sc->path);
            if (rc != 0)
                return rc;
            ct->nevents++;
        } else {
            rc = json_skip(sc);
            if (rc != 0)
                return rc;
            ct->nskipped++;
        }
        skip_ws(sc);
        if (sc->i < sc->n && sc->s[sc->i] == ',') {
            sc->i++;
            continue;
        }
        if (sc->i < sc->n && sc->s[sc->i] == ']') {
            sc->i++;
            return 0;
        }
        return bad(sc, "expected ',' or ']' in traceEvents");
    }
}

/* The whole document. */
static int read_document(struct ctrace *ct, struct xp_err *err)
{
    struct scan sc = {ct->text, ct->text_len, 0, ct->path, err};
    int rc, seen = 0;

    if (sc.n >= 3 && memcmp(sc.s, "\xEF\xBB\xBF", 3) == 0)
        sc.i = 3;
    skip_ws(&sc);
    if (sc.i >= sc.n)
        return bad(&sc, "empty file");
    ct->top_off = sc.i;
    if (sc.s[sc.i] == '[') {
        ct->bare_array = 1;
        rc = read_events(ct, &sc);
        if (rc != 0)
            return rc;
    } else if (sc.s[sc.i] == '{') {
        sc.i++;
        skip_ws(&sc);
        if (sc.i < sc.n && sc.s[sc.i] == '}') {
            sc.i++;
        } else {
            for (;;) {
                size_t ka, kb;
                int esc;
                skip_ws(&sc);
                if (sc.i >= sc.n || sc.s[sc.i] != '"')
                    return bad(&sc, "expected object key");
                ka = sc.i;
                rc = skip_string(&sc, &esc);
                if (rc != 0)
                    return rc;
                kb = sc.i;
                skip_ws(&sc);
                if (sc.i >= sc.n || sc.s[sc.i] != ':')
                    return bad(&sc, "expected ':'");
                sc.i++;
                skip_ws(&sc);
                if (!esc && key_is(&sc, ka, kb, "traceEvents") && !seen) {
                    seen = 1;
                    rc = read_events(ct, &sc);
                } else {
                    rc = json_skip(&sc);
                }
                if (rc != 0)
                    return rc;
                skip_ws(&sc);
                if (sc.i < sc.n && sc.s[sc.i] == ',') {
                    sc.i++;
                    continue;
                }
                if (sc.i < sc.n && sc.s[sc.i] == '}') {
                    sc.i++;
                    break;
                }
                return bad(&sc, "expected ',' or '}'");
            }
        }
    } else {
        return bad(&sc, "not a JSON object or array");
    }
    skip_ws(&sc);
    if (sc.i < sc.n && sc.s[sc.i] != 0)
        return bad(&sc, "trailing data after the document");
    return 0;
}

/* ---- metadata tables ----------------------------------------------------- */

static int proc_cmp(const void *a, const void *b)
{
    const struct ctrace_process *x = a, *y = b;
    if (x->pid_flags != y->pid_flags)
        return x->pid_flags < y->pid_flags ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int thread_cmp(const void *a, const void *b)
{
    const struct ctrace_thread *x = a, *y = b;
    if (x->flags != y->flags)
        return x->flags < y->flags ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* args.name (string id) and args.sort_index of a metadata event. */
static int meta_args(struct ctrace *ct, const struct ctrace_event *ev, uint32_t *name,
                     int64_t *sort_index)
{
    cJSON *args = ctrace_event_args(ct, ev), *v;
    int rc = 0;

    if (args == NULL)
        return 0;
    v = cJSON_GetObjectItemCaseSensitive(args, "name");
    if (cJSON_IsString(v))
        rc = strtab_add(ct->strings, v->valuestring, strlen(v->valuestring), name);
    v = cJSON_GetObjectItemCaseSensitive(args, "sort_index");
    if (cJSON_IsNumber(v))
        *sort_index = (int64_t)v->valuedouble;
    cJSON_Delete(args);
    return rc;
}

static int build_metadata(struct ctrace *ct)
{
    uint32_t nproc = 0, nthr = 0, i, pn = 0, tn = 0;
    uint32_t pid_proc = ctrace_str_find(ct, "process_name");
    uint32_t pid_sort = ctrace_str_find(ct, "process_sort_index");
    uint32_t tid_name = ctrace_str_find(ct, "thread_name");
    uint32_t tid_sort = ctrace_str_find(ct, "thread_sort_index");
    int rc;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->ph != 'M' || ev->name == 0)
            continue;
        if (ev->name == pid_proc || ev->name == pid_sort)
            nproc++;
        else if (ev->name == tid_name || ev->name == tid_sort)
            nthr++;
    }
    ct->processes = calloc(nproc ? nproc : 1, sizeof(*ct->processes));
    ct->threads = calloc(nthr ? nthr : 1, sizeof(*ct->threads));
    if (ct->processes == NULL || ct->threads == NULL)
        return -ENOMEM;
    /* Later metadata events override earlier ones (as a dict would). */
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        uint32_t name = 0, k;
        int64_t sort_index = CT_NONE;
        if (ev->ph != 'M' || ev->name == 0)
            continue;
        if (ev->name == pid_proc || ev->name == pid_sort) {
            struct ctrace_process *p = NULL;
            uint16_t pf = ev->flags & CT_PID_STR;
            for (k = 0; k < pn; k++) {
                if (ct->processes[k].pid == ev->pid && ct->processes[k].pid_flags == pf) {
                    p = &ct->processes[k];
                    break;
                }
            }
            if (p == NULL) {
                p = &ct->processes[pn++];
                p->pid = ev->pid;
                p->pid_flags = pf;
                p->sort_index = CT_NONE;
            }
            rc = meta_args(ct, ev, &name, &sort_index);
            if (rc != 0)
                return rc;
            if (ev->name == pid_proc)
                p->name = name;
            else if (sort_index != CT_NONE)
                p->sort_index = sort_index;
        } else if (ev->name == tid_name || ev->name == tid_sort) {
            struct ctrace_thread *t = NULL;
            uint16_t f = ev->flags & (CT_PID_STR | CT_TID_STR);
            for (k = tn; k > 0; k--) {
                struct ctrace_thread *c = &ct->threads[k - 1];
                if (c->pid == ev->pid && c->tid == ev->tid && c->flags == f) {
                    t = c;
                    break;
                }
            }
            if (t == NULL) {
                t = &ct->threads[tn++];
                t->pid = ev->pid;
                t->tid = ev->tid;
                t->flags = f;
                t->sort_index = CT_NONE;
            }
            rc = meta_args(ct, ev, &name, &sort_index);
            if (rc != 0)
                return rc;
            if (ev->name == tid_name)
                t->name = name;
            else if (sort_index != CT_NONE)
                t->sort_index = sort_index;
        }
    }
    ct->nprocesses = pn;
    ct->nthreads = tn;
    xp_qsort(ct->processes, pn, sizeof(*ct->processes), proc_cmp);
    xp_qsort(ct->threads, tn, sizeof(*ct->threads), thread_cmp);
    return 0;
}

/* ---- loading ------------------------------------------------------------- */

static int inflate_mem(const char *name, const unsigned char *data, size_t len, char **out,
                       size_t *outlen, struct xp_err *err)
{
    z_stream zs;
    size_t cap = len * 4 + 4096, n = 0;
    char *buf = malloc(cap);
    int zrc;

    if (buf == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", name);
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
        free(buf);
        return xp_err_set(err, -ENOMEM, "%s: cannot start gzip reader", name);
    }
    zs.next_in = (unsigned char *)data;
    zs.avail_in = 0;
    for (;;) {
        size_t in_left = len - (size_t)((const unsigned char *)zs.next_in - data);
        if (zs.avail_in == 0)
            zs.avail_in = in_left > (1u << 30) ? (1u << 30) : (unsigned)in_left;
        if (n == cap) {
            size_t ncap = cap * 2;
            char *nb;
            if (ncap > CT_MAX_INFLATED) {
                inflateEnd(&zs);
                free(buf);
                return xp_err_set(err, -EIO, "%s: inflates to more than 32 GiB", name);
            }
            nb = realloc(buf, ncap);
            if (nb == NULL) {
                inflateEnd(&zs);
                free(buf);
                return xp_err_set(err, -ENOMEM, "%s: out of memory", name);
            }
            buf = nb;
            cap = ncap;
        }
        zs.next_out = (unsigned char *)buf + n;
        zs.avail_out = (cap - n) > (1u << 30) ? (1u << 30) : (unsigned)(cap - n);
        {
            unsigned before = zs.avail_out;
            zrc = inflate(&zs, Z_NO_FLUSH);
            n += before - zs.avail_out;
        }
        if (zrc == Z_STREAM_END) {
            /* Concatenated gzip members continue; anything else ends here. */
            in_left = len - (size_t)((const unsigned char *)zs.next_in - data);
            if (in_left >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
                inflateReset(&zs);
                continue;
            }
            break;
        }
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            inflateEnd(&zs);
            free(buf);
            return xp_err_set(err, -EIO, "%s: bad gzip data: %s", name,
                              zs.msg ? zs.msg : "inflate failed");
        }
        if (zrc == Z_BUF_ERROR && zs.avail_in == 0 &&
            (size_t)((const unsigned char *)zs.next_in - data) >= len && zs.avail_out > 0) {
            inflateEnd(&zs);
            free(buf);
            return xp_err_set(err, -EIO, "%s: truncated gzip data", name);
        }
    }
    inflateEnd(&zs);
    *out = buf;
    *outlen = n;
    return 0;
}

static int finish_load(struct ctrace *ct, struct ctrace **ctp, struct xp_err *err)
{
    int rc;

    ct->strings = calloc(1, sizeof(*ct->strings));
    if (ct->strings == NULL || strtab_init(ct->strings) != 0) {
        ctrace_free(ct);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    rc = read_document(ct, err);
    if (rc == 0) {
        rc = build_metadata(ct);
        if (rc != 0)
            xp_err_set(err, rc, "%s: out of memory", ct->path);
    }
    if (rc != 0) {
        ctrace_free(ct);
        return rc;
    }
    if (ct->nevents > 0) {
        /* Give back the unused tail of the events array. */
        struct ctrace_event *v = realloc(ct->events, (size_t)ct->nevents * sizeof(*v));
        if (v != NULL)
            ct->events = v;
    }
    *ctp = ct;
    return 0;
}

int ctrace_load_mem(const char *name, const void *data, size_t len, struct ctrace **ctp,
                    struct xp_err *err)
{
    struct ctrace *ct = calloc(1, sizeof(*ct));
    char *text = NULL;
    size_t text_len = 0;
    int rc;

    *ctp = NULL;
    if (ct == NULL || (ct->path = strdup(name)) == NULL) {
        free(ct);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    if (len >= 2 && ((const unsigned char *)data)[0] == 0x1f &&
        ((const unsigned char *)data)[1] == 0x8b) {
        rc = inflate_mem(name, data, len, &text, &text_len, err);
        if (rc != 0) {
            ctrace_free(ct);
            return rc;
        }
    } else {
        text = malloc(len ? len : 1);
        if (text == NULL) {
            ctrace_free(ct);
            return xp_err_set(err, -ENOMEM, "out of memory");
        }
        memcpy(text, data, len);
        text_len = len;
    }
    ct->text = text;
    ct->text_len = text_len;
    return finish_load(ct, ctp, err);
}

int ctrace_load(const char *path, struct ctrace **ctp, struct xp_err *err)
{
    struct ctrace *ct;
    struct stat st;
    unsigned char magic[2] = {0, 0};
    void *map;
    int fd, rc;

    *ctp = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return xp_err_set(err, -errno, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        close(fd);
        return xp_err_set(err, rc, "%s: %s", path, strerror(-rc));
    }
    if (st.st_size == 0) {
        close(fd);
        return xp_err_set(err, -EIO, "%s: empty file", path);
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return xp_err_set(err, -EIO, "%s: cannot map: %s", path, strerror(errno));
    memcpy(magic, map, st.st_size >= 2 ? 2 : 1);
    if (magic[0] == 0x1f && magic[1] == 0x8b) {
        madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
        rc = ctrace_load_mem(path, map, (size_t)st.st_size, ctp, err);
        munmap(map, (size_t)st.st_size);
        return rc;
    }
    ct = calloc(1, sizeof(*ct));
    if (ct == NULL || (ct->path = strdup(path)) == NULL) {
        free(ct);
        munmap(map, (size_t)st.st_size);
        return xp_err_set(err, -ENOMEM, "out of memory");
    }
    ct->text = map;
    ct->text_len = (size_t)st.st_size;
    ct->mapped = 1;
    return finish_load(ct, ctp, err);
}

void ctrace_free(struct ctrace *ct)
{
    if (ct == NULL)
        return;
    if (ct->mapped)
        munmap((void *)ct->text, ct->text_len);
    else
        free((void *)ct->text);
    free(ct->events);
    free(ct->processes);
    free(ct->threads);
    strtab_free(ct->strings);
    free(ct->strings);
    free(ct->path);
    free(ct);
}

/* ---- snapshot ------------------------------------------------------------ */

static int build_ctrace(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    const char *host = arg;
    const struct source_file *f = snapshot_host_file(snap, host, SRC_PT_TRACE);
    struct ctrace *ct;
    int rc;

    if (f == NULL)
        f = snapshot_host_file(snap, host, SRC_TRACE_JSON);
    if (f == NULL)
        return xp_err_set(err, -ENOENT, "%s: no trace JSON", host);
    rc = ctrace_load(f->path, &ct, err);
    if (rc != 0) {
        snapshot_log(snap, "%s", err->msg);
        return rc;
    }
    *value = ct;
    return 0;
}

static void free_ctrace(void *value)
{
    ctrace_free(value);
}

int ctrace_snapshot(struct snapshot *snap, const char *host, const struct ctrace **ctp,
                    struct xp_err *err)
{
    char *key;
    void *v;
    int rc;

    rc = snapshot_host_key("ctrace", host, NULL, &key, err);
    if (rc == 0) {
        rc = snapshot_intermediate(snap, key, build_ctrace, free_ctrace, host, &v, err);
        free(key);
    }
    *ctp = rc == 0 ? v : NULL;
    return rc;
}

/* ---- accessors ----------------------------------------------------------- */

const char *ctrace_str(const struct ctrace *ct, uint32_t id)
{
    if (ct == NULL || id >= ct->strings->n)
        return "";
    return ct->strings->text[id];
}

uint32_t ctrace_str_find(const struct ctrace *ct, const char *s)
{
    return strtab_lookup(ct->strings, s, strlen(s));
}

uint32_t ctrace_str_count(const struct ctrace *ct)
{
    return ct->strings->n - 1;
}

const char *ctrace_event_args_text(const struct ctrace *ct, const struct ctrace_event *ev,
                                   size_t *len)
{
    if (ev->args_len == 0) {
        *len = 0;
        return NULL;
    }
    *len = ev->args_len;
    return ct->text + ev->args_off;
}

cJSON *ctrace_event_args(const struct ctrace *ct, const struct ctrace_event *ev)
{
    if (ev->args_len == 0)
        return NULL;
    return cJSON_ParseWithLength(ct->text + ev->args_off, ev->args_len);
}

cJSON *ctrace_top_value(const struct ctrace *ct, const char *key)
{
    struct xp_err err;
    struct scan sc = {ct->text, ct->text_len, ct->top_off, ct->path, &err};

    if (ct->bare_array || sc.i >= sc.n || sc.s[sc.i] != '{')
        return NULL;
    sc.i++;
    for (;;) {
        size_t ka, kb, va;
        int esc;
        skip_ws(&sc);
        if (sc.i >= sc.n || sc.s[sc.i] != '"')
            return NULL;
        ka = sc.i;
        if (skip_string(&sc, &esc) != 0)
            return NULL;
        kb = sc.i;
        skip_ws(&sc);
        sc.i++;
        skip_ws(&sc);
        va = sc.i;
        if (json_skip(&sc) != 0)
            return NULL;
        if (!esc && key_is(&sc, ka, kb, key))
            return cJSON_ParseWithLength(sc.s + va, sc.i - va);
        skip_ws(&sc);
        if (sc.i >= sc.n || sc.s[sc.i] != ',')
            return NULL;
        sc.i++;
    }
}

const struct ctrace_process *ctrace_process_find(const struct ctrace *ct, int64_t pid,
                                                 uint16_t pid_flags)
{
    struct ctrace_process key;

    memset(&key, 0, sizeof(key));
    key.pid = pid;
    key.pid_flags = pid_flags & CT_PID_STR;
    return bsearch(&key, ct->processes, ct->nprocesses, sizeof(key), proc_cmp);
}

const struct ctrace_thread *ctrace_thread_find(const struct ctrace *ct, int64_t pid, int64_t tid,
                                               uint16_t flags)
{
    struct ctrace_thread key;

    memset(&key, 0, sizeof(key));
    key.pid = pid;
    key.tid = tid;
    key.flags = flags & (CT_PID_STR | CT_TID_STR);
    return bsearch(&key, ct->threads, ct->nthreads, sizeof(key), thread_cmp);
}

const char *ctrace_event_process_name(const struct ctrace *ct, const struct ctrace_event *ev)
{
    const struct ctrace_process *p = ctrace_process_find(ct, ev->pid, ev->flags);
    return p != NULL ? ctrace_str(ct, p->name) : "";
}

const char *ctrace_event_thread_name(const struct ctrace *ct, const struct ctrace_event *ev)
{
    const struct ctrace_thread *t = ctrace_thread_find(ct, ev->pid, ev->tid, ev->flags);
    return t != NULL ? ctrace_str(ct, t->name) : "";
}
