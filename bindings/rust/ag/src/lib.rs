//! Safe Rust binding of **ag**, an embeddable reverse-mode autograd engine
//! (dynamic graphs over dense CPU tensors) with a stable C ABI.
//!
//! ```no_run
//! let ctx = ag::Context::new().unwrap();
//! let x = ctx.from_slice_f64(&[3.0], &[])?;
//! x.set_requires_grad(true)?;
//! let y = &x * &x;
//! y.backward()?;
//! assert_eq!(x.grad()?.unwrap().to_vec::<f64>()?, vec![6.0]);
//! # Ok::<(), ag::Error>(())
//! ```
//!
//! * Every fallible call returns [`Result`]; an [`Error`] carries ag's
//!   [`Status`] and the message ag recorded on the calling thread right after
//!   the failing call. Operators (`&a * &b`) panic with that message instead.
//! * Handles are reference counted: `Clone` retains, `Drop` releases.
//! * Ops are methods generated from `ag-api.json` (`ops_generated.rs`):
//!   `x.matmul(&w)?`, `x.sum_dims(&[1], 0)?`; ops without a tensor input are
//!   [`Context`] methods and free functions (`ctx.randn(DType::F32, &[2, 3])?`).
//!   The op `clone` (a data copy) is [`Tensor::clone_op`]; `where` is
//!   `r#where`.
//! * Callbacks (hooks, [`Function`], [`functional`] helpers) never unwind
//!   into C: an `Err` or a panic is reported to ag with
//!   `ag_set_callback_error` and comes back as `Err` with status `Callback`
//!   from the call that ran it (`backward`, `apply`, ...).
//!
//! # Threads
//! [`Context`] is `Send + Sync` (ABI.md: every context call is thread-safe).
//! [`Tensor`] is `Send`, not `Sync`: see its docs. Grad mode is per OS
//! thread in ag; [`no_grad`] runs its closure on the calling thread and
//! restores the mode on exit, panics included.
//!
//! # Finding libag
//! ag-sys links `libag` from `AG_LIB_DIR`, else from `pkg-config ag`, and
//! sets an rpath to that directory for this workspace's tests and examples;
//! other programs need libag on the loader path (or `LD_LIBRARY_PATH`).

mod callback;
mod context;
mod dtype;
mod error;
mod function;
pub mod functional;
mod graph;
mod hooks;
mod interop;
mod operators;
mod ops_generated;
mod tensor;

pub use ag_sys as sys;
pub use callback::queue_callback;
pub use context::{Context, MemoryStats};
pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use function::{apply, ClosureFunction, Function, FunctionCtx};
pub use graph::{
    constant_value, current_tag_scope, op_names, struct_field_offset, struct_size, tag_scope, verify_abi, version_number, version_string, GraphFormat, Node,
};
pub use hooks::HookHandle;
pub use interop::{has_interop, DlPack, DlPackLegacy, TensorView};
pub use ops_generated::*;
pub use tensor::{enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled, GradModeGuard, GradOptions, Tensor};

/// Reductions of the loss ops.
pub mod reduction {
    pub const NONE: i32 = ag_sys::AG_REDUCTION_NONE;
    pub const MEAN: i32 = ag_sys::AG_REDUCTION_MEAN;
    pub const SUM: i32 = ag_sys::AG_REDUCTION_SUM;
}
