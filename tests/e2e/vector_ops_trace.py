"""A generated Kineto trace of the ops TraceLens's vector perf models cover.

Unary and binary elementwise ops (broadcasts, scalars, an out tensor, an
unknown dtype, shapes that do not broadcast), replication pad and nearest
upsample, every aten normalization class forward and backward (batch,
layer, group, instance, RMS; affine or not; instance_norm_backward, which
TraceLens does not model), and reductions (dims in Concrete Inputs, cumsum,
no Input Dims at all). Each op runs a few times with other kernel times, so
the sheets group and take statistics. Deterministic: the same bytes each
time (MD5 pinned by the test, so the recorded TraceLens outputs in
tracelens_ref/gen_vector_ops/ stay the outputs of this very trace).
"""
import json
import random

F, H, B = "float", "c10::Half", "c10::BFloat16"

# (name, Input Dims, Input type, Input Strides, Concrete Inputs)
OPS = [
    ("aten::sigmoid", [[1024]], [F], [[1]], [""]),
    ("aten::copy_", [[16, 64], [16, 64], []], [H, F, "Scalar"], [[64, 1], [1, 16], []],
     ["", "", "False"]),
    ("aten::neg", [[32, 8]], ["c10::ComplexFloat"], [[8, 1]], [""]),
    ("aten::rsqrt", [[]], [F], [[]], [""]),
    ("aten::replication_pad2d", [[1, 3, 32, 32], []], [B, ""], [[3072, 1024, 32, 1], []],
     ["", "[1, 1, 2, 2]"]),
    ("aten::replication_pad1d", [[2, 4, 50], []], ["c10::ComplexFloat", ""],
     [[200, 50, 1], []], ["", "[3, 3]"]),
    ("aten::upsample_nearest2d", [[1, 3, 16, 16], [], []], [F, "", ""],
     [[768, 256, 16, 1], [], []], ["", "[32, 32]", ""]),
    ("aten::mul", [[4, 1, 64], [1, 8, 64]], [B, B], [[64, 64, 1], [512, 64, 1]], ["", ""]),
    ("aten::add", [[64], [64], []], [F, F, "Scalar"], [[1], [1], []], ["", "", "1"]),
    ("aten::add_", [[64], [64], [], [64]], [H, H, "Scalar", H], [[1], [1], [], [1]],
     ["", "", "1", ""]),
    ("aten::div", [[64], []], [B, "Scalar"], [[1], []], ["", "2"]),
    ("aten::threshold_backward", [[128], [128], []], [F, F, "Scalar"], [[1], [1], []],
     ["", "", "0"]),
    ("aten::sigmoid_backward", [[3, 4], [5, 4]], [F, F], [[4, 1], [4, 1]], ["", ""]),
    ("LigerSiLUMulFunction", [[8, 256], [8, 256], [8, 256]], [B, B, B],
     [[256, 1], [256, 1], [256, 1]], ["", "", ""]),
    ("aten::batch_norm", [[8, 16, 32, 32], [16], [16], [16], [16], [], [], [], []],
     [F, F, F, F, F, "Scalar", "Scalar", "Scalar", "Scalar"],
     [[16384, 1024, 32, 1], [1], [1], [1], [1], [], [], [], []],
     ["", "", "", "", "", "False", "0.1", "1e-05", "True"]),
    ("aten::cudnn_batch_norm", [[8, 16, 32, 32], None, None, [16], [16], [], [], []],
     [H, "", "", F, F, "Scalar", "Scalar", "Scalar"],
     [[16384, 1024, 32, 1], [], [], [1], [1], [], [], []],
     ["", "", "", "", "", "", "0.1", "1e-05"]),
    ("aten::native_batch_norm_backward",
     [[8, 16, 32, 32], [8, 16, 32, 32], [16], [16], [16], [16], [16], [], [], []],
     [F, F, F, F, F, F, F, "Scalar", "Scalar", "ScalarList"],
     [[16384, 1024, 32, 1], [16384, 1024, 32, 1], [1], [1], [1], [1], [1], [], [], []],
     ["", "", "", "", "", "", "", "True", "1e-05", "[True, True, True]"]),
    ("aten::cudnn_batch_norm_backward",
     [[8, 16, 32, 32], [8, 16, 32, 32], [16], [16], [16], [16], [16], [], []],
     [B, B, F, F, F, F, F, "Scalar", ""],
     [[16384, 1024, 32, 1], [16384, 1024, 32, 1], [1], [1], [1], [1], [1], [], []],
     ["", "", "", "", "", "", "", "1e-05", ""]),
    ("aten::layer_norm", [[2, 128, 512], [], [512], [512], [], []],
     [B, "ScalarList", B, B, "Scalar", "Scalar"], [[65536, 512, 1], [], [1], [1], [], []],
     ["", "[512]", "", "", "1e-05", "True"]),
    ("aten::native_layer_norm", [[2, 128, 512], [], None, None, []],
     [F, "ScalarList", "", "", "Scalar"], [[65536, 512, 1], [], [], [], []],
     ["", "[128, 512]", "", "", "1e-05"]),
    ("aten::native_layer_norm_backward",
     [[2, 128, 512], [2, 128, 512], [], [2, 128, 1], [2, 128, 1], [512], [512], []],
     [B, B, "ScalarList", F, F, B, B, "ScalarList"],
     [[65536, 512, 1], [65536, 512, 1], [], [128, 1, 1], [128, 1, 1], [1], [1], []],
     ["", "", "[512]", "", "", "", "", "[True, True, False]"]),
    ("aten::group_norm", [[8, 32, 16, 16], [], [32], [32], [], []],
     [F, "Scalar", F, F, "Scalar", "Scalar"], [[8192, 256, 16, 1], [], [1], [1], [], []],
     ["", "8", "", "", "1e-05", "True"]),
    ("aten::native_group_norm_backward",
     [[8, 32, 16, 16], [8, 32, 16, 16], [8, 8], [8, 8], [32], [], [], [], [], []],
     [F, F, F, F, F, "Scalar", "Scalar", "Scalar", "Scalar", "ScalarList"],
     [[8192, 256, 16, 1], [8192, 256, 16, 1], [8, 1], [8, 1], [1], [], [], [], [], []],
     ["", "", "", "", "", "8", "32", "256", "3", "[True, False, True]"]),
    ("aten::instance_norm", [[4, 8, 16, 16], None, None, None, None, [], [], [], []],
     [F, "", "", "", "", "Scalar", "Scalar", "Scalar", "Scalar"],
     [[2048, 256, 16, 1], [], [], [], [], [], [], [], []],
     ["", "", "", "", "", "True", "0.1", "1e-05", "False"]),
    ("aten::instance_norm_backward", [[4, 8, 16, 16], [4, 8, 16, 16]], [F, F],
     [[2048, 256, 16, 1], [2048, 256, 16, 1]], ["", ""]),
    ("aten::_fused_rms_norm", [[2, 128, 512], [], [512], []], [B, "ScalarList", B, "Scalar"],
     [[65536, 512, 1], [], [1], []], ["", "[512]", "", "1e-06"]),
    ("aten::_fused_rms_norm", [[4, 7, 96], [], None, []], [F, "ScalarList", "", "Scalar"],
     [[672, 96, 1], [], [], []], ["", "[7, 96]", "", "1e-06"]),
    ("aten::_fused_rms_norm_backward",
     [[2, 128, 512], [2, 128, 512], [], [2, 128, 1], [512], []],
     [B, B, "ScalarList", F, B, "ScalarList"],
     [[65536, 512, 1], [65536, 512, 1], [], [128, 1, 1], [1], []],
     ["", "", "[512]", "", "", "[True, True]"]),
    ("aten::sum", [[4, 256], [], [], []], [F, "ScalarList", "Scalar", ""],
     [[256, 1], [], [], []], ["", "[1]", "False", ""]),
    ("aten::amax", [[4, 256], [], []], [B, "ScalarList", "Scalar"], [[256, 1], [], []],
     ["", "[-1]", "True"]),
    ("aten::cumsum", [[4, 256], [], []], [H, "Scalar", ""], [[256, 1], [], []], ["", "1", ""]),
    ("aten::logsumexp", [[4, 256], [], []], [F, "ScalarList", "Scalar"], [[256, 1], [], []],
     ["", "[1]", "False"]),
    ("aten::max", [], [], [], []),
    ("aten::mean", [[16, 512]], [""], [[512, 1]], [""]),
]


def _x(cat, name, ts, dur, pid, tid, args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def events():
    rnd = random.Random(55)
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
          {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "CPU"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1,
           "args": {"name": "thread 1 (python3)"}},
          {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3"}},
          {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}]
    t, gpu_t, corr = 1000.0, 1500.0, 1
    for rep in range(3):
        for name, dims, types, strides, ci in OPS:
            args = {"External id": corr, "Record function id": 0, "Ev Idx": corr}
            if dims or name != "aten::max":
                args.update({"Input Dims": dims, "Input type": types, "Input Strides": strides,
                             "Concrete Inputs": ci})
            ev.append(_x("cpu_op", name, t, 20, 1, 1, args))
            ev.append(_x("cuda_runtime", "cudaLaunchKernel", t + 5, 4, 1, 1,
                         {"External id": corr, "correlation": corr}))
            kdur = round(rnd.uniform(2, 12), 3)
            ev.append(_x("kernel", f"void at::native::vectorized_elementwise_kernel<4>({name})",
                         gpu_t, kdur, 0, 7, {"External id": corr, "correlation": corr,
                                             "stream": 7, "device": 0}))
            if rep == 1 and name.endswith("_norm"):  # a second kernel, overlapping the first
                ev.append(_x("cuda_runtime", "cudaLaunchKernel", t + 12, 4, 1, 1,
                             {"External id": corr, "correlation": corr + 100000}))
                ev.append(_x("kernel", "void at::native::reduce_kernel<512, 1>(second)",
                             gpu_t + kdur / 2, 3.5, 0, 7,
                             {"External id": corr, "correlation": corr + 100000, "stream": 7,
                              "device": 0}))
            ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 1,
                       "ts": t + 5})
            ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": 7,
                       "ts": gpu_t, "bp": "e"})
            t += 30
            gpu_t += kdur + round(rnd.uniform(1, 3), 3) + 4
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
