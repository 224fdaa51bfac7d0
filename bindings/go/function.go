package ag

/*
#include "agx.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Function is a custom differentiable function (torch.autograd.Function).
// Forward computes the outputs from the inputs (grad mode off); Backward
// returns one gradient per input (nil: none) from one per output.
type Function struct {
	Name       string // node name; "" gives "CustomFunctionBackward"
	NumOutputs int    // 0 means 1
	// OnceDifferentiable: Backward is not differentiable itself.
	OnceDifferentiable bool
	Forward            func(ctx *FunctionCtx, inputs []*Tensor) ([]*Tensor, error)
	Backward           func(ctx *FunctionCtx, gradOutputs []*Tensor) ([]*Tensor, error)
}

// FunctionCtx is valid only during the callback it is passed to.
type FunctionCtx struct{ p *C.ag_function_ctx }

func (c *FunctionCtx) end() { c.p = nil }

func (c *FunctionCtx) handle(fn string) (*C.ag_function_ctx, error) {
	if c == nil || c.p == nil {
		return nil, argError(fn, "function ctx used outside its callback")
	}
	return c.p, nil
}

// Apply runs f on inputs and records its node.
func (f *Function) Apply(inputs ...*Tensor) ([]*Tensor, error) {
	const fn = "ag_function_apply"
	if f.Forward == nil || f.Backward == nil {
		return nil, argError(fn, "Forward and Backward must be set")
	}
	in, err := tensorsArg(fn, "inputs", inputs, false)
	if err != nil {
		return nil, err
	}
	var def C.ag_function_def
	if err := c_ag_function_def_init(&def); err != nil {
		return nil, err
	}
	if f.Name != "" {
		def.name = C.CString(f.Name) // ag copies it
		defer C.free(unsafe.Pointer(def.name))
	}
	if f.OnceDifferentiable {
		def.flags = FunctionOnceDifferentiable
	}
	def.forward = C.ag_function_forward_fn(C.agx_cb_ag_function_forward_fn)
	def.backward = C.ag_function_backward_fn(C.agx_cb_ag_function_backward_fn)
	def.destroy = C.ag_destroy_fn(C.agx_cb_ag_destroy_fn)
	cp := *f // later changes to f do not reach the recorded node
	def.user_data = newHandle(&cp)
	n := max(f.NumOutputs, 1)
	outs := make([]*C.ag_tensor, n)
	err = c_ag_function_apply(unsafe.SliceData(outs), C.int32_t(n), unsafe.SliceData(in), C.int32_t(len(in)), &def)
	runtime.KeepAlive(inputs)
	if err != nil {
		return nil, err
	}
	return wrapTensors(outs), nil
}

// SaveForBackward keeps tensors (version-checked) for Backward; forward only.
func (c *FunctionCtx) SaveForBackward(ts ...*Tensor) error {
	const fn = "ag_function_ctx_save_for_backward"
	p, err := c.handle(fn)
	if err != nil {
		return err
	}
	hs := make([]*C.ag_tensor, len(ts), max(len(ts), 1))
	for i, t := range ts {
		if hs[i], err = tensorArg(fn, "tensors", t, true); err != nil {
			return err
		}
	}
	err = c_ag_function_ctx_save_for_backward(p, unsafe.SliceData(hs), C.int32_t(len(hs)))
	runtime.KeepAlive(ts)
	return err
}

// NumSaved is the number of saved tensors (-1 outside a callback).
func (c *FunctionCtx) NumSaved() int {
	p, err := c.handle("ag_function_ctx_num_saved")
	if err != nil {
		return -1
	}
	return int(c_ag_function_ctx_num_saved(p))
}

// SavedTensor returns saved tensor i (nil if nil was saved); backward only.
func (c *FunctionCtx) SavedTensor(i int) (*Tensor, error) {
	p, err := c.handle("ag_function_ctx_saved_tensor")
	if err != nil {
		return nil, err
	}
	var out *C.ag_tensor
	if err := c_ag_function_ctx_saved_tensor(&out, p, C.int32_t(i)); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// NeedsInputGrad reports whether input i needs a gradient.
func (c *FunctionCtx) NeedsInputGrad(i int) bool {
	p, err := c.handle("ag_function_ctx_needs_input_grad")
	if err != nil {
		return false
	}
	return c_ag_function_ctx_needs_input_grad(p, C.int32_t(i)) == 1
}

// MarkNonDifferentiable: output t gets no gradient; forward only.
func (c *FunctionCtx) MarkNonDifferentiable(t *Tensor) error {
	const fn = "ag_function_ctx_mark_non_differentiable"
	p, err := c.handle(fn)
	if err != nil {
		return err
	}
	h, err := tensorArg(fn, "output", t, false)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(t)
	return c_ag_function_ctx_mark_non_differentiable(p, h)
}

// MarkDirty: input t was modified in place and is returned; forward only.
func (c *FunctionCtx) MarkDirty(t *Tensor) error {
	const fn = "ag_function_ctx_mark_dirty"
	p, err := c.handle(fn)
	if err != nil {
		return err
	}
	h, err := tensorArg(fn, "input", t, false)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(t)
	return c_ag_function_ctx_mark_dirty(p, h)
}
