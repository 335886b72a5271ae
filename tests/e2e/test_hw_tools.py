"""XProf's hardware tools: perf_counters.json (?names_only=),
utilization_viewer.json and kernel_utilization.json.

Profiles come from xprofs-synth --counters (counter lines with XProf's own
counter ids) and from profiles built here with garbage stats; expected
values are recomputed from the events python3-protobuf decodes, with the
metric formulas ported again in tpu_counters_py.py (not the C code). The
layouts are XProf's: one DataTable (xplane_to_perf_counters.cc,
xplane_to_utilization_viewer.cc), names_only as json.dumps of
counter_extractor.get_all_counters, and kernel_utilization as the 2.23.2
report (json.dumps(indent=2, sort_keys=True)).
"""
import json
import math
import subprocess
import time

import pytest

import tpu_counters_py as tc
import xplane_py

UV_COLS = [("host", "Host", "number"), ("device", "Device", "number"),
           ("sample", "Sample", "number"), ("node", "Node", "number"),
           ("name", "Name", "string"), ("achieved", "Achieved", "number"),
           ("peak", "Peak", "number"), ("unit", "Unit", "string")]
PC_COLS = [("Host", "Host", "string"), ("Chip", "Chip", "number"), ("Kernel", "Kernel", "string"),
           ("Sample", "Sample", "number"), ("Counter", "Counter", "string"),
           ("Value", "Value (Hex)", "number"), ("Description", "Description", "string"),
           ("Set", "Set", "string")]


def cols(table):
    return [(c["id"], c["label"], c["type"]) for c in table["cols"]]


def stat_of(sm, st):
    kind = st.WhichOneof("value")
    if kind is None:
        return None, None
    v = getattr(st, kind)
    if kind == "ref_value":
        return "str_value", sm.get(v, "")
    return kind, v


class Plane:
    """What the tests read of one plane."""

    def __init__(self, p):
        self.p = p
        self.sm = {m.key: m.value.name for m in p.stat_metadata}
        self.em = {m.key: m.value for m in p.event_metadata}
        self.stats = {}
        for st in p.stats:  # the last of each name wins (ForEachStat)
            self.stats[self.sm.get(st.metadata_id, "")] = stat_of(self.sm, st)

    def ev_stat(self, e, name):
        """GetStat: the event's first stat of that name, else its metadata's."""
        for st in e.stats:
            if self.sm.get(st.metadata_id) == name:
                return stat_of(self.sm, st) if st.WhichOneof("value") else ("none", 0)
        md = self.em.get(e.metadata_id)
        for st in (md.stats if md is not None else []):
            if self.sm.get(st.metadata_id) == name:
                return stat_of(self.sm, st) if st.WhichOneof("value") else ("none", 0)
        return None

    def ev_name(self, e):
        md = self.em.get(e.metadata_id)
        return md.name if md is not None else ""


def int_or_uint(s):
    if s is None or s[0] not in ("int64_value", "uint64_value"):
        return 0
    return s[1] % 2**64


def sample(pl, line, mode):
    """The counter map of one line (XProf's utilization reading)."""
    c = {}
    evs = list(line.events)
    if mode == "ordered":
        evs.sort(key=lambda e: (e.offset_ps, -e.duration_ps))
    kept = 0
    for e in evs:
        cid = int_or_uint(pl.ev_stat(e, "performance_counter_id")) or e.metadata_id
        val = pl.ev_stat(e, "counter_value")
        if val is None or cid == 0:
            continue
        kept += 1
        v = tc.counter_value(*val) if val[0] != "none" else 0
        c[cid] = (c.get(cid, 0) + v) % 2**64 if mode == "sum" else v
    return c, kept


def chip_of(pl):
    t = pl.stats.get("device_type_string", (None, ""))[1]
    return {"TPU v6 Lite": "v6e", "TPU v7x": "v7x"}.get(t)


def expected_uv(space):
    grouped = any("group_id" in {m.value.name for m in p.stat_metadata} for p in space.planes)
    rows = []
    for p in space.planes:
        if not p.name.startswith("/device:TPU:"):
            continue
        pl = Plane(p)
        chip = chip_of(pl)
        dev = pl.stats.get("device_id")
        if chip is None or dev is None:
            continue
        tensor_core = p.name[12:].isdigit()
        for line in p.lines:
            c, kept = sample(pl, line, "ordered" if not grouped and tensor_core else "last")
            if kept == 0:
                continue
            for node, name, a, pk, unit in tc.metrics(chip, c):
                rows.append([0.0, float(int_or_uint(dev) % 2**32 if int_or_uint(dev) % 2**32 < 2**31
                                        else int_or_uint(dev) % 2**32 + 2**64 - 2**32),
                             float(line.id), float(node), name, a, pk, unit])
    return rows


def values(table):
    return [[c["v"] for c in r["c"]] for r in table["rows"]]


def same_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            if isinstance(b, float):
                assert a == pytest.approx(b, rel=1e-12, abs=0), (g, w)
            else:
                assert a == b, (g, w)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory, xprofs_build):
    out = tmp_path_factory.mktemp("hw")
    exe = str(xprofs_build / "xprofs-synth")
    for run, args in [("v6e", ["--scenario", "tpu", "--counters", "v6e"]),
                      ("v7x", ["--scenario", "tpu_raw", "--counters", "v7x",
                               "--counter-samples", "3"]),
                      ("plain", ["--scenario", "tpu"]),
                      ("gpu", ["--steps", "2"])]:
        subprocess.run([exe, "--out", str(out), "--run", run, *args], check=True,
                       capture_output=True, timeout=600)
    return out


def space_of(logdir, run):
    return xplane_py.load(next((logdir / "plugins/profile" / run).glob("*.xplane.pb")))


@pytest.mark.parametrize("run", ["v6e", "v7x"])
def test_utilization_viewer(xcat, logdir, run):
    d = json.loads(xcat(logdir, f"{run}/utilization_viewer.json"))
    assert list(d) == ["cols", "rows"]
    assert cols(d) == UV_COLS
    want = expected_uv(space_of(logdir, run))
    # every metric of every sample: 2 cores x samples x the chip's rows
    per = 58 if run == "v6e" else 2 * (23 + 3 + 2) + 4 * 16
    assert len(want) == (2 * 2 if run == "v6e" else 2 * 3) * per
    same_rows(values(d), want)


def perf_rows(space, host):
    rows = []
    for p in space.planes:
        if not (p.name.startswith("/device:TPU:") or p.name.startswith("/device:GPU:")):
            continue
        pl = Plane(p)
        chip = int_or_uint(pl.stats.get("global_chip_id")) if "global_chip_id" in pl.stats else -1
        if chip == -1:
            chip = int_or_uint(pl.stats["device_id"]) if "device_id" in pl.stats else -1
        if chip == -1:
            continue
        for line in p.lines:
            for e in line.events:
                val = pl.ev_stat(e, "counter_value")
                if val is None:
                    continue
                v = int_or_uint(val) if val[0] != "none" else 0
                desc = pl.ev_stat(e, "performance_counter_description")
                sets = pl.ev_stat(e, "performance_counter_sets")
                text = lambda s: s[1] if s is not None and s[0] == "str_value" else ""  # noqa
                rows.append([host, float(chip), line.name, float(line.id),
                             pl.ev_name(e).lower(), (hex(v), float(v)), text(desc), text(sets)])
    return rows


@pytest.mark.parametrize("run", ["v6e", "v7x", "plain"])
def test_perf_counters(xcat, logdir, run):
    d = json.loads(xcat(logdir, f"{run}/perf_counters.json"))
    assert list(d) == ["cols", "rows"]
    assert cols(d) == PC_COLS
    got = [[c if "f" not in c else (c["f"], c["v"]) for c in r["c"]] for r in d["rows"]]
    got = [[c["v"] if isinstance(c, dict) else c for c in r] for r in got]
    want = perf_rows(space_of(logdir, run), "synth-host-0")
    assert got == want
    if run != "plain":
        assert len(want) == 2 * (2 if run == "v6e" else 3) * len(tc.table(run))
        assert {r[1] for r in want} == {100.0, 101.0}  # global_chip_id wins over device_id
        assert any(r[6] for r in want) and any(r[6] == "" for r in want)


def test_perf_counters_names_only(xcat, logdir):
    for chip in ("v6e", "v7x"):
        raw = xcat(logdir, f"plain/perf_counters.json?names_only=1&device_type={chip}").decode()
        want = [{"name": n.lower(), "val": v} for n, v in tc.table(chip)]
        assert raw == json.dumps(want)
        assert len(want) == {"v6e": 900, "v7x": 2933}[chip]
    for q, msg in [("names_only=1", "device_type is required"),
                   ("names_only=1&device_type=v4", "Unsupported device_type: v4")]:
        r = xcat(logdir, f"plain/perf_counters.json?{q}", check=False)
        assert r.returncode != 0 and msg in r.stderr.decode()


def tools(xcat, logdir, run):
    return json.loads(xcat(logdir, f"{run}/tools.json"))


def test_tools_json_lists_where_counters(xcat, logdir):
    for run in ("v6e", "v7x"):
        t = tools(xcat, logdir, run)
        assert "perf_counters" in t and "utilization_viewer" in t
        assert t.index("roofline_model") < t.index("perf_counters") < t.index("framework_op_stats")
    for run in ("plain", "gpu"):
        t = tools(xcat, logdir, run)
        assert "perf_counters" not in t and "utilization_viewer" not in t
    assert all("kernel_utilization" not in tools(xcat, logdir, r) for r in ("v6e", "plain"))


def errors_after(xprofs_build, logdir, path):
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), path,
                        path.rsplit("/", 1)[0] + "/errors.txt"], capture_output=True, timeout=600,
                       check=True)
    return r.stdout.decode()


@pytest.mark.parametrize("run", ["plain", "gpu"])
def test_empty_answers_say_why(xprofs_build, xcat, logdir, run):
    d = json.loads(xcat(logdir, f"{run}/utilization_viewer.json"))
    assert cols(d) == UV_COLS and d["rows"] == []
    d = json.loads(xcat(logdir, f"{run}/perf_counters.json"))
    assert cols(d) == PC_COLS and d["rows"] == []
    k = xcat(logdir, f"{run}/kernel_utilization.json").decode()
    assert k == '{\n  "devices": [],\n  "status": "SUCCESS"\n}'
    text = errors_after(xprofs_build, logdir, f"{run}/utilization_viewer.json")
    assert "utilization_viewer.json: empty" in text
    why = "no counter tables" if run == "plain" else "no TPU plane"
    assert why in text
    assert "perf_counters.json: empty" in errors_after(xprofs_build, logdir,
                                                        f"{run}/perf_counters.json")


def rnd(x):
    return math.floor(x * 10000.0 + 0.5) / 100.0 if x >= 0 else -math.floor(-x * 10000.0 + 0.5) / 100.0


def pct(a, t):
    return rnd(a / t)


def expected_ku(space):
    grouped = any("group_id" in {m.value.name for m in p.stat_metadata} for p in space.planes)
    devices = []
    for p in space.planes:
        if not p.name.startswith("/device:TPU:"):
            continue
        pl = Plane(p)
        chip = chip_of(pl)
        dev = int_or_uint(pl.stats["device_id"]) if "device_id" in pl.stats else -1
        if chip is None or dev == -1:
            continue
        sort = not grouped and p.name[12:].isdigit()
        fallback = ""
        for line in p.lines:
            if line.name in ("PALLAS", "XLA OPS", "Pallas", "XLA Ops"):
                named = [e for e in line.events if pl.ev_name(e)]
                if named:
                    e = min(named, key=lambda e: (e.offset_ps, -e.duration_ps)) if sort else named[0]
                    fallback = pl.ev_name(e)
                    break
        kernels = []
        t = tc.ids(chip)
        for line in p.lines:
            c, kept = sample(pl, line, "sum")
            if kept == 0:
                continue
            if line.name.startswith("counters_"):
                name = fallback if line.name == "counters_0" else line.name[9:]
            else:
                name = fallback if line.name in ("_counters_", "counters") else ""
            name = name or "default_kernel"
            dur = max(e.duration_ps for e in line.events) / 1e3 / 1000.0
            nominal = dur * ((1.75e9 if chip == "v6e" else 1.9e9) / 1e6)
            cyc = (["VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_CYCLES"]
                   if chip == "v6e" else
                   [f"VF_CHIP_DIE{d}_PWRMGR_PWRMGR_TC_THROTTLE_CORE_DEBUG_STATS_UNPRIVILEGED_"
                    "CYCLE_COUNT" for d in range(2)])
            for n in cyc:
                if nominal > 0 and c.get(t[n], 0) == 0:
                    c[t[n]] = int(nominal)
            mx = mxp = 0.0
            prec = {"MXU BF16": 0.0, "MXU I8": 0.0, "MXU I4": 0.0, "MXU E4M3 + E5M2": 0.0}
            other = {}
            for _, mn, a, pk, _ in tc.metrics(chip, c):
                if mn == "Avg MXU Busy":
                    mx += a
                    mxp += pk
                elif mn in prec:
                    prec[mn] += a
                elif pk > 0:
                    key = "HBM Bandwidth Utilization" if mn.startswith("HBM Rd+Wr") else mn
                    o = other.setdefault(key, [0.0, 0.0])
                    o[0] += a
                    o[1] += pk
            tot = sum(prec.values())
            share = lambda v: pct(v, tot) if tot > 0 else 0.0  # noqa: E731
            util = pct(mx, mxp) if mxp > 0 else 0.0
            kernels.append({"duration_us": dur, "kernel_name": name,
                            "mxu_cycles_breakdown": {"BF16": share(prec["MXU BF16"]),
                                                     "FP8": share(prec["MXU E4M3 + E5M2"]),
                                                     "Int4": share(prec["MXU I4"]),
                                                     "Int8": share(prec["MXU I8"])},
                            "mxu_is_anomaly": util > 100.0, "mxu_utilization": util,
                            "other_metrics": {k: pct(a, pk) for k, (a, pk) in other.items()}})
        devices.append({"device_id": dev, "device_type": pl.stats["device_type_string"][1],
                        "kernels": kernels})
    return {"devices": devices, "status": "SUCCESS"}


@pytest.mark.parametrize("run", ["v6e", "v7x"])
def test_kernel_utilization(xcat, logdir, run):
    raw = xcat(logdir, f"{run}/kernel_utilization.json").decode()
    want = expected_ku(space_of(logdir, run))
    got = json.loads(raw)
    assert raw == json.dumps(got, indent=2, sort_keys=True)
    assert [k["kernel_name"] for k in got["devices"][0]["kernels"]] == \
        ["jit_train_step", "1"] + (["2"] if run == "v7x" else [])
    assert got == want


def build_hostile(path, n_lines=1):
    """A v6e TPU plane whose counter events carry missing or garbage stats."""
    pb = xplane_py.pb2()
    space = pb.XSpace()
    p = space.planes.add()
    p.id = 0
    p.name = "/device:TPU:0"
    names = ["device_id", "device_type_string", "performance_counter_id", "counter_value",
             "performance_counter_sets"]
    for i, n in enumerate(names, 1):
        entry = p.stat_metadata.add()
        entry.key = entry.value.id = i
        entry.value.name = n
    st = p.stats.add()
    st.metadata_id = 1
    st.int64_value = 0
    st = p.stats.add()
    st.metadata_id = 2
    st.str_value = "TPU v6 Lite"
    t = tc.ids("v6e")
    cyc = t["VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_CYCLES"]
    busy = t["VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_MXU_BUSY_1"]
    vst = t["VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_VST_INSTRUCTION"]
    for m in range(1, 12):
        entry = p.event_metadata.add()
        entry.key = entry.value.id = m
        entry.value.name = f"Ctr{m}"
        if m == 11:  # this metadata carries its counter id and value itself
            s = entry.value.stats.add()
            s.metadata_id = 3
            s.uint64_value = vst
            s = entry.value.stats.add()
            s.metadata_id = 4
            s.uint64_value = 77
    specs = [
        (1, [(3, "uint64_value", cyc), (4, "uint64_value", 1000)]),
        (2, [(3, "uint64_value", busy), (4, "double_value", 250.7)]),   # double: truncated
        (2, [(3, "uint64_value", busy), (4, "str_value", "garbage")]),  # string: value 0
        (3, [(3, "double_value", 1.5), (4, "uint64_value", 5)]),        # double id: meta id 3
        (4, [(4, "int64_value", -5)]),                                  # no id: meta id 4
        (5, [(3, "uint64_value", 123456789), (4, "uint64_value", 9)]),  # not in the table
        (6, [(3, "uint64_value", cyc)]),                                # no value: skipped
        (7, [(3, "uint64_value", vst), (4, "double_value", float("nan"))]),
        (8, [(3, "uint64_value", vst), (4, "double_value", 1e30)]),     # saturates
        (9, [(3, "uint64_value", 0), (4, "uint64_value", 3), (4, "uint64_value", 4)]),
        (10, [(99, "uint64_value", 1)]),                                # unknown stat id
        (11, []),
    ]
    for k in range(n_lines):
        ln = xplane_py.add_line(p, 100 + k, f"counters_{k}")
        for m, stats in specs:
            e = ln.events.add()
            e.metadata_id = m
            e.offset_ps = 1000 * k
            e.duration_ps = 500
            for sid, kind, v in stats:
                s = e.stats.add()
                s.metadata_id = sid
                setattr(s, kind, v)
        # a stat with no value at all on a counter event
        e = ln.events.add()
        e.metadata_id = 1
        s = e.stats.add()
        s.metadata_id = 4
    space.hostnames.append("hostile")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(space.SerializeToString())
    return space


def test_hostile_counter_stats(xcat, tmp_path):
    space = build_hostile(tmp_path / "plugins/profile/h/hostile.xplane.pb", n_lines=2)
    d = json.loads(xcat(tmp_path, "h/utilization_viewer.json"))
    same_rows(values(d), expected_uv(space))
    assert values(d)[0][4] == "Scalar Unit"
    d = json.loads(xcat(tmp_path, "h/perf_counters.json"))
    got = [[c["v"] if "f" not in c else (c["f"], c["v"]) for c in r["c"]] for r in d["rows"]]
    assert got == perf_rows(space, "hostile")
    k = json.loads(xcat(tmp_path, "h/kernel_utilization.json"))
    assert k == expected_ku(space)


def test_hostile_many_samples_bounded(xprofs_build, synth, xcat, tmp_path):
    """10^7 counter events (5000 samples of 1000 counters on each of 2
    cores): the utilization viewer and kernel report answer, the perf
    counters table (one row per event) fails with its reason; each in
    bounded time and memory."""
    synth(tmp_path, "--run", "big", "--scenario", "tpu", "--counters", "v6e",
          "--counter-samples", "5000", "--counter-width", "1000")
    f = next((tmp_path / "plugins/profile/big").glob("*.xplane.pb"))
    try:
        for path, ok in [("big/utilization_viewer.json", True),
                         ("big/kernel_utilization.json", True),
                         ("big/perf_counters.json", False)]:
            t0 = time.monotonic()
            r = subprocess.run(["/usr/bin/time", "-f", "%M", str(xprofs_build / "xprofs"), "cat",
                                str(tmp_path), path], capture_output=True, timeout=300)
            wall = time.monotonic() - t0
            rss_kb = int(r.stderr.decode().strip().splitlines()[-1])
            assert (r.returncode == 0) == ok, r.stderr.decode()[-500:]
            if ok:
                out = r.stdout
                if path.startswith("big/util"):
                    assert len(json.loads(out)["rows"]) == 2 * 5000 * 58
                else:
                    assert len(json.loads(out)["devices"][0]["kernels"]) == 5000
            else:
                assert b"more than 2000000 counter samples" in r.stderr
            assert wall < 120, (path, wall)
            assert rss_kb < 2_500_000, (path, rss_kb)
    finally:
        f.unlink()
