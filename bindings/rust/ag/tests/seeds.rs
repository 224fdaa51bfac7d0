//! The seed examples every binding carries.

use ag::Context;

#[test]
fn x_times_x_has_gradient_six_at_three() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice(&[3.0], &[]).unwrap();
    x.set_requires_grad(true).unwrap();
    let y = x.mul(&x).unwrap();
    y.backward().unwrap();
    assert_eq!(x.grad().unwrap().unwrap().to_vec::<f32>().unwrap(), vec![6.0]);
}

#[test]
fn q_equals_3a_cubed_minus_b_squared() {
    let ctx = Context::new().unwrap();
    let a = ctx.from_slice_f64(&[2.0, 3.0], &[2]).unwrap();
    let b = ctx.from_slice_f64(&[6.0, 4.0], &[2]).unwrap();
    a.set_requires_grad(true).unwrap();
    b.set_requires_grad(true).unwrap();
    let q = 3.0 * &(&a * &a * &a) - &b * &b;
    let ones = ctx.from_slice_f64(&[1.0, 1.0], &[2]).unwrap();
    q.backward_with(Some(&ones), false, false).unwrap();
    // dQ/da = 9a^2, dQ/db = -2b
    assert_eq!(a.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![36.0, 81.0]);
    assert_eq!(b.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![-12.0, -8.0]);
}

#[test]
fn leaves_without_backward_have_no_gradient() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice_f64(&[1.0], &[1]).unwrap();
    x.set_requires_grad(true).unwrap();
    assert!(x.grad().unwrap().is_none());
    assert!(x.is_leaf());
    let y = x.exp().unwrap();
    assert!(!y.is_leaf());
    assert_eq!(y.grad_fn_name().as_deref(), Some("ExpBackward"));
}
