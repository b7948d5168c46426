"""Evaluate a one-point function and its gradient for many points in one vectorised call.

The contract: ``f`` is written for ONE point ``x`` of shape ``(dim,)`` using ``x[i]`` and
elementwise NumPy operations, e.g. ``lambda x: (1 - x[0])**2 + 100*(x[1] - x[0]**2)**2``.
Called with the batch transposed, ``X`` of shape ``(dim, *batch)``, ``X[i]`` is the array of the
i-th coordinates of every point, so the same code returns one value per point (shape ``batch``).
The gradient of ``sum(f(X))`` with respect to ``X`` is then every point's gradient at once:
the points do not interact, so the sum decouples them.

For a function of one number (``f(x) = x**3 - 10*x**2``), ``X`` simply holds one value per point.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..scalar import Scalar
from ..tensor import Tensor

CONTRACT = (
    "f must be written for one point, using x[i] and elementwise NumPy operations "
    "(e.g. np.sum(x**2, axis=0), not np.sum(x**2)); it is then evaluated for all points in one call"
)


def _plain(value: Any) -> np.ndarray:
    """The numbers of what ``f`` returned: a Tensor's array, a Scalar's number, or the array itself."""
    raw = value._data if isinstance(value, Tensor) else value.data if isinstance(value, Scalar) else value
    return raw if raw.__class__ is np.ndarray else np.asarray(raw, dtype=float)


class _NotRows(Exception):
    """f used x as a whole array, not only through x[i]: evaluate it on the stacked array instead."""


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise _NotRows


class _Rows:
    """``x`` for a first try at ``f``: ``x[i]`` is coordinate i's own leaf, any other use refuses.

    When ``f`` only reads ``x[0]``, ``x[1]``, ... (like the tutorial's functions), each coordinate
    is differentiated as a separate array and nothing is scattered back into a stacked gradient,
    which saves a full-size buffer per ``x[i]``. Any other use (arithmetic on ``x``, NumPy functions,
    attributes, slices) raises ``_NotRows`` and ``f`` is evaluated on the stacked array.
    """

    __slots__ = ("_rows",)
    __array_ufunc__ = None  # NumPy operators defer to our refusing dunders

    def __init__(self, rows: tuple[Any, ...]) -> None:
        self._rows = rows

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            return self._rows[i]
        raise _NotRows

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Any:
        return iter(self._rows)

    def __getattr__(self, name: str) -> Any:
        raise _NotRows


for _name in (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow matmul rmatmul "
    "neg pos abs lt le gt ge array array_function float"
).split():
    setattr(_Rows, f"__{_name}__", _refuse)


def _values(out: Any, batch: tuple[int, ...]) -> np.ndarray:
    raw = _plain(out)
    if raw.shape == batch and raw.dtype == np.float64:
        return raw  # a fresh array from the forward pass: no copy needed
    return np.array(np.broadcast_to(raw, batch), dtype=float)


def _differentiate(f: Callable[[Any], Any], x: Any, batch: tuple[int, ...], shown: tuple[int, ...], who: str):
    """``(out, grad)`` of ``sum(f(x))`` for ``x`` an array or a tuple of coordinate rows."""
    from ..transforms import value_and_grad

    n = int(np.prod(batch, dtype=int))

    def total(x: Any) -> Any:
        out = f(_Rows(x) if isinstance(x, tuple) else x)
        raw = _plain(out)
        shape = raw.shape
        constant = not (isinstance(out, Tensor) and out._requires_grad)
        if shape != batch and not (np.size(raw) == 1 and (n == 1 or constant)):
            got = "one number" if shape == () else f"shape {shape}"
            raise ValueError(
                f"{who}: f returned {got} for {n} points passed as x of shape {shown}, "
                f"expected shape {batch}; {CONTRACT}"
            )
        return (out.sum() if isinstance(out, Tensor) else raw.sum()), out

    try:
        (_, out), g = value_and_grad(total, has_aux=True)(x)
    except IndexError as e:
        raise IndexError(f"{who}: f indexed x of shape {shown} out of range ({e}); {CONTRACT}") from None
    return out, g


def rows_value_and_grad(
    f: Callable[[Any], Any], rows: tuple[np.ndarray, ...], batch: tuple[int, ...], who: str
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Like ``batch_value_and_grad`` with the coordinates given as separate arrays of shape ``batch``.

    Returns the values and one gradient array per coordinate (nothing is stacked when ``f``
    only reads ``x[i]``).

    Example:
        >>> import numpy as np
        >>> v, (ga, gb) = rows_value_and_grad(lambda x: x[0] * x[1], (np.array([1.0]), np.array([3.0])), (1,), "demo")
        >>> v.tolist(), ga.tolist(), gb.tolist()
        ([3.0], [3.0], [1.0])
    """
    shown = (len(rows), *batch)
    if not _needs_stack(f):
        try:
            out, g = _differentiate(f, tuple(rows), batch, shown, who)
            return _values(out, batch), tuple(np.asarray(gi, dtype=float) for gi in g)
        except _NotRows:
            _remember_stack(f)
    out, g = _differentiate(f, np.stack(rows), batch, shown, who)
    return _values(out, batch), tuple(np.asarray(g, dtype=float))


_STACKED: weakref.WeakSet[Any] = weakref.WeakSet()  # functions seen using x as a whole


def _needs_stack(f: Any) -> bool:
    try:
        return f in _STACKED
    except TypeError:  # not weakly referenceable (a builtin): never remembered
        return False


def _remember_stack(f: Any) -> None:
    try:
        _STACKED.add(f)
    except TypeError:
        pass


def batch_value_and_grad(
    f: Callable[[Any], Any], X: np.ndarray, batch: tuple[int, ...], who: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(f(X), d sum(f(X)) / dX)``: values of shape ``batch``, gradients of the shape of ``X``.

    ``X`` has shape ``(dim, *batch)`` (a vector function) or ``batch`` (a function of one number).
    A vector function that only reads ``x[i]`` gets each coordinate as its own array (no
    scatter in the backward pass); any other use of ``x`` gets the stacked array (``f`` may
    then run a second time).

    Example:
        >>> import numpy as np
        >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])  # two points, (1, 3) and (2, 4)
        >>> v, g = batch_value_and_grad(lambda x: x[0] * x[1], X, (2,), "demo")
        >>> v.tolist(), g.tolist()
        ([3.0, 8.0], [[3.0, 4.0], [1.0, 2.0]])
        >>> v, g = batch_value_and_grad(lambda x: np.sum(x**2, axis=0), X, (2,), "demo")  # x as a whole
        >>> v.tolist(), g.tolist()
        ([10.0, 20.0], [[2.0, 4.0], [6.0, 8.0]])
    """
    if X.ndim > len(batch):
        values, grads = rows_value_and_grad(f, tuple(X), batch, who)
        return values, np.stack(grads)
    out, g = _differentiate(f, X, batch, X.shape, who)
    return _values(out, batch), np.asarray(g, dtype=float).reshape(X.shape)
