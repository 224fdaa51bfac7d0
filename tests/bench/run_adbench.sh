#!/bin/sh
# tests/bench/run_adbench.sh - the ADBench objectives (GMM, BA, LSTM) on ag
# and on PyTorch, one after the other at 1 thread, then the table: per size
# ag F, ag J, ag J/F, torch F, torch J, torch J/F, ag J / torch J, and how
# far ag's objective values and gradient checksums are from PyTorch's.
#
#   tests/bench/run_adbench.sh BUILD_DIR [args for both, e.g. --only gmm --budget 5]
#
# BUILD_DIR holds tests/bench/bench_adbench (a release build measures ag at
# its best: meson setup -Dbuildtype=release). Results go to
# BUILD_DIR/bench-results/adbench_{ag,torch}.jsonl. TORCH_PYTHON (default
# /usr/bin/python3) must have torch. Exit status: nonzero when a run failed
# or a value differs from PyTorch's beyond the tolerance.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:?usage: run_adbench.sh BUILD_DIR [args]}
shift
TORCH_PYTHON=${TORCH_PYTHON:-/usr/bin/python3}
OUT=$BUILD/bench-results
mkdir -p "$OUT"
rm -f "$OUT/adbench_ag.jsonl" "$OUT/adbench_torch.jsonl"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
"$BUILD/tests/bench/bench_adbench" --threads 1 --out "$OUT/adbench_ag.jsonl" "$@"
"$TORCH_PYTHON" "$HERE/bench_adbench_torch.py" --threads 1 --out "$OUT/adbench_torch.jsonl" "$@"
echo
"$TORCH_PYTHON" "$HERE/bench_adbench_torch.py" --table "$OUT/adbench_ag.jsonl" "$OUT/adbench_torch.jsonl" |
  tee "$OUT/adbench_table.md"
