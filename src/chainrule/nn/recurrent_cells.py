"""Recurrent cells with PyTorch's names and layouts: ``RNNCell``, ``LSTMCell``, ``GRUCell``; and the
one-step functions that ``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` (recurrent.py) loop over time.

A cell's parameters are ``weight_ih`` (gates * hidden, input), ``weight_hh`` (gates * hidden, hidden),
``bias_ih`` and ``bias_hh`` (gates * hidden), with the gates stacked in PyTorch's order: i, f, g, o
for the LSTM, r, z, n for the GRU. Every step is made of existing differentiable ops (``linear``,
slicing, ``sigmoid``, ``tanh``, products), so gradients of any order and forward mode come for free.

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> cell = nn.LSTMCell(3, 5, rng=0)
    >>> h, c = cell(np.ones((2, 3), dtype=np.float32))
    >>> h.shape, c.shape, cell.weight_ih.shape
    ((2, 5), (2, 5), (20, 3))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.device import xp_of
from ..ops.elementwise import relu, sigmoid, tanh
from ..ops.shape import getitem, reshape
from ..tensor import Tensor
from . import functional as F
from . import init
from .layers import _input
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _cols(x: Any, k: int, size: int) -> Any:
    """Block ``k`` of width ``size`` along the last axis (one gate of a stacked pre-activation)."""
    return getitem(x, (Ellipsis, slice(k * size, (k + 1) * size)))


def rnn_step(xw: Any, h: Any, w_hh: Any, b_hh: Any, nonlinearity: str) -> Any:
    """``act(x W_ih^T + b_ih + h W_hh^T + b_hh)``; ``xw`` is the input part, already computed."""
    pre = xw + F.linear(h, w_hh, b_hh)
    return tanh(pre) if nonlinearity == "tanh" else relu(pre)


def lstm_step(xw: Any, h: Any, c: Any, w_hh: Any, b_hh: Any, size: int) -> tuple[Any, Any]:
    """One LSTM step (gates i, f, g, o): ``c' = f c + i g``, ``h' = o tanh(c')``."""
    gates = xw + F.linear(h, w_hh, b_hh)
    i, f = sigmoid(_cols(gates, 0, size)), sigmoid(_cols(gates, 1, size))
    g, o = tanh(_cols(gates, 2, size)), sigmoid(_cols(gates, 3, size))
    c = f * c + i * g
    return o * tanh(c), c


def gru_step(xw: Any, h: Any, w_hh: Any, b_hh: Any, size: int) -> Any:
    """One GRU step (gates r, z, n), as PyTorch: ``n = tanh(x_n + r (h W_hn^T + b_hn))``,
    ``h' = (1 - z) n + z h``, written ``n + z (h - n)``."""
    hw = F.linear(h, w_hh, b_hh)
    r = sigmoid(_cols(xw, 0, size) + _cols(hw, 0, size))
    z = sigmoid(_cols(xw, 1, size) + _cols(hw, 1, size))
    n = tanh(_cols(xw, 2, size) + r * _cols(hw, 2, size))
    return n + z * (h - n)


def uniform_parameter(gen: np.random.Generator, shape: tuple[int, ...], hidden_size: int, dt: np.dtype) -> Parameter:
    """PyTorch's initialisation of every recurrent weight and bias: U(-1/sqrt(hidden), 1/sqrt(hidden))."""
    bound = 1.0 / math.sqrt(hidden_size)
    return Parameter(gen.uniform(-bound, bound, shape), dtype=dt)


def check_sizes(where: str, input_size: int, hidden_size: int) -> None:
    for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(f"{where}: {name} must be a positive int, got {value!r}")


def state_input(h: Any, dt: np.dtype, where: str) -> Any:
    """An initial state as the layer's dtype (a Tensor keeps its graph; another float dtype is an error)."""
    return _input(h, dt, where)


def shape_of(x: Any) -> tuple[int, ...]:
    return tuple(x._data.shape if isinstance(x, Tensor) else np.shape(x))


class _CellBase(Module):
    """The parameters of one cell: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, device: Any, dtype: Any, rng: Any) -> None:
        super().__init__()
        where = type(self).__name__
        check_sizes(where, input_size, hidden_size)
        dt = resolve_dtype(dtype, where, device)
        gen = init.generator(rng)
        self.input_size, self.hidden_size, self.bias = int(input_size), int(hidden_size), bool(bias)
        rows = GATES[self._mode] * self.hidden_size
        self.weight_ih = uniform_parameter(gen, (rows, self.input_size), self.hidden_size, dt)
        self.weight_hh = uniform_parameter(gen, (rows, self.hidden_size), self.hidden_size, dt)
        self.bias_ih = uniform_parameter(gen, (rows,), self.hidden_size, dt) if bias else None
        self.bias_hh = uniform_parameter(gen, (rows,), self.hidden_size, dt) if bias else None
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def reset_parameters(self, rng: Any = None) -> None:
        """Draw every weight and bias again from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        gen = init.generator(rng)
        for p in self.parameters():
            init.uniform_(p, -bound, bound, rng=gen)

    def _prepare(self, x: Any, states: list[Any]) -> tuple[Any, list[Any], bool]:
        """(input as (N, input_size), states as (N, hidden) zeros where None, whether it was unbatched)."""
        where = type(self).__name__
        dt = self.weight_ih.dtype
        x = _input(x, dt, where)
        shape = shape_of(x)
        if len(shape) not in (1, 2) or shape[-1] != self.input_size:
            raise ValueError(
                f"{where}: input must be (N, {self.input_size}) or unbatched ({self.input_size},), got shape {shape}"
            )
        unbatched = len(shape) == 1
        n = 1 if unbatched else shape[0]
        if unbatched:
            x = reshape(x, (1, self.input_size))
        want = (self.hidden_size,) if unbatched else (n, self.hidden_size)
        out = []
        for h in states:
            if h is None:
                out.append(xp_of(self.weight_ih._data).zeros((n, self.hidden_size), dtype=dt))  # the weights' device
                continue
            h = state_input(h, dt, where)
            if shape_of(h) != want:
                raise ValueError(f"{where}: the hidden state must have shape {want} for an input of shape {shape}, "
                                 f"got {shape_of(h)}")
            out.append(reshape(h, (1, self.hidden_size)) if unbatched else h)
        return x, out, unbatched

    def _xw(self, x: Any) -> Any:
        return F.linear(x, self.weight_ih, self.bias_ih)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


def _unbatch(h: Any, unbatched: bool) -> Any:
    return reshape(h, (h.shape[-1],)) if unbatched else h


class RNNCell(_CellBase):
    """An Elman cell, PyTorch's ``nn.RNNCell``: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``
    (or ``relu`` with ``nonlinearity="relu"``). ``cell(input, hx=None)``: input (N, input_size) or
    unbatched (input_size,); ``hx`` of shape (N, hidden_size) (zeros when None); returns h'.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> cell = nn.RNNCell(4, 3, nonlinearity="relu", rng=0)
        >>> cell
        RNNCell(4, 3, nonlinearity=relu)
        >>> cell(np.ones(4, dtype=np.float32)).shape
        (3,)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None, *, rng: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device, dtype, rng)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002  (PyTorch's argument name)
        x, (h,), unbatched = self._prepare(input, [hx])
        return _unbatch(rnn_step(self._xw(x), h, self.weight_hh, self.bias_hh, self.nonlinearity), unbatched)

    def extra_repr(self) -> str:
        return super().extra_repr() + ("" if self.nonlinearity == "tanh" else f", nonlinearity={self.nonlinearity}")


class LSTMCell(_CellBase):
    """PyTorch's ``nn.LSTMCell`` (gates i, f, g, o stacked in the weights' rows). ``cell(input, hx=None)``
    with ``hx = (h, c)``, each (N, hidden_size) (zeros when None); returns ``(h', c')``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> cell = nn.LSTMCell(2, 3, rng=0)
        >>> x = np.ones((4, 2), dtype=np.float32)
        >>> h, c = cell(x)
        >>> h, c = cell(x, (h, c))
        >>> h.shape
        (4, 3)
    """

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 *, rng: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype, rng)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:  # noqa: A002
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a pair (h, c) of states, got {type(hx).__name__}")
        x, (h, c), unbatched = self._prepare(input, [None, None] if hx is None else list(hx))
        h, c = lstm_step(self._xw(x), h, c, self.weight_hh, self.bias_hh, self.hidden_size)
        return _unbatch(h, unbatched), _unbatch(c, unbatched)


class GRUCell(_CellBase):
    """PyTorch's ``nn.GRUCell`` (gates r, z, n stacked in the weights' rows). ``cell(input, hx=None)``;
    returns h'.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.GRUCell(2, 3, rng=0)(np.ones((4, 2), dtype=np.float32)).shape
        (4, 3)
    """

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 *, rng: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype, rng)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        x, (h,), unbatched = self._prepare(input, [hx])
        return _unbatch(gru_step(self._xw(x), h, self.weight_hh, self.bias_hh, self.hidden_size), unbatched)
