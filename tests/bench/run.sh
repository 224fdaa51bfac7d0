#!/bin/sh
# tests/bench/run.sh - ag next to libtorch on the workloads of WORKLOADS.md
# (everything it needs is in this directory).
#
#   tests/bench/run.sh [--quick] [more args for every benchmark, e.g. --quiet-max-wait 30]
#
# 0. decides, before building anything, whether libtorch-dev is installed
#    (its headers under TORCH_API_INC); without it the libtorch side is
#    skipped with a message, and ag runs alone;
# 1. builds ag in release mode in its own build dir (AG_BENCH_BUILD, default
#    <repo>/build-bench) and bench_ag, and bench_libtorch.cpp with g++;
# 2. for each thread count (AG_BENCH_THREADS, default "1 2") and workload
#    (AG_BENCH_WORKLOADS, default "a b c d e f g") runs bench_ag, then
#    bench_libtorch, each in a fresh process with OMP_NUM_THREADS=T
#    OPENBLAS_NUM_THREADS=T (libtorch also OPENBLAS_CORETYPE=Cooperlake, and
#    OMP_WAIT_POLICY=PASSIVE at 2 threads); with AG_BENCH_PYTORCH=1 also the
#    PyTorch twin bench_torch.py (system python3 with python3-torch);
#    with AG_BENCH_PAIRS=K (default 1) it does so K times in turn, so that a
#    change of the machine's speed between minutes (shared hosts) reaches
#    both sides: the table then shows medians over the K runs and, as the
#    ratio, the median of the K per-pair ratios;
# 3. prints the side-by-side table (compare.py), also in
#    <build>/bench-results/table.md (and table_pytorch.md);
# 4. with libtorch, at 1 thread, for a, b, d and e: bench_duel.cpp, both
#    engines in one process in turn (table_duel.md, duel.jsonl), the ratios
#    to hold against targets on a machine whose speed drifts.
# Exit status: nonzero when a benchmark failed or a checksum did not match.
#
# libtorch elsewhere than Debian's paths: point TORCH_API_INC at its
# torch/csrc/api/include and set TORCH_CXXFLAGS (include flags) and
# TORCH_LIBS (link flags, with an rpath if it is not on the loader's path).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${AG_BENCH_BUILD:-$ROOT/build-bench}
THREADS=${AG_BENCH_THREADS:-"1 2"}
WORKLOADS=${AG_BENCH_WORKLOADS:-"a b c d e f g"}
PAIRS=${AG_BENCH_PAIRS:-1}
case "$PAIRS" in
  '' | *[!0-9]* | 0) echo "run.sh: AG_BENCH_PAIRS must be a positive integer, got '$PAIRS'" >&2; exit 2 ;;
esac
TORCH_API_INC=${TORCH_API_INC:-/usr/include/torch/csrc/api/include}
TORCH_CXXFLAGS=${TORCH_CXXFLAGS:-"-I$TORCH_API_INC"}
TORCH_LIBS=${TORCH_LIBS:-"-ltorch -ltorch_cpu -lc10"}
CXX=${CXX:-g++}
CC=${CC:-cc}
PYTHON=${PYTHON:-python3}
TORCH_PYTHON=${TORCH_PYTHON:-/usr/bin/python3}

# ---------------------------------------------------------------- what can run
WITH_LT=0
if [ -d "$TORCH_API_INC" ]; then
  WITH_LT=1
else
  echo "run.sh: libtorch-dev is not installed ($TORCH_API_INC is missing): skipping the libtorch side," >&2
  echo "run.sh: ag runs alone (apt-get install libtorch-dev adds the comparison)" >&2
fi
WITH_PT=0
if [ "${AG_BENCH_PYTORCH:-0}" = 1 ]; then
  if "$TORCH_PYTHON" -c 'import torch, numpy' 2>/dev/null; then
    WITH_PT=1
  else
    echo "run.sh: AG_BENCH_PYTORCH=1 but $TORCH_PYTHON cannot import torch and numpy (python3-torch): skipping PyTorch" >&2
  fi
fi

# ---------------------------------------------------------------- build
if [ -f "$BUILD/build.ninja" ]; then
  meson configure "$BUILD" -Dbuildtype=release >/dev/null
else
  meson setup "$BUILD" "$ROOT" --buildtype=release
fi
meson compile -C "$BUILD" bench_ag
BENCH_AG="$BUILD/tests/bench/bench_ag"
BENCH_LT="$BUILD/bench_libtorch"
if [ "$WITH_LT" = 1 ]; then
  SRC="$HERE/bench_libtorch.cpp"
  if [ ! -x "$BENCH_LT" ] || [ -n "$(find "$SRC" "$HERE/libtorch_workloads.h" -newer "$BENCH_LT")" ]; then
    echo "run.sh: building $BENCH_LT" >&2
    # shellcheck disable=SC2086  # the flag lists split on purpose
    "$CXX" -O2 -std=c++17 -DNDEBUG -Wall -Wno-unused-variable $TORCH_CXXFLAGS "$SRC" \
      $TORCH_LIBS -pthread -o "$BENCH_LT"
  fi
  # bench_duel: ag's side is bench_ag's code, linked to the library just built.
  BENCH_DUEL="$BUILD/bench_duel"
  echo "run.sh: building $BENCH_DUEL" >&2
  "$CC" -O2 -std=c11 -I"$ROOT/include" -c "$HERE/bench_harness.c" -o "$BUILD/bench_duel_harness.o"
  "$CC" -O2 -std=c11 -I"$ROOT/include" -c "$HERE/bench_mlp.c" -o "$BUILD/bench_duel_mlp.o"
  # shellcheck disable=SC2086
  "$CXX" -O2 -std=c++17 -DNDEBUG -Wall -I"$ROOT/include" $TORCH_CXXFLAGS "$HERE/bench_duel.cpp" \
    "$BUILD/bench_duel_harness.o" "$BUILD/bench_duel_mlp.o" -L"$BUILD/src" -lag -Wl,-rpath,"$BUILD/src" \
    $TORCH_LIBS -lm -pthread -o "$BENCH_DUEL"
fi

# ---------------------------------------------------------------- run
OUT="$BUILD/bench-results"
mkdir -p "$OUT"
status=0
# run NAME THREADS WORKLOAD command...: one fresh process, JSON lines to the file of NAME
run() {
  name=$1 t=$2 w=$3
  shift 3
  echo "run.sh: threads=$t workload=$w: $name" >&2
  if ! env OMP_NUM_THREADS="$t" OPENBLAS_NUM_THREADS="$t" "$@" --threads "$t" --only "$w" \
      --out "$OUT/${name}_t$t.jsonl" >/dev/null; then
    echo "run.sh: $name failed (threads=$t workload=$w)" >&2
    status=1
  fi
}
for T in $THREADS; do
  # Fresh files; a side that does not run leaves none behind, so no table
  # shows lines of an earlier run.
  : >"$OUT/ag_t$T.jsonl"
  rm -f "$OUT/libtorch_t$T.jsonl" "$OUT/pytorch_t$T.jsonl" "$OUT/table_pytorch.md"
  [ "$WITH_LT" = 1 ] && : >"$OUT/libtorch_t$T.jsonl"
  [ "$WITH_PT" = 1 ] && : >"$OUT/pytorch_t$T.jsonl"
  # OpenBLAS does not recognise some AVX-512 cores and falls back to slow
  # kernels; with 2 threads libtorch's OpenMP workers must not spin. At 1
  # thread OpenMP's own default stays.
  POLICY=
  [ "$T" -ge 2 ] && POLICY=OMP_WAIT_POLICY=PASSIVE
  for W in $WORKLOADS; do
    P=0
    while [ "$P" -lt "$PAIRS" ]; do
      P=$((P + 1))
      run ag "$T" "$W" "$BENCH_AG" "$@"
      # shellcheck disable=SC2086  # an empty POLICY is no argument
      [ "$WITH_LT" = 1 ] && run libtorch "$T" "$W" env OPENBLAS_CORETYPE=Cooperlake $POLICY "$BENCH_LT" "$@"
      # shellcheck disable=SC2086
      [ "$WITH_PT" = 1 ] && run pytorch "$T" "$W" env OPENBLAS_CORETYPE=Cooperlake $POLICY \
        "$TORCH_PYTHON" "$HERE/bench_torch.py" "$@"
    done
  done
done

# ---------------------------------------------------------------- tables
TLIST=$(echo "$THREADS" | tr -s ' ' ',')
"$PYTHON" "$HERE/compare.py" "$OUT" --threads "$TLIST" --out "$OUT/table.md" || status=1
if [ "$WITH_PT" = 1 ]; then
  "$PYTHON" "$HERE/compare.py" "$OUT" --baseline pytorch --threads "$TLIST" --out "$OUT/table_pytorch.md" || status=1
fi
DUEL=
for W in $WORKLOADS; do
  case "$W" in a | b | d | e) DUEL="$DUEL${DUEL:+,}$W" ;; esac
done
if [ "$WITH_LT" = 1 ] && [ -n "$DUEL" ] && echo " $THREADS " | grep -q " 1 "; then
  echo "run.sh: $DUEL with both engines in one process (bench_duel)" >&2
  : >"$OUT/duel.jsonl"
  env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Cooperlake "$BENCH_DUEL" --only "$DUEL" \
    --out "$OUT/duel.jsonl" \
    | tee "$OUT/table_duel.md" || status=1
fi
echo "run.sh: JSON lines and tables in $OUT" >&2
exit $status
