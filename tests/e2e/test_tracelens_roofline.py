"""The matrix perf models beyond aten mm / convolution / SDPA, against TraceLens.

roofline_ops_trace.py writes a Kineto trace of convolution_backward, the
flash_attn backward and varlen ops, flash_attn_3::fwd, the aiter attention
ops, aten::_scaled_mm, the Transformer Engine GEMMs (pseudo ops and
tex_ts::te_gemm_ts) and vLLM's dynamic-quant GEMM, with a few
that TraceLens's models reject. tracelens_ref/gen_roofline_ops/ holds what
TraceLens 171dd747 wrote for it (generate_perf_report_pytorch's CSVs, and
roofline.csv's columns from its build_df_perf_metrics via
tracelens_live.ROOFLINE; tracelens_ref/README.md says how). Our
perf_report/ CSVs must be those bytes, and roofline.csv's columns too. Where
TraceLens can run (TRACELENS_SRC, Debian's python3-pandas) the same holds
against it live, and roofline.csv against it on the corpus runs.
"""
import csv
import hashlib
import io
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import roofline_ops_trace  # noqa: E402
import tracelens_live  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
REF = HERE / "tracelens_ref"
GEN = "gen_roofline_ops"
GEN_MD5 = "c7453f36518c66b73aba4370fd9e91d6"
SHEETS = ["GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "ops_unique_args",
          "ops_summary", "ops_summary_by_category", "gpu_timeline", "short_kernel_histogram",
          "short_kernels_summary", "unified_perf_summary"]
RUNS = ["h100_bert_small", "h100_falconsai_vit", "mi300_qwen_0.5b", "b200_eager"]


def gen_run(tmp_path):
    run = tmp_path / "log" / GEN
    run.mkdir(parents=True)
    data = roofline_ops_trace.write(run / f"{GEN}.pt.trace.json")
    assert hashlib.md5(data).hexdigest() == GEN_MD5  # the trace the references are of
    return tmp_path / "log", run / f"{GEN}.pt.trace.json"


def rows_of(raw):
    return list(csv.DictReader(io.StringIO(raw.decode())))


def roofline_cols(raw):
    """roofline.csv cut to the columns TraceLens's build_df_perf_metrics has."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(tracelens_live.ROOFLINE_COLS)
    for r in rows_of(raw):
        w.writerow([r[c] for c in tracelens_live.ROOFLINE_COLS])
    return out.getvalue().encode()


def test_sheets_match_tracelens_recorded(tmp_path, xcat):
    logdir, _ = gen_run(tmp_path)
    for sheet in SHEETS:
        ours = xcat(logdir, f"{GEN}/perf_report/{sheet}.csv").decode()
        assert ours == (REF / GEN / f"{sheet}.csv").read_text(), sheet


def test_roofline_matches_tracelens_recorded(tmp_path, xcat):
    logdir, _ = gen_run(tmp_path)
    assert roofline_cols(xcat(logdir, f"{GEN}/roofline.csv")) == \
        (REF / GEN / "roofline.csv").read_bytes()


def test_sheets_split_and_left_out(tmp_path, xcat):
    """Which ops go where, and which TraceLens's models reject."""
    logdir, _ = gen_run(tmp_path)
    names = {s: {r["name"] for r in rows_of(xcat(logdir, f"{GEN}/perf_report/{s}.csv"))}
             for s in ["GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd"]}
    assert names["CONV_bwd"] == {"aten::convolution_backward"}
    assert names["CONV_fwd"] == {"aten::convolution"}
    # the bwd=False pass keeps every attention op but varlen backward in SDPA_fwd
    assert names["SDPA_bwd"] == {"flash_attn::_flash_attn_varlen_backward"}
    assert {"flash_attn::_flash_attn_backward", "aiter::mha_bwd", "aiter::_flash_attn_backward",
            "aiter::wrapper_fmha_v3_bwd", "flash_attn_3::fwd"} <= names["SDPA_fwd"]
    assert {"aten::_scaled_mm", "_Linear_yfwd_mm", "_LinearBackward_wgrad_mm",
            "tex_ts::te_gemm_ts", "vllm::gemm_with_dynamic_quant"} <= names["GEMM"]
    # mixed input dtypes raise in tev2_pseudo_gemm.bytes()
    assert "_LayerNormLinearBackward_wgrad_mm" not in names["GEMM"]
    roof = rows_of(xcat(logdir, f"{GEN}/roofline.csv"))
    uids = {r["name"]: set() for r in roof}
    for r in roof:
        uids[r["name"]].add(r["category"])
    assert uids["aten::convolution_backward"] == {"CONV_bwd"}
    assert uids["aiter::mha_bwd"] == {"SDPA_bwd"}
    conv = rows_of(xcat(logdir, f"{GEN}/perf_report/CONV_bwd.csv"))
    assert {r["param: bias"] for r in conv} == {"[]", "True"}  # bias_sizes as recorded
    assert len(conv) == 6  # the mixed-dtype one is left out
    # _scaled_mm with an unknown element size asserts
    gemm = rows_of(xcat(logdir, f"{GEN}/perf_report/GEMM.csv"))
    assert all("long" not in r["param: dtype_A_B"] for r in gemm)


def test_xlsx_lists_backward_sheets(tmp_path, xcat):
    openpyxl = pytest.importorskip("openpyxl", reason="python3-openpyxl is not installed")
    logdir, _ = gen_run(tmp_path)
    path = tmp_path / "r.xlsx"
    path.write_bytes(xcat(logdir, f"{GEN}/perf_report.xlsx"))
    names = openpyxl.load_workbook(path, read_only=True).sheetnames
    assert [n for n in names if n in SHEETS[:5]] == SHEETS[:5]  # TraceLens's order
    # unified_perf_summary sits after ops_unique_args, before the roofline sheets
    assert names.index("ops_unique_args") + 1 == names.index("unified_perf_summary")
    assert names.index("unified_perf_summary") < names.index("GEMM")


# ---- TraceLens itself, where TRACELENS_SRC and Debian's pandas are there ----

def test_sheets_live_tracelens(tmp_path, xcat):
    logdir, trace = gen_run(tmp_path)
    out = tracelens_live.report(trace, tmp_path / "tl")
    for sheet in SHEETS:
        assert xcat(logdir, f"{GEN}/perf_report/{sheet}.csv") == \
            (out / f"{sheet}.csv").read_bytes(), sheet
    assert roofline_cols(xcat(logdir, f"{GEN}/roofline.csv")) == \
        tracelens_live.run(tracelens_live.ROOFLINE, trace)


@pytest.mark.parametrize("run", RUNS)
def test_corpus_roofline_live_tracelens(corpus, xcat, run):
    trace = corpus / "pytorch" / run / f"{run}.pt.trace.json.gz"
    assert roofline_cols(xcat(corpus, f"pytorch/{run}/roofline.csv")) == \
        tracelens_live.run(tracelens_live.ROOFLINE, trace)
