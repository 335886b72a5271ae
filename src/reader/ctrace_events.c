/*
 * ctrace_events.c - the one pass over a Chrome-trace JSON text: the
 * top-level object (or bare array), and inside "traceEvents" each event
 * object's keys, reading the few fields every tool needs (numbers with
 * strtod/strtoll on the token, strings decoded with cJSON when they hold
 * escapes) into the event table. Every other value is validated and skipped
 * (ctrace_scan.c), its span kept so cJSON can parse it on demand.
 */
#include "ctrace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Intern the string token s[a..b) (quotes included). */
static int intern_token(struct ctrace *ct, struct scan *sc, size_t a, size_t b, int escaped,
                        uint32_t *id)
{
    cJSON *v;
    int rc;

    if (!escaped)
        return ctr_strtab_add(ct->strings, sc->s + a + 1, b - a - 2, id);
    v = cJSON_ParseWithLength(sc->s + a, b - a);
    if (v == NULL || !cJSON_IsString(v)) {
        cJSON_Delete(v);
        sc->i = a;
        return ctr_bad(sc, "bad string");
    }
    rc = ctr_strtab_add(ct->strings, v->valuestring, strlen(v->valuestring), id);
    cJSON_Delete(v);
    return rc;
}

/* ---- events -------------------------------------------------------------- */

struct builder {
    struct ctrace *ct;
    uint32_t cap; /* slots in ct->events */
};

/* Read the args object at s[a..b): correlation ids. */
static int read_args(struct scan *sc, size_t a, size_t b, struct ctrace_event *ev)
{
    struct scan sub = *sc;
    int64_t corr2 = CT_NONE;

    sub.i = a + 1;
    sub.n = b;
    for (;;) {
        size_t ka, kb, va;
        int esc, rc = ctr_next_key(&sub, &ka, &kb, &esc);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        va = sub.i;
        rc = ctr_json_skip(&sub);
        if (rc != 0)
            return rc;
        if (ctr_key_is(&sub, ka, kb, "correlation")) {
            int64_t v;
            if (ctr_token_int(&sub, va, sub.i, &v))
                ev->correlation = v;
        } else if (ctr_key_is(&sub, ka, kb, "correlation_id")) {
            int64_t v;
            if (ctr_token_int(&sub, va, sub.i, &v))
                corr2 = v;
        } else if (ctr_key_is(&sub, ka, kb, "External id")) {
            int64_t v;
            if (ctr_token_int(&sub, va, sub.i, &v))
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
    if (!ctr_token_int(sc, a, b, v))
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
    rc = ctr_json_skip(sc); /* validates the whole event first */
    if (rc != 0)
        return rc;
    sub = *sc;
    sub.i = start + 1;
    sub.n = sc->i;
    for (;;) {
        size_t ka, kb, va, vb;
        int kesc, vesc = 0;
        rc = ctr_next_key(&sub, &ka, &kb, &kesc);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        va = sub.i;
        if (sub.s[va] == '"')
            rc = ctr_skip_string(&sub, &vesc);
        else
            rc = ctr_json_skip(&sub);
        if (rc != 0)
            return rc;
        vb = sub.i;
        if (kesc)
            continue; /* keys we read never need escapes */
        switch (kb - ka) {
        case 4: /* "ts" "ph" "id" */
            if (ctr_key_is(&sub, ka, kb, "ts")) {
                if (ctr_token_double(&sub, va, vb, &ev->ts))
                    ev->flags |= CT_HAS_TS | (ctr_token_is_integer(&sub, va, vb) ? CT_TS_INT : 0);
            } else if (ctr_key_is(&sub, ka, kb, "ph")) {
                if (sub.s[va] == '"' && vb - va > 2)
                    ev->ph = sub.s[va + 1];
            } else if (ctr_key_is(&sub, ka, kb, "id")) {
                if (!ctr_token_int(&sub, va, vb, &ev->id))
                    ev->id = CT_NONE;
            } else if (ctr_key_is(&sub, ka, kb, "bp")) {
                if (vb - va == 3 && sub.s[va + 1] == 'e')
                    ev->flags |= CT_BIND_ENCLOSING;
            }
            break;
        case 5: /* "dur" "pid" "tid" "cat" */
            if (ctr_key_is(&sub, ka, kb, "dur")) {
                if (ctr_token_double(&sub, va, vb, &ev->dur))
                    ev->flags |= CT_HAS_DUR | (ctr_token_is_integer(&sub, va, vb) ? CT_DUR_INT : 0);
            } else if (ctr_key_is(&sub, ka, kb, "pid")) {
                rc = read_id_field(ct, &sub, va, vb, vesc, &ev->pid, &ev->flags, CT_PID_STR);
            } else if (ctr_key_is(&sub, ka, kb, "tid")) {
                rc = read_id_field(ct, &sub, va, vb, vesc, &ev->tid, &ev->flags, CT_TID_STR);
            } else if (ctr_key_is(&sub, ka, kb, "cat") && sub.s[va] == '"') {
                rc = intern_token(ct, &sub, va, vb, vesc, &ev->cat);
            }
            break;
        case 6: /* "name" "args" */
            if (ctr_key_is(&sub, ka, kb, "name") && sub.s[va] == '"') {
                rc = intern_token(ct, &sub, va, vb, vesc, &ev->name);
            } else if (ctr_key_is(&sub, ka, kb, "args") && sub.s[va] == '{') {
                if (vb - va > UINT32_MAX) {
                    sub.i = va;
                    return ctr_bad(&sub, "args object too large");
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
        return ctr_bad(sc, "traceEvents is not an array");
    sc->i++;
    ctr_skip_ws(sc);
    if (sc->i < sc->n && sc->s[sc->i] == ']') {
        sc->i++;
        return 0;
    }
    for (;;) {
        ctr_skip_ws(sc);
        if (sc->i >= sc->n)
            return ctr_bad(sc, "truncated traceEvents");
        if (sc->s[sc->i] == '{') {
            struct ctrace_event *ev;
            if (ct->nevents == UINT32_MAX)
                return ctr_bad(sc, "too many events");
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
            rc = ctr_json_skip(sc);
            if (rc != 0)
                return rc;
            ct->nskipped++;
        }
        ctr_skip_ws(sc);
        if (sc->i < sc->n && sc->s[sc->i] == ',') {
            sc->i++;
            continue;
        }
        if (sc->i < sc->n && sc->s[sc->i] == ']') {
            sc->i++;
            return 0;
        }
        return ctr_bad(sc, "expected ',' or ']' in traceEvents");
    }
}

/* The whole document. */
int ctr_read_document(struct ctrace *ct, struct xp_err *err)
{
    struct scan sc = {ct->text, ct->text_len, 0, ct->path, err};
    int rc, seen = 0;

    if (sc.n >= 3 && memcmp(sc.s, "\xEF\xBB\xBF", 3) == 0)
        sc.i = 3;
    ctr_skip_ws(&sc);
    if (sc.i >= sc.n)
        return ctr_bad(&sc, "empty file");
    ct->top_off = sc.i;
    if (sc.s[sc.i] == '[') {
        ct->bare_array = 1;
        rc = read_events(ct, &sc);
        if (rc != 0)
            return rc;
    } else if (sc.s[sc.i] == '{') {
        sc.i++;
        ctr_skip_ws(&sc);
        if (sc.i < sc.n && sc.s[sc.i] == '}') {
            sc.i++;
        } else {
            for (;;) {
                size_t ka, kb;
                int esc;
                ctr_skip_ws(&sc);
                if (sc.i >= sc.n || sc.s[sc.i] != '"')
                    return ctr_bad(&sc, "expected object key");
                ka = sc.i;
                rc = ctr_skip_string(&sc, &esc);
                if (rc != 0)
                    return rc;
                kb = sc.i;
                ctr_skip_ws(&sc);
                if (sc.i >= sc.n || sc.s[sc.i] != ':')
                    return ctr_bad(&sc, "expected ':'");
                sc.i++;
                ctr_skip_ws(&sc);
                if (!esc && ctr_key_is(&sc, ka, kb, "traceEvents") && !seen) {
                    seen = 1;
                    rc = read_events(ct, &sc);
                } else {
                    rc = ctr_json_skip(&sc);
                }
                if (rc != 0)
                    return rc;
                ctr_skip_ws(&sc);
                if (sc.i < sc.n && sc.s[sc.i] == ',') {
                    sc.i++;
                    continue;
                }
                if (sc.i < sc.n && sc.s[sc.i] == '}') {
                    sc.i++;
                    break;
                }
                return ctr_bad(&sc, "expected ',' or '}'");
            }
        }
    } else {
        return ctr_bad(&sc, "not a JSON object or array");
    }
    ctr_skip_ws(&sc);
    if (sc.i < sc.n && sc.s[sc.i] != 0)
        return ctr_bad(&sc, "trailing data after the document");
    return 0;
}
