"""hlo_stats.json / .csv and roofline_model.json end to end on the JAX ROCm
profiles that carry HLO modules.

Expected values come from outside the code under test: TraceLens's published
numbers for the convolution profile (input_transpose_fusion: 5 executions,
1950.96 us; loop_transpose_fusion: 5, 26.44 us), FLOPs and bytes priced here
from the instructions' operand shapes by the textbook formulas of
test_hlo_cost.py over the raw kernel events (python protobuf reads the
.xplane.pb and the HLO protos), and the source lines read from the HLO
metadata.
"""
import json
import csv
import io
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import test_hlo_cost as hc  # noqa: E402
import xplane_py  # noqa: E402

RUNS = {
    "jax08_gemm_rocm/s1": "jax08_gemm_rocm/plugins/profile/s1",
    "jax_conv_rocm/2025_01_01_00_00_00": "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00",
    "jax08_conv_rocm/s1": "jax08_conv_rocm/plugins/profile/s1",
    "jax08_elementwise_rocm/s1": "jax08_elementwise_rocm/plugins/profile/s1",
}
hlo_pb2 = hc.hlo_pb2


def rows(table):
    return hc.table_rows(table)


def run_dir(corpus, run):
    d = corpus / RUNS[run]
    if not d.is_dir():
        pytest.skip(f"{d} not in the corpus")
    return d


def per_instruction(space, mods):
    """{(program id, instruction): [flops, bytes, time_ps, events, priced]}."""
    out = {}
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
                pid = st.get("program_id")
                if "hlo_op" not in st or pid not in mods:
                    continue
                name = st["hlo_op"].split("::")[-1]
                ins = mods[pid].by_name.get(name)
                if ins is None:
                    continue
                row = out.setdefault((pid, name), [0, 0, 0, 0, True])
                cost = hc.price(mods[pid], ins)
                row[2] += ev.duration_ps
                row[3] += 1
                if cost is None:
                    row[4] = False
                else:
                    row[0] += cost[0]
                    row[1] += cost[1]
    return out


def test_tracelens_reference(corpus, xcat):
    run = "jax_conv_rocm/2025_01_01_00_00_00"
    run_dir(corpus, run)
    got = {r["hlo_op_name"]: r for r in rows(json.loads(xcat(corpus, f"{run}/hlo_stats.json")))}
    assert got["input_transpose_fusion"]["occurrences"] == 5
    assert got["input_transpose_fusion"]["total_self_time"] == pytest.approx(1950.96, abs=1e-9)
    assert got["loop_transpose_fusion"]["occurrences"] == 5
    assert got["loop_transpose_fusion"]["total_self_time"] == pytest.approx(26.44, abs=1e-9)
    assert got["input_transpose_fusion"]["category"] == "input fusion"
    assert got["input_transpose_fusion"]["program_id"] == "15"


@pytest.mark.parametrize("run", sorted(RUNS))
def test_hlo_stats_rows(run, corpus, xcat, hlo_pb2):
    d = run_dir(corpus, run)
    space = xplane_py.load(next(d.glob("*.xplane.pb")))
    mods = hc.hlo_modules(space, hlo_pb2)
    assert mods
    table = json.loads(xcat(corpus, f"{run}/hlo_stats.json"))
    assert len(table["cols"]) == 29 and "p" not in table
    got = rows(table)
    assert got, "device ops listed"
    # ranks count up from 1, self time never grows, the shares add up
    assert [r["rank"] for r in got] == list(range(1, len(got) + 1))
    assert all(a["total_self_time"] >= b["total_self_time"] for a, b in zip(got, got[1:]))
    cum = 0.0
    for r in got:
        cum += r["total_self_time_percent"]
        assert r["cumulative_total_self_time_percent"] == pytest.approx(cum, rel=1e-9)
    assert 0 < cum <= 100 + 1e-9
    # time and FLOPs of each priced instruction, from the raw events
    expect = per_instruction(space, mods)
    by_key = {(int(r["program_id"]), r["hlo_op_name"]): r for r in got}
    checked = 0
    for key, (flops, nb, time_ps, events, priced) in expect.items():
        r = by_key[key]
        assert r["total_time"] == pytest.approx(time_ps / 1e6, rel=1e-12)
        if priced and flops > 0:
            assert r["normalized_flop_rate"] == pytest.approx(flops / (time_ps / 1e3), rel=1e-12)
            assert r["model_flop_rate"] == pytest.approx(flops / (time_ps / 1e3), rel=1e-12)
            assert r["operational_intensity"] == pytest.approx(flops / nb, rel=1e-12)
            checked += 1
        ins = mods[key[0]].by_name[key[1]]
        assert r["tf_op_name"].startswith(ins.metadata.op_name)
        # the expression is XLA's text of the instruction
        assert r["hlo_op_expression"].startswith(f"%{key[1]} = ")
        assert f" {ins.opcode}(" in r["hlo_op_expression"]
        assert r["bound_by"] in ("Compute", "HBM", "Shm/L1", "Unknown")
        assert r["core_type"] == "" and r["parent_op_name"] == ""
    if "gemm" in run or "conv" in run:
        assert checked >= 1, "the main op is priced"
    # the CSV is the same table
    lines = list(csv.reader(io.StringIO(xcat(corpus, f"{run}/hlo_stats.csv").decode())))
    assert lines[0][:4] == ["Rank", "Program id", "HLO op category", "HLO op name"]
    assert len(lines) == len(got) + 1
    for line, r in zip(lines[1:], got):
        assert line[3] == r["hlo_op_name"] and line[4] == r["hlo_op_expression"]
        assert line[25] == r["source_info"]


TYPE_NAMES = {1: "pred", 2: "s8", 3: "s16", 4: "s32", 5: "s64", 6: "u8", 7: "u16", 8: "u32",
              9: "u64", 10: "f16", 11: "f32", 12: "f64", 16: "bf16"}


def shape_text(shape):
    """XLA's ShapeUtil::HumanStringWithLayout of an array or tuple shape
    without tiles (what GPU modules hold); a scalar's empty layout is not
    printed."""
    if shape.tuple_shapes:
        return "(" + ", ".join(shape_text(t) for t in shape.tuple_shapes) + ")"
    dims = ",".join(str(d) for d in shape.dimensions)
    layout = ",".join(str(d) for d in shape.layout.minor_to_major)
    text = f"{TYPE_NAMES[shape.element_type]}[{dims}]"
    return text if not dims else text + "{" + layout + "}"  # scalars: no "{}"


@pytest.mark.parametrize("run", sorted(RUNS))
def test_fusion_text(run, corpus, xcat, hlo_pb2):
    """A fusion's text, spelled here from its proto: result shape, operands
    with their shapes, kind and fused computation."""
    d = run_dir(corpus, run)
    space = xplane_py.load(next(d.glob("*.xplane.pb")))
    mods = hc.hlo_modules(space, hlo_pb2)
    kinds = {"kLoop", "kInput", "kOutput", "kCustom"}
    seen = 0
    for r in rows(json.loads(xcat(corpus, f"{run}/hlo_stats.json"))):
        mod = mods[int(r["program_id"])]
        ins = mod.by_name[r["hlo_op_name"]]
        if ins.opcode != "fusion" or ins.fusion_kind not in kinds:
            continue
        ops = ", ".join(f"{shape_text(o.shape)} %{o.name}" for o in mod.operands(ins))
        calls = mod.comps[ins.called_computation_ids[0]].name
        want = (f"%{ins.name} = {shape_text(ins.shape)} fusion({ops}), "
                f"kind={ins.fusion_kind}, calls=%{calls}")
        text = r["hlo_op_expression"]
        assert text == want or text.startswith(want + ", "), (text, want)
        seen += 1
    assert seen >= 1


def test_source_info(corpus, xcat, hlo_pb2):
    run = "jax_conv_rocm/2025_01_01_00_00_00"
    d = run_dir(corpus, run)
    space = xplane_py.load(next(d.glob("*.xplane.pb")))
    mods = hc.hlo_modules(space, hlo_pb2)
    got = rows(json.loads(xcat(corpus, f"{run}/hlo_stats.json")))
    seen = 0
    for r in got:
        ins = mods[int(r["program_id"])].by_name[r["hlo_op_name"]]
        if ins.metadata.source_file:
            assert r["source_info"].startswith("<div class='source-info-cell' title='")
            assert r["source_info"].endswith(
                f">{ins.metadata.source_file}:{ins.metadata.source_line}</div>")
            seen += 1
        else:
            assert r["source_info"] == ""
    assert seen >= 1


@pytest.mark.parametrize("run", sorted(RUNS))
def test_roofline_model(run, corpus, xcat, hlo_pb2):
    d = run_dir(corpus, run)
    space = xplane_py.load(next(d.glob("*.xplane.pb")))
    peak_gflops, peak_hbm = hc.peaks(space)
    roof, diag = json.loads(xcat(corpus, f"{run}/roofline_model.json"))
    ids = [c["id"] for c in roof["cols"]]
    assert "vmem_write_bw" in ids and "cmem_read_bw" not in ids and len(ids) == 30
    assert float(roof["p"]["peak_flop_rate"]) == pytest.approx(peak_gflops, rel=1e-5)
    assert float(roof["p"]["peak_hbm_bw"]) == pytest.approx(peak_hbm / 1.073741824, rel=1e-5)
    got = rows(roof)
    stats = rows(json.loads(xcat(corpus, f"{run}/hlo_stats.json")))
    for include in (True, False):
        part = [r for r in got if r["include_infeed_outfeed"] == include]
        total = [r for r in part if r["step"] == "Total"]
        program, ops = total[0], total[1:]
        assert program["operation"] == "Program" and program["rank"] == 0
        # the ops are hlo_stats' rows, same order and rates (no infeed here)
        assert [r["operation"] for r in ops] == [s["hlo_op_name"] for s in stats][:1000]
        for r, s in zip(ops, stats):
            assert r["total_self_time_percent"] == pytest.approx(
                s["total_self_time_percent"] / 100, rel=1e-12)
            assert r["measured_flop_rate"] == pytest.approx(s["normalized_flop_rate"], rel=1e-12)
            assert r["roofline_efficiency"] == pytest.approx(
                max(r["compute_efficiency"], r["max_mem_bw_utilization"]), rel=1e-12)
        # the program's FLOPs are those of its ops
        flops = sum(s["normalized_flop_rate"] * s["total_time"] * 1e3 for s in stats)
        assert program["measured_flop_rate"] * program["total_time"] * 1e3 == pytest.approx(
            flops, rel=1e-9)
        avg = [r for r in part if r["step"] == "Average"]
        assert len(avg) == 1 and avg[0]["total_time"] == 0 and avg[0]["bound_by"] == "Unknown"
        assert all(r["step"].isdigit() for r in part if r["step"] not in ("Total", "Average"))
    assert [c["id"] for c in diag["cols"]] == ["severity", "message"]


def test_no_hlo_run(corpus, xprofs_build):
    """A TensorFlow GPU run has no HLO: XProf's empty table, and the reason
    in errors.txt (read in the same process, where the reason was noted)."""
    run = "tf_gpu_multiworker/s1"
    if not (corpus / "tf_gpu_multiworker").is_dir():
        pytest.skip("tf_gpu_multiworker not in the corpus")
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(corpus / "tf_gpu_multiworker"),
                        "s1/hlo_stats.json", "s1/errors.txt"], capture_output=True, timeout=600)
    assert r.returncode == 0
    out = r.stdout.decode()
    table = json.JSONDecoder().raw_decode(out)[0]
    assert table["rows"] == [] and len(table["cols"]) == 29
    assert "hlo_stats.json: no HLO modules" in out


def test_tools_json_lists_hlo_views(corpus, xcat):
    """The HLO op views are offered where there are HLO modules (or TPU
    planes), not for a TensorFlow GPU run without them."""
    hlo = json.loads(xcat(corpus, "jax08_gemm_rocm/s1/tools.json"))
    assert {"hlo_stats", "op_profile", "roofline_model"} <= set(hlo)
    if (corpus / "tf_gpu_multiworker").is_dir():
        tf = json.loads(xcat(corpus / "tf_gpu_multiworker", "s1/tools.json"))
        assert not {"hlo_stats", "op_profile", "roofline_model", "memory_viewer"} & set(tf)
        assert "framework_op_stats" in tf


def test_op_profile_source_line(corpus, xcat, hlo_pb2):
    """An op whose HLO metadata has no source gets XProf's line -1 (its
    OpSourceInfo default); one with a source file gets the file and line."""
    run = "jax_conv_rocm/2025_01_01_00_00_00"
    d = run_dir(corpus, run)
    mods = hc.hlo_modules(xplane_py.load(next(d.glob("*.xplane.pb"))), hlo_pb2)
    prof = json.loads(xcat(corpus, f"{run}/op_profile.json"))
    leaves = []

    def walk(node):
        if "xla" in node and not node.get("children"):
            leaves.append(node)
        for c in node.get("children", []):
            walk(c)
    walk(prof["byProgram"])
    checked = 0
    for leaf in leaves:
        x = leaf["xla"]
        if int(x["programId"]) not in mods or leaf["name"] not in mods[int(x["programId"])].by_name:
            continue
        md = mods[int(x["programId"])].by_name[leaf["name"]].metadata
        src = x["sourceInfo"]
        if md.source_file:
            assert (src["fileName"], src["lineNumber"]) == (md.source_file, md.source_line)
        else:
            assert src["lineNumber"] == -1 and src["fileName"] == ""
        checked += 1
    assert checked >= 2
