/*
 * agent_cmd_kernels.c - get_kernel_stats and get_avg_step_time of XProf's
 * agent CLI, from the events of the /device: planes as XProf's
 * kernel_stats_tools.py walks them (its profile_data API: times in double
 * ns, stats as strings): per kernel name its total, count and mean, the
 * union of their intervals; the mean of the "XLA Modules" events.
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
#include "agent_session.h"
#include "reader/xspace.h"

/* One kernel name: its durations in us, in event order. */
struct kernel {
    char *name;
    double *dur_us;
    long n, cap;
};

struct kernels {
    struct kernel *v;
    long n, cap;
    long long *iv; /* [start_ns, end_ns) pairs for the union */
    long niv, capiv;
    double *steps_us; /* TPU XLA Modules events (include_summary) */
    long nsteps, capsteps;
    int failed;
};

static int grow(void **p, long *cap, long need, size_t size)
{
    long c = *cap ? *cap : 16;
    void *q;

    if (need <= *cap)
        return 0;
    while (c < need)
        c *= 2;
    q = realloc(*p, (size_t)c * size);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static void kernels_free(struct kernels *k)
{
    long i;

    for (i = 0; i < k->n; i++) {
        free(k->v[i].name);
        free(k->v[i].dur_us);
    }
    free(k->v);
    free(k->iv);
    free(k->steps_us);
}

/* The traces iter_planes reads for source: a path (a directory: every
 * trace under it; a file: itself), else the run of a session id. 0, or 1
 * with the Python exception's repr in msg. */
static int source_traces(struct agent_ctx *ctx, const char *source, char ***paths, int *n,
                         char *msg, size_t len)
{
    char *sp = agent_expand_user(source), *run, inner[1100], repr[1200];
    size_t sl = strlen(source);
    struct stat st;
    int rc;

    *paths = NULL;
    *n = 0;
    if (sp == NULL)
        return -ENOMEM;
    if (stat(sp, &st) == 0 || source[0] == '/' ||
        (sl >= 10 && strcmp(source + sl - 10, ".xplane.pb") == 0) ||
        (sl >= 10 && strcmp(source + sl - 10, ".xspace.pb") == 0)) {
        if (stat(sp, &st) != 0) {
            py_str_repr(source, repr, sizeof(repr));
            snprintf(inner, sizeof(inner), "Path does not exist: %s", repr);
        } else if (S_ISDIR(st.st_mode)) {
            if (agent_find_traces(sp, paths, n) != 0) {
                free(sp);
                return -ENOMEM;
            }
            free(sp);
            if (*n > 0)
                return 0;
            py_str_repr(source, repr, sizeof(repr));
            snprintf(inner, sizeof(inner),
                     "No .xplane.pb or .xspace.pb files found in directory: %s", repr);
            py_str_repr(inner, repr, sizeof(repr));
            snprintf(msg, len, "FileNotFoundError(%s)", repr);
            return 1;
        } else {
            *paths = malloc(sizeof(**paths));
            if (*paths == NULL || ((*paths)[0] = sp) == NULL) {
                free(*paths);
                *paths = NULL;
                free(sp);
                return -ENOMEM;
            }
            *n = 1;
            return 0;
        }
        free(sp);
        py_str_repr(inner, repr, sizeof(repr));
        snprintf(msg, len, "FileNotFoundError(%s)", repr);
        return 1;
    }
    free(sp);
    rc = agent_resolve_run(source, ctx->logdir, &run, inner, sizeof(inner));
    if (rc == AGENT_E_INTERNAL)
        return -ENOMEM;
    if (rc == 0) {
        rc = agent_find_traces(run, paths, n);
        if (rc != 0) {
            free(run);
            return -ENOMEM;
        }
        if (*n > 0) {
            free(run);
            return 0;
        }
        snprintf(inner, sizeof(inner), "No .xplane.pb or .xspace.pb files found in %s", run);
        free(run);
        rc = AGENT_E_PATH;
    }
    py_str_repr(inner, repr, sizeof(repr));
    snprintf(msg, len, "%s(%s)", rc == AGENT_E_PATH ? "FileNotFoundError" : "ValueError", repr);
    return 1;
}

static void free_paths(char **paths, int n)
{
    int i;

    for (i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static int upper_has(const char *s, const char *word)
{
    char up[512];
    size_t i;

    for (i = 0; s[i] && i + 1 < sizeof(up); i++)
        up[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    up[i] = '\0';
    return strstr(up, word) != NULL;
}

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

/* name_info: the tf_op_name stat, else for a numeric name a msg /
 * message / annotation / label stat, else the name. */
static const char *kernel_name_of(const struct xp_plane *p, const struct xp_line *l,
                                  const struct xp_event *e, char *buf, size_t n)
{
    const char *name = p->emeta[e->meta].name;
    struct xp_stat_iter it;
    struct xp_stat st;
    int pass;

    for (pass = 0; pass < 2; pass++) {
        if (pass == 1 && !all_digits(name))
            break;
        xp_stat_iter_init(&it, p, l, e);
        while (xp_stat_next(&it, &st) == 1) {
            const char *sn = xp_stat_name(p, &st);
            const char *v;
            if (sn == NULL)
                continue;
            if (pass == 0 && strcmp(sn, "tf_op_name") != 0)
                continue;
            if (pass == 1 && strcmp(sn, "msg") != 0 && strcmp(sn, "message") != 0 &&
                strcmp(sn, "annotation") != 0 && strcmp(sn, "label") != 0)
                continue;
            v = agent_stat_text(&st, buf, n);
            if (v[0] == '\0')
                continue;
            if (v != buf)
                snprintf(buf, n, "%s", v);
            return buf;
        }
    }
    return name;
}

static struct kernel *kernel_of(struct kernels *k, const char *name)
{
    long i;

    for (i = k->n - 1; i >= 0; i--) {
        if (strcmp(k->v[i].name, name) == 0)
            return &k->v[i];
    }
    if (grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)) != 0)
        return NULL;
    memset(&k->v[k->n], 0, sizeof(k->v[k->n]));
    k->v[k->n].name = strdup(name);
    if (k->v[k->n].name == NULL)
        return NULL;
    return &k->v[k->n++];
}

/* The trace_matchers: Fire's value iterated as Python iterates it (a
 * string: its characters; a list or tuple literal: its strings). */
struct matchers {
    char *items[64];
    int n;
};

static void matchers_free(struct matchers *m)
{
    int i;

    for (i = 0; i < m->n; i++)
        free(m->items[i]);
    m->n = 0;
}

static int matchers_of(struct agent_ctx *ctx, struct matchers *m)
{
    const struct pyval *v = agent_arg(ctx->args, "trace_matchers");
    const char *s;

    m->n = 0;
    if (v == NULL || v->kind == PY_NONE)
        return 0;
    if (v->kind == PY_STR) {
        for (s = v->text; *s && m->n < 64; s++) {
            char one[2] = {*s, '\0'};
            if ((m->items[m->n++] = strdup(one)) == NULL)
                return -ENOMEM;
        }
        return 0;
    }
    if (v->kind != PY_OTHER || v->text == NULL)
        return agent_fail(ctx, AGENT_E_VALUE, "'%s' object is not iterable", pyval_type(v));
    /* a literal list or tuple of quoted strings */
    for (s = v->text; *s && m->n < 64; s++) {
        const char *end;
        if (*s != '\'' && *s != '"')
            continue;
        end = strchr(s + 1, *s);
        if (end == NULL)
            break;
        m->items[m->n] = strndup(s + 1, (size_t)(end - s - 1));
        if (m->items[m->n++] == NULL)
            return -ENOMEM;
        s = end;
    }
    return 0;
}

/* _matches: re.search, or the literal substring. -1: a pattern we cannot
 * match as Python would (msg set). */
static int matches(struct agent_ctx *ctx, const char *pattern, const char *text)
{
    struct agent_regex re;
    char msg[512];
    int rc = agent_regex_compile(&re, pattern, msg, sizeof(msg)), hit = 0;

    if (rc == 0) {
        hit = agent_regex_search(&re, text);
        agent_regex_free(&re);
    } else if (rc == 2 || rc == -ENOMEM) {
        agent_fail(ctx, rc == 2 ? AGENT_E_VALUE : AGENT_E_INTERNAL, "%s", msg);
        return -1;
    }
    return hit || strstr(text, pattern) != NULL;
}

struct walk {
    const char *kernel_name;  /* filter, or NULL */
    struct matchers matchers; /* filters, or none */
    int include_summary;
};

static int walk_line(struct agent_ctx *ctx, struct kernels *k, const struct walk *w,
                     const struct xspace *xs, const struct xp_plane *p, const struct xp_line *l)
{
    char buf[4096];
    uint32_t i;
    int m;

    for (i = 0; i < l->nevents; i++) {
        const struct xp_event *e = &l->events[i];
        const char *name = kernel_name_of(p, l, e, buf, sizeof(buf));
        double dur_ns = (double)e->duration_ps / 1000.0;
        struct kernel *kn;
        if (w->kernel_name != NULL && strcmp(name, w->kernel_name) != 0)
            continue;
        if (w->matchers.n > 0) {
            int any = 0;
            for (m = 0; m < w->matchers.n && !any; m++) {
                any = matches(ctx, w->matchers.items[m], name);
                if (any < 0)
                    return -1;
            }
            if (!any)
                continue;
        }
        kn = kernel_of(k, name);
        if (kn == NULL || grow((void **)&kn->dur_us, &kn->cap, kn->n + 1, sizeof(double)) != 0)
            return -ENOMEM;
        kn->dur_us[kn->n++] = dur_ns / 1000.0;
        if (w->include_summary) {
            double start_ns =
                (double)(l->timestamp_ns + xs->time_shift_ns) + (double)e->offset_ps / 1000.0;
            if (grow((void **)&k->iv, &k->capiv, k->niv + 2, sizeof(long long)) != 0)
                return -ENOMEM;
            k->iv[k->niv] = (long long)start_ns;
            k->iv[k->niv + 1] = k->iv[k->niv] + (long long)dur_ns;
            k->niv += 2;
        }
    }
    return 0;
}

static const char *const line_include[] = {"XLA OPS", "PALLAS", "LLO OPS", NULL};
static const char *const line_exclude[] = {"COUNTER",   "MODULES", "OVERLAY",
                                           "SYNC FLAG", "SENSOR",  NULL};

static int any_word(const char *name, const char *const *words)
{
    int i;

    for (i = 0; words[i] != NULL; i++) {
        if (upper_has(name, words[i]))
            return 1;
    }
    return 0;
}

static int walk_file(struct agent_ctx *ctx, struct kernels *k, const struct walk *w,
                     const char *path)
{
    struct xspace *xs;
    uint32_t p, l, i;
    int rc = agent_open_xspace(ctx, path, &xs);

    if (rc != 0)
        return rc;
    for (p = 0; p < xs->nplanes && rc == 0; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int is_tpu = upper_has(pl->name, "TPU");
        if (strncmp(pl->name, "/device:", 8) != 0)
            continue;
        for (l = 0; l < pl->nlines && rc == 0; l++) {
            const struct xp_line *ln = &pl->lines[l];
            if (is_tpu && !any_word(ln->name, line_include)) {
                if (w->include_summary && upper_has(ln->name, "XLA MODULES")) {
                    for (i = 0; i < ln->nevents; i++) {
                        if (grow((void **)&k->steps_us, &k->capsteps, k->nsteps + 1,
                                 sizeof(double)) != 0) {
                            rc = -ENOMEM;
                            break;
                        }
                        k->steps_us[k->nsteps++] =
                            (double)ln->events[i].duration_ps / 1000.0 / 1000.0;
                    }
                }
                continue;
            }
            if (!is_tpu && any_word(ln->name, line_exclude))
                continue;
            rc = walk_line(ctx, k, w, xs, pl, ln);
        }
    }
    xspace_close(xs);
    if (rc == -ENOMEM)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    return rc < 0 ? ctx->msg[0] ? AGENT_E_VALUE : AGENT_E_INTERNAL : rc;
}

static int cmp_ll(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* compute_disjoint_interval_union_ns */
static long long union_ns(long long *iv, long n)
{
    long long total = 0, cs, ce;
    long i;

    if (n == 0)
        return 0;
    qsort(iv, (size_t)n, 2 * sizeof(long long), cmp_ll);
    cs = iv[0];
    ce = iv[1];
    for (i = 1; i < n; i++) {
        long long s = iv[2 * i], e = iv[2 * i + 1];
        if (s <= ce) {
            ce = e > ce ? e : ce;
        } else {
            total += ce - cs;
            cs = s;
            ce = e;
        }
    }
    return total + (ce - cs);
}

struct record {
    cJSON *item;
    double total;
    long seq;
};

static int by_total(const void *a, const void *b)
{
    const struct record *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* name.strip().split(":")[0].strip().split()[0]; 1 when that raises
 * IndexError (nothing before the first colon). */
static int canonical_of(const char *name, char *buf, size_t n)
{
    const char *ws = " \t\n\r\f\v";
    const char *s = name + strspn(name, ws);
    size_t len = strcspn(s, ":"), word;

    buf[0] = '\0';
    if (name[0] == '\0')
        return 0;
    if (len == 0)
        return 1;
    word = strcspn(s, ws);
    snprintf(buf, n, "%.*s", (int)(word < len ? word : len), s);
    return 0;
}

static void markdown(FILE *f, cJSON *records, const char *kernel_name)
{
    const cJSON *r;

    if (kernel_name != NULL)
        fprintf(f, "# Kernel Stats for `%s`\n", kernel_name);
    else
        fprintf(f, "# Top Kernels by Duration\n");
    fprintf(f, "\n| Kernel | Total Duration (us) | Execution Count | Avg Duration (us) |\n");
    fprintf(f, "| :--- | ---: | ---: | ---: |");
    cJSON_ArrayForEach(r, records)
    {
        fprintf(f, "\n| `%s` | %.2f | %.0f | %.2f |",
                cJSON_GetObjectItemCaseSensitive(r, "kernel_name")->valuestring,
                agent_safe_float(cJSON_GetObjectItemCaseSensitive(r, "total_duration_us"), 0),
                cJSON_GetObjectItemCaseSensitive(r, "execution_count")->valuedouble,
                agent_safe_float(cJSON_GetObjectItemCaseSensitive(r, "avg_duration_us"), 0));
    }
}

static int answer_text_stream(struct agent_ctx *ctx, cJSON *records, const char *kernel_name)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int rc;

    if (f == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    markdown(f, records, kernel_name);
    if (fclose(f) != 0 || text == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    rc = agent_answer_text(ctx, text);
    free(text);
    return rc;
}

/* XProf's answer for an exception inside get_kernel_stats. */
static int kernel_error(struct agent_ctx *ctx, const char *fmt_name, const char *repr)
{
    char msg[1400];

    snprintf(msg, sizeof(msg), "Failed to get kernel stats: %s", repr);
    if (strcmp(fmt_name, "markdown") == 0) {
        char text[1500];
        snprintf(text, sizeof(text), "# Error\n%s\n", msg);
        return agent_answer_text(ctx, text);
    }
    return agent_answer_error(ctx, "%s", msg);
}

static int kernel_answer(struct agent_ctx *ctx, struct kernels *k, const char *source,
                         const char *kernel_name, long long limit, const char *fmt,
                         int include_summary)
{
    struct record *recs;
    cJSON *list, *summary, *steps, *stats;
    char canon[4096], msg[2400];
    long i, keep;

    if (k->n == 0) {
        snprintf(msg, sizeof(msg), "No kernel stats found for session %s%s%s", source,
                 kernel_name ? " and kernel " : "", kernel_name ? kernel_name : "");
        if (strcmp(fmt, "markdown") == 0) {
            char text[2500];
            snprintf(text, sizeof(text), "# Info\n%s\n", msg);
            return agent_answer_text(ctx, text);
        }
        summary = cJSON_CreateObject();
        pyj_add_str(summary, "info", msg);
        return agent_answer_json(ctx, summary, 2);
    }
    recs = calloc((size_t)k->n, sizeof(*recs));
    if (recs == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    for (i = 0; i < k->n; i++) {
        const struct kernel *kn = &k->v[i];
        double total = 0;
        long j;
        cJSON *r = cJSON_CreateObject();
        for (j = 0; j < kn->n; j++)
            total += kn->dur_us[j];
        if (canonical_of(kn->name, canon, sizeof(canon)) != 0) {
            long m;
            cJSON_Delete(r);
            for (m = 0; m < i; m++)
                cJSON_Delete(recs[m].item);
            free(recs);
            return kernel_error(ctx, fmt, "IndexError('list index out of range')");
        }
        pyj_add_str(r, "kernel_name", kn->name);
        pyj_add_str(r, "canonical_name", canon);
        pyj_add_str(r, "short_name", canon);
        pyj_add_str(r, "hlo_op_name", canon);
        pyj_add_str(r, "raw_name", kn->name);
        pyj_add_float(r, "total_duration_us", py_round(total, 4));
        pyj_add_int(r, "execution_count", (double)kn->n);
        pyj_add_float(r, "avg_duration_us", py_round(total / (double)kn->n, 4));
        recs[i].item = r;
        recs[i].total = py_round(total, 4);
        recs[i].seq = i;
    }
    qsort(recs, (size_t)k->n, sizeof(*recs), by_total);
    keep = kernel_name == NULL && limit > 0 ? agent_py_slice(k->n, limit) : k->n;
    list = cJSON_CreateArray();
    for (i = 0; i < k->n; i++) {
        if (i < keep)
            cJSON_AddItemToArray(list, recs[i].item);
        else
            cJSON_Delete(recs[i].item);
    }
    free(recs);
    if (!include_summary) {
        if (strcmp(fmt, "markdown") == 0) {
            int rc = answer_text_stream(ctx, list, kernel_name);
            cJSON_Delete(list);
            return rc;
        }
        return agent_answer_json(ctx, list, 2);
    }
    {
        long long total_ns = union_ns(k->iv, k->niv / 2);
        double total_us = (double)total_ns / 1000.0, mean_us = total_us, std_us = 0, sum = 0;
        summary = cJSON_CreateObject();
        steps = cJSON_CreateArray();
        stats = cJSON_CreateObject();
        for (i = 0; i < k->nsteps; i++) {
            sum += k->steps_us[i];
            cJSON_AddItemToArray(steps, pyj_float(k->steps_us[i]));
        }
        if (k->nsteps > 0)
            mean_us = sum / (double)k->nsteps;
        if (k->nsteps > 1) {
            double ss = 0, m = sum / (double)k->nsteps;
            for (i = 0; i < k->nsteps; i++)
                ss += (k->steps_us[i] - m) * (k->steps_us[i] - m);
            std_us = sqrt(ss / (double)(k->nsteps - 1));
        }
        pyj_add_int(summary, "total_device_duration_ns", (double)total_ns);
        pyj_add_float(summary, "total_device_duration_us", total_us);
        pyj_add_float(summary, "total_device_duration_ms", (double)total_ns / 1000000.0);
        pyj_set(summary, "kernel_records", list);
        pyj_set(summary, "step_durations_us", steps);
        pyj_add_float(stats, "mean_us", py_round(mean_us, 4));
        pyj_add_float(stats, "std_us", py_round(std_us, 4));
        pyj_set(summary, "stats", stats);
    }
    return agent_answer_json(ctx, summary, 2);
}

int agent_get_kernel_stats(struct agent_ctx *ctx)
{
    struct kernels k;
    struct walk w;
    const char *source = agent_str(ctx, "source", NULL);
    const char *fmt = agent_str(ctx, "output_format", "json");
    char msg[1400];
    char **paths;
    long long limit;
    int n, i, rc;

    if (source == NULL || source[0] == '\0')
        source = agent_str(ctx, "session_id", NULL);
    if (source == NULL || source[0] == '\0')
        source = ctx->session_id; /* the mount's run */
    if (source == NULL || source[0] == '\0')
        return agent_fail(ctx, AGENT_E_VALUE, "Must provide either 'source' or 'session_id'.");
    if ((rc = agent_int(ctx, "limit", 10, &limit)) != 0)
        return rc;
    memset(&w, 0, sizeof(w));
    w.kernel_name = agent_str(ctx, "kernel_name", NULL);
    if (w.kernel_name != NULL && w.kernel_name[0] == '\0')
        w.kernel_name = NULL;
    w.include_summary = agent_bool(ctx, "include_summary", 0);
    if (fmt == NULL)
        fmt = "None";
    if ((rc = matchers_of(ctx, &w.matchers)) != 0) {
        matchers_free(&w.matchers);
        return rc == -ENOMEM ? agent_fail(ctx, AGENT_E_INTERNAL, "out of memory") : rc;
    }
    rc = source_traces(ctx, source, &paths, &n, msg, sizeof(msg));
    if (rc < 0) {
        matchers_free(&w.matchers);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    if (rc == 1) {
        matchers_free(&w.matchers);
        return kernel_error(ctx, fmt, msg);
    }
    memset(&k, 0, sizeof(k));
    for (i = 0; i < n && rc == 0; i++)
        rc = walk_file(ctx, &k, &w, paths[i]);
    free_paths(paths, n);
    matchers_free(&w.matchers);
    if (rc == 0)
        rc = kernel_answer(ctx, &k, source, w.kernel_name, limit, fmt, w.include_summary);
    kernels_free(&k);
    return rc;
}

int agent_get_avg_step_time(struct agent_ctx *ctx)
{
    const char *source = agent_str(ctx, "source", NULL);
    const char *func = agent_str(ctx, "func_name", NULL);
    char msg[1400], **paths;
    double sum = 0;
    long count = 0;
    int n, i, rc;
    cJSON *out;

    if (source == NULL)
        source = ctx->session_id; /* the mount's run */
    if (source == NULL)
        source = "None";
    rc = source_traces(ctx, source, &paths, &n, msg, sizeof(msg));
    if (rc < 0)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    if (rc == 1)
        return agent_answer_error(ctx, "Failed to get average step time: %s", msg);
    for (i = 0; i < n && rc == 0; i++) {
        struct xspace *xs;
        uint32_t p, l, e;
        rc = agent_open_xspace(ctx, paths[i], &xs);
        if (rc != 0)
            break;
        for (p = 0; p < xs->nplanes; p++) {
            const struct xp_plane *pl = &xs->planes[p];
            if (strncmp(pl->name, "/device:", 8) != 0)
                continue;
            for (l = 0; l < pl->nlines; l++) {
                const struct xp_line *ln = &pl->lines[l];
                if (!upper_has(ln->name, "XLA MODULES"))
                    continue;
                for (e = 0; e < ln->nevents; e++) {
                    const char *name = pl->emeta[ln->events[e].meta].name;
                    if (func != NULL && func[0] != '\0' && strstr(name, func) == NULL)
                        continue;
                    sum += (double)ln->events[e].duration_ps / 1000.0 / 1000000.0;
                    count++;
                }
            }
        }
        xspace_close(xs);
    }
    free_paths(paths, n);
    if (rc != 0)
        return rc;
    if (count == 0)
        return agent_answer_error(ctx, "No steps matching func_name '%s' found in %s.",
                                  func ? func : "None", source);
    out = cJSON_CreateObject();
    pyj_add_float(out, "avg_step_time_ms", py_round(sum / (double)count, 4));
    pyj_add_int(out, "step_count", (double)count);
    return agent_answer_json(ctx, out, 2);
}
