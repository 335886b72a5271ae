"""The derived GPU lines that need HLO: "Framework Name Scope", "Framework Ops"
and "Source code" (XProf's DeriveEventsFromAnnotations with the HLO symbol
resolver, xprof/utils/derived_timeline.cc).

Expected events are computed here from the raw profile: the HLO modules of
/host:metadata read with a small protobuf wire reader written below, the
kernels' stats through xplane_py, the framework op names parsed by a Python
port of tf_op_utils.cc's rules, and the merging of consecutive events by a
Python model of XProf's DerivedXLineBuilder. Only group ids (tested
elsewhere) are taken from the answer, from its own kernel events.
"""
import json
import re
import subprocess

import pytest

import xplane_py

RUNS = {
    "jax_conv_rocm/2025_01_01_00_00_00":
        "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00/"
        "chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb",
    "jax08_conv_rocm/s1": "jax08_conv_rocm/plugins/profile/s1/tw003.xplane.pb",
    "jax08_gemm_rocm/s1": "jax08_gemm_rocm/plugins/profile/s1/tw003.xplane.pb",
}
NEW_LINES = ("Framework Name Scope - from #", "Framework Ops - from #", "Source code - from #")


# --- protobuf wire reading (HloProto) -------------------------------------------

def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            v, i = b[i:i + 8], i + 8
        elif t == 5:
            v, i = b[i:i + 4], i + 4
        elif t == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(f"wire type {t}")
        yield f, t, v


def hlo_instructions(proto):
    """name -> (op_name, op_type, source_file, source_line), first of a name kept."""
    out = {}
    for f, _, module in fields(proto):
        if f != 1:
            continue
        for f2, _, comp in fields(module):
            if f2 != 3:
                continue
            for f3, _, ins in fields(comp):
                if f3 != 2:
                    continue
                name, md = "", {}
                for f4, t4, v in fields(ins):
                    if f4 == 1:
                        name = v.decode()
                    elif f4 == 7:
                        for f5, t5, v5 in fields(v):
                            md[f5] = v5.decode() if t5 == 2 else v5
                line = md.get(4, 0)
                line = line - (1 << 64) if line >= 1 << 63 else line
                out.setdefault(name, (md.get(2, ""), md.get(1, ""), md.get(3, ""),
                                      line - (1 << 32) if line >= 1 << 31 else line))
    return out


def stat_value(st, smeta):
    kind = st.WhichOneof("value")
    if kind == "ref_value":
        return smeta.get(st.ref_value, "")
    return getattr(st, kind) if kind else None


def hlo_modules(space):
    """program id -> instructions, as XProf's HloProtoMap finds them."""
    mods = {}
    for pl in space.planes:
        if pl.name != "/host:metadata":
            continue
        smeta = {e.key: e.value.name for e in pl.stat_metadata}
        for ent in pl.event_metadata:
            em = ent.value
            proto, program = None, ent.key
            for st in em.stats:
                name = smeta.get(st.metadata_id)
                if name in ("Hlo Proto", "HLO Proto") and proto is None:
                    proto = st.bytes_value
            for st in em.stats:
                if smeta.get(st.metadata_id) == "program_id":
                    program = stat_value(st, smeta)
                    break
            if proto is not None and program not in mods:
                mods[program] = hlo_instructions(proto)
    return mods


# --- framework op names (a port of tf_op_utils.cc's rules) ----------------------

def is_integer(s):
    return re.fullmatch(r"\s*[+-]?\d+\s*", s) is not None and abs(int(s)) < 1 << 63


def derive_op_type(name):
    last = name.split("/")[-1]
    suffix = last.split("_")[-1]
    return last[:len(last) - len(suffix) - 1] if is_integer(suffix) else last


def parse_tf_op(full):
    """(category, name, type) like ParseTfOpFullname."""
    if ":" not in full:
        return "unknown", full, ""
    left, right = full.split(":", 1)
    if left == "Iterator":
        return "tfdata", full, "Dataset"
    if re.fullmatch(r"[A-Za-z0-9.][A-Za-z0-9_./>-]*", left) and \
            re.fullmatch(r"[A-Z_][a-zA-Z0-9_]*", right):
        return "tf", left, right
    op_type = right or derive_op_type(left)
    if re.fullmatch(r"[a-z_][a-z0-9_]*(\[.*\])?", op_type):
        return "jax", left, op_type.split("[")[0]
    if not right:
        return "tf", left, op_type
    return "unknown", full, ""


def shown_name(full):
    cat, name, typ = parse_tf_op(full)
    if cat == "unknown":
        shown = name.rstrip(" \t\n\r\f\v")
    elif cat == "tfdata":
        shown = "Iterator::" + name.split("::")[-1]
    else:
        shown = typ
    return shown or full


def name_scopes(full):
    cat, name, _ = parse_tf_op(full)
    return name.split("/")[:-1] if cat in ("tf", "jax") else []


# --- XProf's DerivedXLineBuilder ------------------------------------------------

class Line:
    def __init__(self, deps=()):
        self.events = []  # [name, begin, end, group]
        self.last = {}    # level -> index of the last event
        self.size = 0     # levels ever used
        self.deps = deps

    def add(self, name, begin, end, group, level=0):
        self.size = max(self.size, level + 1)
        i = self.last.get(level)
        if i is not None and self.events[i][0] == name and self.events[i][3] == group:
            ev = self.events[i]
            ev[1], ev[2] = min(ev[1], begin), max(ev[2], end)
            return
        self.reset(level)
        self.events.append([name, begin, end, group])
        self.last[level] = len(self.events) - 1

    def add_levels(self, names, begin, end, group):
        if not names:
            return
        for level, name in enumerate(names):
            self.add(name, begin, end, group, level)
        self.reset(len(names))

    def adjust(self, level):
        if level not in self.last:
            return
        top = level
        while top + 1 < self.size and top + 1 in self.last:
            top += 1
        if top <= level:
            return
        t = self.events[self.last[top]]
        max_shrink = (t[2] - t[1]) // 1000 - 1
        shrink, prev = 0, None
        for lv in range(level, top + 1):
            ev = self.events[self.last[lv]]
            if shrink < max_shrink and prev == (ev[1], ev[2]):
                shrink += 1
            prev = (ev[1], ev[2])
            if shrink:
                ev[2] -= 1000 * shrink

    def reset(self, level):
        self.adjust(level)
        for lv in [k for k in self.last if k >= level]:
            del self.last[lv]
        if level == 0:
            for d in self.deps:
                d.reset(0)


def expected_lines(space, groups):
    """(pid, line name) -> sorted [(begin, end, shown name, group)] of the new lines."""
    mods = hlo_modules(space)
    out = {}
    for pl in space.planes:
        if not pl.name.startswith("/device:GPU:"):
            continue
        pid = 1001 + pl.id
        smeta = {e.key: e.value.name for e in pl.stat_metadata}
        emeta = {e.key: e.value for e in pl.event_metadata}
        for ln in pl.lines:
            if ln.id & 0xFFFFFFFF >= 0xDEADBEEF or not ln.events:
                continue
            tf_ops = Line()
            scopes = Line([tf_ops])
            source = Line()
            modules = Line([scopes])
            evs = []
            for ev in ln.events:
                st = {smeta.get(s.metadata_id): stat_value(s, smeta) for s in ev.stats}
                begin = ln.timestamp_ns * 1000 + ev.offset_ps
                evs.append((begin, -ev.duration_ps, len(evs), ev, st))
            for begin, negdur, _, ev, st in sorted(evs):
                end = begin - negdur
                if not st.get("kernel_details"):
                    continue
                group = groups.get((pid, begin, end), -1)
                program = st.get("program_id")
                if st.get("hlo_module"):
                    mod = st["hlo_module"]
                    modules.add(f"{mod}({program})" if program is not None else mod,
                                begin, end, group)
                if "hlo_op" in st:
                    ins = mods.get(program, {}).get(st["hlo_op"].split("::")[-1]) \
                        if program is not None else None
                    if ins is None:
                        continue
                    op_name, op_type, file, line = ins
                    full = f"{op_name}:{op_type}"
                    scopes.add_levels(name_scopes(full), begin, end, group)
                    tf_ops.add(full, begin, end, group)
                    if file:
                        source.add(f"{file.split('/')[-1]}:{line}", begin, end, group)
            for title, lb, shown in (("Framework Name Scope", scopes, lambda n: n),
                                     ("Framework Ops", tf_ops, shown_name),
                                     ("Source code", source, lambda n: n)):
                if lb.events:
                    out[(pid, f"{title} - from #{ln.id}")] = sorted(
                        (b, e, shown(n), g) for n, b, e, g in lb.events)
    return out


# --- the answer -----------------------------------------------------------------

def answer(xprofs_build, corpus, run):
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(corpus),
                        run + "/trace_viewer.json"], capture_output=True, check=True,
                       timeout=600)
    return json.loads(r.stdout)


def thread_names(doc):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
            if e.get("name") == "thread_name"}


def ps(us):
    return round(us * 1e6)


def kernel_groups(doc, names):
    """(pid, begin ps, end ps) -> group id of the answer's stream events."""
    out = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and names.get((e["pid"], e["tid"]), "").startswith("Stream #"):
            if "group_id" in e.get("args", {}):
                b = ps(e["ts"])
                out[(e["pid"], b, b + ps(e["dur"]))] = e["args"]["group_id"]
    return out


def check_lines(doc, space):
    """The answer's new lines equal the model's; returns them."""
    names = thread_names(doc)
    want = expected_lines(space, kernel_groups(doc, names))
    got = {}
    for e in doc["traceEvents"]:
        n = names.get((e.get("pid"), e.get("tid")), "")
        if e.get("ph") == "X" and n.startswith(NEW_LINES):
            b = ps(e["ts"])
            got.setdefault((e["pid"], n), []).append(
                (b, b + ps(e["dur"]), e["name"], e["args"].get("group_id", -1)))
    got = {k: sorted(v) for k, v in got.items()}
    assert want, "the run has XLA ops with HLO metadata"
    assert set(got) == set(want)
    for k in want:
        assert got[k] == want[k], k
    # A framework op shown by its type carries its full name as long_name,
    # a stack frame once it is 17 bytes or more.
    frames = {f["name"] for f in doc["stackFrames"].values()}
    fulls = {f"{i[0]}:{i[1]}" for mod in hlo_modules(space).values() for i in mod.values()}
    shown_ops = {ev[2] for (pid, n), evs in want.items() if n.startswith("Framework Ops")
                 for ev in evs}
    for shown in shown_ops:
        cands = [f for f in fulls if shown_name(f) == shown and len(f) >= 17]
        assert not cands or any(f in frames for f in cands), shown
    return want


@pytest.mark.parametrize("run", sorted(RUNS))
def test_framework_and_source_lines(corpus, xprofs_build, run):
    check_lines(answer(xprofs_build, corpus, run), xplane_py.load(corpus / RUNS[run]))


def test_synth_deep_scopes(synth, tmp_path, xprofs_build):
    """A generated JAX-like profile: nested scopes (transformer/layer_N/...),
    stacks of equal spans shrunk by 1 ns per level when they end."""
    out = synth(tmp_path / "syn", "--run", "bench", "--size-mb", "1", "--gpus", "2",
                "--seed", "7")
    want = check_lines(answer(xprofs_build, out, "bench"),
                       xplane_py.load(out / "plugins/profile/bench/synth-host-0.xplane.pb"))
    scopes = [ev for (pid, n), evs in want.items() if n.startswith("Framework Name Scope")
              for ev in evs]
    assert any(a[0] == b[0] and a[1] - b[1] == 1000 and a[2] != b[2]
               for a in scopes for b in scopes), "some stack was shrunk"
    assert max(len(evs) for (pid, n), evs in want.items() if n.startswith("Source")) > 1


def test_display_ids_follow_streams(corpus, xprofs_build):
    """Each stream is followed by its derived lines in XProf's slot order:
    name scope, framework ops, modules, ops, source (empty slots skipped)."""
    doc = answer(xprofs_build, corpus, "jax08_conv_rocm/s1")
    names = thread_names(doc)
    order = ["Stream #", "Framework Name Scope", "Framework Ops", "XLA Modules", "XLA Ops",
             "Source code"]
    seen = 0
    for (pid, tid), n in names.items():
        if pid >= 1701 or n.startswith(("Steps", "Launch Stats")):
            continue
        base = tid - (tid - 1) % 6
        slot = next(i for i, o in enumerate(order) if n.startswith(o))
        assert tid == base + slot, (pid, tid, n)
        if slot:
            stream = names[(pid, base)]
            assert n.endswith("#" + stream.split("#")[1].split("(")[0]), (n, stream)
            seen += 1
    assert seen > 0


def test_conv_values(corpus, xprofs_build):
    """Hand-checked values: jax_conv_rocm's convolution runs under two name
    scopes of equal span; no later event ends that stack, so XProf's
    AdjustDurationForTraceViewer never shrinks it; sources are file:line."""
    doc = answer(xprofs_build, corpus, "jax_conv_rocm/2025_01_01_00_00_00")
    names = thread_names(doc)
    by_line = {}
    for e in doc["traceEvents"]:
        n = names.get((e.get("pid"), e.get("tid")), "")
        if e.get("ph") == "X" and n.startswith(NEW_LINES):
            by_line.setdefault(n.split(" - ")[0], []).append(e)
    ops = {e["name"] for e in by_line["Framework Ops"]}
    assert "conv_general_dilated" in ops
    scopes = sorted(by_line["Framework Name Scope"], key=lambda e: (e["ts"], -e["dur"]))
    outer = [e for e in scopes if e["name"] == "jit(forward_3d_conv)"]
    inner = [e for e in scopes if e["name"] == "jit(main)"]
    assert outer and inner
    pairs = [(o, i) for o in outer for i in inner if o["ts"] == i["ts"]]
    assert pairs and all(o["dur"] == i["dur"] for o, i in pairs)
    assert all(re.fullmatch(r"[^/]+\.py:\d+", e["name"]) for e in by_line["Source code"])


def test_no_new_lines_without_hlo(corpus, xprofs_build):
    """An already grouped TensorFlow profile is not derived again (XProf's
    IsXSpaceGrouped), so it gets none of these lines."""
    doc = answer(xprofs_build, corpus, "tf_gpu_multiworker/s1")
    assert not any(n.startswith(NEW_LINES) for n in thread_names(doc).values())


# --- hosts=a,b (XProf's plugin merges the listed hosts, in that order) ------------

MULTI = "tf_gpu_multiworker/s1"


def cat(xprofs_build, corpus, path):
    return subprocess.run([str(xprofs_build / "xprofs"), "cat", str(corpus), path],
                          capture_output=True, timeout=600)


def shifted_events(doc, lo, hi, shift):
    """The events of pids [lo, hi) with pids moved by shift, uid/z dropped."""
    out = []
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" or not lo <= e["pid"] < hi:
            continue
        e = dict(e, pid=e["pid"] + shift)
        e.pop("z", None)
        if "args" in e:
            e["args"] = {k: v for k, v in e["args"].items() if k != "uid"}
        out.append(json.dumps(e, sort_keys=True))
    return sorted(out)


def test_hosts_option(corpus, xprofs_build):
    hosts = [h["hostname"] for h in json.loads(cat(xprofs_build, corpus,
                                                   MULTI + "/hosts.json").stdout)]
    assert len(hosts) == 2
    a, b = hosts
    q = "start_time_ms=2560&end_time_ms=2570"
    base = f"{MULTI}/trace_viewer.json?{q}"
    # All hosts are merged in the order XProf lists them.
    default = cat(xprofs_build, corpus, base)
    assert default.returncode == 0
    assert cat(xprofs_build, corpus, f"{base}&hosts={a},{b}").stdout == default.stdout
    # One listed host is that host's own trace.
    one = cat(xprofs_build, corpus, f"{base}&hosts={b}").stdout
    assert one == cat(xprofs_build, corpus, f"{MULTI}/hosts/{b}/trace_viewer.json?{q}").stdout
    # Reversed: b takes pids 1xxx and a 2xxx.
    rev = json.loads(cat(xprofs_build, corpus, f"{base}&hosts={b},{a}").stdout)
    procs = {e["pid"]: e["args"]["name"] for e in rev["traceEvents"]
             if e.get("name") == "process_name"}
    assert procs and all((p < 2000) == v.startswith(b + " ") for p, v in procs.items())
    own_a = json.loads(cat(xprofs_build, corpus,
                           f"{MULTI}/hosts/{a}/trace_viewer.json?{q}").stdout)
    mine = shifted_events(own_a, 1000, 2000, 0)
    assert mine and shifted_events(rev, 2000, 3000, -1000) == mine
    assert shifted_events(rev, 1000, 2000, 0) == shifted_events(json.loads(one), 1000, 2000, 0)
    # A host that is not in the run is a bad value.
    bad = cat(xprofs_build, corpus, f"{base}&hosts={a},nohost")
    assert bad.returncode == 2 and b"nohost" in bad.stderr
