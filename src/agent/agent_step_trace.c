/*
 * agent_step_trace.c - get_step_trace's answer (agent_steps.h): per step
 * compute / communication / infeed / outfeed / idle time from
 * pod_viewer.json, else the step table of input_pipeline_analyzer.json,
 * else the averages of overview_page.json, as XProf's
 * get_step_trace_tool.py computes them from the same files.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_pyjson.h"
#include "agent_steps.h"

/* Python's sum() of floats (3.12: compensated, Neumaier). */
struct pysum {
    double s, c;
};

static void pysum_add(struct pysum *p, double x)
{
    double t = p->s + x;

    if (fabs(p->s) >= fabs(x))
        p->c += (p->s - t) + x;
    else
        p->c += (x - t) + p->s;
    p->s = t;
}

static double pysum_get(const struct pysum *p)
{
    return p->c != 0 && isfinite(p->c) ? p->s + p->c : p->s;
}

/* _safe_float of the step tool: float(v) when finite, else 0.0. */
static double finite_float(const cJSON *v)
{
    double d;

    if (cJSON_IsBool(v) || !agent_py_float(v, &d) || !isfinite(d))
        return cJSON_IsTrue(v) ? 1.0 : 0.0;
    return d;
}

static const cJSON *get(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* Python's int() of a str: 1 and *out, or 0 where it raises. */
static int py_int_text(const char *s, long long *out)
{
    char digits[64];
    size_t n = 0;
    int neg = 0;

    while (isspace((unsigned char)*s))
        s++;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!isdigit((unsigned char)*s))
        return 0;
    for (; *s; s++) {
        if (isdigit((unsigned char)*s)) {
            if (n + 1 >= sizeof(digits))
                return 0;
            digits[n++] = *s;
        } else if (*s == '_' && isdigit((unsigned char)s[1]) && n > 0) {
            continue;
        } else {
            break;
        }
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s != '\0')
        return 0;
    digits[n] = '\0';
    *out = strtoll(digits, NULL, 10) * (neg ? -1 : 1);
    return 1;
}

/* int(v) where it succeeds, else v itself (a copy); NULL stays None. */
static cJSON *step_number(const cJSON *v)
{
    long long i;

    if (v == NULL || cJSON_IsNull(v))
        return cJSON_CreateNull();
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        return cJSON_CreateNumber(trunc(v->valuedouble));
    if (cJSON_IsBool(v))
        return cJSON_CreateNumber(cJSON_IsTrue(v));
    if (cJSON_IsString(v) && py_int_text(v->valuestring, &i))
        return cJSON_CreateNumber((double)i);
    return cJSON_Duplicate(v, 1);
}

/* Python's s_num == step_num of a step number and the flag. */
static int step_equal(const cJSON *num, const struct pyval *want)
{
    double w;

    if (cJSON_IsNumber(num)) {
        if (want->kind == PY_INT || want->kind == PY_BOOL)
            w = (double)want->i;
        else if (want->kind == PY_FLOAT)
            w = want->f;
        else
            return 0;
        return num->valuedouble == w;
    }
    if (cJSON_IsString(num))
        return want->kind == PY_STR && strcmp(num->valuestring, want->text) == 0;
    return 0;
}

static double pct(double part, double whole)
{
    return whole > 0 ? py_round(part / whole * 100, 2) : 0.0;
}

/* One step of the breakdown (StepInfo). */
struct step {
    cJSON *num;
    double total, comp, comm, infeed, outfeed, idle;
    double pcts[5];
    char *bottleneck; /* malloc'd */
    int has_comm;     /* communication_breakdown_ms */
    double all_reduce, send, recv;
};

struct steps {
    struct step *v;
    int n, cap;
};

static void steps_free(struct steps *s)
{
    int i;

    for (i = 0; i < s->n; i++) {
        cJSON_Delete(s->v[i].num);
        free(s->v[i].bottleneck);
    }
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static struct step *steps_push(struct steps *s)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        struct step *v = realloc(s->v, (size_t)cap * sizeof(*v));
        if (v == NULL)
            return NULL;
        s->v = v;
        s->cap = cap;
    }
    memset(&s->v[s->n], 0, sizeof(s->v[0]));
    return &s->v[s->n++];
}

/* collections.Counter(names).most_common(1)[0][0]: the most frequent,
 * the first seen among equals; NULL for none. */
static const char *most_common(const char *const *names, int n)
{
    const char *best = NULL;
    int i, j, best_count = 0;

    for (i = 0; i < n; i++) {
        int count = 0, seen = 0;
        for (j = 0; j < i && !seen; j++)
            seen = strcmp(names[j], names[i]) == 0;
        if (seen)
            continue;
        for (j = i; j < n; j++)
            count += strcmp(names[j], names[i]) == 0;
        if (count > best_count) {
            best = names[i];
            best_count = count;
        }
    }
    return best;
}

/* _avg_duration_ms: the mean over cores of a us field, in ms, 4 places. */
static double avg_ms(const cJSON *const *cores, int n, const char *key)
{
    struct pysum s = {0, 0};
    int i;

    for (i = 0; i < n; i++)
        pysum_add(&s, finite_float(get(cores[i], key)));
    return py_round(pysum_get(&s) / n / 1000.0, 4);
}

/* _avg_step_breakdown_ms of one GenericEventType key. */
static double avg_breakdown_ms(const cJSON *const *cores, int n, const char *key)
{
    double total = 0;
    int i;

    for (i = 0; i < n; i++) {
        const cJSON *b = get(cores[i], "stepBreakdownUs");
        if (b == NULL || cJSON_IsNull(b))
            b = get(cores[i], "step_breakdown_us");
        if (cJSON_IsObject(b))
            total += finite_float(get(b, key));
    }
    return py_round(total / n / 1000.0, 4);
}

/* _parse_pod_viewer into *out. 0 or -ENOMEM. */
static int parse_pod_viewer(const cJSON *doc, const struct pyval *want, const char *core,
                            struct steps *out)
{
    const cJSON *map = get(get(doc, "podStatsSequence"), "podStatsMap"), *entry;
    int core_found = 0;

    if (!cJSON_IsArray(map))
        return 0;
    cJSON_ArrayForEach(entry, map)
    {
        const cJSON *cores, *c, *list[256], **stats = list;
        const char *names[256], *b;
        int n = 0, nb = 0, all_zero;
        struct step st;
        cJSON *num;
        if (!cJSON_IsObject(entry))
            continue;
        num = get(entry, "stepNum") ? step_number(get(entry, "stepNum")) : cJSON_CreateNull();
        if (num == NULL)
            return -ENOMEM;
        if (want != NULL && !step_equal(num, want)) {
            cJSON_Delete(num);
            continue;
        }
        cores = get(entry, "podStatsPerCore");
        if (cores != NULL && !cJSON_IsObject(cores)) {
            cJSON_Delete(num);
            continue;
        }
        if (cJSON_GetArraySize(cores) > 256)
            stats = malloc((size_t)cJSON_GetArraySize(cores) * sizeof(*stats));
        if (stats == NULL) {
            cJSON_Delete(num);
            return -ENOMEM;
        }
        cJSON_ArrayForEach(c, cores)
        {
            if (core != NULL && strcmp(c->string, core) != 0)
                continue;
            stats[n++] = c;
            if (core != NULL)
                break;
        }
        if (core != NULL && n > 0)
            core_found = 1;
        if (n == 0) {
            if (stats != list)
                free(stats);
            cJSON_Delete(num);
            continue;
        }
        memset(&st, 0, sizeof(st));
        st.total = avg_ms(stats, n, "totalDurationUs");
        st.comp = avg_breakdown_ms(stats, n, "1");
        st.all_reduce = avg_breakdown_ms(stats, n, "3");
        st.comm = py_round(st.all_reduce + avg_breakdown_ms(stats, n, "2"), 4);
        st.infeed = avg_breakdown_ms(stats, n, "6");
        st.outfeed = avg_breakdown_ms(stats, n, "7");
        all_zero = st.comp == 0 && st.comm == 0 && st.infeed == 0 && st.outfeed == 0;
        if (all_zero) {
            /* the legacy schema: top-level TPU fields */
            st.comp = avg_ms(stats, n, "highFlopsComputeUs");
            st.all_reduce = avg_ms(stats, n, "crsDurationUs");
            st.send = avg_ms(stats, n, "sendDurationUs");
            st.recv = avg_ms(stats, n, "recvDurationUs");
            st.comm = py_round(st.all_reduce + st.send + st.recv, 4);
            st.infeed = avg_ms(stats, n, "hostInfeedDurationUs");
            st.outfeed = avg_ms(stats, n, "hostOutfeedDurationUs");
            all_zero = st.comp == 0 && st.comm == 0 && st.infeed == 0 && st.outfeed == 0;
        }
        if (!all_zero) {
            double rest = st.total - (st.comp + st.comm + st.infeed + st.outfeed);
            int i;
            st.idle = py_round(rest > 0.0 ? rest : 0.0, 4);
            st.pcts[0] = pct(st.comp, st.total);
            st.pcts[1] = pct(st.comm, st.total);
            st.pcts[2] = pct(st.infeed, st.total);
            st.pcts[3] = pct(st.outfeed, st.total);
            st.pcts[4] = pct(st.idle, st.total);
            for (i = 0; i < n && nb < 256; i++) {
                const cJSON *bn = get(stats[i], "bottleneck");
                if (cJSON_IsString(bn) && bn->valuestring[0])
                    names[nb++] = bn->valuestring;
            }
            b = most_common(names, nb);
            if (b == NULL) {
                if (st.pcts[1] > st.pcts[0] && st.pcts[1] > st.pcts[2] && st.pcts[1] > st.pcts[3])
                    b = "Communication";
                else if (st.pcts[2] > st.pcts[0] && st.pcts[2] > st.pcts[3])
                    b = "Input / Infeed";
                else if (st.pcts[3] > st.pcts[0])
                    b = "Output / Outfeed";
                else
                    b = "Compute";
            }
            st.bottleneck = strdup(b);
            st.has_comm = 1;
        }
        if (stats != list)
            free(stats);
        if (all_zero) {
            cJSON_Delete(num);
            continue;
        }
        st.num = num;
        {
            struct step *slot = st.bottleneck ? steps_push(out) : NULL;
            if (slot == NULL) {
                cJSON_Delete(num);
                free(st.bottleneck);
                return -ENOMEM;
            }
            *slot = st;
        }
    }
    if (core != NULL && !core_found)
        steps_free(out);
    return 0;
}

/* The step table's columns, lowercased, by group. */
static const char *const ip_compute[] = {"tccomputetimems", "scv0computetimems",
                                         "bccomputetimems", "devicecomputetimems",
                                         "noninfeedtimems", NULL};
static const char *const ip_comm[] = {"devicetodevicetimems", "devicecollectivestimems", NULL};
static const char *const ip_infeed[] = {"tcinfeedtimems", "scv0infeedtimems", "bcinfeedtimems",
                                        "infeedtimems", NULL};
static const char *const ip_outfeed[] = {"tcoutfeedtimems", "outfeedtimems", NULL};
static const char *const ip_other[] = {"tcidletimems",
                                       "hosttransfertimems",
                                       "hostcomputetimems",
                                       "kernellaunchtimems",
                                       "compiletimems",
                                       "othertimems",
                                       NULL};
static const char *const ip_steptime[] = {"steptimems", NULL};

/* col_map: the lowercased id of each column (the last one of an id
 * wins). */
struct col_map {
    char **ids;
    int n;
};

static int col_index(const struct col_map *m, const char *id)
{
    int i;

    for (i = m->n - 1; i >= 0; i--) {
        if (m->ids[i] != NULL && strcmp(m->ids[i], id) == 0)
            return i;
    }
    return -1;
}

static double sum_cols(const cJSON *cells, const struct col_map *m, const char *const *ids)
{
    double total = 0;
    int i;

    for (i = 0; ids[i] != NULL; i++) {
        int k = col_index(m, ids[i]);
        if (k < 0 || k >= cJSON_GetArraySize(cells))
            continue;
        total += finite_float(get(cJSON_GetArrayItem(cells, k), "v"));
    }
    return total;
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s), *p;

    for (p = d; p != NULL && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

/* A column id as str(col.get("id")) reads it. */
static char *col_id(const cJSON *col)
{
    const cJSON *id = get(col, "id");
    char buf[64];

    if (id == NULL || cJSON_IsNull(id))
        return NULL;
    if (cJSON_IsString(id))
        return lower_dup(id->valuestring);
    if (cJSON_IsNumber(id)) {
        if (id->valuedouble == trunc(id->valuedouble))
            snprintf(buf, sizeof(buf), "%.0f", id->valuedouble);
        else
            py_float_repr(id->valuedouble, buf, sizeof(buf));
        return strdup(buf);
    }
    if (cJSON_IsBool(id))
        return strdup(cJSON_IsTrue(id) ? "true" : "false");
    return strdup("");
}

/* _parse_input_pipeline_row. 1 with *st set, 0 when skipped, -ENOMEM. */
static int ip_row(const cJSON *cells, const struct col_map *m, const struct pyval *want,
                  struct step *st)
{
    int step_col = col_index(m, "stepnum"), k;
    double comp, comm, infeed, outfeed, other, rest;
    const cJSON *sv;
    size_t b;
    static const char *const names[] = {"Compute", "Communication", "Input / Infeed",
                                        "Output / Outfeed", "Idle / Other"};
    double vals[5];

    if (!cJSON_IsArray(cells) || cJSON_GetArraySize(cells) == 0)
        return 0;
    if (step_col < 0)
        step_col = 0;
    sv =
        cJSON_GetArraySize(cells) > step_col ? get(cJSON_GetArrayItem(cells, step_col), "v") : NULL;
    memset(st, 0, sizeof(*st));
    st->num = step_number(sv);
    if (st->num == NULL)
        return -ENOMEM;
    if (want != NULL && !step_equal(st->num, want)) {
        cJSON_Delete(st->num);
        st->num = NULL;
        return 0;
    }
    comp = sum_cols(cells, m, ip_compute);
    comm = sum_cols(cells, m, ip_comm);
    infeed = sum_cols(cells, m, ip_infeed);
    outfeed = sum_cols(cells, m, ip_outfeed);
    other = sum_cols(cells, m, ip_other);
    if (col_index(m, "steptimems") >= 0)
        st->total = sum_cols(cells, m, ip_steptime);
    else
        st->total = comp + comm + infeed + outfeed + other;
    st->total = py_round(st->total, 4);
    k = col_index(m, "infeedpercentaverage");
    if (k >= 0 && k < cJSON_GetArraySize(cells) && get(cJSON_GetArrayItem(cells, k), "v") != NULL &&
        !cJSON_IsNull(get(cJSON_GetArrayItem(cells, k), "v")))
        st->pcts[2] = py_round(finite_float(get(cJSON_GetArrayItem(cells, k), "v")), 2);
    else
        st->pcts[2] = pct(infeed, st->total);
    rest = st->total - (comp + comm + infeed + outfeed);
    st->idle = py_round(rest > other ? rest : other, 4);
    st->pcts[0] = pct(comp, st->total);
    st->pcts[1] = pct(comm, st->total);
    st->pcts[3] = pct(outfeed, st->total);
    st->pcts[4] = pct(st->idle, st->total);
    vals[0] = comp;
    vals[1] = comm;
    vals[2] = infeed;
    vals[3] = outfeed;
    vals[4] = other;
    for (b = 1, k = 0; b < 5; b++) {
        if (vals[b] > vals[k])
            k = (int)b;
    }
    st->bottleneck = strdup(names[k]);
    if (st->bottleneck == NULL) {
        cJSON_Delete(st->num);
        return -ENOMEM;
    }
    st->comp = py_round(comp, 4);
    st->comm = py_round(comm, 4);
    st->infeed = py_round(infeed, 4);
    st->outfeed = py_round(outfeed, 4);
    return 1;
}

/* _parse_input_pipeline into *out; *props: the step table's p. */
static int parse_input_pipeline(const cJSON *doc, const struct pyval *want, struct steps *out,
                                const cJSON **props)
{
    const cJSON *sec, *table = NULL, *col, *row;
    struct col_map m = {NULL, 0};
    int rc = 0, i;

    *props = NULL;
    if (!cJSON_IsArray(doc))
        return 0;
    cJSON_ArrayForEach(sec, doc)
    {
        int hit = 0;
        if (!cJSON_IsObject(sec) || get(sec, "cols") == NULL || get(sec, "rows") == NULL)
            continue;
        cJSON_ArrayForEach(col, get(sec, "cols"))
        {
            const cJSON *id = get(col, "id");
            char *l = cJSON_IsString(id) ? lower_dup(id->valuestring) : NULL;
            if (l != NULL && (strstr(l, "step") != NULL || strstr(l, "infeed") != NULL))
                hit = 1;
            free(l);
        }
        if (hit) {
            table = sec;
            break;
        }
    }
    if (table == NULL || cJSON_GetArraySize(table) == 0)
        return 0;
    m.n = cJSON_GetArraySize(get(table, "cols"));
    m.ids = calloc((size_t)m.n + 1, sizeof(*m.ids));
    if (m.ids == NULL)
        return -ENOMEM;
    i = 0;
    cJSON_ArrayForEach(col, get(table, "cols"))
    {
        m.ids[i++] = cJSON_IsObject(col) ? col_id(col) : NULL;
    }
    cJSON_ArrayForEach(row, get(table, "rows"))
    {
        struct step st, *slot;
        int r = ip_row(get(row, "c"), &m, want, &st);
        if (r < 0) {
            rc = r;
            break;
        }
        if (r == 0)
            continue;
        slot = steps_push(out);
        if (slot == NULL) {
            cJSON_Delete(st.num);
            rc = -ENOMEM;
            break;
        }
        *slot = st;
    }
    for (i = 0; i < m.n; i++)
        free(m.ids[i]);
    free(m.ids);
    {
        const cJSON *p = get(table, "p");
        if (p != NULL && !cJSON_IsNull(p) && !cJSON_IsFalse(p) &&
            !((cJSON_IsObject(p) || cJSON_IsArray(p)) && cJSON_GetArraySize(p) == 0) &&
            !(cJSON_IsString(p) && p->valuestring[0] == '\0'))
            *props = p;
    }
    return rc;
}

/* statistics.stdev. */
static double sample_stdev(const double *v, int n)
{
    long double mean = 0, ss = 0;
    int i;

    for (i = 0; i < n; i++)
        mean += v[i];
    mean /= n;
    for (i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    return (double)sqrtl(ss / (n - 1));
}

/* _build_summary. */
static cJSON *build_summary(const struct steps *s, const cJSON *props)
{
    struct pysum sums[6];
    double avg[6], lo, hi, *times;
    const char **names;
    const char *primary;
    const cJSON *concl;
    cJSON *o = cJSON_CreateObject();
    int i, k, nb = 0;

    times = malloc((size_t)s->n * sizeof(*times));
    names = malloc((size_t)s->n * sizeof(*names));
    if (o == NULL || times == NULL || names == NULL) {
        free(times);
        free(names);
        cJSON_Delete(o);
        return NULL;
    }
    memset(sums, 0, sizeof(sums));
    lo = hi = s->v[0].total;
    for (i = 0; i < s->n; i++) {
        const struct step *st = &s->v[i];
        pysum_add(&sums[0], st->total);
        pysum_add(&sums[1], st->comp);
        pysum_add(&sums[2], st->comm);
        pysum_add(&sums[3], st->infeed);
        pysum_add(&sums[4], st->outfeed);
        pysum_add(&sums[5], st->idle);
        times[i] = st->total;
        if (st->total < lo)
            lo = st->total;
        if (st->total > hi)
            hi = st->total;
        if (st->bottleneck != NULL && st->bottleneck[0])
            names[nb++] = st->bottleneck;
    }
    for (k = 0; k < 6; k++)
        avg[k] = py_round(pysum_get(&sums[k]) / s->n, 4);
    primary = most_common(names, nb);
    if (primary == NULL)
        primary = avg[2] > avg[1] ? "Communication" : "Compute";
    pyj_add_int(o, "total_steps", s->n);
    pyj_add_float(o, "step_time_ms_average", avg[0]);
    pyj_add_float(o, "step_time_ms_min", py_round(lo, 4));
    pyj_add_float(o, "step_time_ms_max", py_round(hi, 4));
    pyj_add_float(o, "step_time_ms_stddev",
                  s->n > 1 ? py_round(sample_stdev(times, s->n), 4) : 0.0);
    pyj_add_float(o, "compute_time_ms_average", avg[1]);
    pyj_add_float(o, "compute_percent", pct(avg[1], avg[0]));
    pyj_add_float(o, "communication_time_ms_average", avg[2]);
    pyj_add_float(o, "communication_percent", pct(avg[2], avg[0]));
    pyj_add_float(o, "infeed_time_ms_average", avg[3]);
    pyj_add_float(o, "infeed_percent", pct(avg[3], avg[0]));
    pyj_add_float(o, "outfeed_time_ms_average", avg[4]);
    pyj_add_float(o, "outfeed_percent", pct(avg[4], avg[0]));
    pyj_add_str(o, "primary_bottleneck", primary);
    pyj_add_float(o, "idle_time_ms_average", avg[5]);
    pyj_add_float(o, "idle_percent", pct(avg[5], avg[0]));
    pyj_add_bool(o, "is_aggregate", 0);
    concl = props ? get(props, "summary_conclusion") : NULL;
    if (concl != NULL && !cJSON_IsNull(concl))
        pyj_set(o, "conclusion", cJSON_Duplicate(concl, 1));
    free(times);
    free(names);
    return o;
}

/* _safe_int: int(v) when > 0, else 0 (None). */
static long long positive_int(const cJSON *v)
{
    long long i = 0;

    if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        i = (long long)trunc(v->valuedouble);
    else if (cJSON_IsBool(v))
        i = cJSON_IsTrue(v);
    else if (!cJSON_IsString(v) || !py_int_text(v->valuestring, &i))
        return 0;
    return i > 0 ? i : 0;
}

/* _parse_overview_page: the aggregate summary, or NULL. */
static cJSON *overview_summary(const cJSON *doc)
{
    static const char *const count_keys[] = {"total_steps", "num_steps", "step_count",
                                             "total_step_count", NULL};
    const cJSON *sec, *kv, *v;
    double step, lo, hi, infeed, outfeed, idle, comp, infeed_pct, sdv;
    long long total_steps = 0;
    cJSON *all, *o;
    int i;

    if (!cJSON_IsArray(doc))
        return NULL;
    all = cJSON_CreateObject();
    if (all == NULL)
        return NULL;
    cJSON_ArrayForEach(sec, doc)
    {
        cJSON_ArrayForEach(kv, get(sec, "p")) pyj_set(all, kv->string, cJSON_Duplicate(kv, 1));
    }
    step = finite_float(get(all, "steptime_ms_average"));
    v = get(all, "stat_step_time");
    if (step <= 0 && v != NULL) {
        char buf[256], *p, *w;
        cJSON *tmp;
        if (cJSON_IsString(v))
            snprintf(buf, sizeof(buf), "%s", v->valuestring);
        else if (cJSON_IsNumber(v))
            py_float_repr(v->valuedouble, buf, sizeof(buf));
        else
            buf[0] = '\0';
        /* str(v).replace("ms", "").strip() */
        for (p = w = buf; *p;) {
            if (p[0] == 'm' && p[1] == 's') {
                p += 2;
                continue;
            }
            *w++ = *p++;
        }
        *w = '\0';
        tmp = cJSON_CreateString(buf);
        step = finite_float(tmp);
        cJSON_Delete(tmp);
    }
    if (step <= 0) {
        cJSON_Delete(all);
        return NULL;
    }
    lo = get(all, "steptime_ms_min") ? finite_float(get(all, "steptime_ms_min")) : step;
    hi = get(all, "steptime_ms_max") ? finite_float(get(all, "steptime_ms_max")) : step;
    infeed = finite_float(get(all, "tc_infeed_ms_average") ? get(all, "tc_infeed_ms_average")
                                                           : get(all, "sc_infeed_ms_average"));
    outfeed = finite_float(get(all, "tc_outfeed_ms_average") ? get(all, "tc_outfeed_ms_average")
                                                             : get(all, "sc_outfeed_ms_average"));
    idle = finite_float(get(all, "tc_idle_ms_average") ? get(all, "tc_idle_ms_average")
                                                       : get(all, "sc_idle_ms_average"));
    comp = step - infeed - outfeed - idle;
    if (!(comp > 0.0))
        comp = 0.0;
    infeed_pct = pct(infeed, step);
    for (i = 0; count_keys[i] != NULL && total_steps == 0; i++) {
        if (get(all, count_keys[i]) != NULL)
            total_steps = positive_int(get(all, count_keys[i]));
    }
    if (total_steps == 0) {
        cJSON_ArrayForEach(sec, doc)
        {
            const cJSON *col, *rows = get(sec, "rows");
            int stepped = 0;
            if (rows == NULL || get(sec, "cols") == NULL)
                continue;
            cJSON_ArrayForEach(col, get(sec, "cols"))
            {
                char *id = cJSON_IsObject(col) ? col_id(col) : NULL;
                if (id != NULL && strstr(id, "step") != NULL)
                    stepped = 1;
                free(id);
            }
            if (stepped && cJSON_GetArraySize(rows) > 0) {
                total_steps = cJSON_GetArraySize(rows);
                break;
            }
        }
    }
    sdv = finite_float(get(all, "steptime_ms_standard_deviation"));
    cJSON_Delete(all);
    o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    if (total_steps > 0)
        pyj_add_int(o, "total_steps", (double)total_steps);
    else
        pyj_set(o, "total_steps", cJSON_CreateNull());
    pyj_add_float(o, "step_time_ms_average", py_round(step, 4));
    pyj_add_float(o, "step_time_ms_min", py_round(lo, 4));
    pyj_add_float(o, "step_time_ms_max", py_round(hi, 4));
    pyj_add_float(o, "step_time_ms_stddev", py_round(sdv, 4));
    pyj_add_float(o, "compute_time_ms_average", py_round(comp, 4));
    pyj_add_float(o, "compute_percent", pct(comp, step));
    pyj_add_float(o, "communication_time_ms_average", 0.0);
    pyj_add_float(o, "communication_percent", 0.0);
    pyj_add_float(o, "infeed_time_ms_average", py_round(infeed, 4));
    pyj_add_float(o, "infeed_percent", infeed_pct);
    pyj_add_float(o, "outfeed_time_ms_average", py_round(outfeed, 4));
    pyj_add_float(o, "outfeed_percent", pct(outfeed, step));
    pyj_add_str(o, "primary_bottleneck", infeed_pct > 50.0 ? "Input / Infeed" : "Compute");
    pyj_add_float(o, "idle_time_ms_average", py_round(idle, 4));
    pyj_add_float(o, "idle_percent", pct(idle, step));
    pyj_add_bool(o, "is_aggregate", 1);
    pyj_add_str(o, "note",
                total_steps > 0 ? "Aggregated overview statistics (individual step breakdown "
                                  "not available)."
                                : "Aggregated overview statistics (individual step breakdown "
                                  "and step count not available).");
    return o;
}

static cJSON *step_json(const struct step *st)
{
    cJSON *o = cJSON_CreateObject();

    if (o == NULL)
        return NULL;
    pyj_set(o, "step_num", cJSON_Duplicate(st->num, 1));
    pyj_add_float(o, "step_time_ms", st->total);
    pyj_add_float(o, "compute_time_ms", st->comp);
    pyj_add_float(o, "compute_percent", st->pcts[0]);
    pyj_add_float(o, "communication_time_ms", st->comm);
    pyj_add_float(o, "communication_percent", st->pcts[1]);
    pyj_add_float(o, "infeed_time_ms", st->infeed);
    pyj_add_float(o, "infeed_percent", st->pcts[2]);
    pyj_add_float(o, "outfeed_time_ms", st->outfeed);
    pyj_add_float(o, "outfeed_percent", st->pcts[3]);
    pyj_add_str(o, "bottleneck", st->bottleneck);
    pyj_add_float(o, "idle_time_ms", st->idle);
    pyj_add_float(o, "idle_percent", st->pcts[4]);
    if (st->has_comm) {
        cJSON *c = cJSON_CreateObject();
        pyj_add_float(c, "all_reduce_ms", st->all_reduce);
        pyj_add_float(c, "send_ms", st->send);
        pyj_add_float(c, "recv_ms", st->recv);
        pyj_set(o, "communication_breakdown_ms", c);
    }
    return o;
}

int agent_step_trace_build(const struct agent_steps_src *src, const char *session,
                           const struct pyval *want, const char *core, long long limit, int include,
                           cJSON **answer)
{
    struct steps s = {NULL, 0, 0};
    cJSON *doc, *summary = NULL, *out, *list;
    int rc, i, n;

    *answer = NULL;
    if (want != NULL && want->kind == PY_NONE)
        want = NULL;
    doc = src->tool(src->arg, "pod_viewer.json", NULL, &rc);
    if (rc != 0)
        return rc;
    if (doc != NULL) {
        rc = parse_pod_viewer(doc, want, core, &s);
        if (rc == 0 && s.n > 0 && (summary = build_summary(&s, NULL)) == NULL)
            rc = -ENOMEM;
        cJSON_Delete(doc);
    }
    if (rc == 0 && s.n == 0) {
        doc = src->tool(src->arg, "input_pipeline_analyzer.json", NULL, &rc);
        if (doc != NULL) {
            const cJSON *props;
            rc = parse_input_pipeline(doc, want, &s, &props);
            if (rc == 0 && s.n > 0 && (summary = build_summary(&s, props)) == NULL)
                rc = -ENOMEM;
            cJSON_Delete(doc);
        } else if (rc != 0) {
            return rc;
        }
    }
    if (rc == 0 && s.n == 0) {
        doc = src->tool(src->arg, "overview_page.json", NULL, &rc);
        if (doc != NULL) {
            summary = overview_summary(doc);
            cJSON_Delete(doc);
        } else if (rc != 0) {
            return rc;
        }
    }
    if (rc != 0) {
        steps_free(&s);
        cJSON_Delete(summary);
        return rc;
    }
    if (s.n == 0 && summary == NULL) {
        cJSON *o = cJSON_CreateObject();
        char msg[1400];
        snprintf(msg, sizeof(msg),
                 "No step trace data found for session '%s' (the trace may lack step "
                 "markers). Consider using 'list_xplane_events' to get more performance "
                 "insights.",
                 session);
        if (o == NULL || pyj_add_str(o, "status", "NO_DATA") != 0 ||
            pyj_add_str(o, "message", msg) != 0) {
            cJSON_Delete(o);
            return -ENOMEM;
        }
        *answer = o;
        return 0;
    }
    out = cJSON_CreateObject();
    list = cJSON_CreateArray();
    if (include && summary != NULL)
        pyj_set(out, "summary", summary);
    else
        cJSON_Delete(summary);
    n = limit > 0 && limit < s.n ? (int)limit : s.n;
    for (i = 0; i < n; i++)
        cJSON_AddItemToArray(list, step_json(&s.v[i]));
    pyj_set(out, "step_breakdown", list);
    steps_free(&s);
    if (out == NULL || list == NULL ||
        cJSON_GetObjectItemCaseSensitive(out, "step_breakdown") == NULL) {
        cJSON_Delete(out);
        return -ENOMEM;
    }
    *answer = out;
    return 0;
}
