#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace_speedscope.py TRACE.json SCREENSHOT.png ZONE... - open profctl
trace's Chrome trace in speedscope (npm's, the way its own CLI opens a file:
a script that hands it the file, named in the page's #localProfilePath) in
headless Chromium over the DevTools pipe, and check:
  - speedscope took the file (its title names it), no exception was thrown
  - its Sandwich view (a DOM table) lists every ZONE
  - a screenshot of the timeline is not blank
speedscope's index.html: $SPEEDSCOPE, else npm's global root.
Exit 0 pass, 1 fail, 77 skip (no chromium or speedscope)."""
import base64
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profctl_html import CHROMIUM, browse  # noqa: E402


def speedscope_index():
    if os.environ.get("SPEEDSCOPE"):
        return os.environ["SPEEDSCOPE"]
    try:
        root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    p = os.path.join(root, "speedscope", "dist", "release", "index.html")
    return p if os.path.exists(p) else None


def check(c, shot, zones, fails):
    js = c.js
    title = ""
    for _ in range(100):
        title = js("document.title")
        if "trace.json" in title:
            break
        time.sleep(0.1)
    if "trace.json" not in title:
        fails.append("speedscope did not load the trace (title %r)" % title)
    time.sleep(0.5)
    w, h, distinct, size = c.screenshot(shot)
    if distinct < 16 or size < 8000:
        fails.append("screenshot looks blank: %dx%d, %d distinct, %d bytes" %
                     (w, h, distinct, size))
    # the Sandwich view lists the functions (zones) in a table
    box = js("""(() => { const e = [...document.querySelectorAll('div,span,button')]
        .filter(e => e.textContent.endsWith('Sandwich')).pop();
        if (!e) return null; const b = e.getBoundingClientRect();
        return [b.x + b.width / 2, b.y + b.height / 2]; })()""")
    if not box:
        fails.append("no Sandwich tab in speedscope's toolbar")
    else:
        c.click(box[0], box[1])
    text = ""
    for _ in range(50):
        text = js("document.body.innerText")
        if all(z in text for z in zones):
            break
        time.sleep(0.1)
    if os.environ.get("TRACE_DEBUG"):
        print(text[:2000])
    for z in zones:
        if z not in text:
            fails.append("zone %s not in speedscope's sandwich view" % z)


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    trace, shot, zones = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    index = speedscope_index()
    if not CHROMIUM or not index:
        print("skip: needs chromium and speedscope (apt-get install chromium; "
              "npm install -g speedscope)")
        return 77
    tmp = tempfile.mkdtemp(prefix="trace-speedscope.")
    loader = os.path.join(tmp, "load.js")
    with open(trace, "rb") as f:
        b64 = base64.b64encode(f.read()).decode()
    with open(loader, "w") as f:
        f.write('speedscope.loadFileFromBase64("trace.json", "%s")\n' % b64)
    url = "file://%s#localProfilePath=%s" % (index, loader)
    try:
        return browse("trace_speedscope", url, 1280, 800,
                      lambda c, fails: check(c, shot, zones, fails), ("Runtime", "Page"))
    finally:
        for n in os.listdir(tmp):
            os.unlink(os.path.join(tmp, n))
        os.rmdir(tmp)


if __name__ == "__main__":
    sys.exit(main())
