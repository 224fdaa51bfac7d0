//! Finds libag: `AG_LIB_DIR` first, else `pkg-config ag`, else the default
//! linker path. Adds an rpath to that directory for this crate's tests and
//! hands the directory to dependents (`DEP_AG_LIB_DIR`). Probes the library
//! for symbols newer than AG_0.1, so tests of them can be reported ignored
//! (skipped) against an older libag rather than failing to link or passing.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Symbols whose presence tests key on: (symbol, cfg and metadata name).
const PROBES: &[(&str, &str)] = &[("ag_tensor_from_buffer", "ag_has_from_buffer"), ("ag_struct_size", "ag_has_layout_queries")];

fn pkg_config_libdir() -> Option<PathBuf> {
    let out = Command::new("pkg-config").args(["--variable=libdir", "ag"]).output().ok()?;
    let dir = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !dir.is_empty()).then(|| PathBuf::from(dir))
}

#[cfg(unix)]
fn probe(lib: &Path, symbol: &str) -> bool {
    unsafe extern "C" {
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        fn dlclose(handle: *mut c_void) -> c_int;
    }
    const RTLD_LAZY: c_int = 1;
    let (Ok(path), Ok(sym)) = (CString::new(lib.to_string_lossy().as_bytes()), CString::new(symbol)) else { return false };
    // SAFETY: plain dl* calls on NUL-terminated strings; the handle is closed.
    unsafe {
        let handle = dlopen(path.as_ptr(), RTLD_LAZY);
        if handle.is_null() {
            return false;
        }
        let found = !dlsym(handle, sym.as_ptr()).is_null();
        dlclose(handle);
        found
    }
}

#[cfg(not(unix))]
fn probe(_lib: &Path, _symbol: &str) -> bool {
    false
}

fn main() {
    println!("cargo:rerun-if-env-changed=AG_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    for (_, cfg) in PROBES {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    let dir = std::env::var("AG_LIB_DIR").ok().filter(|d| !d.is_empty()).map(PathBuf::from).or_else(pkg_config_libdir);
    // A build tree may have libag.so.0 without the libag.so link that -lag needs.
    let verbatim = dir.as_ref().is_some_and(|d| !d.join("libag.so").exists() && d.join("libag.so.0").exists());
    match dir {
        Some(dir) => {
            let lib = dir.join("libag.so.0");
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
            println!("cargo:rerun-if-changed={}", lib.display());
            println!("cargo:lib_dir={}", dir.display());
            for (symbol, cfg) in PROBES {
                let found = probe(&lib, symbol);
                println!("cargo:{cfg}={}", u8::from(found));
                if found {
                    println!("cargo:rustc-cfg={cfg}");
                }
            }
        }
        None => println!(
            "cargo:warning=libag not found: set AG_LIB_DIR to the directory of libag.so.0 or make `pkg-config ag` work; trying the linker's default path"
        ),
    }
    if verbatim {
        println!("cargo:rustc-link-lib=dylib:+verbatim=libag.so.0");
    } else {
        println!("cargo:rustc-link-lib=dylib=ag");
    }
}
