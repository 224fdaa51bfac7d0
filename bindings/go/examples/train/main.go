// Command train fits a two-layer MLP with ag: on Fashion-MNIST IDX files
// (gzip or not) when -data names their directory, else on a generated
// two-spirals set. It prints the loss as it falls and the test accuracy.
package main

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"

	"agbind/ag"
)

type dataset struct {
	x        []float32
	y        []int64
	features int
	classes  int
}

func (d dataset) n() int { return len(d.y) }

func main() {
	dataDir := flag.String("data", defaultData(), "directory with Fashion-MNIST IDX files (train-images-idx3-ubyte[.gz], ...); empty: spirals")
	quick := flag.Bool("quick", false, "a short run (for tests)")
	epochs := flag.Int("epochs", 5, "epochs")
	flag.Parse()
	if err := run(*dataDir, *quick, *epochs); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

func run(dataDir string, quick bool, epochs int) error {
	var train, test dataset
	var err error
	if dataDir != "" {
		limit := 0
		if quick {
			limit = 4000
		}
		if train, err = loadIDX(dataDir, "train", limit); err != nil {
			return err
		}
		if test, err = loadIDX(dataDir, "t10k", limit/4); err != nil {
			return err
		}
	} else {
		train, test = spirals(2000, 1), spirals(500, 2)
	}
	if quick {
		epochs = min(epochs, 3)
	}
	ctx, err := ag.NewContext(nil)
	if err != nil {
		return err
	}
	defer ctx.Release()
	if err := ctx.ManualSeed(1); err != nil {
		return err
	}
	m, err := newMLP(ctx, train.features, 64, train.classes)
	if err != nil {
		return err
	}
	defer m.release()
	fmt.Printf("training on %d samples, %d features, %d classes\n", train.n(), train.features, train.classes)
	first, last := math.NaN(), math.NaN()
	const batch = 100
	lr := 0.1
	if dataDir == "" {
		lr = 0.5
	}
	for epoch := 1; epoch <= epochs; epoch++ {
		var sum float64
		var count int
		for start := 0; start+batch <= train.n(); start += batch {
			loss, err := m.step(ctx, train, start, batch, lr)
			if err != nil {
				return err
			}
			sum += loss
			count++
			if math.IsNaN(first) {
				first = loss
			}
		}
		last = sum / float64(count)
		acc, err := m.accuracy(ctx, test)
		if err != nil {
			return err
		}
		fmt.Printf("epoch %d: mean loss %.4f, test accuracy %.3f\n", epoch, last, acc)
	}
	if !(last < first) {
		return fmt.Errorf("loss did not fall: first batch %.4f, last epoch %.4f", first, last)
	}
	return nil
}

// defaultData is Debian's dataset-fashion-mnist, when installed.
func defaultData() string {
	const debian = "/usr/share/datasets/fashion-mnist"
	if _, err := os.Stat(filepath.Join(debian, "train-labels-idx1-ubyte.gz")); err == nil {
		return debian
	}
	return ""
}

type mlp struct{ w1, b1, w2, b2 *ag.Tensor }

func (m *mlp) params() []*ag.Tensor { return []*ag.Tensor{m.w1, m.b1, m.w2, m.b2} }
func (m *mlp) release() {
	for _, p := range m.params() {
		p.Release()
	}
}

func newMLP(ctx *ag.Context, in, hidden, out int) (*mlp, error) {
	layer := func(fanIn, fanOut int64) (*ag.Tensor, *ag.Tensor, error) {
		bound := 1 / math.Sqrt(float64(fanIn))
		w, err := ctx.Uniform(ag.F32, []int64{fanOut, fanIn}, -bound, bound)
		if err != nil {
			return nil, nil, err
		}
		b, err := ctx.Zeros(ag.F32, fanOut)
		if err != nil {
			return nil, nil, err
		}
		return w, b, errors.Join(w.SetRequiresGrad(true), b.SetRequiresGrad(true))
	}
	var m mlp
	var err error
	if m.w1, m.b1, err = layer(int64(in), int64(hidden)); err != nil {
		return nil, err
	}
	if m.w2, m.b2, err = layer(int64(hidden), int64(out)); err != nil {
		return nil, err
	}
	return &m, nil
}

// forward returns the logits; every intermediate is released here.
func (m *mlp) forward(x *ag.Tensor) (*ag.Tensor, error) {
	h, err := x.Linear(m.w1, m.b1)
	if err != nil {
		return nil, err
	}
	defer h.Release()
	a, err := h.Relu()
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return a.Linear(m.w2, m.b2)
}

func batchTensors(ctx *ag.Context, d dataset, start, n int) (*ag.Tensor, *ag.Tensor, error) {
	x, err := ctx.FromFloat32(d.x[start*d.features:(start+n)*d.features], int64(n), int64(d.features))
	if err != nil {
		return nil, nil, err
	}
	y, err := ctx.FromInt64(d.y[start : start+n])
	return x, y, err
}

func (m *mlp) step(ctx *ag.Context, d dataset, start, n int, lr float64) (float64, error) {
	x, y, err := batchTensors(ctx, d, start, n)
	if err != nil {
		return 0, err
	}
	defer x.Release()
	defer y.Release()
	logits, err := m.forward(x)
	if err != nil {
		return 0, err
	}
	defer logits.Release()
	loss, err := logits.CrossEntropy(y, ag.ReductionMean, ag.IgnoreIndexDefault, 0)
	if err != nil {
		return 0, err
	}
	defer loss.Release()
	if err := loss.Backward(); err != nil {
		return 0, err
	}
	err = ag.NoGrad(func() error {
		for _, p := range m.params() {
			g, err := p.Grad()
			if err != nil {
				return err
			}
			step, err := ctx.Scalar(ag.F32, lr)
			if err != nil {
				return err
			}
			scaled, err := g.Mul(step)
			if err == nil {
				err = p.SubInPlace(scaled)
			}
			g.Release()
			step.Release()
			scaled.Release()
			if err != nil {
				return err
			}
			if err := p.SetGrad(nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return loss.Item()
}

func (m *mlp) accuracy(ctx *ag.Context, d dataset) (float64, error) {
	var correct int
	err := ag.NoGrad(func() error {
		x, y, err := batchTensors(ctx, d, 0, d.n())
		if err != nil {
			return err
		}
		defer x.Release()
		defer y.Release()
		logits, err := m.forward(x)
		if err != nil {
			return err
		}
		defer logits.Release()
		pred, err := logits.Argmax(1, 0)
		if err != nil {
			return err
		}
		defer pred.Release()
		p, err := pred.Int64s()
		for i := range p {
			if p[i] == d.y[i] {
				correct++
			}
		}
		return err
	})
	return float64(correct) / float64(d.n()), err
}

// spirals: two interleaved spirals with noise, 2 features, 2 classes.
func spirals(n int, seed int64) dataset {
	r := rand.New(rand.NewSource(seed))
	d := dataset{features: 2, classes: 2}
	for i := 0; i < n; i++ {
		c := i % 2
		t := 0.25 + 3*math.Pi*r.Float64()
		sign := 1.0 - 2*float64(c)
		d.x = append(d.x, float32(sign*t*math.Cos(t)/10+r.NormFloat64()*0.03), float32(sign*t*math.Sin(t)/10+r.NormFloat64()*0.03))
		d.y = append(d.y, int64(c))
	}
	return d
}

func openMaybeGz(dir, name string) (io.ReadCloser, error) {
	if f, err := os.Open(filepath.Join(dir, name)); err == nil {
		return f, nil
	}
	f, err := os.Open(filepath.Join(dir, name+".gz"))
	if err != nil {
		return nil, err
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{z, f}, nil
}

// loadIDX reads <prefix>-images-idx3-ubyte and <prefix>-labels-idx1-ubyte (limit 0: all).
func loadIDX(dir, prefix string, limit int) (dataset, error) {
	img, err := openMaybeGz(dir, prefix+"-images-idx3-ubyte")
	if err != nil {
		return dataset{}, err
	}
	defer img.Close()
	lab, err := openMaybeGz(dir, prefix+"-labels-idx1-ubyte")
	if err != nil {
		return dataset{}, err
	}
	defer lab.Close()
	var ih [4]uint32
	var lh [2]uint32
	if err := binary.Read(img, binary.BigEndian, &ih); err != nil {
		return dataset{}, err
	}
	if err := binary.Read(lab, binary.BigEndian, &lh); err != nil {
		return dataset{}, err
	}
	if ih[0] != 2051 || lh[0] != 2049 || ih[1] != lh[1] {
		return dataset{}, fmt.Errorf("%s: not IDX image/label files", prefix)
	}
	n, feat := int(ih[1]), int(ih[2]*ih[3])
	if limit > 0 {
		n = min(n, limit)
	}
	pix := make([]byte, n*feat)
	if _, err := io.ReadFull(img, pix); err != nil {
		return dataset{}, err
	}
	labels := make([]byte, n)
	if _, err := io.ReadFull(lab, labels); err != nil {
		return dataset{}, err
	}
	d := dataset{features: feat, classes: 10, x: make([]float32, len(pix)), y: make([]int64, n)}
	for i, p := range pix {
		d.x[i] = float32(p) / 255
	}
	for i, l := range labels {
		d.y[i] = int64(l)
	}
	return d, nil
}
