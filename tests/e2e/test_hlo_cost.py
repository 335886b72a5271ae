"""The HLO cost model end to end: FLOP rates, memory bandwidth, operational
intensity and bound-by of framework_op_stats and overview_page on the JAX GEMM
and convolution profiles.

Expected values are recomputed here from the raw .xplane.pb: the HLO modules
of /host:metadata are parsed with python protobuf (a minimal xla.HloProto
schema compiled below), each GPU kernel event is mapped to its HLO
instruction through its program_id / hlo_op stats, and the instruction is
priced from its shapes by the textbook formulas: a GEMM 2*M*N*K flops and
reads A and B and writes C, a convolution 2 flops per multiply-add over the
valid window positions (counted by brute force), a transpose fusion reads its
inputs and writes its output. Rows containing any other kind of instruction
are not checked here (the unit tests cover the finer rules). A copy of the
GEMM profile whose GEMM is rewritten into a ragged dot checks XLA's ragged-dot
rule end to end.
"""
import json
import math
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import xplane_py  # noqa: E402

HLO_PROTO = """
syntax = "proto3";
package xprofs_test_hlo;
message LayoutProto { repeated int64 minor_to_major = 1; }
message ShapeProto {
  int32 element_type = 2; repeated int64 dimensions = 3;
  repeated ShapeProto tuple_shapes = 4; LayoutProto layout = 5;
}
message OpMetadata {
  string op_type = 1; string op_name = 2; string source_file = 3; int32 source_line = 4;
}
message WindowDimension {
  int64 size = 1; int64 stride = 2; int64 padding_low = 3; int64 padding_high = 4;
  int64 window_dilation = 5; int64 base_dilation = 6;
}
message Window { repeated WindowDimension dimensions = 1; }
message ConvolutionDimensionNumbers {
  int64 input_batch_dimension = 7; int64 input_feature_dimension = 8;
  repeated int64 input_spatial_dimensions = 11; repeated int64 kernel_spatial_dimensions = 6;
  int64 output_feature_dimension = 10; repeated int64 output_spatial_dimensions = 12;
}
message DotDimensionNumbers { repeated int64 lhs_contracting_dimensions = 1; }
message RaggedDotDimensionNumbers {
  DotDimensionNumbers dot_dimension_numbers = 1; repeated int64 lhs_ragged_dimensions = 2;
  repeated int64 rhs_group_dimensions = 3;
}
message HloInstructionProto {
  string name = 1; string opcode = 2; ShapeProto shape = 3; OpMetadata metadata = 7;
  string fusion_kind = 11; Window window = 15;
  ConvolutionDimensionNumbers convolution_dimension_numbers = 16;
  int64 feature_group_count = 50; int64 batch_group_count = 58;
  string custom_call_target = 28; DotDimensionNumbers dot_dimension_numbers = 30;
  int64 id = 35; repeated int64 operand_ids = 36; repeated int64 called_computation_ids = 38;
  bytes backend_config = 43; RaggedDotDimensionNumbers ragged_dot_dimension_numbers = 90;
}
message HloComputationProto {
  string name = 1; repeated HloInstructionProto instructions = 2; int64 id = 5;
}
message HloModuleProto { string name = 1; repeated HloComputationProto computations = 3; }
message HloProto { HloModuleProto hlo_module = 1; }
"""

# bytes per element by xla.PrimitiveType
ELEMENT_BYTES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 2, 8: 4, 9: 8, 10: 2, 11: 4, 12: 8, 16: 2}
RUNS = {
    "jax08_gemm_rocm/s1": "jax08_gemm_rocm/plugins/profile/s1",
    "jax_conv_rocm/2025_01_01_00_00_00": "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00",
}


@pytest.fixture(scope="session")
def hlo_pb2(tmp_path_factory):
    out = tmp_path_factory.mktemp("hlo_pb")
    (out / "xprofs_test_hlo.proto").write_text(HLO_PROTO)
    subprocess.run(["protoc", f"--proto_path={out}", f"--python_out={out}",
                    "xprofs_test_hlo.proto"], check=True)
    sys.path.insert(0, str(out))
    import xprofs_test_hlo_pb2 as mod  # noqa: E402
    return mod


def elements(shape):
    return math.prod(shape.dimensions)


def nbytes(shape):
    return elements(shape) * ELEMENT_BYTES[shape.element_type]


class Module:
    """Instructions of one HLO module by name (first wins) and by
    (computation id, instruction id), and the computations by id."""

    def __init__(self, proto):
        self.by_name, self.by_id, self.comps, self.owner = {}, {}, {}, {}
        for comp in proto.computations:
            self.comps[comp.id] = comp
            for ins in comp.instructions:
                self.by_name.setdefault(ins.name, ins)
                self.by_id[(comp.id, ins.id)] = ins
                self.owner[ins.name] = comp.id

    def operands(self, ins):
        comp = self.owner[ins.name]
        return [self.by_id[(comp, i)] for i in ins.operand_ids]


def hlo_modules(space, pb2):
    """{program id: Module} from the Hlo Proto stats of /host:metadata."""
    mods = {}
    for plane in space.planes:
        if plane.name != "/host:metadata":
            continue
        names = {e.key: e.value.name for e in plane.stat_metadata}
        for e in plane.event_metadata:
            proto = [s for s in e.value.stats if names[s.metadata_id] in ("Hlo Proto", "HLO Proto")]
            pid = [s.int64_value or s.uint64_value for s in e.value.stats
                   if names[s.metadata_id] == "program_id"]
            if not proto:
                continue
            hp = pb2.HloProto()
            hp.ParseFromString(proto[0].bytes_value)
            mods.setdefault(pid[0] if pid else e.key, Module(hp.hlo_module))
    return mods


def conv_flops(ins, lhs, rhs, out):
    """2 * multiply-adds, counting by brute force the (output, kernel)
    position pairs of each spatial dimension whose input index is inside."""
    d = ins.convolution_dimension_numbers
    positions = 1
    for s, w in enumerate(ins.window.dimensions):
        assert w.base_dilation == 1
        n_in = lhs.dimensions[d.input_spatial_dimensions[s]]
        n_out = out.dimensions[d.output_spatial_dimensions[s]]
        n_ker = rhs.dimensions[d.kernel_spatial_dimensions[s]]
        positions *= sum(1 for o in range(n_out) for k in range(n_ker)
                         if 0 <= o * w.stride - w.padding_low + k * w.window_dilation < n_in)
    groups = max(ins.feature_group_count, 1)
    batch_groups = max(ins.batch_group_count, 1)
    return (2 * (lhs.dimensions[d.input_feature_dimension] // groups)
            * out.dimensions[d.output_feature_dimension]
            * (lhs.dimensions[d.input_batch_dimension] // batch_groups) * positions)


def gemm_flops(a, out_elements, contracting):
    k = math.prod(a.dimensions[c] for c in contracting)
    return 2 * out_elements * k


def price(mod, ins):
    """(flops, bytes) of an instruction by the textbook formulas, or None."""
    ops = mod.operands(ins)
    if ins.opcode == "custom-call" and ins.custom_call_target == "__cublas$gemm":
        out = ins.shape.tuple_shapes[0] if ins.shape.tuple_shapes else ins.shape
        cfg = json.loads(ins.backend_config)["gemm_backend_config"]["dot_dimension_numbers"]
        contracting = [int(c) for c in cfg["lhs_contracting_dimensions"]]
        return (gemm_flops(ops[0].shape, elements(out), contracting),
                nbytes(ops[0].shape) + nbytes(ops[1].shape) + nbytes(out))
    if ins.opcode == "custom-call" and ins.custom_call_target == "__cudnn$convForward":
        out = ins.shape.tuple_shapes[0]
        return (conv_flops(ins, ops[0].shape, ops[1].shape, out),
                nbytes(ops[0].shape) + nbytes(ops[1].shape) + nbytes(out))
    if ins.opcode == "ragged-dot":
        # XLA's HandleRaggedDot: the result loses dimension i for each i below
        # the number of rhs group dimensions, deleted one after the other;
        # bytes are the defaults (operands read, output written)
        rd = ins.ragged_dot_dimension_numbers
        dims = list(ins.shape.dimensions)
        for i in range(len(rd.rhs_group_dimensions)):
            del dims[i]
        return (gemm_flops(ops[0].shape, math.prod(dims),
                           rd.dot_dimension_numbers.lhs_contracting_dimensions),
                sum(nbytes(o.shape) for o in ops) + nbytes(ins.shape))
    if ins.opcode != "fusion":
        return None
    fused = mod.comps[ins.called_computation_ids[0]].instructions
    io_bytes = sum(nbytes(o.shape) for o in ops) + nbytes(ins.shape)
    opcodes = {f.opcode for f in fused}
    if opcodes <= {"parameter", "bitcast", "transpose", "copy"}:
        return 0, io_bytes
    dots = [f for f in fused if f.opcode == "dot"]
    if ins.fusion_kind == "kCustom" and len(dots) == 1 and opcodes <= {"parameter", "fusion",
                                                                         "dot"}:
        for f in fused:  # the nested fusions only pass their parameter through
            if f.opcode == "fusion":
                inner = mod.comps[f.called_computation_ids[0]].instructions
                assert {i.opcode for i in inner} == {"parameter"}
        dot = dots[0]
        lhs = mod.operands(dot)[0]
        return (gemm_flops(lhs.shape, elements(dot.shape),
                           dot.dot_dimension_numbers.lhs_contracting_dimensions), io_bytes)
    return None


def expected_rows(space, mods):
    """{framework op: [flops, bytes, time_ps, all priced]} over the kernel
    events of every GPU plane."""
    rows = {}
    for plane in space.planes:
        if not plane.name.startswith("/device:GPU:"):
            continue
        names = {e.key: e.value.name for e in plane.stat_metadata}
        for line in plane.lines:
            for ev in line.events:
                st = {}
                for s in ev.stats:
                    key = names.get(s.metadata_id)
                    if s.HasField("ref_value"):
                        st[key] = names[s.ref_value]
                    elif s.HasField("str_value"):
                        st[key] = s.str_value
                    else:
                        st[key] = s.int64_value or s.uint64_value
                if "hlo_op" not in st or st.get("program_id") not in mods:
                    continue
                mod = mods[st["program_id"]]
                ins = mod.by_name.get(st["hlo_op"].split("::")[-1])
                if ins is None:
                    continue
                row = rows.setdefault(ins.metadata.op_name, [0, 0, 0, True])
                cost = price(mod, ins)
                if cost is None:
                    row[3] = False
                    continue
                row[0] += cost[0]
                row[1] += cost[1]
                row[2] += ev.duration_ps
    return rows


def peaks(space):
    """(peak GFLOP/s, peak HBM GB/s) of an AMD gfx942 GPU plane (§4.2)."""
    for plane in space.planes:
        if plane.name.startswith("/device:GPU:"):
            names = {e.key: e.value.name for e in plane.stat_metadata}
            st = {names[s.metadata_id]: (s.str_value or s.int64_value or s.uint64_value
                                         or s.double_value) for s in plane.stats}
            assert st["device_vendor"] == "AMD"
            assert (st["compute_cap_major"], st["compute_cap_minor"]) == (9, 4)
            clock_ghz = st["clock_rate"] / 1e6
            return st["core_count"] * clock_ghz * 2048, st["memory_bandwidth"] / 1e9
    raise AssertionError("no GPU plane")


def table_rows(table):
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (cell["v"] for cell in r["c"]))) for r in table["rows"]]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_framework_op_roofline(run, corpus, xcat, hlo_pb2):
    pb = next((corpus / RUNS[run]).glob("*.xplane.pb"))
    space = xplane_py.load(pb)
    mods = hlo_modules(space, hlo_pb2)
    assert mods, "the profile carries HLO modules"
    expect = {k: v for k, v in expected_rows(space, mods).items() if v[3] and v[0] + v[1] > 0}
    peak_gflops, peak_hbm = peaks(space)
    tables = json.loads(xcat(corpus, f"{run}/framework_op_stats.json"))
    got = {r["operation"]: r for r in table_rows(tables[0]) if r["host_or_device"] == "Device"}
    checked = 0
    for name, (flops, nb, time_ps, _) in expect.items():
        row = got[name]
        t_ns = time_ps / 1e3
        assert row["total_time"] == pytest.approx(time_ps / 1e6, rel=1e-12)
        assert row["measured_flop_rate"] == pytest.approx(flops / t_ns, rel=1e-12)
        assert row["model_flop_rate"] == pytest.approx(flops / t_ns, rel=1e-12)
        assert row["measured_memory_bw"] == pytest.approx(nb / t_ns / 1.073741824, rel=1e-12)
        assert row["operational_intensity"] == pytest.approx(flops / nb, rel=1e-12)
        compute, hbm = flops / t_ns / peak_gflops, nb / t_ns / peak_hbm
        assert row["bound_by"] == ("Compute" if compute > hbm else "HBM")
        checked += 1
    main = "jit(dot)/dot_general" if "gemm" in run else \
        "jit(forward_3d_conv)/jit(main)/conv_general_dilated"
    assert main in expect and expect[main][0] > 0, "the main op is priced"
    assert checked >= 1
    # overview_page: the top device ops' GFLOP/s are the same FLOP rates
    overview = json.loads(xcat(corpus, f"{run}/overview_page.json"))
    tops = [t for t in table_rows(overview[0]) if t["operation"] in expect]
    assert tops, "a priced op is among the top device ops"
    for top in tops:
        assert top["flopRate"] == pytest.approx(got[top["operation"]]["measured_flop_rate"],
                                                rel=1e-12)


def test_gemm_numbers(corpus, hlo_pb2):
    """The GEMM of jit_dot(79): 2*M*N*K with M, N, K read from its HLO."""
    space = xplane_py.load(next((corpus / RUNS["jax08_gemm_rocm/s1"]).glob("*.xplane.pb")))
    mods = hlo_modules(space, hlo_pb2)
    mod = mods[79]
    gemm = mod.by_name["custom-call.1"]
    a, b = mod.operands(gemm)
    m, k = a.shape.dimensions
    k2, n = b.shape.dimensions
    assert k == k2 and (m, n, k) == (16384, 4096, 1024)
    assert price(mod, gemm) == (2 * m * n * k, 2 * (m * k + k * n + m * n))


def test_ragged_dot_end_to_end(corpus, xcat, hlo_pb2, tmp_path):
    """The GEMM profile with its cuBLAS GEMM rewritten into a ragged dot of
    the same operands and result (one lhs ragged, one rhs group dimension):
    the row of jit(dot)/dot_general is priced by XLA's ragged-dot rule, read
    from the instruction's ragged_dot_dimension_numbers (field 90)."""
    src = next((corpus / RUNS["jax08_gemm_rocm/s1"]).glob("*.xplane.pb"))
    space = xplane_py.load(src)
    meta = next(p for p in space.planes if p.name == "/host:metadata")
    names = {e.key: e.value.name for e in meta.stat_metadata}
    rewritten = 0
    for e in meta.event_metadata:
        for st in e.value.stats:
            if names[st.metadata_id] not in ("Hlo Proto", "HLO Proto"):
                continue
            hp = hlo_pb2.HloProto()
            hp.ParseFromString(st.bytes_value)
            for comp in hp.hlo_module.computations:
                for ins in comp.instructions:
                    if ins.opcode == "custom-call" and ins.custom_call_target == "__cublas$gemm":
                        cfg = json.loads(ins.backend_config)["gemm_backend_config"]
                        contracting = cfg["dot_dimension_numbers"]["lhs_contracting_dimensions"]
                        result = type(ins.shape)()
                        result.CopyFrom(ins.shape.tuple_shapes[0])
                        ins.shape.CopyFrom(result)
                        ins.opcode = "ragged-dot"
                        ins.custom_call_target = ""
                        ins.backend_config = b""
                        rd = ins.ragged_dot_dimension_numbers
                        rd.dot_dimension_numbers.lhs_contracting_dimensions.extend(
                            int(c) for c in contracting)
                        rd.lhs_ragged_dimensions.append(0)
                        rd.rhs_group_dimensions.append(0)
                        rewritten += 1
            st.bytes_value = hp.SerializeToString()
    assert rewritten >= 1
    run = tmp_path / "rd" / "plugins" / "profile" / "s1"
    run.mkdir(parents=True)
    (run / src.name).write_bytes(space.SerializeToString())

    mods = hlo_modules(space, hlo_pb2)
    gemm = mods[79].by_name["custom-call.1"]
    assert gemm.opcode == "ragged-dot"
    a = mods[79].operands(gemm)[0]
    m, n = gemm.shape.dimensions
    k = a.shape.dimensions[1]
    # [m,n] loses dimension 0: 2*n*k, not the GEMM's 2*m*n*k
    assert price(mods[79], gemm)[0] == 2 * n * k
    expect = expected_rows(space, mods)
    main = "jit(dot)/dot_general"
    flops, nb, time_ps, whole = expect[main]
    assert whole and flops > 0
    tables = json.loads(xcat(tmp_path, "rd/s1/framework_op_stats.json"))
    row = next(r for r in table_rows(tables[0])
               if r["host_or_device"] == "Device" and r["operation"] == main)
    t_ns = time_ps / 1e3
    assert row["model_flop_rate"] == pytest.approx(flops / t_ns, rel=1e-12)
    assert row["measured_memory_bw"] == pytest.approx(nb / t_ns / 1.073741824, rel=1e-12)
