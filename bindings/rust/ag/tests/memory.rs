//! Deterministic release: memory returns to its starting level, and handles
//! may be dropped in any order.

use ag::{Context, DType};

#[test]
fn bytes_in_use_returns_to_start_after_a_training_loop() {
    let ctx = Context::new().unwrap();
    let start = ctx.bytes_in_use().unwrap();
    {
        // Fit y = 2x - 1 with a 1-unit linear model by gradient descent.
        let xs: Vec<f32> = (0..64).map(|i| i as f32 / 32.0 - 1.0).collect();
        let ys: Vec<f32> = xs.iter().map(|x| 2.0 * x - 1.0).collect();
        let x = ctx.from_slice(&xs, &[64, 1]).unwrap();
        let y = ctx.from_slice(&ys, &[64, 1]).unwrap();
        let w = ctx.zeros(DType::F32, &[1, 1]).unwrap();
        let b = ctx.zeros(DType::F32, &[1]).unwrap();
        w.set_requires_grad(true).unwrap();
        b.set_requires_grad(true).unwrap();
        let mut losses = Vec::new();
        for _ in 0..20 {
            let pred = x.linear(&w, Some(&b)).unwrap();
            let loss = pred.mse_loss(&y, ag::reduction::MEAN).unwrap();
            loss.backward().unwrap();
            losses.push(loss.item().unwrap());
            ag::no_grad(|| -> ag::Result<()> {
                for p in [&w, &b] {
                    let g = p.grad()?.unwrap();
                    p.add_scaled_(&g, -0.3)?; // p -= 0.3 g in one pass
                    p.set_grad(None)?;
                }
                Ok(())
            })
            .unwrap();
        }
        assert!(losses[19] < losses[0] * 0.1, "loss fell: {losses:?}");
        assert!(ctx.bytes_in_use().unwrap() > start);
    }
    assert_eq!(ctx.bytes_in_use().unwrap(), start);
}

#[test]
fn context_may_go_before_its_tensors() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice_f64(&[1.0, 2.0, 3.0], &[3]).unwrap();
    x.set_requires_grad(true).unwrap();
    let y = x.exp().unwrap();
    drop(ctx);
    // the tensors keep the context alive
    let z = y.sum().unwrap();
    z.backward().unwrap();
    let g = x.grad().unwrap().unwrap().to_vec::<f64>().unwrap();
    let want: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|v| v.exp()).collect();
    for (a, b) in g.iter().zip(&want) {
        assert!((a - b).abs() < 1e-12 * b, "{g:?} vs {want:?}");
    }
    let c = x.context().unwrap();
    assert_eq!(c.num_threads(), x.context().unwrap().num_threads());
    drop(c);
    drop(x);
    drop(z);
    drop(y);
}

#[test]
fn clones_are_references_not_copies() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice(&[1.0, 2.0], &[2]).unwrap();
    let alias = x.clone();
    alias.copy_from(&[5.0f32, 6.0]).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![5.0, 6.0]);
    let copy = x.clone_op().unwrap();
    copy.copy_from(&[7.0f32, 8.0]).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![5.0, 6.0]);
}
