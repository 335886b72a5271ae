#!/usr/bin/python3
"""soak.py BUILD [SECONDS] [READERS] - the soak of `make soak`.

Mounts three generated 20 MB runs with cache_mb=128,max_runs=2 and has
READERS threads (default 64) read their files for SECONDS (default 600):
files already made, and trace viewer windows and resolutions nobody asked
for yet. The mount's resident size is sampled every second. Fails (exit 1)
on a read error other than EINVAL (an option a file refuses), on a mount
that died, when the last third of the samples peaks more than 15% above the
first third's peak (memory growing with time), or when the idle mount at
the end holds more than cache_mb + max_runs runs' data (3.5x a profile
each, trace indexes complete) + 16 MB, the bound README.md states.
"""
import errno
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0
READERS = int(sys.argv[3]) if len(sys.argv) > 3 else 64
RUNS, PROFILE_MB, CACHE_MB, MAX_RUNS = ["r1", "r2", "r3"], 20, 128, 2


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main():
    tmp = tempfile.mkdtemp(prefix="xprofs-soak-")
    logs, mnt = os.path.join(tmp, "logs"), os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    for i, run in enumerate(RUNS):
        subprocess.run([f"{BUILD}/xprofs-synth", "--out", logs, "--run", run, "--size-mb",
                        str(PROFILE_MB), "--hosts", "1", "--gpus", "2", "--seed", str(i + 1)],
                       check=True, stdout=subprocess.DEVNULL)
    mount = subprocess.Popen([f"{BUILD}/xprofs-mount", logs, mnt, "-f", "-o",
                              f"cache_mb={CACHE_MB},max_runs={MAX_RUNS}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.ismount(mnt):
            break
        time.sleep(0.05)
    files = {run: sorted(f for f in os.listdir(os.path.join(mnt, run))
                         if os.path.isfile(os.path.join(mnt, run, f))
                         and f not in ("trace_viewer.json", "trace_viewer_legacy.json"))
             for run in RUNS}
    errors, reads = [], [0]
    stop = time.time() + SECONDS

    def reader(seed):
        rnd = random.Random(seed)
        while time.time() < stop:
            run = rnd.choice(RUNS)
            if rnd.random() < 0.3:
                a = rnd.uniform(0, 50)
                name = (f"trace_viewer.json?start_time_ms={a:.3f}&end_time_ms="
                        f"{a + rnd.uniform(0.1, 20):.3f}&resolution={rnd.choice([0, 1000, 8000])}")
            else:
                name = rnd.choice(files[run])
            try:
                with open(os.path.join(mnt, run, name), "rb") as f:
                    while f.read(1 << 20):
                        pass
                reads[0] += 1
            except OSError as e:
                if e.errno != errno.EINVAL:
                    errors.append((run, name, e.errno))

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(READERS)]
    for t in threads:
        t.start()
    samples = []
    while any(t.is_alive() for t in threads):
        if mount.poll() is None:
            samples.append(rss_mb(mount.pid))
        time.sleep(1)
    idle_samples = []
    for _ in range(10):  # background work (trace index completion) ends, the heap is trimmed
        time.sleep(1)
        if mount.poll() is None:
            idle_samples.append(rss_mb(mount.pid))
    alive = mount.poll() is None
    idle = idle_samples[-1] if idle_samples else 0.0
    print("idle RSS MB, 1 s apart:", [round(x) for x in idle_samples])
    subprocess.run(["fusermount3", "-u", mnt], capture_output=True)
    mount.wait(timeout=60)
    shutil.rmtree(tmp, ignore_errors=True)

    third = max(1, len(samples) // 3)
    first, last = max(samples[:third] or [0]), max(samples[-third:] or [0])
    bound = CACHE_MB + int(MAX_RUNS * 3.5 * PROFILE_MB) + 16
    print(f"soak: {READERS} readers, {SECONDS:.0f} s, {reads[0]} files read, {len(errors)} errors")
    print(f"RSS MB: peak {max(samples or [0]):.0f}, first third {first:.0f}, last third "
          f"{last:.0f}, idle at the end {idle:.0f} (bound {bound})")
    failed = []
    if errors:
        failed.append(f"read errors: {errors[:5]}")
    if not alive:
        failed.append(f"xprofs-mount exited {mount.returncode}")
    if last > first * 1.15:
        failed.append("memory grows with time")
    if idle > bound:
        failed.append(f"idle mount {idle:.0f} MB above {bound} MB")
    for f in failed:
        print("  FAIL", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
