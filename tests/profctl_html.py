#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""profctl_html.py REPORT.html SCREENSHOT.png ZONE... - load profctl's html
report in headless Chromium, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: no websocket, no pip packages), and check:
  - no console errors or exceptions, no request leaves file://
  - every ZONE is shown in the table, and the allocation columns
  - a real mouse click on a collapsed row expands it (its children appear)
  - hovering a zone highlights every instance of it
  - a screenshot is taken and is not blank
Exit 0 pass, 1 fail, 77 skip (no chromium)."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


class CDP:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="profctl-html.")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()
        # the pipe protocol: chromium reads fd 3, writes fd 4; move ours
        # above 9 first so the dup2s cannot clobber each other
        hi_r, hi_w = os.dup2(to_r, 10, False), os.dup2(from_w, 11, False)

        def fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)
        self.p = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--remote-debugging-pipe",
             "--user-data-dir=" + self.tmp, "--window-size=1280,900", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4, hi_r, hi_w),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_r, from_w, hi_r, hi_w):
            os.close(fd)
        self.buf = b""
        self.id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        want = self.id
        while True:
            m = self.recv()
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})

    def recv(self, timeout=20):
        end = time.time() + timeout
        while b"\0" not in self.buf:
            if time.time() > end:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.from_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        m = json.loads(raw)
        if "method" in m:
            self.events.append(m)
        return m

    def wait_event(self, name, timeout=20):
        end = time.time() + timeout
        while True:
            for e in self.events:
                if e["method"] == name:
                    return e
            if time.time() > end:
                raise TimeoutError(name)
            self.recv(timeout)

    def open(self, url, width, height, domains=("Runtime", "Page", "Network")):
        """a page of width x height at url, loaded; its session"""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for dom in domains:
            self.send(dom + ".enable", session=s)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=s)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=s)
        self.wait_event("Page.loadEventFired")
        self.session = s
        return s

    def js(self, expr):
        """expr's value in the page open()ed, by value"""
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                      session=self.session)
        if "exceptionDetails" in r:
            raise RuntimeError("js: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def png_nontrivial(data):
    """decode enough of the PNG to count distinct scanline bytes"""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a png"
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    return w, h, len(set(raw[::7]))


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    html, shot, zones = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    if not CHROMIUM:
        print("skip: no chromium (apt-get install chromium)")
        return 77
    fails = []
    c = CDP()
    try:
        target = c.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = c.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for dom in ("Runtime", "Log", "Page", "Network"):
            c.send(dom + ".enable", session=s)
        c.send("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
        c.events.clear()
        c.send("Page.navigate", {"url": "file://" + html}, session=s)
        c.wait_event("Page.loadEventFired")

        def js(expr):
            r = c.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=s)
            if "exceptionDetails" in r:
                raise RuntimeError("js: %s" % r["exceptionDetails"])
            return r["result"].get("value")

        shown = js("[...document.querySelectorAll('#rows tr')].map(r => r.dataset.zone)")
        for z in zones:
            if z not in shown:
                fails.append("zone %s not in the table (%s)" % (z, shown))
        # the allocations JSON has: the fixture's worker allocates
        heads = js("[...document.querySelectorAll('#head th')].map(t => t.textContent)")
        for want in ("allocs", "alloc bytes"):
            if want not in heads:
                fails.append("no %s column (%s)" % (want, heads))
        cells = js("document.querySelectorAll('#flame .cell').length")
        if not cells:
            fails.append("the icicle graph is empty")

        # a real click on the first collapsed row's zone cell
        before = js("document.querySelectorAll('#rows tr').length")
        box = js("""(() => { const r = document.querySelector('#rows tr.closed td.zone');
            if (!r) return null; r.scrollIntoView(); const b = r.getBoundingClientRect();
            return [b.x + 20, b.y + b.height / 2, r.parentNode.dataset.node]; })()""")
        if not box:
            fails.append("no collapsed row to click")
        else:
            for kind in ("mousePressed", "mouseReleased"):
                c.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                       "button": "left", "clickCount": 1}, session=s)
            after = js("document.querySelectorAll('#rows tr').length")
            opened = js("!!document.querySelector('#rows tr.open[data-node=\"%s\"]')" % box[2])
            if after <= before or not opened:
                fails.append("click did not expand node %s (%d -> %d rows)" %
                             (box[2], before, after))

        # hover a zone in the icicle: every instance of it is highlighted
        hz = js("""(() => { const d = document.querySelector('#flame .cell');
            const b = d.getBoundingClientRect(); return [b.x + 3, b.y + 5, d.dataset.zone]; })()""")
        c.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": hz[0], "y": hz[1]},
               session=s)
        hl = js("[...document.querySelectorAll('.hl')].map(e => e.dataset.zone)")
        n_inst = js("document.querySelectorAll('[data-zone=\"%s\"]').length" % hz[2])
        if not hl or any(z != hz[2] for z in hl) or len(hl) != n_inst:
            fails.append("hover on %s highlighted %s of %d instances" % (hz[2], hl, n_inst))

        # sortable: clicking the calls header sorts siblings by calls
        js("document.querySelector('th[data-key=\"2\"]').click()")
        if not js("document.querySelector('th.sorted').dataset.key === '2'"):
            fails.append("the calls header did not sort")
        js("document.querySelector('th[data-key=\"4\"]').click()")

        # move away so the tooltip does not cover the table
        c.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 1270, "y": 890},
               session=s)
        png = base64.b64decode(c.send("Page.captureScreenshot", {"format": "png"},
                                      session=s)["data"])
        with open(shot, "wb") as f:
            f.write(png)
        w, h, distinct = png_nontrivial(png)
        if w < 800 or h < 600 or distinct < 16 or len(png) < 20000:
            fails.append("screenshot looks blank: %dx%d, %d distinct, %d bytes" %
                         (w, h, distinct, len(png)))

        # collect what happened on the way
        for e in c.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.exceptionThrown":
                fails.append("exception: %s" % p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                fails.append("console.%s: %s" % (p["type"], p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                fails.append("log error: %s" % p["entry"].get("text"))
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:")):
                    fails.append("network fetch: %s" % url)
    finally:
        c.close()
    for f in fails:
        print("FAIL: " + f)
    if not fails:
        print("ok: %s (%d zones shown, screenshot %s)" % (html, len(zones), shot))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
