#!/usr/bin/env bash
# Regenerates the committed ABI files from a built libag:
#   tests/abi/libag.symbols  the exported symbols (nm -D)
#   tests/abi/libag.abi      the abidw baseline that abidiff compares against
# Usage: tests/abi/update_baseline.sh BUILDDIR   (after ninja -C BUILDDIR)
# Run it when functions are added (ABI.md, "Changing the ABI"); review the
# diff of both files together with src/ag.map and ABI.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/abi_dump.sh"

[ $# = 1 ] || { echo "usage: $0 BUILDDIR" >&2; exit 2; }
lib="$1/src/libag.so"
[ -f "$lib" ] || { echo "error: $lib not found; build first (ninja -C $1)" >&2; exit 2; }
abi_require_debug_info "$lib"

abi_symbols "$lib" > "$here/libag.symbols"
abi_dump "$lib" "$src/include/ag" "$here/libag.abi"
echo "updated tests/abi/libag.symbols ($(wc -l < "$here/libag.symbols") symbols) and tests/abi/libag.abi"
