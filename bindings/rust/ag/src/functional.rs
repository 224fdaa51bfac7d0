//! Higher-order helpers over a Rust function of tensors (torch.autograd.functional):
//! vjp, jvp, jacobian, hessian, hvp, gradcheck, gradgradcheck. The function
//! runs only during the call, on the calling thread.

use crate::callback::{borrow_all, count_error, guard};
use crate::error::{check, count};
use crate::{Error, Result, Status, Tensor};
use ag_sys as sys;
use std::ffi::c_void;
use std::ptr;

type UserFn<'f> = &'f dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>;

unsafe extern "C" fn call_user_fn(
    user_data: *mut c_void,
    inputs: *const *const sys::ag_tensor,
    num_inputs: i32,
    outputs: *mut *mut sys::ag_tensor,
    num_outputs: i32,
) -> sys::ag_status {
    let f = unsafe { *user_data.cast::<UserFn<'_>>() };
    guard(|| {
        let inputs = unsafe { borrow_all(inputs, num_inputs) }?;
        let outs = f(&inputs)?;
        let expected = usize::try_from(num_outputs).unwrap_or(0);
        if outs.len() != expected {
            return Err(count_error("the function", outs.len(), expected));
        }
        for (i, t) in outs.into_iter().enumerate() {
            unsafe { *outputs.add(i) = t.into_raw() };
        }
        Ok(())
    })
}

/// Options of the functional helpers.
#[derive(Debug, Clone, Copy, Default)]
pub struct FunctionalOptions {
    /// Record the results' graphs (for higher derivatives).
    pub create_graph: bool,
    /// An input that no output depends on is an error.
    pub strict: bool,
}

fn options(o: FunctionalOptions) -> Result<sys::ag_functional_options> {
    // SAFETY: zeroed is valid; init fills it.
    let mut s: sys::ag_functional_options = unsafe { std::mem::zeroed() };
    check(unsafe { sys::ag_functional_options_init(&mut s) })?;
    s.create_graph = i32::from(o.create_graph);
    s.strict = i32::from(o.strict);
    Ok(s)
}

fn raw(ts: &[&Tensor]) -> Vec<*const sys::ag_tensor> {
    ts.iter().map(|t| t.as_ptr().cast_const()).collect()
}

fn take(ptrs: Vec<*mut sys::ag_tensor>) -> Vec<Tensor> {
    ptrs.into_iter().filter(|p| !p.is_null()).map(|p| unsafe { Tensor::from_raw(p) }).collect()
}

fn check_len(what: &str, got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::new(Status::InvalidArgument, format!("[{what}] {got} tensors given, {expected} needed")))
    }
}

/// Vector-Jacobian product: (vjp per input, outputs of `f`).
pub fn vjp<F>(f: F, inputs: &[&Tensor], v: Option<&[&Tensor]>, num_outputs: usize, opts: FunctionalOptions) -> Result<(Vec<Tensor>, Vec<Tensor>)>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let user: UserFn<'_> = &f;
    let ins = raw(inputs);
    let vs = v.map(raw);
    if let Some(vs) = &vs {
        check_len("ag_vjp", vs.len(), num_outputs)?;
    }
    let o = options(opts)?;
    let mut res = vec![ptr::null_mut(); ins.len()];
    let mut outs = vec![ptr::null_mut(); num_outputs];
    let ud = (&user as *const UserFn<'_>).cast_mut().cast::<c_void>();
    check(unsafe {
        sys::ag_vjp(res.as_mut_ptr(), outs.as_mut_ptr(), Some(call_user_fn), ud, ins.as_ptr(), count(ins.len())?, vs.as_ref().map_or(ptr::null(), |v| v.as_ptr()), count(num_outputs)?, &o)
    })?;
    Ok((take(res), take(outs)))
}

/// Jacobian-vector product: (jvp per output, outputs of `f`).
pub fn jvp<F>(f: F, inputs: &[&Tensor], v: Option<&[&Tensor]>, num_outputs: usize, opts: FunctionalOptions) -> Result<(Vec<Tensor>, Vec<Tensor>)>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let user: UserFn<'_> = &f;
    let ins = raw(inputs);
    let vs = v.map(raw);
    if let Some(vs) = &vs {
        check_len("ag_jvp", vs.len(), ins.len())?;
    }
    let o = options(opts)?;
    let mut res = vec![ptr::null_mut(); num_outputs];
    let mut outs = vec![ptr::null_mut(); num_outputs];
    let ud = (&user as *const UserFn<'_>).cast_mut().cast::<c_void>();
    check(unsafe {
        sys::ag_jvp(res.as_mut_ptr(), outs.as_mut_ptr(), Some(call_user_fn), ud, ins.as_ptr(), count(ins.len())?, vs.as_ref().map_or(ptr::null(), |v| v.as_ptr()), count(num_outputs)?, &o)
    })?;
    Ok((take(res), take(outs)))
}

/// Jacobian blocks, `[o * inputs.len() + i]` of shape out_o.shape + in_i.shape.
pub fn jacobian<F>(f: F, inputs: &[&Tensor], num_outputs: usize, opts: FunctionalOptions) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let user: UserFn<'_> = &f;
    let ins = raw(inputs);
    let o = options(opts)?;
    let mut res = vec![ptr::null_mut(); num_outputs * ins.len()];
    let ud = (&user as *const UserFn<'_>).cast_mut().cast::<c_void>();
    check(unsafe { sys::ag_jacobian(res.as_mut_ptr(), Some(call_user_fn), ud, ins.as_ptr(), count(ins.len())?, count(num_outputs)?, &o) })?;
    Ok(take(res))
}

/// Hessian blocks of a scalar function, `[i * inputs.len() + j]`.
pub fn hessian<F>(f: F, inputs: &[&Tensor], opts: FunctionalOptions) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let user: UserFn<'_> = &f;
    let ins = raw(inputs);
    let o = options(opts)?;
    let mut res = vec![ptr::null_mut(); ins.len() * ins.len()];
    let ud = (&user as *const UserFn<'_>).cast_mut().cast::<c_void>();
    check(unsafe { sys::ag_hessian(res.as_mut_ptr(), Some(call_user_fn), ud, ins.as_ptr(), count(ins.len())?, &o) })?;
    Ok(take(res))
}

/// Hessian-vector product of a scalar function: (H v per input, output of `f`).
pub fn hvp<F>(f: F, inputs: &[&Tensor], v: &[&Tensor], opts: FunctionalOptions) -> Result<(Vec<Tensor>, Tensor)>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let user: UserFn<'_> = &f;
    let ins = raw(inputs);
    let vs = raw(v);
    check_len("ag_hvp", vs.len(), ins.len())?;
    let o = options(opts)?;
    let mut res = vec![ptr::null_mut(); ins.len()];
    let mut out = ptr::null_mut();
    let ud = (&user as *const UserFn<'_>).cast_mut().cast::<c_void>();
    check(unsafe { sys::ag_hvp(res.as_mut_ptr(), &mut out, Some(call_user_fn), ud, ins.as_ptr(), count(ins.len())?, vs.as_ptr(), &o) })?;
    Ok((take(res), unsafe { Tensor::from_raw(out) }))
}

/// Tolerances of the gradient checks (0: ag's defaults).
#[derive(Debug, Clone, Copy, Default)]
pub struct GradcheckOptions {
    pub eps: f64,
    pub atol: f64,
    pub rtol: f64,
}

/// Outcome of a gradient check; the worst element when it failed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradcheckResult {
    pub passed: bool,
    pub input_index: i32,
    pub output_index: i32,
    pub input_element: i64,
    pub output_element: i64,
    pub analytical: f64,
    pub numerical: f64,
    pub num_compared: i64,
}

fn gradcheck_parts(opts: GradcheckOptions) -> Result<(sys::ag_gradcheck_options, sys::ag_gradcheck_result)> {
    let mut o: sys::ag_gradcheck_options = unsafe { std::mem::zeroed() };
    check(unsafe { sys::ag_gradcheck_options_init(&mut o) })?;
    o.eps = opts.eps;
    o.atol = opts.atol;
    o.rtol = opts.rtol;
    let mut r: sys::ag_gradcheck_result = unsafe { std::mem::zeroed() };
    check(unsafe { sys::ag_gradcheck_result_init(&mut r) })?;
    Ok((o, r))
}

fn result(r: &sys::ag_gradcheck_result) -> GradcheckResult {
    GradcheckResult {
        passed: r.passed != 0,
        input_index: r.input_index,
        output_index: r.output_index,
        input_element: r.input_element,
        output_element: r.output_element,
        analytical: r.analytical,
        numerical: r.numerical,
        num_compared: r.num_compared,
    }
}

/// ag's own check of `f`'s backward against central differences (f64
/// inputs that require grad).
pub fn gradcheck<F>(f: F, inputs: &[&Tensor], num_outputs: usize, opts: GradcheckOptions) -> Result<GradcheckResult>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let user: UserFn<'_> = &f;
    let ins = raw(inputs);
    let (o, mut r) = gradcheck_parts(opts)?;
    let ud = (&user as *const UserFn<'_>).cast_mut().cast::<c_void>();
    check(unsafe { sys::ag_gradcheck(&mut r, Some(call_user_fn), ud, ins.as_ptr(), count(ins.len())?, count(num_outputs)?, &o) })?;
    Ok(result(&r))
}

/// Second-order check: gradcheck of the vjp of `f` (grad_outputs None: fixed pseudo-random).
pub fn gradgradcheck<F>(f: F, inputs: &[&Tensor], grad_outputs: Option<&[&Tensor]>, num_outputs: usize, opts: GradcheckOptions) -> Result<GradcheckResult>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let user: UserFn<'_> = &f;
    let ins = raw(inputs);
    let gos = grad_outputs.map(raw);
    if let Some(g) = &gos {
        check_len("ag_gradgradcheck", g.len(), num_outputs)?;
    }
    let (o, mut r) = gradcheck_parts(opts)?;
    let ud = (&user as *const UserFn<'_>).cast_mut().cast::<c_void>();
    check(unsafe {
        sys::ag_gradgradcheck(&mut r, Some(call_user_fn), ud, ins.as_ptr(), count(ins.len())?, gos.as_ref().map_or(ptr::null(), |g| g.as_ptr()), count(num_outputs)?, &o)
    })?;
    Ok(result(&r))
}
