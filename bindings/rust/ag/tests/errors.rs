//! Failures become `Err` with ag's status and message (or a panic carrying
//! it, for operators); nothing crashes.

use ag::{Context, DType, Status};

#[test]
fn shape_mismatch_is_an_err_naming_the_c_function() {
    let ctx = Context::new().unwrap();
    let a = ctx.from_slice(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let b = ctx.from_slice(&[1.0, 2.0], &[2]).unwrap();
    let e = a.mul(&b).unwrap_err();
    assert_eq!(e.status, Status::Shape);
    assert!(e.message.contains("ag_op_mul"), "{}", e.message);
    let shown = e.to_string();
    assert!(shown.starts_with("AG_ERR_SHAPE: ") && shown.contains("ag_op_mul"), "{shown}");
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert!(boxed.to_string().contains("AG_ERR_SHAPE"));
}

#[test]
#[should_panic(expected = "[ag_op_mul]")]
fn operator_with_bad_shapes_panics_with_ags_message() {
    let ctx = Context::new().unwrap();
    let a = ctx.from_slice(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let b = ctx.from_slice(&[1.0, 2.0], &[2]).unwrap();
    let _ = &a * &b;
}

#[test]
fn dtype_and_graph_errors() {
    let ctx = Context::new().unwrap();
    let a = ctx.from_slice(&[1.0], &[1]).unwrap();
    let b = ctx.from_slice_f64(&[1.0], &[1]).unwrap();
    assert_eq!(a.add(&b).unwrap_err().status, Status::Dtype);
    assert_eq!(a.to_vec::<f64>().unwrap_err().status, Status::Dtype);
    let i = ctx.from_slice_i64(&[1], &[1]).unwrap();
    assert_eq!(i.set_requires_grad(true).unwrap_err().status, Status::Dtype);
    // backward from a root that requires no grad
    let e = a.exp().unwrap().sum().unwrap().backward().unwrap_err();
    assert_eq!(e.status, Status::Graph, "{e}");
    // a scaled in-place add of another dtype leaves self as it was
    let e = a.add_scaled_(&b, 2.0).unwrap_err();
    assert_eq!(e.status, Status::Dtype, "{e}");
    assert!(e.to_string().contains("ag_op_add_scaled_"), "{e}");
    a.add_scaled_(&a.scalar_like(0.25).unwrap(), -2.0).unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![0.5]);
}

#[test]
fn tensors_of_two_contexts_do_not_mix() {
    let (c1, c2) = (Context::new().unwrap(), Context::new().unwrap());
    let a = c1.from_slice(&[1.0], &[1]).unwrap();
    let b = c2.from_slice(&[1.0], &[1]).unwrap();
    assert_eq!(a.add(&b).unwrap_err().status, Status::Context);
}

#[test]
fn bad_arguments_are_caught_before_reaching_c() {
    let ctx = Context::new().unwrap();
    // 3 values for 4 elements would make ag read past the slice
    let e = ctx.from_slice(&[1.0, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    // ag's own argument checks
    assert_eq!(ctx.zeros(DType::F32, &[-1]).unwrap_err().status, Status::InvalidArgument);
    let x = ctx.from_slice(&[1.0, 2.0], &[2]).unwrap();
    assert_eq!(x.item().unwrap_err().status, Status::Shape);
}

#[test]
fn version_error_after_modifying_a_saved_tensor() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice_f64(&[1.0, 2.0], &[2]).unwrap();
    x.set_requires_grad(true).unwrap();
    let y = x.exp().unwrap();
    let z = y.mul(&y).unwrap().sum().unwrap();
    y.set_tag("the_y").unwrap();
    ag::no_grad(|| y.mul_(&y)).unwrap();
    let e = z.backward().unwrap_err();
    assert_eq!(e.status, Status::Version);
    assert!(e.message.contains("the_y"), "{}", e.message);
}

#[test]
fn unknown_status_codes_survive() {
    assert_eq!(Status::from_raw(-1000), Status::Unknown(-1000));
    assert_eq!(Status::from_raw(ag::sys::AG_ERR_SHAPE), Status::Shape);
    assert_eq!(Status::Shape.raw(), -2);
    assert_eq!(Status::Unknown(-1000).name(), "AG_ERR_UNKNOWN");
}
