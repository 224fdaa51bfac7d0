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

// Context owns the memory of its tensors (ag_context).
type Context struct {
	ref     *contextRef
	cleanup runtime.Cleanup
}

// p holds a *C.ag_context; atomic.Pointer cannot hold an incomplete C type.
type contextRef struct{ p unsafe.Pointer }

func (r *contextRef) load() *C.ag_context { return (*C.ag_context)(atomic.LoadPointer(&r.p)) }

func (r *contextRef) swap() *C.ag_context { return (*C.ag_context)(atomic.SwapPointer(&r.p, nil)) }

func (r *contextRef) release() {
	if p := r.swap(); p != nil {
		c_ag_context_release(p)
	}
}

// ContextOptions of NewContext; the zero value means ag's defaults.
type ContextOptions struct {
	// NumThreads of the context's task arena; 0 = ag's default.
	NumThreads int32
}

// NewContext creates a context (nil opts = defaults).
func NewContext(opts *ContextOptions) (*Context, error) {
	var o C.ag_context_options
	if err := c_ag_context_options_init(&o); err != nil {
		return nil, err
	}
	if opts != nil {
		o.num_threads = C.int32_t(opts.NumThreads)
	}
	var p *C.ag_context
	if err := c_ag_context_create(&p, &o); err != nil {
		return nil, err
	}
	return wrapContext(p), nil
}

func wrapContext(p *C.ag_context) *Context {
	r := &contextRef{}
	r.p = unsafe.Pointer(p)
	c := &Context{ref: r}
	c.cleanup = runtime.AddCleanup(c, (*contextRef).release, r)
	return c
}

// Release drops this reference (the context lives on while tensors use it).
// Idempotent; safe from any goroutine.
func (c *Context) Release() {
	if c == nil || c.ref == nil {
		return
	}
	if p := c.ref.swap(); p != nil {
		c.cleanup.Stop()
		c_ag_context_release(p)
	}
}

func (c *Context) handle() *C.ag_context {
	if c == nil || c.ref == nil {
		return nil
	}
	return c.ref.load()
}

// Retain returns a second, independent reference to the context.
func (c *Context) Retain() (*Context, error) {
	p, err := contextArg("ag_context_retain", c)
	if err != nil {
		return nil, err
	}
	r := c_ag_context_retain(p)
	runtime.KeepAlive(c)
	if r == nil {
		return nil, argError("ag_context_retain", "ctx is not a live handle")
	}
	return wrapContext(r), nil
}

// NumThreads of the context's arena (0 for a released context).
func (c *Context) NumThreads() int {
	defer runtime.KeepAlive(c)
	return int(c_ag_context_num_threads(c.handle()))
}

// MemoryStats of ag_context_memory_stats.
type MemoryStats struct {
	BytesInUse     int64
	PeakBytesInUse int64
	BytesCached    int64
	Allocations    int64
	CacheHits      int64
}

// MemoryStats reads the context's memory statistics.
func (c *Context) MemoryStats() (MemoryStats, error) {
	p, err := contextArg("ag_context_memory_stats", c)
	if err != nil {
		return MemoryStats{}, err
	}
	var s C.ag_memory_stats
	if err := c_ag_memory_stats_init(&s); err != nil {
		return MemoryStats{}, err
	}
	err = c_ag_context_memory_stats(p, &s)
	runtime.KeepAlive(c)
	if err != nil {
		return MemoryStats{}, err
	}
	return MemoryStats{int64(s.bytes_in_use), int64(s.peak_bytes_in_use), int64(s.bytes_cached),
		int64(s.allocations), int64(s.cache_hits)}, nil
}

// Trim returns the context's cached blocks to the system.
func (c *Context) Trim() error {
	p, err := contextArg("ag_context_trim", c)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(c)
	return c_ag_context_trim(p)
}

// ResetPeakMemory sets the peak to the bytes in use now.
func (c *Context) ResetPeakMemory() error {
	p, err := contextArg("ag_context_reset_peak_memory", c)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(c)
	return c_ag_context_reset_peak_memory(p)
}

// SetAnomalyMode turns anomaly detection on or off for backward passes of the context.
func (c *Context) SetAnomalyMode(on bool) error {
	p, err := contextArg("ag_context_set_anomaly_mode", c)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(c)
	return c_ag_context_set_anomaly_mode(p, b2i(on))
}

// AnomalyMode reports whether anomaly mode is on.
func (c *Context) AnomalyMode() bool {
	defer runtime.KeepAlive(c)
	return c_ag_context_anomaly_mode(c.handle()) == 1
}

// ManualSeed reseeds the context's generator.
func (c *Context) ManualSeed(seed uint64) error {
	p, err := contextArg("ag_context_manual_seed", c)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(c)
	return c_ag_context_manual_seed(p, C.uint64_t(seed))
}

// Seed of the context's generator.
func (c *Context) Seed() (uint64, error) {
	p, err := contextArg("ag_context_seed", c)
	if err != nil {
		return 0, err
	}
	defer runtime.KeepAlive(c)
	var s C.uint64_t
	err = c_ag_context_seed(p, &s)
	return uint64(s), err
}

// RNGState is the generator's (seed, offset) snapshot.
func (c *Context) RNGState() (seed, offset uint64, err error) {
	p, err := contextArg("ag_context_rng_state", c)
	if err != nil {
		return 0, 0, err
	}
	defer runtime.KeepAlive(c)
	var s, o C.uint64_t
	err = c_ag_context_rng_state(p, &s, &o)
	return uint64(s), uint64(o), err
}

// SetRNGState restores a snapshot of RNGState.
func (c *Context) SetRNGState(seed, offset uint64) error {
	p, err := contextArg("ag_context_set_rng_state", c)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(c)
	return c_ag_context_set_rng_state(p, C.uint64_t(seed), C.uint64_t(offset))
}

// LibraryVersion of the loaded library (major*10000 + minor*100 + patch).
func LibraryVersion() int { return int(c_ag_version_number()) }

// LibraryVersionString of the loaded library ("0.1.0").
func LibraryVersionString() string { return C.GoString(c_ag_version_string()) }

// OpNames lists the ops of the loaded library (ops.def order, not promised).
func OpNames() []string {
	n := int(c_ag_op_count())
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, goStringOrEmpty(c_ag_op_name(C.int32_t(i))))
	}
	return out
}
