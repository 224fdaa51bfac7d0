//! Passes on what ag-sys found: an rpath to libag's directory for this
//! crate's tests and examples, and cfgs naming the optional symbols present.
fn main() {
    for cfg in ["ag_has_from_buffer", "ag_has_layout_queries"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        let key = format!("DEP_AG_{}", cfg.to_uppercase());
        if std::env::var(&key).as_deref() == Ok("1") {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
    if let Ok(dir) = std::env::var("DEP_AG_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
