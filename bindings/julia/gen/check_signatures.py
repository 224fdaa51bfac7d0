#!/usr/bin/env python3
"""Checks bindings/julia/src/generated.jl against ag-api.json: every function
has exactly one ccall wrapper whose argument and return Julia types are
those of the fixed C -> Julia map (jltypes.py), with its parameters in order;
every constant is defined. Prints one line per check and a summary."""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jltypes import julia_type  # noqa: E402
from gen_julia import generate  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CCALL = re.compile(r"^function (\w+)\(([^)]*)\)\n    ccall\(\(:(\w+), libag\), (.+?), \((.*)\)((?:, \w+)*)\)\nend$", re.M)


def split_types(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", default=os.path.join(HERE, "..", "..", "ag-api.json"))
    ap.add_argument("--jl", default=os.path.join(HERE, "..", "src", "generated.jl"))
    a = ap.parse_args()
    api = json.load(open(a.api))
    src = open(a.jl).read()
    wrappers = {}
    errors = []
    for m in CCALL.finditer(src):
        name, args, sym, ret, types, passed = m.groups()
        if name in wrappers:
            errors.append("%s: wrapped twice" % name)
        wrappers[name] = (args, sym, ret, split_types(types), [x.strip() for x in passed.split(",") if x.strip()])
    for f in api["functions"]:
        n = f["name"]
        if n not in wrappers:
            errors.append("%s: no ccall wrapper" % n)
            continue
        args, sym, ret, types, passed = wrappers.pop(n)
        want_types = [julia_type(p["type"], api) for p in f["params"]]
        want_ret = julia_type(f["returns"]["type"], api)
        if sym != n:
            errors.append("%s: calls :%s" % (n, sym))
        if ret != want_ret:
            errors.append("%s: returns %s, C type %s needs %s" % (n, ret, f["returns"]["type"]["c"], want_ret))
        if types != want_types:
            errors.append("%s: argument types %s, want %s" % (n, types, want_types))
        arg_names = [x.strip() for x in args.split(",") if x.strip()]
        if len(arg_names) != len(f["params"]) or passed != arg_names:
            errors.append("%s: passes %s for parameters %s" % (n, passed, [p["name"] for p in f["params"]]))
    for extra in wrappers:
        errors.append("%s: wrapper of a function not in the description" % extra)
    for c in api["constants"]:
        if not re.search(r"^const %s = " % re.escape(c["name"]), src, re.M):
            errors.append("constant %s missing" % c["name"])
    # Staleness is judged against the committed description the file was generated from.
    committed = json.load(open(os.path.join(HERE, "..", "..", "ag-api.json")))
    if src != generate(committed):
        errors.append("generated.jl is stale: run python3 bindings/julia/gen/gen_julia.py")
    for e in errors:
        print("FAIL:", e)
    print("julia signatures: %d functions, %d constants checked, %d problems"
          % (len(api["functions"]), len(api["constants"]), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
