/*
 * pt_perf_model.h - TraceLens's analytic perf models (PerfModel/perf_model.py)
 * for the GEMM, convolution and attention ops of a PyTorch trace: FLOPs and
 * bytes moved from a cpu_op's "Input Dims", "Input type" and "Concrete
 * Inputs" args, with the same formulas and the same failures (an op whose
 * args a model cannot read is left out, as TraceLens's build_df_perf_metrics
 * drops it).
 *
 * Models (op name -> TraceLens class):
 *   aten::mm, aten::addmm, aten::bmm, aten::baddbmm     GEMM (2MNK [+ MN bias]) x B
 *   aten::_scaled_mm, trtllm::cublas_scaled_mm,
 *   bitsandbytes::int8_linear_matmul                     GEMM (aten_scaled_mm)
 *   _Linear_yfwd_mm, _LinearBackward_{x,w}grad_mm,
 *   _LayerNormLinear{_yfwd,Backward_xgrad,Backward_wgrad}_mm  GEMM (tev2_pseudo_gemm)
 *   tex_ts::te_gemm_ts, vllm::gemm_with_dynamic_quant    GEMM (their classes)
 *   aten::convolution                                    CONV_fwd (aten_conv)
 *   aten::convolution_backward                           CONV_bwd (aten_conv_bwd)
 *   aten::_scaled_dot_product_flash_attention,
 *   aten::_scaled_dot_product_efficient_attention,
 *   aten::_scaled_dot_product_cudnn_attention,
 *   FlashAttnFunc, flash_attn::_flash_attn_forward       SDPA_fwd
 * the attention models of pt_perf_sdpa.c (flash_attn backward and varlen,
 * flash_attn_3::fwd, aiter) and the vector models of pt_perf_vector.c (aten
 * unary and binary elementwise ops, normalizations, reductions).
 */
#ifndef XPROFS_PT_PERF_MODEL_H
#define XPROFS_PT_PERF_MODEL_H

#include <cjson/cJSON.h>

/* What a model gives for one op. */
struct pt_perf {
    const char *category;  /* the model class's category: "GEMM", "CONV_fwd",
                            * "CONV_bwd", "SDPA_fwd", "SDPA_bwd", "elementwise",
                            * "NORM_fwd", "NORM_bwd", "reduce" (static) */
    const char *sheet;     /* the perf_report table its rows go to: "GEMM",
                            * "SDPA_fwd", "CONV_fwd", "UnaryElementwise",
                            * "BinaryElementwise", "Normalization", "Reduce_fwd"
                            * (the SDPA and CONV tables are split into _fwd and
                            * _bwd sheets by op name, pt_perf_sheet.c) */
    const char *maf;       /* get_maf_type(): "matrix" or "vector" */
    double flops;          /* flops() as Python computes it */
    int has_bytes;         /* 0: bytes() is None (unknown element size) */
    double bytes;          /* bytes() */
    const char *precision; /* torch_dtype_map of the first input dtype
                            * ("bf16", "fp32", ...) or NULL (static) */
};

/* 1 when TraceLens has a model above for op name. */
int pt_perf_model_known(const char *name);

/* The model of op name on its parsed args. Returns 0, or -EINVAL when the
 * model fails on these args (missing or malformed dims, mismatched shapes,
 * causal attention with N_Q != N_KV, ...). */
int pt_perf_model(const char *name, const cJSON *args, struct pt_perf *p);

#endif
