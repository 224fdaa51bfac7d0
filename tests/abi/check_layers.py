#!/usr/bin/env python3
"""Check the layering of src/ (the table of src/README.md).

Usage: check_layers.py SRC_DIR

Every `#include "x/..."` of a file in src/<folder>/ must name a folder (or a
header) its row of the table allows; public headers ("ag/...") are always
allowed. The functions declared in autograd/grad_math.h must be defined in
src/ops/ and nowhere else (the link-time edge engine -> ops). Exit 1 with
one line per violation (file:line and the rule), 2 on usage errors.
"""
import os
import re
import sys


def read_rules(readme):
    rules = {}
    for line in open(readme, encoding="utf-8"):
        m = re.match(r"^\| `(\w+)` \|[^|]*\| ([^|]+) \|\s*$", line)
        if m:
            allowed = [a.strip() for a in m.group(2).split(",")]
            rules[m.group(1)] = allowed
    return rules


def allowed(target, rule):
    folder = target.split("/")[0]
    for a in rule:
        if a == "every folder" or a == folder or a == target:
            return True
    return False


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    src = argv[1]
    rules = read_rules(os.path.join(src, "README.md"))
    problems = []
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)) and d != "cmake")
    for d in folders:
        if d not in rules:
            problems.append("src/%s has no row in the table of src/README.md" % d)
            continue
        for name in sorted(os.listdir(os.path.join(src, d))):
            if not re.search(r"\.(h|cc|def)$", name):
                continue
            path = os.path.join(src, d, name)
            for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#\s*include\s+"([\w./-]+)"', line)
                if not m or "/" not in m.group(1) or m.group(1).startswith(("ag/", "hwy/")):
                    continue
                target = m.group(1)
                if target.startswith("src/"):  # Highway's re-include of the file itself
                    target = target[len("src/"):]
                if not allowed(target, rules[d]):
                    problems.append("src/%s/%s:%d: includes %s; %s may include %s" %
                                    (d, name, lineno, target, d, ", ".join(rules[d])))
    # grad_math.h: declared in autograd, defined in ops only.
    decl = open(os.path.join(src, "autograd", "grad_math.h"), encoding="utf-8").read()
    for fn in sorted(set(re.findall(r"^Tensor (\w+)\(", decl, re.M))):
        where = []
        for d in folders:
            for name in os.listdir(os.path.join(src, d)):
                if name.endswith(".cc"):
                    text = open(os.path.join(src, d, name), encoding="utf-8").read()
                    if re.search(r"^Tensor %s\([^;]*\)\s*\{" % fn, text, re.M):
                        where.append(d)
        if not where or set(where) != {"ops"}:
            problems.append("autograd/grad_math.h: %s must be defined in src/ops only (found in: %s)"
                            % (fn, ", ".join(where) or "nowhere"))
    if problems:
        print("layering check FAILED:")
        for p in problems:
            print("- " + p)
        return 1
    print("layering check passed: %d folders" % len(folders))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
