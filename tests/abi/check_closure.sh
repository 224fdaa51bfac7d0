#!/usr/bin/env bash
# Test 'closure': what a host takes in with libag.
# - libag needs only libtbb and the C/C++ runtime (DT_NEEDED), and libhwy
#   where the build links it (not on x86-64 with Highway 1.0.x, whose libhwy
#   costs every process some 6 ms in a static initializer: ag answers
#   Highway's dispatch queries itself there);
# - it exports nothing but ag_* functions (no allocator, operator new/delete,
#   BLAS, protobuf or libstdc++ symbols that would interpose the host's);
# - it imports no BLAS, LAPACK, protobuf, OpenMP or allocator-replacement
#   symbols (none of those libraries is dragged into the host process);
# - stripped, it stays under 4.5 MB (0.2's ~90 new ops took it from 3.0 to
#   3.56 MB: the special functions' per-target kernels, the linear algebra
#   kernels and the ops' code; 40 more ops (sorts, scans, distances, eigen,
#   SVD, QR), GEMM micro-kernels per row count and the replay's recorded
#   kernel calls took it to 4.0 MB; the GEMM's narrow, dot and k-split
#   paths to 4.28 MB (MB = MiB here); the cap is there to make growth a decision).
# Usage: check_closure.sh LIBAG_SO with-libhwy|without-libhwy
set -uo pipefail
lib=$1
hwy=${2:-with-libhwy}
failed=0
fail() { echo "FAILED: $*"; failed=1; }

allowed_needed='^(libtbb\.so\.12|libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libc\.so\.6)$'
[ "$hwy" = without-libhwy ] || allowed_needed='^(libhwy\.so\.1|'"${allowed_needed#^(}"
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for n in $needed; do
  [[ $n =~ $allowed_needed ]] || fail "libag needs $n, which is not in its documented runtime closure"
done

# Defined dynamic symbols other than the ag_* functions and version nodes (AG_x.y).
stray=$(nm -D --defined-only "$lib" | awk '$2 != "A" && $3 !~ /^ag_[a-z0-9_]+@@AG_[0-9.]+$/ {print $3}')
[ -z "$stray" ] || fail "libag exports symbols besides its ag_* functions:" $stray

# Imports that would tie the host to a BLAS, protobuf, OpenMP or a replaced allocator.
clash='^(cblas_|[sdcz]gemm_?$|[sdcz]gemv_?$|[sdcz]axpy_?$|lapack|LAPACKE_|openblas_|mkl_|_ZN6google8protobuf|GOMP_|omp_|__kmpc_|je_|tc_|mi_|jemalloc|tcmalloc)'
bad=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | grep -E "$clash")
[ -z "$bad" ] || fail "libag imports symbols that could clash with a host:" $bad

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
strip -o "$tmp" "$lib"
size=$(stat -c %s "$tmp")
[ "$size" -lt $((18 * 256 * 1024)) ] || fail "stripped libag is $size bytes, over 4.5 MB"

echo "libag: stripped $size bytes; needs:" $needed
[ "$failed" = 0 ] && echo "runtime closure ok"
exit $failed
