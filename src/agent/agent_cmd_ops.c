/*
 * agent_cmd_ops.c - the HLO op commands of XProf's agent CLI:
 * get_top_hlo_ops, get_hlo_op_profile, get_profile_summary, from the op
 * profile tree of op_profile.json as XProf's get_top_hlo_ops_tool.py and
 * xprof_data.py flatten it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"

/* One flattened op. */
struct flat_op {
    cJSON *item;  /* its answer object */
    double time;  /* total_self_time_ms */
    double flops; /* raw_flops */
    double bytes; /* bytes accessed */
    long seq;     /* order in the tree walk (ties keep it) */
};

struct flat_ops {
    struct flat_op *v;
    long n, cap;
    int failed;
};

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;

    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (cJSON_IsString(v))
        return strtod(v->valuestring, NULL); /* proto JSON spells 64-bit ints as strings */
    return 0;
}

static void push(struct flat_ops *f, cJSON *item, double time, double flops, double bytes)
{
    if (f->n == f->cap) {
        long cap = f->cap ? f->cap * 2 : 64;
        struct flat_op *p = realloc(f->v, (size_t)cap * sizeof(*p));
        if (p == NULL) {
            f->failed = 1;
            cJSON_Delete(item);
            return;
        }
        f->v = p;
        f->cap = cap;
    }
    f->v[f->n].item = item;
    f->v[f->n].time = time;
    f->v[f->n].flops = flops;
    f->v[f->n].bytes = bytes;
    f->v[f->n].seq = f->n;
    f->n++;
}

/* The op's object: name, category, total_self_time_ms, occurrences, flops,
 * bytes_accessed[, source_file, source_line, stack_frame]. */
static cJSON *op_item(const char *full_name, const char *category, const cJSON *metrics,
                      const cJSON *xla, long long occurrences, double *bytes_out)
{
    cJSON *item = cJSON_CreateObject(), *arr, *e, *si;
    double raw_time = num(metrics, "rawTime"), bytes = 0;
    int nbytes = 0;

    arr = metrics ? cJSON_GetObjectItemCaseSensitive(metrics, "rawBytesAccessedArray") : NULL;
    cJSON_ArrayForEach(e, arr)
    {
        bytes += cJSON_IsNumber(e) ? e->valuedouble : 0;
        nbytes++;
    }
    *bytes_out = bytes;
    pyj_add_str(item, "name", full_name);
    pyj_add_str(item, "category", category);
    pyj_add_float(item, "total_self_time_ms", raw_time / 1e9);
    pyj_add_int(item, "occurrences", (double)occurrences);
    pyj_add_float(item, "flops", num(metrics, "rawFlops"));
    if (nbytes > 0)
        pyj_add_float(item, "bytes_accessed", bytes);
    else
        pyj_add_int(item, "bytes_accessed", 0);
    si = xla ? cJSON_GetObjectItemCaseSensitive(xla, "sourceInfo") : NULL;
    if (cJSON_IsObject(si)) {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(si, "fileName");
        const cJSON *sf = cJSON_GetObjectItemCaseSensitive(si, "stackFrame");
        pyj_add_str(item, "source_file", cJSON_IsString(fn) ? fn->valuestring : "");
        pyj_add_int(item, "source_line", num(si, "lineNumber"));
        if (cJSON_IsString(sf) && sf->valuestring[0])
            pyj_add_str(item, "stack_frame", sf->valuestring);
    }
    return item;
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* get_top_hlo_ops' traverse (xla leaves with time) or get_hlo_op_profile's
 * (also other leaves, with a guessed category and occurrences >= 1). */
static void traverse(struct flat_ops *f, const cJSON *node, const char *prefix, int profile_mode,
                     int depth)
{
    const char *name = str_of(node, "name");
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(node, "metrics");
    const cJSON *xla = cJSON_GetObjectItemCaseSensitive(node, "xla");
    const cJSON *children = cJSON_GetObjectItemCaseSensitive(node, "children"), *c;
    double raw_time = num(metrics, "rawTime");
    size_t len = strlen(prefix) + strlen(name) + 2;
    char *full = malloc(len);

    if (full == NULL || depth > 64) {
        f->failed = full == NULL;
        free(full);
        return;
    }
    snprintf(full, len, "%s%s%s", prefix, prefix[0] ? "/" : "", name);
    if (raw_time > 0 && (xla != NULL || (profile_mode && cJSON_GetArraySize(children) == 0))) {
        long long occ = (long long)num(metrics, "occurrences");
        char cat[256];
        double bytes;
        if (xla != NULL) {
            snprintf(cat, sizeof(cat), "%s", str_of(xla, "category"));
        } else if (cJSON_GetObjectItemCaseSensitive(node, "category") != NULL) {
            snprintf(cat, sizeof(cat), "Category: %s", name);
        } else {
            static const char *const guesses[] = {
                "custom-call", "fusion",    "convolution", "dot",   "reduce", "copy",
                "reshape",     "broadcast", "while",       "tuple", NULL};
            char lower[256];
            size_t i;
            snprintf(cat, sizeof(cat), "unknown");
            for (i = 0; name[i] && i + 1 < sizeof(lower); i++)
                lower[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
            lower[i] = '\0';
            for (i = 0; guesses[i] != NULL; i++) {
                if (strstr(lower, guesses[i])) {
                    snprintf(cat, sizeof(cat), "%s", guesses[i]);
                    break;
                }
            }
            if (strcmp(cat, "unknown") == 0 && name[0] == '%') {
                snprintf(cat, sizeof(cat), "%s", name + strspn(name, "%"));
                cat[strcspn(cat, "._")] = '\0';
            }
        }
        if (profile_mode && occ == 0)
            occ = 1;
        {
            cJSON *item = op_item(full, cat, metrics, xla, occ, &bytes);
            push(f, item, raw_time / 1e9, num(metrics, "rawFlops"), bytes);
        }
    }
    cJSON_ArrayForEach(c, children) traverse(f, c, full, profile_mode, depth + 1);
    free(full);
}

/* The tree XProf walks: by_category when it has time, else by_program. */
static const cJSON *root_of(const cJSON *doc)
{
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(doc, "byCategory");

    if (bc != NULL && num(cJSON_GetObjectItemCaseSensitive(bc, "metrics"), "rawTime") > 0)
        return bc;
    return cJSON_GetObjectItemCaseSensitive(doc, "byProgram");
}

static int by_time(const void *a, const void *b)
{
    const struct flat_op *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_flops(const void *a, const void *b)
{
    const struct flat_op *x = a, *y = b;
    if (x->flops != y->flops)
        return x->flops < y->flops ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_bytes(const void *a, const void *b)
{
    const struct flat_op *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void free_ops(struct flat_ops *f)
{
    long i;

    for (i = 0; i < f->n; i++)
        cJSON_Delete(f->v[i].item);
    free(f->v);
}

static cJSON *top_list(struct flat_ops *f, int (*cmp)(const void *, const void *), long limit)
{
    cJSON *arr = cJSON_CreateArray();
    long i, n = limit > 0 && limit < f->n ? limit : f->n;

    qsort(f->v, (size_t)f->n, sizeof(*f->v), cmp);
    for (i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_Duplicate(f->v[i].item, 1));
    return arr;
}

static void lower_trim(const char *s, char *out, size_t n)
{
    size_t len, i, at = 0;

    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n'))
        len--;
    for (i = 0; i < len && at + 1 < n; i++)
        out[at++] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
    out[at] = '\0';
}

int agent_get_top_hlo_ops(struct agent_ctx *ctx)
{
    struct flat_ops f = {0};
    const char *filter = agent_str(ctx, "category_filter", NULL);
    cJSON *doc, *out;
    long long limit;
    int rc;

    if ((rc = agent_int(ctx, "limit", 10, &limit)) != 0)
        return rc;
    rc = agent_tool_json(ctx, "op_profile.json", NULL, &doc);
    if (rc == -ENOENT) {
        out = cJSON_CreateObject();
        pyj_add_str(out, "error", "NO_HLO_DATA_IN_PROFILE");
        pyj_add_str(out, "message",
                    "No HLO op_profile found in trace. For JAX traces, ensure compilation is "
                    "captured in the trace or pass XLA_FLAGS='--xla_dump_to=<path> "
                    "--xla_dump_hlo_as_proto'.");
        return agent_answer_json(ctx, out, 2);
    }
    if (rc != 0)
        return rc;
    if (root_of(doc) != NULL)
        traverse(&f, root_of(doc), "", 0, 0);
    if (filter != NULL && filter[0] != '\0') {
        char want[256], have[256];
        long i, kept = 0;
        lower_trim(filter, want, sizeof(want));
        for (i = 0; i < f.n; i++) {
            lower_trim(str_of(f.v[i].item, "category"), have, sizeof(have));
            if (strcmp(want, have) == 0)
                f.v[kept++] = f.v[i];
            else
                cJSON_Delete(f.v[i].item);
        }
        f.n = kept;
    }
    out = cJSON_CreateObject();
    if (f.n == 0) {
        pyj_set(out, "top_by_time", cJSON_CreateArray());
        pyj_set(out, "top_by_flops", cJSON_CreateArray());
        pyj_set(out, "top_by_bytes_accessed", cJSON_CreateArray());
        pyj_add_int(out, "total_matched", 0);
        pyj_add_bool(out, "has_by_program",
                     cJSON_GetObjectItemCaseSensitive(doc, "byProgram") != NULL);
    } else {
        pyj_set(out, "top_by_time", top_list(&f, by_time, limit));
        pyj_set(out, "top_by_flops", top_list(&f, by_flops, limit));
        pyj_set(out, "top_by_bytes_accessed", top_list(&f, by_bytes, limit));
        pyj_add_int(out, "total_matched", (double)f.n);
    }
    rc = f.failed ? agent_fail(ctx, AGENT_E_INTERNAL, "out of memory") : 0;
    free_ops(&f);
    cJSON_Delete(doc);
    if (rc != 0) {
        cJSON_Delete(out);
        return rc;
    }
    return agent_answer_json(ctx, out, 2);
}

int agent_get_hlo_op_profile(struct agent_ctx *ctx)
{
    struct flat_ops f = {0};
    cJSON *doc, *out;
    long long top_n;
    int rc;

    if ((rc = agent_int(ctx, "top_n", 15, &top_n)) != 0)
        return rc;
    rc = agent_tool_json(ctx, "op_profile.json", NULL, &doc);
    if (rc == -ENOENT) {
        out = cJSON_CreateObject();
        pyj_add_str(out, "error", "NO_HLO_DATA_IN_PROFILE");
        pyj_add_str(out, "message",
                    "No HLO op_profile found in trace. For JAX traces, ensure compilation is "
                    "captured in the trace or pass XLA_FLAGS='--xla_dump_to=<path>'.");
        return agent_answer_json(ctx, out, 2);
    }
    if (rc != 0)
        return rc;
    if (root_of(doc) != NULL)
        traverse(&f, root_of(doc), "", 1, 0);
    if (f.n == 0) {
        out = cJSON_CreateObject();
        pyj_add_str(out, "error", "No ops found");
        pyj_add_bool(out, "has_by_program",
                     cJSON_GetObjectItemCaseSensitive(doc, "byProgram") != NULL);
    } else {
        /* Python's slice: a negative top_n drops that many from the end */
        long n = top_n >= 0 ? (top_n < f.n ? (long)top_n : f.n)
                            : (f.n + top_n > 0 ? f.n + (long)top_n : 0);
        out = top_list(&f, by_time, n == 0 ? -1 : n);
        if (n == 0) {
            cJSON_Delete(out);
            out = cJSON_CreateArray();
        }
    }
    rc = f.failed ? agent_fail(ctx, AGENT_E_INTERNAL, "out of memory") : 0;
    free_ops(&f);
    cJSON_Delete(doc);
    if (rc != 0) {
        cJSON_Delete(out);
        return rc;
    }
    return agent_answer_json(ctx, out, 2);
}

/* Python's f"{x:.1%}". */
static void pct1(double x, char *buf, size_t n)
{
    snprintf(buf, n, "%.1f%%", x * 100.0);
}

/* get_profile_summary's walk: nodes with time, pre-order, at most limit. */
static void summary_walk(const cJSON *node, const cJSON **found, int *n, int limit, int depth)
{
    const cJSON *c;

    if (*n >= limit || depth > 64)
        return;
    if (num(cJSON_GetObjectItemCaseSensitive(node, "metrics"), "rawTime") > 0) {
        found[(*n)++] = node;
        if (*n >= limit)
            return;
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(node, "children"))
    {
        if (*n >= limit)
            return;
        summary_walk(c, found, n, limit, depth + 1);
    }
}

int agent_get_profile_summary(struct agent_ctx *ctx)
{
    const cJSON *found[10], *root;
    char *text, line[4096], frac[32];
    size_t cap = 65536, at = 0;
    cJSON *doc;
    double total;
    int n = 0, i, j, rc;

    rc = agent_tool_json(ctx, "op_profile.json", NULL, &doc);
    if (rc == -ENOENT) {
        snprintf(line, sizeof(line),
                 "Profile Summary for %s\nNo HLO op_profile data found in profile. (Ensure JAX "
                 "compilation occurs within the profiler trace window or pass "
                 "XLA_FLAGS='--xla_dump_to=<path>').",
                 ctx->session_id);
        return agent_answer_text(ctx, line);
    }
    if (rc != 0)
        return rc;
    root = root_of(doc);
    if (root == NULL) {
        cJSON_Delete(doc);
        snprintf(line, sizeof(line),
                 "Profile Summary for %s\nNo performance data found in op_profile.",
                 ctx->session_id);
        return agent_answer_text(ctx, line);
    }
    text = malloc(cap);
    if (text == NULL) {
        cJSON_Delete(doc);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    total = num(cJSON_GetObjectItemCaseSensitive(root, "metrics"), "rawTime");
    at += (size_t)snprintf(text + at, cap - at, "Profile Summary for %s", ctx->session_id);
    if (total > 0)
        at += (size_t)snprintf(text + at, cap - at, "\nTotal Time: %.4f s", total / 1e12);
    at += (size_t)snprintf(
        text + at, cap - at,
        "\n\nTop Operations (by self time):\n| Name | Self Time (s) | Fraction |\n|---|---|---|");
    summary_walk(root, found, &n, 10, 0);
    /* sorted by time, largest first (stable) */
    for (i = 1; i < n; i++) {
        for (j = i; j > 0; j--) {
            double a = num(cJSON_GetObjectItemCaseSensitive(found[j - 1], "metrics"), "rawTime");
            double b = num(cJSON_GetObjectItemCaseSensitive(found[j], "metrics"), "rawTime");
            const cJSON *t;
            if (a >= b)
                break;
            t = found[j - 1];
            found[j - 1] = found[j];
            found[j] = t;
        }
    }
    for (i = 0; i < n && at < cap; i++) {
        const char *name = str_of(found[i], "name");
        double t = num(cJSON_GetObjectItemCaseSensitive(found[i], "metrics"), "rawTime");
        char esc[2048];
        size_t k, e = 0;
        if (name[0] == '\0')
            name = "Unknown";
        for (k = 0; name[k] && e + 3 < sizeof(esc); k++) {
            if (name[k] == '|')
                esc[e++] = '\\';
            esc[e++] = name[k];
        }
        esc[e] = '\0';
        pct1(total ? t / total : 0, frac, sizeof(frac));
        at += (size_t)snprintf(text + at, cap - at, "\n| %s | %.4f | %s |", esc, t / 1e12, frac);
    }
    cJSON_Delete(doc);
    rc = agent_answer_text(ctx, text);
    free(text);
    return rc;
}
