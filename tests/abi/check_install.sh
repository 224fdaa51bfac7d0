#!/usr/bin/env bash
# Test 'install': `meson install` into a temporary root, then a host program
# is built against the installed tree only and run
#   1. with cc and `pkg-config --cflags --libs ag`,
#   2. with CMake, find_package(ag) and the imported target ag::ag,
#   3. as C++ through ag.hpp (pkg-config flags).
# Usage: check_install.sh BUILDDIR CONSUMER_DIR CC CXX
set -uo pipefail
# (grep reads all its input: with pipefail, grep -q could end the writer with SIGPIPE.)
# The installed tree alone: not the build tree that meson test puts on the path.
unset LD_LIBRARY_PATH
builddir=$1 consumer=$2 cc=$3 cxx=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"
step() { echo "== $*"; }
die() { echo "FAILED: $*"; exit 1; }

step "meson install --destdir"
meson install -C "$builddir" --no-rebuild --quiet --destdir "$root" >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; die "meson install"; }
pc=$(find "$root" -name ag.pc | head -n1)
[ -n "$pc" ] || die "no ag.pc installed"
prefix=$(sed -n 's/^prefix=//p' "$pc")
for f in include/ag/ag.h include/ag/ag.hpp; do
  [ -f "$root$prefix/$f" ] || die "$prefix/$f not installed"
done
libdir=$(dirname "$(find "$root" -name 'libag.so.0' | head -n1)")
[ -d "$libdir" ] || die "libag.so.0 not installed"
[ -n "$(find "$root" -name agConfig.cmake)" ] || die "no CMake package (agConfig.cmake) installed"

# The .pc names paths under the prefix; the sysroot points them into the temporary root.
export PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_PATH="$(dirname "$pc")"
step "pkg-config: $(pkg-config --modversion ag)"
flags=$(pkg-config --cflags --libs ag) || die "pkg-config --cflags --libs ag"
"$cc" -std=c99 -Wall -Wextra -Werror "$consumer/consumer.c" $flags -o "$tmp/consumer_pc" || die "cc with pkg-config"
LD_LIBRARY_PATH="$libdir" ldd "$tmp/consumer_pc" | grep -F "$libdir/libag.so.0" >/dev/null || die "consumer_pc does not load the installed libag"
LD_LIBRARY_PATH="$libdir" "$tmp/consumer_pc" || die "consumer built with pkg-config"

step "CMake: find_package(ag), ag::ag"
cmake -S "$consumer" -B "$tmp/cmake" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$root$prefix" \
  >"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; die "cmake configure"; }
cmake --build "$tmp/cmake" >"$tmp/cmake-build.log" 2>&1 || { cat "$tmp/cmake-build.log"; die "cmake build"; }
ldd "$tmp/cmake/consumer" | grep -F "$libdir/libag.so.0" >/dev/null || die "the CMake consumer does not load the installed libag"
"$tmp/cmake/consumer" || die "consumer built with CMake"

step "C++ through ag.hpp"
printf '%s\n' '#include <ag/ag.hpp>' \
  'int main() { ag::Context ctx(1); ag::Tensor x = ag::scalar(ctx, 3.0);' \
  '  x.set_requires_grad(); (x * x).backward(); return x.grad().item() == 6.0 && ag::library_compatible() ? 0 : 1; }' \
  >"$tmp/hpp.cpp"
"$cxx" -std=c++11 -Wall -Wextra -Werror "$tmp/hpp.cpp" $flags -o "$tmp/consumer_hpp" || die "c++ with ag.hpp"
LD_LIBRARY_PATH="$libdir" "$tmp/consumer_hpp" || die "C++ consumer"
echo "installed tree works through pkg-config, CMake and ag.hpp"
