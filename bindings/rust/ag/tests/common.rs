//! Helpers shared by the integration tests.
#![allow(dead_code)]

use ag::{Context, Result, Tensor};

/// Central differences of the scalar `f` at `x` (f64), step `h`.
pub fn numeric_grad(x: &[f64], h: f64, f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let mut p = x.to_vec();
            let mut m = x.to_vec();
            p[i] += h;
            m[i] -= h;
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

/// Deterministic pseudo-random values in [lo, hi) (no ag involved).
pub fn values(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

pub fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{i}]: got {g}, want {w} (all: {got:?} vs {want:?})");
    }
}

/// Checks d(sum(w * f(inputs)))/d(inputs) from backward against central
/// differences of the same scalar, evaluated by ag in f64 without a graph.
pub fn check_gradients(ctx: &Context, shapes: &[&[i64]], seed: u64, lo: f64, hi: f64, f: impl Fn(&[Tensor]) -> Result<Tensor>) {
    let data: Vec<Vec<f64>> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| values(s.iter().product::<i64>() as usize, seed + i as u64, lo, hi))
        .collect();
    let make = |vals: &[Vec<f64>], grad: bool| -> Vec<Tensor> {
        vals.iter()
            .zip(shapes)
            .map(|(v, s)| {
                let t = ctx.from_slice_f64(v, s).unwrap();
                if grad {
                    t.set_requires_grad(true).unwrap();
                }
                t
            })
            .collect()
    };
    let inputs = make(&data, true);
    let out = f(&inputs).unwrap();
    let weights = values(out.numel(), seed + 100, 0.5, 1.5);
    let w = ctx.from_slice_f64(&weights, &out.shape()).unwrap();
    let scalar = |ts: &[Tensor]| -> f64 { f(ts).unwrap().mul(&w).unwrap().sum().unwrap().item().unwrap() };
    (&out * &w).sum().unwrap().backward().unwrap();
    for (k, input) in inputs.iter().enumerate() {
        let analytic = input.grad().unwrap().expect("input has a gradient").to_vec::<f64>().unwrap();
        let numeric = numeric_grad(&data[k], 1e-6, |x| {
            let mut vals = data.clone();
            vals[k] = x.to_vec();
            ag::no_grad(|| scalar(&make(&vals, false)))
        });
        assert_close(&analytic, &numeric, 1e-5, &format!("gradient of input {k}"));
    }
}
