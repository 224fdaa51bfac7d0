#!/usr/bin/env bash
# Builds the libFuzzer harness (clang, ASan + UBSan, coverage) in its own
# build directory and fuzzes the C API for the given time.
#
#   tests/fuzz/run.sh [seconds] [build-dir]      (defaults: 60, build-fuzz)
#
# New inputs go to <build-dir>/fuzz-corpus (the committed seeds in
# tests/fuzz/corpus are read, not written); findings to
# <build-dir>/fuzz-findings/. Replay one with
#   <build-dir>/tests/fuzz/fuzz_api_program <file>
# and keep it as tests/regress/<name>.bin (listed in tests/c_api/meson.build)
# once fixed. Needs clang and libclang-rt-14-dev (or the matching version).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
dir=${2:-build-fuzz}
if [ ! -f "$dir/build.ninja" ]; then
  # -O0: at -O1 clang with ASan, UBSan and coverage takes over ten minutes
  # on the SIMD kernels alone, at -O0 seconds; the fuzzer's tensors are small.
  # A static library: a shared libag linked with --no-undefined cannot take
  # clang's static sanitizer runtime.
  CC=clang CXX=clang++ meson setup "$dir" -Dfuzz=true -Dtests=false -Dexamples=false \
    -Ddefault_library=static -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=false \
    -Doptimization=0 -Ddebug=true >/dev/null
fi
ninja -C "$dir" -j"${FUZZ_BUILD_JOBS:-2}" tests/fuzz/fuzz_api_program >/dev/null
mkdir -p "$dir/fuzz-corpus" "$dir/fuzz-findings"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# -timeout finds hangs: at -O0 a program of transcendental ops on the largest
# tensors the harness allows takes tens of seconds.
exec "$dir/tests/fuzz/fuzz_api_program" -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$dir/fuzz-findings/" \
  "$dir/fuzz-corpus" tests/fuzz/corpus
