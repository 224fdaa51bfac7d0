#!/usr/bin/python3
"""PyTorch twin of bench_adbench (the ADBench objectives GMM, BA, LSTM).

Same inputs (detdata.det_uniform with the seeds and ranges of
bench_adbench_{gmm,ba,lstm}.c, widened to float64), the same formulation op
for op, the same timing protocol (a warm-up F/J pair, then interleaved F/J
pairs until --budget seconds, between --min-repeats and --repeats pairs) and
the same JSON lines with "impl": "pytorch". F runs under torch.no_grad(); J
is the objective plus torch.autograd.grad (for BA: three reverse passes with
one-hot seeds over per-observation copies of the camera and point rows).

Usage (Debian's python3-torch):
  bench_adbench_torch.py [--only gmm,ba,lstm] [--quick] [--f32] [--threads 1]
                         [--repeats MAX] [--min-repeats MIN] [--budget S] [--out FILE]
  bench_adbench_torch.py --table AG_JSONL TORCH_JSONL     (the side-by-side table)
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import detdata  # noqa: E402  (beside this file)

torch = None  # imported in main, so that --table runs without torch
DT = None


def det(count, seed, lo, hi):
    return torch.from_numpy(detdata.det_uniform(count, seed, lo, hi).astype("float64")).to(DT)


# ------------------------------------------------------------------ GMM

def lower_at(d, i, j):
    return d + j * (d - 1) - j * (j - 1) // 2 + (i - j - 1)


def multigammaln(a, p):
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(math.lgamma(a + 0.5 * (1 - j)) for j in range(1, p + 1))


class GMM:
    def __init__(self, d, K, n, gamma=1.0, m=0):
        ni = d + d * (d - 1) // 2
        self.d, self.K, self.n, self.gamma, self.m = d, K, n, gamma, m
        self.alphas = det(K, 1001, -1.0, 1.0).requires_grad_()
        self.means = det(K * d, 1002, 0.0, 1.0).reshape(K, d).requires_grad_()
        self.icf = det(K * ni, 1003, -0.5, 0.5).reshape(K, ni).requires_grad_()
        self.x = det(n * d, 1004, 0.0, 1.0).reshape(n, d)
        self.idx = torch.tensor([i if i == j else lower_at(d, i, j) if i > j else ni
                                 for i in range(d) for j in range(d)], dtype=torch.int64)
        self.zero = torch.zeros(K, 1, dtype=DT)
        nn = d + m + 1
        C = nn * d * (math.log(gamma) - 0.5 * math.log(2.0)) - multigammaln(0.5 * nn, d)
        self.constant = -0.5 * n * d * math.log(2.0 * math.pi) - K * C
        self.size = f"d={d} K={K} n={n}"

    def objective(self):
        d, K, n = self.d, self.K, self.n
        q, l = self.icf[:, :d], self.icf[:, d:]
        qd = torch.exp(q)
        sum_q = q.sum(1)
        qf = torch.cat([qd, l, self.zero], 1).index_select(1, self.idx)
        qx = torch.matmul(qf.reshape(K * d, d), self.x.t()).reshape(K, d, n)
        qmu = torch.bmm(qf.reshape(K, d, d), self.means.reshape(K, d, 1))
        sqsum = (qx - qmu).square().sum(1)
        inner = (self.alphas + sum_q).unsqueeze(1) - sqsum * 0.5
        obj = torch.logsumexp(inner, 0).sum() - torch.logsumexp(self.alphas, 0) * n
        p = (qd.square().sum() + l.square().sum()) * (0.5 * self.gamma * self.gamma)
        if self.m != 0:
            p = p - sum_q.sum() * self.m
        return obj + p + self.constant

    def J(self):
        obj = self.objective()
        self.grads = torch.autograd.grad(obj, [self.alphas, self.means, self.icf])
        return obj

    def summary(self):
        with torch.no_grad():
            return self.objective().item(), sum(float(g.square().sum()) for g in self.grads)


# ------------------------------------------------------------------ BA

class BA:
    LO = [-0.3, -0.3, -0.3, -0.5, -0.5, -1.0, 400.0, -10.0, -10.0, -0.1, -0.1]
    HI = [0.3, 0.3, 0.3, 0.5, 0.5, 0.0, 600.0, 10.0, 10.0, 0.1, 0.1]

    def __init__(self, N, M, P):
        self.size = f"n={N} m={M} p={P}"
        lo = torch.tensor(self.LO, dtype=DT)
        hi = torch.tensor(self.HI, dtype=DT)
        self.cams = lo + (hi - lo) * det(N * 11, 2001, 0.0, 1.0).reshape(N, 11)
        u = det(M * 3, 2002, 0.0, 1.0).reshape(M, 3)
        self.X = torch.cat([-1.0 + 2.0 * u[:, :2], 4.0 + 2.0 * u[:, 2:]], 1)
        self.w = det(P, 2003, 0.5, 1.5)
        self.feats = det(P * 2, 2004, -100.0, 100.0).reshape(P, 2)
        i = torch.arange(P, dtype=torch.int64)
        self.icam, self.ipt = i % N, i % M
        self.pa = torch.tensor([1, 2, 0])
        self.pb = torch.tensor([2, 0, 1])
        self.seeds = [torch.zeros(P, 2, dtype=DT), torch.zeros(P, 2, dtype=DT)]
        self.seeds[0][:, 0] = 1.0
        self.seeds[1][:, 1] = 1.0
        self.ones = torch.ones(P, dtype=DT)

    def residuals(self, C, Xp, w):
        rot, centre, focal, x0 = C[:, 0:3], C[:, 3:6], C[:, 6:7], C[:, 7:9]
        k1, k2 = C[:, 9:10], C[:, 10:11]
        xc = Xp - centre
        theta = torch.sqrt(rot.square().sum(1, keepdim=True))
        cs, sn = torch.cos(theta), torch.sin(theta)
        u = rot / theta
        cross = u.index_select(1, self.pa) * xc.index_select(1, self.pb) - \
            u.index_select(1, self.pb) * xc.index_select(1, self.pa)
        tmp = (u * xc).sum(1, keepdim=True) * (1.0 - cs)
        xcam = xc * cs + cross * sn + u * tmp
        p = xcam[:, 0:2] / xcam[:, 2:3]
        rsq = p.square().sum(1, keepdim=True)
        L = k1 * rsq + k2 * rsq.square() + 1.0
        proj = p * L * focal + x0
        return (proj - self.feats) * w.unsqueeze(1), 1.0 - w.square()

    def objective(self):
        return self.residuals(self.cams.index_select(0, self.icam), self.X.index_select(0, self.ipt), self.w)

    def J(self):
        C = self.cams.index_select(0, self.icam).requires_grad_()
        Xp = self.X.index_select(0, self.ipt).requires_grad_()
        w = self.w.detach().requires_grad_()
        reproj, werr = self.residuals(C, Xp, w)
        g0 = torch.autograd.grad(reproj, [C, Xp, w], self.seeds[0], retain_graph=True)
        g1 = torch.autograd.grad(reproj, [C, Xp, w], self.seeds[1])
        g2 = torch.autograd.grad(werr, [w], self.ones)
        self.grads = list(g0) + list(g1) + list(g2)

    def summary(self):
        with torch.no_grad():
            r, e = self.objective()
            return float(r.square().sum() + e.square().sum()), sum(float(g.square().sum()) for g in self.grads)


# ------------------------------------------------------------------ LSTM

class LSTM:
    def __init__(self, l, c, b):
        self.l, self.c, self.b = l, c, b
        self.size = f"l={l} c={c} b={b}"
        self.main = det(8 * l * b, 3001, -1.0, 1.0).reshape(2 * l, 4 * b).requires_grad_()
        self.extra = det(3 * b, 3002, -1.0, 1.0).reshape(3, b).requires_grad_()
        self.state = det(2 * l * b, 3003, -1.0, 1.0).reshape(2 * l, b)
        chars = [int(float(u) * b) for u in detdata.det_uniform(c, 3004, 0.0, 1.0)]
        seq = torch.zeros(c, b, dtype=DT)
        seq[torch.arange(c), torch.tensor(chars)] = 1.0
        self.inp = [seq[t:t + 1].clone() for t in range(c - 1)]
        self.gold = seq[1:].clone()

    def objective(self):
        l, c, b = self.l, self.c, self.b
        W = [self.main[2 * i:2 * i + 1].reshape(4, b) for i in range(l)]
        B = [self.main[2 * i + 1:2 * i + 2].reshape(4, b) for i in range(l)]
        h = [self.state[2 * i:2 * i + 1] for i in range(l)]
        cell = [self.state[2 * i + 1:2 * i + 2] for i in range(l)]
        w_in = self.extra[0:1]
        hs = []
        for t in range(c - 1):
            x = self.inp[t] * w_in
            for i in range(l):
                z = torch.cat((x, h[i], x, h[i]), 0) * W[i] + B[i]
                zs, zc = torch.split(z, [3, 1], 0)
                f, ig, o = torch.split(torch.sigmoid(zs), [1, 1, 1], 0)
                cell[i] = cell[i] * f + ig * torch.tanh(zc)
                h[i] = o * torch.tanh(cell[i])
                x = h[i]
            hs.append(x)
        y = torch.log_softmax(torch.cat(hs, 0) * self.extra[1:2] + self.extra[2:3], 1)
        return (y * self.gold).sum() * (-1.0 / ((c - 1) * b))

    def J(self):
        self.grads = torch.autograd.grad(self.objective(), [self.main, self.extra])

    def summary(self):
        with torch.no_grad():
            return self.objective().item(), sum(float(g.square().sum()) for g in self.grads)


# ------------------------------------------------------------------ timing

def quantile_excl(s, q):
    """bench_harness.c's quantile (statistics' 'exclusive' method, clamped to the data)."""
    m = (len(s) + 1) * q
    j = math.floor(m)
    if len(s) < 2 or j < 1:
        return s[0]
    if j >= len(s):
        return s[-1]
    return s[j - 1] + (s[j] - s[j - 1]) * (m - j)


def stats(v):
    v = sorted(v)
    return {"median_ns": statistics.median(v), "min_ns": v[0], "p25_ns": quantile_excl(v, 0.25),
            "p75_ns": quantile_excl(v, 0.75), "n": len(v)}


def run_case(a, name, case, out):
    def F():
        with torch.no_grad():
            case.objective()

    F()
    case.J()
    tf, tj = [], []
    t0 = time.perf_counter()
    for r in range(a.repeats):
        if r >= a.min_repeats and time.perf_counter() - t0 >= a.budget:
            break
        s = time.perf_counter_ns()
        F()
        m = time.perf_counter_ns()
        case.J()
        e = time.perf_counter_ns()
        tf.append(float(m - s))
        tj.append(float(e - m))
    value, gsq = case.summary()
    sf, sj = stats(tf), stats(tj)
    line = {"impl": "pytorch", "threads": a.threads, "bench": "adbench", "objective": name, "size": case.size,
            "dtype": "f32" if a.f32 else "f64", "F": sf, "J": sj, "J_over_F": sj["median_ns"] / sf["median_ns"],
            "value": value, "grad_sq": gsq, "engine": "torch " + torch.__version__}
    text = json.dumps(line)
    print(text, flush=True)
    if out:
        out.write(text + "\n")
        out.flush()


def cases(a):
    quick = a.quick
    if "gmm" in a.only:
        for d in (2, 10, 20, 64):
            for K in (5, 10, 25, 50):
                if not quick or (d, K) == (2, 5):
                    yield "gmm", (lambda d=d, K=K: GMM(d, K, 1000))
    if "ba" in a.only:
        yield "ba", (lambda: BA(21, 11315, 36455))
        if not quick:
            yield "ba", (lambda: BA(100, 50000, 200000))
    if "lstm" in a.only:
        for l in (2, 4):
            for c in (1024, 4096):
                if not quick or (l, c) == (2, 1024):
                    yield "lstm", (lambda l=l, c=c: LSTM(l, c, 14))


# ------------------------------------------------------------------ table

def read_lines(path):
    rows = {}
    with open(path) as f:
        for text in f:
            text = text.strip()
            if not text.startswith("{"):
                continue
            r = json.loads(text)
            if r.get("bench") == "adbench" and not r["size"].startswith("check"):
                rows[(r["objective"], r["size"])] = r
    return rows


def table(ag_path, torch_path):
    ag, pt = read_lines(ag_path), read_lines(torch_path)
    ms = lambda r, k: r[k]["median_ns"] * 1e-6  # noqa: E731
    # J/F of the fastest runs too: on a loaded machine, runs longer than a
    # scheduler slice are often preempted and the medians drift up
    jf_min = lambda r: r["J"]["min_ns"] / r["F"]["min_ns"]  # noqa: E731
    head = ("objective", "size", "ag F ms", "ag J ms", "ag J/F", "ag J/F min", "torch F ms", "torch J ms",
            "torch J/F", "torch J/F min", "agJ/torchJ", "value rel diff", "grad_sq rel diff")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    status = 0
    for key, r in ag.items():
        t = pt.get(key)
        if t is None:
            print(f"| {key[0]} | {key[1]} | {ms(r, 'F'):.3f} | {ms(r, 'J'):.3f} | {r['J_over_F']:.2f} | "
                  f"{jf_min(r):.2f} |" + " - |" * 7)
            continue
        dv = detdata.rel_err(r["value"], t["value"])
        dg = detdata.rel_err(r["grad_sq"], t["grad_sq"])
        tol = 1e-9 if r["dtype"] == "f64" else 1e-3
        flag = "" if dv <= tol and dg <= tol else " MISMATCH"
        if flag:
            status = 1
        print(f"| {key[0]} | {key[1]} | {ms(r, 'F'):.3f} | {ms(r, 'J'):.3f} | {r['J_over_F']:.2f} | "
              f"{jf_min(r):.2f} | {ms(t, 'F'):.3f} | {ms(t, 'J'):.3f} | {t['J_over_F']:.2f} | {jf_min(t):.2f} | "
              f"{ms(r, 'J') / ms(t, 'J'):.3f} | "
              f"{dv:.2g} | {dg:.2g}{flag} |")
    return status


def main():
    global torch, DT
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="gmm,ba,lstm")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--f32", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--min-repeats", type=int, default=5)
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--out")
    ap.add_argument("--table", nargs=2, metavar=("AG_JSONL", "TORCH_JSONL"))
    a = ap.parse_args()
    if a.table:
        return table(*a.table)
    import torch as t
    torch = t
    torch.set_num_threads(a.threads)
    DT = torch.float32 if a.f32 else torch.float64
    ref = [float(v) for v in detdata.det_uniform(4, 1, 0.25, 0.75)]
    if any(abs(x - y) > 5e-9 for x, y in zip(ref, detdata.REFERENCE_4_1)):
        sys.exit("bench_adbench_torch.py: det_uniform disagrees with the reference values")
    if a.quick:
        a.repeats = a.min_repeats = 2
    a.only = a.only.split(",")
    out = open(a.out, "a") if a.out else None
    for name, make in cases(a):
        run_case(a, name, make(), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
