"""Tensor methods and operators over the generated op functions.

Every op whose first input is a tensor becomes a method of the same name.
The table below only covers where PyTorch's method differs in name or
arguments from the ag op (sum(dim) -> sum_dims, pow(x) -> pow/pow_scalar...).
"""
import collections
import numbers

from ._tensor import Tensor, as_tensor, int64, bool_

# Ops that are no tensor methods in PyTorch (fused gradients, losses, creation).
NOT_METHODS = ("_backward", "_weight_grad", "_loss", "cross_entropy", "conv", "pool", "linear", "layer_norm",
               "rms_norm", "batch_norm", "group_norm", "embedding", "one_hot", "dropout", "fold", "unfold",
               "gelu_tanh", "sum_to_size", "_dims", "_dim", "slice", "concat", "stack", "pad", "cast")

minmax_result = collections.namedtuple("minmax", ["values", "indices"])


def _dims(dim):
    return None if dim is None else ([dim] if isinstance(dim, numbers.Integral) else list(dim))


def install(ops):
    T = Tensor
    for name, fn in ops.items():
        spec = fn.spec
        if not spec.first_is_tensor or hasattr(T, name):
            continue
        if not spec.inplace and any(m in name for m in NOT_METHODS):
            continue
        setattr(T, name, fn)

    def _reduce(all_op, dims_op):
        def method(self, dim=None, keepdim=False, **kw):
            if dim is None and not keepdim and not kw:
                return ops[all_op](self) if all_op else ops[dims_op](self, None, False, **kw)
            return ops[dims_op](self, _dims(dim), keepdim, **kw)
        method.__name__ = all_op or dims_op
        return method

    T.sum = _reduce("sum", "sum_dims")
    T.mean = _reduce("mean", "mean_dims")
    T.prod = lambda self, dim=None, keepdim=False: ops["prod_dims"](self, _dims(dim), keepdim)
    T.logsumexp = lambda self, dim=None, keepdim=False: ops["logsumexp_dims"](self, _dims(dim), keepdim)

    def var(self, dim=None, unbiased=None, keepdim=False, correction=None):
        corr = correction if correction is not None else (0.0 if unbiased is False else 1.0)
        return ops["var_dims"](self, _dims(dim), keepdim, corr)

    def std(self, dim=None, unbiased=None, keepdim=False, correction=None):
        corr = correction if correction is not None else (0.0 if unbiased is False else 1.0)
        return ops["std_dims"](self, _dims(dim), keepdim, corr)
    T.var, T.std = var, std
    T.norm = lambda self, p=2.0, dim=None, keepdim=False: ops["norm_dims"](
        self, _dims(dim), keepdim, float("inf") if p == "inf" else (2.0 if p == "fro" else p))

    def _minmax(dim_op, pair_op, sign):
        def method(self, dim=None, keepdim=False):
            if isinstance(dim, Tensor):
                return ops[pair_op](self, dim)
            if dim is None:
                return ops[dim_op](self.reshape(-1), 0, False).values
            r = ops[dim_op](self, dim, keepdim)
            return minmax_result(r.values, r.indices)
        return method
    T.max = _minmax("max_dim", "maximum", 1)
    T.min = _minmax("min_dim", "minimum", -1)
    T.amax = lambda self, dim=None, keepdim=False: ops["max_dim"](self, dim, keepdim).values \
        if dim is not None else T.max(self)
    T.amin = lambda self, dim=None, keepdim=False: ops["min_dim"](self, dim, keepdim).values \
        if dim is not None else T.min(self)

    def _arg(op):
        def method(self, dim=None, keepdim=False):
            if dim is None:
                return ops[op](self.reshape(-1), 0, False)
            return ops[op](self, dim, keepdim)
        return method
    T.argmax, T.argmin = _arg("argmax"), _arg("argmin")
    T.cumsum = lambda self, dim: ops["cumsum"](self, dim)
    T.cumprod = lambda self, dim: ops["cumprod"](self, dim)
    T.softmax = lambda self, dim: ops["softmax"](self, dim)
    T.log_softmax = lambda self, dim: ops["log_softmax"](self, dim)

    def pow(self, exponent):
        if isinstance(exponent, Tensor):
            return ops["pow"](self, exponent)
        return ops["pow_scalar"](self, exponent)
    T.pow = T.__pow__ = pow
    T.__rpow__ = lambda self, base: ops["pow"](as_tensor(base, like=self), self)
    T.clip = T.clamp
    T.view = T.reshape
    T.view_as = lambda self, other: ops["reshape"](self, tuple(other.shape))
    T.reshape_as = T.view_as
    T.expand_as = lambda self, other: ops["expand"](self, tuple(other.shape))
    T.squeeze = lambda self, dim=None: ops["squeeze"](self, _dims(dim))
    T.flip = lambda self, *dims: ops["flip"](self, list(dims[0]) if len(dims) == 1 and
                                             not isinstance(dims[0], numbers.Integral) else list(dims))
    T.t = lambda self: ops["transpose"](self, 0, 1) if self.ndim == 2 else self
    T.T = property(lambda self: ops["permute"](self, list(range(self.ndim))[::-1]))
    T.mT = property(lambda self: ops["transpose"](self, -2, -1))
    T.clone = lambda self: ops["clone"](self)
    T.to_dtype = lambda self, dtype: ops["cast"](self, dtype)
    T.cast = lambda self, dtype: ops["cast"](self, dtype)
    T.where = lambda self, condition, other: ops["where"](condition, self, other)

    def split(self, split_size_or_sections, dim=0):
        if isinstance(split_size_or_sections, numbers.Integral):
            size, n = int(split_size_or_sections), self.shape[dim]
            sizes = [min(size, n - i) for i in range(0, n, size)] or [0]
        else:
            sizes = list(split_size_or_sections)
        return ops["split"](self, sizes, dim)
    T.split = split
    T.chunk = lambda self, chunks, dim=0: ops["chunk"](self, chunks, dim)
    T.unbind = lambda self, dim=0: tuple(ops["select"](self, dim, i) for i in range(self.shape[dim]))
    T.zero_ = lambda self: ops["zero_"](self)

    # PyTorch's alpha (add, sub and their in-place forms): other scaled in
    # the same op, one pass in place (p.sub_(g, alpha=lr)).
    def _alpha(plain, scaled, sign):
        def fn(input, other, *, alpha=1):
            if alpha == 1:
                return ops[plain](input, other)
            return ops[scaled](input, other, sign * alpha)
        fn.__name__ = plain
        fn.__doc__ = "%s(input, other, *, alpha=1): input %s alpha * other." % (plain, "+" if sign > 0 else "-")
        return fn
    for plain, sign in (("add", 1), ("sub", -1)):
        setattr(T, plain, _alpha(plain, "add_scaled", sign))
        setattr(T, plain + "_", _alpha(plain + "_", "add_scaled_", sign))

    # ---- operators ----
    def binop(name, reverse=False):
        if reverse:
            return lambda self, other: ops[name](as_tensor(other, like=self), self)
        return lambda self, other: ops[name](self, other)
    for py, name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                     ("matmul", "matmul"), ("mod", "remainder")):
        setattr(T, "__%s__" % py, binop(name))
        setattr(T, "__r%s__" % py, binop(name, True))
    for py, name in (("add", "add_"), ("sub", "sub_"), ("mul", "mul_"), ("truediv", "div_")):
        setattr(T, "__i%s__" % py, binop(name))
    T.__floordiv__ = lambda self, other: ops["floor"](ops["div"](self, other))
    T.divide = T.div
    T.multiply = T.mul
    T.subtract = T.sub
    for py in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(T, "__%s__" % py, binop(py))
    T.__neg__ = lambda self: ops["neg"](self)
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: ops["abs"](self)
    T.__invert__ = lambda self: ops["eq"](self, False) if self.dtype is bool_ else NotImplemented
    T.__and__ = lambda self, o: ops["mul"](self.double(), as_tensor(o, like=self).double()).bool()
    T.__or__ = lambda self, o: ops["ne"](ops["add"](self.double(), as_tensor(o, like=self).double()), 0.0)

    # ---- indexing ----
    def _index(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        real = sum(1 for i in idx if i is not None and i is not Ellipsis)
        t, dim = self, 0
        for item in idx:
            if item is None:
                t = ops["unsqueeze"](t, dim)
                dim += 1
            elif item is Ellipsis:
                dim += self.ndim - real
            elif isinstance(item, slice):
                if item.step is not None and item.step <= 0:
                    raise ValueError("step must be greater than zero")
                t = ops["slice"](t, dim, item.start, item.stop, 1 if item.step is None else item.step)
                dim += 1
            elif isinstance(item, (numbers.Integral,)) or (isinstance(item, Tensor) and item.ndim == 0
                                                            and item.dtype is int64):
                t = ops["select"](t, dim, int(item))
            elif isinstance(item, (list, tuple, Tensor)):
                index = as_tensor(item, dtype=int64, like=self) if not isinstance(item, Tensor) else item
                if index.dtype is bool_:
                    raise NotImplementedError("boolean mask indexing: use ag.masked_fill or ag.where")
                t = ops["index_select"](t, dim, index.reshape(-1))
                dim += 1
            else:
                raise TypeError("cannot index a tensor with %r" % type(item).__name__)
        return t
    T.__getitem__ = _index

    def _setitem(self, idx, value):
        view = _index(self, idx)
        if isinstance(value, numbers.Number):
            ops["fill_"](view, value)
        else:
            ops["copy_"](view, as_tensor(value, like=self))
    T.__setitem__ = _setitem
