/*
 * pt_perf_sheet_int.h - what the roofline sheets share: one op row
 * (pt_perf_sheet.c groups and writes them) and the perf models' params as
 * TraceLens's get_param_details gives them, str()'d (pt_perf_params.c).
 */
#ifndef XPROFS_PT_PERF_SHEET_INT_H
#define XPROFS_PT_PERF_SHEET_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "pt_nodes.h"
#include "pt_perf_model.h"
#include "pt_pyrepr.h"

struct pt_meta;

#define MAX_PARAMS 20

/* One op row. */
struct grow {
    int host;
    uint32_t uid;
    const struct pt_nodes *nd;
    char *params[MAX_PARAMS];  /* str() of each param, NULL when absent */
    uint8_t order[MAX_PARAMS]; /* the op's param names in its dict order */
    uint8_t kind[MAX_PARAMS];  /* PK_INT / PK_FLOAT for a number, else 0 */
    int nparams;
    double gflops, mb, fpb, tbs, tflops, busy;
    int busy_int;
    char spec[32];
    const char *sheet; /* the model's table (struct pt_perf's sheet), static */
    uint32_t *kernels; /* below it, by ts */
    uint32_t nkernels;
    char *cells; /* process_name, process_label, thread_name cells (pt_group_cells) */
    size_t ncells;
    uint32_t ord;
};

/* One op i of nd with a perf model into *r (zeroed by the caller; free its
 * params, kernels and cells): the model's params, GFLOPS, bytes, the busy
 * time of the GPU events below it (sorted by ts into r->kernels), TFLOP/s,
 * TB/s, Compute Spec and the grouping cells. sheet: only ops of that table,
 * or NULL for any. stack and gpu have room for the trace's events. Returns
 * 0, 1 when the op is not of sheet or TraceLens's model raises on it, or
 * -ENOMEM. */
int pt_perf_row(const struct pt_nodes *nd, const struct pt_meta *meta, const char *sheet,
                uint32_t i, uint32_t *stack, uint32_t *gpu, struct grow *r);

/* pandas' statistics of v[0..n) with NaN skipped (first: the first non-NaN;
 * Kahan sum and mean, Welford std with ddof=1, median of the two middle
 * values; NaN where no value, std NaN for one). scratch has room for n. */
struct pt_nstats {
    double first, mean, median, std, min, max, sum;
};
void pt_nan_stats(const double *v, size_t n, double *scratch, struct pt_nstats *s);

/* The param names of a roofline table ("GEMM", "SDPA_fwd", "CONV_fwd" or a
 * vector sheet), by the index grow's params use; NULL for another. */
const char *const *pt_sheet_param_names(const char *sheet);

/* The kind of a param's Python value, where pandas' column dtype matters: a
 * column of numbers with one float or one missing value is float64, and
 * astype(str) then prints its ints as floats ("512.0"). */
#define PK_INT 1
#define PK_FLOAT 2

/* Ints of a number column that pandas makes float64 are respelled so. */
int pt_sheet_float_columns(struct grow *rows, size_t n);

/* Param p of r gets the text s (in the op's dict order). 0 or -ENOMEM. */
int pt_sheet_set_param(struct grow *r, int p, const char *s);

/* repr(tuple(a[from:to])) of a JSON list of ints or strings into b
 * (NUL-terminated). 0, -EINVAL (not such a list), -ENOMEM. */
int pt_sheet_tuple_repr(const cJSON *a, int from, int to, struct pt_buf *b);

/* gemm_name_parser's transpose of a kernel name into out: 1 when parsed, 0
 * when not a GEMM name, -1 when TraceLens's parser would raise. */
int pt_sheet_transpose(const char *name, char *out, size_t n);

/* The params of op name on args into r, in the order TraceLens's model
 * class returns them: GEMM (aten::mm, addmm, bmm, baddbmm), SDPA
 * (scaled-dot-product and flash attention), CONV (aten::convolution).
 * Return 0, -EINVAL when TraceLens's get_param_details would raise (the op
 * is then left out), -ENOMEM. */
int pt_sheet_gemm_params(const char *name, const cJSON *args, struct grow *r);
int pt_sheet_sdpa_params(const char *name, const cJSON *args, struct grow *r);
int pt_sheet_conv_params(const cJSON *args, int bwd, struct grow *r);

/* The attention models pt_perf_sdpa.c adds to the SDPA sheets: flash_attn's
 * backward and varlen ops, flash_attn_3::fwd and the aiter attention ops
 * (pt_sdpa_known: 1 when name is one). pt_sdpa_model: flops, bytes,
 * category, sheet and precision into *p and, when r is not NULL, the params
 * (B, N_Q, H_Q, N_KV, H_KV, d_h_qk, d_h_v, q/k/v_stride, dropout, causal,
 * flash_impl, dtype_A_B, num_seqs_q, num_seqs_kv, max_seqlen_q,
 * max_seqlen_kv, the indexes of the SDPA sheet's names) into r. 0, -EINVAL
 * when TraceLens's model raises (the op is left out), -ENOMEM. */
int pt_sdpa_known(const char *name);
int pt_sdpa_model(const char *name, const cJSON *args, struct pt_perf *p, struct grow *r);

/* Where a GEMM op other than the aten ones keeps its operands
 * (tex_ts::te_gemm_ts, vllm::gemm_with_dynamic_quant; pt_perf_model.c):
 * A and B at Input Dims[ia], [ib], the sizes, the bias, and the Input type
 * indexes of dtype_A_B. 0, or -EINVAL when TraceLens's get_param_details
 * raises or name is another op. */
struct pt_gemm_layout {
    int ia, ib;      /* A, B in Input Dims */
    int sa, sb;      /* stride_A, stride_B in Input Strides */
    int64_t M, N, K; /* sizes */
    int bias;        /* a bias is added */
    int dt[4], ndt;  /* dtype_A_B: Input type indexes */
};
int pt_gemm_layout(const char *name, const cJSON *args, struct pt_gemm_layout *l);

/* TraceLens's name2bpe (bytes per element of a dtype name, 0 for None)
 * and torch_dtype_map (precision name or NULL), pt_perf_model.c. */
int pt_name2bpe(const char *t);
const char *pt_torch_dtype_map(const char *t);

/* The vector perf models (pt_perf_vector.c): aten unary and binary
 * elementwise ops, replication pads and nearest upsamples, the aten
 * normalizations (batch, layer, group, instance, RMS; forward and
 * backward ops) and reductions. pt_vector_known: 1 when name has one.
 * pt_vector_model: the op's flops, bytes, category, sheet and precision
 * into *p and, when r is not NULL, its params (get_param_details, str()'d)
 * into r. 0, -EINVAL when TraceLens's model raises on these args (the op is
 * left out), -ENOMEM. pt_vector_param_names: a sheet's param names, by
 * the index r->params uses, NULL-terminated; NULL for another sheet. */
int pt_vector_known(const char *name);
int pt_vector_model(const char *name, const cJSON *args, struct pt_perf *p, struct grow *r);
const char *const *pt_vector_param_names(const char *sheet);

/* 1 when op name's TraceLens model raises NotImplementedError on any args
 * (the instance-norm backward ops), where a raise of another kind is an
 * error: build_df_unified_perf_table leaves such an op out altogether. */
int pt_vector_not_implemented(const char *name);

#endif
