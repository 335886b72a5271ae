/*
 * agent_cmd_memory.c - the memory commands of XProf's agent CLI:
 * get_memory_profile (capacity and peak of the allocators of
 * memory_profile.json, as get_memory_profile_tool.py reads them) and
 * get_peak_allocations (the biggest buffers of each module's
 * memory_viewer.json, as get_peak_allocations_tool.py aggregates them).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

struct mem_metrics {
    long long capacity, peak, stack, heap, free_bytes;
    double fragmentation;
};

/* int(v) of a proto JSON value (64-bit ints are strings). */
static long long int_of(const cJSON *v, long long dflt)
{
    if (cJSON_IsNumber(v))
        return (long long)v->valuedouble;
    if (cJSON_IsString(v))
        return strtoll(v->valuestring, NULL, 10);
    return dflt;
}

/* _parse_profile_data: 0 and *m, or 1 with the ValueError's text. */
static int parse_profile(const cJSON *doc, struct mem_metrics *m, char *err, size_t n)
{
    const cJSON *first = cJSON_IsArray(doc) ? cJSON_GetArrayItem(doc, 0) : doc;
    const cJSON *alloc, *a;

    m->capacity = m->peak = m->stack = m->heap = m->free_bytes = -1;
    m->fragmentation = -1.0;
    if (!cJSON_IsObject(first) || (cJSON_IsArray(doc) && cJSON_GetArraySize(doc) == 0)) {
        snprintf(err, n, "Unexpected memory profile data format: not a list or empty");
        return 1;
    }
    if (cJSON_GetObjectItemCaseSensitive(first, "cols") != NULL &&
        cJSON_GetObjectItemCaseSensitive(first, "rows") != NULL) {
        snprintf(err, n, "Table format memory profile not fully supported");
        return 1;
    }
    alloc = cJSON_GetObjectItemCaseSensitive(first, "memoryProfilePerAllocator");
    if (alloc == NULL) {
        snprintf(err, n, "Unknown memory profile JSON format");
        return 1;
    }
    cJSON_ArrayForEach(a, alloc)
    {
        const cJSON *summary = cJSON_GetObjectItemCaseSensitive(a, "profileSummary");
        const cJSON *peak = cJSON_GetObjectItemCaseSensitive(summary, "peakStats");
        long long cap = int_of(cJSON_GetObjectItemCaseSensitive(summary, "memoryCapacity"), -1);
        long long cur = int_of(cJSON_GetObjectItemCaseSensitive(peak, "peakBytesInUse"), -1);
        if (cap > m->capacity)
            m->capacity = cap;
        if (cur > m->peak) {
            m->peak = cur;
            m->stack = int_of(cJSON_GetObjectItemCaseSensitive(peak, "stackReservedBytes"), -1);
            m->heap = int_of(cJSON_GetObjectItemCaseSensitive(peak, "heapAllocatedBytes"), -1);
            m->free_bytes = int_of(cJSON_GetObjectItemCaseSensitive(peak, "freeMemoryBytes"), -1);
            m->fragmentation =
                agent_safe_float(cJSON_GetObjectItemCaseSensitive(peak, "fragmentation"), -1.0);
        }
    }
    return 0;
}

/* One fetch of memory_profile.json (query: host=H or NULL): 0 with *m, 1
 * with no data, 2 with an error text in err, or an AGENT_E_* failure. */
static int fetch_profile(struct agent_ctx *ctx, const char *query, struct mem_metrics *m, char *err,
                         size_t n)
{
    cJSON *doc;
    int rc = agent_tool_json(ctx, "memory_profile.json", query, &doc);

    if (rc == -ENOENT) {
        ctx->msg[0] = '\0';
        return 1;
    }
    if (rc == AGENT_E_VALUE && query == NULL && ctx->snap->nhosts > 1) {
        /* XProf's memory_profile asserts one trace */
        ctx->msg[0] = '\0';
        snprintf(err, n, "Error fetching memory profile: AssertionError()");
        return 2;
    }
    if (rc != 0)
        return rc;
    rc = parse_profile(doc, m, err, n) ? 2 : 0;
    cJSON_Delete(doc);
    return rc;
}

static double gib(long long bytes, int keep_zero)
{
    if (bytes > 0 || (keep_zero && bytes == 0))
        return py_round((double)bytes / GIB, 2);
    return -1.0;
}

/* get_memory_profile's answer object into *out (0, or an AGENT_E_*). A
 * session of several hosts answers the first host whose profile has a
 * capacity and a peak (XProf tries its hosts too, but reads them all at
 * once and fails). */
static int memory_answer(struct agent_ctx *ctx, cJSON **out)
{
    struct mem_metrics m, best;
    char err[512] = "", host_err[512];
    int rc, have = 0;
    uint32_t h;
    cJSON *o, *d;
    double cap_gib, peak_gib, util = -1.0;

    *out = NULL;
    rc = fetch_profile(ctx, NULL, &m, err, sizeof(err));
    if (rc > 2)
        return rc;
    if (rc == 0) {
        best = m;
        have = 1;
    }
    if (!(have && m.capacity > 0 && m.peak > 0)) {
        for (h = 0; h < ctx->snap->nhosts; h++) {
            char query[1100];
            snprintf(query, sizeof(query), "host=%s", ctx->snap->hosts[h]);
            rc = fetch_profile(ctx, query, &m, host_err, sizeof(host_err));
            if (rc > 2)
                return rc;
            if (rc == 0 && m.capacity > 0 && m.peak > 0) {
                best = m;
                have = 1;
                err[0] = '\0';
                break;
            }
            if (rc == 0 && !have) {
                best = m;
                have = 1;
            } else if (rc == 2) {
                snprintf(err, sizeof(err), "%s", host_err);
            }
        }
    }
    o = cJSON_CreateObject();
    if (!have && err[0]) {
        pyj_add_str(o, "error", err);
        *out = o;
        return 0;
    }
    if (!have) {
        best.capacity = best.peak = best.stack = best.heap = best.free_bytes = -1;
        best.fragmentation = -1.0;
    }
    cap_gib = gib(best.capacity, 0);
    peak_gib = gib(best.peak, 0);
    if (cap_gib > 0 && peak_gib > 0)
        util = py_round(peak_gib / cap_gib * 100, 2);
    d = cJSON_CreateObject();
    pyj_add_float(o, "memory_capacity_gib", cap_gib);
    pyj_add_float(o, "peak_memory_usage_gib", peak_gib);
    pyj_add_float(d, "stack_reservation_gib", gib(best.stack, 1));
    pyj_add_float(d, "heap_allocation_gib", gib(best.heap, 1));
    pyj_add_float(d, "free_memory_gib", gib(best.free_bytes, 1));
    pyj_add_float(d, "fragmentation_percent",
                  best.fragmentation >= 0 ? py_round(best.fragmentation * 100, 2) : -1.0);
    pyj_add_float(d, "utilization_percent", util);
    pyj_set(o, "peak_usage_details", d);
    *out = o;
    return 0;
}

int agent_get_memory_profile(struct agent_ctx *ctx)
{
    cJSON *o;
    int rc = memory_answer(ctx, &o);

    return rc != 0 ? rc : agent_answer_json(ctx, o, 2);
}

cJSON *agent_memory_peak_gib(struct agent_ctx *ctx)
{
    cJSON *o, *v;

    if (memory_answer(ctx, &o) != 0) {
        ctx->msg[0] = '\0';
        return cJSON_CreateString("N/A");
    }
    v = cJSON_GetObjectItemCaseSensitive(o, "error") != NULL
            ? cJSON_CreateString("N/A")
            : cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o, "peak_memory_usage_gib"), 1);
    cJSON_Delete(o);
    return v;
}

/* --- get_peak_allocations --- */

/* A number of a tool file as json.loads reads it: a float unless
 * integral (cJSON keeps no difference between 1.0 and 1). */
static cJSON *number_of(const cJSON *v)
{
    if (cJSON_IsNumber(v) && v->valuedouble != (double)(long long)v->valuedouble)
        return pyj_float(v->valuedouble);
    return v ? cJSON_Duplicate(v, 1) : cJSON_CreateNumber(0);
}

struct buffer {
    char *instruction;
    double size_mib;
    long seq;
};

struct buffers {
    struct buffer *v;
    long n, cap;
};

static int buffers_add(struct buffers *b, const char *instruction, double size)
{
    if (b->n == b->cap) {
        long cap = b->cap ? b->cap * 2 : 32;
        struct buffer *v = realloc(b->v, (size_t)cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n].instruction = strdup(instruction);
    b->v[b->n].size_mib = size;
    b->v[b->n].seq = b->n;
    if (b->v[b->n].instruction == NULL)
        return -ENOMEM;
    b->n++;
    return 0;
}

static void buffers_free(struct buffers *b)
{
    long i;

    for (i = 0; i < b->n; i++)
        free(b->v[i].instruction);
    free(b->v);
    memset(b, 0, sizeof(*b));
}

static int by_size_desc(const void *a, const void *b)
{
    const struct buffer *x = a, *y = b;
    if (x->size_mib != y->size_mib)
        return x->size_mib < y->size_mib ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* _INSTRUCTION_NAME_REGEX.fullmatch: NAME.DIGITS; the base "NAME.*". */
static int base_name(const char *s, char *buf, size_t n)
{
    const char *dot = strrchr(s, '.'), *p;

    if (dot == NULL || dot == s || dot[1] == '\0')
        return 0;
    for (p = dot + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
    }
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return 0;
    for (p = s; p < dot; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_'))
            return 0;
    }
    snprintf(buf, n, "%.*s.*", (int)(dot - s), s);
    return 1;
}

/* _parse_and_aggregate_buffers into *out (sorted by size). */
static int module_buffers(const cJSON *mod, double min_mib, const char *min_text, int aggregate,
                          struct buffers *out)
{
    const cJSON *ba = cJSON_GetObjectItemCaseSensitive(mod, "bufferAssignment");
    const cJSON *logical = cJSON_GetObjectItemCaseSensitive(ba, "logicalBuffers"), *b;
    struct buffers top = {0};
    double others = 0;
    long i, j;

    memset(out, 0, sizeof(*out));
    if (cJSON_GetArraySize(logical) > 0) {
        cJSON_ArrayForEach(b, logical)
        {
            const cJSON *at = cJSON_GetObjectItemCaseSensitive(b, "definedAt");
            const cJSON *in = cJSON_GetObjectItemCaseSensitive(at, "instructionName");
            double size =
                (double)int_of(cJSON_GetObjectItemCaseSensitive(b, "size"), 0) / (1024.0 * 1024.0);
            if (aggregate && size < min_mib) {
                others += size;
                continue;
            }
            if (buffers_add(&top, cJSON_IsString(in) ? in->valuestring : "unknown", size) != 0)
                goto oom;
        }
    } else {
        cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(mod, "maxHeap"))
        {
            const cJSON *in = cJSON_GetObjectItemCaseSensitive(b, "instructionName");
            double size =
                agent_safe_float(cJSON_GetObjectItemCaseSensitive(b, "logicalBufferSizeMib"), 0);
            if (aggregate && size < min_mib) {
                others += size;
                continue;
            }
            if (buffers_add(&top, cJSON_IsString(in) ? in->valuestring : "unknown", size) != 0)
                goto oom;
        }
    }
    if (!aggregate) {
        if (top.n > 0)
            qsort(top.v, (size_t)top.n, sizeof(*top.v), by_size_desc);
        *out = top;
        return 0;
    }
    /* (base name, size) groups in first-seen order */
    for (i = 0; i < top.n; i++) {
        char base[2048], key[2048], text[2300];
        long count = 0;
        if (top.v[i].instruction == NULL)
            continue;
        if (!base_name(top.v[i].instruction, base, sizeof(base)))
            snprintf(base, sizeof(base), "%s", top.v[i].instruction);
        for (j = i; j < top.n; j++) {
            if (top.v[j].instruction == NULL || top.v[j].size_mib != top.v[i].size_mib)
                continue;
            if (!base_name(top.v[j].instruction, key, sizeof(key)))
                snprintf(key, sizeof(key), "%s", top.v[j].instruction);
            if (strcmp(key, base) != 0)
                continue;
            count++;
            if (j != i) {
                free(top.v[j].instruction);
                top.v[j].instruction = NULL;
            }
        }
        if (count > 1)
            snprintf(text, sizeof(text), "%s (%ld occurrences of size %g MiB)", base, count,
                     top.v[i].size_mib);
        else
            snprintf(text, sizeof(text), "%s", top.v[i].instruction);
        if (buffers_add(out, text, top.v[i].size_mib * (double)count) != 0)
            goto oom;
    }
    if (others > 0) {
        char text[128];
        snprintf(text, sizeof(text), "Others (< %s MiB)", min_text);
        if (buffers_add(out, text, others) != 0)
            goto oom;
    }
    buffers_free(&top);
    if (out->n > 0)
        qsort(out->v, (size_t)out->n, sizeof(*out->v), by_size_desc);
    return 0;
oom:
    buffers_free(&top);
    buffers_free(out);
    return -ENOMEM;
}

struct module_peak {
    char *name;
    cJSON *total; /* totalBufferAllocationMib as given, or 0 */
    double total_num;
    struct buffers buffers;
    long seq;
};

static int by_total_desc(const void *a, const void *b)
{
    const struct module_peak *x = a, *y = b;
    if (x->total_num != y->total_num)
        return x->total_num < y->total_num ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void peak_error(struct agent_ctx *ctx, const char *fmt, const char *msg)
{
    char text[1400];

    snprintf(text, sizeof(text), "Failed to get peak allocations for session %s: %s",
             ctx->session_id, msg);
    if (strcmp(fmt, "markdown") == 0) {
        char md[1500];
        snprintf(md, sizeof(md), "# Error\n%s\n", text);
        agent_answer_text(ctx, md);
    } else {
        agent_answer_error(ctx, "%s", text);
    }
}

/* One markdown line: "\n" before all but the first ("\n".join). */
static void md_line(FILE *f, int *first, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void md_line(FILE *f, int *first, const char *fmt, ...)
{
    va_list ap;

    if (!*first)
        fputc('\n', f);
    *first = 0;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
}

static void write_markdown(FILE *f, struct module_peak *mods, long keep, long total, int summary,
                           int aggregate)
{
    long i, j;
    int first = 1;

    md_line(f, &first, "# Peak Memory Allocations by Module");
    md_line(f, &first, "%s", "");
    if (aggregate) {
        md_line(f, &first, "> [!NOTE]");
        md_line(f, &first, "> **Aggregation Logic:**");
        md_line(f, &first,
                "> - Buffers with similar names (e.g., `name.1`, `name.2`) and identical sizes "
                "are aggregated into `name.*`.");
        md_line(f, &first, "> - Buffers smaller than the threshold are aggregated into 'Others'.");
        md_line(f, &first, "%s", "");
    }
    if (summary) {
        md_line(f, &first, "## Session Summary");
        md_line(f, &first, "- Total Modules: %ld", total);
        if (keep > 0) {
            md_line(f, &first, "%s", "");
            md_line(f, &first, "| Module | Total HBM (MiB) |");
            md_line(f, &first, "| :--- | ---: |");
            for (i = 0; i < keep; i++)
                md_line(f, &first, "| `%s` | %.2f |", mods[i].name, mods[i].total_num);
        }
        md_line(f, &first, "%s", "");
    }
    for (i = 0; i < keep; i++) {
        md_line(f, &first, "## Module: `%s`", mods[i].name);
        md_line(f, &first, "Total HBM: %.2f MiB", mods[i].total_num);
        md_line(f, &first, "%s", "");
        md_line(f, &first, "| Instruction | Size (MiB) |");
        md_line(f, &first, "| :--- | ---: |");
        for (j = 0; j < mods[i].buffers.n; j++)
            md_line(f, &first, "| `%s` | %.2f |", mods[i].buffers.v[j].instruction,
                    mods[i].buffers.v[j].size_mib);
        md_line(f, &first, "%s", "");
    }
}

static cJSON *module_json(const struct module_peak *m)
{
    cJSON *o = cJSON_CreateObject(), *list = cJSON_CreateArray();
    long j;

    pyj_add_str(o, "module_name", m->name);
    pyj_set(o, "total_hbm_mib", cJSON_Duplicate(m->total, 1));
    for (j = 0; j < m->buffers.n; j++) {
        cJSON *b = cJSON_CreateObject();
        pyj_add_str(b, "instruction", m->buffers.v[j].instruction);
        pyj_add_float(b, "size_mib", m->buffers.v[j].size_mib);
        cJSON_AddItemToArray(list, b);
    }
    pyj_set(o, "top_buffers", list);
    return o;
}

int agent_get_peak_allocations(struct agent_ctx *ctx)
{
    const struct pyval *min_v = agent_arg(ctx->args, "min_size_mib");
    const char *fmt = agent_str(ctx, "output_format", "json");
    int summary = agent_bool(ctx, "include_summary", 1);
    int aggregate = agent_bool(ctx, "aggregate_instructions", 1);
    struct module_peak *mods;
    char **names, min_text[64];
    long long limit;
    double min_mib;
    long n = 0, i, keep;
    int nnames, rc;

    if ((rc = agent_int(ctx, "limit", 10, &limit)) != 0 ||
        (rc = agent_float(ctx, "min_size_mib", 1.0, &min_mib)) != 0)
        return rc;
    if (fmt == NULL)
        fmt = "None";
    if (min_v != NULL && min_v->kind == PY_INT)
        snprintf(min_text, sizeof(min_text), "%lld", min_v->i);
    else
        py_float_repr(min_mib, min_text, sizeof(min_text));
    rc = agent_hlo_module_names(ctx, &names, &nnames);
    if (rc != 0)
        return rc;
    if (nnames == 0) {
        free(names);
        peak_error(ctx, fmt, "ValueError: No memory viewer data returned for the session");
        return 0;
    }
    mods = calloc((size_t)nnames, sizeof(*mods));
    if (mods == NULL)
        rc = agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    for (i = 0; rc == 0 && i < nnames; i++) {
        char query[2200], enc[2048];
        cJSON *doc, *total;
        agent_query_encode(names[i], enc, sizeof(enc));
        snprintf(query, sizeof(query), "module_name=%s", enc);
        if (agent_tool_json(ctx, "memory_viewer.json", query, &doc) != 0) {
            ctx->msg[0] = '\0'; /* XProf logs it and goes on */
            continue;
        }
        total = cJSON_GetObjectItemCaseSensitive(doc, "totalBufferAllocationMib");
        mods[n].name = strdup(names[i]);
        mods[n].total = number_of(total);
        mods[n].total_num = agent_safe_float(total, 0);
        mods[n].seq = n;
        if (module_buffers(doc, min_mib, min_text, aggregate, &mods[n].buffers) != 0)
            rc = agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
        n++;
        cJSON_Delete(doc);
    }
    for (i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    if (rc == 0) {
        qsort(mods, (size_t)n, sizeof(*mods), by_total_desc);
        keep = limit > 0 ? agent_py_slice(n, limit) : n;
        if (strcmp(fmt, "markdown") == 0) {
            char *text = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&text, &len);
            if (f == NULL)
                rc = agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
            else {
                write_markdown(f, mods, keep, n, summary, aggregate);
                if (fclose(f) != 0 || text == NULL)
                    rc = agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
                else
                    rc = agent_answer_text(ctx, text);
                free(text);
            }
        } else {
            cJSON *list = cJSON_CreateArray();
            for (i = 0; i < keep; i++)
                cJSON_AddItemToArray(list, module_json(&mods[i]));
            if (summary) {
                cJSON *o = cJSON_CreateObject(), *s = cJSON_CreateObject();
                cJSON *top = cJSON_CreateArray();
                for (i = 0; i < keep; i++) {
                    cJSON *t = cJSON_CreateObject();
                    pyj_add_str(t, "module_name", mods[i].name);
                    pyj_set(t, "total_hbm_mib", cJSON_Duplicate(mods[i].total, 1));
                    cJSON_AddItemToArray(top, t);
                }
                pyj_add_int(s, "total_modules", (double)n);
                pyj_set(s, "top_modules", top);
                pyj_set(o, "summary", s);
                pyj_set(o, "modules", list);
                rc = agent_answer_json(ctx, o, 2);
            } else {
                rc = agent_answer_json(ctx, list, 2);
            }
        }
    }
    for (i = 0; i < n; i++) {
        free(mods[i].name);
        cJSON_Delete(mods[i].total);
        buffers_free(&mods[i].buffers);
    }
    free(mods);
    return rc;
}
