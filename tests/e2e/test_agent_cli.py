"""XProf's agent CLI from xprofs (issue 39): every command on every XPlane run
of the corpus answers valid JSON (or XProf's text) with exit 0, values agree
with the tool files they come from and with events decoded by python3-protobuf,
and flags, errors and exit codes behave as XProf's Fire program does."""
import json
import math
import re
import subprocess

import pytest

import xplane_py

XPLANE_RUNS = ["jax_conv_rocm/plugins/profile/2025_01_01_00_00_00",
               "jax08_conv_rocm/plugins/profile/s1",
               "jax08_elementwise_rocm/plugins/profile/s1",
               "jax08_gemm_rocm/plugins/profile/s1",
               "tf_gpu_multiworker/plugins/profile/s1"]
# the same runs as the mount names them (xprofs cat LOGDIR PATH)
MOUNT_NAMES = {r: r.replace("/plugins/profile", "") for r in XPLANE_RUNS}

JSON_COMMANDS = ["get_overview", "get_kpi_metrics", "get_device_information", "get_hosts",
                 "get_roofline_model", "get_hlo_stats", "get_kernel_stats", "get_avg_step_time",
                 "get_peak_allocations",
                 "get_memory_profile", "get_top_hlo_ops", "get_hlo_op_profile",
                 "list_xplane_events", "aggregate_xplane_events", "get_utilization_viewer",
                 "get_llo_analysis", "get_llo_debug_string"]


def agent(build, *args, env=None):
    r = subprocess.run([str(build / "xprofs"), *map(str, args)], capture_output=True,
                       timeout=600, env=env)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


@pytest.mark.parametrize("run", XPLANE_RUNS)
@pytest.mark.parametrize("command", JSON_COMMANDS)
def test_every_command_answers_json(xprofs_build, corpus, run, command):
    rc, out, err = agent(xprofs_build, command, corpus / run)
    assert rc == 0, err
    json.loads(out)
    assert out.endswith("\n") and not out.endswith("\n\n")


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_profile_summary_text(xprofs_build, corpus, run, xcat):
    rc, out, err = agent(xprofs_build, "get_profile_summary", corpus / run)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == f"Profile Summary for {corpus / run}"
    prof = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/op_profile.json"))
    total = prof["byProgram"]["metrics"]["rawTime"]
    assert lines[1] == "Total Time: %.4f s" % (total / 1e12)
    assert "| Name | Self Time (s) | Fraction |" in lines


def leaves(node, prefix=""):
    """(full name, node) of the op profile's XLA nodes with time."""
    full = f"{prefix}/{node['name']}" if prefix else node["name"]
    if "xla" in node and float(node["metrics"].get("rawTime", 0)) > 0:
        yield full, node
    for c in node.get("children", []):
        yield from leaves(c, full)


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_top_hlo_ops_agree_with_op_profile_and_hlo_stats(xprofs_build, corpus, run, xcat):
    rc, out, err = agent(xprofs_build, "get_top_hlo_ops", corpus / run, "--limit=5")
    assert rc == 0, err
    got = json.loads(out)
    prof = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/op_profile.json"))
    ops = [(name, n) for name, n in leaves(prof["byProgram"])]
    assert got["total_matched"] == len(ops)
    want_times = sorted((float(n["metrics"]["rawTime"]) / 1e9 for _, n in ops), reverse=True)[:5]
    assert [o["total_self_time_ms"] for o in got["top_by_time"]] == pytest.approx(want_times)
    # every named op with time is an HLO op of hlo_stats.json with the same self time
    stats = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/hlo_stats.json"))
    ids = [c["id"] for c in stats["cols"]]
    name_col, time_col = ids.index("hlo_op_name"), ids.index("total_self_time")
    self_us, rows_of = {}, {}
    for row in stats["rows"]:
        v = [c.get("v") for c in row["c"]]
        self_us[v[name_col]] = v[time_col]
        rows_of[v[name_col]] = rows_of.get(v[name_col], 0) + 1
    leaf_count = {}
    for name, _ in ops:
        leaf_count[name.rsplit("/", 1)[-1]] = leaf_count.get(name.rsplit("/", 1)[-1], 0) + 1
    compared = 0
    for op in got["top_by_time"]:
        leaf = op["name"].rsplit("/", 1)[-1]
        # an op name used in one program only: one row, one leaf
        if rows_of.get(leaf) == 1 and leaf_count[leaf] == 1:
            compared += 1
            assert op["total_self_time_ms"] == pytest.approx(self_us[leaf] / 1000, rel=1e-6)


def test_top_hlo_ops_category_filter(xprofs_build, corpus):
    run = corpus / XPLANE_RUNS[0]
    rc, out, _ = agent(xprofs_build, "get_top_hlo_ops", run, "--category_filter", " Custom-Call ",
                       "--limit", "0")
    assert rc == 0
    got = json.loads(out)
    assert got["total_matched"] > 0
    assert {o["category"] for o in got["top_by_time"]} == {"custom-call"}


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_overview_and_kpi_agree_with_overview_page(xprofs_build, corpus, run, xcat):
    page = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/overview_page.json"))
    props = {}
    for section in page:
        props.update(section.get("p", {}))
    rc, out, _ = agent(xprofs_build, "get_overview", corpus / run)
    ov = json.loads(out)
    assert ov["performance_summary"]["steptime_ms_average"] == props["steptime_ms_average"]
    assert ov["run_environment"]["device_type"] == props["device_type"]
    rc, out, _ = agent(xprofs_build, "get_kpi_metrics", corpus / run)
    kpi = json.loads(out)
    assert kpi["step_time_ms"] == props["steptime_ms_average"]
    assert kpi["accelerator_info"]["device_core_count"] == props["device_core_count"]


def test_device_information_floats(xprofs_build, corpus, xcat):
    run = XPLANE_RUNS[3]
    rc, out, _ = agent(xprofs_build, "get_device_information", corpus / run)
    info = json.loads(out)
    props = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/roofline_model.json"))[0]["p"]
    for k, v in props.items():
        try:
            assert info[k] == float(v)
        except ValueError:
            assert info[k] == v


def test_hosts_of_multiworker(xprofs_build, corpus):
    rc, out, _ = agent(xprofs_build, "get_hosts", corpus / "tf_gpu_multiworker")
    files = sorted((corpus / XPLANE_RUNS[4]).glob("*.xplane.pb"))
    want = sorted({f.name[:-len(".xplane.pb")].split(".")[-1] for f in files})
    assert json.loads(out) == {"hosts": [{"hostname": h} for h in want]}


def decoded_events(run_dir, plane_re=".*", event_re=".*"):
    """(plane, line, name, start_ps, duration_ps) as XProf's profile_data computes them."""
    pr, er = re.compile(plane_re), re.compile(event_re)
    for f in sorted(run_dir.glob("**/*.xplane.pb")):
        space = xplane_py.load(f)
        for plane in space.planes:
            if not pr.search(plane.name):
                continue
            meta = {m.key: m.value for m in plane.event_metadata}
            for line in plane.lines:
                for ev in line.events:
                    md = meta.get(ev.metadata_id)
                    name = md.name if md is not None else str(ev.metadata_id)
                    if not er.search(name):
                        continue
                    start = int((float(line.timestamp_ns) + ev.offset_ps / 1000.0) * 1000)
                    yield plane.name, line.name, name, start, int(ev.duration_ps / 1000.0 * 1000)


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_list_events_counts_agree_with_summary(xprofs_build, corpus, run, xcat):
    rc, out, _ = agent(xprofs_build, "list_xplane_events", corpus / run, "--max_events=3")
    got = json.loads(out)
    summary = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/summary.json"))
    assert got["total_matched"] == sum(h["event_count"] for h in summary["hosts"])
    assert got["returned"] == 3 and got["truncated"] is True
    want = list(decoded_events(corpus / run))[:3]
    assert [(e["plane"], e["line_id"], e["event"], e["offset_ps"], e["duration_ps"])
            for e in got["events"]] == want


def test_list_events_window_and_offset(xprofs_build, corpus):
    run = corpus / XPLANE_RUNS[3]
    evs = [e for e in decoded_events(run, "GPU", "^Cijk")]
    t0, t1 = evs[1][3], evs[-1][3] + evs[-1][4]
    rc, out, _ = agent(xprofs_build, "list_xplane_events", run, "--plane_regex=GPU",
                       "--event_regex", "^Cijk", f"--start_time_ps={t0}", f"--end_time_ps={t1}",
                       "--offset=1", "--max_events=0")
    got = json.loads(out)
    inside = [e for e in evs if e[3] >= t0 and e[3] + e[4] <= t1]
    assert got["total_matched"] == len(inside)
    assert [e["offset_ps"] for e in got["events"]] == [e[3] for e in inside[1:]]


@pytest.mark.parametrize("run", XPLANE_RUNS)
@pytest.mark.parametrize("plane_re,event_re", [(".*", ".*"), ("GPU|CPU", r"(?i)^(dot|fusion)"),
                                               (r"device:\w+:\d$", r"[a-z]+\.\d+")])
def test_aggregate_sums_agree_with_protobuf(xprofs_build, corpus, run, plane_re, event_re):
    rc, out, err = agent(xprofs_build, "aggregate_xplane_events", corpus / run, plane_re,
                         event_re)
    assert rc == 0, err
    got = {a["event"]: a for a in json.loads(out)["aggregates"]}
    want = {}
    for _, _, name, _, d in decoded_events(corpus / run, plane_re, event_re):
        want.setdefault(name, []).append(d)
    assert set(got) == set(want)
    for name, ds in want.items():
        a = got[name]
        assert a["count"] == len(ds) and a["total_duration_ps"] == sum(ds)
        assert a["min_duration_ps"] == min(ds) and a["max_duration_ps"] == max(ds)
        if len(ds) > 1:
            mean = sum(ds) / len(ds)
            sd = math.sqrt(sum((d - mean) ** 2 for d in ds) / (len(ds) - 1))
            assert a["std_dev_ps"] == pytest.approx(sd, rel=1e-9, abs=1e-6)
    totals = [a["total_duration_ps"] for a in json.loads(out)["aggregates"]]
    assert totals == sorted(totals, reverse=True)


def test_xspace_proto_bytes(xprofs_build, corpus, tmp_path):
    run = corpus / XPLANE_RUNS[3]
    target = tmp_path / "x.pb"
    rc, out, _ = agent(xprofs_build, "get_xspace_proto", run, "--output_path", target)
    assert rc == 0 and out == f"{target}\n"
    src = next(run.glob("*.xplane.pb"))
    assert target.read_bytes() == src.read_bytes()
    rc, out, _ = agent(xprofs_build, "get_xspace_proto", corpus / XPLANE_RUNS[4])
    assert rc == 1 and json.loads(out)["reason"] == "INTERNAL_ERROR"


# --- sessions -------------------------------------------------------------

def test_session_forms_agree(xprofs_build, corpus):
    run = corpus / XPLANE_RUNS[0]
    xplane = next(run.glob("*.xplane.pb"))
    logdir = corpus / "jax_conv_rocm"
    answers = set()
    for args in ([run], [logdir], [xplane], ["2025_01_01_00_00_00", f"--logdir={logdir}"],
                 [f"--session_dir={run}"], ["--session_path", run],
                 ["--source", run], ["2025_01_01_00_00_00".replace("_", ""), f"--logdir={logdir}"]):
        rc, out, err = agent(xprofs_build, "get_top_hlo_ops", *args, "--limit=1")
        assert rc == 0, (args, err)
        answers.add(out)
    assert len(answers) == 1


def test_pytorch_run_is_a_path_error(xprofs_build, corpus):
    rc, out, err = agent(xprofs_build, "get_overview", corpus / "pytorch/h100_bert_small")
    assert rc == 3
    got = json.loads(out)
    assert got["status"] == "ERROR" and got["reason"] == "PATH_ERROR"
    assert got["error"].endswith("(DATA_ABSENT).")
    assert err.startswith("PATH_ERROR: ")


# --- flags, errors and exit codes -------------------------------------------

@pytest.mark.parametrize("args,code,reason", [
    (["/no/such/dir"], 3, "PATH_ERROR"),
    (["no_such_run", "--logdir=/no/such"], 3, "PATH_ERROR"),
    (["RUN", "--limit=abc"], 4, "INVALID_VALUE"),
    (["RUN", "--limit", "1.5x"], 4, "INVALID_VALUE"),
    (["RUN", "--logdir"], 2, "USAGE_ERROR"),
])
def test_errors(xprofs_build, corpus, args, code, reason):
    args = [str(corpus / XPLANE_RUNS[0]) if a == "RUN" else a for a in args]
    rc, out, err = agent(xprofs_build, "get_top_hlo_ops", *args)
    assert rc == code
    got = json.loads(out)
    assert list(got) == ["status", "reason", "error"]
    assert got["status"] == "ERROR" and got["reason"] == reason
    assert err.startswith(reason + ": ")
    assert out.startswith('{\n  "status": "ERROR",\n')


@pytest.mark.parametrize("args", [["RUN", "--bogus=1"], [], ["RUN", "extra"], ["RUN", "-l", "3"],
                                  ["--logdir", "RUN"]])
def test_fire_usage_errors(xprofs_build, corpus, args):
    args = [str(corpus / XPLANE_RUNS[0]) if a == "RUN" else a for a in args]
    rc, out, err = agent(xprofs_build, "get_top_hlo_ops", *args)
    assert rc == 2 and out == ""
    assert err.startswith("ERROR: ")


def test_help(xprofs_build):
    rc, out, _ = agent(xprofs_build, "list_xplane_events", "--help")
    assert rc == 0 and "--plane_regex" in out and "SYNOPSIS" in out


@pytest.mark.parametrize("pattern", ["(", "a)", "[abc", "*a", "a**", "\\", r"\q", "a{3,1}"])
def test_bad_regex_gets_pythons_message(xprofs_build, corpus, pattern):
    try:
        re.compile(pattern)
        pytest.fail("python accepts " + pattern)
    except re.error as e:
        want = f"Error listing XPlane events: error({str(e)!r})"
    rc, out, _ = agent(xprofs_build, "list_xplane_events", corpus / XPLANE_RUNS[3],
                       f"--event_regex={pattern}")
    assert rc == 0 and out == want + "\n"


@pytest.mark.parametrize("pattern", [r"^Cijk", r"\.kd$", r"(?i)CUSTOM", r"custom|fusion",
                                     r"[0-9]+\.\d", r"\w+-call\.\d", r"^(?:cus|fus)t?",
                                     r"x{2,}", r"\s", r"[^a-z]$"])
def test_regex_matches_as_python(xprofs_build, corpus, pattern):
    run = corpus / XPLANE_RUNS[3]
    want = sum(1 for _ in decoded_events(run, ".*", pattern))
    rc, out, _ = agent(xprofs_build, "list_xplane_events", run, "--event_regex", pattern,
                       "--max_events=1")
    assert rc == 0 and json.loads(out)["total_matched"] == want


def test_spill_past_10_mb(xprofs_build, corpus, tmp_path):
    import os
    env = dict(os.environ, TMPDIR=str(tmp_path))
    run = corpus / XPLANE_RUNS[4]
    rc, out, _ = agent(xprofs_build, "list_xplane_events", run, "--max_events=0", env=env)
    got = json.loads(out)
    assert got["status"] == "SAVED_TO_FILE" and got["size_bytes"] > 10 * 1024 * 1024
    path = got["file_path"]
    assert re.fullmatch(re.escape(str(tmp_path)) + r"/xprof_spill_list_xplane_events_[0-9a-f]{8}\.json", path)
    with open(path) as f:
        full = json.load(f)
    assert full["returned"] == full["total_matched"]
    assert os.path.getsize(path) == got["size_bytes"]


TEXT_COMMANDS = ["list_hlo_modules", "get_hlo_module_content", "get_hlo_text", "get_graph_viewer"]


@pytest.mark.parametrize("run", XPLANE_RUNS)
@pytest.mark.parametrize("command", TEXT_COMMANDS)
def test_text_commands_answer(xprofs_build, corpus, run, command):
    rc, out, err = agent(xprofs_build, command, corpus / run)
    assert rc == 0, err
    assert out.endswith("\n") and len(out) > 1


def table_rows(table):
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, [c.get("v") for c in r["c"]])) for r in table["rows"]]


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_roofline_model_agrees_with_tool_file(xprofs_build, corpus, run, xcat):
    table = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/roofline_model.json"))[0]
    rows = table_rows(table)
    rc, out, err = agent(xprofs_build, "get_roofline_model", corpus / run, "--top_n=3")
    assert rc == 0, err
    got = json.loads(out)
    assert got["device_info"] == {k: float(v) if re.fullmatch(r"[-+0-9.e]+", v) else v
                                  for k, v in table["p"].items()}
    prog = rows[0]
    assert got["program"]["total_time_ms"] == round(float(prog["total_time"]) / 1000, 3)
    assert got["program"]["bound_by"] == prog["bound_by"]
    assert got["program"]["roofline_efficiency_percent"] == \
        "%.2f%%" % (float(prog["roofline_efficiency"]) * 100)
    ops = {}
    for r in rows[1:]:
        if float(r["total_self_time"] or 0) > 0:
            ops.setdefault((int(r["rank"]), r["operation"]), r)
    assert got["total_operations_analyzed"] == len(ops)
    want = sorted((round(float(r["total_self_time"]) / 1000, 3) for r in ops.values()),
                  reverse=True)[:3]
    assert [o["total_self_time_ms"] for o in got["top_operations"]] == want


def kernel_totals(run_dir):
    """XProf's kernel_stats_tools walk, re-done over python3-protobuf."""
    totals = {}
    for f in sorted(run_dir.glob("**/*.xplane.pb")):
        for plane in xplane_py.load(f).planes:
            if not plane.name.startswith("/device:"):
                continue
            meta = {m.key: m.value.name for m in plane.event_metadata}
            smeta = {m.key: m.value.name for m in plane.stat_metadata}
            tpu = "TPU" in plane.name.upper()
            for line in plane.lines:
                up = line.name.upper()
                if tpu and not any(w in up for w in ("XLA OPS", "PALLAS", "LLO OPS")):
                    continue
                if not tpu and any(w in up for w in ("COUNTER", "MODULES", "OVERLAY",
                                                      "SYNC FLAG", "SENSOR")):
                    continue
                for ev in line.events:
                    name = meta.get(ev.metadata_id, str(ev.metadata_id))
                    stats = [(smeta.get(s.metadata_id), s) for s in ev.stats]
                    tf = [s.str_value for n, s in stats if n == "tf_op_name"
                          and s.WhichOneof("value") == "str_value" and s.str_value]
                    if tf:
                        name = tf[0]
                    totals.setdefault(name, []).append(ev.duration_ps / 1000.0 / 1000.0)
    return totals


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_kernel_stats_agree_with_decoded_events(xprofs_build, corpus, run):
    totals = kernel_totals(corpus / run)
    rc, out, err = agent(xprofs_build, "get_kernel_stats", corpus / run, "--limit=5")
    assert rc == 0, err
    got = json.loads(out)
    want = sorted((round(sum(d), 4) for d in totals.values()), reverse=True)[:5]
    assert [k["total_duration_us"] for k in got] == pytest.approx(want)
    for k in got:
        assert k["execution_count"] == len(totals[k["kernel_name"]])
    rc, out, _ = agent(xprofs_build, "get_kernel_stats", corpus / run, "--include_summary")
    summary = json.loads(out)
    assert summary["total_device_duration_ns"] <= sum(sum(d) for d in totals.values()) * 1000 + 1


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_avg_step_time_from_xla_modules_lines(xprofs_build, corpus, run):
    steps = [ev.duration_ps / 1e9 for f in sorted((corpus / run).glob("**/*.xplane.pb"))
             for p in xplane_py.load(f).planes if p.name.startswith("/device:")
             for ln in p.lines if "XLA MODULES" in ln.name.upper() for ev in ln.events]
    rc, out, _ = agent(xprofs_build, "get_avg_step_time", corpus / run)
    got = json.loads(out)
    if steps:
        assert got == {"avg_step_time_ms": round(sum(steps) / len(steps), 4),
                       "step_count": len(steps)}
    else:
        assert got == {"error": f"No steps matching func_name 'None' found in {corpus / run}."}


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_hlo_modules_agree_with_module_list(xprofs_build, corpus, run, xcat):
    names = sorted((m for m in json.loads(xcat(corpus, MOUNT_NAMES[run] + "/module_list.json"))
                    if m != "NO_MODULE"), key=lambda m: m + ".hlo_proto.pb")
    rc, out, _ = agent(xprofs_build, "list_hlo_modules", corpus / run)
    if not names:
        assert out.startswith("No HLO modules found.")
        return
    assert out.splitlines() == [f"Found {len(names)} HLO modules:"] + \
        [f"{i}. {m}" for i, m in enumerate(names)]
    text = xcat(corpus, MOUNT_NAMES[run] + "/graph_viewer.json?type=short_txt&module_name="
                + names[-1]).decode()
    rc, out, _ = agent(xprofs_build, "get_hlo_module_content", corpus / run,
                       f"--module_name={names[-1]}", "--max_lines=-1")
    assert rc == 0 and out == text + "\n"
    rc, out, _ = agent(xprofs_build, "get_hlo_module_content", corpus / run,
                       f"--module_name={names[-1]}", "--max_lines=3")
    lines = text.splitlines()
    if len(lines) > 3:
        assert out.splitlines()[:3] == lines[:3]
        assert out.splitlines()[3] == (f"... (truncated after 3 lines, total {len(lines)}). "
                                       "Use 'max_lines=-1' to see all)")
    # an instruction of the module: the neighborhood starts with it
    instr = next(ln.strip().split()[0] for ln in lines if " = " in ln and "HloModule" not in ln)
    rc, out, _ = agent(xprofs_build, "get_hlo_neighborhood", corpus / run, instr,
                       f"--module_name={names[-1]}")
    assert rc == 0 and out.splitlines()[0] == f"Neighborhood of '{instr}' (radius=2):"
    assert out.splitlines()[1].startswith("  [dist=0] ")
    rc, out, _ = agent(xprofs_build, "get_hlo_module_content", corpus / run, "--module_name=nope")
    assert out == f"Module 'nope' not found. Available: {', '.join(names)}\n"


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_memory_profile_agrees_with_tool_file(xprofs_build, corpus, run, xcat):
    summary = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/summary.json"))
    hosts = sorted(h["host"] for h in summary["hosts"])
    best = None
    for h in hosts:
        q = "" if len(hosts) == 1 else "?host=" + h
        prof = json.loads(xcat(corpus, MOUNT_NAMES[run] + "/memory_profile.json" + q))
        cap, peak = -1, -1
        for a in prof.get("memoryProfilePerAllocator", {}).values():
            cap = max(cap, int(a["profileSummary"].get("memoryCapacity", -1)))
            peak = max(peak, int(a["profileSummary"]["peakStats"].get("peakBytesInUse", -1)))
        best = best or (cap, peak)
        if cap > 0 and peak > 0:
            best = (cap, peak)
            break
    rc, out, _ = agent(xprofs_build, "get_memory_profile", corpus / run)
    got = json.loads(out)
    assert got["memory_capacity_gib"] == (round(best[0] / 2**30, 2) if best[0] > 0 else -1.0)
    assert got["peak_memory_usage_gib"] == (round(best[1] / 2**30, 2) if best[1] > 0 else -1.0)
    rc, out, _ = agent(xprofs_build, "get_kpi_metrics", corpus / run)
    assert json.loads(out)["peak_hbm_gib"] == got["peak_memory_usage_gib"]


@pytest.mark.parametrize("run", XPLANE_RUNS[:4])
def test_peak_allocations_agree_with_memory_viewer(xprofs_build, corpus, run, xcat):
    names = [m for m in json.loads(xcat(corpus, MOUNT_NAMES[run] + "/module_list.json"))
             if m != "NO_MODULE"]
    totals = {m: json.loads(xcat(corpus, MOUNT_NAMES[run] + "/memory_viewer.json?module_name="
                                 + m))["totalBufferAllocationMib"] for m in names}
    rc, out, _ = agent(xprofs_build, "get_peak_allocations", corpus / run, "--limit=2")
    got = json.loads(out)
    assert got["summary"]["total_modules"] == len(names)
    assert [m["total_hbm_mib"] for m in got["modules"]] == \
        pytest.approx(sorted(totals.values(), reverse=True)[:2])
    for m in got["modules"]:
        assert totals[m["module_name"]] == pytest.approx(m["total_hbm_mib"])


@pytest.mark.parametrize("args,code", [
    (["get_roofline_model", "RUN", "--top_n=abc"], 4),
    (["get_kernel_stats", "RUN", "--limit=x"], 4),
    (["get_hlo_neighborhood", "RUN"], 2),
    (["get_peak_allocations", "RUN", "--min_size_mib=big"], 4),
    (["get_roofline_model", "/no/such/run"], 3),
    (["verify_numerical_parity", "a:f", "b:g", "(8,)"], 1),
])
def test_new_commands_bad_values(xprofs_build, corpus, args, code):
    args = [str(corpus / XPLANE_RUNS[0]) if a == "RUN" else a for a in args]
    rc, out, err = agent(xprofs_build, *args)
    assert rc == code, (out, err)
    if code != 2:
        assert json.loads(out)["status"] == "ERROR"


def test_upload_trace_copies_into_logdir(xprofs_build, corpus, tmp_path):
    src = sorted((corpus / XPLANE_RUNS[1]).glob("*.xplane.pb"))[0]
    rc, out, _ = agent(xprofs_build, "upload_trace", src)
    assert rc == 0 and json.loads(out) == {"error": "Logdir not set in client. Provide logdir."}
    rc, out, _ = agent(xprofs_build, "upload_trace", src, "--logdir", tmp_path, "--run_name=r1")
    got = json.loads(out)
    dest = tmp_path / "plugins/profile/r1" / src.name
    assert rc == 0 and got["status"] == "success" and got["imported_file"] == str(dest)
    assert dest.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("path,argv", [
    ("get_overview.json", ["get_overview"]),
    ("get_top_hlo_ops.json?limit=3&category_filter=fusion",
     ["get_top_hlo_ops", "--limit=3", "--category_filter=fusion"]),
    ("get_roofline_model.json?top_n=2", ["get_roofline_model", "--top_n=2"]),
    ("get_kernel_stats.json?limit=4&include_summary=True",
     ["get_kernel_stats", "--limit=4", "--include_summary=True"]),
    ("list_hlo_modules.json", ["list_hlo_modules"]),
    ("get_memory_profile.json", ["get_memory_profile"]),
])
@pytest.mark.parametrize("run", [XPLANE_RUNS[0], XPLANE_RUNS[4]])
def test_mount_cli_files_are_the_cli_bytes(xprofs_build, corpus, xcat, run, path, argv):
    import os
    run_dir = os.path.realpath(corpus / run)
    mounted = xcat(corpus, MOUNT_NAMES[run] + "/cli/" + path)
    r = subprocess.run([str(xprofs_build / "xprofs"), argv[0], run_dir, *argv[1:]],
                       capture_output=True, timeout=600)
    assert r.returncode == 0 and mounted == r.stdout


def test_mount_cli_bad_flag_is_einval(xcat, corpus):
    r = xcat(corpus, MOUNT_NAMES[XPLANE_RUNS[0]] + "/cli/get_top_hlo_ops.json?limit=abc",
             check=False)
    assert r.returncode != 0


# --- get_step_trace, check_host_boundness, get_kernel_utilization,
# compute_utilization: each recomputed here from the tool files, as XProf's
# tools compute them (get_step_trace_tool.py, check_host_boundness_tool.py)

STEP_COMMANDS = ["get_step_trace", "check_host_boundness", "get_kernel_utilization",
                 "compute_utilization"]


def safe_float(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0.0
    return f if math.isfinite(f) else 0.0


def pod_steps(pod):
    """The per-step rows get_step_trace makes of pod_viewer.json."""
    steps = []
    for entry in pod["podStatsSequence"]["podStatsMap"]:
        cores = list(entry.get("podStatsPerCore", {}).values())
        if not cores:
            continue
        n = len(cores)

        def avg(key):
            return round(sum(safe_float(c.get(key)) for c in cores) / n / 1000.0, 4)

        def brk(key):
            return round(sum(safe_float((c.get("stepBreakdownUs") or {}).get(key))
                             for c in cores) / n / 1000.0, 4)
        total, comp, crs = avg("totalDurationUs"), brk("1"), brk("3")
        comm = round(crs + brk("2"), 4)
        infeed, outfeed = brk("6"), brk("7")
        if not any((comp, comm, infeed, outfeed)):
            continue  # (the corpus has no legacy-schema steps)
        idle = round(max(0.0, total - (comp + comm + infeed + outfeed)), 4)
        pct = [round(x / total * 100, 2) if total > 0 else 0.0
               for x in (comp, comm, infeed, outfeed, idle)]
        names = [str(c["bottleneck"]) for c in cores if c.get("bottleneck")]
        steps.append({"step_num": int(entry["stepNum"]), "step_time_ms": total,
                      "compute_time_ms": comp, "compute_percent": pct[0],
                      "communication_time_ms": comm, "communication_percent": pct[1],
                      "infeed_time_ms": infeed, "infeed_percent": pct[2],
                      "outfeed_time_ms": outfeed, "outfeed_percent": pct[3],
                      "bottleneck": max(names, key=names.count),
                      "idle_time_ms": idle, "idle_percent": pct[4],
                      "communication_breakdown_ms": {"all_reduce_ms": crs, "send_ms": 0.0,
                                                     "recv_ms": 0.0}})
    return steps


def input_pipeline_steps(ipa):
    """The rows get_step_trace makes of input_pipeline_analyzer.json's step table."""
    table = next(s for s in ipa if s.get("cols") and "rows" in s
                 and any("step" in c["id"].lower() or "infeed" in c["id"].lower()
                         for c in s["cols"]))
    col = {c["id"].lower(): i for i, c in enumerate(table["cols"])}
    groups = {"comp": ("tccomputetimems", "scv0computetimems", "bccomputetimems",
                       "devicecomputetimems", "noninfeedtimems"),
              "comm": ("devicetodevicetimems", "devicecollectivestimems"),
              "infeed": ("tcinfeedtimems", "scv0infeedtimems", "bcinfeedtimems",
                         "infeedtimems"),
              "outfeed": ("tcoutfeedtimems", "outfeedtimems"),
              "other": ("tcidletimems", "hosttransfertimems", "hostcomputetimems",
                        "kernellaunchtimems", "compiletimems", "othertimems")}
    steps = []
    for row in table["rows"]:
        cells = [c.get("v") for c in row["c"]]
        g = {k: sum(safe_float(cells[col[c]]) for c in ids if c in col)
             for k, ids in groups.items()}
        total = round(safe_float(cells[col["steptimems"]]) if "steptimems" in col
                      else sum(g.values()), 4)
        parts = g["comp"] + g["comm"] + g["infeed"] + g["outfeed"]
        idle = round(max(g["other"], total - parts), 4)

        def pct(x):
            return round(x / total * 100, 2) if total > 0 else 0.0
        infeed_pct = (round(safe_float(cells[col["infeedpercentaverage"]]), 2)
                      if "infeedpercentaverage" in col else pct(g["infeed"]))
        order = [("Compute", g["comp"]), ("Communication", g["comm"]),
                 ("Input / Infeed", g["infeed"]), ("Output / Outfeed", g["outfeed"]),
                 ("Idle / Other", g["other"])]
        steps.append({"step_num": int(cells[col["stepnum"]]), "step_time_ms": total,
                      "compute_time_ms": round(g["comp"], 4), "compute_percent": pct(g["comp"]),
                      "communication_time_ms": round(g["comm"], 4),
                      "communication_percent": pct(g["comm"]),
                      "infeed_time_ms": round(g["infeed"], 4), "infeed_percent": infeed_pct,
                      "outfeed_time_ms": round(g["outfeed"], 4),
                      "outfeed_percent": pct(g["outfeed"]),
                      "bottleneck": max(order, key=lambda o: o[1])[0],
                      "idle_time_ms": idle, "idle_percent": pct(idle)})
    return steps


def step_summary(steps):
    n = len(steps)

    def avg(key):
        return round(sum(s[key] for s in steps) / n, 4)
    times = [s["step_time_ms"] for s in steps]
    mean = sum(times) / n
    sdv = round(math.sqrt(sum((t - mean) ** 2 for t in times) / (n - 1)), 4) if n > 1 else 0.0
    a = {k: avg(k + "_time_ms") for k in ("step", "compute", "communication", "infeed",
                                          "outfeed", "idle")}
    names = [s["bottleneck"] for s in steps]

    def pct(x):
        return round(x / a["step"] * 100, 2) if a["step"] > 0 else 0.0
    return {"total_steps": n, "step_time_ms_average": a["step"],
            "step_time_ms_min": round(min(times), 4), "step_time_ms_max": round(max(times), 4),
            "step_time_ms_stddev": sdv,
            "compute_time_ms_average": a["compute"], "compute_percent": pct(a["compute"]),
            "communication_time_ms_average": a["communication"],
            "communication_percent": pct(a["communication"]),
            "infeed_time_ms_average": a["infeed"], "infeed_percent": pct(a["infeed"]),
            "outfeed_time_ms_average": a["outfeed"], "outfeed_percent": pct(a["outfeed"]),
            "primary_bottleneck": max(names, key=names.count),
            "idle_time_ms_average": a["idle"], "idle_percent": pct(a["idle"]),
            "is_aggregate": False}


@pytest.mark.parametrize("run", XPLANE_RUNS)
@pytest.mark.parametrize("command", STEP_COMMANDS)
def test_step_commands_answer_json(xprofs_build, corpus, run, command):
    rc, out, err = agent(xprofs_build, command, corpus / run)
    assert rc == 0, err
    json.loads(out)
    assert out.endswith("}\n")


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_step_trace_agrees_with_pod_viewer(xprofs_build, corpus, run, xcat):
    name = MOUNT_NAMES[run]
    pod = json.loads(xcat(corpus, name + "/pod_viewer.json"))
    steps = pod_steps(pod)
    rc, out, _ = agent(xprofs_build, "get_step_trace", corpus / run)
    got = json.loads(out)
    if steps:
        assert got == {"summary": step_summary(steps), "step_breakdown": steps[:20]}
        return
    # no pod steps: the input pipeline's step table and the overview have none either
    ipa = json.loads(xcat(corpus, name + "/input_pipeline_analyzer.json"))
    assert input_pipeline_steps(ipa) == []
    props = {}
    for s in json.loads(xcat(corpus, name + "/overview_page.json")):
        props.update(s.get("p", {}))
    assert safe_float(props.get("steptime_ms_average")) <= 0
    assert got == {"status": "NO_DATA", "message":
                   f"No step trace data found for session '{corpus / run}' (the trace may "
                   "lack step markers). Consider using 'list_xplane_events' to get more "
                   "performance insights."}


@pytest.mark.parametrize("scenario,source", [("train", "pod"), ("tpu", "input_pipeline")])
def test_step_trace_of_synthetic_runs(xprofs_build, synth, tmp_path, xcat, scenario, source):
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", scenario, "--steps", 6)
    if source == "pod":
        steps = pod_steps(json.loads(xcat(logdir, "r1/pod_viewer.json")))
    else:
        assert pod_steps(json.loads(xcat(logdir, "r1/pod_viewer.json"))) == []
        steps = input_pipeline_steps(json.loads(xcat(logdir,
                                                     "r1/input_pipeline_analyzer.json")))
    assert len(steps) >= 5
    run_dir = logdir / "plugins/profile/r1"
    rc, out, _ = agent(xprofs_build, "get_step_trace", run_dir, "--limit=3")
    assert rc == 0
    assert json.loads(out) == {"summary": step_summary(steps), "step_breakdown": steps[:3]}
    # one step, by number; no summary
    want = steps[2]["step_num"]
    rc, out, _ = agent(xprofs_build, "get_step_trace", run_dir, f"--step_num={want}",
                       "--noinclude_summary")
    assert rc == 0 and json.loads(out) == {"step_breakdown": [steps[2]]}


def hlo_times(node):
    """compute / HBM / ICI ps of the leaves of the op profile by category."""
    t = [0.0, 0.0, 0.0]
    metrics = node.get("metrics", {})
    children = node.get("children", [])
    if not children and metrics.get("occurrences", 0) > 0:
        name = str(node.get("name", "")).lower()
        cat = str(node.get("xla", {}).get("category", "")).lower()
        raw = float(metrics.get("rawTime", 0.0) or 0.0)
        ici = ("all-reduce", "all-gather", "all-to-all", "reduce-scatter",
               "collective-broadcast", "collective-permute")
        if any(p in name or p in cat for p in ici):
            t[2] += raw
        elif any(p in name or p in cat for p in ("copy-start", "copy", "copy-done")):
            t[1] += raw
        else:
            t[0] += raw
    for c in children:
        ct = hlo_times(c)
        t = [a + b for a, b in zip(t, ct)]
    return t


def host_boundness(session, page, profile, barrier_us):
    """check_host_boundness of overview_page.json, the op profile by category and
    the barrier-cores durations (us); the utilization viewer has no data."""
    over, step_p, env = (page[i].get("p", {}) for i in range(3))
    steps = len(page[1].get("rows") or [])
    duty = float(str(over.get("device_duty_cycle_percent", "0.0%")).replace("%", ""))
    cores = max(1, int(re.search(r"\d+", str(env.get("device_core_count", "1"))).group()))
    step_ms = float(re.search(r"[\d.]+", str(step_p.get("steptime_ms_average") or "0.0"))
                    .group())
    total = step_ms * steps
    if total == 0.0 or steps == 0:
        return {"status": "INSUFFICIENT_DATA",
                "reasons": [f"Session {session} lacks valid step timing duration telemetry "
                            "in overview_page.json."],
                "recommendations": ["Capture a new XProf trace with step profiling enabled "
                                    "to measure host boundness."]}
    comp, hbm, ici = (x / 1e9 / cores for x in hlo_times(profile["byCategory"]))
    barrier = (sum(barrier_us) / len(barrier_us) / 1000.0) * steps if barrier_us else 0.0
    pure = max(0.0, total - (comp + hbm + ici) - barrier)
    active = total - pure
    ratio = (pure / active if active > 0 else 0.0) * 100.0
    chips = cores * pure / total
    reasons = ["Workload is not host-bound. One or more host-bound condition thresholds "
               "were not met:"]
    if duty > 50.0 and ratio <= 10.0:
        reasons = [f"TPU duty cycle ({duty:.1f}%) is high and idle ratio is low."]
    else:
        if ratio <= 10.0:
            reasons.append(f"- Idle Time Ratio ({ratio:.1f}%) is <= 10.0%.")
        reasons.append("- MXU Idleness (0.0%) is <= 70.0%.")
    return {"status": "NOT_HOST_BOUND",
            "metrics": {"tpu_duty_cycle_percent": round(duty, 2),
                        "idle_time_ratio_percent": round(ratio, 2),
                        "equivalent_idle_chips": round(chips, 2),
                        "mxu_idleness_percent": 0.0,
                        "hbm_bandwidth_utilization_percent": 0.0,
                        "ici_read_utilization_percent": 0.0,
                        "ici_write_utilization_percent": 0.0,
                        "scaled_compute_time_ms": round(comp, 2),
                        "scaled_hbm_time_ms": round(hbm, 2),
                        "scaled_ici_time_ms": round(ici, 2),
                        "scaled_barrier_time_ms": round(barrier, 2),
                        "pure_idle_time_ms": round(pure, 2),
                        "total_duration_ms": round(total, 2),
                        "number_of_steps": steps, "core_count": cores},
            "reasons": reasons, "recommendations": []}


def barrier_durations_us(run_dir):
    """barrier-cores events of the TPU:0 / GPU:0 planes of the first host."""
    files = sorted(run_dir.glob("**/*.xplane.pb"))
    hosts = {f: f.name[:-len(".xplane.pb")].split(".")[-1] for f in files}
    first = min(hosts.values())
    out = []
    for f in files:
        if hosts[f] != first:
            continue
        for plane in xplane_py.load(f).planes:
            if "TPU:0" not in plane.name and "GPU:0" not in plane.name:
                continue
            meta = {m.key: m.value for m in plane.event_metadata}
            for line in plane.lines:
                for ev in line.events:
                    md = meta.get(ev.metadata_id)
                    if md is not None and (md.display_name or md.name) == "barrier-cores":
                        out.append(ev.duration_ps / 1e6)
    return out


@pytest.mark.parametrize("run", XPLANE_RUNS)
def test_host_boundness_agrees_with_tool_files(xprofs_build, corpus, run, xcat):
    name = MOUNT_NAMES[run]
    page = json.loads(xcat(corpus, name + "/overview_page.json"))
    profile = json.loads(xcat(corpus, name + "/op_profile.json?group_by=category"))
    want = host_boundness(corpus / run, page, profile, barrier_durations_us(corpus / run))
    rc, out, _ = agent(xprofs_build, "check_host_boundness", corpus / run)
    assert rc == 0 and json.loads(out) == want
    # func_name only changes the HOST_BOUND recommendations
    rc, out2, _ = agent(xprofs_build, "check_host_boundness", corpus / run, "train_step")
    assert rc == 0 and out2 == out


@pytest.mark.parametrize("scenario", ["train", "tpu"])
def test_host_boundness_of_synthetic_runs(xprofs_build, synth, tmp_path, xcat, scenario):
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", scenario, "--steps", 6)
    page = json.loads(xcat(logdir, "r1/overview_page.json"))
    profile = json.loads(xcat(logdir, "r1/op_profile.json?group_by=category"))
    run_dir = logdir / "plugins/profile/r1"
    want = host_boundness(run_dir, page, profile, barrier_durations_us(run_dir))
    assert want["status"] == "NOT_HOST_BOUND" and want["metrics"]["scaled_compute_time_ms"] > 0
    rc, out, _ = agent(xprofs_build, "check_host_boundness", run_dir)
    assert rc == 0 and json.loads(out) == want


@pytest.mark.parametrize("run", XPLANE_RUNS)
@pytest.mark.parametrize("command", ["get_kernel_utilization", "compute_utilization"])
def test_kernel_utilization_without_tpu_counters(xprofs_build, corpus, run, command):
    planes = {p.name for f in (corpus / run).glob("*.xplane.pb")
              for p in xplane_py.load(f).planes}
    assert not any(p.startswith("/device:TPU") for p in planes)
    rc, out, _ = agent(xprofs_build, command, corpus / run, "--kernel_name=fusion",
                       "--device=0", "--output_format=dict")
    assert rc == 0 and out == '{\n  "devices": [],\n  "status": "SUCCESS"\n}\n'


@pytest.mark.parametrize("args,code,reason", [
    (["get_step_trace", "RUN", "--limit=abc"], 4, "INVALID_VALUE"),
    (["get_step_trace", "RUN", "--bogus=1"], 2, None),
    (["get_step_trace", "RUN", "5"], 2, None),
    (["check_host_boundness", "RUN", "f", "True"], 2, None),  # bypass_cache: keyword-only
    (["check_host_boundness", "/no/such/run"], 3, "PATH_ERROR"),
    (["get_kernel_utilization", "RUN", "--raw_bytes=abc"], 2, "USAGE_ERROR"),
    (["compute_utilization", "/no/such/run"], 3, "PATH_ERROR"),
])
def test_step_commands_bad_values(xprofs_build, corpus, args, code, reason):
    args = [str(corpus / XPLANE_RUNS[4]) if a == "RUN" else a for a in args]
    rc, out, err = agent(xprofs_build, *args)
    assert rc == code, (out, err)
    if reason is None:
        assert out == "" and err.startswith("ERROR:")
    else:
        assert json.loads(out)["reason"] == reason and err.startswith(reason)


@pytest.mark.parametrize("path,argv", [
    ("get_step_trace.json", ["get_step_trace"]),
    ("get_step_trace.json?limit=1&include_summary=False",
     ["get_step_trace", "--limit=1", "--include_summary=False"]),
    ("check_host_boundness.json", ["check_host_boundness"]),
    ("check_host_boundness.json?func_name=step", ["check_host_boundness", "--func_name=step"]),
    ("get_kernel_utilization.json?kernel_name=fusion",
     ["get_kernel_utilization", "--kernel_name=fusion"]),
    ("compute_utilization.json", ["compute_utilization"]),
])
@pytest.mark.parametrize("run", [XPLANE_RUNS[3], XPLANE_RUNS[4]])
def test_mount_step_files_are_the_cli_bytes(xprofs_build, corpus, xcat, run, path, argv):
    import os
    run_dir = os.path.realpath(corpus / run)
    mounted = xcat(corpus, MOUNT_NAMES[run] + "/cli/" + path)
    r = subprocess.run([str(xprofs_build / "xprofs"), argv[0], run_dir, *argv[1:]],
                       capture_output=True, timeout=600)
    assert r.returncode == 0 and mounted == r.stdout and mounted.endswith(b"}\n")


def test_mount_step_trace_bad_limit_is_einval(xcat, corpus):
    r = xcat(corpus, MOUNT_NAMES[XPLANE_RUNS[4]] + "/cli/get_step_trace.json?limit=abc",
             check=False)
    assert r.returncode != 0


def test_step_trace_falls_back_to_input_pipeline_and_overview(xprofs_build, corpus, xcat):
    run = XPLANE_RUNS[4]
    name = MOUNT_NAMES[run]
    ip_steps = input_pipeline_steps(json.loads(xcat(corpus, name +
                                                    "/input_pipeline_analyzer.json")))
    assert ip_steps
    # a core the pod viewer lacks: the input pipeline's steps (it has no cores)
    rc, out, _ = agent(xprofs_build, "get_step_trace", corpus / run, "--device_core=7")
    assert rc == 0 and json.loads(out) == {"summary": step_summary(ip_steps),
                                           "step_breakdown": ip_steps}
    # a step neither has: the overview's averages
    props = {}
    for s in json.loads(xcat(corpus, name + "/overview_page.json")):
        props.update(s.get("p", {}))
    step = float(props["steptime_ms_average"])
    rc, out, _ = agent(xprofs_build, "get_step_trace", corpus / run, "--step_num=99")
    got = json.loads(out)
    assert rc == 0 and got["step_breakdown"] == [] and got["summary"]["is_aggregate"] is True
    assert got["summary"]["step_time_ms_average"] == round(step, 4)
    assert got["summary"]["total_steps"] == len(ip_steps)
    assert got["summary"]["compute_time_ms_average"] == round(
        step - safe_float(props.get("tc_infeed_ms_average")) -
        safe_float(props.get("tc_outfeed_ms_average")) -
        safe_float(props.get("tc_idle_ms_average")), 4)


def test_host_boundness_counts_barrier_cores(xprofs_build, synth, tmp_path, xcat):
    """barrier-cores events on TPU:0 (added here to a synthetic TPU run) are taken
    out of the idle time, averaged per event and scaled by the step count."""
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "tpu", "--steps", 6)
    run_dir = logdir / "plugins/profile/r1"
    f = sorted(run_dir.glob("*.xplane.pb"))[0]
    space = xplane_py.load(f)
    plane = next(p for p in space.planes if p.name == "/device:TPU:0")
    entry = plane.event_metadata.add()
    entry.key = entry.value.id = 1000
    entry.value.name = "barrier-cores"
    line = xplane_py.add_line(plane, 99, "Barriers", plane.lines[0].timestamp_ns)
    for i, dur_ps in enumerate((40_000_000, 65_500_000, 52_250_000)):
        ev = line.events.add()
        ev.metadata_id = 1000
        ev.offset_ps = i * 100_000_000
        ev.duration_ps = dur_ps
    f.write_bytes(space.SerializeToString())
    barriers = barrier_durations_us(run_dir)
    assert barriers == [40.0, 65.5, 52.25]
    page = json.loads(xcat(logdir, "r1/overview_page.json"))
    profile = json.loads(xcat(logdir, "r1/op_profile.json?group_by=category"))
    want = host_boundness(run_dir, page, profile, barriers)
    assert want["metrics"]["scaled_barrier_time_ms"] > 0
    rc, out, _ = agent(xprofs_build, "check_host_boundness", run_dir)
    assert rc == 0 and json.loads(out) == want


def test_fuse_mount_step_files_are_the_cli_bytes(xprofs_build, corpus, mount):
    """Through a real FUSE mount: each new command's cli/ file, listed and read."""
    import os
    mnt = mount(corpus)
    run = XPLANE_RUNS[4]
    cli_dir = mnt / MOUNT_NAMES[run] / "cli"
    names = os.listdir(cli_dir)
    run_dir = os.path.realpath(corpus / run)
    for command in STEP_COMMANDS:
        assert command + ".json" in names
        mounted = (cli_dir / (command + ".json")).read_bytes()
        r = subprocess.run([str(xprofs_build / "xprofs"), command, run_dir],
                           capture_output=True, timeout=600)
        assert r.returncode == 0 and mounted == r.stdout
    with pytest.raises(OSError) as e:
        (cli_dir / "get_step_trace.json?limit=abc").read_bytes()
    assert e.value.errno == 22  # EINVAL
