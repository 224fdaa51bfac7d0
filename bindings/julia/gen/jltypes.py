"""The fixed C -> Julia type map shared by the generator and the checker."""

SCALARS = {
    "int8_t": "Int8", "int16_t": "Int16", "int32_t": "Int32", "int64_t": "Int64",
    "uint8_t": "UInt8", "uint16_t": "UInt16", "uint32_t": "UInt32", "uint64_t": "UInt64",
    "size_t": "Csize_t", "double": "Cdouble", "float": "Cfloat", "char": "Cchar", "void": "Cvoid",
}


def julia_type(t, api):
    """Julia type of a C type record of ag-api.json (params, returns, fields)."""
    base, ptrs, kind = t["base"], t["pointers"], t["kind"]
    aliases = {a["name"]: a["type"] for a in api["aliases"]}
    if kind in ("callback", "function_pointer"):
        inner = "Ptr{Cvoid}"
        ptrs = ptrs if kind == "callback" else 0
    elif base == "char" and ptrs == 1 and t["const"][0]:
        return "Cstring"
    elif base in aliases:
        inner = SCALARS[aliases[base]]
    elif base in SCALARS:
        inner = SCALARS[base]
    else:  # handles and structs by name
        inner = base
    for _ in range(ptrs):
        inner = "Ptr{%s}" % inner
    return inner
