"""The persistent cache (-o cache_dir=DIR, xprofs --cache-dir DIR, xprofs
precompute; src/store/): a file made once is served by a new process or a
new mount from DIR, byte for byte what is computed without the cache, with
no profile opened (cache_stats.json's profiles_decoded is 0). A changed
source or a corrupt entry is computed again; a directory others may write
is refused; cache_bytes bounds DIR; precompute's per-host shares fill what
the mount then serves without decoding.
"""
import json
import os
import pathlib
import re
import stat
import subprocess
import time

import pytest

FILES = [
    "overview_page.json",
    "framework_op_stats.json",
    "kernel_stats.csv",
    "steps.csv",
    "summary.json",
    "trace_viewer.json?start_time_ms=1&end_time_ms=3",
]


def make_run(synth, tmp_path, hosts=2):
    logdir = synth(tmp_path / "logs", "--run", "r1", "--hosts", hosts, "--size-mb", 1)
    # Written long ago: a file just written is "still being written" and
    # never kept (snapshot_is_fresh).
    old = time.time() - 3600
    for p in (logdir / "plugins" / "profile" / "r1").iterdir():
        os.utime(p, (old, old))
    return logdir


def hosts_of(logdir):
    return sorted(p.name[:-len(".xplane.pb")]
                  for p in (logdir / "plugins" / "profile" / "r1").glob("*.xplane.pb"))


def xprofs(build, *args, check=True):
    r = subprocess.run([str(build / "xprofs"), *map(str, args)], capture_output=True,
                       timeout=600)
    if check and r.returncode != 0:
        raise AssertionError(f"xprofs {args} failed ({r.returncode}): "
                             + r.stderr.decode(errors="replace"))
    return r


def stats_cli(build, cache, logdir, *paths):
    """Cat paths then cache_stats.json in one process: (bytes of each, stats)."""
    outs = [xprofs(build, "--cache-dir", cache, "cat", logdir, p).stdout for p in paths]
    return outs


def cat_with_stats(build, cache, logdir, path, run="r1"):
    """One new process reads path from the cache, then its own stats."""
    r = xprofs(build, "--cache-dir", cache, "cat", logdir, path, run + "/cache_stats.json")
    text = r.stdout
    cut = text.rindex(b'{"profiles_decoded"')
    return text[:cut], json.loads(text[cut:])


def test_cli_cache_serves_without_decoding(xprofs_build, synth, tmp_path):
    logdir = make_run(synth, tmp_path)
    cache = tmp_path / "cache"
    paths = ["r1/" + f for f in FILES] + ["r1/hosts/%s/overview_page.json" % hosts_of(logdir)[0]]
    for p in paths:
        ref = xprofs(xprofs_build, "cat", logdir, p).stdout
        first, s1 = cat_with_stats(xprofs_build, cache, logdir, p)
        assert first == ref, p
        # the file, and the hosts' op_stats where it needs them (made by an
        # earlier file's process, or read now)
        assert s1["cache"]["stored"] >= 1, (p, s1)
        again, s2 = cat_with_stats(xprofs_build, cache, logdir, p)
        assert again == ref, p
        assert s2["profiles_decoded"] == 0, (p, s2)
        assert s2["cache"] == {"hits": 1, "misses": 0, "stored": 0, "dropped": 0,
                               "evicted": 0}, (p, s2)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert len(os.listdir(cache / "entries")) >= len(paths)
    assert os.listdir(cache / "tmp") == []


def read_stats(mnt):
    return json.loads((mnt / "r1" / "cache_stats.json").read_bytes())


def test_mount_remount_from_cache(xprofs_build, synth, tmp_path, mount):
    logdir = make_run(synth, tmp_path)
    cache = tmp_path / "cache"
    ref = {f: xprofs(xprofs_build, "cat", logdir, "r1/" + f).stdout for f in FILES}
    mnt = mount(logdir, "cache_dir=%s" % cache)
    for f in FILES:
        assert (mnt / "r1" / f).read_bytes() == ref[f], f
    s = read_stats(mnt)
    assert s["profiles_decoded"] > 0 and s["cache"]["stored"] >= len(FILES), s
    # A second mount: a new process, the same bytes, nothing decoded.
    mnt2 = mount(logdir, "cache_dir=%s" % cache)
    for f in FILES:
        assert (mnt2 / "r1" / f).read_bytes() == ref[f], f
    s = read_stats(mnt2)
    assert s["profiles_decoded"] == 0, s
    assert s["cache"]["hits"] == len(FILES) and s["cache"]["stored"] == 0, s


def test_source_change_and_corrupt_entry(xprofs_build, synth, tmp_path):
    logdir = make_run(synth, tmp_path)
    cache = tmp_path / "cache"
    path = "r1/overview_page.json"
    ref = xprofs(xprofs_build, "cat", logdir, path).stdout
    cat_with_stats(xprofs_build, cache, logdir, path)
    # Every entry corrupt (one payload byte flipped): dropped, made again.
    for e in (cache / "entries").iterdir():
        b = bytearray(e.read_bytes())
        b[-2] ^= 0x01
        e.write_bytes(bytes(b))
    out, s = cat_with_stats(xprofs_build, cache, logdir, path)
    assert out == ref
    assert s["cache"]["dropped"] >= 1 and s["cache"]["stored"] >= 1, s
    assert s["profiles_decoded"] > 0, s
    out, s = cat_with_stats(xprofs_build, cache, logdir, path)
    assert out == ref and s["profiles_decoded"] == 0, s
    # Cut short: dropped too.
    for e in (cache / "entries").iterdir():
        os.truncate(e, e.stat().st_size - 1)
    out, s = cat_with_stats(xprofs_build, cache, logdir, path)
    assert out == ref and s["cache"]["dropped"] >= 1, s
    # A source changed (another mtime): a miss, computed from the new file.
    host = logdir / "plugins" / "profile" / "r1" / (hosts_of(logdir)[0] + ".xplane.pb")
    old = time.time() - 1800
    os.utime(host, (old, old))
    out, s = cat_with_stats(xprofs_build, cache, logdir, path)
    assert out == ref
    assert s["profiles_decoded"] > 0 and s["cache"]["hits"] == 0, s


def test_directory_others_may_write_is_refused(xprofs_build, synth, tmp_path):
    logdir = make_run(synth, tmp_path, hosts=1)
    bad = tmp_path / "shared"
    bad.mkdir()
    os.chmod(bad, 0o777)
    r = xprofs(xprofs_build, "--cache-dir", bad, "cat", logdir, "r1/summary.json", check=False)
    assert r.returncode == 3
    assert b"others may write it" in r.stderr
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run([str(xprofs_build / "xprofs-mount"), str(logdir), str(mnt), "-f",
                        "-o", "cache_dir=%s" % bad], capture_output=True, timeout=60)
    assert r.returncode != 0 and b"others may write it" in r.stderr
    assert not os.path.ismount(mnt)
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        r = xprofs(xprofs_build, "--cache-dir", theirs, "cat", logdir, "r1/summary.json",
                   check=False)
        assert r.returncode == 3 and b"owned by another user" in r.stderr


def test_cache_bytes_bound(xprofs_build, synth, tmp_path, mount):
    logdir = make_run(synth, tmp_path)
    cache = tmp_path / "cache"
    sizes = {f: len(xprofs(xprofs_build, "cat", logdir, "r1/" + f).stdout) for f in FILES[:4]}
    # room for the biggest file and some more, not for all of them
    bound = max(sizes.values()) + 4096 + min(sizes.values())
    assert bound < sum(sizes.values())
    mnt = mount(logdir, "cache_dir=%s,cache_bytes=%d" % (cache, bound))
    for f in FILES[:4]:
        (mnt / "r1" / f).read_bytes()
        total = sum(e.stat().st_size for e in (cache / "entries").iterdir())
        assert total <= bound, (f, total, bound)
    s = read_stats(mnt)
    assert s["cache"]["evicted"] > 0 and s["cache"]["stored"] >= 4, s
    # the last one read is kept
    again = mount(logdir, "cache_dir=%s,cache_bytes=%d" % (cache, bound))
    (again / "r1" / FILES[3]).read_bytes()
    assert read_stats(again)["cache"]["hits"] == 1


def test_precompute_shares_then_serve(xprofs_build, synth, tmp_path):
    logdir = make_run(synth, tmp_path, hosts=4)
    cache = tmp_path / "cache"
    hosts = hosts_of(logdir)
    files = "overview_page.json,framework_op_stats.json,steps.csv"
    for task in range(2):
        r = xprofs(xprofs_build, "precompute", logdir, "r1", "--task", task, "--tasks", 2,
                   "--files", files, "--cache-dir", cache)
        assert b"r1: 2 of 4 hosts: 6 files made" in r.stdout, r.stdout
    # Every host's files come from the cache.
    for h in hosts:
        p = "r1/hosts/%s/framework_op_stats.json" % h
        out, s = cat_with_stats(xprofs_build, cache, logdir, p)
        assert out == xprofs(xprofs_build, "cat", logdir, p).stdout
        assert s["profiles_decoded"] == 0, (h, s)
    # One host alone.
    r = xprofs(xprofs_build, "precompute", logdir, "r1", "--host", hosts[0], "--files", files,
               "--cache-dir", cache)
    assert b"r1: 1 of 4 hosts: 0 files made, 3 already cached" in r.stdout, r.stdout
    # The combine step makes the all-hosts files.
    r = xprofs(xprofs_build, "precompute", logdir, "r1", "--all-hosts", "--files", files,
               "--cache-dir", cache)
    assert b"3 files made, 12 already cached" in r.stdout, r.stdout
    for f in files.split(","):
        out, s = cat_with_stats(xprofs_build, cache, logdir, "r1/" + f)
        assert out == xprofs(xprofs_build, "cat", logdir, "r1/" + f).stdout
        assert s["profiles_decoded"] == 0, (f, s)
    # Usage errors.
    r = xprofs(xprofs_build, "precompute", logdir, "r1", "--task", 2, "--tasks", 2,
               "--cache-dir", cache, check=False)
    assert r.returncode == 2
    r = xprofs(xprofs_build, "precompute", logdir, "r1", check=False)
    assert r.returncode == 2 and b"--cache-dir DIR is required" in r.stderr
    r = xprofs(xprofs_build, "precompute", logdir, "nope", "--cache-dir", cache, check=False)
    assert r.returncode == 1
    r = xprofs(xprofs_build, "precompute", logdir, "r1", "--host", "nope", "--cache-dir",
               cache, check=False)
    assert r.returncode == 1


OP_STATS_FILES = ["framework_op_stats.json", "framework_op_stats.csv", "kernel_stats.json",
                  "kernel_stats.csv", "roofline_model.json", "roofline_model.csv",
                  "pod_viewer.json", "overview_page.json", "input_pipeline_analyzer.json",
                  "hlo_stats.json", "op_profile.json", "smart_suggestion.json", "report.json"]
# Those that need nothing but the hosts' op_stats: from the cache they read no profile
# (overview_page and input_pipeline_analyzer also ask for inference stats, which read it).
OP_STATS_ONLY = {"framework_op_stats.json", "framework_op_stats.csv", "kernel_stats.json",
                 "kernel_stats.csv", "roofline_model.json", "roofline_model.csv",
                 "pod_viewer.json"}


def runs_of(build, logdir, marker="framework_op_stats.json"):
    """The runs of logdir with file marker (xprofs ls, down the tree)."""
    runs, todo = [], [""]
    while todo:
        d = todo.pop()
        names = subprocess.run([str(build / "xprofs"), "ls", str(logdir), d],
                               capture_output=True, text=True, check=True).stdout.split()
        if marker in names:
            runs.append(d)
        elif d.count("/") < 3:
            todo += [d + n for n in names if n.endswith("/") and n not in ("hosts/", "raw/")]
    return sorted(r.rstrip("/") for r in runs)


def check_op_stats_from_cache(build, logdir, run, cache, no_decode=OP_STATS_ONLY):
    """The hosts' op_stats go to the cache with one file each; then every
    op_stats file of the run and of each host, made by new processes from
    those entries, equals the file made without the cache."""
    r = xprofs(build, "precompute", logdir, run, "--files", "framework_op_stats.json",
               "--cache-dir", cache)
    assert b" 0 failed" in r.stdout, r.stdout
    hosts = xprofs(build, "ls", logdir, run + "/hosts").stdout.decode().split()
    checked = 0
    for prefix in [run + "/"] + [f"{run}/hosts/{h}/" for h in hosts]:
        for f in OP_STATS_FILES:
            ref = xprofs(build, "cat", logdir, prefix + f, check=False)
            if ref.returncode != 0:
                continue  # not a file of this kind of run
            got, s = cat_with_stats(build, cache, logdir, prefix + f, run)
            assert got == ref.stdout, prefix + f
            if f in no_decode:
                assert s["profiles_decoded"] == 0, (prefix + f, s)
            checked += 1
    return checked


def test_op_stats_intermediate_generated(xprofs_build, synth, tmp_path):
    logdir = make_run(synth, tmp_path, hosts=4)
    assert check_op_stats_from_cache(xprofs_build, logdir, "r1", tmp_path / "c") >= 50


def test_op_stats_intermediate_tpu(xprofs_build, synth, tmp_path):
    """TPU hosts with steps: the per-step op sums (roofline_model's Average and
    per-step records) come back from the cache, and combine as fresh ones."""
    logdir = synth(tmp_path / "logs", "--run", "r1", "--hosts", 2, "--scenario", "tpu",
                   "--steps", 12)
    old = time.time() - 3600
    for p in (logdir / "plugins" / "profile" / "r1").iterdir():
        os.utime(p, (old, old))
    roof = json.loads(xprofs(xprofs_build, "cat", logdir, "r1/roofline_model.json").stdout)
    steps = [r["c"][0]["v"] for r in roof[0]["rows"] if r["c"][3]["v"] == "Program"]
    assert steps.count("Average") == 2 and steps.count("11") == 2
    assert check_op_stats_from_cache(xprofs_build, logdir, "r1", tmp_path / "c") >= 20


def test_op_stats_intermediate_corpus(xprofs_build, corpus, tmp_path):
    checked = 0
    runs = runs_of(xprofs_build, corpus)
    assert len(runs) >= 3, runs
    for i, run in enumerate(runs):
        # GPU runs' roofline and pod viewer read device facts from the profile
        checked += check_op_stats_from_cache(
            xprofs_build, corpus, run, tmp_path / str(i),
            {"framework_op_stats.json", "framework_op_stats.csv", "kernel_stats.json",
             "kernel_stats.csv"})
    assert checked >= 40


GPU_FILES = ["gpu_timeline.csv", "gpu_timeline.json", "gpu_events_averages.csv",
             "gpu_devices.csv"]


def check_gpu_timeline_from_cache(build, logdir, run, cache):
    """The hosts' GPU timelines go to the cache with one file each; the run's
    GPU files, made by new processes from them, equal those made without
    the cache and read no profile."""
    r = xprofs(build, "precompute", logdir, run, "--files", "gpu_timeline.csv", "--cache-dir",
               cache)
    assert b" 0 failed" in r.stdout, r.stdout
    for f in GPU_FILES:
        ref = xprofs(build, "cat", logdir, run + "/" + f).stdout
        # the file's own entry out of the way: made again from the timelines
        for e in (cache / "entries").iterdir():
            if b"\nfile " + run.encode() + b"||" + f.encode() + b"?" in e.read_bytes()[:4096]:
                e.unlink()
        got, s = cat_with_stats(build, cache, logdir, run + "/" + f, run)
        assert got == ref, (run, f)
        assert s["profiles_decoded"] == 0, (run, f, s)
    return len(GPU_FILES)


def test_gpu_timeline_intermediate(xprofs_build, synth, tmp_path, corpus):
    logdir = make_run(synth, tmp_path, hosts=3)
    checked = check_gpu_timeline_from_cache(xprofs_build, logdir, "r1", tmp_path / "c")
    runs = runs_of(xprofs_build, corpus, "gpu_timeline.csv")
    assert any("pytorch" in r for r in runs) and len(runs) >= 4, runs
    for i, run in enumerate(runs):
        checked += check_gpu_timeline_from_cache(xprofs_build, corpus, run, tmp_path / str(i))
    assert checked >= 20


# All-hosts files that still read the hosts' profiles when the hosts' entries are in
# the cache: their per-host inputs are not kept there (the trace viewer's index, the
# kernel launchers' tables, summary.json's and tools.json's facts, module_list's
# metadata names).
STILL_DECODES = {"trace_viewer.json",
                 "trace_viewer.json?start_time_ms=1&end_time_ms=3"}
def check_all_hosts_from_entries(build, logdir, run, cache):
    """Each host's files go to the cache (2 tasks, no combine step); then
    every all-hosts file, made by a new process from the hosts' entries,
    equals the file made without the cache. Returns the files that read a
    profile, and how many were compared."""
    for task in range(2):
        r = xprofs(build, "precompute", logdir, run, "--task", task, "--tasks", 2,
                   "--cache-dir", cache, check=False)
        assert b"hosts: " in r.stdout and r.returncode in (0, 3), r
    names = [n for n in xprofs(build, "ls", logdir, run).stdout.decode().split()
             if not n.endswith("/") and n not in ("errors.txt", "cache_stats.json")]
    decoded, compared = set(), 0
    for name in names + ["trace_viewer.json?start_time_ms=1&end_time_ms=3"]:
        ref = xprofs(build, "cat", logdir, run + "/" + name, check=False)
        if ref.returncode == 2:
            continue  # needs an option (module_name=...)
        r = xprofs(build, "--cache-dir", cache, "cat", logdir, run + "/" + name,
                   run + "/cache_stats.json", check=False)
        text = r.stdout
        cut = text.rindex(b'{"profiles_decoded"')
        assert text[:cut] == ref.stdout, (run, name)
        if json.loads(text[cut:])["profiles_decoded"] > 0:
            decoded.add(name)
        compared += 1
    return decoded, compared


def test_all_hosts_files_combine_from_entries(xprofs_build, synth, tmp_path):
    logdir = make_run(synth, tmp_path, hosts=4)
    cache = tmp_path / "cache"
    decoded, compared = check_all_hosts_from_entries(xprofs_build, logdir, "r1", cache)
    assert compared >= 30
    assert decoded == STILL_DECODES, decoded
    # The combine step of the other files decodes nothing.
    files = [n for n in xprofs(xprofs_build, "ls", logdir, "r1").stdout.decode().split()
             if not n.endswith("/") and n not in STILL_DECODES]
    c2 = tmp_path / "c2"
    for task in range(2):
        xprofs(xprofs_build, "precompute", logdir, "r1", "--task", task, "--tasks", 2,
               "--cache-dir", c2)
    r = xprofs(xprofs_build, "precompute", logdir, "r1", "--all-hosts", "--files",
               ",".join(files), "--cache-dir", c2)
    assert b" 0 failed, 0 profiles decoded," in r.stdout, r.stdout


def test_all_hosts_files_combine_from_entries_other_kinds(xprofs_build, synth, corpus,
                                                          tmp_path):
    # a TF run that is not training (inference stats), TPU hosts (no GPU events)
    tpu = synth(tmp_path / "tpu", "--run", "r1", "--scenario", "tpu", "--hosts", 2)
    old = time.time() - 3600
    for p in (tpu / "plugins" / "profile" / "r1").iterdir():
        os.utime(p, (old, old))
    for logdir, run, i in ((corpus, "tf_gpu_multiworker/s1", 0), (tpu, "r1", 1)):
        decoded, compared = check_all_hosts_from_entries(xprofs_build, logdir, run,
                                                         tmp_path / ("c%d" % i))
        assert compared >= 25, (run, compared)
        assert decoded == STILL_DECODES, (run, decoded)


def test_one_host_run_keeps_one_entry_a_file(xprofs_build, synth, tmp_path):
    logdir = make_run(synth, tmp_path, hosts=1)
    cache = tmp_path / "cache"
    r = xprofs(xprofs_build, "precompute", logdir, "r1", "--cache-dir", cache)
    made, cached = map(int, re.search(rb"(\d+) files made, (\d+) already cached",
                                      r.stdout).groups())
    assert cached >= 25, r.stdout  # the run's file is the host's, already made
    files = {}
    for e in (cache / "entries").iterdir():
        b = e.read_bytes()
        klen = int.from_bytes(b[28:32], "little")
        what = [k for k in b[40:40 + klen].split(b"\n") if k.startswith(b"file ")]
        if what:
            files[what[0]] = b[(40 + klen + 7) // 8 * 8:]
    assert len(files) >= 25 and all(k.startswith(b"file r1||") for k in files), list(files)
    assert len(set(files.values())) == len(files), "two entries of the same bytes"
    # both paths are served from that one entry, without a decode
    host = hosts_of(logdir)[0]
    for p in ("r1/framework_op_stats.json", "r1/hosts/%s/framework_op_stats.json" % host):
        out, s = cat_with_stats(xprofs_build, cache, logdir, p)
        assert out == xprofs(xprofs_build, "cat", logdir, p).stdout, p
        assert s["profiles_decoded"] == 0 and s["cache"]["hits"] == 1, (p, s)


def test_tools_json_from_host_facts(xprofs_build, synth, tmp_path):
    # A TPU run with MegaScale lines and counter samples lists megascale_stats
    # and perf_counters; once its hosts were converted, tools.json (and the
    # empty answers of runs without them) come from the hosts' facts in the
    # cache, without a profile.
    dcn = synth(tmp_path / "dcn", "--run", "r1", "--scenario", "tpu_dcn", "--counters", "v6e",
                "--hosts", 2)
    gpu = make_run(synth, tmp_path / "g", hosts=2)
    old = time.time() - 3600
    for p in (dcn / "plugins" / "profile" / "r1").iterdir():
        os.utime(p, (old, old))
    for logdir, listed in ((dcn, True), (gpu, False)):
        cache = tmp_path / ("c-" + logdir.parent.name)
        ref = xprofs(xprofs_build, "cat", logdir, "r1/tools.json").stdout
        tags = json.loads(ref)
        assert ("megascale_stats" in tags) == listed, tags
        assert ("perf_counters" in tags) == listed, tags
        for host in hosts_of(logdir):
            r = xprofs(xprofs_build, "precompute", logdir, "r1", "--host", host,
                       "--cache-dir", cache, check=False)
            assert r.returncode in (0, 3), r  # 3: the files a TPU run has no events for
        files = ["tools.json"] if listed else ["tools.json", "megascale_stats.json",
                                                "perf_counters.json"]
        for name in files:
            r = xprofs(xprofs_build, "--cache-dir", cache, "cat", logdir, "r1/" + name,
                       "r1/cache_stats.json")
            cut = r.stdout.rindex(b'{"profiles_decoded"')
            assert r.stdout[:cut] == xprofs(xprofs_build, "cat", logdir, "r1/" + name).stdout
            assert json.loads(r.stdout[cut:])["profiles_decoded"] == 0, (logdir, name)
