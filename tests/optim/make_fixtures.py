#!/usr/bin/python3
"""Writes the torch.optim fixtures that tests/optim/test_optim_torch.c replays.

Usage: make_fixtures.py OUT.bin   (needs torch; written for torch 1.13)

Two parameters (37 elements, and 10x13) start from, and receive gradients
drawn from, a counter-based generator that the C test reproduces exactly
(splitmix64 of (seed, step, param, element), see uniform()). Parameter 1 has
no gradient at every third step, so "skipped without a gradient" is checked
too. For each optimizer configuration, in f32 and f64, the file holds the
parameters after steps 1, 10 and 100; then gradient clipping cases (total
norm and clipped gradients) and learning-rate schedules (lr at each step).

Format, little-endian:
  "AGOPTFX1", u32 n0, u32 n1, u32 cases, u32 clips, u32 schedules
  case:  char name[48], i32 kind, i32 dtype, u64 seed,
         f64 lr, momentum, dampening, weight_decay, beta1, beta2, eps, alpha,
             lr_decay, initial_accumulator_value,
         i32 nesterov, amsgrad, centered, maximize, u32 zero_fields, u32 0,
         3 x (n0 + n1) values of the dtype (after steps 1, 10, 100)
  clip:  f64 max_norm, f64 norm_type (-1: clip by value max_norm), i32 dtype,
         u32 0, u64 seed, f64 total_norm, n0 + n1 clipped values of the dtype
  sched: i32 kind (1 StepLR, 2 CosineAnnealingLR, 3 LinearLR), i32 steps,
         f64 base_lr, a, b, c, then `steps` f64 learning rates
         (StepLR a=step_size b=gamma; Cosine a=T_max b=eta_min;
          Linear a=start_factor b=end_factor c=total_iters)
"""
import struct
import sys

import torch

N0, N1 = 37, 130
SHAPES = [(N0,), (10, 13)]
CHECKPOINTS = (1, 10, 100)
MASK = (1 << 64) - 1

SGD, ADAM, ADAMW, RMSPROP, ADAGRAD = 1, 2, 3, 4, 5
F32, F64 = 1, 2
OPTION_FIELDS = ("lr", "momentum", "dampening", "weight_decay", "beta1", "beta2", "eps", "alpha",
                 "lr_decay", "initial_accumulator_value")
FLAG_FIELDS = ("nesterov", "amsgrad", "centered", "maximize")

ZERO_BITS = dict(lr=1, beta1=2, beta2=4, eps=8, alpha=16, weight_decay=32)

# name, kind, options (torch names; betas as beta1/beta2)
CONFIGS = [
    ("sgd", SGD, dict(lr=0.1)),
    ("sgd_momentum", SGD, dict(lr=0.05, momentum=0.9)),
    ("sgd_dampening_wd", SGD, dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01)),
    ("sgd_nesterov_wd", SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.02)),
    ("sgd_maximize", SGD, dict(lr=0.02, momentum=0.5, maximize=True)),
    ("adam", ADAM, dict(lr=0.01)),
    ("adam_wd_betas", ADAM, dict(lr=0.02, beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.05)),
    ("adam_amsgrad", ADAM, dict(lr=0.01, amsgrad=True)),
    ("adamw", ADAMW, dict(lr=0.01)),  # the default weight_decay 1e-2
    ("adamw_no_wd_beta1_0", ADAMW, dict(lr=0.01, weight_decay=0.0, beta1=0.0)),
    ("adamw_amsgrad_wd", ADAMW, dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("rmsprop", RMSPROP, dict(lr=0.01)),
    ("rmsprop_momentum_wd", RMSPROP, dict(lr=0.005, momentum=0.9, weight_decay=0.01, alpha=0.9)),
    ("rmsprop_centered", RMSPROP, dict(lr=0.005, centered=True, momentum=0.5)),
    ("adagrad", ADAGRAD, dict(lr=0.1)),
    ("adagrad_decay_wd", ADAGRAD, dict(lr=0.1, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1)),
]

CLIPS = [(1.0, 2.0), (0.5, 1.0), (0.1, float("inf")), (2.0, 3.0), (100.0, 2.0), (0.3, -1.0)]
SCHEDULES = [(1, 0.1, 7, 0.5, 0), (2, 0.1, 20, 0.001, 0), (3, 0.1, 0.1, 1.0, 10), (3, 0.05, 0.5, 0.2, 8)]
SCHEDULE_STEPS = 30


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def uniform(seed, step, param, i):
    """A double in [-1, 1) (exact in binary, 53 bits)."""
    x = splitmix64((seed << 40) ^ (step << 20) ^ (param << 16) ^ i)
    return (x >> 11) * 2.0 ** -52 - 1.0


def values(seed, step, param, dtype):
    n = N0 if param == 0 else N1
    return torch.tensor([uniform(seed, step, param, i) for i in range(n)], dtype=dtype).reshape(SHAPES[param])


def make_optimizer(kind, opts, params):
    o = dict(opts)
    betas = (o.pop("beta1", 0.9), o.pop("beta2", 0.999))
    if kind == SGD:
        return torch.optim.SGD(params, foreach=False, **o)
    if kind == ADAM:
        return torch.optim.Adam(params, betas=betas, foreach=False, **o)
    if kind == ADAMW:
        return torch.optim.AdamW(params, betas=betas, foreach=False, **o)
    if kind == RMSPROP:
        return torch.optim.RMSprop(params, foreach=False, **o)
    return torch.optim.Adagrad(params, foreach=False, **o)


def run_case(kind, opts, dtype, seed):
    params = [values(seed, 0, p, dtype).requires_grad_() for p in range(2)]
    opt = make_optimizer(kind, opts, params)
    out = []
    for t in range(1, CHECKPOINTS[-1] + 1):
        params[0].grad = values(seed, t, 0, dtype)
        params[1].grad = None if t % 3 == 0 else values(seed, t, 1, dtype)
        opt.step()
        if t in CHECKPOINTS:
            out.append(torch.cat([p.detach().reshape(-1) for p in params]))
    return out


def pack_values(t, dtype):
    fmt = "<%d%s" % (t.numel(), "f" if dtype == torch.float32 else "d")
    return struct.pack(fmt, *t.reshape(-1).tolist())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.set_num_threads(1)
    blob = [b"AGOPTFX1", struct.pack("<5I", N0, N1, 2 * len(CONFIGS), 2 * len(CLIPS), len(SCHEDULES))]
    seed = 1
    for name, kind, opts in CONFIGS:
        for code, dtype in ((F32, torch.float32), (F64, torch.float64)):
            seed += 1
            blob.append(struct.pack("<48s2iQ", name.encode(), kind, code, seed))
            blob.append(struct.pack("<10d", *[float(opts.get(f, 0.0)) for f in OPTION_FIELDS]))
            # An option given as 0 where ag's 0 means "the default" sets its zero bit.
            zero = sum(bit for f, bit in ZERO_BITS.items() if f in opts and opts[f] == 0.0)
            blob.append(struct.pack("<6I", *[int(bool(opts.get(f, False))) for f in FLAG_FIELDS], zero, 0))
            for t in run_case(kind, opts, dtype, seed):
                blob.append(pack_values(t, dtype))
    for max_norm, norm_type in CLIPS:
        for code, dtype in ((F32, torch.float32), (F64, torch.float64)):
            seed += 1
            params = [values(seed, 0, p, dtype).requires_grad_() for p in range(2)]
            for p, param in enumerate(params):
                param.grad = values(seed, 1, p, dtype)
            if norm_type < 0:
                torch.nn.utils.clip_grad_value_(params, max_norm)
                total = 0.0
            else:
                total = float(torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type))
            blob.append(struct.pack("<2d2IQd", max_norm, norm_type, code, 0, seed, total))
            blob.append(pack_values(torch.cat([p.grad.reshape(-1) for p in params]), dtype))
    for kind, base_lr, a, b, c in SCHEDULES:
        param = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([param], lr=base_lr)
        if kind == 1:
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=int(a), gamma=b)
        elif kind == 2:
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=int(a), eta_min=b)
        else:
            sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=a, end_factor=b, total_iters=int(c))
        lrs = []
        for _ in range(SCHEDULE_STEPS):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        blob.append(struct.pack("<2i4d", kind, SCHEDULE_STEPS, base_lr, a, b, c))
        blob.append(struct.pack("<%dd" % SCHEDULE_STEPS, *lrs))
    with open(sys.argv[1], "wb") as f:
        f.write(b"".join(blob))


if __name__ == "__main__":
    main()
