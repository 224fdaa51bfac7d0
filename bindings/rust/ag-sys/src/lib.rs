//! Raw declarations of libag's C ABI, generated from `bindings/ag-api.json`
//! (see `generated.rs`; regenerate with `cargo run -p ag-gen`). Everything
//! here is `unsafe` and follows ABI.md; the `ag` crate is the safe layer.
//!
//! Linking: `build.rs` links `-lag` from `AG_LIB_DIR`, else from
//! `pkg-config --variable=libdir ag`, and sets an rpath to that directory for
//! this crate's own tests. Other binaries find libag through that rpath (the
//! `ag` crate adds it too), the system path or `LD_LIBRARY_PATH`.
//!
//! Functions newer than the first symbol version are declared in the extern
//! block like all others and also reachable through [`optional`], which looks
//! them up in the loaded library at run time.

#![allow(non_camel_case_types)]

mod generated;
pub use generated::*;

/// Run-time symbol lookup in the libag this program is linked to.
pub mod dynamic {
    use core::ffi::{c_char, c_int, c_void, CStr};
    use core::sync::atomic::{AtomicUsize, Ordering};

    const UNRESOLVED: usize = 0;
    const MISSING: usize = 1;

    /// A lazily resolved symbol address.
    pub struct Slot {
        name: &'static CStr,
        addr: AtomicUsize,
    }

    impl Slot {
        pub const fn new(name: &'static CStr) -> Slot {
            Slot { name, addr: AtomicUsize::new(UNRESOLVED) }
        }

        /// The symbol's address, or `None` when the loaded libag lacks it.
        pub fn get(&self) -> Option<*mut c_void> {
            let mut a = self.addr.load(Ordering::Acquire);
            if a == UNRESOLVED {
                let p = lookup(self.name);
                a = if p.is_null() { MISSING } else { p as usize };
                self.addr.store(a, Ordering::Release);
            }
            (a != MISSING).then_some(a as *mut c_void)
        }
    }

    /// True when the loaded libag exports `name`.
    pub fn has_symbol(name: &CStr) -> bool {
        !lookup(name).is_null()
    }

    #[cfg(unix)]
    #[repr(C)]
    struct DlInfo {
        fname: *const c_char,
        fbase: *mut c_void,
        sname: *const c_char,
        saddr: *mut c_void,
    }

    #[cfg(unix)]
    unsafe extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        fn dlclose(handle: *mut c_void) -> c_int;
    }

    /// Looks `name` up in the very libag that defines `ag_version_number`
    /// (which this program links), not in whatever else is loaded.
    #[cfg(unix)]
    fn lookup(name: &CStr) -> *mut c_void {
        #[cfg(target_os = "macos")]
        const RTLD_NOLOAD: c_int = 0x10;
        #[cfg(not(target_os = "macos"))]
        const RTLD_NOLOAD: c_int = 4;
        const RTLD_LAZY: c_int = 1;
        let anchor = crate::ag_version_number as unsafe extern "C" fn() -> i32 as *const c_void;
        let mut info = DlInfo { fname: core::ptr::null(), fbase: core::ptr::null_mut(), sname: core::ptr::null(), saddr: core::ptr::null_mut() };
        // SAFETY: dladdr fills `info`; dlopen with RTLD_NOLOAD only takes a
        // reference to a library already loaded, which dlclose gives back.
        unsafe {
            if dladdr(anchor, &mut info) == 0 || info.fname.is_null() {
                return core::ptr::null_mut();
            }
            let handle = dlopen(info.fname, RTLD_LAZY | RTLD_NOLOAD);
            if handle.is_null() {
                return core::ptr::null_mut();
            }
            let p = dlsym(handle, name.as_ptr());
            dlclose(handle);
            p
        }
    }

    #[cfg(not(unix))]
    fn lookup(_name: &CStr) -> *mut c_void {
        core::ptr::null_mut()
    }
}
