"""Profiles wide rather than long: 20,000 threads on one host plane, 20,000
device planes, 20,000 streams on one GPU. Small files (under 2 MB) that once
cost seconds and gigabytes: a quarter-MiB arena block and a 32-row op table
per thread, huge-page backed (5 GB for overview_page), a line-base lookup
summing every plane before it, thread and device lists kept sorted by
insertion, the legacy trace's per-process scan of every line.

Each tool is run in a fresh python process that reports its child's peak RSS
(RUSAGE_CHILDREN), and must stay under WIDE_RSS_MB; the outputs are checked
against the profile as built here: every thread named once, in tid order,
with the name of the last line that has its tid.
"""
import json
import subprocess
import sys

import pytest

import xplane_py
from conftest import SANITIZED

N = 20000
WIDE_RSS_MB = 400  # the fixed code needs 60-90 MB; the old one 0.9 to 5 GB


def _meta(plane, key, name):
    m = plane.event_metadata.add()
    m.key = key
    m.value.id = key
    m.value.name = name


def _threads(space):
    # one host plane, N threads (ids descending), one event each; two more
    # lines repeat tid 7 (a later line renames the thread)
    p = space.planes.add()
    p.id = 1
    p.name = "/host:CPU"
    _meta(p, 1, "work")
    for i in range(N):
        ln = p.lines.add()
        ln.id = N - i
        ln.name = "thread %d" % i
        ln.timestamp_ns = 1000
        e = ln.events.add()
        e.metadata_id = 1
        e.offset_ps = i * 1000
        e.duration_ps = 500
    for name in ("seven again", "seven last"):
        ln = p.lines.add()
        ln.id = 7
        ln.name = name
        ln.timestamp_ns = 1000
        e = ln.events.add()
        e.metadata_id = 1
        e.duration_ps = 500


def _planes(space):
    for i in range(N):
        p = space.planes.add()
        p.id = i
        p.name = "/device:GPU:%d" % i
        _meta(p, 1, "kernel")
        ln = p.lines.add()
        ln.id = 1
        ln.name = "Stream #1"
        ln.timestamp_ns = 1000
        e = ln.events.add()
        e.metadata_id = 1
        e.offset_ps = i
        e.duration_ps = 10


def _streams(space):
    p = space.planes.add()
    p.id = 1
    p.name = "/device:GPU:0"
    _meta(p, 1, "kernel")
    for i in range(N):
        ln = p.lines.add()
        ln.id = i + 1
        ln.name = "Stream #%d" % (i + 1)
        ln.timestamp_ns = 1000
        e = ln.events.add()
        e.metadata_id = 1
        e.offset_ps = i
        e.duration_ps = 10


SHAPES = {"threads": _threads, "planes": _planes, "streams": _streams}


@pytest.fixture(scope="module")
def wide_logdir(tmp_path_factory):
    out = tmp_path_factory.mktemp("wide")
    for run, build in SHAPES.items():
        space = xplane_py.pb2().XSpace()
        build(space)
        d = out / "plugins/profile" / run
        d.mkdir(parents=True)
        (d / "h.xplane.pb").write_bytes(space.SerializeToString())
    return out


def _cat_rss(xprofs_build, logdir, path):
    """(stdout, peak RSS in MB) of `xprofs cat` run alone in a fresh process."""
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, timeout=600)\n"
            "sys.stdout.buffer.write(r.stdout)\n"
            "sys.stderr.write('%d %d' % (r.returncode, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n")
    r = subprocess.run([sys.executable, "-c", code, str(xprofs_build / "xprofs"), "cat",
                        str(logdir), path], capture_output=True, timeout=660)
    rc, rss_kb = map(int, r.stderr.decode().split()[-2:])
    assert rc == 0, path
    return r.stdout, rss_kb / 1024


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
