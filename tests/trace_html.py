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
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profctl_html import browse  # noqa: E402


def check(c, thread, n, zones, shot, fails):
    js = c.js
    lane = """[...document.querySelectorAll('.tl-track')].find(t =>
        t.querySelector('.tl-label').textContent === %r).querySelector('.tl-lane')""" % thread
    got = js("(%s).querySelectorAll('.tl-bar').length" % lane)
    if got != n:
        fails.append("%s's lane draws %s calls, want %d" % (thread, got, n))
    legend = js("document.querySelector('.tl-legend').textContent")
    for z in zones:
        if z not in legend:
            fails.append("legend lacks %s: %r" % (z, legend))
    # zoom in at the first call of the lane with a real wheel turn
    first = js("""(() => { const b = (%s).querySelector('.tl-bar'); const r = b.getBoundingClientRect();
        return [r.x + 1, r.y + r.height / 2, r.width]; })()""" % lane)
    for _ in range(6):
        c.mouse("mouseWheel", first[0], first[1], deltaX=0, deltaY=-120)
        # one turn at a time: Chromium coalesces wheel events in flight
        js("new Promise(r => requestAnimationFrame(() => r(1)))")
        time.sleep(0.05)
    after = js("""(() => { const b = (%s).querySelector('.tl-bar'); return b ?
        b.getBoundingClientRect().width : 0; })()""" % lane)
    if not after or after <= first[2] * 2:
        fails.append("a wheel turn did not zoom in: %.1f px -> %s px" % (first[2], after))
    # hover: the tooltip names the call
    box = js("""(() => { const b = (%s).querySelector('.tl-bar'); const r = b.getBoundingClientRect();
        return [r.x + Math.min(3, r.width / 2), r.y + 4, b.dataset.name]; })()""" % lane)
    tip = c.hover(box[0], box[1])
    if not tip.startswith(box[2] + ": ") or " at +" not in tip:
        fails.append("hover says %r, want %s's name and duration" % (tip, box[2]))
    for clicks in (1, 2):
        c.click(box[0], box[1], clicks)
    back = js("(%s).querySelectorAll('.tl-bar').length" % lane)
    if back != n:
        fails.append("a double click shows %s calls, want all %d" % (back, n))
    c.mouse("mouseMoved", 1270, 690)
    w, h, distinct, _ = c.screenshot(shot)
    if distinct < 16:
        fails.append("screenshot looks blank: %dx%d, %d distinct" % (w, h, distinct))
    for e in c.events:
        if e.get("method") == "Network.requestWillBeSent":
            url = e["params"]["request"]["url"]
            if not url.startswith(("file://", "data:")):
                fails.append("request left the page: %s" % url)


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    page, shot, thread, n, zones = (os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3],
                                    int(sys.argv[4]), sys.argv[5:])
    return browse("trace_html", "file://" + page, 1280, 700,
                  lambda c, fails: check(c, thread, n, zones, shot, fails))


if __name__ == "__main__":
    sys.exit(main())
