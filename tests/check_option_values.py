#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_option_values.py PROFCTL - every option of every profctl verb that
takes a value refuses a malformed one the same way: exit status 2 and one
line on stderr that quotes the value, before anything else is tried (no
process, file or profd is looked for).  The verbs and their options come
from profctl's own tables (check_options.py); the options that take any
string (a path, a zone's name) are left out.  Prints each one that does
otherwise and exits 1 if there is one."""
import os
import re
import subprocess
import sys

from check_options import option_lists, root
from checkutil import finish

# values no option with a value takes: empty, no number, a number with a
# tail, below zero, past 64 bits
BAD = ["", "x", "1x", "-1", "18446744073709551616"]
# values that are any string: a file, a zone's name (--callers, --inside)
FREE = {"output", "input", "callers", "inside"}


def main():
    profctl = sys.argv[1]
    opts, _ = option_lists()
    hdr = open(os.path.join(root, "daemon/profctl/profctl_opts.h"), encoding="utf-8").read()
    valued = set(re.findall(r'\{\s*"([a-z-]+)",\s*required_argument,', hdr))
    if len(valued) < 10:
        sys.exit("check_option_values: found %d options with a value only" % len(valued))
    env = dict(os.environ, PROFCTL_NO_DAEMON="1", LC_ALL="C")
    bad, tried = [], 0
    for verb in sorted(opts):
        for opt in sorted((opts[verb] & valued) - FREE):
            for v in BAD:
                tried += 1
                r = subprocess.run([profctl, verb, "--%s=%s" % (opt, v)], env=env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=30)
                err = r.stderr.decode(errors="replace")
                lines = err.splitlines()
                if r.returncode != 2 or len(lines) != 1 or "'%s'" % v not in err or r.stdout:
                    bad.append("profctl %s --%s='%s': exit %d, said %r%s" % (
                        verb, opt, v, r.returncode, err[:200],
                        ", wrote to stdout" if r.stdout else ""))
    finish(bad, "check_option_values: %d bad values tried, %d not refused as they should be" %
           (tried, len(bad)))


if __name__ == "__main__":
    main()
