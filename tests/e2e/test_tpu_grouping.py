"""XProf's grouping of TPU profiles written without group ids (as the TPU
runtime writes them), checked on `xprofs-synth --scenario tpu_raw` /
`tpu_sc_raw` and on copies of tpu_raw given a host plane here.

XProf (openxla/xla group_events.cc, GroupTpuEventsOSS): on a TPU core plane
only the grouping line's events (Steps, else XLA Modules) are nodes; the
producer/consumer stats of the events they include count as theirs; when no
TensorCore step was reached by a host group, each TensorCore's steps become
groups 0, 1, 2 ... in order (the lock step; SparseCores are not part of it);
then consecutive Steps events of one group merge and ungrouped ones are
dropped (MergeHostSteps), and the other lines' events take the group of the
grouping event they overlap (GroupLine). The op_stats tools then read those
group ids as they read the ids of a file saved grouped.
"""
import json
import subprocess

import pytest

import xplane_py
from test_op_stats_tpu import _add_meta, _table, expected_tpu_details, expected_tpu_steps

TOOLS = ["overview_page.json", "input_pipeline_analyzer.json", "framework_op_stats.json",
         "framework_op_stats.csv", "trace_viewer.json",
         "hosts/synth-host-0/input_pipeline_analyzer.json"]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory, xprofs_build):
    out = tmp_path_factory.mktemp("tpu_grouping")
    for run, scenario in (("raw", "tpu_raw"), ("grouped", "tpu"), ("scraw", "tpu_sc_raw")):
        subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", run,
                        "--scenario", scenario], check=True, timeout=60, capture_output=True)
    return out


def _steps(data):
    cols, rows = _table(data[1])
    return [(r["stepnum"], r["tooltip"].rsplit("Step time = ", 1)[1]) for r in rows]


def test_raw_file_has_no_group_ids(logdir):
    space = xplane_py.load(next((logdir / "plugins/profile/raw").glob("*.xplane.pb")))
    names = {m.value.name for p in space.planes for m in p.stat_metadata}
    assert "group_id" not in names and "step_num" in names


@pytest.mark.parametrize("tool", TOOLS)
def test_lock_step_gives_the_saved_groups(logdir, xcat, tool):
    """No host plane: the lock step numbers each TensorCore's steps 0, 1, 2,
    exactly the group ids the tpu scenario saves, so every tool answers the
    same bytes."""
    assert xcat(logdir, f"raw/{tool}") == xcat(logdir, f"grouped/{tool}")


def test_lock_step_steps(logdir, xcat):
    # tpu.c: step k of core c lasts 900 + 10k + 3c us; the longest core counts
    steps = _steps(json.loads(xcat(logdir, "raw/input_pipeline_analyzer.json")))
    assert steps == [("0", "0.903 ms"), ("1", "0.913 ms"), ("2", "0.923 ms")]


def test_sparse_cores_are_not_lock_stepped(logdir, xcat):
    """SparseCore steps get no group from the lock step (XProf keeps only the
    TensorCores' step events for it): they are in no step, the TensorCores'
    three steps stay, and no sc_* average is printed."""
    data = json.loads(xcat(logdir, "scraw/input_pipeline_analyzer.json"))
    assert _steps(data) == [("0", "0.903 ms"), ("1", "0.913 ms"), ("2", "0.923 ms")]
    cols, _ = _table(data[1])
    assert "scv0ComputeTimeMs" not in cols  # core_details: a run with SparseCores
    assert not any(k.startswith("sc_") for k in data[1]["p"])


def _stat(container, meta, value):
    st = container.stats.add()
    st.metadata_id = meta
    st.int64_value = value


def _host_plane(space, event_names, stat_names):
    """A new /host:CPU plane with these event and stat metadata (ids 1, 2
    ...) and one line "python" at the TPU lines' timestamp."""
    host = space.planes.add()
    host.id = 99
    host.name = "/host:CPU"
    for key, name in enumerate(event_names, 1):
        _add_meta(host.event_metadata, key, name)
    for key, name in enumerate(stat_names, 1):
        _add_meta(host.stat_metadata, key, name)
    line = host.lines.add()
    line.id = 1
    line.name = "python"
    line.timestamp_ns = 1000000  # as the TPU lines
    return line


def _tpu_modules(space):
    """(plane, its XLA Modules line) of each TPU plane."""
    for plane in space.planes:
        if plane.name.startswith("/device:TPU:"):
            yield plane, next(line for line in plane.lines if line.name == "XLA Modules")


def _train_step(line, host_step):
    """Host step s: a "train" root (metadata 1; _r 1 and step_num 10 + s as
    stats 1 and 2) over [50 + 1000s, 950 + 1000s) us."""
    train = line.events.add()
    train.metadata_id = 1
    train.offset_ps = (50 + 1000 * host_step) * 10**6
    train.duration_ps = 900 * 10**6
    _stat(train, 1, 1)
    _stat(train, 2, 10 + host_step)
    return train


def _with_host(space, links):
    """tpu_raw plus a /host:CPU plane: for each (host step, TPU steps) in
    links a "train" root (_r 1, step_num 10 + host step) around a "launch"
    producer (_pt 1, _p 100 + host step), and on both TensorCores the XLA
    Modules event of each linked TPU step a consumer (_ct 1, _c 100 + host
    step). The module events lie inside their Steps events, so the Steps
    events are the consumers XProf links."""
    for plane, modules in _tpu_modules(space):
        _add_meta(plane.stat_metadata, 901, "_ct")
        _add_meta(plane.stat_metadata, 902, "_c")
        for host_step, tpu_steps in links:
            for k in tpu_steps:
                _stat(modules.events[k], 901, 1)
                _stat(modules.events[k], 902, 100 + host_step)
    line = _host_plane(space, ["train", "launch"], ["_r", "step_num", "_pt", "_p"])
    for host_step, _ in links:
        # its launch at +10 us
        train = _train_step(line, host_step)
        launch = line.events.add()
        launch.metadata_id = 2
        launch.offset_ps = train.offset_ps + 10 * 10**6
        launch.duration_ps = 5 * 10**6
        _stat(launch, 3, 1)
        _stat(launch, 4, 100 + host_step)
    return space


def _run_with_host(tmp_path, logdir, links):
    space = _with_host(xplane_py.load(next((logdir / "plugins/profile/raw").glob("*.pb"))),
                       links)
    run = tmp_path / "plugins/profile/h"
    run.mkdir(parents=True)
    (run / "synth-host-0.xplane.pb").write_bytes(space.SerializeToString())
    return tmp_path


def test_host_groups_reach_tpu_steps(logdir, tmp_path, xcat):
    """Host steps 0 and 1 link to TPU steps 1 and 2: those take host groups
    0 and 1 (no lock step), TPU step 0 has no group, its Steps event is
    dropped and its ops are in no step."""
    d = _run_with_host(tmp_path, logdir, [(0, [1]), (1, [2])])
    data = json.loads(xcat(d, "h/input_pipeline_analyzer.json"))
    assert _steps(data) == [("0", "0.913 ms"), ("1", "0.923 ms")]
    assert data[1]["p"]["steptime_ms_maximum"] == "0.92"
    # the trace viewer shows the same ids on the TPU ops
    trace = json.loads(xcat(d, "h/trace_viewer.json"))
    tpu_pids = {e["pid"] for e in trace["traceEvents"]
                if e.get("ph") == "M" and e.get("name") == "process_name" and
                "/device:TPU:" in e["args"]["name"]}
    ops = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["pid"] in tpu_pids and
           e["name"] == "fusion.3"]
    assert len(ops) == 6
    by_start = sorted((e["ts"], e.get("args", {}).get("group_id")) for e in ops)
    # steps 0, 1, 2 of core 0 and core 1 (core 1 starts 1 us later)
    assert [g for _, g in by_start] == [None, None, 0, 0, 1, 1]


def test_steps_of_one_host_step_merge(logdir, tmp_path, xcat):
    """TPU steps 1 and 2 both link to host step 0: MergeHostSteps makes them
    one step from the start of step 1 to the end of step 2 (core 1: 1101 to
    3024 us, 1923 us)."""
    d = _run_with_host(tmp_path, logdir, [(0, [1, 2])])
    data = json.loads(xcat(d, "h/input_pipeline_analyzer.json"))
    assert _steps(data) == [("0", "1.923 ms")]
    # the step time itself (the longest merged marker), not only the tooltip
    assert data[1]["p"]["steptime_ms_maximum"] == "1.92"
    _, rows = _table(data[1])
    busy = sum(rows[0][k] for k in ("tcComputeTimeMs", "scv0ComputeTimeMs", "scv0InfeedTimeMs",
                                    "tcInfeedTimeMs", "tcOutfeedTimeMs"))
    assert rows[0]["tcIdleTimeMs"] == pytest.approx(1.923 - busy, abs=1e-9)
    # the trace viewer draws the merged Steps events, named by their group
    # (AddGroupMetadataToStepEvents), and no longer the dropped step 0
    trace = json.loads(xcat(d, "h/trace_viewer.json"))
    tpu_pids = {e["pid"] for e in trace["traceEvents"]
                if e.get("ph") == "M" and e.get("name") == "process_name" and
                "/device:TPU:" in e["args"]["name"]}
    steps_tids = {(e["pid"], e["tid"]) for e in trace["traceEvents"]
                  if e.get("ph") == "M" and e.get("name") == "thread_name" and
                  e["pid"] in tpu_pids and e["args"]["name"] == "Steps"}
    steps = sorted((e["pid"], e["ts"], e["dur"], e["name"]) for e in trace["traceEvents"]
                   if e.get("ph") == "X" and (e["pid"], e["tid"]) in steps_tids)
    # core 0: [2100, 4020) us, core 1: [2101, 4024) us (line at 1000 us)
    assert [(ts, dur, name) for _, ts, dur, name in steps] == [
        (2100, 1920, "train 10"), (2101, 1923, "train 10")]


def _without_infeed_ops(space):
    """The TPU ops of category infeed renamed to copy: no infeed op left."""
    for plane in space.planes:
        names = {m.key: m.value.name for m in plane.stat_metadata}
        for m in plane.event_metadata:
            for st in m.value.stats:
                if names.get(st.metadata_id) == "hlo_category" and st.str_value == "infeed":
                    st.str_value = "copy"
    return space


def test_host_input_fills_tensor_core_idle(logdir, tmp_path, xcat):
    """MayFixTpuStepAnalysis: with no infeed op on the device, the host's
    input time of a step (IteratorGetNext: HOST_WAIT_INPUT) moves that share
    of each TensorCore's IDLE time to infeed: share = input / the step's
    TensorCore idle time, at most 1. Host step k links to TPU step k, so the
    group ids are those of the grouped scenario, which gives the expected
    per-core category times."""
    waits_us = [50, 100, 300]  # the last one is more than the idle time (219 us)
    space = _without_infeed_ops(_with_host(
        xplane_py.load(next((logdir / "plugins/profile/raw").glob("*.pb"))),
        [(k, [k]) for k in range(3)]))
    host = next(p for p in space.planes if p.name == "/host:CPU")
    _add_meta(host.event_metadata, 3, "IteratorGetNext")
    line = host.lines[0]
    trains = [e for e in line.events if e.metadata_id == 1]
    for k, train in enumerate(trains):
        ev = line.events.add()
        ev.metadata_id = 3
        ev.offset_ps = train.offset_ps + 20 * 10**6
        ev.duration_ps = waits_us[k] * 10**6
    line.events.sort(key=lambda e: (e.offset_ps, -e.duration_ps))
    run = tmp_path / "plugins/profile/in"
    run.mkdir(parents=True)
    (run / "synth-host-0.xplane.pb").write_bytes(space.SerializeToString())

    grouped = _without_infeed_ops(
        xplane_py.load(next((logdir / "plugins/profile/grouped").glob("*.pb"))))
    steps = expected_tpu_steps(grouped)
    before = expected_tpu_details(steps)
    fixed = []
    for (g, dur, per_core), d in zip(steps, before):
        ratio = min(waits_us[g] / 1000.0 / d["tcIdleTimeMs"], 1.0)
        cores = []
        for cats in per_core:
            idle = dur - sum(cats.values())
            cats = dict(cats)
            cats["infeed"] = int(idle * ratio)
            cores.append(cats)
        fixed.append((g, dur, cores))
    want = expected_tpu_details(fixed)
    cols, rows = _table(json.loads(xcat(tmp_path, "in/input_pipeline_analyzer.json"))[1])
    assert [r["stepnum"] for r in rows] == ["0", "1", "2"]
    for r, w in zip(rows, want):
        for k in ("tcComputeTimeMs", "tcInfeedTimeMs", "tcIdleTimeMs", "infeedPercentMax"):
            assert r[k] == pytest.approx(w[k], abs=1e-9), k
    # some idle became infeed in every step; all of it in the last one
    assert all(r["tcInfeedTimeMs"] > 0 for r in rows)
    assert rows[2]["tcIdleTimeMs"] == pytest.approx(0, abs=1e-9)
    # the same file without the input events keeps the idle time
    assert before[0]["tcInfeedTimeMs"] == 0


def test_tpu_launch_contexts_link_host_steps(logdir, tmp_path, xcat):
    """PreprocessXPlane's TPU launch contexts: a host DoEnqueueProgram with
    device_ordinal, queue_id and run_id (cut to its 28 low bits) produces
    the context that a TensorCore's XLA Modules event with the same
    queue_id and run_id (device ordinal from the plane name) consumes. Host
    steps 0 and 1 launch TPU steps 1 and 2: those get host groups 0 and 1,
    TPU step 0 none (no lock step)."""
    space = xplane_py.load(next((logdir / "plugins/profile/raw").glob("*.pb")))
    for plane, modules in _tpu_modules(space):
        _add_meta(plane.stat_metadata, 911, "queue_id")
        _add_meta(plane.stat_metadata, 912, "run_id")
        for k, ev in enumerate(modules.events):
            _stat(ev, 911, 7)
            _stat(ev, 912, 4000 + k)
    line = _host_plane(space, ["train", "DoEnqueueProgram"],
                       ["_r", "step_num", "device_ordinal", "queue_id", "run_id"])
    for host_step, tpu_step in ((0, 1), (1, 2)):
        train = _train_step(line, host_step)
        for core in (0, 1):
            launch = line.events.add()
            launch.metadata_id = 2
            launch.offset_ps = train.offset_ps + (10 + 10 * core) * 10**6
            launch.duration_ps = 5 * 10**6
            _stat(launch, 3, core)
            _stat(launch, 4, 7)
            _stat(launch, 5, (1 << 40) + 4000 + tpu_step)  # high bits cut
    run = tmp_path / "plugins/profile/l"
    run.mkdir(parents=True)
    (run / "synth-host-0.xplane.pb").write_bytes(space.SerializeToString())
    data = json.loads(xcat(tmp_path, "l/input_pipeline_analyzer.json"))
    assert _steps(data) == [("0", "0.913 ms"), ("1", "0.923 ms")]
