package ag

/*
#include "agx.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Zero-copy buffers. cgo forbids C from keeping Go memory after a call, so
// memory lent to ag is C memory: NewFloat32Buffer (etc.) mallocs it and
// gives a Go slice over it. The buffer is reference counted: the Go side
// holds one reference (Release), each tensor made from it another, dropped
// by ag's deleter when the tensor's storage goes; the memory is freed with
// the last one.

// Buffer is host memory in C that tensors can share without copying.
type Buffer struct {
	ptr     unsafe.Pointer
	n       int
	dtype   DType
	refs    *atomic.Int64
	dropped atomic.Bool
}

func newBuffer(dtype DType, n int) *Buffer {
	size := max(n*dtype.Size(), 1)
	b := &Buffer{ptr: C.calloc(1, C.size_t(size)), n: n, dtype: dtype, refs: new(atomic.Int64)}
	b.refs.Store(1)
	return b
}

// NewFloat32Buffer allocates n zeroed float32s in C memory.
func NewFloat32Buffer(n int) *Buffer { return newBuffer(F32, n) }

// NewFloat64Buffer allocates n zeroed float64s in C memory.
func NewFloat64Buffer(n int) *Buffer { return newBuffer(F64, n) }

// Float32s is a slice over the buffer, valid until Release (f32 buffers).
func (b *Buffer) Float32s() []float32 {
	if b.dtype != F32 || b.dropped.Load() {
		return nil
	}
	return unsafe.Slice((*float32)(b.ptr), b.n)
}

// Float64s is a slice over the buffer, valid until Release (f64 buffers).
func (b *Buffer) Float64s() []float64 {
	if b.dtype != F64 || b.dropped.Load() {
		return nil
	}
	return unsafe.Slice((*float64)(b.ptr), b.n)
}

func unref(p unsafe.Pointer, refs *atomic.Int64) {
	if refs.Add(-1) == 0 {
		C.free(p)
	}
}

// Release drops the Go side's reference; tensors made from the buffer keep
// the memory until they go. Idempotent.
func (b *Buffer) Release() {
	if b.dropped.CompareAndSwap(false, true) {
		unref(b.ptr, b.refs)
	}
}

// FromBuffer wraps the buffer as a tensor without copying (no shape: one
// dimension of the buffer's length). Writes through the buffer's slice are
// seen by the tensor, but not by its version counter.
func (c *Context) FromBuffer(b *Buffer, readOnly bool, shape ...int64) (*Tensor, error) {
	const fn = "ag_tensor_from_buffer"
	h, err := contextArg(fn, c)
	if err != nil {
		return nil, err
	}
	if b.dropped.Load() {
		return nil, argError(fn, "buffer was released")
	}
	if shape == nil {
		shape = []int64{int64(b.n)}
	}
	if n, err := numelOf(fn, shape); err != nil || n > b.n {
		return nil, newError(StatusShape, "["+fn+"] shape does not fit the buffer")
	}
	s, err := int64sArg(fn, "shape", shape, 0, true)
	if err != nil {
		return nil, err
	}
	ptr, refs := b.ptr, b.refs
	refs.Add(1) // the tensor's; ag's deleter drops it, also when the call fails
	ud := newHandle(func() { unref(ptr, refs) })
	var out *C.ag_tensor
	deleter := C.ag_deleter_fn(C.agx_cb_ag_deleter_fn)
	if readOnly {
		err = c_ag_tensor_from_buffer_flags(&out, h, C.ag_dtype(b.dtype), s, nil, C.int32_t(len(shape)), ptr, BufferReadOnly, deleter, ud)
	} else {
		err = c_ag_tensor_from_buffer(&out, h, C.ag_dtype(b.dtype), s, nil, C.int32_t(len(shape)), ptr, deleter, ud)
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(shape)
	if err != nil {
		if isMissing(err) {
			// The shim did not call ag, so no deleter ran.
			deleteHandle(ud)
			unref(ptr, refs)
		}
		return nil, err
	}
	return wrapTensor(out), nil
}

// DataPointer is the address of the first element, borrowed while t lives
// (read it with Strides).
func (t *Tensor) DataPointer() (unsafe.Pointer, error) {
	p, err := tensorArg("ag_tensor_data", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	return c_ag_tensor_data(p)
}

// MutableDataPointer is the address for writing; it bumps the version.
func (t *Tensor) MutableDataPointer() (unsafe.Pointer, error) {
	p, err := tensorArg("ag_tensor_data_mut", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var out unsafe.Pointer
	err = c_ag_tensor_data_mut(&out, p)
	return out, err
}

// Strides of t in elements.
func (t *Tensor) Strides() ([]int64, error) {
	p, err := tensorArg("ag_tensor_strides", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	s := make([]int64, MaxDims)
	if err := c_ag_tensor_strides(p, (*C.int64_t)(unsafe.Pointer(&s[0])), C.int32_t(len(s))); err != nil {
		return nil, err
	}
	return s[:c_ag_tensor_ndim(p)], nil
}

func flagQuery(t *Tensor, q func(*C.ag_tensor) (C.int32_t, error)) (bool, error) {
	p, err := tensorArg("ag_tensor_is_contiguous", "t", t, false)
	if err != nil {
		return false, err
	}
	defer runtime.KeepAlive(t)
	r, err := q(p)
	return r == 1, err
}

// IsContiguous reports whether t is row-major contiguous.
func (t *Tensor) IsContiguous() (bool, error) { return flagQuery(t, c_ag_tensor_is_contiguous) }

// IsReadOnly reports whether t refuses writes (FromBuffer with readOnly).
func (t *Tensor) IsReadOnly() (bool, error) { return flagQuery(t, c_ag_tensor_is_read_only) }

// Contiguous is t itself when contiguous, else a contiguous copy (recorded).
func (t *Tensor) Contiguous() (*Tensor, error) {
	p, err := tensorArg("ag_tensor_contiguous", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var out *C.ag_tensor
	if err := c_ag_tensor_contiguous(&out, p); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// DLPack is a DLPack 1.x managed tensor (DLManagedTensorVersioned), or a
// legacy DLManagedTensor. Release calls its deleter unless a consumer took it.
type DLPack struct {
	versioned *C.ag_dlpack_managed_tensor_versioned
	legacy    *C.ag_dlpack_managed_tensor
}

// Pointer is the C struct, for handing to another DLPack consumer (which then owns it).
func (d *DLPack) Pointer() unsafe.Pointer {
	if d.versioned != nil {
		return unsafe.Pointer(d.versioned)
	}
	return unsafe.Pointer(d.legacy)
}

func (d *DLPack) tensor() *C.ag_dlpack_tensor {
	if d.versioned != nil {
		return &d.versioned.dl_tensor
	}
	if d.legacy != nil {
		return &d.legacy.dl_tensor
	}
	return nil
}

// Shape of the exported tensor.
func (d *DLPack) Shape() []int64 {
	t := d.tensor()
	if t == nil {
		return nil
	}
	return append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), int(t.ndim))...)
}

// Data is the address of element (0, ..., 0) (byte_offset added).
func (d *DLPack) Data() unsafe.Pointer {
	t := d.tensor()
	if t == nil {
		return nil
	}
	return unsafe.Add(t.data, uintptr(t.byte_offset))
}

// ReadOnly reports the DLPack read-only flag (versioned only).
func (d *DLPack) ReadOnly() bool {
	return d.versioned != nil && d.versioned.flags&DlpackFlagReadOnly != 0
}

// Release calls the deleter (once) unless ownership moved to a consumer.
func (d *DLPack) Release() {
	if d.versioned != nil {
		C.agx_dlpack_delete(d.versioned)
	} else if d.legacy != nil {
		C.agx_dlpack_delete_legacy(d.legacy)
	}
	d.versioned, d.legacy = nil, nil
}

// ToDLPack exports t (sharing its memory) as DLPack 1.x.
func (t *Tensor) ToDLPack() (*DLPack, error) {
	p, err := tensorArg("ag_tensor_to_dlpack", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var out *C.ag_dlpack_managed_tensor_versioned
	if err := c_ag_tensor_to_dlpack(&out, p); err != nil {
		return nil, err
	}
	return &DLPack{versioned: out}, nil
}

// ToDLPackLegacy exports t as a legacy DLManagedTensor.
func (t *Tensor) ToDLPackLegacy() (*DLPack, error) {
	p, err := tensorArg("ag_tensor_to_dlpack_legacy", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var out *C.ag_dlpack_managed_tensor
	if err := c_ag_tensor_to_dlpack_legacy(&out, p); err != nil {
		return nil, err
	}
	return &DLPack{legacy: out}, nil
}

// FromDLPack wraps d without copying; ag takes d over on every path (d is
// empty afterwards).
func (c *Context) FromDLPack(d *DLPack) (*Tensor, error) {
	const fn = "ag_tensor_from_dlpack"
	h, err := contextArg(fn, c)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(c)
	var out *C.ag_tensor
	switch {
	case d != nil && d.versioned != nil:
		err = c_ag_tensor_from_dlpack(&out, h, d.versioned)
	case d != nil && d.legacy != nil:
		err = c_ag_tensor_from_dlpack_legacy(&out, h, d.legacy)
	default:
		return nil, argError(fn, "d is nil or empty")
	}
	if !isMissing(err) {
		d.versioned, d.legacy = nil, nil // ag owns it now
	}
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// HasSymbol reports whether the loaded libag has the C function name
// (functions of later symbol versions than the first may be missing).
func HasSymbol(name string) bool {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.agx_has_symbol(cs) != 0
}

// isMissing: the shim found the function missing and called nothing.
func isMissing(err error) bool {
	e, ok := err.(*Error)
	return ok && strings.HasPrefix(e.Message, "libag lacks ")
}
