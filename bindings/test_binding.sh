#!/usr/bin/env bash
# Runs one language binding's suite against a meson build tree: stages the
# headers and the build's ag-api.json as an include directory (the layout of
# an installed libag), then calls bindings/LANG/run_tests.sh LIBDIR INCLUDEDIR.
# Exits 77 (a skip for meson) when the language's toolchain is missing.
# usage: bindings/test_binding.sh python|rust|go BUILDDIR
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 python|rust|go BUILDDIR" >&2; exit 2; }
lang=$1
build=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)

# rustup and the Go distribution install outside the default PATH.
for dir in "$HOME/.cargo/bin" /usr/local/go/bin; do
  [ -d "$dir" ] && PATH="$PATH:$dir"
done
export PATH
case $lang in
  python) tool=python3 ;;
  rust) tool=cargo ;;
  go) tool=go ;;
  *) echo "unknown binding $lang" >&2; exit 2 ;;
esac
command -v "$tool" >/dev/null || { echo "SKIP: $tool not found, the $lang binding is not tested"; exit 77; }

stage="$build/bindings-include"
mkdir -p "$stage/ag"
cp "$root"/include/ag/*.h "$root"/include/ag/*.hpp "$stage/ag/"
cp "$build/src/ag-api.json" "$stage/ag/"
exec "$root/bindings/$lang/run_tests.sh" "$build/src" "$stage"
