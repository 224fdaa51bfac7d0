#!/usr/bin/env python3
"""Check ag-api.json, the API description that bindings are generated from.

Usage: check_api_json.py AG_API_JSON LIBAG_SO INCLUDE_DIR OPS_DEF COMMITTED_COPY

Fails (exit 1, listing every difference) unless:
  - its functions are exactly the AG_API declarations of the headers (read
    here with a separate, plain pattern) and exactly the ag_* functions the
    library exports (nm -D), each with the version node nm shows;
  - every op of ops.def is described, linked to its ag_op_<name> function;
  - every struct size, field offset and constant equals what the loaded
    library reports (ag_struct_size, ag_struct_field_offset,
    ag_constant_value), and unknown names give 0, -1 and an error;
  - every parameter has a direction, every handle out-parameter an ownership;
  - the committed copy (bindings/ag-api.json) equals the generated one.
"""
import ctypes
import json
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    api_path, lib_path, include_dir, ops_def, committed = sys.argv[1:]
    with open(api_path) as f:
        text = f.read()
    api = json.loads(text)
    errors = []
    described = {f["name"]: f for f in api["functions"]}

    declared = set()
    for name in os.listdir(include_dir):
        if name.endswith(".h"):
            with open(os.path.join(include_dir, name)) as f:
                declared |= set(re.findall(r"^AG_API\s[^(]*?\b(ag_\w+)\s*\(", f.read(), re.M))
    for name in sorted(declared - described.keys()):
        errors.append("declared in a header but not described: " + name)
    for name in sorted(described.keys() - declared):
        errors.append("described but not declared: " + name)

    nm = subprocess.run(["nm", "-D", "--defined-only", lib_path], stdout=subprocess.PIPE,
                        universal_newlines=True, check=True).stdout
    exported = {}
    for m in re.finditer(r"\sT (ag_\w+)@@?(AG_[\d.]+)$", nm, re.M):
        exported[m.group(1)] = m.group(2)
    for name in sorted(exported.keys() - described.keys()):
        errors.append("exported but not described: " + name)
    for name in sorted(described.keys() - exported.keys()):
        errors.append("described but not exported: " + name)
    for name in sorted(described.keys() & exported.keys()):
        if described[name]["since"] != exported[name]:
            errors.append("%s: described as %s, exported as %s" % (name, described[name]["since"], exported[name]))

    with open(ops_def) as f:
        ops = re.findall(r"^AG_OP\((\w+),\s*(\w+),", f.read(), re.M)
    listed = {o["name"]: o for o in api["ops"]}
    for name, family in ops:
        o = listed.get(name)
        if o is None or o["family"] != family:
            errors.append("op %s (%s) of ops.def is not described as such" % (name, family))
        elif described.get(o["function"], {}).get("op") != name:
            errors.append("op %s: its function %s does not point back to it" % (name, o["function"]))
    if len(listed) != len(ops):
        errors.append("%d ops described, ops.def has %d" % (len(listed), len(ops)))

    for f in api["functions"]:
        for p in f["params"]:
            if p.get("direction") not in ("in", "out", "inout", "user_data"):
                errors.append("%s(%s): no direction" % (f["name"], p["name"]))
            t = p["type"]
            if t["kind"] == "handle" and p["direction"] == "out" and "ownership" not in p:
                errors.append("%s(%s): handle out-parameter without ownership" % (f["name"], p["name"]))

    lib = ctypes.CDLL(lib_path)
    lib.ag_struct_size.restype = ctypes.c_size_t
    lib.ag_struct_size.argtypes = [ctypes.c_char_p]
    lib.ag_struct_field_offset.restype = ctypes.c_int64
    lib.ag_struct_field_offset.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    lib.ag_constant_value.restype = ctypes.c_int32
    lib.ag_constant_value.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]
    for s in api["structs"]:
        size = lib.ag_struct_size(s["name"].encode())
        if size != s["size"]:
            errors.append("struct %s: described size %d, library %d" % (s["name"], s["size"], size))
        for fld in s["fields"]:
            off = lib.ag_struct_field_offset(s["name"].encode(), fld["name"].encode())
            if off != fld["offset"]:
                errors.append("%s.%s: described offset %d, library %d" % (s["name"], fld["name"], fld["offset"], off))
    value = ctypes.c_int64()
    for c in api["constants"]:
        st = lib.ag_constant_value(c["name"].encode(), ctypes.byref(value))
        # A uint64_t constant above INT64_MAX comes back as its bit pattern.
        if st != 0 or value.value % (1 << 64) != c["value"] % (1 << 64):
            errors.append("constant %s: described %d, library %d (status %d)" % (c["name"], c["value"], value.value, st))
    if lib.ag_struct_size(b"no_such_struct") != 0 or lib.ag_struct_size(None) != 0:
        errors.append("ag_struct_size of an unknown name is not 0")
    if lib.ag_struct_field_offset(b"ag_context_options", b"no_such_field") != -1:
        errors.append("ag_struct_field_offset of an unknown field is not -1")
    if lib.ag_constant_value(b"AG_NO_SUCH_CONSTANT", ctypes.byref(value)) != -1:
        errors.append("ag_constant_value of an unknown name is not AG_ERR_INVALID_ARGUMENT")

    try:
        with open(committed) as f:
            if f.read() != text:
                errors.append("%s is stale: copy the build's ag-api.json over it" % committed)
    except OSError as e:
        errors.append("cannot read the committed copy: %s" % e)

    for e in errors:
        print("error: " + e, file=sys.stderr)
    print("%d functions, %d ops, %d structs, %d constants checked; %d errors"
          % (len(described), len(ops), len(api["structs"]), len(api["constants"]), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
