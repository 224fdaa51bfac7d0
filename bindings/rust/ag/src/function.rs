//! Custom differentiable functions (`ag_function_apply`): forward and
//! backward written in Rust, recorded as one node of the graph.

use crate::callback::{borrow_all, count_error, drop_box, guard};
use crate::error::{check, count};
use crate::{Result, Tensor};
use ag_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr;

/// The node's context inside forward or backward; it exists only during
/// that callback.
pub struct FunctionCtx<'a> {
    raw: *mut sys::ag_function_ctx,
    _callback: PhantomData<&'a mut ()>,
}

impl FunctionCtx<'_> {
    /// Keeps tensors for backward (forward only).
    pub fn save_for_backward(&mut self, tensors: &[&Tensor]) -> Result<()> {
        let raw: Vec<*const sys::ag_tensor> = tensors.iter().map(|t| t.as_ptr().cast_const()).collect();
        check(unsafe { sys::ag_function_ctx_save_for_backward(self.raw, raw.as_ptr(), count(raw.len())?) })
    }

    /// The tensors saved in forward (backward only).
    pub fn saved_tensors(&self) -> Result<Vec<Tensor>> {
        let n = unsafe { sys::ag_function_ctx_num_saved(self.raw) };
        (0..n.max(0))
            .map(|i| {
                let mut out = ptr::null_mut();
                check(unsafe { sys::ag_function_ctx_saved_tensor(&mut out, self.raw, i) })?;
                Ok(unsafe { Tensor::from_raw(out) })
            })
            .collect()
    }

    /// Whether input `index` needs a gradient.
    pub fn needs_input_grad(&self, index: usize) -> bool {
        i32::try_from(index).is_ok_and(|i| unsafe { sys::ag_function_ctx_needs_input_grad(self.raw, i) } != 0)
    }

    /// Declares an output not differentiable (forward only).
    pub fn mark_non_differentiable(&mut self, output: &Tensor) -> Result<()> {
        check(unsafe { sys::ag_function_ctx_mark_non_differentiable(self.raw, output.as_ptr()) })
    }

    /// Declares an input modified in place and returned as an output (forward only).
    pub fn mark_dirty(&mut self, input: &Tensor) -> Result<()> {
        check(unsafe { sys::ag_function_ctx_mark_dirty(self.raw, input.as_ptr()) })
    }
}

/// A custom function. `forward` runs with grad mode off and returns
/// `num_outputs()` tensors; `backward` gets one gradient per output and
/// returns one optional gradient per input. Errors and panics in either
/// become `Err` of the call that ran them (`apply` or `backward`).
///
/// `Send + Sync`: backward may run on another thread than forward.
pub trait Function: Send + Sync + 'static {
    /// Name of the graph node ("MyOpBackward").
    fn name(&self) -> &str {
        "RustFunctionBackward"
    }

    fn num_outputs(&self) -> usize {
        1
    }

    /// True if backward is not itself differentiable.
    fn once_differentiable(&self) -> bool {
        false
    }

    fn forward(&self, ctx: &mut FunctionCtx<'_>, inputs: &[Tensor]) -> Result<Vec<Tensor>>;

    fn backward(&self, ctx: &mut FunctionCtx<'_>, grad_outputs: &[Tensor]) -> Result<Vec<Option<Tensor>>>;

    /// Runs forward on `inputs` and records the node.
    fn apply(self, inputs: &[&Tensor]) -> Result<Vec<Tensor>>
    where
        Self: Sized,
    {
        apply(self, inputs)
    }
}

unsafe extern "C" fn forward_tramp<F: Function>(
    user_data: *mut c_void,
    ctx: *mut sys::ag_function_ctx,
    inputs: *const *const sys::ag_tensor,
    num_inputs: i32,
    outputs: *mut *mut sys::ag_tensor,
    num_outputs: i32,
) -> sys::ag_status {
    let f = unsafe { &*user_data.cast::<F>() };
    guard(|| {
        let inputs = unsafe { borrow_all(inputs, num_inputs) }?;
        let mut fctx = FunctionCtx { raw: ctx, _callback: PhantomData };
        let outs = f.forward(&mut fctx, &inputs)?;
        let expected = usize::try_from(num_outputs).unwrap_or(0);
        if outs.len() != expected {
            return Err(count_error("Function::forward", outs.len(), expected));
        }
        for (i, t) in outs.into_iter().enumerate() {
            unsafe { *outputs.add(i) = t.into_raw() };
        }
        Ok(())
    })
}

unsafe extern "C" fn backward_tramp<F: Function>(
    user_data: *mut c_void,
    ctx: *mut sys::ag_function_ctx,
    grad_outputs: *const *const sys::ag_tensor,
    num_outputs: i32,
    grad_inputs: *mut *mut sys::ag_tensor,
    num_inputs: i32,
) -> sys::ag_status {
    let f = unsafe { &*user_data.cast::<F>() };
    guard(|| {
        let grads = unsafe { borrow_all(grad_outputs, num_outputs) }?;
        let mut fctx = FunctionCtx { raw: ctx, _callback: PhantomData };
        let result = f.backward(&mut fctx, &grads)?;
        let expected = usize::try_from(num_inputs).unwrap_or(0);
        if result.len() != expected {
            return Err(count_error("Function::backward", result.len(), expected));
        }
        for (i, g) in result.into_iter().enumerate() {
            if let Some(g) = g {
                unsafe { *grad_inputs.add(i) = g.into_raw() };
            }
        }
        Ok(())
    })
}

/// Runs `f`'s forward on `inputs` and records its node (see [`Function`]).
pub fn apply<F: Function>(f: F, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
    let name = crate::tensor::cstring(f.name())?;
    let num_outputs = f.num_outputs();
    let once = f.once_differentiable();
    let raw_inputs: Vec<*const sys::ag_tensor> = inputs.iter().map(|t| t.as_ptr().cast_const()).collect();
    // SAFETY: zeroed is valid (NULL pointers, None callbacks); init fills it.
    let mut def: sys::ag_function_def = unsafe { std::mem::zeroed() };
    check(unsafe { sys::ag_function_def_init(&mut def) })?;
    def.flags = if once { sys::AG_FUNCTION_ONCE_DIFFERENTIABLE } else { 0 };
    def.name = name.as_ptr();
    def.forward = Some(forward_tramp::<F>);
    def.backward = Some(backward_tramp::<F>);
    def.destroy = Some(drop_box::<F>);
    def.user_data = Box::into_raw(Box::new(f)).cast();
    let mut outs: Vec<*mut sys::ag_tensor> = vec![ptr::null_mut(); num_outputs];
    // ag runs destroy exactly once on every path, so the Box is not ours any more.
    check(unsafe { sys::ag_function_apply(outs.as_mut_ptr(), count(num_outputs)?, raw_inputs.as_ptr(), count(raw_inputs.len())?, &def) })?;
    Ok(outs.into_iter().map(|p| unsafe { Tensor::from_raw(p) }).collect())
}

type ForwardFn = dyn Fn(&mut FunctionCtx<'_>, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync;
type BackwardFn = dyn Fn(&mut FunctionCtx<'_>, &[Tensor]) -> Result<Vec<Option<Tensor>>> + Send + Sync;

/// A [`Function`] made of two closures.
pub struct ClosureFunction {
    name: String,
    num_outputs: usize,
    forward: Box<ForwardFn>,
    backward: Box<BackwardFn>,
}

impl ClosureFunction {
    pub fn new<Fw, Bw>(name: &str, num_outputs: usize, forward: Fw, backward: Bw) -> ClosureFunction
    where
        Fw: Fn(&mut FunctionCtx<'_>, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
        Bw: Fn(&mut FunctionCtx<'_>, &[Tensor]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
    {
        ClosureFunction { name: name.to_string(), num_outputs, forward: Box::new(forward), backward: Box::new(backward) }
    }
}

impl Function for ClosureFunction {
    fn name(&self) -> &str {
        &self.name
    }
    fn num_outputs(&self) -> usize {
        self.num_outputs
    }
    fn forward(&self, ctx: &mut FunctionCtx<'_>, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        (self.forward)(ctx, inputs)
    }
    fn backward(&self, ctx: &mut FunctionCtx<'_>, grad_outputs: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        (self.backward)(ctx, grad_outputs)
    }
}
