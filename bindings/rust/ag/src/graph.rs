//! Graph inspection, export, tag scopes and library information.

use crate::error::check;
use crate::tensor::cstring;
use crate::{Result, Tensor};
use ag_sys as sys;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr;

fn owned_str(p: *const std::ffi::c_char) -> Option<String> {
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// A node of a recorded graph, borrowed from the tensor that keeps it.
#[derive(Clone, Copy)]
pub struct Node<'t> {
    raw: *const sys::ag_node,
    _tensor: PhantomData<&'t Tensor>,
}

impl<'t> Node<'t> {
    /// "MulBackward", "AccumulateGrad", a custom function's name.
    pub fn name(&self) -> String {
        owned_str(unsafe { sys::ag_node_name(self.raw) }).unwrap_or_default()
    }

    /// Creation order on the recording thread (u64::MAX for AccumulateGrad).
    pub fn sequence_nr(&self) -> u64 {
        unsafe { sys::ag_node_sequence_nr(self.raw) }
    }

    /// Longest path to a leaf.
    pub fn topological_nr(&self) -> i64 {
        unsafe { sys::ag_node_topological_nr(self.raw) }
    }

    pub fn num_next_edges(&self) -> usize {
        usize::try_from(unsafe { sys::ag_node_num_next_edges(self.raw) }).unwrap_or(0)
    }

    /// Next node of edge `i` (None: that input needs no grad) and its input number.
    pub fn next_edge(&self, i: usize) -> Result<(Option<Node<'t>>, i32)> {
        let mut next = ptr::null();
        let mut input_nr = 0;
        check(unsafe { sys::ag_node_next_edge(self.raw, crate::error::count(i)?, &mut next, &mut input_nr) })?;
        Ok(((!next.is_null()).then_some(Node { raw: next, _tensor: PhantomData }), input_nr))
    }

    /// Bytes of tensors the node still keeps for backward.
    pub fn saved_bytes(&self) -> usize {
        unsafe { sys::ag_node_saved_bytes(self.raw) }
    }

    /// Tag scope open when the op was recorded.
    pub fn tag(&self) -> Option<String> {
        owned_str(unsafe { sys::ag_node_tag(self.raw) })
    }
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node").field("name", &self.name()).finish()
    }
}

/// Text formats of [`Tensor::export_graph`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Dot,
    Json,
}

impl Tensor {
    /// The node that produced this tensor (None for leaves).
    pub fn grad_fn(&self) -> Result<Option<Node<'_>>> {
        let mut out = ptr::null();
        check(unsafe { sys::ag_tensor_grad_fn(&mut out, self.as_ptr()) })?;
        Ok((!out.is_null()).then_some(Node { raw: out, _tensor: PhantomData }))
    }

    /// The graph behind this tensor as DOT or JSON text.
    pub fn export_graph(&self, format: GraphFormat) -> Result<String> {
        let fmt = match format {
            GraphFormat::Dot => sys::AG_GRAPH_DOT,
            GraphFormat::Json => sys::AG_GRAPH_JSON,
        };
        let mut needed = 0usize;
        check(unsafe { sys::ag_graph_export(self.as_ptr(), fmt, ptr::null_mut(), 0, &mut needed) }).or_else(|e| {
            if e.status == crate::Status::BufferTooSmall {
                Ok(())
            } else {
                Err(e)
            }
        })?;
        let mut buf = vec![0u8; needed];
        check(unsafe { sys::ag_graph_export(self.as_ptr(), fmt, buf.as_mut_ptr().cast(), buf.len(), &mut needed) })?;
        buf.truncate(needed.saturating_sub(1));
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

/// Runs `f` inside a tag scope: ops it records carry `name` (joined with
/// enclosing scopes by '/'), which anomaly and version errors report.
pub fn tag_scope<R>(name: &str, f: impl FnOnce() -> R) -> Result<R> {
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            unsafe { sys::ag_tag_scope_pop() };
        }
    }
    let c = cstring(name)?;
    check(unsafe { sys::ag_tag_scope_push(c.as_ptr()) })?;
    let _pop = Pop;
    Ok(f())
}

/// The calling thread's innermost tag scope.
pub fn current_tag_scope() -> Option<String> {
    owned_str(unsafe { sys::ag_tag_scope_current() })
}

/// The loaded library's version ("0.1.0").
pub fn version_string() -> String {
    owned_str(unsafe { sys::ag_version_string() }).unwrap_or_default()
}

/// The loaded library's version as major * 10000 + minor * 100 + patch.
pub fn version_number() -> i32 {
    unsafe { sys::ag_version_number() }
}

/// Names of the ops the loaded library registers.
pub fn op_names() -> Vec<String> {
    let n = unsafe { sys::ag_op_count() };
    (0..n).filter_map(|i| owned_str(unsafe { sys::ag_op_name(i) })).collect()
}

/// sizeof of a public struct in the loaded library (None: unknown name).
pub fn struct_size(name: &str) -> Result<Option<usize>> {
    let f = crate::error::need(sys::optional::ag_struct_size(), "ag_struct_size")?;
    let c = cstring(name)?;
    let n = unsafe { f(c.as_ptr()) };
    Ok((n != 0).then_some(n))
}

/// offsetof of a field in the loaded library (None: unknown struct or field).
pub fn struct_field_offset(name: &str, field: &str) -> Result<Option<usize>> {
    let f = crate::error::need(sys::optional::ag_struct_field_offset(), "ag_struct_field_offset")?;
    let (c, d) = (cstring(name)?, cstring(field)?);
    Ok(usize::try_from(unsafe { f(c.as_ptr(), d.as_ptr()) }).ok())
}

/// Value of an integer constant in the loaded library.
pub fn constant_value(name: &str) -> Result<i64> {
    let f = crate::error::need(sys::optional::ag_constant_value(), "ag_constant_value")?;
    let c = cstring(name)?;
    let mut v = 0;
    check(unsafe { f(c.as_ptr(), &mut v) })?;
    Ok(v)
}

/// Checks that the structs and constants this binding was generated with
/// match the loaded library; the error lists every difference.
pub fn verify_abi() -> Result<()> {
    let mut diffs = Vec::new();
    for s in sys::STRUCT_LAYOUTS {
        if struct_size(s.name)? != Some(s.size) {
            diffs.push(format!("sizeof({})", s.name));
        }
        for (field, offset, _) in s.fields {
            if struct_field_offset(s.name, field)? != Some(*offset) {
                diffs.push(format!("offsetof({}, {field})", s.name));
            }
        }
    }
    for (name, value) in sys::CONSTANT_VALUES {
        if constant_value(name).ok() != Some(*value) {
            diffs.push((*name).to_string());
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(crate::Error::new(crate::Status::Internal, format!("[ag-rust] the loaded libag differs from ag-api.json in: {}", diffs.join(", "))))
    }
}
