"""pod_viewer.json: XProf's pod viewer (op_stats_to_pod_viewer.cc, op_stats_to_pod_stats.cc).

Layout: PodViewerDatabase printed with every field without presence
(fields in number order, maps by key). Values are checked independently
of the code under test where the test can: on TPU profiles the step time of
every core is recomputed from the Steps markers (the longest marker of the
step over the TensorCores, test_op_stats_tpu's reading), the host name from
the XSpace hostnames through core_details, core ids host index * 1000 +
plane id once hosts combine, and the breakdown is all zeros (TPU steps carry
category times only) so the bottleneck is the greatest name; on GPU runs
each record's breakdown sums to its step time, the bottleneck is the
largest type (ties: the greater name), and the breakdown maps the generic
step details of input_pipeline_analyzer.json (ms) type by type.
"""
import json
import subprocess

import pytest

import xplane_py
from test_op_stats_tpu import expected_tpu_steps

TYPES = ["Device compute", "Device to device", "Device collective communication",
         "Host compute", "Kernel launch", "Input", "Output", "Compilation", "All others"]
RECORD_KEYS = ["hostName", "chipId", "nodeId", "stepNum", "totalDurationUs", "bottleneck",
               "stepBreakdownUs"]
MAP_KEYS = ["stepNum", "podStatsPerCore", "channelDb", "coreIdToReplicaIdMap", "allReduceOpDb"]
# input_pipeline_analyzer step table columns, in GenericEventType order
IP_COLS = ["deviceComputeTimeMs", "deviceToDeviceTimeMs", "deviceCollectivesTimeMs",
           "hostComputeTimeMs", "kernelLaunchTimeMs", "infeedTimeMs", "outfeedTimeMs",
           "compileTimeMs", "otherTimeMs"]


def errors_after(xprofs_build, logdir, path):
    """errors.txt of one process that first reads path."""
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), path,
                        path.rsplit("/", 1)[0] + "/errors.txt"], capture_output=True, timeout=600,
                       check=True)
    return r.stdout.decode()


def load(xcat, logdir, path):
    d = json.loads(xcat(logdir, path))
    assert list(d) == ["podStatsSequence", "diagnostics", "stepBreakdownEvents", "deviceType"]
    assert list(d["diagnostics"]) == ["info", "warnings", "errors"]
    assert d["stepBreakdownEvents"] == [{"id": i + 1, "name": n} for i, n in enumerate(TYPES)]
    for m in d["podStatsSequence"]["podStatsMap"]:
        assert list(m) == MAP_KEYS
        assert list(m["podStatsPerCore"]) == sorted(m["podStatsPerCore"], key=int)
        for r in m["podStatsPerCore"].values():
            assert list(r) == RECORD_KEYS
            assert list(r["stepBreakdownUs"]) == [str(i) for i in range(1, 10)]
    return d


def bottleneck(breakdown):
    return max((v, TYPES[int(k) - 1]) for k, v in breakdown.items())[1]


def test_gpu_multiworker(corpus, xcat):
    run = "tf_gpu_multiworker/s1"
    d = load(xcat, corpus, f"{run}/pod_viewer.json")
    hosts = [h["hostname"] for h in json.loads(xcat(corpus, f"{run}/hosts.json"))]
    maps = d["podStatsSequence"]["podStatsMap"]
    assert maps and d["deviceType"] == "GPU"
    for i, h in enumerate(hosts):
        space = xplane_py.load(next((corpus / "tf_gpu_multiworker/plugins/profile/s1")
                                    .glob(f"{h}.xplane.pb*")))
        ip = json.loads(xcat(corpus, f"{run}/hosts/{h}/input_pipeline_analyzer.json"))[1]
        cols = [c["id"] for c in ip["cols"]]
        rows = [dict(zip(cols, [c["v"] for c in r["c"]])) for r in ip["rows"]]
        assert len(rows) == len(maps)
        for m, row in zip(maps, rows):
            r = m["podStatsPerCore"][str(1000 * i + 1)]
            assert r["hostName"] == space.hostnames[0]
            assert r["stepNum"] == m["stepNum"]
            assert r["totalDurationUs"] == pytest.approx(row["stepTimeMs"] * 1000, rel=1e-9)
            for k, col in enumerate(IP_COLS):
                assert r["stepBreakdownUs"][str(k + 1)] == pytest.approx(row[col] * 1000,
                                                                         abs=1e-6)
            assert sum(r["stepBreakdownUs"].values()) == pytest.approx(r["totalDurationUs"])
            assert r["bottleneck"] == bottleneck(r["stepBreakdownUs"])
    assert d["diagnostics"]["warnings"] == []


def test_gpu_synth_two_hosts(tmp_path, synth, xcat):
    logdir = synth(tmp_path, "--run", "r", "--steps", "3", "--hosts", "2")
    d = load(xcat, logdir, "r/pod_viewer.json")
    maps = d["podStatsSequence"]["podStatsMap"]
    assert [m["stepNum"] for m in maps] == list(range(len(maps))) and maps
    for m in maps:
        assert list(m["podStatsPerCore"]) == ["1", "1001"]
        for core, r in m["podStatsPerCore"].items():
            assert r["hostName"] == f"synth-host-{int(core) // 1000}"
            assert sum(r["stepBreakdownUs"].values()) == pytest.approx(r["totalDurationUs"])
            assert r["bottleneck"] == bottleneck(r["stepBreakdownUs"])


def test_no_steps(corpus, xcat, xprofs_build):
    d = load(xcat, corpus, "jax08_gemm_rocm/s1/pod_viewer.json")
    assert d["podStatsSequence"] == {"podStatsMap": []}
    assert d["diagnostics"]["warnings"][0].startswith("No step marker observed")
    assert d["deviceType"] == "AMD GPU - gfx942"
    assert "pod_viewer.json: the step database is empty" in \
        errors_after(xprofs_build, corpus, "jax08_gemm_rocm/s1/pod_viewer.json")
    # XProf's run_tools never lists it
    assert "pod_viewer" not in json.loads(xcat(corpus, "jax08_gemm_rocm/s1/tools.json"))


def _core_details(space, hostname):
    """A core_details stat (CoreDetails: hostname = 1, local_chip_id = 4) on
    each TPU plane."""
    for plane in space.planes:
        if not plane.name.startswith("/device:TPU:"):
            continue
        m = plane.stat_metadata.add()
        m.key = m.value.id = 950
        m.value.name = "core_details"
        st = plane.stats.add()
        st.metadata_id = 950
        h = hostname.encode()
        st.bytes_value = bytes([0x0A, len(h)]) + h + bytes([0x20, plane.id])
    return space


@pytest.fixture(scope="module")
def tpu_file(tmp_path_factory, xprofs_build):
    out = tmp_path_factory.mktemp("tpu")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", "t",
                    "--scenario", "tpu", "--steps", "4"], check=True, timeout=60,
                   capture_output=True)
    return next((out / "plugins/profile/t").glob("*.xplane.pb"))


@pytest.mark.parametrize("nhosts", [1, 2])
def test_tpu_hosts(tpu_file, tmp_path, xcat, nhosts):
    run = tmp_path / "plugins/profile/r"
    run.mkdir(parents=True)
    spaces = []
    for i in range(nhosts):
        sp = _core_details(xplane_py.load(tpu_file), f"worker-{i}")
        sp.hostnames[:] = [f"worker-{i}"]
        (run / f"h{i}.xplane.pb").write_bytes(sp.SerializeToString())
        spaces.append(sp)
    d = load(xcat, tmp_path, "r/pod_viewer.json")
    assert d["deviceType"] == "TPU v4"
    steps = expected_tpu_steps(spaces[0])  # every host is the same profile
    maps = d["podStatsSequence"]["podStatsMap"]
    assert len(maps) == len(steps)
    planes = sorted(p.id for p in spaces[0].planes if p.name.startswith("/device:TPU:"))
    for m, (g, dur, _) in zip(maps, steps):
        want = [str(1000 * h + p) if nhosts > 1 else str(p) for h in range(nhosts)
                for p in planes]
        assert list(m["podStatsPerCore"]) == want
        for core, r in m["podStatsPerCore"].items():
            assert r["hostName"] == f"worker-{int(core) // 1000}"
            assert r["totalDurationUs"] == pytest.approx(dur / 1e6)
            assert set(r["stepBreakdownUs"].values()) == {0}
            assert r["bottleneck"] == max(TYPES)


def test_tpu_without_core_details(tpu_file, tmp_path, xcat, xprofs_build):
    run = tmp_path / "plugins/profile/r"
    run.mkdir(parents=True)
    (run / "h.xplane.pb").write_bytes(tpu_file.read_bytes())
    d = load(xcat, tmp_path, "r/pod_viewer.json")
    recs = [r for m in d["podStatsSequence"]["podStatsMap"] for r in m["podStatsPerCore"].values()]
    assert recs and all(r["hostName"] == "" for r in recs)
    assert "without core details" in errors_after(xprofs_build, tmp_path, "r/pod_viewer.json")
