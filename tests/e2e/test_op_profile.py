"""op_profile.json end to end on the corpus runs with HLO.

The key order of each object is XProf 2.23.2's, as its recorded output for a
TPU demo shows it (Locamage/xprof-rs tests/data/op_profile.json): protobuf's
JSON printer, fields in number order, 64-bit integers quoted. Values are
checked against other files: the device time of framework_op_stats.json,
the HLO op rows of hlo_stats.json (occurrences, total time), the module
names of module_list.json; and against the tree's own construction (where
XProf's UpdateNodeMetrics / CombineOpMetrics make a node's time the sum of
its children's: every node of these GPU runs, whose ops have no nested
time, as long as none of its children was pruned).
"""
import json
import re

import pytest

import xplane_py

RUNS = {
    "jax_conv_rocm": "2025_01_01_00_00_00",
    "jax08_gemm_rocm": "s1",
    "jax08_conv_rocm": "s1",
    "jax08_elementwise_rocm": "s1",
}
GROUPS = ("program", "category", "provenance")

# Profile fields of each grouping, in field-number order.
PROFILE_KEYS = {
    "program": ["byProgram", "deviceType", "byProgramExcludeIdle", "aggDvfsTimeScaleMultiplier"],
    "category": ["byCategory", "deviceType", "byCategoryExcludeIdle",
                 "aggDvfsTimeScaleMultiplier"],
    "provenance": ["deviceType", "byProvenance", "byProvenanceExcludeIdle",
                   "aggDvfsTimeScaleMultiplier"],
}
ROOT_NAMES = {"program": "by_program", "category": "by_category", "provenance": "by_provenance"}
# From the recorded XProf output.
NODE_KEYS = ["name", "metrics", "children", "xla", "numChildren"]
METRICS_KEYS = ["flops", "bandwidthUtils", "rawTime", "rawFlops", "rawBytesAccessedArray",
                "occurrences", "avgTimePs", "bf16Flops", "uncappedFlops", "normalizedTimePs"]
XLA_KEYS = ["op", "expression", "provenance", "category", "layout", "computationPrimitiveSize",
            "fingerprint", "programId", "sourceInfo", "xprofKernelMetadata"]
SOURCE_KEYS = ["fileName", "lineNumber", "stackFrame"]


def ordered(pairs):
    """json object hook keeping the key order."""
    return {"__keys__": [k for k, _ in pairs], **dict(pairs)}


def cat_profile(xcat, corpus, run, group=None):
    q = f"?group_by={group}" if group else ""
    return json.loads(xcat(corpus / run, f"{RUNS[run]}/op_profile.json{q}"),
                      object_pairs_hook=ordered)


def nodes(root):
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n["children"])


def table_rows(table):
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, [c.get("v") for c in r["c"]])) for r in table["rows"]]


def device_rows(xcat, corpus, run):
    """Device rows of framework_op_stats.json's first table (with IDLE)."""
    fw = json.loads(xcat(corpus / run, f"{RUNS[run]}/framework_op_stats.json"))
    rows = table_rows(fw[0])
    assert len(rows) < 500  # not cut at XProf's top 500
    return [r for r in rows if r["host_or_device"] == "Device"]


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1.0


def is_leaf_op(n):
    return "xla" in n and not n["children"] and not n["name"].endswith(" and its duplicate(s)")


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("run", sorted(RUNS))
def test_shape(xcat, corpus, run, group):
    p = cat_profile(xcat, corpus, run, group)
    assert p["__keys__"] == PROFILE_KEYS[group]
    assert p["deviceType"] == "GPU"
    assert p["aggDvfsTimeScaleMultiplier"] == 0  # GPU ops carry no DVFS time
    for key in PROFILE_KEYS[group]:
        if key.startswith("by"):
            assert p[key]["name"] == ROOT_NAMES[group]
            for n in nodes(p[key]):
                want = [k for k in NODE_KEYS if k != "xla" or "xla" in n]
                assert n["__keys__"] == want, n["name"]
                m = n["metrics"]
                assert m["__keys__"] == METRICS_KEYS
                assert len(m["bandwidthUtils"]) == 3 and len(m["rawBytesAccessedArray"]) == 3
                assert all(0 <= u <= 1 for u in m["bandwidthUtils"])
                assert isinstance(m["occurrences"], int) and isinstance(n["numChildren"], int)
                # after XProf's second sort/prune pass num_children is what is left
                assert n["numChildren"] == len(n["children"])
                if "xla" in n:
                    x = n["xla"]
                    assert x["__keys__"] == [k for k in XLA_KEYS if k != "layout" or "layout" in x]
                    assert re.fullmatch(r"\d+", x["programId"]) and x["fingerprint"] == "0"
                    assert x["op"] == "" and x["computationPrimitiveSize"] == 0
                    assert x["sourceInfo"]["__keys__"] == SOURCE_KEYS
                    assert "layout" not in x or x["layout"] == {"__keys__": ["dimensions"],
                                                                "dimensions": []}


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("run", sorted(RUNS))
def test_times(xcat, corpus, run, group):
    rows = device_rows(xcat, corpus, run)
    total = sum(r["total_self_time"] for r in rows) * 1e6
    idle = sum(r["total_self_time"] for r in rows if r["type"] == "IDLE") * 1e6
    p = cat_profile(xcat, corpus, run, group)
    key = PROFILE_KEYS[group][0 if group != "provenance" else 1]
    root, root_busy = p[key], p[key + "ExcludeIdle"]
    # the root's time is the device's total time (with or without IDLE)
    assert close(root["metrics"]["rawTime"], total)
    assert close(root_busy["metrics"]["rawTime"], total - idle)
    idles = [c for c in root["children"] if c["name"] == "IDLE"]
    assert len(idles) == 1 and close(idles[0]["metrics"]["rawTime"], idle)
    assert not any(c["name"] == "IDLE" for c in root_busy["children"])
    for tree in (root, root_busy):
        for n in nodes(tree):
            if n["children"] and len(n["children"]) < 100:
                kids = sum(c["metrics"]["rawTime"] for c in n["children"])
                assert close(kids, n["metrics"]["rawTime"]), n["name"]
            kids = [c["metrics"]["rawTime"] for c in n["children"]]
            assert kids == sorted(kids, reverse=True), n["name"]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_ops_match_hlo_stats(xcat, corpus, run):
    hs = table_rows(json.loads(xcat(corpus / run, f"{RUNS[run]}/hlo_stats.json")))
    by_op = {(str(r["program_id"]), r["hlo_op_name"]): r for r in hs}
    p = cat_profile(xcat, corpus, run)
    leaves = [n for n in nodes(p["byProgram"]) if is_leaf_op(n) and n["name"] != "IDLE"]
    assert len(leaves) == len(by_op)
    for n in leaves:
        r = by_op[(n["xla"]["programId"], n["name"])]
        assert n["metrics"]["occurrences"] == r["occurrences"], n["name"]
        assert close(n["metrics"]["rawTime"], r["total_time"] * 1e6), n["name"]
        assert n["xla"]["category"] == r["category"]
    # a category node counts every op of its category, pruned ones too
    pc = cat_profile(xcat, corpus, run, "category")
    for c in pc["byCategoryExcludeIdle"]["children"]:
        want = sum(r["occurrences"] for r in hs if r["category"] == c["name"])
        assert c["metrics"]["occurrences"] == want, c["name"]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_program_names(xcat, corpus, run):
    modules = set(json.loads(xcat(corpus / run, f"{RUNS[run]}/module_list.json")))
    p = cat_profile(xcat, corpus, run)
    for c in p["byProgram"]["children"]:
        if c["name"] != "IDLE":
            assert c["name"] in modules
            assert c["name"].endswith("(%s)" % c["children"][0]["children"][0]["xla"]["programId"])


@pytest.mark.parametrize("run", sorted(RUNS))
def test_provenance_paths(xcat, corpus, run):
    # each op sits under the parts of its provenance: split on '/', the last
    # cut at its first ':'
    p = cat_profile(xcat, corpus, run, "provenance")

    def walk(n, path):
        if is_leaf_op(n):
            prov = n["xla"]["provenance"]
            parts = [s for s in prov.split("/") if s]
            if parts:
                parts[-1] = parts[-1].split(":")[0]
            # path: program, provenance parts..., category
            assert path == [path[0]] + parts + [n["xla"]["category"]], (n["name"], path)
            return
        if not n["name"].endswith(" and its duplicate(s)"):
            path = path + [n["name"]]
        for c in n["children"]:
            walk(c, path)

    for c in p["byProvenance"]["children"]:
        if c["name"] != "IDLE":
            walk(c, [])


def test_defaults_and_hosts(xcat, corpus):
    run = "jax08_gemm_rocm"
    plain = xcat(corpus / run, f"{RUNS[run]}/op_profile.json")
    assert xcat(corpus / run, f"{RUNS[run]}/op_profile.json?group_by=program") == plain
    host = json.loads(xcat(corpus / run, f"{RUNS[run]}/hosts.json"))[0]["hostname"]
    assert xcat(corpus / run, f"{RUNS[run]}/hosts/{host}/op_profile.json") == plain


def test_bad_group_by(xcat, corpus):
    r = xcat(corpus / "jax08_gemm_rocm", "s1/op_profile.json?group_by=bogus", check=False)
    assert r.returncode == 2 and r.stdout == b""
    assert b"group_by=bogus" in r.stderr


def test_idle_only(xcat, corpus):
    # TF-GPU ops without HLO leave the device db holding IDLE alone: the root
    # (no xla, every child with xla) is a dedup group of one and is replaced
    # by the IDLE op, as XProf's FinalizeDeduplicatedNodes does
    run = corpus / "tf_gpu_multiworker"
    fw = json.loads(xcat(run, "s1/framework_op_stats.json"))
    types = {r["type"] for r in table_rows(fw[0]) if r["host_or_device"] == "Device"}
    if types != {"IDLE"}:
        pytest.skip("the device db holds more than IDLE")
    p = json.loads(xcat(run, "s1/op_profile.json"))
    assert p["byProgram"]["name"] == "IDLE" and p["byProgram"]["xla"]["category"] == "IDLE"
    assert p["byProgramExcludeIdle"]["name"] == "by_program"
    assert p["byProgramExcludeIdle"]["children"] == []


def test_no_device_ops(xcat, tmp_path):
    # a CPU-only host: the device db is empty and XProf's trees are empty
    # Nodes (BuildOpProfileNodeTree returns before naming the root)
    space = xplane_py.pb2().XSpace()
    p = space.planes.add()
    p.id = 1
    p.name = "/host:CPU"
    e = p.event_metadata.add()
    e.key = e.value.id = 1
    e.value.name = "matmul"
    ev = xplane_py.add_line(p, 1, "python").events.add()
    ev.metadata_id = 1
    ev.offset_ps = 1000
    ev.duration_ps = 5000
    d = tmp_path / "plugins/profile/cpu"
    d.mkdir(parents=True)
    (d / "h.xplane.pb").write_bytes(space.SerializeToString())
    empty = '{"name":"","children":[],"numChildren":0}'
    want = {
        "program": '{"byProgram":%s,"deviceType":"CPU_ONLY","byProgramExcludeIdle":%s,'
                   '"aggDvfsTimeScaleMultiplier":0}',
        "provenance": '{"deviceType":"CPU_ONLY","byProvenance":%s,"byProvenanceExcludeIdle":%s,'
                      '"aggDvfsTimeScaleMultiplier":0}',
    }
    for group, text in want.items():
        got = xcat(tmp_path, f"cpu/op_profile.json?group_by={group}").decode()
        assert got == text % (empty, empty)


def _kernel_metadata(expression):
    """ExtractXprofKernelMetadata recomputed: the JSON dict of the
    kernel_metadata frontend attribute, its xprof_metadata member (parsed
    again when a string), dumped as nlohmann does (sorted keys, no blanks)."""
    m = re.search(r", frontend_attributes=\{(?:[^{}]*,)?kernel_metadata=", expression)
    if "xprof_metadata" not in expression or m is None:
        return ""
    try:
        attr, _ = json.JSONDecoder().raw_decode(expression, m.end())
    except ValueError:
        return ""
    if not isinstance(attr, dict) or "xprof_metadata" not in attr:
        return ""
    meta = attr["xprof_metadata"]
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            return ""
    return json.dumps(meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("group", GROUPS)
def test_kernel_metadata_tpu(xcat, xprofs_build, tmp_path, group):
    """The TPU scenario's custom-call carries XProf's kernel_metadata
    attribute: its leaf (and a dedup node copying it) shows xprof_metadata;
    every other node with an xla field has ""."""
    import subprocess
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(tmp_path), "--run", "r",
                    "--scenario", "tpu", "--seed", "1"], check=True, timeout=60,
                   capture_output=True)
    prof = json.loads(xcat(tmp_path, f"r/op_profile.json?group_by={group}"))
    found = 0
    for key, tree in prof.items():
        if not isinstance(tree, dict):
            continue
        for n in nodes(tree):
            if "xla" not in n:
                continue
            want = _kernel_metadata(n["xla"]["expression"])
            assert n["xla"]["xprofKernelMetadata"] == want, n["name"]
            found += want != ""
    assert found >= 2  # the custom-call in both trees (with and without IDLE)
    assert _kernel_metadata(
        '%c = f32[] custom-call(), frontend_attributes={kernel_metadata={"xprof_metadata": '
        '"{\\"tile\\": [8, 128], \\"kernel\\": \\"mosaic\\"}"}}') == \
        '{"kernel":"mosaic","tile":[8,128]}'
