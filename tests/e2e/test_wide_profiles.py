"""Profiles wide rather than long: 20,000 threads on one host plane, 20,000
device planes, 20,000 streams on one GPU, and 20,000 events nested in one
another. Small files (under 2 MB) that once cost seconds and gigabytes: a
quarter-MiB arena block and a 32-row op table per thread, huge-page backed
(5 GB for overview_page), a line-base lookup summing every plane before it,
thread and device lists kept sorted by insertion, the legacy trace's
per-process scan of every line, the trackers' nesting depth found by a scan
from the bottom of the stack (test_trace_index.c checks its search). And
Chrome traces with 20,000 processes (metadata and process numbers were found
by scanning) and 20,000 counter series (each sample's values had a writer of
its own: a 2 MiB chunk mapped, touched and unmapped per sample).

Each tool is run in a fresh python process that reports its child's peak RSS
(RUSAGE_CHILDREN), and must stay under WIDE_RSS_MB; the outputs are checked
against the profile as built here: every thread named once, in tid order,
with the name of the last line that has its tid.
"""
import json

import pytest

import xplane_py
from conftest import SANITIZED, cat_usage

N = 20000
WIDE_RSS_MB = 400  # the fixed code needs 60-90 MB; the old one 0.9 to 5 GB


def _plane(space, pid, name, event_name):
    """A plane whose event metadata 1 is event_name."""
    p = space.planes.add()
    p.id = pid
    p.name = name
    m = p.event_metadata.add()
    m.key = 1
    m.value.id = 1
    m.value.name = event_name
    return p


def _event(line, offset_ps, duration_ps):
    e = line.events.add()
    e.metadata_id = 1
    e.offset_ps = offset_ps
    e.duration_ps = duration_ps


def _threads(space):
    # one host plane, N threads (ids descending), one event each; two more
    # lines repeat tid 7 (a later line renames the thread)
    p = _plane(space, 1, "/host:CPU", "work")
    for i in range(N):
        _event(xplane_py.add_line(p, N - i, "thread %d" % i), i * 1000, 500)
    for name in ("seven again", "seven last"):
        _event(xplane_py.add_line(p, 7, name), 0, 500)


def _planes(space):
    for i in range(N):
        p = _plane(space, i, "/device:GPU:%d" % i, "kernel")
        _event(xplane_py.add_line(p, 1, "Stream #1"), i, 10)


def _streams(space):
    p = _plane(space, 1, "/device:GPU:0", "kernel")
    for i in range(N):
        _event(xplane_py.add_line(p, i + 1, "Stream #%d" % (i + 1)), i, 10)


def _nested(space):
    # host and GPU lines whose events each hold the next
    for pid, name, line in ((1, "/host:CPU", "main"), (2, "/device:GPU:0", "Stream #1")):
        ln = xplane_py.add_line(_plane(space, pid, name, "nest"), 1, line)
        for i in range(N):
            _event(ln, i, 2 * (N - i))


SHAPES = {"threads": _threads, "planes": _planes, "streams": _streams, "nested": _nested}


def _ct_pids():
    ev = []
    for i in range(N):
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": i + 1, "tid": 1,
                   "ts": i, "dur": 3})
        ev.append({"ph": "M", "name": "process_name", "pid": i + 1, "args": {"name": "p%d" % i}})
    # a later metadata event renames a process
    ev.append({"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "seven"}})
    return ev


def _ct_counters():
    ev = []
    for i in range(N):
        ev.append({"ph": "C", "name": "ctr%05d" % i, "pid": 1, "ts": i, "args": {"v": i}})
    return ev


CT_SHAPES = {"ct_pids": _ct_pids, "ct_counters": _ct_counters}


@pytest.fixture(scope="module")
def wide_logdir(tmp_path_factory):
    out = tmp_path_factory.mktemp("wide")
    for run, build in SHAPES.items():
        space = xplane_py.pb2().XSpace()
        build(space)
        d = out / "plugins/profile" / run
        d.mkdir(parents=True)
        (d / "h.xplane.pb").write_bytes(space.SerializeToString())
    for run, build in CT_SHAPES.items():
        d = out / run
        d.mkdir()
        (d / "w.pt.trace.json").write_text(json.dumps({"traceEvents": build()}))
    return out


def _cat_rss(xprofs_build, logdir, path):
    out, rss, _, _ = cat_usage(xprofs_build, logdir, path)
    return out, rss


@pytest.mark.parametrize("run", sorted(SHAPES))
@pytest.mark.parametrize("tool", ["overview_page.json", "framework_op_stats.json",
                                  "trace_viewer.json", "trace_viewer_legacy.json"])
def test_wide_profile_memory(wide_logdir, xprofs_build, run, tool):
    out, rss = _cat_rss(xprofs_build, wide_logdir, f"{run}/{tool}")
    data = json.loads(out)
    assert data
    if not SANITIZED:  # AddressSanitizer's shadow memory and quarantine
        assert rss < WIDE_RSS_MB, f"{run}/{tool}: {rss:.0f} MB"


def _thread_names(data):
    return [(e["pid"], e["tid"], e["args"]["name"]) for e in data["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"]


@pytest.mark.parametrize("tool", ["trace_viewer.json", "trace_viewer_legacy.json"])
def test_wide_threads_named_in_tid_order(wide_logdir, xcat, tool):
    names = _thread_names(json.loads(xcat(wide_logdir, f"threads/{tool}")))
    assert len({pid for pid, _, _ in names}) == 1
    tids = [tid for _, tid, _ in names]
    assert tids == sorted(tids)
    # every line's id once; tid 7 named by the last of its three lines
    assert tids == list(range(1, N + 1))
    got = {tid: name for _, tid, name in names}
    assert got[7] == "seven last"
    assert got[N] == "thread 0" and got[1] == "thread %d" % (N - 1)


def test_wide_planes_all_events_shown(wide_logdir, xcat):
    # GPU plane pids are 1 + plane id, and 1 for ids above 500 (XProf's
    # rule): 500 processes, every kernel shown once
    data = json.loads(xcat(wide_logdir, "planes/trace_viewer.json"))
    procs = [e["pid"] for e in data["traceEvents"] if e.get("name") == "process_name"]
    assert procs == sorted(procs) and len(set(procs)) == len(procs) == 500
    kernels = [e for e in data["traceEvents"] if e.get("ph") == "X" and e["name"] == "kernel"]
    assert len(kernels) == N


def test_wide_streams_all_events_shown(wide_logdir, xcat):
    data = json.loads(xcat(wide_logdir, "streams/trace_viewer.json"))
    kernels = [e for e in data["traceEvents"] if e.get("ph") == "X" and e["name"] == "kernel"]
    assert len(kernels) == N
    tids = [tid for _, tid, _ in _thread_names(data)]
    assert tids == sorted(tids) and len(set(tids)) == len(tids)


def test_wide_nested_all_events_shown(wide_logdir, xcat):
    data = json.loads(xcat(wide_logdir, "nested/trace_viewer.json"))
    events = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    assert len(events) == 2 * N
    # the outermost first (XProf's order: start, then longest)
    host = min(e["pid"] for e in events)
    durs = [e["dur"] for e in events if e["pid"] == host]
    assert durs == sorted(durs, reverse=True) and len(set(durs)) == N


def test_wide_chrome_trace_processes(wide_logdir, xcat):
    data = json.loads(xcat(wide_logdir, "ct_pids/trace_viewer.json"))
    names = {e["pid"]: e["args"]["name"] for e in data["traceEvents"]
             if e.get("name") == "process_name"}
    assert len(names) == N
    # processes numbered 1..N in pid order, shown as 1000 (host + 1) + number
    pids = sorted(names)
    assert pids == list(range(1001, 1001 + N))
    assert names[1001].endswith(" p0") and names[1000 + N].endswith(" p%d" % (N - 1))
    assert names[1007].endswith(" seven")
    adds = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    assert len(adds) == N and {e["pid"] for e in adds} == set(pids)


def test_wide_chrome_trace_counters(wide_logdir, xprofs_build):
    out, rss, minflt, _ = cat_usage(xprofs_build, wide_logdir, "ct_counters/trace_viewer.json")
    data = json.loads(out)
    series = {e["name"]: e["entries"] for e in data["traceEvents"] if e.get("ph") == "C"}
    assert len(series) == N
    assert series["ctr00000"] == [[0, 0]] and series["ctr19999"] == [[19999, 19999]]
    if not SANITIZED:
        # a few hundred faults with huge pages; one per sample (20,000 and
        # more) when every sample mapped a chunk of its own
        assert minflt < N // 2, minflt
