//! Every function of ag-api.json has a binding in this crate, except the
//! short list below; every op of ops.def has a generated wrapper, and the
//! loaded library registers the ops the description lists.

/// Functions the safe crate leaves to `ag::sys`, and why.
const EXCLUDED: &[(&str, &str)] = &[
    ("ag_scope_begin", "handle scopes release handles in bulk; Rust's Drop already releases each one"),
    ("ag_scope_end", "as ag_scope_begin"),
    ("ag_scope_keep", "as ag_scope_begin"),
    ("ag_scope_depth", "as ag_scope_begin"),
    ("ag_clip_grad_norm", "optimizers (0.2) not wrapped yet: use ag::sys"),
    ("ag_clip_grad_value", "as ag_clip_grad_norm"),
    ("ag_lr_cosine_annealing", "as ag_clip_grad_norm"),
    ("ag_lr_linear", "as ag_clip_grad_norm"),
    ("ag_lr_step_decay", "as ag_clip_grad_norm"),
    ("ag_optimizer_add_param_group", "as ag_clip_grad_norm"),
    ("ag_optimizer_create", "as ag_clip_grad_norm"),
    ("ag_optimizer_get_lr", "as ag_clip_grad_norm"),
    ("ag_optimizer_get_state", "as ag_clip_grad_norm"),
    ("ag_optimizer_get_step", "as ag_clip_grad_norm"),
    ("ag_optimizer_num_groups", "as ag_clip_grad_norm"),
    ("ag_optimizer_num_params", "as ag_clip_grad_norm"),
    ("ag_optimizer_options_init", "as ag_clip_grad_norm"),
    ("ag_optimizer_release", "as ag_clip_grad_norm"),
    ("ag_optimizer_set_lr", "as ag_clip_grad_norm"),
    ("ag_optimizer_set_state", "as ag_clip_grad_norm"),
    ("ag_optimizer_set_step", "as ag_clip_grad_norm"),
    ("ag_optimizer_step", "as ag_clip_grad_norm"),
    ("ag_optimizer_zero_grad", "as ag_clip_grad_norm"),
    ("ag_safetensors_count", "safetensors files (0.2) not wrapped yet: use ag::sys"),
    ("ag_safetensors_get", "as ag_safetensors_count"),
    ("ag_safetensors_load", "as ag_safetensors_count"),
    ("ag_safetensors_metadata", "as ag_safetensors_count"),
    ("ag_safetensors_name", "as ag_safetensors_count"),
    ("ag_safetensors_release", "as ag_safetensors_count"),
    ("ag_safetensors_save", "as ag_safetensors_count"),
    ("ag_backward_begin", "the budgeted backward is for frame loops of C/C++ hosts; not exposed yet"),
    ("ag_backward_step", "as ag_backward_begin"),
    ("ag_backward_end", "as ag_backward_begin"),
    ("ag_backward_cancel", "as ag_backward_begin"),
    ("ag_graph_record_begin", "record/replay is for C/C++ frame loops; wrapped in Python only so far"),
    ("ag_graph_record_end", "as ag_graph_record_begin"),
    ("ag_graph_replay", "as ag_graph_record_begin"),
    ("ag_graph_num_steps", "as ag_graph_record_begin"),
    ("ag_graph_release", "as ag_graph_record_begin"),
    ("ag_profiler_start", "the profiler (0.2) is not wrapped yet: use ag::sys"),
    ("ag_profiler_options_init", "as ag_profiler_start"),
    ("ag_profiler_stop", "as ag_profiler_start"),
    ("ag_profile_num_events", "as ag_profiler_start"),
    ("ag_profile_num_dropped", "as ag_profiler_start"),
    ("ag_profile_event", "as ag_profiler_start"),
    ("ag_profile_chrome_trace", "as ag_profiler_start"),
    ("ag_profile_write_chrome_trace", "as ag_profiler_start"),
    ("ag_profile_release", "as ag_profiler_start"),
];

fn sources() -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            all += &std::fs::read_to_string(path).unwrap();
        }
    }
    all
}

#[test]
fn every_described_function_is_bound_or_excluded() {
    let src = sources();
    let missing: Vec<&str> = ag::sys::FUNCTIONS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !EXCLUDED.iter().any(|(e, _)| e == name))
        .filter(|name| !src.contains(&format!("::{name}(")))
        .collect();
    assert!(missing.is_empty(), "functions without a binding in the ag crate: {missing:?}");
    for (name, _) in EXCLUDED {
        assert!(ag::sys::FUNCTIONS.iter().any(|(f, _)| f == name), "stale exclusion {name}");
    }
}

#[test]
fn the_loaded_library_registers_the_described_ops() {
    let mut loaded = ag::op_names();
    let mut described: Vec<String> = ag::sys::OPS.iter().map(|(name, _, _)| name.to_string()).collect();
    loaded.sort();
    described.sort();
    assert_eq!(loaded, described);
}

#[test]
#[cfg_attr(not(ag_has_layout_queries), ignore = "libag lacks ag_struct_size")]
fn the_loaded_library_has_the_generated_layouts() {
    ag::verify_abi().unwrap();
    assert_eq!(ag::struct_size("ag_no_such_struct").unwrap(), None);
    assert_eq!(ag::constant_value("AG_ERR_SHAPE").unwrap(), -2);
    assert_eq!(ag::constant_value("AG_NO_SUCH_CONSTANT").unwrap_err().status, ag::Status::InvalidArgument);
}

#[test]
fn graph_inspection_and_export() {
    let ctx = ag::Context::new().unwrap();
    let x = ctx.from_slice_f64(&[1.0, 2.0], &[2]).unwrap();
    x.set_requires_grad(true).unwrap();
    let y = ag::tag_scope("layer1", || {
        assert_eq!(ag::current_tag_scope().as_deref(), Some("layer1"));
        x.exp().unwrap().mul(&x).unwrap()
    })
    .unwrap();
    assert_eq!(ag::current_tag_scope(), None);
    let node = y.grad_fn().unwrap().unwrap();
    assert_eq!(node.name(), "MulBackward");
    assert_eq!(node.tag().as_deref(), Some("layer1"));
    assert_eq!(node.num_next_edges(), 2);
    let (next, _) = node.next_edge(0).unwrap();
    assert_eq!(next.unwrap().name(), "ExpBackward");
    assert!(node.saved_bytes() > 0 && node.topological_nr() >= 2 && node.sequence_nr() > 0);
    let dot = y.export_graph(ag::GraphFormat::Dot).unwrap();
    assert!(dot.contains("MulBackward") && dot.contains("ExpBackward"), "{dot}");
    assert!(y.export_graph(ag::GraphFormat::Json).unwrap().starts_with('{'));
    assert!(x.grad_fn().unwrap().is_none());
    assert!(ag::version_number() >= 100 && !ag::version_string().is_empty());
}

#[test]
fn context_settings_round_trip() {
    let ctx = ag::Context::with_threads(2).unwrap();
    assert_eq!(ctx.num_threads(), 2);
    ctx.manual_seed(7).unwrap();
    assert_eq!(ctx.seed().unwrap(), 7);
    let state = ctx.rng_state().unwrap();
    let a = ctx.randn(ag::DType::F64, &[4]).unwrap().to_vec::<f64>().unwrap();
    ctx.set_rng_state(state.0, state.1).unwrap();
    let b = ag::randn(&ctx, ag::DType::F64, &[4]).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(a, b, "same state, same numbers");
    ctx.set_anomaly_mode(true).unwrap();
    assert!(ctx.anomaly_mode());
    ctx.trim().unwrap();
    ctx.reset_peak_memory().unwrap();
    assert_eq!(ag::DType::F64.size(), 8);
    assert_eq!(ag::DType::Bool.name(), "bool");
    let m = ag::set_grad_enabled(false).unwrap();
    assert!(m);
    assert!(ag::set_grad_enabled(true).is_ok());
}

#[test]
fn functional_products_match_closed_forms() {
    // f(x) = sum(x^3): gradient 3x^2, Hessian diag(6x).
    let ctx = ag::Context::new().unwrap();
    let x = ctx.from_slice_f64(&[1.0, 2.0], &[2]).unwrap();
    let v = ctx.from_slice_f64(&[1.0, -1.0], &[2]).unwrap();
    let f = |t: &[ag::Tensor]| -> ag::Result<Vec<ag::Tensor>> { Ok(vec![t[0].pow_scalar(3.0)?.sum()?]) };
    let (vjp, outs) = ag::functional::vjp(f, &[&x], None, 1, Default::default()).unwrap();
    assert_eq!(vjp[0].to_vec::<f64>().unwrap(), vec![3.0, 12.0]);
    assert_eq!(outs[0].item().unwrap(), 9.0);
    let (jvp, _) = ag::functional::jvp(f, &[&x], Some(&[&v]), 1, Default::default()).unwrap();
    assert_eq!(jvp[0].item().unwrap(), 3.0 - 12.0);
    let h = ag::functional::hessian(f, &[&x], Default::default()).unwrap();
    assert_eq!(h[0].to_vec::<f64>().unwrap(), vec![6.0, 0.0, 0.0, 12.0]);
    let (hv, out) = ag::functional::hvp(f, &[&x], &[&v], Default::default()).unwrap();
    assert_eq!(hv[0].to_vec::<f64>().unwrap(), vec![6.0, -12.0]);
    assert_eq!(out.item().unwrap(), 9.0);
    x.set_requires_grad(true).unwrap();
    let r = ag::functional::gradgradcheck(f, &[&x], None, 1, Default::default()).unwrap();
    assert!(r.passed, "{r:?}");
}
