/*
 * kernel_utilization.c - kernel_utilization.json: XProf 2.23.2's per-kernel utilization report
 * (its agent CLI's get_kernel_utilization, as Locamage/xprof-rs serves it
 * under the tag kernel_utilization; the mirrored openxla/xprof HEAD has no
 * such tool, so its shape follows that port). Per TPU plane of a chip with
 * counter tables (device_id from the plane stat, else the plane name's
 * number): per line of counter events (a kernel: "counters_<name>" names
 * it, "counters_0", "counters" and "_counters_" take the plane's first
 * XLA Ops / Pallas op, any other line is "default_kernel") the counters
 * summed, the cycle counters that are 0 filled in from the longest event
 * (duration x the chip's frequency), XProf's utilization metrics of that
 * sample (tpu_counters.h) and from them: mxu_utilization (Avg MXU Busy over
 * its peak), the MXU cycle shares by precision, and every other metric with
 * a peak as a percent (the HBM rows as "HBM Bandwidth Utilization"),
 * rounded to 2 decimals. Written as Python's json.dumps(indent=2,
 * sort_keys=True). One host.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host_facts.h"
#include "hw_common.h"
#include "out/datatable.h"
#include "tpu_sample.h"

static const struct query_key ku_keys[] = {
    {"host", Q_STRING, 0, 0},
    {NULL, 0, 0, 0},
};

#define KU_MAX_KERNELS 100000

/* Python's json string (ensure_ascii): \uXXXX for all but printable ASCII. */
static void py_str(struct out *o, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;

    out_putc(o, '"');
    while (p < end) {
        unsigned c = *p++;
        if (c == '"' || c == '\\') {
            out_putc(o, '\\');
            out_putc(o, (char)c);
        } else if (c == '\n') {
            out_puts(o, "\\n");
        } else if (c == '\r') {
            out_puts(o, "\\r");
        } else if (c == '\t') {
            out_puts(o, "\\t");
        } else if (c == '\b') {
            out_puts(o, "\\b");
        } else if (c == '\f') {
            out_puts(o, "\\f");
        } else if (c >= 0x20 && c < 0x7f) {
            out_putc(o, (char)c);
        } else {
            unsigned cp = 0xfffd, extra = 0, i;
            if (c < 0x80)
                cp = c;
            else if ((c & 0xe0) == 0xc0)
                cp = c & 0x1f, extra = 1;
            else if ((c & 0xf0) == 0xe0)
                cp = c & 0x0f, extra = 2;
            else if ((c & 0xf8) == 0xf0)
                cp = c & 0x07, extra = 3;
            for (i = 0; i < extra; i++) {
                if (p >= end || (*p & 0xc0) != 0x80) {
                    cp = 0xfffd;
                    break;
                }
                cp = (cp << 6) | (*p++ & 0x3f);
            }
            if (cp >= 0x10000) {
                cp -= 0x10000;
                out_printf(o, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else {
                out_printf(o, "\\u%04x", cp);
            }
        }
    }
    out_putc(o, '"');
}

static void indent(struct out *o, int depth)
{
    out_putc(o, '\n');
    while (depth-- > 0)
        out_puts(o, "  ");
}

static void py_num(struct out *o, double v)
{
    char buf[40];

    out_puts(o, dt_fmt_py_float(v, buf));
}

/* round(value / total * 100, 2) as the report rounds it. */
static double percent(double value, double total)
{
    return round(value / total * 10000.0) / 100.0;
}

struct other {
    const char *name;
    double achieved, peak;
};

static int cmp_other(const void *a, const void *b)
{
    return strcmp(((const struct other *)a)->name, ((const struct other *)b)->name);
}

/* One kernel's object at depth 4. */
static void write_kernel(struct out *o, const char *name, size_t name_len, double duration_us,
                         const struct tpu_metric *m, int n)
{
    double mxu = 0, mxu_peak = 0, prec[4] = {0, 0, 0, 0}, total, util;
    struct other others[TPU_MAX_METRICS];
    static const char *const keys[4] = {"BF16", "FP8", "Int4", "Int8"};
    int nothers = 0, i, j, first;
    double shares[4];

    for (i = 0; i < n; i++) {
        const char *mn = m[i].name;
        if (strcmp(mn, "Avg MXU Busy") == 0) {
            mxu += m[i].achieved;
            mxu_peak += m[i].peak;
        } else if (strcmp(mn, "MXU BF16") == 0) {
            prec[0] += m[i].achieved;
        } else if (strcmp(mn, "MXU I8") == 0) {
            prec[1] += m[i].achieved;
        } else if (strcmp(mn, "MXU I4") == 0) {
            prec[2] += m[i].achieved;
        } else if (strcmp(mn, "MXU E4M3 + E5M2") == 0) {
            prec[3] += m[i].achieved;
        } else if (m[i].peak > 0) {
            const char *key = strncmp(mn, "HBM Rd+Wr", 9) == 0 ? "HBM Bandwidth Utilization" : mn;
            for (j = 0; j < nothers && strcmp(others[j].name, key) != 0; j++)
                ;
            if (j == nothers) {
                others[nothers].name = key;
                others[nothers].achieved = others[nothers].peak = 0;
                nothers++;
            }
            others[j].achieved += m[i].achieved;
            others[j].peak += m[i].peak;
        }
    }
    total = prec[0] + prec[1] + prec[2] + prec[3];
    util = mxu_peak > 0 ? percent(mxu, mxu_peak) : 0.0;
    /* keys sorted: BF16, FP8 (E4M3 + E5M2), Int4, Int8 */
    shares[0] = total > 0 ? percent(prec[0], total) : 0.0;
    shares[1] = total > 0 ? percent(prec[3], total) : 0.0;
    shares[2] = total > 0 ? percent(prec[2], total) : 0.0;
    shares[3] = total > 0 ? percent(prec[1], total) : 0.0;
    qsort(others, (size_t)nothers, sizeof(others[0]), cmp_other);

    out_putc(o, '{');
    indent(o, 5);
    out_puts(o, "\"duration_us\": ");
    py_num(o, duration_us);
    out_putc(o, ',');
    indent(o, 5);
    out_puts(o, "\"kernel_name\": ");
    py_str(o, name, name_len);
    out_putc(o, ',');
    indent(o, 5);
    out_puts(o, "\"mxu_cycles_breakdown\": {");
    for (i = 0; i < 4; i++) {
        indent(o, 6);
        out_printf(o, "\"%s\": ", keys[i]);
        py_num(o, shares[i]);
        if (i < 3)
            out_putc(o, ',');
    }
    indent(o, 5);
    out_puts(o, "},");
    indent(o, 5);
    out_puts(o, util > 100.0 ? "\"mxu_is_anomaly\": true," : "\"mxu_is_anomaly\": false,");
    indent(o, 5);
    out_puts(o, "\"mxu_utilization\": ");
    py_num(o, util);
    out_putc(o, ',');
    indent(o, 5);
    out_puts(o, "\"other_metrics\": ");
    first = 1;
    for (i = 0; i < nothers; i++) {
        if (!(others[i].peak > 0))
            continue;
        out_puts(o, first ? "{" : ",");
        first = 0;
        indent(o, 6);
        py_str(o, others[i].name, strlen(others[i].name));
        out_puts(o, ": ");
        py_num(o, percent(others[i].achieved, others[i].peak));
    }
    if (first) {
        out_puts(o, "{}");
    } else {
        indent(o, 5);
        out_putc(o, '}');
    }
    indent(o, 4);
    out_putc(o, '}');
}

static int is_kernel_line(const char *name)
{
    return strcmp(name, "PALLAS") == 0 || strcmp(name, "XLA OPS") == 0 ||
           strcmp(name, "Pallas") == 0 || strcmp(name, "XLA Ops") == 0;
}

/* The plane's first named op of its first op line that has one (earliest
 * start, longer first, when sorted). */
static const char *first_kernel(const struct xp_plane *pl, int sorted)
{
    uint32_t l, i;

    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        const struct xp_event *best = NULL;
        if (!is_kernel_line(ln->name))
            continue;
        for (i = 0; i < ln->nevents; i++) {
            const struct xp_event *e = &ln->events[i];
            if (pl->emeta[e->meta].name[0] == 0)
                continue;
            if (!sorted) {
                best = e;
                break;
            }
            if (best == NULL || e->offset_ps < best->offset_ps ||
                (e->offset_ps == best->offset_ps && e->duration_ps > best->duration_ps))
                best = e;
        }
        if (best != NULL)
            return pl->emeta[best->meta].name;
    }
    return "";
}

/* The kernel a counter line stands for. */
static const char *kernel_name(const char *line, const char *fallback)
{
    const char *name = "";

    if (strncmp(line, "counters_", 9) == 0)
        name = strcmp(line + 9, "0") == 0 ? fallback : line + 9;
    else if (strcmp(line, "_counters_") == 0 || strcmp(line, "counters") == 0)
        name = fallback;
    return name[0] != 0 ? name : "default_kernel";
}

/* The plane's device id: the stat, else the number in its name. */
static int64_t device_id_of(const struct xp_plane *pl, const struct hw_tpu_identity *id)
{
    const char *p = pl->name + 12;
    char *end;
    long long v;

    if (id->device_id != -1)
        return id->device_id;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (*p == 0)
        return -1;
    v = strtoll(p, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    return *end == 0 ? (int64_t)v : -1;
}

static int device_kernels(struct tool_ctx *ctx, const struct tpu_plan *plan,
                          const struct xp_plane *pl, int sorted, uint64_t *nkernels, struct out *o)
{
    struct tpu_sampler s;
    struct tpu_metric m[TPU_MAX_METRICS];
    const char *fallback;
    uint32_t l;
    int rc, n, k, written = 0;

    if (!tpu_plane_has_counters(pl)) {
        out_puts(o, "[]");
        return 0;
    }
    if ((rc = tpu_sampler_init(&s, plan, pl, ctx->err)) != 0)
        return rc;
    fallback = first_kernel(pl, sorted);
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        const char *name = kernel_name(ln->name, fallback);
        int64_t longest = 0;
        double duration_us, nominal;
        if (tpu_sample_line(&s, ln, TPU_SAMPLE_SUM, &longest) == 0)
            continue;
        if (++*nkernels > KU_MAX_KERNELS) {
            rc = xp_err_set(ctx->err, -EIO,
                            "kernel_utilization.json: more than %d kernels (lines of counters; "
                            "plane %s): too many to answer",
                            KU_MAX_KERNELS, pl->name);
            break;
        }
        duration_us = (double)longest / 1e3 / 1000.0;
        nominal = duration_us * (tpu_chip_frequency_hz(plan->chip) / 1e6);
        if (nominal > 0) {
            for (k = 0; k < plan->nkernel_cycles; k++) {
                uint32_t ix = plan->kernel_cycles[k];
                if (s.v[ix] == 0) {
                    s.v[ix] = nominal >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)nominal;
                    if (!s.seen[ix]) {
                        s.seen[ix] = 1;
                        s.touched[s.ntouched++] = ix;
                    }
                }
            }
        }
        n = tpu_metrics(plan, s.v, m);
        out_puts(o, written++ > 0 ? "," : "[");
        indent(o, 4);
        write_kernel(o, name, strlen(name), duration_us, m, n);
    }
    tpu_sampler_free(&s);
    if (rc != 0)
        return rc;
    if (written == 0) {
        out_puts(o, "[]");
    } else {
        indent(o, 3);
        out_putc(o, ']');
    }
    return 0;
}

static int ku_produce(struct tool_ctx *ctx, struct out *o)
{
    struct tpu_plan plans[2];
    int have_plan[2] = {0, 0}, sorted, rc, c, ndev = 0;
    const char *host = NULL;
    const struct host_facts *f;
    struct xspace *xs = NULL;
    uint64_t nkernels = 0;
    uint32_t p;

    if ((rc = hw_one_host(ctx, "kernel_utilization", &host)) != 0)
        return rc;
    if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) == NULL)
        return xp_err_set(ctx->err, -ENOENT, "%s has no xplane for kernel utilization", host);
    if ((rc = host_facts_get(ctx->snap, host, &f, ctx->err)) != 0)
        return rc;
    if (f->tpu_plane && (rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err)) != 0)
        return rc;
    sorted = xs != NULL && !xspace_is_grouped(xs);
    out_puts(o, "{");
    indent(o, 1);
    out_puts(o, "\"devices\": ");
    for (p = 0; xs != NULL && p < xs->nplanes && rc == 0; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        struct hw_tpu_identity id;
        int64_t dev;
        if (strncmp(pl->name, "/device:TPU:", 12) != 0)
            continue;
        hw_tpu_identity(pl, &id);
        dev = device_id_of(pl, &id);
        if (id.chip == TPU_CHIP_NONE || dev == -1)
            continue;
        c = id.chip == TPU_CHIP_V7X;
        if (!have_plan[c]) {
            if ((rc = tpu_plan_init(&plans[c], id.chip, ctx->err)) != 0)
                break;
            have_plan[c] = 1;
        }
        out_puts(o, ndev++ > 0 ? "," : "[");
        indent(o, 2);
        out_putc(o, '{');
        indent(o, 3);
        out_puts(o, "\"device_id\": ");
        out_i64(o, dev);
        out_putc(o, ',');
        indent(o, 3);
        out_puts(o, "\"device_type\": ");
        py_str(o, id.device_type, id.device_type_len);
        out_putc(o, ',');
        indent(o, 3);
        out_puts(o, "\"kernels\": ");
        rc =
            device_kernels(ctx, &plans[c], pl, sorted && hw_is_tensor_core(pl->name), &nkernels, o);
        indent(o, 2);
        out_putc(o, '}');
    }
    for (c = 0; c < 2; c++)
        if (have_plan[c])
            tpu_plan_free(&plans[c]);
    if (rc != 0)
        return rc;
    if (ndev == 0) {
        out_puts(o, "[]");
    } else {
        indent(o, 1);
        out_putc(o, ']');
    }
    out_putc(o, ',');
    indent(o, 1);
    out_puts(o, "\"status\": \"SUCCESS\"\n}");
    if (nkernels == 0)
        snapshot_log(ctx->snap,
                     "kernel_utilization.json: no kernels: host %s has no TPU v6e/v7x plane with "
                     "counter samples",
                     host);
    return 0;
}

const struct tool tool_kernel_utilization_json = {
    .file = "kernel_utilization.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .flags = TOOL_ONE_HOST,
    .keys = ku_keys,
    .listed = tool_listed_xplane,
    .produce = ku_produce,
};
