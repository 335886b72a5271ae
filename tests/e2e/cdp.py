"""A headless Chromium driven over the DevTools protocol (python stdlib only).

A copy of the browser helper of test_ui_proxy.py (that file is left as it
is), with what the page tests need besides: clicks, key presses, a
viewport size and the list of every URL the page asked for.
"""
import base64
import http.client
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
import urllib.parse

import pytest


class WebSocket:
    """A minimal websocket client (RFC 6455): text frames, masking, fragments."""

    def __init__(self, url, timeout=30):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                           ).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("websocket handshake failed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(head.decode(errors="replace"))

    def _read(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("websocket closed")
            data += chunk
        return data

    def send(self, text):
        payload = text.encode()
        n = len(payload)
        head = bytes([0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            op = b0 & 0x0F
            if op == 0x8:
                raise ConnectionError("websocket closed by peer")
            if op == 0x9:
                self.sock.sendall(bytes([0x8A, 0x80]) + os.urandom(4))
                continue
            if op in (0x0, 0x1, 0x2):
                message += data
                if b0 & 0x80:
                    return message.decode()

    def close(self):
        self.sock.close()


class Browser:
    """chromium --headless driven over CDP; collects console errors."""

    def __init__(self, tmp):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            pytest.skip("chromium not installed (apt-get install -y chromium)")
        self.profile = tmp / "chromium-profile"
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
             f"--user-data-dir={self.profile}", "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.time() + 30
        while time.time() < deadline and not (port_file.exists() and port_file.read_text()):
            if self.proc.poll() is not None:
                pytest.skip("chromium does not start here")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = []
        while time.time() < deadline and not targets:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/json/list")
            targets = [t for t in json.loads(c.getresponse().read()) if t["type"] == "page"]
            c.close()
        self.ws = WebSocket(targets[0]["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events = []
        self.call("Runtime.enable")
        self.call("Log.enable")
        self.call("Page.enable")
        self.call("Network.enable")

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params or {}}))
        self.ws.sock.settimeout(timeout)
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait(self, expr, timeout=30):
        deadline = time.time() + timeout
        guarded = f"(() => {{ try {{ return !!({expr}); }} catch (e) {{ return false; }} }})()"
        while time.time() < deadline:
            if self.eval(guarded):
                return
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expr}; errors: {self.errors()}")

    def goto(self, url):
        self.call("Page.navigate", {"url": url})

    def screenshot(self, path, selector=None):
        params = {"format": "png", "captureBeyondViewport": True}
        if selector:
            box = self.eval("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                            " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()"
                            % json.dumps(selector))
            params["clip"] = {"x": box[0], "y": box[1], "width": box[2], "height": box[3],
                              "scale": 1}
        r = self.call("Page.captureScreenshot", params)
        path.write_bytes(base64.b64decode(r["data"]))
        return path

    def wheel(self, x, y, delta_y):
        self.call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y,
                                               "deltaX": 0, "deltaY": delta_y})

    def errors(self, allow=None):
        """Console errors, uncaught exceptions and failed loads (minus allowed URLs)."""
        self.call("Runtime.evaluate", {"expression": "1"})  # drain pending events
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(("exception", json.dumps(p)[:500]))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert",
                                                                        "warning"):
                out.append(("console", json.dumps(p.get("args"))[:500]))
            elif m == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                entry = p["entry"]
                if allow and re.search(allow, entry.get("url", "") + entry.get("text", "")):
                    continue
                out.append(("log", entry.get("text", "") + " " + entry.get("url", "")))
            elif m == "Network.loadingFailed":
                out.append(("network", json.dumps(p)[:300]))
            elif m == "Network.responseReceived" and p["response"]["status"] >= 400:
                if allow and re.search(allow, p["response"]["url"]):
                    continue
                out.append(("http", f'{p["response"]["status"]} {p["response"]["url"]}'))
        return out

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


    # ----- additions for the page tests -----

    def set_viewport(self, width, height):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def click(self, x, y, modifiers=0):
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 1, "modifiers": modifiers})

    def drag(self, x0, y0, x1, y1, modifiers=0, steps=5):
        self.call("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x0, "y": y0,
                                               "button": "left", "clickCount": 1,
                                               "modifiers": modifiers})
        for i in range(1, steps + 1):
            self.call("Input.dispatchMouseEvent", {
                "type": "mouseMoved", "x": x0 + (x1 - x0) * i / steps,
                "y": y0 + (y1 - y0) * i / steps, "button": "left", "buttons": 1,
                "modifiers": modifiers})
        self.call("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x1, "y": y1,
                                               "button": "left", "clickCount": 1,
                                               "modifiers": modifiers})

    def key(self, key):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "text": key,
                                                 "code": "Key" + key.upper()})

    def requested_urls(self):
        """Every URL the page asked for, in order."""
        self.call("Runtime.evaluate", {"expression": "1"})  # drain pending events
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]
