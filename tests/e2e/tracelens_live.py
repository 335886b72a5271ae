"""Run TraceLens itself, where the machine has it, for byte-for-byte checks.

TRACELENS_SRC names a TraceLens checkout (its top directory, holding the
TraceLens package); it runs under Debian's /usr/bin/python3 with
python3-pandas, numpy, openpyxl, tqdm, tabulate and yaml. Without both, the
caller's test is skipped with the reason: the recorded outputs and the
brute-force tests still run.
"""
import os
import pathlib
import subprocess

import pytest

SRC = os.environ.get("TRACELENS_SRC", "")

UNIQUE_ARGS = """
import sys
from TraceLens import TreePerfAnalyzer
pa = TreePerfAnalyzer.from_file(sys.argv[1])
df = pa.get_df_kernel_launchers()
name = sys.argv[3] if len(sys.argv) > 3 else None
out = pa.get_df_kernel_launchers_unique_args(df, event_name=name, include_pct=sys.argv[2] == "1")
sys.stdout.write("\\x00" + out.to_csv(index=False))
"""

REPORT = """
import sys
from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
generate_perf_report_pytorch(profile_json_path=sys.argv[1], output_xlsx_path=None,
                             output_csvs_dir=sys.argv[2], short_kernel_study=True)
"""

NCCL = """
import sys
from TraceLens import NcclAnalyser
df = NcclAnalyser(sys.argv[1:], None).build_df_nccl_implicit_sync_cat(detailed=True)
sys.stdout.write("\\x00" + df.to_csv(index=False))
"""

NCCL_SUMMARY = """
import sys
from TraceLens import NcclAnalyser
df = NcclAnalyser(sys.argv[1:], None).build_df_summary_long()
sys.stdout.write("\\x00" + df.to_csv(index=False))
"""

# roofline.csv's columns as TraceLens computes them: build_df_perf_metrics(bwd=False)
# over every event whose name has a perf model, by UID, numbers by repr.
ROOFLINE = """
import csv, io, math, sys
from TraceLens import TreePerfAnalyzer
from TraceLens.PerfModel.torch_op_mapping import get_perf_model_category
from TraceLens.PerfModel.torch_op_mapping import op_to_perf_model_class_map as m
pa = TreePerfAnalyzer.from_file(sys.argv[1])
evs = sorted((e for e in pa.tree.events if e["name"] in m), key=lambda e: e["UID"])
df = pa.build_df_perf_metrics(evs, bwd=False)
cols = ["GFLOPS", "Kernel Time (\u00b5s)", "TFLOPS/s", "Data Moved (MB)", "FLOPS/Byte", "TB/s"]
out = io.StringIO()
w = csv.writer(out, lineterminator="\\n")
w.writerow(["UID", "name", "category"] + cols + ["Compute Spec"])
def num(v):
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else repr(float(v))
for r in df.to_dict("records"):
    w.writerow([r["UID"], r["name"], get_perf_model_category(m[r["name"]])]
               + [num(r[c]) for c in cols] + [r["Compute Spec"]])
sys.stdout.write("\\x00" + out.getvalue())
"""
ROOFLINE_COLS = ["UID", "name", "category", "GFLOPS", "Kernel Time (\u00b5s)", "TFLOPS/s",
                 "Data Moved (MB)", "FLOPS/Byte", "TB/s", "Compute Spec"]


def available():
    if not SRC or not (pathlib.Path(SRC) / "TraceLens").is_dir():
        return "TRACELENS_SRC does not name a TraceLens checkout"
    r = subprocess.run(["/usr/bin/python3", "-c", "import pandas, numpy, tqdm, tabulate, yaml"],
                       capture_output=True)
    if r.returncode != 0:
        return "Debian's python3-pandas / tqdm / tabulate / yaml are not installed"
    return None


def run(code, *args):
    """TraceLens's stdout after the NUL mark (its progress prints come before)."""
    why = available()
    if why is not None:
        pytest.skip(f"TraceLens not runnable here: {why}")
    env = dict(os.environ, PYTHONPATH=SRC)
    r = subprocess.run(["/usr/bin/python3", "-c", code, *map(str, args)], capture_output=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    return r.stdout.split(b"\x00", 1)[-1]


def report(trace, outdir):
    run(REPORT, trace, outdir)
    return pathlib.Path(outdir)
