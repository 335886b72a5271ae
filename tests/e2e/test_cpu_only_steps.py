"""Steps of a host without devices (a CPU-only TensorFlow or JAX profile):
XProf's ConvertHostThreadsXPlaneToStepEvents (src/op_stats/op_stats_host.c), then the
step database and input_pipeline_analyzer.json / overview_page.json.

The hand profile has one /host:CPU plane with a "python" thread and a
"worker" thread. Each of three steps is a "train" root (_r 1, step_num
7 + k) over [100, 900) us of its 1000 us slot; "launch" in it is a producer
(_pt 1, _p 100 + k) and the worker's "work" event its consumer (_ct 1,
_c 100 + k), which puts the worker's events in the same step. XProf's rules,
applied by hand below (all times in us):

- the step time is the longest host marker: "train" (explicit: its name
  starts with "train"), 800;
- host events are classified by name: IteratorGetNext and a root input
  pipeline stage (an event with _ipl_stage_name under no other stage) are
  "wait input", FunctionRun is not counted, anything else is "compute"
  (no device: no "prepare");
- "conv" (a stage) lies in "work", whose consumer pair matches a producer
  (XProf's async_input_pipeline_parents), so it is a stage's descendant:
  compute, not input;
- overlapping events keep the higher priority type (wait input over
  compute), and time outside the step marker is dropped;
- what no event covers is "All others".

step 7: input IteratorGetNext [110, 210) + Prefetch [220, 270) = 150;
  compute matmul [300, 500) + launch [520, 530) + work [540, 840) = 510;
  others 800 - 660 = 140.
step 8: work runs to 1000, clipped at the step end 900: compute 200 + 10 +
  360 = 570, input 150, others 80.
step 9: IteratorGetNext runs to 350 over matmul's start: input [110, 350) =
  240, compute matmul [350, 500) + 10 + 300 = 460; FunctionRun [860, 890) is
  not counted; others 100.

Then two shapes that once cost quadratic time: 20,000 threads that are each
one step (every thread's step events had a slot for every step, all combined
at the end of each thread: 2.3 CPU-seconds here) and 60,000 producer/consumer
pairs (each consumer scanned the producers: 2.2 CPU-seconds). The fixed
code needs 0.1-0.3.
"""
import json

import pytest

import xplane_py
from conftest import SANITIZED, cat_usage

US = 10**6  # ps per us
NAMES = ["train", "IteratorGetNext", "matmul", "launch", "work", "conv",
         "PrefetchDatasetIterator.__next__", "FunctionRun"]
STATS = ["_r", "step_num", "_pt", "_p", "_ct", "_c", "_ipl_stage_name"]
WIDE = 20000
PAIRS = 60000


def _host_plane(space):
    """A /host:CPU plane with NAMES and STATS as metadata ids 1, 2, ..."""
    p = space.planes.add()
    p.id = 1
    p.name = "/host:CPU"
    for entries, names in ((p.event_metadata, NAMES), (p.stat_metadata, STATS)):
        for key, name in enumerate(names, 1):
            e = entries.add()
            e.key = key
            e.value.id = key
            e.value.name = name
    return p


def _event(line, name, lo_us, hi_us, *stats):
    e = line.events.add()
    e.metadata_id = NAMES.index(name) + 1
    e.offset_ps = lo_us * US
    e.duration_ps = (hi_us - lo_us) * US
    for key, value in stats:
        st = e.stats.add()
        st.metadata_id = STATS.index(key) + 1
        if isinstance(value, str):
            st.str_value = value
        else:
            st.int64_value = value


def _hand(space):
    p = _host_plane(space)
    main, work = xplane_py.add_line(p, 1, "python"), xplane_py.add_line(p, 2, "worker")
    for k in range(3):
        b = 1000 * k
        _event(main, "train", b + 100, b + 900, ("_r", 1), ("step_num", 7 + k))
        _event(main, "IteratorGetNext", b + 110, b + (350 if k == 2 else 210))
        _event(main, "PrefetchDatasetIterator.__next__", b + 220, b + 270,
               ("_ipl_stage_name", "Prefetch"))
        _event(main, "matmul", b + 300, b + 500)
        _event(main, "launch", b + 520, b + 530, ("_pt", 1), ("_p", 100 + k))
        if k == 2:
            _event(main, "FunctionRun", b + 860, b + 890)
        _event(work, "work", b + 540, b + (1000 if k == 1 else 840), ("_ct", 1), ("_c", 100 + k))
        _event(work, "conv", b + 550, b + 650, ("_ipl_stage_name", "Map"))


def _wide(space):
    # WIDE threads, each one "train" root of its own step holding a matmul
    p = _host_plane(space)
    for i in range(WIDE):
        ln = xplane_py.add_line(p, i + 1, "t%d" % i)
        _event(ln, "train", 10 * i, 10 * i + 8, ("_r", 1), ("step_num", i))
        _event(ln, "matmul", 10 * i + 1, 10 * i + 6)


def _pairs(space):
    # PAIRS steps on one thread, each with a producer whose consumer is on
    # a second thread, and there a consumer of no producer (no step of its
    # own, but looked up among the producers all the same)
    p = _host_plane(space)
    main, work = xplane_py.add_line(p, 1, "python"), xplane_py.add_line(p, 2, "worker")
    for i in range(PAIRS):
        _event(main, "train", 10 * i, 10 * i + 8, ("_r", 1), ("step_num", i))
        _event(main, "launch", 10 * i + 1, 10 * i + 2, ("_pt", 1), ("_p", i))
        _event(work, "work", 10 * i + 3, 10 * i + 7, ("_ct", 1), ("_c", i))
        _event(work, "conv", 10 * i + 7, 10 * i + 8, ("_ct", 2), ("_c", i))


@pytest.fixture(scope="module")
def cpu_logdir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cpu")
    for run, build in (("hand", _hand), ("wide", _wide), ("pairs", _pairs)):
        space = xplane_py.pb2().XSpace()
        build(space)
        d = out / "plugins/profile" / run
        d.mkdir(parents=True)
        (d / "h.xplane.pb").write_bytes(space.SerializeToString())
    return out


def _step_rows(table):
    cols = [c["id"] for c in table["cols"]]
    return [{c: cell["v"] for c, cell in zip(cols, row["c"]) if c != "tooltip"}
            for row in table["rows"]]


HAND = [  # step, host compute, input, all others (ms); every step 0.8 ms
    ("train 7", 0.51, 0.15, 0.14),
    ("train 8", 0.57, 0.15, 0.08),
    ("train 9", 0.46, 0.24, 0.10),
]


def test_hand_steps_breakdown(cpu_logdir, xcat):
    data = json.loads(xcat(cpu_logdir, "hand/input_pipeline_analyzer.json"))
    rows = _step_rows(data[1])
    assert [r["stepnum"] for r in rows] == [s for s, _, _, _ in HAND]
    for row, (_, compute, infeed, other) in zip(rows, HAND):
        assert row["stepTimeMs"] == pytest.approx(0.8)
        assert row["hostComputeTimeMs"] == pytest.approx(compute)
        assert row["infeedTimeMs"] == pytest.approx(infeed)
        assert row["otherTimeMs"] == pytest.approx(other)
        for col in ("deviceComputeTimeMs", "deviceToDeviceTimeMs", "deviceCollectivesTimeMs",
                    "kernelLaunchTimeMs", "outfeedTimeMs", "compileTimeMs"):
            assert row[col] == 0.0, col
    p = data[1]["p"]
    assert p["hardware_type"] == "CPU_ONLY"
    assert p["steptime_ms_average"] == "0.8"
    # input 0.54 of 2.4 ms: 22.5% (over XProf's 20% "highly" threshold)
    assert "HIGHLY input-bound because 22.5% of the total step time" in p["input_conclusion"]
    # all others 0.32 of 2.4 ms
    assert p["all_other_statement"].startswith("13.3 % of the total step time")


def test_hand_steps_in_overview(cpu_logdir, xcat):
    ipa = json.loads(xcat(cpu_logdir, "hand/input_pipeline_analyzer.json"))
    ov = json.loads(xcat(cpu_logdir, "hand/overview_page.json"))
    # the overview's step-time graph is the analyzer's step table
    assert _step_rows(ov[1]) == _step_rows(ipa[1])


def _wide_and_pairs(cpu_logdir, xcat, xprofs_build, run, n, compute_ms, other_ms):
    out, _, _, cpu_s = cat_usage(xprofs_build, cpu_logdir, f"{run}/input_pipeline_analyzer.json")
    rows = _step_rows(json.loads(out)[1])
    assert len(rows) == n
    assert rows[0]["stepnum"] == "train 0" and rows[-1]["stepnum"] == "train %d" % (n - 1)
    for r in rows:
        assert r["stepTimeMs"] == pytest.approx(0.008)
        assert r["hostComputeTimeMs"] == pytest.approx(compute_ms)
        assert r["otherTimeMs"] == pytest.approx(other_ms)
    return cpu_s


def test_wide_threads_each_a_step(cpu_logdir, xcat, xprofs_build):
    # matmul 5 us of the 8 us step: compute 0.005 ms, others 0.003 ms
    cpu_s = _wide_and_pairs(cpu_logdir, xcat, xprofs_build, "wide", WIDE, 0.005, 0.003)
    if not SANITIZED:
        assert cpu_s < 1.2, f"{cpu_s:.2f} CPU seconds (the quadratic code: 2.3)"


def test_many_producer_consumer_pairs(cpu_logdir, xcat, xprofs_build):
    # launch 1 us + work 4 us (a consumer, not a stage: compute) of 8
    cpu_s = _wide_and_pairs(cpu_logdir, xcat, xprofs_build, "pairs", PAIRS, 0.005, 0.003)
    if not SANITIZED:
        assert cpu_s < 1.2, f"{cpu_s:.2f} CPU seconds (the quadratic code: 2.2)"
