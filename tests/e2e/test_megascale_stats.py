"""megascale_stats.json: XProf's Megascale (multi-slice DCN) collective stats
(xspace_to_dcn_slack_analysis.cc, dcn_slack_analysis_combiner.cc,
process_megascale_dcn.cc GetMegaScaleDataTable).

The expected rows are recomputed here from the generated profile, read with
python3-protobuf and a small wire decoder for the HloProto (not the C code
under test): the DCN ops are the XLA Ops events of /device:TPU:0 whose
metadata hlo_category holds "host send" / "host recv"; each op's
instruction (by display name) gives its opcode, channel, rendezvous and
transfer type, its recv-done's shape the size; the send metadata's
dcn_collective_info the replica group. Slack is the recv-done's start minus
the send's start minus the durations of every DCN op in between (the ops do
not overlap, so this is XProf's overlapping sum), stall the durations of the
collective's own ops, all in ns truncated to us as XProf stores them.
"""
import json
import subprocess
import time

import pytest

import xplane_py

COLS = [("rendezvous_name", "string", "Rendezvous Name"),
        ("recv_op_name", "string", "Recv Op Name"),
        ("send_op_name", "string", "Send Op Name"),
        ("transfer_type", "string", "Transfer Type"),
        ("slack_time", "number", "Slack Time (ms)"),
        ("host_stall", "string", "Host Stall (ms)"),
        ("observed_duration", "number", "Observed Duration (ms)"),
        ("send_stall", "number", "Send Stall (ms)"),
        ("send_done_stall", "number", "SendDone Stall (ms)"),
        ("recv_stall", "number", "Recv Stall (ms)"),
        ("recv_done_stall", "number", "RecvDone Stall (ms)"),
        ("stall_duration", "number", "Stall Duration (ms)"),
        ("total_stall", "number", "Aggregated Total Stall (ms)"),
        ("occurrences", "number", "Occurrences"),
        ("net_tx_bytes", "number", "Data Transmitted Size"),
        ("required_bandwidth", "number", "Required Bandwidth (Gbps)")]
ELEM_BYTES = {2: 1, 8: 4, 11: 4, 16: 2}  # S8, U32, F32, BF16


def fields(buf):
    """(field, wire type, value) of a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        f, t = key >> 3, key & 7
        if t == 0:
            v, i = varint(buf, i)
        elif t == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif t == 1:
            v, i = buf[i:i + 8], i + 8
        elif t == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % t)
        yield f, t, v


def varint(buf, i):
    v = s = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << s
        s += 7
        if b < 0x80:
            return v, i


def shape_bytes(shape, top=True):
    et, dims, tup = 0, [], []
    for f, t, v in fields(shape):
        if f == 2:
            et = v
        elif f == 3 and t == 2:
            i = 0
            while i < len(v):
                d, i = varint(v, i)
                dims.append(d)
        elif f == 3:
            dims.append(v)
        elif f == 4:
            tup.append(v)
    if et == 13:
        return sum(shape_bytes(s, False) for s in tup) if top else 0
    if et in (0, 14, 17):
        return 0
    n = 1
    for d in dims:
        n *= d
    return n * ELEM_BYTES[et]


def hlo_instrs(hlo_proto):
    """name -> (opcode, channel, rendezvous or None, type or None, size)."""
    out = {}
    for f, _, mod in fields(hlo_proto):
        if f != 1:
            continue
        for f2, _, comp in fields(mod):
            if f2 != 3:
                continue
            for f3, _, ins in fields(comp):
                if f3 != 2:
                    continue
                name, op, ch, attrs, size = None, None, 0, {}, 0
                for f4, _, v in fields(ins):
                    if f4 == 1:
                        name = v.decode()
                    elif f4 == 2:
                        op = v.decode()
                    elif f4 == 3:
                        size = shape_bytes(v)
                    elif f4 == 26:
                        ch = v
                    elif f4 == 68:
                        for _, _, e in fields(v):
                            kv = {k: x.decode() for k, _, x in fields(e)}
                            attrs[kv.get(1, "")] = kv.get(2, "")
                out.setdefault(name, (op, ch, attrs.get("_xla_host_transfer_rendezvous"),
                                      attrs.get("_xla_megascale_transfer_type"), size))
    return out


def group_size(info):
    groups = [v for f, _, v in fields(info) if f == 2]
    if any(f == 3 for f, _, _ in fields(info)):
        return 1
    return sum(1 for f, _, _ in fields(groups[0]) if f == 1) if groups else 0


def transmitted(size, g, typ):
    if g == 0:
        return 0
    return {"ONE_TO_ONE": g * size, "ALL_GATHER": int((g - 1) * size / g),
            "ALL_REDUCE": int(2 * ((g - 1) / g) * size),
            "ALL_TO_ALL": int((g - 1) / g * size), "REDUCE_SCATTER": size * (g - 1)}.get(typ, 0)


def expected_host(path):
    """Summary rows (dicts, first-completion order) of one host file."""
    space = xplane_py.load(path)
    meta = next(p for p in space.planes if p.name == "/host:metadata")
    hlo = hlo_instrs(meta.event_metadata[0].value.stats[0].bytes_value)
    tpu = next(p for p in space.planes if p.name == "/device:TPU:0")
    sname = {m.key: m.value.name for m in tpu.stat_metadata}
    emeta = {m.key: m.value for m in tpu.event_metadata}
    ops = []
    for line in tpu.lines:
        if line.name != "XLA Ops":
            continue
        for e in line.events:
            md = emeta[e.metadata_id]
            st = {sname[s.metadata_id]: s for s in md.stats}
            cat = st["hlo_category"].str_value if "hlo_category" in st else ""
            if "host send" not in cat and "host recv" not in cat:
                continue
            name = md.display_name or md.name
            ts_ps = line.timestamp_ns * 1000 + e.offset_ps
            info = st["dcn_collective_info"].bytes_value if "dcn_collective_info" in st else b""
            ops.append((ts_ps, e.duration_ps, name, hlo[name], info))
    assert len(ops) > 0
    chan, sums, order = {}, {}, []
    prefix = [0]  # ns durations of ops[0..i)
    for o in ops:
        prefix.append(prefix[-1] + o[1] // 1000)
    last_send, own = {}, {}  # rendezvous -> send index, its ops since
    for i, (ts, dur, name, (op, ch, rdv, typ, size), info) in enumerate(ops):
        if rdv is not None:
            chan[ch] = rdv
        rdv = chan[ch]
        if op == "send":
            last_send[rdv], own[rdv] = i, []
        own.setdefault(rdv, []).append(ops[i])
        if op != "recv-done":
            continue
        send = ops[last_send[rdv]]
        overlap_ns = prefix[i] - prefix[last_send[rdv]]
        mine = own[rdv]
        last = {o[3][0]: o for o in mine}
        s = sums.setdefault(rdv, dict(slack=0, occ=0, stall=0, obs=0, send=0, recv=0, sd=0,
                                      rd=0))
        if rdv not in order:
            order.append(rdv)
        s["slack"] += (ts // 1000 - send[0] // 1000 - overlap_ns) // 1000
        s["occ"] += 1
        s["stall"] += sum(o[1] // 1000 for o in mine) // 1000
        s["obs"] += (ts // 1000 + dur // 1000) // 1000 - (send[0] // 1000) // 1000
        s["send"] += last["send"][1] // 10**6
        s["recv"] += last["recv"][1] // 10**12
        s["sd"] += last["send-done"][1] // 10**6
        s["rd"] += dur // 10**6
        s["type"] = send[3][3]
        s["bytes"] = transmitted(size, group_size(send[4]), send[3][3])
        s["names"] = (name, send[2])
    rows = []
    for rdv in order:
        s = sums[rdv]
        n = s["occ"]
        rows.append(dict(rendezvous=rdv, recv_name=s["names"][0], send_name=s["names"][1],
                         type=s["type"], occ=n, bytes=s["bytes"],
                         **{k: s[k] // n for k in ("slack", "stall", "obs", "send", "recv",
                                                    "sd", "rd")}))
    return rows


def combine(hosts):
    order, acc = [], {}
    for rows in hosts:
        for r in rows:
            if r["rendezvous"] not in acc:
                order.append(r["rendezvous"])
                acc[r["rendezvous"]] = dict(r, occ=0, **{k: 0 for k in (
                    "slack", "stall", "obs", "send", "recv", "sd", "rd")})
            a = acc[r["rendezvous"]]
            for k in ("slack", "stall", "obs", "send", "recv", "sd", "rd"):
                a[k] += r[k] * r["occ"]
            a["occ"] += r["occ"]
            a.update(bytes=r["bytes"], recv_name=r["recv_name"], send_name=r["send_name"], type=r["type"])
    out = []
    for rdv in order:
        a = acc[rdv]
        out.append(dict(a, **{k: a[k] // a["occ"] for k in (
            "slack", "stall", "obs", "send", "recv", "sd", "rd")}))
    return out


def human(b):
    if b < 1024:
        return "%dB" % b
    units, u = "KMGTPE", 0
    while b >= 1024 * 1024:
        b //= 1024
        u += 1
    return "%.*f%s" % (1 if u == 0 else 2, b / 1024.0, units[u])


def check_table(text, rows):
    tables = json.loads(text)
    assert len(tables) == 1
    t = tables[0]
    assert list(t) == ["cols", "rows"]
    assert [(c["id"], c["type"], c["label"]) for c in t["cols"]] == COLS
    assert len(t["rows"]) == len(rows)
    for got, want in zip(t["rows"], rows):
        v = [c["v"] for c in got["c"]]
        assert v[:4] == [want["rendezvous"], want["recv_name"], want["send_name"], want["type"]]
        assert v[4] == pytest.approx(want["slack"] / 1000)
        assert v[5] == "-"
        assert v[6:12] == pytest.approx([want[k] / 1000 for k in (
            "obs", "send", "sd", "recv", "rd", "stall")])
        assert v[12] == pytest.approx(want["stall"] * want["occ"] / 1000)
        assert v[13] == want["occ"]
        assert got["c"][14] == {"f": human(want["bytes"]), "v": want["bytes"]}
        bw = 2147483647 if want["slack"] == 0 else want["bytes"] / want["slack"] * (8e-9 / 1e-6)
        assert v[15] == pytest.approx(bw)
    return t


def test_tpu_dcn_hosts_and_combined(tmp_path, synth, xcat, xprofs_build):
    logdir = synth(tmp_path, "--run", "r", "--scenario", "tpu_dcn", "--hosts", "2")
    files = sorted((logdir / "plugins/profile/r").glob("*.xplane.pb"))
    per_host = [expected_host(f) for f in files]
    # the collectives: three, each recv-done after its send, bytes from the group
    assert [r["rendezvous"] for r in per_host[0]] == [
        "dcn_all_reduce_a", "dcn_all_gather_b", "dcn_send_recv_c"]
    assert [r["bytes"] for r in per_host[0]] == [1572864, 4096, 1000]
    assert per_host[0] != per_host[1]  # host 1's recv-done of c is 1 us longer
    for f, rows in zip(files, per_host):
        host = f.name.split(".")[0]
        check_table(xcat(logdir, f"r/hosts/{host}/megascale_stats.json"), rows)
    check_table(xcat(logdir, "r/megascale_stats.json"), combine(per_host))
    assert "megascale_stats" in json.loads(xcat(logdir, "r/tools.json"))


def test_tpu_without_megascale(tmp_path, synth, xcat, xprofs_build):
    logdir = synth(tmp_path, "--run", "r", "--scenario", "tpu")
    assert "megascale_stats" not in json.loads(xcat(logdir, "r/tools.json"))
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir),
                        "r/megascale_stats.json", "r/errors.txt"], capture_output=True,
                       timeout=600, check=True)
    out = r.stdout.decode()
    t = json.JSONDecoder().raw_decode(out)[0][0]
    assert t["rows"] == [] and len(t["cols"]) == 16
    assert "no MegaScale: events" in out


def test_grown_bounded(tmp_path, synth, xcat):
    """2000 steps (15 MB): 2000 occurrences of each collective, in seconds."""
    logdir = synth(tmp_path, "--run", "r", "--scenario", "tpu_dcn", "--steps", "2000")
    f = next((logdir / "plugins/profile/r").glob("*.xplane.pb"))
    t0 = time.monotonic()
    text = xcat(logdir, "r/megascale_stats.json")
    assert time.monotonic() - t0 < 30
    t = check_table(text, expected_host(f))
    assert [r["c"][13]["v"] for r in t["rows"]] == [2000.0] * 3


def hostile_space(path, huge):
    """The tpu_dcn profile of path with its ops shuffled, a send without
    dcn_collective_info, an op the HLO module does not have and a huge
    duration."""
    space = xplane_py.load(path)
    tpu = next(p for p in space.planes if p.name == "/device:TPU:0")
    sname = {m.value.name: m.key for m in tpu.stat_metadata}
    emeta = {m.key: m.value for m in tpu.event_metadata}
    ops_line = next(ln for ln in tpu.lines if ln.name == "XLA Ops")
    events = list(ops_line.events)
    del ops_line.events[:]
    # reverse the DCN ops of the first step (out of order): XLA Ops events
    dcn = [e for e in events if any(s.metadata_id == sname["hlo_category"] and "host" in
                                    s.str_value for s in emeta[e.metadata_id].stats)]
    first = dcn[:12]
    rest = [e for e in events if e not in first]
    for e in list(reversed(first)) + rest:
        ops_line.events.add().CopyFrom(e)
    for md in emeta.values():
        if md.name == "send.24":  # no dcn_collective_info: a group of 0
            keep = [s for s in md.stats if s.metadata_id != sname["dcn_collective_info"]]
            del md.stats[:]
            for s in keep:
                md.stats.add().CopyFrom(s)
        if md.name == "recv.29":  # an instruction the module does not have
            md.name = "recv.999"
    ops_line.events[-1].duration_ps = huge
    return space


def test_hostile(tmp_path, synth, xcat, xprofs_build):
    logdir = synth(tmp_path / "a", "--run", "r", "--scenario", "tpu_dcn", "--steps", "3")
    f = next((logdir / "plugins/profile/r").glob("*.xplane.pb"))
    good = f.read_bytes()
    f.write_bytes(hostile_space(f, 10**15).SerializeToString())
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir),
                        "r/megascale_stats.json", "r/errors.txt"], capture_output=True,
                       timeout=120, check=True)
    out = r.stdout.decode()
    t = json.JSONDecoder().raw_decode(out)[0][0]
    rows = {r["c"][0]["v"]: [c["v"] for c in r["c"]] for r in t["rows"]}
    assert rows["dcn_all_gather_b"][14] == 0  # no group: 0 bytes
    assert rows["dcn_all_gather_b"][15] == 0
    assert all(0 < v[13] <= 3 for v in rows.values())
    assert "name no instruction of their HLO module" in out
    # an event past the time range, a truncated file: fail with a reason
    for bad in (hostile_space(tmp_path / "a/plugins/profile/r/synth-host-0.xplane.pb", 2**62)
                .SerializeToString(), good[:len(good) // 2]):
        f.write_bytes(bad)
        r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir),
                            "r/megascale_stats.json"], capture_output=True, timeout=120)
        assert r.returncode != 0 and b"synth-host-0.xplane.pb" in r.stderr


def test_many_module_names(tmp_path, synth, xprofs_build):
    """5000 steps whose module events each name another module, none in the
    HloProto: every name looked up once (4096 at most), bounded time, the
    reasons in errors.txt, an empty table."""
    logdir = synth(tmp_path, "--run", "r", "--scenario", "tpu_dcn", "--steps", "5000")
    f = next((logdir / "plugins/profile/r").glob("*.xplane.pb"))
    space = xplane_py.load(f)
    tpu = next(p for p in space.planes if p.name == "/device:TPU:0")
    line = next(ln for ln in tpu.lines if ln.name == "XLA Modules")
    next_id = max(m.key for m in tpu.event_metadata) + 1
    for k, e in enumerate(line.events):
        m = tpu.event_metadata.add()
        m.key = m.value.id = next_id + k
        m.value.name = "other_module_%d(5)" % k
        e.metadata_id = next_id + k
    f.write_bytes(space.SerializeToString())
    t0 = time.monotonic()
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir),
                        "r/megascale_stats.json", "r/errors.txt"], capture_output=True,
                       timeout=120, check=True)
    assert time.monotonic() - t0 < 60
    out = r.stdout.decode()
    assert json.JSONDecoder().raw_decode(out)[0][0]["rows"] == []
    assert "4096 module names have no HLO module" in out
    assert "%d DCN ops of modules past the first 4096" % ((5000 - 4096) * 12) in out
