"""SparseCores in the TPU step db and input-pipeline analysis, on the
synthetic profile of `xprofs-synth --scenario tpu_sc` (the tpu scenario plus
two SparseCore planes).

XProf (xplane_to_step_events.cc, step_events_to_steps_db.cc,
op_stats_to_input_pipeline_analysis.cc): a SparseCore plane
("/device:TPU:<n> SparseCore <m>") gives step events like a TensorCore, from
its "Sparse Core Steps" markers and "Sparse Core Ops" events, under core id
1000000 + plane id; steps are those every core with steps has; the step time
of the TensorCores is the longest marker over all cores, a SparseCore's its
own longest marker. Per step, SparseCore compute = min over SparseCores of
(step - IDLE), idle and step time = averages. When a SparseCore plane has a
core_details stat (is_sparse_core), the step-time table drops the
SparseCoreV0 columns and properties and adds the sc_* averages (when every
step has SparseCore time).

Expected values are recomputed here from the raw events (python3-protobuf
reader), with the TensorCore formulas of test_op_stats_tpu.py.
"""
import json
import re
import subprocess

import pytest

import xplane_py
from test_op_stats_tpu import _table, expected_tpu_details, plane_step_events

RUN = "sc"
SC_BASE = 1000000
SC_PLANE = re.compile(r"/device:TPU:[0-9]+ SparseCore ([0-9]+)")
TPU_STEP_COLS_SC = [
    "stepnum", "tcComputeTimeMs", "tcInfeedTimeMs", "tcOutfeedTimeMs", "tcIdleTimeMs",
    "hostTransferTimeMs", "tooltip", "infeedPercentAverage", "infeedPercentMin",
    "infeedPercentMax"]
TC_OP_LINES = ("XLA Ops", "Framework Ops", "Sparse Core Ops")


@pytest.fixture(scope="module")
def sc_logdir(tmp_path_factory, xprofs_build):
    out = tmp_path_factory.mktemp("tpu_sc")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", RUN,
                    "--scenario", "tpu_sc"], check=True, timeout=60, capture_output=True)
    return out


def _space(logdir, run=RUN):
    files = sorted((logdir / "plugins/profile" / run).glob("*.xplane.pb"))
    return xplane_py.load(files[0])


def _core_steps(plane):
    """(core id, is SparseCore, markers by group, category self times by
    group, groups with ops and markers) of one TPU plane."""
    sparse = SC_PLANE.fullmatch(plane.name) is not None
    markers, cats, groups = plane_step_events(
        plane, "Sparse Core Steps" if sparse else "Steps",
        ("Sparse Core Ops",) if sparse else TC_OP_LINES)
    core_id = SC_BASE + plane.id if sparse else plane.id
    return (core_id, sparse, markers, cats, groups)


def expected_sc_steps(space):
    """Per step: (group, step time, TensorCore category dicts, SparseCore
    (own step time, op time) pairs)."""
    cores = [_core_steps(p) for p in space.planes if p.name.startswith("/device:TPU:")]
    cores = [c for c in cores if c[4]]
    common = set.intersection(*[c[4] for c in cores])
    steps = []
    for g in sorted(common):
        dur = max(e - b for c in cores for b, e in c[2][g])
        tc = [dict(c[3][g]) for c in sorted(cores) if not c[1]]
        sc = [(max(e - b for b, e in c[2][g]), sum(c[3][g].values()))
              for c in sorted(cores) if c[1]]
        steps.append((g, dur, tc, sc))
    return steps


def expected_sc_details(steps):
    details = expected_tpu_details([(g, dur, tc) for g, dur, tc, _ in steps])
    for d, (_, _, _, sc) in zip(details, steps):
        idle = [own - ops for own, ops in sc]
        d["sc_compute"] = min(own - i for (own, _), i in zip(sc, idle)) / 1e9
        d["sc_idle"] = sum(idle) / len(idle) / 1e9
        d["sc_step"] = sum(own for own, _ in sc) / len(sc) / 1e9
    return details


@pytest.fixture(scope="module")
def expected(sc_logdir):
    return expected_sc_details(expected_sc_steps(_space(sc_logdir)))


def test_scenario_steps(sc_logdir, expected):
    steps = expected_sc_steps(_space(sc_logdir))
    # tpu_sc.c: SparseCore 1 has no op in step 2, so only steps 0 and 1 are
    # common; step 1's SparseCore 1 marker (915 us) beats the TensorCores'
    # (913 us), step 0's TensorCore 1 marker (903 us) the SparseCores' (900)
    assert [g for g, _, _, _ in steps] == [0, 1]
    assert [dur for _, dur, _, _ in steps] == [903 * 10**6, 915 * 10**6]
    # SparseCore op time: gather 290 + 5s us, scatter 380 + 10k us
    assert [sc for _, _, _, sc in steps] == [
        [(890 * 10**6, 670 * 10**6), (900 * 10**6, 675 * 10**6)],
        [(905 * 10**6, 680 * 10**6), (915 * 10**6, 685 * 10**6)]]
    assert [round(d["sc_compute"], 9) for d in expected] == [0.670, 0.680]


@pytest.mark.parametrize("tool", ["input_pipeline_analyzer.json", "overview_page.json",
                                  "hosts/synth-host-0/input_pipeline_analyzer.json"])
def test_step_table_with_sparse_cores(sc_logdir, xcat, expected, tool):
    data = json.loads(xcat(sc_logdir, f"{RUN}/{tool}"))
    cols, rows = _table(data[1])
    assert cols == TPU_STEP_COLS_SC
    assert [r["stepnum"] for r in rows] == ["0", "1"]
    for r, d in zip(rows, expected):
        for k in TPU_STEP_COLS_SC:
            if k == "tooltip":
                assert r[k] == ("step %s:\nTime waiting for input data = %.3f ms, "
                                "Step time = %.3f ms" % (
                                    d["stepnum"], d["tcInfeedTimeMs"],
                                    d["tcComputeTimeMs"] + d["tcInfeedTimeMs"] +
                                    d["tcOutfeedTimeMs"] + d["tcIdleTimeMs"]))
            elif k != "stepnum":
                assert r[k] == pytest.approx(d[k], abs=1e-12), k
    # step 1's TensorCore step time is the SparseCore's 915 us marker
    assert rows[1]["tooltip"].endswith("Step time = 0.915 ms")
    p = data[1]["p"]
    assert p["step_time_graph_column_ids"] == ",".join(TPU_STEP_COLS_SC[:7])
    assert "scv0_compute_ms_average" not in p and "scv0_infeed_ms_average" not in p
    n = len(expected)
    avg = lambda k: sum(d[k] for d in expected) / n  # noqa: E731
    assert p["sc_compute_ms_average"] == "%.2f" % avg("sc_compute")
    assert p["sc_idle_ms_average"] == "%.2f" % avg("sc_idle")
    assert p["sc_step_time_ms_average"] == "%.1f" % avg("sc_step")
    assert p["sc_infeed_ms_average"] == p["sc_outfeed_ms_average"] == "0.00"
    assert p["tc_compute_ms_average"] == "%.2f" % avg("tcComputeTimeMs")
    # the step-time summary counts TensorCores only
    assert p["steptime_ms_maximum"] == "%.2f" % max(d["step_ms"] for d in expected)


def _without_core_details(space):
    for plane in space.planes:
        names = {m.key: m.value.name for m in plane.stat_metadata}
        keep = [s for s in plane.stats if names.get(s.metadata_id) != "core_details"]
        del plane.stats[:]
        plane.stats.extend(keep)
    return space


def test_sparse_cores_without_core_details(sc_logdir, tmp_path, xcat, expected):
    """Without core_details no core is is_sparse_core: the SparseCores still
    shape the steps, but the table keeps XProf's SparseCoreV0 columns and
    prints no sc_* average."""
    space = _without_core_details(_space(sc_logdir))
    run = tmp_path / "plugins/profile/nd"
    run.mkdir(parents=True)
    (run / "h.xplane.pb").write_bytes(space.SerializeToString())
    p_cols, rows = _table(json.loads(xcat(tmp_path, "nd/input_pipeline_analyzer.json"))[1])
    assert "scv0ComputeTimeMs" in p_cols and "scv0InfeedTimeMs" in p_cols
    assert [r["stepnum"] for r in rows] == ["0", "1"]
    assert [r["tcIdleTimeMs"] for r in rows] == pytest.approx(
        [d["tcIdleTimeMs"] for d in expected], abs=1e-12)
    p = json.loads(xcat(tmp_path, "nd/input_pipeline_analyzer.json"))[1]["p"]
    assert not any(k.startswith("sc_") for k in p)
    assert p["scv0_compute_ms_average"] == "0.00"


def test_two_hosts_keep_sparse_core_columns(tmp_path, xprofs_build, xcat):
    """The combined run of two tpu_sc hosts: core details of either host
    make the run one with SparseCores."""
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(tmp_path), "--run", "two",
                    "--scenario", "tpu_sc", "--hosts", "2"], check=True, timeout=60,
                   capture_output=True)
    data = json.loads(xcat(tmp_path, "two/input_pipeline_analyzer.json"))
    cols, rows = _table(data[1])
    assert cols == TPU_STEP_COLS_SC
    assert [r["stepnum"] for r in rows] == ["0", "1"]
    assert data[1]["p"]["sc_step_time_ms_average"] == "0.9"
