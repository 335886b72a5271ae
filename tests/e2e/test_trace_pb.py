"""trace_viewer.json?format=pb and trace_viewer_legacy.json?format=pb end to end.

The answer is a zstd frame of XProf's xprof.TraceDataResponse. It is read
back here with the zstd CLI and a small protobuf wire decoder written for
this test, then checked against the JSON answer of the same query (same
tracks, events, times, names, group ids, uids, flows, processes and
threads), and on a hand-made xplane against the values written into it
(counter values by type, async channels, flow categories).
"""
import gzip
import json
import struct
import subprocess

import pytest

import xplane_py

CONV = "jax_conv_rocm/2025_01_01_00_00_00"
MULTI = "tf_gpu_multiworker/s1"
MASK32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1


# --- reading the answer --------------------------------------------------------

def unzstd(data):
    return subprocess.run(["zstd", "-dcq"], input=data, capture_output=True,
                          check=True).stdout


def frame_content_size(data):
    """The Frame_Content_Size of a zstd frame header (RFC 8878 3.1.1.1)."""
    assert data[:4] == b"\x28\xb5\x2f\xfd"
    desc = data[4]
    fcs_flag, single = desc >> 6, (desc >> 5) & 1
    dict_size = [0, 1, 2, 4][desc & 3]
    pos = 5 + (0 if single else 1) + dict_size
    size = {0: 1 if single else 0, 1: 2, 2: 4, 3: 8}[fcs_flag]
    if size == 0:
        return None
    value = int.from_bytes(data[pos:pos + size], "little")
    return value + 256 if size == 2 else value


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of a message, checking field-number order."""
    i, last, out = 0, 0, []
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        assert field >= last, f"field {field} after {last}"
        last = field
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {wire}")
        out.append((field, wire, v))
    assert i == len(b)
    return out


def packed(b):
    out, i = [], 0
    while i < len(b):
        v, i = varint(b, i)
        out.append(v)
    return out


def decode_event_meta(b):
    m = {}
    for f, w, v in fields(b):
        assert f not in m, "repeated scalar in TraceEventMetadata"
        if f == 5:
            assert w == 1
            m["double"] = struct.unpack("<d", v)[0]
        elif f == 6:
            m["uint"] = v
        else:
            assert w == 0 and v != 0, "proto3 writes no zero scalar"
            m[{1: "flow_id", 2: "category", 3: "group", 4: "serial"}[f]] = v
    return m


def decode_series(b):
    s = {"meta": None, "deltas": None, "durations": None, "name_refs": None, "events": []}
    for f, w, v in fields(b):
        if f == 1:
            s["meta"] = {{1: "pid", 2: "tid", 3: "name_ref"}[g]: x for g, _, x in fields(v)}
        elif f in (2, 3, 4):
            assert w == 2, "repeated scalars are packed"
            s[{2: "deltas", 3: "durations", 4: "name_refs"}[f]] = packed(v)
        elif f == 5:
            s["events"].append(decode_event_meta(v))
    assert s["meta"] is not None
    ts, t = [], 0
    for d in s["deltas"]:
        t = (t + d) & MASK64
        ts.append(t)
    s["ts"] = ts
    assert len(s["events"]) == len(ts)
    return s


def decode_thread_or_process(b):
    out = {"name": "", "id": 0, "sort_index": None, "threads": []}
    for f, w, v in fields(b):
        if f == 1:
            out["name"] = v.decode()
        elif f == 2:
            out["id"] = v
        elif f == 3:
            out["sort_index"] = v
        elif f == 4:
            out["threads"].append(decode_thread_or_process(v))
    return out


def decode(b):
    r = {"complete": [], "counter": [], "async": [], "metadata": None, "strings": [],
         "details": [], "span": [None, None]}
    for f, w, v in fields(b):
        if f in (1, 2, 3):
            r[{1: "complete", 2: "counter", 3: "async"}[f]].append(decode_series(v))
        elif f == 4:
            r["metadata"] = [decode_thread_or_process(p) for _, _, p in fields(v)]
        elif f == 5:
            r["strings"].append(v.decode())
        elif f == 6:
            d = dict((g, x) for g, _, x in fields(v))
            r["details"].append({"name": d[1].decode(), "value": bool(d.get(2, 0))})
        elif f in (7, 8):
            r["span"][f - 7] = v
    return r


def read(path):
    with open(path, "rb") as f:
        return f.read()


def fetch_pb(mnt, path):
    """A format=pb file read with cat through the mount, decoded."""
    data = subprocess.run(["cat", str(mnt / path)], capture_output=True, check=True).stdout
    raw = unzstd(data)
    assert frame_content_size(data) == len(raw)
    r = decode(raw)
    assert r["strings"][0] == "", "interned index 0 is the empty string"
    assert len(set(r["strings"])) == len(r["strings"])
    return r


# --- comparing with the JSON answer -------------------------------------------

def ps(us):
    return round(us * 1e6)


def check_metadata(pb, doc):
    procs, threads = {}, {}
    for e in doc["traceEvents"]:
        if e.get("name") == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e.get("name") == "thread_name":
            threads.setdefault(e["pid"], []).append((e["tid"], e["args"]["name"]))
    got = [p["id"] for p in pb["metadata"]]
    assert got == sorted(procs), "processes in ascending id order"
    for p in pb["metadata"]:
        assert p["name"] == procs[p["id"]] and p["sort_index"] == p["id"]
        want = sorted(threads.get(p["id"], []))
        assert [(t["id"], t["name"]) for t in p["threads"]] == want
        assert all(t["sort_index"] == t["id"] for t in p["threads"])


def check_complete(pb, doc, serials=True):
    tracks, order = {}, []
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            key = (e["pid"], e["tid"])
            if key not in tracks:
                order.append(key)
            tracks.setdefault(key, []).append(e)
    assert [(s["meta"].get("pid", 0), s["meta"].get("tid", 0)) for s in pb["complete"]] == order
    strings, n = pb["strings"], 0
    for s in pb["complete"]:
        want = tracks[(s["meta"].get("pid", 0), s["meta"].get("tid", 0))]
        assert len(s["ts"]) == len(want) == len(s["durations"]) == len(s["name_refs"])
        for ts, dur, ref, m, e in zip(s["ts"], s["durations"], s["name_refs"], s["events"], want):
            assert ts == ps(e["ts"]), (ts, e)
            assert max(dur, 1) == ps(e["dur"]), (dur, e)
            assert strings[ref] == e["name"]
            args = e.get("args", {})
            assert m.get("group", 0) == args.get("group_id", 0) & MASK32
            assert m.get("serial", 0) == (args.get("uid", 0) if serials else 0)
            if "bind_id" in e:
                assert m.get("flow_id", 0) == e["bind_id"] & MASK32
                if "cat" in e:
                    assert strings[m["category"]] == e["cat"]
                else:
                    assert "category" not in m
            else:
                assert "flow_id" not in m and "category" not in m
            assert "double" not in m and "uint" not in m
            n += 1
    return n


def check_against_json(pb, doc, serials=True):
    check_metadata(pb, doc)
    n = check_complete(pb, doc, serials)
    assert pb["details"] == doc["details"]
    lo, hi = doc["fullTimespan"]
    assert abs(pb["span"][0] / 1e9 - lo) <= 1e-5 * max(abs(lo), 1e-9)
    assert abs(pb["span"][1] / 1e9 - hi) <= 1e-5 * max(abs(hi), 1e-9)
    return n


def pb_query(q):
    return f"{q}&format=pb" if q else "format=pb"


def json_of(mnt, path):
    return json.loads(read(mnt / path))


# --- tests ------------------------------------------------------------------------

def test_conv_queries_match_json(corpus, mount):
    mnt = mount(corpus)
    full = json_of(mnt, f"{CONV}/trace_viewer.json")
    pb = fetch_pb(mnt, f"{CONV}/trace_viewer.json?format=pb")
    n = check_against_json(pb, full)
    assert n == sum(1 for e in full["traceEvents"] if e.get("ph") == "X") > 1000
    assert any("category" in m for s in pb["complete"] for m in s["events"])
    assert any(m.get("serial") for s in pb["complete"] for m in s["events"])
    assert pb["counter"] == [] and pb["async"] == []
    lo, hi = pb["span"]
    a, b = (lo + (hi - lo) // 3) / 1e9, (lo + (hi - lo) // 2) / 1e9
    for q in (f"start_time_ms={a!r}&end_time_ms={b!r}",
              f"start_time_ms={a!r}&end_time_ms={b!r}&resolution=100",
              "resolution=10", "search_prefix=PjRt"):
        doc = json_of(mnt, f"{CONV}/trace_viewer.json?{q}")
        got = fetch_pb(mnt, f"{CONV}/trace_viewer.json?{q}&format=pb")
        assert check_against_json(got, doc) == sum(
            1 for e in doc["traceEvents"] if e.get("ph") == "X"), q
    # The same host through hosts/<host>/.
    host = json.loads(read(mnt / CONV / "hosts.json"))[0]["hostname"]
    one = fetch_pb(mnt, f"{CONV}/hosts/{host}/trace_viewer.json?format=pb")
    assert one == pb
    # Event details stay JSON, as XProf's plugin forces them.
    e = next(e for e in full["traceEvents"] if e.get("ph") == "X")
    q = (f"event_name={e['name']}&start_time_ms={e['ts'] / 1000!r}"
         f"&duration_ms={e['dur'] / 1000!r}&unique_id={e['args']['uid']}")
    details = read(mnt / f"{CONV}/trace_viewer.json?{q}&format=pb")
    assert json.loads(details)["traceEvents"][-1]["name"] == e["name"]


def test_bad_format_is_einval(corpus, mount, xcat):
    mnt = mount(corpus)
    for name in ("trace_viewer.json", "trace_viewer_legacy.json"):
        with pytest.raises(OSError) as err:
            read(mnt / f"{CONV}/{name}?format=xml")
        assert err.value.errno == 22
        r = xcat(corpus, f"{CONV}/{name}?format=xml", check=False)
        assert r.returncode != 0 and b"format=xml: format is json or pb" in r.stderr


def test_multihost_and_hosts_option(corpus, mount):
    mnt = mount(corpus)
    hosts = [h["hostname"] for h in json.loads(read(mnt / MULTI / "hosts.json"))]
    assert len(hosts) == 2
    starts = sorted(e["ts"] for e in json_of(mnt, f"{MULTI}/trace_viewer.json")["traceEvents"]
                    if e.get("ph") == "X")
    a, b = starts[len(starts) // 3] / 1000, starts[len(starts) // 2] / 1000
    for q in ("", f"hosts={hosts[1]}", f"hosts={hosts[1]},{hosts[0]}",
              f"start_time_ms={a!r}&end_time_ms={b!r}&resolution=1000"):
        doc = json_of(mnt, f"{MULTI}/trace_viewer.json" + (f"?{q}" if q else ""))
        pb = fetch_pb(mnt, f"{MULTI}/trace_viewer.json?{pb_query(q)}")
        assert check_against_json(pb, doc) > 0
        pids = {p["id"] // 1000 for p in pb["metadata"]}
        assert pids == ({1} if q.startswith("hosts=") and "," not in q else {1, 2})
        if q == "":
            assert any("group" in m for s in pb["complete"] for m in s["events"])
    with pytest.raises(OSError):
        read(mnt / MULTI / "trace_viewer_legacy.json?format=pb")


def test_legacy_single_host_is_the_whole_container(corpus, mount):
    mnt = mount(corpus)
    full = json_of(mnt, f"{CONV}/trace_viewer.json")
    pb = fetch_pb(mnt, f"{CONV}/trace_viewer_legacy.json?format=pb")
    # The container as converted: unshifted pids, no serials, no details.
    assert pb["details"] == []
    assert all(p["id"] < 1000 for p in pb["metadata"])
    for p in pb["metadata"]:
        p["id"] += 1000
        p["sort_index"] += 1000
    for s in pb["complete"]:
        s["meta"]["pid"] += 1000
    full["details"] = []
    assert check_against_json(pb, full, serials=False) == sum(
        1 for e in full["traceEvents"] if e.get("ph") == "X")


def test_chrome_trace_run(corpus, mount):
    mnt = mount(corpus)
    run = "pytorch/h100_bert_small"
    doc = json_of(mnt, f"{run}/trace_viewer.json")
    pb = fetch_pb(mnt, f"{run}/trace_viewer.json?format=pb")
    assert check_against_json(pb, doc) == sum(
        1 for e in doc["traceEvents"] if e.get("ph") == "X") > 100


def test_chrome_trace_counters_and_async(tmp_path, mount):
    """A Chrome trace's counter carries its first numeric arg as a double."""
    run = tmp_path / "logs" / "plugins" / "profile" / "r"
    run.mkdir(parents=True)
    evs = [{"ph": "X", "pid": 1, "tid": 2, "name": "k", "ts": 10, "dur": 5},
           {"ph": "C", "pid": 1, "name": "mem", "ts": 11, "args": {"s": "x", "v": 1.5, "w": 2}},
           {"ph": "C", "pid": 1, "name": "mem", "ts": 12, "args": {"v": 3}},
           {"ph": "b", "pid": 1, "tid": 2, "name": "as", "id": 5, "cat": "c", "ts": 13},
           {"ph": "e", "pid": 1, "tid": 2, "name": "as", "id": 5, "cat": "c", "ts": 16}]
    (run / "x.trace.json.gz").write_bytes(gzip.compress(json.dumps({"traceEvents": evs}).encode()))
    mnt = mount(tmp_path / "logs")
    doc = json_of(mnt, "r/trace_viewer.json")
    pb = fetch_pb(mnt, "r/trace_viewer.json?format=pb")
    assert check_against_json(pb, doc) == 1
    s = pb["strings"]
    (c,) = pb["counter"]
    assert s[c["meta"]["name_ref"]] == "mem" and c["meta"]["pid"] == 1001
    assert c["ts"] == [1000000, 2000000] and c["events"] == [{"double": 1.5}, {"double": 3.0}]
    (a,) = pb["async"]
    assert s[a["meta"]["name_ref"]] == "as"
    assert a["ts"] == [3000000, 6000000] and [m["flow_id"] for m in a["events"]] == [5, 5]
    assert pb["span"] == [0, 6000000]


def test_synth_multihost(tmp_path, synth, mount):
    logdir = synth(tmp_path / "logs", "--run", "r", "--steps", "2", "--hosts", "2")
    mnt = mount(logdir)
    for q in ("", "resolution=50"):
        doc = json_of(mnt, "r/trace_viewer.json" + (f"?{q}" if q else ""))
        pb = fetch_pb(mnt, f"r/trace_viewer.json?{pb_query(q)}")
        assert check_against_json(pb, doc) > 100


# --- a hand-made xplane: counters, async channels, flow categories -------------

def flow(cat, fid, direction):
    """XFlow's stat value: category << 58 | id << 2 | direction (1 in, 2 out, 3 both)."""
    return cat << 58 | fid << 2 | direction


def write_xplane(path):
    mod = xplane_py.pb2()
    space = mod.XSpace()
    plane = space.planes.add()
    plane.id, plane.name = 0, "/host:CPU"
    stats = {}

    def stat_id(name):
        if name not in stats:
            stats[name] = len(stats) + 1
            e = plane.stat_metadata.add()
            e.key = stats[name]
            e.value.id, e.value.name = stats[name], name
        return stats[name]

    metas = {}

    def event(line, name, offset, dur, **st):
        if name not in metas:
            metas[name] = len(metas) + 1
            m = plane.event_metadata.add()
            m.key = metas[name]
            m.value.id, m.value.name = metas[name], name
        ev = line.events.add()
        ev.metadata_id, ev.offset_ps, ev.duration_ps = metas[name], offset, dur
        for k, v in st.items():
            s = ev.stats.add()
            s.metadata_id = stat_id("_a" if k == "is_async" else k)
            kind, value = v
            setattr(s, kind, value)

    main = plane.lines.add()
    main.id, main.display_id, main.name, main.timestamp_ns = 1, 1, "Main", 1
    event(main, "Alpha", 1000, 500, flow=("uint64_value", flow(2, 77, 2)))
    event(main, "Beta", 2000, 0)
    event(main, "Beta", 2000, 10)
    event(main, "Gamma", 3000, 100, flow=("uint64_value", flow(5, 77, 1)))
    event(main, "Delta", 4000, 100, flow=("uint64_value", flow(1, (1 << 40) | 9, 3)))
    counters = plane.lines.add()
    counters.id, counters.name, counters.timestamp_ns = 2, "_counters_", 1
    event(counters, "mem", 1000, 0, bytes=("uint64_value", 123456789012))
    event(counters, "mem", 1500, 0, bytes=("uint64_value", 0))
    event(counters, "util", 1200, 0, pct=("double_value", 0.25))
    event(counters, "util", 1250, 0, pct=("double_value", 0.0))
    event(counters, "count", 1300, 0, n=("int64_value", 7))
    asyncl = plane.lines.add()
    asyncl.id, asyncl.display_id, asyncl.name, asyncl.timestamp_ns = 3, 3, "Async", 1
    event(asyncl, "op", 1100, 300, is_async=("int64_value", 1),
          flow=("uint64_value", flow(11, 50, 2)))
    event(asyncl, "op", 1400, 50, is_async=("int64_value", 1),
          flow=("uint64_value", flow(11, 50, 3)))
    event(asyncl, "op", 1700, 0, is_async=("int64_value", 1),
          flow=("uint64_value", flow(0, 50, 1)))
    path.parent.mkdir(parents=True)
    path.write_bytes(space.SerializeToString())


def test_hand_made_counters_and_async(tmp_path, mount):
    write_xplane(tmp_path / "logs" / "plugins" / "profile" / "r" / "h.xplane.pb")
    mnt = mount(tmp_path / "logs")
    doc = json_of(mnt, "r/trace_viewer.json")
    pb = fetch_pb(mnt, "r/trace_viewer.json?format=pb")
    check_against_json(pb, doc)
    s = pb["strings"]
    # Flow categories: tf_exec and PjRt interned, legacy (1) and generic left out.
    cats = [s[m["category"]] if "category" in m else None for m in pb["complete"][0]["events"]]
    names = [s[r] for r in pb["complete"][0]["name_refs"]]
    assert list(zip(names, cats)) == [("Alpha", "tf_exec"), ("Beta", None), ("Beta", None),
                                      ("Gamma", "PjRt"), ("Delta", None)]
    delta = pb["complete"][0]["events"][4]
    assert delta["flow_id"] == (((1 << 40) | 9) & MASK32) == 9
    assert [m.get("serial", 0) for m in pb["complete"][0]["events"]] == [0, 0, 1, 0, 0]
    # XProf's comparator: same start, longer first.
    assert pb["complete"][0]["durations"] == [500, 10, 0, 100, 100]
    # Counters: one series per name, deltas and values only.
    series = {s[c["meta"]["name_ref"]]: c for c in pb["counter"]}
    assert set(series) == {"mem", "util", "count"}
    base = 1000  # the line starts at 1 ns
    assert series["mem"]["ts"] == [base + 1000, base + 1500]
    assert series["mem"]["durations"] is None and series["mem"]["name_refs"] is None
    assert series["mem"]["events"] == [{"uint": 123456789012}, {"uint": 0}]
    assert series["util"]["events"] == [{"double": 0.25}, {"double": 0.0}]
    assert series["count"]["events"] == [{}]
    # The JSON shows the same samples.
    samples = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "C":
            samples.setdefault(e["name"], []).extend(e["entries"])
    for name, c in series.items():
        assert [ps(x[0]) for x in samples[name]] == c["ts"]
        for x, m in zip(samples[name], c["events"]):
            if m:
                assert x[1] == m.get("double", m.get("uint"))
    # Async: one series for the channel, durations, flows, no name_refs.
    (a,) = pb["async"]
    assert s[a["meta"]["name_ref"]] == "op" and a["name_refs"] is None
    assert a["ts"] == [base + 1100, base + 1400, base + 1700]
    assert a["durations"] == [300, 50, 0]
    assert [m["flow_id"] for m in a["events"]] == [50, 50, 50]
    assert [s[m["category"]] if "category" in m else None for m in a["events"]] == \
        ["tpu_stream", "tpu_stream", None]
    assert sum(1 for e in doc["traceEvents"] if e.get("ph") in ("b", "e")) == 4
    # Interning follows XProf's walk: channels of the process, then threads.
    assert s.index("op") < s.index("Alpha") and s.index("tpu_stream") < s.index("Alpha")
    # Legacy: the same container without serials or details.
    legacy = fetch_pb(mnt, "r/trace_viewer_legacy.json?format=pb")
    assert [m.get("serial", 0) for m in legacy["complete"][0]["events"]] == [0] * 5
    assert legacy["counter"] == [
        dict(c, meta=dict(c["meta"], pid=c["meta"]["pid"] - 1000)) for c in pb["counter"]]

