package ag

/*
#include "agx.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Go values reach C callbacks as cgo.Handles in user_data; each is deleted
// exactly once, by the C destroy callback (or after a call that takes no
// destroy). liveHandles counts them, for the leak test.
var liveHandles atomic.Int64

func newHandle(v any) unsafe.Pointer {
	liveHandles.Add(1)
	return C.agx_handle_ptr(C.uintptr_t(cgo.NewHandle(v)))
}

func handleValue(ud unsafe.Pointer) any { return cgo.Handle(uintptr(ud)).Value() }

func deleteHandle(ud unsafe.Pointer) {
	cgo.Handle(uintptr(ud)).Delete()
	liveHandles.Add(-1)
}

// runCallback runs a Go callback at the C boundary: an error or a panic
// becomes a failing status with its message set by ag_set_callback_error,
// and the Go error is kept for the caller of the C call that ran it.
func runCallback(fn func() error) (st C.ag_status) {
	defer func() {
		if r := recover(); r != nil {
			err, ok := r.(error)
			if !ok {
				err = fmt.Errorf("%v", r)
			}
			st = failCallback(&PanicError{Value: r, Err: err})
		}
	}()
	if err := fn(); err != nil {
		return failCallback(err)
	}
	return C.AG_OK
}

// PanicError is a panic recovered in a Go callback.
type PanicError struct {
	Value any
	Err   error
}

func (p *PanicError) Error() string { return "panic in callback: " + p.Err.Error() }
func (p *PanicError) Unwrap() error { return p.Err }

func failCallback(err error) C.ag_status {
	msg := err.Error()
	// The callback runs on the C caller's thread, to which the goroutine is locked.
	stashCallbackError(int64(syscall.Gettid()), err, msg)
	cs := C.CString(msg)
	c_ag_set_callback_error(cs)
	C.free(unsafe.Pointer(cs))
	var agErr *Error
	if errors.As(err, &agErr) && agErr.Status < 0 {
		return C.ag_status(agErr.Status)
	}
	return C.AG_ERR_CALLBACK
}

// borrow wraps a tensor ag lends to a callback; the caller releases the
// wrapper when the callback returns (Retain keeps one).
func borrow(p *C.ag_tensor) *Tensor {
	if p == nil {
		return nil
	}
	return wrapTensor(c_ag_tensor_retain(p))
}

func borrowAll(ps []*C.ag_tensor) []*Tensor {
	out := make([]*Tensor, len(ps))
	for i, p := range ps {
		out[i] = borrow(p)
	}
	return out
}

func releaseAll(ts []*Tensor) {
	for _, t := range ts {
		t.Release()
	}
}

// handOver gives ag a new reference to t (nil for nil).
func handOver(t *Tensor) (*C.ag_tensor, error) {
	if t == nil {
		return nil, nil
	}
	p := t.handle()
	if p == nil {
		return nil, errors.New("callback returned a released tensor")
	}
	return c_ag_tensor_retain(p), nil
}

// handOverAll writes new references of ts into dst (exactly len(dst) entries).
func handOverAll(dst []*C.ag_tensor, ts []*Tensor, what string, allowNil bool) error {
	if len(ts) != len(dst) {
		return fmt.Errorf("callback returned %d %s, want %d", len(ts), what, len(dst))
	}
	for i, t := range ts {
		if t == nil && !allowNil {
			return fmt.Errorf("callback returned nil for %s %d", what, i)
		}
	}
	for i, t := range ts {
		p, err := handOver(t)
		if err != nil {
			for _, q := range dst[:i] {
				c_ag_tensor_release(q)
			}
			return err
		}
		dst[i] = p
	}
	return nil
}

func cSlice(p **C.ag_tensor, n C.int32_t) []*C.ag_tensor {
	if p == nil || n <= 0 {
		return nil
	}
	return unsafe.Slice(p, int(n))
}

//export agxgo_ag_destroy_fn
func agxgo_ag_destroy_fn(ud unsafe.Pointer) { deleteHandle(ud) }

//export agxgo_ag_tensor_hook_fn
func agxgo_ag_tensor_hook_fn(ud unsafe.Pointer, grad *C.ag_tensor, repl **C.ag_tensor) C.ag_status {
	fn := handleValue(ud).(func(*Tensor) (*Tensor, error))
	return runCallback(func() error {
		g := borrow(grad)
		defer g.Release()
		r, err := fn(g)
		if err != nil || r == nil {
			return err
		}
		p, err := handOver(r)
		*repl = p
		return err
	})
}

//export agxgo_ag_leaf_hook_fn
func agxgo_ag_leaf_hook_fn(ud unsafe.Pointer, leaf *C.ag_tensor) C.ag_status {
	fn := handleValue(ud).(func(*Tensor) error)
	return runCallback(func() error {
		l := borrow(leaf)
		defer l.Release()
		return fn(l)
	})
}

//export agxgo_ag_node_hook_fn
func agxgo_ag_node_hook_fn(ud unsafe.Pointer, grads **C.ag_tensor, n C.int32_t, other **C.ag_tensor, nOther C.int32_t) C.ag_status {
	fn := handleValue(ud).(NodeHook)
	return runCallback(func() error {
		gs := cSlice(grads, n)
		in, others := borrowAll(gs), borrowAll(cSlice(other, nOther))
		defer releaseAll(in)
		defer releaseAll(others)
		repl, err := fn(in, others)
		if err != nil || repl == nil {
			return err
		}
		if len(repl) != len(gs) {
			return fmt.Errorf("node hook returned %d gradients, want %d", len(repl), len(gs))
		}
		for i, r := range repl {
			if r != nil && r.handle() == gs[i] {
				continue // unchanged
			}
			p, err := handOver(r)
			if err != nil {
				return err
			}
			gs[i] = p // ag takes the new reference over and drops the old one
		}
		return nil
	})
}

//export agxgo_ag_callback_fn
func agxgo_ag_callback_fn(ud unsafe.Pointer) C.ag_status {
	fn := handleValue(ud).(func() error)
	return runCallback(fn)
}

//export agxgo_ag_deleter_fn
func agxgo_ag_deleter_fn(data unsafe.Pointer, ud unsafe.Pointer) {
	fn := handleValue(ud).(func())
	deleteHandle(ud)
	fn()
}

//export agxgo_ag_fn
func agxgo_ag_fn(ud unsafe.Pointer, inputs **C.ag_tensor, nIn C.int32_t, outputs **C.ag_tensor, nOut C.int32_t) C.ag_status {
	fn := handleValue(ud).(Func)
	return runCallback(func() error {
		in := borrowAll(cSlice(inputs, nIn))
		defer releaseAll(in)
		outs, err := fn(in)
		if err != nil {
			return err
		}
		return handOverAll(cSlice(outputs, nOut), outs, "outputs", false)
	})
}

//export agxgo_ag_function_forward_fn
func agxgo_ag_function_forward_fn(ud unsafe.Pointer, ctx *C.ag_function_ctx, inputs **C.ag_tensor, nIn C.int32_t, outputs **C.ag_tensor, nOut C.int32_t) C.ag_status {
	f := handleValue(ud).(*Function)
	return runCallback(func() error {
		fc := &FunctionCtx{p: ctx}
		defer fc.end()
		in := borrowAll(cSlice(inputs, nIn))
		defer releaseAll(in)
		outs, err := f.Forward(fc, in)
		if err != nil {
			return err
		}
		return handOverAll(cSlice(outputs, nOut), outs, "outputs", false)
	})
}

//export agxgo_ag_function_backward_fn
func agxgo_ag_function_backward_fn(ud unsafe.Pointer, ctx *C.ag_function_ctx, gradOutputs **C.ag_tensor, nOut C.int32_t, gradInputs **C.ag_tensor, nIn C.int32_t) C.ag_status {
	f := handleValue(ud).(*Function)
	return runCallback(func() error {
		fc := &FunctionCtx{p: ctx}
		defer fc.end()
		gout := borrowAll(cSlice(gradOutputs, nOut))
		defer releaseAll(gout)
		gin, err := f.Backward(fc, gout)
		if err != nil {
			return err
		}
		return handOverAll(cSlice(gradInputs, nIn), gin, "input gradients", true)
	})
}
