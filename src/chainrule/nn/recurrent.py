"""Recurrent layers with PyTorch's names, signatures, defaults and parameter layout: ``RNN``, ``LSTM``,
``GRU`` (stacked, optionally bidirectional), and the cells ``RNNCell``, ``LSTMCell``, ``GRUCell``.

Parameters are ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` per layer
``k``, with ``_reverse`` for the backward direction, in PyTorch's order and shapes, so a torch model's
``state_dict`` converted to NumPy loads with ``load_state_dict``. The input of each layer is projected
for all time steps in one matrix product; then a Python loop over time applies the recurrence to the
whole batch at once. Built from existing differentiable ops, so gradients of gradients and forward mode
work. ``LSTM(proj_size=P)`` is PyTorch's projected LSTM (``weight_hr_l{k}`` maps each new state to P values,
which are the output and the state fed back). Not supported: ``PackedSequence`` (it raises, saying what to do
instead).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> lstm = nn.LSTM(4, 8, num_layers=2, batch_first=True, rng=0)
    >>> out, (h, c) = lstm(np.zeros((3, 5, 4), dtype=np.float32))
    >>> out.shape, h.shape, c.shape
    ((3, 5, 8), (2, 3, 8), (2, 3, 8))
    >>> list(lstm.state_dict())[:4]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core.device import xp_of
from ..core.errors import ChainruleWarning
from ..ops.shape import concatenate, getitem, stack, swapaxes
from . import functional as F
from . import init
from .layers import _input
from .module import Module
from .module_placement import place
from .parameter import resolve_dtype
from .recurrent_cells import (
    GATES,
    GRUCell,
    LSTMCell,
    RNNCell,
    check_sizes,
    gru_step,
    lstm_step,
    rnn_step,
    shape_of,
    state_input,
    uniform_parameter,
)
from .utils.rnn import PackedSequence, run_packed

__all__ = ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"]


class _RNNBase(Module):
    """The stack of layers and directions shared by ``RNN``, ``LSTM`` and ``GRU``."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int, bias: bool, batch_first: bool,
                 dropout: float, bidirectional: bool, proj_size: int, device: Any, dtype: Any, rng: Any) -> None:
        super().__init__()
        where = type(self).__name__
        check_sizes(where, input_size, hidden_size)
        if isinstance(num_layers, bool) or not isinstance(num_layers, (int, np.integer)) or num_layers <= 0:
            raise ValueError(f"{where}: num_layers must be a positive int, got {num_layers!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(f"{where}: dropout must be a number in [0, 1], got {dropout!r}")
        if isinstance(proj_size, bool) or not isinstance(proj_size, (int, np.integer)) or proj_size < 0:
            raise ValueError(f"{where}: proj_size must be an int >= 0 (0: no projection), got {proj_size!r}")
        if proj_size >= hidden_size:
            raise ValueError(f"{where}: proj_size={proj_size} must be smaller than hidden_size={hidden_size} (the "
                             "projection maps each state to fewer values)")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"{where}: dropout={dropout} is applied between recurrent layers only (after every layer but the "
                "last), so with num_layers=1 it does nothing", ChainruleWarning, stacklevel=3)
        dt = resolve_dtype(dtype, where, device)
        gen = init.generator(rng)
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = int(input_size), int(hidden_size), int(num_layers)
        self.bias, self.batch_first, self.bidirectional = bool(bias), bool(batch_first), bool(bidirectional)
        self.dropout, self.proj_size = float(dropout), int(proj_size)
        rows = GATES[mode] * self.hidden_size
        directions = 2 if bidirectional else 1
        out_size = self.proj_size or self.hidden_size  # what each step outputs and feeds back
        for layer in range(self.num_layers):
            fan_in = self.input_size if layer == 0 else out_size * directions
            for suffix in ("", "_reverse")[:directions]:  # PyTorch's order: w_ih, w_hh, b_ih, b_hh(, w_hr)
                setattr(self, f"weight_ih_l{layer}{suffix}", uniform_parameter(gen, (rows, fan_in), hidden_size, dt))
                setattr(self, f"weight_hh_l{layer}{suffix}", uniform_parameter(gen, (rows, out_size), hidden_size, dt))
                if bias:
                    setattr(self, f"bias_ih_l{layer}{suffix}", uniform_parameter(gen, (rows,), hidden_size, dt))
                    setattr(self, f"bias_hh_l{layer}{suffix}", uniform_parameter(gen, (rows,), hidden_size, dt))
                if self.proj_size:
                    setattr(self, f"weight_hr_l{layer}{suffix}",
                            uniform_parameter(gen, (self.proj_size, self.hidden_size), hidden_size, dt))
        # dropout masks between layers, from ``.rng`` as nn.Dropout's (None: the generator manual_seed resets)
        self.rng = None if rng is None else gen
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def reset_parameters(self, rng: Any = None) -> None:
        """Draw every weight and bias again from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        bound = 1.0 / np.sqrt(self.hidden_size)
        gen = init.generator(rng)
        for p in self.parameters():
            init.uniform_(p, -bound, bound, rng=gen)

    def flatten_parameters(self) -> None:
        """PyTorch's cuDNN memory-layout call: nothing to do here (chainrule runs on the CPU)."""

    @property
    def num_directions(self) -> int:
        return 2 if self.bidirectional else 1

    @property
    def all_weights(self) -> list[list[Any]]:
        """PyTorch's ``all_weights``: per layer and direction, ``[weight_ih, weight_hh(, bias_ih, bias_hh)
        (, weight_hr)]``."""
        return [[p for p in (*self._weights(layer, d), self._projection(layer, d)) if p is not None]
                for layer in range(self.num_layers) for d in range(self.num_directions)]

    def _weights(self, layer: int, direction: int) -> tuple[Any, Any, Any, Any]:
        s = f"l{layer}" + ("_reverse" if direction else "")
        p = self._parameters
        return p[f"weight_ih_{s}"], p[f"weight_hh_{s}"], p.get(f"bias_ih_{s}"), p.get(f"bias_hh_{s}")

    def _projection(self, layer: int, direction: int) -> Any:
        """The projected LSTM's ``weight_hr`` (None without ``proj_size``)."""
        return self._parameters.get(f"weight_hr_l{layer}" + ("_reverse" if direction else ""))

    def _states(self, hx: Any, n: int, unbatched: bool, dt: np.dtype) -> list[list[Any]]:
        """The initial states as lists (one per layer and direction) of (N, hidden) arrays or Tensors."""
        where = type(self).__name__
        count = self.num_layers * self.num_directions
        names = ("h0", "c0") if self.mode == "LSTM" else ("h0",)
        sizes = (self.proj_size or self.hidden_size, self.hidden_size)  # h0's (the projection's), c0's
        if hx is None:
            xp = xp_of(self.weight_ih_l0._data)  # on the weights' device
            return [[xp.zeros((n, size), dtype=dt)] * count for _, size in zip(names, sizes)]
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"LSTM: the initial state must be a pair (h0, c0), got {type(hx).__name__}")
            given = list(hx)
        else:
            if isinstance(hx, (tuple, list)):
                raise TypeError(f"{where}: the initial state is one array h0 (a pair (h0, c0) is for LSTM)")
            given = [hx]
        out = []
        for name, h, size in zip(names, given, sizes[:len(names)], strict=True):
            want = (count, size) if unbatched else (count, n, size)
            h = state_input(h, dt, where)
            if shape_of(h) != want:
                what = "proj_size" if size != self.hidden_size else "hidden_size"
                raise ValueError(
                    f"{where}: {name} must have shape {want} (num_layers * num_directions"
                    + ("" if unbatched else ", batch") + f", {what}), got {shape_of(h)}"
                )
            out.append([getitem(h, (k, None) if unbatched else k) for k in range(count)])
        return out

    def _run(self, xw: Any, states: list[Any], w_hh: Any, b_hh: Any, reverse: bool,
             w_hr: Any = None) -> tuple[Any, list[Any]]:
        """One direction of one layer: the outputs (L, N, hidden or proj_size) in time order and the final states."""
        steps = range(shape_of(xw)[0])
        outs = []
        for t in reversed(steps) if reverse else steps:
            x_t = getitem(xw, t)
            if self.mode == "LSTM":
                h, c = lstm_step(x_t, states[0], states[1], w_hh, b_hh, self.hidden_size)
                states = [h if w_hr is None else F.linear(h, w_hr), c]
            elif self.mode == "GRU":
                states = [gru_step(x_t, states[0], w_hh, b_hh, self.hidden_size)]
            else:
                states = [rnn_step(x_t, states[0], w_hh, b_hh, "tanh" if self.mode == "RNN_TANH" else "relu")]
            outs.append(states[0])
        if reverse:
            outs.reverse()
        return stack(outs, axis=0), states

    def _forward(self, input: Any, hx: Any) -> tuple[Any, list[Any]]:  # noqa: A002
        where = type(self).__name__
        if isinstance(input, PackedSequence):  # each sequence for its own length (nn.utils.rnn)
            return run_packed(self, input, hx)
        if type(input).__name__ == "PackedSequence":
            raise TypeError(f"{where}: got another library's PackedSequence ({type(input).__module__}); pack the "
                            "batch with chainrule.nn.utils.rnn.pack_padded_sequence (or pack_sequence)")
        dt = self.weight_ih_l0.dtype
        x = _input(input, dt, where)
        shape = shape_of(x)
        if len(shape) not in (2, 3) or shape[-1] != self.input_size:
            order = "(N, L, {0})" if self.batch_first else "(L, N, {0})"
            raise ValueError(
                f"{where}: input must be batched {order.format(self.input_size)} or unbatched (L, {self.input_size}), "
                f"got shape {shape}"
            )
        unbatched = len(shape) == 2
        length, n = (shape[0], 1) if unbatched else (shape[1], shape[0]) if self.batch_first else shape[:2]
        if length == 0:
            raise ValueError(f"{where}: the input sequence is empty (length 0); there is no step to run")
        init_states = self._states(hx, n, unbatched, dt)
        finals: list[list[Any]] = [[] for _ in init_states]
        layer_input = x
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                layer_input = F.dropout(layer_input, self.dropout, True, rng=self.rng)
            outs = []
            for direction in range(self.num_directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                k = layer * self.num_directions + direction
                xw = F.linear(layer_input, w_ih, b_ih)  # every time step's input part in one product
                if layer == 0:  # the input's own layout as (L, N, gates): the first op on it involves a weight (jit)
                    xw = getitem(xw, (slice(None), None)) if unbatched else swapaxes(xw, 0, 1) if self.batch_first \
                        else xw
                out, last = self._run(xw, [s[k] for s in init_states], w_hh, b_hh, reverse=direction == 1,
                                      w_hr=self._projection(layer, direction))
                outs.append(out)
                for f, s in zip(finals, last, strict=True):
                    f.append(s)
            layer_input = outs[0] if len(outs) == 1 else concatenate(outs, axis=-1)
        output = layer_input
        results = [stack(f, axis=0) for f in finals]  # (num_layers * num_directions, N, hidden)
        if unbatched:
            output = getitem(output, (slice(None), 0))
            results = [getitem(r, (slice(None), 0)) for r in results]
        elif self.batch_first:
            output = swapaxes(output, 0, 1)
        return output, results

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        return s


class RNN(_RNNBase):
    """PyTorch's ``nn.RNN``: stacked Elman layers, ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    (or ``relu``). ``rnn(input, hx=None)`` returns ``(output, h_n)``: input (L, N, input_size), (N, L,
    input_size) with ``batch_first=True``, or unbatched (L, input_size); ``hx`` and ``h_n`` have shape
    (num_layers * num_directions, N, hidden_size) (no N when unbatched); ``output`` holds the last layer's
    states at every step, both directions side by side ((L, N, num_directions * hidden_size)).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> rnn = nn.RNN(3, 4, bidirectional=True, rng=0)
        >>> out, h = rnn(np.ones((6, 3), dtype=np.float32))
        >>> rnn, out.shape, h.shape
        (RNN(3, 4, bidirectional=True), (6, 8), (2, 4))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, *, rng: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype, rng)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:  # noqa: A002  (PyTorch's argument name)
        output, (h_n,) = self._forward(input, hx)
        return output, h_n


class LSTM(_RNNBase):
    """PyTorch's ``nn.LSTM`` (gates i, f, g, o stacked in the weights' rows). ``lstm(input, hx=None)`` with
    ``hx = (h0, c0)`` returns ``(output, (h_n, c_n))``; shapes as :class:`RNN`. With ``proj_size=P`` (PyTorch's
    projected LSTM) each new state is multiplied by ``weight_hr_l{k}`` (P, hidden_size): the output, ``h0`` and
    ``h_n`` have P values, ``c0`` and ``c_n`` keep hidden_size.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> lstm = nn.LSTM(3, 4, rng=0)
        >>> out, (h, c) = lstm(np.ones((5, 2, 3), dtype=np.float32))
        >>> out.shape, h.shape, bool(np.allclose(out.numpy()[-1], h.numpy()[0]))
        ((5, 2, 4), (1, 2, 4), True)
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype, rng)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, tuple[Any, Any]]:  # noqa: A002
        output, (h_n, c_n) = self._forward(input, hx)
        return output, (h_n, c_n)


class GRU(_RNNBase):
    """PyTorch's ``nn.GRU`` (gates r, z, n stacked in the weights' rows). ``gru(input, hx=None)`` returns
    ``(output, h_n)``; shapes as :class:`RNN`.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> gru = nn.GRU(3, 4, num_layers=2, rng=0)
        >>> out, h = gru(np.ones((5, 2, 3), dtype=np.float32))
        >>> out.shape, h.shape, gru.weight_ih_l1.shape
        ((5, 2, 4), (2, 2, 4), (12, 4))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, *, rng: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype, rng)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:  # noqa: A002
        output, (h_n,) = self._forward(input, hx)
        return output, h_n
