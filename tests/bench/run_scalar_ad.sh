#!/bin/sh
# tests/bench/run_scalar_ad.sh - workload a (and a', replayed) beside the
# scalar AD tools: ag's bench_ag and bench_replay, then bench_scalar_ad
# (ADOL-C, Sacado), in turn, ROUNDS times (default 3), so that machine noise
# hits every tool alike; prints the median over rounds of each figure.
#
#   tests/bench/run_scalar_ad.sh [BUILD_DIR]     (default: build-bench, release)
#
# bench_scalar_ad exists only where libadolc-dev or libtrilinos-sacado-dev
# (with libtrilinos-kokkos-dev) is installed; without it ag runs alone.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:-$ROOT/build-bench}
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-python3}

[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" "$ROOT" --buildtype=release
ninja -C "$BUILD" tests/bench/bench_ag tests/bench/bench_replay
B=$BUILD/tests/bench
HAVE_TOOLS=0
if ninja -C "$BUILD" tests/bench/bench_scalar_ad >/dev/null 2>&1; then HAVE_TOOLS=1; fi
[ $HAVE_TOOLS = 1 ] || echo "run_scalar_ad.sh: neither ADOL-C nor Sacado is installed: ag runs alone" >&2

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
i=0
while [ $i -lt "$ROUNDS" ]; do
  "$B/bench_ag" --threads 1 --only a >>"$OUT"
  "$B/bench_replay" --threads 1 --only a --reps 21 >>"$OUT"
  [ $HAVE_TOOLS = 0 ] || "$B/bench_scalar_ad" --reps 21 >>"$OUT"
  i=$((i + 1))
done

"$PYTHON" - "$OUT" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    d = json.loads(line)
    if d.get("workload") != "a_scalar_chain":
        continue
    impl = d["impl"]
    if "series" in d:  # bench_ag
        for k in ("fwd", "bwd", "total"):
            rows.setdefault(("ag eager (f32)", k), []).append(d["series"][k]["median_ns"] / d["ops"])
    elif "replay_ns_per_op" in d and impl == "ag":
        rows.setdefault(("ag replay a' (f32)", "fwd+bwd"), []).append(d["replay_ns_per_op"])
    else:
        for k, v in d.items():
            if k.endswith("_ns_per_op"):
                rows.setdefault(("%s (f64)" % impl, k[:-len("_ns_per_op")]), []).append(v)
print("| tool | series | ns/op, median of %d rounds | rounds |" % max(len(v) for v in rows.values()))
print("|---|---|---|---|")
for (tool, series), v in rows.items():
    print("| %s | %s | %.1f | %s |" % (tool, series, statistics.median(v), ", ".join("%.1f" % x for x in v)))
EOF
