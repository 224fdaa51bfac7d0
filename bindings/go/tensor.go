package ag

/*
#include "agx.h"
*/
import "C"

import (
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// DType is an element type (F32, F64, I64, Bool).
type DType int32

// String is ag's name of the dtype ("f32", ...).
func (d DType) String() string { return C.GoString(c_ag_dtype_name(C.ag_dtype(d))) }

// Size is the size of one element in bytes (0 for an unknown dtype).
func (d DType) Size() int { return int(c_ag_dtype_size(C.ag_dtype(d))) }

// Tensor is one reference to an ag tensor. Release it when done; a cleanup
// releases it otherwise once the Tensor is unreachable.
type Tensor struct {
	ref     *tensorRef
	cleanup runtime.Cleanup
}

// tensorRef is what the cleanup sees: it must not reach the Tensor.
// p holds a *C.ag_tensor; atomic.Pointer cannot hold an incomplete C type.
type tensorRef struct{ p unsafe.Pointer }

func (r *tensorRef) load() *C.ag_tensor { return (*C.ag_tensor)(atomic.LoadPointer(&r.p)) }

func (r *tensorRef) swap() *C.ag_tensor { return (*C.ag_tensor)(atomic.SwapPointer(&r.p, nil)) }

func (r *tensorRef) release() {
	if p := r.swap(); p != nil {
		c_ag_tensor_release(p)
	}
}

// wrapTensor takes over one reference (nil for NULL).
func wrapTensor(p *C.ag_tensor) *Tensor {
	if p == nil {
		return nil
	}
	r := &tensorRef{}
	r.p = unsafe.Pointer(p)
	t := &Tensor{ref: r}
	t.cleanup = runtime.AddCleanup(t, (*tensorRef).release, r)
	return t
}

func wrapTensors(ps []*C.ag_tensor) []*Tensor {
	out := make([]*Tensor, len(ps))
	for i, p := range ps {
		out[i] = wrapTensor(p)
	}
	return out
}

// Release drops this reference now. Idempotent; safe from any goroutine
// (but not while another goroutine still uses the tensor).
func (t *Tensor) Release() {
	if t == nil || t.ref == nil {
		return
	}
	if p := t.ref.swap(); p != nil {
		t.cleanup.Stop()
		c_ag_tensor_release(p)
	}
}

// handle is the C handle, nil for a nil or released Tensor.
func (t *Tensor) handle() *C.ag_tensor {
	if t == nil || t.ref == nil {
		return nil
	}
	return t.ref.load()
}

// Retain returns a second, independent reference to the same tensor.
func (t *Tensor) Retain() (*Tensor, error) {
	p, err := tensorArg("ag_tensor_retain", "t", t, false)
	if err != nil {
		return nil, err
	}
	r := c_ag_tensor_retain(p)
	runtime.KeepAlive(t)
	if r == nil {
		return nil, argError("ag_tensor_retain", "t is not a live handle")
	}
	return wrapTensor(r), nil
}

// --- argument helpers of the generated wrappers ---

var emptyInt64 C.int64_t // non-NULL address for an empty, non-nil slice

func tensorArg(fn, name string, t *Tensor, nullable bool) (*C.ag_tensor, error) {
	if t == nil {
		if nullable {
			return nil, nil
		}
		return nil, argError(fn, "%s is nil", name)
	}
	p := t.handle()
	if p == nil {
		return nil, argError(fn, "%s was released", name)
	}
	return p, nil
}

func contextArg(fn string, c *Context) (*C.ag_context, error) {
	p := c.handle()
	if p == nil {
		return nil, argError(fn, "ctx is nil or released")
	}
	return p, nil
}

func tensorsArg(fn, name string, ts []*Tensor, nullable bool) ([]*C.ag_tensor, error) {
	if ts == nil && nullable {
		return nil, nil
	}
	out := make([]*C.ag_tensor, len(ts), max(len(ts), 1))
	for i, t := range ts {
		p, err := tensorArg(fn, name+"["+itoa(i)+"]", t, false)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func int64sArg(fn, name string, s []int64, fixed int, nullable bool) (*C.int64_t, error) {
	if s == nil && nullable {
		return nil, nil
	}
	if fixed > 0 && len(s) != fixed {
		return nil, argError(fn, "%s needs %d values, got %d", name, fixed, len(s))
	}
	if len(s) == 0 {
		return &emptyInt64, nil
	}
	return (*C.int64_t)(unsafe.Pointer(&s[0])), nil
}

// sliceCount is the common length of slices passed with one count (-1: a nil optional slice).
func sliceCount(fn, names string, lens ...int) (int, error) {
	n := -1
	for _, l := range lens {
		if l < 0 {
			continue
		}
		if n >= 0 && l != n {
			return 0, argError(fn, "%s must have the same length", names)
		}
		n = l
	}
	if n > math.MaxInt32 {
		return 0, argError(fn, "%s too long", names)
	}
	return max(n, 0), nil
}

func optLen[T any](s []T) int {
	if s == nil {
		return -1
	}
	return len(s)
}

const maxCapacity = 1 << 20

func capacityHint(lens ...int) int {
	n := 8
	for _, l := range lens {
		n = max(n, l)
	}
	return n
}

func isBufferTooSmall(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Status == StatusBufferTooSmall
}

func nonNilPrefix(ps []*C.ag_tensor) []*C.ag_tensor {
	for i, p := range ps {
		if p == nil {
			return ps[:i]
		}
	}
	return ps
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for ; i > 0; i /= 10 {
		n--
		b[n] = byte('0' + i%10)
	}
	return string(b[n:])
}

func b2i(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}
