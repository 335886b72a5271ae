/*
 * pt_perf_sheet.c - perf_report/GEMM.csv, SDPA_fwd.csv, SDPA_bwd.csv, CONV_fwd.csv,
 * CONV_bwd.csv and the vector sheets of PyTorch runs: those roofline sheets of
 * TraceLens's generate_perf_report_pytorch, build_df_perf_metrics(bwd=False,
 * include_kernel_details, include_args) over the ops with a perf model of
 * that family (pt_perf_model.h), then summarize_df_perf_metrics with the
 * report's mean, median, std, min and max. The SDPA and CONV families make
 * one table, split by op name into the _fwd sheet and the _bwd one (the
 * backward ops TraceLens's bwd=False pass models: varlen flash backward,
 * convolution_backward); TraceLens's bwd=True rows (forward ops linked to
 * their autograd backward) are not made.
 *
 * Per op: the model's params (pt_perf_params.c; GEMM: M, N, K, bias, stride_A, stride_B,
 * dtype_A_B, B, and transpose when a kernel name below the op is a ROCm
 * Tensile or an NVIDIA nvjet GEMM; SDPA: B, N_Q, H_Q, N_KV, H_KV, d_h_qk,
 * d_h_v, the q/k/v strides for flash_attn, dropout, causal, flash_impl,
 * dtype_A_B; CONV: convNd, shapes, dtypes, strides, bias, stride, padding,
 * dilation, transposed_conv, output_padding, groups), GFLOPS, bytes, the busy time of the GPU
 * events below it, TFLOP/s and TB/s. Rows group by name and the str() of
 * each param (pandas' groupby; a param an op lacks is "nan"), in columns of
 * first sight; numbers follow pandas 1.5 (Kahan mean and sum, Welford std,
 * NaN skipped); rows sort by Kernel Time (µs)_sum descending, then UID. A run
 * of several hosts groups by host too and adds a host column.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_launchers.h"
#include "pt_launchers_int.h"
#include "pt_nodes.h"
#include "pt_perf_model.h"
#include "pt_perf_sheet_int.h"
#include "pt_pyrepr.h"
#include "base/grow.h"
#include "base/sort.h"

static const char *const gemm_names[] = {"M",        "N",         "K", "bias",      "stride_A",
                                         "stride_B", "dtype_A_B", "B", "transpose", NULL};

static const char *const conv_names[] = {"convNd",
                                         "input_shape",
                                         "filter_shape",
                                         "dtype_input_weight",
                                         "input_stride",
                                         "weight_stride",
                                         "bias",
                                         "stride",
                                         "padding",
                                         "dilation",
                                         "transposed_conv",
                                         "output_padding",
                                         "groups",
                                         NULL};

static const char *const sdpa_names[] = {
    "B",           "N_Q",          "H_Q",           "N_KV",      "H_KV",
    "d_h_qk",      "d_h_v",        "q_stride",      "k_stride",  "v_stride",
    "dropout",     "causal",       "flash_impl",    "dtype_A_B", "num_seqs_q",
    "num_seqs_kv", "max_seqlen_q", "max_seqlen_kv", NULL};

/* The ops generate_perf_report_pytorch moves from a family's forward table
 * to its backward sheet (SDPA_bwd, CONV_bwd): its bwd=False pass models them,
 * the bwd=True pass would not. */
static const char *const bwd_op_names[] = {"flash_attn::_flash_attn_varlen_backward",
                                           "aten::convolution_backward", "ConvBias_Backward",
                                           "ConvBiasReLU_Backward", NULL};

static int is_bwd_op(const char *name)
{
    int i;

    for (i = 0; bwd_op_names[i] != NULL; i++) {
        if (strcmp(bwd_op_names[i], name) == 0)
            return 1;
    }
    return 0;
}

static void grow_free(struct grow *r)
{
    int p;

    for (p = 0; p < MAX_PARAMS; p++)
        free(r->params[p]);
    free(r->kernels);
    free(r->cells);
}

/* The GPU events below node, depth first in TraceLens's child order, then
 * sorted by ts (stable), into gpu[] (room for the trace's events). */
static uint32_t kernels_below(const struct pt_nodes *nd, uint32_t node, uint32_t *stack,
                              uint32_t *gpu)
{
    const struct ctrace *ct = nd->ct;
    uint32_t depth = 0, n = 0, k, i, j;

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
    for (i = 1; i < n; i++) {
        uint32_t e = gpu[i];
        for (j = i; j > 0 && ct->events[gpu[j - 1]].ts > ct->events[e].ts; j--)
            gpu[j] = gpu[j - 1];
        gpu[j] = e;
    }
    return n;
}

int pt_perf_row(const struct pt_nodes *nd, const struct pt_meta *meta, const char *sheet,
                uint32_t i, uint32_t *stack, uint32_t *gpu, struct grow *r)
{
    const struct ctrace *ct = nd->ct;
    const char *name = ctrace_str(ct, ct->events[i].name);
    cJSON *args = ctrace_event_args(ct, &ct->events[i]);
    struct pt_launcher fake;
    struct pt_buf cells;
    struct pt_perf p;
    uint32_t n, k;
    int ok, rc;
    char tr[32];

    if (args == NULL)
        return 1;
    if (pt_perf_model(name, args, &p) != 0 || (sheet != NULL && strcmp(p.sheet, sheet) != 0)) {
        cJSON_Delete(args);
        return 1;
    }
    sheet = p.sheet;
    r->sheet = p.sheet;
    if (pt_vector_known(name))
        rc = pt_vector_model(name, args, &p, r);
    else if (pt_sdpa_known(name))
        rc = pt_sdpa_model(name, args, &p, r);
    else if (strcmp(sheet, "GEMM") == 0)
        rc = pt_sheet_gemm_params(name, args, r);
    else if (strcmp(sheet, "CONV_fwd") == 0)
        rc = pt_sheet_conv_params(args, strcmp(name, "aten::convolution_backward") == 0, r);
    else
        rc = pt_sheet_sdpa_params(name, args, r);
    cJSON_Delete(args);
    if (rc != 0)
        return rc == -EINVAL ? 1 : rc;
    n = kernels_below(nd, i, stack, gpu);
    for (k = 0; strcmp(sheet, "GEMM") == 0 && k < n; k++) {
        int t = pt_sheet_transpose(ctrace_str(ct, ct->events[gpu[k]].name), tr, sizeof(tr));
        if (t < 0)
            return 1;
        if (t > 0) {
            if (pt_sheet_set_param(r, 8, tr) != 0)
                return -ENOMEM;
            break;
        }
    }
    r->busy = pt_busy_time(ct, gpu, n, &r->busy_int, &ok);
    if (!ok)
        return -ENOMEM;
    if (n == 0) {
        r->busy = 0;
        r->busy_int = 1;
    }
    r->kernels = malloc(((size_t)n + 1) * sizeof(*r->kernels));
    if (r->kernels == NULL)
        return -ENOMEM;
    memcpy(r->kernels, gpu, (size_t)n * sizeof(*gpu));
    r->nkernels = n;
    r->uid = i;
    r->nd = nd;
    r->gflops = p.flops / 1e9;
    r->tflops = r->busy > 0 ? (r->gflops / 1e3) / (r->busy / 1e6) : NAN;
    r->mb = p.has_bytes ? p.bytes / (1024.0 * 1024.0) : NAN;
    r->fpb = p.has_bytes ? (p.bytes > 0 ? (r->gflops * 1e9) / p.bytes : NAN) : NAN;
    r->tbs = p.has_bytes && r->busy > 0 ? (p.bytes / 1e12) / (r->busy / 1e6) : NAN;
    if (p.precision != NULL)
        snprintf(r->spec, sizeof(r->spec), "%s_%s", p.maf, p.precision);
    memset(&fake, 0, sizeof(fake));
    fake.uid = i;
    fake.category = "";
    memset(&cells, 0, sizeof(cells));
    if (pt_group_cells(ct, &fake, meta, &cells) != 0) {
        pt_buf_free(&cells);
        return -ENOMEM;
    }
    r->cells = cells.p;
    r->ncells = cells.n;
    return 0;
}

/* ---- pandas' statistics, NaN skipped ----------------------------------------- */

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

void pt_nan_stats(const double *v, size_t n, double *scratch, struct pt_nstats *s)
{
    double sum = 0, comp = 0, mean = 0, m2 = 0;
    size_t i, k = 0;

    s->first = s->min = s->max = NAN;
    for (i = 0; i < n; i++) {
        double y, t, old;
        if (isnan(v[i]))
            continue;
        if (k == 0)
            s->first = s->min = s->max = v[i];
        scratch[k++] = v[i];
        y = v[i] - comp;
        t = sum + y;
        comp = t - sum - y;
        sum = t;
        old = mean;
        mean += (v[i] - old) / (double)k;
        m2 += (v[i] - old) * (v[i] - mean);
        if (v[i] < s->min)
            s->min = v[i];
        if (v[i] > s->max)
            s->max = v[i];
    }
    s->sum = sum;
    s->mean = k > 0 ? sum / (double)k : NAN;
    s->std = k > 1 ? sqrt(m2 / (double)(k - 1)) : NAN;
    if (k == 0) {
        s->median = NAN;
        return;
    }
    xp_qsort(scratch, k, sizeof(*scratch), dbl_cmp);
    s->median = k % 2 ? scratch[k / 2] : (scratch[k / 2] + scratch[k / 2 - 1]) / 2;
}

/* ---- grouping and writing ----------------------------------------------------- */

struct ggroup {
    uint32_t first; /* index into the sorted rows */
    uint32_t n;
    double sum; /* Kernel Time (µs)_sum */
    uint32_t uid;
    int host;
};

struct gctx {
    const int *cols; /* param columns in order */
    int ncols;
};

static const char *param_text(const struct grow *r, int p)
{
    return r->params[p] != NULL ? r->params[p] : "nan";
}

static int grow_cmp(const void *a, const void *b, void *arg)
{
    const struct grow *x = a, *y = b;
    const struct gctx *g = arg;
    int c, k;

    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    c = strcmp(ctrace_str(x->nd->ct, x->nd->ct->events[x->uid].name),
               ctrace_str(y->nd->ct, y->nd->ct->events[y->uid].name));
    for (k = 0; c == 0 && k < g->ncols; k++)
        c = strcmp(param_text(x, g->cols[k]), param_text(y, g->cols[k]));
    if (c != 0)
        return c;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int ggroup_cmp(const void *a, const void *b)
{
    const struct ggroup *x = a, *y = b;

    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    if (x->uid != y->uid)
        return x->uid < y->uid ? -1 : 1;
    return x->host < y->host ? -1 : x->host > y->host;
}

static void put_f(struct out *o, double v)
{
    out_putc(o, ',');
    pt_put_float(o, v);
}

static void put_t(struct out *o, double v, int as_int)
{
    out_putc(o, ',');
    if (!isnan(v))
        pt_put_time(o, v, as_int);
}

/* Write a JSON args member raw (lists stay lists); empty when absent/null. */
static void put_arg(struct out *o, const struct grow *r, const char *key, struct pt_buf *b)
{
    const struct ctrace *ct = r->nd->ct;
    const char *args, *val;
    size_t alen, vlen;

    args = ctrace_event_args_text(ct, &ct->events[r->uid], &alen);
    if (args == NULL || !pt_json_member(args, alen, key, &val, &vlen) ||
        (vlen == 4 && memcmp(val, "null", 4) == 0))
        return;
    if (vlen > 0 && val[0] == '"') {
        char *s = malloc(vlen + 1);
        if (s != NULL && pt_json_string(val, vlen, s, vlen + 1))
            out_csv_str(o, s, strlen(s));
        free(s);
        return;
    }
    b->n = 0;
    if (pt_json_repr(b, val, vlen, 0) != 0)
        b->n = 0;
    pt_put_buf(o, b);
}

/* The three name cells of r (process_name, process_label, thread_name). */
static void put_names(struct out *o, const struct grow *r)
{
    const char *p = r->cells;
    int c;

    for (c = 0; c < 5; c++) {
        uint32_t len;
        memcpy(&len, p + 1, sizeof(len));
        if (c >= 2) {
            out_putc(o, ',');
            if (p[0] != 0)
                out_csv_str(o, p + 5, len);
        }
        p += 5 + len;
    }
}

static int write_group(struct out *o, const struct grow *r, size_t n, const struct gctx *g,
                       int kt_int, int multi, const struct host_list *hl, double *v,
                       double *scratch, struct pt_buf *b)
{
    struct pt_klist *lists = malloc((n + 1) * sizeof(*lists));
    struct pt_nstats st;
    const char *name = ctrace_str(r[0].nd->ct, r[0].nd->ct->events[r[0].uid].name);
    size_t i;
    int k, m, rc;

    if (lists == NULL)
        return -ENOMEM;
    out_csv_str(o, name, strlen(name));
    for (k = 0; k < g->ncols; k++) {
        const char *t = param_text(&r[0], g->cols[k]);
        out_putc(o, ',');
        out_csv_str(o, t, strlen(t));
    }
    for (i = 0; i < n; i++)
        v[i] = r[i].gflops;
    pt_nan_stats(v, n, scratch, &st);
    put_f(o, st.first);
    for (i = 0; i < n; i++)
        v[i] = r[i].mb;
    pt_nan_stats(v, n, scratch, &st);
    put_f(o, st.first);
    for (i = 0; i < n; i++)
        v[i] = r[i].fpb;
    pt_nan_stats(v, n, scratch, &st);
    put_f(o, st.first);
    for (m = 0; m < 2; m++) {
        for (i = 0; i < n; i++)
            v[i] = m == 0 ? r[i].tbs : r[i].tflops;
        pt_nan_stats(v, n, scratch, &st);
        put_f(o, st.mean);
        put_f(o, st.median);
        put_f(o, st.std);
        put_f(o, st.min);
        put_f(o, st.max);
    }
    put_names(o, &r[0]);
    out_putc(o, ',');
    out_puts(o, r[0].spec);
    out_putc(o, ',');
    for (i = 0; i < n; i++) {
        lists[i].ct = r[i].nd->ct;
        lists[i].k = r[i].kernels;
        lists[i].n = r[i].nkernels;
    }
    rc = pt_put_kernel_details(o, lists, n);
    free(lists);
    if (rc != 0)
        return rc;
    /* pt_put_kernel_details ended with ','; the args follow */
    {
        static const char *const keys[4] = {"Input Dims", "Input type", "Input Strides",
                                            "Concrete Inputs"};
        for (k = 0; k < 4; k++) {
            if (k > 0)
                out_putc(o, ',');
            put_arg(o, &r[0], keys[k], b);
        }
    }
    for (i = 0; i < n; i++)
        v[i] = r[i].busy;
    pt_nan_stats(v, n, scratch, &st);
    put_f(o, st.mean);
    put_f(o, st.median);
    put_f(o, st.std);
    put_t(o, st.min, kt_int);
    put_t(o, st.max, kt_int);
    put_t(o, st.sum, kt_int);
    out_printf(o, ",%zu,%u", n, r[0].uid);
    if (multi) {
        out_putc(o, ',');
        out_csv_str(o, hl->names[r[0].host], strlen(hl->names[r[0].host]));
    }
    out_putc(o, '\n');
    return b->oom ? -ENOMEM : 0;
}

/* Collect the GEMM rows of every PyTorch host of hl. */
static int collect(const struct host_list *hl, const char *sheet, struct grow **rp, size_t *np,
                   struct xp_err *err)
{
    struct grow *v = NULL;
    size_t n = 0;
    uint32_t cap = 0;
    int h, rc = 0;

    for (h = 0; h < hl->n && rc == 0; h++) {
        const struct pt_nodes *nd;
        const struct ctrace *ct;
        struct pt_meta *meta = NULL;
        uint32_t *stack, *gpu, i;
        if (snapshot_host_file(hl->snap, hl->names[h], SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_pt_nodes(hl->snap, hl->names[h], 0, &nd, err);
        if (rc != 0)
            break;
        ct = nd->ct;
        stack = malloc(((size_t)ct->nevents + 1) * sizeof(*stack));
        gpu = malloc(((size_t)ct->nevents + 1) * sizeof(*gpu));
        if (stack == NULL || gpu == NULL || pt_meta_collect(ct, &meta) != 0)
            rc = xp_err_set(err, -ENOMEM, "out of memory");
        for (i = 0; rc == 0 && i < ct->nevents; i++) {
            const struct ctrace_event *e = &ct->events[i];
            int r;
            if (e->name == 0 || !pt_perf_model_known(ctrace_str(ct, e->name)))
                continue;
            if (xp_grow((void **)&v, &cap, (uint32_t)n, sizeof(*v)) != 0) {
                rc = xp_err_set(err, -ENOMEM, "out of memory");
                break;
            }
            memset(&v[n], 0, sizeof(v[n]));
            v[n].host = h;
            v[n].ord = (uint32_t)n;
            r = pt_perf_row(nd, meta, sheet, i, stack, gpu, &v[n]);
            if (r < 0)
                rc = xp_err_set(err, r, "out of memory");
            if (r != 0)
                grow_free(&v[n]);
            else
                n++;
        }
        pt_meta_free(meta);
        free(stack);
        free(gpu);
    }
    *rp = v;
    *np = n;
    return rc;
}

const char *const *pt_sheet_param_names(const char *sheet)
{
    return strcmp(sheet, "GEMM") == 0       ? gemm_names
           : strcmp(sheet, "CONV_fwd") == 0 ? conv_names
           : strcmp(sheet, "SDPA_fwd") == 0 ? sdpa_names
                                            : pt_vector_param_names(sheet);
}

int pt_perf_sheet_csv(const struct host_list *hl, const char *name, struct out *o,
                      struct xp_err *err)
{
    /* A backward sheet holds the rows of its forward family's table that
     * is_bwd_op names; the forward sheet the others. Columns, dtypes and
     * order come from the whole family's table. */
    int bwd = strcmp(name, "SDPA_bwd") == 0 || strcmp(name, "CONV_bwd") == 0;
    int split = bwd || strcmp(name, "SDPA_fwd") == 0 || strcmp(name, "CONV_fwd") == 0;
    const char *sheet = !bwd ? name : name[0] == 'S' ? "SDPA_fwd" : "CONV_fwd";
    const char *const *param_names = pt_sheet_param_names(sheet);
    struct grow *v = NULL;
    struct ggroup *g = NULL;
    double *vals = NULL, *scratch = NULL;
    struct pt_buf b;
    int cols[MAX_PARAMS], ncols = 0, seen[MAX_PARAMS] = {0}, kt_int = 1, multi = hl->n > 1, k;
    size_t n = 0, ng = 0, i, j;
    struct gctx gc;
    int rc;

    memset(&b, 0, sizeof(b));
    if (param_names == NULL)
        return xp_err_set(err, -ENOENT, "perf_report/%s.csv: not made yet", name);
    rc = collect(hl, sheet, &v, &n, err);
    if (rc == 0 && n == 0)
        rc = xp_err_set(err, -ENOENT, "perf_report/%s.csv: no %s op with a perf model", name, name);
    if (rc == 0 && pt_sheet_float_columns(v, n) != 0)
        rc = xp_err_set(err, -ENOMEM, "out of memory");
    if (rc != 0)
        goto out;
    for (i = 0; i < n; i++) {
        kt_int &= v[i].busy_int;
        for (k = 0; k < v[i].nparams; k++) {
            if (!seen[v[i].order[k]]) {
                seen[v[i].order[k]] = 1;
                cols[ncols++] = v[i].order[k];
            }
        }
    }
    gc.cols = cols;
    gc.ncols = ncols;
    xp_qsort_r(v, n, sizeof(*v), grow_cmp, &gc);
    g = malloc((n + 1) * sizeof(*g));
    vals = malloc((n + 1) * sizeof(*vals));
    scratch = malloc((n + 1) * sizeof(*scratch));
    if (g == NULL || vals == NULL || scratch == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < n; i = j) {
        struct pt_nstats st;
        for (j = i + 1; j < n; j++) {
            struct grow a = v[i], c = v[j];
            a.ord = c.ord = 0;
            if (grow_cmp(&a, &c, &gc) != 0)
                break;
        }
        for (size_t q = i; q < j; q++)
            vals[q - i] = v[q].busy;
        pt_nan_stats(vals, j - i, scratch, &st);
        if (split && is_bwd_op(ctrace_str(v[i].nd->ct, v[i].nd->ct->events[v[i].uid].name)) != bwd)
            continue;
        g[ng].first = (uint32_t)i;
        g[ng].n = (uint32_t)(j - i);
        g[ng].sum = st.sum;
        g[ng].uid = v[i].uid;
        g[ng].host = v[i].host;
        ng++;
    }
    if (ng == 0) {
        rc = xp_err_set(err, -ENOENT, "perf_report/%s.csv: no %s op with a perf model", name, name);
        goto out;
    }
    xp_qsort(g, ng, sizeof(*g), ggroup_cmp);
    out_puts(o, "name");
    for (k = 0; k < ncols; k++)
        out_printf(o, ",param: %s", param_names[cols[k]]);
    out_puts(o, ",GFLOPS_first,Data Moved (MB)_first,FLOPS/Byte_first,TB/s_mean,TB/s_median,"
                "TB/s_std,TB/s_min,TB/s_max,TFLOPS/s_mean,TFLOPS/s_median,TFLOPS/s_std,"
                "TFLOPS/s_min,TFLOPS/s_max,process_name_first,process_label_first,"
                "thread_name_first,Compute Spec,kernel_details__summarize_kernel_stats,"
                "trunc_kernel_details,Input Dims_first,Input type_first,Input Strides_first,"
                "Concrete Inputs_first,Kernel Time (\xc2\xb5s)_mean,Kernel Time (\xc2\xb5s)_median,"
                "Kernel Time (\xc2\xb5s)_std,Kernel Time (\xc2\xb5s)_min,"
                "Kernel Time (\xc2\xb5s)_max,Kernel Time (\xc2\xb5s)_sum,name_count,UID_first");
    out_puts(o, multi ? ",host\n" : "\n");
    for (i = 0; i < ng && rc == 0; i++) {
        rc = write_group(o, v + g[i].first, g[i].n, &gc, kt_int, multi, hl, vals, scratch, &b);
        if (rc != 0)
            xp_err_set(err, rc, "out of memory");
    }
out:
    for (i = 0; i < n; i++)
        grow_free(&v[i]);
    free(v);
    free(g);
    free(vals);
    free(scratch);
    pt_buf_free(&b);
    return rc;
}
