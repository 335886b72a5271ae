# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of contrib/synth (xprofs-synth), the profile generator.

The generated files are parsed with google.protobuf (python3-protobuf) through a
minimal xplane.proto / hlo.proto compiled by protoc into a temporary directory,
and checked with `protoc --decode_raw`. The binary comes from $XPROFS_BUILD
(default /work/main/build).
"""
import gzip
import importlib
import os
import subprocess
import sys

import pytest

BUILD = os.environ.get("XPROFS_BUILD", "/work/main/build")
SYNTH = os.path.join(BUILD, "xprofs-synth")
RUN = "2025_01_01_00_00_00"

XPLANE_PROTO = """
syntax = "proto3";
package tensorflow.profiler;
message XSpace { repeated XPlane planes = 1; repeated string errors = 2;
  repeated string warnings = 3; repeated string hostnames = 4; }
message XPlane { int64 id = 1; string name = 2; repeated XLine lines = 3;
  map<int64, XEventMetadata> event_metadata = 4;
  map<int64, XStatMetadata> stat_metadata = 5; repeated XStat stats = 6; }
message XLine { int64 id = 1; int64 display_id = 10; string name = 2;
  string display_name = 11; int64 timestamp_ns = 3; int64 duration_ps = 9;
  repeated XEvent events = 4; }
message XEvent { int64 metadata_id = 1;
  oneof data { int64 offset_ps = 2; int64 num_occurrences = 5; }
  int64 duration_ps = 3; repeated XStat stats = 4; }
message XStat { int64 metadata_id = 1;
  oneof value { double double_value = 2; uint64 uint64_value = 3;
    int64 int64_value = 4; string str_value = 5; bytes bytes_value = 6;
    uint64 ref_value = 7; bytes compressed_str_value = 8; } }
message XEventMetadata { int64 id = 1; string name = 2; string display_name = 4;
  bytes metadata = 3; repeated XStat stats = 5; repeated int64 child_id = 6; }
message XStatMetadata { int64 id = 1; string name = 2; string description = 3; }
"""

HLO_PROTO = """
syntax = "proto3";
package xla;
message LayoutProto { repeated int64 minor_to_major = 1; }
message ShapeProto { int32 element_type = 2; repeated int64 dimensions = 3;
  repeated ShapeProto tuple_shapes = 4; LayoutProto layout = 5; }
message OpMetadata { string op_type = 1; string op_name = 2;
  string source_file = 3; int32 source_line = 4; }
message HloInstructionProto { string name = 1; string opcode = 2;
  ShapeProto shape = 3; OpMetadata metadata = 7; int64 parameter_number = 9;
  string fusion_kind = 11; repeated int64 dimensions = 14;
  string custom_call_target = 28; int64 id = 35; repeated int64 operand_ids = 36;
  repeated int64 called_computation_ids = 38; }
message HloComputationProto { string name = 1;
  repeated HloInstructionProto instructions = 2; int64 id = 5; int64 root_id = 6;
  bool is_fusion_computation = 7; }
message HloModuleProto { string name = 1; string entry_computation_name = 2;
  int64 entry_computation_id = 6; repeated HloComputationProto computations = 3;
  int64 id = 5; }
message HloProto { HloModuleProto hlo_module = 1; }
"""


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    """The compiled xplane_min_pb2 and hlo_min_pb2 modules."""
    d = tmp_path_factory.mktemp("proto")
    (d / "xplane_min.proto").write_text(XPLANE_PROTO)
    (d / "hlo_min.proto").write_text(HLO_PROTO)
    subprocess.run(["protoc", f"--proto_path={d}", f"--python_out={d}",
                    "xplane_min.proto", "hlo_min.proto"], check=True)
    sys.path.insert(0, str(d))
    try:
        xplane = importlib.import_module("xplane_min_pb2")
        hlo = importlib.import_module("hlo_min_pb2")
    finally:
        sys.path.remove(str(d))
    return xplane, hlo


def synth(out, *args, check=True):
    """Runs xprofs-synth --out out with args; returns the CompletedProcess."""
    assert os.access(SYNTH, os.X_OK), f"{SYNTH} not built"
    return subprocess.run([SYNTH, "--out", str(out), *map(str, args)],
                          capture_output=True, text=True, check=check)


def host_file(out, host=0, run=RUN, gz=False):
    return out / "plugins" / "profile" / run / (
        f"synth-host-{host}.xplane.pb" + (".gz" if gz else ""))


def load(pb, path):
    space = pb[0].XSpace()
    space.ParseFromString(path.read_bytes())
    return space


def plane(space, name):
    found = [p for p in space.planes if p.name == name]
    assert len(found) == 1, name
    return found[0]


def stat_value(p, s):
    """Value of XStat s of plane p, with ref_value resolved to its name."""
    kind = s.WhichOneof("value")
    assert s.metadata_id in p.stat_metadata
    if kind == "ref_value":
        assert s.ref_value in p.stat_metadata
        return p.stat_metadata[s.ref_value].name
    return getattr(s, kind)


def events(p, line):
    """(name, start_ps, end_ps, stats dict) of every event of a line."""
    out = []
    for e in line.events:
        assert e.metadata_id in p.event_metadata
        t0 = line.timestamp_ns * 1000 + e.offset_ps
        stats = {p.stat_metadata[s.metadata_id].name: stat_value(p, s)
                 for s in e.stats}
        out.append((p.event_metadata[e.metadata_id].name, t0,
                    t0 + e.duration_ps, stats))
    return out


def line_named(p, prefix):
    found = [ln for ln in p.lines if ln.name.startswith(prefix)]
    assert found, prefix
    return found[0]


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    """A 3-step, 2-GPU training profile (default vendor)."""
    out = tmp_path_factory.mktemp("train")
    synth(out, "--steps", 3, "--seed", 11)
    return host_file(out)


def test_decode_raw(train):
    r = subprocess.run(["protoc", "--decode_raw"], stdin=train.open("rb"),
                       capture_output=True)
    assert r.returncode == 0, r.stderr
    assert b"/host:CPU" in r.stdout


def test_planes_and_lines(pb, train):
    space = load(pb, train)
    assert [p.name for p in space.planes] == [
        "/host:metadata", "/device:GPU:0", "/device:GPU:1", "/host:CPU",
        "Task Environment"]
    assert list(space.hostnames) == ["synth-host-0"]
    for g in range(2):
        gpu = plane(space, f"/device:GPU:{g}")
        assert gpu.id == g
        caps = {gpu.stat_metadata[s.metadata_id].name: stat_value(gpu, s)
                for s in gpu.stats}
        assert caps["device_vendor"] == "AMD"
        for key in ("clock_rate", "core_count", "memory_bandwidth",
                    "memory_size", "compute_cap_major", "compute_cap_minor"):
            assert caps[key] > 0
        names = [ln.name for ln in gpu.lines]
        assert len(names) == 4 and all(n.startswith("Stream #") for n in names)
        assert names[0].endswith("(Kernel)") and names[1].endswith("(MemcpyH2D)")
    cpu = plane(space, "/host:CPU")
    names = [ln.name for ln in cpu.lines]
    assert names[0] == "python3"
    assert sum(n.startswith("py_xla_execute/") for n in names) == 2
    assert any(n.startswith("tf_pjrt_thread_pool/") for n in names)
    for ln in cpu.lines:
        if "/" in ln.name:
            assert ln.name.endswith("/%d" % ln.id)
    env = plane(space, "Task Environment")
    times = {env.stat_metadata[s.metadata_id].name: s.uint64_value
             for s in env.stats}
    assert times["profile_stop_time"] > times["profile_start_time"] > 0


def test_events_sorted_and_nested(pb, train):
    space = load(pb, train)
    for p in space.planes:
        for ln in p.lines:
            stack, prev = [], -1
            for name, t0, t1, _ in events(p, ln):
                assert t0 >= prev, (p.name, ln.name, name)
                prev = t0
                while stack and stack[-1] <= t0:
                    stack.pop()
                if p.name.startswith("/device"):
                    assert not stack, (ln.name, name, "stream overlap")
                assert not stack or t1 <= stack[-1], (ln.name, name, "overlap")
                stack.append(t1)


def test_correlation_ids_match(pb, train):
    space = load(pb, train)
    host, dev = {}, {}
    for ln in plane(space, "/host:CPU").lines:
        for name, t0, t1, st in events(plane(space, "/host:CPU"), ln):
            if "correlation_id" in st:
                assert st["correlation_id"] not in host
                host[st["correlation_id"]] = (name, t1, st["device_id"])
    for g in range(2):
        p = plane(space, f"/device:GPU:{g}")
        for ln in p.lines:
            for name, t0, _, st in events(p, ln):
                cid = st["correlation_id"]
                assert cid not in dev
                dev[cid] = True
                launch, launch_end, device_id = host[cid]
                assert device_id == g and t0 >= launch_end
                if "kernel_details" in st:
                    assert launch.startswith("hip") and "Launch" in launch
                    for key in ("hlo_op", "hlo_module", "program_id"):
                        assert key in st
                else:
                    assert "memcpy_details" in st and name.startswith("Copy")
    assert set(host) == set(dev) and len(dev) > 1000


def test_steps_and_threads(pb, train):
    space = load(pb, train)
    cpu = plane(space, "/host:CPU")
    py = events(cpu, line_named(cpu, "python3"))
    steps = [e for e in py if e[0] == "train_step"]
    assert [e[3]["step_num"] for e in steps] == [0, 1, 2]
    assert all(e[3]["_r"] == 1 for e in steps)
    waits = [e for e in py if e[0] == "model_and_wait"]
    inputs = [e for e in py if e[0] == "input_wait"]
    assert len(waits) == len(inputs) == 3
    for step, iw, mw in zip(steps, inputs, waits):
        assert step[1] <= iw[1] < iw[2] <= mw[1] < mw[2] <= step[2]
    helpers = [e for ln in cpu.lines if ln.name.startswith("py_xla_execute/")
               for e in events(cpu, ln)
               if e[0] == "PjRtStreamExecutorLoadedExecutable::ExecuteHelper"]
    assert len(helpers) == 3 * 2 * 2  # steps x GPUs x modules
    for h in helpers:
        assert any(mw[1] <= h[1] and h[2] <= mw[2] for mw in waits)
    names = {e[0] for e in py}
    assert "PjitFunction(train_step)" in names
    assert any(n.startswith("$") for n in names)  # Python tracer events
    for e in events(cpu, line_named(cpu, "python3")):
        assert "group_id" not in e[3]


def test_metadata_and_hlo(pb, train):
    space = load(pb, train)
    meta = plane(space, "/host:metadata")
    modules = {}
    for mid, m in meta.event_metadata.items():
        assert m.id == mid and m.name.endswith("(%d)" % mid)
        (stat,) = m.stats
        assert meta.stat_metadata[stat.metadata_id].name == "Hlo Proto"
        proto = pb[1].HloProto()
        proto.ParseFromString(stat.bytes_value)
        mod = proto.hlo_module
        assert mod.id == mid and mod.entry_computation_name
        names = {i.name for c in mod.computations for i in c.instructions}
        entry = [c for c in mod.computations if c.name == mod.entry_computation_name]
        assert len(entry) == 1
        modules[mid] = (mod.name, names)
    assert len(modules) >= 2
    kernel_names = set()
    for g in range(2):
        p = plane(space, f"/device:GPU:{g}")
        for ln in p.lines:
            for name, _, _, st in events(p, ln):
                if "hlo_op" in st:
                    module, names = modules[st["program_id"]]
                    assert st["hlo_module"] == module and st["hlo_op"] in names
                    kernel_names.add(name)
    assert 100 <= len(kernel_names) <= 1000
    assert any(n.startswith("Cijk_") for n in kernel_names)
    assert any("nccl" in n.lower() for n in kernel_names)


def test_deterministic(tmp_path):
    synth(tmp_path / "a", "--steps", 2, "--seed", 5)
    synth(tmp_path / "b", "--steps", 2, "--seed", 5)
    synth(tmp_path / "c", "--steps", 2, "--seed", 6)
    a = host_file(tmp_path / "a").read_bytes()
    assert a == host_file(tmp_path / "b").read_bytes()
    assert a != host_file(tmp_path / "c").read_bytes()


@pytest.mark.parametrize("mb", [3, 8])
def test_size_mb(tmp_path, mb):
    synth(tmp_path, "--size-mb", mb)
    size = host_file(tmp_path).stat().st_size
    assert abs(size - mb * 1e6) < 0.1 * mb * 1e6, size


def test_gz_and_hosts(pb, tmp_path):
    synth(tmp_path / "plain", "--steps", 2, "--hosts", 3)
    synth(tmp_path / "gz", "--steps", 2, "--hosts", 3, "--gz")
    hosts = set()
    for h in range(3):
        raw = host_file(tmp_path / "plain", h).read_bytes()
        packed = host_file(tmp_path / "gz", h, gz=True).read_bytes()
        assert gzip.decompress(packed) == raw
        space = pb[0].XSpace()
        space.ParseFromString(raw)
        hosts.update(space.hostnames)
    assert hosts == {"synth-host-0", "synth-host-1", "synth-host-2"}


def test_nvidia_names(pb, tmp_path):
    synth(tmp_path, "--steps", 1, "--gpus", 1, "--vendor", "nvidia")
    space = load(pb, host_file(tmp_path))
    gpu = plane(space, "/device:GPU:0")
    assert gpu.lines[0].name.endswith("(Compute)")
    kernels = {m.name for m in gpu.event_metadata.values()}
    assert "MemcpyH2D" in kernels and not any(k.endswith(".kd") for k in kernels)
    cpu = plane(space, "/host:CPU")
    assert "cudaLaunchKernel" in {m.name for m in cpu.event_metadata.values()}


# steps4: the numbers README.md documents, in microseconds since profile start.
STEPS4 = [  # step, input_wait, model_and_wait, union, unattributed
    ((100, 1100), (110, 310), (320, 1070), 950, 50),
    ((1200, 2000), (1200, 1300), (1300, 2000), 800, 0),
    ((2100, 3300), (2150, 2550), (2600, 3200), 1000, 200),
    ((3400, 4000), (3410, 3460), (3470, 3990), 570, 30),
]


def us(ps_pair):
    return (ps_pair[0] // 1000000, ps_pair[1] // 1000000)


def test_steps4(pb, tmp_path):
    synth(tmp_path, "--scenario", "steps4")
    space = load(pb, host_file(tmp_path))
    assert [p.name for p in space.planes] == [
        "/host:metadata", "/device:GPU:0", "/host:CPU", "Task Environment"]
    cpu = plane(space, "/host:CPU")
    t1 = [ln for ln in cpu.lines if ln.id == 1][0]
    t2 = [ln for ln in cpu.lines if ln.id == 2][0]
    ev1 = events(cpu, t1)
    steps = [e for e in ev1 if e[0] == "learner_step"]
    assert [e[3]["step_num"] for e in steps] == [0, 1, 2, 3]
    assert all(e[3]["_r"] == 1 for e in steps)
    iw = [us(e[1:3]) for e in ev1 if e[0] == "input_wait"]
    mw = [us(e[1:3]) for e in ev1 if e[0] == "model_and_wait"]
    total_union = total_unattr = 0
    for k, (step, i, m, union, unattr) in enumerate(STEPS4):
        assert us(steps[k][1:3]) == step and iw[k] == i and mw[k] == m
        got_union = (i[1] - i[0]) + (m[1] - m[0])  # they do not overlap
        assert got_union == union
        assert (step[1] - step[0]) - got_union == unattr
        total_union += union
        total_unattr += unattr
    assert (total_union, total_unattr) == (3320, 280)
    helpers = [us(e[1:3]) for e in events(cpu, t2)
               if e[0] == "PjRtStreamExecutorLoadedExecutable::ExecuteHelper"]
    assert helpers == [(m[0] + 30, m[0] + 130) for _, _, m, _, _ in STEPS4]
    gpu = plane(space, "/device:GPU:0")
    kernels = [(us(e[1:3]), e[3]["correlation_id"]) for e in events(gpu, gpu.lines[0])]
    expected = []
    for k, (_, _, m, _, _) in enumerate(STEPS4):
        expected += [((m[0] + 60, m[0] + 160), 2 * k + 1),
                     ((m[0] + 170, m[0] + 470), 2 * k + 2)]
    assert kernels == expected
    launches = sorted(e[3]["correlation_id"] for e in events(cpu, t2)
                      if "correlation_id" in e[3])
    assert launches == list(range(1, 9))


@pytest.mark.parametrize("args", [
    ["--steps", "0"],
    ["--steps", "abc"],
    ["--gpus", "0"],
    ["--gpus", "65"],
    ["--hosts", "-1"],
    ["--size-mb", "0"],
    ["--size-mb", "1", "--steps", "2"],
    ["--vendor", "intel"],
    ["--scenario", "nope"],
    ["--scenario", "steps4", "--steps", "3"],
    ["--run", "../escape"],
    ["--seed", "-3"],
    ["--bogus"],
    ["extra-argument"],
])
def test_bad_arguments(tmp_path, args):
    r = synth(tmp_path, *args, check=False)
    assert r.returncode != 0
    assert "xprofs-synth" in r.stderr
    assert not (tmp_path / "plugins").exists() or not any(
        (tmp_path / "plugins").rglob("*.xplane.pb"))
