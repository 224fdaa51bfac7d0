#!/bin/sh
# tests/bench/run.sh - ag vs libtorch on the workloads of ../shared/bench/WORKLOADS.md.
#
#   tests/bench/run.sh [extra args for both benchmarks, e.g. --quick or --quiet-max-wait 30]
#
# 1. configures/builds ag in release mode in its own build dir (default
#    <repo>/build-bench, override with AG_BENCH_BUILD) and builds bench_ag;
# 2. if Debian's libtorch-dev is installed (/usr/include/torch/csrc/api/include),
#    compiles bench_libtorch.cpp from the shared bench dir (default <repo>/../shared/bench,
#    override with AG_BENCH_SHARED) with build.sh's flags into the build dir;
# 3. for each thread count (AG_BENCH_THREADS, default "1 2") and each workload
#    (AG_BENCH_WORKLOADS, default "a b c d e f g") runs bench_ag and then
#    bench_libtorch, each in a fresh process, with OMP_NUM_THREADS=T
#    OPENBLAS_NUM_THREADS=T (libtorch also OPENBLAS_CORETYPE=Cooperlake, and
#    OMP_WAIT_POLICY=PASSIVE for T=2); JSON lines go to
#    <build>/bench-results/{ag,libtorch}_t<T>.jsonl;
# 4. prints the side-by-side table (compare.py), also written to
#    <build>/bench-results/table.md.
# Exit status: nonzero if a benchmark failed or a checksum did not match.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${AG_BENCH_BUILD:-$ROOT/build-bench}
SHARED=${AG_BENCH_SHARED:-$ROOT/../shared/bench}
THREADS=${AG_BENCH_THREADS:-"1 2"}
WORKLOADS=${AG_BENCH_WORKLOADS:-"a b c d e f g"}
TORCH_API_INC=${TORCH_API_INC:-/usr/include/torch/csrc/api/include}
CXX=${CXX:-g++}
PYTHON=${PYTHON:-python3}

# ---------------------------------------------------------------- build ag
if [ -f "$BUILD/build.ninja" ]; then
  meson configure "$BUILD" -Dbuildtype=release >/dev/null
else
  meson setup "$BUILD" "$ROOT" --buildtype=release
fi
meson compile -C "$BUILD" bench_ag
BENCH_AG="$BUILD/tests/bench/bench_ag"

# ---------------------------------------------------------------- build libtorch side
BENCH_LT=""
if [ -d "$TORCH_API_INC" ]; then
  SRC="$SHARED/bench_libtorch.cpp"
  if [ ! -f "$SRC" ]; then
    echo "run.sh: libtorch-dev is installed but $SRC is missing (set AG_BENCH_SHARED)" >&2
    exit 1
  fi
  BENCH_LT="$BUILD/bench_libtorch"
  if [ ! -x "$BENCH_LT" ] || [ -n "$(find "$SRC" -newer "$BENCH_LT")" ]; then
    echo "run.sh: building $BENCH_LT"
    # the flags of $SHARED/build.sh
    "$CXX" -O2 -std=c++17 -DNDEBUG -Wall -Wno-unused-variable \
      -I"$TORCH_API_INC" "$SRC" \
      -ltorch -ltorch_cpu -lc10 -pthread \
      -o "$BENCH_LT"
  fi
else
  echo "run.sh: libtorch-dev not installed ($TORCH_API_INC missing): running the ag side only" >&2
fi

# ---------------------------------------------------------------- run
OUT="$BUILD/bench-results"
mkdir -p "$OUT"
status=0
for T in $THREADS; do
  AG_JSON="$OUT/ag_t$T.jsonl"
  LT_JSON="$OUT/libtorch_t$T.jsonl"
  : >"$AG_JSON"
  [ -n "$BENCH_LT" ] && : >"$LT_JSON"
  for W in $WORKLOADS; do
    echo "run.sh: threads=$T workload=$W: ag" >&2
    if ! env OMP_NUM_THREADS="$T" OPENBLAS_NUM_THREADS="$T" \
        "$BENCH_AG" --threads "$T" --only "$W" --out "$AG_JSON" "$@" >/dev/null; then
      echo "run.sh: bench_ag failed (threads=$T workload=$W)" >&2
      status=1
    fi
    if [ -n "$BENCH_LT" ]; then
      echo "run.sh: threads=$T workload=$W: libtorch" >&2
      SEL="--only $W"
      [ "$W" = f ] && SEL="--rss"  # bench_libtorch's spelling of workload f
      WAIT_POLICY=""
      [ "$T" -ge 2 ] && WAIT_POLICY="OMP_WAIT_POLICY=PASSIVE"
      # shellcheck disable=SC2086  # SEL and WAIT_POLICY split on purpose
      if ! env OMP_NUM_THREADS="$T" OPENBLAS_NUM_THREADS="$T" OPENBLAS_CORETYPE=Cooperlake $WAIT_POLICY \
          "$BENCH_LT" --threads "$T" $SEL --out "$LT_JSON" "$@" >/dev/null; then
        echo "run.sh: bench_libtorch failed (threads=$T workload=$W)" >&2
        status=1
      fi
    fi
  done
done

# ---------------------------------------------------------------- table
TLIST=$(echo "$THREADS" | tr -s ' ' ',')
if ! "$PYTHON" "$HERE/compare.py" "$OUT" --threads "$TLIST" --out "$OUT/table.md"; then
  status=1
fi
echo "run.sh: JSON lines and table.md in $OUT" >&2
exit $status
