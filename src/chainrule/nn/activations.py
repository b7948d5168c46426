"""Activation layers (``ReLU``, ``GELU``, ``SiLU``, ``Tanh``, ``Sigmoid``, ``Softmax``, ...).

The functions themselves live in :mod:`chainrule.nn.functional` (and are re-exported here).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> nn.ReLU()(np.array([-1.0, 2.0]))
    array([0., 2.])
"""

from __future__ import annotations

from typing import Any

from .functional import extras as F
from .functional import gelu, log_softmax, relu, sigmoid, silu, softmax, softplus, tanh
from .module import Module

__all__ = [
    "relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Identity", "activation",
    "LeakyReLU", "ELU", "SELU", "CELU", "Hardtanh", "ReLU6", "Softsign", "LogSigmoid", "Mish", "Hardswish",
    "Hardsigmoid", "GLU", "Softplus",
]


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored, as PyTorch's)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class ReLU(Module):
    """max(x, 0). (PyTorch's ``inplace`` flag is accepted: the same numbers, computed out of place.)"""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return relu(x)


class GELU(Module):
    """Gaussian error linear unit; ``approximate='none'`` (exact, erf) or ``'tanh'``."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Any) -> Any:
        return gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x). (PyTorch's ``inplace`` flag is accepted: the same numbers, computed out of place.)"""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return silu(x)


class Tanh(Module):
    """tanh(x)."""

    def forward(self, x: Any) -> Any:
        return tanh(x)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, x: Any) -> Any:
        return sigmoid(x)


class Softmax(Module):
    """softmax along ``dim`` (PyTorch's name) or ``axis``; without either, PyTorch's implicit choice (the last
    axis of a 1-d or 2-d input; axis 0 of a 3-d one, 1 beyond, with its deprecation warning), as ``F.softmax``."""

    def __init__(self, dim: int | None = None, *, axis: int | None = None) -> None:
        super().__init__()
        if dim is not None and axis is not None:
            raise TypeError(f"{type(self).__name__}: got both dim={dim} and axis={axis}; pass one")
        self.axis = dim if dim is not None else axis

    def forward(self, x: Any) -> Any:
        return softmax(x, axis=self.axis)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class LogSoftmax(Softmax):
    """log_softmax along ``axis``."""

    def forward(self, x: Any) -> Any:
        return log_softmax(x, axis=self.axis)


_BY_NAME = {
    "relu": ReLU, "gelu": GELU, "gelu_tanh": lambda: GELU("tanh"), "silu": SiLU, "swish": SiLU,
    "tanh": Tanh, "sigmoid": Sigmoid, "identity": Identity, "linear": Identity,
}


def activation(spec: Any) -> Module:
    """An activation layer from a name ('relu', 'gelu', 'gelu_tanh', 'silu', 'tanh', 'sigmoid',
    'identity'), a Module class, a Module, or None (identity).

    Example:
        >>> from chainrule import nn
        >>> nn.activation("gelu")
        GELU(approximate='none')
    """
    if spec is None:
        return Identity()
    if isinstance(spec, Module):
        return spec
    if isinstance(spec, type) and issubclass(spec, Module):
        return spec()
    if isinstance(spec, str) and spec.lower() in _BY_NAME:
        return _BY_NAME[spec.lower()]()
    raise ValueError(f"activation: unknown activation {spec!r}; use one of {sorted(_BY_NAME)} or a Module")


def _layer(name: str, fn: Any, doc: str, **defaults: Any) -> type:
    """A Module applying ``fn(x, **its arguments)``, with PyTorch's name, arguments and defaults."""

    def __init__(self: Module, *args: Any, inplace: bool = False, **kw: Any) -> None:
        Module.__init__(self)
        names = list(defaults)
        if len(args) > len(names):
            raise TypeError(f"{name}: takes at most {len(names)} positional arguments ({', '.join(names)})")
        unknown = set(kw) - set(names)
        if unknown:
            raise TypeError(f"{name}: unexpected arguments {sorted(unknown)}; it takes {names}")
        self.arguments = {**defaults, **dict(zip(names, args, strict=False)), **kw}

    def forward(self: Module, x: Any) -> Any:
        return fn(x, **self.arguments)

    def extra_repr(self: Module) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.arguments.items())

    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc, "__module__": __name__})


LeakyReLU = _layer("LeakyReLU", F.leaky_relu, "``leaky_relu``: slope ``negative_slope`` below 0.", negative_slope=0.01)
ELU = _layer("ELU", F.elu, "``elu``: ``alpha * (exp(x) - 1)`` below 0.", alpha=1.0)
SELU = _layer("SELU", F.selu, "``selu``: self-normalising ELU.")
CELU = _layer("CELU", F.celu, "``celu``: ``alpha * (exp(x / alpha) - 1)`` below 0.", alpha=1.0)
Hardtanh = _layer("Hardtanh", F.hardtanh, "``hardtanh``: clip to [min_val, max_val].", min_val=-1.0, max_val=1.0)
ReLU6 = _layer("ReLU6", F.relu6, "``relu6``: clip to [0, 6].")
Softsign = _layer("Softsign", F.softsign, "``softsign``: ``x / (1 + |x|)``.")
LogSigmoid = _layer("LogSigmoid", F.logsigmoid, "``logsigmoid``: ``log(sigmoid(x))``, stably.")
Mish = _layer("Mish", F.mish, "``mish``: ``x * tanh(softplus(x))``.")
Hardswish = _layer("Hardswish", F.hardswish, "``hardswish``: ``x * relu6(x + 3) / 6``.")
Hardsigmoid = _layer("Hardsigmoid", F.hardsigmoid, "``hardsigmoid``: ``relu6(x + 3) / 6``.")
GLU = _layer("GLU", F.glu, "``glu``: gated linear unit along ``dim``.", dim=-1)
Softplus = _layer("Softplus", softplus, "``softplus``: ``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.",
                  beta=1.0, threshold=20.0)
