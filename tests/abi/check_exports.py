#!/usr/bin/env python3
"""Check that the exported C ABI of libag is listed consistently everywhere.

Usage: check_exports.py LIBAG_SO AG_MAP INCLUDE_DIR ABI_MD OPS_DEF [STRUCT_INIT_TEST]

Fails (exit 1, printing the differences) unless these four sets of function
names are equal:
  - functions the shared library exports (nm -D --defined-only, type T);
  - functions in the global sections of the version script (src/ag.map);
  - functions declared with AG_API in libag's public headers (ag.h and those it includes);
  - functions in the table of ABI.md (rows starting with "| `ag_") together
    with the ops of src/ops/ops.def (ag_op_<name> of the AG_OP rows,
    ag_op_<name>_ of the AG_INPLACE rows), which ABI.md leaves to the headers.
A function missing from ag.map is reported with the line to add and where.
Also checks that every exported symbol carries the version node ag.map lists
it under, that nothing else is exported, and that the SONAME is libag.so.0.
With STRUCT_INIT_TEST, also checks that every AG_X_INIT macro of the headers
has its ag_x_init function and is named in that test (which compares them).
Exit 2 on usage errors or when a tool (nm, readelf) cannot be run.
"""

import os
import re
import subprocess
import sys

EXPECTED_SONAME = "libag.so.0"


def run(cmd):
    try:
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, check=False)
    except OSError as e:
        _fatal("cannot run %s: %s" % (cmd[0], e))
    if res.returncode != 0:
        _fatal("%s failed (%d): %s" % (" ".join(cmd), res.returncode, res.stderr.strip()))
    return res.stdout


def _fatal(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(2)


def strip_c_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def library_exports(so_path, problems):
    """Returns {name: version} of the exported functions; odd symbols go to problems."""
    out = run(["nm", "-D", "--defined-only", so_path])
    funcs = {}
    version_nodes = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:  # no address column
            parts = ["", parts[0], parts[1]]
        if len(parts) != 3:
            continue
        _, kind, sym = parts
        name, _, version = sym.partition("@")
        version = version.lstrip("@")
        if kind == "A":  # version node definitions, e.g. AG_0.1
            version_nodes.add(name)
            continue
        if kind != "T":
            problems.append("libag exports %s with symbol type %s (only functions, type T, may be exported)"
                            % (sym, kind))
            continue
        funcs[name] = version
    return funcs, version_nodes


def library_soname(so_path):
    out = run(["readelf", "-d", so_path])
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else None


def map_functions(map_path, problems):
    """Returns {name: node} for every symbol in a global section of the version script."""
    with open(map_path, encoding="utf-8") as f:
        text = f.read()
    text = strip_c_comments(text)
    text = re.sub(r"(#|//)[^\n]*", " ", text)
    funcs = {}
    node_re = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\{(.*?)\}\s*([A-Za-z_][A-Za-z0-9_.]*)?\s*;", re.S)
    pos = 0
    nodes = []
    for m in node_re.finditer(text):
        if text[pos:m.start()].strip():
            problems.append("ag.map: cannot parse %r" % text[pos:m.start()].strip()[:60])
        pos = m.end()
        node, body = m.group(1), m.group(2)
        nodes.append(node)
        section = None
        for item in re.split(r"[;\s]+", body.replace(":", ": ")):
            if not item:
                continue
            if item.endswith(":"):
                section = item[:-1]
                continue
            if section == "global":
                if item in funcs:
                    problems.append("ag.map lists %s twice (in %s and %s)" % (item, funcs[item], node))
                funcs[item] = node
    if text[pos:].strip():
        problems.append("ag.map: cannot parse %r" % text[pos:].strip()[:60])
    if not nodes:
        problems.append("ag.map: no version node found")
    return funcs


def libag_headers(include_dir):
    """ag.h and the headers it includes: libag's. Others beside them (ag/dist.h)
    belong to separate libraries with checks of their own."""
    with open(os.path.join(include_dir, "ag.h"), encoding="utf-8") as f:
        return sorted(["ag.h"] + re.findall(r'^#include "ag/(\w+\.h)"', f.read(), re.M))


def header_functions(include_dir, problems):
    """Returns {name: header} for every function declared with AG_API."""
    funcs = {}
    headers = libag_headers(include_dir)
    if not headers:
        problems.append("no headers in %s" % include_dir)
    decl_re = re.compile(r"\bAG_API\b([^;{}]*?)\b(ag_[A-Za-z0-9_]+)\s*\(")
    for h in headers:
        with open(os.path.join(include_dir, h), encoding="utf-8") as f:
            text = strip_c_comments(f.read())
        # Drop preprocessor lines (the AG_API definitions themselves), with continuations.
        text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
        for m in decl_re.finditer(text):
            if "(" in m.group(1):
                continue
            name = m.group(2)
            if name in funcs:
                problems.append("%s is declared with AG_API in both %s and %s" % (name, funcs[name], h))
            funcs[name] = h
        n_api = len(re.findall(r"\bAG_API\b", text))
        n_found = len([1 for m in decl_re.finditer(text) if "(" not in m.group(1)])
        if n_api != n_found:
            problems.append("%s: %d uses of AG_API but %d function declarations recognised"
                            % (h, n_api, n_found))
    return funcs


def doc_functions(abi_md, problems):
    """Returns the set of functions named in ABI.md's function table."""
    funcs = set()
    row_re = re.compile(r"^\| `(ag_[A-Za-z0-9_]+)`")
    with open(abi_md, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.startswith("| `ag_"):
                continue
            m = row_re.match(line)
            if not m:
                problems.append("ABI.md:%d: cannot read the function name of %r" % (lineno, line.strip()[:60]))
                continue
            if m.group(1) in funcs:
                problems.append("ABI.md:%d: %s has two rows" % (lineno, m.group(1)))
            funcs.add(m.group(1))
    return funcs


def ops_def_functions(ops_def):
    """The C functions of the rows of ops.def."""
    with open(ops_def, encoding="utf-8") as f:
        text = f.read()
    return ({"ag_op_" + n for n in re.findall(r"^AG_OP\((\w+),", text, re.M)} |
            {"ag_op_%s_" % n for n in re.findall(r"^AG_INPLACE\((\w+),", text, re.M)})


def map_hint(name, mapped):
    """Where `name` goes in ag.map: the newest node, in alphabetical order."""
    newest = max(set(mapped.values()), key=lambda v: [int(x) for x in re.findall(r"\d+", v)], default="AG_0.1")
    before = sorted(n for n, node in mapped.items() if node == newest and n < name)
    where = ("after `%s;`" % before[-1]) if before else "first"
    return "add `    %s;` to node %s of src/ag.map (%s)" % (name, newest, where)


def init_macros(include_dir):
    """Returns the AG_X_INIT macros the headers define."""
    macros = set()
    for h in libag_headers(include_dir):
        with open(os.path.join(include_dir, h), encoding="utf-8") as f:
            macros.update(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(AG_[A-Z0-9_]+_INIT)\b", f.read(), flags=re.M))
    return macros


def check_init_macros(include_dir, declared, test_path, problems):
    with open(test_path, encoding="utf-8") as f:
        test_text = f.read()
    for macro in sorted(init_macros(include_dir)):
        fn = macro.lower()
        if fn not in declared:
            problems.append("%s has no function %s (FFI languages cannot expand macros)" % (macro, fn))
        if not re.search(r"\b%s\b" % macro, test_text):
            problems.append("%s is not compared with %s in %s" % (macro, fn, os.path.basename(test_path)))


def main(argv):
    if len(argv) not in (6, 7):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    so_path, map_path, include_dir, abi_md, ops_def = argv[1:6]
    for p in (so_path, map_path, abi_md, ops_def):
        if not os.path.isfile(p):
            _fatal("%s is not a file" % p)
    if not os.path.isdir(include_dir):
        _fatal("%s is not a directory" % include_dir)

    problems = []
    soname = library_soname(so_path)
    if soname != EXPECTED_SONAME:
        problems.append("SONAME is %s, expected %s" % (soname, EXPECTED_SONAME))

    lib, lib_nodes = library_exports(so_path, problems)
    mapped = map_functions(map_path, problems)
    declared = header_functions(include_dir, problems)
    documented = doc_functions(abi_md, problems)
    ops = ops_def_functions(ops_def)
    for name in sorted(documented & ops):
        problems.append("ABI.md has a row for %s, an op of ops.def (ops are documented by their header)" % name)
    documented |= ops

    sets = [
        ("exported by the library (nm -D)", set(lib)),
        ("listed in ag.map", set(mapped)),
        ("declared with AG_API in the headers", set(declared)),
        ("in the function table of ABI.md", documented),
    ]
    everything = set().union(*(s for _, s in sets))
    for label, s in sets:
        missing = sorted(everything - s)
        if missing:
            problems.append("missing from the functions %s:\n    %s" % (label, "\n    ".join(missing)))

    for name in sorted(everything - set(mapped)):
        problems.append(map_hint(name, mapped))
    for name in sorted(set(lib) & set(mapped)):
        if lib[name] != mapped[name]:
            problems.append("%s is exported with version %r but ag.map lists it under %s"
                            % (name, lib[name] or "(none)", mapped[name]))
    missing_nodes = sorted(set(mapped.values()) - lib_nodes)
    if missing_nodes:
        problems.append("version nodes of ag.map not defined by the library: %s" % ", ".join(missing_nodes))

    if len(argv) == 7:
        check_init_macros(include_dir, declared, argv[6], problems)

    if problems:
        print("ABI export check FAILED:")
        for p in problems:
            print("- " + p)
        return 1
    print("ABI export check passed: %d functions, SONAME %s, version nodes %s"
          % (len(lib), soname, ", ".join(sorted(lib_nodes))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
