#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_options.py - every option of every profctl verb is run by some test.

The options each verb takes are read from profctl's own tables: the
struct option table each verb hands pc_parse_opts (daemon/profctl/), whose
entries are profctl_opts.h's PC_OPT_* (their long and short names).
A verb's option counts as used when one statement of a test (tests/*.c,
*.cc, *.py, *.sh, *.mk: the text up to a ';', or a line of a script) names
the verb as a word and the option as --NAME.  Every verb of profctl_cli.c's
verbs[] must hand pc_parse_opts a table (itself or through its own
pc_VERB_parse): no verb reads an option by hand.  Prints each option no test
uses and exits 1 if there is one."""
import glob
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def option_lists():
    """{verb: its long options}, and {long option: its short letter}"""
    src = {}
    for path in glob.glob(os.path.join(root, "daemon/profctl/*.c")):
        src[path] = open(path, encoding="utf-8").read()

    # the verb each cmd function is: the verbs[] table of profctl_cli.c
    cli = src[os.path.join(root, "daemon/profctl/profctl_cli.c")]
    verb_of = {fn: v for v, fn in re.findall(r'\{\s*"([a-z]+)",\s*(pc_cmd_[a-z_]+)\s*\}', cli)}
    # each table entry: its long name and short form (profctl_opts.h)
    hdr = open(os.path.join(root, "daemon/profctl/profctl_opts.h"), encoding="utf-8").read()
    entry = {}
    short = {}
    for mac, name, val in re.findall(r'#define (PC_OPT_[A-Z_]+) \{ "([a-z-]+)", \w+, NULL, (\S+) \}', hdr):
        entry[mac] = name
        if val.startswith("'"):
            short[name] = val.strip("'")
    # a group names entries that go together (PC_OPT_SINCE: both ends)
    group = {mac: re.findall(r'PC_OPT_[A-Z_]+', body)
             for mac, body in re.findall(r'#define (PC_OPT_[A-Z_]+) (PC_OPT_[A-Z_]+(?:, PC_OPT_[A-Z_]+)+)\n', hdr)}
    opts = {}
    for path, text in src.items():
        # each verb's function: the table it hands pc_parse_opts, then the table's entries
        for m in re.finditer(r'\n(?:static )?int (pc_cmd_[a-z_]+)\(', text):
            body = text[m.end():text.find("\n}\n", m.end())]
            call = re.search(r'pc_parse_opts\(argc, argv, usage_[a-z]+, ([a-z_]+),', body)
            # or in the verb's own parse function (serve's pc_serve_parse)
            helper = re.search(r'\b(pc_[a-z]+_parse)\(argc, argv,', body)
            if not call and helper:
                h = re.search(r'\nint %s\(' % helper.group(1), text)
                if h:
                    hbody = text[h.end():text.find("\n}\n", h.end())]
                    call = re.search(r'pc_parse_opts\(argc, argv, usage_[a-z]+, ([a-z_]+),', hbody)
            if not call or m.group(1) not in verb_of:
                continue
            table = re.search(r'struct option %s\[\] = \{(.*?)\n\};' % call.group(1), text, re.S)
            if not table:
                sys.exit("check_options: no table %s in %s" % (call.group(1), path))
            used = [t for t in re.findall(r'PC_OPT_[A-Z_]+', table.group(1)) if t not in ("PC_OPT_END", "PC_OPT_END_OPERANDS")]
            used = [e for t in used for e in group.get(t, [t])]
            unread = [t for t in used if t not in entry]
            if unread:
                # an entry this script cannot read would pass unchecked: refuse
                sys.exit("check_options: %s: entries not read from profctl_opts.h: %s" % (call.group(1), unread))
            names = [entry[t] for t in used]
            # a verb of operands only (zones) has --help alone: an empty set
            opts.setdefault(verb_of[m.group(1)], set()).update(n for n in names if n != "help")
    # every verb reads its options through a table: none by hand
    byhand = sorted(set(verb_of.values()) - set(opts))
    if byhand:
        sys.exit("check_options: verbs that hand pc_parse_opts no table: %s" % byhand)
    if sum(len(v) for v in opts.values()) < 40:
        sys.exit("check_options: read %d options only (%s): the tables' form changed?" %
                 (sum(len(v) for v in opts.values()), {k: len(v) for k, v in opts.items()}))
    if len(opts) < 9:
        sys.exit("check_options: found the option lists of %d verbs only: %s" % (len(opts), sorted(opts)))
    return opts, short


def main():
    opts, short = option_lists()
    stmts = []
    for pat in ("tests/*.c", "tests/*.cc", "tests/*.h", "tests/*.py", "tests/*.sh", "tests/*.mk",
                "tests/run", "tests/mutate"):
        for path in glob.glob(os.path.join(root, pat)):
            if path.endswith("check_options.py"):
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            stmts += text.split(";") if path.endswith((".c", ".cc", ".h")) else text.split("\n")
    missing = []
    for verb in sorted(opts):
        vre = re.compile(r'(?<![\w-])%s(?![\w-])' % verb)
        for opt in sorted(opts[verb]):
            form = r'--%s(?![\w-])' % re.escape(opt)
            if opt in short:
                form += r'|(?<![\w-])-%s(?![\w-])' % short[opt]
            ore = re.compile(form)
            if not any(ore.search(s) and vre.search(s) for s in stmts):
                missing.append("profctl %s --%s" % (verb, opt))
    for m in missing:
        print("no test runs: %s" % m)
    print("check_options: %d verbs, %d options, %d not run by any test" %
          (len(opts), sum(len(v) for v in opts.values()), len(missing)))
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
