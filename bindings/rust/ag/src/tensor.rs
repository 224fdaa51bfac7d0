//! Tensors: handles with reference counting, data access and autograd.

use crate::error::{check, count};
use crate::{Context, DType, Element, Error, Result, Status};
use ag_sys as sys;
use std::ffi::{CStr, CString};
use std::ptr::{self, NonNull};

/// A handle to an ag tensor. `Clone` adds a reference to the same tensor
/// (not a copy of its data: see [`Tensor::clone_op`]); `Drop` releases it.
///
/// `Send` but not `Sync`. ABI.md lets handles move between threads and makes
/// reading a tensor from several threads at once safe, but the writers
/// (`set_requires_grad`, `set_grad`, `copy_from`, in-place ops) need
/// exclusive use, and they take `&self` here (tensors are shared handles, as
/// in PyTorch). Not being `Sync` keeps one `Tensor` on one thread at a time;
/// to read a tensor on several threads, send each a clone. What Rust cannot
/// see is aliasing between distinct handles (clones, views sharing storage):
/// do not write through one while another thread uses the same tensor.
pub struct Tensor {
    raw: NonNull<sys::ag_tensor>,
}

// SAFETY: see the type's docs (ABI.md section 5: handles are not bound to a
// thread; retain/release are atomic).
unsafe impl Send for Tensor {}

/// The raw pointer of an optional tensor (NULL for None).
pub(crate) fn opt_ptr(t: Option<&Tensor>) -> *mut sys::ag_tensor {
    t.map_or(ptr::null_mut(), Tensor::as_ptr)
}

impl Tensor {
    /// Takes over one reference to `raw`.
    ///
    /// # Safety
    /// `raw` must be a live tensor handle whose reference the caller gives up.
    pub unsafe fn from_raw(raw: *mut sys::ag_tensor) -> Tensor {
        Tensor { raw: NonNull::new(raw).expect("ag returned a NULL tensor with AG_OK") }
    }

    /// A new handle to a tensor ag lends (callback arguments): retains it.
    ///
    /// # Safety
    /// `raw` must be a live tensor handle or NULL.
    pub unsafe fn from_borrowed(raw: *const sys::ag_tensor) -> Result<Tensor> {
        let p = sys::ag_tensor_retain(raw.cast_mut());
        NonNull::new(p).map(|raw| Tensor { raw }).ok_or_else(|| Error::new(Status::InvalidArgument, "[ag_tensor_retain] NULL or dead tensor"))
    }

    /// The raw handle (borrowed: valid while `self` lives).
    pub fn as_ptr(&self) -> *mut sys::ag_tensor {
        self.raw.as_ptr()
    }

    /// Gives up this handle's reference without releasing it.
    pub fn into_raw(self) -> *mut sys::ag_tensor {
        let p = self.as_ptr();
        std::mem::forget(self);
        p
    }

    pub fn dtype(&self) -> DType {
        DType::from_raw(unsafe { sys::ag_tensor_dtype(self.as_ptr()) }).expect("a live tensor has a known dtype")
    }

    pub fn ndim(&self) -> usize {
        usize::try_from(unsafe { sys::ag_tensor_ndim(self.as_ptr()) }).unwrap_or(0)
    }

    pub fn numel(&self) -> usize {
        usize::try_from(unsafe { sys::ag_tensor_numel(self.as_ptr()) }).unwrap_or(0)
    }

    /// The sizes of the tensor's dimensions.
    pub fn shape(&self) -> Vec<i64> {
        let mut dims = vec![0i64; self.ndim()];
        let cap = i32::try_from(dims.len()).unwrap_or(i32::MAX);
        let status = unsafe { sys::ag_tensor_shape(self.as_ptr(), dims.as_mut_ptr(), cap) };
        debug_assert_eq!(status, sys::AG_OK, "ag_tensor_shape of a live tensor");
        dims
    }

    /// The elements in row-major order; `T` must be the tensor's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let dtype = self.dtype();
        if dtype != T::DTYPE {
            return Err(Error::new(
                Status::Dtype,
                format!("[Tensor::to_vec] the tensor holds {}, not {}", dtype.name(), T::DTYPE.name()),
            ));
        }
        let n = self.numel();
        let mut v: Vec<T> = Vec::with_capacity(n);
        let bytes = n * std::mem::size_of::<T>();
        check(unsafe { sys::ag_tensor_copy_data(self.as_ptr(), v.as_mut_ptr().cast(), bytes) })?;
        // SAFETY: ag wrote n elements of T's dtype (bool: bytes 0 or 1).
        unsafe { v.set_len(n) };
        Ok(v)
    }

    /// The value of a one-element tensor, as f64.
    pub fn item(&self) -> Result<f64> {
        let mut v = 0.0;
        check(unsafe { sys::ag_tensor_item(self.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// Overwrites the elements (row-major) and bumps the version counter.
    pub fn copy_from<T: Element>(&self, data: &[T]) -> Result<()> {
        let dtype = self.dtype();
        if dtype != T::DTYPE {
            return Err(Error::new(Status::Dtype, format!("[Tensor::copy_from] the tensor holds {}, not {}", dtype.name(), T::DTYPE.name())));
        }
        let bytes = std::mem::size_of_val(data);
        check(unsafe { sys::ag_tensor_copy_from(self.as_ptr(), data.as_ptr().cast(), bytes) })
    }

    /// The tensor's context (a new handle).
    pub fn context(&self) -> Result<Context> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_context(&mut out, self.as_ptr()) })?;
        Ok(unsafe { Context::from_raw(out) })
    }

    /// A 0-dim tensor of this tensor's dtype and context.
    pub fn scalar_like(&self, value: f64) -> Result<Tensor> {
        self.context()?.scalar(self.dtype(), value)
    }

    /// The version counter (bumped by every write).
    pub fn version(&self) -> i64 {
        unsafe { sys::ag_tensor_version(self.as_ptr()) }
    }

    pub fn requires_grad(&self) -> bool {
        unsafe { sys::ag_tensor_get_requires_grad(self.as_ptr()) != 0 }
    }

    /// Marks a leaf as requiring grad (or not).
    pub fn set_requires_grad(&self, requires_grad: bool) -> Result<()> {
        check(unsafe { sys::ag_tensor_requires_grad(self.as_ptr(), i32::from(requires_grad)) })
    }

    pub fn is_leaf(&self) -> bool {
        unsafe { sys::ag_tensor_is_leaf(self.as_ptr()) != 0 }
    }

    /// The accumulated gradient, or None when there is none.
    pub fn grad(&self) -> Result<Option<Tensor>> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_grad(&mut out, self.as_ptr()) })?;
        Ok(NonNull::new(out).map(|raw| Tensor { raw }))
    }

    /// Replaces the gradient (None clears it).
    pub fn set_grad(&self, grad: Option<&Tensor>) -> Result<()> {
        check(unsafe { sys::ag_tensor_set_grad(self.as_ptr(), crate::tensor::opt_ptr(grad)) })
    }

    /// Keeps the gradient of a non-leaf after backward.
    pub fn retain_grad(&self) -> Result<()> {
        check(unsafe { sys::ag_tensor_retain_grad(self.as_ptr()) })
    }

    pub fn retains_grad(&self) -> bool {
        unsafe { sys::ag_tensor_retains_grad(self.as_ptr()) != 0 }
    }

    /// A tensor sharing the data, outside any graph.
    pub fn detach(&self) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_detach(&mut out, self.as_ptr()) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    /// Name of the node that produced the tensor ("MulBackward"), None for leaves.
    pub fn grad_fn_name(&self) -> Option<String> {
        let p = unsafe { sys::ag_tensor_grad_fn_name(self.as_ptr()) };
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// Names the tensor in version-error messages.
    pub fn set_tag(&self, tag: &str) -> Result<()> {
        let c = cstring(tag)?;
        check(unsafe { sys::ag_tensor_set_tag(self.as_ptr(), c.as_ptr()) })
    }

    pub fn tag(&self) -> Option<String> {
        let p = unsafe { sys::ag_tensor_tag(self.as_ptr()) };
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// Backward from a one-element tensor (gradient 1), freeing the graph.
    pub fn backward(&self) -> Result<()> {
        self.backward_with(None, false, false)
    }

    /// Backward with a root gradient (None: 1 for a one-element root).
    pub fn backward_with(&self, grad: Option<&Tensor>, retain_graph: bool, create_graph: bool) -> Result<()> {
        // SAFETY: zeroed is valid; init fills it.
        let mut opts: sys::ag_backward_options = unsafe { std::mem::zeroed() };
        check(unsafe { sys::ag_backward_options_init(&mut opts) })?;
        opts.retain_graph = i32::from(retain_graph);
        opts.create_graph = i32::from(create_graph);
        check(unsafe { sys::ag_backward(self.as_ptr(), opt_ptr(grad), &opts) })
    }

    /// Backward that accumulates only into `inputs`.
    pub fn backward_inputs(&self, grad: Option<&Tensor>, inputs: &[&Tensor], retain_graph: bool) -> Result<()> {
        let raw: Vec<*const sys::ag_tensor> = inputs.iter().map(|t| t.as_ptr().cast_const()).collect();
        let mut opts: sys::ag_backward_options = unsafe { std::mem::zeroed() };
        check(unsafe { sys::ag_backward_options_init(&mut opts) })?;
        opts.retain_graph = i32::from(retain_graph);
        opts.num_inputs = count(raw.len())?;
        opts.inputs = raw.as_ptr();
        check(unsafe { sys::ag_backward(self.as_ptr(), opt_ptr(grad), &opts) })
    }
}

impl Clone for Tensor {
    /// Another handle to the same tensor (a reference, not a copy).
    fn clone(&self) -> Tensor {
        let p = unsafe { sys::ag_tensor_retain(self.as_ptr()) };
        Tensor { raw: NonNull::new(p).expect("ag_tensor_retain of a live tensor") }
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        unsafe { sys::ag_tensor_release(self.as_ptr()) }
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Tensor");
        d.field("dtype", &self.dtype()).field("shape", &self.shape());
        if self.numel() <= 16 {
            let _ = match self.dtype() {
                DType::F32 => self.to_vec::<f32>().map(|v| d.field("data", &v)),
                DType::F64 => self.to_vec::<f64>().map(|v| d.field("data", &v)),
                DType::I64 => self.to_vec::<i64>().map(|v| d.field("data", &v)),
                DType::Bool => self.to_vec::<bool>().map(|v| d.field("data", &v)),
            };
        }
        d.field("requires_grad", &self.requires_grad()).finish()
    }
}

pub(crate) fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Status::InvalidArgument, format!("[ag-rust] string {s:?} contains a NUL byte")))
}

/// Options of [`grad`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GradOptions {
    pub retain_graph: bool,
    pub create_graph: bool,
    /// Inputs the outputs do not depend on get None instead of an error.
    pub allow_unused: bool,
}

/// Gradients of `outputs` with respect to `inputs` (torch.autograd.grad),
/// without touching the inputs' `.grad`. `grad_outputs` None: 1 for
/// one-element outputs.
pub fn grad(outputs: &[&Tensor], inputs: &[&Tensor], grad_outputs: Option<&[&Tensor]>, options: GradOptions) -> Result<Vec<Option<Tensor>>> {
    let outs: Vec<*const sys::ag_tensor> = outputs.iter().map(|t| t.as_ptr().cast_const()).collect();
    let ins: Vec<*const sys::ag_tensor> = inputs.iter().map(|t| t.as_ptr().cast_const()).collect();
    let gos: Option<Vec<*const sys::ag_tensor>> = grad_outputs.map(|g| g.iter().map(|t| t.as_ptr().cast_const()).collect());
    if let Some(g) = &gos {
        if g.len() != outs.len() {
            return Err(Error::new(Status::InvalidArgument, format!("[ag_grad] {} grad_outputs for {} outputs", g.len(), outs.len())));
        }
    }
    let mut opts: sys::ag_grad_options = unsafe { std::mem::zeroed() };
    check(unsafe { sys::ag_grad_options_init(&mut opts) })?;
    opts.retain_graph = i32::from(options.retain_graph);
    opts.create_graph = i32::from(options.create_graph);
    opts.allow_unused = i32::from(options.allow_unused);
    let mut result: Vec<*mut sys::ag_tensor> = vec![ptr::null_mut(); ins.len()];
    check(unsafe {
        sys::ag_grad(
            result.as_mut_ptr(),
            outs.as_ptr(),
            gos.as_ref().map_or(ptr::null(), |g| g.as_ptr()),
            count(outs.len())?,
            ins.as_ptr(),
            count(ins.len())?,
            &opts,
        )
    })?;
    Ok(result.into_iter().map(|p| NonNull::new(p).map(|raw| Tensor { raw })).collect())
}

/// Whether ops record graphs on this thread.
pub fn is_grad_enabled() -> bool {
    unsafe { sys::ag_grad_mode_enabled() != 0 }
}

/// Sets this thread's grad mode; returns the previous one.
pub fn set_grad_enabled(enabled: bool) -> Result<bool> {
    let mut prev = 0;
    check(unsafe { sys::ag_grad_mode_set(i32::from(enabled), &mut prev) })?;
    Ok(prev != 0)
}

/// Restores the thread's previous grad mode when dropped (also on panic).
/// Not `Send`: grad mode belongs to the thread that set it.
pub struct GradModeGuard {
    previous: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl GradModeGuard {
    pub fn new(enabled: bool) -> Result<GradModeGuard> {
        Ok(GradModeGuard { previous: set_grad_enabled(enabled)?, _not_send: std::marker::PhantomData })
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        let _ = set_grad_enabled(self.previous);
    }
}

/// Runs `f` with grad mode off on this thread (ag's grad mode is per OS
/// thread; the closure runs on the calling one), restoring it afterwards.
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    let _guard = GradModeGuard::new(false).expect("ag_grad_mode_set(0) cannot fail");
    f()
}

/// Runs `f` with grad mode on, restoring the previous mode afterwards.
pub fn enable_grad<R>(f: impl FnOnce() -> R) -> R {
    let _guard = GradModeGuard::new(true).expect("ag_grad_mode_set(1) cannot fail");
    f()
}
