"""gpu_timeline.csv, gpu_events_averages.csv, gpu_timeline.json, gpu_devices.csv,
kernel_launchers*.csv.

Expected values come from TraceLens's own published reference CSVs for
jax_conv_rocm (AMD-AGI/TraceLens tests/traces/mi300/jax_conv_minimal_perf_report_csvs,
pasted below) and, for the other runs, from brute-force interval unions computed
here from the raw profiles: a sweep over exact integer picoseconds for xplane
files, and an independent linking + sweep for the PyTorch traces.
"""
import csv
import gzip
import io
import json
import pathlib
import subprocess
import sys

import pytest

JAX_CONV = "jax_conv_rocm/2025_01_01_00_00_00"

REF_TIMELINE = """type,time ms,percent,gpu_pid
computation_time,3.586492999999318,22.75505683191586,8
exposed_comm_time,0.0,0.0,8
exposed_memcpy_time,0.0,0.0,8
busy_time,3.586492999999318,22.75505683191586,8
idle_time,12.17480800000066,77.24494316808413,8
total_time,15.76130099999998,100.0,8
total_comm_time,0.0,0.0,8
total_memcpy_time,0.0,0.0,8
computation_time,0.0,0.0,1
exposed_comm_time,0.0,0.0,1
exposed_memcpy_time,0.889027999999933,3.190170364803076,1
busy_time,0.889027999999933,3.190170364803076,1
idle_time,26.97870000000018,96.80982963519692,1
total_time,27.86772800000012,100.0,1
total_comm_time,0.0,0.0,1
total_memcpy_time,0.889027999999933,3.190170364803076,1
"""

REF_AVERAGES = """type,time ms,percent
computation_time,1.793246499999659,8.220428192429656
exposed_comm_time,0.0,0.0
exposed_memcpy_time,0.4445139999999665,2.037698340707814
busy_time,2.237760499999625,10.25812653313747
idle_time,19.57675400000042,89.74187346686253
total_time,21.81451450000005,100.0
total_comm_time,0.0,0.0
total_memcpy_time,0.4445139999999665,2.037698340707814
"""

REF_BY_CATEGORY = """op category,Count,total_direct_kernel_time_ms,Percentage (%),Cumulative Percentage (%),time ms per gpu
Uncategorized Events/XLA,15,2.046661,57.06580216384083,57.06580216384083,2.046661
Conv,10,1.539832,42.93419783615917,100.0,1.539832
"""

METRICS = ["computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
           "idle_time", "total_time", "total_comm_time", "total_memcpy_time"]


def published(text):
    """Our CSV as TraceLens's jax_conv reference spells it: that reference went
    through XLSX (XlsxWriter writes %.16G) before it became a CSV, so its
    numbers have at most 16 significant digits where pandas' to_csv writes
    Python's repr, up to 17 (as the PyTorch references do, byte for byte)."""
    if isinstance(text, bytes):
        text = text.decode()
    out = []
    for line in text.splitlines(keepends=True):
        cells = []
        for c in line.rstrip("\n").split(","):
            try:
                if "." in c or "e" in c:
                    c = repr(float("%.16g" % float(c)))
            except ValueError:
                pass
            cells.append(c)
        out.append(",".join(cells) + ("\n" if line.endswith("\n") else ""))
    return "".join(out)


def rows(text):
    return list(csv.DictReader(io.StringIO(text.decode() if isinstance(text, bytes) else text)))


# --- TraceLens's published numbers -------------------------------------------

def test_reference_gpu_timeline(corpus, xcat):
    assert published(xcat(corpus, JAX_CONV + "/gpu_timeline.csv")) == REF_TIMELINE
    assert published(xcat(corpus, JAX_CONV + "/gpu_events_averages.csv")) == REF_AVERAGES
    r = {(x["gpu_pid"], x["type"]): float(x["time ms"]) for x in rows(REF_TIMELINE)}
    # To the nanosecond, as the issue states them.
    assert round(r[("8", "computation_time")], 6) == 3.586493
    assert round(r[("8", "busy_time")], 6) == 3.586493
    assert round(r[("8", "idle_time")], 6) == 12.174808
    assert round(r[("8", "total_time")], 6) == 15.761301
    assert round(r[("1", "exposed_memcpy_time")], 6) == 0.889028
    assert round(r[("1", "total_time")], 6) == 27.867728


def test_reference_kernel_launchers(corpus, xcat):
    summary = rows(xcat(corpus, JAX_CONV + "/kernel_launchers_summary.csv"))
    by_name = {x["name"]: x for x in summary}
    assert by_name["input_transpose_fusion"]["Count"] == "5"
    assert by_name["input_transpose_fusion"]["total_direct_kernel_time_ms"] == "1.95096"
    assert by_name["loop_transpose_fusion"]["Count"] == "5"
    assert by_name["loop_transpose_fusion"]["total_direct_kernel_time_ms"] == "0.02644"
    assert summary[0]["name"] == "input_transpose_fusion"
    assert published(summary[-1]["Cumulative Percentage (%)"]) == "99.99999999999999"
    assert published(xcat(corpus, JAX_CONV + "/kernel_launchers_summary_by_category.csv")) == \
        REF_BY_CATEGORY
    launchers = rows(xcat(corpus, JAX_CONV + "/kernel_launchers.csv"))
    assert len(launchers) == 25
    first = launchers[0]
    assert (first["name"], first["op category"], first["total_direct_kernel_time"],
            first["pid"], first["tid"], published(first["GPU_kernel_launch_latency"])) == \
        ("loop_transpose_fusion", "Uncategorized Events/XLA", "6.89", "8", "1",
         "20.94200000003912")
    assert sum(1 for x in launchers if x["op category"] == "Conv") == 10
    # xla_summary.csv: TraceLens's published table for this profile.
    xla = rows(xcat(corpus, JAX_CONV + "/xla_summary.csv"))
    assert [(x["name"], x["Count"], x["total_direct_kernel_time_sum"]) for x in xla] == [
        ("input_transpose_fusion", "5", "1950.96"), ("input_transpose_fusion_", "5", "69.261"),
        ("loop_transpose_fusion", "5", "26.44")]
    assert published(xla[0]["Percentage (%)"]) == "95.32404242813051"


# --- brute force over xplane files -------------------------------------------

@pytest.fixture(scope="module")
def xplane_pb2(tmp_path_factory):
    out = tmp_path_factory.mktemp("pb")
    proto = pathlib.Path(__file__).resolve().parents[2] / "proto"
    subprocess.run(["protoc", f"--proto_path={proto}", f"--python_out={out}",
                    str(proto / "xplane.proto")], check=True)
    sys.path.insert(0, str(out))
    import xplane_pb2 as mod  # noqa: E402
    return mod


def classify_jax(name):
    low = name.lower()
    if low.startswith(("copy", "memcpy", "memset")):
        return "memcpy"
    if "nccl" in low or "rccl" in low or "cross_device_reduce" in low:
        return "comm"
    return "comp"


def sweep(events):
    """events: (start, end, cls). Measures by walking sorted boundary points."""
    points = sorted({p for s, e, _ in events for p in (s, e)})
    out = dict(comp=0, comm=0, memcpy=0, xcomm=0, xmem=0, busy=0)
    for a, b in zip(points, points[1:]):
        live = {c for s, e, c in events if s <= a and b <= e}
        w = b - a
        for c in ("comp", "comm", "memcpy"):
            if c in live:
                out[c] += w
        if "comm" in live and "comp" not in live:
            out["xcomm"] += w
        if live == {"memcpy"}:
            out["xmem"] += w
        if live:
            out["busy"] += w
    total = max(e for _, e, _ in events) - min(s for s, _, _ in events)
    return {"computation_time": out["comp"], "exposed_comm_time": out["xcomm"],
            "exposed_memcpy_time": out["xmem"], "busy_time": out["busy"],
            "idle_time": total - out["busy"], "total_time": total,
            "total_comm_time": out["comm"], "total_memcpy_time": out["memcpy"]}


def xplane_expect(mod, path):
    space = mod.XSpace()
    space.ParseFromString(pathlib.Path(path).read_bytes())
    devices = {}
    for plane in space.planes:
        if not plane.name.startswith("/device:GPU:"):
            continue
        meta = {m.key: m.value for m in plane.event_metadata}
        evs = []
        for line in plane.lines:
            if not (line.display_name or line.name).startswith("Stream #"):
                continue
            for e in line.events:
                md = meta.get(e.metadata_id) or mod.XEventMetadata()
                start = line.timestamp_ns * 1000 + e.offset_ps
                evs.append((start, start + max(e.duration_ps, 1),
                            classify_jax(md.display_name or md.name)))
        if evs:
            pid = plane.id + 1 if plane.id + 1 <= 500 else 1
            devices[pid] = {k: v / 1e9 for k, v in sweep(evs).items()}  # ps -> ms
    return devices


def check_timeline(text, expect, host=None):
    got = {}
    for x in rows(text):
        if host is not None and x.get("host") != host:
            continue
        got.setdefault(int(x["gpu_pid"]), {})[x["type"]] = float(x["time ms"])
    assert set(got) == set(expect)
    for pid, metrics in expect.items():
        for k in METRICS:
            assert abs(got[pid][k] - metrics[k]) < 1e-6, (pid, k, got[pid][k], metrics[k])
    return got


@pytest.mark.parametrize("run", ["jax_conv_rocm/2025_01_01_00_00_00", "jax08_conv_rocm/s1",
                                 "jax08_gemm_rocm/s1", "jax08_elementwise_rocm/s1"])
def test_xplane_runs_bruteforce(corpus, xcat, xplane_pb2, run):
    d = corpus / run.split("/")[0] / "plugins" / "profile" / run.split("/")[1]
    (pb,) = sorted(d.glob("*.xplane.pb"))
    expect = xplane_expect(xplane_pb2, pb)
    assert expect
    check_timeline(xcat(corpus, run + "/gpu_timeline.csv"), expect)
    doc = json.loads(xcat(corpus, run + "/gpu_timeline.json"))
    assert {d["gpu_pid"] for d in doc["devices"]} == set(expect)
    n = len(expect)
    avg = {k: sum(m[k] for m in expect.values()) / n for k in METRICS}
    for x in rows(xcat(corpus, run + "/gpu_events_averages.csv")):
        assert abs(float(x["time ms"]) - avg[x["type"]]) < 1e-6


def test_multihost_and_host_dir(corpus, xcat, xplane_pb2):
    run = "tf_gpu_multiworker/s1"
    d = corpus / "tf_gpu_multiworker" / "plugins" / "profile" / "s1"
    text = xcat(corpus, run + "/gpu_timeline.csv")
    assert rows(text)[0].keys() >= {"gpu_pid", "host"}
    for pb in sorted(d.glob("*.xplane.pb")):
        host = pb.name[: -len(".xplane.pb")]
        expect = xplane_expect(xplane_pb2, pb)
        check_timeline(text, expect, host=host)
        check_timeline(xcat(corpus, f"{run}/hosts/{host}/gpu_timeline.csv"), expect)


def test_synth_overlaps(tmp_path, synth, xcat, xplane_pb2):
    logdir = synth(tmp_path / "logs", "--size-mb", "1", "--seed", "5", "--gpus", "3")
    (pb,) = sorted(logdir.rglob("*.xplane.pb"))
    expect = xplane_expect(xplane_pb2, pb)
    assert len(expect) == 3
    # The generated profile overlaps collectives with compute on other streams.
    assert any(m["total_comm_time"] > m["exposed_comm_time"] > 0 for m in expect.values())
    run = pb.parent.name
    check_timeline(xcat(logdir, run + "/gpu_timeline.csv"), expect)
    cats = rows(xcat(logdir, run + "/kernel_launchers_summary_by_category.csv"))
    assert abs(sum(float(x["Percentage (%)"]) for x in cats) - 100) < 1e-9


# --- kernel_launchers*.csv by brute force over xplane files --------------------

JAX_CATEGORIES = [
    ("GEMM", ["Cijk", "gemm", "nvjet", "cublasLt"]),
    ("FA BWD", ["FmhaBwd", "flash_bprop", "ck_fused_attn::dk_dv_reduce_thd", "fmha_bwd"]),
    ("FA FWD", ["FmhaFwd", "flash_fprop", "fmha_fwd"]),
    ("FA V3", ["kernel_func"]),
    ("Conv", ["conv_", "conv.", "conv-"]),
    ("TE", ["transformer_engine", "te_fused_attn"]),
    ("Communication rccl/nccl", ["rccl", "nccl"]),
]


def jax_category(text):
    for cat, keys in JAX_CATEGORIES:
        if any(k in text for k in keys):
            return cat
    return None


def stat_value(plane_stats, stats, name):
    """The first stat called name among stats (XStat list), as str or int."""
    for st in stats:
        if plane_stats.get(st.metadata_id) != name:
            continue
        kind = st.WhichOneof("value")
        if kind == "str_value":
            return st.str_value
        if kind == "ref_value":
            return plane_stats.get(st.ref_value, "")
        if kind in ("int64_value", "uint64_value"):
            return getattr(st, kind)
        if kind == "double_value":
            return int(st.double_value)
        return None
    return None


def event_stat(plane_stats, md, e, name):
    v = stat_value(plane_stats, e.stats, name)
    return v if v is not None else stat_value(plane_stats, md.stats, name)


def check_number(text, x):
    assert text == repr(x), (text, x)


def launchers_expect(mod, path):
    """Rows (name, category, dur, pid, tid, latency) in TraceLens's order."""
    space = mod.XSpace()
    space.ParseFromString(pathlib.Path(path).read_bytes())
    launch = {}
    for plane in space.planes:
        if not plane.name.startswith("/host:CPU"):
            continue
        sm = {m.key: m.value.name for m in plane.stat_metadata}
        meta = {m.key: m.value for m in plane.event_metadata}
        for line in plane.lines:
            for e in line.events:
                corr = event_stat(sm, meta.get(e.metadata_id, mod.XEventMetadata()), e,
                                  "correlation_id")
                if corr is None or isinstance(corr, str):
                    continue
                ts = (line.timestamp_ns * 1000 + e.offset_ps) / 1e6
                launch[corr] = max(ts, launch.get(corr, ts))
    lines = []
    for plane in space.planes:
        if not plane.name.startswith("/device:GPU:"):
            continue
        pid = plane.id + 1 if 1 <= plane.id + 1 <= 500 else 1
        for line in plane.lines:
            if line.events and (line.display_name or line.name).startswith("Stream"):
                lines.append((pid, (line.display_id or line.id) & 0xffffffff, len(lines),
                              plane, line))
    out = []
    for pid, tid, _, plane, line in sorted(lines, key=lambda x: x[:3]):
        sm = {m.key: m.value.name for m in plane.stat_metadata}
        meta = {m.key: m.value for m in plane.event_metadata}
        order = sorted(range(len(line.events)),
                       key=lambda i: (line.events[i].offset_ps, -max(line.events[i].duration_ps, 0), i))
        for i in order:
            e = line.events[i]
            md = meta.get(e.metadata_id, mod.XEventMetadata())
            name = md.display_name or md.name
            if name.lower().startswith(("copy", "memcpy", "memset")):
                continue
            by_name = jax_category(name)
            cat = by_name or "Uncategorized Events/XLA"
            if by_name is None or not by_name.startswith("FA "):
                op = event_stat(sm, md, e, "hlo_op")
                if isinstance(op, str) and op[:511].split("\0")[0]:
                    cat = jax_category(op[:511].split("\0")[0]) or cat
            ts = (line.timestamp_ns * 1000 + e.offset_ps) / 1e6
            corr = event_stat(sm, md, e, "correlation_id")
            latency = None
            if corr is not None and not isinstance(corr, str) and corr in launch:
                latency = ts - launch[corr]
            out.append((name, cat, max(e.duration_ps, 1) / 1e6, pid, tid, latency))
    return out


def check_launchers(text, expect):
    got = rows(text)
    assert len(got) == len(expect)
    for g, (name, cat, dur, pid, tid, latency) in zip(got, expect):
        assert (g["name"], g["op category"], g["direct_kernel_count"], g["pid"], g["tid"]) == \
            (name, cat, "1", str(pid), str(tid))
        check_number(g["total_direct_kernel_time"], dur)
        if latency is None:
            assert g["GPU_kernel_launch_latency"] == ""
        else:
            check_number(g["GPU_kernel_launch_latency"], latency)


def numpy_sum(v):
    """numpy 1.24's add.reduce of a float array: pairwise over every element
    (blocks of 8 accumulators, halves above 128 elements, a loop below 8)."""
    n = len(v)
    if n < 8:
        r = -0.0
        for x in v:
            r += x
        return r
    if n <= 128:
        r = list(v[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += v[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for x in v[i:]:
            res += x
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return numpy_sum(v[:n2]) + numpy_sum(v[n2:])


def check_summaries(by_name, by_category, expect):
    """Both summaries to the last digit, with pandas' arithmetic: groupby
    (sorted keys, Kahan sums in row order), sort_values descending, Series.sum
    (numpy's pairwise sum), cumsum; "time ms per gpu" divides by the pids."""
    check_summary(by_name, expect, 0)
    check_summary(by_category, expect, 1)


def check_xla_summary(text, expect):
    """TraceLens's xla_summary: the "Uncategorized Events/XLA" kernels, named
    without their digits, summarised by name."""
    xla = [("".join(c for c in x[0] if not c.isdigit()),) + tuple(x[1:])
           for x in expect if x[1] == "Uncategorized Events/XLA"]
    check_summary(text, xla, 0)


def check_summary(text, expect, key):
    npids = len({x[3] for x in expect})
    groups = {}
    for x in expect:
        s, c, n = groups.get(x[key], (0.0, 0.0, 0))
        y = x[2] - c
        t = s + y
        groups[x[key]] = (t, t - s - y, n + 1)
    keys = sorted(groups)
    sums = [groups[k][0] for k in keys]
    # Ties among many groups would need numpy's introsort order.
    assert len(keys) <= 17 or len(set(sums)) == len(sums)
    order = sorted(range(len(keys)), key=lambda i: -sums[i])
    ms = [sums[i] / 1000 for i in order]
    total = numpy_sum(ms)
    got = rows(text)
    assert len(got) == len(keys)
    cum = 0.0
    for pos, (g, i) in enumerate(zip(got, order)):
        pct = ms[pos] / total * 100
        cum = pct if pos == 0 else cum + pct
        assert g["name" if key == 0 else "op category"] == keys[i]
        assert int(g["Count"]) == groups[keys[i]][2]
        if key == 0:
            check_number(g["total_direct_kernel_time_sum"], sums[i])
        check_number(g["total_direct_kernel_time_ms"], ms[pos])
        check_number(g["Percentage (%)"], pct)
        check_number(g["Cumulative Percentage (%)"], cum)
        check_number(g["time ms per gpu"], ms[pos] / npids)


@pytest.mark.parametrize("run", ["jax_conv_rocm/2025_01_01_00_00_00", "jax08_conv_rocm/s1",
                                 "jax08_gemm_rocm/s1", "jax08_elementwise_rocm/s1"])
def test_kernel_launchers_bruteforce(corpus, xcat, xplane_pb2, run):
    d = corpus / run.split("/")[0] / "plugins" / "profile" / run.split("/")[1]
    (pb,) = sorted(d.glob("*.xplane.pb"))
    expect = launchers_expect(xplane_pb2, pb)
    assert expect
    check_launchers(xcat(corpus, run + "/kernel_launchers.csv"), expect)
    check_summaries(xcat(corpus, run + "/kernel_launchers_summary.csv"),
                    xcat(corpus, run + "/kernel_launchers_summary_by_category.csv"), expect)
    check_xla_summary(xcat(corpus, run + "/xla_summary.csv"), expect)


def test_kernel_launchers_synth(tmp_path, synth, xcat, xplane_pb2):
    logdir = synth(tmp_path / "logs", "--size-mb", "1", "--seed", "7", "--gpus", "3")
    (pb,) = sorted(logdir.rglob("*.xplane.pb"))
    run = pb.parent.name
    expect = launchers_expect(xplane_pb2, pb)
    # Quoted names, several categories and launch latencies all occur.
    assert any("," in x[0] for x in expect)
    assert len({x[1] for x in expect}) >= 2
    assert sum(x[5] is not None for x in expect) > len(expect) // 2
    check_launchers(xcat(logdir, run + "/kernel_launchers.csv"), expect)
    # The summaries: counts and sums per name / category (sums to 1e-9 ms).
    for key, f in ((0, "kernel_launchers_summary.csv"),
                   (1, "kernel_launchers_summary_by_category.csv")):
        want = {}
        for x in expect:
            n, t = want.get(x[key], (0, 0.0))
            want[x[key]] = (n + 1, t + x[2])
        got = rows(xcat(logdir, run + "/" + f))
        col = "name" if key == 0 else "op category"
        assert {g[col] for g in got} == set(want)
        for g in got:
            assert int(g["Count"]) == want[g[col]][0]
            assert abs(float(g["total_direct_kernel_time_ms"]) - want[g[col]][1] / 1e3) < 1e-9
        ms = [float(g["total_direct_kernel_time_ms"]) for g in got]
        assert ms == sorted(ms, reverse=True)
    check_summaries(xcat(logdir, run + "/kernel_launchers_summary.csv"),
                    xcat(logdir, run + "/kernel_launchers_summary_by_category.csv"), expect)


# --- brute force over PyTorch traces ------------------------------------------

def pytorch_expect(path):
    events = json.loads(gzip.open(path).read())["traceEvents"]
    gpu_cats = {"kernel", "gpu_memcpy", "gpu_memset"}
    rt_cats = {"cuda_runtime", "cuda_driver"}
    key = "External id"
    for e in events:
        if e.get("cat") in rt_cats and "launch" in e.get("name", "").lower():
            key = "correlation" if "correlation" in e.get("args", {}) else "External id"
            break
    starts, ends, by_ptl = {}, {}, {}
    for e in events:
        if e.get("cat") == "ac2g":
            (starts if e["ph"] == "s" else ends if e["ph"] == "f" else {})[e.get("id")] = e
            continue
        a = e.get("args")
        if a and a.get(key) is not None and "pid" in e and "tid" in e:
            by_ptl[(e["pid"], e["tid"], a[key])] = e
    linked = set()
    for e in events:
        if e.get("cat") not in rt_cats:
            continue
        link = e.get("args", {}).get(key)
        if e.get("name") in ("cudaGraphLaunch", "hipGraphLaunch"):
            linked.update(id(g) for g in events if g.get("cat") in gpu_cats
                          and link is not None and g.get("args", {}).get(key) == link)
            continue
        if link in starts and link in ends:
            f = ends[link]
            g = by_ptl.get((f.get("pid"), f.get("tid"), f.get("id")))
            if g is not None and g.get("cat") in gpu_cats:
                linked.add(id(g))
    evs = []
    for e in events:
        if id(e) not in linked:
            continue
        name, cat = e.get("name", ""), e["cat"]
        low = name.lower()
        if cat == "gpu_memcpy" or (cat == "kernel" and (
                name.startswith(("MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST",
                                 "MEMORY_COPY_DEVICE_TO_DEVICE", "__amd_rocclr_copyBuffer"))
                and not name.startswith("__amd_rocclr_copyBufferX"))):
            cls = "memcpy"
        elif cat == "kernel" and name.startswith("__amd_rocclr_fillBuffer"):
            cls = "comp"
        elif "nccl" in low or "rccl" in low or "cross_device_reduce" in low:
            cls = "comm"
        else:
            cls = "comp"
        evs.append((e["ts"], e["ts"] + e["dur"], cls))
    return {k: v / 1e3 for k, v in sweep(evs).items()}, len(evs)


@pytest.mark.parametrize("name", ["h100_bert_small", "h100_falconsai_vit", "mi300_qwen_0.5b",
                                  "b200_eager"])
def test_pytorch_bruteforce(corpus, xcat, name):
    expect, n = pytorch_expect(corpus / "pytorch" / name / f"{name}.pt.trace.json.gz")
    assert n > 0
    got = {x["type"]: float(x["time ms"]) for x in rows(xcat(corpus, f"pytorch/{name}/gpu_timeline.csv"))}
    for k in METRICS:
        assert abs(got[k] - expect[k]) < 1e-6, (k, got[k], expect[k])
    doc = json.loads(xcat(corpus, f"pytorch/{name}/gpu_timeline.json"))
    assert doc["devices"][0]["events"] == n
    assert doc["devices"][0]["gpu_pid"] is None


DEVICES_HEADER = ("host,device,gpu_pid,events,computation_ms,exposed_comm_ms,exposed_memcpy_ms,"
                  "busy_ms,idle_ms,total_ms,total_comm_ms,total_memcpy_ms,busy_pct,idle_pct")


def test_gpu_devices_csv_one_header_for_every_run(corpus, xcat, xplane_pb2):
    """gpu_devices.csv: one header whatever the run (single-host JAX, two-host
    TensorFlow, PyTorch), one row per GPU, numbers equal to the brute-force
    sweeps to 6 decimals, written as integers when whole."""
    cases = []
    for run in ("jax_conv_rocm/2025_01_01_00_00_00", "tf_gpu_multiworker/s1"):
        d = corpus / run.split("/")[0] / "plugins" / "profile" / run.split("/")[1]
        expect = {}
        for pb in sorted(d.glob("*.xplane.pb")):
            host = pb.name[: -len(".xplane.pb")]
            for pid, m in xplane_expect(xplane_pb2, pb).items():
                expect[(host, str(pid))] = m
        cases.append((run, expect))
    name = "h100_bert_small"
    m, _ = pytorch_expect(corpus / "pytorch" / name / f"{name}.pt.trace.json.gz")
    cases.append((f"pytorch/{name}", {(name, ""): m}))
    for run, expect in cases:
        text = xcat(corpus, run + "/gpu_devices.csv").decode()
        assert text.splitlines()[0] == DEVICES_HEADER, run
        got = rows(text)
        assert len(got) == len(expect), run
        for x in got:
            want = expect[(x["host"], x["gpu_pid"])]
            assert x["device"], x
            for k in METRICS:
                col = k[: -len("_time")] + "_ms"
                assert abs(float(x[col]) - want[k]) <= 1e-6, (run, col, x[col], want[k])
                if want[k] == 0:
                    assert x[col] == "0", x
            total = want["total_time"]
            assert abs(float(x["busy_pct"]) - want["busy_time"] / total * 100) <= 1e-6
            assert abs(float(x["busy_pct"]) + float(x["idle_pct"]) - 100) <= 2e-6
            assert int(x["events"]) > 0


# TraceLens's published gpu_timeline.csv of the corpus's PyTorch traces
# (AMD-AGI/TraceLens 171dd74, tests/traces/{h100,mi300}/<model>_perf_report_csvs/,
# written by pandas' to_csv: Python's repr, 17 digits where 16 do not read back).
REF_PT_TIMELINES = {
    "h100_bert_small": """type,time ms,percent
computation_time,0.30719775390625,7.86109300556382
exposed_comm_time,0.0,0.0
exposed_memcpy_time,0.002239990234375,0.057320639034849144
busy_time,0.309437744140625,7.918413644598668
idle_time,3.59838720703125,92.08158635540133
total_time,3.907824951171875,100.0
total_comm_time,0.0,0.0
total_memcpy_time,0.002239990234375,0.057320639034849144
""",
    "h100_falconsai_vit": """type,time ms,percent
computation_time,1.225308837890625,16.208123326887694
exposed_comm_time,0.0,0.0
exposed_memcpy_time,0.0,0.0
busy_time,1.225308837890625,16.208123326887694
idle_time,6.33453515625,83.79187667311231
total_time,7.559843994140625,100.0
total_comm_time,0.0,0.0
total_memcpy_time,0.0,0.0
""",
    "mi300_qwen_0.5b": """type,time ms,percent
computation_time,29.74316796875,89.77353106616364
exposed_comm_time,0.0,0.0
exposed_memcpy_time,0.000759765625,0.002293193617122528
busy_time,29.743927734375,89.77582425978076
idle_time,3.38740576171875,10.224175740219245
total_time,33.13133349609375,100.0
total_comm_time,0.0,0.0
total_memcpy_time,0.000759765625,0.002293193617122528
""",
}


@pytest.mark.parametrize("name", sorted(REF_PT_TIMELINES))
def test_pytorch_reference_gpu_timeline(corpus, xcat, name):
    """Byte for byte TraceLens's table: the same doubles, summed in the same
    order, spelled as Python spells them."""
    assert xcat(corpus, f"pytorch/{name}/gpu_timeline.csv").decode() == REF_PT_TIMELINES[name]


def test_pytorch_many_graph_launches(tmp_path, xcat):
    """A generated trace with thousands of CUDA graph launches (each links
    every kernel of its correlation id, before or after it in the file),
    relaunches, plain launches and kernels nobody launched."""
    events, linked, t, corr = [], [], 0.0, 0
    for i in range(4000):
        corr += 1
        kernels = []
        for k in range(1 + i % 3):
            t += 3.0
            kernels.append({"ph": "X", "cat": "kernel", "name": f"graph_kernel_{k}", "pid": 0,
                            "tid": 7, "ts": t, "dur": 1.0 + (i % 5) * 0.25,
                            "args": {"correlation": corr}})
        launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1,
                  "tid": 2, "ts": t - 10, "dur": 1, "args": {"correlation": corr}}
        # Half of the graphs list a kernel before their launch.
        events += kernels[:1] + [launch] + kernels[1:] if i % 2 else [launch] + kernels
        linked += kernels
        if i % 10 == 0:  # a relaunch of an earlier graph links nothing new
            events.append(dict(launch, ts=t))
        if i % 7 == 0:  # a kernel that no launch reaches
            t += 3.0
            events.append({"ph": "X", "cat": "kernel", "name": "stray", "pid": 0, "tid": 7,
                           "ts": t, "dur": 1.0, "args": {"correlation": 10 ** 6 + i}})
        if i % 5 == 0:  # a plain launch with its flow pair
            corr += 1
            t += 3.0
            k = {"ph": "X", "cat": "kernel", "name": "plain", "pid": 0, "tid": 7, "ts": t,
                 "dur": 0.5, "args": {"correlation": corr}}
            events += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                        "tid": 2, "ts": t - 2, "dur": 1, "args": {"correlation": corr}},
                       {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1,
                        "tid": 2, "ts": t - 2},
                       {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0,
                        "tid": 7, "ts": t, "bp": "e"}, k]
            linked.append(k)
    run = tmp_path / "logs" / "graphs"
    run.mkdir(parents=True)
    (run / "worker.pt.trace.json").write_text(json.dumps({"traceEvents": events}))
    logdir = tmp_path / "logs"
    doc = json.loads(xcat(logdir, "graphs/gpu_timeline.json"))
    assert doc["devices"][0]["events"] == len(linked) > 8000
    got = {x["type"]: float(x["time ms"]) for x in rows(xcat(logdir, "graphs/gpu_timeline.csv"))}
    # The kernels never overlap: busy time is the sum of the linked durations.
    busy = sum(k["dur"] for k in linked)
    total = max(k["ts"] + k["dur"] for k in linked) - min(k["ts"] for k in linked)
    assert abs(got["computation_time"] - busy / 1e3) < 1e-9
    assert abs(got["busy_time"] - busy / 1e3) < 1e-9
    assert abs(got["total_time"] - total / 1e3) < 1e-9


def test_errors(corpus, xcat):
    r = xcat(corpus, "pytorch/h100_bert_small/kernel_launchers.csv?bogus=1", check=False)
    assert r.returncode != 0
    r = xcat(corpus, JAX_CONV + "/gpu_timeline.csv?bogus=1", check=False)
    assert r.returncode != 0


def test_mount_matches_cli(corpus, mount, xcat):
    mnt = mount(corpus)
    for f in ("gpu_timeline.csv", "kernel_launchers_summary.csv"):
        assert (mnt / JAX_CONV / f).read_bytes() == xcat(corpus, f"{JAX_CONV}/{f}")
    assert published((mnt / JAX_CONV / "gpu_timeline.csv").read_text()) == REF_TIMELINE
