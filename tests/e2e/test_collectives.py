"""collectives.csv: TraceLens's NCCL analysis of a multi-rank PyTorch run.

A 4-rank job is generated here (Kineto JSON, one file per rank): all-reduces
on process group "0", all-gathers on group "1", an all_to_allv (left out by
TraceLens's implicit-sync table), a vLLM cross_device_reduce kernel without
metadata (collective name inferred, group "Unknown_Group", no sizes), compute
kernels that are not collectives, and a collective kernel without a
correlation (not linked: ignored). The expected table is recomputed by brute
force from the JSON with an independent reading of
NcclAnalyser.build_df_nccl_implicit_sync_cat(detailed=True).
"""
import csv
import io
import json
import pathlib
import random
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tracelens_live  # noqa: E402

RANKS = 4
DTYPE_BYTES = {"Float": 4, "BFloat16": 2, "Half": 2, "Long": 8}


def kernel(name, ts, dur, corr, **args):
    a = {"correlation": corr, "External id": corr, "stream": 7, **args}
    if corr is None:
        del a["correlation"], a["External id"]
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts,
            "dur": dur, "args": a}


def make_job(root):
    rnd = random.Random(40)
    run = root / "job"
    run.mkdir(parents=True)
    traces = []
    for r in range(RANKS):
        ev, t = [], 1_700_000_000_000.0 + r * 3.25
        corr = 1
        for step in range(6):
            t += rnd.uniform(50, 80)
            ev.append(kernel("void at::native::vectorized_elementwise_kernel<4>(...)", round(t, 3),
                             round(rnd.uniform(5, 9), 3), corr))
            corr += 1
            t += 10 + rnd.uniform(0, 4)
            n = 1 << (18 + step % 3)
            ev.append(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage)",
                             round(t + rnd.uniform(0, 6), 3), round(rnd.uniform(20, 40), 3), corr,
                             **{"Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3]",
                                "Collective name": "allreduce", "Group size": RANKS,
                                "dtype": "Float", "In msg nelems": n, "Out msg nelems": n,
                                "In split size": [], "Out split size": "[]"}))
            corr += 1
            if step % 2 == 0:
                t += 45
                ev.append(kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage)",
                                 round(t + rnd.uniform(0, 3), 3), round(rnd.uniform(10, 20), 3),
                                 corr, **{"Process Group Name": "1",
                                          "Process Group Ranks": [0, 1, 2, 3],
                                          "Collective name": "_allgather_base",
                                          "Group size": RANKS, "dtype": "BFloat16",
                                          "In msg nelems": 4096, "Out msg nelems": 4096 * RANKS}))
                corr += 1
        t += 40
        ev.append(kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage)", round(t, 3), 12.5,
                         corr, **{"Process Group Name": "0", "Collective name": "all_to_allv",
                                  "Group size": RANKS, "dtype": "Float", "In msg nelems": 64,
                                  "Out msg nelems": 64}))
        corr += 1
        t += 30
        ev.append(kernel("void cross_device_reduce_1stage<float>(...)", round(t + r * 0.5, 3),
                         round(4.0 + r, 3), corr))
        corr += 1
        ev.append(kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(unlinked)", t + 100, 9.0, None))
        # file order is not start order on rank 2
        if r == 2:
            ev.reverse()
        traces.append(ev)
        doc = {"schemaVersion": 1, "deviceProperties": [], "traceEvents": ev}
        (run / f"rank{r}.pt.trace.json").write_text(json.dumps(doc))
    return traces


NAME2TYPE = {"allreduce": "allreduce", "_allgather_base": "allgather",
             "all_to_allv": "alltoallv"}


def expected(traces):
    rows = []
    for r, ev in enumerate(traces):
        for e in ev:
            a = e["args"]
            name = e["name"].lower()
            if e["cat"] != "kernel" or not ("nccl" in name or "rccl" in name
                                            or "cross_device_reduce" in name):
                continue
            if a.get("correlation") is None and a.get("External id") is None:
                continue
            cname = a.get("Collective name")
            if cname is None and "cross_device_reduce" in name:
                cname = "allreduce"
            bpe = DTYPE_BYTES.get(a.get("dtype"))
            inmb = a["In msg nelems"] * bpe / 1024 ** 2 if bpe and "In msg nelems" in a else None
            outmb = a["Out msg nelems"] * bpe / 1024 ** 2 if bpe and "In msg nelems" in a else None
            ranks = a.get("Process Group Ranks")
            rows.append({"rank": r, "ts": e["ts"], "dur": e["dur"],
                         "pg": a.get("Process Group Name") or "Unknown_Group",
                         "ranks": str(tuple(ranks)) if isinstance(ranks, list) else ranks,
                         "cname": cname, "gs": a.get("Group size"), "dtype": a.get("dtype"),
                         "in": a.get("In msg nelems"), "out": a.get("Out msg nelems"),
                         "inmb": inmb, "outmb": outmb})
    counters = {}
    for row in sorted(rows, key=lambda x: (x["rank"], x["pg"], x["ts"])):
        k = (row["rank"], row["pg"])
        row["cid"] = f"{row['pg']}_{counters.get(k, 0)}"
        counters[k] = counters.get(k, 0) + 1
    order = []
    for row in rows:  # rank-major, file order
        if row["cid"] not in order:
            order.append(row["cid"])
    out = []
    for cid in order:
        ev = sorted((x for x in rows if x["cid"] == cid), key=lambda x: x["rank"])
        f = ev[0]
        ctype = NAME2TYPE.get(f["cname"])
        if ctype not in ("allreduce", "allgather", "reducescatter", "alltoall"):
            continue
        latest = max(x["ts"] for x in ev)
        ends = [x["ts"] + x["dur"] for x in ev]
        lat = min(x["dur"] for x in ev)
        waits = {x["rank"]: latest - x["ts"] for x in ev}
        skew, early = max((w, rr) for rr, w in waits.items())
        full = algo = bus = None
        if f["inmb"] is not None:
            full = f["outmb"] if ctype == "allgather" else f["inmb"]
            algo = (full / 1024) / (lat / 1e6)
            n = f["gs"]
            bus = algo * (2 * (n - 1) / n if ctype == "allreduce" else (n - 1) / n)
        out.append({"cid": cid, "f": f, "lat": lat, "skew": skew, "early": early,
                    "avg": sum(waits.values()) / len(ev), "skew_end": max(ends) - min(ends),
                    "full": full, "algo": algo, "bus": bus,
                    "per": {x["rank"]: (x["ts"], x["dur"], waits[x["rank"]]) for x in ev}})
    return out


def cell(v, floaty=False):
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, int) and floaty:
        return repr(float(v))
    return str(v)


def test_collectives_four_ranks(tmp_path, xcat):
    traces = make_job(tmp_path / "log")
    exp = expected(traces)
    got = list(csv.reader(io.StringIO(xcat(tmp_path / "log", "job/collectives.csv").decode())))
    header = ["collective_id", "Process Group Name", "Process Group Ranks", "Collective name",
              "Group size", "dtype", "In msg nelems", "Out msg nelems", "In msg size (MB)",
              "Out msg size (MB)", "Full msg size (MB)", "comm_latency", "skew in start time",
              "earliest arrival rank", "avg_wait_time", "skew in end time", "algo bw (GB/s)",
              "bus bw (GB/s)"]
    per = [f"rank_{r}_{k}" for r in range(RANKS) for k in ("ts", "dur")]
    per += [f"rank_{r}_wait_time" for r in range(RANKS)]
    assert got[0] == header + per
    assert len(got) - 1 == len(exp) == 6 + 3 + 1
    # the cross_device_reduce call has no sizes: those integer columns have gaps
    for g, e in zip(got[1:], exp):
        f = e["f"]
        want = [e["cid"], f["pg"], cell(f["ranks"]), f["cname"], cell(f["gs"], True),
                cell(f["dtype"]), cell(f["in"], True), cell(f["out"], True), cell(f["inmb"]),
                cell(f["outmb"]), cell(e["full"]), cell(e["lat"]), cell(e["skew"]),
                str(e["early"]), cell(e["avg"]), cell(e["skew_end"]), cell(e["algo"]),
                cell(e["bus"])]
        for r in range(RANKS):
            want += [cell(e["per"][r][0]), cell(e["per"][r][1])]
        want += [cell(e["per"][r][2]) for r in range(RANKS)]
        assert g == want, e["cid"]
    kinds = {g[3] for g in got[1:]}
    assert kinds == {"allreduce", "_allgather_base"}
    assert any(g[0].startswith("Unknown_Group_") for g in got[1:])


def test_collectives_simplified_mode(tmp_path, xcat):
    """No process-group names, one stream per rank: calls match by order."""
    run = tmp_path / "log" / "job"
    run.mkdir(parents=True)
    for r in range(2):
        ev = [kernel("ncclDevKernel_AllReduce(x)", 1000.0 + 100 * i + r, 10.0 + i + r, i + 1,
                     **{"Collective name": "allreduce", "Group size": 2, "dtype": "Half",
                        "In msg nelems": 1024, "Out msg nelems": 1024}) for i in range(3)]
        (run / f"r{r}.pt.trace.json").write_text(
            json.dumps({"schemaVersion": 1, "traceEvents": ev}))
    got = list(csv.DictReader(io.StringIO(xcat(tmp_path / "log", "job/collectives.csv").decode())))
    assert [g["collective_id"] for g in got] == ["0", "1", "2"]
    assert all(g["Process Group Name"] == "all" for g in got)
    assert got[1]["comm_latency"] == "11.0"
    assert got[1]["skew in start time"] == "1.0" and got[1]["earliest arrival rank"] == "0"
    mb = 1024 * 2 / 1024 ** 2
    assert float(got[1]["algo bw (GB/s)"]) == (mb / 1024) / (11.0 / 1e6)
    assert float(got[1]["bus bw (GB/s)"]) == (mb / 1024) / (11.0 / 1e6) * (2 * 1 / 2)


def test_collectives_none(corpus, xcat):
    r = xcat(corpus, "pytorch/h100_bert_small/collectives.csv", check=False)
    assert r.returncode != 0
    assert b"no NCCL" in r.stderr


def test_coll_analysis_brute_force(tmp_path, xcat):
    """perf_report/coll_analysis.csv: NcclAnalyser.build_df_summary_long, one
    row per (rank, group, call kind, sizes, splits, stream); rows without a
    split size (the all-gathers here) are dropped by pandas' groupby."""
    traces = make_job(tmp_path / "log")
    got = list(csv.DictReader(io.StringIO(
        xcat(tmp_path / "log", "job/perf_report/coll_analysis.csv").decode())))
    groups = {}
    for r, ev in enumerate(traces):
        for e in ev:
            a = e["args"]
            if "In split size" in a and a.get("correlation") is not None:
                groups.setdefault((r, a["In msg nelems"]), []).append(e["dur"])
    assert len(got) == len(groups) > 0
    want = sorted(groups.items(), key=lambda kv: -sum(kv[1]))
    assert sorted((int(g["rank"]), int(float(g["In msg nelems"])), float(g["dur_sum"]),
                   int(g["operation_count"])) for g in got) == sorted(
        (k[0], k[1], pytest.approx(sum(v)), len(v)) for k, v in groups.items())
    assert [float(g["dur_sum"]) for g in got] == sorted(
        (float(g["dur_sum"]) for g in got), reverse=True)
    assert all(g["In split size"] == "()" and g["Out split size"] == "[]" for g in got)
    assert len(want) == len(got)


def test_collectives_live_tracelens(tmp_path, xcat, corpus):
    """Byte-identical to TraceLens's own table, where it can run: the generated
    job and the corpus's B200 trace (one rank with an all-gather)."""
    make_job(tmp_path / "log")
    files = sorted((tmp_path / "log" / "job").glob("*.pt.trace.json"))
    assert xcat(tmp_path / "log", "job/collectives.csv") == tracelens_live.run(
        tracelens_live.NCCL, *files)
    assert xcat(tmp_path / "log", "job/perf_report/coll_analysis.csv") == tracelens_live.run(
        tracelens_live.NCCL_SUMMARY, *files)
    b200 = corpus / "pytorch" / "b200_eager" / "b200_eager.pt.trace.json.gz"
    assert xcat(corpus, "pytorch/b200_eager/collectives.csv") == tracelens_live.run(
        tracelens_live.NCCL, b200)
