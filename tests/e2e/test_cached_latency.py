"""A file already made is answered at once while other clients wait for files
being made (issue 37: under 32 clients the p99 latency was 21.8 s).

16 clients ask xprofs-ui for files nobody asked for yet (a trace viewer
down-sampling with a resolution of its own, over 8 generated runs, with
max_runs=2 so that runs are dropped and decoded again), 16 others for files
already made, for LOAD_SECONDS. The p50 and p99 latencies of both are printed.

Before the fix a reader of a file being made held one of libfuse's 10 workers
until the file was made, and the makers ran at the mount's own priority: the
cached requests waited for a worker and for the CPU (measured here: cached p99
1,460 ms, max 4 s, cold p50 7.2 s). Now (vfs.h, src/fs/main.c) 256 workers,
at most 8 files made at once at nice 10: cached p99 49 ms, p50 3.7 ms, with
the machine's load average at 16 from other builds. The bounds below are a
wide margin on that for a loaded 2-core machine: 250 ms, and a twentieth of
the cold p50 (the old pool gave a fifth).
"""
import http.client
import random
import threading
import time

from conftest import SANITIZED
from test_ui_proxy import serve  # noqa: F401 - the fixture

LOAD_SECONDS = 10
RUNS = 8
CACHED_P99_MS = 250
CACHED = ["/data?run=r0&tag=overview_page", "/data?run=r0&tag=kernel_stats",
          "/data?run=r0&tag=hlo_stats", "/data?run=r0&tag=framework_op_stats",
          "/run_tools?run=r0", "/hosts?run=r0&tag=kernel_stats"]


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def test_cached_files_do_not_wait_behind_files_being_made(tmp_path, synth, mount,
                                                          serve):  # noqa: F811
    logs = tmp_path / "logs"
    for i in range(RUNS):
        synth(logs, "--run", f"r{i}", "--size-mb", 6, "--hosts", 1, "--gpus", 2,
              "--seed", i + 1)
    s = serve(mount(logs, "max_runs=2"), quiet=True)
    for path in CACHED:
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=120)
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        c.close()
        assert r.status == 200, path
    latency = {"cold": [], "cached": []}
    errors = []
    counter = [0]
    lock = threading.Lock()
    stop = time.monotonic() + LOAD_SECONDS

    def client(kind, seed):
        rnd = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=300)
        while time.monotonic() < stop:
            if kind == "cold":
                with lock:
                    counter[0] += 1
                    n = counter[0]
                path = f"/data?run=r{1 + n % (RUNS - 1)}&tag=trace_viewer@&resolution={1000 + n}"
            else:
                path = rnd.choice(CACHED)
            t0 = time.monotonic()
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                r.read()
            except Exception as e:  # noqa: BLE001 - every failure is an error here
                errors.append((path, repr(e)))
                return
            latency[kind].append(time.monotonic() - t0)
            if r.status != 200:
                errors.append((path, r.status))
        conn.close()

    threads = [threading.Thread(target=client, args=(kind, i))
               for i, kind in enumerate(["cold"] * 16 + ["cached"] * 16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
    figures = {}
    for kind, values in latency.items():
        values.sort()
        figures[kind] = (len(values), 1000 * percentile(values, 0.5),
                         1000 * percentile(values, 0.99))
    print("requests, p50 ms, p99 ms:", figures)
    cold_n, cold_p50, _ = figures["cold"]
    cached_n, _, cached_p99 = figures["cached"]
    assert cold_n >= 16 and cached_n > 100, figures
    assert cached_p99 <= cold_p50 / 20, figures
    if not SANITIZED:
        assert cached_p99 <= CACHED_P99_MS, figures
