package ag

/*
#include "agx.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Hook is a registered hook's handle. Remove unregisters it; Release only
// drops the handle (the hook stays). A cleanup releases a forgotten handle.
type Hook struct {
	ref     *hookRef
	cleanup runtime.Cleanup
}

// p holds a *C.ag_hook; atomic.Pointer cannot hold an incomplete C type.
type hookRef struct{ p unsafe.Pointer }

func (r *hookRef) load() *C.ag_hook { return (*C.ag_hook)(atomic.LoadPointer(&r.p)) }

func (r *hookRef) swap() *C.ag_hook { return (*C.ag_hook)(atomic.SwapPointer(&r.p, nil)) }

func (r *hookRef) release() {
	if p := r.swap(); p != nil {
		c_ag_hook_release(p)
	}
}

func wrapHook(p *C.ag_hook) *Hook {
	r := &hookRef{}
	r.p = unsafe.Pointer(p)
	h := &Hook{ref: r}
	h.cleanup = runtime.AddCleanup(h, (*hookRef).release, r)
	return h
}

// Remove unregisters the hook and releases the handle. Idempotent.
func (h *Hook) Remove() {
	if h == nil {
		return
	}
	if p := h.ref.swap(); p != nil {
		h.cleanup.Stop()
		c_ag_hook_remove(p)
	}
}

// Release drops the handle; the hook stays registered. Idempotent.
func (h *Hook) Release() {
	if h == nil {
		return
	}
	if p := h.ref.swap(); p != nil {
		h.cleanup.Stop()
		c_ag_hook_release(p)
	}
}

// NodeHook sees the gradients of a node (see RegisterNodePreHook); it
// returns nil to keep them, or one tensor per gradient (nil drops one).
type NodeHook func(grads, other []*Tensor) ([]*Tensor, error)

type registrar func(out **C.ag_hook, t *C.ag_tensor, ud unsafe.Pointer) error

// register passes fn as a cgo.Handle; ag's destroy callback deletes it on every path.
func (t *Tensor) register(fn string, v any, reg registrar) (*Hook, error) {
	p, err := tensorArg(fn, "t", t, false)
	if err != nil {
		return nil, err
	}
	ud := newHandle(v)
	var out *C.ag_hook
	err = reg(&out, p, ud)
	runtime.KeepAlive(t)
	if err != nil {
		return nil, err
	}
	return wrapHook(out), nil
}

// RegisterHook runs fn on the gradient flowing into t before it is used;
// fn returns nil to keep it or a tensor (same dtype and shape) to replace it.
// Tensors passed to hooks are valid during the call (Retain keeps one).
func (t *Tensor) RegisterHook(fn func(grad *Tensor) (*Tensor, error)) (*Hook, error) {
	return t.register("ag_tensor_register_hook", fn, func(out **C.ag_hook, p *C.ag_tensor, ud unsafe.Pointer) error {
		return c_ag_tensor_register_hook(out, p, C.ag_tensor_hook_fn(C.agx_cb_ag_tensor_hook_fn), ud, C.ag_destroy_fn(C.agx_cb_ag_destroy_fn))
	})
}

// RegisterPostAccumulateGradHook runs fn after backward accumulated into
// the .grad of leaf t.
func (t *Tensor) RegisterPostAccumulateGradHook(fn func(leaf *Tensor) error) (*Hook, error) {
	return t.register("ag_tensor_register_post_accumulate_grad_hook", fn, func(out **C.ag_hook, p *C.ag_tensor, ud unsafe.Pointer) error {
		return c_ag_tensor_register_post_accumulate_grad_hook(out, p, C.ag_leaf_hook_fn(C.agx_cb_ag_leaf_hook_fn), ud, C.ag_destroy_fn(C.agx_cb_ag_destroy_fn))
	})
}

// RegisterNodePreHook runs fn before the node that produced t: grads are
// the gradients flowing into it, other is empty.
func (t *Tensor) RegisterNodePreHook(fn NodeHook) (*Hook, error) {
	return t.register("ag_tensor_register_node_pre_hook", fn, func(out **C.ag_hook, p *C.ag_tensor, ud unsafe.Pointer) error {
		return c_ag_tensor_register_node_pre_hook(out, p, C.ag_node_hook_fn(C.agx_cb_ag_node_hook_fn), ud, C.ag_destroy_fn(C.agx_cb_ag_destroy_fn))
	})
}

// RegisterNodePostHook runs fn after the node that produced t: grads are
// the gradients it produced, other those it received.
func (t *Tensor) RegisterNodePostHook(fn NodeHook) (*Hook, error) {
	return t.register("ag_tensor_register_node_post_hook", fn, func(out **C.ag_hook, p *C.ag_tensor, ud unsafe.Pointer) error {
		return c_ag_tensor_register_node_post_hook(out, p, C.ag_node_hook_fn(C.agx_cb_ag_node_hook_fn), ud, C.ag_destroy_fn(C.agx_cb_ag_destroy_fn))
	})
}

// QueueCallback, from inside a hook or a custom backward, runs fn once
// when the current backward pass finishes successfully.
func QueueCallback(fn func() error) error {
	return c_ag_backward_queue_callback(C.ag_callback_fn(C.agx_cb_ag_callback_fn), newHandle(fn), C.ag_destroy_fn(C.agx_cb_ag_destroy_fn))
}
