"""roofline_model.json on TPU: XProf's "Average" record over the complete
steps and one program record per step (op_stats_to_roofline_model.cc,
AddRooflineModelRecordsForCompleteSteps / AddRooflineModelRecordsPerStep),
made from the step db's per-step op databases (StepEventsToPerCoreStepInfo:
each TensorCore's per-step db after SetTotalTimePs(step time) and AddIdleOp,
combined; hlo_metrics_db_complete_steps_only: every step's combined).

The expected values are recomputed here from the raw events (xplane_py):
per TensorCore, the op events with a group id on the op line, their self
times (parents by containment among the group's events), per op occurrence
its metadata flops / model flops (flops when 0) / bytes / memory breakdown
(a custom-call adds its event stats), innermost ops only (not call,
conditional, while, megacore fusion), infeed/outfeed ops apart; steps are
the groups every TensorCore has with ops and a marker, step time the longest
marker, each core's total max(self time, step time). The profiles are the
tpu scenario (3 steps), a grown one (--steps 12) and a copy of the scenario
with a memory breakdown, a `while` op with flops and an outfeed; also two
hosts combined. Column ids and `p` keys are those of XProf 2.23.2's recorded
TPU output (Locamage/xprof-rs tests/data/roofline_model.json).
"""
import json
import subprocess
from collections import defaultdict

import pytest

import xplane_py

# Locamage/xprof-rs tests/data/roofline_model.json (XProf 2.23.2, TPU v4 demo).
XPROF_COLS = [
    "step", "rank", "category", "operation", "occurrences", "total_time", "avg_time",
    "total_self_time", "avg_self_time", "total_self_time_percent",
    "cumulative_total_self_time_percent", "dma_stall_percent", "measured_flop_rate",
    "model_flop_rate", "measured_memory_bw", "hbm_bw", "cmem_read_bw", "cmem_write_bw",
    "vmem_read_bw", "vmem_write_bw", "operational_intensity", "hbm_operational_intensity",
    "cmem_read_operational_intensity", "cmem_write_operational_intensity",
    "vmem_read_operational_intensity", "vmem_write_operational_intensity",
    "bottleneck_operational_intensity", "bound_by", "total_time_per_core",
    "total_time_in_percentage", "optimal_flop_rate", "roofline_efficiency",
    "compute_efficiency", "max_mem_bw_utilization", "include_infeed_outfeed", "hlo_module_id",
    "source_info"]
XPROF_P = {"cmem_read_ridge_point", "cmem_write_ridge_point", "device_type", "has_cmem",
           "has_merged_vmem", "hbm_ridge_point", "megacore", "peak_cmem_read_bw",
           "peak_cmem_write_bw", "peak_flop_rate", "peak_hbm_bw", "peak_vmem_read_bw",
           "peak_vmem_write_bw", "time_scale_multiplier", "vmem_read_ridge_point",
           "vmem_write_ridge_point"}
OP_LINES = ("XLA Ops", "Framework Ops")
INNER = ("call", "conditional", "while", "megacore fusion")
GIBI = 1.073741824
# memory breakdown put on the convolution's metadata: (operation_type, memory_space, bytes)
BREAKDOWN = [(1, 1, 3000), (2, 1, 1000), (2, 2, 500), (1, 3, 700)]


def _stats(stats, names):
    out = {}
    for s in stats:
        which = s.WhichOneof("value")
        out[names[s.metadata_id]] = names[s.ref_value] if which == "ref_value" else getattr(
            s, which)
    return out


def _varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _breakdown_bytes(entries):
    """A MemoryAccessBreakdown: memory_accessed = 1 {operation_type = 1,
    memory_space = 2, bytes_accessed = 3}."""
    out = b""
    for op_type, space, n in entries:
        inner = b"\x08" + _varint(op_type) + b"\x10" + _varint(space) + b"\x18" + _varint(n)
        out += b"\x0a" + _varint(len(inner)) + inner
    return out


def _decode_breakdown(data):
    """The entries of a MemoryAccessBreakdown written by _breakdown_bytes."""
    out, i = [], 0
    while i < len(data):
        assert data[i] == 0x0A
        n = data[i + 1]
        body = data[i + 2:i + 2 + n]
        vals, j = {}, 0
        while j < len(body):
            key = body[j]
            j += 1
            v, shift = 0, 0
            while True:
                b = body[j]
                j += 1
                v |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            vals[key >> 3] = v
        out.append((vals.get(1, 0), vals.get(2, 0), vals.get(3, 0)))
        i += 2 + n
    return out


def _zero():
    return {"flops": 0, "model": 0, "bytes": 0, "time": 0, "mem": defaultdict(int)}


def core_steps(plane):
    """One TensorCore's markers by group, per group the op sums (innermost
    ops, feed ops apart) and its self time of ops."""
    names = {m.key: m.value.name for m in plane.stat_metadata}
    emeta = {m.key: m.value for m in plane.event_metadata}
    markers = defaultdict(list)
    events = defaultdict(list)  # group -> [(b, e, metadata id, event stats)]
    for line in plane.lines:
        if line.name != "Steps" and line.name not in OP_LINES:
            continue
        for ev in line.events:
            st = _stats(ev.stats, names)
            if "group_id" not in st:
                continue
            b = line.timestamp_ns * 1000 + ev.offset_ps
            e = b + ev.duration_ps
            if line.name == "Steps":
                markers[st["group_id"]].append((b, e))
            else:
                events[st["group_id"]].append((b, e, ev.metadata_id, st))
    sums, self_time = {}, {}
    for g, evs in events.items():
        ops, feed, selfs = _zero(), _zero(), 0
        for j, (b, e, mid, st) in enumerate(evs):
            mst = _stats(emeta[mid].stats, names)
            if "program_id" not in mst or mst.get("symbol_id", 0) == 0:
                continue
            # immediate children: the events whose smallest container is this one
            kids = 0
            for k, (cb, ce, _, _) in enumerate(evs):
                if k == j or not (b <= cb and ce <= e):
                    continue
                parents = [i for i, (pb, pe, _, _) in enumerate(evs)
                           if i != k and pb <= cb and ce <= pe]
                if min(parents, key=lambda i: evs[i][1] - evs[i][0]) == j:
                    kids += ce - cb
            selfs += e - b - kids
            cat = mst.get("hlo_category", "")
            if cat in INNER:
                continue
            s = feed if ("infeed" in cat or "outfeed" in cat) else ops
            flops, model = mst.get("flops", 0), mst.get("model_flops", 0)
            nbytes = mst.get("bytes_accessed", 0)
            if cat == "custom-call":
                flops += st.get("flops", 0)
                model += st.get("model_flops", 0)
                nbytes += st.get("bytes_accessed", 0)
            elif model == 0:
                model = flops
            s["flops"] += flops
            s["model"] += model
            s["bytes"] += nbytes
            s["time"] += e - b
            for op_type, space, n in _decode_breakdown(mst.get("memory_access_breakdown", b"")):
                s["mem"][(space, op_type)] += n
        sums[g] = (ops, feed)
        self_time[g] = selfs
    return markers, sums, self_time, {g for g in events if g in markers}


def _add(dst, src):
    for f in ("flops", "model", "bytes", "time"):
        dst[f] += src[f]
    for k, v in src["mem"].items():
        dst["mem"][k] += v


def expected_steps(space):
    """[(group, {"total", "ops", "feed"})] for the steps of the TensorCores."""
    cores = [core_steps(p) for p in sorted(space.planes, key=lambda p: p.id)
             if p.name.startswith("/device:TPU:") and "SparseCore" not in p.name]
    common = set.intersection(*[c[3] for c in cores])
    out = []
    for g in sorted(common):
        dur = max(e - b for c in cores for b, e in c[0][g])
        db = {"total": 0, "ops": _zero(), "feed": _zero()}
        for markers, sums, self_time, _ in cores:
            db["total"] += max(self_time[g], dur)
            _add(db["ops"], sums[g][0])
            _add(db["feed"], sums[g][1])
        out.append((g, db))
    return out


def combine(dbs):
    out = {"total": 0, "ops": _zero(), "feed": _zero()}
    for db in dbs:
        out["total"] += db["total"]
        _add(out["ops"], db["ops"])
        _add(out["feed"], db["feed"])
    return out


def rows_of(table):
    cols = [c["id"] for c in table["cols"]]
    return [dict(zip(cols, [c["v"] for c in r["c"]])) for r in table["rows"]]


def check_program(r, db, include, nsteps, cores, peaks):
    """GenerateRooflineModelProgramRecord's row over db."""
    flops, model, nbytes = db["ops"]["flops"], db["ops"]["model"], db["ops"]["bytes"]
    mem = defaultdict(int, db["ops"]["mem"])
    time = db["total"]
    if include:
        flops += db["feed"]["flops"]
        model += db["feed"]["model"]
        nbytes += db["feed"]["bytes"]
        for k, v in db["feed"]["mem"].items():
            mem[k] += v
    else:
        time -= db["feed"]["time"]
    t_ns = time / 1e3
    hbm = sum(v for (space, _), v in mem.items() if space == 1) if mem else nbytes
    assert r["category"] == r["operation"] == "Program"
    assert r["rank"] == 0 and r["occurrences"] == 1
    assert r["include_infeed_outfeed"] is include
    assert r["hlo_module_id"] == "0" and r["source_info"] == ""
    total_us = time / 1e6 / (nsteps if r["step"] == "Average" else 1)
    assert r["total_time"] == pytest.approx(total_us, rel=1e-12)
    assert r["avg_time"] == pytest.approx(time / 1e6, rel=1e-12)
    assert r["total_self_time"] == 0 and r["total_self_time_percent"] == 0
    assert r["total_time_per_core"] == pytest.approx(total_us / cores, rel=1e-12)
    assert r["total_time_in_percentage"] == (1.0 if time else 0.0)
    assert r["measured_flop_rate"] == pytest.approx(flops / t_ns if t_ns else 0, rel=1e-12)
    assert r["model_flop_rate"] == pytest.approx(model / t_ns if t_ns else 0, rel=1e-12)
    assert r["measured_memory_bw"] == pytest.approx(nbytes / t_ns / GIBI if t_ns else 0,
                                                    rel=1e-12)
    assert r["hbm_bw"] == pytest.approx(hbm / t_ns / GIBI if t_ns else 0, rel=1e-12)
    assert r["cmem_read_bw"] == pytest.approx(mem[(2, 1)] / t_ns / GIBI if t_ns else 0,
                                              rel=1e-12)
    assert r["cmem_write_bw"] == pytest.approx(mem[(2, 2)] / t_ns / GIBI if t_ns else 0,
                                               rel=1e-12)
    assert r["vmem_read_bw"] == pytest.approx(mem[(3, 1)] / t_ns / GIBI if t_ns else 0,
                                              rel=1e-12)
    assert r["operational_intensity"] == pytest.approx(flops / nbytes if nbytes else 0,
                                                       rel=1e-12)
    assert r["compute_efficiency"] == pytest.approx(
        flops / t_ns / peaks["flops"] if t_ns else 0, rel=1e-12)
    assert r["roofline_efficiency"] == pytest.approx(
        max(r["compute_efficiency"], r["max_mem_bw_utilization"]), rel=1e-12)
    return flops


def check_roofline(data, steps, cores=2, labels=None):
    """The two record lists (with and without infeed/outfeed): Total
    program, its ops, Average, one per step (ascending)."""
    roof, diag = data
    assert [c["id"] for c in roof["cols"]] == XPROF_COLS
    assert set(roof["p"]) == XPROF_P
    assert [c["id"] for c in diag["cols"]] == ["severity", "message"]
    peaks = {"flops": float(roof["p"]["peak_flop_rate"])}
    labels = labels or [str(g) for g, _ in steps]
    got = rows_of(roof)
    half = [r["include_infeed_outfeed"] for r in got].index(False)
    complete = combine(db for _, db in steps)
    seen = []
    for part, include in ((got[:half], True), (got[half:], False)):
        assert all(r["include_infeed_outfeed"] is include for r in part)
        tail = part[-(len(steps) + 1):]
        assert part[0]["step"] == "Total" and part[0]["operation"] == "Program"
        assert all(r["step"] == "Total" for r in part[:-(len(steps) + 1)])
        assert [r["step"] for r in tail] == ["Average"] + labels
        seen.append(check_program(tail[0], complete, include, len(steps), cores, peaks))
        for r, (_, db) in zip(tail[1:], steps):
            check_program(r, db, include, len(steps), cores, peaks)
    return seen


def _synth(build, out, run, *args):
    subprocess.run([str(build / "xprofs-synth"), "--out", str(out), "--run", run,
                    "--scenario", "tpu", *args], check=True, timeout=120, capture_output=True)
    return next((out / "plugins/profile" / run).glob("*.xplane.pb"))


@pytest.mark.parametrize("steps", [None, 12])
def test_average_and_per_step_records(xprofs_build, tmp_path, xcat, steps):
    src = _synth(xprofs_build, tmp_path, "r", *(["--steps", str(steps)] if steps else []))
    want = expected_steps(xplane_py.load(src))
    assert len(want) == (steps or 3)
    data = json.loads(xcat(tmp_path, "r/roofline_model.json"))
    flops = check_roofline(data, want)
    # the steps' FLOPs differ (the custom-call's event flops grow with the step)
    assert len({db["ops"]["flops"] for _, db in want}) > 1
    assert flops[0] > 0 and flops[0] == flops[1]  # no feed op has flops
    # the host's file is the same (one host)
    assert xcat(tmp_path, "r/hosts/synth-host-0/roofline_model.json") == xcat(
        tmp_path, "r/roofline_model.json")
    # and the csv has the same rows
    csv = xcat(tmp_path, "r/roofline_model.csv").decode().splitlines()
    assert len(csv) == 1 + len(rows_of(data[0]))


def _add_meta(entries, key, name):
    """A metadata map entry (the maps are repeated key/value messages)."""
    m = entries.add()
    m.key = key
    m.value.id = key
    m.value.name = name
    return m.value


def _mutated(space):
    """A memory breakdown on the convolution, flops on a `while` op (which
    the program record skips), an outfeed op on core 1 with flops."""
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        ids = {m.value.name: m.key for m in plane.stat_metadata}
        nid = max(ids.values()) + 1
        _add_meta(plane.stat_metadata, nid, "memory_access_breakdown")
        for md in [m.value for m in plane.event_metadata]:
            cat = [s for s in md.stats if s.metadata_id == ids["hlo_category"]]
            if md.name.startswith("%convolution.4"):
                s = md.stats.add()
                s.metadata_id = nid
                s.bytes_value = _breakdown_bytes(BREAKDOWN)
            elif md.name == "while.2":
                cat[0].str_value = "while"
                s = md.stats.add()
                s.metadata_id = ids["flops"]
                s.uint64_value = 7 * 10**6
        if plane.id == 1:
            mid = max(m.key for m in plane.event_metadata) + 1
            md = _add_meta(plane.event_metadata, mid, "outfeed.9")
            for name, v in (("program_id", 5), ("symbol_id", 9), ("flops", 4000)):
                s = md.stats.add()
                s.metadata_id = ids[name]
                s.int64_value = v
            s = md.stats.add()
            s.metadata_id = ids["hlo_category"]
            s.str_value = "outfeed"
            line = next(li for li in plane.lines if li.name == "XLA Ops")
            for k in range(3):
                ev = line.events.add()
                ev.metadata_id = mid
                # after the step's custom-call, inside its marker
                ev.offset_ps = (100 + 1000 * k + 1 + 800) * 10**6
                ev.duration_ps = (20 + k) * 10**6
                g = ev.stats.add()
                g.metadata_id = ids["group_id"]
                g.int64_value = k
            line.events.sort(key=lambda ev: (ev.offset_ps, -ev.duration_ps))
    return space


def test_breakdown_inner_ops_feed_and_hosts(xprofs_build, tmp_path, xcat):
    src = _synth(xprofs_build, tmp_path, "r")
    space = _mutated(xplane_py.load(src))
    want = expected_steps(space)
    assert want[0][1]["feed"]["flops"] == 4000 and want[0][1]["ops"]["mem"][(2, 2)] == 1000
    run = tmp_path / "plugins/profile/m"
    run.mkdir(parents=True)
    (run / "a.xplane.pb").write_bytes(space.SerializeToString())
    data = json.loads(xcat(tmp_path, "m/roofline_model.json"))
    flops = check_roofline(data, want)
    assert flops[0] == flops[1] + 3 * 4000  # the outfeed's flops only with feeds
    # two hosts: per step both hosts' dbs, the steps renumbered 0..
    (run / "b.xplane.pb").write_bytes(space.SerializeToString())
    both = [(i, combine([db, db])) for i, (_, db) in enumerate(want)]
    check_roofline(json.loads(xcat(tmp_path, "m/roofline_model.json")), both, cores=4)
    one = json.loads(xcat(tmp_path, "m/hosts/a/roofline_model.json"))
    check_roofline(one, want)


def test_no_steps_empty_average(xprofs_build, tmp_path, xcat):
    """Without Steps lines: XProf's empty Average, no per-step records."""
    src = _synth(xprofs_build, tmp_path, "r")
    space = xplane_py.load(src)
    for plane in space.planes:
        for i in reversed(range(len(plane.lines))):
            if plane.lines[i].name == "Steps":
                del plane.lines[i]
    run = tmp_path / "plugins/profile/n"
    run.mkdir(parents=True)
    (run / "a.xplane.pb").write_bytes(space.SerializeToString())
    got = rows_of(json.loads(xcat(tmp_path, "n/roofline_model.json"))[0])
    avg = [r for r in got if r["step"] == "Average"]
    assert len(avg) == 2 and all(r["total_time"] == 0 and r["bound_by"] == "Unknown"
                                 for r in avg)
    assert {r["step"] for r in got} == {"Total", "Average"}


def test_step_missing_on_one_core(xprofs_build, tmp_path, xcat):
    """Core 0 without ops in step 1: the step is not in the db (the cores'
    intersection), and core 1's ops of it count nowhere."""
    src = _synth(xprofs_build, tmp_path, "r", "--steps", "5")
    space = xplane_py.load(src)
    for plane in space.planes:
        if plane.name != "/device:TPU:0":
            continue
        gid = next(m.key for m in plane.stat_metadata if m.value.name == "group_id")
        line = next(li for li in plane.lines if li.name == "XLA Ops")
        for i in reversed(range(len(line.events))):
            if any(s.metadata_id == gid and s.int64_value == 1 for s in line.events[i].stats):
                del line.events[i]
    want = expected_steps(space)
    assert [g for g, _ in want] == [0, 2, 3, 4]
    run = tmp_path / "plugins/profile/x"
    run.mkdir(parents=True)
    (run / "a.xplane.pb").write_bytes(space.SerializeToString())
    check_roofline(json.loads(xcat(tmp_path, "x/roofline_model.json")), want)
