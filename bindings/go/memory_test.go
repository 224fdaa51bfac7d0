package ag

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func bytesInUse(t *testing.T, ctx *Context) int64 {
	t.Helper()
	return must[MemoryStats](t)(ctx.MemoryStats()).BytesInUse
}

// trainStep: one SGD step of a linear model on 64 samples, every handle released.
func trainStep(t *testing.T, ctx *Context, w, x, y *Tensor) float64 {
	pred := must[*Tensor](t)(x.Matmul(w))
	loss := must[*Tensor](t)(pred.MseLoss(y, ReductionMean))
	check(t, loss.Backward())
	l := must[float64](t)(loss.Item())
	g := must[*Tensor](t)(w.Grad())
	check(t, NoGrad(func() error { return w.AddScaledInPlace(g, -0.1) })) // w -= 0.1 g
	check(t, w.SetGrad(nil))
	releaseAll([]*Tensor{pred, loss, g})
	return l
}

func TestMemoryReturnsAfterTrainingLoop(t *testing.T) {
	ctx := newCtx(t)
	check(t, ctx.ManualSeed(7))
	start := bytesInUse(t, ctx)
	x := must[*Tensor](t)(ctx.Randn(F32, []int64{64, 8}))
	wTrue := must[*Tensor](t)(ctx.Randn(F32, []int64{8, 1}))
	y := must[*Tensor](t)(x.Matmul(wTrue))
	w := must[*Tensor](t)(ctx.Zeros(F32, 8, 1))
	check(t, w.SetRequiresGrad(true))
	first := trainStep(t, ctx, w, x, y)
	var last float64
	for i := 0; i < 50; i++ {
		last = trainStep(t, ctx, w, x, y)
	}
	if !(last < first/2) {
		t.Errorf("loss did not fall: %g -> %g", first, last)
	}
	releaseAll([]*Tensor{x, wTrue, y, w})
	if got := bytesInUse(t, ctx); got != start {
		t.Fatalf("bytes_in_use %d after the loop, %d before", got, start)
	}
}

// Tensors never released explicitly are freed by their cleanups.
func TestFinalizersFree(t *testing.T) {
	ctx := newCtx(t)
	start := bytesInUse(t, ctx)
	func() {
		for i := 0; i < 20; i++ {
			a := must[*Tensor](t)(ctx.Ones(F64, 64, 64))
			_ = must[*Tensor](t)(a.Mul(a))
		}
	}()
	if bytesInUse(t, ctx) <= start {
		t.Fatal("tensors allocated nothing?")
	}
	deadline := time.Now().Add(10 * time.Second)
	for bytesInUse(t, ctx) != start && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := bytesInUse(t, ctx); got != start {
		t.Fatalf("bytes_in_use %d, want %d after GC", got, start)
	}
}

func TestReleaseIdempotentAndConcurrent(t *testing.T) {
	ctx := newCtx(t)
	start := bytesInUse(t, ctx)
	a := must[*Tensor](t)(ctx.Ones(F32, 100))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); a.Release() }()
	}
	wg.Wait()
	a.Release()
	if _, err := a.Float32s(); err == nil {
		t.Fatal("released tensor still readable")
	}
	if _, err := a.Mul(a); !errorsIsInvalid(err) {
		t.Fatalf("op on released tensor: %v", err)
	}
	if got := bytesInUse(t, ctx); got != start {
		t.Fatalf("bytes_in_use %d, want %d", got, start)
	}
}

func errorsIsInvalid(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Status == StatusInvalidArgument
}

// NoGrad affects only the goroutine (OS thread) that runs it.
func TestNoGradWithGoroutines(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 1, 2, 3)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				y, err := x.Mul(x)
				if err != nil || !y.RequiresGrad() {
					errs <- "a goroutine outside NoGrad recorded no graph"
					return
				}
				y.Release()
				runtime.Gosched()
			}
		}()
	}
	for i := 0; i < 50; i++ {
		check(t, NoGrad(func() error {
			if GradEnabled() {
				t.Error("grad mode on inside NoGrad")
			}
			runtime.Gosched()
			y, err := x.Mul(x)
			if err != nil {
				return err
			}
			defer y.Release()
			if y.RequiresGrad() {
				t.Error("NoGrad recorded a graph")
			}
			return nil
		}))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	y := must[*Tensor](t)(x.Mul(x))
	if !y.RequiresGrad() {
		t.Error("grad mode not restored after NoGrad")
	}
}

// Tensors with hooks, custom-function outputs and their graphs, none
// released explicitly: the garbage collector's cleanups release them, and
// with them every callback handle and every byte of the context.
func TestCleanupsFreeGraphsAndCallbacks(t *testing.T) {
	for i := 0; i < 5; i++ {
		runtime.GC() // earlier tests' tensors go, and with them their handles
	}
	startHandles := liveHandles.Load()
	ctx := newCtx(t)
	start := bytesInUse(t, ctx)
	func() {
		for i := 0; i < 20; i++ {
			x := must[*Tensor](t)(ctx.Ones(F64, 32, 32))
			check(t, x.SetRequiresGrad(true))
			_ = must[*Hook](t)(x.RegisterHook(func(g *Tensor) (*Tensor, error) { return nil, nil }))
			y := must[[]*Tensor](t)(cube(false).Apply(x))
			s := must[*Tensor](t)(y[0].Sum())
			check(t, s.Backward())
		}
	}()
	if bytesInUse(t, ctx) <= start {
		t.Fatal("the loop allocated nothing?")
	}
	deadline := time.Now().Add(10 * time.Second)
	for (bytesInUse(t, ctx) != start || liveHandles.Load() > startHandles) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := bytesInUse(t, ctx); got != start {
		t.Fatalf("bytes_in_use %d, want %d after GC", got, start)
	}
	if n := liveHandles.Load(); n > startHandles {
		t.Fatalf("%d callback handles left after GC", n-startHandles)
	}
}
