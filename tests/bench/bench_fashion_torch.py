#!/usr/bin/python3
"""PyTorch twin of bench_fashion.c: the same MLP 784-256-256-10 (ReLU, nn.Linear's
default init), Adam lr 1e-3, batches of 64 in file order without shuffling,
inputs scaled to [0, 1]. Times the training steps only (batches sliced from
tensors prepared up front) and prints one JSON line like bench_fashion.

Usage: bench_fashion_torch.py [--data DIR] [--epochs N] [--threads N] [--steps N]
"""
import argparse
import gzip
import json
import struct
import time

import numpy as np
import torch


def read_idx(path):
    with gzip.open(path) as f:
        data = f.read()
    magic, n = struct.unpack(">II", data[:8])
    if magic == 2051:
        rows, cols = struct.unpack(">II", data[8:16])
        return np.frombuffer(data, np.uint8, offset=16).reshape(n, rows * cols)
    return np.frombuffer(data, np.uint8, offset=8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    load = lambda name: read_idx("%s/%s.gz" % (a.data, name))
    x_train = torch.from_numpy(load("train-images-idx3-ubyte").astype(np.float32) / 255.0)
    y_train = torch.from_numpy(load("train-labels-idx1-ubyte").astype(np.int64))
    x_test = torch.from_numpy(load("t10k-images-idx3-ubyte").astype(np.float32) / 255.0)
    y_test = torch.from_numpy(load("t10k-labels-idx1-ubyte").astype(np.int64))
    net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                              torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    batch, steps, seconds, loss = 64, 0, 0.0, None
    per_epoch = x_train.shape[0] // batch
    for _ in range(a.epochs):
        for s in range(per_epoch):
            if a.steps and steps >= a.steps:
                break
            t0 = time.perf_counter()
            xb, yb = x_train[s * batch:(s + 1) * batch], y_train[s * batch:(s + 1) * batch]
            loss = torch.nn.functional.cross_entropy(net(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            seconds += time.perf_counter() - t0
            steps += 1
    with torch.no_grad():
        acc = (net(x_test).argmax(1) == y_test).double().mean().item()
    print(json.dumps({"engine": "torch %s" % torch.__version__, "threads": a.threads, "epochs": a.epochs,
                      "steps": steps, "ms_per_step": round(1e3 * seconds / steps, 4),
                      "test_accuracy": round(acc, 4), "last_loss": round(loss.item(), 4)}))


if __name__ == "__main__":
    main()
