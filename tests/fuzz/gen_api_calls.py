#!/usr/bin/env python3
"""Writes the generic part of the API-program interpreter (api_program.c):
one C caller per exported function whose parameters are all of kinds the
interpreter can fill from program bytes (tensors, tensor lists, scalars,
size lists, dtypes, strings, out-pointers), and the table of those callers.

The functions come from the API description (ag-api.json), so an op added to
ops.def, or any new function of such a signature, is fuzzed without editing
the interpreter. Functions taking option structs or callbacks are driven by
hand in api_program.c.

usage: gen_api_calls.py ag-api.json out.inc
"""
import json
import re
import sys

# Functions the interpreter must not call at random: reference counting and
# thread state that the program's bookkeeping mirrors (api_program.c drives
# them), option initialisers (nothing to fuzz), and graph recording (thread
# state until ag_graph_record_end, which the generic callers cannot reach).
EXCLUDED = re.compile(r"(_retain|_release|_init)$|^ag_tag_scope_|^ag_set_callback_error$"
                      r"|^ag_scope_|^ag_grad_mode_set$|^ag_graph_record_")

ARR = "FZ_ARR"


def counts_of(fn):
    """Names of parameters that are the length of an array parameter."""
    return {p["length"] for p in fn["params"] if isinstance(p.get("length"), str)}


def emit(fn):
    """C body lines of a caller for fn, or None when a parameter is not fillable."""
    counts = counts_of(fn)
    lines, args, after = [], [], []
    for p in fn["params"]:
        c, name, d = p["type"]["c"], "a_" + p["name"], p.get("direction")
        has_len = "length" in p
        if name[2:] in counts and c in ("int32_t", "int64_t", "size_t") and d == "in":
            lines.append(f"{c} {name} = ({c})fz_count(p);")
        elif c in ("const ag_tensor *", "ag_tensor *") and d == "in":
            lines.append(f"ag_tensor *{name} = fz_tensor(p);")
        elif c == "ag_tensor * *" and d == "out" and not has_len:
            lines.append(f"ag_tensor *{name} = FZ_SENT_T;")
            lines.append(f"ag_tensor **{name}_p = fz_out_ptr(p, &{name});")
            args.append(f"{name}_p")
            after.append(f"fz_keep_out(p, st, {name}, {1 if p.get('nullable') else 0});")
            continue
        elif c == "ag_tensor * *" and d == "out":
            lines.append(f"ag_tensor *{name}[{ARR}];")
            lines.append(f"fz_sentinels({name}, {ARR});")
            after.append(f"fz_keep_outs(p, st, {name}, {ARR});")
        elif c in ("const ag_tensor *const  *", "ag_tensor *const  *") and d == "in":
            lines.append(f"ag_tensor *{name}_v[{ARR}];")
            lines.append(f"void *{name} = fz_tensors(p, {name}_v);")
        elif c in ("ag_context *", "const ag_context *") and d == "in":
            lines.append(f"ag_context *{name} = fz_ctx(p);")
        elif c == "ag_context * *" and d == "out":
            lines.append(f"ag_context *{name} = FZ_SENT_C;")
            lines.append(f"ag_context **{name}_p = fz_out_ptr(p, &{name});")
            args.append(f"{name}_p")
            after.append(f"if (st == AG_OK) ag_context_release({name}); else fz_expect(p, {name} == FZ_SENT_C, \"out context written on failure\");")
            continue
        elif c == "const int64_t *" and d == "in" and has_len:
            lines.append(f"int64_t {name}_v[{ARR}];")
            lines.append(f"const int64_t *{name} = fz_i64s(p, {name}_v);")
        elif c in ("int32_t", "int64_t", "uint64_t", "uint32_t", "size_t") and d == "in":
            lines.append(f"{c} {name} = ({c})fz_int(p);")
        elif c in ("ag_dtype", "ag_status") and d == "in":
            lines.append(f"{c} {name} = ({c})fz_small(p);")
        elif c == "double" and d == "in":
            lines.append(f"double {name} = fz_double(p);")
        elif c == "const char *" and d == "in":
            lines.append(f"const char *{name} = fz_string(p);")
        elif c in ("int32_t *", "int64_t *", "uint64_t *", "double *", "size_t *") and d == "out" and not has_len:
            base = c[:-2]
            lines.append(f"{base} {name} = 0;")
            lines.append(f"{base} *{name}_p = fz_out_ptr(p, &{name});")
            args.append(f"{name}_p")
            continue
        elif c == "int64_t *" and d == "out" and has_len:
            lines.append(f"int64_t {name}[{ARR}];")
        else:
            return None
        args.append(name)
    ret = fn["returns"]
    call = f"{fn['name']}({', '.join(args)})"
    if ret.get("status"):
        lines.append(f"const ag_status st = {call};")
        lines.append(f'fz_check_status(p, st, "{fn["name"]}");')
    else:
        lines.append(f"(void){call};")
        if after:
            lines.append("const ag_status st = AG_OK;")
    lines += after
    return lines


def call_id(name):
    """A 16-bit id from the name (FNV-1a, folded): programs pick functions by
    id, so adding a function leaves the programs kept in tests/regress
    calling what they called."""
    h = 0x811C9DC5
    for ch in name.encode():
        h = ((h ^ ch) * 0x01000193) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 0xFFFF


def main():
    api = json.load(open(sys.argv[1]))
    callers, skipped = [], []
    for fn in sorted(api["functions"], key=lambda f: f["name"]):
        if EXCLUDED.search(fn["name"]):
            continue
        body = emit(fn)
        if body is None:
            skipped.append(fn["name"])
            continue
        callers.append((fn["name"], body))
    out = ["/* Generated by tests/fuzz/gen_api_calls.py from ag-api.json: do not edit. */",
           f"/* {len(callers)} functions driven generically; not fillable here (driven by hand",
           " * in api_program.c, or not at all): " + ", ".join(skipped) + ". */", ""]
    for name, body in callers:
        out.append(f"static void fzc_{name}(Prog *p) {{")
        out.append("  (void)p;")
        out += ["  " + line for line in body]
        out.append("}")
    ids, used = [], set()
    for name, _ in callers:  # a collision takes the next free id
        i = call_id(name)
        while i in used:
            i = (i + 1) & 0xFFFF
        used.add(i)
        ids.append((i, name))
    out.append("/* sorted by id */")
    out.append("static const FzCall FZ_CALLS[] = {")
    out += [f'  {{0x{i:04x}, "{name}", fzc_{name}}},' for i, name in sorted(ids)]
    out.append("};")
    out.append("#define FZ_NCALLS ((int)(sizeof FZ_CALLS / sizeof FZ_CALLS[0]))")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
