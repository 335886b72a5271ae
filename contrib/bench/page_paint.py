#!/usr/bin/python3
"""page_paint.py - first paint and interactive overview of the bundled page.

    page_paint.py BUILD_DIR LOGDIR RUN

Mounts LOGDIR afresh (xprofs-mount, produced files in memory only), starts
xprofs-ui on it and a headless Chromium with a new profile (the CDP driver
of tests/e2e/cdp.py), and opens #/run/RUN/overview twice: cold (nothing
converted, nothing in the browser's cache) and warm (about:blank, then the
same URL: the mount holds report.json, the browser its scripts). Prints
    fcp_cold fcp_warm overview_cold overview_warm
in seconds from the navigation's start: the first contentful paint
(PerformanceObserver 'paint'), and the page's mark 'xprofs-loaded:overview'
(run.js: the overview's numbers and charts drawn, the view usable).
"""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "e2e"))
from cdp import Browser  # noqa: E402


def unmount(mnt):
    for _ in range(50):
        if subprocess.run(["fusermount3", "-u", str(mnt)], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    subprocess.run(["fusermount3", "-uz", str(mnt)], capture_output=True)


def one_load(b, url, run):
    b.goto("about:blank")
    b.wait("location.href === 'about:blank'", 30)
    b.goto(url)
    b.wait(f"document.body && document.body.dataset.loaded === {json.dumps(run)}"
           " && document.body.dataset.tab === 'overview'", 600)
    fcp = b.eval("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
    ready = b.eval("(performance.getEntriesByName('xprofs-loaded:overview')[0] || {}).startTime")
    if fcp is None or ready is None:
        raise SystemExit(f"page_paint: no paint or load mark ({fcp}, {ready})")
    return fcp / 1000, ready / 1000


def main():
    build, logdir, run = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="page_paint."))
    mnt = tmp / "mnt"
    mnt.mkdir()
    mproc = subprocess.Popen([str(build / "xprofs-mount"), logdir, str(mnt), "-f"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    uproc = b = None
    try:
        deadline = time.time() + 30
        while not os.path.ismount(mnt):
            if mproc.poll() is not None or time.time() > deadline:
                raise SystemExit("page_paint: the mount did not appear")
            time.sleep(0.05)
        ulog = tmp / "ui.log"
        uproc = subprocess.Popen([str(build / "xprofs-ui"), str(mnt), "--port", "0", "--quiet"],
                                 stdout=subprocess.DEVNULL, stderr=open(ulog, "wb"))
        port = None
        while port is None:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", ulog.read_text())
            if m:
                port = int(m.group(1))
            elif uproc.poll() is not None or time.time() > deadline:
                raise SystemExit("page_paint: xprofs-ui did not start: " + ulog.read_text())
            else:
                time.sleep(0.02)
        b = Browser(tmp)
        b.set_viewport(1280, 900)
        url = f"http://127.0.0.1:{port}/#/run/{urllib.parse.quote(run, safe='')}/overview"
        cold = one_load(b, url, run)
        warm = one_load(b, url, run)
        print(f"{cold[0]:.3f} {warm[0]:.3f} {cold[1]:.3f} {warm[1]:.3f}")
    finally:
        if b:
            b.close()
        if uproc:
            uproc.send_signal(signal.SIGTERM)
            uproc.wait(timeout=30)
        unmount(mnt)
        mproc.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main()
