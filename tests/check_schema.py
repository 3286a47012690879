#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_schema.py SCHEMA FILE... - validate JSON files against the subset of
JSON Schema that tests/report.schema.json uses (type, const, enum, required,
properties, additionalProperties: false, items, minimum, oneOf, $ref to
#/$defs).  No pip packages.  Exit 0 if every file is valid, else 1."""
import json
import sys

TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool,
    "integer": int, "number": (int, float), "null": type(None),
}


def check(v, s, root, path, errs):
    if "$ref" in s:
        ref = s["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return check(v, root["$defs"][ref[8:]], root, path, errs)
    if "oneOf" in s:
        ok = 0
        for sub in s["oneOf"]:
            e = []
            check(v, sub, root, path, e)
            ok += not e
        if ok != 1:
            errs.append("%s: matches %d of oneOf" % (path, ok))
        return
    t = s.get("type")
    if t:
        py = TYPES[t]
        # bool is an int in python; json keeps them apart
        if not isinstance(v, py) or (t in ("integer", "number") and isinstance(v, bool)):
            errs.append("%s: %r is not %s" % (path, v, t))
            return
    if "const" in s and v != s["const"]:
        errs.append("%s: %r is not %r" % (path, v, s["const"]))
    if "enum" in s and v not in s["enum"]:
        errs.append("%s: %r not in %r" % (path, v, s["enum"]))
    if "minimum" in s and isinstance(v, (int, float)) and v < s["minimum"]:
        errs.append("%s: %r below %r" % (path, v, s["minimum"]))
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                errs.append("%s: missing %s" % (path, k))
        props = s.get("properties", {})
        for k, sub in v.items():
            if k in props:
                check(sub, props[k], root, path + "." + k, errs)
            elif s.get("additionalProperties") is False:
                errs.append("%s: unexpected %s" % (path, k))
    if isinstance(v, list) and "items" in s:
        for i, item in enumerate(v):
            check(item, s["items"], root, "%s[%d]" % (path, i), errs)


def main():
    schema = json.load(open(sys.argv[1]))
    bad = 0
    for f in sys.argv[2:]:
        errs = []
        try:
            doc = json.load(open(f))
        except ValueError as e:
            errs.append("not json: %s" % e)
        else:
            check(doc, schema, schema, "$", errs)
        for e in errs[:10]:
            print("%s: %s" % (f, e))
        bad += bool(errs)
    if not bad:
        print("valid: %d file(s)" % (len(sys.argv) - 2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
