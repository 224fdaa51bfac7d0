#!/bin/sh
# tests/bench/run_conv.sh - conv2d forward and forward + backward, ag vs
# libtorch, on (32, 3, 64, 64) with 16 3x3 filters (bench_conv.c and
# bench_conv_libtorch.cpp).
#
#   tests/bench/run_conv.sh [--repeats R] [--batch N]
#
# Builds bench_conv in release mode (AG_BENCH_BUILD, default <repo>/build-bench)
# and, when Debian's libtorch-dev is installed, bench_conv_libtorch with g++;
# then runs each in a fresh process per thread count (AG_BENCH_THREADS,
# default "1 2"; libtorch with OMP_NUM_THREADS=T, OPENBLAS_CORETYPE=Cooperlake
# and OMP_WAIT_POLICY=PASSIVE at 2 threads) and prints the JSON lines, which
# also go to <build>/bench-results/conv.jsonl.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${AG_BENCH_BUILD:-$ROOT/build-bench}
THREADS=${AG_BENCH_THREADS:-"1 2"}
TORCH_API_INC=${TORCH_API_INC:-/usr/include/torch/csrc/api/include}
CXX=${CXX:-g++}

if [ -f "$BUILD/build.ninja" ]; then
  meson configure "$BUILD" -Dbuildtype=release >/dev/null
else
  meson setup "$BUILD" "$ROOT" --buildtype=release
fi
meson compile -C "$BUILD" bench_conv

BENCH_LT=""
if [ -d "$TORCH_API_INC" ]; then
  SRC="$HERE/bench_conv_libtorch.cpp"
  BENCH_LT="$BUILD/bench_conv_libtorch"
  if [ ! -x "$BENCH_LT" ] || [ -n "$(find "$SRC" -newer "$BENCH_LT")" ]; then
    echo "run_conv.sh: building $BENCH_LT" >&2
    "$CXX" -O2 -std=c++17 -DNDEBUG -Wall -Wno-unused-variable -I"$TORCH_API_INC" "$SRC" \
      -ltorch -ltorch_cpu -lc10 -pthread -o "$BENCH_LT"
  fi
else
  echo "run_conv.sh: libtorch-dev not installed ($TORCH_API_INC missing): running the ag side only" >&2
fi

OUT="$BUILD/bench-results"
mkdir -p "$OUT"
: > "$OUT/conv.jsonl"
for T in $THREADS; do
  "$BUILD/tests/bench/bench_conv" --threads "$T" "$@" | tee -a "$OUT/conv.jsonl"
  if [ -n "$BENCH_LT" ]; then
    if [ "$T" -gt 1 ]; then export OMP_WAIT_POLICY=PASSIVE; else unset OMP_WAIT_POLICY; fi
    OMP_NUM_THREADS=$T OPENBLAS_NUM_THREADS=$T OPENBLAS_CORETYPE=Cooperlake \
      "$BENCH_LT" --threads "$T" "$@" | tee -a "$OUT/conv.jsonl"
  fi
done
