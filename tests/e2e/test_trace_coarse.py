"""A mount's trace index built for a zoomed-out first request, then completed.

The first trace_viewer.json request of a snapshot decides how far its index
is finished: a zoomed-out window (the whole range at the UI's resolution)
reads only the coarse zoom levels, so only those are assigned, numbered and
listed (unless they hold over a quarter of the events), and the first request that reads deeper (a zoom, a search, event
details, full resolution) completes the index. On generated GPU and TPU
profiles of over 500,000 events (XProf's threshold for down-sampling):
answers read deeper are the bytes a fresh `xprofs cat` gives (it builds a
complete index for such a request), and the coarse answers given before
completion are the bytes the completed index gives for the same request
(asked again under another spelling: a fractional resolution, which XProf
truncates, so that the produced-file cache does not answer it), also when
they are read while another reader's request completes the index. A mount
completes a coarse index in the background once it has answered from it
(unless -o trace_complete=0, which the tests use where the coarse answers
must come from the coarse index; that it happens is a unit test's, in
test_trace_index.c).
"""
import json
import pathlib
import re
import subprocess
import threading

import pytest

from conftest import SANITIZED

RUN = "r"
TRACE = RUN + "/trace_viewer.json"
# XProf's zoom levels, in ps (trace_events.cc).
LEVELS = [10 ** (12 - i) for i in range(13)]


def deepest_level(window_ms, resolution):
    """The last zoom level XProf reads for a window of window_ms at this
    resolution."""
    res = round(window_ms * 1e9 / resolution)
    for level, r in enumerate(LEVELS):
        if res >= r:
            return level
    return len(LEVELS) - 1


def respelled(path):
    """The same request under another name: resolution=R as R.25."""
    return re.sub(r"resolution=(\d+)", r"resolution=\1.25", path)


@pytest.fixture(scope="module", params=["gpu", "tpu"])
def profile(request, xprofs_build, tmp_path_factory):
    out = tmp_path_factory.mktemp("coarse_" + request.param)
    args = ["--size-mb", "12", "--gpus", "4", "--seed", "7"]
    if request.param == "tpu":
        args = ["--scenario", "tpu", "--size-mb", "14"]
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", RUN] + args,
                   check=True, capture_output=True, timeout=600)
    return out


@pytest.fixture(scope="module")
def whole(profile, xprofs_build):
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(profile),
                        TRACE + "?resolution=8000"], capture_output=True, check=True)
    doc = json.loads(r.stdout)
    lo, hi = doc["fullTimespan"]
    # Down-sampled (over XProf's threshold) and reading coarse levels only.
    assert doc["returnedEventsSize"] < 500000
    assert deepest_level(hi - lo, 8000) <= 4
    return doc


def coarse_windows(doc):
    """Windows that read no deeper than the first, the whole range at 1000
    bins (the coarse levels of these small profiles hold few enough events
    for a coarse finish at that level; at 8000 bins they would not)."""
    lo, hi = doc["fullTimespan"]
    span = hi - lo
    out = [f"{TRACE}?resolution={r}" for r in (1000, 500, 100)]
    out += [f"{TRACE}?start_time_ms={lo + span * f!r}&end_time_ms={lo + span * (f + 0.5)!r}"
            f"&resolution={r}" for f in (0.0, 0.2, 0.45) for r in (200, 500)]
    for p in out:
        m = re.search(r"start_time_ms=([^&]+)&end_time_ms=([^&]+)", p)
        width = float(m.group(2)) - float(m.group(1)) if m else span
        r = float(re.search(r"resolution=(\d+)", p).group(1))
        assert deepest_level(width, r) <= deepest_level(span, 1000), p
    return out


def deep_requests(doc):
    """Requests that read every level, or deeper than the coarse ones."""
    lo, hi = doc["fullTimespan"]
    span = hi - lo
    mid = lo + span * 0.41
    ev = next(e for e in doc["traceEvents"]
              if e.get("ph") == "X" and e.get("dur", 0) > 1e-6
              and re.fullmatch(r"[\w.]+", e["name"]) and e["args"].get("uid", 0) > 0)
    return [
        f"{TRACE}?start_time_ms={mid!r}&end_time_ms={mid + span / 2000!r}&resolution=8000",
        f"{TRACE}?start_time_ms={mid!r}&end_time_ms={mid + span / 500!r}&resolution=0",
        f"{TRACE}?search_prefix={ev['name'][:3]}",
        f"{TRACE}?event_name={ev['name']}&start_time_ms={ev['ts'] / 1000!r}"
        f"&duration_ms={ev['dur'] / 1000!r}&unique_id={ev['args']['uid']}",
        f"{TRACE}?resolution=8000&format=pb",
    ]


@pytest.mark.parametrize("background", ["trace_complete=0", "trace_complete=1"])
def test_coarse_first_then_complete(profile, whole, mount, xcat, background):
    """In a mount that completes coarse indexes in the background, the
    coarse answers may come from either index: the same bytes."""
    mnt = pathlib.Path(mount(profile, background))
    coarse = {p: (mnt / p).read_bytes() for p in coarse_windows(whole)}
    for p in deep_requests(whole):
        got = (mnt / p).read_bytes()
        assert got and got == xcat(profile, p), p
    # Completed: the same coarse requests again, from the whole index.
    for p, before in coarse.items():
        assert (mnt / respelled(p)).read_bytes() == before, p
    assert json.loads((mnt / f"{TRACE}?resolution=8000").read_bytes()) == whole


def test_coarse_reads_beside_completion(profile, whole, mount):
    """Coarse windows read while the index is completed for another
    reader's deep window: the bytes the completed index gives."""
    mnt = pathlib.Path(mount(profile, "trace_complete=0"))
    coarse = coarse_windows(whole)
    deep = deep_requests(whole)[:1]
    got, errors = {coarse[0]: (mnt / coarse[0]).read_bytes()}, []  # finished coarse

    def read(paths):
        try:
            for p in paths:
                got[p] = (mnt / p).read_bytes()
        except OSError as e:
            errors.append(e)

    threads = [threading.Thread(target=read, args=(deep,)),
               threading.Thread(target=read, args=(coarse[1:],))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300 if SANITIZED else 120)
    assert not errors
    for p in coarse:
        assert got[p] and got[p] == (mnt / respelled(p)).read_bytes(), p
    assert got[deep[0]] == (mnt / respelled(deep[0])).read_bytes()
