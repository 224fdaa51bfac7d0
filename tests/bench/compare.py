#!/usr/bin/env python3
"""Side-by-side table of bench_ag and bench_libtorch JSON lines (stdlib only).

    compare.py RESULTS_DIR [--threads 1,2] [--baseline libtorch|pytorch] [--out table.md]

RESULTS_DIR holds ag_t<T>.jsonl and <baseline>_t<T>.jsonl (run.sh writes them).
Lines are matched on (workload, case); every metric row shows, per thread
count, the ag median, the libtorch median and the ratio ag / libtorch (for
times and RSS lower is better, so a ratio < 1 means ag is ahead; for GB/s it is
the other way round, the "better" column says which). A file with K lines of
one (workload, case) holds K runs made in turn with the other side's
(AG_BENCH_PAIRS=K): the values shown are the medians over the runs, and the
ratio is the median of the per-pair ratios (the i-th run of each side). A checksum table follows:
ag's own verdict, and libtorch's "check" values held against the same published
values and tolerances (ag lines carry them as "expected" and "rtol").
"""

import argparse
import json
import math
import os
import sys

SERIES_AB = ["fwd", "bwd", "free", "total", "fwd_nograd"]
SERIES_C = ["fwd", "bwd", "total", "free", "ref_add_out", "ref_tanh_out", "ref_sum", "ref_copy"]
SERIES_E = ["fwd", "bwd", "free", "total"]
SERIES_D = ["step", "fwd", "bwd", "update"]
SERIES_G = [f"{op}_{m}" for op in ("mul", "add", "tanh") for m in ("nograd", "grad_off_inputs", "grad")] + [
    "mul_out_nograd"]
ORDER = ["a_scalar_chain", "b_small_chain16", "c_large_elementwise", "d_mlp_step", "e_fanin",
         "f_peak_rss", "g_dispatch"]


def load(path):
    """{(workload, case): [record, ...]} in file order."""
    recs = {}
    if not os.path.exists(path):
        return recs
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("workload", "").startswith("_"):
                continue
            recs.setdefault((r["workload"], r.get("case", "")), []).append(r)
    return recs


def middle(values):
    """Median of the values that are numbers; None when there is none."""
    v = sorted(x for x in values if isinstance(x, (int, float)))
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def median(rec, series):
    try:
        return float(rec["series"][series]["median_ns"])
    except (KeyError, TypeError, ValueError):
        return None


def metrics(workload, rec):
    """[(metric, unit, better, value)] for one record (value None when absent)."""
    out = []
    if rec is None:
        return out
    if rec.get("skipped"):
        return [("skipped", "", "", None)]
    if workload in ("a_scalar_chain", "b_small_chain16"):
        ops = float(rec.get("ops", 10000))
        for s in SERIES_AB:
            m = median(rec, s)
            out.append((f"{s} per op", "ns", "lower", None if m is None else m / ops))
    elif workload == "c_large_elementwise":
        for s in SERIES_C:
            m = median(rec, s)
            out.append((s, "ms", "lower", None if m is None else m / 1e6))
        for s in ("fwd", "bwd", "total"):
            m = median(rec, s)
            b = rec.get("bytes", {}).get(s)
            out.append((f"{s} bandwidth", "GB/s", "higher", None if (m is None or not b) else b / m))
        out.append(("minor faults/iter", "", "lower", rec.get("minor_faults_per_iter")))
    elif workload == "d_mlp_step":
        for s in SERIES_D:
            m = median(rec, s)
            out.append((s, "ms", "lower", None if m is None else m / 1e6))
    elif workload == "e_fanin":
        for s in SERIES_E:
            m = median(rec, s)
            out.append((s, "ms", "lower", None if m is None else m / 1e6))
    elif workload == "f_peak_rss":
        for k in ("after_inputs", "after_fwd_bwd"):
            v = rec.get("maxrss_kib", {}).get(k)
            out.append((f"maxrss {k}", "MiB", "lower", None if v is None else v / 1024.0))
    elif workload == "g_dispatch":
        for s in SERIES_G:
            out.append((s, "ns/call", "lower", median(rec, s)))
    return out


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.3g}" if a < 10 else f"{v:.1f}"
    return f"{v:.3g}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def torch_checksum(ag_rec, lt_rec):
    """Hold libtorch's check values against the published values carried by the ag line."""
    if lt_rec is None or ag_rec is None or "expected" not in ag_rec:
        return "-"
    chk = lt_rec.get("check", {})
    bad = []
    for k, exp in ag_rec["expected"].items():
        got = chk.get(k)
        tol = ag_rec.get("rtol", {}).get(k, 1e-5)
        if got is None:
            return "-"
        # a check is a number, or a list of numbers (d: "loss_steps_0_1_2")
        gots = got if isinstance(got, list) else [got]
        exps = exp if isinstance(exp, list) else [exp]
        if len(gots) != len(exps):
            bad.append(f"{k} has {len(gots)} values, expected {len(exps)}")
            continue
        for i, (g, e) in enumerate(zip(gots, exps)):
            rel = abs(g - e) / abs(e) if e else abs(g)
            if not (rel <= tol):
                name = k if len(exps) == 1 and not isinstance(exp, list) else f"{k}[{i}]"
                bad.append(f"{name} {rel:.2g}")
    return "ok" if not bad else "MISMATCH (" + ", ".join(bad) + ")"


def render(rows, header, nleft):
    widths = [len(h) for h in header]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    lines = ["| " + " | ".join(h.ljust(widths[i]) for i, h in enumerate(header)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(c.ljust(widths[i]) if i < nleft else c.rjust(widths[i])
                                       for i, c in enumerate(r)) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=None, help="also write the tables to this file")
    ap.add_argument("--baseline", default="libtorch", help="file prefix and name of the other engine")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",") if t]
    ag = {t: load(os.path.join(args.dir, f"ag_t{t}.jsonl")) for t in threads}
    lt = {t: load(os.path.join(args.dir, f"{args.baseline}_t{t}.jsonl")) for t in threads}

    keys = set()
    for t in threads:
        keys |= set(ag[t]) | set(lt[t])

    def sort_key(k):
        w, c = k
        wi = ORDER.index(w) if w in ORDER else len(ORDER)
        n = 0
        if c.startswith("n="):
            try:
                n = int(c[2:])
            except ValueError:
                pass
        return (wi, n, c)

    keys = sorted(keys, key=sort_key)
    header = ["workload", "case", "metric", "unit", "better"]
    for t in threads:
        header += [f"ag T={t}", f"{args.baseline} T={t}", f"ag/other T={t}"]
    rows = []
    for k in keys:
        w, c = k
        per_t = {}
        names = []
        for t in threads:
            # one {metric: (name, unit, better, value)} per run
            ma = [{m[0]: m for m in metrics(w, rec)} for rec in ag[t].get(k, [])]
            ml = [{m[0]: m for m in metrics(w, rec)} for rec in lt[t].get(k, [])]
            per_t[t] = (ma, ml)
            for m in ma + ml:
                for name in m:
                    if name not in names and name != "skipped":
                        names.append(name)
        for name in names:
            unit = better = ""
            row_vals = []
            for t in threads:
                a_runs, l_runs = per_t[t]
                for run in a_runs + l_runs:
                    if name in run:
                        unit, better = run[name][1], run[name][2]
                        break

                def value(runs):
                    if runs and all("skipped" in r for r in runs):
                        return "skipped"
                    return middle(r[name][3] for r in runs if name in r)

                pairs = [ratio(a[name][3], l[name][3]) for a, l in zip(a_runs, l_runs)
                         if name in a and name in l]
                r = middle(pairs)
                row_vals += [fmt(value(a_runs)), fmt(value(l_runs)), "-" if r is None else f"{r:.3g}"]
            rows.append([w, c, name, unit, better] + row_vals)
    runs = max([len(v) for t in threads for v in list(ag[t].values()) + list(lt[t].values())] or [1])
    title = f"## Medians, ag vs {args.baseline} (ratio = ag / {args.baseline})"
    if runs > 1:
        title += f"; up to {runs} runs in turn: medians over the runs, ratio = median of the per-pair ratios"
    out = [title, "", render(rows, header, 5), ""]

    # checksums and noise
    h2 = ["workload", "case"]
    for t in threads:
        h2 += [f"ag checksum T={t}", f"{args.baseline} checksum T={t}", f"noise ag/other T={t}",
               f"attempts ag/other T={t}"]
    rows2 = []
    for k in keys:
        w, c = k
        r = [w, c]
        for t in threads:
            a_runs = ag[t].get(k, [])
            l_runs = lt[t].get(k, [])

            def verdicts(found):
                # one word for all runs: the first that is not "ok", else "ok"
                return next((v for v in found if v != "ok"), found[0] if found else "-")

            a_ck = verdicts(["skipped" if a.get("skipped") else a.get("checksum", "-") for a in a_runs])
            l_ck = verdicts([torch_checksum(a_runs[0] if a_runs else None, l) for l in l_runs])

            def noise(runs):
                m = middle(x["noise"].get("others") for x in runs if "noise" in x)
                return "-" if m is None else f"{m:.3f}"

            def att(runs):
                m = [str(x["attempts"]) for x in runs if "attempts" in x]
                return ",".join(m) if m else "-"

            r += [a_ck, l_ck, f"{noise(a_runs)}/{noise(l_runs)}", f"{att(a_runs)}/{att(l_runs)}"]
        rows2.append(r)
    out += ["## Checksums (published values of WORKLOADS.md) and noise.others", "", render(rows2, h2, 2), ""]
    text = "\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    bad = any("MISMATCH" in x for r in rows2 for x in r)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
