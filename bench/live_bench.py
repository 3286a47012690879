#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""live_bench.py URL PID SECONDS - profctl serve's live page of PID open in
headless Chromium (Selenium) for SECONDS: prints, of the page's updates,
how many there were and what each took to draw (performance.now() around
the table, the flame graph and the timeline: window.liveStats), as
"updates N draw_ms median p95 max".  Exit 77 without chromium, chromedriver
or python3-selenium."""
import shutil
import sys
import time

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError:
    print("skip: python3-selenium is not installed", file=sys.stderr)
    sys.exit(77)
CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
if not CHROMIUM or not DRIVER:
    print("skip: needs chromium and chromium-driver", file=sys.stderr)
    sys.exit(77)
URL, PID, SECS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
opts = webdriver.ChromeOptions()
opts.binary_location = CHROMIUM
for a in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
    opts.add_argument(a)
drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
try:
    drv.get("%s/p/%d" % (URL, PID))
    time.sleep(SECS)
    d = sorted(drv.execute_script("return window.liveStats.draws"))
    failed = drv.execute_script("return window.liveStats.failed")
    parts = drv.execute_script("return window.liveStats.parts")
finally:
    drv.quit()
if not d:
    print("no update drawn", file=sys.stderr)
    sys.exit(1)
print("updates %d failed %d draw_ms %.1f %.1f %.1f" % (
    len(d), failed, d[len(d) // 2], d[min(len(d) - 1, int(len(d) * 0.95))], d[-1]))
# the median of each part: the table, the flame graph, the timeline
med = [sorted(p[k] for p in parts)[len(parts) // 2] for k in range(3)]
print("parts_ms table %.1f flame %.1f timeline %.1f" % tuple(med), file=sys.stderr)
