//! Grad mode: per thread, restored after no_grad, also on panic.

use ag::Context;

#[test]
fn no_grad_records_nothing_and_restores_the_mode() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice_f64(&[1.0, 2.0], &[2]).unwrap();
    x.set_requires_grad(true).unwrap();
    assert!(ag::is_grad_enabled());
    let y = ag::no_grad(|| {
        assert!(!ag::is_grad_enabled());
        x.mul(&x).unwrap()
    });
    assert!(!y.requires_grad());
    assert!(y.grad_fn_name().is_none());
    assert!(ag::is_grad_enabled());
    assert!(x.mul(&x).unwrap().requires_grad());
    // nested: enable_grad inside no_grad
    ag::no_grad(|| ag::enable_grad(|| assert!(x.exp().unwrap().requires_grad())));
}

#[test]
fn no_grad_restores_the_mode_when_the_closure_panics() {
    let r = std::panic::catch_unwind(|| ag::no_grad(|| panic!("inside no_grad")));
    assert!(r.is_err());
    assert!(ag::is_grad_enabled());
}

#[test]
fn grad_mode_belongs_to_the_thread() {
    ag::no_grad(|| {
        let other = std::thread::spawn(ag::is_grad_enabled).join().unwrap();
        assert!(other, "a new thread starts with grad mode on");
        assert!(!ag::is_grad_enabled());
    });
}
