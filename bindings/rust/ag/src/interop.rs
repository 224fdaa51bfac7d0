//! Zero-copy data exchange (AG_0.2): host buffers as tensors, tensor memory
//! as slices, DLPack. The functions are looked up at run time; against an
//! older libag they return `Err` with status `Unsupported`.

use crate::context::check_len;
use crate::error::{check, count, need};
use crate::{Context, Element, Error, Result, Status, Tensor};
use ag_sys as sys;
use ag_sys::optional as opt;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr;

/// True when the loaded libag has the zero-copy and DLPack functions.
pub fn has_interop() -> bool {
    opt::ag_tensor_from_buffer().is_some()
}

unsafe extern "C" fn free_vec<T>(_data: *mut c_void, ctx: *mut c_void) {
    let _ = std::panic::catch_unwind(|| drop(unsafe { Box::from_raw(ctx.cast::<Vec<T>>()) }));
}

/// A tensor over memory borrowed for `'a`: the borrow checker keeps the
/// memory alive and unmoved while the view lives. Derefs to [`Tensor`].
///
/// ```compile_fail
/// let ctx = ag::Context::new().unwrap();
/// let mut data = vec![1.0f32, 2.0, 3.0];
/// let view = unsafe { ctx.from_slice_borrowed_mut(&mut data, &[3]) }.unwrap();
/// data.push(4.0); // error: `data` is still borrowed by `view`
/// println!("{:?}", view.shape());
/// ```
pub struct TensorView<'a> {
    tensor: Tensor,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl std::ops::Deref for TensorView<'_> {
    type Target = Tensor;
    fn deref(&self) -> &Tensor {
        &self.tensor
    }
}

impl std::fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.tensor.fmt(f)
    }
}

impl Context {
    /// A tensor that takes `data` over without copying it; the Vec is freed
    /// when ag drops the last reference to the memory.
    pub fn from_vec<T: Element>(&self, mut data: Vec<T>, shape: &[i64]) -> Result<Tensor> {
        let from_buffer = need(opt::ag_tensor_from_buffer(), "ag_tensor_from_buffer")?;
        check_len("ag_tensor_from_buffer", data.len(), shape)?;
        let ptr = data.as_mut_ptr().cast::<c_void>();
        let ndim = count(shape.len())?;
        let owner = Box::into_raw(Box::new(data)).cast::<c_void>();
        let mut out = ptr::null_mut();
        // The deleter runs exactly once on every path, failure included.
        check(unsafe { from_buffer(&mut out, self.as_ptr(), T::DTYPE.raw(), shape.as_ptr(), ptr::null(), ndim, ptr, Some(free_vec::<T>), owner) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    /// A read-only tensor over `data`, without copying.
    ///
    /// # Safety
    /// The view's lifetime keeps `data` borrowed, but tensors made from the
    /// view can outlive it: views (`reshape`, `detach`, clones of the view),
    /// graphs that saved it for backward, DLPack exports. None of them may be
    /// alive when `'a` ends.
    pub unsafe fn from_slice_borrowed<'a, T: Element>(&self, data: &'a [T], shape: &[i64]) -> Result<TensorView<'a>> {
        let t = self.borrow_buffer(data.as_ptr().cast_mut().cast(), data.len(), shape, T::DTYPE, sys::AG_BUFFER_READ_ONLY as u32)?;
        Ok(TensorView { tensor: t, _borrow: PhantomData })
    }

    /// A writable tensor over `data`, without copying: writes through ag
    /// (in-place ops, `copy_from`) land in `data`.
    ///
    /// # Safety
    /// As [`Context::from_slice_borrowed`].
    pub unsafe fn from_slice_borrowed_mut<'a, T: Element>(&self, data: &'a mut [T], shape: &[i64]) -> Result<TensorView<'a>> {
        let t = self.borrow_buffer(data.as_mut_ptr().cast(), data.len(), shape, T::DTYPE, 0)?;
        Ok(TensorView { tensor: t, _borrow: PhantomData })
    }

    fn borrow_buffer(&self, ptr: *mut c_void, len: usize, shape: &[i64], dtype: crate::DType, flags: u32) -> Result<Tensor> {
        let from_buffer = need(opt::ag_tensor_from_buffer_flags(), "ag_tensor_from_buffer_flags")?;
        check_len("ag_tensor_from_buffer_flags", len, shape)?;
        let mut out = ptr::null_mut();
        check(unsafe { from_buffer(&mut out, self.as_ptr(), dtype.raw(), shape.as_ptr(), ptr::null(), count(shape.len())?, ptr, flags, None, ptr::null_mut()) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }
}

impl Tensor {
    /// The tensor's elements in place, for a contiguous tensor of dtype `T`.
    ///
    /// # Safety
    /// No write to this tensor's storage (in-place ops, `copy_from`,
    /// `data_mut_ptr`, through any handle or view) may happen while the
    /// slice lives.
    pub unsafe fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let data = need(opt::ag_tensor_data(), "ag_tensor_data")?;
        self.check_plain::<T>()?;
        let p = unsafe { data(self.as_ptr()) }.cast::<T>();
        if self.numel() == 0 {
            return Ok(&[]);
        }
        Ok(unsafe { std::slice::from_raw_parts(p, self.numel()) })
    }

    /// The tensor's elements in place for writing (bumps the version counter).
    ///
    /// # Safety
    /// No other access to this tensor's storage (through any handle or view,
    /// on any thread) may happen while the slice lives.
    #[allow(clippy::mut_from_ref)] // the exclusivity is the caller's promise above
    pub unsafe fn as_mut_slice<T: Element>(&self) -> Result<&mut [T]> {
        let p = self.data_mut_ptr()?.cast::<T>();
        self.check_plain::<T>()?;
        if self.numel() == 0 {
            return Ok(&mut []);
        }
        Ok(unsafe { std::slice::from_raw_parts_mut(p, self.numel()) })
    }

    fn check_plain<T: Element>(&self) -> Result<()> {
        if self.dtype() != T::DTYPE {
            return Err(Error::new(Status::Dtype, format!("[Tensor::as_slice] the tensor holds {}, not {}", self.dtype().name(), T::DTYPE.name())));
        }
        if !self.is_contiguous()? {
            return Err(Error::new(Status::Unsupported, "[Tensor::as_slice] the tensor is not contiguous (see Tensor::contiguous)"));
        }
        Ok(())
    }

    /// Address of the first element (borrowed while `self` lives).
    pub fn data_ptr(&self) -> Result<*const c_void> {
        let data = need(opt::ag_tensor_data(), "ag_tensor_data")?;
        Ok(unsafe { data(self.as_ptr()) })
    }

    /// Address of the first element for writing; bumps the version counter.
    pub fn data_mut_ptr(&self) -> Result<*mut c_void> {
        let data_mut = need(opt::ag_tensor_data_mut(), "ag_tensor_data_mut")?;
        let mut out = ptr::null_mut();
        check(unsafe { data_mut(&mut out, self.as_ptr()) })?;
        Ok(out)
    }

    /// Strides in elements.
    pub fn strides(&self) -> Result<Vec<i64>> {
        let strides = need(opt::ag_tensor_strides(), "ag_tensor_strides")?;
        let mut v = vec![0i64; self.ndim()];
        check(unsafe { strides(self.as_ptr(), v.as_mut_ptr(), count(v.len())?) })?;
        Ok(v)
    }

    pub fn is_contiguous(&self) -> Result<bool> {
        let f = need(opt::ag_tensor_is_contiguous(), "ag_tensor_is_contiguous")?;
        Ok(unsafe { f(self.as_ptr()) } == 1)
    }

    pub fn is_read_only(&self) -> Result<bool> {
        let f = need(opt::ag_tensor_is_read_only(), "ag_tensor_is_read_only")?;
        Ok(unsafe { f(self.as_ptr()) } == 1)
    }

    /// This tensor if contiguous, else a contiguous copy (recorded like clone).
    pub fn contiguous(&self) -> Result<Tensor> {
        let f = need(opt::ag_tensor_contiguous(), "ag_tensor_contiguous")?;
        let mut out = ptr::null_mut();
        check(unsafe { f(&mut out, self.as_ptr()) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    /// Exports the data as a DLPack 1.x managed tensor (no copy).
    pub fn to_dlpack(&self) -> Result<DlPack> {
        let f = need(opt::ag_tensor_to_dlpack(), "ag_tensor_to_dlpack")?;
        let mut out = ptr::null_mut();
        check(unsafe { f(&mut out, self.as_ptr()) })?;
        Ok(DlPack { raw: out })
    }

    /// Exports the data as a legacy (unversioned) DLManagedTensor.
    pub fn to_dlpack_legacy(&self) -> Result<DlPackLegacy> {
        let f = need(opt::ag_tensor_to_dlpack_legacy(), "ag_tensor_to_dlpack_legacy")?;
        let mut out = ptr::null_mut();
        check(unsafe { f(&mut out, self.as_ptr()) })?;
        Ok(DlPackLegacy { raw: out })
    }

    /// Wraps a DLPack 1.x managed tensor without copying; ag owns `src`
    /// from now on (its deleter runs exactly once, also on failure).
    ///
    /// # Safety
    /// `src` must be a valid `DLManagedTensorVersioned` not owned elsewhere.
    pub unsafe fn from_dlpack(ctx: &Context, src: *mut sys::ag_dlpack_managed_tensor_versioned) -> Result<Tensor> {
        let f = need(opt::ag_tensor_from_dlpack(), "ag_tensor_from_dlpack");
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                // Ownership was given to us: honour it even without the function.
                drop(DlPack { raw: src });
                return Err(e);
            }
        };
        let mut out = ptr::null_mut();
        check(unsafe { f(&mut out, ctx.as_ptr(), src) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }

    /// Wraps a legacy DLManagedTensor without copying (see [`Tensor::from_dlpack`]).
    ///
    /// # Safety
    /// `src` must be a valid `DLManagedTensor` not owned elsewhere.
    pub unsafe fn from_dlpack_legacy(ctx: &Context, src: *mut sys::ag_dlpack_managed_tensor) -> Result<Tensor> {
        let f = need(opt::ag_tensor_from_dlpack_legacy(), "ag_tensor_from_dlpack_legacy");
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                drop(DlPackLegacy { raw: src });
                return Err(e);
            }
        };
        let mut out = ptr::null_mut();
        check(unsafe { f(&mut out, ctx.as_ptr(), src) })?;
        Ok(unsafe { Tensor::from_raw(out) })
    }
}

macro_rules! dlpack_owner {
    ($name:ident, $raw:ty, $doc:literal) => {
        #[doc = $doc]
        /// Dropping it calls the producer's deleter; `into_raw` hands it on.
        pub struct $name {
            raw: *mut $raw,
        }

        // SAFETY: DLPack lets the consumer call the deleter on any thread.
        unsafe impl Send for $name {}

        impl $name {
            pub fn as_ptr(&self) -> *mut $raw {
                self.raw
            }

            /// Gives the managed tensor up (to a consumer that will call its deleter).
            pub fn into_raw(self) -> *mut $raw {
                let p = self.raw;
                std::mem::forget(self);
                p
            }

            /// Takes ownership of a managed tensor.
            ///
            /// # Safety
            /// `raw` must be a valid managed tensor that nothing else will delete.
            pub unsafe fn from_raw(raw: *mut $raw) -> $name {
                $name { raw }
            }

            /// The DLTensor: data, device, dtype, shape, strides.
            pub fn dl_tensor(&self) -> &sys::ag_dlpack_tensor {
                unsafe { &(*self.raw).dl_tensor }
            }

            pub fn shape(&self) -> &[i64] {
                let t = self.dl_tensor();
                if t.ndim <= 0 || t.shape.is_null() {
                    return &[];
                }
                unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                if self.raw.is_null() {
                    return;
                }
                // Workaround, marked: ag-api.json gives this field no signature
                // (kind "function_pointer"); interop.h and DLPack declare it as
                // void (*)(Self *), which this cast restores.
                let deleter = unsafe { (*self.raw).deleter };
                if let Some(d) = deleter {
                    let d: unsafe extern "C" fn(*mut $raw) = unsafe { std::mem::transmute::<unsafe extern "C" fn(), _>(d) };
                    unsafe { d(self.raw) };
                }
            }
        }
    };
}

dlpack_owner!(DlPack, sys::ag_dlpack_managed_tensor_versioned, "An owned DLPack 1.x `DLManagedTensorVersioned`.");
dlpack_owner!(DlPackLegacy, sys::ag_dlpack_managed_tensor, "An owned legacy `DLManagedTensor`.");

impl DlPack {
    /// DLPack flags (`AG_DLPACK_FLAG_*`).
    pub fn flags(&self) -> u64 {
        unsafe { (*self.raw).flags }
    }

    /// Imports into ag (see [`Tensor::from_dlpack`]).
    pub fn into_tensor(self, ctx: &Context) -> Result<Tensor> {
        unsafe { Tensor::from_dlpack(ctx, self.into_raw()) }
    }
}

impl DlPackLegacy {
    pub fn into_tensor(self, ctx: &Context) -> Result<Tensor> {
        unsafe { Tensor::from_dlpack_legacy(ctx, self.into_raw()) }
    }
}
