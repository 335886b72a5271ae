"""TPU device path of op_stats (XProf's ConvertTensorCoreDeviceTraceXPlaneToOpMetricsDb)
on the synthetic TPU profile (xprofs-synth --scenario tpu).

Expected values are recomputed here from the raw events read with the Python
protobuf reader (xplane_py): per TensorCore plane, self time of every op on
the op lines = span - sum of the spans of its immediate children (found by
containment, not with a stack), ops merged by (program_id, symbol_id) with
symbol 0 dropped, flops/bytes per occurrence times occurrences, total time =
last end - first begin over the Steps and op lines, IDLE = total - sum of
self times; planes summed. Column ids are those of XProf's recorded TPU
outputs (Locamage/xprof-rs tests/data/overview_page.json and
framework_op_stats.json, demo TPU profile).

The TPU step db and step-time table (ComputeTpuPerStepDataAcrossCores) are
recomputed the same way: Steps markers and op events with a group_id per
core, steps common to all cores, step time = longest marker, per-core
category self times, then XProf's per-step TensorCore formulas; column ids
are those of xprof-rs tests/data/input_pipeline_analyzer.json.

The duty cycle (overview_page device_duty_cycle_percent) is recomputed from
the XLA Ops / Sparse Core Ops / module events: busy = union length of the
on-duty op spans per chip (core_details local_chip_id) or per plane, idle =
window [0, last end] - busy, summed; also on a modified copy of the scenario
(no root ops, an outfeed, one chip for both cores, a SparseCore plane) and
with two hosts.
"""
import json
from collections import defaultdict

import pytest

import xplane_py

RUN = "tpu"

# Column ids of XProf's TPU outputs (xprof-rs tests/data, demo TPU profile).
FRAMEWORK_COLS = [
    "rank", "host_or_device", "type", "operation", "occurrences", "total_time", "avg_time",
    "total_self_time", "avg_self_time", "device_total_self_time_percent",
    "device_cumulative_total_self_time_percent", "host_total_self_time_percent",
    "Host_cumulative_total_self_time_percent", "measured_flop_rate", "model_flop_rate",
    "measured_memory_bw", "operational_intensity", "bound_by", "eager"]
OVERVIEW_TOP_COLS = ["selfTimePercent", "cumulativeTimePercent", "category", "operation",
                     "flopRate"]
OVERVIEW_ENV_COLS = ["host_id", "command_line", "start_time", "bns_address"]
OP_LINES = ("XLA Ops", "Framework Ops", "Sparse Core Ops")
STEP_LINES = ("Steps", "Sparse Core Steps")


@pytest.fixture(scope="module")
def tpu_logdir(tmp_path_factory, xprofs_build):
    import subprocess
    out = tmp_path_factory.mktemp("tpu")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", RUN,
                    "--scenario", "tpu"], check=True, timeout=60, capture_output=True)
    return out


def _stat_value(stat, names):
    which = stat.WhichOneof("value")
    if which == "ref_value":
        return names[stat.ref_value]
    return getattr(stat, which)


def _stats(stats, names):
    return {names[s.metadata_id]: _stat_value(s, names) for s in stats}


def expected_device_db(space):
    """{(program, display name): row} summed over TensorCore planes, and totals."""
    rows = {}
    total_time = 0
    total_op = 0
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:") or "SparseCore" in plane.name:
            continue
        names = {m.key: m.value.name for m in plane.stat_metadata}
        emeta = {m.key: m.value for m in plane.event_metadata}
        spans = []  # (begin, end, metadata id, event stats)
        first, last = None, None
        for line in plane.lines:
            if line.name not in OP_LINES and line.name not in STEP_LINES:
                continue
            for ev in line.events:
                st = _stats(ev.stats, names)
                if "device_offset_ps" in st and "device_duration_ps" in st:
                    b, e = st["device_offset_ps"], st["device_offset_ps"] + st["device_duration_ps"]
                else:
                    b = line.timestamp_ns * 1000 + ev.offset_ps
                    e = b + ev.duration_ps
                first = b if first is None else min(first, b)
                last = e if last is None else max(last, e)
                if line.name in OP_LINES:
                    spans.append((b, e, ev.metadata_id, st, ev.duration_ps))
        # immediate children by containment: the parent is the smallest earlier
        # span (in line order) that contains the event
        children = defaultdict(int)
        for j, (b, e, _, _, _) in enumerate(spans):
            best = None
            for i in range(j):
                pb, pe = spans[i][0], spans[i][1]
                if pb <= b and e <= pe and (best is None or
                                            pe - pb <= spans[best][1] - spans[best][0]):
                    best = i
            if best is not None:
                children[best] += e - b
        per_symbol = {}
        for i, (b, e, mid, st, dur) in enumerate(spans):
            md = emeta[mid]
            mst = _stats(md.stats, names)
            if "program_id" not in mst or "symbol_id" not in mst or mst["symbol_id"] == 0:
                continue
            key = (mst["program_id"], mst["symbol_id"])
            r = per_symbol.setdefault(key, {
                "name": md.display_name or md.name, "program": mst["program_id"],
                "category": mst.get("hlo_category", ""), "tf_op": mst.get("tf_op", ""),
                "flops": mst.get("flops", 0), "model_flops": mst.get("model_flops", 0),
                "bytes": mst.get("bytes_accessed", 0), "occ": 0, "time": 0, "self": 0,
                "ev_flops": 0, "ev_bytes": 0})
            r["occ"] += 1
            r["time"] += e - b
            r["self"] += e - b - children[i]
            r["ev_flops"] += st.get("flops", 0)
            r["ev_bytes"] += st.get("bytes_accessed", 0)
        for r in per_symbol.values():
            if r["category"] == "custom-call":
                # each occurrence: metadata value + the event's own stat, summed
                r["flops"] = r["flops"] * r["occ"] + r["ev_flops"]
                r["model_flops"] *= r["occ"]
                r["bytes"] = r["bytes"] * r["occ"] + r["ev_bytes"]
            else:
                r["flops"] *= r["occ"]
                r["model_flops"] = r["model_flops"] * r["occ"] if r["model_flops"] else r["flops"]
                r["bytes"] *= r["occ"]
            total_op += r["self"]
            k = (r["program"], r["name"])
            if k in rows:
                for f in ("occ", "time", "self", "flops", "model_flops", "bytes"):
                    rows[k][f] += r[f]
            else:
                rows[k] = dict(r)
        plane_op = sum(r["self"] for r in per_symbol.values())
        total_time += max(plane_op, last - first)  # SetTotalTimePs
    return rows, total_time, total_op


@pytest.fixture(scope="module")
def expected(tpu_logdir):
    files = list((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    assert len(files) == 1
    return expected_device_db(xplane_py.load(files[0]))


def _table(data):
    cols = [c["id"] for c in data["cols"]]
    return cols, [dict(zip(cols, [c["v"] for c in r["c"]])) for r in data["rows"]]


def test_profile_has_tpu_planes(tpu_logdir):
    files = list((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    space = xplane_py.load(files[0])
    tpu = [p for p in space.planes if p.name.startswith("/device:TPU:")]
    assert [p.name for p in tpu] == ["/device:TPU:0", "/device:TPU:1"]
    for p in tpu:
        assert [l.name for l in p.lines] == ["Steps", "XLA Modules", "XLA Ops"]


def test_framework_op_stats_device_rows(tpu_logdir, xcat, expected):
    rows, total_time, total_op = expected
    data = json.loads(xcat(tpu_logdir, f"{RUN}/framework_op_stats.json"))
    assert len(data) == 2
    cols, got = _table(data[0])
    assert cols == FRAMEWORK_COLS
    assert _table(data[1])[0] == FRAMEWORK_COLS
    device = {r["operation"]: r for r in got if r["host_or_device"] == "Device"}
    # framework op = name part of tf_op ("name:type"), type = the part after ':'
    want = {}
    for r in rows.values():
        name, _, typ = r["tf_op"].partition(":")
        want[name] = (typ, r)
    assert set(device) == set(want) | {"IDLE"}
    for name, (typ, r) in want.items():
        g = device[name]
        assert g["type"] == typ
        assert g["occurrences"] == r["occ"]
        assert g["total_time"] == pytest.approx(r["time"] / 1e6)
        assert g["total_self_time"] == pytest.approx(r["self"] / 1e6)
        assert g["device_total_self_time_percent"] == pytest.approx(r["self"] / total_time)
    idle = device["IDLE"]
    assert idle["type"] == "IDLE" and idle["occurrences"] == 0
    assert idle["total_self_time"] == pytest.approx((total_time - total_op) / 1e6)
    # the nested parent keeps only its own time; the symbol-0 root is dropped
    assert device["jit(train_step)/while"]["total_self_time"] < \
        device["jit(train_step)/while"]["total_time"]
    assert not any(r["operation"] == "jit_train_step" for r in got)
    # rows ranked by self time
    selfs = [r["total_self_time"] for r in got if r["host_or_device"] == "Device"]
    assert selfs == sorted(selfs, reverse=True)


def test_framework_op_stats_flop_rates(tpu_logdir, xcat, expected):
    rows, _, _ = expected
    _, got = _table(json.loads(xcat(tpu_logdir, f"{RUN}/framework_op_stats.json"))[0])
    device = {r["operation"]: r for r in got if r["host_or_device"] == "Device"}
    for r in rows.values():
        name = r["tf_op"].partition(":")[0]
        g = device[name]
        # GFLOP/s = flops / time in ns
        assert g["measured_flop_rate"] == pytest.approx(r["flops"] / (r["time"] / 1e3))
        assert g["model_flop_rate"] == pytest.approx(r["model_flops"] / (r["time"] / 1e3))


def test_overview_page_tpu(tpu_logdir, xcat, expected):
    rows, total_time, total_op = expected
    data = json.loads(xcat(tpu_logdir, f"{RUN}/overview_page.json"))
    cols, top = _table(data[0])
    assert cols == OVERVIEW_TOP_COLS
    # top device ops: without IDLE, fraction of the total op time
    want = sorted(((r["self"], r["tf_op"].partition(":")[0]) for r in rows.values()),
                  key=lambda x: (-x[0], x[1]))[:10]
    assert [r["operation"] for r in top] == [n for _, n in want]
    for r, (s, _) in zip(top, want):
        assert r["selfTimePercent"] == pytest.approx(s / total_op)
    assert top[-1]["cumulativeTimePercent"] == pytest.approx(1.0)
    p = data[0]["p"]
    assert p["device_idle_time_percent"] == "%.1f%%" % (100.0 * (1 - total_op / total_time))
    env_cols, _ = _table(data[2])
    assert env_cols == OVERVIEW_ENV_COLS
    env = data[2]["p"]
    assert env["device_type"] == "TPU v4"
    assert env["device_core_count"] == "2"
    tips = [r["c"][1]["v"] for r in data[3]["rows"] if r["c"][0]["v"] == "device"]
    assert tips[0].startswith("op_profile (")
    assert "TPU core" in tips[1]


def test_kernel_stats_empty_on_tpu(tpu_logdir, xcat):
    data = json.loads(xcat(tpu_logdir, f"{RUN}/kernel_stats.json"))
    assert data["rows"] == []


def test_tpu_scenario_is_fixed_and_deterministic(tmp_path, xprofs_build):
    import subprocess
    exe = str(xprofs_build / "xprofs-synth")
    outs = []
    for d in ("a", "b"):
        subprocess.run([exe, "--out", str(tmp_path / d), "--scenario", "tpu"], check=True,
                       capture_output=True, timeout=60)
        outs.append(next((tmp_path / d).rglob("*.xplane.pb")).read_bytes())
    assert outs[0] == outs[1]
    r = subprocess.run([exe, "--out", str(tmp_path / "c"), "--scenario", "tpu", "--gpus", "3"],
                       capture_output=True, timeout=60)
    assert r.returncode == 2
    assert b"two TPU cores" in r.stderr


# Step-time table of XProf's TPU input-pipeline analysis (xprof-rs
# tests/data/input_pipeline_analyzer.json, demo TPU profile).
TPU_STEP_COLS = [
    "stepnum", "tcComputeTimeMs", "scv0ComputeTimeMs", "scv0InfeedTimeMs", "tcInfeedTimeMs",
    "tcOutfeedTimeMs", "tcIdleTimeMs", "hostTransferTimeMs", "tooltip", "infeedPercentAverage",
    "infeedPercentMin", "infeedPercentMax"]
HOST_SEND_RECV = ("host send", "host send-done", "host recv", "host recv-done")


def plane_step_events(plane, step_line, op_lines):
    """One TPU plane's step markers by group, the self time of each op
    category per group (only op events with a group id count; parents by
    containment among them) and its step groups (with ops and a marker)."""
    names = {m.key: m.value.name for m in plane.stat_metadata}
    emeta = {m.key: m.value for m in plane.event_metadata}
    markers = defaultdict(list)
    ops = []
    for line in plane.lines:
        for ev in line.events:
            st = _stats(ev.stats, names)
            if "group_id" not in st:
                continue
            b = line.timestamp_ns * 1000 + ev.offset_ps
            e = b + ev.duration_ps
            if line.name == step_line:
                markers[st["group_id"]].append((b, e))
            elif line.name in op_lines:
                ops.append((b, e, ev.metadata_id, st["group_id"]))
    cats = defaultdict(lambda: defaultdict(int))
    groups = set()
    for j, (b, e, mid, g) in enumerate(ops):
        groups.add(g)
        kids = 0
        for k, (cb, ce, _, _) in enumerate(ops):
            if k == j or not (b <= cb and ce <= e):
                continue
            # immediate child: no other op between them
            if not any(i not in (j, k) and b <= ops[i][0] and ops[i][1] <= e and
                       ops[i][0] <= cb and ce <= ops[i][1] for i in range(len(ops))):
                kids += ce - cb
        mst = _stats(emeta[mid].stats, names)
        if "program_id" in mst and mst.get("symbol_id", 0) != 0:
            cats[g][mst.get("hlo_category", "")] += e - b - kids
    return markers, cats, {g for g in groups if g in markers}


def expected_tpu_steps(space):
    """Per step (ascending group id): its step time and, per TensorCore, the
    self time of each op category in the step."""
    cores = []
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:") or "SparseCore" in plane.name:
            continue
        markers, cats, groups = plane_step_events(plane, "Steps", OP_LINES)
        cores.append((plane.id, markers, cats, groups))
    common = set.intersection(*[c[3] for c in cores])
    steps = []
    for g in sorted(common):
        dur = max(e - b for _, markers, _, _ in cores for b, e in markers[g])
        steps.append((g, dur, [dict(c[2][g]) for c in sorted(cores, key=lambda c: c[0])]))
    return steps


def expected_tpu_details(steps):
    out = []
    for g, dur, per_core in steps:
        optimal, infeed, outfeed, host, pct = [], [], [], [], []
        for cats in per_core:
            idle = dur - sum(cats.values())
            inf = cats.get("infeed", 0)
            outf = cats.get("outfeed", 0)
            hs = sum(cats.get(c, 0) for c in HOST_SEND_RECV)
            optimal.append(dur - (inf + outf + hs + idle))
            infeed.append(inf)
            outfeed.append(outf)
            host.append(hs)
            pct.append(100.0 * inf / dur)
        d = {"stepnum": str(g), "tcComputeTimeMs": min(optimal) / 1e9,
             "tcInfeedTimeMs": max(infeed) / 1e9,
             "tcOutfeedTimeMs": sum(outfeed) / len(outfeed) / 1e9,
             "hostTransferTimeMs": max(host) / 1e9, "scv0ComputeTimeMs": 0.0,
             "scv0InfeedTimeMs": 0.0, "infeedPercentAverage": sum(pct) / len(pct),
             "infeedPercentMin": min(pct), "infeedPercentMax": max(pct)}
        non_idle = d["tcComputeTimeMs"] + d["tcInfeedTimeMs"] + d["tcOutfeedTimeMs"]
        d["tcIdleTimeMs"] = max(0.0, dur / 1e9 - non_idle)
        d["step_ms"] = dur / 1e9
        out.append(d)
    return out


@pytest.fixture(scope="module")
def expected_steps(tpu_logdir):
    files = list((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    return expected_tpu_details(expected_tpu_steps(xplane_py.load(files[0])))


def test_tpu_step_db_from_steps_line(expected_steps):
    # the scenario's README timeline: 3 steps, each as long as its longest
    # core marker (core 1: 900 + 10k + 3 us)
    assert [d["stepnum"] for d in expected_steps] == ["0", "1", "2"]
    assert [round(d["step_ms"], 6) for d in expected_steps] == [0.903, 0.913, 0.923]


@pytest.mark.parametrize("tool", ["input_pipeline_analyzer.json", "overview_page.json"])
def test_tpu_step_table(tpu_logdir, xcat, expected_steps, tool):
    data = json.loads(xcat(tpu_logdir, f"{RUN}/{tool}"))
    cols, rows = _table(data[1])
    assert cols == TPU_STEP_COLS
    assert len(rows) == len(expected_steps)
    for r, d in zip(rows, expected_steps):
        for k in TPU_STEP_COLS:
            if k == "tooltip":
                assert r[k] == ("step %s:\nTime waiting for input data = %.3f ms, "
                                "Step time = %.3f ms" % (
                                    d["stepnum"], d["tcInfeedTimeMs"],
                                    d["tcComputeTimeMs"] + d["tcInfeedTimeMs"] +
                                    d["tcOutfeedTimeMs"] + d["tcIdleTimeMs"]))
            elif k == "stepnum":
                assert r[k] == d[k]
            else:
                assert r[k] == pytest.approx(d[k], abs=1e-12), k
    # some time is idle and some is infeed in every step of the scenario
    assert all(d["tcIdleTimeMs"] > 0 and d["tcInfeedTimeMs"] > 0 for d in expected_steps)
    p = data[1]["p"]
    assert p["hardware_type"] == "TPU"
    assert p["step_time_graph_column_ids"] == ",".join(TPU_STEP_COLS[:9])
    n = len(expected_steps)
    avg = lambda k: sum(d[k] for d in expected_steps) / n  # noqa: E731
    assert p["tc_compute_ms_average"] == "%.2f" % avg("tcComputeTimeMs")
    assert p["tc_infeed_ms_average"] == "%.2f" % avg("tcInfeedTimeMs")
    assert p["tc_idle_ms_average"] == "%.2f" % avg("tcIdleTimeMs")
    assert p["steptime_ms_average"] == "%.2f" % avg("step_ms")  # two decimals on TPU
    assert p["infeed_percent_maximum"] == "%.1f" % max(d["infeedPercentMax"]
                                                       for d in expected_steps)
    # TpuBottleneckAnalysis: infeed share of the summed step times (StepTimeMs)
    total = sum(d["tcComputeTimeMs"] + d["tcInfeedTimeMs"] + d["tcOutfeedTimeMs"] +
                d["tcIdleTimeMs"] for d in expected_steps)
    infeed = 100.0 * sum(d["tcInfeedTimeMs"] for d in expected_steps) / total
    assert 5 <= infeed < 20  # the scenario is moderately input-bound
    assert p["input_conclusion"] == (
        "Your program is MODERATELY input-bound because %.1f%% of the total step time "
        "sampled is waiting for input. Therefore, you would need to reduce both the input "
        "time and other time." % infeed)
    assert p["output_conclusion"] == ""  # no outfeed
    assert p["summary_nextstep"].startswith("Consider using ")
    # steps were found: no "No step marker observed" diagnostic
    if tool == "input_pipeline_analyzer.json":
        assert data[4]["rows"] == []


# ---- duty cycle (XProf's DutyCycleTracker / DutyCycleCombiner) ----------------

OFF_DUTY = ("infeed", "outfeed", "host send", "host send-done", "host recv", "host recv-done",
            "megacore fusion")


def _local_chip_id(data):
    """Field 4 (local_chip_id) of a serialized CoreDetails, by hand."""
    i, chip = 0, 0
    while i < len(data):
        key, i = _varint(data, i)
        field, wtype = key >> 3, key & 7
        if wtype == 0:
            v, i = _varint(data, i)
            if field == 4:
                chip = v
        elif wtype == 2:
            n, i = _varint(data, i)
            i += n
        else:
            raise AssertionError("unexpected wire type")
    return chip


def _varint(data, i):
    v, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def expected_duty(space):
    """(busy ps, idle ps) of one host: busy spans = XLA Ops events whose
    metadata category is on duty and every Sparse Core Ops event; window from
    0 to the last end of those and the module lines; planes with core_details
    merged per local chip (span union), the others alone."""
    groups = {}  # key -> [spans, window end]
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        names = {m.key: m.value.name for m in plane.stat_metadata}
        emeta = {m.key: m.value for m in plane.event_metadata}
        key = ("plane", plane.name)
        for st in plane.stats:
            if names.get(st.metadata_id) == "core_details":
                key = ("chip", _local_chip_id(st.bytes_value))
        g = groups.setdefault(key, [[], 0])
        for line in plane.lines:
            if line.name not in ("XLA Ops", "Sparse Core Ops", "XLA Modules",
                                 "Sparse Core Modules"):
                continue
            for ev in line.events:
                b = line.timestamp_ns * 1000 + ev.offset_ps
                e = b + ev.duration_ps
                g[1] = max(g[1], e)
                if line.name.endswith("Modules"):
                    continue
                cat = _stats(emeta[ev.metadata_id].stats, names).get("hlo_category", "") \
                    if ev.metadata_id in emeta else ""
                if line.name == "XLA Ops" and cat in OFF_DUTY:
                    continue
                g[0].append((b, e))
    busy = idle = 0
    for spans, end in groups.values():
        # union length by walking the picosecond boundaries
        points = sorted({p for s in spans for p in s})
        active = sum(hi - lo for lo, hi in zip(points, points[1:])
                     if any(b <= lo and hi <= e for b, e in spans))
        busy += active
        idle += end - active
    return busy, idle


def _duty_str(busy, idle):
    return "%.1f%%" % (100.0 * busy / (busy + idle) if busy + idle else 0.0)


def test_duty_cycle_scenario(tpu_logdir, xcat):
    files = list((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    busy, idle = expected_duty(xplane_py.load(files[0]))
    # README timeline: the root op covers [6, 870) us of each step (864 us x 3
    # steps x 2 cores busy); the window is [0, 1000 + 2100 + c + 900) us
    assert (busy, idle) == (2 * 3 * 864 * 10**6, (4000 + 4001 - 2 * 3 * 864) * 10**6)
    p = json.loads(xcat(tpu_logdir, f"{RUN}/overview_page.json"))[0]["p"]
    assert p["device_duty_cycle_percent"] == _duty_str(busy, idle) == "64.8%"


def _add_meta(entries, key, name):
    """A metadata map entry (the maps are repeated key/value messages)."""
    m = entries.add()
    m.key = key
    m.value.id = key
    m.value.name = name
    return m.value


def _mutated_space(space):
    """The scenario without its root ops (so infeed's off-duty time shows),
    both TensorCores on local chip 0 (core_details), an outfeed op on core 1
    outside every other op, and a SparseCore plane (own group) whose Sparse
    Core Ops event counts as busy even with an off-duty category."""
    core_details = bytes([0x0A, 1]) + b"h" + bytes([0x20, 0])  # hostname, local_chip_id 0
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        names = {m.value.name: m.key for m in plane.stat_metadata}
        emeta = {m.key: m.value for m in plane.event_metadata}
        _add_meta(plane.stat_metadata, 900, "core_details")
        st = plane.stats.add()
        st.metadata_id = 900
        st.bytes_value = core_details
        for line in plane.lines:
            if line.name != "XLA Ops":
                continue
            for i in reversed(range(len(line.events))):
                if emeta[line.events[i].metadata_id].name == "jit_train_step":
                    del line.events[i]
            if plane.id == 1:
                s = _add_meta(plane.event_metadata, 900, "outfeed.9").stats.add()
                s.metadata_id = names["hlo_category"]
                s.str_value = "outfeed"
                ev = line.events.add()
                ev.metadata_id = 900
                ev.offset_ps = 2990 * 10**6  # us 2990 .. 2999 after the line start
                ev.duration_ps = 9 * 10**6
    sc = space.planes.add()
    sc.id = 77
    sc.name = "/device:TPU:0 SparseCore 0"
    _add_meta(sc.stat_metadata, 1, "hlo_category")
    s = _add_meta(sc.event_metadata, 1, "sc-infeed").stats.add()
    s.metadata_id = 1
    s.str_value = "infeed"
    line = sc.lines.add()
    line.id = 1
    line.name = "Sparse Core Ops"
    line.timestamp_ns = 2000
    ev = line.events.add()
    ev.metadata_id = 1
    ev.offset_ps = 500000
    ev.duration_ps = 250000
    return space


def test_duty_cycle_chips_off_duty_and_hosts(tpu_logdir, tmp_path, xcat):
    src = next((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    run = tmp_path / "plugins/profile/mut"
    run.mkdir(parents=True)
    plain = xplane_py.load(src)
    mutated = _mutated_space(xplane_py.load(src))
    (run / "a.xplane.pb").write_bytes(src.read_bytes())
    (run / "b.xplane.pb").write_bytes(mutated.SerializeToString())
    busy_a, idle_a = expected_duty(plain)
    busy_b, idle_b = expected_duty(mutated)
    # the chip union is smaller than the per-core sum, infeed and outfeed are
    # not busy, the SparseCore event is
    assert busy_b < busy_a
    per_host = {"a": (busy_a, idle_a), "b": (busy_b, idle_b)}
    for host, (busy, idle) in per_host.items():
        p = json.loads(xcat(tmp_path, f"mut/hosts/{host}/overview_page.json"))[0]["p"]
        assert p["device_duty_cycle_percent"] == _duty_str(busy, idle), host
    # hosts combined: busy and idle summed (OpMetricsDbCombiner)
    p = json.loads(xcat(tmp_path, "mut/overview_page.json"))[0]["p"]
    assert p["device_duty_cycle_percent"] == _duty_str(busy_a + busy_b, idle_a + idle_b)
    assert _duty_str(busy_a + busy_b, idle_a + idle_b) != _duty_str(busy_a, idle_a)


def test_all_reduce_breakdown(tpu_logdir, tmp_path, xcat):
    """ComputePerStepAllReduceBreakdownAcrossCores: ops with an
    all_reduce_unique_id; per id the shortest duration over the cores is
    compute, the rest synchronisation; the core with the longest total gives
    the step's all-reduce time, which the TensorCore idle time excludes and
    the tooltip's step time leaves out. The scenario's all-reduce.5 lasts
    100 us on core 0 and 120 us on core 1 (README), one id per step."""
    space = xplane_py.load(next((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb")))
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        _add_meta(plane.stat_metadata, 950, "all_reduce_unique_id")
        ar = next(m.key for m in plane.event_metadata if m.value.name == "all-reduce.5")
        group = next(m.key for m in plane.stat_metadata if m.value.name == "group_id")
        for line in plane.lines:
            for ev in line.events:
                if ev.metadata_id != ar:
                    continue
                k = next(s.int64_value for s in ev.stats if s.metadata_id == group)
                st = ev.stats.add()
                st.metadata_id = 950
                st.int64_value = 500 + k
    run = tmp_path / "plugins/profile/ar"
    run.mkdir(parents=True)
    (run / "h.xplane.pb").write_bytes(space.SerializeToString())
    before = expected_tpu_details(expected_tpu_steps(space))
    cols, rows = _table(json.loads(xcat(tmp_path, "ar/input_pipeline_analyzer.json"))[1])
    assert len(rows) == len(before) == 3
    all_reduce = 0.100 + 0.020  # core 1: compute 100 us (core 0's), sync 20 us
    for r, d in zip(rows, before):
        busy = d["tcComputeTimeMs"] + d["tcInfeedTimeMs"] + d["tcOutfeedTimeMs"] + all_reduce
        assert r["tcIdleTimeMs"] == pytest.approx(max(0.0, d["step_ms"] - busy), abs=1e-9)
        assert r["tooltip"].endswith("Step time = %.3f ms" % (
            busy + max(0.0, d["step_ms"] - busy) - all_reduce))
    # without the ids the idle time keeps the all-reduce time
    assert rows[0]["tcIdleTimeMs"] < before[0]["tcIdleTimeMs"] - 0.1


# ---- high-confidence duty cycle (ConstructDutyCycleTrackers' second tracker) --

def _int_or_uint(stat):
    """IntOrUintValue: the int or uint value as int64, 0 for other kinds."""
    which = stat.WhichOneof("value")
    if which == "uint64_value":
        v = stat.uint64_value
        return v - (1 << 64) if v >= 1 << 63 else v
    return stat.int64_value if which == "int64_value" else 0


def _event_or_meta_stat(ev, md, name, ids):
    """GetXEventStat: the metadata's stat, else the event's own (None)."""
    sid = ids.get(name)
    for stats in (md.stats if md is not None else [], ev.stats):
        for s in stats:
            if s.metadata_id == sid:
                return s
    return None


def expected_duty_both(space):
    """(busy, idle, busy_hc, idle_hc) of one host: expected_duty's rule with
    the category taken from the metadata, else the event; the high-confidence
    tracker also drops custom-calls whose flops, model_flops and uses_ici
    (int/uint, metadata first) are all 0 or absent."""
    groups = {}  # key -> [spans, spans_hc, window end]
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        names = {m.key: m.value.name for m in plane.stat_metadata}
        ids = {v: k for k, v in names.items()}
        emeta = {m.key: m.value for m in plane.event_metadata}
        key = ("plane", plane.name)
        for st in plane.stats:
            if names.get(st.metadata_id) == "core_details":
                key = ("chip", _local_chip_id(st.bytes_value))
        g = groups.setdefault(key, [[], [], 0])
        for line in plane.lines:
            if line.name not in ("XLA Ops", "Sparse Core Ops", "XLA Modules",
                                 "Sparse Core Modules"):
                continue
            for ev in line.events:
                b = line.timestamp_ns * 1000 + ev.offset_ps
                e = b + ev.duration_ps
                g[2] = max(g[2], e)
                if line.name.endswith("Modules"):
                    continue
                on = on_hc = True
                md = emeta.get(ev.metadata_id)
                cat = _event_or_meta_stat(ev, md, "hlo_category", ids)
                if line.name == "XLA Ops" and cat is not None:
                    c = _stat_value(cat, names) if cat.WhichOneof("value") in (
                        "str_value", "ref_value") else ""
                    if c in OFF_DUTY:
                        on = on_hc = False
                    elif c == "custom-call":
                        vals = [_event_or_meta_stat(ev, md, n, ids)
                                for n in ("flops", "model_flops", "uses_ici")]
                        flops, model_flops, ici = [_int_or_uint(s) if s is not None else 0
                                                   for s in vals]
                        on_hc = not (flops == 0 and model_flops == 0 and ici <= 0)
                if on:
                    g[0].append((b, e))
                if on_hc:
                    g[1].append((b, e))

    def union(spans):
        points = sorted({p for s in spans for p in s})
        return sum(hi - lo for lo, hi in zip(points, points[1:])
                   if any(b <= lo and hi <= e for b, e in spans))

    out = [0, 0, 0, 0]
    for spans, spans_hc, end in groups.values():
        a, a_hc = union(spans), union(spans_hc)
        out = [out[0] + a, out[1] + end - a, out[2] + a_hc, out[3] + end - a_hc]
    return tuple(out)


def _hc_space(space):
    """The scenario with ops in the gap after each step's root op, on both
    cores: custom-calls that are opaque (no flops, model flops, ICI; flops a
    double; explicit zeros; category only on the event) and ones that are
    not (uses_ici, event model_flops), and an outfeed named only on the
    event."""
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        names = {m.value.name: m.key for m in plane.stat_metadata}
        _add_meta(plane.stat_metadata, 960, "uses_ici")
        names["uses_ici"] = 960

        def meta(key, name, **stats):
            md = _add_meta(plane.event_metadata, key, name)
            for n, v in stats.items():
                s = md.stats.add()
                s.metadata_id = names[n]
                if isinstance(v, str):
                    s.str_value = v
                elif isinstance(v, float):
                    s.double_value = v
                else:
                    s.uint64_value = v

        meta(961, "opaque.1", hlo_category="custom-call")
        meta(962, "ici.2", hlo_category="custom-call")
        meta(963, "nocat.3")
        meta(964, "nocat.4")
        meta(965, "dflops.5", hlo_category="custom-call", flops=5.0)
        meta(966, "nocat.6")
        meta(967, "zeros.7", hlo_category="custom-call", flops=0)
        # (metadata, us after the root's end, length in us, event stats)
        ops = [(961, 10, 10, {}), (962, 30, 5, {"uses_ici": 1}),
               (963, 40, 5, {"hlo_category": "custom-call", "model_flops": 7}),
               (964, 50, 10, {"hlo_category": "custom-call"}), (965, 70, 5, {}),
               (966, 80, 10, {"hlo_category": "outfeed"}),
               (967, 95, 5, {"flops": 0, "uses_ici": 0})]
        for line in plane.lines:
            if line.name != "XLA Ops":
                continue
            for k in range(3):
                root_end = 100 + k * 1000 + plane.id + 870  # us after the line start
                for mid, at, length, stats in ops:
                    ev = line.events.add()
                    ev.metadata_id = mid
                    ev.offset_ps = (root_end + at) * 10**6
                    ev.duration_ps = length * 10**6
                    for n, v in stats.items():
                        s = ev.stats.add()
                        s.metadata_id = names[n]
                        if isinstance(v, str):
                            s.str_value = v
                        else:
                            s.int64_value = v
    return space


def test_duty_cycle_high_confidence(tpu_logdir, tmp_path, xcat):
    src = next((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    plain = xplane_py.load(src)
    # the scenario's custom-call has flops: both duty cycles agree
    busy, idle, busy_hc, idle_hc = expected_duty_both(plain)
    assert (busy, idle) == expected_duty(plain) and (busy, idle) == (busy_hc, idle_hc)
    p = json.loads(xcat(tpu_logdir, f"{RUN}/overview_page.json"))[0]["p"]
    assert p["device_duty_cycle_high_confidence_percent"] == p["device_duty_cycle_percent"]
    assert p["idle_time_high_confidence_ps"] == "%.6g" % idle_hc

    space = _hc_space(xplane_py.load(src))
    busy, idle, busy_hc, idle_hc = expected_duty_both(space)
    # opaque.1, nocat.4, dflops.5, zeros.7: 30 us a step and core off the HC
    # tracker; nocat.6 (outfeed) is off both
    assert busy - busy_hc == 2 * 3 * 30 * 10**6
    assert busy == expected_duty(plain)[0] + 2 * 3 * 40 * 10**6
    run = tmp_path / "plugins/profile/hc"
    run.mkdir(parents=True)
    (run / "a.xplane.pb").write_bytes(space.SerializeToString())
    p = json.loads(xcat(tmp_path, "hc/overview_page.json"))[0]["p"]
    assert p["device_duty_cycle_percent"] == _duty_str(busy, idle)
    assert p["device_duty_cycle_high_confidence_percent"] == _duty_str(busy_hc, idle_hc)
    assert p["device_duty_cycle_high_confidence_percent"] != p["device_duty_cycle_percent"]
    # absl::StrCat(double): six significant digits
    assert p["idle_time_high_confidence_ps"] == "%.6g" % idle_hc
    assert "e+" in p["idle_time_high_confidence_ps"]


def test_duty_cycle_high_confidence_hosts(tpu_logdir, tmp_path, xcat):
    """OpMetricsDbCombiner does not add up the high-confidence times: a run
    of two hosts shows 0.0% and no idle time, each host its own."""
    src = next((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    run = tmp_path / "plugins/profile/two"
    run.mkdir(parents=True)
    (run / "a.xplane.pb").write_bytes(src.read_bytes())
    (run / "b.xplane.pb").write_bytes(_hc_space(xplane_py.load(src)).SerializeToString())
    for host in ("a", "b"):
        p = json.loads(xcat(tmp_path, f"two/hosts/{host}/overview_page.json"))[0]["p"]
        assert p["device_duty_cycle_high_confidence_percent"] != "0.0%"
        assert "idle_time_high_confidence_ps" in p
    p = json.loads(xcat(tmp_path, "two/overview_page.json"))[0]["p"]
    assert p["device_duty_cycle_high_confidence_percent"] == "0.0%"
    assert "idle_time_high_confidence_ps" not in p
    assert p["device_duty_cycle_percent"] != "0.0%"


# ---- max infeed core (GenerateMaxInfeedCoreTable) ------------------------------

def _with_core_details(space, ordinals, longer_infeed_plane):
    """core_details (device_ordinal, local_chip_id 0) on each TensorCore
    plane, and a 5 us longer infeed on one of them."""
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        _add_meta(plane.stat_metadata, 900, "core_details")
        st = plane.stats.add()
        st.metadata_id = 900
        st.bytes_value = bytes([0x0A, 1]) + b"x" + bytes([0x10, ordinals[plane.id], 0x20, 0])
        if plane.id != longer_infeed_plane:
            continue
        infeed = next(m.key for m in plane.event_metadata if m.value.name == "infeed.1")
        for line in plane.lines:
            for ev in line.events:
                if ev.metadata_id == infeed:
                    ev.duration_ps += 5 * 10**6
    return space


def test_max_infeed_core_table(tpu_logdir, tmp_path, xcat):
    src = next((tpu_logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    data = json.loads(xcat(tpu_logdir, f"{RUN}/input_pipeline_analyzer.json"))[0]
    assert [(c["id"], c["label"], c["type"]) for c in data["cols"]] == \
        [("index", "Index", "string")] + [(str(i), str(i), "string") for i in range(3)]
    assert [[c["v"] for c in r["c"]] for r in data["rows"]] == \
        [["Step number", "0", "1", "2"], ["Core name"] + ["unknown"] * 3]
    space = _with_core_details(xplane_py.load(src), {0: 4, 1: 7}, 1)
    host = space.hostnames[0]
    run = tmp_path / "plugins/profile/cd"
    run.mkdir(parents=True)
    (run / "a.xplane.pb").write_bytes(space.SerializeToString())
    data = json.loads(xcat(tmp_path, "cd/input_pipeline_analyzer.json"))[0]
    assert [[c["v"] for c in r["c"]] for r in data["rows"]] == \
        [["Step number", "0", "1", "2"], ["Core name"] + [f"{host}:7"] * 3]
    # two hosts: core ids host * 1000 + plane id still find their details
    (run / "b.xplane.pb").write_bytes(
        _with_core_details(xplane_py.load(src), {0: 4, 1: 7}, 0).SerializeToString())
    data = json.loads(xcat(tmp_path, "cd/input_pipeline_analyzer.json"))[0]
    assert [c["v"] for c in data["rows"][1]["c"]][1:] == [f"{host}:7"] * 3
    data = json.loads(xcat(tmp_path, "cd/hosts/b/input_pipeline_analyzer.json"))[0]
    assert [c["v"] for c in data["rows"][1]["c"]][1:] == [f"{host}:4"] * 3
