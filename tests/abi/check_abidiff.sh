#!/usr/bin/env bash
# Test 'abidiff': the ABI of the built libag against the committed baseline
# tests/abi/libag.abi. Any non-zero abidiff result fails: a changed parameter
# type or struct layout gives 4 (ABI change), a removed function 12; gating
# on the "incompatible" bit (8) alone would let the first two through.
# Added functions are the 'symbols' test's business (--no-added-syms).
# Usage: check_abidiff.sh LIBAG_SO INCLUDE_DIR BASELINE OUT_ABI
set -uo pipefail
. "$(dirname "$0")/abi_dump.sh"
lib=$1 include_dir=$2 baseline=$3 current=$4

abi_require_debug_info "$lib" || exit 2
abi_dump "$lib" "$include_dir" "$current" || { echo "FAILED: abidw could not read $lib"; exit 2; }
abidiff --no-added-syms "$baseline" "$current"
rc=$?
if [ $rc = 0 ]; then
  echo "abidiff: no ABI change against $(basename "$baseline")"
  exit 0
fi
echo "FAILED: abidiff exit $rc (bits: 1 error, 2 usage, 4 ABI change, 8 incompatible change)."
echo "A break must not be released within an ABI epoch (ABI.md, section 7). If the change is"
echo "intended and unreleased, run tests/abi/update_baseline.sh BUILDDIR and commit the result."
exit 1
