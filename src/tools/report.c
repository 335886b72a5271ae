/*
 * report.c - report.md and report.json: the one-page performance report of
 * a run, for a person (Markdown) and for scripts (JSON: numbers as
 * numbers, units in the keys).
 *
 * It summarizes the files it sits beside, with their definitions:
 *   run       hosts, devices (op_stats' run environment), the profile span
 *   steps     XProf's step database (op_stats): count, median, p90 (linear
 *             interpolation, as numpy), min, max, mean of the step time,
 *             a step's time being its longest core's as in overview_page's
 *             summary; and the breakdown averaged over the steps as
 *             input_pipeline_analyzer's table gives it (the first host's
 *             core), in XProf's components and in five groups:
 *             compute = device compute; input = host wait input + host to
 *             device; communication = device collectives + device to
 *             device; host = host compute + prepare + compile + output;
 *             idle = the unknown rest
 *   bottleneck XProf's classification and statements (overview_page)
 *   top_ops   the 10 framework ops of most self time on the device
 *             (framework_op_stats.json's device rows, IDLE left out)
 *   top_kernels the 10 kernels of most total time (kernel_stats.json)
 *   gpus      per device of each host: busy, idle, exposed communication
 *             and memcpy (gpu_timeline.csv, TraceLens's definitions)
 *   annotations the step annotations and their regions (steps.csv): per
 *             host the annotation, the count, median inclusive and
 *             unattributed time
 *   warnings  what the files above warn about
 * Chrome-trace runs (PyTorch, JAX JSON) have no op_stats: their report has
 * the hosts, the annotations (ProfilerStep#N for PyTorch) and the GPUs;
 * PyTorch runs also have
 *   top_ops   the first 10 rows of kernel_launchers_summary.csv (TraceLens:
 *             CPU ops by name, by the GPU time of the kernels they launch),
 *             the rows that file is written from (pt_summary_build)
 *   top_kernels the 10 kernel names of most total time: every trace event
 *             of category "kernel", on every host, grouped by name
 * The top_ops_source / top_kernels_source keys name where a run's come from.
 * A part whose file fails is left out and its reason listed in warnings.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/np_arith.h"
#include "base/sort.h"
#include "op_stats/op_stats.h"
#include "op_stats/op_stats_input.h"
#include "run_numbers.h"
#include "tool.h"
#include "out/datatable.h"
#include "reader/ctrace.h"
#include "tracelens/gpu_timeline.h"
#include "tracelens/pt_launchers.h"
#include "xplane/steps.h"

#define TOP_N 10

struct report_annotation {
    const char *host, *source;
    const char *name; /* the first step annotation, NULL if none */
    struct stat5 incl_us, unattributed_us;
};

struct report {
    const char *run;
    const char *const *hosts;
    int nhosts;
    const char *kind;          /* "xplane" or "chrome_trace" */
    const struct op_stats *os; /* NULL for Chrome-trace runs */
    struct ip_analysis ip;     /* valid when os */
    int has_ip;
    struct stat5 step_ms;
    double comp_ms[11];    /* averages of XProf's components (GPU and CPU runs) */
    double tpu_ms[7];      /* averages of XProf's TPU components (TPU runs) */
    int tpu;               /* 1: the breakdown is the TPU one */
    double group_ms[5];    /* compute, input, communication, host, idle */
    struct run_fw_op *ops; /* every framework op (the writers show TOP_N) */
    uint32_t nops;
    struct run_kernel *kernels; /* every kernel (the writers show TOP_N) */
    uint32_t nkernels;
    int pt;                           /* 1: PyTorch run, the pt_* top ops and kernels */
    struct pt_summary pt_ops;         /* kernel_launchers_summary.csv's rows */
    struct run_pt_kernel *pt_kernels; /* every kernel name (the writers show TOP_N) */
    size_t npt_kernels;
    struct run_gpu *gpus;
    int ngpus;
    struct report_annotation *ann;
    int nann;
    struct run_warnings warnings;
};

static const char *const comp_names[11] = {
    "device_compute", "device_to_device", "device_collectives", "host_wait_input",
    "host_to_device", "host_compute",     "host_prepare",       "host_compile",
    "output",         "unknown",          "step_time",
};
static const char *const tpu_names[7] = {
    "tensor_core_compute", "infeed",          "outfeed", "idle", "host_transfer",
    "all_reduce_compute",  "all_reduce_sync",
};
static const char *const group_names[5] = {"compute", "input", "communication", "host", "idle"};

static void warn(struct report *r, const char *fmt, const char *a, const char *b)
{
    run_warn(&r->warnings, fmt, a, b);
}

/* ---- gathering ----------------------------------------------------------------- */

static int gather_steps(struct report *r)
{
    const struct ip_analysis *a = &r->ip;
    int64_t *v = malloc((r->os->nsteps ? r->os->nsteps : 1) * sizeof(*v));
    uint32_t i, j, n;
    int c;

    if (v == NULL)
        return -ENOMEM;
    /* A step's time: its longest core's (SparseCores aside), as XProf's
     * step-time summary (overview_page) takes it. */
    n = 0;
    for (i = 0; i < r->os->nsteps; i++) {
        const struct step_entry *se = &r->os->steps[i];
        uint64_t ps = 0;
        for (j = 0; j < se->ncores; j++) {
            if (se->cores[j].core_id < 1000000 && se->cores[j].duration_ps > ps)
                ps = se->cores[j].duration_ps;
        }
        v[n++] = (int64_t)ps;
    }
    stat5_of(v, n, 1e9, &r->step_ms);
    for (i = 0; i < a->nsteps; i++) {
        const struct ip_step *s = &a->steps[i];
        const double comp[11] = {
            s->device_compute_ms,  s->device_to_device_ms, s->device_collectives_ms,
            s->host_wait_input_ms, s->host_to_device_ms,   s->host_compute_ms,
            s->host_prepare_ms,    s->host_compile_ms,     s->output_ms,
            s->unknown_ms,         s->step_time_ms};
        for (c = 0; c < 11; c++)
            r->comp_ms[c] += comp[c] / a->nsteps;
    }
    free(v);
    if (a->ntpu_steps > 0) {
        /* TPU: compute = TensorCore compute; input = infeed + host
         * transfer; communication = all-reduce compute + sync; host =
         * outfeed; idle = TensorCore idle. */
        for (i = 0; i < a->ntpu_steps; i++) {
            const struct ip_tpu_step *t = &a->tpu_steps[i];
            const double comp[7] = {
                t->tc_compute_ms,    t->tc_infeed_ms,          t->tc_outfeed_ms,     t->tc_idle_ms,
                t->host_transfer_ms, t->all_reduce_compute_ms, t->all_reduce_sync_ms};
            for (c = 0; c < 7; c++)
                r->tpu_ms[c] += comp[c] / a->ntpu_steps;
        }
        r->tpu = 1;
        r->group_ms[0] = r->tpu_ms[0];
        r->group_ms[1] = r->tpu_ms[1] + r->tpu_ms[4];
        r->group_ms[2] = r->tpu_ms[5] + r->tpu_ms[6];
        r->group_ms[3] = r->tpu_ms[2];
        r->group_ms[4] = r->tpu_ms[3];
        return 0;
    }
    r->group_ms[0] = r->comp_ms[0];
    r->group_ms[1] = r->comp_ms[3] + r->comp_ms[4];
    r->group_ms[2] = r->comp_ms[2] + r->comp_ms[1];
    r->group_ms[3] = r->comp_ms[5] + r->comp_ms[6] + r->comp_ms[7] + r->comp_ms[8];
    r->group_ms[4] = r->comp_ms[9];
    return 0;
}

static int gather_ops(struct report *r)
{
    return run_fw_ops(r->os, &r->ops, &r->nops);
}

/* Every kernel by total time, each host's report of a kernel added up. */
static int gather_kernels(struct report *r)
{
    const struct op_stats *os = r->os;
    uint32_t i;

    for (i = 0; i < os->nkernels; i++) {
        const struct kernel_report *k = &os->kernels[i];
        /* as kernel_stats warns: no GPU has more than 512 registers a thread */
        if (k->registers_per_thread > 512) {
            warn(r,
                 "kernel_stats: %s has %s registers per thread in the profile, shown as "
                 "written (the ROCm tracer writes such values)",
                 k->name, "more than 512");
            break;
        }
    }
    if (run_xp_kernels(os, &r->kernels, &r->nkernels) != 0)
        return -ENOMEM;
    if (r->nops == 0 && os->nkernels > 0)
        warn(r, "top_ops: %s%s",
             "no device time is attributed to a framework op (the kernels "
             "carry no tf_op nor hlo_op of a known module)",
             "");
    return 0;
}

static int gather_gpus(struct report *r, struct tool_ctx *ctx)
{
    return run_gpus(ctx->snap, r->hosts, r->nhosts, &r->gpus, &r->ngpus, &r->warnings);
}

static int gather_annotations(struct report *r, struct tool_ctx *ctx)
{
    int h;

    r->ann = calloc((size_t)r->nhosts + 1, sizeof(*r->ann));
    if (r->ann == NULL)
        return -ENOMEM;
    for (h = 0; h < r->nhosts; h++) {
        const struct xp_steps *m;
        struct xp_err err = {0};
        struct report_annotation *a;
        int64_t *incl, *unattr;
        uint32_t s;
        int rc;
        if (snapshot_host_file(ctx->snap, r->hosts[h], SRC_XPLANE) == NULL &&
            snapshot_host_file(ctx->snap, r->hosts[h], SRC_TRACE_JSON) == NULL &&
            snapshot_host_file(ctx->snap, r->hosts[h], SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_steps(ctx->snap, r->hosts[h], NULL, &m, &err);
        if (rc == -ENOMEM)
            return rc;
        if (rc != 0) {
            warn(r, "annotations: %s: %s", r->hosts[h], err.msg);
            continue;
        }
        a = &r->ann[r->nann++];
        a->host = r->hosts[h];
        a->source = xp_steps_source_name(m->source);
        a->name = m->nsteps > 0 && m->nstep_names > 0 ? m->step_names[0] : NULL;
        if (m->nsteps == 0) {
            if (m->reason[0])
                warn(r, "annotations: %s: %s", r->hosts[h], m->reason);
            continue;
        }
        incl = malloc(m->nsteps * sizeof(*incl));
        unattr = malloc(m->nsteps * sizeof(*unattr));
        if (incl == NULL || unattr == NULL) {
            free(incl);
            free(unattr);
            return -ENOMEM;
        }
        for (s = 0; s < m->nsteps; s++) {
            const struct xp_steps_row *row = &m->rows[m->steps[s].row];
            incl[s] = row->dur_ps;
            unattr[s] = row->self_ps;
        }
        stat5_of(incl, m->nsteps, 1e6, &a->incl_us);
        stat5_of(unattr, m->nsteps, 1e6, &a->unattributed_us);
        free(incl);
        free(unattr);
    }
    return 0;
}

/* ---- PyTorch runs ----------------------------------------------------------------- */

/* The top ops: the first rows of kernel_launchers_summary.csv, kept whole
 * (the writers print its first TOP_N). */
static int gather_pt_ops(struct report *r, const struct host_list *hl)
{
    struct xp_err err = {0};
    int rc = pt_summary_build(hl, PT_SUMMARY_BY_NAME, &r->pt_ops, &err);

    if (rc == -ENOMEM)
        return rc;
    if (rc != 0)
        warn(r, "top_ops: %s%s", err.msg, "");
    return 0;
}

/* The top kernels of a PyTorch run: every "kernel" event of every host,
 * grouped by name over the hosts (a host's sums added in host order). */
static int gather_pt_kernels(struct report *r, struct tool_ctx *ctx)
{
    return run_pt_kernels(ctx->snap, r->hosts, r->nhosts, &r->pt_kernels, &r->npt_kernels,
                          &r->warnings);
}

static void report_free(struct report *r)
{
    run_fw_ops_free(r->ops, r->nops);
    free(r->kernels);
    free(r->pt_kernels);
    if (r->has_ip)
        ip_free(&r->ip);
    free(r->gpus);
    free(r->ann);
    pt_summary_release(&r->pt_ops);
}

static int gather(struct tool_ctx *ctx, struct report *r)
{
    struct host_list hl = tool_hosts(ctx);
    uint32_t i;
    int rc;

    memset(r, 0, sizeof(*r));
    r->run = ctx->snap->session->name;
    r->hosts = hl.names;
    r->nhosts = hl.n;
    if (ctx->host != NULL) /* one host of a run that may mix kinds */
        r->kind = snapshot_host_file(ctx->snap, ctx->host, SRC_XPLANE) != NULL     ? "xplane"
                  : snapshot_host_file(ctx->snap, ctx->host, SRC_PT_TRACE) != NULL ? "pytorch_trace"
                                                                                   : "chrome_trace";
    else
        r->kind = snapshot_count(ctx->snap, SRC_XPLANE) > 0     ? "xplane"
                  : snapshot_count(ctx->snap, SRC_PT_TRACE) > 0 ? "pytorch_trace"
                                                                : "chrome_trace";
    if (strcmp(r->kind, "xplane") == 0) {
        struct xp_err err = {0};
        rc = snapshot_op_stats(ctx->snap, ctx->host, &r->os, &err);
        if (rc == -ENOMEM)
            return rc;
        if (rc != 0) {
            warn(r, "steps, ops and kernels: %s%s", err.msg, "");
            r->os = NULL;
        }
    }
    if (r->os != NULL) {
        rc = ip_analyze(r->os, &r->ip);
        r->has_ip = 1; /* ip_free frees a failed analysis too */
        if (rc != 0)
            return rc;
        if ((rc = gather_steps(r)) != 0 || (rc = gather_ops(r)) != 0)
            return rc;
        if ((rc = gather_kernels(r)) != 0)
            return rc;
        for (i = 0; i < r->os->nwarnings; i++)
            warn(r, "%s%s", r->os->warnings[i], "");
        for (i = 0; i < r->ip.nwarnings; i++)
            warn(r, "%s%s", r->ip.warnings[i], "");
    }
    if (strcmp(r->kind, "pytorch_trace") == 0) {
        r->pt = 1;
        if ((rc = gather_pt_ops(r, &hl)) != 0 || (rc = gather_pt_kernels(r, ctx)) != 0)
            return rc;
    }
    if ((rc = gather_gpus(r, ctx)) != 0)
        return rc;
    return gather_annotations(r, ctx);
}

/* ---- report.json ------------------------------------------------------------------ */

static void json_num(struct out *o, double v)
{
    out_number(o, v);
}

static void json_key(struct out *o, const char *k, int *first)
{
    out_puts(o, *first ? "" : ",");
    *first = 0;
    out_json_cstr(o, k);
    out_putc(o, ':');
}

static void json_stat5(struct out *o, const char *key, const struct stat5 *s, int *first)
{
    int f = 1;

    json_key(o, key, first);
    out_putc(o, '{');
    json_key(o, "count", &f);
    out_u64(o, s->n);
    if (s->n > 0) {
        json_key(o, "median", &f);
        json_num(o, s->median);
        json_key(o, "p90", &f);
        json_num(o, s->p90);
        json_key(o, "min", &f);
        json_num(o, s->min);
        json_key(o, "max", &f);
        json_num(o, s->max);
        json_key(o, "mean", &f);
        json_num(o, s->mean);
    }
    out_putc(o, '}');
}

static void json_str_or_null(struct out *o, const char *s)
{
    if (s == NULL || s[0] == '\0')
        out_puts(o, "null");
    else
        out_json_cstr(o, s);
}

static void write_json_steps(struct out *o, const struct report *r, int *first)
{
    const struct ip_analysis *a = &r->ip;
    int f = 1, c;

    json_stat5(o, "step_time_ms", &r->step_ms, first);
    json_key(o, "step_definition", first);
    out_json_cstr(o, "XProf's step database (op_stats): a step's time is its longest core's, as "
                     "overview_page.json's summary; the breakdown is input_pipeline_analyzer."
                     "json's table (its first host's core)");
    json_key(o, "breakdown_ms", first);
    out_putc(o, '{');
    for (c = 0; c < 5; c++) {
        json_key(o, group_names[c], &f);
        json_num(o, r->group_ms[c]);
    }
    out_putc(o, '}');
    f = 1;
    json_key(o, "components_ms", first);
    out_putc(o, '{');
    for (c = 0; c < (r->tpu ? 7 : 10); c++) {
        json_key(o, r->tpu ? tpu_names[c] : comp_names[c], &f);
        json_num(o, r->tpu ? r->tpu_ms[c] : r->comp_ms[c]);
    }
    out_putc(o, '}');
    f = 1;
    json_key(o, "bottleneck", first);
    out_putc(o, '{');
    json_key(o, "input", &f);
    json_str_or_null(o, a->input_classification);
    json_key(o, "input_statement", &f);
    json_str_or_null(o, a->input_statement);
    json_key(o, "kernel_launch_statement", &f);
    json_str_or_null(o, a->kernel_launch_statement);
    json_key(o, "all_other_statement", &f);
    json_str_or_null(o, a->all_other_statement);
    json_key(o, "device_collectives_statement", &f);
    json_str_or_null(o, a->device_collectives_statement);
    json_key(o, "recommendation", &f);
    json_str_or_null(o, a->summary_next_step);
    out_putc(o, '}');
}

static void write_json_ops(struct out *o, const struct report *r, int *first)
{
    int i;

    json_key(o, "top_ops_source", first);
    out_json_cstr(o, "op_stats");
    json_key(o, "top_ops_definition", first);
    out_json_cstr(o, "the framework ops of most self time on the device: framework_op_stats.json's "
                     "device rows, IDLE left out");
    json_key(o, "top_ops", first);
    out_putc(o, '[');
    for (i = 0; i < (int)r->nops && i < TOP_N; i++) {
        const struct run_fw_op *op = &r->ops[i];
        int f = 1;
        out_puts(o, i ? ",{" : "{");
        json_key(o, "name", &f);
        out_json_cstr(o, op->name);
        json_key(o, "type", &f);
        out_json_cstr(o, op->category);
        json_key(o, "occurrences", &f);
        out_u64(o, op->occurrences);
        json_key(o, "self_us", &f);
        json_num(o, op->self_us);
        json_key(o, "self_pct", &f);
        json_num(o, op->share_pct);
        json_key(o, "gflops_per_s", &f);
        json_num(o, op->gflops_per_s);
        out_putc(o, '}');
    }
    out_putc(o, ']');
    json_key(o, "top_kernels_source", first);
    out_json_cstr(o, "op_stats");
    json_key(o, "top_kernels_definition", first);
    out_json_cstr(o, "the kernels of most total time: kernel_stats.json's reports, each host's "
                     "report of a kernel and op added up");
    json_key(o, "top_kernels", first);
    out_putc(o, '[');
    for (i = 0; i < (int)r->nkernels && i < TOP_N; i++) {
        const struct run_kernel *k = &r->kernels[i];
        int f = 1;
        out_puts(o, i ? ",{" : "{");
        json_key(o, "name", &f);
        out_json_cstr(o, k->name);
        json_key(o, "op", &f);
        json_str_or_null(o, k->op);
        json_key(o, "occurrences", &f);
        out_u64(o, k->occurrences);
        json_key(o, "total_us", &f);
        json_num(o, k->total_us);
        json_key(o, "total_pct", &f);
        json_num(o, k->share_pct);
        json_key(o, "tensor_core", &f);
        out_puts(o, k->tensor_core ? "true" : "false");
        out_putc(o, '}');
    }
    out_putc(o, ']');
}

/* A number exactly (the fewest digits that read back as it), for the
 * PyTorch tables whose numbers are those of a CSV. */
static void json_exact(struct out *o, double v)
{
    char buf[40];

    if (!isfinite(v))
        out_puts(o, "null");
    else
        out_puts(o, dt_fmt_json_double(v, buf));
}

static void write_json_pt_ops(struct out *o, const struct report *r, int *first)
{
    size_t i, c;

    json_key(o, "top_ops_source", first);
    out_json_cstr(o, "kernel_launchers");
    json_key(o, "top_ops_definition", first);
    out_json_cstr(o, "the first rows of kernel_launchers_summary.csv (TraceLens): PyTorch CPU ops "
                     "by name over every host, by total_direct_kernel_time_sum, the GPU busy time "
                     "of the kernels each call launches itself (communication kernels left out); "
                     "occurrences is Count (the calls that launch kernels), kernel_mean_us is "
                     "kernel_total_us / occurrences, kernel_pct is Percentage (%)");
    json_key(o, "top_ops", first);
    out_putc(o, '[');
    for (i = 0; i < r->pt_ops.n && i < TOP_N; i++) {
        const struct pt_summary_row *op = &r->pt_ops.rows[i];
        int f = 1;
        out_puts(o, i ? ",{" : "{");
        json_key(o, "name", &f);
        out_json_cstr(o, op->key);
        json_key(o, "categories", &f);
        out_putc(o, '[');
        for (c = 0; c < op->ncategories; c++) {
            out_puts(o, c ? "," : "");
            out_json_cstr(o, op->categories[c]);
        }
        out_putc(o, ']');
        json_key(o, "occurrences", &f);
        out_u64(o, op->count);
        json_key(o, "kernel_total_us", &f);
        json_exact(o, op->direct_us);
        json_key(o, "kernel_mean_us", &f);
        json_exact(o, op->count > 0 ? op->direct_us / (double)op->count : 0);
        json_key(o, "kernel_pct", &f);
        json_exact(o, op->pct);
        out_putc(o, '}');
    }
    out_putc(o, ']');
}

static void write_json_pt_kernels(struct out *o, const struct report *r, int *first)
{
    int i;

    json_key(o, "top_kernels_source", first);
    out_json_cstr(o, "kernel_events");
    json_key(o, "top_kernels_definition", first);
    out_json_cstr(o, "the trace events of category \"kernel\" (ph X) of every host, grouped by "
                     "name: the same name on several hosts (ranks) is one kernel; occurrences is "
                     "its events, total_us the sum of their dur, mean_us total_us / occurrences, "
                     "max_us the longest dur, total_pct the share of all kernel events' time");
    json_key(o, "top_kernels", first);
    out_putc(o, '[');
    for (i = 0; i < (int)r->npt_kernels && i < TOP_N; i++) {
        const struct run_pt_kernel *k = &r->pt_kernels[i];
        int f = 1;
        out_puts(o, i ? ",{" : "{");
        json_key(o, "name", &f);
        out_json_cstr(o, k->name);
        json_key(o, "occurrences", &f);
        out_u64(o, k->occurrences);
        json_key(o, "total_us", &f);
        json_exact(o, k->total_us);
        json_key(o, "mean_us", &f);
        json_exact(o, k->total_us / (double)k->occurrences);
        json_key(o, "max_us", &f);
        json_exact(o, k->max_us);
        json_key(o, "total_pct", &f);
        json_exact(o, k->share_pct);
        out_putc(o, '}');
    }
    out_putc(o, ']');
}

static void write_json(struct out *o, const struct report *r)
{
    int first = 1, i, f;

    out_putc(o, '{');
    json_key(o, "run", &first);
    out_json_cstr(o, r->run);
    json_key(o, "source", &first);
    out_json_cstr(o, r->kind);
    json_key(o, "hosts", &first);
    out_putc(o, '[');
    for (i = 0; i < r->nhosts; i++) {
        out_puts(o, i ? "," : "");
        out_json_cstr(o, r->hosts[i]);
    }
    out_putc(o, ']');
    if (r->os != NULL) {
        json_key(o, "device_type", &first);
        out_json_cstr(o, r->os->device_type);
        json_key(o, "device_cores", &first);
        out_i64(o, r->os->device_core_count);
        write_json_steps(o, r, &first);
        write_json_ops(o, r, &first);
    }
    if (r->pt) {
        write_json_pt_ops(o, r, &first);
        write_json_pt_kernels(o, r, &first);
    }
    json_key(o, "gpus", &first);
    out_putc(o, '[');
    for (i = 0; i < r->ngpus; i++) {
        const struct run_gpu *g = &r->gpus[i];
        f = 1;
        out_puts(o, i ? ",{" : "{");
        json_key(o, "host", &f);
        out_json_cstr(o, g->host);
        json_key(o, "device", &f);
        out_json_cstr(o, g->device);
        json_key(o, "busy_us", &f);
        json_num(o, g->busy_us);
        json_key(o, "idle_us", &f);
        json_num(o, g->idle_us);
        json_key(o, "idle_pct", &f);
        json_num(o, g->total_us > 0 ? g->idle_us / g->total_us * 100 : 0);
        json_key(o, "exposed_comm_us", &f);
        json_num(o, g->exposed_comm_us);
        json_key(o, "exposed_memcpy_us", &f);
        json_num(o, g->exposed_memcpy_us);
        out_putc(o, '}');
    }
    out_putc(o, ']');
    json_key(o, "annotations", &first);
    out_putc(o, '[');
    for (i = 0; i < r->nann; i++) {
        const struct report_annotation *a = &r->ann[i];
        f = 1;
        out_puts(o, i ? ",{" : "{");
        json_key(o, "host", &f);
        out_json_cstr(o, a->host);
        json_key(o, "found_by", &f);
        out_json_cstr(o, a->source);
        json_key(o, "step", &f);
        json_str_or_null(o, a->name);
        json_stat5(o, "incl_us", &a->incl_us, &f);
        json_stat5(o, "unattributed_us", &a->unattributed_us, &f);
        out_putc(o, '}');
    }
    out_putc(o, ']');
    json_key(o, "warnings", &first);
    out_putc(o, '[');
    for (i = 0; i < r->warnings.n; i++) {
        out_puts(o, i ? "," : "");
        out_json_cstr(o, r->warnings.msg[i]);
    }
    out_puts(o, "]}\n");
}

/* ---- report.md -------------------------------------------------------------------- */

static void md_chars(struct out *o, const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        out_putc(o, s[i] == '|' || s[i] == '\n' ? ' ' : s[i]);
}

/* Text for a Markdown table cell ('|' and line breaks would end it); past
 * max bytes its start and its end, which tell long kernel names apart. */
static void md_cell(struct out *o, const char *s, size_t max)
{
    size_t n = s != NULL ? strlen(s) : 0, tail = max / 3;

    if (n <= max) {
        md_chars(o, s, n);
        return;
    }
    md_chars(o, s, max - tail - 3);
    out_puts(o, "...");
    md_chars(o, s + n - tail, tail);
}

/* XProf's statements are HTML ("<a href=...>"): their text without tags. */
static void md_text(struct out *o, const char *s)
{
    int in_tag = 0;

    for (; *s; s++) {
        if (*s == '<')
            in_tag = 1;
        else if (*s == '>' && in_tag)
            in_tag = 0;
        else if (!in_tag)
            out_putc(o, *s);
    }
}

static void md_bullet(struct out *o, const char *s)
{
    if (s[0] == '\0')
        return;
    out_puts(o, "- ");
    md_text(o, s);
    out_putc(o, '\n');
}

static void write_md_steps(struct out *o, const struct report *r)
{
    const struct ip_analysis *a = &r->ip;
    int c;

    out_puts(o, "\n## Step time\n\n");
    if (r->step_ms.n == 0) {
        out_puts(o, "No steps in XProf's step database.\n");
        return;
    }
    out_printf(o,
               "%u step%s (XProf's step database, as overview_page.json): median %.3f ms, p90 "
               "%.3f ms, min %.3f ms, max %.3f ms, mean %.3f ms.\n\n",
               r->step_ms.n, r->step_ms.n == 1 ? "" : "s", r->step_ms.median, r->step_ms.p90,
               r->step_ms.min, r->step_ms.max, r->step_ms.mean);
    out_puts(o, "| part of a step | ms (mean) | % |\n| --- | ---: | ---: |\n");
    for (c = 0; c < 5; c++)
        out_printf(o, "| %s | %.3f | %.1f |\n", group_names[c], r->group_ms[c],
                   r->step_ms.mean > 0 ? r->group_ms[c] / r->step_ms.mean * 100 : 0);
    out_puts(o, "\nThe parts are input_pipeline_analyzer.json's (its first host's steps); idle is "
                "the step time no step event covers, not the GPU idle time of the GPUs table.\n");
    out_puts(o, "\n## Bottleneck\n\n");
    md_bullet(o, a->input_statement);
    md_bullet(o, a->kernel_launch_statement);
    md_bullet(o, a->all_other_statement);
    md_bullet(o, a->device_collectives_statement);
    if (a->summary_next_step[0]) {
        out_puts(o, "\nRecommendation: ");
        md_text(o, a->summary_next_step);
        out_putc(o, '\n');
    }
}

static void write_md_ops(struct out *o, const struct report *r)
{
    int i;

    out_puts(o, "\n## Top ops on the device (self time)\n\n");
    if (r->nops == 0)
        out_puts(o, "None.\n");
    else
        out_puts(o, "| op | type | count | self µs | % | GFLOP/s |\n"
                    "| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (i = 0; i < (int)r->nops && i < TOP_N; i++) {
        const struct run_fw_op *op = &r->ops[i];
        out_puts(o, "| ");
        md_cell(o, op->name, 80);
        out_puts(o, " | ");
        md_cell(o, op->category, 40);
        out_printf(o, " | %llu | %.3f | %.1f | %.1f |\n", (unsigned long long)op->occurrences,
                   op->self_us, op->share_pct, op->gflops_per_s);
    }
    out_puts(o, "\n## Top kernels (total time)\n\n");
    if (r->nkernels == 0)
        out_puts(o, "None.\n");
    else
        out_puts(o, "| kernel | op | count | µs | % |\n| --- | --- | ---: | ---: | ---: |\n");
    for (i = 0; i < (int)r->nkernels && i < TOP_N; i++) {
        const struct run_kernel *k = &r->kernels[i];
        out_puts(o, "| ");
        md_cell(o, k->name, 80);
        out_puts(o, " | ");
        md_cell(o, k->op, 40);
        out_printf(o, " | %llu | %.3f | %.1f |\n", (unsigned long long)k->occurrences, k->total_us,
                   k->share_pct);
    }
}

static void write_md_pt(struct out *o, const struct report *r)
{
    size_t i, c;
    int k;

    out_puts(o, "\n## Top ops by GPU kernel time (kernel_launchers_summary.csv)\n\n");
    if (r->pt_ops.n == 0)
        out_puts(o, "None.\n");
    else
        out_puts(o, "| op | categories | count | kernel µs | mean µs | % |\n"
                    "| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (i = 0; i < r->pt_ops.n && i < TOP_N; i++) {
        const struct pt_summary_row *op = &r->pt_ops.rows[i];
        out_puts(o, "| ");
        md_cell(o, op->key, 80);
        out_puts(o, " | ");
        for (c = 0; c < op->ncategories; c++) {
            out_puts(o, c ? ", " : "");
            md_cell(o, op->categories[c], 40);
        }
        out_printf(o, " | %llu | %.3f | %.3f | %.1f |\n", (unsigned long long)op->count,
                   op->direct_us, op->count > 0 ? op->direct_us / (double)op->count : 0, op->pct);
    }
    if (r->pt_ops.n > 0)
        out_puts(o, "\nKernel time: the GPU busy time of the kernels each call of the op launches "
                    "itself (TraceLens's total_direct_kernel_time, communication kernels left "
                    "out), summed over its calls on every host.\n");
    out_puts(o, "\n## Top kernels (total time)\n\n");
    if (r->npt_kernels == 0)
        out_puts(o, "None.\n");
    else
        out_puts(o, "| kernel | count | µs | mean µs | max µs | % |\n"
                    "| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (k = 0; k < (int)r->npt_kernels && k < TOP_N; k++) {
        const struct run_pt_kernel *kn = &r->pt_kernels[k];
        out_puts(o, "| ");
        md_cell(o, kn->name, 80);
        out_printf(o, " | %llu | %.3f | %.3f | %.3f | %.1f |\n",
                   (unsigned long long)kn->occurrences, kn->total_us,
                   kn->total_us / (double)kn->occurrences, kn->max_us, kn->share_pct);
    }
    if (r->npt_kernels > 0)
        out_puts(o, "\nEvery trace event of category `kernel` on every host, grouped by name: a "
                    "kernel of the same name on several hosts (ranks) is one row.\n");
}

static void write_md(struct out *o, const struct report *r)
{
    int i;

    out_puts(o, "# Run ");
    out_puts(o, r->run);
    out_printf(o, "\n\n%d host%s (", r->nhosts, r->nhosts == 1 ? "" : "s");
    for (i = 0; i < r->nhosts; i++)
        out_printf(o, "%s%s", i ? ", " : "", r->hosts[i]);
    out_printf(o, "), %s",
               strcmp(r->kind, "xplane") == 0          ? "XProf profile"
               : strcmp(r->kind, "pytorch_trace") == 0 ? "PyTorch trace"
                                                       : "Chrome trace");
    if (r->os != NULL)
        out_printf(o, ", device %s", r->os->device_type[0] ? r->os->device_type : "unknown");
    out_puts(o, ".\n");
    if (r->os != NULL) {
        write_md_steps(o, r);
        write_md_ops(o, r);
    }
    if (r->pt)
        write_md_pt(o, r);
    out_puts(o, "\n## GPUs (gpu_timeline.csv)\n\n");
    if (r->ngpus == 0)
        out_puts(o, "No GPU timeline.\n");
    else
        out_puts(o, "| host | device | busy µs | idle µs | idle % | exposed comm µs | exposed "
                    "memcpy µs |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (i = 0; i < r->ngpus; i++) {
        const struct run_gpu *g = &r->gpus[i];
        out_printf(o, "| %s | %s | %.3f | %.3f | %.1f | %.3f | %.3f |\n", g->host, g->device,
                   g->busy_us, g->idle_us, g->total_us > 0 ? g->idle_us / g->total_us * 100 : 0,
                   g->exposed_comm_us, g->exposed_memcpy_us);
    }
    out_puts(o, "\n## Step annotations (steps.csv)\n\n");
    if (r->nann == 0)
        out_puts(o, "None.\n");
    for (i = 0; i < r->nann; i++) {
        const struct report_annotation *a = &r->ann[i];
        if (a->name == NULL) {
            out_printf(o, "- %s: no step annotation.\n", a->host);
            continue;
        }
        out_printf(o,
                   "- %s: `%s` (found by %s), %u steps, median %.3f µs inclusive, %.3f µs "
                   "unattributed.\n",
                   a->host, a->name, a->source, a->incl_us.n, a->incl_us.median,
                   a->unattributed_us.median);
    }
    if (r->warnings.n > 0)
        out_puts(o, "\n## Warnings\n\n");
    for (i = 0; i < r->warnings.n; i++)
        out_printf(o, "- %s\n", r->warnings.msg[i]);
}

static int produce(struct tool_ctx *ctx, struct out *o, int json)
{
    struct report r;
    int rc = gather(ctx, &r);

    if (rc == 0) {
        if (json)
            write_json(o, &r);
        else
            write_md(o, &r);
    }
    report_free(&r);
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "report: %s", strerror(-rc));
    return 0;
}

static int produce_md(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 0);
}

static int produce_json(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 1);
}

const struct tool tool_report_md = {
    .file = "report.md",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_any_trace,
    .produce = produce_md,
};

const struct tool tool_report_json = {
    .file = "report.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_any_trace,
    .produce = produce_json,
};
