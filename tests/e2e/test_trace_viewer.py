"""trace_viewer.json and trace_viewer_legacy.json end to end.

Expected values come from the raw profiles (python3-protobuf through
xplane_py, gzip+json for Chrome traces) or from the full answer itself for
windows (a brute-force overlap filter written here), never from the C code.
"""
import gzip
import json
import pathlib
import shutil
import subprocess

import pytest

import xplane_py

CONV = "jax_conv_rocm/2025_01_01_00_00_00"
CONV_XPLANE = "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00/" \
              "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb"
INTERNAL = {"MemoryAllocation", "MemoryDeallocation", "PrefetchProduce", "PrefetchConsume",
            "ParallelInterleaveProduce", "ParallelInterleaveConsume",
            "ParallelInterleaveInitializeInput", "ParallelMapProduce", "ParallelMapConsume",
            "MapAndBatchProduce", "MapAndBatchConsume", "ParseExampleProduce",
            "ParseExampleConsume"}
DERIVED = ("XLA Ops - from #", "XLA Modules - from #", "Framework Ops - from #",
           "Framework Name Scope - from #", "Source code - from #", "Steps", "Launch Stats")
XPROF_KEYS = ["displayTimeUnit", "metadata", "codeLink", "useNewBackend", "details",
              "returnedEventsSize", "filteredByVisibility", "fullTimespan", "stackFrames",
              "traceEvents", "showCounterMessage", "totalCounterEvents"]


def get(xcat, logdir, path):
    raw = xcat(logdir, path)
    return raw, json.loads(raw)


def ps(us):
    return round(us * 1e6)


def events(doc):
    return [e for e in doc["traceEvents"] if e.get("ph") != "M"]


def names(doc):
    """(pid,) -> process name and (pid, tid) -> thread name."""
    out = {}
    for e in doc["traceEvents"]:
        if e.get("name") == "process_name":
            out[(e["pid"],)] = e["args"]["name"]
        elif e.get("name") == "thread_name":
            out[(e["pid"], e["tid"])] = e["args"]["name"]
    return out


@pytest.fixture(scope="module")
def conv_full(corpus, xprofs_build):
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(corpus),
                        CONV + "/trace_viewer.json"], capture_output=True, check=True)
    return r.stdout, json.loads(r.stdout)


def test_conv_streams(conv_full):
    _, doc = conv_full
    nm = names(doc)
    per_thread = {}
    for e in events(doc):
        per_thread[(e["pid"], e["tid"])] = per_thread.get((e["pid"], e["tid"]), 0) + 1
    host = "chi-mi300x-013.ord.vultr.cpe.ice.amd.com"
    assert nm[(1008,)] == host + " /device:GPU:7"
    assert nm[(1001,)] == host + " /device:GPU:0"
    assert nm[(1701,)] == host + " /host:CPU"
    gpu7 = {nm[k]: v for k, v in per_thread.items() if k[0] == 1008}
    assert gpu7["Stream #1(Kernel)"] == 25
    memcpy = {nm[k]: v for k, v in per_thread.items()
              if k[0] == 1001 and "Memcpy" in nm[k]}
    assert len(memcpy) == 4 and sum(memcpy.values()) == 53
    # Derived lines follow their stream (display ids renumbered 1..n).
    tids = {nm[k]: k[1] for k in nm if len(k) == 2 and k[0] == 1008}
    assert tids["Stream #1(Kernel)"] == 1
    assert tids["XLA Modules - from #1"] == 4 and tids["XLA Ops - from #1"] == 5


def expected_source_events(space):
    """(pid, thread name, ts ps, dur ps, name) of every shown source event."""
    planes = list(space.planes)
    host = sorted((i for i, p in enumerate(planes) if p.name.startswith("/host:CPU")),
                  key=lambda i: planes[i].name)
    out = []
    pids = {i: 1701 + k for k, i in enumerate(host)}
    for i, p in enumerate(planes):
        if p.name.startswith("/device:GPU:"):
            pids[i] = 1000 + 1 + p.id
    for i, p in enumerate(planes):
        if i not in pids:
            continue
        meta = {en.key: en.value for en in p.event_metadata}
        for line in p.lines:
            if not line.events or line.name.startswith("counters_"):
                continue
            tname = line.display_name or line.name
            for ev in line.events:
                m = meta.get(ev.metadata_id)
                mname = m.name if m else ""
                if mname in INTERNAL:
                    continue
                shown = (m.display_name or m.name) if m else ""
                ts = line.timestamp_ns * 1000 + ev.offset_ps
                out.append((pids[i], tname, ts, max(ev.duration_ps, 1), shown))
    return sorted(out)


def test_every_source_event_once(corpus, conv_full):
    _, doc = conv_full
    nm = names(doc)
    space = xplane_py.load(corpus / CONV_XPLANE)
    got = sorted((e["pid"], nm[(e["pid"], e["tid"])], ps(e["ts"]), ps(e["dur"]), e["name"])
                 for e in events(doc)
                 if not nm[(e["pid"], e["tid"])].startswith(DERIVED))
    assert got == expected_source_events(space)
    assert doc["returnedEventsSize"] == len(events(doc))


def test_golden_shape(conv_full):
    raw, doc = conv_full
    # Field order and spelling of XProf's answer (xprof-rs tests/data).
    assert list(doc.keys()) == XPROF_KEYS
    assert raw.startswith(b'{"displayTimeUnit":"ns","metadata":{"highres-ticks":true}, '
                          b'"codeLink":"","useNewBackend": false,"details":[{"name":'
                          b'"mpmd_pipeline_view","value":false}],"returnedEventsSize":')
    assert raw.endswith(b'], "showCounterMessage": "" ,"totalCounterEvents":0}')
    assert doc["filteredByVisibility"] is True
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    for e in meta:
        if e["name"] == "process_name":
            assert list(e.keys()) == ["args", "name", "ph", "pid", "thread_count"]
        elif e["name"] in ("process_sort_index",):
            assert list(e.keys()) == ["args", "name", "ph", "pid"]
            assert e["args"]["sort_index"] == e["pid"]
        else:
            assert list(e.keys()) == ["args", "name", "ph", "pid", "tid"]
    pids = [e["pid"] for e in meta if e["name"] == "process_name"]
    assert pids == sorted(pids)
    flows = 0
    for e in events(doc):
        keys = list(e.keys())
        assert keys[:5] == ["pid", "tid", "name", "ts", "dur"]
        assert "ph" in keys and e["ph"] == "X"
        assert set(e["args"].keys()) <= {"group_id", "uid"} and "uid" in e["args"]
        assert ("z" in e) == (e["args"]["uid"] > 0)
        if "bind_id" in e:
            flows += 1
            assert keys[5] == "bind_id" and e["cat"]
            assert e.get("flow_in") or e.get("flow_out")
    assert flows > 0
    # Stack frames: numbered 1..n.
    assert sorted(int(k) for k in doc["stackFrames"]) == \
        list(range(1, len(doc["stackFrames"]) + 1))


def test_json_parses_with_jq(corpus, xprofs_build, tmp_path):
    if shutil.which("jq") is None:
        pytest.skip("jq not installed")
    out = tmp_path / "tv.json"
    with open(out, "wb") as f:
        subprocess.run([str(xprofs_build / "xprofs"), "cat", str(corpus),
                        CONV + "/trace_viewer.json"], stdout=f, check=True)
    r = subprocess.run(["jq", ".returnedEventsSize", str(out)], capture_output=True, check=True)
    assert int(r.stdout) > 5000


def brute(doc, begin_ps, end_ps):
    out = []
    for e in events(doc):
        ts, dur = ps(e["ts"]), ps(e["dur"])
        if ts <= end_ps and begin_ps <= ts + dur:
            out.append((e["pid"], e["tid"], e["name"], e["ts"], e["dur"]))
    return sorted(out)


@pytest.mark.parametrize("window", [(1635.8, 1636.5), (1630, 1650), (0, 2), (1636.3849, 1636.4),
                                    (2000, 7000)])
def test_windows_match_brute_force(corpus, xcat, conv_full, window):
    _, full = conv_full
    a, b = window
    _, doc = get(xcat, corpus, f"{CONV}/trace_viewer.json?start_time_ms={a}&end_time_ms={b}"
                               "&resolution=8000")
    got = sorted((e["pid"], e["tid"], e["name"], e["ts"], e["dur"]) for e in events(doc))
    lo = ps(full["fullTimespan"][0] * 1000)
    begin = max(round(a * 1e9), 0)
    assert got == brute(full, begin, round(b * 1e9))
    assert doc["returnedEventsSize"] == len(got)
    # Process and thread metadata always list the whole trace.
    assert names(doc) == names(full)
    assert lo >= 0


def test_search_and_details(corpus, xcat):
    _, doc = get(xcat, corpus, f"{CONV}/trace_viewer.json?search_prefix=cudnn")
    found = events(doc)
    assert found and all(e["name"].startswith("cudnn") for e in found)
    e = found[0]
    q = (f"{CONV}/trace_viewer.json?event_name={e['name']}&start_time_ms={e['ts'] / 1000!r}"
         f"&duration_ms={e['dur'] / 1000!r}&unique_id={e['args']['uid']}")
    _, det = get(xcat, corpus, q)
    evs = events(det)
    assert det["returnedEventsSize"] == 1 and len(evs) == 1
    assert evs[0]["name"] == e["name"] and evs[0]["ts"] == e["ts"]
    assert "uid" not in evs[0]["args"]
    # The XLA op's full name ("<program>/<op>", > 16 bytes) is its stack frame.
    if "sf" in evs[0]:
        assert det["stackFrames"][str(evs[0]["sf"])]["name"].endswith("/" + e["name"])
    r = xcat(corpus, q.replace("unique_id=", "unique_id=1"), check=False)
    assert r.returncode != 0


@pytest.mark.parametrize("query,reason", [
    ("start_time_ms=5&end_time_ms=1", "after end_time_ms"),
    ("start_time_ms=abc", "not a number"),
    ("start_time_ms=nan", ""),
    ("resolution=1e300", ""),
    ("bogus=1", ""),
    ("format=xml", "format is json or pb"),
    ("duration_ms=3", "event_name"),
])
def test_bad_queries(corpus, xcat, query, reason):
    r = xcat(corpus, f"{CONV}/trace_viewer.json?{query}", check=False)
    assert r.returncode != 0 and r.stdout == b""
    assert reason.encode() in r.stderr


def test_multihost(corpus, xcat):
    run = "tf_gpu_multiworker/s1"
    _, doc = get(xcat, corpus, f"{run}/trace_viewer.json?start_time_ms=0&end_time_ms=1")
    procs = {k[0]: v for k, v in names(doc).items() if len(k) == 1}
    hosts = sorted({v.split(" ")[0] for v in procs.values()})
    assert hosts == ["34.83.195.179_6003", "34.83.195.180_6003"]
    assert all(p // 1000 == 1 for p, v in procs.items() if v.startswith(hosts[0] + " "))
    assert all(p // 1000 == 2 for p, v in procs.items() if v.startswith(hosts[1] + " "))
    _, one = get(xcat, corpus, f"{run}/hosts/{hosts[1]}/trace_viewer.json?start_time_ms=0"
                               "&end_time_ms=1")
    assert {k[0] for k in names(one) if len(k) == 1} <= set(range(1000, 2000))
    # Already-grouped TF profile: group ids come from the file.
    _, whole = get(xcat, corpus, f"{run}/hosts/{hosts[0]}/trace_viewer.json")
    assert any("group_id" in e["args"] for e in events(whole) if "args" in e)


def test_legacy(corpus, xcat, conv_full):
    raw = xcat(corpus, f"{CONV}/trace_viewer_legacy.json")
    assert raw.startswith(b'{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},\n'
                          b'"traceEvents":[\n')
    assert raw.endswith(b"{}]}\n")
    doc = json.loads(raw)
    evs = [e for e in doc["traceEvents"] if e and e["ph"] != "M"]
    _, full = conv_full
    # Same events as the streaming answer, with legacy pids (no +1000).
    assert len(evs) == len(events(full))
    for line in raw.split(b",\n")[2:6]:
        obj = json.loads(line)
        assert line.decode() == json.dumps(obj, sort_keys=True)
    pids = {e["pid"] for e in evs}
    assert 701 in pids and 8 in pids
    assert all(isinstance(v, str) for e in evs for v in e.get("args", {}).values())
    r = xcat(corpus, "tf_gpu_multiworker/s1/trace_viewer_legacy.json", check=False)
    assert r.returncode != 0 and b"one host" in r.stderr


def chrome_slices(path):
    """Complete events, instants and B events (each closed by an E)."""
    data = json.loads(gzip.decompress(pathlib.Path(path).read_bytes()))
    evs = data["traceEvents"] if isinstance(data, dict) else data
    return [e for e in evs if isinstance(e, dict) and e.get("ph") in ("X", "i", "I", "B")]


def test_chrome_trace_input(corpus, xcat):
    name = "h100_bert_small"
    src = chrome_slices(corpus / "pytorch" / name / f"{name}.pt.trace.json.gz")
    _, doc = get(xcat, corpus, f"pytorch/{name}/trace_viewer.json")
    got = events(doc)
    assert len([e for e in got if e.get("ph") == "X"]) == len(src)
    assert sorted(e["name"] for e in got if e.get("ph") == "X") == sorted(e["name"] for e in src)
    # Windowed the same way.
    t0 = min(e["ts"] for e in got)
    a, b = (t0 + 1000) / 1000, (t0 + 3000) / 1000
    _, win = get(xcat, corpus, f"pytorch/{name}/trace_viewer.json?start_time_ms={a!r}"
                               f"&end_time_ms={b!r}")
    want = sorted((e["pid"], e.get("tid"), e["name"], e["ts"]) for e in got
                  if e.get("ph") == "X" and ps(e["ts"]) <= round(b * 1e9)
                  and round(a * 1e9) <= ps(e["ts"]) + ps(e["dur"]))
    have = sorted((e["pid"], e.get("tid"), e["name"], e["ts"]) for e in events(win)
                  if e.get("ph") == "X")
    assert have == want and have


def test_mount_matches_cli(corpus, mount, xcat):
    mnt = mount(corpus)
    path = f"{CONV}/trace_viewer.json?start_time_ms=1635.8&end_time_ms=1636.5"
    assert (pathlib.Path(mnt) / path).read_bytes() == xcat(corpus, path)


def test_fractional_resolution_is_truncated_as_xprof_does(corpus, xcat):
    """XProf's GetTraceViewOption casts a fractional resolution to an
    integer, so resolution=1.5 is accepted and answers what resolution=1
    answers; one that is not a number, negative or huge is refused."""
    base = f"{CONV}/trace_viewer.json?start_time_ms=0&end_time_ms=50"
    one = xcat(corpus, base + "&resolution=1")
    assert b'"traceEvents":[' in one
    assert xcat(corpus, base + "&resolution=1.5") == one
    assert xcat(corpus, base + "&resolution=1.999") == one
    for bad in ("-1", "abc", "1e300"):
        r = xcat(corpus, f"{base}&resolution={bad}", check=False)
        assert r.returncode != 0 and r.stdout == b"", bad
