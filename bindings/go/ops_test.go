package ag

import (
	"errors"
	"slices"
	"testing"
)

func TestMultiOutputOps(t *testing.T) {
	ctx := newCtx(t)
	x := must[*Tensor](t)(ctx.FromFloat64([]float64{1, 5, 2, 7, 3, 0}, 2, 3))
	vals, idx, err := x.MaxDim(1, 0)
	check(t, err)
	if v := must[[]float64](t)(vals.Float64s()); !slices.Equal(v, []float64{5, 7}) {
		t.Errorf("max values %v", v)
	}
	if i := must[[]int64](t)(idx.Int64s()); !slices.Equal(i, []int64{1, 0}) {
		t.Errorf("max indices %v", i)
	}
	parts := must[[]*Tensor](t)(x.Split([]int64{1, 2}, 1))
	if len(parts) != 2 || !slices.Equal(parts[0].Shape(), []int64{2, 1}) || !slices.Equal(parts[1].Shape(), []int64{2, 2}) {
		t.Fatalf("split gave %d parts", len(parts))
	}
	five := must[*Tensor](t)(ctx.Zeros(F32, 5))
	chunks := must[[]*Tensor](t)(five.Chunk(4, 0))
	var sizes []int64
	for _, c := range chunks {
		sizes = append(sizes, c.Shape()[0])
	}
	if !slices.Equal(sizes, []int64{2, 2, 1}) {
		t.Errorf("chunk sizes %v, want [2 2 1]", sizes)
	}
	many := must[*Tensor](t)(ctx.Zeros(F32, 40))
	if n := len(must[[]*Tensor](t)(many.Chunk(40, 0))); n != 40 {
		t.Errorf("chunk into 40 gave %d (capacity growth)", n)
	}
	cat := must[*Tensor](t)(Concat(parts, 1))
	if got := must[[]float64](t)(cat.Float64s()); !slices.Equal(got, []float64{1, 5, 2, 7, 3, 0}) {
		t.Errorf("concat %v", got)
	}
}

func TestArgumentErrors(t *testing.T) {
	ctx := newCtx(t)
	x := must[*Tensor](t)(ctx.Ones(F32, 1, 1, 4, 4))
	w := must[*Tensor](t)(ctx.Ones(F32, 1, 1, 2, 2))
	if _, err := x.Conv2d(w, nil, []int64{1}, nil, nil, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("stride of one value: %v", err)
	}
	y := must[*Tensor](t)(x.Conv2d(w, nil, []int64{2, 2}, nil, nil, 1))
	if !slices.Equal(y.Shape(), []int64{1, 1, 2, 2}) {
		t.Errorf("conv2d shape %v", y.Shape())
	}
	if _, err := x.Mul(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil tensor: %v", err)
	}
	if _, err := ctx.FromFloat32([]float32{1, 2, 3}, 2, 2); !errors.Is(err, ErrShape) {
		t.Errorf("data of the wrong size: %v", err)
	}
	i := must[*Tensor](t)(ctx.FromInt64([]int64{1, 2}))
	if _, err := i.Float32s(); !errors.Is(err, ErrDtype) {
		t.Errorf("reading i64 as f32: %v", err)
	}
	if err := i.SetRequiresGrad(true); !errors.Is(err, ErrDtype) {
		t.Errorf("requires_grad on i64: %v", err)
	}
	if _, err := NewContext(&ContextOptions{NumThreads: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative threads: %v", err)
	}
	f64 := must[*Tensor](t)(ctx.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	if err := x.AddScaledInPlace(f64, 2); !errors.Is(err, ErrDtype) {
		t.Errorf("scaled add of another dtype: %v", err)
	}
	row := must[*Tensor](t)(ctx.FromFloat64([]float64{10, 20}, 2))
	check(t, f64.AddScaledInPlace(row, -0.5)) // the row broadcast to each row
	if got := must[[]float64](t)(f64.Float64s()); !slices.Equal(got, []float64{-4, -8, -2, -6}) {
		t.Errorf("AddScaledInPlace gave %v", got)
	}
	names := OpNames()
	if !slices.Contains(names, "matmul") || len(names) < 100 {
		t.Errorf("op names %d", len(names))
	}
}

func TestGraphAndExport(t *testing.T) {
	ctx := newCtx(t)
	x := leafX(t, ctx, 1, 2)
	var y *Tensor
	check(t, WithTagScope("block", func() error {
		if CurrentTagScope() != "block" {
			t.Errorf("tag scope %q", CurrentTagScope())
		}
		var err error
		y, err = x.Exp()
		return err
	}))
	n := must[*Node](t)(y.GradFn())
	defer n.Release()
	if n.Name() != "ExpBackward" || n.Tag() != "block" || n.NumNextEdges() != 1 {
		t.Errorf("node %q tag %q edges %d", n.Name(), n.Tag(), n.NumNextEdges())
	}
	next, _, err := n.NextEdge(0)
	check(t, err)
	if next == nil || next.Name() != "AccumulateGrad" {
		t.Errorf("next edge %v", next)
	}
	dot := must[string](t)(y.ExportGraph(GraphDot))
	if len(dot) < 10 || dot[:10] != "digraph ag" {
		t.Errorf("dot export %q", dot)
	}
	if leaf, _ := x.GradFn(); leaf != nil {
		t.Error("a leaf has a grad_fn")
	}
}
