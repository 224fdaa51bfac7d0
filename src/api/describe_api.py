#!/usr/bin/env python3
"""Describe ag's C API for binding generators: writes ag-api.json from the
public headers, src/ops/ops.def and src/ag.map, and the C tables behind
ag_struct_size / ag_struct_field_offset / ag_constant_value.

The headers follow fixed patterns (ABI.md): every function is one
`AG_API <ret> <name>(<params>) AG_NOEXCEPT;` declaration after its `/** */`
comment, structs are `typedef struct X {...} X;` of fixed-width fields,
constants are object-like `#define AG_*` macros with integer values. A
declaration this script cannot read is an error, never skipped.

usage: describe_api.py --include DIR --ops-def FILE --map FILE
                       [--json OUT] [--tables OUT] [--check COMMITTED]
"""
import argparse
import json
import os
import re
import sys

SCALARS = {  # C type -> (size, kind); LP64, which is what ag builds for
    "int8_t": (1, "int"), "uint8_t": (1, "uint"), "int16_t": (2, "int"), "uint16_t": (2, "uint"),
    "int32_t": (4, "int"), "uint32_t": (4, "uint"), "int64_t": (8, "int"), "uint64_t": (8, "uint"),
    "size_t": (8, "uint"), "double": (8, "float"), "float": (4, "float"), "char": (1, "char"),
    "void": (0, "void"),
}
POINTER_SIZE = 8
# Names of count parameters that give the length of the pointer before them.
COUNT_NAME = re.compile(r"^(n|ndim|ndims|n[a-z]+s|count|capacity|num_\w+|n_\w+|\w+_count)$")
# Array lengths that are not the next parameter.
ARRAY_LENGTH = {
    ("ag_grad", "grads"): "num_inputs",
    ("ag_grad", "grad_outputs"): "num_outputs", ("ag_grad", "outputs"): "num_outputs",
    ("ag_vjp", "vjp"): "num_inputs", ("ag_vjp", "outputs"): "num_outputs",
    ("ag_vjp", "v"): "num_outputs",
    ("ag_jvp", "jvp"): "num_outputs", ("ag_jvp", "outputs"): "num_outputs",
    ("ag_jvp", "v"): "num_inputs",
    ("ag_hvp", "hvp"): "num_inputs", ("ag_hvp", "v"): "num_inputs",
    ("ag_function_apply", "outputs"): "num_outputs",
    ("ag_tensor_from_buffer", "shape"): "ndim", ("ag_tensor_from_buffer_flags", "shape"): "ndim",
}
# Phrases that allow NULL for the names before them in a sentence.
NULL_OK = re.compile(r"(each |both )?[Mm]ay (then |also |only )?be NULL|\bor NULL\b|\bNULL (=|for defaults|means|seeds)")
# Returned strings: static unless listed here.
BORROWED_STRINGS = {"ag_last_error_message", "ag_tensor_tag", "ag_node_tag", "ag_tag_scope_current",
                    "ag_node_name", "ag_tensor_grad_fn_name"}


class ApiError(Exception):
    pass


def strip_comments(text):
    """Comments blanked out, offsets kept."""
    return re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def clean_doc(comment):
    body = comment[3:-2] if comment.startswith("/**") else comment[2:-2]
    lines = [re.sub(r"^\s*\* ?", "", line).rstrip() for line in body.splitlines()]
    return "\n".join(lines).strip()


def parse_type(text):
    """'const ag_tensor *const *' -> {'c', 'base', 'pointers', 'const'} (const[0] = base)."""
    toks = re.findall(r"\w+|\*", text)
    base, consts, pointers = None, [False], 0
    for tok in toks:
        if tok == "const":
            consts[-1] = True
        elif tok == "struct":
            continue
        elif tok == "*":
            pointers += 1
            consts.append(False)
        elif base is None:
            base = tok
        else:
            raise ApiError("cannot read type %r" % text)
    if base is None:
        raise ApiError("cannot read type %r" % text)
    c = ("const " if consts[0] else "") + base
    for i in range(1, pointers + 1):
        c += " *" + ("const" if consts[i] else "")
    return {"c": c.replace("*const", "*const ").strip(), "base": base, "pointers": pointers, "const": consts}


def split_params(text):
    text = " ".join(text.split())
    if text in ("", "void"):
        return []
    out = []
    for part in text.split(","):
        m = re.match(r"^(.*?)(\w+)(\[(\d+)\])?$", part.strip())
        if not m or not m.group(1).strip():
            raise ApiError("cannot read parameter %r" % part)
        t = parse_type(m.group(1) + (" *" if m.group(3) else ""))
        if m.group(4):
            t["fixed_length"] = int(m.group(4))  # `const int64_t stride[2]`
        out.append((m.group(2), t))
    return out


class Headers:
    def __init__(self, include_dir):
        self.functions, self.structs, self.handles, self.callbacks = [], [], [], []
        self.aliases, self.constants, self.init_macros = {}, [], {}
        # libag's headers are ag.h and those it includes; other headers beside
        # them (ag/dist.h) belong to separate libraries.
        with open(os.path.join(include_dir, "ag", "ag.h")) as f:
            names = sorted(["ag.h"] + re.findall(r'^#include "ag/(\w+\.h)"', f.read(), re.M))
        for name in names:
            with open(os.path.join(include_dir, "ag", name)) as f:
                self.read("ag/" + name, f.read())

    def read(self, header, text):
        # Doc comments by end offset, so a declaration finds the one just before it.
        docs = [(m.end(), clean_doc(m.group(0))) for m in re.finditer(r"/\*\*.*?\*/", text, re.S)]
        code = strip_comments(text)
        # Declarations are read with preprocessor lines blanked (offsets kept).
        decls = re.sub(r"^[ \t]*#[^\n]*", lambda m: " " * len(m.group(0)), code, flags=re.M)

        def doc_before(pos):
            best = ""
            for end, doc in docs:
                if end <= pos and not code[end:pos].strip():
                    best = doc
            return best

        for m in re.finditer(r"^#define\s+(AG_\w+)[ \t]+([^\n]*)$", code, re.M):
            name, value = m.group(1), m.group(2).strip()
            if name in ("AG_API", "AG_NOEXCEPT", "AG_BEGIN_DECLS", "AG_END_DECLS") or name.endswith("_H"):
                continue
            if value.startswith("{"):
                self.init_macros[name] = value
                continue
            line_comment = re.search(re.escape(m.group(0).strip()) + r"[ \t]*/\*(.*?)\*/", text)
            self.constants.append({"name": name, "expr": value, "header": header,
                                   "doc": line_comment.group(1).strip() if line_comment else ""})
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;", code):
            self.handles.append({"name": m.group(2), "header": header, "doc": doc_before(m.start())})
        for m in re.finditer(r"typedef\s+(int32_t|int64_t|uint32_t|uint64_t)\s+(\w+)\s*;", code):
            self.aliases[m.group(2)] = m.group(1)
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", code, re.S):
            self.structs.append({"name": m.group(3), "header": header, "doc": doc_before(m.start()),
                                 "raw_fields": self.read_fields(m.group(2), text, m.start(2))})
        for m in re.finditer(r"typedef\s+([\w\s\*]+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*?)\)\s*;", code, re.S):
            self.callbacks.append({"name": m.group(2), "header": header, "doc": doc_before(m.start()),
                                   "returns": parse_type(m.group(1)),
                                   "params": [{"name": n, "type": t} for n, t in split_params(m.group(3))]})
        top = clean_doc(re.match(r"\s*(/\*.*?\*/)", text, re.S).group(1)) if text.lstrip().startswith("/*") else ""
        prev_end, prev_doc = -1, ""
        for m in re.finditer(r"AG_API\b(.*?)\bAG_NOEXCEPT\s*;", decls, re.S):
            decl = " ".join(m.group(1).split())
            doc = doc_before(m.start())
            if not doc and prev_end >= 0 and not code[prev_end:m.start()].strip():
                doc = prev_doc  # declarations that share one comment
            prev_end, prev_doc = m.end(), doc
            d = re.match(r"^(.*?)\b(ag_\w+)\s*\((.*)\)$", decl)
            if not d:
                raise ApiError("%s: cannot read declaration %r" % (header, decl))
            self.functions.append({"name": d.group(2), "header": header, "doc": doc, "header_doc": top,
                                   "returns": parse_type(d.group(1)), "raw_params": split_params(d.group(3))})

    @staticmethod
    def read_fields(body, text, body_offset):
        fields = []
        for m in re.finditer(r"([^;]+);", body):
            decl = " ".join(m.group(1).split())
            fp = re.match(r"^(.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", decl)
            # The comment after the field, read from the original text.
            tail = text[body_offset + m.end(): body_offset + m.end() + 200]
            cm = re.match(r"[ \t]*/\*(.*?)\*/", tail, re.S)
            doc = " ".join(cm.group(1).split()) if cm else ""
            if fp:
                fields.append((fp.group(2), {"c": decl, "base": "void", "pointers": 1, "const": [False, False],
                                             "function": {"returns": parse_type(fp.group(1)),
                                                          "params": split_params(fp.group(3))}}, doc))
                continue
            fm = re.match(r"^(.*?)(\w+)(\[(\d+)\])?$", decl)
            if not fm:
                raise ApiError("cannot read field %r" % decl)
            t = parse_type(fm.group(1))
            if fm.group(4):
                t["array"] = int(fm.group(4))
            fields.append((fm.group(2), t, doc))
        return fields


def eval_constant(expr, known):
    e = re.sub(r"/\*.*", "", expr).strip()
    e = re.sub(r"UINT64_C\((\w+)\)", r"\1", e)
    e = re.sub(r"\b(AG_\w+)\b", lambda m: str(known[m.group(1)]), e)
    if not re.fullmatch(r"[\s\d()+\-*xXa-fA-F]+", e):
        raise ApiError("constant expression %r is not an integer expression" % expr)
    return int(eval(e, {"__builtins__": {}}))


# A row of ops.def: AG_OP(name, FAMILY, CHECK, FLAGS, (DOMAIN), (ATTRS)).
OP_ROW = re.compile(r"^AG_OP\((\w+),\s*(\w+),\s*(\w+),\s*([\w |]+?),\s*\(([^)]*)\),\s*\(([^)]*)\)\)", re.M)


def read_ops(path):
    """The ops of ops.def: name, signature family, C function, gradient check, internal."""
    ops = []
    with open(path) as f:
        text = f.read()
    for m in OP_ROW.finditer(text):
        flags = {x.strip() for x in m.group(4).split("|")} - {"0"}
        op = {"name": m.group(1), "family": m.group(2), "function": "ag_op_" + m.group(1),
              "check": m.group(3), "internal": "INTERNAL" in flags}
        if m.group(5).strip():  # where a gradient check samples the inputs: [lo, hi(, lo2, hi2)]
            op["domain"] = [float(x) for x in m.group(5).split(",")]
        ops.append(op)
    if len(ops) != len(re.findall(r"^AG_OP\(", text, re.M)):
        raise ApiError("%s: a row does not read as AG_OP(name, FAMILY, CHECK, FLAGS, (...), (...))" % path)
    return ops


def read_map(path):
    versions, node = {}, None
    with open(path) as f:
        for line in f:
            line = re.sub(r"/\*.*?\*/", "", line)
            nm = re.match(r"^\s*(AG_[\d.]+)\s*\{", line)
            if nm:
                node = nm.group(1)
                continue
            sm = re.match(r"^\s*(ag_\w+)\s*;", line)
            if sm and node:
                versions[sm.group(1)] = node
    return versions


def param_doc(doc, name):
    m = re.search(r"@param(\[(in|out|in,out)\])?\s+" + re.escape(name) + r"\b\s*(.*?)(?=\n\s*@|\Z)", doc, re.S)
    if not m:
        return None, ""
    return m.group(2), " ".join(m.group(3).split())


class Describer:
    def __init__(self, headers, ops, versions):
        self.h, self.ops, self.versions = headers, ops, versions
        self.handle_names = {x["name"] for x in headers.handles}
        self.struct_names = {x["name"] for x in headers.structs}
        self.callback_names = {x["name"] for x in headers.callbacks}
        self.layouts = {}

    def kind_of(self, base):
        if base in SCALARS:
            return "scalar"
        if base in self.h.aliases:
            return "alias"
        if base in self.handle_names:
            return "handle"
        if base in self.struct_names:
            return "struct"
        if base in self.callback_names:
            return "callback"
        raise ApiError("unknown type %r" % base)

    def has_struct_size(self, name):
        struct = next(x for x in self.h.structs if x["name"] == name)
        return bool(struct["raw_fields"]) and struct["raw_fields"][0][0] == "struct_size"

    def scalar_of(self, t):
        return SCALARS[self.h.aliases.get(t["base"], t["base"])]

    def layout(self, name):
        """size, align and field offsets of a struct (C rules, LP64)."""
        if name in self.layouts:
            return self.layouts[name]
        struct = next(s for s in self.h.structs if s["name"] == name)
        offset, align, fields = 0, 1, []
        for fname, t, doc in struct["raw_fields"]:
            if t["pointers"] or self.kind_of(t["base"]) == "callback":
                size = a = POINTER_SIZE
            elif self.kind_of(t["base"]) == "struct":
                size, a, _ = self.layout(t["base"])
            else:
                size = a = self.scalar_of(t)[0]
            count = t.get("array", 1)
            offset = (offset + a - 1) // a * a
            fields.append({"name": fname, "type": self.describe_type(t), "offset": offset,
                           "size": size * count, "doc": doc})
            offset += size * count
            align = max(align, a)
        size = (offset + align - 1) // align * align
        self.layouts[name] = (size, align, fields)
        return self.layouts[name]

    def describe_type(self, t):
        out = {"c": t["c"], "base": t["base"], "pointers": t["pointers"], "const": t["const"],
               "kind": "function_pointer" if t.get("function") else self.kind_of(t["base"])}
        if out["kind"] == "alias":
            out["underlying"] = self.h.aliases[t["base"]]
        if "array" in t:
            out["array"] = t["array"]
        if t.get("function"):
            fn = t["function"]
            out["returns"] = {"c": fn["returns"]["c"], "base": fn["returns"]["base"],
                              "pointers": fn["returns"]["pointers"]}
            out["params"] = [{"name": pn, "c": pt["c"], "base": pt["base"], "pointers": pt["pointers"]}
                             for pn, pt in fn["params"]]
        return out

    def param(self, fn, params, i, doc, header_doc=""):
        name, t = params[i]
        desc = self.describe_type(t)
        tagged, pdoc = param_doc(doc, name)
        kind, p = desc["kind"], t["pointers"]
        top_const = t["const"][p] if p else False
        pointee_const = t["const"][p - 1] if p else False
        direction, ownership = "in", None
        if kind == "callback":
            direction = "in"
        elif kind == "handle" and p == 1:
            ownership = "borrowed"
        elif kind == "handle" and p == 2 and t["const"][1]:
            ownership = "borrowed"  # an array of borrowed handles
        elif kind == "handle" and p == 2:
            direction = "out"
            ownership = "borrowed" if t["base"] == "ag_node" else "new_reference"
        elif kind == "struct" and p == 1:
            direction = "in" if pointee_const else \
                ("out" if tagged == "out" and not self.has_struct_size(t["base"]) else "inout")
            ownership = "borrowed" if t["base"].startswith("ag_dlpack") else None
            if fn.startswith("ag_tensor_from_dlpack"):
                direction, ownership = "in", "transferred"  # ag calls its deleter
        elif kind == "struct" and p == 2:
            direction, ownership = "out", "new_reference"
        elif kind in ("scalar", "alias") and p >= 1:
            if t["base"] == "void":
                direction = "out" if p == 2 else ("user_data" if name in ("user_data", "deleter_ctx") else
                                                   ("in" if pointee_const or name == "data" else "out"))
            elif t["base"] == "char" and pointee_const:
                direction = "in"
            else:
                direction = "in" if pointee_const else "out"
        del top_const
        if tagged == "out" and not (kind == "struct" and p == 1 and self.has_struct_size(t["base"])):
            direction = "out"  # (a struct the caller stamps with struct_size stays inout)
        out = {"name": name, "type": desc, "direction": direction}
        if ownership:
            out["ownership"] = ownership
        if t["base"] == "char" and p == 1:
            out["string"] = pointee_const
        length = ARRAY_LENGTH.get((fn, name), t.get("fixed_length"))
        arrayish = kind in ("scalar", "alias") or (kind == "handle" and p == 2)
        if length is None and arrayish and p >= 1 and i + 1 < len(params) and t["base"] != "void":
            nname, nt = params[i + 1]
            if nt["pointers"] == 0 and COUNT_NAME.match(nname) and kind != "struct":
                length = nname
        if length is None and kind == "handle" and p == 2 and not t["const"][1] and \
                i + 1 < len(params) and params[i + 1][0] in ("capacity", "num_outputs"):
            length = params[i + 1][0]
        if length:
            out["length"] = length
        if t["base"] == "void" and p == 1 and i + 1 < len(params) and params[i + 1][0].endswith("_bytes"):
            out["bytes"] = params[i + 1][0]
        if (p >= 1 or kind == "callback") and (self.nullable(name, doc, pdoc, direction, header_doc) or
                                              (kind == "struct" and pointee_const and name == "opts")):
            out["nullable"] = True
        if direction == "out" and re.search(r"\bor NULL\b(?! to)", pdoc or ""):
            out["result_nullable"] = True
        if pdoc:
            out["doc"] = pdoc
        return out

    @staticmethod
    def nullable(name, doc, pdoc, direction, header_doc=""):
        """The doc says the argument may be NULL: its own @param text ("may be
        NULL", "NULL, or ...", "NULL for ..."), or a sentence of the function's
        doc (or of its header's opening comment) that names it right before
        "or NULL", "NULL = ...", "(may be NULL)", after "pass NULL for", in
        "name == NULL", or in a list before "(each|both|either) may be NULL"."""
        n = re.escape(name)
        if direction == "out":
            if re.search(r"may be NULL|NULL to\b|^NULL, or", pdoc or ""):
                return True
        elif re.search(NULL_OK, pdoc or "") or re.search(r"(^|[.;,] )NULL(,| (for|when|means)\b)", pdoc or ""):
            return True
        body, errors = (doc.split("@return", 1) + [""])[:2]
        if re.search(r"NULL (or invalid )?`?%s\b(?! with)" % n, errors):
            return False  # "AG_ERR_INVALID_ARGUMENT (NULL x or out, ...)"
        if direction == "out" and re.search(r"\b(?:[Ee]ither|[Aa]ny|[Ee]ach)\s+out-parameter\s+may\s+be\s+NULL", body):
            return True
        if re.search(r"`?\b%s`?\s*==\s*NULL|pass NULL for `?%s\b|\bNULL `?%s`? only if|with `?%s`? NULL\b" % (n, n, n, n), body + header_doc):
            return True
        for text in (body, header_doc):
            for sentence in re.split(r"(?<=[.;])\s+|\n(?=\s*[-@])", text):
                if direction == "out" and text is header_doc:
                    break
                for m in re.finditer(NULL_OK, sentence):
                    prefix = " ".join(sentence[:m.start()].split()).rstrip("( ")
                    if prefix.endswith(",") and m.group(0) == "or NULL":
                        continue  # "the tag of t, or NULL": a result, not an argument
                    joiner = r"(?:, | and )" if "may" in m.group(0) else r"(?!)"
                    run = re.search(r"((?:`?\w+`?(?: \([^)]*\))?%s)*`?\w+`?(?: \([^)]*\))?)"
                                    r"(?: of shape \([^)]*\))?,?\s*$" % joiner, prefix)
                    if run and name in re.findall(r"\w+", re.sub(r"\([^)]*\)", "", run.group(1))):
                        return True
        return False

    def function(self, f):
        name = f["name"]
        if name not in self.versions:
            newest = max(set(self.versions.values()), key=lambda v: [int(x) for x in re.findall(r"\d+", v)])
            raise ApiError("%s (%s) is declared but not in src/ag.map: add `    %s;` to node %s "
                           "(alphabetical)" % (name, f["header"], name, newest))
        params = [self.param(name, f["raw_params"], i, f["doc"], f["header_doc"]) for i in range(len(f["raw_params"]))]
        outs = [q for q in params if q["direction"] == "out"]
        if len(outs) == 1 and re.search(r"\bNULL with AG_OK\b", f["doc"]):
            outs[0]["result_nullable"] = True  # "a new reference ... (NULL with AG_OK if ...)"
        # "As ag_x, ..." / "ag_x that also ...": same-named parameters keep ag_x's NULL rules.
        like = re.match(r"(?:As )?(ag_\w+)\b", f["doc"])
        base = next((g for g in self.described if like and g["name"] == like.group(1)), None)
        for prm in params:
            same = next((q for q in base["params"] if q["name"] == prm["name"]), None) if base else None
            if same and same.get("nullable"):
                prm["nullable"] = True
        ret = {"type": self.describe_type(f["returns"])}
        rt = f["returns"]
        if rt["base"] == "ag_status" and rt["pointers"] == 0:
            ret["status"] = True
        elif rt["base"] == "char" and rt["pointers"] == 1:
            ret["ownership"] = "borrowed" if name in BORROWED_STRINGS else "static"
        elif self.kind_of(rt["base"]) == "handle":
            ret["ownership"] = "retained_argument" if name.endswith("_retain") else "borrowed"
        elif rt["pointers"]:
            ret["ownership"] = "borrowed"
        out = {"name": name, "header": f["header"], "since": self.versions[name], "returns": ret,
               "params": params, "doc": f["doc"]}
        if name.startswith("ag_op_") and name[6:] in self.op_names:
            out["op"] = name[6:]
        return out

    def describe(self, project_version):
        self.op_names = {o["name"] for o in self.ops}
        declared = {f["name"] for f in self.h.functions}
        for o in self.ops:
            if o["function"] not in declared and o["family"] != "INTERNAL":
                raise ApiError("op %s of ops.def has no declaration %s" % (o["name"], o["function"]))
            o["header"] = next((f["header"] for f in self.h.functions if f["name"] == o["function"]), None)
        known, constants = {}, []
        for c in self.h.constants:
            value = eval_constant(c["expr"], known)
            known[c["name"]] = value
            ctype = "uint64_t" if "UINT64_C" in c["expr"] else ("int32_t" if -2**31 <= value < 2**31 else "int64_t")
            constants.append({"name": c["name"], "value": value, "type": ctype, "header": c["header"],
                              "doc": c["doc"]})
        self.described = []
        for f in self.h.functions:
            self.described.append(self.function(f))
        structs = []
        for s in self.h.structs:
            size, align, fields = self.layout(s["name"])
            init = s["name"].upper() + "_INIT"
            entry = {"name": s["name"], "header": s["header"], "size": size, "align": align,
                     "fields": fields, "doc": s["doc"]}
            if init in self.h.init_macros:
                entry["init_macro"] = init
            if s["name"] + "_init" in declared:
                entry["init_function"] = s["name"] + "_init"
            structs.append(entry)
        return {
            "name": "ag",
            "version": project_version,
            "abi": {"pointer_size": POINTER_SIZE, "data_model": "LP64", "soname": "libag.so.0",
                    "symbol_versions": sorted(set(self.versions.values()))},
            "aliases": [{"name": k, "type": v} for k, v in sorted(self.h.aliases.items())],
            "handles": sorted(self.h.handles, key=lambda x: x["name"]),
            "callbacks": [{"name": c["name"], "header": c["header"], "doc": c["doc"],
                           "returns": {"type": self.describe_type(c["returns"])},
                           "params": [{"name": p["name"], "type": self.describe_type(p["type"])}
                                      for p in c["params"]]} for c in self.h.callbacks],
            "constants": constants,
            "structs": structs,
            "op_families": sorted({o["family"] for o in self.ops}),
            "ops": self.ops,
            "functions": self.described,
        }


def tables(api):
    """C source of the tables behind ag_struct_size & co., from the same description."""
    lines = ["/* Generated by src/api/describe_api.py from the public headers. Do not edit. */"]
    lines.append("static const ag_struct_entry kStructs[] = {")
    for s in api["structs"]:
        lines.append('    {"%s", sizeof(%s)},' % (s["name"], s["name"]))
    lines.append("};")
    lines.append("static const ag_field_entry kFields[] = {")
    for s in api["structs"]:
        for f in s["fields"]:
            lines.append('    {"%s", "%s", offsetof(%s, %s)},' % (s["name"], f["name"], s["name"], f["name"]))
    lines.append("};")
    lines.append("static const ag_constant_entry kConstants[] = {")
    for c in api["constants"]:
        lines.append('    {"%s", (int64_t)(%s)},' % (c["name"], c["name"]))
    lines.append("};")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--include", required=True)
    ap.add_argument("--ops-def", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--json")
    ap.add_argument("--tables")
    ap.add_argument("--check", help="fail if this committed copy differs from the generated description")
    args = ap.parse_args()
    try:
        api = Describer(Headers(args.include), read_ops(args.ops_def), read_map(args.map)).describe(args.version)
    except ApiError as e:
        print("describe_api.py: " + str(e), file=sys.stderr)
        return 1
    text = json.dumps(api, indent=1, sort_keys=False) + "\n"
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    if args.tables:
        with open(args.tables, "w") as f:
            f.write(tables(api))
    if args.check:
        with open(args.check) as f:
            if f.read() != text:
                print("%s is stale: regenerate it with\n  python3 src/api/describe_api.py --include include "
                      "--ops-def src/ops/ops.def --map src/ag.map --version %s --json %s"
                      % (args.check, args.version, args.check), file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
