"""Minimal optimizers in pure Python over ag's in-place ops (run without grad)."""
from ._tensor import no_grad, zeros_like


class Optimizer:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()


class SGD(Optimizer):
    def __init__(self, params, lr=0.01, momentum=0.0, weight_decay=0.0):
        super().__init__(params, lr)
        self.momentum, self.weight_decay = momentum, weight_decay
        self.bufs = [None] * len(self.params)

    @no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None:
                continue
            if self.weight_decay:
                g = g + p * self.weight_decay
            if self.momentum:
                if self.bufs[i] is None:
                    self.bufs[i] = g.clone()
                else:
                    self.bufs[i].mul_(self.momentum).add_(g)
                g = self.bufs[i]
            p.sub_(g * self.lr)


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr)
        self.betas, self.eps, self.weight_decay = betas, eps, weight_decay
        self.m = [zeros_like(p) for p in self.params]
        self.v = [zeros_like(p) for p in self.params]
        self.t = 0

    @no_grad()
    def step(self):
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for p, m, v in zip(self.params, self.m, self.v):
            g = p.grad
            if g is None:
                continue
            if self.weight_decay:
                g = g + p * self.weight_decay
            m.mul_(b1).add_(g * (1 - b1))
            v.mul_(b2).add_(g * g * (1 - b2))
            p.sub_((m / c1) * self.lr / ((v / c2).sqrt() + self.eps))
