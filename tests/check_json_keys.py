#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_json_keys.py PROFCTL - a JSON report read back (report --input)
with each of its keys, one at a time, removed or of the wrong type (a
string for a number, an array or an object; a number for a string): refused
in one line that names the key, exit 1; only the figures the loader
derives again (a node's percentiles and on-CPU times) and the sampling
state (said to the reader, not read back) may be anything, and
only a node's func and a thread's probe cost may be missing.  Every key of
tests/golden/tree_json (with a lock and a plot), in its first element of
each array.  Prints what
does otherwise and exits 1 if anything does."""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checkutil import finish

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
NODE = "processes.threads.nodes."
THREAD = "processes.threads."
# computed again from the counts and histograms: what the file says is not read
DERIVED = {NODE + k for k in ("p50_ns", "p90_ns", "p99_ns", "oncpu_ns", "self_oncpu_ns")}
# what the report says to be read, not read back: may be anything
DERIVED |= {"processes.samples_state"}
# a report of an older profctl has none of these
OPTIONAL = {NODE + "func", THREAD + "probe_cost_ns", "processes.plots", "processes.locks"}
# how the refusal of a missing key names it, where not by its name
SAID = {"hist": "without histograms"}


def main():
    profctl = sys.argv[1]
    src = json.load(open(os.path.join(root, "tests/golden/tree_json"), encoding="utf-8"))
    # and a lock and a plot (version 4), which the golden process has not
    src["processes"][0]["plots"] = [{"name": "queue", "count": 3, "min": 1, "max": 9,
                                     "last": 4, "mean": 4.5}]
    src["processes"][0]["locks"] = [{"name": "qlock", "acquisitions": 4, "contended": 2,
                                     "wait_ns": 900, "wait_max_ns": 600, "hold_ns": 5000,
                                     "hold_max_ns": 2000, "blocked": 1, "unheld": 0}]
    keys = []

    def walk(o, path, where):
        if isinstance(o, dict):
            for k, v in o.items():
                keys.append((path + [k], where + k))
                # a node's children are nodes
                walk(v, path + [k], NODE if k == "children" else where + k + ".")
        elif isinstance(o, list) and o:
            walk(o[0], path + [0], where)

    walk(src, [], "")
    if len(keys) < 50:
        sys.exit("check_json_keys: %d keys only in the golden report" % len(keys))
    tmp = tempfile.mkdtemp(prefix="profd-json-keys.")
    bad, tried = [], 0
    try:
        f = os.path.join(tmp, "report.json")
        for path, name in keys:
            for how in ("removed", "of another type"):
                o = copy.deepcopy(src)
                parent = o
                for p in path[:-1]:
                    parent = parent[p]
                k = path[-1]
                if how == "removed":
                    del parent[k]
                else:
                    parent[k] = 1 if isinstance(parent[k], str) else "x"
                with open(f, "w", encoding="utf-8") as out:
                    json.dump(o, out)
                tried += 1
                r = subprocess.run([profctl, "report", "--input", f], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
                err = r.stderr.decode(errors="replace")
                may = name in DERIVED or (how == "removed" and name in OPTIONAL)
                if may:
                    if r.returncode != 0:
                        bad.append("%s %s: refused (%s), though not needed" % (name, how, err))
                elif (r.returncode != 1 or len(err.splitlines()) != 1 or
                      (SAID.get(k) if how == "removed" and k in SAID else '"%s"' % k)
                      not in err):
                    bad.append("%s %s: exit %d, said %r" % (name, how, r.returncode, err[:160]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish(bad, "check_json_keys: %d keys removed or retyped, %d not as they should be" %
           (tried, len(bad)))


if __name__ == "__main__":
    main()
