"""memory_viewer.json end to end on the corpus runs with HLO: for every module
of module_list.json, the peak and the heap sizes equal those of a heap
simulation run here over the module's heap-simulator trace (the HloProto
decoded with python3-protobuf from a minimal schema compiled at test time,
from the /host:metadata plane or, for jax_conv_rocm, the .hlo_proto.pb file
XProf reads), following XProf's rules: the trace of the first
non-indefinite allocation of colour 0 that owns one (else the trace with
most events of that colour), reference counts through SHARE_WITH chains, and
every indefinite allocation's size added. A module built here is checked
byte for byte against the JSON XProf's MessageToJsonString writes; the file
is read through the mount too; bad requests fail with a reason.
"""
import errno
import json
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import xplane_py  # noqa: E402

HLO_PROTO = """
syntax = "proto3";
package xprofs_test_mem;
message HloComputationProto { string name = 1; }
message HloModuleProto {
  string name = 1; string entry_computation_name = 2; repeated HloComputationProto computations = 3;
}
message LogicalBufferProto {
  message Location { int64 instruction_id = 4; repeated int64 shape_index = 3; }
  int64 id = 1; int64 size = 2; Location defined_at = 3; int64 color = 4;
}
message BufferAllocationProto {
  message Assigned { int64 logical_buffer_id = 1; int64 offset = 2; int64 size = 3; }
  int64 index = 1; int64 size = 2; bool is_thread_local = 3; bool is_tuple = 11;
  bool is_entry_computation_parameter = 5; bool is_constant = 12; bool maybe_live_out = 7;
  int64 color = 8; repeated Assigned assigned = 9;
}
message HeapSimulatorTrace {
  message Event {
    int32 kind = 1; int64 buffer_id = 2; string instruction_name = 4;
    int64 share_with_canonical_id = 5;
  }
  repeated Event events = 1;
}
message BufferAssignmentProto {
  repeated LogicalBufferProto logical_buffers = 1;
  repeated BufferAllocationProto buffer_allocations = 3;
  repeated HeapSimulatorTrace heap_simulator_traces = 4;
}
message HloProto { HloModuleProto hlo_module = 1; BufferAssignmentProto buffer_assignment = 3; }
"""

RUNS = {
    "jax_conv_rocm/2025_01_01_00_00_00": "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00",
    "jax08_gemm_rocm/s1": "jax08_gemm_rocm/plugins/profile/s1",
    "jax08_conv_rocm/s1": "jax08_conv_rocm/plugins/profile/s1",
    "jax08_elementwise_rocm/s1": "jax08_elementwise_rocm/plugins/profile/s1",
}
MIB = float(1 << 20)


@pytest.fixture(scope="session")
def mem_pb2(tmp_path_factory):
    out = tmp_path_factory.mktemp("mem_pb")
    (out / "xprofs_test_mem.proto").write_text(HLO_PROTO)
    subprocess.run(["protoc", f"--proto_path={out}", f"--python_out={out}",
                    "xprofs_test_mem.proto"], check=True)
    sys.path.insert(0, str(out))
    import xprofs_test_mem_pb2 as mod  # noqa: E402
    return mod


def metadata_protos(rundir, pb2):
    """{module name as module_list.json lists it: HloProto} of the xplanes'
    /host:metadata planes (the first of a name wins)."""
    protos = {}
    for f in sorted(rundir.glob("*.xplane.pb")):
        for plane in xplane_py.load(f).planes:
            if plane.name != "/host:metadata":
                continue
            names = {e.key: e.value.name for e in plane.stat_metadata}
            for entry in plane.event_metadata:
                em = entry.value
                proto = [s for s in em.stats if names.get(s.metadata_id) == "Hlo Proto"]
                pid = [s.int64_value or s.uint64_value for s in em.stats
                       if names.get(s.metadata_id) == "program_id"]
                if not proto:
                    continue
                hp = pb2.HloProto()
                hp.ParseFromString(proto[0].bytes_value)
                name = em.name if "(" in em.name else f"{em.name}({pid[0] if pid else entry.key})"
                protos.setdefault(name, hp)
    return protos


def module_protos(rundir, pb2):
    """The modules XProf's memory viewer reads: the run's .hlo_proto.pb files
    when it has them, else the metadata planes' protos."""
    files = sorted(rundir.glob("*.hlo_proto.pb"))
    if not files:
        return metadata_protos(rundir, pb2)
    protos = {}
    for f in files:
        hp = pb2.HloProto()
        hp.ParseFromString(f.read_bytes())
        protos[f.name[:-len(".hlo_proto.pb")]] = hp
    return protos


def indefinite(a):
    return a.is_thread_local or a.is_entry_computation_parameter or a.is_constant or \
        a.maybe_live_out


def simulate(hp, color=0):
    """(heap sizes in MiB, peak MiB, peak position, indefinite MiB) of XProf's
    replay of the trace of colour `color`, computed independently."""
    ba = hp.buffer_assignment
    lbs = {lb.id: lb for lb in ba.logical_buffers}
    owner = {}
    for a in ba.buffer_allocations:
        for asg in a.assigned:
            if asg.logical_buffer_id in lbs:
                owner[asg.logical_buffer_id] = a
    allocs = sorted((a for a in ba.buffer_allocations if a.color == color),
                    key=lambda a: a.index)
    trace_of = {}
    for i, tr in enumerate(ba.heap_simulator_traces):
        if tr.events and tr.events[0].buffer_id in owner:
            trace_of[owner[tr.events[0].buffer_id].index] = i
    chosen = next((trace_of[a.index] for a in allocs
                   if not indefinite(a) and a.index in trace_of), None)
    if chosen is None:
        counts = [sum(1 for e in tr.events if e.buffer_id in owner
                      and lbs[e.buffer_id].color == color) for tr in ba.heap_simulator_traces]
        if counts and max(counts) > 0:
            chosen = counts.index(max(counts))
    extra = 0
    for a in allocs:
        if not indefinite(a):
            continue
        sizes = [lbs[x.logical_buffer_id].size for x in a.assigned
                 if x.logical_buffer_id in owner]
        if sizes and max(sizes) > 0:
            extra += a.size
    if chosen is None:
        return [], extra / MIB, 0, extra / MIB
    refs, canon = {}, {}

    def root(b):
        while b in canon:
            b = canon[b]
        return b

    heap, peak, pos, sizes = 0, 0, 0, []
    for i, e in enumerate(ba.heap_simulator_traces[chosen].events):
        sizes.append(heap)
        b = e.buffer_id
        if b not in owner:
            continue
        if e.kind == 0:
            refs[root(b)] = refs.get(root(b), 0) + 1
            heap += lbs[b].size
        elif e.kind == 1:
            r = root(b)
            refs[r] -= 1
            if refs[r] == 0:
                heap -= lbs[r].size
        else:
            c = e.share_with_canonical_id
            if c not in owner:
                continue
            canon[b] = c
            r = root(c)
            refs[r] = refs.get(r, 0) + 1
            if refs[r] == 1:
                heap += lbs[r].size
        if heap > peak:
            peak, pos = heap, i
    sizes.append(heap)
    return [s / MIB + extra / MIB for s in sizes], peak / MIB + extra / MIB, pos, extra / MIB


def test_peak_matches_a_heap_simulation(corpus, xcat, mem_pb2):
    checked = traced = 0
    for run, rel in RUNS.items():
        rundir = corpus / rel
        protos = module_protos(rundir, mem_pb2)
        modules = json.loads(xcat(corpus, f"{run}/module_list.json"))
        assert sorted(protos) == sorted(modules), run
        for name in modules:
            hp = protos[name]
            got = json.loads(xcat(corpus, f"{run}/memory_viewer.json?module_name={name}"))
            sizes, peak, pos, extra = simulate(hp)
            assert got["moduleName"] == hp.hlo_module.name
            assert got["entryComputationName"] == hp.hlo_module.entry_computation_name
            assert got.get("peakHeapMib", 0) == pytest.approx(peak, abs=1e-12), (run, name)
            assert got.get("peakHeapSizePosition", 0) == pos, (run, name)
            assert got.get("heapSizes", []) == pytest.approx(sizes, abs=1e-12), (run, name)
            if sizes:
                traced += 1
                # XProf's semantics: the position is the event that made the
                # peak and heapSizes[i] the heap before event i, so the peak
                # shows one position later (where XProf's frontend marks it)
                hs = got["heapSizes"]
                if got.get("peakHeapSizePosition", 0) + 1 < len(hs) and max(hs) > min(hs):
                    assert hs[got.get("peakHeapSizePosition", 0) + 1] == max(hs), (run, name)
                assert len(got["hloInstructionNames"]) == len(sizes)
                assert got["hloInstructionNames"][-1] == ""
            total = sum(a.size for a in hp.buffer_assignment.buffer_allocations
                        if a.color == 0)
            assert got.get("totalBufferAllocationMib", 0) == pytest.approx(total / MIB)
            # every heap object at the peak is a buffer of the module, largest
            # first in maxHeapBySize, with the index maps inverse of each other
            objs, by_size = got.get("maxHeap", []), got.get("maxHeapBySize", [])
            assert sorted(o["numbered"] for o in objs) == list(range(len(objs)))
            assert [o["logicalBufferSizeMib"] for o in by_size] == \
                sorted((o["logicalBufferSizeMib"] for o in objs), reverse=True)
            for i, j in enumerate(got.get("maxHeapToBySize", [])):
                assert got["bySizeToMaxHeap"][j] == i
            checked += 1
    assert checked >= 40 and traced >= 10, (checked, traced)


def test_program_id_and_timeline(corpus, xcat):
    run = "jax08_gemm_rocm/s1"
    by_name = xcat(corpus, f"{run}/memory_viewer.json?module_name=jit_dot(79)")
    assert xcat(corpus, f"{run}/memory_viewer.json?program_id=79") == by_name
    got = json.loads(by_name)
    assert got["bufferBlocks"][0]["logicalBufferId"] == -1
    assert all(b["color"].startswith("#") for b in got["bufferBlocks"])
    html = xcat(corpus, f"{run}/memory_viewer.json?module_name=jit_dot(79)"
                "&view_memory_allocation_timeline=1")
    assert html.startswith(b"<!DOCTYPE html>") and b"graph G {" in html
    assert b"neato" in html
    # a module without a heap-simulator trace has no timeline to draw
    html = xcat(corpus, f"{run}/memory_viewer.json?module_name=jit_dot(5)"
                "&view_memory_allocation_timeline=true")
    assert b"No memory allocation timeline available" in html
    # the same in hosts/<host>/, which XProf's UI asks for with a host
    host = json.loads(xcat(corpus, f"{run}/hosts.json"))[0]["hostname"]
    assert xcat(corpus, f"{run}/hosts/{host}/memory_viewer.json?module_name=jit_dot(79)") == \
        by_name


def test_bad_requests(corpus, xcat):
    run = "jax08_gemm_rocm/s1"
    r = xcat(corpus, f"{run}/memory_viewer.json", check=False)
    assert r.returncode == 2 and b"module_name" in r.stderr
    r = xcat(corpus, f"{run}/memory_viewer.json?module_name=nope(1)", check=False)
    assert r.returncode == 1 and b"no HLO module 'nope(1)'" in r.stderr
    r = xcat(corpus, f"{run}/memory_viewer.json?program_id=123456", check=False)
    assert r.returncode == 1 and b"123456" in r.stderr
    r = xcat(corpus, f"{run}/memory_viewer.json?module_name=jit_dot(79)&memory_space=x",
             check=False)
    assert r.returncode == 2
    # a PyTorch run has no HLO: the file is not there
    r = xcat(corpus, "pytorch/h100_bert_small/memory_viewer.json?module_name=a(1)",
             check=False)
    assert r.returncode == 1


GOLDEN_PROTO = """
syntax = "proto3";
package xprofs_test_golden;
message LayoutProto { repeated int64 minor_to_major = 1; }
message ShapeProto {
  int32 element_type = 2; repeated int64 dimensions = 3;
  repeated ShapeProto tuple_shapes = 4; LayoutProto layout = 5;
}
message OpMetadata { string op_name = 2; string source_file = 3; int32 source_line = 4; }
message HloInstructionProto {
  string name = 1; string opcode = 2; ShapeProto shape = 3; OpMetadata metadata = 7;
  int64 parameter_number = 9; int64 id = 35;
}
message HloComputationProto {
  string name = 1; repeated HloInstructionProto instructions = 2; int64 id = 5; int64 root_id = 6;
}
message HloModuleProto {
  string name = 1; string entry_computation_name = 2; repeated HloComputationProto computations = 3;
  int64 entry_computation_id = 6;
}
message LogicalBufferProto {
  message Location { int64 instruction_id = 4; repeated int64 shape_index = 3; }
  int64 id = 1; int64 size = 2; Location defined_at = 3;
}
message BufferAllocationProto {
  message Assigned { int64 logical_buffer_id = 1; int64 offset = 2; int64 size = 3; }
  int64 index = 1; int64 size = 2; bool is_entry_computation_parameter = 5;
  bool maybe_live_out = 7; repeated Assigned assigned = 9;
}
message HeapSimulatorTrace {
  message Event { int32 kind = 1; int64 buffer_id = 2; bytes instruction_name = 4; }
  repeated Event events = 1;
}
message BufferAssignmentProto {
  repeated LogicalBufferProto logical_buffers = 1;
  repeated BufferAllocationProto buffer_allocations = 3;
  repeated HeapSimulatorTrace heap_simulator_traces = 4;
}
message HloProto { HloModuleProto hlo_module = 1; BufferAssignmentProto buffer_assignment = 3; }
"""


def simple_dtoa(v):
    """protobuf's io::SimpleDtoa."""
    s = "%.15g" % v
    return s if float(s) == v else "%.17g" % v


def pb_json(x):
    """x as MessageToJsonString writes it: compact, floats by SimpleDtoa, '<'
    and '>' escaped (x is built in field-number order, defaults left out)."""
    if isinstance(x, dict):
        return "{" + ",".join(json.dumps(k) + ":" + pb_json(v) for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ",".join(pb_json(v) for v in x) + "]"
    if isinstance(x, float):
        return simple_dtoa(x)
    if isinstance(x, str):
        return json.dumps(x, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    return str(x)


def golden_module(pb2):
    """p (8 MiB parameter), a (4 MiB), b (64 bytes) and the output tuple t;
    a and b live at the peak; an event name that is not UTF-8."""
    hp = pb2.HloProto()
    m = hp.hlo_module
    m.name, m.entry_computation_name, m.entry_computation_id = "m", "main", 1
    c = m.computations.add()
    c.name, c.id, c.root_id = "main", 1, 4

    def ins(name, opcode, dims, iid, op_name="", file=""):
        i = c.instructions.add()
        i.name, i.opcode, i.id = name, opcode, iid
        s = i.shape
        if dims is None:
            s.element_type = 13
            s = s.tuple_shapes.add()
            dims = [1024, 1024]
        s.element_type = 11
        s.dimensions.extend(dims)
        s.layout.minor_to_major.extend(range(len(dims) - 1, -1, -1))
        i.metadata.op_name, i.metadata.source_file = op_name, file
        if file:
            i.metadata.source_line = 5

    ins("p", "parameter", [2048, 1024], 1, "p")
    ins("a", "fusion", [1024, 1024], 2, 'x<y>"z', "s.py")
    ins("b", "fusion", [16], 3, "b")
    ins("t", "tuple", None, 4)
    ba = hp.buffer_assignment
    for lid, size, iid, idx in [(1, 8 << 20, 1, []), (2, 4 << 20, 2, []), (3, 64, 3, []),
                                (4, 4 << 20, 4, [0])]:
        lb = ba.logical_buffers.add()
        lb.id, lb.size, lb.defined_at.instruction_id = lid, size, iid
        lb.defined_at.shape_index.extend(idx)
    for index, size, param, live_out, assigned in [
            (0, 8 << 20, True, False, [(1, 0, 8 << 20)]),
            (1, (4 << 20) + 64, False, False, [(2, 0, 4 << 20), (3, 4 << 20, 64)]),
            (2, 4 << 20, False, True, [(4, 0, 4 << 20)])]:
        a = ba.buffer_allocations.add()
        a.index, a.size = index, size
        a.is_entry_computation_parameter, a.maybe_live_out = param, live_out
        for lid, off, sz in assigned:
            x = a.assigned.add()
            x.logical_buffer_id, x.offset, x.size = lid, off, sz
    tr = ba.heap_simulator_traces.add()
    for kind, buf, name in [(0, 2, b"a"), (0, 3, b"b\xff"), (1, 2, b"t"), (1, 3, b"t")]:
        e = tr.events.add()
        e.kind, e.buffer_id, e.instruction_name = kind, buf, name
    return hp


def golden_json():
    """What XProf prints for golden_module, written out by hand."""
    mib = 1.0 / (1 << 20)
    small = 64 * mib
    shape_a, shape_p = "f32[1024,1024]{1,0}", "f32[2048,1024]{1,0}"
    p = {"numbered": 0, "label": f"p: {shape_p} # p", "logicalBufferId": 1,
         "logicalBufferSizeMib": 8.0, "unpaddedShapeMib": 8.0, "instructionName": "p",
         "shapeString": shape_p, "tfOpName": "p", "groupName": "Parameter",
         "opCode": "parameter"}
    t = {"numbered": 1, "label": f"t: {shape_a} # ", "logicalBufferId": 4,
         "logicalBufferSizeMib": 4.0, "unpaddedShapeMib": 4.0, "instructionName": "t{0}",
         "shapeString": shape_a, "groupName": "Output", "opCode": "tuple"}
    a = {"numbered": 2, "label": f'a: {shape_a} # x<y>"z', "logicalBufferId": 2,
         "logicalBufferSizeMib": 4.0, "unpaddedShapeMib": 4.0, "instructionName": "a",
         "shapeString": shape_a, "tfOpName": 'x<y>"z', "groupName": "Temporary",
         "opCode": "fusion", "sourceInfo": {"fileName": "s.py", "lineNumber": 5}}
    s = {"numbered": 3, "label": "small (<16384 bytes)", "logicalBufferId": -1,
         "logicalBufferSizeMib": small}
    return pb_json({
        "heapSizes": [12.0, 16.0, 16.0 + small, 12.0 + small, 12.0],
        "unpaddedHeapSizes": [12.0, 16.0, 16.0 + small, 12.0 + small, 12.0],
        "maxHeap": [p, t, a, s],
        "maxHeapBySize": [p, t, a, s],
        "logicalBufferSpans": {"2": {"limit": 2}, "3": {"start": 1, "limit": 3}},
        "maxHeapToBySize": [0, 1, 2, 3],
        "bySizeToMaxHeap": [0, 1, 2, 3],
        "moduleName": "m",
        "entryComputationName": "main",
        "peakHeapMib": 16.0 + small,
        "peakUnpaddedHeapMib": 16.0 + small,
        "peakHeapSizePosition": 1,
        "entryComputationParametersMib": 8.0,
        "maybeLiveOutMib": 4.0,
        "indefiniteLifetimes": [
            {"sizeMib": 8.0, "attributes": ["entry computation parameter", "reusable"],
             "logicalBuffers": [{"id": "1", "shape": shape_p, "sizeMib": 8.0, "hloName": "p"}],
             "commonShape": shape_p},
            {"id": "2", "sizeMib": 4.0, "attributes": ["may-be live out", "reusable"],
             "logicalBuffers": [{"id": "4", "shape": shape_a, "sizeMib": 4.0, "hloName": "t",
                                 "shapeIndex": ["0"]}],
             "commonShape": shape_a}],
        "totalBufferAllocationMib": 16.0 + small,
        "indefiniteBufferAllocationMib": 12.0,
        "hloInstructionNames": ["a", "b ", "t", "t", ""],
        "bufferBlocks": [
            {"logicalBufferId": -1, "name": "Temporary", "size": float((4 << 20) + 64),
             "endStep": 4, "category": "Temporary", "color": "#ffffff"},
            {"logicalBufferId": 2, "name": "a", "size": float(4 << 20), "endStep": 2,
             "tfOpName": 'x<y>"z', "category": "Temporary",
             "sourceInfo": {"fileName": "s.py", "lineNumber": 5}, "shapeString": shape_a,
             "unpaddedSize": float(4 << 20), "color": "#81c784"},
            {"logicalBufferId": 3, "name": "b", "offset": float(4 << 20), "size": 64.0,
             "startStep": 1, "endStep": 3, "tfOpName": "b", "category": "Temporary",
             "shapeString": "f32[16]{0}", "unpaddedSize": 64.0, "color": "#81c784"}],
    })


def test_protobuf_json_byte_for_byte(corpus, xcat, tmp_path):
    """A module built here, as a .hlo_proto.pb file of a run: the whole JSON
    as XProf's MessageToJsonString writes it (field order, defaults left
    out, int64 quoted, SimpleDtoa doubles, escapes)."""
    out = tmp_path / "pb"
    out.mkdir()
    (out / "xprofs_test_golden.proto").write_text(GOLDEN_PROTO)
    subprocess.run(["protoc", f"--proto_path={out}", f"--python_out={out}",
                    "xprofs_test_golden.proto"], check=True)
    sys.path.insert(0, str(out))
    import xprofs_test_golden_pb2 as pb2  # noqa: E402
    run = tmp_path / "logs" / "plugins" / "profile" / "r1"
    run.mkdir(parents=True)
    src = corpus / RUNS["jax08_gemm_rocm/s1"] / "tw003.xplane.pb"
    (run / "tw003.xplane.pb").write_bytes(src.read_bytes())
    (run / "m(1).hlo_proto.pb").write_bytes(golden_module(pb2).SerializeToString())
    logdir = tmp_path / "logs"
    assert json.loads(xcat(logdir, "r1/module_list.json")) == ["m(1)"]
    got = xcat(logdir, "r1/memory_viewer.json?module_name=m(1)")
    assert got.decode() == golden_json()


def test_through_the_mount(corpus, mount, xcat):
    mnt = mount(corpus)
    run = "jax08_gemm_rocm/s1"
    name = "memory_viewer.json?module_name=jit_dot(79)"
    assert (mnt / run / name).read_bytes() == xcat(corpus, f"{run}/{name}")
    assert "memory_viewer.json" in [p.name for p in (mnt / run).iterdir()]
    for bad, code in [("memory_viewer.json", errno.EINVAL),
                      ("memory_viewer.json?module_name=nope(1)", errno.ENOENT)]:
        with pytest.raises(OSError) as e:
            (mnt / run / bad).read_bytes()
        assert e.value.errno == code, bad
    assert "memory_viewer" in json.loads((mnt / run / "tools.json").read_text())
    assert "memory_viewer" not in json.loads(
        (mnt / "tf_gpu_multiworker/s1/tools.json").read_text())
