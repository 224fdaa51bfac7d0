package ag

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
)

var errHook = errors.New("hook says no")

func leafX(t *testing.T, ctx *Context, v ...float64) *Tensor {
	x := must[*Tensor](t)(ctx.FromFloat64(v))
	check(t, x.SetRequiresGrad(true))
	return x
}

func squareSum(t *testing.T, x *Tensor) *Tensor {
	y := must[*Tensor](t)(x.Mul(x))
	return must[*Tensor](t)(y.Sum())
}

func TestHookErrorReachesBackward(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 1, 2)
	h := must[*Hook](t)(x.RegisterHook(func(g *Tensor) (*Tensor, error) { return nil, errHook }))
	defer h.Remove()
	err := squareSum(t, x).Backward()
	if !errors.Is(err, ErrCallback) || !errors.Is(err, errHook) {
		t.Fatalf("err = %v, want AG_ERR_CALLBACK wrapping errHook", err)
	}
	if !strings.Contains(err.Error(), "hook says no") {
		t.Errorf("message lost: %v", err)
	}
}

func TestHookPanicReachesBackward(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 1, 2)
	h := must[*Hook](t)(x.RegisterPostAccumulateGradHook(func(*Tensor) error { panic("boom") }))
	defer h.Remove()
	err := squareSum(t, x).Backward()
	var pe *PanicError
	if !errors.Is(err, ErrCallback) || !errors.As(err, &pe) || pe.Value != "boom" {
		t.Fatalf("err = %v, want AG_ERR_CALLBACK with the panic", err)
	}
}

func TestHookReplacesGradient(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 1, 2)
	var seen []float64
	h := must[*Hook](t)(x.RegisterHook(func(g *Tensor) (*Tensor, error) {
		seen, _ = g.Float64s()
		return g.PowScalar(2)
	}))
	defer h.Release()
	check(t, squareSum(t, x).Backward())
	got := must[[]float64](t)(must[*Tensor](t)(x.Grad()).Float64s())
	if seen[0] != 2 || seen[1] != 4 || got[0] != 4 || got[1] != 16 {
		t.Fatalf("hook saw %v, grad %v; want [2 4], [4 16]", seen, got)
	}
}

func TestNodeHookAndQueuedCallback(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 3)
	y := must[*Tensor](t)(x.Mul(x))
	ran := false
	h := must[*Hook](t)(y.RegisterNodePostHook(func(grads, other []*Tensor) ([]*Tensor, error) {
		if len(grads) != 2 || len(other) != 1 {
			return nil, errors.New("unexpected arity")
		}
		return nil, QueueCallback(func() error { ran = true; return nil })
	}))
	defer h.Remove()
	check(t, y.Backward())
	if !ran {
		t.Fatal("queued callback did not run")
	}
	if err := QueueCallback(func() error { return nil }); !errors.Is(err, ErrGraph) {
		t.Fatalf("QueueCallback outside backward: %v", err)
	}
}

// cube is a custom function y = x^3 with dy/dx = 3x^2.
func cube(fail bool) *Function {
	return &Function{
		Name: "CubeBackward",
		Forward: func(ctx *FunctionCtx, in []*Tensor) ([]*Tensor, error) {
			if err := ctx.SaveForBackward(in[0]); err != nil {
				return nil, err
			}
			y, err := in[0].PowScalar(3)
			return []*Tensor{y}, err
		},
		Backward: func(ctx *FunctionCtx, gout []*Tensor) ([]*Tensor, error) {
			if fail {
				return nil, errHook
			}
			x, err := ctx.SavedTensor(0)
			if err != nil {
				return nil, err
			}
			defer x.Release()
			x2, err := x.Square()
			if err != nil {
				return nil, err
			}
			defer x2.Release()
			three, err := x2.Mul(gout[0])
			if err != nil {
				return nil, err
			}
			defer three.Release()
			ctx2, err := x.Context()
			if err != nil {
				return nil, err
			}
			defer ctx2.Release()
			s, err := ctx2.Scalar(F64, 3)
			if err != nil {
				return nil, err
			}
			defer s.Release()
			g, err := three.Mul(s)
			return []*Tensor{g}, err
		},
	}
}

func TestCustomFunction(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 0.5, -2)
	y := must[[]*Tensor](t)(cube(false).Apply(x))
	if y[0].GradFnName() != "CubeBackward" {
		t.Errorf("grad_fn %q", y[0].GradFnName())
	}
	check(t, must[*Tensor](t)(y[0].Sum()).Backward())
	g := must[[]float64](t)(must[*Tensor](t)(x.Grad()).Float64s())
	for i, v := range []float64{0.5, -2} {
		h := 1e-6
		num := (math.Pow(v+h, 3) - math.Pow(v-h, 3)) / (2 * h)
		if math.Abs(g[i]-num) > 1e-5 {
			t.Errorf("grad %g, finite differences %g", g[i], num)
		}
	}
	y2 := must[[]*Tensor](t)(cube(true).Apply(x))
	err := must[*Tensor](t)(y2[0].Sum()).Backward()
	if !errors.Is(err, ErrCallback) || !errors.Is(err, errHook) {
		t.Fatalf("failing backward: %v", err)
	}
}

func TestFunctionalCallbackError(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 1, 2)
	_, err := Jacobian(func(in []*Tensor) ([]*Tensor, error) { return nil, errHook }, []*Tensor{x}, 1, nil)
	if !errors.Is(err, ErrCallback) || !errors.Is(err, errHook) {
		t.Fatalf("err = %v", err)
	}
	// ag's own gradcheck of x*sin(x) against its finite differences.
	r, err := Gradcheck(func(in []*Tensor) ([]*Tensor, error) {
		s, err := in[0].Sin()
		if err != nil {
			return nil, err
		}
		defer s.Release()
		y, err := s.Mul(in[0])
		return []*Tensor{y}, err
	}, []*Tensor{x}, 1, nil)
	if err != nil || !r.Passed || r.NumCompared == 0 {
		t.Fatalf("gradcheck %+v, %v", r, err)
	}
}

// Every handle given to C is deleted by its destroy callback once the
// hooks' tensors and the custom functions' nodes are gone.
func TestCallbackHandlesDoNotLeak(t *testing.T) {
	for i := 0; i < 5; i++ {
		runtime.GC() // earlier tests' tensors go, and with them their handles
	}
	start := liveHandles.Load()
	func() {
		ctx := newCtx(t)
		for i := 0; i < 20; i++ {
			x := leafX(t, ctx, 1, 2)
			h := must[*Hook](t)(x.RegisterHook(func(g *Tensor) (*Tensor, error) { return nil, nil }))
			h.Release()
			y := must[[]*Tensor](t)(cube(false).Apply(x))
			s := must[*Tensor](t)(y[0].Sum())
			check(t, s.Backward())
			releaseAll([]*Tensor{x, y[0], s})
			// a registration that fails runs destroy too
			c := must[*Tensor](t)(ctx.FromFloat64([]float64{1}))
			if _, err := c.RegisterHook(func(g *Tensor) (*Tensor, error) { return nil, nil }); !errors.Is(err, ErrGraph) {
				t.Fatalf("hook on a tensor without grad: %v", err)
			}
			c.Release()
		}
	}()
	for i := 0; i < 50 && liveHandles.Load() > start; i++ {
		runtime.GC()
	}
	if n := liveHandles.Load(); n > start {
		t.Fatalf("%d callback handles leaked", n-start)
	}
}
