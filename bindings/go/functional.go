package ag

/*
#include "agx.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Func is a user function of the functional helpers: outputs of inputs,
// usually computed with ag ops. It runs during the helper's call.
type Func func(inputs []*Tensor) ([]*Tensor, error)

// FunctionalOptions of the helpers (nil: defaults).
type FunctionalOptions struct {
	CreateGraph bool // record the results' computation for a further derivative
	Strict      bool // an input no output depends on is an error instead of zeros
}

func functionalOpts(o *FunctionalOptions) (*C.ag_functional_options, error) {
	var c C.ag_functional_options
	if err := c_ag_functional_options_init(&c); err != nil {
		return nil, err
	}
	if o != nil {
		c.create_graph, c.strict = b2i(o.CreateGraph), b2i(o.Strict)
	}
	return &c, nil
}

// callFunc passes f to ag as a handle that lives for the call only.
func callFunc(f Func, call func(fn C.ag_fn, ud unsafe.Pointer) error) error {
	ud := newHandle(f)
	defer deleteHandle(ud)
	return call(C.ag_fn(C.agx_cb_ag_fn), ud)
}

type functionalArgs struct {
	in, v []*C.ag_tensor
	opts  *C.ag_functional_options
}

func prepare(fn string, inputs, v []*Tensor, vNullable bool, opts *FunctionalOptions) (*functionalArgs, error) {
	in, err := tensorsArg(fn, "inputs", inputs, false)
	if err != nil {
		return nil, err
	}
	vs, err := tensorsArg(fn, "v", v, vNullable)
	if err != nil {
		return nil, err
	}
	o, err := functionalOpts(opts)
	if err != nil {
		return nil, err
	}
	return &functionalArgs{in, vs, o}, nil
}

// VJP returns v·J (one tensor per input) and the outputs of f. v has one
// tensor per output (nil: ones; outputs of one element).
func VJP(f Func, inputs []*Tensor, numOutputs int, v []*Tensor, opts *FunctionalOptions) (vjp, outputs []*Tensor, err error) {
	a, err := prepare("ag_vjp", inputs, v, true, opts)
	if err != nil {
		return nil, nil, err
	}
	if v != nil && len(v) != numOutputs {
		return nil, nil, argError("ag_vjp", "v must have one tensor per output")
	}
	res := make([]*C.ag_tensor, len(a.in), max(len(a.in), 1))
	outs := make([]*C.ag_tensor, numOutputs, max(numOutputs, 1))
	err = callFunc(f, func(fn C.ag_fn, ud unsafe.Pointer) error {
		return c_ag_vjp(unsafe.SliceData(res), unsafe.SliceData(outs), fn, ud, unsafe.SliceData(a.in), C.int32_t(len(a.in)),
			unsafe.SliceData(a.v), C.int32_t(numOutputs), a.opts)
	})
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(v)
	if err != nil {
		return nil, nil, err
	}
	return wrapTensors(res), wrapTensors(outs), nil
}

// JVP returns J·v (one tensor per output) and the outputs of f. v has one
// tensor per input (nil: ones).
func JVP(f Func, inputs []*Tensor, numOutputs int, v []*Tensor, opts *FunctionalOptions) (jvp, outputs []*Tensor, err error) {
	a, err := prepare("ag_jvp", inputs, v, true, opts)
	if err != nil {
		return nil, nil, err
	}
	if v != nil && len(v) != len(inputs) {
		return nil, nil, argError("ag_jvp", "v must have one tensor per input")
	}
	res := make([]*C.ag_tensor, numOutputs, max(numOutputs, 1))
	outs := make([]*C.ag_tensor, numOutputs, max(numOutputs, 1))
	err = callFunc(f, func(fn C.ag_fn, ud unsafe.Pointer) error {
		return c_ag_jvp(unsafe.SliceData(res), unsafe.SliceData(outs), fn, ud, unsafe.SliceData(a.in), C.int32_t(len(a.in)),
			unsafe.SliceData(a.v), C.int32_t(numOutputs), a.opts)
	})
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(v)
	if err != nil {
		return nil, nil, err
	}
	return wrapTensors(res), wrapTensors(outs), nil
}

// Jacobian of f's outputs with respect to its inputs, as one tensor (see ag_jacobian for its layout).
func Jacobian(f Func, inputs []*Tensor, numOutputs int, opts *FunctionalOptions) (*Tensor, error) {
	a, err := prepare("ag_jacobian", inputs, nil, true, opts)
	if err != nil {
		return nil, err
	}
	var out *C.ag_tensor
	err = callFunc(f, func(fn C.ag_fn, ud unsafe.Pointer) error {
		return c_ag_jacobian(&out, fn, ud, unsafe.SliceData(a.in), C.int32_t(len(a.in)), C.int32_t(numOutputs), a.opts)
	})
	runtime.KeepAlive(inputs)
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// Hessian of a scalar f with respect to its inputs, as one tensor.
func Hessian(f Func, inputs []*Tensor, opts *FunctionalOptions) (*Tensor, error) {
	a, err := prepare("ag_hessian", inputs, nil, true, opts)
	if err != nil {
		return nil, err
	}
	var out *C.ag_tensor
	err = callFunc(f, func(fn C.ag_fn, ud unsafe.Pointer) error {
		return c_ag_hessian(&out, fn, ud, unsafe.SliceData(a.in), C.int32_t(len(a.in)), a.opts)
	})
	runtime.KeepAlive(inputs)
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// HVP returns H·v (one tensor per input) and the output of a scalar f.
func HVP(f Func, inputs, v []*Tensor, opts *FunctionalOptions) (hvp []*Tensor, output *Tensor, err error) {
	a, err := prepare("ag_hvp", inputs, v, false, opts)
	if err != nil {
		return nil, nil, err
	}
	if len(v) != len(inputs) {
		return nil, nil, argError("ag_hvp", "v must have one tensor per input")
	}
	res := make([]*C.ag_tensor, len(a.in), max(len(a.in), 1))
	var out *C.ag_tensor
	err = callFunc(f, func(fn C.ag_fn, ud unsafe.Pointer) error {
		return c_ag_hvp(unsafe.SliceData(res), &out, fn, ud, unsafe.SliceData(a.in), C.int32_t(len(a.in)), unsafe.SliceData(a.v), a.opts)
	})
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(v)
	if err != nil {
		return nil, nil, err
	}
	return wrapTensors(res), wrapTensor(out), nil
}

// GradcheckOptions: zero tolerances mean ag's defaults.
type GradcheckOptions struct{ Eps, Atol, Rtol float64 }

// GradcheckResult of Gradcheck / Gradgradcheck.
type GradcheckResult struct {
	Passed                      bool
	InputIndex, OutputIndex     int
	InputElement, OutputElement int64
	Analytical, Numerical       float64
	NumCompared                 int64
}

func gradcheckOpts(o *GradcheckOptions) (*C.ag_gradcheck_options, error) {
	var c C.ag_gradcheck_options
	if err := c_ag_gradcheck_options_init(&c); err != nil {
		return nil, err
	}
	if o != nil {
		c.eps, c.atol, c.rtol = C.double(o.Eps), C.double(o.Atol), C.double(o.Rtol)
	}
	return &c, nil
}

func gradcheckResult(r *C.ag_gradcheck_result) GradcheckResult {
	return GradcheckResult{r.passed != 0, int(r.input_index), int(r.output_index), int64(r.input_element),
		int64(r.output_element), float64(r.analytical), float64(r.numerical), int64(r.num_compared)}
}

// Gradcheck compares f's analytical gradients with finite differences.
// A mismatch is no error: see Passed.
func Gradcheck(f Func, inputs []*Tensor, numOutputs int, opts *GradcheckOptions) (GradcheckResult, error) {
	in, err := tensorsArg("ag_gradcheck", "inputs", inputs, false)
	if err != nil {
		return GradcheckResult{}, err
	}
	o, err := gradcheckOpts(opts)
	if err != nil {
		return GradcheckResult{}, err
	}
	var r C.ag_gradcheck_result
	if err := c_ag_gradcheck_result_init(&r); err != nil {
		return GradcheckResult{}, err
	}
	err = callFunc(f, func(fn C.ag_fn, ud unsafe.Pointer) error {
		return c_ag_gradcheck(&r, fn, ud, unsafe.SliceData(in), C.int32_t(len(in)), C.int32_t(numOutputs), o)
	})
	runtime.KeepAlive(inputs)
	return gradcheckResult(&r), err
}

// Gradgradcheck checks second derivatives (gradOutputs nil: ones).
func Gradgradcheck(f Func, inputs, gradOutputs []*Tensor, numOutputs int, opts *GradcheckOptions) (GradcheckResult, error) {
	in, err := tensorsArg("ag_gradgradcheck", "inputs", inputs, false)
	if err != nil {
		return GradcheckResult{}, err
	}
	gout, err := tensorsArg("ag_gradgradcheck", "grad_outputs", gradOutputs, true)
	if err != nil {
		return GradcheckResult{}, err
	}
	o, err := gradcheckOpts(opts)
	if err != nil {
		return GradcheckResult{}, err
	}
	var r C.ag_gradcheck_result
	if err := c_ag_gradcheck_result_init(&r); err != nil {
		return GradcheckResult{}, err
	}
	err = callFunc(f, func(fn C.ag_fn, ud unsafe.Pointer) error {
		return c_ag_gradgradcheck(&r, fn, ud, unsafe.SliceData(in), C.int32_t(len(in)), unsafe.SliceData(gout), C.int32_t(numOutputs), o)
	})
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(gradOutputs)
	return gradcheckResult(&r), err
}
