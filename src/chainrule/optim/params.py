"""Slots: what an optimiser updates, whichever engine the parameters come from.

There is one kind of slot. A :class:`Slot` holds a parameter with an array ``.data`` that
the update rules move in place and a ``.grad``; ``commit()`` publishes the change. A Tensor
parameter is its own such parameter (``commit`` bumps its version, so a graph built before
the step cannot silently use the new weights). ``Scalar`` parameters are gathered into one
:class:`ScalarVector`, a float64 vector with the same two attributes (reading ``.data``
gathers the values, ``commit`` writes them back). So SGD, Adam and AdamW, clipping and
``state_dict`` are written once for both engines.

Example:
    >>> from chainrule import Scalar, Tensor
    >>> slots = make_slots([Tensor([1.0, 2.0], requires_grad=True), Scalar(3.0), Scalar(4.0)], "demo")
    >>> [s.shape for s in slots]
    [(2,), (2,)]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core.device import as_array
from ..nn.lazy import UninitializedParameter
from ..nn.parameter import Parameter
from ..scalar import Scalar
from ..tensor import Tensor


class ScalarVector:
    """A block of Scalar parameters seen as one float64 vector parameter.

    ``.data`` gathers the values into a buffer the optimiser updates in place; ``write_back``
    puts the buffer's values into the Scalars. ``.grad`` gathers the gradients (setting it
    scatters an array back; ``None`` sets every gradient to 0, the Scalar engine's "no gradient").

    Example:
        >>> from chainrule import Scalar
        >>> vec = ScalarVector([Scalar(1.0), Scalar(2.0)])
        >>> data = vec.data; data += 1.0; vec.write_back(); [s.data for s in vec.scalars]
        [2.0, 3.0]
    """

    __slots__ = ("scalars", "_buf")

    def __init__(self, scalars: list[Scalar]) -> None:
        self.scalars = scalars
        self._buf = np.empty(len(scalars), dtype=np.float64)

    @property
    def data(self) -> np.ndarray:
        buf = self._buf
        buf[:] = [s.data for s in self.scalars]
        return buf

    _data = data  # (the name of a Tensor's raw array, so an optimiser reads both alike)

    @property
    def grad(self) -> np.ndarray:
        return np.fromiter((s.grad for s in self.scalars), dtype=np.float64, count=len(self.scalars))

    @grad.setter
    def grad(self, g: Any) -> None:
        if g is None:
            for s in self.scalars:
                s.grad = 0.0
            return
        values = (g._data if isinstance(g, Tensor) else as_array(g)).tolist()
        for s, v in zip(self.scalars, values, strict=True):
            s.grad = v

    def write_back(self) -> None:
        """Copy the buffer's values (as updated by the optimiser) into the Scalars."""
        for s, v in zip(self.scalars, self._buf.tolist(), strict=True):
            s.data = v


class Slot:
    """One unit an optimiser updates: a Tensor parameter, or a :class:`ScalarVector`.

    ``param``'s array is the one updated in place; ``commit()`` publishes the update.
    """

    __slots__ = ("param", "commit")

    def __init__(self, param: Tensor | ScalarVector) -> None:
        self.param = param
        self.commit = param.write_back if isinstance(param, ScalarVector) else param._bump_version

    @property
    def shape(self) -> tuple[int, ...]:
        p = self.param
        return p._buf.shape if isinstance(p, ScalarVector) else p._data.shape

    @property
    def dtype(self) -> np.dtype:
        p = self.param
        return p._buf.dtype if isinstance(p, ScalarVector) else p._data.dtype

    def value(self) -> np.ndarray:
        """The array to update in place (then call ``commit``)."""
        return self.param._data

    def grad(self) -> np.ndarray | None:
        """The gradient as an array, or None."""
        g = self.param.grad
        if g is None or g.__class__ is np.ndarray:
            return g
        return g._data if isinstance(g, Tensor) else as_array(g)

    def set_grad(self, g: np.ndarray) -> None:
        """Replace the gradient (a new array: gradients may share memory, so never scale them in place)."""
        p = self.param
        p.grad = g if isinstance(p, ScalarVector) else Tensor._wrap(g)

    def zero_grad(self, set_to_none: bool = True) -> None:
        p = self.param
        if set_to_none or isinstance(p, ScalarVector) or p.grad is None:
            p.grad = None
        else:
            p.grad = Tensor._wrap(np.zeros_like(p._data))

    def params(self) -> list[Any]:
        p = self.param
        return list(p.scalars) if isinstance(p, ScalarVector) else [p]


class ParamState(dict):
    """``optimizer.state``: each slot's state under its index (the keys of ``state_dict()['state']``), and also
    under a Tensor parameter itself, as PyTorch keys it: ``opt.state[p]``, ``p in opt.state``, ``opt.state.get(p)``
    (iterating gives the indices). A missing entry reads as a new empty dict, as in PyTorch's defaultdict(dict).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn, optim, tensor
        >>> w = nn.Parameter(np.ones(2))
        >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = tensor(np.ones(2)); opt.step()
        >>> list(opt.state), w in opt.state, opt.state[w]["momentum_buffer"].tolist()
        ([0], True, [1.0, 1.0])
    """

    def __init__(self, items: Any = (), slots: list[list[Slot]] | None = None) -> None:
        super().__init__(items)
        self._slots = [] if slots is None else slots  # the optimiser's slots, per group (the same list)

    def _key(self, key: Any) -> Any:
        """A Tensor parameter's slot index (found by identity: a copied optimiser finds its copied parameters)."""
        if isinstance(key, Tensor):
            i = 0
            for slots in self._slots:
                for slot in slots:
                    if slot.param is key:
                        return i
                    i += 1
        return key

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self._key(key))

    def __missing__(self, key: Any) -> Any:
        # PyTorch's optimizer.state is a defaultdict(dict): a hand-written step() starts with `state = self.state[p]`
        value = self[key] = {}
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(self._key(key), value)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(self._key(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(self._key(key), default)


def TensorSlot(param: Tensor) -> Slot:  # noqa: N802  (the name of the former class, kept for callers)
    """The slot of one Tensor parameter."""
    return Slot(param)


def ScalarSlot(scalars: list[Scalar]) -> Slot:  # noqa: N802  (the name of the former class, kept for callers)
    """The slot of a block of Scalar parameters (one float64 vector)."""
    return Slot(ScalarVector(scalars))


def as_param_list(params: Any, where: str) -> list[Any]:
    """A list of Tensors/Scalars from a Tensor, a Scalar, a Module, or an iterable of them."""
    if isinstance(params, (Tensor, Scalar)):
        return [params]
    if hasattr(params, "parameters") and callable(params.parameters) and not isinstance(params, dict):
        params = params.parameters()
    if isinstance(params, (str, bytes)) or not isinstance(params, Iterable):
        raise TypeError(f"{where}: params must be an iterable of Tensors or Scalars, got {type(params).__name__}")
    return list(params)


def split_names(items: list[Any], where: str) -> tuple[list[Any], list[str] | None]:
    """``(parameters, names)`` from PyTorch's ``(name, parameter)`` pairs (``model.named_parameters()``), or
    ``(items, None)`` when no item is such a pair."""
    named = [isinstance(p, tuple) for p in items]
    if not any(named):
        return items, None
    if not all(named):
        raise ValueError(
            f"{where}: all optimizer params should be with/without names. Some param names are missing: "
            f"{named.count(False)} of {len(items)} parameters come without a name; pass named_parameters() "
            "(name, parameter) pairs for all of them, or plain parameters"
        )
    for i, p in enumerate(items):
        if len(p) != 2 or not isinstance(p[0], str):
            raise TypeError(f"{where}: parameter {i} is a tuple of {len(p)} item(s); a named parameter is a pair "
                            "(name: str, parameter), as named_parameters() gives")
    return [p for _, p in items], [n for n, _ in items]


def make_slots(params: Iterable[Any], where: str) -> list[Slot]:
    """One slot per Tensor, and one for all the Scalars (kept in order), with clear errors."""
    slots: list[Slot] = []
    scalars: list[Scalar] = []
    for i, p in enumerate(params):
        if isinstance(p, Tensor):
            if isinstance(p, UninitializedParameter):
                raise ValueError(
                    f"{where}: parameter {i} is an UninitializedParameter of a lazy layer (nn.LazyLinear, ...), whose "
                    "size is known after its first forward; call the model once on an example input before building "
                    "the optimiser (PyTorch sizes its state later; chainrule sizes it here)"
                )
            if p._data.dtype.kind != "f":
                raise TypeError(
                    f"{where}: parameter {i} has dtype {p._data.dtype}; only floating tensors can be trained"
                )
            if not p.requires_grad and not isinstance(p, Parameter):  # a frozen Parameter is fine: no grad, no step
                raise ValueError(
                    f"{where}: parameter {i} (shape {p.shape}) does not require grad; it would never be updated "
                    "(create it with requires_grad=True or use nn.Parameter)"
                )
            if not p.is_leaf:
                raise ValueError(
                    f"{where}: parameter {i} (shape {p.shape}) is not a leaf tensor (it was computed by "
                    f"'{p.op}'); optimise the leaves it was computed from"
                )
            slots.append(Slot(p))
        elif isinstance(p, Scalar):
            scalars.append(p)
        else:
            raise TypeError(f"{where}: parameter {i} is a {type(p).__name__}, not a Tensor or a Scalar")
    if scalars:
        slots.append(Slot(ScalarVector(scalars)))
    return slots
