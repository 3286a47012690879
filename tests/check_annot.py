#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_annot.py - what tests/test_annot.c asks of profctl trace's JSON.

  check_annot.py TRACE ACQ CONTENDED   two threads' annotations: the plot
      "an_queue" as counter events ("ph":"C", a value each), messages as
      instant events on the threads' tracks ("tick N"), ACQ an_work calls,
      each with its value in its args, equal to the number its text gives; ACQ "hold
      an_qlock" spans and CONTENDED "wait an_qlock" spans on the threads'
      lock tracks

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


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
