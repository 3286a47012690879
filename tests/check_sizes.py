#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_sizes.py - no function over 120 lines, no file too long to read.

Reads the C of usdt/, daemon/, bpf/ (and the tests' and benchmarks' sources
for the file limit) and lists every function longer than MAX_FUNC lines
(from the line naming it to its closing brace), every source or header over
MAX_SRC lines and every test source over MAX_TEST lines.  Generated headers
(bpf/vmlinux.h) are not ours to split.  Exits 1 if it listed anything.

Functions are found by counting braces in the text with its comments,
strings, character constants and preprocessor lines blanked: a '{' at file
level opens a function when the text before it ends with ')' (optionally
followed by attributes) and is not an initializer or a struct."""
import glob
import os
import re
import sys

MAX_FUNC = 120
MAX_SRC = 1200
MAX_TEST = 1500
FUNC_DIRS = ["usdt", "daemon/profd", "daemon/profctl", "bpf"]
TEST_DIRS = ["tests", "bench"]
GENERATED = {"bpf/vmlinux.h"}

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)


def blank(text):
    """text with comments, literals and preprocessor lines turned to
    spaces, newlines kept (so that offsets keep their line numbers)"""
    out = []
    i, n = 0, len(text)
    bol = True
    while i < n:
        c = text[i]
        if bol and c == "#" or (bol and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            # a preprocessor line, with its continuations
            j = i
            while j < n:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                if k > 0 and text[k - 1] == "\\":
                    j = k + 1
                    continue
                break
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
            continue
        if text.startswith("/*", i):
            k = text.find("*/", i + 2)
            k = n if k < 0 else k + 2
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
            bol = False
            continue
        if text.startswith("//", i):
            k = text.find("\n", i)
            k = n if k < 0 else k
            out.append(" " * (k - i))
            i = k
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
            bol = False
            continue
        out.append(c)
        bol = c == "\n"
        i += 1
    return "".join(out)


def declarator(head):
    """(name, offset of name) if head, the text before a file-level '{',
    ends as a function's declarator does (attributes go before it), else None"""
    head = head.rstrip()
    if not head.endswith(")"):
        return None
    # back to the '(' that opens the parameter list
    depth = 0
    for j in range(len(head) - 1, -1, -1):
        if head[j] == ")":
            depth += 1
        elif head[j] == "(":
            depth -= 1
            if depth == 0:
                break
    else:
        return None
    m = re.search(r"([A-Za-z_]\w*)\s*$", head[:j])
    if not m or m.group(1) in ("if", "while", "for", "switch", "sizeof"):
        return None
    # an initializer (x = f(...) {...} cannot happen; = { ... } has no ')')
    if "=" in head[: m.start()].split(";")[-1].split("\n")[-1]:
        return None
    return m.group(1), m.start()


def functions(path):
    """(name, first line, line count) of each function defined in path"""
    text = blank(open(path, encoding="utf-8", errors="replace").read())
    found = []
    depth = 0
    start = 0  # where the text before the current file-level item begins
    opened = None
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                d = declarator(text[start:i])
                opened = (d[0], text.count("\n", 0, start + d[1]) + 1) if d else None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if opened:
                    last = text.count("\n", 0, i) + 1
                    found.append((opened[0], opened[1], last - opened[1] + 1))
                    opened = None
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
    return found


def lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def main():
    bad = []
    srcs = sorted(p for d in FUNC_DIRS for ext in ("c", "h") for p in glob.glob(f"{d}/*.{ext}")
                  if p not in GENERATED)
    tests = sorted(p for d in TEST_DIRS for ext in ("c", "cc", "h") for p in glob.glob(f"{d}/*.{ext}"))
    for p in srcs:
        n = lines(p)
        if n > MAX_SRC:
            bad.append(f"{p}: {n} lines (a source file holds at most {MAX_SRC})")
        if p.endswith(".c"):
            for name, first, count in functions(p):
                if count > MAX_FUNC:
                    bad.append(f"{p}:{first}: {name}() is {count} lines (at most {MAX_FUNC})")
    for p in tests:
        n = lines(p)
        if n > MAX_TEST:
            bad.append(f"{p}: {n} lines (a test file holds at most {MAX_TEST})")
    for b in bad:
        print(b)
    if bad:
        print(f"check_sizes: {len(bad)} too long: split them by concern")
        return 1
    print(f"check_sizes: {len(srcs)} sources and {len(tests)} test files within bounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
