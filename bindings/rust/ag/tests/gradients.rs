//! Gradients of ops against central differences in f64.

mod common;
use ag::{Context, DType};
use common::{assert_close, check_gradients};

#[test]
fn elementwise_ops() {
    let ctx = Context::new().unwrap();
    check_gradients(&ctx, &[&[2, 3], &[2, 3]], 1, 0.5, 2.0, |t| t[0].mul(&t[1])?.div(&t[0].add(&t[1])?));
    check_gradients(&ctx, &[&[4]], 2, -2.0, 2.0, |t| t[0].tanh()?.add(&t[0].sigmoid()?));
    check_gradients(&ctx, &[&[5]], 3, 0.2, 3.0, |t| t[0].log()?.mul(&t[0].exp()?));
    check_gradients(&ctx, &[&[3], &[3]], 4, 0.5, 1.5, |t| t[0].pow(&t[1]));
    check_gradients(&ctx, &[&[6]], 5, -1.0, 1.0, |t| t[0].sin()?.mul(&t[0].gelu()?));
}

#[test]
fn broadcasting_binary_ops() {
    let ctx = Context::new().unwrap();
    check_gradients(&ctx, &[&[2, 3], &[3]], 6, -1.0, 1.0, |t| t[0].sub(&t[1])?.square());
}

#[test]
fn matmul_and_reductions() {
    let ctx = Context::new().unwrap();
    check_gradients(&ctx, &[&[2, 3], &[3, 4]], 7, -1.0, 1.0, |t| t[0].matmul(&t[1]));
    check_gradients(&ctx, &[&[3, 4]], 8, -1.0, 1.0, |t| t[0].sum_dims(&[1], 1));
    check_gradients(&ctx, &[&[3, 4]], 9, -1.0, 1.0, |t| t[0].logsumexp_dims(&[0], 0));
    check_gradients(&ctx, &[&[2, 5]], 10, -2.0, 2.0, |t| t[0].softmax(1));
    check_gradients(&ctx, &[&[2, 5]], 11, -2.0, 2.0, |t| t[0].log_softmax(-1));
}

#[test]
fn shape_ops_and_multi_output_ops() {
    let ctx = Context::new().unwrap();
    check_gradients(&ctx, &[&[2, 3]], 12, -1.0, 1.0, |t| t[0].transpose(0, 1)?.reshape(&[6]));
    check_gradients(&ctx, &[&[4, 2]], 13, -1.0, 1.0, |t| {
        let parts = t[0].split(&[1, 3], 0)?;
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].shape(), vec![3, 2]);
        ag::concat(&[&parts[1], &parts[0].mul(&parts[0])?], 0)
    });
    check_gradients(&ctx, &[&[3, 4]], 14, -1.0, 1.0, |t| {
        let (values, indices) = t[0].max_dim(1, 0)?;
        assert_eq!(indices.dtype(), DType::I64);
        Ok(values)
    });
    check_gradients(&ctx, &[&[5, 2]], 15, -1.0, 1.0, |t| {
        let chunks = t[0].chunk(2, 0)?;
        assert_eq!(chunks.iter().map(|c| c.shape()[0]).collect::<Vec<_>>(), vec![3, 2]);
        ag::stack(&[&chunks[0].sum()?, &chunks[1].sum()?], 0)
    });
}

#[test]
fn nn_ops_with_optional_arguments() {
    let ctx = Context::new().unwrap();
    // linear with and without bias (nullable tensor arguments)
    check_gradients(&ctx, &[&[2, 3], &[4, 3], &[4]], 16, -1.0, 1.0, |t| t[0].linear(&t[1], Some(&t[2])));
    check_gradients(&ctx, &[&[2, 3], &[4, 3]], 17, -1.0, 1.0, |t| t[0].linear(&t[1], None));
    check_gradients(&ctx, &[&[2, 4], &[4], &[4]], 18, -1.0, 1.0, |t| t[0].layer_norm(&[4], Some(&t[1]), Some(&t[2]), 1e-5));
    // conv2d with fixed [2] arrays and NULL defaults
    check_gradients(&ctx, &[&[1, 2, 4, 4], &[3, 2, 3, 3]], 19, -1.0, 1.0, |t| t[0].conv2d(&t[1], None, Some([1, 1]), Some([1, 1]), None, 1));
    // cross entropy against class indices
    let target = ctx.from_slice_i64(&[2, 0, 1], &[3]).unwrap();
    check_gradients(&ctx, &[&[3, 4]], 20, -1.0, 1.0, |t| t[0].cross_entropy(&target, ag::reduction::MEAN, ag::sys::AG_IGNORE_INDEX_DEFAULT.into(), 0.0));
}

#[test]
fn second_derivative_through_create_graph() {
    // d/dx (x^3) = 3x^2, d2/dx2 = 6x at x = 1.5
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice_f64(&[1.5], &[1]).unwrap();
    x.set_requires_grad(true).unwrap();
    let y = x.pow_scalar(3.0).unwrap().sum().unwrap();
    let g = ag::grad(&[&y], &[&x], None, ag::GradOptions { create_graph: true, ..Default::default() }).unwrap();
    let g = g[0].as_ref().unwrap();
    assert_close(&g.to_vec::<f64>().unwrap(), &[3.0 * 1.5 * 1.5], 1e-12, "first derivative");
    g.sum().unwrap().backward().unwrap();
    assert_close(&x.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), &[9.0], 1e-12, "second derivative");
}

#[test]
fn functional_helpers_agree_with_finite_differences() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_slice_f64(&[0.3, -0.7, 1.1], &[3]).unwrap();
    let f = |ts: &[ag::Tensor]| -> ag::Result<Vec<ag::Tensor>> { Ok(vec![ts[0].sin()?.mul(&ts[0])?.sum()?]) };
    let jac = ag::functional::jacobian(f, &[&x], 1, Default::default()).unwrap();
    let numeric = common::numeric_grad(&[0.3, -0.7, 1.1], 1e-6, |v| v.iter().map(|a| a.sin() * a).sum());
    assert_close(&jac[0].to_vec::<f64>().unwrap(), &numeric, 1e-6, "jacobian");
    x.set_requires_grad(true).unwrap();
    let r = ag::functional::gradcheck(f, &[&x], 1, Default::default()).unwrap();
    assert!(r.passed && r.num_compared == 3, "{r:?}");
}
