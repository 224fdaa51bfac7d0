//! Contexts: own tensor memory, the thread pool and the random generator.

use crate::error::{check, count};
use crate::{DType, Element, Error, Result, Status, Tensor};
use ag_sys as sys;
use std::ptr::{self, NonNull};

/// A handle to an ag context. `Clone` adds a reference, `Drop` releases one;
/// the context lives while any handle or tensor refers to it, so it may be
/// dropped before its tensors.
///
/// `Send + Sync`: ABI.md makes every context call thread-safe and lets one
/// context serve several threads at once.
pub struct Context {
    raw: NonNull<sys::ag_context>,
}

// SAFETY: see the type's docs (ABI.md section 5, "Context").
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

/// Memory statistics of a context (`ag_memory_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryStats {
    pub bytes_in_use: i64,
    pub peak_bytes_in_use: i64,
    pub bytes_cached: i64,
    pub allocations: i64,
    pub cache_hits: i64,
}

/// Number of elements of `shape`, or None when a size is negative or it overflows.
pub(crate) fn numel_of(shape: &[i64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| usize::try_from(d).ok().and_then(|d| acc.checked_mul(d)))
}

pub(crate) fn check_len(what: &str, len: usize, shape: &[i64]) -> Result<()> {
    match numel_of(shape) {
        Some(n) if n != len => Err(Error::new(
            Status::InvalidArgument,
            format!("[{what}] {len} values for shape {shape:?} of {n} elements"),
        )),
        _ => Ok(()),
    }
}

impl Context {
    /// A context with the default thread count (an error only when ag
    /// cannot create one: out of memory).
    pub fn new() -> Result<Context> {
        Context::try_new(None)
    }

    /// A context whose thread pool has `n` threads (0: ag's default).
    pub fn with_threads(n: usize) -> Result<Context> {
        Context::try_new(Some(n))
    }

    /// A context, with `threads` (None: default) in its pool.
    pub fn try_new(threads: Option<usize>) -> Result<Context> {
        // SAFETY: an all-zero options struct is valid; the init function fills it.
        let mut opts: sys::ag_context_options = unsafe { std::mem::zeroed() };
        check(unsafe { sys::ag_context_options_init(&mut opts) })?;
        if let Some(n) = threads {
            opts.num_threads = count(n)?;
        }
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_context_create(&mut out, &opts) })?;
        Ok(unsafe { Context::from_raw(out) })
    }

    /// Takes over one reference to `raw`.
    ///
    /// # Safety
    /// `raw` must be a live context handle whose reference the caller gives up.
    pub unsafe fn from_raw(raw: *mut sys::ag_context) -> Context {
        Context { raw: NonNull::new(raw).expect("ag returned a NULL context with AG_OK") }
    }

    /// The raw handle (borrowed: valid while `self` lives).
    pub fn as_ptr(&self) -> *mut sys::ag_context {
        self.raw.as_ptr()
    }

    /// Threads of the context's pool.
    pub fn num_threads(&self) -> i32 {
        unsafe { sys::ag_context_num_threads(self.as_ptr()) }
    }

    pub fn memory_stats(&self) -> Result<MemoryStats> {
        // SAFETY: zeroed is valid; init sets struct_size.
        let mut s: sys::ag_memory_stats = unsafe { std::mem::zeroed() };
        check(unsafe { sys::ag_memory_stats_init(&mut s) })?;
        check(unsafe { sys::ag_context_memory_stats(self.as_ptr(), &mut s) })?;
        Ok(MemoryStats {
            bytes_in_use: s.bytes_in_use,
            peak_bytes_in_use: s.peak_bytes_in_use,
            bytes_cached: s.bytes_cached,
            allocations: s.allocations,
            cache_hits: s.cache_hits,
        })
    }

    /// Bytes held by live tensors of this context.
    pub fn bytes_in_use(&self) -> Result<i64> {
        Ok(self.memory_stats()?.bytes_in_use)
    }

    /// Returns cached free blocks to the system.
    pub fn trim(&self) -> Result<()> {
        check(unsafe { sys::ag_context_trim(self.as_ptr()) })
    }

    pub fn reset_peak_memory(&self) -> Result<()> {
        check(unsafe { sys::ag_context_reset_peak_memory(self.as_ptr()) })
    }

    /// Seeds the generator and resets its offset.
    pub fn manual_seed(&self, seed: u64) -> Result<()> {
        check(unsafe { sys::ag_context_manual_seed(self.as_ptr(), seed) })
    }

    pub fn seed(&self) -> Result<u64> {
        let mut s = 0;
        check(unsafe { sys::ag_context_seed(self.as_ptr(), &mut s) })?;
        Ok(s)
    }

    /// The generator state (seed, offset), read as one snapshot.
    pub fn rng_state(&self) -> Result<(u64, u64)> {
        let (mut seed, mut offset) = (0, 0);
        check(unsafe { sys::ag_context_rng_state(self.as_ptr(), &mut seed, &mut offset) })?;
        Ok((seed, offset))
    }

    pub fn set_rng_state(&self, seed: u64, offset: u64) -> Result<()> {
        check(unsafe { sys::ag_context_set_rng_state(self.as_ptr(), seed, offset) })
    }

    /// Anomaly mode: backward fails at the first NaN/Inf gradient.
    pub fn set_anomaly_mode(&self, enabled: bool) -> Result<()> {
        check(unsafe { sys::ag_context_set_anomaly_mode(self.as_ptr(), i32::from(enabled)) })
    }

    pub fn anomaly_mode(&self) -> bool {
        unsafe { sys::ag_context_anomaly_mode(self.as_ptr()) != 0 }
    }

    /// A tensor copied from `data` (row-major) with `shape`.
    pub fn tensor<T: Element>(&self, data: &[T], shape: &[i64]) -> Result<Tensor> {
        check_len("ag_tensor_create", data.len(), shape)?;
        let mut out = ptr::null_mut();
        let data_ptr = if data.is_empty() { ptr::null() } else { data.as_ptr().cast() };
        check(unsafe { sys::ag_tensor_create(&mut out, self.as_ptr(), T::DTYPE.raw(), shape.as_ptr(), count(shape.len())?, data_ptr) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    /// An f32 tensor copied from `data`.
    pub fn from_slice(&self, data: &[f32], shape: &[i64]) -> Result<Tensor> {
        self.tensor(data, shape)
    }

    /// An f64 tensor copied from `data`.
    pub fn from_slice_f64(&self, data: &[f64], shape: &[i64]) -> Result<Tensor> {
        self.tensor(data, shape)
    }

    /// An i64 tensor copied from `data` (class indices, ...).
    pub fn from_slice_i64(&self, data: &[i64], shape: &[i64]) -> Result<Tensor> {
        self.tensor(data, shape)
    }

    pub fn zeros(&self, dtype: DType, shape: &[i64]) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_zeros(&mut out, self.as_ptr(), dtype.raw(), shape.as_ptr(), count(shape.len())?) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    pub fn ones(&self, dtype: DType, shape: &[i64]) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_ones(&mut out, self.as_ptr(), dtype.raw(), shape.as_ptr(), count(shape.len())?) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    pub fn full(&self, dtype: DType, shape: &[i64], value: f64) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_full(&mut out, self.as_ptr(), dtype.raw(), shape.as_ptr(), count(shape.len())?, value) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    /// A 0-dim tensor.
    pub fn scalar(&self, dtype: DType, value: f64) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::ag_tensor_scalar(&mut out, self.as_ptr(), dtype.raw(), value) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }
}

impl Clone for Context {
    fn clone(&self) -> Context {
        // SAFETY: self holds a reference, so the handle is live.
        let p = unsafe { sys::ag_context_retain(self.as_ptr()) };
        Context { raw: NonNull::new(p).expect("ag_context_retain of a live context") }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        unsafe { sys::ag_context_release(self.as_ptr()) }
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("num_threads", &self.num_threads()).finish()
    }
}
