"""Shared fixtures of the end-to-end tests.

xprofs_build  the build directory (env XPROFS_BUILD, default ./build)
corpus        ../shared/corpus, or the test is skipped with a clear message
mount         factory: mount(logdir, *opts) -> mountpoint (unmounted at teardown)
xcat          xcat(logdir, path) -> bytes printed by `xprofs cat` (raises on failure)
synth         factory: synth(tmp_path_dir, *args) runs xprofs-synth --out DIR args

cat_usage(xprofs_build, logdir, path) -> (stdout, peak RSS MB, minor faults,
CPU seconds) of one `xprofs cat` run alone in a fresh process.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"
SANITIZED = os.environ.get("XPROFS_SANITIZED") == "1"


def build_dir():
    return pathlib.Path(os.environ.get("XPROFS_BUILD", REPO / "build"))


def cat_usage(xprofs_build, logdir, path):
    """(stdout, peak RSS in MB, minor page faults, user + system CPU seconds)
    of `xprofs cat` run alone in a fresh python process (RUSAGE_CHILDREN
    then covers that one child only)."""
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, timeout=600)\n"
            "sys.stdout.buffer.write(r.stdout)\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "sys.stderr.write('%d %d %d %.3f' % (r.returncode, u.ru_maxrss, u.ru_minflt,\n"
            "                                   u.ru_utime + u.ru_stime))\n")
    r = subprocess.run([sys.executable, "-c", code, str(xprofs_build / "xprofs"), "cat",
                        str(logdir), path], capture_output=True, timeout=660)
    fields = r.stderr.decode().split()[-4:]
    assert int(fields[0]) == 0, path
    return r.stdout, int(fields[1]) / 1024, int(fields[2]), float(fields[3])


@pytest.fixture(scope="session")
def xprofs_build():
    b = build_dir()
    if not (b / "xprofs").exists():
        pytest.fail(f"{b}/xprofs missing: run make first")
    return b


@pytest.fixture(scope="session")
def corpus():
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS} (tests read ../shared/corpus)")
    return CORPUS


def _fuse_available():
    return os.path.exists("/dev/fuse") and shutil.which("fusermount3") is not None


def unmount(mnt):
    for _ in range(50):
        r = subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True)
        if r.returncode == 0:
            return
        time.sleep(0.1)
    subprocess.run(["fusermount3", "-uz", str(mnt)], capture_output=True)


@pytest.fixture
def mount(xprofs_build, tmp_path_factory):
    if not _fuse_available():
        pytest.skip("FUSE not available here (/dev/fuse or fusermount3 missing)")
    mounted = []

    def do_mount(logdir, *opts):
        mnt = tmp_path_factory.mktemp("mnt")
        log = open(mnt.parent / (mnt.name + ".log"), "wb")
        args = [str(xprofs_build / "xprofs-mount"), str(logdir), str(mnt), "-f"]
        for o in opts:
            args += ["-o", o]
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            if os.path.ismount(mnt):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"xprofs-mount exited {proc.returncode}: "
                                   + open(log.name).read())
            time.sleep(0.05)
        else:
            proc.kill()
            raise RuntimeError("mount did not appear")
        mounted.append((mnt, proc, log))
        return mnt

    yield do_mount
    for mnt, proc, log in mounted:
        unmount(mnt)
        try:
            rc = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        log.close()
        text = open(log.name, errors="replace").read()
        # The mount must never crash; sanitizer reports fail the test.
        assert rc == 0, f"xprofs-mount exited {rc}: {text[-3000:]}"
        assert "ERROR: AddressSanitizer" not in text, text[-3000:]
        assert "runtime error:" not in text, text[-3000:]


@pytest.fixture
def xcat(xprofs_build):
    def run(logdir, path, check=True):
        r = subprocess.run([str(xprofs_build / "xprofs"), "cat", str(logdir), path],
                           capture_output=True, timeout=600)
        if check and r.returncode != 0:
            raise AssertionError(f"xprofs cat {path} failed ({r.returncode}): "
                                 + r.stderr.decode(errors="replace"))
        return r.stdout if check else r
    return run


@pytest.fixture
def synth(xprofs_build):
    def run(outdir, *args):
        exe = xprofs_build / "xprofs-synth"
        if not exe.exists():
            pytest.fail(f"{exe} missing")
        subprocess.run([str(exe), "--out", str(outdir), *map(str, args)], check=True,
                       timeout=600)
        return pathlib.Path(outdir)
    return run
