package ag

import (
	"math"
	"testing"
)

// fdCheck compares the gradient backward gives for scalar f(xs) with
// central finite differences in f64, for every input element.
func fdCheck(t *testing.T, name string, f func(xs []*Tensor) (*Tensor, error), vals [][]float64, shapes [][]int64) {
	t.Helper()
	ctx := newCtx(t)
	mk := func(v [][]float64, grad bool) []*Tensor {
		xs := make([]*Tensor, len(v))
		for i := range v {
			xs[i] = must[*Tensor](t)(ctx.FromFloat64(v[i], shapes[i]...))
			if grad {
				check(t, xs[i].SetRequiresGrad(true))
			}
		}
		return xs
	}
	eval := func(v [][]float64) float64 {
		xs := mk(v, false)
		defer releaseAll(xs)
		y := must[*Tensor](t)(f(xs))
		defer y.Release()
		return must[float64](t)(y.Item())
	}
	xs := mk(vals, true)
	y := must[*Tensor](t)(f(xs))
	check(t, y.Backward())
	const h = 1e-6
	for i := range vals {
		g := must[[]float64](t)(must[*Tensor](t)(xs[i].Grad()).Float64s())
		for j := range vals[i] {
			orig := vals[i][j]
			vals[i][j] = orig + h
			up := eval(vals)
			vals[i][j] = orig - h
			down := eval(vals)
			vals[i][j] = orig
			num := (up - down) / (2 * h)
			if math.Abs(num-g[j]) > 1e-5*(1+math.Abs(num)) {
				t.Errorf("%s: d/dx%d[%d] = %g, finite differences %g", name, i, j, g[j], num)
			}
		}
	}
}

func sumOf(y *Tensor, err error) (*Tensor, error) {
	if err != nil {
		return nil, err
	}
	defer y.Release()
	return y.Sum()
}

func TestGradFiniteDifferences(t *testing.T) {
	a := []float64{0.3, -1.2, 0.7, 2.0, -0.4, 1.1}
	b := []float64{1.5, -0.6, 0.9}
	fdCheck(t, "tanh", func(x []*Tensor) (*Tensor, error) { return sumOf(x[0].Tanh()) }, [][]float64{a}, [][]int64{{2, 3}})
	fdCheck(t, "div broadcast", func(x []*Tensor) (*Tensor, error) { return sumOf(x[0].Div(x[1])) },
		[][]float64{append([]float64(nil), a...), b}, [][]int64{{2, 3}, {3}})
	fdCheck(t, "matmul", func(x []*Tensor) (*Tensor, error) {
		m, err := x[0].Matmul(x[1])
		if err != nil {
			return nil, err
		}
		defer m.Release()
		return sumOf(m.Sigmoid())
	}, [][]float64{append([]float64(nil), a...), {0.2, 0.5, -0.3, 0.8, 1.0, -1.0}}, [][]int64{{2, 3}, {3, 2}})
	fdCheck(t, "log_softmax", func(x []*Tensor) (*Tensor, error) {
		l, err := x[0].LogSoftmax(1)
		if err != nil {
			return nil, err
		}
		defer l.Release()
		w, err := l.Mul(x[1])
		if err != nil {
			return nil, err
		}
		return sumOf(w, nil)
	}, [][]float64{append([]float64(nil), a...), {1, 2, 3, -1, 0.5, 0.25}}, [][]int64{{2, 3}, {2, 3}})
	fdCheck(t, "var_dims", func(x []*Tensor) (*Tensor, error) { return sumOf(x[0].VarDims([]int64{1}, 0, 1)) },
		[][]float64{append([]float64(nil), a...)}, [][]int64{{2, 3}})
}
