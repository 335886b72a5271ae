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
