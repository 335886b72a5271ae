"""A grown TPU profile (`xprofs-synth --scenario tpu --steps N`): the tpu
scenario's planes with N steps whose while op runs its fusion and
convolution 64 times, as the benchmark's TPU profiles are made.

Expected values are the closed forms of the generator's timeline
(contrib/synth/README.md), not the python references of
test_op_stats_tpu.py (those find parents by containment, cubic in the ops):
for core c and step k, with m = k mod 8, times in us from the step start,

  Steps marker    [0, 900 + 10m + 3c)     XLA Modules [5, 880 + 10m)
  root op         [6, 870)  symbol 0      infeed      [10, 60)
  while           [70, 570)               64 x fusion and convolution, 3 us
                                          each, in slots of 7.5 us from 80
  all-reduce      [600, 700 + 20c)        custom-call [710, 760 + 2m)

so per step: while self time 500 - 64 x 6 = 116 us, fusion and convolution
192 us each, step time 903 + 10m us (core 1's marker), TensorCore compute =
min over cores of the non-infeed op time = 650 + 2m us, infeed 50 us, idle
= step - compute - infeed = 203 + 8m us; busy (duty cycle) = the root op's
864 us per step and core, window = [0, end of the last module].
"""
import json
import subprocess

import pytest

import xplane_py

RUN = "grown"
STEPS = 20
REPS = 64
US = 10**6  # ps


@pytest.fixture(scope="module")
def grown_logdir(tmp_path_factory, xprofs_build):
    out = tmp_path_factory.mktemp("tpu_grown")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", RUN,
                    "--scenario", "tpu", "--steps", str(STEPS)], check=True, timeout=60,
                   capture_output=True)
    return out


def _file(logdir):
    files = list((logdir / "plugins/profile" / RUN).glob("*.xplane.pb"))
    assert len(files) == 1
    return files[0]


def _table(data):
    cols = [c["id"] for c in data["cols"]]
    return [dict(zip(cols, [c["v"] for c in r["c"]])) for r in data["rows"]]


def test_grown_profile_lines(grown_logdir):
    space = xplane_py.load(_file(grown_logdir))
    tpu = [p for p in space.planes if p.name.startswith("/device:TPU:")]
    assert [p.name for p in tpu] == ["/device:TPU:0", "/device:TPU:1"]
    for p in tpu:
        counts = {l.name: len(l.events) for l in p.lines}
        assert counts == {"Steps": STEPS, "XLA Modules": STEPS,
                          "XLA Ops": STEPS * (5 + 2 * REPS)}
        names = {m.key: m.value.name for m in p.event_metadata}
        ops = [names[e.metadata_id] for e in p.lines[2].events[:8]]
        assert ops == ["jit_train_step", "infeed.1", "while.2", "fusion.3",
                       names[p.lines[2].events[4].metadata_id], "fusion.3",
                       names[p.lines[2].events[6].metadata_id], "fusion.3"]
        assert ops[4].startswith("%convolution.4 = ")


def test_grown_synth_options(tmp_path, xprofs_build):
    exe = str(xprofs_build / "xprofs-synth")
    r = subprocess.run([exe, "--out", str(tmp_path / "a"), "--scenario", "tpu", "--size-mb", "1"],
                       capture_output=True, timeout=60, check=True)
    size = next((tmp_path / "a").rglob("*.xplane.pb")).stat().st_size
    assert abs(size - 10**6) < 0.02 * 10**6, r.stdout
    # deterministic
    subprocess.run([exe, "--out", str(tmp_path / "b"), "--scenario", "tpu", "--size-mb", "1"],
                   capture_output=True, timeout=60, check=True)
    assert next((tmp_path / "b").rglob("*.xplane.pb")).read_bytes() == \
        next((tmp_path / "a").rglob("*.xplane.pb")).read_bytes()
    for bad in (["--scenario", "tpu", "--gpus", "2"],
                ["--scenario", "tpu_sc", "--steps", "3"],
                ["--scenario", "tpu_sc", "--size-mb", "1"]):
        r = subprocess.run([exe, "--out", str(tmp_path / "c")] + bad, capture_output=True,
                           timeout=60)
        assert r.returncode == 2, bad
        assert b"two TPU cores" in r.stderr


def expected_step(k):
    m = k % 8
    step = 903 + 10 * m
    compute = 650 + 2 * m
    return {"stepnum": str(k), "step": step, "tcComputeTimeMs": compute / 1000.0,
            "tcInfeedTimeMs": 50 / 1000.0, "tcOutfeedTimeMs": 0.0,
            "tcIdleTimeMs": (step - compute - 50) / 1000.0}


def test_grown_step_table(grown_logdir, xcat):
    data = json.loads(xcat(grown_logdir, f"{RUN}/input_pipeline_analyzer.json"))
    rows = _table(data[1])
    assert [r["stepnum"] for r in rows] == [str(k) for k in range(STEPS)]
    for k, r in enumerate(rows):
        want = expected_step(k)
        for col in ("tcComputeTimeMs", "tcInfeedTimeMs", "tcOutfeedTimeMs", "tcIdleTimeMs"):
            assert r[col] == pytest.approx(want[col], abs=1e-9), (k, col)
    avg = sum(expected_step(k)["step"] for k in range(STEPS)) / STEPS / 1000.0
    assert data[1]["p"]["steptime_ms_average"] == "%.2f" % avg


def test_grown_duty_cycle(grown_logdir, xcat):
    busy = 2 * STEPS * 864 * US
    last = STEPS - 1
    # times count from 0, the lines start at 1000 us
    window = sum((1000 + 100 + 1000 * last + c + 880 + 10 * (last % 8)) * US for c in (0, 1))
    p = json.loads(xcat(grown_logdir, f"{RUN}/overview_page.json"))[0]["p"]
    assert p["device_duty_cycle_percent"] == "%.1f%%" % (100.0 * busy / window)


def test_grown_device_ops(grown_logdir, xcat):
    data = json.loads(xcat(grown_logdir, f"{RUN}/framework_op_stats.json"))
    device = {r["operation"]: r for r in _table(data[0]) if r["host_or_device"] == "Device"}
    cases = {
        "jit(train_step)/while/body/add": (2 * STEPS * REPS, 2 * STEPS * REPS * 3),
        "jit(train_step)/while/body/conv_general_dilated": (2 * STEPS * REPS,
                                                            2 * STEPS * REPS * 3),
        "jit(train_step)/while": (2 * STEPS, 2 * STEPS * 116),
        "jit(train_step)/infeed": (2 * STEPS, 2 * STEPS * 50),
        "jit(train_step)/psum": (2 * STEPS, STEPS * (100 + 120)),
    }
    for name, (occ, self_us) in cases.items():
        assert device[name]["occurrences"] == occ, name
        assert device[name]["total_self_time"] == pytest.approx(self_us), name
    custom = sum(50 + 2 * (k % 8) for k in range(STEPS)) * 2
    assert device["jit(train_step)/custom_call"]["total_self_time"] == pytest.approx(custom)


def test_grown_trace_viewer(grown_logdir, xcat):
    data = json.loads(xcat(grown_logdir, f"{RUN}/trace_viewer.json"))
    per_thread = {}
    names = {}
    for e in data["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("ph") == "X":
            per_thread[(e["pid"], e["tid"])] = per_thread.get((e["pid"], e["tid"]), 0) + 1
    by_name = {}
    for key, n in per_thread.items():
        by_name.setdefault(names.get(key), []).append(n)
    assert sorted(by_name["XLA Ops"]) == [STEPS * (5 + 2 * REPS)] * 2
    assert sorted(by_name["XLA Modules"]) == [STEPS] * 2


def test_grown_duty_cycle_events_out_of_order(grown_logdir, tmp_path, xcat):
    """Without the root ops the busy time has gaps, and a line whose events
    come in no particular order gives the same union (spans that overlap
    the one before are merged as they are read: the rest must still be)."""
    import random
    space = xplane_py.load(_file(grown_logdir))
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        root = next(m.key for m in plane.event_metadata if m.value.name == "jit_train_step")
        ops = next(l for l in plane.lines if l.name == "XLA Ops")
        kept = [e for e in ops.events if e.metadata_id != root]
        if plane.id == 0:
            random.Random(7).shuffle(kept)
        copies = [type(e)() for e in kept]
        for c, e in zip(copies, kept):
            c.CopyFrom(e)
        del ops.events[:]
        ops.events.extend(copies)
    run = tmp_path / "plugins/profile/shuffled"
    run.mkdir(parents=True)
    (run / "h.xplane.pb").write_bytes(space.SerializeToString())
    # per step: while [70, 570) holds the fusions and convolutions, then
    # all-reduce [600, 700 + 20c) and custom-call [710, 760 + 2m), which
    # overlap on core 1: [600, 760 + 2m) less the gap before 710 on core 0;
    # infeed is off duty
    busy = sum(500 + 160 + 2 * (k % 8) - max(0, 710 - (700 + 20 * c))
               for k in range(STEPS) for c in (0, 1)) * US
    last = STEPS - 1
    window = sum((1000 + 100 + 1000 * last + c + 880 + 10 * (last % 8)) * US for c in (0, 1))
    p = json.loads(xcat(tmp_path, "shuffled/overview_page.json"))[0]["p"]
    assert p["device_duty_cycle_percent"] == "%.1f%%" % (100.0 * busy / window)
