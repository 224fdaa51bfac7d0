#!/usr/bin/env python3
"""Train an MLP on Fashion-MNIST with the ag Python binding.

Reads the IDX files (gzipped or not) of Debian's dataset-fashion-mnist from
/usr/share/datasets/fashion-mnist, or --data DIR / $FASHION_MNIST_DIR.
Batches go to ag without copies (ag.from_numpy). --steps N stops early (CI).
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np

import ag

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(directory, stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            with (gzip.open if name.endswith(".gz") else open)(path, "rb") as fh:
                data = fh.read()
            zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
            if zero != 0 or dtype_code != 0x08:
                raise ValueError("%s is not an IDX file of unsigned bytes" % path)
            shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
            return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)
    raise FileNotFoundError("no %s(.gz) in %s" % (stem, directory))


def load(directory):
    xs = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        images = read_idx(directory, prefix + "-images-idx3-ubyte")
        labels = read_idx(directory, prefix + "-labels-idx1-ubyte")
        xs[split] = ((images.reshape(len(images), -1) / 255.0).astype(np.float32), labels.astype(np.int64))
    return xs


def synthetic(n_train=2048, n_test=512, seed=0):
    """Separable fake data with the shapes of Fashion-MNIST, for machines without the dataset."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 1, (10, 784)).astype(np.float32)

    def make(n):
        y = rng.integers(0, 10, n)
        return (centers[y] + rng.normal(0, 2, (n, 784))).astype(np.float32), y.astype(np.int64)
    return {"train": make(n_train), "test": make(n_test)}


class MLP:
    def __init__(self, sizes, seed=0):
        ag.manual_seed(seed)
        self.params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1.0 / fan_in ** 0.5
            self.params += [ag.uniform((fan_out, fan_in), -bound, bound).requires_grad_(),
                            ag.uniform((fan_out,), -bound, bound).requires_grad_()]

    def __call__(self, x):
        n = len(self.params) // 2
        for i in range(n):
            x = ag.linear(x, self.params[2 * i], self.params[2 * i + 1])
            if i < n - 1:
                x = x.relu()
        return x


def batch(a):
    return ag.from_numpy(a) if ag.has_symbol("ag_tensor_from_buffer") else ag.tensor(a)


def bar(done, total, loss, rate, width=30):
    filled = int(width * done / max(total, 1))
    sys.stdout.write("\r[%s%s] %d/%d loss %.4f %.0f samples/s" % ("#" * filled, "." * (width - filled),
                                                                   done, total, loss, rate))
    sys.stdout.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=os.environ.get("FASHION_MNIST_DIR", DEFAULT_DIR))
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=0, help="stop after N training steps (0: all epochs)")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--synthetic", action="store_true", help="use generated data instead of the IDX files")
    a = ap.parse_args(argv)

    data = synthetic() if a.synthetic else load(a.data)
    (xtr, ytr), (xte, yte) = data["train"], data["test"]
    model = MLP([784, a.hidden, 10])
    opt = ag.optim.Adam(model.params, lr=a.lr)
    steps_per_epoch = len(xtr) // a.batch_size
    total = a.steps or steps_per_epoch * a.epochs
    rng = np.random.default_rng(0)
    step, seen, t0, loss_v = 0, 0, time.perf_counter(), float("nan")
    while step < total:
        order = rng.permutation(len(xtr))
        for b in range(steps_per_epoch):
            if step >= total:
                break
            idx = order[b * a.batch_size:(b + 1) * a.batch_size]
            xb, yb = batch(xtr[idx]), batch(ytr[idx])
            loss = ag.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            seen += len(idx)
            if step % 10 == 0 or step == total:
                loss_v = loss.item()
                bar(step, total, loss_v, seen / (time.perf_counter() - t0))
    print()
    correct = 0
    with ag.no_grad():
        for b in range(0, len(xte), 1000):
            logits = model(batch(xte[b:b + 1000]))
            # ag compares and sums floating tensors only
            hits = logits.argmax(1).double() == batch(yte[b:b + 1000].astype(np.float64))
            correct += int(hits.double().sum().item())
    acc = correct / len(xte)
    print("test accuracy: %.4f (%d/%d) after %d steps, final loss %.4f" % (acc, correct, len(xte), step, loss_v))
    return 0 if np.isfinite(loss_v) else 1


if __name__ == "__main__":
    sys.exit(main())
