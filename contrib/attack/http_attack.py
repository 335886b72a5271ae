#!/usr/bin/python3
"""http_attack.py BUILD [SECONDS] - the HTTP attack of `make attack`.

Mounts a generated profile, serves it with xprofs-ui on loopback, and sends:
hostile query strings (mutations of the routes' real queries), traversal
paths, many concurrent connections from several loopback addresses, and slow
connections (a header byte a second) while normal clients ask. Prints each
phase's figures (inputs tried, failures) and exits 1 if anything failed:
a request without an answer, a 5xx other than 500 (a broken source), a traversal answered
200, a normal client waiting past 5 s, or a server or mount that died.
Loopback only; bounded by SECONDS per timed phase (default 20).
"""
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
RUN = "r1"
failures = []


def fail(phase, what):
    failures.append((phase, what))


def start(tmp):
    logs = os.path.join(tmp, "logs")
    subprocess.run([f"{BUILD}/xprofs-synth", "--out", logs, "--run", RUN, "--size-mb", "10",
                    "--hosts", "1", "--gpus", "2", "--seed", "7"], check=True,
                   stdout=subprocess.DEVNULL)
    mnt = os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    mount = subprocess.Popen([f"{BUILD}/xprofs-mount", logs, mnt, "-f"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.ismount(mnt):
            break
        time.sleep(0.05)
    log = open(os.path.join(tmp, "ui.log"), "w+")
    ui = subprocess.Popen([f"{BUILD}/xprofs-ui", mnt, "--port", "0", "--quiet"],
                          stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(200):
        log.seek(0)
        m = re.search(r":(\d+)/", log.read())
        if m:
            return mount, ui, mnt, int(m.group(1))
        time.sleep(0.05)
    raise SystemExit("xprofs-ui did not start")


def request(port, target, src="127.0.0.1", timeout=60, body=None):
    """The status code of GET target, or None when no answer came; the
    reply's bytes are appended to the list body when one is given."""
    s = socket.socket()
    try:
        s.bind((src, 0))
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        head = data.split(b"\r\n", 1)[0].split()
        while True:  # read the body: the server must finish its answer
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            if body is not None and len(data) < (1 << 20):
                data += chunk
        if body is not None:
            body.append(data)
        return int(head[1]) if len(head) >= 2 and head[1].isdigit() else None
    except OSError:
        return None
    finally:
        s.close()


BASE = [
    f"/data?run={RUN}&tag=trace_viewer@&start_time_ms=1&end_time_ms=2&resolution=8000",
    f"/data?run={RUN}&tag=overview_page",
    f"/data?run={RUN}&tag=steps&step=1&thread=main",
    f"/data?run={RUN}&tag=op_profile&group_by=program",
    f"/data_csv?run={RUN}&tag=kernel_stats",
    f"/hosts?run={RUN}&tag=trace_viewer@",
    f"/run_tools?run={RUN}",
    f"/data?run={RUN}&tag=memory_viewer&module_name=m&memory_space=0",
    f"/data?run={RUN}&tag=graph_viewer&type=graph&node_name=x&module_name=m",
    "/runs",
]
NASTY = ["NaN", "-1", "1e20", "1.5", "", "%00", "%2f..%2f", "../../etc/passwd", "%ff%fe",
         "\u00e9".encode().decode("latin-1"), "9" * 400, "-0", "inf", "0x10", "%", "%%",
         "&&&&", "==", "a" * 5000, "%0d%0aX-Evil: 1", "'\"<>", "\\", "//", "?"]


def mutate(rnd, q):
    q = bytearray(q.encode("latin-1"))
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(5)
        if op == 0 and b"=" in q:  # a value replaced
            i = rnd.choice([m.end() for m in re.finditer(rb"=", q)])
            j = q.find(b"&", i)
            q[i:len(q) if j < 0 else j] = rnd.choice(NASTY).encode("latin-1")
        elif op == 1:  # a parameter added, sometimes many
            q += b"&" + (b"p%d=%s" % (rnd.randrange(99), rnd.choice(NASTY).encode("latin-1"))) * \
                rnd.choice([1, 1, 1, 50, 300])
        elif op == 2:  # bytes inserted
            i = rnd.randrange(len(q) + 1)
            q[i:i] = bytes(rnd.randrange(33, 127) for _ in range(rnd.randint(1, 8)))
        elif op == 3 and len(q) > 2:  # bytes cut
            i = rnd.randrange(len(q))
            del q[i:i + rnd.randint(1, 6)]
        else:  # a parameter repeated
            q += b"&" + q.split(b"?", 1)[-1].split(b"&")[0]
    return bytes(b if b > 32 and b != 127 else ord("_") for b in q)


def phase_queries(port):
    rnd = random.Random(37)
    tried = bad = 0
    statuses = {}
    stop = time.time() + SECONDS
    while time.time() < stop:
        target = mutate(rnd, rnd.choice(BASE))
        st = request(port, target)
        tried += 1
        statuses[st] = statuses.get(st, 0) + 1
        if st is None or (st >= 500 and st != 500):
            bad += 1
            if bad <= 5:
                fail("queries", (target[:200], st))
    print(f"hostile queries: {tried} tried, {bad} failed, statuses {statuses}")


TRAVERSAL = ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/data/plugin/profile/../../etc",
             "/%2f%2fetc/passwd", "//etc/passwd", "/..%5c..%5cetc/passwd", "/\\etc\\passwd",
             "/static/../../../etc/passwd", "/%00/etc/passwd", "/./././etc/passwd",
             f"/run_files?run=../../etc", f"/run_files?run=/etc", f"/run_tools?run=..",
             f"/data?run={RUN}/../..&tag=overview_page", f"/data?run={RUN}&tag=../../etc/passwd",
             f"/data?run={RUN}&tag=overview_page&host=../../..", f"/data?run=%2e%2e&tag=x",
             f"/data?run={RUN}&tag=raw/../../x", f"/data?run={RUN}&tag=trace_viewer@&hosts=..",
             "/data?run=.&tag=tools", "/data?run=&tag=overview_page", f"/hosts?run=/etc&tag=x",
             "/index.html/../../../etc/passwd", "/%252e%252e/etc/passwd",
             "/..;/etc/passwd", "/.%2e/.%2e/etc/passwd", "/%c0%ae%c0%ae/etc/passwd"]


def phase_traversal(port):
    bad = 0
    secret = open("/etc/passwd", "rb").read(64)
    for t in TRAVERSAL:
        reply = []
        st = request(port, t.encode(), body=reply)
        # 200 is the page's fallback (index.html); a file outside is the failure
        if st is None or (reply and (secret in reply[0] or b"root:" in reply[0])):
            bad += 1
            fail("traversal", (t, st))
    print(f"traversal paths: {len(TRAVERSAL)} tried, {bad} failed")


def phase_concurrent(port, n=500):
    results = []

    def one(i):
        results.append(request(port, b"/runs", src=f"127.0.0.{2 + i % 8}", timeout=60))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answered = sum(1 for r in results if r == 200)
    refused = sum(1 for r in results if r is None)
    print(f"concurrent connections: {n} tried, {answered} answered, {refused} closed unanswered"
          " (64 per address at most)")
    if answered == 0:
        fail("concurrent", "no answer at all")


def phase_slow(port, n=200):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.10", 0))
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", port))
            s.send(b"G")
            socks.append(s)
        except OSError:
            s.close()
    waits = []
    stop = time.time() + min(SECONDS, 15)
    while time.time() < stop:
        for s in socks:
            try:
                s.send(b"E")
            except OSError:
                pass
        t0 = time.time()
        st = request(port, b"/runs", timeout=10)
        waits.append(time.time() - t0 if st == 200 else None)
        time.sleep(0.5)
    for s in socks:
        s.close()
    late = sum(1 for w in waits if w is None or w > 5)
    worst = max((w for w in waits if w is not None), default=0)
    print(f"slow connections: {n} held, {len(waits)} normal requests, {late} over 5 s, "
          f"worst {worst * 1000:.0f} ms")
    if late:
        fail("slow", f"{late} normal requests over 5 s")


def main():
    tmp = tempfile.mkdtemp(prefix="xprofs-attack-")
    mount, ui, mnt, port = start(tmp)
    try:
        phase_queries(port)
        phase_traversal(port)
        phase_concurrent(port)
        phase_slow(port)
        if ui.poll() is not None:
            fail("server", f"xprofs-ui exited {ui.returncode}")
        if mount.poll() is not None:
            fail("mount", f"xprofs-mount exited {mount.returncode}")
        if request(port, b"/runs") != 200:
            fail("server", "no answer after the attack")
    finally:
        ui.terminate()
        ui.wait(timeout=30)
        subprocess.run(["fusermount3", "-u", mnt], capture_output=True)
        mount.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"http attack: {len(failures)} failures")
    for f in failures[:20]:
        print("  FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
