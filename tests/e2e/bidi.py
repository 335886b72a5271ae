"""A headless Firefox driven over WebDriver BiDi (python stdlib only).

The same methods as cdp.Browser (eval, wait, goto, screenshot, set_viewport,
click, drag, key, errors, requested_urls, close, events), so the page tests
run unchanged in both browsers. Firefox (Debian's firefox-esr) serves BiDi
itself with --remote-debugging-port: no geckodriver is needed.
"""
import base64
import json
import re
import shutil
import subprocess
import time

import pytest

from cdp import WebSocket

SHIFT = "\ue008"  # WebDriver's key value of Shift


class FirefoxBrowser:
    """firefox --headless driven over BiDi; collects console errors and requests."""

    name = "firefox"

    def __init__(self, tmp):
        exe = shutil.which("firefox-esr") or shutil.which("firefox")
        if not exe:
            pytest.skip("firefox not installed (apt-get install -y firefox-esr)")
        self.profile = tmp / "firefox-profile"
        self.profile.mkdir(exist_ok=True)
        # no updates, telemetry or first-run pages: nothing is asked of the network
        (self.profile / "user.js").write_text("\n".join(
            f'user_pref("{k}", {json.dumps(v)});' for k, v in {
                "app.update.enabled": False, "browser.shell.checkDefaultBrowser": False,
                "datareporting.policy.dataSubmissionEnabled": False,
                "toolkit.telemetry.reportingpolicy.firstRun": False,
                "browser.startup.homepage_override.mstone": "ignore",
                "network.captive-portal-service.enabled": False,
                "network.connectivity-service.enabled": False,
                "browser.safebrowsing.update.enabled": False,
                "extensions.update.enabled": False,
                "remote.prefs.recommended": True}.items()) + "\n")
        self.log = open(tmp / "firefox.log", "wb")
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-remote", "--profile", str(self.profile),
             "--remote-debugging-port=0", "--width=1400", "--height=1000", "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT)
        info = self.profile / "WebDriverBiDiServer.json"
        deadline = time.time() + 60
        port = None
        while time.time() < deadline and port is None:
            if self.proc.poll() is not None:
                pytest.skip("firefox does not start here")
            try:
                port = json.loads(info.read_text())["ws_port"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        if port is None:
            self.close()
            pytest.skip("firefox did not open its BiDi port in 60 s")
        self.ws = WebSocket(f"ws://127.0.0.1:{port}/session")
        self.next_id = 0
        self.events = []
        self.call("session.new", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": True}}})
        tree = self.call("browsingContext.getTree", {})
        self.context = tree["contexts"][0]["context"]
        self.call("session.subscribe", {"events": [
            "log.entryAdded", "network.beforeRequestSent", "network.responseCompleted",
            "network.fetchError"]})

    def call(self, method, params=None, timeout=60):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params or {}}))
        self.ws.sock.settimeout(timeout)
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if msg.get("type") == "error":
                    raise RuntimeError(f"{method}: {msg.get('error')}: {msg.get('message')}")
                return msg.get("result", {})
            if msg.get("type") == "event":
                self.events.append(msg)

    def eval(self, expr):
        """The value of a JS expression, through JSON as CDP's returnByValue."""
        wrapped = f"(() => {{ const v = ({expr}); return v === undefined ? undefined : JSON.stringify(v); }})()"
        r = self.call("script.evaluate", {"expression": wrapped, "target": {"context": self.context},
                                          "awaitPromise": False, "resultOwnership": "none"})
        if r.get("type") == "exception":
            raise RuntimeError(f"{expr}: {r['exceptionDetails'].get('text')}")
        v = r["result"]
        return None if v["type"] in ("undefined", "null") else json.loads(v["value"])

    def wait(self, expr, timeout=30):
        deadline = time.time() + timeout
        guarded = f"(() => {{ try {{ return !!({expr}); }} catch (e) {{ return false; }} }})()"
        while time.time() < deadline:
            if self.eval(guarded):
                return
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expr}; errors: {self.errors()}")

    def goto(self, url):
        self.call("browsingContext.navigate", {"context": self.context, "url": url, "wait": "none"})

    def screenshot(self, path, selector=None):
        params = {"context": self.context, "origin": "document"}
        if selector:
            box = self.eval("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()"
                            % json.dumps(selector))
            params["clip"] = {"type": "box", "x": box[0], "y": box[1], "width": box[2],
                              "height": box[3]}
        r = self.call("browsingContext.captureScreenshot", params)
        path.write_bytes(base64.b64decode(r["data"]))
        return path

    def set_viewport(self, width, height):
        self.call("browsingContext.setViewport", {"context": self.context,
                                                  "viewport": {"width": width, "height": height}})

    def _act(self, pointer, keys=None):
        actions = [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                    "actions": pointer}]
        if keys:
            actions.append({"type": "key", "id": "keyboard", "actions": keys})
        self.call("input.performActions", {"context": self.context, "actions": actions})
        self.call("input.releaseActions", {"context": self.context})

    def click(self, x, y, modifiers=0):
        self._act([{"type": "pointerMove", "x": round(x), "y": round(y)},
                   {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}])

    def drag(self, x0, y0, x1, y1, modifiers=0, steps=5):
        """A press, moves and a release; modifiers=8 (CDP's Shift) holds Shift."""
        pointer = [{"type": "pointerMove", "x": round(x0), "y": round(y0)},
                   {"type": "pointerDown", "button": 0}]
        for i in range(1, steps + 1):
            pointer.append({"type": "pointerMove", "x": round(x0 + (x1 - x0) * i / steps),
                            "y": round(y0 + (y1 - y0) * i / steps)})
        pointer.append({"type": "pointerUp", "button": 0})
        keys = None
        if modifiers & 8:
            keys = [{"type": "keyDown", "value": SHIFT}] + \
                [{"type": "pause"}] * (len(pointer) - 1) + [{"type": "keyUp", "value": SHIFT}]
            pointer = [{"type": "pause"}] + pointer
        self._act(pointer, keys)

    def key(self, key):
        self.call("input.performActions", {"context": self.context, "actions": [
            {"type": "key", "id": "keyboard", "actions": [{"type": "keyDown", "value": key},
                                                          {"type": "keyUp", "value": key}]}]})

    def _drain(self):
        self.eval("1")

    def errors(self, allow=None):
        """Console errors and warnings, exceptions, failed loads and HTTP errors."""
        self._drain()
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "log.entryAdded" and p.get("level") in ("error", "warn"):
                if allow and re.search(allow, p.get("text") or ""):
                    continue
                out.append((p.get("type", "log"), (p.get("text") or "")[:500]))
            elif m == "network.fetchError":
                # a request the page gave up by navigating away (a slower server,
                # under ASan, still answering it) is not a failure of the page
                if p.get("errorText") == "NS_BINDING_ABORTED":
                    continue
                out.append(("network", p["request"]["url"] + " " + p.get("errorText", "")))
            elif m == "network.responseCompleted" and p["response"]["status"] >= 400:
                if allow and re.search(allow, p["response"]["url"]):
                    continue
                out.append(("http", f'{p["response"]["status"]} {p["response"]["url"]}'))
        return out

    def requested_urls(self):
        """Every URL the page asked for, in order."""
        self._drain()
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "network.beforeRequestSent"]

    def close(self):
        try:
            if getattr(self, "ws", None):
                try:
                    self.call("browser.close", {}, timeout=10)
                except (RuntimeError, ConnectionError, OSError):
                    pass
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
