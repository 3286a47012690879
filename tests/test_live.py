#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""test_live.py URL PID PROFCTL SCREENSHOT.png DOWNLOADS - profctl serve's
live page in headless Chromium through Selenium (Debian's chromium,
chromium-driver, python3-selenium), against live_worker (PID, four threads;
SIGUSR1 stops its work, SIGUSR2 starts it), checking:
  - the list at / links the process; its page loads without console errors
  - every column top has (on-CPU and the scheduler's where the data has
    them), and sorting by a header orders the rows
  - with the worker stopped and the page frozen on "since start", each row's
    numbers equal `profctl report --flat --format json --since-start`'s
  - the flame graph has one element a merged call path (report --format
    json's, threads merged by path), zooms on a click and marks a search
  - the timeline has a bar a call of the trace the page read, a lane a
    thread, and a click on a call says its zone, duration and on-CPU
  - freeze holds the table while the worker runs, resume moves it
  - save downloads a file `profctl report --input` reads as the process;
    the trace link is Chrome trace JSON
  - a screenshot is kept (SCREENSHOT)
Exit 0 pass, 1 fail, 77 skip (no chromium, chromedriver or selenium)."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    print("skip: python3-selenium is not installed", file=sys.stderr)
    sys.exit(77)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not CHROMIUM or not DRIVER:
    print("skip: needs chromium and chromium-driver", file=sys.stderr)
    sys.exit(77)

URL, PID, PROFCTL, SHOT, DOWNLOADS = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], \
    sys.argv[5]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def wait(what, cond, timeout=20):
    """cond() true within timeout seconds, else fail saying what"""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = cond()
            if v:
                return v
        except Exception:  # a page between two draws
            pass
        time.sleep(0.05)
    fail("timed out waiting for " + what)


def profctl(*args):
    out = subprocess.run([PROFCTL] + list(args), check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def still():
    """the worker's calls the same in two reads 0.1 s apart, and none open"""
    def calls():
        zs = profctl("report", "--pid", str(PID), "--since-start", "--flat", "--format",
                     "json", "--no-daemon")["processes"][0]["zones"]
        return [(z["zone"], z["calls"], z["open"]) for z in zs]
    a = calls()
    time.sleep(0.1)
    b = calls()
    return a == b and not any(o for _, _, o in b)


def merged_paths(report):
    """call paths of every thread, merged by name: {path: total_ns}"""
    paths = {}

    def walk(n, prefix):
        p = prefix + (n["name"],)
        paths[p] = paths.get(p, 0) + n["total_ns"]
        for c in n.get("children", []):
            walk(c, p)
    for th in report["processes"][0]["threads"]:
        for n in th["nodes"]:
            walk(n, ())
    return {p: t for p, t in paths.items() if t > 0}


opts = webdriver.ChromeOptions()
opts.binary_location = CHROMIUM
for a in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
          "--disable-background-networking", "--no-first-run"):
    opts.add_argument(a)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
os.makedirs(DOWNLOADS, exist_ok=True)
opts.add_experimental_option("prefs", {"download.default_directory": DOWNLOADS,
                                       "download.prompt_for_download": False})
drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
try:
    drv.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow",
                                                     "downloadPath": DOWNLOADS})
    js = drv.execute_script

    # the list links the process, and the link opens its page
    drv.get(URL + "/")
    link = wait("the process in the list",
                lambda: drv.find_element(By.CSS_SELECTOR, 'a[href="/p/%d"]' % PID))
    link.click()
    wait("the process page", lambda: drv.current_url.endswith("/p/%d" % PID))
    wait("two updates", lambda: int(js("return document.body.dataset.updates || 0")) >= 2)

    # every column of top's
    heads = [th.text for th in drv.find_elements(By.CSS_SELECTOR, "#top th")]
    sched = js("return window.liveLast.top.sched")
    want = ["zone", "calls/s", "%self", "self/s", "total/s", "avg/call", "max"]
    if sched:
        want += ["on-cpu/s", "preempt/s", "blocked/s", "migr/s"]
    want += ["self/s history"]
    if heads != want:
        fail("columns %s, want %s" % (heads, want))

    # the timeline: a bar a call of the trace it drew, a lane a thread
    def timeline_counts():
        return js("""
          const t = window.liveLast.trace.traceEvents.filter(e => e.ph === 'X');
          return [t.length, document.querySelectorAll('#timeline .tl-bar').length,
                  new Set(t.map(e => e.tid)).size,
                  document.querySelectorAll('#timeline .tl-lane').length];""")
    calls, bars, tids, lanes = timeline_counts()
    if calls == 0 or bars != calls or lanes != tids:
        fail("timeline: %d bars of %d calls, %d lanes of %d threads" % (bars, calls, lanes, tids))

    # a click on a call says what it was
    # (found and clicked in one script: an update may redraw between two)
    name = js("""const b = document.querySelector('#timeline .tl-bar[data-cat="zone"]');
                 b.click(); return b.dataset.name;""")
    pick = drv.find_element(By.ID, "pick").text
    if not pick.startswith(name + " (zone)") or "on-CPU" not in pick or "preempted" not in pick:
        fail("a click on %s says '%s'" % (name, pick))

    # the window "since start", the worker stopped: the page and report agree
    os.kill(PID, signal.SIGUSR1)
    wait("the worker to hold still", still)
    drv.find_element(By.CSS_SELECTOR, '#window option[value="start"]').click()
    n0 = int(js("return document.body.dataset.updates"))
    wait("two updates since start", lambda: int(js("return document.body.dataset.updates")) >= n0 + 2)
    drv.find_element(By.ID, "freeze").click()
    if js("return document.body.dataset.frozen") != "1":
        fail("freeze did not freeze")
    if js("return window.liveLast.top.window") != "start":
        fail("the page's window is not since start")
    flat = profctl("report", "--pid", str(PID), "--since-start", "--flat", "--format", "json",
                   "--no-daemon")["processes"][0]["zones"]
    rows = js("""
      const out = {};
      for (const tr of document.querySelectorAll('#top tr[data-zone]')) {
        const r = {};
        for (const td of tr.querySelectorAll('td[data-k]')) r[td.dataset.k] = td.dataset.v;
        out[tr.dataset.zone] = r;
      }
      return out;""")
    if sorted(rows) != sorted(z["zone"] for z in flat):
        fail("zones %s, report has %s" % (sorted(rows), sorted(z["zone"] for z in flat)))
    for z in flat:
        r = rows[z["zone"]]
        for k in ("calls", "self_ns", "total_ns", "max_ns"):
            if int(float(r[k])) != z[k]:
                fail("%s %s: page %s, report %d" % (z["zone"], k, r[k], z[k]))
        avg = (z["total_ns"] - z["open_ns"]) / z["calls"] if z["calls"] else 0
        if abs(float(r["avg_ns"]) - avg) > 1e-6 * max(1, avg):
            fail("%s avg: page %s, report %g" % (z["zone"], r["avg_ns"], avg))
        if sched and z["oncpu_ns"] is not None and int(float(r["oncpu_ns"])) != z["oncpu_ns"]:
            fail("%s on-cpu: page %s, report %d" % (z["zone"], r["oncpu_ns"], z["oncpu_ns"]))

    # the flame graph: an element a merged path, the report's
    rep = profctl("report", "--pid", str(PID), "--since-start", "--format", "json",
                  "--no-daemon")
    want_paths = merged_paths(rep)
    page_paths = merged_paths(js("return window.liveLast.report"))
    if want_paths != page_paths:
        fail("flame graph paths differ from report's: %s / %s" % (page_paths, want_paths))
    nodes = js("""const f = document.getElementById('flame');
                  return [Number(f.dataset.nodes), f.querySelectorAll('.fg-node').length];""")
    if nodes[0] != len(want_paths) + 1 or nodes[1] != nodes[0]:
        fail("flame graph: %s elements, want %d paths and the root" % (nodes, len(want_paths)))
    # a search marks every node of that name, a click zooms
    search = drv.find_element(By.ID, "search")
    search.send_keys("lw_leaf")
    marked = js("return [...document.querySelectorAll('#flame .fg-match')].map(e => e.dataset.name)")
    leafs = sum(1 for p in want_paths if p[-1] == "lw_leaf")
    if len(marked) != leafs or set(marked) != {"lw_leaf"}:
        fail("search marks %s, want %d lw_leaf" % (marked, leafs))
    search.clear()
    js("document.getElementById('search').dispatchEvent(new Event('input'))")
    node = drv.find_element(By.CSS_SELECTOR, '#flame .fg-node[data-name="lw_render"]')
    js("arguments[0].click()", node)
    first = js("""const n = document.querySelector('#flame .fg-node');
                  return [n.dataset.name, n.style.left, n.getBoundingClientRect().width,
                          document.getElementById('flame').clientWidth];""")
    if first[0] != "lw_render" or first[1] != "0px" or abs(first[2] - first[3]) > 2:
        fail("zoom on lw_render draws %s" % first)
    if "lw_render" not in drv.find_element(By.ID, "crumbs").text:
        fail("the zoom's path is not shown")
    js("document.querySelector('#crumbs a').click()")

    # sorting: by calls, most first, then fewest first
    def column(k):
        return [float(v) for v in js(
            "return [...document.querySelectorAll('#top td[data-k=\"%s\"]')].map(t => t.dataset.v)"
            % k)]
    drv.find_element(By.CSS_SELECTOR, '#top th[data-k="calls"]').click()
    c = column("calls")
    if c != sorted(c, reverse=True):
        fail("sorted by calls: %s" % c)
    drv.find_element(By.CSS_SELECTOR, '#top th[data-k="calls"]').click()
    c = column("calls")
    if c != sorted(c):
        fail("sorted by calls, fewest first: %s" % c)

    # frozen: the worker runs, the table holds; resumed, it moves
    os.kill(PID, signal.SIGUSR2)
    n1 = int(js("return document.body.dataset.updates"))
    before = column("calls")
    time.sleep(2.5)
    if int(js("return document.body.dataset.updates")) != n1 or column("calls") != before:
        fail("the frozen page changed")
    drv.find_element(By.ID, "freeze").click()
    wait("an update after resume", lambda: int(js("return document.body.dataset.updates")) > n1)
    wait("the calls to grow", lambda: sum(column("calls")) > sum(before))

    # save: a file profctl reads as the process
    drv.find_element(By.ID, "save").click()
    f = wait("the download", lambda: [p for p in glob.glob(DOWNLOADS + "/*.prof")
                                      if os.path.getsize(p) > 0], timeout=30)[0]
    time.sleep(0.2)
    saved = profctl("report", "--input", f, "--format", "json")
    if saved["processes"][0]["pid"] != PID:
        fail("the saved file is of pid %s" % saved["processes"][0]["pid"])
    # the trace link: Chrome trace JSON of the window
    href = drv.find_element(By.ID, "tracelink").get_attribute("href")
    with urllib.request.urlopen(href) as r:
        tr = json.load(r)
    if not any(e.get("cat") == "zone" for e in tr["traceEvents"]):
        fail("the trace link has no call")

    # no console error all along
    errors = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
    if errors:
        fail("console errors: %s" % errors)
    drv.execute_script("window.scrollTo(0, 0)")
    drv.save_screenshot(SHOT)
    if os.path.getsize(SHOT) < 10000:
        fail("the screenshot is blank")
    draws = js("return window.liveStats.draws")
    print("live page: %d updates, draw max %.1f ms" % (len(draws), max(draws)), file=sys.stderr)
finally:
    drv.quit()
sys.exit(0)
