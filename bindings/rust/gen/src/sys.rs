//! ag-sys/src/generated.rs: handles, aliases, callbacks, structs, constants,
//! `extern "C"` declarations, run-time lookups of symbols newer than the
//! first symbol version, and tables for the layout tests.

use crate::json::Json;
use crate::{doc_block, ident, HEADER};

/// Rust spelling of a C scalar base type.
fn scalar(base: &str) -> &'static str {
    match base {
        "int8_t" => "i8",
        "uint8_t" => "u8",
        "int16_t" => "i16",
        "uint16_t" => "u16",
        "int32_t" | "int" => "i32",
        "uint32_t" => "u32",
        "int64_t" => "i64",
        "uint64_t" => "u64",
        "size_t" => "usize",
        "double" => "f64",
        "float" => "f32",
        "char" => "c_char",
        "void" => "c_void",
        other => panic!("ag-gen: unknown scalar type {other:?}"),
    }
}

/// Rust type of a type object of the description (param, field or return).
pub(crate) fn rust_type(t: &Json) -> String {
    let kind = t.at("kind").str();
    let base = t.at("base").str();
    let pointers = t.at("pointers").int() as usize;
    let consts: Vec<bool> = t.at("const").arr().iter().map(|b| b == &Json::Bool(true)).collect();
    let mut ty = match kind {
        "handle" | "struct" | "alias" => base.to_string(),
        "callback" => return base.to_string(),
        // The description gives no signature for these (see ag_untyped_fn).
        "function_pointer" => return "ag_untyped_fn".to_string(),
        "scalar" => scalar(base).to_string(),
        other => panic!("ag-gen: unknown type kind {other:?}"),
    };
    for level in 0..pointers {
        let pointee_const = consts.get(level).copied().unwrap_or(false);
        ty = format!("{} {ty}", if pointee_const { "*const" } else { "*mut" });
    }
    ty
}

fn is_void(t: &Json) -> bool {
    t.at("base").str() == "void" && t.at("pointers").int() == 0
}

/// `(a: T, b: U) -> R` of a function or callback.
fn signature(params: &[Json], returns: &Json, with_names: bool) -> String {
    let ps: Vec<String> = params
        .iter()
        .map(|p| {
            let ty = rust_type(p.at("type"));
            if with_names {
                format!("{}: {ty}", ident(p.at("name").str()))
            } else {
                ty
            }
        })
        .collect();
    let ret = returns.at("type");
    if is_void(ret) {
        format!("({})", ps.join(", "))
    } else {
        format!("({}) -> {}", ps.join(", "), rust_type(ret))
    }
}

/// Rust type and literal of a constant (the description gives values, not types).
fn constant(value: &Json) -> (&'static str, String) {
    let text = value.num_text();
    if let Ok(v) = text.parse::<i32>() {
        ("i32", v.to_string())
    } else if let Ok(v) = text.parse::<i64>() {
        ("i64", v.to_string())
    } else {
        let v: u64 = text.parse().unwrap_or_else(|_| panic!("ag-gen: constant {text} fits no integer type"));
        ("u64", v.to_string())
    }
}

pub fn generate_sys(api: &Json) -> String {
    let mut s = String::from(HEADER);
    s += "#![allow(non_camel_case_types, non_snake_case, clippy::missing_safety_doc)]\n\n";
    s += "use core::ffi::{c_char, c_void};\nuse core::marker::{PhantomData, PhantomPinned};\n\n";
    s += &format!("/// Version of the description these declarations were generated from.\npub const API_VERSION: &str = {:?};\n", api.at("version").str());
    let versions: Vec<String> = api.at("abi").at("symbol_versions").arr().iter().map(|v| format!("{:?}", v.str())).collect();
    s += &format!("/// Symbol versions of libag, oldest first.\npub const SYMBOL_VERSIONS: &[&str] = &[{}];\n\n", versions.join(", "));

    s += "// ---- aliases ----\n\n";
    for a in api.at("aliases").arr() {
        s += &format!("pub type {} = {};\n", a.at("name").str(), scalar(a.at("type").str()));
    }

    s += "\n// ---- handles (opaque; only pointers to them exist) ----\n\n";
    for h in api.at("handles").arr() {
        s += &doc_block(h.opt_str("doc").unwrap_or(""), "", &[]);
        s += &format!(
            "#[repr(C)]\npub struct {} {{\n    _private: [u8; 0],\n    _marker: PhantomData<(*mut u8, PhantomPinned)>,\n}}\n\n",
            h.at("name").str()
        );
    }

    s += "// ---- callbacks ----\n\n";
    s += "/// A function pointer whose signature ag-api.json does not give (DLPack's\n/// `deleter` fields); cast it to the signature documented in the header.\npub type ag_untyped_fn = Option<unsafe extern \"C\" fn()>;\n\n";
    for c in api.at("callbacks").arr() {
        s += &doc_block(c.opt_str("doc").unwrap_or(""), "", &[]);
        s += &format!(
            "pub type {} = Option<unsafe extern \"C\" fn{}>;\n\n",
            c.at("name").str(),
            signature(c.at("params").arr(), c.at("returns"), true)
        );
    }

    s += "// ---- constants ----\n\n";
    for c in api.at("constants").arr() {
        let (ty, lit) = constant(c.at("value"));
        s += &format!("pub const {}: {ty} = {lit};\n", c.at("name").str());
    }

    s += "\n// ---- structs ----\n\n";
    for st in api.at("structs").arr() {
        s += &doc_block(st.opt_str("doc").unwrap_or(""), "", &[]);
        s += &format!("#[repr(C)]\n#[derive(Debug, Clone, Copy)]\npub struct {} {{\n", st.at("name").str());
        for f in st.at("fields").arr() {
            let doc = f.opt_str("doc").unwrap_or("");
            if !doc.is_empty() {
                s += &format!("    /// {}\n", doc.replace('\n', " ").replace('[', "\\[").replace(']', "\\]"));
            }
            s += &format!("    pub {}: {},\n", ident(f.at("name").str()), rust_type(f.at("type")));
        }
        s += "}\n\n";
    }

    let baseline = api.at("abi").at("symbol_versions").arr()[0].str().to_string();
    s += "// ---- functions ----\n\n";
    s += "unsafe extern \"C\" {\n";
    for f in api.at("functions").arr() {
        let name = f.at("name").str();
        let since = f.at("since").str();
        let extra = vec![format!("`{name}` ({}, since {since}).", f.at("header").str())];
        s += &doc_block(f.opt_str("doc").unwrap_or(""), "    ", &extra);
        s += &format!("    pub fn {name}{};\n\n", signature(f.at("params").arr(), f.at("returns"), true));
    }
    s += "}\n\n";

    s += "/// Functions newer than the first symbol version, looked up in the loaded\n";
    s += "/// libag at run time, so a program runs (and reports what is missing)\n";
    s += &format!("/// against a libag that predates them. Linking them directly would need\n/// them at link time. Baseline: {baseline}.\n");
    s += "pub mod optional {\n    use super::*;\n\n";
    for f in api.at("functions").arr() {
        let since = f.at("since").str();
        if since == baseline {
            continue;
        }
        let name = f.at("name").str();
        let sig = signature(f.at("params").arr(), f.at("returns"), false);
        s += &format!("    /// `{name}` (since {since}), or `None` when the loaded libag lacks it.\n");
        s += &format!("    pub fn {name}() -> Option<unsafe extern \"C\" fn{sig}> {{\n");
        s += &format!("        static SLOT: crate::dynamic::Slot = crate::dynamic::Slot::new(c\"{name}\");\n");
        s += "        // SAFETY: the symbol has the C type declared in the extern block above.\n";
        s += &format!("        SLOT.get().map(|p| unsafe {{ core::mem::transmute::<*mut c_void, unsafe extern \"C\" fn{sig}>(p) }})\n    }}\n\n");
    }
    s += "}\n\n";

    s += "// ---- tables for tests and bindings ----\n\n";
    s += "/// Every function of the description with its symbol version.\npub const FUNCTIONS: &[(&str, &str)] = &[\n";
    for f in api.at("functions").arr() {
        s += &format!("    ({:?}, {:?}),\n", f.at("name").str(), f.at("since").str());
    }
    s += "];\n\n";
    s += "/// Every op of ops.def: (name, family, C function).\npub const OPS: &[(&str, &str, &str)] = &[\n";
    for o in api.at("ops").arr() {
        s += &format!("    ({:?}, {:?}, {:?}),\n", o.at("name").str(), o.at("family").str(), o.at("function").str());
    }
    s += "];\n\n";
    s += "/// Every constant as i64 (u64 ones as their bit pattern, as ag_constant_value gives them).\n";
    s += "pub const CONSTANT_VALUES: &[(&str, i64)] = &[\n";
    for c in api.at("constants").arr() {
        let (ty, _) = constant(c.at("value"));
        let name = c.at("name").str();
        let value = if ty == "i64" { name.to_string() } else { format!("{name} as i64") };
        s += &format!("    ({name:?}, {value}),\n");
    }
    s += "];\n\n";
    s += "/// Layout of a struct as Rust compiled it and as the description states it.\n#[derive(Debug)]\npub struct StructLayout {\n    pub name: &'static str,\n    pub size: usize,\n    pub align: usize,\n    pub described_size: usize,\n    pub described_align: usize,\n    /// (field, Rust offset, described offset)\n    pub fields: &'static [(&'static str, usize, usize)],\n}\n\n";
    s += "pub const STRUCT_LAYOUTS: &[StructLayout] = &[\n";
    for st in api.at("structs").arr() {
        let name = st.at("name").str();
        s += &format!(
            "    StructLayout {{\n        name: {name:?},\n        size: core::mem::size_of::<{name}>(),\n        align: core::mem::align_of::<{name}>(),\n        described_size: {},\n        described_align: {},\n        fields: &[\n",
            st.at("size").int(),
            st.at("align").int()
        );
        for f in st.at("fields").arr() {
            let fname = f.at("name").str();
            s += &format!(
                "            ({fname:?}, core::mem::offset_of!({name}, {}), {}),\n",
                ident(fname),
                f.at("offset").int()
            );
        }
        s += "        ],\n    },\n";
    }
    s += "];\n";
    s
}
