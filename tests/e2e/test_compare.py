"""compare.md, compare.json and compare_*.csv (issue 44): one run against
?base=RUN. Pairs of generated profiles that differ by one injected change
(xprofs-synth --scenario compare) must name exactly that change, with the
numbers this test computes from the generator's --plan (step and region
times, kernel durations) and its own Mann-Whitney U test; two seeds of the
same workload must show no significant difference; every pair of corpus
runs answers or refuses with a one-line reason."""
import csv
import errno
import io
import itertools
import json
import math
import os
import subprocess

import pytest

STEPS = 12


def mann_whitney_p(x, y):
    """Two-sided p of the U test, normal approximation with tie and
    continuity corrections (scipy's method="asymptotic")."""
    pooled = sorted([(v, 0) for v in x] + [(v, 1) for v in y])
    ranks, i, ties = [], 0, 0.0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j][0] == pooled[i][0]:
            j += 1
        ranks += [(i + 1 + j) / 2] * (j - i)
        ties += (j - i) ** 3 - (j - i)
        i = j
    n1, n2, n = len(x), len(y), len(x) + len(y)
    r1 = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    return min(1.0, math.erfc((u - n1 * n2 / 2 - 0.5) / sigma / math.sqrt(2)))


def median(v):
    s = sorted(v)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def mean(v):
    return sum(v) / len(v)


class Plan:
    """The generator's plan of one run (xprofs-synth --plan)."""

    def __init__(self, path):
        self.d = json.load(open(path))
        self.steps = self.d["steps"]

    def step_us(self):
        return [s["end_us"] - s["start_us"] for s in self.steps]

    def region_us(self, name):
        return [sum(r["end_us"] - r["start_us"] for r in s["regions"] if r["name"] == name)
                for s in self.steps]

    def kernel_us(self, hlo_op):
        """Per step, the kernel time of an HLO op (0 where it did not run)."""
        return [sum(k["dur_us"] for k in s["kernels"] if k["hlo_op"] == hlo_op)
                for s in self.steps]

    def op(self, hlo_op):
        return next(o for o in self.d["ops"] if o["hlo_op"] == hlo_op)


@pytest.fixture(scope="module")
def runs(xprofs_build, tmp_path_factory):
    """LOGDIR with the base run and one run per injected change."""
    logdir = tmp_path_factory.mktemp("compare")
    variants = {
        "base": ["--seed", "1"],
        "seed2": ["--seed", "2"],
        "region": ["--seed", "1", "--slow-region", "input_wait:2000"],
        "dropped": ["--seed", "1", "--drop-op", "loop_multiply_fusion"],
        "slow": ["--seed", "1", "--slow-op", "custom-call.1:3"],
        "cold": ["--seed", "1", "--cold-first-step", "5000"],
    }
    plans = {}
    for name, args in variants.items():
        plan = logdir / f"{name}.plan.json"
        subprocess.run([str(xprofs_build / "xprofs-synth"), "--out", str(logdir), "--run", name,
                        "--scenario", "compare", "--steps", str(STEPS), "--plan", str(plan),
                        *args], check=True, stdout=subprocess.DEVNULL, timeout=120)
        plans[name] = Plan(plan)
    return logdir, plans


def cat_json(xcat, logdir, run, base):
    return json.loads(xcat(logdir, f"{run}/compare.json?base={base}"))


def cat_csv(xcat, logdir, run, file, base):
    return list(csv.DictReader(io.StringIO(xcat(logdir, f"{run}/{file}?base={base}").decode())))


def close(a, b, tol=1e-6):
    return abs(float(a) - float(b)) <= tol * max(1.0, abs(float(b)))


def test_region_made_longer(runs, xcat):
    logdir, plans = runs
    base, run = plans["base"], plans["region"]
    d = cat_json(xcat, logdir, "region", "base")
    st = d["step_time_us"]
    assert st["base"]["count"] == STEPS and st["run"]["count"] == STEPS
    assert close(st["base"]["median"], median(base.step_us()))
    assert close(st["run"]["median"], median(run.step_us()))
    assert close(st["median_delta"], median(run.step_us()) - median(base.step_us()))
    p = mann_whitney_p(run.step_us(), base.step_us())
    assert d["test"]["tested"] and d["test"]["significant"] and p < 0.05
    assert close(d["test"]["p_value"], p, 1e-9)
    most = d["region_changed_most"]
    assert most["region"] == "input_wait"
    delta = mean(run.region_us("input_wait")) - mean(base.region_us("input_wait"))
    assert close(delta, 2000)
    assert close(most["self_per_step_delta_us"], delta)
    assert close(most["share_of_step_change"], delta / (mean(run.step_us()) - mean(base.step_us())))
    assert close(most["incl_median_us"] - most["base_incl_median_us"], 2000)
    # nothing else changed: no op or kernel time, none added or removed
    for row in d["ops"] + d["kernels"]:
        assert row["status"] == "both" and abs(row["delta_us_per_step"]) < 1e-9, row
    md = xcat(logdir, "region/compare.md?base=base").decode()
    assert "Changed most: `input_wait`" in md
    assert "significant (Mann-Whitney U, two-sided" in md


def test_kernel_removed(runs, xcat):
    logdir, plans = runs
    base, run = plans["base"], plans["dropped"]
    op = base.op("loop_multiply_fusion")
    kernels = cat_csv(xcat, logdir, "dropped", "compare_kernels.csv", "base")
    removed = [k for k in kernels if k["status"] != "both"]
    assert [(k["kernel"], k["status"]) for k in removed] == [(op["kernel"], "removed")]
    assert close(removed[0]["base_us_per_step"], mean(base.kernel_us("loop_multiply_fusion")))
    assert float(removed[0]["us_per_step"]) == 0
    assert close(removed[0]["share_of_change"], 1)
    for k in kernels:
        if k["status"] == "both":
            assert float(k["delta_us_per_step"]) == 0, k
    ops = cat_csv(xcat, logdir, "dropped", "compare_ops.csv", "base")
    gone = sorted((o["kind"], o["name"]) for o in ops if o["status"] != "both")
    assert gone == [("framework_op", op["framework_op"]), ("hlo_op", "loop_multiply_fusion")]
    assert all(o["status"] in ("both", "removed") for o in ops)
    d = cat_json(xcat, logdir, "dropped", "base")
    assert close(d["step_time_us"]["mean_delta"], mean(run.step_us()) - mean(base.step_us()))
    assert d["region_changed_most"]["region"] == "model_and_wait"


def test_op_made_slower(runs, xcat):
    logdir, plans = runs
    base, run = plans["base"], plans["slow"]
    ops = cat_csv(xcat, logdir, "slow", "compare_ops.csv", "base")
    hlo = [o for o in ops if o["kind"] == "hlo_op"]
    assert hlo[0]["name"] == "custom-call.1"  # largest change first
    b, r = mean(base.kernel_us("custom-call.1")), mean(run.kernel_us("custom-call.1"))
    assert close(r, 3 * b)
    assert close(hlo[0]["base_us_per_step"], b) and close(hlo[0]["us_per_step"], r)
    assert close(hlo[0]["delta_us_per_step"], r - b)
    assert close(hlo[0]["ratio"], 3)
    assert close(hlo[0]["share_of_change"], 1)
    for o in ops:
        assert o["status"] == "both", o
        if o["name"] not in ("custom-call.1", base.op("custom-call.1")["framework_op"]):
            assert float(o["delta_us_per_step"]) == 0, o
    gpus = cat_csv(xcat, logdir, "slow", "compare_gpu_timeline.csv", "base")
    assert len(gpus) == 1 and gpus[0]["status"] == "both"
    busy_b = sum(k["dur_us"] for s in base.steps for k in s["kernels"])
    busy_r = sum(k["dur_us"] for s in run.steps for k in s["kernels"])
    assert close(gpus[0]["base_busy_us"], busy_b) and close(gpus[0]["busy_us"], busy_r)
    assert close(gpus[0]["busy_delta_us"], busy_r - busy_b)
    md = xcat(logdir, "slow/compare.md?base=base").decode()
    assert "| hlo_op | custom-call.1 |" in md


def test_same_workload_other_seed(runs, xcat):
    logdir, plans = runs
    d = cat_json(xcat, logdir, "seed2", "base")
    p = mann_whitney_p(plans["seed2"].step_us(), plans["base"].step_us())
    assert p >= 0.05
    assert close(d["test"]["p_value"], p, 1e-9)
    assert d["test"]["significant"] is False
    assert d["verdict"].startswith("No significant difference in step time")
    assert d["warnings"] == []
    md = xcat(logdir, "seed2/compare.md?base=base").decode()
    assert "No significant difference in step time" in md


def test_cold_run_against_warm(runs, xcat):
    """A first step 5 ms longer (a warm-up) in one run only: the files warn
    that one run is cold, with the ratios the plan gives."""
    logdir, plans = runs

    def ratio(name):
        v = plans[name].step_us()
        return v[0] / median(v[1:])
    assert ratio("cold") >= 3 > ratio("base")
    d = cat_json(xcat, logdir, "cold", "base")
    want = (f"cold looks cold and base warm: the first step of cold took {ratio('cold'):.1f} "
            f"times the median of its others (compilation or warm-up), of base "
            f"{ratio('base'):.1f} times")
    assert any(w.startswith(want) for w in d["warnings"]), d["warnings"]
    assert any(w.startswith("cold looks cold") for w in
               cat_json(xcat, logdir, "base", "cold")["warnings"])
    assert not any("looks cold" in w for w in cat_json(xcat, logdir, "slow", "base")["warnings"])


def test_cli_compare(runs, xprofs_build, xcat):
    logdir, _ = runs
    r = subprocess.run([str(xprofs_build / "xprofs"), "compare", str(logdir), "base", "slow"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == xcat(logdir, "slow/compare.md?base=base")
    r = subprocess.run([str(xprofs_build / "xprofs"), "compare", str(logdir), "nope", "slow"],
                       capture_output=True, timeout=120)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().count("\n") == 1 and "base=nope" in r.stderr.decode()


def test_mount_bad_base_and_lookup_only(runs, mount):
    logdir, _ = runs
    mnt = mount(logdir)
    names = os.listdir(mnt / "slow")
    assert "report.md" in names and not any(n.startswith("compare") for n in names)
    assert (mnt / "slow" / "compare.md?base=base").read_text().startswith(
        "# Run slow against base base")
    for query in ("base=nope", "base=slow", "", "base=base&x=1"):
        with pytest.raises(OSError) as e:
            (mnt / "slow" / f"compare.json?{query}").read_bytes()
        assert e.value.errno == errno.EINVAL, query
    errors = (mnt / "slow" / "errors.txt").read_text()
    assert "compare.json?base=nope: base=nope: no run of that name" in errors
    assert "compare.json?base=slow: base=slow is this run" in errors


def test_mount_nested_run_names(corpus, mount):
    mnt = mount(corpus)
    md = (mnt / "pytorch" / "b200_eager" / "compare.md?base=pytorch%2Fh100_bert_small").read_text()
    assert md.startswith("# Run pytorch/b200_eager against base pytorch/h100_bert_small")


def corpus_runs(corpus):
    runs = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        rel = os.path.relpath(dirpath, corpus)
        parts = rel.split(os.sep)
        if len(parts) >= 3 and parts[-3:-1] == ["plugins", "profile"]:
            runs.append("/".join(parts[:-3] + parts[-1:]))
        elif any(f.endswith(".pt.trace.json.gz") for f in filenames):
            runs.append(rel.replace(os.sep, "/"))
    return sorted(runs)


def test_every_corpus_pair(corpus, xprofs_build):
    runs = corpus_runs(corpus)
    assert len(runs) >= 2
    for a, b in itertools.permutations(runs, 2):
        r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(corpus),
                            f"{b}/compare.json?base={a}"], capture_output=True, timeout=300)
        if r.returncode == 0:
            d = json.loads(r.stdout)
            assert d["run"] == b and d["base"] == a
            assert d["step_time_us"]["base"]["count"] >= 0
            if not d["test"]["tested"]:
                assert any("too few steps" in w for w in d["warnings"]), (a, b)
        else:
            assert r.returncode == 2, (a, b, r.stderr)
            assert r.stderr.decode().count("\n") == 1, (a, b, r.stderr)
