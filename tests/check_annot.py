#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_annot.py - what tests/test_annot.c asks of profctl trace's JSON.

  check_annot.py TRACE ACQ CONTENDED   two threads' annotations: the plot
      "an_queue" as counter events ("ph":"C", a value each), messages as
      instant events on the threads' tracks ("tick N"), ACQ an_work calls,
      each with its value in its args, equal to the number its text gives; ACQ "hold
      an_qlock" spans and CONTENDED "wait an_qlock" spans on the threads'
      lock tracks

  check_annot.py --report JSON ACQ CONTENDED HOLD_NS   profctl report's JSON
      tree: this process's "locks" has an_qlock with ACQ acquisitions,
      CONTENDED contended, hold_ns HOLD_NS and wait_ns above zero; its
      "plots" has an_queue with 2 points or more

Exits 0 when it holds, else 1 with what did not.
"""
import sys

from check_trace import fail, load


def main(trace, acq, contended):
    d = load(trace)
    ev = d["traceEvents"]
    plots = [e for e in ev if e["ph"] == "C" and e["name"] == "an_queue"]
    if len(plots) < 2:
        fail("%d counter events of an_queue, want 2 or more" % len(plots))
    for e in plots:
        if not isinstance(e["args"].get("value"), (int, float)):
            fail("counter without a value: %r" % e)
    msgs = [e for e in ev if e["ph"] == "i" and e.get("cat") == "message"]
    if len(msgs) < 2 or not all(e["name"].startswith("tick ") for e in msgs):
        fail("messages %r, want 2 or more, each 'tick N'" % [e["name"] for e in msgs][:5])
    work = [e for e in ev if e["ph"] == "X" and e["name"] == "an_work"]
    valued = [e for e in work if "value" in e.get("args", {})]
    if len(work) != int(acq) or len(valued) != len(work):
        fail("%d of %d an_work calls with a value, want all %s" % (len(valued), len(work), acq))
    for e in valued:
        if e["args"].get("text") != "i=%d" % e["args"]["value"]:
            fail("a call's value and text disagree: %r" % e["args"])
    holds = [e for e in ev if e["ph"] == "X" and e["name"] == "hold an_qlock"]
    waits = [e for e in ev if e["ph"] == "X" and e["name"] == "wait an_qlock"]
    if len(holds) != int(acq) or len(waits) != int(contended):
        fail("%d holds and %d waits, want %s and %s" % (len(holds), len(waits), acq, contended))
    tracks = {e["tid"] for e in holds + waits}
    names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    if len(tracks) != 2 or not all(names.get(t, "").startswith("locks of tid ") for t in tracks):
        fail("lock spans on tracks %r, want the two threads' lock tracks" % tracks)
    for e in holds:
        if e["args"].get("lock") != "an_qlock" or e["args"].get("zone") != "an_work":
            fail("a hold's args %r" % e["args"])


def report(path, acq, contended, hold_ns):
    import json
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    procs = [p for p in d["processes"] if "locks" in p]
    if len(procs) != 1:
        fail("%d processes with locks, want 1" % len(procs))
    p = procs[0]
    q = [l for l in p["locks"] if l["name"] == "an_qlock"]
    if len(q) != 1:
        fail("locks %r" % p["locks"])
    q = q[0]
    if (q["acquisitions"], q["contended"], q["hold_ns"]) != (int(acq), int(contended), int(hold_ns)):
        fail("an_qlock %r, want %s acquisitions, %s contended, hold %s ns" % (q, acq, contended, hold_ns))
    if q["wait_ns"] <= 0 or q["unheld"] != 0:
        fail("an_qlock %r: no wait, or releases unheld" % q)
    pl = [x for x in p["plots"] if x["name"] == "an_queue"]
    if len(pl) != 1 or pl[0]["count"] < 2 or not pl[0]["min"] <= pl[0]["mean"] <= pl[0]["max"]:
        fail("plots %r" % p["plots"])


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--report":
        report(*sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
