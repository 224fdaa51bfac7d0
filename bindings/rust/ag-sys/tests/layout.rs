//! Structs and constants as generated must match the description and the
//! loaded library (ag_struct_size, ag_struct_field_offset, ag_constant_value).

use ag_sys as sys;
use std::ffi::CString;

#[test]
fn structs_match_the_description() {
    assert!(!sys::STRUCT_LAYOUTS.is_empty());
    for s in sys::STRUCT_LAYOUTS {
        assert_eq!(s.size, s.described_size, "size of {}", s.name);
        assert_eq!(s.align, s.described_align, "align of {}", s.name);
        for (field, rust, described) in s.fields {
            assert_eq!(rust, described, "offset of {}.{}", s.name, field);
        }
    }
}

#[test]
#[cfg_attr(not(ag_has_layout_queries), ignore = "libag lacks ag_struct_size")]
fn structs_match_the_loaded_library() {
    let size = sys::optional::ag_struct_size().expect("libag lacks ag_struct_size");
    let offset = sys::optional::ag_struct_field_offset().expect("libag lacks ag_struct_field_offset");
    for s in sys::STRUCT_LAYOUTS {
        let name = CString::new(s.name).unwrap();
        assert_eq!(unsafe { size(name.as_ptr()) }, s.size, "sizeof({}) in libag", s.name);
        for (field, rust, _) in s.fields {
            let f = CString::new(*field).unwrap();
            let got = unsafe { offset(name.as_ptr(), f.as_ptr()) };
            assert_eq!(got, *rust as i64, "offsetof({}, {}) in libag", s.name, field);
        }
    }
    // The query must be able to say no.
    let bogus = CString::new("ag_no_such_struct").unwrap();
    assert_eq!(unsafe { size(bogus.as_ptr()) }, 0);
}

#[test]
#[cfg_attr(not(ag_has_layout_queries), ignore = "libag lacks ag_constant_value")]
fn constants_match_the_loaded_library() {
    let value = sys::optional::ag_constant_value().expect("libag lacks ag_constant_value");
    assert!(sys::CONSTANT_VALUES.len() > 20);
    for (name, expected) in sys::CONSTANT_VALUES {
        let c = CString::new(*name).unwrap();
        let mut got = 0i64;
        let status = unsafe { value(c.as_ptr(), &mut got) };
        assert_eq!(status, sys::AG_OK, "ag_constant_value({name})");
        assert_eq!(got, *expected, "value of {name}");
    }
}

#[test]
fn status_and_dtype_names_come_from_the_library() {
    let name = |s| unsafe { std::ffi::CStr::from_ptr(sys::ag_status_name(s)) }.to_str().unwrap().to_string();
    assert_eq!(name(sys::AG_ERR_SHAPE), "AG_ERR_SHAPE");
    assert_eq!(name(-1000), "AG_ERR_UNKNOWN");
    assert_eq!(unsafe { sys::ag_dtype_size(sys::AG_F64) }, 8);
}

#[test]
fn raw_x_times_x_gives_gradient_six() {
    // The seed example through the raw layer: x = 3, y = x * x, dy/dx = 6.
    unsafe {
        let mut ctx = std::ptr::null_mut();
        assert_eq!(sys::ag_context_create(&mut ctx, std::ptr::null()), sys::AG_OK);
        let mut x = std::ptr::null_mut();
        assert_eq!(sys::ag_tensor_scalar(&mut x, ctx, sys::AG_F64, 3.0), sys::AG_OK);
        assert_eq!(sys::ag_tensor_requires_grad(x, 1), sys::AG_OK);
        let mut y = std::ptr::null_mut();
        assert_eq!(sys::ag_op_mul(&mut y, x, x), sys::AG_OK);
        assert_eq!(sys::ag_backward(y, std::ptr::null(), std::ptr::null()), sys::AG_OK);
        let mut g = std::ptr::null_mut();
        assert_eq!(sys::ag_tensor_grad(&mut g, x), sys::AG_OK);
        let mut v = 0.0;
        assert_eq!(sys::ag_tensor_item(g, &mut v), sys::AG_OK);
        assert_eq!(v, 6.0);
        for t in [g, y, x] {
            sys::ag_tensor_release(t);
        }
        sys::ag_context_release(ctx);
    }
}

#[test]
fn optional_symbols_resolve_exactly_when_exported() {
    // ag_struct_size is in the library the build probed; a made-up name is not.
    assert_eq!(sys::dynamic::has_symbol(c"ag_struct_size"), cfg!(ag_has_layout_queries));
    assert!(!sys::dynamic::has_symbol(c"ag_no_such_function"));
    assert!(sys::dynamic::has_symbol(c"ag_version_number"));
}
