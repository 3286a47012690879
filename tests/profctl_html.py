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
  - the graph's width follows the weight chosen (wall, on-CPU, self) as the
    data says, computed here from the page's data: on-CPU leaves out and
    names what has no kernel facts, self is inverted (zones by self time)
  - every mark drawn (class m-NAME) has a legend entry, and every mark the
    data calls for is drawn in some view
  - the graph and the table use the viewport's width at two window sizes,
    and follow a resize
  - a process of several threads has a merged view, the default, whose
    rows are the threads' rows summed by call path
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
        self.session = s
        self.size(width, height)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=s)
        self.wait_event("Page.loadEventFired")
        return s

    def size(self, width, height):
        """the page's viewport, in CSS pixels"""
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=self.session)

    def js(self, expr):
        """expr's value in the page open()ed, by value"""
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True},
                      session=self.session)
        if "exceptionDetails" in r:
            raise RuntimeError("js: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def mouse(self, kind, x, y, **more):
        """one mouse event at (x, y) in the page open()ed"""
        self.send("Input.dispatchMouseEvent", dict({"type": kind, "x": x, "y": y}, **more),
                  session=self.session)

    def click(self, x, y, clicks=1):
        """a real left click (clicks 2: the second of a double click)"""
        for kind in ("mousePressed", "mouseReleased"):
            self.mouse(kind, x, y, button="left", clickCount=clicks)

    def hover(self, x, y):
        """the pointer moved to (x, y): what the timeline's tooltip says then"""
        self.mouse("mouseMoved", x, y)
        return self.js("document.querySelector('.tl-tip').textContent")

    def screenshot(self, path):
        """the page as a PNG into path: its width, height, distinct bytes, size"""
        png = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"},
                                         session=self.session)["data"])
        with open(path, "wb") as f:
            f.write(png)
        return png_nontrivial(png) + (len(png),)

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


def browse(name, url, width, height, check, domains=("Runtime", "Page", "Network")):
    """url in headless Chromium: check(c, fails) on the page, then each
    exception it threw is a fail too; each fail printed after name.  The
    exit status: 0 pass, 1 fail, 77 skip (no chromium)."""
    if not CHROMIUM:
        print("skip: no chromium (apt-get install chromium)")
        return 77
    fails = []
    c = CDP()
    try:
        c.open(url, width, height, domains)
        check(c, fails)
        for e in c.events:
            if e.get("method") == "Runtime.exceptionThrown":
                fails.append("exception: %s" % e["params"]["exceptionDetails"].get("text"))
    finally:
        c.close()
    for f in fails:
        print(name + ": " + f)
    return 1 if fails else 0


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


def children(t):
    """the page's tree: visible children of each node, and each node's path"""
    kids = [[] for _ in t["nodes"]]
    path = [""] * len(t["nodes"])
    for i, n in enumerate(t["nodes"]):
        if i == 0 or not (0 <= n[P] < i):
            continue
        if n[Z] == "[overflow]" and not n[CALLS] and not n[TOT]:
            continue
        kids[n[P]].append(i)
        path[i] = (path[n[P]] + " > " + n[Z]) if n[P] else n[Z]
    return kids, path


def expect_top(data, t, weight):
    """the graph's top row for a weight: {zone: weight}, the root's weight,
    and the zones left out as unknown"""
    kids, path = children(t)
    nodes = t["nodes"]
    if weight == "wall":
        return {nodes[k][Z]: nodes[k][TOT] for k in kids[0]}, t["total"], []
    if weight == "oncpu":
        top, unknown = {}, []
        for k in kids[0]:
            n = nodes[k]
            # on-CPU time as profctl has it for every view: null, unknown
            if data["sched"] and n[ONC] is not None:
                top[n[Z]] = n[ONC]
            else:
                unknown.append(n[Z])
        s = sum(top.values())
        root = t["oncpu"] if t.get("oncpu") is not None and t["oncpu"] > s else s
        return top, root, unknown
    top = {}
    for i, n in enumerate(nodes):
        if i and path[i] and n[SELF]:
            top[n[Z]] = top.get(n[Z], 0) + n[SELF]
    return top, t["total"], []


# a node is [parent, zone, then the columns data["cols"] names]: found by key
P, Z = 0, 1
CALLS = TOT = SELF = P50 = MAX = OFF = OPEN = OPENT = KC = ONC = SONC = None


def columns(data):
    global CALLS, TOT, SELF, P50, MAX, OFF, OPEN, OPENT, KC, ONC, SONC
    at = {k: 2 + i for i, k in enumerate(data["cols"])}
    (CALLS, TOT, SELF, P50, MAX, OFF, OPEN, OPENT, KC, ONC, SONC) = (
        at[k] for k in ("calls", "total_ns", "self_ns", "p50_ns", "max_ns", "offcpu_ns",
                        "open", "open_ns", "kernel_calls", "oncpu_ns", "self_oncpu_ns"))


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    html, shot, zones = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]

    def check(c, fails):
        js = c.js

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
        if not cells and "too narrow to draw" not in js("document.getElementById('note').textContent"):
            fails.append("the icicle graph is empty, and the note does not say why")

        # a real click on the first collapsed row's zone cell (the top
        # level opens at first: collapse all where that left none closed)
        if not js("!!document.querySelector('#rows tr.closed')"):
            js("document.getElementById('collapse').click()")
        before = js("document.querySelectorAll('#rows tr').length")
        box = js("""(() => { const r = document.querySelector('#rows tr.closed td.zone');
            if (!r) return null; r.scrollIntoView(); const b = r.getBoundingClientRect();
            return [b.x + 20, b.y + b.height / 2, r.parentNode.dataset.node]; })()""")
        if not box:
            fails.append("no collapsed row to click")
        else:
            c.click(box[0], box[1])
            after = js("document.querySelectorAll('#rows tr').length")
            opened = js("!!document.querySelector('#rows tr.open[data-node=\"%s\"]')" % box[2])
            if after <= before or not opened:
                fails.append("click did not expand node %s (%d -> %d rows)" %
                             (box[2], before, after))

        # hover a zone in the icicle: every instance of it is highlighted
        hz = js("""(() => { const d = document.querySelector('#flame .cell') ||
            document.querySelector('#rows tr[data-zone] td.zone');
            d.scrollIntoView(); const b = d.getBoundingClientRect();
            return [b.x + 3, b.y + 5, d.dataset.zone || d.parentNode.dataset.zone]; })()""")
        c.mouse("mouseMoved", hz[0], hz[1])
        hl = js("[...document.querySelectorAll('.hl')].map(e => e.dataset.zone)")
        n_inst = js("document.querySelectorAll('[data-zone=\"%s\"]').length" % hz[2])
        if not hl or any(z != hz[2] for z in hl) or len(hl) != n_inst:
            fails.append("hover on %s highlighted %s of %d instances" % (hz[2], hl, n_inst))

        # sortable: clicking the calls header sorts siblings by calls
        js("document.querySelector('th[data-key=\"2\"]').click()")
        if not js("document.querySelector('th.sorted').dataset.key === '2'"):
            fails.append("the calls header did not sort")
        js("document.querySelector('th[data-key=\"4\"]').click()")

        # durations as the text report writes them, never "1000ms"
        got = js("[fmtNs(999), fmtNs(9996), fmtNs(999999), fmtNs(999700000), fmtNs(12345678)]")
        if got != ["999ns", "10.0us", "1.00ms", "1.00s", "12.3ms"]:
            fails.append("durations written %s" % got)

        data = js("DATA")
        columns(data)
        views = js("[...document.querySelectorAll('#thread option')].map(o => o.value)")
        weights = js("[...document.querySelectorAll('#weight option')]"
                     ".map(o => [o.value, o.disabled])")

        def thread_of(view):
            pi, ti = view.split(":")
            proc = data["processes"][int(pi)]
            return proc, proc["merged"] if ti == "m" else proc["threads"][int(ti)]

        def choose(sel, value):
            js("(() => { const s = document.getElementById('%s'); s.value = '%s';"
               " s.dispatchEvent(new Event('change')); })()" % (sel, value))

        def top_cells():
            return js("""(() => { const W = document.getElementById('flame').clientWidth;
                return [W, [...document.querySelectorAll('#flame .cell[data-depth="0"]')]
                .map(d => [d.dataset.zone, +d.dataset.w, d.getBoundingClientRect().width])]; })()""")

        def marks():
            return js("""[...new Set([...document.querySelectorAll('body *')]
                .filter(e => !e.closest('#legend')).flatMap(e => [...e.classList])
                .filter(c => c.startsWith('m-')).map(c => c.slice(2)))]""")

        # every process of several threads has a merged view; it comes first
        for pi, proc in enumerate(data["processes"]):
            if len(proc["threads"]) > 1 and "%d:m" % pi not in views:
                fails.append("process %d has no merged view (%s)" % (proc["pid"], views))
        if len(data["processes"][0]["threads"]) > 1 and (
                js("document.getElementById('thread').value") != views[0] or
                not views[0].endswith(":m")):
            fails.append("the merged view is not the first and default: %s" % views)

        # the merged view sums the threads by call path: its data and its rows
        for pi, proc in enumerate(data["processes"]):
            if "merged" not in proc:
                continue
            want = {}
            for t in proc["threads"]:
                _, path = children(t)
                for i, n in enumerate(t["nodes"]):
                    if i and path[i]:
                        w = want.setdefault(path[i], [0] * 6)
                        for k, col in enumerate((CALLS, TOT, SELF, OFF, OPEN, KC)):
                            w[k] += n[col]
            _, mpath = children(proc["merged"])
            got = {}
            for i, n in enumerate(proc["merged"]["nodes"]):
                if i and mpath[i]:
                    got[mpath[i]] = [n[c] for c in (CALLS, TOT, SELF, OFF, OPEN, KC)]
            # ticks become ns per thread or once merged: a ns a thread apart
            slack = len(proc["threads"])
            if set(got) != set(want) or any(
                    got[k][0] != want[k][0] or got[k][4:] != want[k][4:] or
                    any(abs(x - y) > slack for x, y in zip(got[k][1:4], want[k][1:4]))
                    for k in got):
                fails.append("merged data is not the threads summed: %s vs %s" % (got, want))
            # percentiles of the summed histograms: a mixture's median lies
            # between the parts' (2% for the buckets), its max is theirs
            parts = {}
            for t in proc["threads"]:
                _, path = children(t)
                for i, n in enumerate(t["nodes"]):
                    if i and path[i] and n[CALLS]:
                        parts.setdefault(path[i], []).append(n)
            for i, n in enumerate(proc["merged"]["nodes"]):
                ps = parts.get(mpath[i]) if i else None
                if not ps:
                    continue
                lo, hi = min(x[P50] for x in ps), max(x[P50] for x in ps)
                if not lo * 0.98 <= n[P50] <= hi * 1.02 or n[MAX] != max(x[MAX] for x in ps):
                    fails.append("merged %s: p50 %d max %d, the threads' p50 %d..%d max %d" %
                                 (mpath[i], n[P50], n[MAX], lo, hi, max(x[MAX] for x in ps)))
            if abs(proc["merged"]["total"] - sum(t["total"] for t in proc["threads"])) > slack:
                fails.append("merged wall %d is not the threads' sum" % proc["merged"]["total"])
            choose("thread", "%d:m" % pi)
            js("document.getElementById('expand').click()")
            rows = js("[...document.querySelectorAll('#rows tr[data-path]')]"
                      ".map(r => [r.dataset.path, +r.children[1].textContent])")
            if {r[0]: r[1] for r in rows} != {k: v[0] for k, v in want.items()} or \
                    len(rows) != len(want):
                fails.append("merged rows %s are not the threads' calls summed %s" %
                             (rows, {k: v[0] for k, v in want.items()}))

        # the graph's widths follow the weight, as the data says
        seen = set()
        for view in views:
            proc, t = thread_of(view)
            choose("thread", view)
            js("document.getElementById('expand').click()")
            for w, disabled in weights:
                if disabled:
                    if w != "oncpu" or data["sched"]:
                        fails.append("weight %s disabled with sched %s" % (w, data["sched"]))
                    continue
                choose("weight", w)
                top, root, unknown = expect_top(data, t, w)
                W, cells = top_cells()
                drawn = {z: v for z, v in top.items() if root and v / root * W >= 0.5}
                if sorted(c[0] for c in cells) != sorted(drawn):
                    fails.append("%s %s: top row %s, want %s" %
                                 (view, w, [c[0] for c in cells], sorted(drawn)))
                for z, v, px in cells:
                    if z in top and (abs(v - top[z]) > 0.5 or
                                     abs(px - max(1, top[z] / root * W)) > 1):
                        fails.append("%s %s: %s is %.1fpx (w %s), want %.1fpx (w %s)" %
                                     (view, w, z, px, v, top[z] / root * W, top[z]))
                note = js("document.getElementById('note').textContent")
                for z in unknown:
                    if "unknown" not in note or z not in note:
                        fails.append("%s on-CPU: %s unknown but the note says %r" % (view, z, note))
                seen |= set(marks())
            choose("weight", "wall")

        # marks: each drawn is in the legend; each the data calls for is drawn
        legend = js("[...document.querySelectorAll('#legend li')].map(l => l.dataset.mark)")
        if not js("document.getElementById('legend').getBoundingClientRect().height > 20"):
            fails.append("the legend is not shown")
        c.mouse("mouseMoved", hz[0], hz[1])
        seen |= set(marks())
        for m in sorted(seen):
            if m not in legend:
                fails.append("mark %s is drawn but not in the legend %s" % (m, legend))
        nodes = [n for p in data["processes"] for t in p["threads"] for n in t["nodes"][1:]]
        want_marks = {"heat", "outside", "hl"}
        if any(n[OPEN] for n in nodes):
            want_marks.add("open")
        if any(n[9] for p in data["processes"] if not p["tsc_synced"]
               for t in p["threads"] for n in t["nodes"]):
            want_marks.add("mig")
        if data["sched"]:
            want_marks |= {"oncpu", "soncpu", "preempted", "blocked", "migrated"}
            if any(0 < n[KC] < n[CALLS] for n in nodes):
                want_marks |= {"kcov", "partial"}
            if any(n[CALLS] and not n[KC] for n in nodes):
                want_marks.add("unknown")
        if any(n[Z] == "[overflow]" and n[CALLS] for n in nodes):
            want_marks.add("overflow")
        for m in sorted(want_marks - seen):
            fails.append("the data calls for mark %s but no view drew it" % m)

        # the page's full width, at two window sizes, following a resize
        choose("thread", views[0])
        for width, height in ((1600, 900), (900, 700)):
            c.size(width, height)
            _, t = thread_of(views[0])
            top, root, _ = expect_top(data, t, "wall")
            end, got = time.time() + 10, None
            while time.time() < end:
                got = js("""(() => { const f = document.getElementById('flame'),
                    c = document.querySelector('#flame .cell[data-depth="0"]');
                    return [document.documentElement.clientWidth, f.getBoundingClientRect().width,
                        document.getElementById('tw').getBoundingClientRect().width,
                        document.getElementById('tree').getBoundingClientRect().width,
                        document.documentElement.scrollWidth,
                        c ? c.getBoundingClientRect().width / f.clientWidth : 0,
                        c ? +c.dataset.w : 0]; })()""")
                # the page's width: the viewport's less a scroll bar
                if width - 20 <= got[0] <= width and got[6] and \
                        abs(got[5] - got[6] / root) <= 2 / got[1]:
                    break
                time.sleep(0.05)
            vw, fw, tw, tab, sw, share, cw = got
            if not width - 20 <= vw <= width or abs(fw - (vw - 32)) > 1 or abs(tw - (vw - 32)) > 1 or \
                    tab < tw - 1 or sw > vw:
                fails.append("at %dpx: viewport %s, graph %s, table box %s, table %s, "
                             "page %s: not the page's width" % (width, vw, fw, tw, tab, sw))
            if not root or abs(share - cw / root) > 2 / fw:
                fails.append("at %dpx the graph did not follow: first cell %.4f of it, "
                             "want %.4f" % (width, share, cw / root if root else 0))
        c.size(1280, 900)
        end = time.time() + 10
        while js("innerWidth") != 1280 and time.time() < end:
            time.sleep(0.05)
        choose("thread", views[0])

        # move away so the tooltip does not cover the table
        c.mouse("mouseMoved", 1270, 890)
        w, h, distinct, size = c.screenshot(shot)
        if w < 800 or h < 600 or distinct < 16 or size < 20000:
            fails.append("screenshot looks blank: %dx%d, %d distinct, %d bytes" %
                         (w, h, distinct, size))

        # collect what happened on the way
        for e in c.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                fails.append("console.%s: %s" % (p["type"], p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                fails.append("log error: %s" % p["entry"].get("text"))
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:")):
                    fails.append("network fetch: %s" % url)

    rc = browse("profctl_html", "file://" + html, 1280, 900, check,
                ("Runtime", "Log", "Page", "Network"))
    if not rc:
        print("ok: %s (%d zones shown, screenshot %s)" % (html, len(zones), shot))
    return rc


if __name__ == "__main__":
    sys.exit(main())
