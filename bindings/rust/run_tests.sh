#!/usr/bin/env bash
# Runs the Rust binding's suite against a built libag:
#   bindings/rust/run_tests.sh LIBDIR INCLUDEDIR
# LIBDIR holds libag.so.0; INCLUDEDIR/ag holds the headers and ag-api.json.
# Builds the workspace, checks the generated files against ag-api.json, runs
# cargo test (workspace, doc tests included), clippy with -D warnings and the
# example in quick mode, prints cargo's summaries and a combined
# "rust: N passed, N failed, N skipped" line; exits non-zero on any failure.
set -u -o pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 LIBDIR INCLUDEDIR" >&2
    exit 2
fi
libdir=$(cd "$1" && pwd) || exit 2
includedir=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 2

if [ ! -e "$libdir/libag.so.0" ]; then
    echo "run_tests.sh: no libag.so.0 in $libdir" >&2
    exit 2
fi
if ! command -v cargo >/dev/null; then
    echo "run_tests.sh: cargo not found (install Rust with rustup)" >&2
    exit 2
fi

export AG_LIB_DIR="$libdir"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CARGO_TERM_COLOR=never
# One build job at a time: the machines are small and shared.
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"

failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

step() {
    echo "== $*"
    "$@" 2>&1 | tee -a "$log"
    local rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
        echo "== FAILED ($rc): $*"
        failed=1
    fi
}

# A notice (not a failure: doc text may differ) when the installed
# description would generate other bindings than the committed ones; the
# tests compare layouts, constants and ops with the loaded library itself.
if [ -f "$includedir/ag/ag-api.json" ] && ! cargo run -q -p ag-gen -- --check "$includedir/ag/ag-api.json" >/dev/null 2>&1; then
    echo "note: $includedir/ag/ag-api.json differs from bindings/ag-api.json in what it generates"
fi
step cargo test --workspace --no-fail-fast
step cargo clippy --workspace --all-targets -- -D warnings
step cargo run -q -p ag --example train_mlp -- --quick

total() { # sums the number before $1 over cargo's "test result:" lines
    grep -E '^test result:' "$log" | grep -oE "[0-9]+ $1" | awk '{ s += $1 } END { print s + 0 }'
}
passed=$(total passed)
failures=$(total failed)
skipped=$(total ignored)
if [ "$failed" -ne 0 ] && [ "$failures" -eq 0 ]; then
    failures=1 # a build, clippy or example failure counts as one
fi
echo "rust: $passed passed, $failures failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$failures" -eq 0 ]
