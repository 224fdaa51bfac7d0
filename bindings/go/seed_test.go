package ag

import (
	"errors"
	"testing"
)

func newCtx(t *testing.T) *Context {
	t.Helper()
	ctx, err := NewContext(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Release)
	return ctx
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Seed example 1: x = 3, y = x*x, backward -> x.grad = 6.
func TestSeedSquare(t *testing.T) {
	ctx := newCtx(t)
	x := must[*Tensor](t)(ctx.FromFloat64([]float64{3}))
	check(t, x.SetRequiresGrad(true))
	y := must[*Tensor](t)(x.Mul(x))
	check(t, y.Backward())
	g := must[*Tensor](t)(x.Grad())
	if g == nil {
		t.Fatal("no gradient")
	}
	v := must[[]float64](t)(g.Float64s())
	if len(v) != 1 || v[0] != 6 {
		t.Fatalf("x.grad = %v, want [6]", v)
	}
}

// Seed example 2: Q = 3a^3 - b^2, Q.backward(gradient=[1,1]) -> a.grad = 9a^2, b.grad = -2b.
func TestSeedQ(t *testing.T) {
	ctx := newCtx(t)
	a := must[*Tensor](t)(ctx.FromFloat32([]float32{2, 3}, 2))
	b := must[*Tensor](t)(ctx.FromFloat32([]float32{6, 4}, 2))
	check(t, a.SetRequiresGrad(true))
	check(t, b.SetRequiresGrad(true))
	three := must[*Tensor](t)(ctx.Scalar(F32, 3))
	a3 := must[*Tensor](t)(a.PowScalar(3))
	b2 := must[*Tensor](t)(b.PowScalar(2))
	q := must[*Tensor](t)(must[*Tensor](t)(three.Mul(a3)).Sub(b2))
	ones := must[*Tensor](t)(ctx.FromFloat32([]float32{1, 1}, 2))
	check(t, q.BackwardWith(ones, nil))
	ga := must[[]float32](t)(must[*Tensor](t)(a.Grad()).Float32s())
	gb := must[[]float32](t)(must[*Tensor](t)(b.Grad()).Float32s())
	if ga[0] != 36 || ga[1] != 81 {
		t.Errorf("a.grad = %v, want [36 81]", ga)
	}
	if gb[0] != -12 || gb[1] != -8 {
		t.Errorf("b.grad = %v, want [-12 -8]", gb)
	}
	if s := q.Shape(); len(s) != 1 || s[0] != 2 {
		t.Errorf("Q shape %v", s)
	}
}

func TestShapeError(t *testing.T) {
	ctx := newCtx(t)
	a := must[*Tensor](t)(ctx.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	b := must[*Tensor](t)(ctx.FromFloat32([]float32{1, 2, 3, 4}, 4))
	_, err := a.Mul(b)
	if !errors.Is(err, ErrShape) {
		t.Fatalf("err = %v, want ErrShape", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.StatusName != "AG_ERR_SHAPE" || e.Message == "" {
		t.Fatalf("bad error %#v", err)
	}
	t.Log(e)
}
