#!/bin/sh
# Fashion-MNIST training, ag beside PyTorch: ms per step and test accuracy
# after 2 epochs at 1 thread. Usage: run_fashion.sh BUILD_DIR [EPOCHS]
# (a release build measures ag at its best: meson setup -Dbuildtype=release).
set -e
build=${1:?usage: run_fashion.sh BUILD_DIR [EPOCHS]}
epochs=${2:-2}
here=$(dirname "$0")
"$build/tests/bench/bench_fashion" --epochs "$epochs" --threads 1
/usr/bin/python3 "$here/bench_fashion_torch.py" --epochs "$epochs" --threads 1
