#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_docs.py - the docs lead where they say.

Every relative link of the tree's Markdown (*.md, docs/*.md, bench/, tests/)
names a file or directory that exists, and its #anchor, if any, a heading
of that file (GitHub's spelling: lowercase, punctuation dropped, spaces as
'-'); every path a man page (man/*.[0-9]) names in the tree (docs/..., a
source, a test) exists; README.md is a newcomer's path of at most
MAX_README lines.  Prints each dead link and exits 1 if there is one."""
import glob
import os
import re
import sys

MAX_README = 200
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# a path of the tree a man page names: docs/x.md, usdt/prof.h, tests/..., bench/...
MANPATH = re.compile(r"(?<![\w/.-])((?:docs|usdt|daemon|bpf|tests|bench|systemd|man)/[\w./-]*\w)")


def anchors(path):
    """the anchors GitHub makes of path's headings"""
    out = set()
    inside = False
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("```"):
            inside = not inside
        m = None if inside else re.match(r"#+\s+(.*?)\s*#*\s*$", line)
        if m:
            a = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = 1
            base = a
            while a in out:
                a = "%s-%d" % (base, n)
                n += 1
            out.add(a)
    return out


def strip_code(text):
    """text without its fenced blocks and inline code (a link there is an example)"""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def main():
    bad = []
    mds = sorted(set(glob.glob("*.md") + glob.glob("docs/*.md") + glob.glob("bench/*.md") +
                     glob.glob("tests/*.md")))
    for md in mds:
        text = strip_code(open(md, encoding="utf-8", errors="replace").read())
        for target in LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # a URL (http:, mailto:)
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if not os.path.exists(dest):
                bad.append("%s: link to %s: no such file" % (md, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("%s: link to %s: no heading #%s in %s" % (md, target, anchor, dest))
    for man in sorted(glob.glob("man/*.[0-9]")):
        text = open(man, encoding="utf-8", errors="replace").read().replace("\\-", "-")
        for path in sorted(set(MANPATH.findall(text))):
            if not os.path.exists(path):
                bad.append("%s: names %s: no such file in the tree" % (man, path))
    n = sum(1 for _ in open("README.md", encoding="utf-8"))
    if n > MAX_README:
        bad.append("README.md: %d lines: a newcomer's path holds at most %d (the rest in docs/)" %
                   (n, MAX_README))
    for b in bad:
        print(b)
    if bad:
        print("check_docs: %d dead links or overlong pages" % len(bad))
        return 1
    print("check_docs: %d Markdown files and the man pages: every relative link leads "
          "somewhere; README.md %d lines" % (len(mds), n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
