//! Hooks on tensors and on the nodes that produced them.
//!
//! Closures must be `Fn + Send + Sync + 'static`: a hook runs on whichever
//! thread runs backward, two graphs sharing a leaf may run it at once, and
//! ag frees it (through `destroy`) on the thread that lets go last.

use crate::callback::{borrow_optional, drop_box, guard};
use crate::error::check;
use crate::{Result, Tensor};
use ag_sys as sys;
use std::ffi::c_void;
use std::ptr;

/// A registered hook. Dropping it (or [`HookHandle::remove`]) unregisters
/// the hook; [`HookHandle::keep`] leaves it registered for the tensor's life.
#[must_use = "dropping the handle unregisters the hook at once"]
pub struct HookHandle {
    raw: *mut sys::ag_hook,
}

// SAFETY: ABI.md: registering and removing hooks is thread-safe.
unsafe impl Send for HookHandle {}
unsafe impl Sync for HookHandle {}

impl HookHandle {
    /// Unregisters the hook (a pass already running may still call it once).
    pub fn remove(self) {
        drop(self)
    }

    /// Drops the handle but keeps the hook registered.
    pub fn keep(self) {
        unsafe { sys::ag_hook_release(self.raw) };
        std::mem::forget(self);
    }
}

impl Drop for HookHandle {
    fn drop(&mut self) {
        unsafe { sys::ag_hook_remove(self.raw) }
    }
}

impl std::fmt::Debug for HookHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookHandle").finish_non_exhaustive()
    }
}

unsafe extern "C" fn tensor_hook<F>(user_data: *mut c_void, grad: *const sys::ag_tensor, replacement: *mut *mut sys::ag_tensor) -> sys::ag_status
where
    F: Fn(&Tensor) -> Result<Option<Tensor>>,
{
    let f = unsafe { &*user_data.cast::<F>() };
    guard(|| {
        let grad = unsafe { Tensor::from_borrowed(grad) }?;
        if let Some(new) = f(&grad)? {
            // ag takes this reference over.
            unsafe { *replacement = new.into_raw() };
        }
        Ok(())
    })
}

unsafe extern "C" fn leaf_hook<F>(user_data: *mut c_void, leaf: *mut sys::ag_tensor) -> sys::ag_status
where
    F: Fn(&Tensor) -> Result<()>,
{
    let f = unsafe { &*user_data.cast::<F>() };
    guard(|| f(&unsafe { Tensor::from_borrowed(leaf) }?))
}

unsafe extern "C" fn node_hook<F>(
    user_data: *mut c_void,
    grads: *mut *mut sys::ag_tensor,
    num_grads: i32,
    other: *const *const sys::ag_tensor,
    num_other: i32,
) -> sys::ag_status
where
    F: Fn(&mut [Option<Tensor>], &[Option<Tensor>]) -> Result<()>,
{
    let f = unsafe { &*user_data.cast::<F>() };
    guard(|| {
        let mut current = unsafe { borrow_optional(grads.cast_const().cast(), num_grads) };
        let before: Vec<*mut sys::ag_tensor> = current.iter().map(|t| crate::tensor::opt_ptr(t.as_ref())).collect();
        let other = unsafe { borrow_optional(other, num_other) };
        f(&mut current, &other)?;
        for (i, (new, old)) in current.into_iter().zip(before).enumerate() {
            let new_ptr = crate::tensor::opt_ptr(new.as_ref());
            if new_ptr != old {
                // A replaced entry: ag takes the new reference and keeps the old one's.
                unsafe { *grads.add(i) = new.map_or(ptr::null_mut(), Tensor::into_raw) };
            }
        }
        Ok(())
    })
}

impl Tensor {
    /// Registers `hook` on the gradient flowing into this tensor; returning
    /// `Some(t)` replaces that gradient (same dtype and shape).
    pub fn register_hook<F>(&self, hook: F) -> Result<HookHandle>
    where
        F: Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    {
        let data = Box::into_raw(Box::new(hook)).cast::<c_void>();
        let mut out = ptr::null_mut();
        // On failure ag has already run destroy, which freed the Box.
        check(unsafe { sys::ag_tensor_register_hook(&mut out, self.as_ptr(), Some(tensor_hook::<F>), data, Some(drop_box::<F>)) })?;
        Ok(HookHandle { raw: out })
    }

    /// Registers `hook` to run after backward accumulated into this leaf's grad.
    pub fn register_post_accumulate_grad_hook<F>(&self, hook: F) -> Result<HookHandle>
    where
        F: Fn(&Tensor) -> Result<()> + Send + Sync + 'static,
    {
        let data = Box::into_raw(Box::new(hook)).cast::<c_void>();
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::ag_tensor_register_post_accumulate_grad_hook(&mut out, self.as_ptr(), Some(leaf_hook::<F>), data, Some(drop_box::<F>))
        })?;
        Ok(HookHandle { raw: out })
    }

    /// Registers a pre-hook on the node that produced this tensor: it sees
    /// (and may replace or drop) the gradients flowing into the node.
    pub fn register_node_pre_hook<F>(&self, hook: F) -> Result<HookHandle>
    where
        F: Fn(&mut [Option<Tensor>], &[Option<Tensor>]) -> Result<()> + Send + Sync + 'static,
    {
        let data = Box::into_raw(Box::new(hook)).cast::<c_void>();
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_register_node_pre_hook(&mut out, self.as_ptr(), Some(node_hook::<F>), data, Some(drop_box::<F>)) })?;
        Ok(HookHandle { raw: out })
    }

    /// Registers a post-hook on the node that produced this tensor: it sees
    /// (and may replace) the gradients the node produced, and those it got.
    pub fn register_node_post_hook<F>(&self, hook: F) -> Result<HookHandle>
    where
        F: Fn(&mut [Option<Tensor>], &[Option<Tensor>]) -> Result<()> + Send + Sync + 'static,
    {
        let data = Box::into_raw(Box::new(hook)).cast::<c_void>();
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_register_node_post_hook(&mut out, self.as_ptr(), Some(node_hook::<F>), data, Some(drop_box::<F>)) })?;
        Ok(HookHandle { raw: out })
    }
}
