package ag

/*
#include "agx.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// SetRequiresGrad marks a leaf as requiring a gradient (or not).
func (t *Tensor) SetRequiresGrad(on bool) error {
	p, err := tensorArg("ag_tensor_requires_grad", "t", t, false)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(t)
	return c_ag_tensor_requires_grad(p, b2i(on))
}

// RequiresGrad reports whether the tensor requires a gradient.
func (t *Tensor) RequiresGrad() bool {
	defer runtime.KeepAlive(t)
	return c_ag_tensor_get_requires_grad(t.handle()) == 1
}

// IsLeaf reports whether the tensor was not produced by a recorded op.
func (t *Tensor) IsLeaf() bool {
	defer runtime.KeepAlive(t)
	return c_ag_tensor_is_leaf(t.handle()) == 1
}

// Grad returns the current gradient (a snapshot), or nil, nil when there is none.
func (t *Tensor) Grad() (*Tensor, error) {
	p, err := tensorArg("ag_tensor_grad", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var out *C.ag_tensor
	if err := c_ag_tensor_grad(&out, p); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// SetGrad shares g as the leaf's gradient; nil clears it.
func (t *Tensor) SetGrad(g *Tensor) error {
	p, err := tensorArg("ag_tensor_set_grad", "t", t, false)
	if err != nil {
		return err
	}
	gp, err := tensorArg("ag_tensor_set_grad", "grad", g, true)
	if err != nil {
		return err
	}
	err = c_ag_tensor_set_grad(p, gp)
	runtime.KeepAlive(t)
	runtime.KeepAlive(g)
	return err
}

// Detach returns a leaf sharing the data, outside any graph.
func (t *Tensor) Detach() (*Tensor, error) {
	p, err := tensorArg("ag_tensor_detach", "t", t, false)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(t)
	var out *C.ag_tensor
	if err := c_ag_tensor_detach(&out, p); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// GradFnName is the name of the node that produced the tensor ("" for none).
func (t *Tensor) GradFnName() string {
	defer runtime.KeepAlive(t)
	return goStringOrEmpty(c_ag_tensor_grad_fn_name(t.handle()))
}

func goStringOrEmpty(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// RetainGrad makes a non-leaf keep its gradient in Grad.
func (t *Tensor) RetainGrad() error {
	p, err := tensorArg("ag_tensor_retain_grad", "t", t, false)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(t)
	return c_ag_tensor_retain_grad(p)
}

// RetainsGrad reports whether a non-leaf keeps its gradient.
func (t *Tensor) RetainsGrad() bool {
	defer runtime.KeepAlive(t)
	return c_ag_tensor_retains_grad(t.handle()) == 1
}

// SetTag names the tensor in error messages ("" clears it).
func (t *Tensor) SetTag(tag string) error {
	p, err := tensorArg("ag_tensor_set_tag", "t", t, false)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(t)
	var cs *C.char
	if tag != "" {
		cs = C.CString(tag)
		defer C.free(unsafe.Pointer(cs))
	}
	return c_ag_tensor_set_tag(p, cs)
}

// Tag of the tensor ("" for none).
func (t *Tensor) Tag() string {
	defer runtime.KeepAlive(t)
	return goStringOrEmpty(c_ag_tensor_tag(t.handle()))
}

// BackwardOptions of BackwardWith.
type BackwardOptions struct {
	RetainGraph bool
	CreateGraph bool
	Inputs      []*Tensor // accumulate only into these leaves (nil: all)
}

// Backward accumulates d(t)/d(leaf) into every leaf that requires grad (t has one element).
func (t *Tensor) Backward() error { return t.BackwardWith(nil, nil) }

// BackwardWith runs backward seeded with grad (nil: ones) and options (nil: defaults).
func (t *Tensor) BackwardWith(grad *Tensor, opts *BackwardOptions) error {
	const fn = "ag_backward"
	p, err := tensorArg(fn, "root", t, false)
	if err != nil {
		return err
	}
	gp, err := tensorArg(fn, "grad_root", grad, true)
	if err != nil {
		return err
	}
	var o C.ag_backward_options
	if err := c_ag_backward_options_init(&o); err != nil {
		return err
	}
	if opts != nil {
		o.retain_graph, o.create_graph = b2i(opts.RetainGraph), b2i(opts.CreateGraph)
		if opts.Inputs != nil {
			in, err := tensorsArg(fn, "inputs", opts.Inputs, false)
			if err != nil {
				return err
			}
			// The struct holds the array: it must be C memory (cgo pointer rules).
			arr := cTensorArray(in)
			defer C.free(unsafe.Pointer(arr))
			o.inputs, o.num_inputs = arr, C.int32_t(len(in))
		}
	}
	err = c_ag_backward(p, gp, &o)
	runtime.KeepAlive(t)
	runtime.KeepAlive(grad)
	runtime.KeepAlive(opts)
	return err
}

// cTensorArray copies handles into malloc'ed memory (caller frees).
func cTensorArray(ps []*C.ag_tensor) **C.ag_tensor {
	n := max(len(ps), 1)
	arr := (**C.ag_tensor)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.ag_tensor)(nil)))))
	copy(unsafe.Slice(arr, n), ps)
	return arr
}

// GradOptions of Grad.
type GradOptions struct {
	RetainGraph bool
	CreateGraph bool
	AllowUnused bool // an input no output depends on gives nil instead of an error
}

// Grad returns d(sum outputs·gradOutputs)/d(input) for each input, without
// touching any .grad. gradOutputs may be nil (ones; outputs of one element).
func Grad(outputs, gradOutputs, inputs []*Tensor, opts *GradOptions) ([]*Tensor, error) {
	const fn = "ag_grad"
	outs, err := tensorsArg(fn, "outputs", outputs, false)
	if err != nil {
		return nil, err
	}
	gouts, err := tensorsArg(fn, "grad_outputs", gradOutputs, true)
	if err != nil {
		return nil, err
	}
	if gradOutputs != nil && len(gradOutputs) != len(outputs) {
		return nil, argError(fn, "grad_outputs must have one entry per output")
	}
	ins, err := tensorsArg(fn, "inputs", inputs, false)
	if err != nil {
		return nil, err
	}
	var o C.ag_grad_options
	if err := c_ag_grad_options_init(&o); err != nil {
		return nil, err
	}
	if opts != nil {
		o.retain_graph, o.create_graph, o.allow_unused = b2i(opts.RetainGraph), b2i(opts.CreateGraph), b2i(opts.AllowUnused)
	}
	grads := make([]*C.ag_tensor, len(ins), max(len(ins), 1))
	err = c_ag_grad(unsafe.SliceData(grads), unsafe.SliceData(outs), unsafe.SliceData(gouts),
		C.int32_t(len(outs)), unsafe.SliceData(ins), C.int32_t(len(ins)), &o)
	runtime.KeepAlive(outputs)
	runtime.KeepAlive(gradOutputs)
	runtime.KeepAlive(inputs)
	if err != nil {
		return nil, err
	}
	return wrapTensors(grads), nil
}

// NoGrad runs fn with grad mode off on this goroutine's OS thread, which it
// locks for the duration, and restores the mode after. Other goroutines
// (and goroutines fn starts) are unaffected.
func NoGrad(fn func() error) error { return withGradMode(false, fn) }

// EnableGrad runs fn with grad mode on (see NoGrad).
func EnableGrad(fn func() error) error { return withGradMode(true, fn) }

func withGradMode(on bool, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev C.int32_t
	if err := c_ag_grad_mode_set(b2i(on), &prev); err != nil {
		return err
	}
	defer c_ag_grad_mode_set(prev, nil)
	return fn()
}

// GradEnabled reports the grad mode of the current OS thread: meaningful
// inside NoGrad/EnableGrad or on a goroutine locked to its thread.
func GradEnabled() bool { return c_ag_grad_mode_enabled() == 1 }

// WithTagScope runs fn inside tag scope name (nodes recorded meanwhile carry
// it, for anomaly messages and graph export), on a locked OS thread.
func WithTagScope(name string, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	if err := c_ag_tag_scope_push(cs); err != nil {
		return err
	}
	defer c_ag_tag_scope_pop()
	return fn()
}

// CurrentTagScope is the current OS thread's tag scope path ("" for none):
// meaningful inside WithTagScope.
func CurrentTagScope() string { return goStringOrEmpty(c_ag_tag_scope_current()) }
