#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_deps.py - a changed header rebuilds exactly the objects that include it.

For each header named (default: usdt/proto.h, daemon/profd/profd.h,
daemon/profctl/profctl.h, usdt/slab.h), asks make what `make -W HEADER all`
would compile (make -n: nothing is built) and compares it with the sources of
`all` that include the header, directly or through other headers, found by
reading their #include "..." lines (not from the compiler's .d files, which
are what is checked).  Needs a built tree (make) so that the .d files exist.
Prints each difference and exits 1 if there is one."""
import os
import re
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
# the -I directories of the Makefile, in its order
INCDIRS = ["usdt", "bpf", "daemon/profd", "daemon/profctl", "tests"]
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def resolve(name, includer):
    for d in [os.path.dirname(includer)] + INCDIRS:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None  # generated (the skeleton, the pages): not a header of ours


def includes(path, seen):
    """every header of ours that path reads, itself included"""
    if path in seen:
        return seen
    seen.add(path)
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return seen
    for name in INC.findall(text):
        p = resolve(name, path)
        if p:
            includes(p, seen)
    return seen


def compiled(args):
    """the sources make would compile: {source: object}"""
    out = subprocess.run(["make", "-n"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, check=True).stdout.decode()
    got = {}
    for line in out.splitlines():
        m = re.search(r'\s-c\s+(\S+\.cc?)\s.*-o\s+(\S+\.o)\b', line)
        if m and not m.group(1).startswith(".output"):
            got[m.group(1)] = m.group(2)
    return got


headers = sys.argv[1:] or ["usdt/proto.h", "daemon/profd/profd.h",
                           "daemon/profctl/profctl.h", "usdt/slab.h"]
every = compiled(["-B", "all"])
bad = 0
for h in headers:
    want = {s for s in every if os.path.normpath(h) in includes(s, set())}
    got = set(compiled(["-W", h, "all"]))
    for s in sorted(want - got):
        print(f"check_deps: {h} changed, but {s} (which includes it) is not rebuilt")
        bad += 1
    for s in sorted(got - want):
        print(f"check_deps: {h} changed, and {s} is rebuilt though it does not include it")
        bad += 1
    if not want:
        print(f"check_deps: nothing includes {h}: name a header that something includes")
        bad += 1
    print(f"check_deps: {h}: {len(got)} of {len(every)} sources rebuilt")
sys.exit(1 if bad else 0)
