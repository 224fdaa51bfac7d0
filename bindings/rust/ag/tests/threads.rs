//! Tensors move between threads; one context serves several threads.

use ag::Context;

#[test]
fn tensor_sent_to_another_thread_runs_backward_there() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice_f64(&[3.0], &[1]).unwrap();
    x.set_requires_grad(true).unwrap();
    let x2 = x.clone();
    let g = std::thread::spawn(move || {
        let y = x2.mul(&x2).unwrap().sum().unwrap();
        y.backward().unwrap();
        x2.grad().unwrap().unwrap().to_vec::<f64>().unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(g, vec![6.0]);
    assert_eq!(x.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![6.0]);
}

#[test]
fn a_shared_context_serves_parallel_graphs() {
    let ctx = Context::new().unwrap();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let ctx = ctx.clone();
            std::thread::spawn(move || {
                let x = ctx.from_slice_f64(&[i as f64], &[1]).unwrap();
                x.set_requires_grad(true).unwrap();
                x.pow_scalar(3.0).unwrap().sum().unwrap().backward().unwrap();
                x.grad().unwrap().unwrap().item().unwrap()
            })
        })
        .collect();
    let grads: Vec<f64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(grads, vec![0.0, 3.0, 12.0, 27.0]);
}

#[test]
fn errors_are_read_on_the_failing_thread() {
    let ctx = Context::new().unwrap();
    let a = ctx.from_slice(&[1.0, 2.0], &[2]).unwrap();
    let b = ctx.from_slice(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let (a2, b2) = (a.clone(), b.clone());
    let other = std::thread::spawn(move || a2.matmul(&b2).unwrap_err().message).join().unwrap();
    let here = a.add(&b).unwrap_err().message;
    assert!(other.contains("ag_op_matmul"), "{other}");
    assert!(here.contains("ag_op_add"), "{here}");
}
