//! The committed generated files must equal what the generator makes from the
//! committed ag-api.json.

#[test]
fn committed_generated_files_are_up_to_date() {
    let api = ag_gen::load_api(&ag_gen::default_api_path()).expect("ag-api.json loads");
    let root = ag_gen::workspace_dir();
    for (rel, text) in ag_gen::generate_all(&api) {
        let committed = std::fs::read_to_string(root.join(rel)).unwrap_or_default();
        assert!(committed == text, "{rel} is stale: run `cargo run -p ag-gen` in bindings/rust");
    }
}

#[test]
fn every_op_of_the_description_gets_a_wrapper() {
    let api = ag_gen::load_api(&ag_gen::default_api_path()).expect("ag-api.json loads");
    let ops = ag_gen::generate_ops(&api);
    for op in api.at("ops").arr() {
        let function = op.at("function").str();
        assert!(ops.contains(&format!("sys::{function}(")), "no wrapper calls {function}");
    }
}
