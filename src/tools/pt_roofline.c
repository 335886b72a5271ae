/*
 * pt_roofline.c - roofline.csv of a PyTorch run: FLOPs, bytes moved and the
 * achieved TFLOP/s and TB/s of every op TraceLens has an aten perf model for
 * (GEMM, convolution, attention, elementwise, normalization, reduce), as
 * TraceLens's TreePerfAnalyzer.build_df_perf_metrics computes them (bwd=False,
 * no arch) with its perf models (pt_perf_model.h lists the ops covered).
 *
 * Rows: every event of the trace whose name has a model, in file order, per
 * worker; an op whose args the model cannot read is left out (TraceLens drops
 * it too). Columns:
 *
 *   host               the worker
 *   UID                the op's position in traceEvents
 *   name               the op name
 *   category           the model's category: GEMM, CONV_fwd, CONV_bwd,
 *                      SDPA_fwd, SDPA_bwd, elementwise, NORM_fwd, NORM_bwd
 *                      or reduce
 *   Input Dims         its args, as kernel_launchers.csv prints them
 *   Input type
 *   GFLOPS             flops() / 1e9
 *   Kernel Time (µs)   busy time of the GPU events in the op's subtree
 *                      (union of [ts, ts + dur), TraceLens's GPUEventAnalyser)
 *   TFLOPS/s           (GFLOPS / 1e3) / (Kernel Time / 1e6); empty when the
 *                      kernel time is 0
 *   Data Moved (MB)    bytes() / 2^20; empty when the model knows no element
 *                      size for the dtype
 *   FLOPS/Byte         GFLOPS * 1e9 / bytes (empty when bytes is 0 or unknown)
 *   TB/s               (bytes / 1e12) / (Kernel Time / 1e6)
 *   Compute Spec       get_maf_type() + "_" + precision ("matrix_bf16",
 *                      "vector_fp32"), empty if unknown
 *
 * Numbers are Python's repr of the float TraceLens computes (Kernel Time too,
 * so an integral time reads "3.0"); the metric columns hold the same values as
 * the columns of the same names in TraceLens's build_df_perf_metrics output.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracelens/pt_nodes.h"
#include "tracelens/pt_perf_model.h"
#include "tracelens/pt_pyrepr.h"
#include "tool.h"

static const char header[] = "host,UID,name,category,Input Dims,Input type,GFLOPS,Kernel Time "
                             "(\xc2\xb5s),TFLOPS/s,Data Moved (MB),FLOPS/Byte,TB/s,Compute Spec\n";

static void put_num(struct out *o, double v)
{
    char num[40];

    if (isnan(v))
        return;
    pt_float_repr(v, num, sizeof(num));
    out_puts(o, num);
}

/* An args member as repr (tuples for lists), CSV-quoted; empty if absent. */
static void put_arg(struct out *o, struct pt_buf *b, const char *args, size_t len, const char *key)
{
    const char *val;
    size_t vlen;

    b->n = 0;
    if (args != NULL && pt_json_member(args, len, key, &val, &vlen))
        (void)pt_json_repr(b, val, vlen, 1);
    out_csv_str(o, b->p != NULL ? b->p : "", b->n);
}

/* The GPU events below node, in TraceLens's depth-first order, into gpu[]. */
static uint32_t subtree_gpu(const struct pt_nodes *nd, uint32_t node, uint32_t *stack,
                            uint32_t *gpu)
{
    uint32_t depth = 0, n = 0, k;

    stack[depth++] = node;
    while (depth > 0) {
        uint32_t e = stack[--depth];
        if (nd->t.kind[e] == PT_GPU) {
            gpu[n++] = e;
            continue;
        }
        for (k = nd->child_first[e + 1]; k > nd->child_first[e]; k--)
            stack[depth++] = nd->children[k - 1];
    }
    return n;
}

static int put_row(struct out *o, struct pt_buf *b, const char *host, const struct pt_nodes *nd,
                   uint32_t i, const struct pt_perf *p, uint32_t *stack, uint32_t *gpu)
{
    const struct ctrace *ct = nd->ct;
    const struct ctrace_event *e = &ct->events[i];
    const char *name = ctrace_str(ct, e->name), *args;
    double gflops = p->flops / 1e9, busy;
    size_t alen;
    uint32_t ngpu = subtree_gpu(nd, i, stack, gpu);
    int is_int, ok;

    busy = pt_busy_time(ct, gpu, ngpu, &is_int, &ok);
    if (!ok)
        return -ENOMEM;
    args = ctrace_event_args_text(ct, e, &alen);
    out_csv_str(o, host, strlen(host));
    out_printf(o, ",%" PRIu32 ",", i);
    out_csv_str(o, name, strlen(name));
    out_printf(o, ",%s,", p->category);
    put_arg(o, b, args, alen, "Input Dims");
    out_putc(o, ',');
    put_arg(o, b, args, alen, "Input type");
    out_putc(o, ',');
    put_num(o, gflops);
    out_putc(o, ',');
    put_num(o, busy);
    out_putc(o, ',');
    put_num(o, busy > 0 ? (gflops / 1e3) / (busy / 1e6) : NAN);
    out_putc(o, ',');
    put_num(o, p->has_bytes ? p->bytes / (1024.0 * 1024.0) : NAN);
    out_putc(o, ',');
    put_num(o, p->has_bytes && p->bytes > 0 ? (gflops * 1e9) / p->bytes : NAN);
    out_putc(o, ',');
    put_num(o, p->has_bytes && busy > 0 ? (p->bytes / 1e12) / (busy / 1e6) : NAN);
    out_putc(o, ',');
    if (p->precision != NULL)
        out_printf(o, "%s_%s", p->maf, p->precision);
    out_putc(o, '\n');
    return b->oom ? -ENOMEM : 0;
}

static int host_rows(struct tool_ctx *ctx, struct out *o, const char *host,
                     const struct pt_nodes *nd)
{
    const struct ctrace *ct = nd->ct;
    size_t slots = ct->nevents ? ct->nevents : 1;
    uint32_t *stack = malloc(slots * sizeof(*stack)), *gpu = malloc(slots * sizeof(*gpu)), i;
    struct pt_buf b = {0};
    int rc = 0;

    if (stack == NULL || gpu == NULL)
        rc = -ENOMEM;
    for (i = 0; rc == 0 && i < ct->nevents; i++) {
        const struct ctrace_event *e = &ct->events[i];
        struct pt_perf p;
        cJSON *args;
        if (e->name == 0 || !pt_perf_model_known(ctrace_str(ct, e->name)))
            continue;
        args = ctrace_event_args(ct, e);
        if (pt_perf_model(ctrace_str(ct, e->name), args, &p) == 0)
            rc = put_row(o, &b, host, nd, i, &p, stack, gpu);
        cJSON_Delete(args);
    }
    pt_buf_free(&b);
    free(stack);
    free(gpu);
    return rc == 0 ? 0 : xp_err_set(ctx->err, rc, "out of memory");
}

static int roofline_csv(struct tool_ctx *ctx, struct out *o)
{
    int n = tool_host_count(ctx), i, npt = 0, rc;

    for (i = 0; i < n; i++) {
        if (snapshot_host_file(ctx->snap, tool_host(ctx, i), SRC_PT_TRACE) != NULL)
            npt++;
    }
    if (npt == 0)
        return xp_err_set(ctx->err, -ENOENT, "no PyTorch trace in this run");
    out_puts(o, header);
    for (i = 0; i < n; i++) {
        const char *host = tool_host(ctx, i);
        const struct pt_nodes *nd;
        if (snapshot_host_file(ctx->snap, host, SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_pt_nodes(ctx->snap, host, 0, &nd, ctx->err);
        if (rc != 0)
            return rc;
        rc = host_rows(ctx, o, host, nd);
        if (rc != 0)
            return rc;
    }
    return 0;
}

const struct tool tool_roofline_csv = {
    .file = "roofline.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = pt_run_listed,
    .produce = roofline_csv,
};
