"""Input an attack on the mount found answered wrongly or slowly: each case
fails on the code before its fix.

- Chrome traces: "B" events matched to "E" events took time quadratic in the
  number left open on other threads (50k + 50k took 3.4 s, 1M ~20 minutes).
- steps.csv: step= or thread= naming nothing, or empty, gave an empty table
  and exit 0; now EINVAL with the reason.
"""
import json
import subprocess
import time


def write_trace(root, events):
    run = root / "plugins" / "profile" / "r1"
    run.mkdir(parents=True, exist_ok=True)
    (run / "h.trace.json").write_text(json.dumps({"traceEvents": events}))
    return root


def unmatched(n):
    """n "B" events left open on thread 1, n "E" events with no "B" on
    thread 2, and on thread 3 a slice nested in another, both closed."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "host"}}]
    ev += [{"ph": "B", "name": f"open{i}", "pid": 1, "tid": 1, "ts": i} for i in range(n)]
    ev += [{"ph": "E", "pid": 1, "tid": 2, "ts": n + i} for i in range(n)]
    ev += [{"ph": "B", "name": "outer", "pid": 1, "tid": 3, "ts": 10},
           {"ph": "B", "name": "inner", "pid": 1, "tid": 3, "ts": 12},
           {"ph": "E", "pid": 1, "tid": 3, "ts": 15},
           {"ph": "E", "pid": 1, "tid": 3, "ts": 20}]
    return ev


def timed_cat(xprofs_build, logdir, path):
    t = time.monotonic()
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), path],
                       capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return time.monotonic() - t, r.stdout


def test_begin_end_matching_is_linear(tmp_path, xprofs_build):
    small = write_trace(tmp_path / "small", unmatched(20000))
    big = write_trace(tmp_path / "big", unmatched(80000))
    t_small, _ = timed_cat(xprofs_build, small, "r1/trace_viewer.json")
    t_big, out = timed_cat(xprofs_build, big, "r1/trace_viewer.json")
    # Four times the events: about four times the time when linear (16 when
    # quadratic; the old code took 0.3 s and 4.5 s here).
    assert t_big < 8 * max(t_small, 0.05), (t_small, t_big)
    complete = [e for e in json.loads(out)["traceEvents"] if e.get("ph") == "X"]
    # Only thread 3's slices close: inner 12-15, outer 10-20 (µs from the
    # trace's first timestamp, 0).
    got = sorted((e["name"], e["ts"], e["dur"]) for e in complete)
    assert got == [("inner", 12, 3), ("outer", 10, 10)]


def cat_error(xprofs_build, logdir, path):
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), path],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr.strip()


def test_steps_selection_that_selects_nothing_is_an_error(tmp_path, xprofs_build, synth):
    logdir = synth(tmp_path / "logs", "--run", "s4", "--scenario", "steps4")
    rc, out, _ = cat_error(xprofs_build, logdir, "s4/steps.csv")
    assert rc == 0 and len(out.splitlines()) > 1
    rows = [line.split(",") for line in out.splitlines()[1:]]
    thread, step = rows[0][2], rows[0][3]
    for f in ("steps.csv", "steps.json", "regions.csv", "regions.json"):
        for query, reason in (
                ("step=NaN", "step=NaN: no event of that name in this run"),
                ("step=-1", "step=-1: no event of that name in this run"),
                ("step=1e20", "step=1e20: no event of that name in this run"),
                ("step=", "step= needs the name of a step annotation"),
                ("thread=", "thread= needs a thread name or id"),
                ("thread=nosuch", "thread=nosuch: no step on a thread of that name or id")):
            rc, out, err = cat_error(xprofs_build, logdir, f"s4/{f}?{query}")
            assert rc == 2 and out == "", (f, query, rc, out[:200])
            assert err.endswith(reason), (f, query, err)
        # What does exist still answers.
        rc, out, err = cat_error(xprofs_build, logdir, f"s4/{f}?step={step}&thread={thread}")
        assert rc == 0 and len(out) > 50, (f, err)
