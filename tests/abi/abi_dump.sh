# Sourced by update_baseline.sh and the checks, so the committed files and
# the build's are produced by the same commands with the same flags.

# The exported dynamic symbols, "name type" per line, sorted.
abi_symbols() {
  nm -D --defined-only --format=posix "$1" | awk '{print $1" "$2}' | LC_ALL=C sort
}

# The ABI of the library's exported interface as abixml.
# --headers-dir + --drop-private-types: types not declared in the public
#   headers (the C++ classes behind the handles) are not part of the ABI.
# --short-locs, --no-*-path, --type-id-style hash: no machine paths, ids stable
#   across builds, so the baseline diff shows only real changes.
# The filter belongs here, never on abidiff: abidiff --headers-dir1/2 treats
# int32_t (a system header type) as private and hides parameter type changes.
abi_dump() {
  abidw --headers-dir "$2" --drop-private-types --exported-interfaces-only \
    --no-corpus-path --no-comp-dir-path --short-locs --type-id-style hash \
    --out-file "$3" "$1"
}

# Fails when the library has no DWARF: abidw would then see no types at all.
abi_require_debug_info() {
  if ! readelf -S "$1" | grep '\.debug_info' >/dev/null; then
    echo "error: $1 has no debug info; abidw needs it (the build adds -g in every buildtype)" >&2
    return 2
  fi
}
