"""Neural networks on the ``Scalar`` engine: ``Neuron``, ``Layer``, ``MLP`` (micrograd's API).

Each neuron computes ``act(w . x + b)`` with one graph node for the weighted sum (its local
derivatives are the inputs and the weights), so a forward pass makes far fewer nodes than
``sum(wi * xi for ...)`` and ``backward`` is correspondingly faster; the gradients are the
same. The optimisers of :mod:`chainrule.optim` step these parameters too.

Example:
    >>> from chainrule import nn, optim
    >>> model = nn.scalar.MLP(2, [8, 1], rng=0)
    >>> opt = optim.SGD(model.parameters(), lr=0.1)
    >>> out = model([1.0, -2.0])
    >>> loss = (out - 1.0) ** 2
    >>> model.zero_grad(); loss.backward(); opt.step()
    >>> len(model.parameters())
    33
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..core.device import as_array
from ..scalar import Scalar, _node_with_parents
from ..scalar.rules import FLOATS, dot
from . import init
from .mlp_plan import mlp_plan

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear", None)


class ScalarModule:
    """Base class: ``parameters()`` (a list of Scalars), ``zero_grad()``, ``state_dict()``."""

    def parameters(self) -> list[Scalar]:
        return [p for _, p in self.named_parameters()]

    def named_parameters(self) -> list[tuple[str, Scalar]]:  # pragma: no cover - overridden
        return []

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to 0."""
        for p in self.parameters():
            p.grad = 0.0

    def state_dict(self) -> dict[str, np.ndarray]:
        """``{name: float64 value}`` for every parameter (names like 'layers.0.neurons.3.w.1')."""
        return {name: as_array(p.data, dtype=np.float64) for name, p in self.named_parameters()}

    def load_state_dict(self, state: Any) -> None:
        """Set the parameters from ``state_dict()``-shaped data (every name must match)."""
        own = dict(self.named_parameters())
        missing = [k for k in own if k not in state]
        extra = [k for k in state if k not in own]
        if missing or extra:
            raise ValueError(
                f"load_state_dict for {type(self).__name__}: missing key(s) {missing[:5]}"
                f"{'...' if len(missing) > 5 else ''}, unexpected key(s) {extra[:5]}{'...' if len(extra) > 5 else ''}"
            )
        for k, p in own.items():
            v = as_array(state[k])
            if v.shape != ():
                raise ValueError(f"load_state_dict: '{k}' must be a single number, got shape {v.shape}")
            p.data = float(v)


class Neuron(ScalarModule):
    """``act(w . x + b)`` with ``nin`` weights drawn from U(-1, 1) and bias 0 (micrograd).

    ``activation``: 'relu' (micrograd's default), 'tanh', 'sigmoid' or 'linear'/None;
    micrograd's ``nonlin=False`` means 'linear'.

    Example:
        >>> from chainrule import nn
        >>> n = nn.scalar.Neuron(3, activation="tanh", rng=0)
        >>> y = n([1.0, 2.0, 3.0]); y.backward()
        >>> y.op, len(n.parameters())
        ('tanh', 4)
    """

    def __init__(self, nin: int, nonlin: bool = True, activation: str | None = "relu", rng: Any = None) -> None:
        if activation not in _ACTIVATIONS:
            raise ValueError(f"Neuron: activation must be one of {_ACTIVATIONS}, got {activation!r}")
        if nin <= 0:
            raise ValueError(f"Neuron: nin must be positive, got {nin}")
        gen = init.generator(rng)
        self.w = [Scalar(float(v)) for v in gen.uniform(-1.0, 1.0, int(nin))]
        self.b = Scalar(0.0)
        self.activation = activation if nonlin and activation != "linear" else None

    def __call__(self, x: Sequence[Any]) -> Scalar:
        w = self.w
        if len(x) != len(w):
            raise ValueError(f"Neuron: expected {len(w)} inputs, got {len(x)}")
        b = self.b
        total = b.data
        parents: list[Scalar] = [b]  # b, then each Scalar input before its weight, then the weights of numbers
        values = [total]  # the data of b and of the (input, weight) pairs, for the rule
        weights_of_numbers: list[Scalar] = []
        numbers: list[float] = []
        for wi, xi in zip(w, x, strict=False):
            wv = wi.data
            if isinstance(xi, Scalar):
                xv = xi.data
                parents.append(xi)
                parents.append(wi)
                values.append(xv)
                values.append(wv)
            else:
                xv = float(xi)
                weights_of_numbers.append(wi)
                numbers.append(xv)
            total += wv * xv
        parents += weights_of_numbers
        op = dot(len(numbers))
        local = op.derivative(values, numbers, FLOATS)
        out = _node_with_parents(total, tuple(parents), local, op)
        act = self.activation
        if act == "relu":
            return out.relu()
        if act == "tanh":
            return out.tanh()
        if act == "sigmoid":
            return out.sigmoid()
        return out

    def named_parameters(self) -> list[tuple[str, Scalar]]:
        return [(f"w.{i}", w) for i, w in enumerate(self.w)] + [("b", self.b)]

    def __repr__(self) -> str:
        return f"{(self.activation or 'linear').capitalize()}Neuron({len(self.w)})"


class Layer(ScalarModule):
    """``nout`` neurons reading the same ``nin`` inputs; returns a list (one Scalar when ``nout == 1``)."""

    def __init__(self, nin: int, nout: int, rng: Any = None, **kwargs: Any) -> None:
        gen = init.generator(rng)
        self.neurons = [Neuron(nin, rng=gen, **kwargs) for _ in range(int(nout))]

    def __call__(self, x: Sequence[Any]) -> Any:
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def named_parameters(self) -> list[tuple[str, Scalar]]:
        return [(f"neurons.{i}.{k}", p) for i, n in enumerate(self.neurons) for k, p in n.named_parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(ScalarModule):
    """``MLP(nin, [h1, ..., nout])``: layers of neurons, the last one linear (micrograd's MLP).

    The layers come from :func:`chainrule.nn.mlp_plan.mlp_plan`, as those of ``nn.MLP`` (the
    Tensor one): the same sizes and the same activated layers, each made of Scalar neurons.

    Example:
        >>> from chainrule import nn
        >>> mlp = nn.scalar.MLP(2, [16, 16, 1], rng=0)
        >>> len(mlp.parameters()), type(mlp([0.5, -1.0])).__name__
        (337, 'Scalar')
    """

    def __init__(self, nin: int, nouts: Iterable[int], activation: str | None = "relu", rng: Any = None) -> None:
        gen = init.generator(rng)
        self.layers = [
            Layer(layer.fan_in, layer.fan_out, rng=gen, nonlin=layer.activated, activation=activation)
            for layer in mlp_plan(nin, nouts, "MLP")
        ]

    def __call__(self, x: Sequence[Any]) -> Any:
        for layer in self.layers:
            x = layer(x)
            if isinstance(x, Scalar):
                x = [x]
        return x[0] if len(x) == 1 else x

    def named_parameters(self) -> list[tuple[str, Scalar]]:
        return [(f"layers.{i}.{k}", p) for i, layer in enumerate(self.layers) for k, p in layer.named_parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"
