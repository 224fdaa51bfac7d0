#!/usr/bin/env bash
# Test 'headers-<compiler>': every public C header compiles on its own as
# C89, C99, C11, C17 and as C++98, C++11, C++17, C++20, and ag.hpp as C++11
# to C++20, all with -Wall -Wextra -Wpedantic -Werror. Catches a missing
# include, a // comment or a C99-only construct in a C89 header, a macro that
# warns in C++, and so on.
# Usage: check_headers.sh CC CXX INCLUDE_DIR
set -uo pipefail
cc=$1 cxx=$2 include_dir=$3
flags=(-Wall -Wextra -Wpedantic -Werror -fsyntax-only -I "$include_dir")
failed=0 runs=0

compile() {  # compiler language std header
  local out
  runs=$((runs + 1))
  if ! out=$(printf '#include "ag/%s"\n' "$4" | "$1" -x "$2" -std="$3" "${flags[@]}" - 2>&1); then
    echo "FAILED: ag/$4 as $3 with $(basename "$1"):"
    printf '%s\n' "$out" | head -n 20
    failed=$((failed + 1))
  fi
}

for path in "$include_dir"/ag/*.h; do
  h=$(basename "$path")
  for std in c89 c99 c11 c17; do compile "$cc" c "$std" "$h"; done
  for std in c++98 c++11 c++17 c++20; do compile "$cxx" c++ "$std" "$h"; done
done
for path in "$include_dir"/ag/*.hpp; do
  h=$(basename "$path")
  for std in c++11 c++14 c++17 c++20; do compile "$cxx" c++ "$std" "$h"; done
done

echo "$((runs - failed)) of $runs header compilations passed ($(basename "$cc"), $(basename "$cxx"))"
[ "$failed" = 0 ]
