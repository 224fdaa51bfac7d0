#!/usr/bin/env bash
# The Rust binding's test binaries under valgrind (memcheck): any invalid
# access, or a block definitely lost (by libag or by the binding), fails.
#   bindings/rust/run_leak_checks.sh LIBDIR INCLUDEDIR
# Each binary runs its tests on one thread (--test-threads=1); the doc tests
# and the example are left to run_tests.sh. Needs valgrind and cargo.
set -u -o pipefail
[ $# -eq 2 ] || { echo "usage: $0 LIBDIR INCLUDEDIR" >&2; exit 2; }
libdir=$(cd "$1" && pwd) || exit 2
cd "$(dirname "$0")" || exit 2
command -v valgrind >/dev/null || { echo "SKIP: valgrind not found"; exit 77; }
command -v cargo >/dev/null || { echo "SKIP: cargo not found"; exit 77; }
export AG_LIB_DIR="$libdir"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"
export CARGO_TERM_COLOR=never
bins=$(cargo test -p ag --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])')
[ -n "$bins" ] || { echo "cargo test --no-run built no test binary" >&2; exit 1; }
status=0
for bin in $bins; do
  echo "== valgrind $(basename "$bin")"
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite "$bin" --test-threads=1 -q 2>&1 | tail -n 30
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "== FAILED ($rc): $(basename "$bin")"; status=1; }
done
exit $status
