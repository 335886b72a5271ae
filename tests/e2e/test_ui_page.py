"""End-to-end tests of the bundled page of xprofs-ui, on the mount of the corpus.

One mount and one server per browser, every test run twice: in headless
Chromium (cdp.py, DevTools protocol) and in headless Firefox (bidi.py,
WebDriver BiDi), at 1280 px. Every view of every corpus run is loaded with no console error; the
numbers the DOM shows (data-v / data-key attributes, table cells, counts) are
compared with the files the test reads from the mount itself; the trace tab's
search, event details, clicks, zoom, keys, measure and shareable URL are
driven as a person would; the page may ask nothing of any other origin.
Screenshots go to $XPROFS_UI_SCREENSHOTS (Firefox's in its firefox/) or the
test's tmp dir.
"""
import contextlib
import csv
import io
import json
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import time
import urllib.parse

import pytest

from bidi import FirefoxBrowser
from cdp import Browser
from conftest import CORPUS, build_dir, unmount

# The tabs and the files that make each appear (ui-proxy/static/run.js).
TABS = [
    ("overview", ["report.json", "overview_page.json"]),
    ("ops", ["op_profile.json", "hlo_stats.json", "roofline_model.json",
             "framework_op_stats.json", "kernel_stats.json"]),
    ("trace", ["trace_viewer.json"]),
    ("steps", ["steps.json", "regions.json"]),
    ("gpu", ["gpu_devices.csv", "kernel_launchers_summary.csv"]),
    ("pytorch", ["modules.txt", "call_tree.txt", "roofline.csv"]),
    ("memory", ["memory_profile.json", "memory_viewer.json"]),
    ("compare", ["steps.json", "regions.json"]),  # and a second run in the mount
    ("files", []),
]
TRACE_RUN = "jax_conv_rocm/2025_01_01_00_00_00"


class Page:
    """The mount, the server and the browser the tests share."""

    def __init__(self, mnt, port, browser, shots):
        self.mnt, self.port, self.b, self.shots = mnt, port, browser, shots
        self.base = f"http://127.0.0.1:{port}/"

    def open(self, run=None, tab=None, query=""):
        frag = "#/"
        if run:
            frag += "run/" + urllib.parse.quote(run, safe="") + (f"/{tab}" if tab else "")
        url = self.base + frag + (f"?{query}" if query else "")
        # Page.navigate returns before the page's hashchange handler runs:
        # clear what names the loaded view first, or the wait below could
        # see the previous view's and look at a page still being drawn.
        self.b.eval(f"location.href === {json.dumps(url)} || "
                    "(document.body && (document.body.dataset.loaded = ''))")
        self.b.goto(url)
        want = json.dumps(run or "runs")
        cond = f"document.body.dataset.loaded === {want}"
        if tab:
            cond += f" && document.body.dataset.tab === {json.dumps(tab)}"
        self.b.wait(cond, 90)

    def read(self, run, name):
        return (self.mnt / run / name).read_bytes()

    def json(self, run, name):
        return json.loads(self.read(run, name))

    def csv_rows(self, run, name):
        return list(csv.DictReader(io.StringIO(self.read(run, name).decode())))

    def shot(self, name):
        self.b.screenshot(self.shots / (re.sub(r"[^A-Za-z0-9_-]", "_", name) + ".png"))

    def js(self, expr):
        return self.b.eval(expr)


def mount_runs(mnt):
    runs = []
    for d, dirs, files in os.walk(mnt):
        if "tools.json" in files:
            runs.append(os.path.relpath(d, mnt))
            dirs[:] = [x for x in dirs if x not in ("hosts", "raw")]
    return sorted(runs, reverse=True)


def plain_files(mnt, run):
    return {n for n in os.listdir(mnt / run) if (mnt / run / n).is_file()}


def tabs_of(mnt, run, nruns):
    """The tabs the page should show for run in a mount of nruns runs."""
    files = plain_files(mnt, run)
    return [t for t, need in TABS if (t != "compare" or nruns > 1)
            and (not need or any(f in files for f in need))]


@contextlib.contextmanager
def serve(logdir, tmp):
    """xprofs-mount of logdir and xprofs-ui on it: yields (mountpoint, port)."""
    exe = build_dir()
    mnt = tmp / "mnt"
    mnt.mkdir()
    mlog = open(tmp / "mount.log", "wb")
    mproc = subprocess.Popen([str(exe / "xprofs-mount"), str(logdir), str(mnt), "-f"],
                             stdout=mlog, stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while not os.path.ismount(mnt):
        assert mproc.poll() is None and time.time() < deadline, "the mount did not appear"
        time.sleep(0.05)
    ulog_path = tmp / "ui.log"
    ulog = open(ulog_path, "wb")
    uproc = subprocess.Popen([str(exe / "xprofs-ui"), str(mnt), "--port", "0"],
                             stdout=subprocess.DEVNULL, stderr=ulog)
    try:
        port = None
        while port is None:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", ulog_path.read_text())
            if m:
                port = int(m.group(1))
            else:
                assert uproc.poll() is None and time.time() < deadline, ulog_path.read_text()
                time.sleep(0.02)
        yield mnt, port
    finally:
        uproc.send_signal(signal.SIGTERM)
        assert uproc.wait(timeout=30) == 0, ulog_path.read_text()[-2000:]
        unmount(mnt)
        assert mproc.wait(timeout=30) == 0, (tmp / "mount.log").read_text()[-2000:]


def need_tools():
    exe = build_dir()
    for name in ("xprofs-mount", "xprofs-ui"):
        if not (exe / name).exists():
            pytest.skip(f"{exe / name} missing: build it first")
    if not (os.path.exists("/dev/fuse") and shutil.which("fusermount3")):
        pytest.skip("FUSE not available here")


@pytest.fixture(scope="module", params=["chromium", "firefox"])
def page(request, tmp_path_factory):
    """The corpus page in one browser: every test runs in Chromium, then in Firefox."""
    need_tools()
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    tmp = tmp_path_factory.mktemp("uipage-" + request.param)
    shots = pathlib.Path(os.environ.get("XPROFS_UI_SCREENSHOTS") or tmp / "shots")
    if request.param != "chromium":
        shots = shots / request.param
    shots.mkdir(parents=True, exist_ok=True)
    with serve(CORPUS, tmp) as (mnt, port):
        b = Browser(tmp) if request.param == "chromium" else FirefoxBrowser(tmp)
        try:
            b.set_viewport(1280, 900)
            yield Page(mnt, port, b, shots)
        finally:
            b.close()


def no_errors(p):
    assert p.b.errors() == []
    outside = [u for u in p.b.requested_urls()
               if not u.startswith(p.base) and not u.startswith("data:")
               and u != "about:blank"]
    assert outside == [], outside


# --------------------------------------------------------------------------

def test_runs_page(page):
    p = page
    runs = mount_runs(p.mnt)
    p.open()
    p.b.wait("[...document.querySelectorAll('#runs .tools')].every(t => t.textContent)", 30)
    assert p.js("[...document.querySelectorAll('#runs a.run-link')].map(a => a.textContent)") == runs
    for run in runs:
        row = f"document.querySelector('#runs tr[data-run={json.dumps(run)}]')"
        summary = p.json(run, "summary.json")
        assert p.js(row + ".querySelector('[data-key=hosts]').dataset.v") == str(len(summary["hosts"]))
        assert int(p.js(row + ".querySelector('[data-key=duration_ps]').dataset.v")) == summary["duration_ps"]
        devices = sum(1 for h in summary["hosts"] for pl in h["planes"]
                      if pl["name"].startswith("/device:"))
        if devices:
            assert p.js(row + ".querySelector('[data-key=devices]').dataset.v") == str(devices)
        tools = json.loads(p.read(run, "tools.json"))
        assert p.js(row + ".querySelector('.tools').textContent") == (
            " · ".join(tools) if tools else "no XProf tools")
        views = tabs_of(p.mnt, run, len(runs))
        assert p.js(f"[...{row}.querySelectorAll('.offers a')].map(a => a.href.split('/').pop())") == views
    p.shot("runs")
    # the search box filters by name and keeps the query in the URL
    p.js("(() => { const s = document.getElementById('run-search'); s.value = 'pytorch';"
         " s.dispatchEvent(new Event('input')); })()")
    visible = p.js("[...document.querySelectorAll('#runs tr.run')].filter(r => !r.hidden)"
                   ".map(r => r.dataset.run)")
    assert visible == [r for r in runs if "pytorch" in r]
    assert "q=pytorch" in p.js("location.hash")
    no_errors(p)


def resolve(doc, key):
    for part in key.split("."):
        if isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        elif isinstance(doc, dict) and part in doc:
            doc = doc[part]
        else:
            return None
    return doc


def check_overview(p, run, files):
    if "overview_page.json" in files:
        # the stacked step-time graph: a bar per step of XProf's per-step
        # table, one part per nonzero *TimeMs column but the step time
        table = p.json(run, "overview_page.json")[1]
        ids = [c["id"] for c in table["cols"]]
        parts = [c["label"] for i, c in enumerate(table["cols"]) if c["type"] == "number"
                 and c["id"].endswith("TimeMs") and c["id"] != "stepTimeMs"
                 and any(((r["c"][i] or {}).get("v") or 0) > 0 for r in table["rows"])]
        chart = "document.querySelector('#step-graph canvas.chart')"
        if table["rows"] and parts:
            assert p.js("document.querySelector('#step-graph .section-body').dataset.from") == \
                "overview_page.json"
            assert p.js(chart + ".dataset.bars") == str(len(table["rows"])), run
            assert json.loads(p.js(chart + ".dataset.series")) == parts, (run, ids)
    if "report.json" not in files:
        return
    rep = p.json(run, "report.json")
    shown = p.js("[...document.querySelectorAll('#view-overview [data-key][data-v]')]"
                 ".map(e => [e.dataset.key, +e.dataset.v])")
    checked = 0
    for key, v in shown:
        want = resolve(rep, key)
        if isinstance(want, (int, float)):
            assert math.isclose(v, want, rel_tol=1e-9, abs_tol=1e-9), (run, key, v, want)
            checked += 1
    assert checked >= len(rep.get("gpus", [])) * 2, (run, shown)
    for i, _ in enumerate(rep.get("gpus", [])):
        assert any(k == f"gpus.{i}.idle_pct" for k, _ in shown), run
    if rep.get("step_time_ms", {}).get("count"):
        assert any(k == "step_time_ms.mean" for k, _ in shown), run
        # the two step counts are told apart (XProf's step db, the Steps tab's)
        assert "XProf" in p.js("document.querySelector('.step-source').textContent"), run
    names = p.js("[...document.querySelectorAll('#top-ops-table tbody tr td:first-child')]"
                 ".map(td => td.textContent)")
    assert names == [o["name"] for o in rep.get("top_ops", [])[:10]], run
    if rep.get("bottleneck", {}).get("input_statement"):
        assert p.js("document.querySelector('[data-key=\"bottleneck.input_statement\"]')"
                    ".textContent") == rep["bottleneck"]["input_statement"]


def check_ops(p, run, files):
    if "hlo_stats.json" in files:
        hlo = p.json(run, "hlo_stats.json")
        n = p.js("document.querySelectorAll('#hlo-stats tbody tr').length")
        assert n == min(100, len(hlo["rows"])), run
        if hlo["rows"]:
            # click the first row: the HLO text of that op is shown
            name = p.js("document.querySelector('#hlo-stats tbody tr td:nth-child(4)').textContent")
            p.js("document.querySelector('#hlo-stats tbody tr').click()")
            ids = [c["id"] for c in hlo["cols"]]
            row = next(r for r in hlo["rows"] if r["c"][ids.index("hlo_op_name")]["v"] == name)
            text = row["c"][ids.index("hlo_op_expression")]["v"]
            assert p.js("document.getElementById('hlo-text').textContent").startswith(text)
    if "op_profile.json" in files:
        prof = p.json(run, "op_profile.json")
        root = prof["byProgramExcludeIdle"]
        top = [c["name"] for c in root.get("children", [])]
        shown = p.js("[...document.querySelectorAll('#op-profile .tree > .node > .kids > .node"
                     " > .node-row .label')].map(e => e.textContent)")
        assert shown == top, run
        assert int(p.js("document.querySelector('#op-profile .node-row .num').dataset.v")) == \
            root["metrics"]["rawTime"]
    if "roofline_model.json" in files:
        t = p.json(run, "roofline_model.json")[0]
        ids = [c["id"] for c in t["cols"]]
        col = lambda r, k: r["c"][ids.index(k)]["v"]  # noqa: E731
        want = sum(1 for r in t["rows"] if col(r, "step") == "Total"
                   and col(r, "include_infeed_outfeed") is not False
                   and col(r, "category") != "Program"
                   and col(r, "operational_intensity") > 0 and col(r, "measured_flop_rate") > 0)
        drawn = p.js("(() => { const c = document.querySelector('#roofline canvas');"
                     " return c ? +c.dataset.points : 0; })()")
        assert drawn == want, run


def check_steps(p, run, files):
    if "steps.json" in files:
        steps = p.json(run, "steps.json")
        depth0 = [r for r in steps["rows"] if r["depth"] == 0]
        if steps["rows"]:
            assert p.js("document.querySelector('#steps .section-body').dataset.steps") == \
                str(len(depth0))
        for h in steps["hosts"]:
            if h.get("reason"):
                assert h["reason"] in p.js("document.querySelector('#steps').textContent")
    if "regions.json" in files:
        regions = p.json(run, "regions.json")["rows"]
        if regions:
            top = max(regions, key=lambda r: r["self_total_us"])
            assert float(p.js("document.querySelector('[data-key=\"regions.top.self_total_us\"]')"
                              ".dataset.v")) == top["self_total_us"]
            assert p.js("document.querySelectorAll('#regions tbody tr').length") == \
                min(100, len(regions))


def check_gpu(p, run, files):
    if "gpu_devices.csv" in files:
        rows = p.csv_rows(run, "gpu_devices.csv")
        assert p.js("document.querySelector('#gpu-devices .section-body').dataset.rows") == \
            str(len(rows))
        busy = p.js("[...document.querySelectorAll('#gpu-devices tbody tr')].map(tr =>"
                    " +tr.children[7].dataset.v)")
        assert busy == [float(r["busy_ms"]) for r in rows], run
    if "kernel_launchers_summary.csv" in files:
        rows = p.csv_rows(run, "kernel_launchers_summary.csv")
        names = p.js("[...document.querySelectorAll('#launchers-summary tbody tr')]"
                     ".map(tr => tr.children[0].textContent)")
        assert names == [r["name"] for r in rows][:50], run


def check_pytorch(p, run, files):
    if "modules.txt" in files:
        lines = [ln for ln in p.read(run, "modules.txt").decode().splitlines() if "UID: " in ln]
        assert p.js("document.querySelector('#modules .section-body').dataset.nodes") == \
            str(len(lines))
    if "call_tree.txt" in files:
        text = p.read(run, "call_tree.txt").decode()
        kernels = [ln for ln in text.splitlines() if "Category: kernel" in ln]
        assert p.js("document.querySelector('#call-tree .section-body').dataset.kernels") == \
            str(len(kernels))
        if kernels:
            p.b.wait("document.getElementById('call-path').dataset.uid", 20)
            uid = p.js("document.getElementById('call-path').dataset.uid")
            want = p.read(run, f"call_tree.txt?parents_of={uid}").decode()
            assert p.js("document.getElementById('call-path').textContent") == want
    if "roofline.csv" in files:
        rows = p.csv_rows(run, "roofline.csv")
        if rows:
            assert p.js("document.querySelector('#pt-roofline .section-body').dataset.rows") == \
                str(len(rows))


def check_memory(p, run, files):
    if "memory_profile.json" in files:
        prof = p.json(run, "memory_profile.json")
        first = prof["memoryIds"][0] if prof.get("memoryIds") else None
        if first:
            want = prof["memoryProfilePerAllocator"][first]["profileSummary"]["peakStats"]
            assert p.js("document.querySelector('#memory-profile [data-key=peakBytesInUse]')"
                        ".dataset.v") == want["peakBytesInUse"]
    if "memory_viewer.json" in files and "module_list.json" in files:
        mods = p.json(run, "module_list.json")
        if mods:
            p.b.wait("document.querySelector('#memory-viewer [data-key=peakHeapMib]')", 30)
            mod = p.js("document.getElementById('memory-module').value")
            q = urllib.parse.quote(mod, safe="")
            want = p.json(run, f"memory_viewer.json?module_name={q}")
            assert float(p.js("document.querySelector('#memory-viewer [data-key=peakHeapMib]')"
                              ".dataset.v")) == want["peakHeapMib"]


def nearest_run(run, others):
    """The default base: the other run sharing the longest name prefix (first on ties)."""
    return max(others, key=lambda o: (len(os.path.commonprefix([run, o])), -others.index(o)))


def check_compare(p, run, files, expect_base=None):
    if expect_base is None:  # opened without a base: the page picks the nearest
        expect_base = nearest_run(run, [r for r in mount_runs(p.mnt) if r != run])
    top = "document.querySelector('#compare .section-body')"
    p.b.wait(top + ".dataset.state", 60)
    base = p.js(top + ".dataset.base")
    frag = p.js("location.hash")
    asked = dict(urllib.parse.parse_qsl(frag.split("?", 1)[1] if "?" in frag else ""))
    assert asked.get("base") == base, (run, base, frag)  # the fragment names the base shown
    if expect_base is not None:
        assert base == expect_base, (run, base, expect_base)
    name = "compare.json?base=" + urllib.parse.quote(base, safe="")
    try:
        c = p.json(run, name)
    except OSError:
        # refused: the page says why in one line, the line errors.txt holds
        text = p.js(top + ".querySelector('.why').textContent")
        log = p.read(run, "errors.txt").decode()
        assert text and text in log, (run, base, text)
        return None
    assert p.js(top + ".dataset.state") == "ready", run
    assert p.js("document.getElementById('compare-verdict').textContent") == c["verdict"]
    st = c["step_time_us"]
    for side in ("base", "run"):
        for k, v in st[side].items():
            sel = f"#compare-steps [data-key=\"step_time_us.{side}.{k}\"]"
            if v is None:
                assert p.js(f"document.querySelector('{sel}')") is None
            else:
                assert float(p.js(f"document.querySelector('{sel}').dataset.v")) == v, (run, k)
    if c["region_changed_most"]:
        m = c["region_changed_most"]
        assert float(p.js("document.querySelector('[data-key=\"region_changed_most.self_per_step_us\"]')"
                          ".dataset.v")) == m["self_per_step_us"]
    for key, sec in (("regions", "compare-regions"), ("ops", "compare-ops"),
                     ("kernels", "compare-kernels"), ("gpus", "compare-gpus")):
        body = f"document.querySelector('#{sec} .section-body')"
        assert p.js(body + ".dataset.rows") == str(len(c[key])), (run, key)
        cells = p.js(f"[...{body}.querySelectorAll('tbody tr')].map(tr => [...tr.children]"
                     ".map(td => td.dataset.v !== undefined ? +td.dataset.v : td.textContent))")
        assert len(cells) == min(50, len(c[key])), (run, key)
        heads = p.js(f"[...{body}.querySelectorAll('thead th')].map(th => th.title)")
        for row, got in zip(c[key], cells):
            flat = {}
            for k, v in row.items():
                if isinstance(v, dict):
                    flat.update({f"{k}.{kk}": vv for kk, vv in v.items()})
                else:
                    flat[k] = v
            for h, g in zip(heads, got):
                w = flat.get(h)  # a GPU of one run only has no other side
                if isinstance(w, (int, float)) and not isinstance(w, bool):
                    assert g == w, (run, key, h, g, w)
                elif isinstance(w, str):
                    assert g == w, (run, key, h, g, w)
    assert p.js("[...document.querySelectorAll('#compare-warnings li')].map(l => l.textContent)") \
        == c["warnings"]
    return c


CHECKS = {"overview": check_overview, "ops": check_ops, "steps": check_steps,
          "gpu": check_gpu, "pytorch": check_pytorch, "memory": check_memory,
          "compare": check_compare}


# The page's box and what lies on the tab bar, from the top of the page:
# [scrollWidth, clientWidth, innerWidth, [elements over the tab bar]].
FIT_JS = """(() => {
  window.scrollTo(0, 0);
  const d = document.documentElement;
  const nav = document.getElementById('tabs');
  const over = [];
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  if (nav) {
    const r = nav.getBoundingClientRect();
    /* the topmost element at points across the bar and on every tab is the bar's */
    const pts = [];
    for (let x = r.left + 1; x < r.right - 1; x += 24) pts.push([x, r.top + r.height / 2]);
    nav.querySelectorAll('a').forEach(a => {
      const b = a.getBoundingClientRect();
      pts.push([b.left + 2, b.top + 2], [b.left + b.width / 2, b.top + b.height / 2], [b.right - 2, b.bottom - 2]);
    });
    pts.forEach(([x, y]) => {
      const e = document.elementFromPoint(x, y);
      if (e && !nav.contains(e) && !e.contains(nav)) over.push(name(e) + ' at ' + Math.round(x) + ',' + Math.round(y));
    });
    /* and no element of the view starts above the bar's bottom */
    const view = document.querySelector('main .view');
    if (view) view.querySelectorAll('*').forEach(e => {
      const b = e.getBoundingClientRect();
      if (b.width > 0 && b.height > 0 && b.top < r.bottom - 0.5 && b.bottom > r.top &&
          b.left < r.right && b.right > r.left) over.push(name(e) + ' top ' + b.top);
    });
  }
  return [d.scrollWidth, d.clientWidth, window.innerWidth, over.slice(0, 20)];
})()"""


def check_fits(p, run, tab):
    """No sideways scroll of the page, nothing over the tab bar."""
    sw, cw, iw, over = p.js(FIT_JS)
    assert sw <= cw <= iw, (run, tab, sw, cw, iw)
    assert over == [], (run, tab, over)


@pytest.mark.parametrize("size", [(1366, 768), (1280, 720)], ids=["1366x768", "1280x720"])
def test_laptop_screens(page, size):
    """Every view of every run on a laptop screen: the page is no wider
    than the window and nothing overlaps the tab bar."""
    p = page
    runs = mount_runs(p.mnt)
    p.b.set_viewport(*size)
    try:
        assert p.js("window.innerWidth") == size[0]
        for run in runs:
            for tab in tabs_of(p.mnt, run, len(runs)):
                p.open(run, tab)
                if tab == "trace":
                    p.b.wait("['ready', 'empty', 'unavailable'].includes(document.querySelector("
                             "'#timeline .section-body').dataset.state)", 60)
                if tab == "compare":
                    p.b.wait("document.querySelector('#compare .section-body').dataset.state", 60)
                check_fits(p, run, tab)
            p.shot(f"{size[0]}x{size[1]}-{run}")
        # the trace with an event's details, its HLO op and a search listed
        p.open(TRACE_RUN, "trace", "q=Cijk")
        p.b.wait("document.querySelector('#search-results .section-body').dataset.state === 'ready'", 30)
        p.js("document.querySelector('#search-results .hit').click()")
        p.b.wait("document.getElementById('event-hlo') && "
                 "document.getElementById('event-hlo').dataset.state === 'ready'", 30)
        check_fits(p, TRACE_RUN, "trace with details")
        p.shot(f"{size[0]}x{size[1]}-trace-details")
        # the runs page too
        p.open()
        sw, cw, iw, _ = p.js(FIT_JS)
        assert sw <= cw <= iw, ("runs", sw, cw, iw)
    finally:
        p.b.set_viewport(1280, 900)
    no_errors(p)


def test_every_view_of_every_run(page):
    p = page
    runs = mount_runs(p.mnt)
    for run in runs:
        files = plain_files(p.mnt, run)
        tabs = tabs_of(p.mnt, run, len(runs))
        p.open(run)
        assert p.js("[...document.querySelectorAll('#tabs a')].map(a => a.dataset.tab)") == tabs
        for tab in tabs:
            p.open(run, tab)
            # every header link names a file of the run (or of one of its hosts)
            links = p.js(f"[...document.querySelectorAll('#view-{tab} a[data-file]')]"
                         ".map(a => a.dataset.file)")
            if tab == "compare":  # found by lookup only: with the base the page chose
                p.b.wait("document.querySelector('#compare .section-body').dataset.state", 60)
                base = p.js("document.querySelector('#compare .section-body').dataset.base")
                links = [f + "?base=" + urllib.parse.quote(base, safe="") for f in links]
                if p.js("document.querySelector('#compare .section-body').dataset.state") \
                        == "error":
                    links = []  # refused: check_compare reads the reason
            assert all((p.mnt / run / f).is_file() for f in links), (run, tab, links)
            if tab == "trace":
                p.b.wait("['ready', 'empty'].includes(document.querySelector("
                         "'#timeline .section-body').dataset.state)", 60)
            if tab in CHECKS:
                CHECKS[tab](p, run, files)
            # a section with nothing to show says why in one line; a reason
            # worded as errors.txt's lines ("file: why") is one of its lines
            notes = p.js(f"[...document.querySelectorAll('#view-{tab} .na')].map(e => e.textContent)")
            log = p.read(run, "errors.txt").decode() if "errors.txt" in files else ""
            for text in notes:
                assert text.strip() and "\n" not in text and len(text) < 1000, (run, tab, text)
                if re.match(r"^[\w.]+\.(json|csv|txt)[?:]", text):
                    assert text in log, (run, tab, text)
            # at 1280 px nothing is wider than the window (no sideways scroll)
            # and nothing lies over the tab bar
            assert p.js("document.documentElement.scrollWidth") <= 1280, (run, tab)
            check_fits(p, run, tab)
            p.shot(f"{run}-{tab}")
        assert p.b.errors() == [], run
    no_errors(p)


def trace_file(p, url, run=TRACE_RUN):
    """The mount file a /data?run=&tag=trace_viewer@&... URL of the page reads."""
    q = urllib.parse.parse_qsl(urllib.parse.urlparse(url).query)
    rest = [(k, v) for k, v in q if k not in ("run", "tag")]
    name = "trace_viewer.json" + ("?" + urllib.parse.urlencode(rest, quote_via=urllib.parse.quote)
                                  if rest else "")
    return json.loads(p.read(run, name))


def test_trace_search_details_zoom_and_url(page):
    p = page
    b = p.b
    p.open(TRACE_RUN, "trace")
    tl = "document.querySelector('#timeline .section-body')"
    b.wait(tl + ".dataset.state === 'ready'", 60)
    # search by prefix: the results are the file's events
    b.eval("(() => { const s = document.getElementById('trace-search'); s.value = 'Cijk';"
           " s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()")
    res = "document.querySelector('#search-results .section-body')"
    b.wait(res + ".dataset.state === 'ready'", 30)
    found = [e for e in json.loads(p.read(TRACE_RUN, "trace_viewer.json?search_prefix=Cijk"))
             ["traceEvents"] if e["ph"] == "X"]
    assert found and all(e["name"].startswith("Cijk") for e in found)
    assert b.eval(res + ".dataset.count") == str(len(found))
    names = b.eval("[...document.querySelectorAll('#search-results .hit')].map(h => h.dataset.name)")
    assert sorted(names) == sorted(e["name"] for e in found)
    # a result jumps there and shows the event's details: every arg of the file's answer
    b.eval("document.querySelector('#search-results .hit').click()")
    det = "document.querySelector('#event-details .section-body')"
    b.wait(det + ".dataset.state === 'ready'", 30)
    # the details request (or, for names too long for a file name, a search
    # with full args) as the page sent it, read from the mount
    url = b.eval(det + ".dataset.url")
    assert "event_name=" in url or "search_metadata=1" in url
    ts, dur = b.eval(f"[{tl}.xpTimeline.selected.ts, {tl}.xpTimeline.selected.dur]")
    event = [e for e in trace_file(p, url)["traceEvents"] if e["ph"] != "M"
             and abs(e["ts"] - ts) < 1e-3 and abs(e["dur"] - dur) < 1e-3][0]
    shown = b.eval("[...document.querySelectorAll('#event-details dl.args dt')].map(d => d.textContent)")
    assert shown == list(event["args"]) and shown
    values = b.eval("[...document.querySelectorAll('#event-details dl.args dd')].map(d => d.textContent)")
    for k, v in zip(shown, values):
        if isinstance(event["args"][k], str):
            assert v == event["args"][k]
    b.wait(tl + ".dataset.windows >= 1", 30)  # the jump asked for its window
    assert any("start_time_ms=" in u and "end_time_ms=" in u and "resolution=" in u
               for u in b.requested_urls())
    p.shot("trace-search")
    # a click on an event on the canvas shows its details
    sel = b.eval(tl + ".xpTimeline.selected.name")
    b.eval(f"{tl}.xpTimeline.select(null, null)")
    where = (f"(() => {{ const t = {tl}.xpTimeline; const e = t.tracks.flatMap(x => x.events)"
             f".find(e => e.name === {json.dumps(sel)} && e.ts + e.dur > t.view.start"
             " && e.ts < t.view.end); return t.pointOf(e); })()")
    pt = b.eval(where)
    b.eval(f"window.scrollBy(0, {pt['y']} - 300)")
    pt = b.eval(where)
    b.click(pt["x"], pt["y"])
    b.wait(tl + f".dataset.selected === {json.dumps(sel)}", 10)
    b.wait(det + ".dataset.state === 'ready'", 30)
    assert b.eval("document.querySelector('#event-details .ev-name').textContent") == sel
    # keys: W zooms in, S out, D pans; each new view asks for its window
    view = lambda: b.eval(f"[{tl}.xpTimeline.view.start, {tl}.xpTimeline.view.end]")  # noqa: E731
    before = view()
    b.eval("document.querySelector('#timeline canvas.tl-canvas').focus()")
    requests = int(b.eval(tl + ".dataset.requests"))
    b.key("w")
    after = view()
    assert after[1] - after[0] < before[1] - before[0]
    b.key("d")
    assert view()[0] > after[0]
    b.wait(tl + f".dataset.requests > {requests}", 10)
    b.wait(tl + f".dataset.windows >= {b.eval(tl + '.dataset.requests')}", 30)
    # shift+drag measures a span
    box = b.eval("(() => { const r = document.querySelector('#timeline canvas.tl-canvas')"
                 ".getBoundingClientRect(); return [r.left, r.top, r.width]; })()")
    b.drag(box[0] + 300, box[1] + 20, box[0] + 500, box[1] + 20, modifiers=8)
    span = float(b.eval(tl + ".dataset.measure"))
    v = view()
    plot_w = b.eval(f"{tl}.xpTimeline.plotWidth()")
    assert math.isclose(span, 200 / plot_w * (v[1] - v[0]), rel_tol=0.05)
    assert "measured" in b.eval("document.getElementById('measure').textContent")
    time.sleep(0.5)  # the fragment follows the view after 300 ms
    frag = b.eval("location.hash")
    params = dict(urllib.parse.parse_qsl(frag.split("?", 1)[1]))
    assert {"start", "end", "sel", "name", "span", "q"} <= set(params), frag
    p.shot("trace-measure")
    # the URL is shareable: opened afresh, it shows the same window, selection and search
    b.goto("about:blank")
    b.goto(p.base + frag)
    b.wait(f"document.body.dataset.loaded === {json.dumps(TRACE_RUN)}", 60)
    b.wait(tl + ".dataset.state === 'ready'", 60)
    v2 = view()
    assert math.isclose(v2[0], float(params["start"]) * 1000, rel_tol=1e-6)
    assert math.isclose(v2[1], float(params["end"]) * 1000, rel_tol=1e-6)
    assert b.eval(tl + ".dataset.selected") == params["name"]
    b.wait(det + ".dataset.state === 'ready'", 30)
    b.wait(res + ".dataset.state === 'ready'", 30)
    assert b.eval(tl + ".dataset.measure")
    no_errors(p)


def test_trace_details_of_a_pytorch_op(page):
    """A PyTorch trace's times have sub-nanosecond digits: the details
    request names the event's start to the picosecond, so a CPU op found by
    a search shows its args (a start rounded to the ns matched no event)."""
    p = page
    b = p.b
    run = "pytorch/h100_bert_small"
    p.open(run, "trace")
    tl = "document.querySelector('#timeline .section-body')"
    b.wait(tl + ".dataset.state === 'ready'", 60)
    b.eval("(() => { const s = document.getElementById('trace-search'); s.value = 'aten::addmm';"
           " s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()")
    res = "document.querySelector('#search-results .section-body')"
    b.wait(res + ".dataset.state === 'ready'", 30)
    b.eval("document.querySelector('#search-results .hit').click()")
    det = "document.querySelector('#event-details .section-body')"
    b.wait(det + ".dataset.state === 'ready'", 30)
    url = b.eval(det + ".dataset.url")
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))
    assert q["event_name"] == "aten::addmm" and "." in q["start_time_ms"], url
    events = [e for e in trace_file(p, url, run)["traceEvents"] if e["ph"] != "M"]
    assert len(events) == 1 and events[0]["name"] == "aten::addmm", events
    shown = b.eval("[...document.querySelectorAll('#event-details dl.args dt')].map(d => d.textContent)")
    assert shown == list(events[0]["args"]) and len(shown) > 1, shown
    no_errors(p)


def html_text(s):
    """The text of hlo_stats' source_info cell (HTML-escaped, tags dropped)."""
    import html
    return html.unescape(re.sub(r"<[^>]*>", "", s)).strip()


def hlo_source(p, run, op, module):
    """What the files hold about HLO op of module: (program id, source
    file:line and stack of hlo_stats.json, file:line of op_profile.json)."""
    ids = [m.group(2) for n in p.json(run, "module_list.json")
           for m in [re.match(r"^(.*)\((\d+)\)$", n)] if m and m.group(1) == module]
    hlo = p.json(run, "hlo_stats.json")
    cols = [c["id"] for c in hlo["cols"]]
    col = lambda r, k: r["c"][cols.index(k)]["v"]  # noqa: E731
    rows = [r for r in hlo["rows"] if col(r, "hlo_op_name") == op and str(col(r, "program_id")) in ids]
    assert rows, (run, op, module)
    cell = col(rows[0], "source_info")
    title = re.search(r"title='([^']*)'", cell)
    program = str(col(rows[0], "program_id"))
    found = []

    def walk(n, under):
        if n.get("name") == op and under and (n.get("xla") or {}).get("sourceInfo"):
            si = n["xla"]["sourceInfo"]
            found.append(f"{si['fileName']}:{si['lineNumber']}")
        for k in n.get("children", []):
            walk(k, under or k.get("name") == f"{module}({program})")
    walk(p.json(run, "op_profile.json")["byProgram"], False)
    return program, html_text(cell), html_text(title.group(1)) if title else "", found


def test_trace_details_show_hlo_op_and_source(page):
    """A click on a kernel of a JAX run with HLO protos: the details panel
    names the kernel's HLO op and module and the op's source file:line and
    stack, as hlo_stats.json and op_profile.json hold them."""
    p = page
    b = p.b
    tl = "document.querySelector('#timeline .section-body')"
    det = "document.querySelector('#event-details .section-body')"
    for run, prefix in ((TRACE_RUN, "Cijk"), ("jax08_gemm_rocm/s1", "Cijk")):
        if not (p.mnt / run).is_dir():
            continue
        p.open(run, "trace", "q=" + prefix)
        b.wait(tl + ".dataset.state === 'ready'", 60)
        res = "document.querySelector('#search-results .section-body')"
        b.wait(res + ".dataset.state === 'ready'", 30)
        b.eval("document.querySelector('#search-results .hit').click()")
        b.wait(det + ".dataset.state === 'ready'", 30)
        time.sleep(0.4)  # the jump's window is asked for after 250 ms: let it come
        b.wait(tl + ".querySelectorAll('.tl-progress .progress').length === 0", 30)
        sel = b.eval(tl + ".xpTimeline.selected.name")
        ts = b.eval(tl + ".xpTimeline.selected.ts")
        # now click it on the canvas, as a person would
        b.eval(f"{tl}.xpTimeline.select(null, null)")
        where = (f"(() => {{ const t = {tl}.xpTimeline; const e = t.tracks.flatMap(x => x.events)"
                 f".find(e => e.name === {json.dumps(sel)} && e.ts === {ts}); return t.pointOf(e); }})()")
        pt = b.eval(where)
        b.eval(f"window.scrollBy(0, {pt['y']} - 300)")
        pt = b.eval(where)
        b.click(pt["x"], pt["y"])
        b.wait(tl + f".dataset.selected === {json.dumps(sel)}", 10)
        b.wait(det + ".dataset.state === 'ready'", 30)
        hlo = "document.getElementById('event-hlo')"
        b.wait(f"{hlo} && {hlo}.dataset.state === 'ready'", 30)
        url = b.eval(det + ".dataset.url")
        q = [(k, v) for k, v in urllib.parse.parse_qsl(urllib.parse.urlparse(url).query)
             if k not in ("run", "tag")]
        doc = json.loads(p.read(run, "trace_viewer.json?" + urllib.parse.urlencode(
            q, quote_via=urllib.parse.quote)))
        event = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"] == sel
                 and abs(e["ts"] - ts) < 1e-3][0]
        op, module = event["args"]["hlo_op"], event["args"]["hlo_module"]
        shown = lambda k: b.eval(f"{hlo}.querySelector('[data-key={k}]').textContent")  # noqa: E731
        assert shown("hlo_op") == op, run
        program, line, stack, from_profile = hlo_source(p, run, op, module)
        assert shown("hlo_module") == f"{module}({program})", run
        assert re.match(r"^.+\.py:\d+$", line), (run, line)
        assert shown("source") == line, run
        assert line in from_profile, (run, line, from_profile)
        assert b.eval(f"{hlo}.querySelector('pre.stack').textContent") == stack
        assert stack.startswith(line), (run, stack)
        p.shot(f"{run}-trace-hlo-details")
    no_errors(p)


def test_host_selector_reads_one_host(page):
    """A run of two hosts: the trace's host choice asks for hosts=H."""
    p = page
    run = next((r for r in mount_runs(p.mnt) if len(p.json(r, "hosts.json")) > 1), None)
    if run is None:
        pytest.skip("no corpus run has two hosts")
    p.open(run, "trace")
    host = p.json(run, "hosts.json")[1]["hostname"]
    p.js(f"(() => {{ const s = document.getElementById('trace-host'); s.value = {json.dumps(host)};"
         " s.dispatchEvent(new Event('change')); })()")
    p.b.wait("document.querySelector('#timeline .section-body').dataset.state === 'ready'", 60)
    assert any("hosts=" + urllib.parse.quote(host) in u for u in p.b.requested_urls())
    assert "host=" + host in urllib.parse.unquote(p.js("location.hash"))
    no_errors(p)


def test_compare_shareable_and_refused(page):
    """#/run/B/compare?base=A opens that pair; a base that is no run says why."""
    p = page
    runs = mount_runs(p.mnt)
    run = "pytorch/h100_bert_small"
    if run not in runs:
        pytest.skip(f"{run} not in the corpus")
    base = "pytorch/mi300_qwen_0.5b"
    p.open(run, "compare", "base=" + urllib.parse.quote(base, safe=""))
    c = check_compare(p, run, None, expect_base=base)
    assert c and c["base"] == base and c["regions"], base
    assert p.js("document.getElementById('compare-base').value") == base
    p.shot("compare-shared")
    # the base list: a change asks for the new pair and keeps it in the URL
    other = "pytorch/b200_eager"
    p.js(f"(() => {{ const s = document.getElementById('compare-base'); s.value = {json.dumps(other)};"
         " s.dispatchEvent(new Event('change')); })()")
    p.b.wait("document.querySelector('#compare .section-body').dataset.base === "
             f"{json.dumps(other)} && document.querySelector('#compare .section-body').dataset.state", 60)
    check_compare(p, run, None, expect_base=other)
    # swap: B becomes the base of A
    href = p.js("document.getElementById('compare-swap').getAttribute('href')")
    assert href == "#/run/" + urllib.parse.quote(other, safe="") + "/compare?base=" + \
        urllib.parse.quote(run, safe=""), href
    # a base that is no run: the reason errors.txt gives, in one line
    p.open(run, "compare", "base=no-such-run")
    top = "document.querySelector('#compare .section-body')"
    assert p.js(top + ".dataset.state") == "error"
    text = p.js(top + ".querySelector('.why').textContent")
    assert "base=no-such-run: no run of that name" in text, text
    assert text in p.read(run, "errors.txt").decode()
    # a 400 for the refused compare.json is expected; nothing else failed
    errs = [e for e in p.b.errors(allow=r"tag=compare&base=no-such-run")
            if "no-such-run" not in e[1]]
    assert errs == [], errs
    outside = [u for u in p.b.requested_urls() if not u.startswith(p.base)
               and not u.startswith("data:") and u != "about:blank"]
    assert outside == [], outside
    p.b.events.clear()  # the expected 400 is not an error of the tests after this one


def flow_arrows(doc):
    """The arrows of a trace answer: per bind_id, in time order, each
    flow_out event to the next flow_in event (XProf's v2 flow binding)."""
    ends = {}
    for e in doc["traceEvents"]:
        if e.get("ph") in ("X", "i", "I") and "bind_id" in e and \
                (e.get("flow_in") or e.get("flow_out")):
            ends.setdefault(e["bind_id"], []).append(e)
    arrows = []
    for chain in ends.values():
        chain.sort(key=lambda e: e["ts"])
        arrows += [(a, b) for a, b in zip(chain, chain[1:])
                   if a.get("flow_out") and b.get("flow_in")]
    return arrows


def check_flows_drawn(p, run, mnt):
    """The timeline of run links and draws every flow of its first answer."""
    b = p.b
    tl = "document.querySelector('#timeline .section-body')"
    b.wait(tl + ".dataset.state === 'ready'", 60)
    want = flow_arrows(json.loads((mnt / run / "trace_viewer.json?resolution=8000").read_bytes()))
    assert b.eval(tl + ".dataset.flows") == str(len(want)), run
    assert b.eval(tl + ".dataset.flowsDrawn") == str(len(want)), run  # the whole trace is shown
    return want


def test_trace_flows(page, tmp_path):
    """A generated profile with flows (launch -> kernel): the arrows are drawn,
    listed in the details panel and jump to their other end; a corpus run too."""
    p = page
    b = p.b
    synth = build_dir() / "xprofs-synth"
    if not synth.exists():
        pytest.skip(f"{synth} missing")
    logs = tmp_path / "logs"
    subprocess.run([str(synth), "--out", str(logs), "--run", "r1", "--scenario", "steps4",
                    "--seed", "1"], check=True, capture_output=True)
    with serve(logs, tmp_path) as (mnt, port):
        base = f"http://127.0.0.1:{port}/"
        b.eval("document.body && (document.body.dataset.loaded = '')")
        b.goto(base + "#/run/r1/trace")
        b.wait("document.body.dataset.loaded === 'r1' && document.body.dataset.tab === 'trace'", 60)
        want = check_flows_drawn(p, "r1", mnt)
        assert len(want) >= 10
        tl = "document.querySelector('#timeline .section-body')"
        # click the kernel an arrow ends at: the details list its flows
        src, dst = want[0]
        find = (f"{tl}.xpTimeline.tracks.flatMap(t => t.events).find(e => e.ts === {dst['ts']}"
                f" && e.name === {json.dumps(dst['name'])})")
        pt = b.eval(f"{tl}.xpTimeline.pointOf({find})")
        b.eval(f"window.scrollBy(0, {pt['y']} - 300)")
        pt = b.eval(f"{tl}.xpTimeline.pointOf({find})")
        b.click(pt["x"], pt["y"])
        b.wait(tl + f".dataset.selected === {json.dumps(dst['name'])}", 10)
        touching = [(a, c) for a, c in want if dst in (a, c)]
        det = "document.querySelector('#event-details .section-body')"
        b.wait(det + f".dataset.flows === '{len(touching)}'", 10)
        items = b.eval("[...document.querySelectorAll('#event-details ul.flows li')]"
                       ".map(li => [li.dataset.name, li.dataset.flow])")
        assert sorted(items) == sorted([(a if c is dst else c)["name"], str(a["bind_id"])]
                                       for a, c in touching)
        assert any(str(src["bind_id"]) == f for _, f in items)
        p.shot("trace-flows")
        # an item jumps to the other end
        b.eval(f"document.querySelector('#event-details ul.flows li[data-flow=\"{src['bind_id']}\"]')"
               ".click()")
        b.wait(tl + f".dataset.selected === {json.dumps(src['name'])}", 10)
        assert b.eval(f"{tl}.xpTimeline.selected.ts") == src["ts"]
        # the checkbox hides them
        b.eval("document.getElementById('tl-flows').click()")
        assert b.eval(tl + ".dataset.flowsDrawn") == "0"
        assert b.errors() == []
        outside = [u for u in b.requested_urls() if not u.startswith(base)
                   and not u.startswith(p.base) and not u.startswith("data:")
                   and u != "about:blank"]
        assert outside == [], outside
        b.goto("about:blank")
    b.events.clear()  # this test's server is not the corpus one the others check
    # a corpus run with flows (ROCm launches)
    p.open(TRACE_RUN, "trace")
    assert check_flows_drawn(p, TRACE_RUN, p.mnt)
    no_errors(p)


UNITS = {"s": 1e6, "ms": 1e3, "µs": 1.0, "ns": 1e-3}


def check_round_ticks(b):
    """The time axis labels are round multiples of its step, one step apart."""
    step = float(b.eval("document.querySelector('#timeline canvas.tl-axis').dataset.step"))
    labels = json.loads(b.eval("document.querySelector('#timeline canvas.tl-axis').dataset.ticks"))
    assert len(labels) >= 3, labels
    vals = []
    for lab in labels:
        num, unit = lab.rsplit(" ", 1)
        vals.append(float(num.replace(",", "")) * UNITS[unit])
    for v in vals:
        assert abs(v / step - round(v / step)) < 1e-6, (labels, step)
    for a, c in zip(vals, vals[1:]):
        assert math.isclose(c - a, step, rel_tol=1e-6), (labels, step)
    assert round(step / 10 ** math.floor(math.log10(step) + 1e-9), 6) in (1, 2, 5), step  # 1-2-5
    return labels


def test_trace_axis_ticks_and_dense_flows(page):
    """Zoomed out, the arrows of a corpus run are thinned to one per few
    pixels (the note says so); zoomed in on one they are all drawn; the
    axis labels round values at every zoom ("1,646.2 ms", not "999.977 ms")."""
    p = page
    b = p.b
    p.open(TRACE_RUN, "trace")
    tl = "document.querySelector('#timeline .section-body')"
    want = check_flows_drawn(p, TRACE_RUN, p.mnt)
    painted = int(b.eval(tl + ".dataset.flowsPainted"))
    width = b.eval(f"{tl}.xpTimeline.plotWidth()")
    assert painted <= max(60, round(width / 4)) and painted < len(want), (painted, len(want))
    assert b.eval("document.querySelector('.tl-flow-note').textContent") == \
        f"{painted} of {len(want)} arrows drawn: zoom in for all"
    check_round_ticks(b)
    p.shot("trace-flows-thinned")
    # a view that starts at an odd time: still round ticks
    full = b.eval(f"[{tl}.xpTimeline.full.start, {tl}.xpTimeline.full.end]")
    for start, span in ((999977.3, 1234.5), (12.345, 0.777), (full[1] - full[0] - 3e5, 2.5e5)):
        b.eval(f"{tl}.xpTimeline.setView({full[0] + start}, {full[0] + start + span})")
        check_round_ticks(b)
    # zoomed in on one arrow's ends: every arrow in view is drawn
    a, c = want[len(want) // 2]
    lo, hi = min(a["ts"], c["ts"]), max(a["ts"] + a.get("dur", 0), c["ts"] + c.get("dur", 0))
    b.eval(f"{tl}.xpTimeline.setView({lo - 1}, {hi + 1})")
    assert b.eval(tl + ".dataset.flowsPainted") == b.eval(tl + ".dataset.flowsDrawn")
    assert int(b.eval(tl + ".dataset.flowsDrawn")) >= 1
    assert b.eval("document.querySelector('.tl-flow-note').textContent") == ""
    p.shot("trace-flows-zoomed")
    no_errors(p)


def fresh(p, run, tab, query=""):
    """Opens the URL in a new document (no page cache), as a shared link is."""
    p.b.goto("about:blank")
    p.b.wait("location.href === 'about:blank'", 30)
    p.open(run, tab, query)


def test_views_keep_their_choices_in_the_url(page):
    """Op profile grouping and idle, the memory viewer's module: a copied URL
    opens the same view, with the numbers of the file that choice reads."""
    p = page
    run = TRACE_RUN
    p.open(run, "ops")
    p.js("(() => { const s = document.getElementById('op-group'); s.value = 'category';"
         " s.dispatchEvent(new Event('change')); document.getElementById('op-idle').click(); })()")
    p.b.wait("document.querySelector('#op-profile .section-body').dataset.key === 'byCategory'", 30)
    frag = p.js("location.hash")
    assert "group=category" in frag and "idle=1" in frag, frag
    fresh(p, run, "ops", frag.split("?", 1)[1])
    p.b.wait("document.querySelector('#op-profile .section-body').dataset.key === 'byCategory'", 30)
    assert p.js("document.getElementById('op-group').value") == "category"
    assert p.js("document.getElementById('op-idle').checked") is True
    root = p.json(run, "op_profile.json?group_by=category")["byCategory"]
    shown = p.js("[...document.querySelectorAll('#op-profile .tree > .node > .kids > .node"
                 " > .node-row .label')].map(e => e.textContent)")
    assert shown == [c["name"] for c in root.get("children", [])]
    # the HLO stats table's sort and filter
    p.open(run, "ops")
    hs = "document.querySelector('#hlo-stats .section-body')"
    p.b.wait("document.querySelectorAll('#hlo-stats tbody tr').length > 0", 30)
    p.js("(() => { const th = [...document.querySelectorAll('#hlo-stats thead th')]"
         ".find(t => t.title === 'occurrences'); th.click(); th.click(); })()")
    p.js("(() => { const f = document.querySelector('#hlo-stats input.filter'); f.value = 'fusion';"
         " f.dispatchEvent(new Event('input')); })()")
    frag = p.js("location.hash")
    assert "hsort=occurrences" in frag and "hdesc=0" in frag and "hfilter=fusion" in frag, frag
    fresh(p, run, "ops", frag.split("?", 1)[1])
    p.b.wait("document.querySelectorAll('#hlo-stats tbody tr').length > 0", 30)
    assert p.js(hs + ".dataset.sort") == "occurrences"
    assert p.js("document.querySelector('#hlo-stats input.filter').value") == "fusion"
    hlo = p.json(run, "hlo_stats.json")
    ids = [c["id"] for c in hlo["cols"]]
    col = lambda r, k: r["c"][ids.index(k)]["v"]  # noqa: E731
    want = [col(r, "hlo_op_name") for r in hlo["rows"]
            if any("fusion" in str((c or {}).get("v", "")).lower() for c in r["c"])]
    names = p.js("[...document.querySelectorAll('#hlo-stats tbody tr')].map(tr => tr.dataset.name"
                 " || tr.children[3].textContent)")
    assert sorted(names) == sorted(want), (names, want)
    occ = p.js("[...document.querySelectorAll('#hlo-stats tbody tr')]"
               ".map(tr => +tr.children[5].dataset.v)")
    assert occ == sorted(occ), occ
    # the memory viewer's module
    mods = p.json(run, "module_list.json")
    assert len(mods) > 1
    p.open(run, "memory")
    p.b.wait("document.querySelector('#memory-viewer [data-key=peakHeapMib]')", 30)
    p.js(f"(() => {{ const s = document.getElementById('memory-module'); s.value = {json.dumps(mods[0])};"
         " s.dispatchEvent(new Event('change')); })()")
    frag = p.js("location.hash")
    assert "module=" + urllib.parse.quote(mods[0], safe="") in frag or \
        "module=" + urllib.parse.quote_plus(mods[0]) in frag, frag
    fresh(p, run, "memory", frag.split("?", 1)[1])
    p.b.wait("document.querySelector('#memory-viewer [data-key=peakHeapMib]')", 30)
    assert p.js("document.getElementById('memory-module').value") == mods[0]
    want = p.json(run, "memory_viewer.json?module_name=" + urllib.parse.quote(mods[0], safe=""))
    assert float(p.js("document.querySelector('#memory-viewer [data-key=peakHeapMib]')"
                      ".dataset.v")) == want["peakHeapMib"]
    no_errors(p)


def choose(p, sel_id, value):
    p.js(f"(() => {{ const s = document.getElementById({json.dumps(sel_id)}); s.value = {json.dumps(value)};"
         " s.dispatchEvent(new Event('change')); })()")


def test_pytorch_choices_in_the_url(page):
    """The PyTorch tab's chosen kernel (call tree) and kernel launcher: a
    copied URL opens the same choices, with the text of the files they read."""
    p = page
    run = "pytorch/h100_bert_small"
    if run not in mount_runs(p.mnt):
        pytest.skip(f"{run} not in the corpus")
    p.open(run, "pytorch")
    p.b.wait("document.getElementById('call-path').dataset.uid && "
             "document.getElementById('launcher-subtree').dataset.uid", 30)
    kernels = p.js("[...document.querySelectorAll('#call-kernel option')].map(o => o.value)")
    launchers = p.js("[...document.querySelectorAll('#launcher-op option')].map(o => o.value)")
    rows = p.csv_rows(run, "kernel_launchers.csv")
    assert sorted(launchers) == sorted(r["UID"] for r in rows)
    assert len(kernels) > 2 and len(launchers) > 2
    kernel, launcher = kernels[2], launchers[-1]
    choose(p, "call-kernel", kernel)
    choose(p, "launcher-op", launcher)
    p.b.wait(f"document.getElementById('call-path').dataset.uid === {json.dumps(kernel)} && "
             f"document.getElementById('launcher-subtree').dataset.uid === {json.dumps(launcher)}", 30)
    frag = p.js("location.hash")
    params = dict(urllib.parse.parse_qsl(frag.split("?", 1)[1]))
    assert params.get("kernel") == kernel and params.get("launcher") == launcher, frag
    fresh(p, run, "pytorch", frag.split("?", 1)[1])
    p.b.wait(f"document.getElementById('call-path').dataset.uid === {json.dumps(kernel)} && "
             f"document.getElementById('launcher-subtree').dataset.uid === {json.dumps(launcher)}", 30)
    assert p.js("document.getElementById('call-kernel').value") == kernel
    assert p.js("document.getElementById('launcher-op').value") == launcher
    text = lambda i: p.js(f"document.getElementById({json.dumps(i)}).textContent")  # noqa: E731
    assert text("call-path") == p.read(run, f"call_tree.txt?parents_of={kernel}").decode()
    assert text("launcher-subtree") == p.read(run, f"call_tree.txt?uid={launcher}").decode()
    assert text("launcher-parents") == p.read(run, f"call_tree.txt?parents_of={launcher}").decode()
    row = next(r for r in rows if r["UID"] == launcher)
    assert p.js("document.querySelector('#pt-launchers [data-key=name]').textContent") == row["name"]
    assert f"UID: {launcher}," in text("launcher-subtree")
    p.shot("pytorch-shared")
    no_errors(p)


def test_memory_host_and_allocator_in_the_url(page):
    """A run of two hosts: the memory profile's host and allocator choices
    are in the URL; opened afresh it shows that host's file and allocator."""
    p = page
    run = next((r for r in mount_runs(p.mnt) if len(p.json(r, "hosts.json")) > 1
                and "memory_profile.json" not in plain_files(p.mnt, r)
                and all((p.mnt / r / "hosts" / h["hostname"] / "memory_profile.json").is_file()
                        for h in p.json(r, "hosts.json"))), None)
    if run is None:
        pytest.skip("no corpus run has a memory profile per host")
    hosts = sorted(h["hostname"] for h in p.json(run, "hosts.json"))
    host = hosts[1]
    p.open(run, "memory")
    mp = "document.querySelector('#memory-profile [data-key=peakBytesInUse]')"
    p.b.wait(mp, 30)
    assert p.js("document.getElementById('memory-host').value") == hosts[0]
    choose(p, "memory-host", host)
    link = "document.querySelector('#memory-profile a[data-file]').dataset.file"
    want_file = f"hosts/{host}/memory_profile.json"
    p.b.wait(f"{link} === {json.dumps(want_file)} && {mp}", 30)
    prof = json.loads((p.mnt / run / want_file).read_bytes())
    alloc = prof["memoryIds"][1]
    choose(p, "memory-allocator", alloc)
    frag = p.js("location.hash")
    params = dict(urllib.parse.parse_qsl(frag.split("?", 1)[1]))
    assert params.get("host") == host and params.get("allocator") == alloc, frag
    fresh(p, run, "memory", frag.split("?", 1)[1])
    p.b.wait(mp, 30)
    assert p.js("document.getElementById('memory-host').value") == host
    assert p.js("document.getElementById('memory-allocator').value") == alloc
    assert p.js(link) == want_file
    peak = prof["memoryProfilePerAllocator"][alloc]["profileSummary"]["peakStats"]["peakBytesInUse"]
    assert p.js(mp + ".dataset.v") == str(peak)
    p.shot("memory-shared")
    no_errors(p)


def test_long_loads_show_progress(page):
    """While the trace loads, a progress line gives the bytes so far and the
    seconds; it goes away once the timeline is drawn."""
    p = page
    p.b.goto("about:blank")
    p.b.wait("location.href === 'about:blank'", 30)
    p.open()  # a fresh document: nothing of the run in the page's cache
    p.js("(() => { window.seenProgress = []; new MutationObserver(() => {"
         " document.querySelectorAll('.progress').forEach(e => window.seenProgress.push(e.textContent));"
         " }).observe(document.body, {subtree: true, childList: true, characterData: true}); })()")
    p.js("location.hash = " + json.dumps("#/run/" + urllib.parse.quote(TRACE_RUN, safe="") + "/trace"))
    tl = "document.querySelector('#timeline .section-body')"
    p.b.wait(f"{tl} && {tl}.dataset.state === 'ready'", 60)
    seen = p.js("window.seenProgress")
    assert any(re.match(r"loading trace: [\d.]+ (B|KiB|MiB) in [\d.]+ s", t) for t in seen), seen
    assert p.js(f"{tl}.querySelectorAll('.progress').length") == 0
    no_errors(p)


SNAKE = re.compile(r"^[a-z0-9]+([_.][a-z0-9]+)+$")


def heads_of(p, sel):
    """[(id, header text)] of the table in sel: th.title holds the file's column id."""
    return [tuple(x) for x in p.js(f"[...document.querySelectorAll('{sel} thead th')]"
                                   ".map(th => [th.title, th.textContent])")]


def check_heads(heads, where):
    """No snake_case header; a unit suffix of the id shows as the unit."""
    assert heads, where
    for cid, text in heads:
        assert not SNAKE.match(text), (where, cid, text)
        last = cid.split(".")[-1]
        if re.search(r"(^|_)us(_|$)", last):
            assert "(µs)" in text, (where, cid, text)
        if re.search(r"(^|_)ms$", last):
            assert "(ms)" in text, (where, cid, text)
        if re.search(r"(^|_)(pct|share)(_|$)", last):
            assert "(%)" in text, (where, cid, text)


def check_number_cells(p, sel, where, percent_ids=()):
    """Numeric cells: data-v the raw value, the text it rounded (grouped
    thousands, at most 3 decimals but for tiny values; shares as percents)."""
    cells = p.js(f"(() => {{ const ids = [...document.querySelectorAll('{sel} thead th')].map(th => th.title);"
                 f" return [...document.querySelectorAll('{sel} tbody tr')].flatMap(tr => [...tr.children]"
                 ".map((td, i) => [ids[i], td.dataset.v, td.textContent])"
                 ".filter(x => x[1] !== undefined)); })()")
    assert cells, where
    for cid, raw, text in cells:
        v = float(raw)
        want = 100 * v if cid.split(".")[-1] in percent_ids else v
        got = float(text.replace(",", ""))
        frac = text.split(".")[1] if "." in text else ""
        assert len(frac) <= 3 or abs(want) < 0.01, (where, cid, raw, text)
        assert math.isclose(got, want, rel_tol=5e-3, abs_tol=0.051), (where, cid, raw, text)
        if abs(want) >= 10000:
            assert "," in text, (where, cid, raw, text)


def tick_values(labels, unit=None):
    vals = []
    for lab in labels:
        num = lab.split(" ")[0].rstrip("%")
        if unit:
            assert lab.endswith(unit), (labels, unit)
        vals.append(float(num.replace(",", "")))
    return vals


def check_round(labels, step, unit=None):
    """Tick labels: multiples of a 1-2-5 step, one step apart, no stray decimals."""
    vals = tick_values(labels, unit)
    assert len(vals) >= 2, labels
    assert round(step / 10 ** math.floor(math.log10(step) + 1e-9), 6) in (1, 2, 5), step
    for a, c in zip(vals, vals[1:]):
        assert math.isclose(c - a, step, rel_tol=1e-6), (labels, step)
    for v in vals:
        assert abs(v / step - round(v / step)) < 1e-6, (labels, step)


def test_tables_and_charts_read_as_a_person_would(page):
    """Issue 38's review: headers with units instead of snake_case ids,
    rounded numbers (raw values in data-v), lists as text, shares as
    percents, wide tables that keep their key columns in view, short
    trees, round chart ticks, labels inside the canvas, and the memory
    viewer's peak where the curve peaks."""
    p = page
    run = TRACE_RUN
    # Overview: the top ops of report.json
    p.open(run, "overview")
    rep = p.json(run, "report.json")
    check_heads(heads_of(p, "#top-ops-table"), "top ops")
    check_number_cells(p, "#top-ops-table", "top ops")
    heads = dict(heads_of(p, "#top-ops-table"))
    assert heads["self_us"] == "Self time (µs)"
    # a list (categories) reads as a comma list
    p.open("pytorch/b200_eager", "overview")
    top = p.json("pytorch/b200_eager", "report.json")["top_ops"][:10]
    if top and isinstance(top[0].get("categories"), list):
        ids = [h for h, _ in heads_of(p, "#top-ops-table")]
        col = ids.index("categories")
        got = p.js(f"[...document.querySelectorAll('#top-ops-table tbody tr')].map(tr => tr.children[{col}].textContent)")
        assert got == [", ".join(o["categories"]) for o in top]
    # the step graph (steps.json's are in µs) in the summary's unit, round ticks
    graphs = 0
    for r in mount_runs(p.mnt):
        if "report.json" not in plain_files(p.mnt, r):
            continue
        p.open(r, "overview")
        c = "document.querySelector('#step-graph canvas.chart')"
        if p.js(c + " !== null"):
            assert p.js("document.querySelector('#step-graph .section-body').dataset.unit") == "ms", r
            check_round(json.loads(p.js(c + ".dataset.ticks")), float(p.js(c + ".dataset.step")), "ms")
            graphs += 1
    assert graphs >= 2, graphs
    # GPU tab: gpu_devices.csv and TraceLens's launcher summary
    p.open(run, "gpu")
    heads = dict(heads_of(p, "#gpu-devices"))
    assert heads["computation_ms"] == "Computation (ms)"
    assert heads["exposed_memcpy_ms"] == "Exposed memcpy (ms)"
    check_heads(heads_of(p, "#gpu-devices"), "gpu devices")
    check_number_cells(p, "#gpu-devices", "gpu devices")
    assert dict(heads_of(p, "#launchers-summary"))["total_direct_kernel_time_sum"] == \
        "Direct kernel time, sum (µs)"
    c = "document.querySelector('#gpu-devices canvas.chart')"
    check_round(json.loads(p.js(c + ".dataset.ticks")), float(p.js(c + ".dataset.step")), "ms")
    # Steps and regions (a run with regions)
    p.open("tf_gpu_multiworker/s1", "steps")
    for sel in ("#steps", "#regions"):
        check_heads(heads_of(p, sel), sel)
        check_number_cells(p, sel, sel, percent_ids=("share_of_step_time",))
    assert dict(heads_of(p, "#regions"))["share_of_step_time"] == "Share of step time (%)"
    # Compare: shares of the change as percents
    p.open("jax08_gemm_rocm/s1", "compare", "base=" + urllib.parse.quote("jax08_conv_rocm/s1", safe=""))
    p.b.wait("document.querySelector('#compare .section-body').dataset.state", 60)
    cmp_ = p.json("jax08_gemm_rocm/s1", "compare.json?base=" + urllib.parse.quote("jax08_conv_rocm/s1", safe=""))
    if cmp_["ops"]:
        heads = dict(heads_of(p, "#compare-ops"))
        assert heads["share_of_change"] == "Share of change (%)"
        assert heads["base_us_per_step"] == "A (base) time per step (µs)"
        check_heads(heads_of(p, "#compare-ops"), "compare ops")
        check_number_cells(p, "#compare-ops", "compare ops", percent_ids=("share_of_change",))
    # Memory viewer: the peak marked where heapSizes peaks, round ticks in the canvas
    p.open(run, "memory", "module=" + urllib.parse.quote("jit_forward_3d_conv(15)", safe=""))
    p.b.wait("document.getElementById('heap-chart')", 30)
    mv = p.json(run, "memory_viewer.json?module_name=" + urllib.parse.quote("jit_forward_3d_conv(15)", safe=""))
    sizes = mv["heapSizes"]
    at = int(p.js("document.getElementById('heap-chart').dataset.peakAt"))
    assert sizes[at] == max(sizes), (at, sizes)
    hc = "document.getElementById('heap-chart')"
    check_round(json.loads(p.js(hc + ".dataset.yticks")), float(p.js(hc + ".dataset.ystep")), "MiB")
    check_round(json.loads(p.js(hc + ".dataset.xticks")), float(p.js(hc + ".dataset.xstep")))
    width = p.js(hc + ".clientWidth")
    assert all(0 <= a and b <= width for a, b in json.loads(p.js(hc + ".dataset.xboxes")))
    # the roofline: a y axis title, x labels inside the canvas
    p.open(run, "ops")
    rc = "document.querySelector('#roofline canvas')"
    if p.js(rc + " !== null"):
        assert p.js(rc + ".dataset.ytitle") == "FLOP rate (GFLOP/s)"
        width = p.js(rc + ".clientWidth")
        boxes = json.loads(p.js(rc + ".dataset.xboxes"))
        assert boxes and all(0 <= a and b <= width for a, b in boxes), (boxes, width)
    p.shot("readable-" + run)
    # PyTorch: launcher fields rounded, module tree short, roofline's key columns in view
    pt = "pytorch/b200_eager"
    p.open(pt, "pytorch")
    p.b.wait("document.querySelector('#pt-launchers [data-key=name]')", 30)
    dd = "document.querySelector('#pt-launchers [data-key=total_direct_kernel_time]')"
    if p.js(dd + " !== null"):
        raw, text = p.js(f"[{dd}.dataset.v, {dd}.textContent]")
        frac = text.split(".")[1] if "." in text else ""
        assert len(frac) <= 3 and math.isclose(float(text.replace(",", "")), float(raw), rel_tol=5e-3, abs_tol=0.051)
    assert "µs" in p.js("document.getElementById('call-path-units').textContent")
    shown = p.js("[...document.querySelectorAll('#modules .node-row:not(.tree-head)')]"
                 ".filter(r => r.offsetParent !== null).length")
    lines = [ln for ln in p.read(pt, "modules.txt").decode().splitlines() if "UID: " in ln]
    assert 1 <= shown <= 60 or shown == len([ln for ln in lines if ln.startswith(("├── ", "└── "))]), shown
    if p.js("document.querySelector('#pt-roofline table') !== null"):
        ids = [h for h, _ in heads_of(p, "#pt-roofline")]
        assert ids[0] == "name" and ids.index("Kernel Time (µs)") < 4, ids
        wrap = p.js("(() => { const w = document.querySelector('#pt-roofline .table-wrap').getBoundingClientRect();"
                    " const th = [...document.querySelectorAll('#pt-roofline thead th')]"
                    ".find(t => t.title === 'TFLOPS/s').getBoundingClientRect(); return [w.right, th.right]; })()")
        assert wrap[1] <= wrap[0] + 1, wrap
        assert p.js("getComputedStyle(document.querySelector('#pt-roofline tbody td')).position") == "sticky"
    p.shot("readable-" + pt)
    # the trace's details of a search hit: capped, with their own scroll
    p.open(run, "trace", "q=Cijk")
    p.b.wait("document.querySelector('#search-results .section-body').dataset.state === 'ready'", 30)
    p.js("document.querySelector('#search-results .hit').click()")
    p.b.wait("document.getElementById('event-hlo') && "
             "document.getElementById('event-hlo').dataset.state === 'ready'", 30)
    h, ih, ov = p.js("(() => { const b = document.querySelector('#event-details .section-body');"
                     " return [b.getBoundingClientRect().height, innerHeight, getComputedStyle(b).overflowY]; })()")
    assert h <= 0.7 * ih + 1 and ov == "auto", (h, ih, ov)
    no_errors(p)
