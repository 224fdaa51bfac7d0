#!/usr/bin/env bash
# Test 'install-user-prefix': what the README tells a new user to do.
#   meson setup B --prefix=$HOME/.local -Ddefault_library=both -Dtests=false -Dexamples=false
#   meson install -C B                      (no --destdir, no root)
#   cc fit_line.c $(pkg-config --cflags --libs ag)   runs with no LD_LIBRARY_PATH
#   cc fit_line.c $(pkg-config --cflags --libs --static ag)   with libag.a
# HOME is a temporary directory. The library is compiled once more, at -O0
# (the optimisation level does not change what is installed).
# Usage: check_install_prefix.sh SRC_ROOT FIT_LINE_C CC
set -uo pipefail
unset LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
src=$1 example=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home"
mkdir -p "$HOME"
prefix="$HOME/.local"
step() { echo "== $*"; }
die() { echo "FAILED: $*"; exit 1; }
run_logged() {  # name, command...: the log is shown only on failure
  local name=$1; shift
  "$@" >"$tmp/$name.log" 2>&1 || { tail -n 60 "$tmp/$name.log"; die "$name"; }
}

step "meson setup --prefix=$prefix (library alone, shared and static)"
run_logged setup meson setup "$tmp/build" "$src" --prefix="$prefix" --buildtype=debug \
  -Ddefault_library=both -Dtests=false -Dexamples=false
step "build and meson install"
run_logged build meson compile -C "$tmp/build"
run_logged install meson install -C "$tmp/build"

pc=$(find "$prefix" -name ag.pc | head -n1)
[ -n "$pc" ] || die "no ag.pc under $prefix"
libdir=$(dirname "$(dirname "$pc")")
[ -e "$libdir/libag.so.0" ] || die "libag.so.0 is not beside pkgconfig/ag.pc ($libdir)"
[ -e "$libdir/libag.a" ] || die "libag.a not installed"
echo "libdir: ${libdir#"$prefix"/}"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
libs=$(pkg-config --libs ag) || die "pkg-config --libs ag"
echo "pkg-config --libs ag: $libs"
case " $libs " in *" -Wl,-rpath,$libdir "*) ;; *) die "no rpath to $libdir in Libs";; esac

step "shared: cc with pkg-config, run without LD_LIBRARY_PATH"
# shellcheck disable=SC2046  # pkg-config output splits on purpose
"$cc" -std=c11 -Wall -Wextra -Werror "$example" $(pkg-config --cflags --libs ag) -o "$tmp/fit_shared" \
  || die "cc with pkg-config --libs ag"
ldd "$tmp/fit_shared" | grep -F "$libdir/libag.so.0" >/dev/null || die "fit_shared does not load $libdir/libag.so.0"
"$tmp/fit_shared" >"$tmp/shared.out" || { cat "$tmp/shared.out"; die "fit_shared failed"; }
grep '^fitted y = ' "$tmp/shared.out" || die "fit_shared printed no fit"

step "static: cc with pkg-config --static"
# With both forms installed, -lag would take libag.so; -l:libag.a asks for the
# archive while the rest of the line (Libs.private, Requires.private) is ag.pc's.
static_flags=$(pkg-config --cflags --libs --static ag | sed 's/\(^\| \)-lag\( \|$\)/\1-l:libag.a\2/')
echo "static flags: $static_flags"
case "$static_flags" in *-l:libag.a*) ;; *) die "no -lag in pkg-config --libs --static ag";; esac
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror "$example" $static_flags -o "$tmp/fit_static" \
  || die "cc with pkg-config --static (Libs.private incomplete?)"
if ldd "$tmp/fit_static" | grep -F libag.so >/dev/null; then die "fit_static loads libag.so"; fi
"$tmp/fit_static" >"$tmp/static.out" || { cat "$tmp/static.out"; die "fit_static failed"; }
grep '^fitted y = ' "$tmp/static.out" || die "fit_static printed no fit"
echo "user-prefix install works: shared with rpath, static through Libs.private"
