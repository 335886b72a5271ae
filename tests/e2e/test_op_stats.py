"""op_stats tools end to end: overview_page, input_pipeline_analyzer,
framework_op_stats, kernel_stats on every corpus run.

Shapes (column ids in order) follow the XProf outputs recorded by
Locamage/xprof-rs (tests/data/*.json) and XProf's converters; values are
recomputed here from the raw .xplane.pb with python protobuf.
"""
import csv
import io
import json
import pathlib
import subprocess
import sys

import pytest

RUNS = {
    "jax_conv_rocm/2025_01_01_00_00_00": "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00",
    "jax08_conv_rocm/s1": "jax08_conv_rocm/plugins/profile/s1",
    "jax08_gemm_rocm/s1": "jax08_gemm_rocm/plugins/profile/s1",
    "jax08_elementwise_rocm/s1": "jax08_elementwise_rocm/plugins/profile/s1",
    "tf_gpu_multiworker/s1": "tf_gpu_multiworker/plugins/profile/s1",
}

STEP_COLS = ["stepnum", "deviceComputeTimeMs", "deviceToDeviceTimeMs",
             "deviceCollectivesTimeMs", "hostComputeTimeMs", "kernelLaunchTimeMs",
             "infeedTimeMs", "outfeedTimeMs", "compileTimeMs", "otherTimeMs", "tooltip",
             "stepTimeMs"]
DIAG_COLS = ["severity", "message"]
FRAMEWORK_COLS = ["rank", "host_or_device", "type", "operation", "occurrences", "total_time",
                  "avg_time", "total_self_time", "avg_self_time",
                  "device_total_self_time_percent",
                  "device_cumulative_total_self_time_percent",
                  "host_total_self_time_percent", "Host_cumulative_total_self_time_percent",
                  "measured_flop_rate", "model_flop_rate", "measured_memory_bw",
                  "operational_intensity", "gpu_tensorcore_utilization", "bound_by", "eager"]
KERNEL_COLS = ["rank", "kernel_name", "registers_per_thread", "shmem_bytes", "block_dim",
               "grid_dim", "occupancy_pct", "is_op_tensor_core_eligible",
               "is_kernel_using_tensor_core", "op_name", "occurrences", "total_duration_us",
               "avg_duration_us", "min_duration_us", "max_duration_us"]
NO_STEP_MARKER = ("No step marker observed and hence the step time is unknown. This may "
                  "happen if (1) training steps are not instrumented (e.g., if you are not "
                  "using Keras) or (2) the profiling duration is shorter than the step time. "
                  "For (1), you need to add step instrumentation; for (2), you may try to "
                  "profile longer.")


@pytest.fixture(scope="session")
def xplane_pb2(tmp_path_factory):
    """xplane_pb2 compiled from proto/xplane.proto (wire-compatible with XProf)."""
    out = tmp_path_factory.mktemp("pb")
    repo = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run(["protoc", f"--proto_path={repo / 'proto'}", f"--python_out={out}",
                    str(repo / "proto" / "xplane.proto")], check=True)
    sys.path.insert(0, str(out))
    import xplane_pb2 as mod  # noqa: E402
    return mod


def load_space(pb2, path):
    xs = pb2.XSpace()
    xs.ParseFromString(pathlib.Path(path).read_bytes())
    return xs


def plane_events(plane):
    """(name, offset_ps, duration_ps, {stat name: value}) of every event."""
    smeta = {e.key: e.value.name for e in plane.stat_metadata}
    emeta = {e.key: e.value.name for e in plane.event_metadata}
    for line in plane.lines:
        for ev in line.events:
            stats = {}
            for st in ev.stats:
                kind = st.WhichOneof("value")
                val = getattr(st, kind) if kind else None
                if kind == "ref_value":
                    val = smeta.get(val, "")
                stats[smeta.get(st.metadata_id, "")] = val
            yield line, emeta.get(ev.metadata_id, ""), ev.offset_ps, ev.duration_ps, stats


def parse_tf_op(s):
    """ParseTfOpFullname (xla/tsl/profiler/utils/tf_op_utils.cc), independently."""
    import re
    if ":" not in s:
        for prefix, typ in (("MEMCPYHToD", "MemcpyHToD"), ("MEMCPYDToH", "MemcpyDToH"),
                            ("MEMCPYDToD", "MemcpyDToD"), ("MEMCPYHToH", "MemcpyHToH")):
            if s.lower().startswith(prefix.lower()):
                return "memcpy", s, typ
        return "unknown", s, ""
    left, right = s.split(":", 1)
    if left == "Iterator":
        return "tf.data", s, "Dataset"
    if re.fullmatch(r"[A-Za-z0-9.][A-Za-z0-9_./>-]*", left) and \
            re.fullmatch(r"[A-Z_][a-zA-Z0-9_]*", right):
        return "tf", left, right
    t = right
    if not right:
        last = left.split("/")[-1]
        head, _, tail = last.rpartition("_")
        t = head if _ and re.fullmatch(r"\s*[+-]?\d+\s*", tail) else last
    if re.fullmatch(r"[a-z_][a-z0-9_]*(\[.*\])?", t):
        return "jax", left, t.split("[")[0]
    if not right:
        return "tf", left, t
    return "unknown", s, ""


def cat_json(xcat, corpus, path):
    return json.loads(xcat(corpus, path))


def col_ids(table):
    return [c["id"] for c in table["cols"]]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_shapes(xcat, corpus, run):
    ov = cat_json(xcat, corpus, f"{run}/overview_page.json")
    assert isinstance(ov, list) and len(ov) == 7 and ov[5] == {}
    gpu = "GPU" in ov[2]["p"]["device_type"]
    assert gpu
    assert col_ids(ov[0]) == ["selfTimePercent", "cumulativeTimePercent", "category",
                              "operation", "flopRate", "tcEligibility", "tcUtilization"]
    assert col_ids(ov[1]) == STEP_COLS
    assert ov[1]["cols"][10]["p"] == {"role": "tooltip"}
    assert col_ids(ov[2]) == ["host_id", "command_line", "start_time", "bns_address"]
    assert col_ids(ov[3]) == ["tip_type", "link", "description"]
    assert [r["c"][0]["v"] for r in ov[3]["rows"]] == ["faq", "host", "host", "device",
                                                        "device", "doc", "doc"]
    assert col_ids(ov[4]) == ["percentile", "hostTimeMs", "deviceTimeMs",
                              "communicationTimeMs", "totalTimeMs"]
    assert col_ids(ov[6]) == DIAG_COLS
    assert len(ov[0]["rows"]) <= 10
    # XProf's separators: ", {}," before the diagnostics
    raw = xcat(corpus, f"{run}/overview_page.json").decode()
    assert ', {},{"cols":[{"id":"severity"' in raw

    ip = cat_json(xcat, corpus, f"{run}/input_pipeline_analyzer.json")
    assert len(ip) == 5
    assert ip[0] == {"cols": [], "rows": []}  # max-infeed table: TPU only
    assert col_ids(ip[1]) == STEP_COLS
    assert ip[1]["p"]["hardware_type"] == "GPU"
    assert col_ids(ip[2]) == ["opName", "count", "timeInMs", "timeInPercent", "selfTimeInMs",
                              "selfTimeInPercent", "category"]
    assert sorted(ip[2]["p"]) == ["advanced_file_read_us", "demanded_file_read_us",
                                  "enqueue_us", "preprocessing_us", "unclassified_nonequeue_us"]
    assert col_ids(ip[3]) == ["link"] and len(ip[3]["rows"]) == 5
    assert col_ids(ip[4]) == DIAG_COLS

    fw = cat_json(xcat, corpus, f"{run}/framework_op_stats.json")
    assert len(fw) == 2
    for t in fw:
        assert col_ids(t) == FRAMEWORK_COLS
        assert t["p"]["architecture_type"] == "Unknown"
        assert t["p"]["task_type"] in ("Training", "Inference")
        ranks = [r["c"][0]["v"] for r in t["rows"]]
        assert ranks == [float(i + 1) for i in range(len(ranks))]
    assert not any(r["c"][2]["v"] == "IDLE" for r in fw[1]["rows"])

    ks = cat_json(xcat, corpus, f"{run}/kernel_stats.json")
    assert col_ids(ks) == KERNEL_COLS
    assert "p" not in ks
    totals = [r["c"][11]["v"] for r in ks["rows"]]
    assert totals == sorted(totals, reverse=True)


@pytest.mark.parametrize("run", [r for r in RUNS if r.startswith("jax")])
def test_no_step_marker(xcat, corpus, run):
    ov = cat_json(xcat, corpus, f"{run}/overview_page.json")
    assert ov[6]["rows"] == [{"c": [{"v": "WARNING"}, {"v": NO_STEP_MARKER}]}]
    assert ov[1]["rows"] == []
    assert ov[3]["p"]["bottleneck"] == "unknown"
    ip = cat_json(xcat, corpus, f"{run}/input_pipeline_analyzer.json")
    assert ip[4]["rows"] == [{"c": [{"v": "WARNING"}, {"v": NO_STEP_MARKER}]}]
    assert ip[1]["p"]["input_conclusion"].startswith("No step time measured.")


def kernel_events(pb2, files, plane_filter):
    """Kernel events (duration > 0, kernel_details set) of the GPU planes."""
    out = []
    for f in files:
        for plane in load_space(pb2, f).planes:
            if not plane.name.startswith("/device:GPU:") or not plane_filter(plane.name):
                continue
            for line, name, off, dur, stats in plane_events(plane):
                if (line.id & 0xffffffff) - 0xdeadbeef in range(0, 390):
                    continue
                if dur > 0 and stats.get("kernel_details"):
                    out.append((name, dur))
    return out


def test_jax_conv_kernels(xcat, corpus, xplane_pb2):
    run = "jax_conv_rocm/2025_01_01_00_00_00"
    files = sorted((corpus / RUNS[run]).glob("*.xplane.pb"))
    evs = kernel_events(xplane_pb2, files, lambda n: True)
    assert len(evs) == 25
    assert {n for n, _ in kernel_events(xplane_pb2, files, lambda n: n == "/device:GPU:7")} == \
        {n for n, _ in evs}
    want = {}
    for name, dur in evs:
        want[name] = want.get(name, 0) + dur // 1000
    ks = cat_json(xcat, corpus, f"{run}/kernel_stats.json")
    got = {}
    occ = 0
    for r in ks["rows"]:
        name = r["c"][1]["v"]
        got[name] = got.get(name, 0) + round(r["c"][11]["v"] * 1000)
        occ += r["c"][10]["v"]
    assert occ == 25
    assert got == want
    row = [r for r in ks["rows"] if r["c"][1]["v"] == "input_transpose_fusion"]
    assert len(row) == 1
    assert row[0]["c"][10]["v"] == 5.0
    assert row[0]["c"][11]["v"] == 1950.96
    assert row[0]["c"][4]["v"] == "256,1,1" and row[0]["c"][5]["v"] == "69840,1,1"
    # XLA kernels take the HLO op's framework name, with its ":" (XProf quirk)
    assert row[0]["c"][9]["v"] == "jit(forward_3d_conv)/jit(main)/conv_general_dilated:"


def test_tf_kernels(xcat, corpus, xplane_pb2):
    run = "tf_gpu_multiworker/s1"
    files = sorted((corpus / RUNS[run]).glob("*.xplane.pb"))
    evs = kernel_events(xplane_pb2, files, lambda n: True)
    planes = set()
    for f in files:
        for plane in load_space(xplane_pb2, f).planes:
            if not plane.name.startswith("/device:GPU:"):
                continue
            if any(st for _, _, _, d, st in plane_events(plane) if st.get("kernel_details")):
                planes.add(plane.name)
    assert planes == {"/device:GPU:4", "/device:GPU:6"}
    ks = cat_json(xcat, corpus, f"{run}/kernel_stats.json")
    names = {r["c"][1]["v"] for r in ks["rows"]}
    assert len(ks["rows"]) <= 1000
    if len(ks["rows"]) < 1000:
        assert names == {n for n, _ in evs}
        assert sum(r["c"][10]["v"] for r in ks["rows"]) == len(evs)
    # one host alone: its own GPU:4 and GPU:6 kernels
    host = files[0].name[:-len(".xplane.pb")]
    one = cat_json(xcat, corpus, f"{run}/hosts/{host}/kernel_stats.json")
    assert sum(r["c"][10]["v"] for r in one["rows"]) == \
        len(kernel_events(xplane_pb2, files[:1], lambda n: True))


def test_tf_framework_names(xcat, corpus, xplane_pb2):
    run = "tf_gpu_multiworker/s1"
    files = sorted((corpus / RUNS[run]).glob("*.xplane.pb"))
    want = set()
    for plane in load_space(xplane_pb2, files[0]).planes:
        if plane.name != "/host:CPU":
            continue
        for _, name, _, _, stats in plane_events(plane):
            cat, op, typ = parse_tf_op(name)
            if cat != "unknown" and name:
                want.add((op, typ))
    fw = cat_json(xcat, corpus, f"{run}/framework_op_stats.json")
    host_rows = [r for r in fw[0]["rows"] if r["c"][1]["v"] == "Host"]
    got = {(r["c"][3]["v"], r["c"][2]["v"]) for r in host_rows if r["c"][2]["v"] != "IDLE"}
    assert got, "no host framework ops"
    assert got <= want
    assert len(got) == min(len(want), len(got))
    # TensorFlow ops keep their "name" and "Type" apart
    assert any(t[1] and t[1][0].isupper() and "/" in t[0] for t in got)
    # host fractions add up to 1 over all host rows (with idle)
    if len(host_rows) < 500:
        assert abs(sum(r["c"][11]["v"] for r in host_rows) - 1.0) < 1e-9


@pytest.mark.parametrize("tool", ["framework_op_stats", "kernel_stats"])
def test_csv_matches_json(xcat, corpus, tool):
    run = "jax08_gemm_rocm/s1"
    js = cat_json(xcat, corpus, f"{run}/{tool}.json")
    table = js[0] if isinstance(js, list) else js
    text = xcat(corpus, f"{run}/{tool}.csv").decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [c["label"] for c in table["cols"]]
    assert len(rows) - 1 == len(table["rows"])
    for got, want in zip(rows[1:], table["rows"]):
        exp = []
        for cell in want["c"]:
            v = cell["v"]
            exp.append("" if v is None else str(v))
        assert got == exp
    assert text.endswith("\n") and '"' in text.splitlines()[0]


def test_step_table_with_steps(xcat, synth, tmp_path):
    """A generated profile with annotated steps: steps, breakdown, names."""
    logdir = synth(tmp_path / "logs", "--scenario", "steps4")
    runs = [p for p in (logdir / "plugins" / "profile").iterdir() if p.is_dir()]
    run = runs[0].name
    ip = json.loads(xcat(logdir, f"{run}/input_pipeline_analyzer.json"))
    rows = ip[1]["rows"]
    assert rows, "no steps found in a profile with step annotations"
    for r in rows:
        vals = [c["v"] for c in r["c"]]
        parts = vals[1:10]
        assert abs(sum(parts) - vals[11]) < 1e-6 * max(1.0, vals[11])
        assert vals[10].startswith(f"Step {vals[0]}, duration: ")
    assert ip[4]["rows"] == []
    ov = json.loads(xcat(logdir, f"{run}/overview_page.json"))
    assert ov[1]["rows"] == rows


def test_mount_reads_same(mount, corpus, xcat):
    mnt = mount(corpus)
    run = "jax08_gemm_rocm/s1"
    via_mount = (mnt / run / "kernel_stats.json").read_bytes()
    assert via_mount == xcat(corpus, f"{run}/kernel_stats.json")
