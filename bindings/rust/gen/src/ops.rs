//! ag/src/ops_generated.rs: the `Status` enum (from the AG_ERR_* constants)
//! and one safe wrapper per `ag_op_*` function: every op of ops.def and the
//! in-place ops (`ag_op_<name>_`).
//!
//! Mapping: `ag_tensor **` outs become the result (a tuple when several, a Vec
//! for an out array), the first non-nullable tensor input becomes `self` (ops
//! whose first input is the context become `Context` methods and free
//! functions), nullable tensors `Option<&Tensor>`, `int64_t *` + count
//! `&[i64]`, fixed arrays `[i64; N]` (nullable: `Option<[i64; N]>`), tensor
//! arrays `&[&Tensor]`, `ag_dtype` `DType`.

use crate::json::Json;
use crate::{doc_block, ident, is_keyword, HEADER};
use std::collections::BTreeSet;

/// Names of methods of std traits that Tensor implements: an op of that name
/// would shadow them, so it gets `_op` appended (`clone` -> `clone_op`).
const TRAIT_METHODS: &[&str] = &["clone", "clone_from", "drop", "fmt"];

#[derive(Debug)]
enum Arg {
    /// `ag_tensor **` single output.
    OutTensor,
    /// `ag_tensor **` array of `capacity` outputs.
    OutArray { capacity: String },
    /// `int32_t *` count written by the call (the out array's length).
    OutCount,
    Tensor { nullable: bool },
    TensorSlice { count: String },
    Context,
    Dtype,
    I64Slice { count: String },
    I64Fixed { n: i64, nullable: bool },
    Scalar { ty: String },
    /// `const char *` string (einsum's equation): a `&str` copied with a NUL.
    Str,
    /// A count or capacity filled in from another argument.
    Derived,
}

struct Param {
    name: String,
    c_name: String,
    arg: Arg,
    c_ty: String,
}

fn classify(f: &Json) -> Vec<Param> {
    let params = f.at("params").arr();
    let mut derived: BTreeSet<String> = BTreeSet::new();
    for p in params {
        if let Some(Json::Str(len)) = p.get("length") {
            derived.insert(len.clone());
        }
    }
    let fname = f.at("name").str();
    params
        .iter()
        .map(|p| {
            let c_name = p.at("name").str().to_string();
            let t = p.at("type");
            let kind = t.at("kind").str();
            let base = t.at("base").str();
            let pointers = t.at("pointers").int();
            let dir = p.at("direction").str();
            let nullable = p.flag("nullable");
            let length = p.get("length");
            let arg = match (dir, kind, base, pointers) {
                _ if derived.contains(&c_name) && dir == "in" => Arg::Derived,
                ("out", "handle", "ag_tensor", 2) => match length {
                    None => Arg::OutTensor,
                    Some(Json::Str(cap)) => Arg::OutArray { capacity: cap.clone() },
                    Some(other) => panic!("ag-gen: {fname}.{c_name}: unsupported length {other:?}"),
                },
                ("out", "scalar", "int32_t", 1) => Arg::OutCount,
                ("in", "handle", "ag_tensor", 1) => Arg::Tensor { nullable },
                ("in", "handle", "ag_tensor", 2) => match length {
                    Some(Json::Str(count)) if !nullable => Arg::TensorSlice { count: count.clone() },
                    _ => panic!("ag-gen: {fname}.{c_name}: unsupported tensor array"),
                },
                ("in", "handle", "ag_context", 1) => Arg::Context,
                ("in", "alias", "ag_dtype", 0) => Arg::Dtype,
                ("in", "scalar", "int64_t", 1) => match length {
                    // A nullable array with a count: an empty slice stands for NULL.
                    Some(Json::Str(count)) => Arg::I64Slice { count: count.clone() },
                    Some(Json::Number(n)) => Arg::I64Fixed { n: n.parse().expect("fixed length"), nullable },
                    _ => panic!("ag-gen: {fname}.{c_name}: unsupported int64_t array"),
                },
                ("in", "scalar", "char", 1) if p.flag("string") && !nullable => Arg::Str,
                ("in", "scalar", _, 0) => Arg::Scalar { ty: crate::sys::rust_type(t) },
                _ => panic!("ag-gen: {fname}.{c_name}: unsupported parameter ({dir} {kind} {base} {pointers})"),
            };
            Param { name: ident(&c_name), c_name, arg, c_ty: crate::sys::rust_type(t) }
        })
        .collect()
}

/// Rust method name of an op: keywords become raw identifiers, std trait
/// method names get `_op`.
fn method_name(op: &str) -> String {
    if TRAIT_METHODS.contains(&op) {
        format!("{op}_op")
    } else if is_keyword(op) {
        format!("r#{op}")
    } else {
        op.to_string()
    }
}

enum Receiver {
    Tensor(usize),
    Context(usize),
    None,
}

fn receiver(params: &[Param]) -> Receiver {
    for (i, p) in params.iter().enumerate() {
        match p.arg {
            Arg::Tensor { nullable: false } => return Receiver::Tensor(i),
            Arg::Context => return Receiver::Context(i),
            Arg::TensorSlice { .. } => return Receiver::None,
            _ => {}
        }
    }
    Receiver::None
}

struct Wrapper {
    receiver: Receiver,
    name: String,
    text: String,
    /// Arguments after the receiver, for the free-function twin of Context methods.
    arg_names: Vec<String>,
    arg_decls: Vec<String>,
    ret: String,
    c_name: String,
}

fn wrapper(f: &Json, op_name: &str) -> Wrapper {
    let c_fn = f.at("name").str();
    let params = classify(f);
    let recv = receiver(&params);
    let recv_index = match recv {
        Receiver::Tensor(i) | Receiver::Context(i) => Some(i),
        Receiver::None => None,
    };
    let mut decls = Vec::new();
    let mut arg_names = Vec::new();
    let mut pre = String::new();
    let mut call_args = Vec::new();
    let mut outs = Vec::new();
    let mut out_array: Option<(String, String)> = None;
    let mut out_count: Option<String> = None;
    // The count behind a Derived parameter: the slice whose length it is.
    let length_of = |count_c: &str| -> Option<String> {
        params.iter().find_map(|q| match &q.arg {
            Arg::I64Slice { count } | Arg::TensorSlice { count } if count == count_c => Some(format!("{}.len()", q.name)),
            _ => None,
        })
    };
    for (i, p) in params.iter().enumerate() {
        let n = &p.name;
        let is_recv = Some(i) == recv_index;
        let value = if is_recv { "self".to_string() } else { n.clone() };
        match &p.arg {
            Arg::OutTensor => {
                pre += &format!("        let mut out_{n}: *mut sys::ag_tensor = core::ptr::null_mut();\n");
                call_args.push(format!("&mut out_{n}"));
                outs.push(format!("out_{n}"));
            }
            Arg::OutArray { capacity } => {
                out_array = Some((n.clone(), capacity.clone()));
                call_args.push(format!("out_{n}.as_mut_ptr()"));
            }
            Arg::OutCount => {
                out_count = Some(n.clone());
                call_args.push(format!("&mut count_{n}"));
            }
            Arg::Tensor { nullable } => {
                if !is_recv {
                    decls.push(format!("{n}: {}", if *nullable { "Option<&Tensor>" } else { "&Tensor" }));
                    arg_names.push(n.clone());
                }
                call_args.push(if *nullable { format!("crate::tensor::opt_ptr({value})") } else { format!("{value}.as_ptr()") });
            }
            Arg::TensorSlice { .. } => {
                decls.push(format!("{n}: &[&Tensor]"));
                arg_names.push(n.clone());
                pre += &format!("        let raw_{n}: Vec<*const sys::ag_tensor> = {n}.iter().map(|t| t.as_ptr().cast_const()).collect();\n");
                call_args.push(format!("raw_{n}.as_ptr()"));
            }
            Arg::Context => {
                if !is_recv {
                    decls.push(format!("{n}: &Context"));
                    arg_names.push(n.clone());
                }
                call_args.push(format!("{value}.as_ptr()"));
            }
            Arg::Dtype => {
                decls.push(format!("{n}: DType"));
                arg_names.push(n.clone());
                call_args.push(format!("{n}.raw()"));
            }
            Arg::I64Slice { .. } => {
                decls.push(format!("{n}: &[i64]"));
                arg_names.push(n.clone());
                call_args.push(format!("{n}.as_ptr()"));
            }
            Arg::I64Fixed { n: len, nullable } => {
                if *nullable {
                    decls.push(format!("{n}: Option<[i64; {len}]>"));
                    call_args.push(format!("{n}.as_ref().map_or(core::ptr::null(), |a| a.as_ptr())"));
                } else {
                    decls.push(format!("{n}: [i64; {len}]"));
                    call_args.push(format!("{n}.as_ptr()"));
                }
                arg_names.push(n.clone());
            }
            Arg::Scalar { ty } => {
                decls.push(format!("{n}: {ty}"));
                arg_names.push(n.clone());
                call_args.push(n.clone());
            }
            Arg::Str => {
                decls.push(format!("{n}: &str"));
                arg_names.push(n.clone());
                pre += &format!("        let c_{n} = crate::tensor::cstring({n})?;\n");
                call_args.push(format!("c_{n}.as_ptr()"));
            }
            Arg::Derived => {
                if let Some(len) = length_of(&p.c_name) {
                    call_args.push(format!("crate::error::count::<{}>({len})?", p.c_ty));
                } else if out_array.as_ref().is_some_and(|(_, cap)| cap == &p.c_name)
                    || params.iter().any(|q| matches!(&q.arg, Arg::OutArray { capacity } if capacity == &p.c_name))
                {
                    call_args.push(format!("crate::error::count::<{}>(capacity)?", p.c_ty));
                } else {
                    panic!("ag-gen: {c_fn}.{}: a count of nothing this generator knows", p.c_name);
                }
            }
        }
    }
    let call = format!("sys::{c_fn}({})", call_args.join(", "));
    let mut body = pre;
    let ret;
    if let Some((arr, _)) = &out_array {
        ret = "Vec<Tensor>".to_string();
        if let Some(cnt) = &out_count {
            // Header contract (not in the description): NULL outs with capacity 0 asks for the count.
            body += &format!("        let mut count_{cnt}: i32 = 0;\n");
            let query = call.replacen(&format!("out_{arr}.as_mut_ptr()"), "core::ptr::null_mut()", 1);
            let query = query.replace("crate::error::count::<i32>(capacity)?", "0");
            body += &format!("        check(unsafe {{ {query} }})?;\n");
            body += &format!("        let capacity = usize::try_from(count_{cnt}).unwrap_or(0);\n");
        } else {
            // The description gives no count for this out array: size it by the
            // lengths of the int64 arrays passed in, and keep the entries written.
            let lens: Vec<String> = params
                .iter()
                .filter(|q| matches!(q.arg, Arg::I64Slice { .. }))
                .map(|q| format!("{}.len()", q.name))
                .collect();
            let cap = if lens.is_empty() { "1".to_string() } else { format!("({}).max(1)", lens.join(" + ")) };
            body += &format!("        let capacity: usize = {cap};\n");
        }
        body += &format!("        let mut out_{arr}: Vec<*mut sys::ag_tensor> = vec![core::ptr::null_mut(); capacity];\n");
        body += &format!("        check(unsafe {{ {call} }})?;\n");
        body += &format!("        Ok(out_{arr}.into_iter().filter(|p| !p.is_null()).map(|p| unsafe {{ Tensor::from_raw(p) }}).collect())\n");
    } else {
        body += &format!("        check(unsafe {{ {call} }})?;\n");
        match outs.len() {
            0 => {
                ret = "()".to_string();
                body += "        Ok(())\n";
            }
            1 => {
                ret = "Tensor".to_string();
                body += &format!("        Ok(unsafe {{ Tensor::from_raw({}) }})\n", outs[0]);
            }
            k => {
                ret = format!("({})", vec!["Tensor"; k].join(", "));
                let parts: Vec<String> = outs.iter().map(|o| format!("Tensor::from_raw({o})")).collect();
                body += &format!("        Ok(unsafe {{ ({}) }})\n", parts.join(", "));
            }
        }
    }
    let name = method_name(op_name);
    let self_arg = match recv {
        Receiver::Tensor(_) | Receiver::Context(_) => "&self, ",
        Receiver::None => "",
    };
    let first_line = f.opt_str("doc").unwrap_or("").split("\n\n").next().unwrap_or("").replace('\n', " ");
    let summary = vec![format!("`{c_fn}`: {}", first_line.replace('[', "\\[").replace(']', "\\]").replace('<', "\\<"))];
    let mut text = doc_block(f.opt_str("doc").unwrap_or(""), "    ", &summary);
    if decls.len() + usize::from(!self_arg.is_empty()) > 7 {
        text += "    #[allow(clippy::too_many_arguments)]\n";
    }
    text += &format!("    pub fn {name}({self_arg}{}) -> Result<{ret}> {{\n{body}    }}\n", decls.join(", "));
    let text = text.replace("(&self, )", "(&self)");
    Wrapper { receiver: recv, name, text, arg_names, arg_decls: decls, ret, c_name: c_fn.to_string() }
}

fn status_variant(constant: &str) -> String {
    constant
        .trim_start_matches("AG_ERR_")
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + &c.as_str().to_ascii_lowercase(),
                None => String::new(),
            }
        })
        .collect()
}

pub fn generate_ops(api: &Json) -> String {
    let mut s = String::from(HEADER);
    s += "#![allow(clippy::should_implement_trait, clippy::missing_safety_doc)]\n\n";
    s += "use crate::error::{check, Result};\nuse crate::{Context, DType, Tensor};\nuse ag_sys as sys;\n\n";

    // Status from the AG_ERR_* constants.
    let errs: Vec<(String, String)> = api
        .at("constants")
        .arr()
        .iter()
        .map(|c| c.at("name").str().to_string())
        .filter(|n| n.starts_with("AG_ERR_"))
        .map(|n| (status_variant(&n), n))
        .collect();
    s += "/// A failing `ag_status` (`AG_ERR_*`); `Unknown` keeps codes newer than this binding.\n";
    s += "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\npub enum Status {\n";
    for (v, n) in &errs {
        s += &format!("    /// `{n}`\n    {v},\n");
    }
    s += "    /// A code this binding does not know (ag appends new ones).\n    Unknown(i32),\n}\n\n";
    s += "impl Status {\n    /// The Status of a failing code (`code != AG_OK`).\n    pub fn from_raw(code: i32) -> Status {\n        match code {\n";
    for (v, n) in &errs {
        s += &format!("            sys::{n} => Status::{v},\n");
    }
    s += "            other => Status::Unknown(other),\n        }\n    }\n\n    /// The C code.\n    pub fn raw(self) -> i32 {\n        match self {\n";
    for (v, n) in &errs {
        s += &format!("            Status::{v} => sys::{n},\n");
    }
    s += "            Status::Unknown(code) => code,\n        }\n    }\n}\n\n";

    let mut tensor_impl = String::new();
    let mut context_impl = String::new();
    let mut free = String::new();
    for f in api.at("functions").arr() {
        let c_fn = f.at("name").str();
        let Some(op_name) = c_fn.strip_prefix("ag_op_") else { continue };
        let is_op = f.get("op").is_some();
        let in_place = op_name.ends_with('_');
        if !is_op && !in_place {
            continue; // ag_op_count, ag_op_name: registry queries, not ops
        }
        let op_name = f.opt_str("op").unwrap_or(op_name);
        let w = wrapper(f, op_name);
        match w.receiver {
            Receiver::Tensor(_) => tensor_impl += &w.text,
            Receiver::Context(_) => {
                context_impl += &w.text;
                free += &format!("/// `{}` as a free function: see [`Context::{}`].\n", w.c_name, w.name.trim_start_matches("r#"));
                if w.arg_decls.len() >= 7 {
                    free += "#[allow(clippy::too_many_arguments)]\n";
                }
                let decls = std::iter::once("ctx: &Context".to_string()).chain(w.arg_decls.iter().cloned()).collect::<Vec<_>>();
                free += &format!(
                    "pub fn {}({}) -> Result<{}> {{\n    ctx.{}({})\n}}\n\n",
                    w.name,
                    decls.join(", "),
                    w.ret,
                    w.name,
                    w.arg_names.join(", ")
                );
            }
            Receiver::None => {
                free += w.text.replace("\n    ", "\n").trim_start();
                free += "\n";
            }
        }
    }
    s += "/// Ops whose first input is a tensor.\nimpl Tensor {\n";
    s += &tensor_impl;
    s += "}\n\n/// Ops that make tensors from a context alone.\nimpl Context {\n";
    s += &context_impl;
    s += "}\n\n// Ops without a single tensor receiver (tensor arrays), and the Context ops as free functions.\n\n";
    s += &free;
    s
}
