package ag

import (
	"errors"
	"slices"
	"testing"
)

func needBuffers(t *testing.T) {
	t.Helper()
	if !HasSymbol("ag_tensor_from_buffer") {
		t.Skip("libag lacks ag_tensor_from_buffer")
	}
}

func TestMissingSymbolIsAnError(t *testing.T) {
	if HasSymbol("ag_tensor_from_buffer") {
		t.Skip("libag has ag_tensor_from_buffer")
	}
	ctx := newCtx(t)
	start := liveHandles.Load()
	buf := NewFloat32Buffer(4)
	defer buf.Release()
	if _, err := ctx.FromBuffer(buf, false); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want AG_ERR_UNSUPPORTED", err)
	}
	if liveHandles.Load() != start {
		t.Fatal("handle of the failed call leaked")
	}
}

func TestFromBufferZeroCopy(t *testing.T) {
	needBuffers(t)
	ctx := newCtx(t)
	start := liveHandles.Load()
	buf := NewFloat32Buffer(6)
	copy(buf.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	x := must[*Tensor](t)(ctx.FromBuffer(buf, false, 2, 3))
	buf.Float32s()[0] = 10 // shared, not copied
	if v := must[[]float32](t)(x.Float32s()); v[0] != 10 {
		t.Errorf("tensor does not share the buffer: %v", v)
	}
	p := must[any](t)(x.DataPointer())
	_ = p
	if s := must[[]int64](t)(x.Strides()); !slices.Equal(s, []int64{3, 1}) {
		t.Errorf("strides %v", s)
	}
	tr := must[*Tensor](t)(x.Transpose(0, 1))
	if c := must[bool](t)(tr.IsContiguous()); c {
		t.Error("transpose is contiguous?")
	}
	cc := must[*Tensor](t)(tr.Contiguous())
	if c := must[bool](t)(cc.IsContiguous()); !c {
		t.Error("Contiguous() is not contiguous")
	}
	ro := must[*Tensor](t)(ctx.FromBuffer(buf, true, 6))
	if r := must[bool](t)(ro.IsReadOnly()); !r {
		t.Error("read-only flag lost")
	}
	if _, err := ro.MutableDataPointer(); !errors.Is(err, ErrUnsupported) {
		t.Errorf("writing a read-only tensor: %v", err)
	}
	buf.Release()
	releaseAll([]*Tensor{x, tr, cc, ro})
	if n := liveHandles.Load(); n != start {
		t.Errorf("%d deleter handles left", n-start)
	}
}

func TestDLPackRoundTrip(t *testing.T) {
	needBuffers(t)
	ctx := newCtx(t)
	x := must[*Tensor](t)(ctx.FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
	d := must[*DLPack](t)(x.ToDLPack())
	if !slices.Equal(d.Shape(), []int64{2, 2}) {
		t.Errorf("dlpack shape %v", d.Shape())
	}
	y := must[*Tensor](t)(ctx.FromDLPack(d))
	if d.Pointer() != nil {
		t.Error("FromDLPack did not take the export over")
	}
	if v := must[[]float64](t)(y.Float64s()); !slices.Equal(v, []float64{1, 2, 3, 4}) {
		t.Errorf("round trip %v", v)
	}
	l := must[*DLPack](t)(x.ToDLPackLegacy())
	l.Release()
}
