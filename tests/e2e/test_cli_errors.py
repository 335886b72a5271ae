"""The common mistakes, each answered with one clear line and an exit
status, nothing else changed: --version and help on every program, a log
directory without profiles (and the hint when it is a run folder), and a
mount over a mount point that already holds one."""
import os
import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
VERSION = re.search(r'#define XPROFS_VERSION "([^"]+)"',
                    (REPO / "src" / "base" / "version.h").read_text()).group(1)


def run(*args, timeout=60):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("prog", ["xprofs", "xprofs-mount", "xprofs-ui"])
def test_version_and_help(xprofs_build, prog):
    exe = xprofs_build / prog
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    rc, out, err = run(exe, "--version")
    assert rc == 0 and err == ""
    assert out.startswith(f"{prog} {VERSION}"), out
    for arg in ("--help", "help"):
        rc, out, err = run(exe, arg)
        assert rc == 0, (arg, err)
        assert out.startswith("usage:"), (arg, out[:80])


def test_empty_logdir(xprofs_build, tmp_path):
    rc, out, err = run(xprofs_build / "xprofs", "ls", tmp_path)
    assert rc == 1 and out == ""
    assert err == (f"xprofs: no profiles under {tmp_path}: looked for "
                   "plugins/profile/*/*.xplane.pb and *.pt.trace.json*\n")


def test_run_folder_given_as_logdir(xprofs_build, tmp_path, synth):
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "steps4")
    run_dir = logdir / "plugins" / "profile" / "r1"
    for d, hint in ((run_dir, "did you mean ../../.. (this is a run folder)?"),
                    (run_dir.parent, "did you mean ../..?"),
                    (run_dir.parent.parent, "did you mean ..?")):
        rc, out, err = run(xprofs_build / "xprofs", "cat", d, "r1/summary.json")
        assert rc == 1 and out == ""
        assert err == (f"xprofs: no profiles under {d}: looked for plugins/profile/*/*.xplane.pb"
                       f" and *.pt.trace.json*; {hint}\n")
    # Profiles lying loose in a directory get told where they belong.
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "h.xplane.pb").write_bytes((run_dir / "synth-host-0.xplane.pb").read_bytes())
    rc, _, err = run(xprofs_build / "xprofs", "ls", loose)
    assert rc == 1 and err.endswith(
        "; its .xplane.pb files belong in plugins/profile/<run>/ under the log directory\n")
    # The log directory itself works.
    rc, out, _ = run(xprofs_build / "xprofs", "ls", logdir)
    assert rc == 0 and "r1/" in out.split()


def test_mount_refuses_a_run_folder_and_warns_on_empty(xprofs_build, tmp_path, synth):
    if not os.path.exists("/dev/fuse"):
        pytest.skip("FUSE not available here")
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "steps4")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    run_dir = logdir / "plugins" / "profile" / "r1"
    rc, _, err = run(xprofs_build / "xprofs-mount", run_dir, mnt)
    assert rc == 1 and "did you mean ../../.. (this is a run folder)?" in err
    assert not os.path.ismount(mnt)
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, _, err = run(xprofs_build / "xprofs-mount", empty, mnt)
    try:
        assert rc == 0 and os.path.ismount(mnt)
        assert err == (f"xprofs-mount: warning: no profiles under {empty}: looked for "
                       "plugins/profile/*/*.xplane.pb and *.pt.trace.json*; mounted anyway: "
                       "runs appear as they are written\n")
        # A run written afterwards appears in the mount.
        synth(empty, "--run", "late", "--scenario", "steps4")
        deadline = 50
        while "late" not in os.listdir(mnt) and deadline:
            subprocess.run(["sleep", "0.1"])
            deadline -= 1
        assert "late" in os.listdir(mnt)
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)])


def test_mount_over_a_mount_is_refused(xprofs_build, tmp_path, synth, mount):
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "steps4")
    mnt = mount(logdir)
    before = (mnt / "r1" / "hosts.json").read_bytes()
    rc, out, err = run(xprofs_build / "xprofs-mount", logdir, mnt)
    assert rc == 1 and out == ""
    assert err == (f"xprofs-mount: {mnt} already holds a mount; unmount it first "
                   f"(fusermount3 -u {mnt})\n")
    # The first mount is untouched.
    assert os.path.ismount(mnt)
    assert (mnt / "r1" / "hosts.json").read_bytes() == before


def test_mount_stopped_by_a_signal_ends_cleanly(xprofs_build, tmp_path, synth):
    """systemd stops a busy mount with SIGTERM: that unmounts and exits 0
    (it exited 1, so every such stop was logged as a failure)."""
    import signal
    import time
    if not os.path.exists("/dev/fuse"):
        pytest.skip("FUSE not available here")
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "steps4")
    for sig in (signal.SIGTERM, signal.SIGINT):
        mnt = tmp_path / f"mnt{int(sig)}"
        mnt.mkdir()
        # A pytest-xdist worker ignores SIGINT, and an ignored signal is
        # inherited: libfuse (rightly) leaves an ignored stop signal alone,
        # so the mount starts with the default action, as from a shell.
        p = subprocess.Popen([str(xprofs_build / "xprofs-mount"), str(logdir), str(mnt), "-f"],
                             stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        for _ in range(100):
            if os.path.ismount(mnt):
                break
            time.sleep(0.05)
        assert (mnt / "r1" / "hosts.json").read_bytes()
        p.send_signal(sig)
        assert p.wait(timeout=30) == 0, p.stderr.read()
        assert not os.path.ismount(mnt)


def test_mount_stopped_with_files_still_open_frees_them(xprofs_build, tmp_path, synth):
    """A file and a directory still open when the mount is stopped never
    get the kernel's RELEASE: the mount frees their handles itself (under
    ASan+UBSan, make test-asan, a leak fails the exit status)."""
    import signal
    import time
    if not os.path.exists("/dev/fuse"):
        pytest.skip("FUSE not available here")
    logdir = synth(tmp_path / "logs", "--run", "r1", "--scenario", "steps4")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    p = subprocess.Popen([str(xprofs_build / "xprofs-mount"), str(logdir), str(mnt), "-f"],
                         stderr=subprocess.PIPE)
    for _ in range(100):
        if os.path.ismount(mnt):
            break
        time.sleep(0.05)
    run = mnt / "r1"
    files = [open(run / n, "rb") for n in ("hosts.json", "tools.json", "summary.json",
                                            "report.md", "overview_page.json", "steps.csv")]
    files.append(open(run / "raw" / os.listdir(run / "raw")[0], "rb"))
    dirs = [os.open(run / d, os.O_RDONLY | os.O_DIRECTORY) for d in ("hosts", "raw", "cli")]
    try:
        for f in files:
            assert f.read(1)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == 0, p.stderr.read()
        assert not os.path.ismount(mnt)
    finally:
        for f in files:
            try:
                f.close()  # the mount is gone: ENOTCONN
            except OSError:
                pass
        for d in dirs:
            os.close(d)


def test_bad_command_lines_are_usage_errors(xprofs_build, tmp_path):
    """Misspelt options get 'unknown option' and the usage exit status, not
    a message about something else."""
    rc, _, err = run(xprofs_build / "xprofs", "ls", "-x", tmp_path)
    assert rc == 2 and err.startswith("xprofs: unknown option '-x'\n")
    rc, _, err = run(xprofs_build / "xprofs", "check", "-j", "abc", tmp_path / "f.xplane.pb")
    assert rc == 2 and err.startswith("usage:")
    ui = xprofs_build / "xprofs-ui"
    if ui.exists():
        for arg in ("--bogus", "-x", "--bogus=1"):
            rc, _, err = run(ui, tmp_path, arg)
            assert rc == 2 and err.startswith(f"xprofs-ui: unknown option '{arg.split('=')[0]}'"), \
                (arg, err)
    for opt, rng in (("trace_complete=2", "0 to 1"), ("max_runs=1.5", "1 to 1048576"),
                     ("cache_mb=99999999999999999999", "0 to 1073741824")):
        rc, _, err = run(xprofs_build / "xprofs-mount", tmp_path, tmp_path, "-o", opt)
        assert rc == 1 and err == f"xprofs-mount: -o {opt}: must be an integer from {rng}\n", err


def test_pytorch_folder_given_as_logdir(xprofs_build, corpus):
    d = corpus / "pytorch" / "h100_bert_small"
    rc, _, err = run(xprofs_build / "xprofs", "ls", d)
    assert rc == 1 and err.endswith(
        "did you mean .. (a folder of PyTorch traces is a run of the directory above)?\n")


def test_check_names_what_it_reads(xprofs_build, corpus):
    (trace,) = (corpus / "pytorch" / "b200_eager").glob("*.pt.trace.json.gz")
    rc, out, err = run(xprofs_build / "xprofs", "check", trace)
    assert rc == 2 and out == ""
    assert err == f"xprofs: check reads .xplane.pb[.gz] files; {trace} is not one\n"


def test_mount_stopped_while_files_are_made(xprofs_build, tmp_path, synth):
    """A stop while files are being made on every core (a trace, the op
    statistics): the mount still unmounts and exits 0 within seconds, not
    after the files are done or never."""
    import signal
    import time
    if not os.path.exists("/dev/fuse"):
        pytest.skip("FUSE not available here")
    logdir = synth(tmp_path / "logs", "--run", "r1", "--size-mb", 10, "--gpus", 2)
    for i in range(4):
        mnt = tmp_path / f"mnt{i}"
        mnt.mkdir()
        p = subprocess.Popen([str(xprofs_build / "xprofs-mount"), str(logdir), str(mnt), "-f"],
                             stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        for _ in range(100):
            if os.path.ismount(mnt):
                break
            time.sleep(0.05)
        readers = [subprocess.Popen(["cat", str(mnt / "r1" / f)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
                   for f in ("trace_viewer.json", "overview_page.json", "kernel_stats.json")]
        time.sleep(0.2 + 0.1 * i)
        p.send_signal(signal.SIGTERM if i % 2 == 0 else signal.SIGINT)
        try:
            rc = p.wait(timeout=20)
        finally:
            for r in readers:
                r.kill()
                r.wait()
            if p.poll() is None:
                p.kill()
                p.wait()
                subprocess.run(["fusermount3", "-uz", str(mnt)])
        assert rc == 0, p.stderr.read()
        assert not os.path.ismount(mnt)
