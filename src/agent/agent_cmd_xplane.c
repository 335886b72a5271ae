/*
 * agent_cmd_xplane.c - the event commands of XProf's agent CLI:
 * list_xplane_events, aggregate_xplane_events and get_xspace_proto, over
 * every *.xplane.pb of the run as XProf's xplane_tools.py walks them
 * (planes, lines and events in file order; times as its profile_data C
 * API computes them, in doubles).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"
#include "agent_regex.h"
#include "reader/xspace.h"

/* str.isdigit() of an ASCII name. */
static int all_digits(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
    }
    return 1;
}

/* The event's name, or for a numeric one the first non-empty msg /
 * message / annotation / label stat of its own (into buf). */
static const char *event_name(const struct xp_plane *p, const struct xp_line *l,
                              const struct xp_event *e, char *buf, size_t n)
{
    const char *name = p->emeta[e->meta].name;
    struct xp_stat_iter it;
    struct xp_stat st;

    if (!all_digits(name))
        return name;
    xp_stat_iter_init(&it, p, l, e);
    while (xp_stat_next(&it, &st) == 1) {
        const char *sn = xp_stat_name(p, &st);
        if (sn == NULL || (strcmp(sn, "msg") != 0 && strcmp(sn, "message") != 0 &&
                           strcmp(sn, "annotation") != 0 && strcmp(sn, "label") != 0))
            continue;
        switch (st.kind) {
        case XP_STAT_STR:
        case XP_STAT_REF:
            if (st.len == 0)
                continue;
            snprintf(buf, n, "%.*s", (int)st.len, st.str);
            return buf;
        case XP_STAT_BYTES:
            snprintf(buf, n, "<bytes>");
            return buf;
        case XP_STAT_INT:
            snprintf(buf, n, "%lld", (long long)st.v.i);
            return buf;
        case XP_STAT_UINT:
            snprintf(buf, n, "%llu", (unsigned long long)st.v.u);
            return buf;
        case XP_STAT_DOUBLE:
            snprintf(buf, n, "%f", st.v.d);
            return buf;
        default:
            continue;
        }
    }
    return name;
}

/* int(start_ns * 1000), start_ns = line ns + offset_ps / 1000.0. */
static long long start_ps(const struct xspace *xs, const struct xp_line *l,
                          const struct xp_event *e)
{
    double ns = (double)(l->timestamp_ns + xs->time_shift_ns) + (double)e->offset_ps / 1000.0;
    return (long long)(ns * 1000.0);
}

static long long duration_ps(const struct xp_event *e)
{
    return (long long)(((double)e->duration_ps / 1000.0) * 1000.0);
}

/* Compile both regex flags; a bad one answers XProf's text. 0, 1 (the
 * answer is set), or an AGENT_E_* code. */
static int compile_both(struct agent_ctx *ctx, const char *what, struct agent_regex *pr,
                        struct agent_regex *er)
{
    const char *plane = agent_str(ctx, "plane_regex", ".*");
    const char *event = agent_str(ctx, "event_regex", ".*");
    char msg[512], text[1200];
    int rc;

    memset(pr, 0, sizeof(*pr));
    memset(er, 0, sizeof(*er));
    rc = agent_regex_compile(pr, plane ? plane : "None", msg, sizeof(msg));
    if (rc == 0) {
        rc = agent_regex_compile(er, event ? event : "None", msg, sizeof(msg));
        if (rc != 0)
            agent_regex_free(pr);
    }
    if (rc == -ENOMEM)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    if (rc == 1) {
        char repr[1100];
        py_str_repr(msg, repr, sizeof(repr));
        snprintf(text, sizeof(text), "Error %s XPlane events: error(%s)", what, repr);
        return agent_answer_text(ctx, text) == 0 ? 1 : AGENT_E_INTERNAL;
    }
    if (rc == 2)
        return agent_fail(ctx, AGENT_E_VALUE, "%s", msg);
    return 0;
}

int agent_list_xplane_events(struct agent_ctx *ctx)
{
    struct agent_regex pr, er;
    long long max_events, offset, t0 = 0, t1 = 0, matched = 0, skipped = 0, returned = 0;
    int has_t0 = 0, has_t1 = 0, f, rc;
    const struct pyval *v;
    cJSON *out, *events;
    char buf[1024];

    if ((rc = agent_int(ctx, "max_events", 100, &max_events)) != 0 ||
        (rc = agent_int(ctx, "offset", 0, &offset)) != 0)
        return rc;
    v = agent_arg(ctx->args, "start_time_ps");
    if (v != NULL && v->kind != PY_NONE) {
        if ((rc = agent_int(ctx, "start_time_ps", 0, &t0)) != 0)
            return rc;
        has_t0 = 1;
    }
    v = agent_arg(ctx->args, "end_time_ps");
    if (v != NULL && v->kind != PY_NONE) {
        if ((rc = agent_int(ctx, "end_time_ps", 0, &t1)) != 0)
            return rc;
        has_t1 = 1;
    }
    rc = compile_both(ctx, "listing", &pr, &er);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    out = cJSON_CreateObject();
    events = cJSON_CreateArray();
    for (f = 0; f < ctx->nxplanes && rc == 0; f++) {
        struct xspace *xs;
        uint32_t p, l, i;
        rc = agent_open_xspace(ctx, ctx->xplanes[f], &xs);
        if (rc != 0)
            break;
        for (p = 0; p < xs->nplanes; p++) {
            const struct xp_plane *pl = &xs->planes[p];
            if (!agent_regex_search(&pr, pl->name))
                continue;
            for (l = 0; l < pl->nlines; l++) {
                const struct xp_line *ln = &pl->lines[l];
                for (i = 0; i < ln->nevents; i++) {
                    const struct xp_event *e = &ln->events[i];
                    long long s = start_ps(xs, ln, e), d = duration_ps(e);
                    const char *name;
                    cJSON *ev;
                    if (has_t0 && s < t0)
                        continue;
                    if (has_t1 && s + d > t1)
                        continue;
                    name = event_name(pl, ln, e, buf, sizeof(buf));
                    if (!agent_regex_search(&er, name))
                        continue;
                    matched++;
                    if (skipped < offset) {
                        skipped++;
                        continue;
                    }
                    if (max_events > 0 && returned >= max_events)
                        continue;
                    ev = cJSON_CreateObject();
                    pyj_add_str(ev, "plane", pl->name);
                    pyj_add_str(ev, "line_id", ln->name);
                    pyj_add_str(ev, "event", name);
                    pyj_add_int(ev, "offset_ps", (double)s);
                    pyj_add_int(ev, "duration_ps", (double)d);
                    cJSON_AddItemToArray(events, ev);
                    returned++;
                }
            }
        }
        xspace_close(xs);
    }
    agent_regex_free(&pr);
    agent_regex_free(&er);
    if (rc != 0) {
        cJSON_Delete(out);
        cJSON_Delete(events);
        return rc;
    }
    pyj_set(out, "events", events);
    pyj_add_int(out, "returned", (double)returned);
    pyj_add_int(out, "total_matched", (double)matched);
    pyj_add_bool(out, "truncated", matched > returned + offset);
    return agent_answer_json(ctx, out, 2);
}

/* Durations of one event name. */
struct agg {
    char *name;
    long long count, total, min, max;
    __int128 sumsq;
    long seq;
};

struct agg_table {
    struct agg *v;
    long n, cap;
};

static struct agg *agg_find(struct agg_table *t, const char *name)
{
    long i;

    /* linear from the end: few distinct names in practice; a hash would
     * be the next step for profiles with very many */
    for (i = t->n - 1; i >= 0; i--) {
        if (strcmp(t->v[i].name, name) == 0)
            return &t->v[i];
    }
    if (t->n == t->cap) {
        long cap = t->cap ? t->cap * 2 : 64;
        struct agg *p = realloc(t->v, (size_t)cap * sizeof(*p));
        if (p == NULL)
            return NULL;
        t->v = p;
        t->cap = cap;
    }
    memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
    t->v[t->n].name = strdup(name);
    if (t->v[t->n].name == NULL)
        return NULL;
    t->v[t->n].seq = t->n;
    return &t->v[t->n++];
}

static int by_total(const void *a, const void *b)
{
    const struct agg *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* statistics.stdev of the durations: sqrt((n*S2 - S1^2) / (n*(n-1))). */
static double stdev_of(const struct agg *a, const __int128 *sum)
{
    __int128 n = a->count;
    __int128 num = n * a->sumsq - (*sum) * (*sum);
    long double var = (long double)num / ((long double)n * (long double)(n - 1));

    return (double)sqrtl(var);
}

int agent_aggregate_xplane_events(struct agent_ctx *ctx)
{
    const long long max_scan = 5000000;
    struct agent_regex pr, er;
    struct agg_table t = {0};
    long long scanned = 0;
    int f, rc, stop = 0;
    long i;
    cJSON *out, *list;
    char buf[1024];

    rc = compile_both(ctx, "aggregating", &pr, &er);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    for (f = 0; f < ctx->nxplanes && rc == 0 && !stop; f++) {
        struct xspace *xs;
        uint32_t p, l, k;
        rc = agent_open_xspace(ctx, ctx->xplanes[f], &xs);
        if (rc != 0)
            break;
        for (p = 0; p < xs->nplanes && !stop && rc == 0; p++) {
            const struct xp_plane *pl = &xs->planes[p];
            if (!agent_regex_search(&pr, pl->name))
                continue;
            for (l = 0; l < pl->nlines && !stop && rc == 0; l++) {
                const struct xp_line *ln = &pl->lines[l];
                for (k = 0; k < ln->nevents; k++) {
                    const struct xp_event *e = &ln->events[k];
                    const char *name = event_name(pl, ln, e, buf, sizeof(buf));
                    if (agent_regex_search(&er, name)) {
                        struct agg *a = agg_find(&t, name);
                        long long d = duration_ps(e);
                        if (a == NULL) {
                            rc = agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
                            break;
                        }
                        if (a->count == 0 || d < a->min)
                            a->min = d;
                        if (a->count == 0 || d > a->max)
                            a->max = d;
                        a->count++;
                        a->total += d;
                        a->sumsq += (__int128)d * d;
                    }
                    scanned++;
                    if (scanned > max_scan) {
                        stop = 1;
                        break;
                    }
                }
            }
        }
        xspace_close(xs);
    }
    agent_regex_free(&pr);
    agent_regex_free(&er);
    if (rc == 0) {
        if (t.n > 0)
            qsort(t.v, (size_t)t.n, sizeof(*t.v), by_total);
        out = cJSON_CreateObject();
        list = cJSON_CreateArray();
        for (i = 0; i < t.n; i++) {
            struct agg *a = &t.v[i];
            __int128 sum = a->total;
            cJSON *o = cJSON_CreateObject();
            pyj_add_str(o, "event", a->name);
            pyj_add_int(o, "count", (double)a->count);
            pyj_add_int(o, "total_duration_ps", (double)a->total);
            pyj_add_float(o, "avg_duration_ps", (double)a->total / (double)a->count);
            pyj_add_int(o, "min_duration_ps", (double)a->min);
            pyj_add_int(o, "max_duration_ps", (double)a->max);
            pyj_add_float(o, "std_dev_ps", a->count > 1 ? stdev_of(a, &sum) : 0.0);
            cJSON_AddItemToArray(list, o);
        }
        pyj_set(out, "aggregates", list);
        pyj_add_int(out, "returned", (double)t.n);
        pyj_add_int(out, "total_matched", (double)t.n);
        pyj_add_int(out, "events_scanned", (double)scanned);
        pyj_add_bool(out, "truncated", scanned > max_scan);
        rc = agent_answer_json(ctx, out, 2);
    }
    for (i = 0; i < t.n; i++)
        free(t.v[i].name);
    free(t.v);
    return rc;
}

static int read_file(struct agent_ctx *ctx, const char *path, char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat st;

    if (f == NULL || fstat(fileno(f), &st) != 0) {
        if (f)
            fclose(f);
        return agent_fail(ctx, AGENT_E_PATH, "[Errno %d] %s: '%s'", errno, strerror(errno), path);
    }
    *data = malloc((size_t)st.st_size + 1);
    if (*data == NULL || fread(*data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(*data);
        fclose(f);
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: read failed", path);
    }
    fclose(f);
    *len = (size_t)st.st_size;
    return 0;
}

static int write_file(struct agent_ctx *ctx, const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    if (f == NULL)
        return agent_fail(ctx, AGENT_E_PATH, "[Errno %d] %s: '%s'", errno, strerror(errno), path);
    if (fwrite(data, 1, len, f) != len || fclose(f) != 0)
        return agent_fail(ctx, AGENT_E_INTERNAL, "%s: write failed", path);
    return 0;
}

int agent_get_xspace_proto(struct agent_ctx *ctx)
{
    const char *output_path = agent_str(ctx, "output_path", NULL);
    char *data = NULL, path[4096], safe[1024];
    size_t len = 0, i;
    int rc;

    if (agent_bool(ctx, "as_text", 0))
        return agent_fail(
            ctx, AGENT_E_INTERNAL,
            "as_text=True is not supported in OSS because xplane_pb2 is not exposed.");
    if (ctx->nxplanes != 1)
        return agent_fail(ctx, AGENT_E_INTERNAL,
                          "Multi-host XSpace serialization is not supported in OSS because "
                          "xplane_pb2 is not exposed.");
    rc = read_file(ctx, ctx->xplanes[0], &data, &len);
    if (rc != 0)
        return rc;
    if (output_path != NULL && output_path[0] != '\0') {
        rc = write_file(ctx, output_path, data, len);
        free(data);
        return rc != 0 ? rc : agent_answer_text(ctx, output_path);
    }
    if (len > (size_t)10 * 1024 * 1024) {
        cJSON *o = cJSON_CreateObject();
        for (i = 0; ctx->session_id[i] && i + 1 < sizeof(safe); i++) {
            char c = ctx->session_id[i];
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == '-';
            safe[i] = ok ? c : '_';
        }
        safe[i] = '\0';
        snprintf(path, sizeof(path), "/tmp/xspace_%s.pb", safe);
        rc = write_file(ctx, path, data, len);
        free(data);
        if (rc != 0) {
            cJSON_Delete(o);
            return rc;
        }
        pyj_add_str(o, "status", "SAVED_TO_FILE");
        pyj_add_int(o, "size_bytes", (double)len);
        pyj_add_float(o, "size_mib", py_round((double)len / (1024.0 * 1024.0), 2));
        pyj_add_str(o, "file_path", path);
        pyj_add_str(o, "message",
                    "XSpace payload exceeded 10 MB. Saved to file to prevent terminal buffer "
                    "overflow. Specify --output_path to customize.");
        return agent_answer_json(ctx, o, 2);
    }
    free(ctx->out);
    ctx->out = data;
    ctx->out_len = len;
    ctx->out_is_bytes = 1;
    return 0;
}
