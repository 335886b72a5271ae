"""kernel_launchers*.csv of PyTorch runs: TraceLens's CPU-op kernel launchers.

Every corpus PyTorch run is recomputed here by brute force from its raw trace
JSON, with an independent reading of TraceLens's rules (Trace2Tree's host
stack with the event-bleed rule, runtime launch -> GPU event through the ac2g
flow pair or a graph launch's correlation, the walk up to the nearest cpu_op
past python_function and "execute", communication kernels left out, busy
time as an interval union). Counts, names, UIDs and times must agree to the
ns, and the summaries must add up to the launcher rows. A small hand-made
trace checks the cells that the corpus never fills (overlaps on other
streams, graph launches, args of every JSON kind) against the text TraceLens
itself printed for it (pandas 1.5.3, numpy 1.24.2, CPython 3.11).
"""
import csv
import gzip
import io
import json
import pathlib
import re
import sys
from collections import defaultdict

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from tracelens_py import GPU_CATS, RT_CATS, union_length  # noqa: E402

RUNS = ["h100_bert_small", "h100_falconsai_vit", "mi300_qwen_0.5b", "b200_eager"]

HEADER = ("name,op category,UID,total_direct_kernel_time,total_subtree_kernel_time,"
          "direct_kernel_count,overlapping_kernel_names,overlapping_kernels_details,overlap_pct,"
          "Input Dims,Input type,Input Strides,Concrete Inputs,process_name,process_label,"
          "thread_name")
SUMMARY_HEADER = ("name,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
                  "total_direct_kernel_time_ms,total_subtree_kernel_time_ms,Count,Categories,"
                  "Percentage (%),Cumulative Percentage (%)")
CATEGORY_HEADER = ("op category,Count,total_direct_kernel_time_ms,Percentage (%),"
                   "Cumulative Percentage (%)")

COMM = re.compile("nccl|rccl|cross_device_reduce", re.IGNORECASE)


def expected_launchers(events):
    """[(uid, name, direct_us, subtree_us, count)] in row order."""
    key = "External id"
    for e in events:
        if e.get("cat") in RT_CATS and "launch" in e.get("name", "").lower():
            key = "correlation" if "correlation" in e.get("args", {}) else "External id"
            break
    starts, ends, by_ptl, gpu_by_link = {}, {}, {}, defaultdict(list)
    for i, e in enumerate(events):
        if e.get("cat") == "ac2g":
            if e.get("ph") == "s":
                starts[e.get("id")] = e
            elif e.get("ph") == "f":
                ends[e.get("id")] = e
            continue
        a = e.get("args")
        if a is None or a.get(key) is None:
            continue
        if e.get("cat") in GPU_CATS:
            gpu_by_link[a[key]].append(i)
        if "pid" in e and "tid" in e:
            by_ptl[(e["pid"], e["tid"], a[key])] = i
    # Host stacks per thread, events by start (ties in file order).
    parent = {}
    host = [i for i, e in enumerate(events)
            if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver") and "ts" in e]
    threads = defaultdict(list)
    for i in sorted(host, key=lambda i: events[i]["ts"]):
        threads[(events[i].get("pid"), events[i].get("tid"))].append(i)
    for seq in threads.values():
        stack = []
        for i in seq:
            ts = events[i]["ts"]
            end = ts + events[i].get("dur", 0)
            while stack and ts >= stack[-1][1]:
                stack.pop()
            if stack and end > stack[-1][1]:
                if stack[-1][1] - ts < 1.0 and len(stack) >= 2:
                    stack.pop()
                else:
                    continue
            if stack:
                parent[i] = stack[-1][0]
            stack.append((i, end))
    # Launch -> GPU events.
    for i, e in enumerate(events):
        if e.get("cat") not in RT_CATS:
            continue
        link = e.get("args", {}).get(key)
        if link is None:
            continue
        if e.get("name") in ("cudaGraphLaunch", "hipGraphLaunch"):
            for g in gpu_by_link.get(link, []):
                parent[g] = i
            continue
        if link in starts and link in ends:
            f = ends[link]
            g = by_ptl.get((f.get("pid"), f.get("tid"), f.get("id")))
            if g is not None and events[g].get("cat") in GPU_CATS:
                parent[g] = i
    direct, subtree, first_seen = defaultdict(list), defaultdict(list), {}
    for g, e in enumerate(events):
        if e.get("cat") not in GPU_CATS or g not in parent:
            continue
        interval = (e["ts"], e["ts"] + e["dur"])
        a = parent[g]
        while a is not None:
            subtree[a].append(interval)
            a = parent.get(a)
        if COMM.search(e.get("name", "")):
            continue
        runtime = parent[g]
        cur, launcher = parent.get(runtime), runtime
        while cur is not None:
            c = events[cur].get("cat")
            if c == "cpu_op":
                if events[cur].get("name") == "execute":
                    cur = parent.get(cur)
                    continue
                launcher = cur
                break
            if c != "python_function":
                break
            cur = parent.get(cur)
        first_seen.setdefault(launcher, len(first_seen))
        direct[launcher].append(interval)
    order = sorted(first_seen, key=lambda u: (events[u].get("ts", 0), first_seen[u]))
    return [(u, events[u].get("name", ""), union_length(direct[u]), union_length(subtree[u]),
             len(direct[u])) for u in order]


def table(text):
    return list(csv.DictReader(io.StringIO(text.decode())))


@pytest.mark.parametrize("name", RUNS)
def test_corpus_bruteforce(corpus, xcat, name):
    path = corpus / "pytorch" / name / f"{name}.pt.trace.json.gz"
    events = json.loads(gzip.open(path).read())["traceEvents"]
    want = expected_launchers(events)
    assert len(want) > 0
    raw = xcat(corpus, f"pytorch/{name}/kernel_launchers.csv")
    assert raw.decode().split("\n", 1)[0] == HEADER
    rows = table(raw)
    assert len(rows) == len(want)
    for row, (uid, lname, direct_us, subtree_us, count) in zip(rows, want):
        assert int(row["UID"]) == uid
        assert row["name"] == lname
        assert int(row["direct_kernel_count"]) == count
        assert abs(float(row["total_direct_kernel_time"]) - direct_us) < 1e-6, (uid, lname)
        assert abs(float(row["total_subtree_kernel_time"]) - subtree_us) < 1e-6, (uid, lname)
        assert row["op category"] != ""
        args = events[uid].get("args", {})
        if "Input Dims" in args:
            dims = args["Input Dims"]
            assert row["Input Dims"].startswith("(") and row["Input Dims"].count("(") >= len(dims)
    # Summaries add up to the rows.
    by_name, by_cat = defaultdict(lambda: [0.0, 0, set()]), defaultdict(lambda: [0.0, 0])
    for row in rows:
        t = float(row["total_direct_kernel_time"])
        by_name[row["name"]][0] += t
        by_name[row["name"]][1] += 1
        by_name[row["name"]][2].add(row["op category"])
        by_cat[row["op category"]][0] += t
        by_cat[row["op category"]][1] += 1
    raw = xcat(corpus, f"pytorch/{name}/kernel_launchers_summary.csv")
    assert raw.decode().split("\n", 1)[0] == SUMMARY_HEADER
    summary = table(raw)
    assert {r["name"] for r in summary} == set(by_name)
    sums = [float(r["total_direct_kernel_time_sum"]) for r in summary]
    assert sums == sorted(sums, reverse=True)
    for r in summary:
        total, count, cats = by_name[r["name"]]
        assert int(r["Count"]) == count
        assert abs(float(r["total_direct_kernel_time_sum"]) - total) < 1e-6
        assert abs(float(r["total_direct_kernel_time_ms"]) * 1000 - total) < 1e-6
        assert r["Categories"] == str(sorted(cats))
    assert abs(sum(float(r["Percentage (%)"]) for r in summary) - 100) < 1e-9
    assert abs(float(summary[-1]["Cumulative Percentage (%)"]) - 100) < 1e-9
    raw = xcat(corpus, f"pytorch/{name}/kernel_launchers_summary_by_category.csv")
    assert raw.decode().split("\n", 1)[0] == CATEGORY_HEADER
    cats = table(raw)
    assert {r["op category"] for r in cats} == set(by_cat)
    for r in cats:
        total, count = by_cat[r["op category"]]
        assert int(r["Count"]) == count
        assert abs(float(r["total_direct_kernel_time_ms"]) * 1000 - total) < 1e-6
    assert sum(int(r["Count"]) for r in cats) == len(rows)


# --- a hand-made trace: overlaps, graph launches, execute, nccl, args --------------

def ev(cat, name, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def flow(corr, ts, stream):
    return [{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 1, "ts": ts},
            {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": stream,
             "ts": ts, "bp": "e"}]


HANDMADE = (
    [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
     {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "CPU"}},
     {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main, 'thread'"}},
     ev("cpu_op", "aten::addmm", 0, 50, **{"Input Dims": [[2, 3], [], [3]],
                                          "Input type": ["float", "c10::BFloat16"],
                                          "Concrete Inputs": ["", "1e-05", [1, 2.50, None]]}),
     ev("cuda_runtime", "cudaLaunchKernel", 5, 2, correlation=1),
     ev("kernel", "gemm_a", 100, 10, pid=0, tid=7, correlation=1, stream=7),
     ev("cuda_runtime", "cudaLaunchKernel", 10, 2, correlation=2),
     ev("kernel", "ncclKernel_AllReduce", 105, 20, pid=0, tid=8, correlation=2, stream=8),
     ev("cpu_op", "conv_bn", 60, 40, **{"Input Dims": []}),
     ev("cpu_op", "execute", 61, 30),
     ev("cuda_runtime", "cudaLaunchKernel", 62, 2, correlation=3),
     ev("kernel", "void at::native::vectorized_elementwise_kernel<4>", 108, 4, pid=0, tid=9,
        correlation=3, stream=9),
     ev("cuda_runtime", "cudaGraphLaunch", 70, 3, correlation=4),
     ev("kernel", "graph_k1", 130, 5, pid=0, tid=7, correlation=4, stream=7),
     ev("kernel", "graph_k2", 131, 1.5, pid=0, tid=9, correlation=4, stream=9),
     ev("cuda_runtime", "cudaMemcpyAsync", 200, 2, correlation=5),
     ev("gpu_memcpy", "Memcpy HtoD", 210, 3, pid=0, tid=7, correlation=5, stream=7)]
    + flow(1, 100, 7) + flow(2, 105, 8) + flow(3, 108, 9) + flow(5, 210, 7))

# TraceLens's own output for HANDMADE (get_df_kernel_launchers().to_csv and the
# two summaries), printed on this machine.
HANDMADE_LAUNCHERS = HEADER + """
aten::addmm,GEMM,3,10,25,1,"['void at::native::vectorized_elementwise_kernel<4>', 'ncclKernel_AllReduce']","[{'name': 'void at::native::vectorized_elementwise_kernel<4>', 'dur': 4.0, 'stream': 9, 'overlap_pct': 0.2}, {'name': 'ncclKernel_AllReduce', 'dur': 20.0, 'stream': 8, 'overlap_pct': 0.5}]",0.5,"((2, 3), (), (3,))","('float', 'c10::BFloat16')",,"('', '1e-05', (1, 2.5, None))",python3,CPU,"main, 'thread'"
conv_bn,elementwise,8,9,9,3,"['gemm_a', 'ncclKernel_AllReduce', 'graph_k2', 'graph_k1']","[{'name': 'gemm_a', 'dur': 10.0, 'stream': 7, 'overlap_pct': 0.22}, {'name': 'ncclKernel_AllReduce', 'dur': 20.0, 'stream': 8, 'overlap_pct': 0.44}, {'name': 'graph_k2', 'dur': 1.5, 'stream': 9, 'overlap_pct': 0.17}, {'name': 'graph_k1', 'dur': 5.0, 'stream': 7, 'overlap_pct': 0.17}]",0.78,(),,,,python3,CPU,"main, 'thread'"
cudaMemcpyAsync,other,15,3,3,1,,,,,,,,python3,CPU,"main, 'thread'"
"""
HANDMADE_SUMMARY = SUMMARY_HEADER + """
aten::addmm,10,25,0.01,0.025,1,['GEMM'],45.45454545454546,45.45454545454546
conv_bn,9,9,0.009,0.009,1,['elementwise'],40.90909090909091,86.36363636363637
cudaMemcpyAsync,3,3,0.003,0.003,1,['other'],13.636363636363638,100.00000000000001
"""
HANDMADE_BY_CATEGORY = CATEGORY_HEADER + """
GEMM,1,0.01,45.45454545454546,45.45454545454546
elementwise,1,0.009,40.90909090909091,86.36363636363637
other,1,0.003,13.636363636363638,100.00000000000001
"""


def test_handmade_matches_tracelens(tmp_path, xcat):
    run = tmp_path / "log" / "hand"
    run.mkdir(parents=True)
    (run / "hand.pt.trace.json").write_text(json.dumps({"traceEvents": HANDMADE}))
    logdir = tmp_path / "log"
    assert xcat(logdir, "hand/kernel_launchers.csv").decode() == HANDMADE_LAUNCHERS
    assert xcat(logdir, "hand/kernel_launchers_summary.csv").decode() == HANDMADE_SUMMARY
    assert (xcat(logdir, "hand/kernel_launchers_summary_by_category.csv").decode()
            == HANDMADE_BY_CATEGORY)
    # The brute force agrees on the launchers and their times.
    want = expected_launchers(HANDMADE)
    rows = table(HANDMADE_LAUNCHERS.encode())
    assert [(int(r["UID"]), r["name"], float(r["total_direct_kernel_time"]),
             float(r["total_subtree_kernel_time"]), int(r["direct_kernel_count"]))
            for r in rows] == want


def test_no_launch_is_an_error(tmp_path, xcat):
    run = tmp_path / "log" / "idle"
    run.mkdir(parents=True)
    (run / "idle.pt.trace.json").write_text(json.dumps(
        {"traceEvents": [ev("cpu_op", "aten::add", 0, 5), ev("kernel", "k", 10, 1, pid=0, tid=7)]}))
    r = xcat(tmp_path / "log", "idle/kernel_launchers.csv", check=False)
    assert r.returncode != 0
