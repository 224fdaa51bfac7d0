//! Zero-copy buffers and DLPack (AG_0.2). Against a libag without them these
//! tests are ignored (cargo's "skipped") with the reason, never passed; the
//! build script probes the library that the tests load.

use ag::{Context, DType, Status};

#[test]
fn missing_interop_is_an_unsupported_error_not_a_crash() {
    assert_eq!(ag::has_interop(), cfg!(ag_has_from_buffer), "probe at build time and lookup at run time disagree");
    let ctx = Context::new().unwrap();
    let r = ctx.from_vec(vec![1.0f32, 2.0], &[2]);
    if ag::has_interop() {
        assert_eq!(r.unwrap().to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    } else {
        let e = r.unwrap_err();
        assert_eq!(e.status, Status::Unsupported);
        assert!(e.message.contains("libag lacks ag_tensor_from_buffer"), "{}", e.message);
    }
}

#[test]
#[cfg_attr(not(ag_has_from_buffer), ignore = "libag lacks ag_tensor_from_buffer")]
fn from_vec_shares_memory_and_frees_it_with_the_last_reference() {
    let ctx = Context::new().unwrap();
    let start = ctx.bytes_in_use().unwrap();
    let v: Vec<f64> = (0..1000).map(f64::from).collect();
    let addr = v.as_ptr() as usize;
    let t = ctx.from_vec(v, &[10, 100]).unwrap();
    assert_eq!(t.data_ptr().unwrap() as usize, addr, "no copy");
    assert_eq!(t.strides().unwrap(), vec![100, 1]);
    assert!(t.is_contiguous().unwrap());
    assert!(!t.is_read_only().unwrap());
    // SAFETY: nothing writes the storage while `s` lives.
    let s = unsafe { t.as_slice::<f64>() }.unwrap();
    assert_eq!(s[999], 999.0);
    // writes through ag are seen in place
    t.mul_(&t.scalar_like(2.0).unwrap()).unwrap();
    assert_eq!(unsafe { t.as_slice::<f64>() }.unwrap()[999], 1998.0);
    // host memory is not ag's allocation
    assert_eq!(ctx.bytes_in_use().unwrap(), start);
    let tt = t.transpose(0, 1).unwrap();
    assert!(!tt.is_contiguous().unwrap());
    assert_eq!(unsafe { tt.as_slice::<f64>() }.unwrap_err().status, Status::Unsupported);
    assert_eq!(unsafe { t.as_slice::<f32>() }.unwrap_err().status, Status::Dtype);
    assert_eq!(tt.contiguous().unwrap().to_vec::<f64>().unwrap()[1], 200.0);
}

#[test]
#[cfg_attr(not(ag_has_from_buffer), ignore = "libag lacks ag_tensor_from_buffer")]
fn borrowed_buffers_see_writes_and_read_only_ones_refuse_them() {
    let ctx = Context::new().unwrap();
    let mut data = vec![1.0f32, 2.0, 3.0, 4.0];
    {
        // SAFETY: no tensor made from the view outlives this block.
        let view = unsafe { ctx.from_slice_borrowed_mut(&mut data, &[2, 2]) }.unwrap();
        view.add_(&view.scalar_like(10.0).unwrap()).unwrap();
        view.copy_from(&[view.to_vec::<f32>().unwrap()[0], 0.0, 0.0, 5.0]).unwrap();
    }
    assert_eq!(data, vec![11.0, 0.0, 0.0, 5.0]);
    let frozen = [1.0f64, 2.0];
    // SAFETY: as above.
    let view = unsafe { ctx.from_slice_borrowed(&frozen, &[2]) }.unwrap();
    assert!(view.is_read_only().unwrap());
    assert_eq!(view.add_(&view.scalar_like(1.0).unwrap()).unwrap_err().status, Status::Unsupported);
    // Out-of-place ops read it (ag's SIMD exp may differ from libm in the last bit).
    let e = view.exp().unwrap().to_vec::<f64>().unwrap();
    for (got, x) in e.iter().zip(frozen) {
        assert!((got - x.exp()).abs() <= 4.0 * f64::EPSILON * x.exp(), "exp({x}) = {got}");
    }
}

#[test]
#[cfg_attr(not(ag_has_from_buffer), ignore = "libag lacks ag_tensor_from_buffer")]
fn dlpack_round_trip_shares_memory() {
    let ctx = Context::new().unwrap();
    let t = ctx.from_slice_i64(&[1, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let exported = t.to_dlpack().unwrap();
    assert_eq!(exported.shape(), &[2, 3]);
    let dl = exported.dl_tensor();
    assert_eq!((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), (ag::sys::AG_DLPACK_CODE_INT as u8, 64, 1));
    assert_eq!(dl.data as usize + dl.byte_offset as usize, t.data_ptr().unwrap() as usize);
    let back = exported.into_tensor(&ctx).unwrap();
    assert_eq!(back.dtype(), DType::I64);
    assert_eq!(back.to_vec::<i64>().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(back.data_ptr().unwrap(), t.data_ptr().unwrap());
    // an export dropped without a consumer calls its deleter (no leak, no crash)
    drop(t.to_dlpack_legacy().unwrap());
    let legacy = t.to_dlpack_legacy().unwrap();
    assert_eq!(legacy.into_tensor(&ctx).unwrap().shape(), vec![2, 3]);
}

#[test]
#[cfg_attr(not(ag_has_from_buffer), ignore = "libag lacks ag_tensor_from_buffer")]
fn from_vec_gradients_flow() {
    let ctx = Context::new().unwrap();
    let x = ctx.from_vec(vec![1.0f64, -2.0], &[2]).unwrap();
    x.set_requires_grad(true).unwrap();
    x.mul(&x).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().unwrap().to_vec::<f64>().unwrap(), vec![2.0, -4.0]);
}
