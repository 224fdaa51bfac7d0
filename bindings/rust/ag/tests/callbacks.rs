//! Hooks, custom functions and queued callbacks: results, errors, panics
//! caught at the FFI boundary, and closures freed by ag's destroy calls.

mod common;
use ag::{ClosureFunction, Context, Function, FunctionCtx, Result, Status, Tensor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts its drops, to see that ag freed a closure.
struct DropCounter(Arc<AtomicUsize>);
impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn leaf(ctx: &Context, v: &[f64]) -> Tensor {
    let t = ctx.from_slice_f64(v, &[v.len() as i64]).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

#[test]
fn hook_sees_and_replaces_the_gradient() {
    let ctx = Context::new().unwrap();
    let x = leaf(&ctx, &[1.0, 2.0]);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let _h = x
        .register_hook(move |g: &Tensor| -> Result<Option<Tensor>> {
            seen2.lock().unwrap().extend(g.to_vec::<f64>()?);
            Ok(Some(g.mul(&g.scalar_like(10.0)?)?))
        })
        .unwrap();
    x.mul(&x).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![2.0, 4.0]);
    assert_eq!(x.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![20.0, 40.0]);
}

#[test]
fn panicking_hook_makes_backward_return_err_with_the_panic_text() {
    let ctx = Context::new().unwrap();
    let x = leaf(&ctx, &[1.0]);
    let _h = x.register_hook(|_g: &Tensor| -> Result<Option<Tensor>> { panic!("hook exploded 42") }).unwrap();
    let e = x.exp().unwrap().sum().unwrap().backward().unwrap_err();
    assert_eq!(e.status, Status::Callback);
    assert!(e.message.contains("hook exploded 42"), "{}", e.message);
}

#[test]
fn hook_error_is_returned_by_backward() {
    let ctx = Context::new().unwrap();
    let x = leaf(&ctx, &[1.0]);
    let _h = x
        .register_hook(|_g: &Tensor| -> Result<Option<Tensor>> { Err(ag::Error::new(Status::InvalidArgument, "refused by the hook")) })
        .unwrap();
    let e = x.exp().unwrap().sum().unwrap().backward().unwrap_err();
    assert_eq!(e.status, Status::Callback);
    assert!(e.message.contains("refused by the hook"), "{}", e.message);
}

#[test]
fn dropped_handle_unregisters_and_every_closure_is_freed() {
    let ctx = Context::new().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let drops = Arc::new(AtomicUsize::new(0));
    {
        let x = leaf(&ctx, &[1.0]);
        let (c, d) = (calls.clone(), DropCounter(drops.clone()));
        let h = x
            .register_hook(move |_g: &Tensor| -> Result<Option<Tensor>> {
                let _keep = &d;
                c.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            })
            .unwrap();
        x.exp().unwrap().sum().unwrap().backward().unwrap();
        h.remove();
        x.exp().unwrap().sum().unwrap().backward().unwrap();
        // a kept hook lives until its tensor goes
        let d2 = DropCounter(drops.clone());
        x.register_post_accumulate_grad_hook(move |_leaf: &Tensor| {
            let _keep = &d2;
            Ok(())
        })
        .unwrap()
        .keep();
        // a failed registration frees its closure too (i64 tensors take no hooks)
        let i = ctx.from_slice_i64(&[1], &[1]).unwrap();
        let d3 = DropCounter(drops.clone());
        assert!(i
            .register_hook(move |_g: &Tensor| -> Result<Option<Tensor>> {
                let _keep = &d3;
                Ok(None)
            })
            .is_err());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

/// x^3 with a hand-written backward.
struct Cube {
    drops: Option<DropCounter>,
}

impl Function for Cube {
    fn name(&self) -> &str {
        "CubeBackward"
    }
    fn forward(&self, ctx: &mut FunctionCtx<'_>, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0]])?;
        Ok(vec![inputs[0].pow_scalar(3.0)?])
    }
    fn backward(&self, ctx: &mut FunctionCtx<'_>, grad_outputs: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let _ = &self.drops;
        let x = &ctx.saved_tensors()?[0];
        assert!(ctx.needs_input_grad(0));
        Ok(vec![Some(grad_outputs[0].mul(&(3.0 * &x.square()?))?)])
    }
}

#[test]
fn custom_function_matches_finite_differences_and_is_freed() {
    let ctx = Context::new().unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    common::check_gradients(&ctx, &[&[4]], 30, -2.0, 2.0, |t| Ok(Cube { drops: Some(DropCounter(drops.clone())) }.apply(&[&t[0]])?.remove(0)));
    let x = leaf(&ctx, &[1.0]);
    let y = Cube { drops: None }.apply(&[&x]).unwrap().remove(0);
    assert_eq!(y.grad_fn_name().as_deref(), Some("CubeBackward"));
    drop(y);
    // check_gradients ran forward many times; every node and its Function are gone
    assert!(drops.load(Ordering::SeqCst) >= 2, "{}", drops.load(Ordering::SeqCst));
    let before = drops.load(Ordering::SeqCst);
    let y = Cube { drops: Some(DropCounter(drops.clone())) }.apply(&[&x]).unwrap().remove(0);
    assert_eq!(drops.load(Ordering::SeqCst), before);
    drop(y);
    assert_eq!(drops.load(Ordering::SeqCst), before + 1);
}

#[test]
fn wrong_backward_is_caught_by_the_finite_difference_check() {
    let ctx = Context::new().unwrap();
    let wrong = || {
        ClosureFunction::new("Wrong", 1, |_c: &mut FunctionCtx<'_>, i: &[Tensor]| Ok(vec![i[0].square()?]), |_c: &mut FunctionCtx<'_>, g: &[Tensor]| {
            Ok(vec![Some(g[0].clone())])
        })
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        common::check_gradients(&ctx, &[&[3]], 31, 1.0, 2.0, |t| Ok(wrong().apply(&[&t[0]])?.remove(0)))
    }));
    assert!(r.is_err(), "a wrong gradient must fail the check");
}

#[test]
fn custom_function_panics_and_errors_come_back_as_err() {
    let ctx = Context::new().unwrap();
    let x = leaf(&ctx, &[2.0]);
    let f = ClosureFunction::new("Boom", 1, |_c: &mut FunctionCtx<'_>, i: &[Tensor]| Ok(vec![i[0].square()?]), |_c: &mut FunctionCtx<'_>, _g: &[Tensor]| -> Result<Vec<Option<Tensor>>> {
        panic!("backward went boom")
    });
    let y = f.apply(&[&x]).unwrap().remove(0);
    let e = y.sum().unwrap().backward().unwrap_err();
    assert_eq!(e.status, Status::Callback);
    assert!(e.message.contains("backward went boom"), "{}", e.message);

    let bad_forward = ClosureFunction::new(
        "BadForward",
        1,
        |_c: &mut FunctionCtx<'_>, _i: &[Tensor]| Err(ag::Error::new(Status::Shape, "forward says no")),
        |_c: &mut FunctionCtx<'_>, _g: &[Tensor]| Ok(vec![None]),
    );
    let e = bad_forward.apply(&[&x]).unwrap_err();
    assert_eq!(e.status, Status::Callback);
    assert!(e.message.contains("forward says no"), "{}", e.message);

    let wrong_count = ClosureFunction::new("TwoOutputs", 1, |_c: &mut FunctionCtx<'_>, i: &[Tensor]| Ok(vec![i[0].clone(), i[0].clone()]), |_c: &mut FunctionCtx<'_>, _g: &[Tensor]| {
        Ok(vec![None])
    });
    assert_eq!(wrong_count.apply(&[&x]).unwrap_err().status, Status::Callback);
}

#[test]
fn queued_callback_runs_once_after_backward() {
    let ctx = Context::new().unwrap();
    let x = leaf(&ctx, &[1.0]);
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let _h = x
        .register_hook(move |_g: &Tensor| -> Result<Option<Tensor>> {
            let r = r.clone();
            ag::queue_callback(move || {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })?;
            Ok(None)
        })
        .unwrap();
    x.exp().unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn node_hooks_see_the_gradients_of_a_node() {
    let ctx = Context::new().unwrap();
    let a = leaf(&ctx, &[1.0, 2.0]);
    let b = leaf(&ctx, &[3.0, 4.0]);
    let y = a.mul(&b).unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let _h = y
        .register_node_post_hook(move |grads: &mut [Option<Tensor>], received: &[Option<Tensor>]| {
            s.store(grads.len() * 10 + received.len(), Ordering::SeqCst);
            grads[1] = None; // drop b's gradient
            Ok(())
        })
        .unwrap();
    y.sum().unwrap().backward().unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 21);
    assert_eq!(a.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![3.0, 4.0]);
    assert!(b.grad().unwrap().is_none());
}
