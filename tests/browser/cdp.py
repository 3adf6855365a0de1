# SPDX-License-Identifier: MIT
"""A minimal Chrome DevTools Protocol client over --remote-debugging-pipe.

Chromium reads commands from fd 3 and writes replies and events to fd 4,
each message JSON terminated by a NUL byte.  A pipe needs no port, no
websocket library (the stdlib has none) and nothing from the network, so
the browser tests run offline with Debian's chromium alone.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def chromium_path():
    for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "",
              shutil.which("chromium-browser") or ""):
        if p and os.access(p, os.X_OK):
            return p
    return None


class CDPError(Exception):
    pass


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width=1400, height=900, timeout=30):
        exe = chromium_path()
        if not exe:
            raise CDPError("chromium not found (Debian: apt-get install chromium)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="sonde-chromium-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()

        def fds():
            # Via fresh copies: os.pipe() may have returned 3 or 4 itself,
            # and dup2 onto the same number would keep close-on-exec.
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--allow-file-access-from-files", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events = []
        self.console_errors = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for m in ("Runtime.enable", "Page.enable", "Log.enable"):
            self.send(m)
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # ---- transport ----
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for chromium")
            r, _, _ = select.select([self._r], [], [], left)
            if r:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise CDPError("chromium closed the pipe")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _note(self, m):
        self.events.append(m)
        meth, p = m.get("method"), m.get("params", {})
        if meth == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.console_errors.append(d.get("exception", {}).get("description") or d.get("text"))
        elif meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.console_errors.append(" ".join(str(a.get("value", a.get("description")))
                                                for a in p.get("args", [])))
        elif meth == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.console_errors.append(p["entry"]["text"])

    def call(self, method, _session=False, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if _session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise CDPError(f"{method}: {m['error']}")
                return m.get("result", {})
            self._note(m)

    def send(self, method, **params):
        """A command to the page's session."""
        return self.call(method, _session=True, **params)

    def wait_event(self, method, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        for m in self.events:
            if m.get("method") == method:
                self.events.remove(m)
                return m.get("params", {})
        while True:
            m = self._read_message(deadline)
            self._note(m)
            if m.get("method") == method:
                self.events.remove(m)
                return m.get("params", {})

    # ---- page helpers ----
    def open(self, path):
        self.events.clear()
        self.send("Page.navigate", url="file://" + os.path.abspath(path))
        self.wait_event("Page.loadEventFired")

    def eval(self, expr, await_promise=True):
        r = self.send("Runtime.evaluate", expression=expr, awaitPromise=await_promise,
                      returnByValue=True)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CDPError(f"{expr[:80]}: {d.get('exception', {}).get('description') or d}")
        return r.get("result", {}).get("value")

    def wait_for(self, expr, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.eval(expr):
                return
            time.sleep(0.05)
        raise CDPError("timed out waiting for " + expr)

    def click(self, x, y, **mods):
        for t in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=t, x=x, y=y, button="left", clickCount=1, **mods)

    def drag(self, x0, y, x1, steps=8):
        self.send("Input.dispatchMouseEvent", type="mousePressed", x=x0, y=y, button="left",
                  clickCount=1)
        for i in range(1, steps + 1):
            self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x0 + (x1 - x0) * i / steps,
                      y=y, button="left")
        self.send("Input.dispatchMouseEvent", type="mouseReleased", x=x1, y=y, button="left",
                  clickCount=1)

    def click_selector(self, sel):
        box = self.eval(f"""(() => {{ const e = document.querySelector({json.dumps(sel)});
            if (!e) return null; e.scrollIntoView({{block: 'center'}});
            const r = e.getBoundingClientRect();
            return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2]; }})()""")
        if not box:
            raise CDPError("no element " + sel)
        self.click(*box)

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
