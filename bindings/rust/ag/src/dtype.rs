//! Element types.

use crate::{Error, Result, Status};
use ag_sys as sys;
use std::ffi::CStr;

/// ag's element types (values pinned by the ABI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F64,
    I64,
    Bool,
}

impl DType {
    pub fn raw(self) -> sys::ag_dtype {
        match self {
            DType::F32 => sys::AG_F32,
            DType::F64 => sys::AG_F64,
            DType::I64 => sys::AG_I64,
            DType::Bool => sys::AG_BOOL,
        }
    }

    pub fn from_raw(raw: sys::ag_dtype) -> Result<DType> {
        match raw {
            sys::AG_F32 => Ok(DType::F32),
            sys::AG_F64 => Ok(DType::F64),
            sys::AG_I64 => Ok(DType::I64),
            sys::AG_BOOL => Ok(DType::Bool),
            other => Err(Error::new(Status::Dtype, format!("[ag-rust] dtype {other} is unknown to this binding"))),
        }
    }

    /// Bytes per element, from the library.
    pub fn size(self) -> usize {
        // SAFETY: pure query.
        unsafe { sys::ag_dtype_size(self.raw()) }
    }

    /// ag's name ("f32", ...).
    pub fn name(self) -> &'static str {
        // SAFETY: static string for any value.
        unsafe { CStr::from_ptr(sys::ag_dtype_name(self.raw())) }.to_str().unwrap_or("?")
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Rust types that are ag elements: f32, f64, i64, bool. Their memory layout
/// is ag's (bool: one byte, 0 or 1).
pub trait Element: Copy + sealed::Sealed + Send + Sync + 'static {
    const DTYPE: DType;
}

macro_rules! element {
    ($t:ty, $d:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
        }
    };
}
element!(f32, F32);
element!(f64, F64);
element!(i64, I64);
element!(bool, Bool);
