#!/usr/bin/python3
"""PyTorch twin of bench_fashion.c: the same model (the MLP 784-256-256-10 with
ReLU, or the CNN conv 1->16 3x3 pad 1, relu, max_pool 2, conv 16->32 3x3 pad 1,
relu, max_pool 2, linear 32*7*7->10), nn.Linear's and nn.Conv2d's default
init (or, with --init FILE, the initial parameters that bench_fashion
--init-out FILE saved, so both engines start from the same values), Adam
lr 1e-3, batches of 64 in file order without shuffling, inputs scaled to
[0, 1]. Times the training steps only (wall and CPU time) (batches sliced from tensors prepared
up front) and prints one JSON line like bench_fashion.

Usage: bench_fashion_torch.py [--model mlp|cnn] [--data DIR] [--epochs N]
                              [--threads N] [--steps N] [--init FILE]
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


def read_safetensors(path):
    """{name: float32 tensor} of a safetensors file holding F32 tensors."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError("%s: %s is %s, not F32" % (path, name, info["dtype"]))
        begin, end = info["data_offsets"]
        array = np.frombuffer(data, np.float32, (end - begin) // 4, 8 + size + begin)
        out[name] = torch.from_numpy(array.reshape(info["shape"]).copy())
    return out


def make_model(kind):
    nn = torch.nn
    if kind == "cnn":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--init", help="safetensors file of initial parameters (bench_fashion --init-out)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    load = lambda name: read_idx("%s/%s.gz" % (a.data, name))
    x_train = torch.from_numpy(load("train-images-idx3-ubyte").astype(np.float32) / 255.0)
    y_train = torch.from_numpy(load("train-labels-idx1-ubyte").astype(np.int64))
    x_test = torch.from_numpy(load("t10k-images-idx3-ubyte").astype(np.float32) / 255.0)
    y_test = torch.from_numpy(load("t10k-labels-idx1-ubyte").astype(np.int64))
    if a.model == "cnn":
        x_train, x_test = x_train.reshape(-1, 1, 28, 28), x_test.reshape(-1, 1, 28, 28)
    net = make_model(a.model)
    if a.init:
        net.load_state_dict(read_safetensors(a.init))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    batch, steps, seconds, cpu_seconds, loss = 64, 0, 0.0, 0.0, None
    per_epoch = x_train.shape[0] // batch
    for _ in range(a.epochs):
        for s in range(per_epoch):
            if a.steps and steps >= a.steps:
                break
            t0, c0 = time.perf_counter(), time.process_time()
            xb, yb = x_train[s * batch:(s + 1) * batch], y_train[s * batch:(s + 1) * batch]
            loss = torch.nn.functional.cross_entropy(net(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            seconds += time.perf_counter() - t0
            cpu_seconds += time.process_time() - c0
            steps += 1
    with torch.no_grad():
        right = sum((net(x_test[i:i + 1000]).argmax(1) == y_test[i:i + 1000]).sum().item()
                    for i in range(0, x_test.shape[0], 1000))
    print(json.dumps({"engine": "torch %s" % torch.__version__, "model": a.model, "threads": a.threads,
                      "epochs": a.epochs, "steps": steps, "ms_per_step": round(1e3 * seconds / steps, 4),
                      "cpu_ms_per_step": round(1e3 * cpu_seconds / steps, 4),
                      "test_accuracy": round(right / x_test.shape[0], 4), "last_loss": round(loss.item(), 4),
                      "init": "shared" if a.init else "torch"}))


if __name__ == "__main__":
    main()
