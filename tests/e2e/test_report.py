"""report.md and report.json: every number equals the file it summarizes
(read by the test from that file) or what the test computes from the
profile's events itself."""
import csv
import gzip
import io
import json

import pytest

import xplane_py


def percentile(v, q):
    """numpy.percentile with linear interpolation."""
    v = sorted(v)
    pos = q / 100 * (len(v) - 1)
    lo = int(pos)
    if lo + 1 >= len(v):
        return v[-1]
    return v[lo] + (v[lo + 1] - v[lo]) * (pos - lo)


def close(a, b, rel=1e-5):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-9)


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory, xprofs_build):
    import subprocess
    d = tmp_path_factory.mktemp("report")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(d), "--run", "train",
                    "--size-mb", "3", "--hosts", "2"], check=True, capture_output=True)
    return d


def table_rows(table):
    cols = [c["id"] for c in table["cols"]]
    return [dict(zip(cols, [c["v"] for c in r["c"]])) for r in table["rows"]]


def test_steps_match_input_pipeline(gpu_run, xcat):
    """A step's time is its longest host's (overview_page's summary): the
    test takes each host's own step table; the breakdown is the run-level
    table's (its first host's steps)."""
    rep = json.loads(xcat(gpu_run, "train/report.json"))
    per_host = [{r["stepnum"]: r["stepTimeMs"] for r in table_rows(json.loads(
        xcat(gpu_run, f"train/hosts/{h}/input_pipeline_analyzer.json"))[1])}
        for h in rep["hosts"]]
    times = [max(h[k] for h in per_host) for k in sorted(per_host[0], key=int)]
    st = rep["step_time_ms"]
    assert st["count"] == len(times) > 3
    assert close(st["median"], percentile(times, 50))
    assert close(st["p90"], percentile(times, 90))
    assert close(st["min"], min(times)) and close(st["max"], max(times))
    ov = json.loads(xcat(gpu_run, "train/overview_page.json"))[1]["p"]
    assert abs(st["mean"] - float(ov["steptime_ms_average"])) < 0.05
    assert abs(st["min"] - float(ov["steptime_ms_minimum"])) < 0.05
    rows = table_rows(json.loads(xcat(gpu_run, "train/input_pipeline_analyzer.json"))[1])
    mean = lambda k: sum(r[k] for r in rows) / len(rows)  # noqa: E731
    b = rep["breakdown_ms"]
    assert close(b["compute"], mean("deviceComputeTimeMs"))
    assert close(b["communication"], mean("deviceCollectivesTimeMs") + mean("deviceToDeviceTimeMs"))
    assert close(b["idle"], mean("otherTimeMs"))
    assert close(sum(b.values()), mean("stepTimeMs"), 1e-4)
    assert rep["source"] == "xplane" and rep["hosts"] == ["synth-host-0", "synth-host-1"]


def test_ops_and_kernels_match_their_files(gpu_run, xcat):
    rep = json.loads(xcat(gpu_run, "train/report.json"))
    fw = json.loads(xcat(gpu_run, "train/framework_op_stats.json"))[0]
    cols = [c["id"] for c in fw["cols"]]
    rows = [dict(zip(cols, [c["v"] for c in r["c"]])) for r in fw["rows"]]
    dev = [r for r in rows if r["host_or_device"] == "Device" and r["type"] != "IDLE"]
    dev.sort(key=lambda r: (-r["total_self_time"], r["operation"]))
    assert [o["name"] for o in rep["top_ops"]] == [r["operation"] for r in dev[:10]]
    for o, r in zip(rep["top_ops"], dev):
        assert close(o["self_us"], r["total_self_time"]) and o["occurrences"] == r["occurrences"]
    # kernel_stats lists each host's report of a kernel (as XProf): the
    # report adds them up, by kernel and op.
    ks = json.loads(xcat(gpu_run, "train/kernel_stats.json"))
    total = {}
    for r in table_rows(ks):
        k = (r["kernel_name"], r["op_name"])
        n, us = total.get(k, (0, 0.0))
        total[k] = (n + r["occurrences"], us + r["total_duration_us"])
    want = sorted(total.items(), key=lambda kv: (-kv[1][1], kv[0][0]))[:10]
    assert [(k["name"], k["occurrences"]) for k in rep["top_kernels"]] == \
        [(k[0], v[0]) for k, v in want]
    for k, (_, (n, us)) in zip(rep["top_kernels"], want):
        assert close(k["total_us"], us)
    assert rep["top_ops_source"] == rep["top_kernels_source"] == "op_stats"


def test_gpus_match_gpu_timeline(gpu_run, xcat):
    rep = json.loads(xcat(gpu_run, "train/report.json"))
    rows = list(csv.DictReader(io.StringIO(xcat(gpu_run, "train/gpu_timeline.csv").decode())))
    by = {}
    for r in rows:
        by.setdefault((r["host"], r["gpu_pid"]), {})[r["type"]] = float(r["time ms"]) * 1000
    assert len(rep["gpus"]) == len(by) == 4
    got = sorted((g["host"], g["busy_us"], g["idle_us"]) for g in rep["gpus"])
    want = sorted((h, m["busy_time"], m["idle_time"]) for (h, _), m in by.items())
    for (gh, gb, gi), (wh, wb, wi) in zip(got, want):
        assert gh == wh and close(gb, wb) and close(gi, wi)


def test_annotations_match_the_step_events(gpu_run, xcat):
    """The step annotation's inclusive times, computed here from the
    profile's host events (python3-protobuf)."""
    rep = json.loads(xcat(gpu_run, "train/report.json"))
    for a in rep["annotations"]:
        space = xplane_py.load(next((gpu_run / "plugins" / "profile" / "train")
                                    .glob(a["host"] + ".xplane.pb")))
        durs = []
        for plane in space.planes:
            names = {m.key: m.value.name for m in plane.event_metadata}
            for line in plane.lines:
                durs += [e.duration_ps / 1e6 for e in line.events
                         if names.get(e.metadata_id) == a["step"]]
        assert a["found_by"] == "step_num" and a["step"] == "train_step"
        assert a["incl_us"]["count"] == len(durs) > 3
        assert close(a["incl_us"]["median"], percentile(durs, 50))
        assert close(a["incl_us"]["max"], max(durs))


def test_markdown_says_the_same(gpu_run, xcat):
    rep = json.loads(xcat(gpu_run, "train/report.json"))
    md = xcat(gpu_run, "train/report.md").decode()
    assert md.startswith("# Run train\n")
    st = rep["step_time_ms"]
    assert f"{st['count']} steps" in md and f"median {st['median']:.3f} ms" in md
    for sec in ("## Step time", "## Bottleneck", "## Top ops on the device",
                "## Top kernels", "## GPUs", "## Step annotations"):
        assert sec in md
    assert rep["top_kernels"][0]["name"][:60] in md
    # One host's report covers that host only.
    host = json.loads(xcat(gpu_run, "train/hosts/synth-host-0/report.json"))
    assert host["hosts"] == ["synth-host-0"] and len(host["gpus"]) == 2


def test_pytorch_run_reports_its_profiler_step(corpus, xcat):
    run = corpus / "pytorch" / "h100_bert_small"
    (trace,) = run.glob("*.pt.trace.json.gz")
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("cat") == "user_annotation"]
    rep = json.loads(xcat(corpus / "pytorch", "h100_bert_small/report.json"))
    assert rep["source"] == "pytorch_trace" and "step_time_ms" not in rep
    (a,) = rep["annotations"]
    assert a["found_by"] == "profiler_step" and a["step"] == "ProfilerStep"
    assert a["incl_us"]["count"] == len(steps)
    assert close(a["incl_us"]["max"], max(e["dur"] for e in steps))
    assert len(rep["gpus"]) == 1
    # steps.csv now exists for PyTorch runs, ProfilerStep#6 as step 6.
    rows = list(csv.DictReader(io.StringIO(xcat(corpus / "pytorch",
                                                "h100_bert_small/steps.csv").decode())))
    top = [r for r in rows if r["depth"] == "0"]
    assert [(r["step_name"], r["step_num"]) for r in top] == [("ProfilerStep", "6")]


def test_implausible_registers_are_kept_and_warned(corpus, mount):
    """The ROCm tracer writes 2,191,500,840 registers per thread for some
    kernels: kernel_stats keeps the profile's value (as XProf does) and
    errors.txt and the report say it is the profile's."""
    mnt = mount(corpus / "jax_conv_rocm")
    run = mnt / "2025_01_01_00_00_00"
    ks = json.loads((run / "kernel_stats.json").read_text())
    col = [c["id"] for c in ks["cols"]].index("registers_per_thread")
    bad = [r["c"][1]["v"] for r in ks["rows"] if r["c"][col]["v"] > 512]
    assert 2191500840 in [r["c"][col]["v"] for r in ks["rows"]]
    errors = (run / "errors.txt").read_text()
    assert (f"kernel_stats: warning: {len(bad)} kernels to which the profile gives more than 512 "
            "registers per thread") in errors
    rep = json.loads((run / "report.json").read_text())
    assert any(w.startswith("kernel_stats: ") and "registers per thread" in w
               for w in rep["warnings"])


# ---- PyTorch runs: top ops from kernel_launchers_summary.csv, top kernels
# from the trace's kernel events ------------------------------------------------

PT_RUNS = ["h100_bert_small", "h100_falconsai_vit", "mi300_qwen_0.5b", "b200_eager"]


def summary_top(text):
    """The 10 rows of most total_direct_kernel_time_sum, read with csv and
    sorted here."""
    rows = list(csv.DictReader(io.StringIO(text.decode())))
    rows.sort(key=lambda r: (-float(r["total_direct_kernel_time_sum"]), r["name"]))
    return rows[:10]


def check_top_ops(rep, summary_csv):
    want = summary_top(summary_csv)
    assert rep["top_ops_source"] == "kernel_launchers"
    assert [o["name"] for o in rep["top_ops"]] == [r["name"] for r in want]
    assert len(rep["top_ops"]) == min(10, len(list(csv.reader(io.StringIO(
        summary_csv.decode())))) - 1) > 0
    for o, r in zip(rep["top_ops"], want):
        total = float(r["total_direct_kernel_time_sum"])
        assert o["occurrences"] == int(r["Count"])
        assert o["kernel_total_us"] == total  # the CSV's number, to the last digit
        assert o["kernel_mean_us"] == total / int(r["Count"])
        assert o["kernel_pct"] == float(r["Percentage (%)"])
        assert str(sorted(o["categories"])) == r["Categories"]


def expected_kernels(traces):
    """Every "kernel" complete event of every trace, grouped by name:
    {name: [count, total dur, max dur]}, and the total of all of them."""
    by, total = {}, 0.0
    for t in traces:
        for e in json.loads(gzip.decompress(t.read_bytes()))["traceEvents"]:
            if e.get("cat") != "kernel" or e.get("ph") != "X":
                continue
            k = by.setdefault(e["name"], [0, 0.0, 0.0])
            d = e.get("dur", 0)
            k[0] += 1
            k[1] += d
            k[2] = max(k[2], d) if k[0] > 1 else d
            total += d
    return by, total


def check_top_kernels(rep, traces):
    by, total = expected_kernels(traces)
    want = sorted(by.items(), key=lambda kv: (-kv[1][1], kv[0]))[:10]
    assert rep["top_kernels_source"] == "kernel_events"
    assert [k["name"] for k in rep["top_kernels"]] == [name for name, _ in want]
    assert len(want) > 0
    for k, (_, (n, us, mx)) in zip(rep["top_kernels"], want):
        assert k["occurrences"] == n and k["max_us"] == mx
        assert close(k["total_us"], us, 1e-12) and close(k["mean_us"], us / n, 1e-12)
        assert close(k["total_pct"], us / total * 100, 1e-12)


@pytest.mark.parametrize("run", PT_RUNS)
def test_pytorch_top_ops_and_kernels(corpus, xcat, run):
    logdir = corpus / "pytorch"
    rep = json.loads(xcat(logdir, f"{run}/report.json"))
    assert rep["source"] == "pytorch_trace"
    check_top_ops(rep, xcat(logdir, f"{run}/kernel_launchers_summary.csv"))
    check_top_kernels(rep, sorted((logdir / run).glob("*.pt.trace.json.gz")))
    md = xcat(logdir, f"{run}/report.md").decode()
    assert "## Top ops by GPU kernel time (kernel_launchers_summary.csv)" in md
    assert "## Top kernels (total time)" in md
    assert f"| {rep['top_ops'][0]['name']} | " in md
    assert rep["top_kernels"][0]["name"][:40] in md


def test_pytorch_ranks_merge_by_kernel_name(corpus, xcat, tmp_path):
    """Two traces in one folder are two hosts of one run: the top ops are
    the run's kernel_launchers_summary.csv, a kernel of the same name on
    both hosts is one kernel."""
    run = tmp_path / "two"
    run.mkdir()
    traces = []
    for name in ("h100_bert_small", "h100_falconsai_vit"):
        (src,) = (corpus / "pytorch" / name).glob("*.pt.trace.json.gz")
        traces.append(run / src.name)
        traces[-1].write_bytes(src.read_bytes())
    rep = json.loads(xcat(tmp_path, "two/report.json"))
    assert len(rep["hosts"]) == 2
    check_top_ops(rep, xcat(tmp_path, "two/kernel_launchers_summary.csv"))
    check_top_kernels(rep, traces)
    per = [expected_kernels([t])[0] for t in traces]
    assert any(k["name"] in per[0] and k["name"] in per[1] for k in rep["top_kernels"])
    host = rep["hosts"][0]
    one = json.loads(xcat(tmp_path, f"two/hosts/{host}/report.json"))
    check_top_kernels(one, [t for t in traces if t.name.startswith(host)])
