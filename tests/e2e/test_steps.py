"""steps.csv, steps.json, regions.csv, regions.json (src/tools/steps.c).

Expected values are hand-computed (the synth's steps4 scenario, small cases) or
computed here by brute force from the raw protobuf, with the definitions in
docs/steps.md written out naively (no stack, no shared code with the C side).
"""
import csv
import io
import json
import os
import random
import statistics
from decimal import Decimal

import pytest

import xplane_py

RUN = "2025_01_01_00_00_00"
US = 1_000_000  # ps per microsecond
INTERNAL = {"MemoryAllocation", "MemoryDeallocation", "PrefetchProduce", "PrefetchConsume",
            "ParallelInterleaveProduce", "ParallelInterleaveConsume",
            "ParallelInterleaveInitializeInput", "ParallelMapProduce", "ParallelMapConsume",
            "MapAndBatchProduce", "MapAndBatchConsume", "ParseExampleProduce",
            "ParseExampleConsume"}
TF_MARKERS = ("FunctionRun", "SessionRun", "RunGraph", "ExecutorState::Process")


def ps(text):
    """A µs field as integer ps (exact)."""
    return int(Decimal(text) * US)


def rows_of(data):
    return list(csv.DictReader(io.StringIO(data.decode())))


# ---- writing small profiles ---------------------------------------------------

def write_profile(logdir, lines, plane="/host:CPU", host="h0"):
    """lines: {line_id: (line_name, [(name, lo_ps, hi_ps, step_num or None), ...])}."""
    pb = xplane_py.pb2()
    space = pb.XSpace()
    p = space.planes.add()
    p.id = 1
    p.name = plane
    for sid, sname in ((1, "step_num"), (2, "_r")):
        e = p.stat_metadata.add()
        e.key = sid
        e.value.id = sid
        e.value.name = sname
    ids = {}
    for lid, (lname, evs) in lines.items():
        ln = p.lines.add()
        ln.id = lid
        ln.name = lname
        for name, lo, hi, num in evs:
            if name not in ids:
                ids[name] = len(ids) + 1
                m = p.event_metadata.add()
                m.key = ids[name]
                m.value.id = ids[name]
                m.value.name = name
            ev = ln.events.add()
            ev.metadata_id = ids[name]
            ev.offset_ps = lo
            ev.duration_ps = hi - lo
            if num is not None:
                st = ev.stats.add()
                st.metadata_id = 1
                st.int64_value = num
    d = logdir / "plugins" / "profile" / RUN
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{host}.xplane.pb").write_bytes(space.SerializeToString())
    return logdir


# ---- brute force ----------------------------------------------------------------

def measure(spans, lo, hi):
    """Measure of the union of spans clipped to [lo, hi]."""
    cut = sorted((max(a, lo), min(b, hi)) for a, b in spans if min(b, hi) > max(a, lo))
    total, cur_lo, cur_hi = 0, None, None
    for a, b in cut:
        if cur_hi is None or a > cur_hi:
            if cur_hi is not None:
                total += cur_hi - cur_lo
            cur_lo, cur_hi = a, b
        else:
            cur_hi = max(cur_hi, b)
    if cur_hi is not None:
        total += cur_hi - cur_lo
    return total


def brute_rows(space, step_names):
    """Rows (dicts with ps values) of every step, by the written definitions."""
    out = []
    for p in space.planes:
        if not p.name.startswith("/host:") or p.name == "/host:metadata":
            continue
        meta = {e.key: e.value.name for e in p.event_metadata}
        smeta = {e.key: e.value.name for e in p.stat_metadata}
        for ln in p.lines:
            evs = []
            for k, e in enumerate(ln.events):
                name = meta.get(e.metadata_id, "")
                if name in INTERNAL:
                    continue
                lo = ln.timestamp_ns * 1000 + e.offset_ps
                num = None
                for s in e.stats:
                    if smeta.get(s.metadata_id) == "step_num":
                        num = s.int64_value
                evs.append((lo, lo + max(e.duration_ps, 0), name in step_names, k, name, num))
            evs.sort(key=lambda t: (t[0], -t[1], not t[2], t[3]))
            i = 0
            while i < len(evs):
                if not evs[i][2]:
                    i += 1
                    continue
                s = evs[i]
                j = i + 1
                while j < len(evs) and (evs[j][0] < s[1] or (
                        evs[j][0] == s[1] and evs[j][1] == evs[j][0] and not evs[j][2])):
                    j += 1
                out.extend(one_step(ln, s, evs[i + 1:j]))
                i = j
    return out


def one_step(ln, s, mem):
    """Rows of step s with members mem (sorted)."""
    # Parent of member k: the latest earlier member containing it, else the step (-1).
    parent = []
    for k, e in enumerate(mem):
        par = -1
        for q in range(k - 1, -1, -1):
            if mem[q][0] <= e[0] and e[1] <= mem[q][1]:
                par = q
                break
        parent.append(par)
    depth = []
    for k in range(len(mem)):
        depth.append(1 if parent[k] < 0 else depth[parent[k]] + 1)
    kids = {q: [mem[k] for k in range(len(mem)) if parent[k] == q] for q in range(-1, len(mem))}
    step_union = measure([(a, b) for a, b, *_ in kids[-1]], s[0], s[1])
    rows = [dict(thread_id=ln.id, step_num=s[5], depth=0, region=s[4], parent="",
                 start=s[0], incl=s[1] - s[0], self=s[1] - s[0] - step_union,
                 union=step_union, unattributed=s[1] - s[0] - step_union,
                 naive=(s[1] - s[0]) + sum(e[1] - e[0] for e in mem), fits="", outside=None,
                 overlap=None)]
    for k, e in enumerate(mem):
        par = s if parent[k] < 0 else mem[parent[k]]
        u = measure([(a, b) for a, b, *_ in kids[k]], e[0], e[1])
        sib = [(m[0], m[1]) for q, m in enumerate(mem) if q != k and parent[q] == parent[k]]
        ov = measure(sib, e[0], e[1])
        outside = max(0, e[1] - par[1])
        rows.append(dict(thread_id=ln.id, step_num=s[5], depth=depth[k], region=e[4],
                         parent=par[4], start=e[0], incl=e[1] - e[0], self=e[1] - e[0] - u,
                         union=u, unattributed=None, naive=None,
                         fits="true" if outside == 0 and ov == 0 else "false",
                         outside=outside, overlap=ov))
    return rows


def assert_rows_match(got, want):
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        ctx = (g, w)
        assert int(g["thread_id"]) == w["thread_id"], ctx
        if w["step_num"] is not None:
            assert int(g["step_num"]) == w["step_num"], ctx
        assert int(g["depth"]) == w["depth"], ctx
        assert g["region"] == w["region"], ctx
        assert g["parent"] == w["parent"], ctx
        assert ps(g["start_us"]) == w["start"], ctx
        assert ps(g["incl_us"]) == w["incl"], ctx
        assert ps(g["self_us"]) == w["self"], ctx
        assert ps(g["children_union_us"]) == w["union"], ctx
        assert g["fits"] == w["fits"], ctx
        if w["depth"] == 0:
            assert ps(g["unattributed_us"]) == w["unattributed"], ctx
            assert ps(g["naive_sum_us"]) == w["naive"], ctx
            assert g["outside_parent_us"] == "" and g["overlap_us"] == "", ctx
        else:
            assert g["unattributed_us"] == "" and g["naive_sum_us"] == "", ctx
            assert ps(g["outside_parent_us"]) == w["outside"], ctx
            assert ps(g["overlap_us"]) == w["overlap"], ctx


def sort_like_tool(rows):
    """Brute rows grouped per step, steps by (start, thread order of first
    appearance in file)."""
    steps, cur = [], None
    for r in rows:
        if r["depth"] == 0:
            cur = [r]
            steps.append(cur)
        else:
            cur.append(r)
    order = {}
    for st in steps:
        order.setdefault(st[0]["thread_id"], len(order))
    steps.sort(key=lambda st: (st[0]["start"], order[st[0]["thread_id"]]))
    return [r for st in steps for r in st]


# ---- steps4: the hand-checked scenario -----------------------------------------

STEPS4 = [  # learner_step, input_wait, model_and_wait in µs (contrib/synth/steps4.c)
    (100, 1100, 110, 310, 320, 1070),
    (1200, 2000, 1200, 1300, 1300, 2000),
    (2100, 3300, 2150, 2550, 2600, 3200),
    (3400, 4000, 3410, 3460, 3470, 3990),
]


@pytest.fixture(scope="module")
def steps4(tmp_path_factory, xprofs_build):
    import subprocess
    out = tmp_path_factory.mktemp("steps4")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--scenario",
                    "steps4"], check=True, timeout=120)
    return out


def test_steps4_hand_checked(steps4, xcat):
    rows = rows_of(xcat(steps4, f"{RUN}/steps.csv"))
    steps = [r for r in rows if r["depth"] == "0"]
    assert [r["step_name"] for r in steps] == ["learner_step"] * 4
    assert [int(r["step_num"]) for r in steps] == [0, 1, 2, 3]
    assert [ps(r["start_us"]) for r in steps] == [t[0] * US for t in STEPS4]
    assert [ps(r["incl_us"]) for r in steps] == [(t[1] - t[0]) * US for t in STEPS4]
    # step - input_wait - model_and_wait (they never overlap):
    assert [ps(r["unattributed_us"]) for r in steps] == [50 * US, 0, 200 * US, 30 * US]
    # step + input_wait + model_and_wait + PjitFunction (20) + Execute (10):
    assert [ps(r["naive_sum_us"]) for r in steps] == [1980 * US, 1630 * US, 2230 * US,
                                                      1200 * US]
    # The jitted call on the other thread is not a region of the step.
    assert all(r["thread"] == "python3" for r in rows)
    assert not any("ExecuteHelper" in r["region"] for r in rows)
    mw = [r for r in rows if r["region"] == "model_and_wait"]
    assert [ps(r["self_us"]) for r in mw] == [730 * US, 680 * US, 580 * US, 500 * US]
    assert all(r["fits"] == "true" and r["parent"] == "learner_step" for r in mw)
    pjit = [r for r in rows if r["region"].startswith("PjitFunction")]
    assert all(r["depth"] == "2" and r["parent"] == "model_and_wait" for r in pjit)


def test_steps4_regions_hand_checked(steps4, xcat):
    reg = {r["region"]: r for r in rows_of(xcat(steps4, f"{RUN}/regions.csv"))}
    ls = reg["learner_step"]
    assert ls["min_depth"] == "0" and ls["count"] == "4"
    assert [Decimal(ls[k]) for k in ("incl_total_us", "incl_min_us", "incl_median_us",
                                     "incl_mean_us", "incl_max_us", "incl_p90_us")] == \
        [3600, 600, 900, 900, 1200, 1140]
    assert [Decimal(ls[k]) for k in ("self_total_us", "self_min_us", "self_median_us",
                                     "self_mean_us", "self_max_us", "self_p90_us")] == \
        [280, 0, 40, 70, 200, 155]
    iw = reg["input_wait"]
    assert [Decimal(iw[k]) for k in ("incl_total_us", "incl_min_us", "incl_median_us",
                                     "incl_mean_us", "incl_max_us", "incl_p90_us")] == \
        [750, 50, 150, Decimal("187.5"), 400, 340]
    mw = reg["model_and_wait"]
    assert Decimal(mw["incl_median_us"]) == 650 and Decimal(mw["incl_p90_us"]) == 735
    assert Decimal(mw["self_total_us"]) == 2490
    assert float(mw["share_of_step_time"]) == pytest.approx(2570 / 3600, rel=1e-9)
    assert float(ls["share_of_step_time"]) == 1.0
    # Rows: steps first, then by total time.
    names = [r for r in reg]
    assert names[0] == "learner_step" and names[1] == "model_and_wait"


def test_steps4_json_same_as_csv(steps4, xcat):
    rows = rows_of(xcat(steps4, f"{RUN}/steps.csv"))
    doc = json.loads(xcat(steps4, f"{RUN}/steps.json"))
    assert doc["hosts"][0]["source"] == "step_num"
    assert doc["hosts"][0]["step_names"] == ["learner_step"]
    assert doc["hosts"][0]["steps"] == 4 and doc["hosts"][0]["reason"] is None
    assert len(doc["rows"]) == len(rows)
    for c, j in zip(rows, doc["rows"]):
        assert list(j.keys()) == list(c.keys())
        for k, v in c.items():
            jv = j[k]
            if v == "":
                assert jv is None, k
            elif k == "fits":
                assert jv is (v == "true")
            elif isinstance(jv, str):
                assert jv == v, k
            else:
                assert Decimal(str(jv)) == Decimal(v), k
    reg = rows_of(xcat(steps4, f"{RUN}/regions.csv"))
    rdoc = json.loads(xcat(steps4, f"{RUN}/regions.json"))
    assert [r["region"] for r in rdoc["rows"]] == [r["region"] for r in reg]
    assert [Decimal(str(r["incl_total_us"])) for r in rdoc["rows"]] == \
        [Decimal(r["incl_total_us"]) for r in reg]


def test_steps4_options(steps4, xcat):
    full = rows_of(xcat(steps4, f"{RUN}/steps.csv"))
    d1 = rows_of(xcat(steps4, f"{RUN}/steps.csv?max_depth=1"))
    assert d1 == [r for r in full if int(r["depth"]) <= 1]
    d2 = rows_of(xcat(steps4, f"{RUN}/steps.csv?min_depth=2&max_depth=2"))
    assert d2 == [r for r in full if r["depth"] == "2"] and len(d2) == 4
    assert rows_of(xcat(steps4, f"{RUN}/steps.csv?thread=python3")) == full
    assert rows_of(xcat(steps4, f"{RUN}/steps.csv?thread=1")) == full
    # A thread or step that selects nothing is a mistake (EINVAL), not an
    # empty table: test_hostile_input.py checks the messages.
    assert xcat(steps4, f"{RUN}/steps.csv?thread=nope", check=False).returncode == 2
    host = rows_of(xcat(steps4, f"{RUN}/hosts/synth-host-0/steps.csv"))
    assert host == full
    # Another annotation as the step: model_and_wait, its PjitFunction a child.
    mw = rows_of(xcat(steps4, f"{RUN}/steps.csv?step=model_and_wait"))
    assert [r["region"] for r in mw if r["depth"] == "0"] == ["model_and_wait"] * 4
    assert [int(r["step_num"]) for r in mw if r["depth"] == "0"] == [0, 1, 2, 3]  # ordinals
    assert [ps(r["unattributed_us"]) for r in mw if r["depth"] == "0"] == \
        [730 * US, 680 * US, 580 * US, 500 * US]
    # Regions restricted to depth 1 only.
    reg = rows_of(xcat(steps4, f"{RUN}/regions.csv?min_depth=1&max_depth=1"))
    assert sorted(r["region"] for r in reg) == ["input_wait", "model_and_wait"]
    assert xcat(steps4, f"{RUN}/steps.csv?step=nothing_like_it", check=False).returncode == 2


@pytest.mark.parametrize("query", ["min_depth=-1", "max_depth=x", "foo=1",
                                   "min_depth=3&max_depth=1", "step=a&step=b", "step=",
                                   "thread=", "step=NaN"])
def test_bad_options_are_einval(steps4, xcat, query):
    for f in ("steps.csv", "regions.json"):
        r = xcat(steps4, f"{RUN}/{f}?{query}", check=False)
        assert r.returncode == 2, (f, query, r.stderr)
        assert r.stdout == b""


# ---- hand-made profiles ---------------------------------------------------------

def test_child_crossing_step_end(tmp_path, xcat):
    # The example: step [0,10] with [2,7] and [8,12] µs: naive 19, union 7.
    write_profile(tmp_path, {1: ("main", [("step", 0, 10 * US, 0), ("a", 2 * US, 7 * US, None),
                                          ("b", 8 * US, 12 * US, None)])})
    rows = rows_of(xcat(tmp_path, f"{RUN}/steps.csv"))
    assert [r["region"] for r in rows] == ["step", "a", "b"]
    assert rows[0]["naive_sum_us"] == "19" and rows[0]["children_union_us"] == "7"
    assert rows[0]["unattributed_us"] == "3"
    assert rows[1]["fits"] == "true"
    assert rows[2]["fits"] == "false" and rows[2]["outside_parent_us"] == "2"


def test_overlapping_siblings(tmp_path, xcat):
    write_profile(tmp_path, {1: ("main", [("step", 0, 100 * US, 5),
                                          ("a", 10 * US, 50 * US, None),
                                          ("b", 40 * US, 80 * US, None),
                                          ("c", 45 * US, 48 * US, None)])})
    rows = {r["region"]: r for r in rows_of(xcat(tmp_path, f"{RUN}/steps.csv"))}
    assert rows["a"]["overlap_us"] == "10" and rows["a"]["fits"] == "false"
    assert rows["b"]["overlap_us"] == "10" and rows["b"]["fits"] == "false"
    assert rows["c"]["parent"] == "b" and rows["c"]["fits"] == "true"
    assert rows["step"]["unattributed_us"] == "30"  # union of a and b is [10,80]
    assert rows["step"]["naive_sum_us"] == "183"


def test_zero_length_events(tmp_path, xcat):
    write_profile(tmp_path, {1: ("main", [("step", 0, 10 * US, 0), ("mark", 5 * US, 5 * US, None),
                                          ("end", 10 * US, 10 * US, None),
                                          ("step", 20 * US, 20 * US, 1),
                                          ("at", 20 * US, 20 * US, None)])})
    rows = rows_of(xcat(tmp_path, f"{RUN}/steps.csv"))
    assert [(r["region"], r["depth"], r["incl_us"]) for r in rows] == [
        ("step", "0", "10"), ("mark", "1", "0"), ("end", "1", "0"),
        ("step", "0", "0"), ("at", "1", "0")]
    assert rows[0]["unattributed_us"] == "10" and rows[3]["unattributed_us"] == "0"
    assert all(r["fits"] == "true" for r in rows if r["depth"] != "0")


def test_steps_on_two_threads(tmp_path, xcat):
    write_profile(tmp_path, {
        1: ("main", [("train", 0, 10 * US, 0), ("x", 1 * US, 4 * US, None),
                     ("train", 20 * US, 30 * US, 2)]),
        7: ("worker", [("train", 5 * US, 15 * US, 1), ("x", 6 * US, 14 * US, None)]),
        9: ("other", [("x", 0, 100 * US, None)]),
    })
    rows = rows_of(xcat(tmp_path, f"{RUN}/steps.csv"))
    steps = [(r["thread"], r["step_num"], r["unattributed_us"]) for r in rows if r["depth"] == "0"]
    assert steps == [("main", "0", "7"), ("worker", "1", "2"), ("main", "2", "10")]
    assert rows_of(xcat(tmp_path, f"{RUN}/steps.csv?thread=worker")) == \
        [r for r in rows if r["thread"] == "worker"]
    reg = {r["region"]: r for r in rows_of(xcat(tmp_path, f"{RUN}/regions.csv"))}
    assert reg["train"]["incl_total_us"] == "30" and reg["x"]["incl_total_us"] == "11"
    assert reg["x"]["count"] == "2"


def test_deep_nesting_100000(tmp_path, xcat):
    n = 100_000
    evs = [("step", 0, 2 * n * US, 0)] + [(f"r", i * US, (2 * n - i) * US, None)
                                          for i in range(1, n + 1)]
    write_profile(tmp_path, {1: ("main", evs)})
    rows = rows_of(xcat(tmp_path, f"{RUN}/steps.csv"))
    assert len(rows) == n + 1
    assert rows[-1]["depth"] == str(n) and rows[-1]["parent_id"] == str(n - 1)
    assert rows[0]["unattributed_us"] == "2" and rows[1]["self_us"] == "2"
    assert rows[-1]["self_us"] == "0"  # [n, n] in µs: zero length
    reg = rows_of(xcat(tmp_path, f"{RUN}/regions.csv"))
    r = [x for x in reg if x["region"] == "r"][0]
    # Nested occurrences of one name are counted once in the total.
    assert r["count"] == str(n) and r["incl_total_us"] == str(2 * n - 2)


def test_random_profiles_match_brute_force(tmp_path, xcat):
    rng = random.Random(1234)
    for case in range(6):
        logdir = tmp_path / f"c{case}"
        lines = {}
        for lid in (1, 2):
            evs = []
            for _ in range(rng.randint(20, 60)):
                lo = rng.randint(0, 400) * 250_000 + rng.randint(0, 3)  # some odd ps
                dur = 0 if rng.random() < 0.1 else rng.randint(1, 120) * 250_000
                name = rng.choice(["a", "b", "c", "MemoryAllocation"])
                evs.append((name, lo, lo + dur, None))
            for k in range(rng.randint(1, 4)):
                lo = rng.randint(0, 300) * 250_000
                evs.append(("step", lo, lo + rng.randint(5, 150) * 250_000, k))
            lines[lid] = (f"t{lid}", evs)
        write_profile(logdir, lines)
        space = xplane_py.load(logdir / "plugins/profile" / RUN / "h0.xplane.pb")
        want = sort_like_tool(brute_rows(space, {"step"}))
        got = rows_of(xcat(logdir, f"{RUN}/steps.csv"))
        assert_rows_match(got, want)
        # regions.csv: per name count, min/median/max/p90 of incl and self.
        reg = {r["region"]: r for r in rows_of(xcat(logdir, f"{RUN}/regions.csv"))}
        for name in {w["region"] for w in want}:
            incl = sorted(w["incl"] for w in want if w["region"] == name)
            slf = sorted(w["self"] for w in want if w["region"] == name)
            r = reg[name]
            assert int(r["count"]) == len(incl)
            assert ps(r["incl_min_us"]) == incl[0] and ps(r["incl_max_us"]) == incl[-1]
            assert float(Decimal(r["incl_median_us"]) * US) == \
                pytest.approx(float(statistics.median(incl)), abs=1)
            assert ps(r["self_total_us"]) == sum(slf)
            assert float(Decimal(r["self_mean_us"]) * US) == \
                pytest.approx(sum(slf) / len(slf), abs=1)


def test_step_markers_when_no_step_num(tmp_path, xcat):
    write_profile(tmp_path, {1: ("main", [("SessionRun", 0, 10 * US, None),
                                          ("op", 1 * US, 2 * US, None),
                                          ("MemoryAllocation", 3 * US, 3 * US, None),
                                          ("SessionRun", 20 * US, 25 * US, None)])})
    rows = rows_of(xcat(tmp_path, f"{RUN}/steps.csv"))
    assert [(r["region"], r["step_num"]) for r in rows] == \
        [("SessionRun", "0"), ("op", "0"), ("SessionRun", "1")]
    doc = json.loads(xcat(tmp_path, f"{RUN}/steps.json"))
    assert doc["hosts"][0]["source"] == "tf_step_marker"


# ---- corpus ----------------------------------------------------------------------

JAX_RUNS = ["jax_conv_rocm/2025_01_01_00_00_00", "jax08_conv_rocm/s1", "jax08_gemm_rocm/s1",
            "jax08_elementwise_rocm/s1"]


@pytest.mark.parametrize("run", JAX_RUNS)
def test_corpus_jax_has_no_steps(corpus, xcat, run):
    data = xcat(corpus, f"{run}/steps.csv").decode()
    assert data.splitlines() == [data.splitlines()[0]] and data.startswith("host,thread_id,")
    doc = json.loads(xcat(corpus, f"{run}/steps.json"))
    assert doc["rows"] == [] and all(h["reason"] for h in doc["hosts"])
    assert json.loads(xcat(corpus, f"{run}/regions.json"))["rows"] == []


def test_corpus_tf_matches_brute_force(corpus, xcat):
    run = "tf_gpu_multiworker/s1"
    rundir = corpus / "tf_gpu_multiworker/plugins/profile/s1"
    doc = json.loads(xcat(corpus, f"{run}/steps.json"))
    assert {h["source"] for h in doc["hosts"]} == {"tf_step_marker"}
    names = set(doc["hosts"][0]["step_names"])
    assert names and names <= set(TF_MARKERS)
    allrows = rows_of(xcat(corpus, f"{run}/steps.csv"))
    for host in ("34.83.195.179_6003", "34.83.195.180_6003"):
        space = xplane_py.load(rundir / f"{host}.xplane.pb")
        got = [r for r in allrows if r["host"] == host]
        # Per step thread and name: counts, inclusive totals, naive sums.
        want = sort_like_tool(brute_steps_only(space, names))
        gsteps = [r for r in got if r["depth"] == "0"]
        assert [(int(r["thread_id"]), ps(r["start_us"]), ps(r["incl_us"]),
                 ps(r["naive_sum_us"])) for r in gsteps] == \
            [(w["thread_id"], w["start"], w["incl"], w["naive"]) for w in want]
    reg = rows_of(xcat(corpus, f"{run}/regions.csv"))
    assert sum(int(r["count"]) for r in reg) == len(allrows)


def test_corpus_tf_agrees_with_trace_viewer(corpus, xcat):
    """Every row is one trace viewer event (same tid, ts, dur, name), and the
    per-name sums of regions.csv are those events' sums."""
    run = "tf_gpu_multiworker/s1"
    host = "34.83.195.179_6003"
    tv = json.loads(xcat(corpus, f"{run}/hosts/{host}/trace_viewer.json"))
    events = tv["traceEvents"] if isinstance(tv, dict) else tv
    have = {}
    for e in events:
        if e.get("ph") == "X":
            key = (e.get("tid"), Decimal(str(e["ts"])), Decimal(str(e.get("dur", 0))))
            have.setdefault(key, []).append(e["name"])
    rows = rows_of(xcat(corpus, f"{run}/hosts/{host}/steps.csv"))
    assert len(rows) > 1000
    tv_sum = {}
    for r in rows:
        key = (int(r["thread_id"]), Decimal(r["start_us"]), Decimal(r["incl_us"]))
        assert r["region"] in have.get(key, []), r
        tv_sum[r["region"]] = tv_sum.get(r["region"], 0) + key[2]
    reg = rows_of(xcat(corpus, f"{run}/hosts/{host}/regions.csv"))
    assert {r["region"] for r in reg} == set(tv_sum)
    for r in reg:
        total = Decimal(r["incl_mean_us"]) * int(r["count"])
        assert float(total) == pytest.approx(float(tv_sum[r["region"]]), rel=1e-12, abs=1e-6)


def brute_steps_only(space, names):
    """Step rows only (start, incl, naive) — the cheap part of brute_rows."""
    out = []
    for p in space.planes:
        if not p.name.startswith("/host:") or p.name == "/host:metadata":
            continue
        meta = {e.key: e.value.name for e in p.event_metadata}
        for ln in p.lines:
            evs = sorted(((ln.timestamp_ns * 1000 + e.offset_ps,
                           ln.timestamp_ns * 1000 + e.offset_ps + e.duration_ps,
                           meta.get(e.metadata_id, "") in names, k)
                          for k, e in enumerate(ln.events)
                          if meta.get(e.metadata_id, "") not in INTERNAL),
                         key=lambda t: (t[0], -t[1], not t[2], t[3]))
            i = 0
            while i < len(evs):
                if not evs[i][2]:
                    i += 1
                    continue
                s, j, naive = evs[i], i + 1, evs[i][1] - evs[i][0]
                while j < len(evs) and (evs[j][0] < s[1] or (
                        evs[j][0] == s[1] and evs[j][1] == evs[j][0] and not evs[j][2])):
                    naive += evs[j][1] - evs[j][0]
                    j += 1
                out.append(dict(thread_id=ln.id, depth=0, start=s[0], incl=s[1] - s[0],
                                naive=naive))
                i = j
    return out


def test_steps4_agrees_with_raw_and_trace_viewer(steps4, xcat):
    """Every row is an event of the raw profile and of the trace viewer with the
    same thread, start, duration and name."""
    rows = rows_of(xcat(steps4, f"{RUN}/steps.csv"))
    space = xplane_py.load(steps4 / "plugins/profile" / RUN / "synth-host-0.xplane.pb")
    host = [p for p in space.planes if p.name == "/host:CPU"][0]
    meta = {e.key: e.value.name for e in host.event_metadata}
    raw = {(ln.id, ln.timestamp_ns * 1000 + e.offset_ps, e.duration_ps, meta[e.metadata_id])
           for ln in host.lines for e in ln.events}
    for r in rows:  # the raw protobuf always
        assert (int(r["thread_id"]), ps(r["start_us"]), ps(r["incl_us"]), r["region"]) in raw
    tv = json.loads(xcat(steps4, f"{RUN}/trace_viewer.json"))
    events = tv["traceEvents"] if isinstance(tv, dict) else tv
    have = {(e.get("tid"), Decimal(str(e["ts"])), Decimal(str(e.get("dur", 0))), e["name"])
            for e in events if e.get("ph") == "X"}
    for r in rows:
        key = (int(r["thread_id"]), Decimal(r["start_us"]), Decimal(r["incl_us"]))
        names = {r["region"], f"{r['region']} {r['step_num']}"}
        assert any(key + (n,) in have for n in names), r


def test_no_steps_reason_in_errors_txt(corpus, mount):
    mnt = mount(corpus)
    run = mnt / "jax08_gemm_rocm" / "s1"
    header = (run / "steps.csv").read_text()
    assert header.count("\n") == 1
    errors = (run / "errors.txt").read_text().splitlines()
    lines = [e for e in errors if e[25:].startswith("steps: host ")]
    assert len(lines) == 1 and "no steps" in lines[0], errors
    assert os.stat(run / "steps.csv").st_size == len(header)


# ---- Chrome trace runs (perfetto_trace.json.gz) ----------------------------------

def write_perfetto(logdir, events):
    import gzip
    d = logdir / "plugins" / "profile" / RUN
    d.mkdir(parents=True, exist_ok=True)
    meta = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/host:CPU"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 10, "args": {"name": "python3"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 11, "args": {"name": "pjrt"}}]
    (d / "perfetto_trace.json.gz").write_bytes(
        gzip.compress(json.dumps({"traceEvents": meta + events}).encode()))
    return logdir


def test_perfetto_trace_steps(tmp_path, xcat):
    evs = []
    for k, (a, b, c, d, e, f) in enumerate(STEPS4):
        # The trace viewer names a step "learner_step <n>" and writes args as strings.
        evs.append({"ph": "X", "name": f"learner_step {k}", "pid": 1, "tid": 10, "ts": a,
                    "dur": b - a, "args": {"step_num": str(k), "group_id": str(k)}})
        evs.append({"ph": "X", "name": "input_wait", "pid": 1, "tid": 10, "ts": c, "dur": d - c})
        evs.append({"ph": "X", "name": "model_and_wait", "pid": 1, "tid": 10, "ts": e + 0.5,
                    "dur": f - e - 0.5})
        evs.append({"ph": "X", "name": "ExecuteHelper", "pid": 1, "tid": 11, "ts": e + 30,
                    "dur": 100})
    write_perfetto(tmp_path, evs)
    rows = rows_of(xcat(tmp_path, f"{RUN}/steps.csv"))
    steps = [r for r in rows if r["depth"] == "0"]
    assert [(r["step_name"], r["region"], r["step_num"], r["thread"]) for r in steps] == \
        [("learner_step", "learner_step", str(k), "python3") for k in range(4)]
    # model_and_wait starts 0.5 us late here: 0.5 more unattributed per step.
    assert [Decimal(r["unattributed_us"]) for r in steps] == \
        [Decimal("50.5"), Decimal("0.5"), Decimal("200.5"), Decimal("30.5")]
    assert not any(r["thread"] == "pjrt" for r in rows)
    assert len(rows) == 12
    # Times count from the trace's earliest event, named in steps.json.
    origin = min(e["ts"] for e in evs)
    assert [Decimal(r["start_us"]) for r in steps] == [t[0] - origin for t in STEPS4]
    doc = json.loads(xcat(tmp_path, f"{RUN}/steps.json"))
    assert doc["hosts"] == [{"host": "perfetto_trace", "source": "step_num",
                             "step_names": ["learner_step"], "steps": 4,
                             "clock_origin_us": origin, "reason": None}]
    asked = rows_of(xcat(tmp_path, f"{RUN}/steps.csv?step=learner_step"))
    assert asked == rows
    reg = {r["region"]: r for r in rows_of(xcat(tmp_path, f"{RUN}/regions.csv"))}
    assert reg["learner_step"]["incl_total_us"] == "3600"
    assert reg["model_and_wait"]["incl_total_us"] == "2568"


def test_pytorch_epoch_clock_counts_from_profile_start(corpus, xcat):
    """A Kineto trace on an epoch clock (ts ~1.4e12 us): steps.csv counts from
    its earliest event, to the nanosecond the trace is written in, and
    steps.json names that event's ts. Checked against the trace's own text,
    read as decimals here."""
    import gzip
    name = "h100_bert_small"
    raw = gzip.decompress((corpus / "pytorch" / name / f"{name}.pt.trace.json.gz").read_bytes())
    doc = json.loads(raw, parse_float=Decimal)
    spans = [e for e in doc["traceEvents"] if e.get("ph") == "X" and "ts" in e]
    origin = min(Decimal(e["ts"]) for e in spans)
    steps = [e for e in spans if str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("cat") != "gpu_user_annotation"]  # the GPU copy is no step
    assert origin > 10**12 and steps
    info = json.loads(xcat(corpus, f"pytorch/{name}/steps.json"))["hosts"][0]
    assert Decimal(str(info["clock_origin_us"])) == origin
    rows = [r for r in rows_of(xcat(corpus, f"pytorch/{name}/steps.csv")) if r["depth"] == "0"]
    assert [Decimal(r["start_us"]) for r in rows] == \
        sorted(Decimal(e["ts"]) - origin for e in steps)
    # Every region starts on a whole nanosecond: no noise of the double clock.
    for r in rows_of(xcat(corpus, f"pytorch/{name}/steps.csv")):
        assert Decimal(r["start_us"]) * 1000 == int(Decimal(r["start_us"]) * 1000), r
