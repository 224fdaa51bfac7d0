#!/usr/bin/env bash
# Test 'symbols': the symbols libag exports (nm -D) equal tests/abi/libag.symbols.
# Any addition or removal fails; the diff is what a reviewer looks at.
# Usage: check_symbols.sh LIBAG_SO COMMITTED_LIST
set -uo pipefail
. "$(dirname "$0")/abi_dump.sh"
lib=$1 list=$2
if diff -u --label "committed $(basename "$list")" --label "exported by $(basename "$lib")" \
     "$list" <(abi_symbols "$lib"); then
  echo "exported symbols match $(basename "$list") ($(wc -l < "$list") symbols)"
  exit 0
fi
echo "FAILED: the exported symbols differ from the committed list (- committed, + exported)."
echo "If the change is intended, run tests/abi/update_baseline.sh BUILDDIR and commit the result."
exit 1
