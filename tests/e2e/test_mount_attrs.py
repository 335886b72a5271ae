"""What ls -l shows: directories carry the time of their source (the root,
README.txt and the directories on the way to nested runs: LOGDIR's mtime,
not 1970), a run its newest source's; a produced file its size once read."""
import os


def test_directory_times(tmp_path, synth, mount):
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "steps4")
    nested = logdir / "team" / "exp"
    synth(nested, "--run", "r2", "--scenario", "steps4")
    os.utime(logdir, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    src = next((logdir / "plugins" / "profile" / "r1").glob("*.xplane.pb"))
    os.utime(src, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    mnt = mount(logdir)
    want = os.stat(logdir).st_mtime_ns
    for p in (mnt, mnt / "README.txt", mnt / "team", mnt / "team" / "exp"):
        assert os.stat(p).st_mtime_ns == want, p
    assert os.stat(mnt / "r1").st_mtime_ns == 1_600_000_000_000_000_000
    # A produced file shows its size once it has been read.
    data = (mnt / "r1" / "summary.json").read_bytes()
    assert os.stat(mnt / "r1" / "summary.json").st_size == len(data) > 0


def test_one_host_tool_is_listed_where_it_can_be_read(tmp_path, synth, xcat, xprofs_build):
    """XProf's non-streaming trace viewer takes one host: in a run of two
    it is listed under hosts/<host>/ only (it used to be listed in the run
    and fail with EINVAL on every read); asked for by name, it still says
    where to read it."""
    import subprocess
    logdir = synth(tmp_path / "logs", "--run", "r", "--size-mb", "1", "--hosts", "2")

    def ls(p):
        return subprocess.run([str(xprofs_build / "xprofs"), "ls", str(logdir), p],
                              capture_output=True, text=True, check=True).stdout.split()

    assert "trace_viewer_legacy.json" not in ls("r")
    assert "trace_viewer_legacy.json" in ls("r/hosts/synth-host-0")
    r = xcat(logdir, "r/trace_viewer_legacy.json", check=False)
    assert r.returncode == 2 and b"read hosts/<host>/trace_viewer_legacy.json" in r.stderr
