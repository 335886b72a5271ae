"""End-to-end tests of the core: the mount's tree over the corpus and over
generated profiles, byte-identical raw files, read-only behaviour, escapes,
corrupt input, laziness, parallel readers, invalidation, and `xprofs cat`
matching the mount byte for byte."""
import concurrent.futures
import errno
import json
import os
import pathlib
import shutil
import subprocess
import time

import pytest

import xplane_py

JAX_RUN = "jax_conv_rocm/2025_01_01_00_00_00"
JAX_HOST = "chi-mi300x-013.ord.vultr.cpe.ice.amd.com"
TF_RUN = "tf_gpu_multiworker/s1"


def copy_run(src_logdir, run_rel, dst_logdir):
    """Copy one corpus run (plugins/profile/<run>) into a writable LOGDIR."""
    tb, run = run_rel.rsplit("/", 1)
    src = src_logdir / tb / "plugins" / "profile" / run
    dst = dst_logdir / tb / "plugins" / "profile" / run
    shutil.copytree(src, dst)
    for p in dst.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    return dst


def test_runs_and_hosts(corpus, mount):
    mnt = mount(corpus)
    top = sorted(os.listdir(mnt))
    assert "README.txt" in top
    assert {"jax_conv_rocm", "jax08_conv_rocm", "tf_gpu_multiworker", "pytorch"} <= set(top)
    assert os.listdir(mnt / "jax_conv_rocm") == ["2025_01_01_00_00_00"]
    hosts = json.loads((mnt / JAX_RUN / "hosts.json").read_text())
    assert hosts == [{"hostname": JAX_HOST}]
    tf_hosts = json.loads((mnt / TF_RUN / "hosts.json").read_text())
    assert [h["hostname"] for h in tf_hosts] == ["34.83.195.179_6003", "34.83.195.180_6003"]
    assert sorted(os.listdir(mnt / TF_RUN / "hosts")) == ["34.83.195.179_6003",
                                                          "34.83.195.180_6003"]
    raw = os.listdir(mnt / JAX_RUN / "raw")
    assert len([f for f in raw if f.endswith(".hlo_proto.pb")]) == 8
    modules = json.loads((mnt / JAX_RUN / "module_list.json").read_text())
    assert len(modules) == 8 and "jit_forward_3d_conv(15)" in modules
    # PyTorch trace directories are runs named by their path.
    assert "h100_bert_small" in os.listdir(mnt / "pytorch")


@pytest.mark.parametrize("run", [JAX_RUN, TF_RUN, "jax08_conv_rocm/s1", "jax08_gemm_rocm/s1"])
def test_summary_counts_match_protobuf(corpus, xcat, run):
    summary = json.loads(xcat(corpus, f"{run}/summary.json"))
    tb, r = run.rsplit("/", 1)
    rundir = corpus / tb / "plugins" / "profile" / r
    for host in summary["hosts"]:
        space = xplane_py.load(rundir / host["file"])
        assert [p["name"] for p in host["planes"]] == [p.name for p in space.planes]
        total = 0
        for ps, pp in zip(host["planes"], space.planes):
            assert ps["id"] == pp.id
            assert [l["event_count"] for l in ps["lines"]] == [len(l.events) for l in pp.lines]
            assert [l["name"] for l in ps["lines"]] == [l.name for l in pp.lines]
            for ls, lp in zip(ps["lines"], pp.lines):
                if lp.events:
                    first = min(lp.timestamp_ns * 1000 + e.offset_ps for e in lp.events)
                    last = max(lp.timestamp_ns * 1000 + e.offset_ps + e.duration_ps
                               for e in lp.events)
                    assert (ls["first_ps"], ls["last_ps"]) == (first, last)
            names = {m.value.name for m in pp.stat_metadata}
            assert set(ps["stat_names"]) == names
            total += sum(len(l.events) for l in pp.lines)
        assert host["event_count"] == total


def test_jax_summary_values(corpus, xcat):
    s = json.loads(xcat(corpus, f"{JAX_RUN}/summary.json"))
    planes = {p["name"]: p for p in s["hosts"][0]["planes"]}
    gpu7 = planes["/device:GPU:7"]
    kernels = [l for l in gpu7["lines"] if l["name"].startswith("Stream")]
    assert sum(l["event_count"] for l in kernels) >= 25
    gpu0 = planes["/device:GPU:0"]
    memcpy = [l for l in gpu0["lines"] if "Memcpy" in l["name"]]
    assert len(memcpy) == 4 and sum(l["event_count"] for l in memcpy) == 53


def test_raw_is_byte_identical(corpus, mount):
    mnt = mount(corpus)
    src = corpus / "jax_conv_rocm/plugins/profile/2025_01_01_00_00_00"
    for f in sorted(os.listdir(src)):
        r = subprocess.run(["cmp", str(src / f), str(mnt / JAX_RUN / "raw" / f)])
        assert r.returncode == 0, f
    st = os.stat(mnt / JAX_RUN / "raw" / f"{JAX_HOST}.xplane.pb")
    assert st.st_size == os.stat(src / f"{JAX_HOST}.xplane.pb").st_size


def test_read_only(corpus, mount):
    mnt = mount(corpus)
    for action in (lambda: open(mnt / "README.txt", "w"),
                   lambda: open(mnt / JAX_RUN / "new.txt", "w"),
                   lambda: os.mkdir(mnt / "newdir"),
                   lambda: os.unlink(mnt / JAX_RUN / "hosts.json"),
                   lambda: os.rename(mnt / JAX_RUN / "hosts.json", mnt / JAX_RUN / "x"),
                   lambda: os.symlink("/etc/passwd", mnt / "link")):
        with pytest.raises(OSError) as e:
            action()
        assert e.value.errno == errno.EROFS


def test_no_escape(tmp_path, mount, xcat):
    logdir = tmp_path / "logs"
    run = logdir / "plugins" / "profile" / "r1"
    run.mkdir(parents=True)
    secret = tmp_path / "secret.xplane.pb"
    secret.write_bytes(b"\x0a\x00")
    (run / "evil.xplane.pb").symlink_to(secret)               # file symlink leaving LOGDIR
    (logdir / "outside").symlink_to(tmp_path, target_is_directory=True)  # dir symlink
    (run / "good.xplane.pb").write_bytes(b"")
    mnt = mount(logdir)
    assert os.listdir(mnt / "r1" / "raw") == ["good.xplane.pb"]
    assert not (mnt / "outside").exists()
    # The mount shows the run and README.txt, nothing from outside LOGDIR.
    assert sorted(os.listdir(mnt)) == ["README.txt", "r1"]
    for bad in ["../secret.xplane.pb", "r1/../../secret.xplane.pb", "r1/raw/../../x",
                "/etc/passwd", "r1/raw/evil.xplane.pb"]:
        r = xcat(logdir, bad, check=False)
        assert r.returncode != 0, bad
        assert b"secret" not in r.stdout


def test_corrupt_source_gives_eio_and_errors_txt(corpus, tmp_path, mount):
    logdir = tmp_path / "logs"
    good = copy_run(corpus, JAX_RUN, logdir)
    bad_dir = logdir / "plugins" / "profile" / "broken"
    bad_dir.mkdir(parents=True)
    data = (good / f"{JAX_HOST}.xplane.pb").read_bytes()
    (bad_dir / "h.xplane.pb").write_bytes(data[: len(data) // 2])
    old = time.time() - 60
    os.utime(bad_dir / "h.xplane.pb", (old, old))
    mnt = mount(logdir)
    with pytest.raises(OSError) as e:
        (mnt / "broken" / "summary.json").read_bytes()
    assert e.value.errno == errno.EIO
    errors = (mnt / "broken" / "errors.txt").read_text()
    assert "h.xplane.pb" in errors and "corrupt" in errors
    # Everything else keeps working.
    assert json.loads((mnt / JAX_RUN / "summary.json").read_text())["hosts"][0]["host"] == JAX_HOST
    assert (mnt / "broken" / "hosts.json").read_text().startswith("[{")


def test_errors_txt_lines_carry_utc_time(corpus, tmp_path, mount):
    """Each errors.txt line starts with the UTC time it was noted,
    "YYYY-MM-DDTHH:MM:SS.mmmZ ", and the same reason is noted once."""
    import datetime
    logdir = tmp_path / "logs"
    bad_dir = logdir / "plugins" / "profile" / "broken"
    bad_dir.mkdir(parents=True)
    (bad_dir / "h.xplane.pb").write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    mnt = mount(logdir)
    before = datetime.datetime.now(datetime.timezone.utc)
    with pytest.raises(OSError):
        (mnt / "broken" / "summary.json").read_bytes()
    first = (mnt / "broken" / "errors.txt").read_text().splitlines()
    with pytest.raises(OSError):
        (mnt / "broken" / "summary.json").read_bytes()
    after = datetime.datetime.now(datetime.timezone.utc)
    lines = (mnt / "broken" / "errors.txt").read_text().splitlines()
    assert lines == first and lines, lines
    slack = datetime.timedelta(seconds=1)
    for line in lines:
        stamp, rest = line.split(" ", 1)
        assert len(stamp) == 24 and stamp.endswith("Z"), line
        when = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc)
        assert before - slack <= when <= after + slack, (before, when, after)
        assert "h.xplane.pb: corrupt profile" in rest, rest


def test_ls_does_not_convert(corpus, mount):
    mnt = mount(corpus)
    listing = subprocess.run(["ls", "-lR", str(mnt)], capture_output=True, text=True, check=True)
    assert "summary.json" in listing.stdout
    # Nothing was computed: produced files still report size 0.
    for run in (JAX_RUN, TF_RUN):
        assert os.stat(mnt / run / "summary.json").st_size == 0
    data = (mnt / JAX_RUN / "summary.json").read_bytes()
    assert os.stat(mnt / JAX_RUN / "summary.json").st_size == len(data) > 0


def test_ls_is_fast(corpus, mount):
    mnt = mount(corpus)
    t = time.time()
    subprocess.run(["ls", "-l", str(mnt / JAX_RUN)], capture_output=True, check=True)
    assert time.time() - t < 2.0


def test_parallel_readers_identical(corpus, mount):
    mnt = mount(corpus)
    path = mnt / TF_RUN / "summary.json"

    def read(_):
        return path.read_bytes()

    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        results = list(ex.map(read, range(16)))
    assert len(set(results)) == 1 and len(results[0]) > 1000
    json.loads(results[0])


def test_second_read_from_page_cache(corpus, mount):
    mnt = mount(corpus)
    p = mnt / JAX_RUN / "summary.json"
    a = p.read_bytes()
    b = p.read_bytes()
    assert a == b
    # mmap sees the whole content too.
    import mmap
    with open(p, "rb") as f:
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            assert m[:] == a


def test_invalidation_after_rewrite(corpus, tmp_path, mount):
    logdir = tmp_path / "logs"
    run = copy_run(corpus, JAX_RUN, logdir)
    mnt = mount(logdir)
    view = mnt / JAX_RUN
    before = json.loads((view / "summary.json").read_text())
    assert before["hosts"][0]["event_count"] > 0
    # Rewrite the source with a smaller profile (the TF one), same file name.
    tf = corpus / "tf_gpu_multiworker/plugins/profile/s1/34.83.195.179_6003.xplane.pb"
    shutil.copy(tf, run / f"{JAX_HOST}.xplane.pb")
    after = json.loads((view / "summary.json").read_text())
    assert after["hosts"][0]["event_count"] != before["hosts"][0]["event_count"]
    assert after["hosts"][0]["file_size"] == tf.stat().st_size
    # touch: same content, new mtime -> recomputed, same answer.
    os.utime(run / f"{JAX_HOST}.xplane.pb")
    again = json.loads((view / "summary.json").read_text())
    assert again == after


def test_open_file_reads_its_content_after_source_change(corpus, tmp_path, mount):
    """A file opened before its source changes reads what it held when it was
    opened: before reading past the size it knows, the kernel asks for the
    size again, which used to be the path's new, not yet made, content (0)."""
    logdir = tmp_path / "logs"
    run = copy_run(corpus, JAX_RUN, logdir)
    mnt = mount(logdir)
    path = mnt / JAX_RUN / "summary.json"
    source = run / f"{JAX_HOST}.xplane.pb"
    with open(path, "rb") as f:
        t = source.stat().st_mtime
        os.utime(source, (t + 10, t + 10))
        held = f.read()
    assert len(held) > 0
    fresh = path.read_bytes()
    assert json.loads(held)["hosts"][0]["event_count"] == \
        json.loads(fresh)["hosts"][0]["event_count"] > 0


def test_new_run_appears_without_remount(corpus, tmp_path, mount):
    logdir = tmp_path / "logs"
    copy_run(corpus, JAX_RUN, logdir)
    mnt = mount(logdir)
    assert sorted(os.listdir(mnt)) == ["README.txt", "jax_conv_rocm"]
    copy_run(corpus, TF_RUN, logdir)  # tf_gpu_multiworker/plugins/profile/s1
    time.sleep(1.2)
    assert "tf_gpu_multiworker" in os.listdir(mnt)
    assert json.loads((mnt / TF_RUN / "hosts.json").read_text())[0]["hostname"] == \
        "34.83.195.179_6003"


def test_cli_matches_mount(corpus, mount, xcat, xprofs_build):
    mnt = mount(corpus)
    for path in [f"{JAX_RUN}/summary.json", f"{TF_RUN}/hosts.json", f"{TF_RUN}/tools.json",
                 "README.txt", f"{TF_RUN}/hosts/34.83.195.180_6003/summary.json",
                 f"{JAX_RUN}/raw/{JAX_HOST}.xplane.pb"]:
        assert xcat(corpus, path) == (mnt / path).read_bytes(), path
    ls = subprocess.run([str(xprofs_build / "xprofs"), "ls", str(corpus), JAX_RUN],
                        capture_output=True, text=True, check=True).stdout.split()
    assert sorted(x.rstrip("/") for x in ls) == sorted(os.listdir(mnt / JAX_RUN))


def test_bad_query_is_einval(corpus, mount, xcat):
    mnt = mount(corpus)
    with pytest.raises(OSError) as e:
        (mnt / (JAX_RUN + "/summary.json?bogus=1")).read_bytes()
    assert e.value.errno == errno.EINVAL
    r = xcat(corpus, JAX_RUN + "/summary.json?bogus=1", check=False)
    assert r.returncode == 2 and b"unknown option 'bogus'" in r.stderr


def test_cli_errors(corpus, xcat, xprofs_build):
    r = xcat(corpus, "no_such_run/summary.json", check=False)
    assert r.returncode == 1 and b"no such file" in r.stderr
    r = subprocess.run([str(xprofs_build / "xprofs"), "cat", "/nonexistent", "x"],
                       capture_output=True)
    assert r.returncode != 0 and r.stderr.startswith(b"xprofs: ")


def test_generated_profile(tmp_path, synth, xcat, mount):
    logdir = synth(tmp_path / "gen", "--size-mb", "2", "--seed", "7", "--gpus", "2")
    mnt = mount(logdir)
    runs = [d for d in os.listdir(mnt) if d != "README.txt"]
    assert len(runs) == 1
    s = json.loads((mnt / runs[0] / "summary.json").read_text())
    host = s["hosts"][0]
    rundir = next(logdir.rglob("*.xplane.pb*")).parent
    space = xplane_py.load(rundir / host["file"])
    assert host["event_count"] == sum(len(l.events) for p in space.planes for l in p.lines)
    names = [p["name"] for p in host["planes"]]
    assert "/host:CPU" in names and "/device:GPU:0" in names and "/device:GPU:1" in names


def test_memory_bound_keeps_results(corpus, mount):
    """With max_runs=1 every run's decoded data is dropped when another run is
    read; files read again come out the same."""
    mnt = mount(corpus, "max_runs=1")
    runs = [JAX_RUN, TF_RUN, "jax08_gemm_rocm/s1"]
    first = {r: (mnt / r / "summary.json").read_bytes() for r in runs}
    for r in runs:
        # a different file needs the run's profile again after the release
        assert json.loads((mnt / r / "module_list.json").read_text()) is not None
        assert (mnt / r / "summary.json").read_bytes() == first[r]



def _daemon_pid(mnt):
    """The pid of the xprofs-mount process serving mnt."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd[0].endswith(b"xprofs-mount") and str(mnt).encode() in cmd:
            return int(pid)
    raise AssertionError(f"no xprofs-mount process for {mnt}")


def _heap_is_huge(pid):
    """Whether glibc marked the process heap MADV_HUGEPAGE (VmFlags 'hg')."""
    lines = open(f"/proc/{pid}/smaps").read().splitlines()
    for i, line in enumerate(lines):
        if line.endswith("[heap]"):
            for flags in lines[i + 1:]:
                if flags.startswith("VmFlags:"):
                    return "hg" in flags.split()[1:]
    raise AssertionError("no [heap] mapping")


@pytest.mark.skipif(os.environ.get("XPROFS_SANITIZED") == "1",
                    reason="AddressSanitizer replaces glibc's malloc")
@pytest.mark.parametrize("given, plain, huge", [
    (None, None, True),
    ("glibc.malloc.arena_max=2", None, True),
    ("glibc.malloc.hugetlb=0", None, False),
    (None, "1", False),
])
def test_huge_page_malloc(corpus, mount, monkeypatch, given, plain, huge):
    # The daemon re-executes itself once with glibc's huge-page malloc
    # (glibc.malloc.hugetlb=1 added to the tunables the user set), unless the
    # user chose hugetlb themselves or set XPROFS_PLAIN_MALLOC=1.
    for key, value in (("GLIBC_TUNABLES", given), ("XPROFS_PLAIN_MALLOC", plain)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    monkeypatch.delenv("XPROFS_MALLOC", raising=False)
    mnt = mount(corpus)
    assert json.loads((mnt / JAX_RUN / "overview_page.json").read_bytes())
    assert _heap_is_huge(_daemon_pid(mnt)) == huge
