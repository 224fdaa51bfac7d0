#!/usr/bin/env python3
"""Check libag_dist's exported interface, and that libag stays free of MPI.

Usage: check_dist_exports.py LIBAG_DIST_SO AG_DIST_MAP DIST_H LIBAG_SO

Fails (exit 1, printing the differences) unless the functions libag_dist
exports (nm -D, type T), those in the global section of ag_dist.map and
those declared with AG_DIST_API in ag/dist.h are the same set, all named
ag_dist_*, and nothing else is exported; and unless libag neither needs an
MPI library nor refers to an MPI symbol. Exit 2 when nm or readelf fails.
"""

import re
import subprocess
import sys


def run(cmd):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if res.returncode != 0:
        print("error: %s failed: %s" % (" ".join(cmd), res.stderr.strip()), file=sys.stderr)
        sys.exit(2)
    return res.stdout


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    so, map_path, header, libag = sys.argv[1:]
    problems = []
    exported = set()
    for line in run(["nm", "-D", "--defined-only", so]).splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] == "A":  # version node definitions
            continue
        name = parts[2].split("@")[0]
        if parts[1] != "T":
            problems.append("libag_dist exports %s with type %s (only functions may be exported)" % (name, parts[1]))
        exported.add(name)
    with open(map_path) as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    m = re.search(r"global:(.*?)local:", text, re.S)
    mapped = set(re.findall(r"(\w+)\s*;", m.group(1))) if m else set()
    if not m:
        problems.append("ag_dist.map has no global section")
    with open(header) as f:
        declared = set(re.findall(r"^AG_DIST_API\s[^(]*?\b(ag_\w+)\s*\(", f.read(), re.M))
    for a_name, a, b_name, b in (("exported", exported, "in ag_dist.map", mapped),
                                 ("in ag_dist.map", mapped, "declared in ag/dist.h", declared),
                                 ("declared in ag/dist.h", declared, "exported", exported)):
        for name in sorted(a - b):
            problems.append("%s is %s but not %s" % (name, a_name, b_name))
    for name in sorted(exported | mapped | declared):
        if not name.startswith("ag_dist_"):
            problems.append("%s is not named ag_dist_*" % name)
    if re.search(r"libmpi", run(["readelf", "-d", libag])):
        problems.append("libag needs an MPI library")
    mpi_refs = [l.split()[-1] for l in run(["nm", "-D", libag]).splitlines() if re.search(r"\b[PM]PI_", l)]
    if mpi_refs:
        problems.append("libag refers to MPI symbols: %s" % ", ".join(mpi_refs[:5]))
    for p in problems:
        print("FAILED: " + p)
    print("%d functions exported by libag_dist; libag has no MPI dependency" % len(exported) if not problems else
          "%d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
