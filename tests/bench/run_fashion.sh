#!/bin/sh
# Fashion-MNIST training, ag beside PyTorch in one run: ms per training step
# and test accuracy for each model at each thread count, both engines
# starting from the same initial parameters (bench_fashion --init-out, read
# by bench_fashion_torch.py --init), and the ratio ag / PyTorch.
#
# Builds ag in release mode (-O2, LTO, NDEBUG) in its own build dir first.
# PyTorch runs with torch.set_num_threads(T) and OMP_NUM_THREADS=T
# (OMP_WAIT_POLICY=PASSIVE at 2 threads, as run.sh); its BLAS is printed.
#
# Usage: run_fashion.sh [EPOCHS]       (default 2)
#   AG_BENCH_BUILD    build dir (default <repo>/build-bench)
#   AG_BENCH_THREADS  thread counts (default "1 2")
#   AG_BENCH_MODELS   models (default "mlp cnn")
#   AG_BENCH_STEPS    stop each run after this many steps (default: whole epochs)
#   TORCH_PYTHON      Python with torch and numpy (default /usr/bin/python3)
#   FASHION_MNIST_DIR the IDX files (default Debian's dataset-fashion-mnist)
#   AG_BENCH_JOBS     parallel compile jobs (default: meson's)
# JSON lines go to <build>/fashion-results/results.jsonl; the table to stdout.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${AG_BENCH_BUILD:-$ROOT/build-bench}
EPOCHS=${1:-2}
THREADS=${AG_BENCH_THREADS:-"1 2"}
MODELS=${AG_BENCH_MODELS:-"mlp cnn"}
STEPS=${AG_BENCH_STEPS:-0}
TORCH_PYTHON=${TORCH_PYTHON:-/usr/bin/python3}
DATA=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}

if ! "$TORCH_PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  echo "run_fashion.sh: $TORCH_PYTHON cannot import torch and numpy (Debian: python3-torch); set TORCH_PYTHON" >&2
  exit 1
fi

if [ -f "$BUILD/build.ninja" ]; then
  meson configure "$BUILD" -Dbuildtype=release -Db_ndebug=true >/dev/null
else
  meson setup "$BUILD" "$ROOT" --buildtype=release -Db_ndebug=true
fi
meson compile -C "$BUILD" ${AG_BENCH_JOBS:+-j "$AG_BENCH_JOBS"} bench_fashion examples/fashion_mnist

OUT="$BUILD/fashion-results"
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: >"$RESULTS"
"$TORCH_PYTHON" - <<'PY' >&2
import torch
cfg = [l.strip() for l in torch.__config__.show().splitlines() if "BLAS_INFO" in l]
blas = cfg[0].split("BLAS_INFO=")[1].split(",")[0] if cfg else "?"
print("run_fashion.sh: torch %s, BLAS_INFO=%s" % (torch.__version__, blas))
PY
for blas in /usr/lib/x86_64-linux-gnu/libblas.so.3 /usr/lib/aarch64-linux-gnu/libblas.so.3; do
  [ -e "$blas" ] && echo "run_fashion.sh: libblas.so.3 -> $(readlink -f "$blas")" >&2
done

for model in $MODELS; do
  for t in $THREADS; do
    init="$OUT/init_$model.safetensors"
    echo "run_fashion.sh: $model, $t thread(s), $EPOCHS epoch(s)" >&2
    "$BUILD/tests/bench/bench_fashion" --model "$model" --data "$DATA" --epochs "$EPOCHS" --steps "$STEPS" \
      --threads "$t" --init-out "$init" >>"$RESULTS"
    wait_policy=ACTIVE
    [ "$t" -gt 1 ] && wait_policy=PASSIVE
    OMP_NUM_THREADS=$t OMP_WAIT_POLICY=$wait_policy "$TORCH_PYTHON" "$HERE/bench_fashion_torch.py" \
      --model "$model" --data "$DATA" --epochs "$EPOCHS" --steps "$STEPS" --threads "$t" --init "$init" >>"$RESULTS"
  done
done

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ag = {(r["model"], r["threads"]): r for r in rows if r["engine"] == "ag"}
pt = {(r["model"], r["threads"]): r for r in rows if r["engine"] != "ag"}
print("| model | threads | steps | ag ms/step | PyTorch ms/step | ag / PyTorch | ag CPU ms/step | PyTorch CPU ms/step "
      "| ag test acc | PyTorch test acc |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for key in ag:
    a, p = ag[key], pt.get(key)
    if p is None:
        continue
    print("| %s | %d | %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.4f | %.4f |" % (
        key[0], key[1], a["steps"], a["ms_per_step"], p["ms_per_step"], a["ms_per_step"] / p["ms_per_step"],
        a["cpu_ms_per_step"], p["cpu_ms_per_step"], a["test_accuracy"], p["test_accuracy"]))
PY
