//! Errors: every failing ag call becomes an [`Error`] carrying ag's status and
//! the message ag recorded for it on this thread.

use crate::Status;
use ag_sys as sys;
use std::ffi::CStr;
use std::fmt;

/// A failed ag call: its status and `ag_last_error_message()` read right
/// after the call, on the same thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

/// `Result` with [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }

    /// The error of a call that just returned `code`: reads this thread's last message.
    pub(crate) fn last(code: i32) -> Error {
        // SAFETY: ag_last_error_message never returns NULL; copied at once.
        let message = unsafe { CStr::from_ptr(sys::ag_last_error_message()) }.to_string_lossy().into_owned();
        Error { status: Status::from_raw(code), message }
    }
}

impl Status {
    /// ag's name of the status (`"AG_ERR_SHAPE"`; `"AG_ERR_UNKNOWN"` for codes it lacks).
    pub fn name(self) -> &'static str {
        // SAFETY: ag_status_name returns a static string for any value.
        unsafe { CStr::from_ptr(sys::ag_status_name(self.raw())) }.to_str().unwrap_or("AG_ERR_UNKNOWN")
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok` for AG_OK, else the thread's last error. Call right after the C call.
pub(crate) fn check(code: i32) -> Result<()> {
    if code == sys::AG_OK {
        Ok(())
    } else {
        Err(Error::last(code))
    }
}

/// A Rust length as the C count type, or an InvalidArgument error.
pub(crate) fn count<T: TryFrom<usize>>(n: usize) -> Result<T> {
    T::try_from(n).map_err(|_| Error::new(Status::InvalidArgument, format!("[ag-rust] length {n} does not fit the C count type")))
}

/// A function of a newer symbol version, or an Unsupported error naming it.
pub(crate) fn need<F>(f: Option<F>, name: &str) -> Result<F> {
    f.ok_or_else(|| Error::new(Status::Unsupported, format!("[{name}] libag lacks {name} (added in AG_0.2)")))
}
