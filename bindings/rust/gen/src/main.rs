//! `cargo run -p ag-gen [-- --check] [path/to/ag-api.json]`: writes (or, with
//! --check, compares) ag-sys/src/generated.rs and ag/src/ops_generated.rs.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut check = false;
    let mut api_path = ag_gen::default_api_path();
    for arg in std::env::args().skip(1) {
        if arg == "--check" {
            check = true;
        } else {
            api_path = PathBuf::from(arg);
        }
    }
    let api = match ag_gen::load_api(&api_path) {
        Ok(api) => api,
        Err(e) => {
            eprintln!("ag-gen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let root = ag_gen::workspace_dir();
    let mut stale = false;
    for (rel, text) in ag_gen::generate_all(&api) {
        let path = root.join(rel);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == text {
            continue;
        }
        if check {
            eprintln!("ag-gen: {rel} is stale");
            stale = true;
        } else if let Err(e) = std::fs::write(&path, text) {
            eprintln!("ag-gen: {}: {e}", path.display());
            return ExitCode::FAILURE;
        } else {
            println!("ag-gen: wrote {rel}");
        }
    }
    if stale {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
