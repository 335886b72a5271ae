"""kernel_launchers_unique_args.csv and perf_report/*.csv of PyTorch runs.

Two independent checks:

- TraceLens's own recorded report. tests/e2e/tracelens_ref/<run>/ holds the
  CSVs that TraceLens's generate_perf_report_pytorch wrote for three corpus
  traces (AMD-AGI/TraceLens 171dd747, tests/traces/{h100,mi300}/<trace>_
  perf_report_csvs/, MIT; the same .json.gz files as ../shared/corpus, md5
  checked below). They were made under numpy 2, which spells the numbers
  inside kernel_details dicts as np.float64(x); Debian's numpy 1.24 (what
  xprofs follows everywhere) spells them x, so that wrapper is removed before
  the byte-for-byte comparison. Nothing else is normalised. The elementwise,
  normalization and reduce sheets, b200_eager's, and those of the generated
  trace of vector_ops_trace.py (gen_vector_ops/) were recorded by running
  TraceLens 171dd747 here under Debian's python3-pandas 1.5.3 / numpy 1.24
  (tracelens_ref/README.md).
- A brute-force recomputation of get_df_kernel_launchers_unique_args in
  Python from kernel_launchers.csv's rows (grouping by the str() of the nine
  columns in order of first sight, pandas' Kahan sums, sorting by sum then
  ex_UID, percentages), on every corpus PyTorch run, with and without
  include_pct and event_name.

Where TraceLens itself can run (tracelens_live.py: TRACELENS_SRC and Debian's
python3-pandas), the files must also be byte-identical to what it prints now.
"""
import ast
import csv
import gzip
import hashlib
import io
import json
import math
import pathlib
import re

import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import tracelens_live  # noqa: E402
import vector_ops_trace  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
REF = HERE / "tracelens_ref"
RECORDED = {
    "h100_bert_small": "e616c2d9dd8df696d54087a4b67f624e",
    "h100_falconsai_vit": "07518bb56c1714dd01998a6e42b6519c",
    "mi300_qwen_0.5b": "532dc7b1795cf25ab67f2d3c0250437a",
    "b200_eager": "9422e0eac476589e5fe05f5ca6df7379",
}
RUNS = ["h100_bert_small", "h100_falconsai_vit", "mi300_qwen_0.5b", "b200_eager"]
SHEETS = ["gpu_timeline", "ops_summary_by_category", "ops_summary", "ops_unique_args",
          "unified_perf_summary", "GEMM",
          "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "BinaryElementwise",
          "UnaryElementwise", "Normalization", "Reduce_fwd", "short_kernel_histogram",
          "short_kernels_summary", "coll_analysis"]
SHORT = ["short_kernel_histogram", "short_kernels_summary"]
BASE = SHEETS[:4]
UNIFIED = ["unified_perf_summary"]
# The sheets TraceLens writes for each corpus run, of those xprofs makes, in its order.
RUN_SHEETS = {
    "h100_bert_small": BASE + UNIFIED + ["GEMM", "SDPA_fwd", "BinaryElementwise",
                                         "Normalization"] + SHORT,
    "h100_falconsai_vit": BASE + UNIFIED + ["GEMM", "SDPA_fwd", "CONV_fwd",
                                            "BinaryElementwise", "Normalization"] + SHORT,
    "mi300_qwen_0.5b": BASE + UNIFIED + ["GEMM", "SDPA_fwd", "BinaryElementwise",
                                         "UnaryElementwise", "Reduce_fwd"] + SHORT,
    "b200_eager": BASE + ["GEMM", "UnaryElementwise", "Reduce_fwd"] + SHORT
    + ["coll_analysis"],
}
# Sheets TraceLens writes that xprofs does not make for a run (the file says so
# rather than serve a partial table): b200_eager has Triton-compiled kernels and
# vllm::unified_attention_with_output, whose perf models are not ported.
NOT_MADE = {"b200_eager": ["unified_perf_summary"]}
GROUP_COLS = ["name", "op category", "process_name", "process_label", "thread_name",
              "Input Dims", "Input type", "Input Strides", "Concrete Inputs"]


def rows_of(raw):
    return list(csv.DictReader(io.StringIO(raw.decode())))


def kahan(values):
    s = c = 0.0
    for v in values:
        y = v - c
        t = s + y
        c = (t - s) - y
        s = t
    return s


def pyrepr(v, as_int=False):
    return str(int(v)) if as_int else repr(float(v))


@pytest.mark.parametrize("run", sorted(RECORDED))
def test_perf_report_matches_tracelens_recorded(corpus, xcat, run):
    trace = corpus / "pytorch" / run / f"{run}.pt.trace.json.gz"
    assert hashlib.md5(trace.read_bytes()).hexdigest() == RECORDED[run]
    recorded = [s for s in RUN_SHEETS[run] if (REF / run / f"{s}.csv").exists()]
    assert len(recorded) >= 2
    for sheet in recorded:
        ref = (REF / run / f"{sheet}.csv").read_text()
        ref = re.sub(r"np\.float64\(([^()]*)\)", r"\1", ref)
        ours = xcat(corpus, f"pytorch/{run}/perf_report/{sheet}.csv").decode()
        assert ours == ref, f"{run} perf_report/{sheet}.csv differs from TraceLens's"


def test_perf_report_listed(mount, corpus):
    mnt = mount(corpus)
    run = mnt / "pytorch" / "h100_bert_small"
    names = {p.name for p in run.iterdir()}
    assert "perf_report" in names and "kernel_launchers_unique_args.csv" in names
    assert (run / "perf_report").is_dir()
    assert sorted(p.name for p in (run / "perf_report").iterdir()) == sorted(
        f"{s}.csv" for s in SHEETS)  # listed even where a sheet has no rows
    host = run / "hosts" / "h100_bert_small" / "perf_report"
    assert (host / "ops_unique_args.csv").read_bytes() == (
        run / "perf_report" / "ops_unique_args.csv").read_bytes()
    # The sheets are the run's other files under TraceLens's names.
    assert (run / "perf_report" / "ops_summary.csv").read_bytes() == (
        run / "kernel_launchers_summary.csv").read_bytes()
    assert (run / "perf_report" / "gpu_timeline.csv").read_bytes() == (
        run / "gpu_timeline.csv").read_bytes()


def expected_unique_args(launchers, event_name=None, include_pct=False):
    """The table as (header, rows of cell strings), from kernel_launchers.csv rows."""
    direct_int = all(re.fullmatch(r"-?\d+", r["total_direct_kernel_time"])
                     for r in launchers)
    subtree_int = all(re.fullmatch(r"-?\d+", r["total_subtree_kernel_time"])
                      for r in launchers)
    groups = {}
    for r in launchers:
        if event_name is not None and r["name"] != event_name:
            continue
        groups.setdefault(tuple(r[c] for c in GROUP_COLS), []).append(r)
    out = []
    for key, rs in groups.items():
        d = [float(r["total_direct_kernel_time"]) for r in rs]
        s = [float(r["total_subtree_kernel_time"]) for r in rs]
        out.append((kahan(d), int(rs[0]["UID"]), key, len(rs), kahan(d) / len(rs),
                    kahan(s) / len(rs), kahan(s)))
    out.sort(key=lambda g: (-g[0], g[1]))
    header = GROUP_COLS + ["operation_count", "total_direct_kernel_time_mean",
                           "total_subtree_kernel_time_mean", "total_direct_kernel_time_sum",
                           "total_subtree_kernel_time_sum", "ex_UID"]
    if include_pct:
        header += ["Percentage (%)", "Cumulative Percentage (%)"]
    total = math.fsum(g[0] for g in out)  # checked approximately below
    rows, cum = [], 0.0
    for i, (dsum, uid, key, n, dmean, smean, ssum) in enumerate(out):
        row = list(key) + [str(n), pyrepr(dmean), pyrepr(smean), pyrepr(dsum, direct_int),
                           pyrepr(ssum, subtree_int), str(uid)]
        if include_pct:
            pct = dsum / total * 100
            cum = pct if i == 0 else cum + pct
            row += [pct, cum]
        rows.append(row)
    return header, rows


def compare(ours_raw, header, rows, include_pct):
    got = list(csv.reader(io.StringIO(ours_raw.decode())))
    assert got[0] == header
    assert len(got) - 1 == len(rows)
    for g, e in zip(got[1:], rows):
        if include_pct:
            assert g[:-2] == e[:-2]
            assert float(g[-2]) == pytest.approx(e[-2], rel=1e-12)
            assert float(g[-1]) == pytest.approx(e[-1], rel=1e-12)
        else:
            assert g == e


@pytest.mark.parametrize("run", RUNS)
def test_unique_args_brute_force(corpus, xcat, run):
    launchers = rows_of(xcat(corpus, f"pytorch/{run}/kernel_launchers.csv"))
    assert launchers
    for pct in (False, True):
        q = "?include_pct=1" if pct else ""
        raw = xcat(corpus, f"pytorch/{run}/kernel_launchers_unique_args.csv{q}")
        header, rows = expected_unique_args(launchers, include_pct=pct)
        compare(raw, header, rows, pct)
        assert sum(int(r[9]) for r in rows) == len(launchers)
    if pct:
        last = list(csv.reader(io.StringIO(raw.decode())))[-1]
        assert float(last[-1]) == pytest.approx(100.0, rel=1e-9)
    # One op drilled into: the op with the most launcher rows.
    names = [r["name"] for r in launchers]
    top = max(set(names), key=names.count)
    raw = xcat(corpus, f"pytorch/{run}/kernel_launchers_unique_args.csv?event_name={top}"
               "&include_pct=true")
    header, rows = expected_unique_args(launchers, event_name=top, include_pct=True)
    compare(raw, header, rows, True)
    assert all(r[0] == top for r in rows) and rows
    # A name no launcher has: the header alone.
    raw = xcat(corpus, f"pytorch/{run}/kernel_launchers_unique_args.csv?event_name=no%20such")
    assert raw.decode().count("\n") == 1


def welford_std(v):
    n, mean, m2 = 0, 0.0, 0.0
    for x in v:
        n += 1
        old = mean
        mean += (x - old) / n
        m2 += (x - old) * (x - mean)
    return math.sqrt(m2 / (n - 1)) if n > 1 else None


@pytest.mark.parametrize("run", RUNS)
def test_report_unique_args_statistics(corpus, xcat, run):
    """perf_report/ops_unique_args.csv against kernel_launchers.csv's rows and
    the raw trace: per-group median, std, min, max of the launcher times, and
    kernel details whose counts and durations come from the trace's GPU
    events."""
    launchers = rows_of(xcat(corpus, f"pytorch/{run}/kernel_launchers.csv"))
    report = rows_of(xcat(corpus, f"pytorch/{run}/perf_report/ops_unique_args.csv"))
    groups = {}
    for r in launchers:
        groups.setdefault(tuple(r[c] for c in GROUP_COLS), []).append(r)
    assert len(report) == len(groups)
    with gzip.open(corpus / "pytorch" / run / f"{run}.pt.trace.json.gz") as f:
        events = json.load(f)["traceEvents"]
    durs = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            durs.setdefault(e["name"], []).append(e.get("dur", 0))
    all_durs = {d for v in durs.values() for d in v}
    for row in report:
        rs = groups[tuple(row[c] for c in GROUP_COLS)]
        d = sorted(float(r["total_direct_kernel_time"]) for r in rs)
        n = len(d)
        med = d[n // 2] if n % 2 else (d[n // 2 - 1] + d[n // 2]) / 2
        assert float(row["total_direct_kernel_time_median"]) == med
        assert float(row["total_direct_kernel_time_min"]) == d[0]
        assert float(row["total_direct_kernel_time_max"]) == d[-1]
        std = welford_std(float(r["total_direct_kernel_time"]) for r in rs)
        if std is None:
            assert row["total_direct_kernel_time_std"] == ""
        else:
            assert float(row["total_direct_kernel_time_std"]) == pytest.approx(std, rel=1e-9,
                                                                               abs=1e-12)
        details = ast.literal_eval(row["kernel_details_summary"])
        trunc = ast.literal_eval(row["trunc_kernel_details"])
        assert len(details) == len(trunc) == int(rs[0]["direct_kernel_count"])
        assert [k["total_duration_us"] for k in details] == sorted(
            k["total_duration_us"] for k in details)
        for k, t in zip(details, trunc):
            assert k["name"] in durs  # a GPU event of the trace
            assert k["count"] <= n
            assert k["min_duration_us"] <= k["median_duration_us"] <= k["max_duration_us"]
            # TraceLens takes each position's durations whatever the kernel
            # there is named in other rows: each one is some GPU event's.
            assert k["min_duration_us"] in all_durs and k["max_duration_us"] in all_durs
            assert k["total_duration_us"] == pytest.approx(k["mean_duration_us"] * k["count"])
            name = k["name"] if len(k["name"]) <= 64 else k["name"][:64] + "..."
            assert t == {"name": name, "stream": k["stream"],
                         "mean_duration_us": round(k["mean_duration_us"], 2)}


@pytest.mark.parametrize("run", RUNS)
def test_perf_report_xlsx_matches_csvs(corpus, xcat, tmp_path, run):
    """perf_report.xlsx opened by openpyxl, sheet by sheet against perf_report/*.csv."""
    openpyxl = pytest.importorskip("openpyxl", reason="python3-openpyxl is not installed")
    path = tmp_path / "r.xlsx"
    path.write_bytes(xcat(corpus, f"pytorch/{run}/perf_report.xlsx"))
    wb = openpyxl.load_workbook(path, read_only=True)
    assert wb.sheetnames == RUN_SHEETS[run]
    for sheet in RUN_SHEETS[run]:
        want = list(csv.reader(io.StringIO(
            xcat(corpus, f"pytorch/{run}/perf_report/{sheet}.csv").decode())))
        got = [list(r) for r in wb[sheet].iter_rows(values_only=True)]
        assert len(got) == len(want), sheet
        width = len(want[0])
        for i, (g, w) in enumerate(zip(got, want)):
            g = list(g) + [None] * (width - len(g))
            assert len(g) == width, (sheet, i)
            for gc, wc in zip(g, w):
                if wc == "":
                    assert gc is None, (sheet, i, wc)
                elif isinstance(gc, (int, float)) and not isinstance(gc, bool):
                    assert i > 0
                    # libxlsxwriter writes 16 significant digits
                    assert gc == pytest.approx(float(wc), rel=1e-15, abs=0), (sheet, i, wc)
                else:
                    assert gc == wc, (sheet, i)


# ---- TraceLens itself, where TRACELENS_SRC and Debian's pandas are there ----

@pytest.mark.parametrize("run", RUNS)
def test_unique_args_live_tracelens(corpus, xcat, run):
    trace = corpus / "pytorch" / run / f"{run}.pt.trace.json.gz"
    for pct in ("0", "1"):
        q = "?include_pct=1" if pct == "1" else ""
        assert xcat(corpus, f"pytorch/{run}/kernel_launchers_unique_args.csv{q}") == \
            tracelens_live.run(tracelens_live.UNIQUE_ARGS, trace, pct)
    top = next(csv.DictReader(io.StringIO(
        xcat(corpus, f"pytorch/{run}/kernel_launchers_summary.csv").decode())))["name"]
    assert xcat(corpus, f"pytorch/{run}/kernel_launchers_unique_args.csv?event_name={top}") == \
        tracelens_live.run(tracelens_live.UNIQUE_ARGS, trace, "0", top)


@pytest.mark.parametrize("run", sorted(NOT_MADE))
def test_perf_report_not_made(corpus, xcat, run):
    """A sheet the port cannot make for a run is no file, with the reason."""
    for sheet in NOT_MADE[run]:
        assert (REF / run / f"{sheet}.csv").exists()  # TraceLens writes it
        r = xcat(corpus, f"pytorch/{run}/perf_report/{sheet}.csv", check=False)
        assert r.returncode != 0 and b"not made yet" in r.stderr, sheet


@pytest.mark.parametrize("run", RUNS)
def test_perf_report_live_tracelens(corpus, xcat, tmp_path, run):
    trace = corpus / "pytorch" / run / f"{run}.pt.trace.json.gz"
    out = tracelens_live.report(trace, tmp_path / "tl")
    for sheet in SHEETS:
        if sheet in NOT_MADE.get(run, []):
            r = xcat(corpus, f"pytorch/{run}/perf_report/{sheet}.csv", check=False)
            assert r.returncode != 0 and b"not made yet" in r.stderr, sheet
        elif (out / f"{sheet}.csv").exists():
            assert xcat(corpus, f"pytorch/{run}/perf_report/{sheet}.csv") == \
                (out / f"{sheet}.csv").read_bytes(), sheet
        else:  # TraceLens leaves out a sheet without rows; so does xprofs
            r = xcat(corpus, f"pytorch/{run}/perf_report/{sheet}.csv", check=False)
            assert r.returncode != 0 and b"no " in r.stderr, sheet


# ---- the generated trace of every vector perf model -------------------------

GEN = "gen_vector_ops"
GEN_MD5 = "1f5b37baf9a77faca91ab6ab23e6c1b3"
GEN_SHEETS = ["BinaryElementwise", "UnaryElementwise", "Normalization", "Reduce_fwd",
              "ops_unique_args", "unified_perf_summary"]


def gen_run(tmp_path):
    run = tmp_path / "log" / GEN
    run.mkdir(parents=True)
    data = vector_ops_trace.write(run / f"{GEN}.pt.trace.json")
    assert hashlib.md5(data).hexdigest() == GEN_MD5  # the trace the references are of
    return tmp_path / "log", run / f"{GEN}.pt.trace.json"


def test_vector_sheets_match_tracelens_recorded(tmp_path, xcat):
    logdir, _ = gen_run(tmp_path)
    for sheet in GEN_SHEETS:
        ours = xcat(logdir, f"{GEN}/perf_report/{sheet}.csv").decode()
        assert ours == (REF / GEN / f"{sheet}.csv").read_text(), sheet
    norm = rows_of(xcat(logdir, f"{GEN}/perf_report/Normalization.csv"))
    names = {r["name"] for r in norm}
    # modelled forward and backward classes; instance_norm_backward has no model
    assert {"aten::native_group_norm_backward", "aten::_fused_rms_norm_backward",
            "aten::cudnn_batch_norm"} <= names
    assert "aten::instance_norm_backward" not in names
    # one float num_channels (group norm backward) makes the column float64
    assert all("." in r["param: num_channels"] for r in norm)
    assert "10.666666666666666" in {r["param: num_channels"] for r in norm}
    binary = rows_of(xcat(logdir, f"{GEN}/perf_report/BinaryElementwise.csv"))
    assert "aten::sigmoid_backward" not in {r["name"] for r in binary}  # no broadcast
    assert "LigerSiLUMulFunction" in {r["name"] for r in binary}
    unified = rows_of(xcat(logdir, f"{GEN}/perf_report/unified_perf_summary.csv"))
    # instance_norm_backward's model raises NotImplementedError: no row, and
    # its kernels get no synthetic op either
    assert not any("instance_norm_backward" in r["name"] for r in unified)
    assert {r["has_perf_model"] for r in unified} == {"True"}


def test_vector_roofline_rows(tmp_path, xcat):
    """roofline.csv has a row for every op the sheets hold, with the sheets' numbers."""
    logdir, _ = gen_run(tmp_path)
    roof = rows_of(xcat(logdir, f"{GEN}/roofline.csv"))
    by_uid = {int(r["UID"]): r for r in roof}
    cats = {"BinaryElementwise": {"elementwise"}, "UnaryElementwise": {"elementwise"},
            "Normalization": {"NORM_fwd", "NORM_bwd"}, "Reduce_fwd": {"reduce"}}
    for sheet, want in cats.items():
        for r in rows_of(xcat(logdir, f"{GEN}/perf_report/{sheet}.csv")):
            row = by_uid[int(r["UID_first"])]
            assert row["name"] == r["name"] and row["category"] in want
            assert row["GFLOPS"] == r["GFLOPS_first"]
            assert row["Data Moved (MB)"] == r["Data Moved (MB)_first"]
            assert row["Compute Spec"] == r["Compute Spec"]


def test_vector_sheets_live_tracelens(tmp_path, xcat):
    logdir, trace = gen_run(tmp_path)
    out = tracelens_live.report(trace, tmp_path / "tl")
    for sheet in GEN_SHEETS:
        assert xcat(logdir, f"{GEN}/perf_report/{sheet}.csv") == \
            (out / f"{sheet}.csv").read_bytes(), sheet


def test_perf_report_xlsx_same_bytes_later(corpus, xcat):
    """The workbook is dated by its profile, not by the clock: made again a
    second later it is the same bytes (the mount and a cache may serve
    either)."""
    import time
    first = xcat(corpus, "pytorch/h100_bert_small/perf_report.xlsx")
    time.sleep(1.1)
    assert xcat(corpus, "pytorch/h100_bert_small/perf_report.xlsx") == first
