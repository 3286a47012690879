#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkjsonseed.py - seeds of the JSON report loader's fuzzer (fuzz_json) made
from a golden JSON report (argv[1]) into a directory (argv[2]): hostile names
(quotes, backslashes, newlines, control bytes, bytes of no UTF-8 as the
writer escapes them, 4 KiB names) for a zone, a thread and a command, and
counts that are negative, fractional or out of range; and a report with
"locks" and "plots", the same."""
import os
import sys

src, out = sys.argv[1], sys.argv[2]
text = open(src, encoding="utf-8").read()
HOSTILE = r'q\"b\\n\n\t\u0001\u001f\u007f\u00ff\u00c3(\u003cb\u003e&'
BIG = "n" * 4096
seeds = {
    "hostile_comm": text.replace('"comm":"golden"', '"comm":"%s"' % HOSTILE),
    "hostile_thread": text.replace('"name":"main"', '"name":"%s"' % HOSTILE, 1),
    "hostile_zone": text.replace('"name":"main_loop"', '"name":"%s"' % HOSTILE, 1),
    "big_thread": text.replace('"name":"main"', '"name":"%s"' % BIG, 1),
    "big_zone": text.replace('"name":"main_loop"', '"name":"%s"' % BIG, 1),
    "big_comm": text.replace('"comm":"golden"', '"comm":"%s"' % BIG),
    "calls_negative": text.replace('"calls":10', '"calls":-10', 1),
    "calls_fraction": text.replace('"calls":10', '"calls":10.5', 1),
    "calls_huge": text.replace('"calls":10', '"calls":18446744073709551616', 1),
    "total_negative": text.replace('"total_ns":50000000', '"total_ns":-1', 1),
    "wall_negative": text.replace('"wall_ns":60000000', '"wall_ns":-60000000', 1),
    "slot_minus_two": text.replace('"kernel_slot":-1', '"kernel_slot":-2', 1),
}
# a report with locks and plots (the loader's "locks", "plots"): every
# figure, nulls where a window could not tell, hostile and long names,
# and the bad values of each
LOCK = ('{"name":"%s","acquisitions":4000,"contended":1200,"wait_ns":%s,'
        '"wait_max_ns":%s,"hold_ns":200000000,"hold_max_ns":%s,"blocked":%s,'
        '"unheld":%s}')
PLOT = '{"name":"%s","count":%s,"min":%s,"max":%s,"last":%s,"mean":%s}'
ANNOT = [
    ("annot", [LOCK % ("qlock", 900000, 5000, 60000, 3, 0),
               LOCK % (HOSTILE, "null", "null", "null", "null", 1),
               LOCK % (BIG, 1, 1, 1, 0, 0)],
     [PLOT % ("queue", 40, -1.5, 1e300, 7, 0.1),
      PLOT % (HOSTILE, 3, "null", "null", "null", "null"),
      PLOT % ("\\u00e9" * 40, 1, 0, 0, 0, 0)]),
    ("lock_negative", [LOCK % ("l", -5, 1, 1, 0, 0)], []),
    ("lock_fraction", [LOCK % ("l", 1, 1, 1, 0, 0.5)], []),
    ("lock_huge", [LOCK % ("l", 1, 1, 18446744073709551615, 0, 0)], []),
    ("lock_not_object", ["7"], []),
    ("plot_count_null", [], [PLOT % ("p", "null", 1, 1, 1, 1)]),
    ("plot_string", [], [PLOT % ("p", 1, '"1"', 1, 1, 1)]),
]
tail = "}\n]}"
for name, locks, plots in ANNOT:
    if not text.rstrip().endswith(tail):
        sys.exit("mkjsonseed: %s: the golden report changed, no seed made" % name)
    body = text.rstrip()[:-len(tail)]
    seeds[name] = '%s,"locks":[%s],"plots":[%s]%s\n' % (body, ",".join(locks), ",".join(plots), tail)
os.makedirs(out, exist_ok=True)
for name, body in seeds.items():
    if body == text:
        sys.exit("mkjsonseed: %s: the golden report changed, no seed made" % name)
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(body)
