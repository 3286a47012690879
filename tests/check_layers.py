#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_layers.py - no circles among profd's files, nor among profctl's.

Reads which of a program's objects calls which (nm: a symbol one object
uses and another defines) and checks what ARCHITECTURE.md ("Layers")
says of them:

  - no circle: no file calls, through any others, back into itself;
  - profd: profd.c is main alone (no file calls into it); profd_log.c
    calls none of profd's files, profd_conf.c profd_log.c alone;
  - profctl: a verb's file (one that defines a pc_cmd_ function) is called
    by profctl_cli.c's dispatch alone, never by another verb or a shared
    piece; profctl_cli.c by profctl.c (main) alone; profctl_log.c and
    profctl_text.c call none of profctl's files.

Needs a built tree (make).  Prints each breach and exits 1 if there is one."""
import glob
import os
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
OUT = os.environ.get("OUTPUT", ".output")


def calls(objdir, srcdir):
    """{file: {file it calls: [symbols]}} of the objects in objdir whose
    source is in srcdir (not generated code, not an object left over)"""
    defs, used = {}, {}
    for obj in sorted(glob.glob(os.path.join(objdir, "*.o"))):
        name = os.path.basename(obj)[:-2] + ".c"
        if not os.path.isfile(os.path.join(srcdir, name)):
            continue
        text = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        used[name] = set()
        for line in text.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == "U":
                used[name].add(f[1])
            elif len(f) == 3 and f[1] in "TDBRCVW":
                defs[f[2]] = name
    g = {n: {} for n in used}
    for n, syms in used.items():
        for s in syms:
            d = defs.get(s)
            if d and d != n:
                g[n].setdefault(d, []).append(s)
    return g


def circles(g):
    """each circle of g once, as a list of files"""
    found, seen = [], set()
    index, low, stack, on = {}, {}, [], set()
    counter = [0]

    # Tarjan's strongly connected components: a component of more than one
    # file holds a circle
    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 and frozenset(comp) not in seen:
                seen.add(frozenset(comp))
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def edge(g, a, b):
    return "%s calls %s (%s)" % (a, b, ", ".join(sorted(g[a][b])[:4]))


def main():
    bad = []
    pd = calls(os.path.join(OUT, "daemon/profd"), "daemon/profd")
    pc = calls(os.path.join(OUT, "daemon/profctl"), "daemon/profctl")
    if len(pd) < 10 or len(pc) < 20:
        sys.exit("check_layers: %d profd and %d profctl objects in %s: build first (make)" %
                 (len(pd), len(pc), OUT))
    for what, g in (("profd", pd), ("profctl", pc)):
        for c in circles(g):
            inner = [edge(g, a, b) for a in c for b in g[a] if b in c]
            bad.append("%s: a circle of %s: %s" % (what, " ".join(c), "; ".join(inner)))
    base = {"profd_log.c": set(), "profd_conf.c": {"profd_log.c"}}
    for a in sorted(pd):
        for b in sorted(pd[a]):
            if b == "profd.c":
                bad.append("profd: %s: profd.c is main alone" % edge(pd, a, b))
            if a in base and b not in base[a]:
                bad.append("profd: %s: %s is below every other file" % (edge(pd, a, b), a))
    verbs = set()
    for n in pc:
        text = open(os.path.join("daemon/profctl", n), encoding="utf-8", errors="replace").read()
        if "\nint pc_cmd_" in text:
            verbs.add(n)
    if len(verbs) < 10:
        sys.exit("check_layers: %d verb files found: the verbs' form changed?" % len(verbs))
    for a in sorted(pc):
        for b in sorted(pc[a]):
            if b in verbs and a != "profctl_cli.c":
                bad.append("profctl: %s: a verb's file is called by the dispatch alone" %
                           edge(pc, a, b))
            if b == "profctl_cli.c" and a != "profctl.c":
                bad.append("profctl: %s: the dispatch is main's alone" % edge(pc, a, b))
            if a in ("profctl_log.c", "profctl_text.c"):
                bad.append("profctl: %s: %s is below every other file" % (edge(pc, a, b), a))
    for b in bad:
        print(b)
    if bad:
        print("check_layers: %d breaches of ARCHITECTURE.md's layers" % len(bad))
        return 1
    print("check_layers: %d profd files, %d profctl files (%d verbs): no circle, no call up" %
          (len(pd), len(pc), len(verbs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
