package ag

/*
#include "agx.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

func numelOf(fn string, shape []int64) (int, error) {
	n := int64(1)
	for _, s := range shape {
		if s < 0 {
			return 0, argError(fn, "negative size %d", s)
		}
		n *= s
	}
	return int(n), nil
}

// create copies data (n elements of dtype at p, or zeros for nil p).
func (c *Context) create(dtype DType, shape []int64, n int, p unsafe.Pointer) (*Tensor, error) {
	const fn = "ag_tensor_create"
	h, err := contextArg(fn, c)
	if err != nil {
		return nil, err
	}
	if shape == nil {
		shape = []int64{int64(n)}
	}
	want, err := numelOf(fn, shape)
	if err != nil {
		return nil, err
	}
	if want != n {
		return nil, newError(StatusShape, "["+fn+"] shape needs "+itoa(want)+" elements, data has "+itoa(n))
	}
	s, err := int64sArg(fn, "shape", shape, 0, false)
	if err != nil {
		return nil, err
	}
	var out *C.ag_tensor
	err = c_ag_tensor_create(&out, h, C.ag_dtype(dtype), s, C.int32_t(len(shape)), p)
	runtime.KeepAlive(c)
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

func ptrOf[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// FromFloat32 copies data into a new f32 tensor of the given shape (no
// shape: one dimension of len(data)).
func (c *Context) FromFloat32(data []float32, shape ...int64) (*Tensor, error) {
	return c.create(F32, shape, len(data), ptrOf(data))
}

// FromFloat64 copies data into a new f64 tensor (see FromFloat32).
func (c *Context) FromFloat64(data []float64, shape ...int64) (*Tensor, error) {
	return c.create(F64, shape, len(data), ptrOf(data))
}

// FromInt64 copies data into a new i64 tensor (see FromFloat32).
func (c *Context) FromInt64(data []int64, shape ...int64) (*Tensor, error) {
	return c.create(I64, shape, len(data), ptrOf(data))
}

// FromBool copies data into a new bool tensor (see FromFloat32).
func (c *Context) FromBool(data []bool, shape ...int64) (*Tensor, error) {
	return c.create(Bool, shape, len(data), ptrOf(data))
}

type filler func(out **C.ag_tensor, ctx *C.ag_context, dtype C.ag_dtype, shape *C.int64_t, ndim C.int32_t) error

func (c *Context) fill(fn string, f filler, dtype DType, shape []int64) (*Tensor, error) {
	h, err := contextArg(fn, c)
	if err != nil {
		return nil, err
	}
	s, err := int64sArg(fn, "shape", shape, 0, false)
	if err != nil {
		return nil, err
	}
	var out *C.ag_tensor
	err = f(&out, h, C.ag_dtype(dtype), s, C.int32_t(len(shape)))
	runtime.KeepAlive(c)
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// Zeros is a new tensor of zeros (no shape: 0-dim).
func (c *Context) Zeros(dtype DType, shape ...int64) (*Tensor, error) {
	return c.fill("ag_tensor_zeros", c_ag_tensor_zeros, dtype, shape)
}

// Ones is a new tensor of ones (no shape: 0-dim).
func (c *Context) Ones(dtype DType, shape ...int64) (*Tensor, error) {
	return c.fill("ag_tensor_ones", c_ag_tensor_ones, dtype, shape)
}

// Full is a new tensor with every element value (no shape: 0-dim).
func (c *Context) Full(dtype DType, value float64, shape ...int64) (*Tensor, error) {
	return c.fill("ag_tensor_full", func(out **C.ag_tensor, ctx *C.ag_context, d C.ag_dtype, s *C.int64_t, n C.int32_t) error {
		return c_ag_tensor_full(out, ctx, d, s, n, C.double(value))
	}, dtype, shape)
}

// Scalar is a new 0-dim tensor.
func (c *Context) Scalar(dtype DType, value float64) (*Tensor, error) {
	h, err := contextArg("ag_tensor_scalar", c)
	if err != nil {
		return nil, err
	}
	var out *C.ag_tensor
	err = c_ag_tensor_scalar(&out, h, C.ag_dtype(dtype), C.double(value))
	runtime.KeepAlive(c)
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// DType of the tensor (0 for a released one).
func (t *Tensor) DType() DType {
	defer runtime.KeepAlive(t)
	return DType(c_ag_tensor_dtype(t.handle()))
}

// NDim is the number of dimensions (-1 for a released tensor).
func (t *Tensor) NDim() int {
	defer runtime.KeepAlive(t)
	return int(c_ag_tensor_ndim(t.handle()))
}

// Numel is the number of elements (-1 for a released tensor).
func (t *Tensor) Numel() int64 {
	defer runtime.KeepAlive(t)
	return int64(c_ag_tensor_numel(t.handle()))
}

// Version is the storage's version counter (-1 for a released tensor).
func (t *Tensor) Version() int64 {
	defer runtime.KeepAlive(t)
	return int64(c_ag_tensor_version(t.handle()))
}

// Shape of the tensor (nil for a released tensor).
func (t *Tensor) Shape() []int64 {
	defer runtime.KeepAlive(t)
	p := t.handle()
	if p == nil {
		return nil
	}
	dims := make([]int64, MaxDims)
	if err := c_ag_tensor_shape(p, (*C.int64_t)(unsafe.Pointer(&dims[0])), C.int32_t(len(dims))); err != nil {
		return nil
	}
	return dims[:c_ag_tensor_ndim(p)]
}

// Context returns a new reference to the tensor's context.
func (t *Tensor) Context() (*Context, error) {
	p, err := tensorArg("ag_tensor_context", "t", t, false)
	if err != nil {
		return nil, err
	}
	var out *C.ag_context
	err = c_ag_tensor_context(&out, p)
	runtime.KeepAlive(t)
	if err != nil {
		return nil, err
	}
	return wrapContext(out), nil
}

// copyOut copies the elements (row-major) into dst, checking the dtype.
func (t *Tensor) copyOut(want DType, dst unsafe.Pointer, n int) error {
	const fn = "ag_tensor_copy_data"
	p, err := tensorArg(fn, "t", t, false)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(t)
	if d := DType(c_ag_tensor_dtype(p)); d != want {
		return newError(StatusDtype, "["+fn+"] tensor is "+d.String()+", not "+want.String())
	}
	return c_ag_tensor_copy_data(p, dst, C.size_t(n*want.Size()))
}

func readAll[T any](t *Tensor, d DType) ([]T, error) {
	n := t.Numel()
	if n < 0 {
		return nil, argError("ag_tensor_copy_data", "t is nil or released")
	}
	out := make([]T, n)
	if err := t.copyOut(d, ptrOf(out), int(n)); err != nil {
		return nil, err
	}
	return out, nil
}

// Float32s copies the elements of an f32 tensor.
func (t *Tensor) Float32s() ([]float32, error) { return readAll[float32](t, F32) }

// Float64s copies the elements of an f64 tensor.
func (t *Tensor) Float64s() ([]float64, error) { return readAll[float64](t, F64) }

// Int64s copies the elements of an i64 tensor.
func (t *Tensor) Int64s() ([]int64, error) { return readAll[int64](t, I64) }

// Bools copies the elements of a bool tensor.
func (t *Tensor) Bools() ([]bool, error) { return readAll[bool](t, Bool) }

// CopyFrom overwrites the elements from src, a []float32, []float64,
// []int64 or []bool of the tensor's dtype and numel; bumps the version.
func (t *Tensor) CopyFrom(src any) error {
	const fn = "ag_tensor_copy_from"
	p, err := tensorArg(fn, "t", t, false)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(t)
	var ptr unsafe.Pointer
	var n int
	var d DType
	switch s := src.(type) {
	case []float32:
		ptr, n, d = ptrOf(s), len(s), F32
	case []float64:
		ptr, n, d = ptrOf(s), len(s), F64
	case []int64:
		ptr, n, d = ptrOf(s), len(s), I64
	case []bool:
		ptr, n, d = ptrOf(s), len(s), Bool
	default:
		return argError(fn, "src must be []float32, []float64, []int64 or []bool, not %T", src)
	}
	if td := DType(c_ag_tensor_dtype(p)); td != d {
		return newError(StatusDtype, "["+fn+"] tensor is "+td.String()+", src is "+d.String())
	}
	err = c_ag_tensor_copy_from(p, ptr, C.size_t(n*d.Size()))
	runtime.KeepAlive(src)
	return err
}

// Item reads the only element as a float64.
func (t *Tensor) Item() (float64, error) {
	p, err := tensorArg("ag_tensor_item", "t", t, false)
	if err != nil {
		return 0, err
	}
	defer runtime.KeepAlive(t)
	var v C.double
	err = c_ag_tensor_item(p, &v)
	return float64(v), err
}
