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

from .functional import gelu, log_softmax, relu, sigmoid, silu, softmax, tanh
from .module import Module

__all__ = [
    "relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
    "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Identity", "activation",
]


class Identity(Module):
    """Returns its input unchanged."""

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
    """softmax along ``dim`` (PyTorch's name) or ``axis``; the last axis by default."""

    def __init__(self, dim: int | None = None, *, axis: int | None = None) -> None:
        super().__init__()
        if dim is not None and axis is not None:
            raise TypeError(f"{type(self).__name__}: got both dim={dim} and axis={axis}; pass one")
        self.axis = next((a for a in (dim, axis) if a is not None), -1)

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
