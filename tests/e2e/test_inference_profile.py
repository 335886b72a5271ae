"""inference_profile.json: XProf's inference tool.

On xprofs-synth --scenario inference (host 0: SessionRun requests with TPU
execute / launch / callback events and tensor events, host 1:
BatchingSessionRun requests batched by ProcessBatch with schedule sizes,
padding and TFstreamz batching parameters), every number of the request,
batch and tensor pattern tables is recomputed here from the raw events (read
with python3-protobuf, not by the C reader): request spans, the
non-overlapped breakdown by XProf's priorities, percentiles of the sampler,
integer-picosecond averages, per-batch-size rows and throughputs. Hostile
cases: a host without requests (XProf's empty answer and a reason in
errors.txt) and a run of one request.
"""
import json
import re

import pytest

import xplane_py

RUN = "2025_01_01_00_00_00"
US = 1_000_000  # ps

# EventType priorities of xprof/utils/event_span.h
PRE, POST, FORMATION, RUNTIME, H2D, D2H, COMPUTE = 20, 30, 40, 50, 80, 130, 140
REQUEST_COLS = ["percentile", "request_id", "latency_ms", "host_preprocessing", "host_runtime",
                "data_transfer_h2d", "data_transfer_d2h", "device_compute", "host_postprocess",
                "idle time", "trace_viewer_url"]
BATCHING_COLS = REQUEST_COLS[:3] + ["batching_request_size", "host_batch_formation",
                                    "throughput"] + REQUEST_COLS[3:]
BATCH_COLS = ["percentile", "batch_id", "latency", "padding_amount", "batch_size_after_padding",
              "batching_efficiency", "batching_delay_us", "throughput", "device_compute",
              "trace_viewer_url"]
TENSOR_COLS = ["id", "tensor_pattern", "count", "percentile"]


# ---- an independent reading of the scenario's raw events -------------------

def _events(space):
    """(plane, line, name, begin_ps, end_ps, stats) of every event."""
    out = []
    for pl in space.planes:
        names = {m.key: m.value.name for m in pl.event_metadata}
        snames = {m.key: m.value.name for m in pl.stat_metadata}
        for ln in pl.lines:
            for ev in ln.events:
                b = ln.timestamp_ns * 1000 + ev.offset_ps
                stats = {snames[st.metadata_id]: getattr(st, st.WhichOneof("value"))
                         for st in ev.stats}
                out.append((pl.name, ln.name, names[ev.metadata_id], b, b + ev.duration_ps,
                            stats))
    return out


def breakdown(spans):
    """Per type the time where it is the highest priority span open, and
    idle: no span open, between the first and last boundary."""
    points = sorted({t for b, e, _ in spans for t in (b, e)})
    out = {t: 0 for t in (PRE, POST, FORMATION, RUNTIME, H2D, D2H, COMPUTE)}
    idle = 0
    for lo, hi in zip(points, points[1:]):
        open_types = [t for b, e, t in spans if b <= lo and hi <= e]
        if open_types:
            out[max(open_types)] += hi - lo
        else:
            idle += hi - lo
    return out, idle


def scenario(path):
    """Requests and batches of one scenario host. A request: dict of start,
    end, model, the breakdown, delay, size, related batch, tensor pattern and
    time. A batch: dict of start, end, padding, size, delay, device time."""
    evs = _events(xplane_py.load(path))
    modules = {}
    for plane, line, name, b, e, st in evs:
        if plane.startswith("/device:TPU:") and line == "XLA Modules":
            modules.setdefault(st["_c"], []).append((b, e))
    host = [x for x in evs if x[0] == "/host:CPU"]

    def inside(x, names):
        return [y for y in host if y[1] == x[1] and x[3] <= y[3] and y[4] <= x[4]
                and y is not x and y[2] in names]

    def first(x, name):
        ys = inside(x, (name,))
        return ys[0] if ys else None

    def pattern(x):
        ts = inside(x, ("Linearize", "Delinearize"))
        if not ts:
            return None, 0
        subs = sorted(f"{t[2]} {t[5]['shape']} {t[5]['layout']}" for t in ts)
        return "<br>".join(subs), sum(t[4] - t[3] for t in ts)

    def finish(r, spans, work):
        comp = [(b, e, COMPUTE) for b, e in modules.get(work[5]["_p"], [])]
        trans = [(y[3], y[4], H2D if y[2] == "WriteHbm" else D2H)
                 for y in inside(work, ("WriteHbm", "ReadHbm"))]
        spans = spans + comp + trans
        cb = r.pop("callback")
        if cb is not None:
            spans.append((cb, r["end"], POST))
        elif comp:
            spans.append((max(e for _, e, _ in comp), r["end"], POST))
        r["times"], r["idle"] = breakdown(spans)
        return r

    reqs, batches = [], {}
    if any(x[2] == "BatchingSessionRun" for x in host):
        for x in host:
            if x[2] != "ProcessBatch":
                continue
            cat = first(x, "ConcatInputTensors")
            run = first(x, "SessionRun")
            dev = modules.get(run[5]["_p"], [])
            batches[x[5]["_c"]] = dict(start=x[3], end=x[4], concat=cat[3],
                                       padding=cat[5]["padding_amount"],
                                       size=cat[5]["batch_size_after_padding"],
                                       device=breakdown([(b, e, COMPUTE) for b, e in dev])[0][
                                           COMPUTE], run=run, model=run[5]["model_id"])
        for x in host:
            if x[2] != "BatchingSessionRun":
                continue
            bt = batches[x[5]["_p"]]
            sched = first(x, "ScheduleWithoutSplit")
            r = dict(start=x[3], end=max(x[4], bt["end"]), model=bt["model"],
                     delay=bt["start"] - x[3], size=sched[5]["batching_input_task_size"],
                     batch=x[5]["_p"], pattern=None, tensor=0, callback=None)
            reqs.append(finish(r, [(sched[3], bt["concat"], FORMATION)], bt["run"]))
        for k, bt in batches.items():
            bt["delay"] = bt["start"] - min(r["start"] for r in reqs if r["batch"] == k)
    else:
        for x in host:
            if not (x[2] == "SessionRun" or x[5].get("_r") == -1) or "model_id" not in x[5]:
                continue  # no model id: dropped (others have one)
            exe, launch, cb = (first(x, n) for n in ("tpu::System::Execute", "DoEnqueueProgram",
                                                     "CompleteCallbacks"))
            spans = []
            if exe is not None:
                spans.append((x[3], exe[3], PRE))
                if launch is not None:
                    spans.append((exe[3], launch[3], RUNTIME))
            pat, tt = pattern(x)
            r = dict(start=x[3], end=x[4], model=x[5]["model_id"], delay=0, size=0, batch=None,
                     pattern=pat, tensor=tt, callback=cb[3] if cb else None)
            reqs.append(finish(r, spans, x))
    return reqs, batches


# ---- what XProf's converter makes of them ------------------------------------

def ms(ps):
    return ps / 1e9


def request_values(r, batching, throughput):
    t = r["times"]
    v = [ms(r["end"] - r["start"])]
    if batching:
        v += [r["size"], ms(r["delay"]), throughput]
    return v + [ms(t[PRE]), ms(t[RUNTIME]), ms(t[H2D]), ms(t[D2H]), ms(t[COMPUTE]), ms(t[POST]),
                ms(r["idle"]), ""]


def average(rs):
    """GetAverageRequestDetails: integer picoseconds, the idle time a double."""
    n = len(rs)
    if n == 0:
        return dict(start=0, end=0, size=0, delay=0, idle=0.0,
                    times={k: 0 for k in (PRE, POST, FORMATION, RUNTIME, H2D, D2H, COMPUTE)})
    return dict(start=0, end=sum(r["end"] - r["start"] for r in rs) // n,
                size=sum(r["size"] for r in rs) // n, delay=sum(r["delay"] for r in rs) // n,
                idle=sum(r["idle"] for r in rs) / n,
                times={k: sum(r["times"][k] for r in rs) // n for k in rs[0]["times"]})


def throughput(items):
    if not items:
        return 0.0
    return len(items) / ((max(x["end"] for x in items) - min(x["start"] for x in items)) / 1e12)


def latency_ms(items):
    return sum(x["end"] - x["start"] for x in items) / 1e6 / len(items) / 1e3 if items else 0.0


def expected_request_rows(rs, batching, batches_by_size=()):
    rs = sorted(rs, key=lambda r: (r["end"] - r["start"], r["start"]))
    rows = [[f"{100.0 * i / len(rs):.3f}"] + request_values(r, batching, "N/A")
            for i, r in enumerate(rs)]
    thr = throughput(rs)
    for size, members in batches_by_size:
        rows.append([f"Batch size {size}"] + request_values(
            average(members), batching, f"{len(members) * thr / len(rs):.1f}"))
    rows.append(["Average"] + request_values(average(rs), batching, f"{thr:.1f}"))
    return rows


def got_rows(t, skip_id=True):
    rows = [[c["v"] for c in r["c"]] for r in t["rows"]]
    if skip_id:
        for r in rows:
            assert r[1] == "N/A" or re.fullmatch(r"\d+", r[1]), r
            del r[1]
    return rows


def assert_rows(got, want):
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert len(g) == len(w), (g, w)
        for a, b in zip(g, w):
            if isinstance(b, float):
                assert a == pytest.approx(b, rel=1e-12, abs=1e-15), (g, w)
            else:
                assert a == b, (g, w)


def tensor_text(times_ps):
    s = sorted(times_ps)
    return "<br>".join(f"{p:.2f}%: {ms(s[int(p / 100.0 * len(s))]):f}ms"
                       for p in (50.0, 75.0, 90.0, 95.0, 99.0, 99.9))


def expected_tensor_rows(rs):
    by = {}
    for r in rs:
        if r["pattern"] is not None:
            by.setdefault(r["pattern"], []).append(r["tensor"])
    return [[p, float(len(ts)), tensor_text(ts)] for p, ts in by.items()]


# ---- fixtures ----------------------------------------------------------------

@pytest.fixture(scope="module")
def logdir(tmp_path_factory, xprofs_build):
    import subprocess
    out = tmp_path_factory.mktemp("inference_profile")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--scenario",
                    "inference", "--hosts", "2"], check=True, timeout=60, capture_output=True)
    return out


def host_file(logdir, h):
    return logdir / "plugins" / "profile" / RUN / f"synth-host-{h}.xplane.pb"


def tables(xcat, logdir, rel):
    return json.loads(xcat(logdir, f"{RUN}/{rel}"))


# ---- tests -------------------------------------------------------------------

def test_scenario_has_what_the_tables_read(logdir):
    reqs, _ = scenario(host_file(logdir, 0))
    r0 = min(reqs, key=lambda r: r["start"])
    # R0 [100, 1100): preprocess to the execute at 120, runtime to the launch
    # at 260 less the write [150, 250), postprocess from the callback at 900
    assert (r0["times"][PRE], r0["times"][RUNTIME], r0["times"][POST]) == (20 * US, 40 * US,
                                                                            200 * US)
    assert r0["idle"] == 140 * US
    reqs, batches = scenario(host_file(logdir, 1))
    assert sorted(r["size"] for r in reqs) == [2, 3, 5]
    assert sorted((b["padding"], b["size"]) for b in batches.values()) == [(0, 8), (2, 4)]


def test_host0_tables(logdir, xcat):
    reqs, _ = scenario(host_file(logdir, 0))
    t = tables(xcat, logdir, "hosts/synth-host-0/inference_profile.json")
    models = sorted({r["model"] for r in reqs})
    assert t[0]["p"] == {"hasBatching": "false", "hasTensorPattern": "false"}
    assert [c["id"] for c in t[0]["cols"]] == ["model_name"]
    assert got_rows(t[0], skip_id=False) == [[m] for m in models]
    # per model: requests, then tensor patterns (no batching anywhere)
    assert len(t) == 1 + 2 * len(models)
    for i, m in enumerate(models):
        rt, tt = t[1 + 2 * i], t[2 + 2 * i]
        mine = [r for r in reqs if r["model"] == m]
        assert [c["id"] for c in rt["cols"]] == REQUEST_COLS
        assert rt["p"] == {"throughput": f"{throughput(mine):.1f}",
                           "averageLatencyMs": f"{latency_ms(mine):.3f}"}
        assert_rows(got_rows(rt), expected_request_rows(mine, False))
        assert [c["id"] for c in tt["cols"]] == TENSOR_COLS
        want = expected_tensor_rows(mine)
        assert [r[1:] for r in got_rows(tt, skip_id=False)] == want
        assert [r["c"][0]["v"] for r in tt["rows"]] == [float(k) for k in range(len(want))]
    # model_a:1 holds R0 and R2, both with the pattern of Linearize + Delinearize
    assert got_rows(t[2], skip_id=False)[0][2] == 2.0


def test_host1_batching_tables(logdir, xcat):
    reqs, batches = scenario(host_file(logdir, 1))
    t = tables(xcat, logdir, "hosts/synth-host-1/inference_profile.json")
    assert t[0]["p"]["hasBatching"] == "true"
    assert got_rows(t[0], skip_id=False) == [["model_c:3"]]
    assert len(t) == 3  # requests, batches; no tensor pattern on this host
    rt, bt = t[1], t[2]
    assert [c["id"] for c in rt["cols"]] == BATCHING_COLS
    blist = sorted(batches.values(), key=lambda b: (b["end"] - b["start"], b["start"]))
    sizes = sorted({b["size"] for b in blist})
    by_size = [(s, [r for r in reqs if batches[r["batch"]]["size"] == s]) for s in sizes]
    assert_rows(got_rows(rt), expected_request_rows(reqs, True, by_size))
    # the request table's "Host batch formation" column holds the batching delay
    assert [r[3] for r in got_rows(rt)[:3]] == sorted(
        [ms(r["delay"]) for r in reqs], key=lambda d: d)  # B2 0.1, B1 0.2, B0 0.3
    assert [c["id"] for c in bt["cols"]] == BATCH_COLS
    thr = throughput(blist)

    def values(b, label_thr):
        eff = (b["size"] - b["padding"]) / b["size"] if b["size"] else 0.0
        return [ms(b["end"] - b["start"]), float(b["padding"]), float(b["size"]), eff,
                ms(b["delay"]), label_thr, ms(b["device"]), ""]

    def avg(bs):
        n = len(bs)
        return dict(start=0, end=sum(b["end"] - b["start"] for b in bs) // n,
                    padding=sum(b["padding"] for b in bs) // n,
                    size=sum(b["size"] for b in bs) // n,
                    delay=sum(b["delay"] for b in bs) // n,
                    device=sum(b["device"] for b in bs) // n)

    want = [[f"{100.0 * i / len(blist):.3f}"] + values(b, "N/A") for i, b in enumerate(blist)]
    for s in sizes:
        mine = [b for b in blist if b["size"] == s]
        want.append([f"Batch size {s}"] + values(avg(mine), f"{len(mine) * thr / len(blist):.1f}"))
    want.append(["Aggregated"] + values(avg(blist), f"{thr:.1f}"))
    assert_rows(got_rows(bt), want)
    assert bt["p"] == {
        "throughput": f"{thr:.1f}", "averageLatencyMs": f"{latency_ms(blist):.3f}",
        "hasBatchingParam": "true", "batchingParamNumBatchThreads": "4",
        "batchingParamMaxBatchSize": "8", "batchingParamBatchTimeoutMicros": "1000",
        "batchingParamMaxEnqueuedBatches": "16", "batchingParamAllowedBatchSizes": "4,8"}


def test_run_tables(logdir, xcat):
    r0, _ = scenario(host_file(logdir, 0))
    r1, b1 = scenario(host_file(logdir, 1))
    t = tables(xcat, logdir, "inference_profile.json")
    models = sorted({r["model"] for r in r0 + r1})
    assert got_rows(t[0], skip_id=False) == [[m] for m in models]
    assert t[0]["p"]["hasBatching"] == "true"
    # per model: requests, batches, tensor patterns
    assert len(t) == 1 + 3 * len(models)
    for i, m in enumerate(models):
        mine = [r for r in r0 + r1 if r["model"] == m]
        rt = t[1 + 3 * i]
        assert [c["id"] for c in rt["cols"]] == BATCHING_COLS
        got = got_rows(rt)
        want = expected_request_rows(mine, True)
        # rows per batch size come before the average; compare the rest
        assert_rows([g for g in got if not g[0].startswith("Batch size")], want)
    # XProf renumbers the requests' model indexes across hosts but not the
    # batches': host 1's batches (its model 0) land in the run's model 0
    assert [r[0] for r in got_rows(t[2])] == ["0.000", "50.000", "Batch size 4",
                                             "Batch size 8", "Aggregated"]
    assert [r[0] for r in got_rows(t[8])] == ["Aggregated"]
    assert t[8]["p"]["hasBatchingParam"] == "true"  # model_c:3's parameters
    assert t[5]["p"]["hasBatchingParam"] == "false"


def test_sampling_column(logdir, xcat):
    reqs, _ = scenario(host_file(logdir, 1))
    t = json.loads(xcat(logdir, f"{RUN}/hosts/synth-host-1/inference_profile.json"
                                "?request_column=Request%20size"))
    got = got_rows(t[1])[:3]
    assert [g[2] for g in got] == [2.0, 3.0, 5.0]  # ordered by request size
    bad = xcat(logdir, f"{RUN}/inference_profile.json?nope=1", check=False)
    assert bad.returncode == 2


def test_mount_serves_the_same(logdir, xcat, mount):
    mnt = mount(logdir)
    for rel in (f"{RUN}/inference_profile.json", f"{RUN}/hosts/synth-host-1/inference_profile.json"):
        assert (mnt / rel).read_bytes() == xcat(logdir, rel)
    assert "inference_profile" not in json.loads((mnt / RUN / "tools.json").read_text())


def _rewrite(src, dst, keep):
    """A copy of a scenario host keeping the /host:CPU events keep() accepts."""
    space = xplane_py.load(src)
    for pl in space.planes:
        if pl.name != "/host:CPU":
            continue
        for ln in pl.lines:
            kept = [ev for ev in ln.events if keep(ln.timestamp_ns * 1000 + ev.offset_ps)]
            del ln.events[:]
            ln.events.extend(kept)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(space.SerializeToString())


def errors_after(xprofs_build, logdir):
    """errors.txt after reading inference_profile.json in the same process."""
    import subprocess
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir),
                        f"{RUN}/inference_profile.json", f"{RUN}/errors.txt"],
                       capture_output=True, timeout=600, check=True)
    return r.stdout.decode().split("]", 1)[-1]


def test_no_requests(logdir, xcat, xprofs_build, tmp_path):
    """No request on /host:CPU: the model "ALL" and an all-zero average row,
    as XProf answers, and the reason in errors.txt."""
    _rewrite(host_file(logdir, 0), tmp_path / "plugins" / "profile" / RUN / "h.xplane.pb",
             lambda t: False)
    t = json.loads(xcat(tmp_path, f"{RUN}/inference_profile.json"))
    assert len(t) == 2
    assert t[0]["p"] == {"hasBatching": "false", "hasTensorPattern": "false"}
    assert got_rows(t[0], skip_id=False) == [["ALL"]]
    assert [c["id"] for c in t[1]["cols"]] == REQUEST_COLS
    assert t[1]["p"] == {"throughput": "0.0", "averageLatencyMs": "0.000"}
    assert got_rows(t[1], skip_id=False) == [["Average", "N/A"] + [0.0] * 8 + [""]]
    assert "inference_profile.json: this run has no inference requests" in errors_after(
        xprofs_build, tmp_path)


def test_one_request(logdir, xcat, xprofs_build, tmp_path):
    """One request (R0, [100, 1100) us): one sampled row at 0.000, and the
    average is that request."""
    _rewrite(host_file(logdir, 0), tmp_path / "plugins" / "profile" / RUN / "h.xplane.pb",
             lambda t: t < (1000 + 1100) * US)  # line start 1000 us
    reqs, _ = scenario(host_file(logdir, 0))
    r0 = [min(reqs, key=lambda r: r["start"])]
    t = json.loads(xcat(tmp_path, f"{RUN}/inference_profile.json"))
    assert got_rows(t[0], skip_id=False) == [["model_a:1"]]
    assert len(t) == 3
    assert_rows(got_rows(t[1]), expected_request_rows(r0, False))
    assert got_rows(t[1])[0][1:] == got_rows(t[1])[1][1:]
    assert [r[1:] for r in got_rows(t[2], skip_id=False)] == expected_tensor_rows(r0)
    assert "inference_profile" not in errors_after(xprofs_build, tmp_path)
