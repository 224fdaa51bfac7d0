#!/usr/bin/env bash
# Runs the Go binding's suite against an installed libag:
#   bindings/go/run_tests.sh LIBDIR INCLUDEDIR
# LIBDIR holds libag.so.0; INCLUDEDIR holds ag/*.h and ag/ag-api.json.
# Needs go (with cgo and gcc); fetches nothing (the module uses only the
# standard library). Prints go test -v lines, then "go: N passed, N failed".
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 LIBDIR INCLUDEDIR" >&2
  exit 2
fi
libdir=$(cd "$1" && pwd)
incdir=$(cd "$2" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

# cgo links with -lag: give it a libag.so beside LIBDIR's libag.so.0.
linkdir=$(mktemp -d)
trap 'rm -rf "$linkdir"' EXIT
ln -s "$libdir/libag.so.0" "$linkdir/libag.so"
export CGO_ENABLED=1
export CGO_CFLAGS="-I$incdir ${CGO_CFLAGS:-}"
export CGO_LDFLAGS="-L$linkdir -Wl,-rpath,$libdir ${CGO_LDFLAGS:-}"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -f "$incdir/ag/ag-api.json" ]; then
  export AG_API_JSON="$incdir/ag/ag-api.json"
fi

status=0
echo "== go vet"
go vet ./... || status=1

echo "== go test -race"
log="$linkdir/test.log"
set +e
go test -race -count=1 -v ./... 2>&1 | tee "$log"
test_status=${PIPESTATUS[0]}
set -e
[ "$test_status" -eq 0 ] || status=1

echo "== Julia package: generated signatures against ag-api.json"
jl_passed=0
jl_failed=0
if command -v python3 >/dev/null; then
  if python3 ../julia/gen/check_signatures.py --api "${AG_API_JSON:-../ag-api.json}"; then
    jl_passed=1
  else
    jl_failed=1
    status=1
  fi
else
  echo "--- SKIP: Julia signature check (python3 not found)"
fi

echo "== example (quick)"
ex_passed=0
ex_failed=0
if go run ./examples/train -quick; then ex_passed=1; else ex_failed=1; status=1; fi

passed=$(grep -c -- '--- PASS' "$log" || true)
failed=$(grep -c -- '--- FAIL' "$log" || true)
skipped=$(grep -c -- '--- SKIP' "$log" || true)
passed=$((passed + jl_passed + ex_passed))
failed=$((failed + jl_failed + ex_failed))
if [ "$test_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # the test binary failed without a --- FAIL line (build error, crash)
fi
echo "go: $passed passed, $failed failed, $skipped skipped"
exit $status
