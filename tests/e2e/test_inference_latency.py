"""The inference latency table of overview_page.json (element 4).

On xprofs-synth --scenario inference (host 0: SessionRun requests and one
user-defined root, host 1: BatchingSessionRun requests served by ProcessBatch
batches), the rows are checked against request times recomputed here from the
raw events (read with python3-protobuf, not by the C reader), and against the
hand-computed constants of contrib/synth/README.md. Every corpus run is a
non-training run without inference requests: its table stays empty.
"""
import json

import pytest

import xplane_py

RUN = "2025_01_01_00_00_00"
US = 1_000_000  # ps
PERCENTILES = [50.0, 75.0, 90.0, 99.0, 99.9]

# Hand-computed requests (us): (total, host, device, communication).
# Host 0 (SessionRun, model ids a/b; the request without a model is dropped):
#   R0 [100,1100): write 100 + read 100, module 400          -> (1000, 400, 400, 200)
#   R1 [1200,1700): write 50, module [1300,1500) 200, read [1450,1550)
#       overlaps the module for 50 us, device wins: read 50  -> (500, 200, 200, 100)
#   R2 [2000,4000): write 200 + read 100, modules [2400,3400) on TPU:0 and
#       [2900,3450) on TPU:1, union 1050                     -> (2000, 650, 1050, 300)
#   R3 [4200,4500): module 100                               -> (300, 200, 100, 0)
#   C  CustomRequest (_r = -1) [5600,5950): module 100       -> (350, 250, 100, 0)
# Host 1 (BatchingSessionRun, model c; a request ends no earlier than its batch):
#   B0 [100,1500), batch [400,1400): write 100 + read 100, module 400
#                                                            -> (1400, 800, 400, 200)
#   B1 [200,1300) stretched to the batch end 1400            -> (1200, 600, 400, 200)
#   B2 [2000,2600) stretched to its batch end 2800, module 200
#                                                            -> (800, 600, 200, 0)
HOST0 = [(1000, 400, 400, 200), (500, 200, 200, 100), (2000, 650, 1050, 300),
         (300, 200, 100, 0), (350, 250, 100, 0)]
HOST1 = [(1400, 800, 400, 200), (1200, 600, 400, 200), (800, 600, 200, 0)]


def expected_rows(requests):
    """ComputeInferenceLatencyResult + GenerateInferenceLatencyDataTable:
    sorted by total, percentile p takes index int(p / 100 * n); the "Avg" row
    repeats the 50th percentile (XProf prints latency_breakdowns[0])."""
    if not requests:
        return []
    s = sorted(requests)
    picks = [s[int(p / 100.0 * len(s))] for p in PERCENTILES]
    labels = ["Avg"] + [f"{p:.1f}%" for p in PERCENTILES]
    rows = []
    for label, (total, host, dev, comm) in zip(labels, [picks[0]] + picks):
        rows.append([label, host / 1000, dev / 1000, comm / 1000, total / 1000])
    return rows


def table_rows(ov):
    t = ov[4]
    assert [c["id"] for c in t["cols"]] == ["percentile", "hostTimeMs", "deviceTimeMs",
                                            "communicationTimeMs", "totalTimeMs"]
    return [[c["v"] for c in r["c"]] for r in t["rows"]]


def assert_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[0] == w[0]
        assert g[1:] == pytest.approx(w[1:], abs=1e-12)


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
                stats = {}
                for st in ev.stats:
                    kind = st.WhichOneof("value")
                    stats[snames[st.metadata_id]] = getattr(st, kind)
                out.append((pl.name, ln.name, names[ev.metadata_id], b, b + ev.duration_ps,
                            stats))
    return out


def _union(spans):
    total, end = 0, None
    for b, e in sorted(spans):
        if end is None or b > end:
            total += e - b
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def _minus(spans, cover):
    """Length of spans not covered by the union of cover."""
    return _union(spans + cover) - _union(cover)


def recompute(path):
    """Requests of one scenario host from its raw events: (total, host,
    device, communication) in us. Device = union of the linked modules;
    communication = transfers outside device time (XProf's priorities)."""
    evs = _events(xplane_py.load(path))
    modules = {}
    for plane, line, name, b, e, st in evs:
        if plane.startswith("/device:TPU:") and line == "XLA Modules":
            modules.setdefault(st["_c"], []).append((b, e))
    host = [x for x in evs if x[0] == "/host:CPU"]

    def inside(b, e, thread):
        return [x for x in host if x[1] == thread and b <= x[3] and x[4] <= e]

    def breakdown(b, e, work):
        dev = modules.get(work[5].get("_p"), [])
        transfers = [(x[3], x[4]) for x in inside(work[3], work[4], work[1])
                     if x[2] in ("WriteHbm", "ReadHbm")]
        d = _union(dev)
        c = _minus(transfers, dev)
        total = e - b
        return tuple(v // US for v in (total, total - d - c, d, c))

    out = []
    if any(x[2] == "BatchingSessionRun" for x in host):
        batches = {x[5]["_c"]: x for x in host if x[2] == "ProcessBatch"}
        for x in host:
            if x[2] != "BatchingSessionRun":
                continue
            pb = batches[x[5]["_p"]]
            run = [y for y in inside(pb[3], pb[4], pb[1]) if y[2] == "SessionRun"][0]
            out.append(breakdown(x[3], max(x[4], pb[4]), run))
    else:
        for x in host:
            roots = x[2] == "SessionRun" or x[5].get("_r") == -1
            if roots and "model_id" in x[5]:  # no model id: dropped (others have one)
                out.append(breakdown(x[3], x[4], x))
    return out


@pytest.fixture(scope="module")
def logdir(tmp_path_factory, xprofs_build):
    import subprocess
    out = tmp_path_factory.mktemp("inference")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--scenario",
                    "inference", "--hosts", "2"], check=True, timeout=60, capture_output=True)
    return out


def host_file(logdir, h):
    return logdir / "plugins" / "profile" / RUN / f"synth-host-{h}.xplane.pb"


def test_scenario_matches_hand_numbers(logdir):
    assert sorted(recompute(host_file(logdir, 0))) == sorted(HOST0)
    assert sorted(recompute(host_file(logdir, 1))) == sorted(HOST1)


def test_run_table(logdir, xcat):
    ov = json.loads(xcat(logdir, f"{RUN}/overview_page.json"))
    assert ov[2]["p"]["is_training"] == "false"
    got = table_rows(ov)
    want = expected_rows(recompute(host_file(logdir, 0)) + recompute(host_file(logdir, 1)))
    assert_rows(got, want)
    # 8 requests sorted by total: 300 350 500 800 1000 1200 1400 2000;
    # indexes 4, 6, 7, 7, 7
    assert [r[0] for r in got] == ["Avg", "50.0%", "75.0%", "90.0%", "99.0%", "99.9%"]
    assert got[0][1:] == got[1][1:] == [0.4, 0.4, 0.2, 1.0]
    assert got[2][1:] == [0.8, 0.4, 0.2, 1.4]
    assert got[3][1:] == pytest.approx([0.65, 1.05, 0.3, 2.0], abs=1e-12)
    # the "Avg" row is not the mean of the requests (7550 / 8 us)
    assert got[0][4] != pytest.approx(7.55 / 8)


def test_host_tables(logdir, xcat):
    for h, hand in ((0, HOST0), (1, HOST1)):
        ov = json.loads(xcat(logdir, f"{RUN}/hosts/synth-host-{h}/overview_page.json"))
        assert_rows(table_rows(ov), expected_rows(recompute(host_file(logdir, h))))
        assert_rows(table_rows(ov), expected_rows(hand))
    # host 0 alone: 300 350 500 1000 2000, median index 2 = R1; the
    # user-defined root (_r = -1) counts, the request without a model does not
    ov = json.loads(xcat(logdir, f"{RUN}/hosts/synth-host-0/overview_page.json"))
    assert table_rows(ov)[0] == ["Avg", 0.2, 0.2, 0.1, 0.5]


def test_mount_serves_the_same(logdir, xcat, mount):
    mnt = mount(logdir)
    for rel in (f"{RUN}/overview_page.json", f"{RUN}/hosts/synth-host-1/overview_page.json"):
        assert (mnt / rel).read_bytes() == xcat(logdir, rel)


def test_corpus_tables_stay_empty(corpus, xcat, xprofs_build):
    import subprocess
    checked = 0
    for top in sorted(p for p in corpus.iterdir() if p.is_dir()):
        for run_dir in sorted((top / "plugins" / "profile").glob("*")):
            if not any(run_dir.glob("*.xplane.pb*")):
                continue
            run = f"{top.name}/{run_dir.name}"
            paths = [f"{run}/overview_page.json"]
            hosts = subprocess.run([str(xprofs_build / "xprofs"), "ls", str(corpus),
                                    f"{run}/hosts/"], capture_output=True, text=True)
            paths += [f"{run}/hosts/{h.rstrip('/')}/overview_page.json"
                      for h in hosts.stdout.split()]
            for p in paths:
                ov = json.loads(xcat(corpus, p))
                assert ov[2]["p"]["is_training"] == "false", p
                assert table_rows(ov) == [], p
                checked += 1
    assert checked >= 6


def test_scenario_is_fixed(tmp_path, xprofs_build):
    import subprocess
    exe = str(xprofs_build / "xprofs-synth")
    for d in ("a", "b"):
        subprocess.run([exe, "--out", str(tmp_path / d), "--scenario", "inference", "--hosts",
                        "2", "--seed", "9" if d == "b" else "1"], check=True, timeout=60,
                       capture_output=True)
    for h in (0, 1):
        assert host_file(tmp_path / "a", h).read_bytes() == host_file(tmp_path / "b", h).read_bytes()
    r = subprocess.run([exe, "--out", str(tmp_path / "c"), "--scenario", "inference", "--steps",
                        "3"], timeout=60, capture_output=True, text=True)
    assert r.returncode != 0 and "xprofs-synth" in r.stderr
