"""memory_profile.json and memory_profile.csv: XProf's allocator timeline.

Expected values come from a port of xprof/convert/xplane_to_memory_profile.cc
written here in Python over the events python3-protobuf decodes (not the C
reader), and from hand-built profiles whose peak, live allocations and
special rows are worked out in the comments. The JSON layout (camelCase
keys in field order, int64 quoted, every field printed) is XProf 2.23.2's
recorded output for its TPU demo (Locamage/xprof-rs tests/data).
"""
import csv
import io
import json

import pytest

import xplane_py

DTYPES = ["INVALID", "float", "double", "int32", "uint8", "int16", "int8", "string",
          "complex64", "int64", "bool", "qint8", "quint8", "qint32", "bfloat16", "qint16",
          "quint16", "uint16", "complex128", "half", "resource", "variant", "uint32", "uint64",
          "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
          "float8_e5m2fnuz", "int4", "uint4"]

KEYS_STATS = ["stackReservedBytes", "heapAllocatedBytes", "freeMemoryBytes", "fragmentation",
              "peakBytesInUse"]
KEYS_META = ["memoryActivity", "requestedBytes", "allocationBytes", "address", "tfOpName",
             "stepId", "regionType", "dataType", "tensorShape"]


def dtype_string(v):
    v = (v + 2**31) % 2**32 - 2**31
    ref = v > 100
    base = v - 100 if ref else v
    text = DTYPES[base] if 0 <= base < len(DTYPES) else f"unknown dtype enum ({base})"
    return text + ("_ref" if ref else "")


def stat_value(sm, st):
    kind = st.WhichOneof("value")
    return kind, (sm.get(st.ref_value, "") if kind == "ref_value" else getattr(st, kind))


def snapshots_of(space, groups=None):
    """Allocator -> snapshots in event order, and the summaries, as
    GenerateMemoryProfile builds them. groups: (line index, event index) ->
    group id for files whose grouping the test knows."""
    host = next((p for p in space.planes if p.name == "/host:CPU"), None)
    if host is None:
        return None
    em = {m.key: m.value.name for m in host.event_metadata}
    sm = {m.key: m.value.name for m in host.stat_metadata}
    per = {}
    for li, line in enumerate(host.lines):
        for ei, e in enumerate(line.events):
            name = em.get(e.metadata_id, "")
            if name not in ("MemoryAllocation", "MemoryDeallocation"):
                continue
            stats = {"stackReservedBytes": 0, "heapAllocatedBytes": 0, "freeMemoryBytes": 0,
                     "fragmentation": 0.0, "peakBytesInUse": 0}
            meta = {"memoryActivity": "ALLOCATION" if name == "MemoryAllocation" else
                    "DEALLOCATION", "requestedBytes": 0, "allocationBytes": 0, "address": 0,
                    "tfOpName": "", "stepId": -1, "regionType": "", "dataType": "",
                    "tensorShape": ""}
            mid = ""
            for st in e.stats:
                n = sm.get(st.metadata_id)
                kind, v = stat_value(sm, st)
                iv = v if kind == "int64_value" else 0
                sv = v if kind in ("str_value", "ref_value") else ""
                if n in ("index_on_host", "device_ordinal"):
                    mid = str(iv)
                elif n == "allocator_name":
                    mid = sv
                elif n == "bytes_reserved":
                    stats["stackReservedBytes"] = iv
                elif n == "bytes_allocated":
                    stats["heapAllocatedBytes"] = iv
                elif n == "bytes_available":
                    stats["freeMemoryBytes"] = iv
                elif n == "fragmentation":
                    stats["fragmentation"] = v if kind == "double_value" else 0.0
                elif n == "peak_bytes_in_use":
                    stats["peakBytesInUse"] = iv
                elif n == "requested_bytes":
                    meta["requestedBytes"] = iv
                elif n == "allocation_bytes":
                    meta["allocationBytes"] = iv
                elif n == "addr":
                    meta["address"] = iv % 2**64
                elif n == "tf_op":
                    meta["tfOpName"] = sv
                elif n == "group_id":
                    meta["stepId"] = iv
                elif n == "region_type":
                    meta["regionType"] = sv
                elif n == "data_type":
                    meta["dataType"] = dtype_string(iv)
                elif n == "shape":
                    meta["tensorShape"] = sv
            if groups is not None and (li, ei) in groups:
                meta["stepId"] = groups[(li, ei)]
            a = per.setdefault(mid, {"snaps": [], "summary": {
                "peakBytesUsageLifetime": 0, "peakStats": dict.fromkeys(KEYS_STATS, 0),
                "peakStatsTimePs": 0, "memoryCapacity": 0}})
            s = a["summary"]
            s["peakBytesUsageLifetime"] = stats["peakBytesInUse"]
            used = stats["stackReservedBytes"] + stats["heapAllocatedBytes"]
            if used >= s["peakStats"]["peakBytesInUse"]:
                s["peakStats"] = dict(stats, peakBytesInUse=used)
                s["peakStatsTimePs"] = e.offset_ps
                s["memoryCapacity"] = used + stats["freeMemoryBytes"]
            a["snaps"].append({"timeOffsetPs": e.offset_ps, "aggregationStats": stats,
                               "activityMetadata": meta})
    return per


def process(a, max_snapshots=1000):
    """ProcessMemoryProfileProto for one allocator."""
    snaps = sorted(a["snaps"], key=lambda s: s["timeOffsetPs"])  # stable: file order on ties
    last = -1
    for s in snaps:
        m = s["activityMetadata"]
        if m["stepId"] == -1:
            m["stepId"] = last + 1
        else:
            last = m["stepId"]
    at = {}
    for s in snaps:
        m = s["activityMetadata"]
        if m["memoryActivity"] == "DEALLOCATION":
            if m["address"] in at:
                src = at.pop(m["address"])
                for k in ("tfOpName", "regionType", "dataType", "tensorShape"):
                    m[k] = src[k]
        elif m["address"] not in at:
            at[m["address"]] = m
    used = lambda s: s["aggregationStats"]["stackReservedBytes"] + \
        s["aggregationStats"]["heapAllocatedBytes"]
    n = len(snaps)
    if n > max_snapshots:
        w = n // max_snapshots
        c1 = max_snapshots * (w + 1) - n
        sampled, start = [], 0
        for box in range(max_snapshots):
            width = w if box < c1 else w + 1
            sampled.append(max(snaps[start:start + width], key=used))  # first of equal maxima
            start += width
    else:
        sampled = list(snaps)
    summ = a["summary"]
    peak = summ["peakStats"]
    step = 0
    for s in snaps:
        if used(s) == peak["peakBytesInUse"]:
            step = s["activityMetadata"]["stepId"]
    unmapped, unmapped_dealloc, live = peak["heapAllocatedBytes"], 0, {}
    for i, s in enumerate(snaps):
        m = s["activityMetadata"]
        if s["timeOffsetPs"] > summ["peakStatsTimePs"]:
            break
        if m["stepId"] != step:
            continue
        if m["memoryActivity"] == "ALLOCATION":
            live[m["address"]] = i
            unmapped -= m["allocationBytes"]
        else:
            if m["address"] in live:
                del live[m["address"]]
            else:
                unmapped_dealloc += m["allocationBytes"]
            unmapped += m["allocationBytes"]
    unmapped -= unmapped_dealloc
    rows = [(i, snaps[i]["activityMetadata"]) for i in sorted(live.values())]
    special = []
    if unmapped > 0:
        special.append(("unused preallocated device memory", "persist/dynamic", unmapped))
    if peak["stackReservedBytes"] > 0:
        special.append(("stack", "stack", peak["stackReservedBytes"]))
    specials = []
    for k, (op, region, b) in enumerate(special):
        m = {"memoryActivity": "ALLOCATION", "requestedBytes": b, "allocationBytes": b,
             "address": 0, "tfOpName": op, "stepId": step, "regionType": region,
             "dataType": "INVALID", "tensorShape": "unknown"}
        specials.append(m)
        rows.append((-k - 1, m))
    key = lambda r: (-r[1]["allocationBytes"], -r[1]["requestedBytes"], r[1]["tfOpName"].encode(),
                     r[1]["regionType"].encode(), r[1]["dataType"].encode(),
                     r[1]["tensorShape"].encode())
    rows.sort(key=lambda r: (key(r), r[0]))
    active, kept, i = [], [], 0
    while i < len(rows):
        j = i
        while j + 1 < len(rows) and key(rows[j + 1]) == key(rows[i]):
            j += 1
        idx = rows[i][0]
        if idx < 0:
            active.append({"snapshotIndex": idx, "specialIndex": -idx - 1,
                           "numOccurrences": j - i + 1})
        else:
            active.append({"snapshotIndex": len(kept), "specialIndex": -1,
                           "numOccurrences": j - i + 1})
            kept.append(snaps[idx])
        i = j + 1
    return {"memoryProfileSnapshots": kept, "profileSummary": summ, "activeAllocations": active,
            "specialAllocations": specials, "sampledTimelineSnapshots": sampled}


def expected(space, groups=None, max_snapshots=1000):
    per = snapshots_of(space, groups)
    if per is None:
        return None
    return {"memoryProfilePerAllocator": {k: process(per[k], max_snapshots) for k in sorted(per)},
            "numHosts": 1, "memoryIds": sorted(per), "version": 1, "hloModules": []}


def normalized(doc):
    """Our JSON with int64 strings read back as numbers, for comparison."""
    ints = {"timeOffsetPs", "stackReservedBytes", "heapAllocatedBytes", "freeMemoryBytes",
            "peakBytesInUse", "requestedBytes", "allocationBytes", "address", "stepId",
            "peakBytesUsageLifetime", "peakStatsTimePs", "memoryCapacity", "snapshotIndex",
            "specialIndex", "numOccurrences", "startTimePs", "endTimePs", "id"}

    def walk(x, k=None):
        if isinstance(x, dict):
            return {kk: walk(v, kk) for kk, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        if k in ints:
            assert isinstance(x, str), (k, x)  # protobuf JSON quotes 64-bit integers
            return int(x)
        return x
    return walk(doc)


def check_layout(doc):
    assert list(doc) == ["memoryProfilePerAllocator", "numHosts", "memoryIds", "version",
                         "hloModules"]
    for a in doc["memoryProfilePerAllocator"].values():
        assert list(a) == ["memoryProfileSnapshots", "profileSummary", "activeAllocations",
                           "specialAllocations", "sampledTimelineSnapshots"]
        for s in a["memoryProfileSnapshots"] + a["sampledTimelineSnapshots"]:
            assert list(s) == ["timeOffsetPs", "aggregationStats", "activityMetadata"]
            assert list(s["aggregationStats"]) == KEYS_STATS
            assert list(s["activityMetadata"]) == KEYS_META
        assert list(a["profileSummary"]) == ["peakBytesUsageLifetime", "peakStats",
                                             "peakStatsTimePs", "memoryCapacity"]


JAX_RUNS = ["jax_conv_rocm/2025_01_01_00_00_00", "jax08_conv_rocm/s1", "jax08_gemm_rocm/s1",
            "jax08_elementwise_rocm/s1"]


@pytest.mark.parametrize("run", JAX_RUNS)
def test_corpus_jax_runs_match_the_port(corpus, xcat, run):
    """These JAX runs have no step groups on their allocator events: every
    step id is the fill-in of XProf's UpdateStepId."""
    tb, r = run.split("/")
    (pb,) = sorted((corpus / tb / "plugins" / "profile" / r).glob("*.xplane.pb"))
    doc = json.loads(xcat(corpus, run + "/memory_profile.json"))
    check_layout(doc)
    want = expected(xplane_py.load(pb))
    assert normalized(doc) == want
    assert len(doc["memoryIds"]) >= 2


def test_tf_hosts_match_the_port(corpus, xcat):
    """A TensorFlow two-host run: one host each, and the run-level file
    refuses without ?host= as XProf does. Step ids of this run come from the
    grouping (tested in test_tpu_grouping and test_op_stats); the port takes
    them from our sampled timeline, which holds every snapshot here, and
    checks all the rest."""
    run = "tf_gpu_multiworker/s1"
    d = corpus / "tf_gpu_multiworker" / "plugins" / "profile" / "s1"
    r = xcat(corpus, run + "/memory_profile.json", check=False)
    assert r.returncode == 2 and b"takes one host" in r.stderr
    for pb in sorted(d.glob("*.xplane.pb")):
        host = pb.name[: -len(".xplane.pb")]
        doc = json.loads(xcat(corpus, f"{run}/hosts/{host}/memory_profile.json"))
        assert xcat(corpus, f"{run}/memory_profile.json?host={host}") == \
            xcat(corpus, f"{run}/hosts/{host}/memory_profile.json")
        check_layout(doc)
        got = normalized(doc)
        space = xplane_py.load(pb)
        per = snapshots_of(space)
        steps = {}
        for k, a in per.items():
            timeline = got["memoryProfilePerAllocator"][k]["sampledTimelineSnapshots"]
            assert len(timeline) == len(a["snaps"]) < 1000
            order = sorted(range(len(a["snaps"])), key=lambda i: a["snaps"][i]["timeOffsetPs"])
            for i, s in zip(order, timeline):
                a["snaps"][i]["activityMetadata"]["stepId"] = s["activityMetadata"]["stepId"]
            steps[k] = a
        want = {"memoryProfilePerAllocator": {k: process(steps[k]) for k in sorted(steps)},
                "numHosts": 1, "memoryIds": sorted(steps), "version": 1, "hloModules": []}
        assert got == want
        assert any(s["tfOpName"] == "unused preallocated device memory"
                   for a in got["memoryProfilePerAllocator"].values()
                   for s in a["specialAllocations"])


# ---- hand-built profiles ---------------------------------------------------------

def build_space(events, lines=1):
    """An XSpace with a /host:CPU plane whose events are
    (line, offset_ps, name, {stat: value})."""
    pb2 = xplane_py.pb2()
    space = pb2.XSpace()
    plane = space.planes.add()
    plane.id = 0
    plane.name = "/host:CPU"
    names, stats = {}, {}

    def meta_id(table, name, proto):
        if name not in table:
            table[name] = len(table) + 1
            entry = proto.add()
            entry.key = entry.value.id = table[name]
            entry.value.name = name
        return table[name]
    ls = []
    for i in range(lines):
        line = plane.lines.add()
        line.id = i + 1
        line.name = f"thread{i}"
        line.timestamp_ns = 1000 * (i + 1)
        ls.append(line)
    for li, off, name, st in events:
        e = ls[li].events.add()
        e.metadata_id = meta_id(names, name, plane.event_metadata)
        e.offset_ps = off
        for k, v in st.items():
            s = e.stats.add()
            s.metadata_id = meta_id(stats, k, plane.stat_metadata)
            if isinstance(v, float):
                s.double_value = v
            elif isinstance(v, str):
                s.str_value = v
            else:
                s.int64_value = v
    return space


def alloc(off, addr, nbytes, heap, op="op", line=0, **kw):
    st = {"allocator_name": "GPU_0_bfc", "bytes_reserved": kw.get("stack", 0),
          "bytes_allocated": heap, "bytes_available": 1000 - heap, "fragmentation": 0.25,
          "peak_bytes_in_use": kw.get("peak", heap), "requested_bytes": nbytes,
          "allocation_bytes": nbytes, "addr": addr, "tf_op": op, "region_type": "output",
          "data_type": kw.get("dtype", 1), "shape": kw.get("shape", "[4]")}
    return (line, off, "MemoryAllocation", st)


def free(off, addr, nbytes, heap, line=0):
    return (line, off, "MemoryDeallocation",
            {"allocator_name": "GPU_0_bfc", "bytes_reserved": 0, "bytes_allocated": heap,
             "bytes_available": 1000 - heap, "peak_bytes_in_use": 300,
             "allocation_bytes": nbytes, "addr": addr})


def write_run(tmp_path, space, run="r1"):
    d = tmp_path / "logs" / "plugins" / "profile" / run
    d.mkdir(parents=True)
    (d / "h.xplane.pb").write_bytes(space.SerializeToString())
    return tmp_path / "logs"


def test_hand_built_peak_and_live_allocations(tmp_path, xcat):
    """Heap 100 preallocated (unmapped) + a 100 at 1 + b 100 at 2 -> heap 300
    (the peak, at t=30), then b freed and c 50 allocated. Live at the peak:
    a and b (100 each, equal rows merged: 2 occurrences of op "x"), and the
    unused preallocated 300 - 100 - 100 = 100; a stack of 8 reserved."""
    events = [alloc(10, 1, 100, 200, op="x", stack=8), alloc(30, 2, 100, 300, op="x", stack=8),
              free(40, 2, 100, 200), alloc(50, 3, 50, 250, op="y", dtype=101)]
    logdir = write_run(tmp_path, build_space(events))
    doc = normalized(json.loads(xcat(logdir, "r1/memory_profile.json")))
    a = doc["memoryProfilePerAllocator"]["GPU_0_bfc"]
    assert a["profileSummary"]["peakStatsTimePs"] == 30
    assert a["profileSummary"]["peakStats"]["peakBytesInUse"] == 308
    assert a["profileSummary"]["memoryCapacity"] == 308 + 700
    assert a["activeAllocations"] == [
        {"snapshotIndex": -1, "specialIndex": 0, "numOccurrences": 1},   # 100 unmapped
        {"snapshotIndex": 0, "specialIndex": -1, "numOccurrences": 2},   # x, x
        {"snapshotIndex": -2, "specialIndex": 1, "numOccurrences": 1}]   # stack 8
    assert [(s["tfOpName"], s["allocationBytes"]) for s in a["specialAllocations"]] == [
        ("unused preallocated device memory", 100), ("stack", 8)]
    # the deallocation takes its allocation's op, region, type and shape
    dealloc = a["sampledTimelineSnapshots"][2]["activityMetadata"]
    assert (dealloc["memoryActivity"], dealloc["tfOpName"], dealloc["dataType"],
            dealloc["tensorShape"]) == ("DEALLOCATION", "x", "float", "[4]")
    assert a["sampledTimelineSnapshots"][3]["activityMetadata"]["dataType"] == "float_ref"
    assert doc == expected(build_space(events))
    rows = list(csv.DictReader(io.StringIO(xcat(logdir, "r1/memory_profile.csv").decode())))
    assert [(r["op_name"], r["occurrences"], r["total_bytes"]) for r in rows] == [
        ("unused preallocated device memory", "1", "100"), ("x", "2", "200"), ("stack", "1", "8")]


def test_sampled_timeline_keeps_each_box_maximum(tmp_path, xcat):
    """2,500 snapshots sample to 1,000 boxes: 500 of width 2, then 500 of
    width 3, each giving its largest heap."""
    events = [alloc(10 * (i + 1), i + 1, 1, (i * 7919) % 997) for i in range(2500)]
    space = build_space(events)
    logdir = write_run(tmp_path, space)
    doc = normalized(json.loads(xcat(logdir, "r1/memory_profile.json")))
    timeline = doc["memoryProfilePerAllocator"]["GPU_0_bfc"]["sampledTimelineSnapshots"]
    assert len(timeline) == 1000
    heaps = [(i * 7919) % 997 for i in range(2500)]
    want = [max(heaps[2 * b:2 * b + 2]) for b in range(500)] + \
        [max(heaps[1000 + 3 * b:1000 + 3 * b + 3]) for b in range(500)]
    assert [s["aggregationStats"]["heapAllocatedBytes"] for s in timeline] == want
    assert doc == expected(space)


def test_hostile_allocator_events_answer(tmp_path, xcat):
    """A deallocation with no allocation, negative sizes, an unknown data
    type, equal times on two lines: an answer, equal to the port's."""
    events = [free(5, 99, 40, 0), alloc(10, 1, -5, -5, dtype=77),
              alloc(10, 2, 2**62, 2**62, line=1, dtype=-3), free(20, 1, -5, 0)]
    space = build_space(events, lines=2)
    logdir = write_run(tmp_path, space)
    doc = normalized(json.loads(xcat(logdir, "r1/memory_profile.json")))
    assert doc == expected(space)
    types = {s["activityMetadata"]["dataType"]
             for s in doc["memoryProfilePerAllocator"]["GPU_0_bfc"]["sampledTimelineSnapshots"]}
    assert {"unknown dtype enum (77)", "unknown dtype enum (-3)"} <= types


def test_no_host_plane_answers_empty(tmp_path, xcat):
    pb2 = xplane_py.pb2()
    space = pb2.XSpace()
    space.planes.add().name = "/device:GPU:0"
    logdir = write_run(tmp_path, space)
    assert xcat(logdir, "r1/memory_profile.json") == b""


def test_bad_host_option(corpus, xcat):
    r = xcat(corpus, "tf_gpu_multiworker/s1/memory_profile.json?host=nope", check=False)
    assert r.returncode == 2 and b"host=nope: no such host" in r.stderr


def test_mount_serves_the_same(corpus, mount, xcat):
    mnt = mount(corpus)
    run = JAX_RUNS[0]
    assert (mnt / run / "memory_profile.json").read_bytes() == xcat(corpus,
                                                                    run + "/memory_profile.json")
    assert "memory_profile" in json.loads((mnt / run / "tools.json").read_text())
