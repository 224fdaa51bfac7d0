"""Optimizers with torch.optim's names, arguments and defaults, over ag's fused
C kernels (ag/optim.h): one pass over each parameter per step, no graph.

    opt = ag.optim.Adam(model_params, lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()

param_groups is a list of dicts as in PyTorch; an "lr" changed there (by hand
or by a schedule) is used from the next step on.
"""
import ctypes
import math

from . import _capi
from ._lib import F, C, call

# Option name -> (struct field, AG_OPTIM_ZERO_* bit that makes an explicit 0 mean 0).
_FIELDS = {
    "lr": ("lr", "AG_OPTIM_ZERO_LR"),
    "momentum": ("momentum", None),
    "dampening": ("dampening", None),
    "weight_decay": ("weight_decay", "AG_OPTIM_ZERO_WEIGHT_DECAY"),
    "eps": ("eps", "AG_OPTIM_ZERO_EPS"),
    "alpha": ("alpha", "AG_OPTIM_ZERO_ALPHA"),
    "lr_decay": ("lr_decay", None),
    "initial_accumulator_value": ("initial_accumulator_value", None),
}
_FLAGS = ("nesterov", "amsgrad", "centered", "maximize")


def _options(values):
    s = _capi.ag_optimizer_options()
    call("ag_optimizer_options_init", ctypes.byref(s))
    zero = 0
    items = dict(values)
    if "betas" in items:
        items["beta1"], items["beta2"] = items.pop("betas")
    for key, value in items.items():
        if key in _FIELDS:
            field, bit = _FIELDS[key]
        elif key in ("beta1", "beta2"):
            field, bit = key, "AG_OPTIM_ZERO_" + key.upper()
        elif key in _FLAGS:
            setattr(s, key, 1 if value else 0)
            continue
        elif key == "params":
            continue
        else:
            raise TypeError("unknown optimizer option %r" % key)
        setattr(s, field, float(value))
        if float(value) == 0.0 and bit:
            zero |= C[bit]
    s.zero_fields = zero
    return s


def _handles(params):
    return (ctypes.c_void_p * max(1, len(params)))(*[p._h for p in params])


class Optimizer:
    """An ag_optimizer of kind `_kind` with torch-style parameter groups."""
    _kind = None

    def __init__(self, params, **defaults):
        params = list(params)
        self.defaults = defaults
        h = ctypes.c_void_p()
        call("ag_optimizer_create", ctypes.byref(h), C[self._kind], ctypes.byref(_options(defaults)))
        self._h = h.value
        self.param_groups = []
        for group in (params if params and isinstance(params[0], dict) else [{"params": params}]):
            self.add_param_group(group)

    def add_param_group(self, group):
        group = dict(group)
        params = list(group["params"])
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        group["params"] = params
        call("ag_optimizer_add_param_group", self._h, _handles(params), len(params),
             ctypes.byref(_options(group)))
        self.param_groups.append(group)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            from ._tensor import enable_grad
            with enable_grad():
                loss = closure()
        for i, group in enumerate(self.param_groups):
            if "lr" in group:
                call("ag_optimizer_set_lr", self._h, i, float(group["lr"]))
        call("ag_optimizer_step", self._h)
        return loss

    def zero_grad(self, set_to_none=True):
        if set_to_none:
            call("ag_optimizer_zero_grad", self._h)
            return
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.zero_()

    # ---- introspection and checkpoints (torch's state_dict, piece by piece) ----
    @property
    def num_params(self):
        return F["ag_optimizer_num_params"](self._h)

    @property
    def num_groups(self):
        return F["ag_optimizer_num_groups"](self._h)

    def get_lr(self, group=0):
        """The learning rate the C optimizer holds for `group`."""
        out = ctypes.c_double()
        call("ag_optimizer_get_lr", self._h, group, ctypes.byref(out))
        return out.value

    def state(self, index, name):
        """A copy of state tensor `name` ("exp_avg", "momentum_buffer", ...) of
        parameter `index` (in group order), or None before its first update."""
        from ._tensor import wrap_out
        hp = ctypes.c_void_p()
        call("ag_optimizer_get_state", self._h, index, name.encode(), ctypes.byref(hp))
        return wrap_out(hp)

    def set_state(self, index, name, value):
        call("ag_optimizer_set_state", self._h, index, name.encode(), value._h)

    def step_count(self, index):
        out = ctypes.c_int64()
        call("ag_optimizer_get_step", self._h, index, ctypes.byref(out))
        return out.value

    def set_step_count(self, index, step):
        call("ag_optimizer_set_step", self._h, index, int(step))

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and F is not None:
            F["ag_optimizer_release"](h)


def _kind(name, cname, **torch_defaults):
    def __init__(self, params, **options):
        unknown = set(options) - set(torch_defaults)
        if unknown:
            raise TypeError("%s got unknown options %s" % (name, sorted(unknown)))
        Optimizer.__init__(self, params, **dict(torch_defaults, **options))
    return type(name, (Optimizer,), {"_kind": cname, "__init__": __init__,
                                     "__doc__": "torch.optim.%s over ag's fused kernels." % name})


SGD = _kind("SGD", "AG_OPTIM_SGD", lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
            nesterov=False, maximize=False)
Adam = _kind("Adam", "AG_OPTIM_ADAM", lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
             amsgrad=False, maximize=False)
AdamW = _kind("AdamW", "AG_OPTIM_ADAMW", lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
              amsgrad=False, maximize=False)
RMSprop = _kind("RMSprop", "AG_OPTIM_RMSPROP", lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0,
                momentum=0.0, centered=False, maximize=False)
Adagrad = _kind("Adagrad", "AG_OPTIM_ADAGRAD", lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                initial_accumulator_value=0.0, eps=1e-10, maximize=False)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    """torch.nn.utils.clip_grad_norm_: scales the gradients in place; returns the total norm."""
    params = [parameters] if hasattr(parameters, "_h") else list(parameters)
    total = ctypes.c_double()
    norm_type = math.inf if norm_type in ("inf", float("inf")) else float(norm_type)
    call("ag_clip_grad_norm", _handles(params), len(params), float(max_norm), norm_type, ctypes.byref(total))
    return total.value


def clip_grad_value_(parameters, clip_value):
    """torch.nn.utils.clip_grad_value_: clamps the gradients in place."""
    params = [parameters] if hasattr(parameters, "_h") else list(parameters)
    call("ag_clip_grad_value", _handles(params), len(params), float(clip_value))
