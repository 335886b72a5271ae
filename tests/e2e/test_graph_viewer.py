"""graph_viewer.json end to end on the corpus runs with HLO: for the modules
of module_list.json (the HloProtos read here with python3-protobuf from a
minimal schema compiled at test time: the run's .hlo_proto.pb files, else
the Hlo Proto stats of /host:metadata), type=adj_nodes of every entry
instruction equals the operands and users read from the proto, walked
through get-tuple-elements as XProf does; short_txt and long_txt hold every
instruction name of the entry computation; pb is the stored bytes; the DOT
of type=graph parses as a digraph whose edges join its nodes and holds the
centre node as a diamond, or the whole computation when node_name names
one; format=html is XProf's page around the same DOT. Bad requests fail
with a reason, through the CLI and the mount.
"""
import errno
import json
import pathlib
import re
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import xplane_py  # noqa: E402

HLO_PROTO = """
syntax = "proto3";
package xprofs_test_gv;
message HloInstructionProto {
  string name = 1; string opcode = 2; int64 parameter_number = 9; int64 id = 35;
  repeated int64 operand_ids = 36; repeated int64 called_computation_ids = 38;
}
message HloComputationProto {
  string name = 1; repeated HloInstructionProto instructions = 2; int64 id = 5; int64 root_id = 6;
}
message HloModuleProto {
  string name = 1; string entry_computation_name = 2; repeated HloComputationProto computations = 3;
  int64 entry_computation_id = 6;
}
message HloProto { HloModuleProto hlo_module = 1; }
"""

RUNS = {
    "jax_conv_rocm/2025_01_01_00_00_00": "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00",
    "jax08_gemm_rocm/s1": "jax08_gemm_rocm/plugins/profile/s1",
    "jax08_conv_rocm/s1": "jax08_conv_rocm/plugins/profile/s1",
    "jax08_elementwise_rocm/s1": "jax08_elementwise_rocm/plugins/profile/s1",
}


@pytest.fixture(scope="session")
def gv_pb2(tmp_path_factory):
    out = tmp_path_factory.mktemp("gv_pb")
    (out / "xprofs_test_gv.proto").write_text(HLO_PROTO)
    subprocess.run(["protoc", f"--proto_path={out}", f"--python_out={out}",
                    "xprofs_test_gv.proto"], check=True)
    sys.path.insert(0, str(out))
    import xprofs_test_gv_pb2 as mod  # noqa: E402
    return mod


def module_bytes(rundir):
    """{module name as module_list.json lists it: HloProto bytes} as XProf's
    HLO tools find them: the .hlo_proto.pb files when the run has them,
    else the metadata planes' stats (the first of a name wins)."""
    files = sorted(rundir.glob("*.hlo_proto.pb"))
    if files:
        return {f.name[:-len(".hlo_proto.pb")]: f.read_bytes() for f in files}
    found = {}
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
                if proto:
                    name = em.name if "(" in em.name else \
                        f"{em.name}({pid[0] if pid else entry.key})"
                    found.setdefault(name, proto[0].bytes_value)
    return found


def entry_of(module):
    for c in module.computations:
        if c.id == module.entry_computation_id:
            return c
    return next(c for c in module.computations if c.name == module.entry_computation_name)


def expected_adjacent(comp, ins):
    """XProf's GetAdjacentNodes, read from the proto: operands by operand_ids,
    users in instruction order (each once); a name starting with
    get-tuple-element stands for its own operands / users."""
    by_id = {i.id: i for i in comp.instructions}
    users = {i.id: [] for i in comp.instructions}
    for u in comp.instructions:
        for op in dict.fromkeys(u.operand_ids):
            users[op].append(u)

    def walk(x, nexts):
        out = []
        for y in nexts(x):
            out += walk(y, nexts) if y.name.startswith("get-tuple-element") else [y.name]
        return out

    return {"consumer_names": walk(ins, lambda x: users[x.id]),
            "operand_names": walk(ins, lambda x: [by_id[i] for i in x.operand_ids])}


def tokens(dot):
    """The DOT text as tokens: identifiers and numbers, "strings", <html>
    strings (nested <>), punctuation; comments dropped."""
    out, i, n = [], 0, len(dot)
    while i < n:
        c = dot[i]
        if c.isspace():
            i += 1
        elif dot.startswith("//", i):
            i = dot.index("\n", i) if "\n" in dot[i:] else n
        elif c == '"':
            j = i + 1
            while dot[j] != '"':
                j += 2 if dot[j] == "\\" else 1
            out.append(("str", dot[i + 1:j]))
            i = j + 1
        elif c == "<":
            depth, j = 0, i
            while True:
                depth += {"<": 1, ">": -1}.get(dot[j], 0)
                j += 1
                if depth == 0:
                    break
            out.append(("html", dot[i + 1:j - 1]))
            i = j
        elif dot.startswith("->", i):
            out.append(("op", "->"))
            i += 2
        elif c in "{}[];,=":
            out.append(("op", c))
            i += 1
        else:
            m = re.match(r"[A-Za-z0-9_.]+", dot[i:])
            assert m, f"bad DOT at {dot[i:i + 40]!r}"
            out.append(("id", m.group(0)))
            i += m.end()
    return out


def parse_dot(dot):
    """A digraph's nodes {id: attrs}, edges [(from, to)] and subgraph count,
    checking its grammar (graph, subgraph, node, edge and attribute
    statements)."""
    t = tokens(dot)
    assert t[0] == ("id", "digraph") and t[1][0] == "id" and t[2] == ("op", "{")
    nodes, edges, pos, depth, subgraphs = {}, [], 3, 1, 0

    def attrs(p):
        a = {}
        assert t[p] == ("op", "[")
        p += 1
        while t[p] != ("op", "]"):
            k = t[p]
            assert k[0] == "id" and t[p + 1] == ("op", "=") and t[p + 2][0] in ("id", "str", "html")
            a[k[1]] = t[p + 2][1]
            p += 3
            if t[p] == ("op", ","):
                p += 1
        return a, p + 1

    while depth > 0:
        tok = t[pos]
        if tok == ("op", "}"):
            depth -= 1
            pos += 1
        elif tok == ("id", "subgraph"):
            assert t[pos + 1][0] == "id" and t[pos + 2] == ("op", "{")
            subgraphs += 1
            depth += 1
            pos += 3
        elif tok == ("op", ";"):
            pos += 1
        elif tok[0] == "id" and t[pos + 1] == ("op", "="):
            assert t[pos + 2][0] in ("id", "str", "html")
            pos += 3
        elif tok[0] == "id" and t[pos + 1] == ("op", "->"):
            assert t[pos + 2][0] == "id"
            edges.append((tok[1], t[pos + 2][1]))
            _, pos = attrs(pos + 3)
        elif tok[0] == "id" and t[pos + 1] == ("op", "["):
            nodes[tok[1]], pos = attrs(pos + 1)
        else:
            raise AssertionError(f"unexpected DOT token {tok}")
    assert pos == len(t)
    return nodes, edges, subgraphs


def modules(corpus, xcat, pb2):
    """(run, name, bytes, HloModuleProto) of every module of the runs."""
    for run, d in RUNS.items():
        stored = module_bytes(corpus / d)
        for name in json.loads(xcat(corpus, f"{run}/module_list.json")):
            hp = pb2.HloProto()
            hp.ParseFromString(stored[name])
            yield run, name, stored[name], hp.hlo_module


def test_adjacent_nodes_text_and_bytes(corpus, xcat, gv_pb2):
    checked = 0
    for run, name, raw, mod in modules(corpus, xcat, gv_pb2):
        base = f"{run}/graph_viewer.json?module_name={name}"
        assert xcat(corpus, f"{base}&type=pb") == raw
        entry = entry_of(mod)
        short = xcat(corpus, f"{base}&type=short_txt").decode()
        long = xcat(corpus, f"{base}&type=long_txt&show_metadata=true").decode()
        assert short.startswith(f"HloModule {mod.name}")
        assert f"\nENTRY {entry.name} {{\n" in short
        assert f"\nENTRY %{entry.name} (" in long
        for ins in entry.instructions:
            root = "ROOT " if ins.id == entry.root_id else ""
            assert f"\n  {root}{ins.name} = " in short, (name, ins.name)
            assert f"\n  {root}%{ins.name} = " in long, (name, ins.name)
        for ins in entry.instructions:
            got = json.loads(xcat(corpus, f"{base}&type=adj_nodes&node_name={ins.name}"))
            assert got == expected_adjacent(entry, ins), (name, ins.name)
            checked += 1
        # the same answer for type=adjacent_nodes, and per host
        ins = entry.instructions[-1]
        assert xcat(corpus, f"{base}&type=adjacent_nodes&node_name={ins.name}") == \
            xcat(corpus, f"{base}&type=adj_nodes&node_name={ins.name}")
    assert checked > 100


def test_graph_dot(corpus, xcat, gv_pb2):
    drawn = 0
    for run, name, _, mod in modules(corpus, xcat, gv_pb2):
        base = f"{run}/graph_viewer.json?module_name={name}&type=graph&format=dot"
        entry = entry_of(mod)
        for ins in entry.instructions:
            dot = xcat(corpus, f"{base}&node_name={ins.name}").decode()
            nodes, edges, _ = parse_dot(dot)
            assert f"Neighborhood of 3 nodes around {ins.name}<br/>" in dot
            centre = [a for a in nodes.values() if a.get("shape") == "diamond"]
            want = f"<b>Parameter {ins.parameter_number}</b>" if ins.opcode == "parameter" \
                else f"<b>{ins.name}</b>"
            # a fusion drawn as its cluster has no node of its own
            if centre:
                assert want in centre[0]["label"], (name, ins.name)
            else:
                assert ins.opcode in ("fusion", "get-tuple-element", "constant"), ins.name
            for a, b in edges:
                assert a in nodes and (b in nodes or b.startswith("cluster_")), (a, b)
            drawn += 1
        # a whole computation, merged fusions, another radius
        dot = xcat(corpus, f"{base}&node_name={entry.name}&merge_fusion=true").decode()
        nodes, _, subgraphs = parse_dot(dot)
        assert f"<br/>Computation {entry.name}<br/>ENTRY computation" in dot
        assert subgraphs == 0 or "Subcomputation for" in dot
        assert not any(a.get("shape") == "diamond" for a in nodes.values())
        ins = entry.instructions[len(entry.instructions) // 2]
        one = parse_dot(xcat(corpus, f"{base}&node_name={ins.name}&graph_width=1").decode())[0]
        assert len(one) <= len(parse_dot(xcat(corpus, f"{base}&node_name={ins.name}"
                                                      f"&graph_width=5").decode())[0])
    assert drawn > 100


def test_graph_html(corpus, xcat):
    run = "jax_conv_rocm/2025_01_01_00_00_00"
    q = f"{run}/graph_viewer.json?module_name=jit_forward_3d_conv(15)&type=graph&" \
        "node_name=cudnn-conv.1.0"
    dot = xcat(corpus, q + "&format=dot").decode()
    html = xcat(corpus, q + "&format=html").decode()
    assert html.startswith("\n<!DOCTYPE html>")
    body = html.split("const data = `", 1)[1].split("`;\n", 1)[0]
    # the DOT inside a JavaScript template literal, escapes undone
    assert re.sub(r"\\(.)", r"\1", body) == dot
    assert 'hpccWasm.graphviz.layout(dot_data, "svg", "dot")' in html
    assert "activation_mode=none<br/>algo=0" in dot


def test_bad_requests(corpus, xcat):
    run = "jax_conv_rocm/2025_01_01_00_00_00"
    m = "module_name=jit_forward_3d_conv(15)"
    cases = [
        (f"graph_viewer.json?{m}", b"must provide a type"),
        (f"graph_viewer.json?{m}&type=nope", b"Unknown graph viewer type option: nope"),
        ("graph_viewer.json?type=short_txt", b"module_name"),
        ("graph_viewer.json?type=short_txt&module_name=nope(1)", b"nope(1)"),
        (f"graph_viewer.json?{m}&type=adj_nodes", b"node_name should not be empty"),
        (f"graph_viewer.json?{m}&type=adj_nodes&node_name=zzz",
         b"Couldn't find HloInstruction or HloComputation named zzz."),
        (f"graph_viewer.json?{m}&type=adj_nodes&node_name=main.4_spmd",
         b"'main.4_spmd' is a computation: type=adj_nodes takes an instruction"),
        (f"graph_viewer.json?{m}&type=graph&node_name=zzz&format=dot", b"named zzz"),
        (f"graph_viewer.json?{m}&type=graph&node_name=cudnn-conv.1.0", b"no URL renderer"),
        (f"graph_viewer.json?{m}&type=graph&node_name=cudnn-conv.1.0&format=svg",
         b"Invalid graph format argument: svg"),
        (f"graph_viewer.json?{m}&type=graph&node_name=x&graph_width=-1", b"graph_width"),
        (f"graph_viewer.json?{m}&type=json", b"Not implemented"),
        (f"graph_viewer.json?{m}&type=pbtxt", b"not supported"),
        (f"graph_viewer.json?{m}&type=pb&color=1", b"color"),
    ]
    for path, reason in cases:
        r = xcat(corpus, f"{run}/{path}", check=False)
        assert r.returncode == 2 and reason in r.stderr and r.stdout == b"", (path, r.stderr)
    r = xcat(corpus, "pytorch/h100_bert_small/graph_viewer.json?type=pb&module_name=a(1)",
             check=False)
    assert r.returncode == 1


def test_listing_and_mount(corpus, mount, xcat):
    run = "jax08_gemm_rocm/s1"
    assert b"graph_viewer" in xcat(corpus, f"{run}/tools.json")
    mnt = mount(corpus)
    assert "graph_viewer.json" in [p.name for p in (mnt / run).iterdir()]
    path = "graph_viewer.json?module_name=jit_dot(79)&type=short_txt"
    assert (mnt / run / path).read_bytes() == xcat(corpus, f"{run}/{path}")
    host = json.loads(xcat(corpus, f"{run}/hosts.json"))[0]["hostname"]
    assert (mnt / run / "hosts" / host / path).read_bytes() == xcat(corpus, f"{run}/{path}")
    for bad in ["graph_viewer.json?type=short_txt",
                "graph_viewer.json?module_name=jit_dot(79)&type=graph&node_name=zzz"]:
        with pytest.raises(OSError) as e:
            (mnt / run / bad).read_bytes()
        assert e.value.errno == errno.EINVAL, bad
