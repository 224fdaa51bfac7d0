//! The FFI boundary of user callbacks: panics and errors become
//! `ag_set_callback_error` + AG_ERR_CALLBACK, so backward returns them as
//! `Err`; boxed closures are freed by ag's `destroy` call.

use crate::error::check;
use crate::{Error, Result, Tensor};
use ag_sys as sys;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

fn report(message: &str) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    unsafe { sys::ag_set_callback_error(c.as_ptr()) }
}

/// Runs a callback body, turning its error or panic into AG_ERR_CALLBACK
/// with the message reported to ag. Never unwinds into C.
pub(crate) fn guard(f: impl FnOnce() -> Result<()>) -> sys::ag_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => sys::AG_OK,
        Ok(Err(e)) => {
            report(&e.to_string());
            sys::AG_ERR_CALLBACK
        }
        Err(payload) => {
            report(&format!("Rust callback panicked: {}", panic_message(payload.as_ref())));
            sys::AG_ERR_CALLBACK
        }
    }
}

/// `destroy` for a `Box<F>` passed as user_data.
pub(crate) unsafe extern "C" fn drop_box<F>(user_data: *mut c_void) {
    // A panicking Drop must not unwind into C; the Box is gone either way.
    let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(user_data.cast::<F>()) })));
}

/// Borrowed tensor handles from ag as owned handles (retained).
pub(crate) unsafe fn borrow_all(ptrs: *const *const sys::ag_tensor, n: i32) -> Result<Vec<Tensor>> {
    let n = usize::try_from(n).unwrap_or(0);
    if n == 0 {
        return Ok(Vec::new());
    }
    let slice = unsafe { std::slice::from_raw_parts(ptrs, n) };
    slice.iter().map(|&p| unsafe { Tensor::from_borrowed(p) }).collect()
}

/// Like [`borrow_all`], keeping NULL entries as None.
pub(crate) unsafe fn borrow_optional(ptrs: *const *const sys::ag_tensor, n: i32) -> Vec<Option<Tensor>> {
    let n = usize::try_from(n).unwrap_or(0);
    if n == 0 || ptrs.is_null() {
        return Vec::new();
    }
    let slice = unsafe { std::slice::from_raw_parts(ptrs, n) };
    slice.iter().map(|&p| if p.is_null() { None } else { unsafe { Tensor::from_borrowed(p) }.ok() }).collect()
}

/// A mismatch between what a callback returned and what ag asked for.
pub(crate) fn count_error(what: &str, got: usize, expected: usize) -> Error {
    Error::new(crate::Status::Callback, format!("[ag-rust] {what} returned {got} tensors, expected {expected}"))
}

/// Queues `f` to run once at the end of the current backward pass (call it
/// from a hook or custom backward). An error or panic fails that backward.
pub fn queue_callback<F>(f: F) -> Result<()>
where
    F: FnOnce() -> Result<()> + Send + 'static,
{
    type Slot<F> = std::sync::Mutex<Option<F>>;
    unsafe extern "C" fn run<F: FnOnce() -> Result<()>>(user_data: *mut c_void) -> sys::ag_status {
        let slot = unsafe { &*user_data.cast::<Slot<F>>() };
        guard(|| match slot.lock().ok().and_then(|mut s| s.take()) {
            Some(f) => f(),
            None => Ok(()),
        })
    }
    let data = Box::into_raw(Box::new(Slot::new(Some(f)))).cast::<c_void>();
    check(unsafe { sys::ag_backward_queue_callback(Some(run::<F>), data, Some(drop_box::<Slot<F>>)) })
}
