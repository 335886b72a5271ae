"""The batch-engine files of contrib/ (issue 42): the Slurm array script
runs each task's share and the combine step (here with Slurm's variables
set by the test, on this machine), and the Kubernetes Indexed Job is a
well-formed batch/v1 Job whose pods take their share from
JOB_COMPLETION_INDEX and write the cache on a shared volume.
"""
import json
import os
import re
import subprocess
import time

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
SBATCH = REPO / "contrib" / "slurm" / "precompute.sbatch"
JOB = REPO / "contrib" / "k8s" / "precompute-job.yaml"
COMBINE = REPO / "contrib" / "k8s" / "combine-job.yaml"


def load_yaml(path):
    try:
        import yaml
    except ImportError:
        return None
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    assert len(docs) == 1, path
    return docs[0]


def check_pod(spec, path):
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] in ("Never", "OnFailure"), path
    assert pod["securityContext"]["runAsUser"] > 0, path
    (c,) = pod["containers"]
    assert c["image"] and c["command"] == ["sh", "-c"], path
    env = {e["name"]: e["value"] for e in c.get("env", [])}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    assert set(mounts) == set(vols) == {"logs", "cache"}, path
    assert mounts["logs"]["readOnly"] is True
    assert vols["logs"]["persistentVolumeClaim"]["readOnly"] is True
    assert "claimName" in vols["cache"]["persistentVolumeClaim"]
    (arg,) = c["args"]
    assert arg.startswith("exec xprofs precompute " + mounts["logs"]["mountPath"] + " ")
    assert "--cache-dir " + mounts["cache"]["mountPath"] + "/" in arg
    return env, arg


def test_k8s_indexed_job_structure():
    job = load_yaml(JOB)
    if job is None:
        # No PyYAML: the lines that matter, by pattern.
        text = JOB.read_text()
        assert re.search(r"^kind: Job$", text, re.M)
        assert re.search(r"^  completionMode: Indexed$", text, re.M)
        n = re.search(r"^  completions: (\d+)$", text, re.M).group(1)
        assert re.search(r'value: "%s"' % n, text)
        assert '--task "$JOB_COMPLETION_INDEX" --tasks "$TASKS"' in text
        return
    assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert 1 <= spec["parallelism"] <= spec["completions"]
    env, arg = check_pod(spec, JOB)
    # The share: the pod's index of the job's completions.
    assert int(env["TASKS"]) == spec["completions"]
    assert '--task "$JOB_COMPLETION_INDEX" --tasks "$TASKS"' in arg
    assert '"$RUN"' in arg and env["RUN"]
    combine = load_yaml(COMBINE)
    assert combine["kind"] == "Job" and combine["spec"]["completions"] == 1
    cenv, carg = check_pod(combine["spec"], COMBINE)
    assert "--all-hosts" in carg and cenv["RUN"] == env["RUN"]
    # The two jobs share image, user and claims.
    p1, p2 = job["spec"]["template"]["spec"], combine["spec"]["template"]["spec"]
    assert p1["containers"][0]["image"] == p2["containers"][0]["image"]
    assert p1["securityContext"] == p2["securityContext"]
    assert p1["volumes"] == p2["volumes"]


def test_k8s_job_runs_as_written(xprofs_build, synth, tmp_path):
    """The pod's command line, run here with the variables Kubernetes sets."""
    job = load_yaml(JOB)
    if job is None:
        return test_k8s_indexed_job_structure()
    logdir = synth(tmp_path / "logs", "--run", "r1", "--hosts", 3, "--size-mb", 1)
    old = time.time() - 3600
    for p in (logdir / "plugins" / "profile" / "r1").iterdir():
        os.utime(p, (old, old))
    (arg,) = job["spec"]["template"]["spec"]["containers"][0]["args"]
    arg = arg.replace("exec xprofs", "exec " + str(xprofs_build / "xprofs"))
    arg = arg.replace("/logs", str(logdir)).replace("/cache/", str(tmp_path) + "/")
    arg += " --files overview_page.json"
    outs = []
    for i in range(3):
        env = dict(os.environ, JOB_COMPLETION_INDEX=str(i), TASKS="3", RUN="r1")
        r = subprocess.run(["sh", "-c", arg], env=env, capture_output=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert all(b"r1: 1 of 3 hosts: 1 files made" in o for o in outs), outs
    # the three hosts' files and their op_stats
    assert len(os.listdir(tmp_path / "xprofs" / "entries")) == 6


def test_slurm_script_shares_and_combine(xprofs_build, synth, tmp_path):
    """Each array task converts its share (the offset of --array=K-M
    included), the combine step the all-hosts files, all from the cache."""
    assert subprocess.run(["bash", "-n", str(SBATCH)]).returncode == 0
    text = SBATCH.read_text()
    assert "#SBATCH --job-name=" in text and "--dependency=afterok" in text
    logdir = synth(tmp_path / "logs", "--run", "r1", "--hosts", 4, "--size-mb", 1)
    old = time.time() - 3600
    for p in (logdir / "plugins" / "profile" / "r1").iterdir():
        os.utime(p, (old, old))
    cache = tmp_path / "cache"
    files = "overview_page.json,steps.csv"
    for task in (5, 6):  # --array=5-6
        env = dict(os.environ, XPROFS=str(xprofs_build / "xprofs"), XPROFS_FILES=files,
                   SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT="2",
                   SLURM_ARRAY_TASK_MIN="5")
        r = subprocess.run(["bash", str(SBATCH), str(logdir), "r1", str(cache)], env=env,
                           capture_output=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert b"r1: 2 of 4 hosts: 4 files made" in r.stdout, r.stdout
    env = dict(os.environ, XPROFS=str(xprofs_build / "xprofs"), XPROFS_FILES=files)
    r = subprocess.run(["bash", str(SBATCH), "--combine", str(logdir), "r1", str(cache)],
                       env=env, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert b"2 files made, 8 already cached" in r.stdout, r.stdout
    for f in files.split(","):
        r = subprocess.run([str(xprofs_build / "xprofs"), "--cache-dir", str(cache), "cat",
                            str(logdir), "r1/" + f, "r1/cache_stats.json"],
                           capture_output=True, timeout=300, check=True)
        ref = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), "r1/" + f],
                             capture_output=True, timeout=300, check=True).stdout
        cut = r.stdout.rindex(b'{"profiles_decoded"')
        assert r.stdout[:cut] == ref
        assert json.loads(r.stdout[cut:])["profiles_decoded"] == 0
    r = subprocess.run(["bash", str(SBATCH), str(logdir)], env=env, capture_output=True)
    assert r.returncode == 2 and b"usage:" in r.stderr
