"""smart_suggestion.json: XProf's smart suggestions (xprof/convert/smart_suggestion/).

XProf's open-source build applies BarrierCoresRule only (the default here);
?rules=all applies its ten rules. Expected numbers are recomputed here from
the events python3-protobuf decodes: per TPU core plane and step (groups
with ops and a Steps marker), the barrier-cores (or debug_print) events'
device_duration_ps over the plane's longest marker, as float32; first and
last step dropped; the mean over every chip's fractions, and per host each
step's mean over its planes, with the modified z-score (median absolute
deviation) of the host means for stragglers. The collective percent is the
all-reduce category's self time over the TensorCores' step time. The JSON
layout is SmartSuggestionReport's with every field printed
(smart_suggestion.proto: ruleName, suggestionText).
"""
import json
import shutil
import struct
import subprocess

import pytest

import xplane_py
from test_op_stats_tpu import expected_tpu_details, expected_tpu_steps

RUN = "tpu"
STEPS = 6


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def f32_avg(values):
    s = 0.0
    for v in values:
        s = f32(s + v)
    return s / len(values) if values else 0.0


@pytest.fixture(scope="module")
def tpu_file(tmp_path_factory, xprofs_build):
    out = tmp_path_factory.mktemp("tpu")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", RUN,
                    "--scenario", "tpu", "--steps", str(STEPS)], check=True, timeout=60,
                   capture_output=True)
    return next((out / "plugins/profile" / RUN).glob("*.xplane.pb"))


def _meta(entries, key, name):
    m = entries.add()
    m.key = key
    m.value.id = key
    m.value.name = name
    return m.value


def add_events(space, name, dur_of, int_kind=False):
    """An event `name.77` on every TPU plane's XLA Ops line in every step,
    with group_id and device_duration_ps = dur_of(step, plane id) ps (uint64,
    or int64 when int_kind)."""
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        sid = {m.value.name: m.key for m in plane.stat_metadata}
        if "device_duration_ps" not in sid:
            _meta(plane.stat_metadata, 990, "device_duration_ps")
            sid["device_duration_ps"] = 990
        mid = 900 + len(plane.event_metadata)
        _meta(plane.event_metadata, mid, f"{name}.77")
        steps = next(l for l in plane.lines if l.name == "Steps")
        ops = next(l for l in plane.lines if l.name == "XLA Ops")
        for mk in steps.events:
            g = next(s.int64_value for s in mk.stats if s.metadata_id == sid["group_id"])
            ev = ops.events.add()
            ev.metadata_id = mid
            ev.offset_ps = mk.offset_ps + 800 * 10**6
            ev.duration_ps = 40 * 10**6
            s = ev.stats.add()
            s.metadata_id = sid["group_id"]
            s.int64_value = g
            s = ev.stats.add()
            s.metadata_id = sid["device_duration_ps"]
            if int_kind:
                s.int64_value = dur_of(g, plane.id)
            else:
                s.uint64_value = dur_of(g, plane.id)
        evs = sorted(ops.events, key=lambda e: (e.offset_ps, -e.duration_ps))
        copies = [type(evs[0])() for _ in evs]
        for c, e in zip(copies, evs):
            c.CopyFrom(e)
        del ops.events[:]
        ops.events.extend(copies)
    return space


def expected_fractions(space, name):
    """(every chip's fractions, the host's per-step fractions)."""
    per_step = {}
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        sname = {m.key: m.value.name for m in plane.stat_metadata}
        emeta = {m.key: m.value.name for m in plane.event_metadata}
        marker = {}
        op_groups = set()
        hits = []
        for line in plane.lines:
            for ev in line.events:
                st = {sname[s.metadata_id]: s for s in ev.stats}
                if "group_id" not in st:
                    continue
                g = st["group_id"].int64_value
                if line.name == "Steps":
                    marker[g] = max(marker.get(g, 0), ev.duration_ps)
                elif line.name == "XLA Ops":
                    op_groups.add(g)
                if name in emeta[ev.metadata_id] and "device_duration_ps" in st:
                    hits.append((g, st["device_duration_ps"].uint64_value))
        for g, d in hits:
            if g not in marker or g not in op_groups or marker[g] == 0:
                continue
            if name == "barrier-cores" and d in (0, 1250):
                continue
            per_step.setdefault(g, {}).setdefault(plane.name, 0.0)
            per_step[g][plane.name] += f32(d / marker[g])
    steps = sorted(per_step)
    if len(steps) >= 3:
        steps = steps[1:-1]
    chips = [f32(v) for g in steps for v in per_step[g].values()]
    host = [f32(sum(per_step[g].values()) / len(per_step[g])) for g in steps]
    return chips, host


def write_run(tmp_path, spaces):
    run = tmp_path / "plugins/profile/r"
    run.mkdir(parents=True)
    for i, sp in enumerate(spaces):
        (run / f"h{i}.xplane.pb").write_bytes(sp.SerializeToString())
    return tmp_path


def report(xcat, logdir, path="r/smart_suggestion.json"):
    raw = xcat(logdir, path)
    data = json.loads(raw)
    assert list(data) == ["suggestions"]
    for s in data["suggestions"]:
        assert list(s) == ["ruleName", "suggestionText"]
    return data["suggestions"]


@pytest.mark.parametrize("run", ["tf_gpu_multiworker/s1", "jax08_gemm_rocm/s1",
                                 "jax_conv_rocm/2025_01_01_00_00_00"])
def test_gpu_runs(corpus, xcat, run):
    # no TPU planes: no barrier-cores fractions, so XProf's rule stays silent
    assert xcat(corpus, f"{run}/smart_suggestion.json") == b'{"suggestions":[]}'
    ov = json.loads(xcat(corpus, f"{run}/overview_page.json"))
    mxu = ov[0]["p"]["mxu_utilization_percent"]
    full = report(xcat, corpus, f"{run}/smart_suggestion.json?rules=all")
    names = [s["ruleName"] for s in full]
    # utilization rules need MXU > 70% (compute) or HBM > 70% (memory)
    assert ("ComputeBoundRule" in names) == (mxu not in ("unknown",) and
                                             float(mxu.rstrip("%")) > 70)
    assert "MemoryBoundRule" not in names
    assert "BarrierCoresRule" not in names and "TensorCoreIdleBoundRule" not in names


def test_tools_json_does_not_list_it(corpus, xcat):
    assert "smart_suggestion" not in json.loads(xcat(corpus, "tf_gpu_multiworker/s1/tools.json"))


def test_bad_rules_option(corpus, xcat):
    r = xcat(corpus, "tf_gpu_multiworker/s1/smart_suggestion.json?rules=some", check=False)
    assert r.returncode == 2 and b"rules=some" in r.stderr


def test_barrier_cores_one_host(tpu_file, tmp_path, xcat):
    # 15% .. 20% of each step on barrier-cores: the rule fires with the mean
    space = add_events(xplane_py.load(tpu_file), "barrier-cores",
                       lambda g, c: (150 + 10 * g + 7 * c) * 10**6)
    chips, host = expected_fractions(space, "barrier-cores")
    assert len(host) == STEPS - 2 and len(chips) == 2 * (STEPS - 2)
    pct = f32_avg(chips) * 100
    got = report(xcat, write_run(tmp_path, [space]))
    assert [s["ruleName"] for s in got] == ["BarrierCoresRule"]
    text = got[0]["suggestionText"]
    assert f"<b> an average of {pct:.1f}% of each step time</b>" in text
    assert "<b>TPU barrier-cores</b>" in text
    assert "Investigate Workload Balance:" in text  # one host: no straggler test


def test_barrier_cores_below_threshold_and_dummy(tpu_file, tmp_path, xcat):
    # 1250 ps (the dummy value) and 5% of the steps: below 10%, no suggestion
    space = add_events(xplane_py.load(tpu_file), "barrier-cores",
                       lambda g, c: 1250 if c == 0 else 45 * 10**6)
    chips, _ = expected_fractions(space, "barrier-cores")
    assert f32_avg(chips) * 100 < 10
    assert report(xcat, write_run(tmp_path, [space])) == []


def test_barrier_cores_int64_duration_reads_zero(tpu_file, tmp_path, xcat):
    # XStatVisitor::UintValue of an int64 stat is 0: skipped for barrier-cores
    space = add_events(xplane_py.load(tpu_file), "barrier-cores", lambda g, c: 500 * 10**6,
                       int_kind=True)
    assert report(xcat, write_run(tmp_path, [space])) == []


def modified_z_stragglers(host_pcts):
    vals = sorted(host_pcts.values())
    if len(vals) < 3:
        return []
    median = vals[len(vals) * 50 // 100]
    devs = sorted(abs(v - median) for v in vals)
    mad = devs[len(devs) * 50 // 100]
    out = []
    for h, v in sorted(host_pcts.items()):
        if mad == 0:
            score = float("inf") if abs(v - median) > 1e-6 else 0.0
        else:
            score = 0.6745 * (v - median) / max(mad, 0.1)
        if abs(score) > 3.5:
            out.append((h, v))
    return out


def test_barrier_cores_stragglers(tpu_file, tmp_path, xcat):
    spaces, host_pcts, chips = [], {}, []
    for i, base in enumerate([120, 124, 122, 400]):
        sp = add_events(xplane_py.load(tpu_file), "barrier-cores",
                        lambda g, c, b=base: (b + g + c) * 10**6)
        sp.hostnames[:] = [f"worker-{i}"]
        c, h = expected_fractions(sp, "barrier-cores")
        chips += c
        host_pcts[f"worker-{i}"] = f32_avg(h) * 100
        spaces.append(sp)
    stragglers = modified_z_stragglers(host_pcts)
    assert [h for h, _ in stragglers] == ["worker-3"]
    got = report(xcat, write_run(tmp_path, spaces))
    assert [s["ruleName"] for s in got] == ["BarrierCoresRule"]
    text = got[0]["suggestionText"]
    assert f"an average of {f32_avg(chips) * 100:.1f}%" in text
    items = "".join(f"<li>Host <b>{h}</b> average barrier-cores time fraction: <b>{v:.1f}%</b>"
                    "</li>" for h, v in stragglers)
    assert f"compared to others:<ul>{items}</ul></li>" in text


def test_all_rules_on_tpu(tpu_file, tmp_path, xcat):
    # debug_print at 6% of the steps, the fusions recategorized as all-reduce
    space = add_events(xplane_py.load(tpu_file), "debug_print", lambda g, c: 54 * 10**6)
    for plane in space.planes:
        sname = {m.value.name: m.key for m in plane.stat_metadata}
        for m in plane.event_metadata:
            if m.value.name.startswith("fusion."):
                for s in m.value.stats:
                    if s.metadata_id == sname.get("hlo_category"):
                        s.str_value = "all-reduce"
    logdir = write_run(tmp_path, [space])
    got = report(xcat, logdir, "r/smart_suggestion.json?rules=all")
    names = [s["ruleName"] for s in got]
    texts = dict((s["ruleName"], s["suggestionText"]) for s in got)
    # debug_print: the host's mean over the kept steps
    _, host = expected_fractions(space, "debug_print")
    dp = f32_avg(host) * 100
    assert dp >= 5 and "DebugPrintRule" in names
    assert f"<b> up to {dp:.1f}% of step time</b>" in texts["DebugPrintRule"]
    assert f"<li>Host <b>synth-host-0</b> average debug_print time fraction: <b>{dp:.1f}%</b>" \
        in texts["DebugPrintRule"]
    # collectives: all-reduce self time per step over the two cores' step time
    fracs = collective_fractions(space)
    coll = f32_avg(fracs) * 100
    assert coll >= 30 and "CollectiveBoundRule" in names
    assert f"An average of <b>{coll:.1f}%</b> of each step" in texts["CollectiveBoundRule"]
    idle = tc_idle_percent(space)
    assert ("TensorCoreIdleBoundRule" in names) == (idle > 10)
    assert names == sorted(names, key=RULE_ORDER.index)
    assert "BarrierCoresRule" not in names
    # the 3p default still applies BarrierCoresRule only
    assert report(xcat, logdir) == []


def tc_idle_percent(space):
    """The TPU step-time breakdown's mean TensorCore idle over the mean step
    time (the TPU step details as test_op_stats_tpu recomputes them)."""
    details = expected_tpu_details(expected_tpu_steps(space))
    idle = sum(d["tcIdleTimeMs"] for d in details) / len(details)
    step = sum(d["step_ms"] for d in details) / len(details)
    return idle / step * 100


def test_tensor_core_idle_rule(tpu_file, tmp_path, xcat):
    space = xplane_py.load(tpu_file)
    idle = tc_idle_percent(space)
    assert idle > 10  # the scenario's steps: ~900 us markers, ~660 us of ops
    got = report(xcat, write_run(tmp_path, [space]), "r/smart_suggestion.json?rules=all")
    # MXU and HBM utilization are 0 (no counters): latency bound
    assert [s["ruleName"] for s in got] == ["TensorCoreIdleBoundRule"]
    assert f"High TensorCore idle time percentage of <b>{idle:.1f}%</b>" in \
        got[0]["suggestionText"]


RULE_ORDER = ["BarrierCoresRule", "CollectiveBoundRule", "ComputeBoundRule",
              "DataShuffleBoundRule", "DataTransferBoundRule", "DebugPrintRule",
              "HostProcessingBoundRule", "InputBoundRule", "MemoryBoundRule",
              "TensorCoreIdleBoundRule"]


def collective_fractions(space):
    """Per step common to both cores: all-reduce self time (ops without
    children in this scenario, plus the fusions) over the summed step time
    (the longest marker of the step over both cores, for each core)."""
    cores = []
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        sname = {m.key: m.value.name for m in plane.stat_metadata}
        emeta = {m.key: m.value for m in plane.event_metadata}
        marker, coll = {}, {}
        for line in plane.lines:
            for ev in line.events:
                st = {sname[s.metadata_id]: s for s in ev.stats}
                if "group_id" not in st:
                    continue
                g = st["group_id"].int64_value
                if line.name == "Steps":
                    marker[g] = max(marker.get(g, 0), ev.duration_ps)
                elif line.name == "XLA Ops":
                    mst = {sname[s.metadata_id]: s for s in emeta[ev.metadata_id].stats}
                    if "hlo_category" in mst and mst["hlo_category"].str_value == "all-reduce":
                        coll[g] = coll.get(g, 0) + ev.duration_ps
        cores.append((marker, coll))
    out = []
    for g in sorted(set.intersection(*[set(m) for m, _ in cores])):
        dur = max(m[g] for m, _ in cores)
        total = dur * len(cores)
        cat = sum(c.get(g, 0) for _, c in cores)
        out.append(f32(f32(cat) / f32(total)))
    return out
