"""One file set per kind of trace, decided by the content: a PyTorch
(Kineto) trace named <host>.trace.json.gz under plugins/profile/<run>/, as
TensorBoard's plugin stores it, gets the same files and the same bytes as
under its own name <host>.pt.trace.json.gz (it used to be read as a JAX
trace and get none of TraceLens's PyTorch files)."""
import os
import shutil
import subprocess


def ls(xprofs_build, logdir, path):
    out = subprocess.run([str(xprofs_build / "xprofs"), "ls", str(logdir), path],
                         capture_output=True, text=True, check=True).stdout
    return sorted(out.split())


def cat(xprofs_build, logdir, path):
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), path],
                       capture_output=True, timeout=300)
    return r.returncode, r.stdout


def test_pytorch_trace_under_either_name(corpus, tmp_path, xprofs_build):
    (src,) = (corpus / "pytorch" / "h100_bert_small").glob("*.pt.trace.json.gz")
    host = src.name[:-len(".pt.trace.json.gz")]
    by_name = tmp_path / "by_name" / "bert"
    by_name.mkdir(parents=True)
    shutil.copy(src, by_name / src.name)
    tb = tmp_path / "tb" / "plugins" / "profile" / "bert"
    tb.mkdir(parents=True)
    shutil.copy(src, tb / (host + ".trace.json.gz"))
    a, b = tmp_path / "by_name", tmp_path / "tb"
    files = ls(xprofs_build, a, "bert")
    assert files == ls(xprofs_build, b, "bert")
    for f in ("call_tree.txt", "modules.txt", "roofline.csv", "kernel_launchers.csv",
              "steps.csv", "report.json", "gpu_timeline.csv"):
        assert f in files, f
    for f in files:
        if f.endswith("/") or f == "summary.json":  # summary.json names the file
            continue
        ra, rb = cat(xprofs_build, a, "bert/" + f), cat(xprofs_build, b, "bert/" + f)
        assert ra == rb, f
    # A JAX Chrome trace keeps the JAX files.
    jax = tmp_path / "jax" / "plugins" / "profile" / "r"
    jax.mkdir(parents=True)
    (jax / "h.trace.json").write_text(
        '{"traceEvents": [{"ph": "X", "name": "fusion.1", "pid": 1, "tid": 1, "ts": 1, '
        '"dur": 2, "args": {"hlo_op": "fusion.1"}}, {"ph": "M", "name": "process_name", '
        '"pid": 1, "args": {"name": "/device:GPU:0"}}]}')
    assert "call_tree.txt" not in ls(xprofs_build, tmp_path / "jax", "r")
    assert "xla_summary.csv" in ls(xprofs_build, tmp_path / "jax", "r")
    assert os.path.exists(jax / "h.trace.json")
