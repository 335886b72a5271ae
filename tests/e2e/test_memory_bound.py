"""An idle mount gives memory back: after every file of four runs has been
read in turn with -o max_runs=1, it holds about what it holds after reading
the last run alone, plus the blob cache's bound (cache_mb); it used to keep
the peak of the runs before (glibc's heap keeps freed pages until trimmed)."""
import os
import subprocess
import time

import pytest

from conftest import SANITIZED


def rss_anon_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise AssertionError("no RssAnon")


def settled_rss(pid):
    """RssAnon once the mount is idle: background work (a trace index
    completed on a thread of its own) done and the heap trimmed."""
    last = rss_anon_kib(pid)
    for _ in range(40):
        time.sleep(0.3)
        now = rss_anon_kib(pid)
        if abs(now - last) < 512:
            return now
        last = now
    return last


def read_run(mnt, run):
    for name in sorted(os.listdir(mnt / run)):
        p = mnt / run / name
        if p.is_file():
            try:
                p.read_bytes()
            except OSError:
                pass  # files this run has no data for: EINVAL / ENOENT


def mount_pid(mnt):
    out = subprocess.run(["pgrep", "-f", f"xprofs-mount .* {mnt} "], capture_output=True,
                         text=True).stdout.split()
    assert len(out) == 1, out
    return int(out[0])


@pytest.mark.skipif(SANITIZED, reason="ASan's quarantine holds freed memory: RSS says nothing")
def test_idle_mount_returns_to_the_bound(tmp_path, synth, mount):
    logdir = tmp_path / "logs"
    for i in (1, 2, 3, 4):
        synth(logdir, "--run", f"r{i}", "--size-mb", "20", "--seed", str(i))
    old = time.time() - 3600  # not "still being written": files are cached as final
    for p in (logdir / "plugins" / "profile").glob("*/*.xplane.pb"):
        os.utime(p, (old, old))
    cache_mb = 8
    # trace_complete=0: no trace index is completed on a thread of its own,
    # whose timing would make the idle state a race.
    alone = mount(logdir, f"cache_mb={cache_mb}", "max_runs=1", "trace_complete=0")
    read_run(alone, "r4")
    one_run = settled_rss(mount_pid(alone))
    mnt = mount(logdir, f"cache_mb={cache_mb}", "max_runs=1", "trace_complete=0")
    pid = mount_pid(mnt)
    peak = 0
    for run in ("r1", "r2", "r3", "r4"):
        read_run(mnt, run)
        peak = max(peak, rss_anon_kib(pid))
    idle = settled_rss(pid)
    print(f"one run {one_run} KiB, four runs idle {idle} KiB, peak seen {peak} KiB")
    assert idle <= one_run + cache_mb * 1024 + 20 * 1024, (one_run, idle, peak)
