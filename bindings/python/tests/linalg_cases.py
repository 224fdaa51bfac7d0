"""Sample cases of the linear algebra ops for test_ops_vs_torch.py (same Case
and R helpers). Decompositions get well-conditioned inputs built inside the
functions (M + n I invertible, M M^T + n I positive-definite), so that the
gradients flow through the construction as well."""
import ag

try:
    import torch
except ImportError:  # the tests skip without PyTorch
    torch = None


def linalg_cases(Case, R):
    def inv_ready(x, lib):
        n = x.shape[-1]
        eye = ag.eye(n, dtype=ag.float64) if lib is ag else torch.eye(n, dtype=torch.float64)
        return x + eye * float(n)

    def spd(x, lib):
        n = x.shape[-1]
        xt = lib.transpose(x, -2, -1)
        eye = ag.eye(n, dtype=ag.float64) if lib is ag else torch.eye(n, dtype=torch.float64)
        return lib.matmul(x, xt) + eye * float(n)

    def lower(x, lib):
        return lib.tril(inv_ready(x, lib), 0) if lib is ag else torch.tril(inv_ready(x, lib))

    def sym(x, lib):
        return x + lib.transpose(x, -2, -1)

    def signs(u):
        d = u.detach()
        sg = torch.sign(torch.gather(d, -2, d.abs().argmax(dim=-2, keepdim=True)))
        return torch.where(sg == 0, torch.ones_like(sg), sg)

    def signed_eigh(r):
        return r[0], r[1] * signs(r[1])

    def signed_svd(r):
        sg = signs(r[0])
        return r[0] * sg, r[1], r[2] * sg.transpose(-2, -1)

    tl = torch.linalg if torch else None
    return {
        "trace": Case([R(4, 4)], ag.trace, torch.trace),
        "diagonal": Case([R(3, 4, 5)], lambda x: ag.diagonal(x, -1, 2, 0), lambda x: torch.diagonal(x, -1, 2, 0)),
        "diag_embed": Case([R(2, 3)], lambda x: ag.diag_embed(x, 1, 0, 2), lambda x: torch.diag_embed(x, 1, 0, 2)),
        "diag": Case([R(4)], lambda x: ag.diag(x, -1), lambda x: torch.diag(x, -1)),
        "tril": Case([R(2, 3, 4)], lambda x: ag.tril(x, 1), lambda x: torch.tril(x, 1)),
        "triu": Case([R(4, 3)], lambda x: ag.triu(x, -1), lambda x: torch.triu(x, -1)),
        "mm": Case([R(3, 4), R(4, 2)], ag.mm, torch.mm),
        "mv": Case([R(3, 4), R(4)], ag.mv, torch.mv),
        "addmm": Case([R(3, 2), R(3, 4), R(4, 2)], lambda i, a, b: ag.addmm(i, a, b, 0.5, 2.0),
                      lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0)),
        "addmv": Case([R(1), R(3, 4), R(4)], lambda i, a, b: ag.addmv(i, a, b, 0.0, -1.0),
                      lambda i, a, b: torch.addmv(i, a, b, beta=0.0, alpha=-1.0)),
        "baddbmm": Case([R(2, 3, 2), R(2, 3, 4), R(2, 4, 2)], lambda i, a, b: ag.baddbmm(i, a, b, 1.5, 0.5),
                        lambda i, a, b: torch.baddbmm(i, a, b, beta=1.5, alpha=0.5)),
        "addbmm": Case([R(3, 2), R(2, 3, 4), R(2, 4, 2)], lambda i, a, b: ag.addbmm(i, a, b, 1.0, 1.0),
                       lambda i, a, b: torch.addbmm(i, a, b)),
        "cross": Case([R(2, 3), R(1, 3)], lambda a, b: ag.cross(a, b, 1), lambda a, b: tl.cross(a, b, dim=1)),
        "kron": Case([R(2, 3), R(3, 1, 2)], ag.kron, torch.kron),
        "tensordot": Case([R(2, 3, 4), R(4, 3, 5)], lambda a, b: ag.tensordot(a, b, [2, 1], [0, 1]),
                          lambda a, b: torch.tensordot(a, b, ([2, 1], [0, 1]))),
        "einsum": Case([R(2, 3, 3), R(3, 4), R(2, 4)],
                       lambda a, b, c: ag.einsum("bii,ij,bj->bi", [a, b, c]),
                       lambda a, b, c: torch.einsum("bii,ij,bj->bi", a, b, c)),
        "matrix_power": Case([R(2, 3, 3, lo=-1, hi=1)], lambda x: ag.matrix_power(inv_ready(x, ag), -3),
                             lambda x: tl.matrix_power(inv_ready(x, torch), -3), rtol=1e-6),
        "inv": Case([R(2, 3, 3, lo=-1, hi=1)], lambda x: ag.inv(inv_ready(x, ag)),
                    lambda x: tl.inv(inv_ready(x, torch)), rtol=1e-6),
        "det": Case([R(2, 4, 4)], ag.det, tl.det, rtol=1e-6),
        # torch's sign output records a graph (with zero gradient), ag's none: compared as a constant
        "slogdet": Case([R(3, 3)], ag.slogdet, lambda a: (tl.slogdet(a)[0].detach(), tl.slogdet(a)[1]), rtol=1e-6),
        "solve": Case([R(2, 3, 3, lo=-1, hi=1), R(3, 2)], lambda a, b: ag.solve(inv_ready(a, ag), b),
                      lambda a, b: tl.solve(inv_ready(a, torch), b), rtol=1e-6),
        "cholesky": Case([R(2, 3, 3)], lambda x: ag.cholesky(spd(x, ag), 1),
                         lambda x: tl.cholesky(spd(x, torch), upper=True), rtol=1e-6),
        "solve_triangular": Case([R(3, 3, lo=-1, hi=1), R(2, 3)],
                                 lambda a, b: ag.solve_triangular(lower(a, ag), b, 0, 0, 0),
                                 lambda a, b: tl.solve_triangular(lower(a, torch), b, upper=False, left=False),
                                 rtol=1e-6),
        "cholesky_solve": Case([R(3, 2), R(3, 3, lo=-1, hi=1)], lambda b, l: ag.cholesky_solve(b, lower(l, ag), 0),
                               lambda b, l: torch.cholesky_solve(b, lower(l, torch)), rtol=1e-6),
        # eigenvectors and singular vectors: torch's flipped to ag's sign convention
        # (each column's component of largest magnitude positive)
        "eigh": Case([R(2, 3, 3)], lambda x: ag.eigh(sym(x, ag), 0),
                     lambda x: signed_eigh(tl.eigh(sym(x, torch))), rtol=1e-6, atol=1e-8),
        "eigvalsh": Case([R(3, 3)], lambda x: ag.eigvalsh(sym(x, ag), 1),
                         lambda x: tl.eigvalsh(sym(x, torch), UPLO="U"), rtol=1e-6),
        "svd": Case([R(4, 3)], lambda x: ag.svd(x, 0), lambda x: signed_svd(tl.svd(x, full_matrices=False)),
                    rtol=1e-6, atol=1e-8),
        "svdvals": Case([R(2, 3, 5)], ag.svdvals, tl.svdvals, rtol=1e-6),
        "qr": Case([R(4, 3)], lambda x: ag.qr(x, 0), tl.qr, rtol=1e-6, atol=1e-8),
        "matrix_norm": Case([R(2, 3, 4)], lambda x: ag.matrix_norm(x, [], False, 1000001.0),
                            lambda x: tl.matrix_norm(x, "nuc"), rtol=1e-6),
        "linalg_norm": Case([R(3, 4)], lambda x: ag.linalg_norm(x, [], False, float("inf")),
                            lambda x: tl.norm(x, float("inf")), rtol=1e-6),
        "pinv": Case([R(4, 3)], lambda x: ag.pinv(x, float("nan"), float("nan"), 0), tl.pinv, rtol=1e-6, atol=1e-8),
        "cond": Case([R(3, 3)], lambda x: ag.cond(inv_ready(x, ag), float("nan")),
                     lambda x: tl.cond(inv_ready(x, torch)), rtol=1e-6),
        # batch dims broadcast (B's 1 against A's 2); the wide and vector cases are in the OpInfo replay
        "lstsq": Case([R(2, 5, 3), R(1, 5, 2)], ag.lstsq, lambda a, b: tl.lstsq(a, b).solution, rtol=1e-6, atol=1e-8),
        # 1-norms up to 6: the degree-13 approximant with squarings (PyTorch picks its own degrees)
        "matrix_exp": Case([R(2, 4, 4, lo=-1.5, hi=1.5)], ag.matrix_exp, tl.matrix_exp, rtol=1e-6, atol=1e-8),
    }
