"""The shape of XProf's TPU tool outputs: every table's column ids, labels,
types and column properties, its `p` keys and the format of their values, and
the kind of every cell, on the synthetic TPU profile (xprofs-synth --scenario
tpu) and on the same profile without its Steps lines.

The expected structure is copied from XProf 2.23.2's own outputs for a TPU v4
demo profile (Locamage/xprof-rs tests/data/overview_page.json,
input_pipeline_analyzer.json, framework_op_stats.json: ids, labels and key
names only, which are facts of XProf's format; that profile has no steps, so
its step tables have no rows). kernel_stats.json has no recorded TPU output:
its columns are those of GenerateKernelStatsDataTable
(xprof/convert/xplane_to_kernel_stats_db.cc).
"""
import json
import re
import subprocess

import pytest

import xplane_py

RUN = "keys"

PCT = r"\d+\.\d%"          # StrFormatToPercentage
ONE = r"-?\d+\.\d"         # OneDigit
TWO = r"-?\d+\.\d\d"       # TwoDigits
THREE = r"-?\d+\.\d\d\d"   # %.3lf
INT = r"\d+"
G6 = r"\d+(\.\d+)?(e\+\d\d+)?"  # absl::StrCat(double)
ANY = r"(?s).*"

OVERVIEW_ANALYSIS = {
    "cols": [("selfTimePercent", "Time (%)", "number", None),
             ("cumulativeTimePercent", "Cumulative time (%)", "number", None),
             ("category", "Category", "string", None),
             ("operation", "Operation", "string", None),
             ("flopRate", "Bf16 Normalized Flop Rate(GFLOPs/Sec)", "number", None)],
    "p": {"device_duty_cycle_high_confidence_percent": PCT, "device_duty_cycle_percent": PCT,
          "device_idle_time_percent": PCT, "device_op_time_eager_percent": PCT,
          "device_tf_op_percent": PCT, "flop_rate_utilization_relative_to_roofline": PCT,
          "hbm_utilization_percent": PCT, "host_idle_time_percent": PCT,
          "host_op_time_eager_percent": PCT, "host_tf_op_percent": PCT,
          "host_trace_level": INT, "idle_time_high_confidence_ps": G6,
          "memory_bw_utilization_relative_to_hw_limit": PCT, "mxu_utilization_percent": PCT,
          "remark_color": "", "remark_text": ""},
}

TPU_STEP_TIME = {
    "cols": [("stepnum", "stepnum", "string", None),
             ("tcComputeTimeMs", "TensorCore compute (in ms)", "number", None),
             ("scv0ComputeTimeMs", "SparseCoreV0 compute (in ms)", "number", None),
             ("scv0InfeedTimeMs", "SparseCoreV0 input (in ms)", "number", None),
             ("tcInfeedTimeMs", "TensorCore input (in ms)", "number", None),
             ("tcOutfeedTimeMs", "TensorCore output (in ms)", "number", None),
             ("tcIdleTimeMs", "TensorCore idle (in ms)", "number", None),
             ("hostTransferTimeMs", "Host transfer (in ms)", "number", None),
             ("tooltip", "tooltip", "string", {"role": "tooltip"}),
             ("infeedPercentAverage", "% step time waiting for input data", "number", None),
             ("infeedPercentMin", "Infeed percent min", "number", {"role": "interval"}),
             ("infeedPercentMax", "Infeed percent max", "number", {"role": "interval"})],
    "p": {"hardware_type": "TPU", "host_transfer_ms_average": TWO,
          "infeed_percent_average": ONE, "infeed_percent_maximum": ONE,
          "infeed_percent_minimum": ONE, "infeed_percent_standard_deviation": ONE,
          "input_conclusion": ANY, "output_conclusion": ANY,
          "scv0_compute_ms_average": TWO, "scv0_infeed_ms_average": TWO,
          "step_time_graph_column_ids": "stepnum,tcComputeTimeMs,scv0ComputeTimeMs,"
                                        "scv0InfeedTimeMs,tcInfeedTimeMs,tcOutfeedTimeMs,"
                                        "tcIdleTimeMs,hostTransferTimeMs,tooltip",
          "steptime_ms_average": TWO, "steptime_ms_maximum": TWO,
          "steptime_ms_minimum": TWO, "steptime_ms_standard_deviation": TWO,
          "summary_nextstep": ANY, "tc_compute_ms_average": TWO, "tc_idle_ms_average": TWO,
          "tc_infeed_ms_average": TWO, "tc_outfeed_ms_average": TWO},
}

RUN_ENVIRONMENT = {
    "cols": [(c, c, "string", None) for c in ("host_id", "command_line", "start_time",
                                               "bns_address")],
    "p": {"device_core_count": INT, "device_type": "TPU v4", "host_count": INT,
          "is_training": "true|false", "task_count": r"\d+ \(num tasks per host = \d+\)"},
}

RECOMMENDATION = {
    "cols": [(c, c, "string", None) for c in ("tip_type", "link", "description")],
    "p": {"all_other_bottleneck": ANY, "all_other_statement": ANY, "bottleneck": ANY,
          "device_collectives_bottleneck": ANY, "device_collectives_statement": ANY,
          "kernel_launch_bottleneck": ANY, "kernel_launch_statement": ANY,
          "non_bottleneck_tip_types": "|host|device", "precision_statement": ANY,
          "statement": ANY},
}

INFERENCE_LATENCY = {
    "cols": [("percentile", "percentile", "string", None),
             ("hostTimeMs", "Host time (in ms)", "number", None),
             ("deviceTimeMs", "Device time (in ms)", "number", None),
             ("communicationTimeMs", "Host-device communication time (in ms)", "number", None),
             ("totalTimeMs", "Total latency (in ms)", "number", None)],
    "p": None,
}

DIAGNOSTICS = {"cols": [("severity", "Severity", "string", None),
                        ("message", "Message", "string", None)], "p": None}

MAX_INFEED_CORE = {"cols": [("index", "Index", "string", None)], "p": None}

HOST_INPUT_OPS = {
    "cols": [("opName", "Input Op", "string", None), ("count", "Count", "number", None),
             ("timeInMs", "Total Time (in ms)", "number", None),
             ("timeInPercent", "Total Time (as % of total input-processing time)", "number",
              None),
             ("selfTimeInMs", "Total Self Time (in ms)", "number", None),
             ("selfTimeInPercent", "Total Self Time (as % of total input-processing time)",
              "number", None),
             ("category", "Category", "string", None)],
    "p": {"advanced_file_read_us": THREE, "demanded_file_read_us": THREE,
          "enqueue_us": THREE, "preprocessing_us": THREE, "unclassified_nonequeue_us": THREE},
}

INPUT_RECOMMENDATION = {"cols": [("link", "link", "string", None)], "p": None}

FRAMEWORK_OP_STATS = {
    "cols": [("rank", "Rank", "number", None),
             ("host_or_device", "Host/device", "string", None),
             ("type", "Operation Type", "string", None),
             ("operation", "Operation Name", "string", None),
             ("occurrences", "#Occurrences", "number", None),
             ("total_time", "Total time (us)", "number", None),
             ("avg_time", "Avg. time (us)", "number", None),
             ("total_self_time", "Total self-time (us)", "number", None),
             ("avg_self_time", "Avg. self-time (us)", "number", None),
             ("device_total_self_time_percent", "Total self-time on Device (%)", "number",
              None),
             ("device_cumulative_total_self_time_percent",
              "Cumulative total-self time on Device (%)", "number", None),
             ("host_total_self_time_percent", "Total self-time on Host (%)", "number", None),
             ("Host_cumulative_total_self_time_percent",
              "Cumulative total-self time on Host (%)", "number", None),
             ("measured_flop_rate", "Normalized FLOP Rate (FLOPs/s)", "number", None),
             ("model_flop_rate", "Model FLOP Rate (GFLOP/s)", "number", None),
             ("measured_memory_bw", "Measured Memory BW (GBytes/Sec)", "number", None),
             ("operational_intensity", "Operational Intensity (FLOPs/Byte)", "number", None),
             ("bound_by", "Bound by", "string", None),
             ("eager", "Execution mode", "string", None)],
    "p": {"architecture_type": ANY, "task_type": "Training|Inference"},
}

KERNEL_STATS = {
    "cols": [("rank", "Rank", "number", None), ("kernel_name", "Kernel Name", "string", None),
             ("registers_per_thread", "Registers per thread", "number", None),
             ("shmem_bytes", "Shared Mem bytes", "number", None),
             ("block_dim", "Block dim", "string", None),
             ("grid_dim", "Grid dim", "string", None),
             ("occupancy_pct", "Theoretical Occupancy %", "number", None),
             ("is_op_tensor_core_eligible", "Op is TensorCore eligible", "boolean", None),
             ("is_kernel_using_tensor_core", "Kernel uses TensorCore", "boolean", None),
             ("op_name", "Op Name", "string", None),
             ("occurrences", "Occurrences", "number", None),
             ("total_duration_us", "Total Duration (μs)", "number", None),
             ("avg_duration_us", "Avg Duration (μs)", "number", None),
             ("min_duration_us", "Min Duration (μs)", "number", None),
             ("max_duration_us", "Max Duration (μs)", "number", None)],
    "p": None,
}

OVERVIEW = [OVERVIEW_ANALYSIS, TPU_STEP_TIME, RUN_ENVIRONMENT, RECOMMENDATION,
            INFERENCE_LATENCY, "{}", DIAGNOSTICS]
INPUT_PIPELINE = [MAX_INFEED_CORE, TPU_STEP_TIME, HOST_INPUT_OPS, INPUT_RECOMMENDATION,
                  DIAGNOSTICS]

NO_STEP_MARKER = (
    "No step marker observed and hence the step time is unknown. This may happen if (1) "
    "training steps are not instrumented (e.g., if you are not using Keras) or (2) the "
    "profiling duration is shorter than the step time. For (1), you need to add step "
    "instrumentation; for (2), you may try to profile longer.")
NO_STEP_TIME = ("No step time measured. Therefore we cannot tell where the performance "
                "bottleneck is.")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory, xprofs_build):
    """Run RUN: the tpu scenario; run "nosteps": the same without Steps lines."""
    out = tmp_path_factory.mktemp("keys")
    subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(out), "--run", RUN,
                    "--scenario", "tpu"], check=True, timeout=60, capture_output=True)
    space = xplane_py.load(next((out / "plugins/profile" / RUN).glob("*.xplane.pb")))
    for plane in space.planes:
        for i in reversed(range(len(plane.lines))):
            if plane.lines[i].name == "Steps":
                del plane.lines[i]
    run = out / "plugins/profile/nosteps"
    run.mkdir(parents=True)
    (run / "h.xplane.pb").write_bytes(space.SerializeToString())
    return out


def _cols(table):
    return [(c["id"], c["label"], c["type"], c.get("p")) for c in table["cols"]]


CELL_KINDS = {"number": (int, float), "string": (str,), "boolean": (bool,)}


def check_table(name, got, want, extra_cols=()):
    """got has want's columns (then extra_cols), p keys and value formats,
    and every cell's kind is its column's type."""
    if want == "{}":
        assert got == {}, name
        return
    assert sorted(got) == (["cols", "p", "rows"] if want["p"] is not None
                           else ["cols", "rows"]), name
    assert _cols(got) == want["cols"] + list(extra_cols), name
    if want["p"] is not None:
        assert sorted(got["p"]) == sorted(want["p"]), name
        for k, fmt in want["p"].items():
            assert re.fullmatch(fmt, got["p"][k]), (name, k, got["p"][k])
    types = [c["type"] for c in got["cols"]]
    for row in got["rows"]:
        assert [list(c) for c in row["c"]] == [["v"]] * len(types), name
        for cell, t in zip(row["c"], types):
            kinds = CELL_KINDS[t]
            assert isinstance(cell["v"], kinds) and (t == "boolean" or
                                                     not isinstance(cell["v"], bool)), name


@pytest.mark.parametrize("run", [RUN, "nosteps"])
def test_overview_page_keys(logdir, xcat, run):
    raw = xcat(logdir, f"{run}/overview_page.json").decode()
    # XProf writes the sixth element as " {}" between the tables
    assert raw.count("}, {},{") == 1
    data = json.loads(raw)
    assert len(data) == len(OVERVIEW)
    for i, (got, want) in enumerate(zip(data, OVERVIEW)):
        check_table(f"overview_page[{i}]", got, want)
    assert data[0]["rows"] and data[3]["rows"]
    assert bool(data[1]["rows"]) == (run == RUN)


@pytest.mark.parametrize("run", [RUN, "nosteps"])
def test_input_pipeline_keys(logdir, xcat, run):
    data = json.loads(xcat(logdir, f"{run}/input_pipeline_analyzer.json"))
    assert len(data) == len(INPUT_PIPELINE)
    nsteps = len(data[1]["rows"])
    assert nsteps == (3 if run == RUN else 0)
    steps = [(str(i), str(i), "string", None) for i in range(nsteps)]
    for i, (got, want) in enumerate(zip(data, INPUT_PIPELINE)):
        check_table(f"input_pipeline_analyzer[{i}]", got, want, steps if i == 0 else ())
    assert [r["c"][0]["v"] for r in data[0]["rows"]] == ["Step number", "Core name"]
    assert len(data[3]["rows"]) == 5


def test_no_steps_as_recorded(logdir, xcat):
    """Without steps the step-dependent values are those of the recorded
    outputs (whose demo profile has no steps either)."""
    ip = json.loads(xcat(logdir, "nosteps/input_pipeline_analyzer.json"))
    ov = json.loads(xcat(logdir, "nosteps/overview_page.json"))
    assert ip[0] == {"cols": [{"id": "index", "label": "Index", "type": "string"}],
                     "rows": [{"c": [{"v": "Step number"}]}, {"c": [{"v": "Core name"}]}]}
    for table in (ip[1], ov[1]):
        p = table["p"]
        assert p["input_conclusion"] == NO_STEP_TIME
        assert p["output_conclusion"] == ""
        assert p["summary_nextstep"] == "You may skip the rest of this page."
        for k in ("average", "maximum", "minimum", "standard_deviation"):
            assert p[f"steptime_ms_{k}"] == "0.00"
            assert p[f"infeed_percent_{k}"] == "0.0"
    for table in (ip[4], ov[6]):
        assert [[c["v"] for c in r["c"]] for r in table["rows"]] == [["WARNING",
                                                                      NO_STEP_MARKER]]
    assert ov[3]["p"]["bottleneck"] == "unknown"
    assert ov[3]["p"]["statement"] == NO_STEP_TIME


def test_framework_op_stats_keys(logdir, xcat):
    data = json.loads(xcat(logdir, f"{RUN}/framework_op_stats.json"))
    assert len(data) == 2
    for i, got in enumerate(data):
        check_table(f"framework_op_stats[{i}]", got, FRAMEWORK_OP_STATS)
    # table 0 keeps the IDLE rows, table 1 drops them
    assert any(r["c"][2]["v"] == "IDLE" for r in data[0]["rows"])
    assert not any(r["c"][2]["v"] == "IDLE" for r in data[1]["rows"])


def test_kernel_stats_keys(logdir, xcat):
    data = json.loads(xcat(logdir, f"{RUN}/kernel_stats.json"))
    check_table("kernel_stats", data, KERNEL_STATS)
    assert data["rows"] == []
