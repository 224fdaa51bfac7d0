#!/usr/bin/env bash
# Leak and race checks of the Go binding against a built libag:
#   bindings/go/run_leak_checks.sh LIBDIR INCLUDEDIR
# The memory, cleanup (release by the garbage collector) and callback-handle
# tests under the race detector, three times over (GC timing varies).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 LIBDIR INCLUDEDIR" >&2; exit 2; }
command -v go >/dev/null || { echo "SKIP: go not found"; exit 77; }
libdir=$(cd "$1" && pwd)
incdir=$(cd "$2" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")"
linkdir=$(mktemp -d)
trap 'rm -rf "$linkdir"' EXIT
ln -s "$libdir/libag.so.0" "$linkdir/libag.so"
export CGO_ENABLED=1
export CGO_CFLAGS="-I$incdir ${CGO_CFLAGS:-}"
export CGO_LDFLAGS="-L$linkdir -Wl,-rpath,$libdir ${CGO_LDFLAGS:-}"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec go test -race -count=3 -v -run 'Memory|Cleanup|Finalizer|Release|Leak|Handles' .
