"""A generated Kineto trace of the matrix ops of TraceLens's perf models that
the corpus lacks: convolution backward (CONV_bwd), the flash-attention and
aiter attention variants, forward and backward (SDPA_fwd / SDPA_bwd), and
the scaled, Transformer Engine (pseudo and te_gemm_ts) and vLLM dynamic-quant
GEMMs (GEMM).

Args are spelled as PyTorch's profiler writes them (record_shapes): a tensor
has its shape in Input Dims and its dtype in Input type, a scalar or list
has [] and "Scalar" / "ScalarList" with its value in Concrete Inputs, None
has [] and "". Some ops are made to fail TraceLens's model on purpose (mixed
dtypes, an unknown dtype, mismatched heads), so that they are left out.
Each op runs a few times with other kernel times, so the sheets group and
take statistics. Deterministic: the same bytes each time (MD5 pinned by the
test, so the recorded TraceLens outputs in tracelens_ref/gen_roofline_ops/
stay the outputs of this very trace).
"""
import json
import random

F, H, B = "float", "c10::Half", "c10::BFloat16"
E4, E5 = "c10::Float8_e4m3fn", "c10::Float8_e5m2"
S, SL = "Scalar", "ScalarList"


def conv_bwd(gout, x, w, bias_sizes, stride, padding, dilation, transposed, out_pad, groups,
             dt=B, wdt=None, bias_dims=None):
    """aten::convolution_backward(grad_output, input, weight, bias_sizes, stride,
    padding, dilation, transposed, output_padding, groups, output_mask)."""
    def st(s):
        r, acc = [], 1
        for d in reversed(s):
            r.insert(0, acc)
            acc *= d
        return r
    mask = "[True, True, True]" if bias_sizes else "[True, True, False]"
    return ("aten::convolution_backward",
            [gout, x, w, bias_dims if bias_dims is not None else [], [], [], [], [], [], [], []],
            [dt, dt, wdt or dt, SL if bias_sizes else "", SL, SL, SL, S, SL, S, SL],
            [st(gout), st(x), st(w), [], [], [], [], [], [], [], []],
            ["", "", "", bias_sizes, stride, padding, dilation, transposed, out_pad, groups,
             mask])


def conv_fwd(x, w, stride, padding, dt=B):
    return ("aten::convolution", [x, w, [], [], [], [], [], [], []],
            [dt, dt, "", SL, SL, SL, S, SL, S],
            [[x[1] * x[2] * x[3], x[2] * x[3], x[3], 1], [w[1] * w[2] * w[3], w[2] * w[3], w[3], 1],
             [], [], [], [], [], [], []],
            ["", "", "", stride, padding, "[1, 1]", "False", "[0, 0]", "1"])


def bnhd(b, n, h, d):
    return [b, n, h, d], [n * h * d, h * d, d, 1]


def fa_fwd(q, k, dropout="0.0", causal="True", dt=B):
    """flash_attn::_flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal,
    window_size_left, window_size_right, softcap, alibi_slopes, return_softmax)."""
    (qd, qs), (kd, ks) = bnhd(*q), bnhd(*k)
    return ("flash_attn::_flash_attn_forward", [qd, kd, kd, [], [], [], [], [], [], [], []],
            [dt, dt, dt, S, S, S, S, S, S, "", S], [qs, ks, ks, [], [], [], [], [], [], [], []],
            ["", "", "", dropout, "0.125", causal, "-1", "-1", "0.0", "", "False"])


def fa_bwd(q, k, dropout="0.0", scale="0.125", causal="True", dt=B):
    """flash_attn::_flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv,
    dropout_p, softmax_scale, causal, window_size_left, window_size_right, softcap,
    alibi_slopes, deterministic, rng_state)."""
    (qd, qs), (kd, ks) = bnhd(*q), bnhd(*k)
    lse = [q[0], q[2], q[1]]
    return ("flash_attn::_flash_attn_backward",
            [qd, qd, kd, kd, qd, lse, qd, kd, kd, [], [], [], [], [], [], [], [], [2]],
            [dt, dt, dt, dt, dt, F, dt, dt, dt, S, S, S, S, S, S, "", S, "long int"],
            [qs, qs, ks, ks, qs, [lse[1] * lse[2], lse[2], 1], qs, ks, ks, [], [], [], [], [], [],
             [], [], [1]],
            ["", "", "", "", "", "", "", "", "", dropout, scale, causal, "-1", "-1", "0.0", "",
             "False", ""])


def varlen_fwd(total_q, total_k, h, hk, d, nseq, maxq, maxk, causal="True", dt=B):
    """flash_attn::_flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k,
    max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal, window_size_left,
    window_size_right, softcap, alibi_slopes, return_softmax, block_table)."""
    q, k = [total_q, h, d], [total_k, hk, d]
    qs, ks = [h * d, d, 1], [hk * d, d, 1]
    return ("flash_attn::_flash_attn_varlen_forward",
            [q, k, k, [nseq + 1], [nseq + 1], [], [], [], [], [], [], [], [], [], [], []],
            [dt, dt, dt, "int", "int", S, S, S, S, S, S, S, S, "", S, ""],
            [qs, ks, ks, [1], [1], [], [], [], [], [], [], [], [], [], [], []],
            ["", "", "", "", "", str(maxq), str(maxk), "0.0", "0.125", causal, "-1", "-1", "0.0",
             "", "False", ""])


def varlen_bwd(total_q, total_k, h, hk, d, nseq, maxq, maxk, causal="True", dt=B):
    """flash_attn::_flash_attn_varlen_backward(dout, q, k, v, out, softmax_lse, dq,
    dk, dv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p,
    softmax_scale, causal, window_size_left, window_size_right, softcap,
    alibi_slopes, deterministic, rng_state)."""
    q, k = [total_q, h, d], [total_k, hk, d]
    qs, ks = [h * d, d, 1], [hk * d, d, 1]
    return ("flash_attn::_flash_attn_varlen_backward",
            [q, q, k, k, q, [h, total_q], q, k, k, [nseq + 1], [nseq + 1], [], [], [], [], [],
             [], [], [], [], [], [2]],
            [dt, dt, dt, dt, dt, F, dt, dt, dt, "int", "int", S, S, S, S, S, S, S, S, "", S,
             "long int"],
            [qs, qs, ks, ks, qs, [total_q, 1], qs, ks, ks, [1], [1], [], [], [], [], [], [], [],
             [], [], [], [1]],
            ["", "", "", "", "", "", "", "", "", "", "", str(maxq), str(maxk), "0.0", "0.125",
             causal, "-1", "-1", "0.0", "", "False", ""])


def generic(name, tensors, scalars, dt=B):
    """An op with tensors first (shapes in bnhd order), then scalars."""
    dims = [t for t in tensors] + [[] for _ in scalars]
    types = [dt if t else "" for t in tensors] + [S if s not in ("",) else "" for s in scalars]
    strides = []
    for t in tensors:
        r, acc = [], 1
        for d in reversed(t):
            r.insert(0, acc)
            acc *= d
        strides.append(r)
    strides += [[] for _ in scalars]
    return (name, dims, types, strides, ["" for _ in tensors] + list(scalars))


def aiter_fa_fwd(q, k, causal="True", dropout="0.0"):
    # q, k, v, dropout_p, softmax_scale, causal, window_size_left, window_size_right,
    # bias, alibi_slopes, return_lse, return_softmax
    return generic("aiter::_flash_attn_forward", [q, k, k],
                   [dropout, "0.125", causal, "-1", "-1", "", "", "True", "False"])


def aiter_fa_bwd(q, k, causal="True", dropout="0.0"):
    # dout, q, k, v, out, softmax_lse, dq, dk, dv, dbias, dropout_p, softmax_scale,
    # causal, window_size_left, window_size_right, alibi_slopes, deterministic, rng_state
    lse = [q[0], q[2], q[1]]
    return generic("aiter::_flash_attn_backward", [q, q, k, k, q, lse, q, k, k, []],
                   [dropout, "0.125", causal, "-1", "-1", "", "False", ""])


def fmha_v3_fwd_wrapper(q, k, causal="True"):
    # out, q, k, v, dropout_p, softmax_scale, is_causal, window_size_left, ...
    return generic("aiter::wrapper_fmha_v3_fwd", [q, q, k, k],
                   ["0.0", "0.125", causal, "-1", "-1", "True", "False", ""])


def fmha_v3_bwd_wrapper(q, k, causal="True"):
    # dout, q, k, v, out, softmax_lse, dq, dropout_p, softmax_scale, is_causal, ...
    lse = [q[0], q[2], q[1]]
    return generic("aiter::wrapper_fmha_v3_bwd", [q, q, k, k, q, lse, q],
                   ["0.0", "0.125", causal, "-1", "-1", "False", ""])


def mha_fwd(name, q, k, causal="True", dropout="0.0"):
    # q, k, v, dropout_p, softmax_scale, is_causal, window_size_left, window_size_right,
    # return_softmax_lse, return_dropout_randval, out, bias, alibi_slopes, gen
    return generic(name, [q, k, k],
                   [dropout, "0.125", causal, "-1", "0", "True", "False", "", "", "", ""])


def mha_bwd(q, k, causal="True"):
    # dout, q, k, v, out, softmax_lse, dropout_p, softmax_scale, is_causal, ...
    lse = [q[0], q[2], q[1]]
    return generic("aiter::mha_bwd", [q, q, k, k, q, lse],
                   ["0.0", "0.125", causal, "-1", "0", "False", "", "", "", "", "", "", ""])


def fa3_fwd(q, k, causal="True"):
    # flash_attn_3::fwd(q, k, v, k_new, v_new, q_v, out, cu_seqlens_q, cu_seqlens_k,
    # cu_seqlens_k_new, seqused_q, seqused_k, max_seqlen_q, max_seqlen_k, page_table,
    # kv_batch_idx, leftpad_k, rotary_cos, rotary_sin, seqlens_rotary, q_descale,
    # k_descale, v_descale, softmax_scale, is_causal, window_size_left, ...)
    return generic("flash_attn_3::fwd", [q, k, k],
                   [""] * 20 + ["0.125", causal, "-1", "-1", "0", "0.0", "True", "", "1", "",
                                "0"])


def scaled_mm(m, k, n, ta, tb, bias=False, out="15"):
    """aten::_scaled_mm(self, mat2, scale_a, scale_b, bias, scale_result, out_dtype,
    use_fast_accum)."""
    dims = [[m, k], [k, n], [], []] + ([[n]] if bias else [[]]) + [[], [], []]
    types = [ta, tb, F, F, B if bias else "", "", S, S]
    strides = [[k, 1], [1, k], [], []] + ([[1]] if bias else [[]]) + [[], [], []]
    return ("aten::_scaled_mm", dims, types, strides, ["", "", "", "", "", "", out, "False"])


def scaled_mm_bias3(m, k, n, t):
    """A _scaled_mm recorded with three inputs only (the bias form of the model)."""
    return ("aten::_scaled_mm", [[m, k], [k, n], [n]], [t, t, B], [[k, 1], [1, k], [1]],
            ["", "", ""])


def te_gemm(name, m, k, n, ta, tb=None):
    return (name, [[m, k], [k, n]], [ta, tb or ta], [[k, 1], [n, 1]], ["", ""])


def te_gemm_ts(a, transa, b, transb, d, bias="", wtype="unsigned char"):
    """tex_ts::te_gemm_ts(A, A_scale_inverse, A_fp8_tensor, A_type, transa, B,
    B_scale_inverse, B_fp8_tensor, B_type, transb, D, D_scale, D_type, D_amax, bias,
    bias_type, pre_gelu_out, grad, workspace, workspaceSize, accumulate,
    use_split_accumulator)."""
    dims = [a, [], [], [], [], b, [], [], [], [], d, [], [], [], [], [], [], [], [33554432],
            [], [], []]
    types = [B, "", S, S, S, B, "", S, S, S, B, "", S, "", "", S, "", S, wtype, S, S, S]
    strides = [[a[1], 1], [], [], [], [], [b[1], 1], [], [], [], [], [d[1], 1], [], [], [], [],
               [], [], [], [1], [], [], []]
    ci = ["", "", "0", "7", transa, "", "", "0", "7", transb, "", "", "7", "", bias, "7", "",
          "False", "", "33554432", "False", "False"]
    return ("tex_ts::te_gemm_ts", dims, types, strides, ci)


def vllm_dq(x, n):
    """vllm::gemm_with_dynamic_quant(x, weight, weight_scale, x_scales, use_asm, out_dtype):
    an MXFP4 weight [N, K / 2] with its scales [N, K / 32]."""
    k = x[-1]
    dims = [x, [n, k // 2], [n, k // 32], [], [], []]
    types = [B, "unsigned char", "unsigned char", "", S, S]
    strides = [[k, 1] if len(x) == 2 else [x[1] * k, k, 1], [k // 2, 1], [k // 32, 1], [], [], []]
    return ("vllm::gemm_with_dynamic_quant", dims, types, strides, ["", "", "", "", "True", "15"])


OPS = [
    # CONV forward and backward
    conv_fwd([8, 64, 56, 56], [64, 64, 3, 3], "[1, 1]", "[1, 1]"),
    conv_bwd([8, 64, 56, 56], [8, 64, 56, 56], [64, 64, 3, 3], "", "[1, 1]", "[1, 1]", "[1, 1]",
             "False", "[0, 0]", "1"),
    conv_bwd([8, 128, 28, 28], [8, 64, 56, 56], [128, 64, 3, 3], "[128]", "[2, 2]", "[1, 1]",
             "[1, 1]", "False", "[0, 0]", "1"),
    conv_bwd([4, 32, 100], [4, 16, 200], [32, 16, 5], "", "[2]", "[2]", "[1]", "False", "[0]",
             "1", dt=F),
    conv_bwd([2, 16, 64, 64], [2, 32, 32, 32], [32, 16, 4, 4], "", "[2, 2]", "[1, 1]", "[1, 1]",
             "True", "[0, 0]", "1", dt=H),
    conv_bwd([8, 64, 56, 56], [8, 64, 56, 56], [64, 1, 3, 3], "[64]", "[1]", "[1]", "[1]",
             "False", "[0]", "64", bias_dims=[64]),
    conv_bwd([8, 64, 56, 56], [8, 64, 56, 56], [64, 64, 1, 1], "", "", "", "", "False", "",
             "1"),
    conv_bwd([8, 64, 56, 56], [8, 64, 56, 56], [64, 64, 3, 3], "", "[1, 1]", "[1, 1]",
             "[1, 1]", "False", "[0, 0]", "1", wdt=F),  # mixed dtypes: left out
    # flash_attn
    fa_fwd([2, 1024, 16, 64], [2, 1024, 16, 64]),
    fa_bwd([2, 1024, 16, 64], [2, 1024, 16, 64]),
    fa_bwd([4, 512, 32, 128], [4, 512, 8, 128], scale="0.08838834764831845", causal="False"),
    fa_bwd([1, 256, 8, 64], [1, 256, 8, 64], scale="0", causal="True", dropout="0.1"),
    fa_bwd([1, 256, 8, 64], [1, 512, 8, 64], scale="0.125"),  # causal, N_Q != N_KV: left out
    varlen_fwd(4096, 4096, 16, 16, 64, 4, 1536, 1536),
    varlen_fwd(3000, 3000, 32, 8, 128, 1, 3000, 3000, causal="False"),
    varlen_bwd(4096, 4096, 16, 16, 64, 4, 1536, 1536),
    varlen_bwd(6000, 6000, 32, 8, 128, 3, 2500, 2500, causal="False"),
    # aiter
    aiter_fa_fwd([2, 1024, 16, 128], [2, 1024, 16, 128]),
    aiter_fa_fwd([2, 1024, 16, 128], [2, 2048, 4, 128], causal="False", dropout="None"),
    aiter_fa_bwd([2, 1024, 16, 128], [2, 1024, 16, 128]),
    aiter_fa_bwd([2, 1024, 16, 128], [2, 1024, 4, 128]),  # k and "v" (q) differ: left out
    fmha_v3_fwd_wrapper([1, 2048, 32, 128], [1, 2048, 8, 128]),
    fmha_v3_bwd_wrapper([1, 2048, 32, 128], [1, 2048, 8, 128]),
    mha_fwd("aiter::mha_fwd", [4, 512, 16, 64], [4, 512, 16, 64], causal="False"),
    mha_fwd("aiter::fmha_v3_fwd", [4, 512, 16, 64], [4, 512, 16, 64]),
    mha_bwd([4, 512, 16, 64], [4, 512, 4, 64]),
    fa3_fwd([2, 4096, 32, 128], [2, 4096, 8, 128]),
    # scaled and Transformer Engine GEMMs
    scaled_mm(2048, 4096, 1024, E4, E4),
    scaled_mm(2048, 4096, 1024, E4, E5, bias=True),
    scaled_mm(512, 1024, 256, B, B),
    scaled_mm(512, 1024, 256, F, F),
    scaled_mm(512, 1024, 256, "long", "long"),  # unknown size: TraceLens asserts, left out
    scaled_mm_bias3(256, 512, 128, E4),
    te_gemm("_Linear_yfwd_mm", 8192, 4096, 4096, B),
    te_gemm("_LinearBackward_xgrad_mm", 8192, 4096, 4096, B),
    te_gemm("_LinearBackward_wgrad_mm", 4096, 8192, 4096, B),
    te_gemm("_LayerNormLinear_yfwd_mm", 8192, 4096, 12288, E4),
    te_gemm("_LayerNormLinearBackward_xgrad_mm", 8192, 12288, 4096, E4),
    te_gemm("_LayerNormLinearBackward_wgrad_mm", 4096, 8192, 12288, B, F),  # mixed: left out
    te_gemm_ts([4096, 1024], "1", [2048, 1024], "0", [2048, 4096]),
    te_gemm_ts([1024, 4096], "0", [1024, 2048], "1", [2048, 4096], bias="0", wtype=""),
    vllm_dq([128, 4096], 8192),
    vllm_dq([1, 128, 4096], 8192),  # 3-D x: the weight and its scales are A and B
]

GEMM_KERNELS = ["Cijk_Alik_Bljk_BBS_BH_MT128x128x64_MI16x16x1", "nvjet_tst_128x256_64x4_2x1_v_bz_TNT",
                "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn>"]


def _x(cat, name, ts, dur, pid, tid, args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def kernel_name(name, i):
    if "mm" in name:
        return GEMM_KERNELS[i % len(GEMM_KERNELS)]
    if "conv" in name:
        return "void cudnn::cnn::wgrad2d_grouped_direct_kernel<float, float>(" + name + ")"
    return "void flash::flash_bwd_dq_dk_dv_loop_kernel<Flash_bwd_kernel_traits>(" + name + ")"


def events():
    rnd = random.Random(63)
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
          {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "CPU"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1,
           "args": {"name": "thread 1 (python3)"}},
          {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3"}},
          {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}]
    t, gpu_t, corr = 1000.0, 1500.0, 1
    for rep in range(3):
        for i, (name, dims, types, strides, ci) in enumerate(OPS):
            args = {"External id": corr, "Record function id": 0, "Ev Idx": corr,
                    "Input Dims": dims, "Input type": types, "Input Strides": strides,
                    "Concrete Inputs": ci}
            ev.append(_x("cpu_op", name, t, 40, 1, 1, args))
            nk = 2 if rep == 1 and i % 3 == 0 else 1
            for j in range(nk):
                c = corr + 100000 * j
                ev.append(_x("cuda_runtime", "cudaLaunchKernel", t + 5 + 10 * j, 4, 1, 1,
                             {"External id": corr, "correlation": c}))
                kdur = round(rnd.uniform(20, 400), 3)
                ev.append(_x("kernel", kernel_name(name, i + j), gpu_t, kdur, 0, 7,
                             {"External id": corr, "correlation": c, "stream": 7, "device": 0}))
                ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 1, "tid": 1,
                           "ts": t + 5 + 10 * j})
                ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": c, "pid": 0, "tid": 7,
                           "ts": gpu_t, "bp": "e"})
                gpu_t += kdur + round(rnd.uniform(1, 3), 3)
            t += 50
            gpu_t += 4
            corr += 1
    return ev


def write(path):
    """Write the trace to path (a .pt.trace.json); returns its bytes."""
    doc = {"schemaVersion": 1, "deviceProperties": [], "traceEvents": events()}
    data = json.dumps(doc).encode()
    path.write_bytes(data)
    return data


if __name__ == "__main__":
    import pathlib
    import sys
    write(pathlib.Path(sys.argv[1]))
