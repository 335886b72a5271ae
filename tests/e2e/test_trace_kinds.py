"""One file set per kind of trace, decided by the content: a PyTorch
(Kineto) trace named <host>.trace.json.gz under plugins/profile/<run>/, as
TensorBoard's plugin stores it, gets the same files and the same bytes as
under its own name <host>.pt.trace.json.gz (it used to be read as a JAX
trace and get none of TraceLens's PyTorch files)."""
import os
import shutil
import subprocess


def ls(xprofs_build, logdir, path):
    out = subprocess.run([str(xprofs_build / "xprofs"), "ls", str(logdir), path],
                         capture_output=True, text=True, check=True).stdout
    return sorted(out.split())


def cat(xprofs_build, logdir, path):
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), path],
                       capture_output=True, timeout=300)
    return r.returncode, r.stdout


def test_pytorch_trace_under_either_name(corpus, tmp_path, xprofs_build):
    (src,) = (corpus / "pytorch" / "h100_bert_small").glob("*.pt.trace.json.gz")
    host = src.name[:-len(".pt.trace.json.gz")]
    by_name = tmp_path / "by_name" / "bert"
    by_name.mkdir(parents=True)
    shutil.copy(src, by_name / src.name)
    tb = tmp_path / "tb" / "plugins" / "profile" / "bert"
    tb.mkdir(parents=True)
    shutil.copy(src, tb / (host + ".trace.json.gz"))
    a, b = tmp_path / "by_name", tmp_path / "tb"
    files = ls(xprofs_build, a, "bert")
    assert files == ls(xprofs_build, b, "bert")
    for f in ("call_tree.txt", "modules.txt", "roofline.csv", "kernel_launchers.csv",
              "steps.csv", "report.json", "gpu_timeline.csv"):
        assert f in files, f
    for f in files:
        if f.endswith("/") or f == "summary.json":  # summary.json names the file
            continue
        ra, rb = cat(xprofs_build, a, "bert/" + f), cat(xprofs_build, b, "bert/" + f)
        assert ra == rb, f
    # A JAX Chrome trace keeps the JAX files.
    jax = tmp_path / "jax" / "plugins" / "profile" / "r"
    jax.mkdir(parents=True)
    (jax / "h.trace.json").write_text(
        '{"traceEvents": [{"ph": "X", "name": "fusion.1", "pid": 1, "tid": 1, "ts": 1, '
        '"dur": 2, "args": {"hlo_op": "fusion.1"}}, {"ph": "M", "name": "process_name", '
        '"pid": 1, "args": {"name": "/device:GPU:0"}}]}')
    assert "call_tree.txt" not in ls(xprofs_build, tmp_path / "jax", "r")
    assert "xla_summary.csv" in ls(xprofs_build, tmp_path / "jax", "r")
    assert os.path.exists(jax / "h.trace.json")


def test_chrome_trace_summary_lists_processes_and_threads(corpus, xprofs_build):
    """summary.json of a Chrome-trace run lists what it lists for an XSpace:
    per process its threads with event counts and span, the host's and the
    run's span; the test counts the events of the JSON itself."""
    import gzip
    import json
    (src,) = (corpus / "pytorch" / "h100_bert_small").glob("*.pt.trace.json.gz")
    events = json.loads(gzip.decompress(src.read_bytes()))["traceEvents"]
    want = {}
    for e in events:
        if e.get("ph") == "M" or not isinstance(e.get("ts"), (int, float)):
            continue
        k = (e.get("pid"), e.get("tid"))
        n, lo, hi = want.get(k, (0, float("inf"), float("-inf")))
        want[k] = (n + 1, min(lo, e["ts"]), max(hi, e["ts"] + e.get("dur", 0)))
    rc, out = cat(xprofs_build, corpus / "pytorch", "h100_bert_small/summary.json")
    assert rc == 0
    s = json.loads(out)
    (h,) = s["hosts"]
    assert h["format"] == "chrome_trace_json"
    got = {(p["pid"], t["tid"]): (t["event_count"], t["first_ps"], t["last_ps"])
           for p in h["processes"] for t in p["threads"]}
    assert sum(v[0] for v in got.values()) == h["event_count"] == len(
        [e for e in events if e.get("ph") != "M" and isinstance(e.get("ts"), (int, float))])
    assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in want.items()}
    for k, (n, lo, hi) in want.items():
        assert abs(got[k][1] - lo * 1e6) <= 1 and abs(got[k][2] - hi * 1e6) <= 1, k
    assert s["start_ps"] == h["start_ps"] == min(v[1] for v in got.values())
    assert s["duration_ps"] == s["end_ps"] - s["start_ps"] > 0


def test_chrome_trace_summary_of_hostile_times(tmp_path, xprofs_build):
    """A "ts" of 1e300 is counted but left out of the span (it overflowed
    int64 picoseconds); a process with number and string tids is listed
    once."""
    import json
    d = tmp_path / "plugins" / "profile" / "r"
    d.mkdir(parents=True)
    (d / "h.trace.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "a", "pid": 5, "tid": 1, "ts": 1e300, "dur": 1},
        {"ph": "X", "name": "b", "pid": 5, "tid": "main", "ts": 10, "dur": 5},
        {"ph": "X", "name": "c", "pid": 6, "tid": 1, "ts": 3, "dur": 1},
        {"ph": "X", "name": "d", "pid": 5, "tid": 1, "ts": 20, "dur": 1}]}))
    rc, out = cat(xprofs_build, tmp_path, "r/summary.json")
    assert rc == 0
    s = json.loads(out)
    procs = s["hosts"][0]["processes"]
    assert [p["pid"] for p in procs] == [5, 6]
    assert [(t["tid"], t["event_count"], t["first_ps"]) for t in procs[0]["threads"]] == \
        [(1, 2, 20_000_000), ("main", 1, 10_000_000)]
    assert (s["start_ps"], s["end_ps"], s["duration_ps"]) == (3_000_000, 21_000_000, 18_000_000)
