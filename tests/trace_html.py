#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace_html.py PAGE.html SCREENSHOT.png THREAD N ZONE... - profctl trace
--format html in headless Chromium over the DevTools pipe:
  - no exception, no request leaves file://
  - THREAD's lane draws exactly N calls; the legend names every ZONE
  - a real wheel turn over the lane zooms in at the pointer (the calls under
    it grow wider), a double click shows everything again
  - hovering a call says its name and duration
  - the screenshot is not blank
Exit 0 pass, 1 fail, 77 skip (no chromium)."""
import base64
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profctl_html import CDP, CHROMIUM, png_nontrivial  # noqa: E402


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    page, shot, thread, n, zones = (os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3],
                                    int(sys.argv[4]), sys.argv[5:])
    if not CHROMIUM:
        print("skip: no chromium (apt-get install chromium)")
        return 77
    fails = []
    c = CDP()
    try:
        s = c.open("file://" + page, 1280, 700)
        js = c.js

        lane = """[...document.querySelectorAll('.track')].find(t =>
            t.querySelector('.label').textContent === %r).querySelector('.lane')""" % thread
        got = js("(%s).querySelectorAll('.bar').length" % lane)
        if got != n:
            fails.append("%s's lane draws %s calls, want %d" % (thread, got, n))
        legend = js("document.getElementById('legend').textContent")
        for z in zones:
            if z not in legend:
                fails.append("legend lacks %s: %r" % (z, legend))
        # zoom in at the first call of the lane with a real wheel turn
        first = js("""(() => { const b = (%s).querySelector('.bar'); const r = b.getBoundingClientRect();
            return [r.x + 1, r.y + r.height / 2, r.width]; })()""" % lane)
        for _ in range(6):
            c.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": first[0], "y": first[1],
                   "deltaX": 0, "deltaY": -120}, session=s)
            # one turn at a time: Chromium coalesces wheel events in flight
            js("new Promise(r => requestAnimationFrame(() => r(1)))")
            time.sleep(0.05)
        after = js("""(() => { const b = (%s).querySelector('.bar'); return b ?
            b.getBoundingClientRect().width : 0; })()""" % lane)
        if not after or after <= first[2] * 2:
            fails.append("a wheel turn did not zoom in: %.1f px -> %s px" % (first[2], after))
        # hover: the tooltip names the call
        box = js("""(() => { const b = (%s).querySelector('.bar'); const r = b.getBoundingClientRect();
            return [r.x + Math.min(3, r.width / 2), r.y + 4, b.dataset.name]; })()""" % lane)
        c.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]},
               session=s)
        tip = js("document.getElementById('tip').textContent")
        if not tip.startswith(box[2] + ": ") or " at +" not in tip:
            fails.append("hover says %r, want %s's name and duration" % (tip, box[2]))
        for clicks in (1, 2):
            for kind in ("mousePressed", "mouseReleased"):
                c.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                       "button": "left", "clickCount": clicks}, session=s)
        back = js("(%s).querySelectorAll('.bar').length" % lane)
        if back != n:
            fails.append("a double click shows %s calls, want all %d" % (back, n))
        c.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 1270, "y": 690},
               session=s)
        png = base64.b64decode(c.send("Page.captureScreenshot", {"format": "png"},
                                      session=s)["data"])
        with open(shot, "wb") as f:
            f.write(png)
        w, h, distinct = png_nontrivial(png)
        if distinct < 16:
            fails.append("screenshot looks blank: %dx%d, %d distinct" % (w, h, distinct))
        for e in c.events:
            m = e.get("method")
            if m == "Runtime.exceptionThrown":
                fails.append("exception: %s" % e["params"]["exceptionDetails"].get("text"))
            elif m == "Network.requestWillBeSent":
                url = e["params"]["request"]["url"]
                if not url.startswith(("file://", "data:")):
                    fails.append("request left the page: %s" % url)
    finally:
        c.close()
    for f in fails:
        print("trace_html: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
