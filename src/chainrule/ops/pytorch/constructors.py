"""PyTorch-style constructors that return Tensors: ``zeros``, ``ones``, ``full``, ``eye``, ``arange``, ``rand``, ...

Floating-point results use the default dtype (:func:`chainrule.get_default_dtype`,
float32 unless changed), as ``torch.zeros`` does, so they fit ``nn`` layers as they are.
``requires_grad=True`` makes a leaf to differentiate by. Random ones draw from the
generator seeded by :func:`chainrule.nn.init.manual_seed` (or from ``rng``).

``np.zeros_like(t)`` and ``np.ones_like(t)`` (NumPy's own functions) still give NumPy arrays.

Example:
    >>> import chainrule as cr
    >>> cr.zeros(2, 3).shape
    (2, 3)
    >>> cr.ones(2, dtype=float, requires_grad=True)
    Tensor([1., 1.], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.defaults import generator, get_default_dtype
from ...core.device import CPU, DeviceError, backend, move, of
from ...core.traces import draw
from ...tensor import Tensor

__all__ = [
    "zeros", "ones", "full", "empty", "eye", "arange", "linspace", "rand", "randn", "zeros_like", "ones_like",
    "full_like", "tensor", "randint", "rand_like", "randn_like",
]


_generator = generator


def _drawn(method: str, rng: Any, args: tuple[Any, ...], dtype: Any) -> np.ndarray:
    """Random values: ``rng``'s generator's ``method(*args)`` in ``dtype`` (a jit replay draws them again)."""
    return getattr(_generator(rng), method)(*args).astype(dtype)


def _shape(name: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in size):
        raise TypeError(f"{name}: sizes must be non-negative integers, e.g. {name}(2, 3) or {name}((2, 3)), got {size}")
    return tuple(int(n) for n in size)


def _dtype(dtype: Any, default_kind: str = "f") -> np.dtype:
    if dtype is None:
        return get_default_dtype() if default_kind == "f" else np.dtype(np.int64)
    return np.dtype(dtype)


def _xp(name: str, device: Any) -> Any:
    """The array module of ``device`` (NumPy for the CPU), or an error naming ``name`` and the device."""
    try:
        return backend(device).xp
    except DeviceError as e:
        raise DeviceError(f"{name}: {e}") from None


def _make(arr: Any, requires_grad: bool, device: Any = None, name: str = "tensor") -> Tensor:
    """A new leaf around ``arr``, moved to ``device`` first when one is named (host values: one copy)."""
    if device is not None:
        _xp(name, device)
        arr = move(arr, backend(device))
    t = Tensor._wrap(arr)
    if requires_grad:
        t.requires_grad = True  # checks the dtype is floating point
    return t


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A Tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``.

    Example:
        >>> import chainrule as cr
        >>> cr.zeros(2)
        Tensor([0., 0.], dtype=float32)
    """
    xp = _xp("zeros", device)
    return _make(xp.zeros(_shape("zeros", size), dtype=_dtype(dtype)), requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A Tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``.

    Example:
        >>> import chainrule as cr
        >>> cr.ones(2, dtype=float)
        Tensor([1., 1.])
    """
    xp = _xp("ones", device)
    return _make(xp.ones(_shape("ones", size), dtype=_dtype(dtype)), requires_grad)


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A Tensor of the given size (zeros here: chainrule never hands out uninitialised memory)."""
    xp = _xp("empty", device)
    return _make(xp.zeros(_shape("empty", size), dtype=_dtype(dtype)), requires_grad)


def full(size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """A Tensor of ``size`` filled with ``fill_value`` (dtype from the value, floats in the default dtype).

    Example:
        >>> import chainrule as cr
        >>> cr.full((2,), 7)
        Tensor([7, 7])
    """
    xp = _xp("full", device)
    size = _shape("full", (size,) if isinstance(size, (int, np.integer)) else tuple(size))
    if dtype is None:
        kind = np.result_type(fill_value).kind
        dtype = get_default_dtype() if kind == "f" else None
    return _make(xp.full(size, fill_value, dtype=dtype), requires_grad)


def eye(n: int, m: int | None = None, dtype: Any = None, requires_grad: bool = False, device: Any = None) -> Tensor:
    """The ``n`` by ``m`` identity matrix (``m`` defaults to ``n``).

    Example:
        >>> import chainrule as cr
        >>> cr.eye(2, dtype=float)
        Tensor([[1., 0.],
                [0., 1.]])
    """
    xp = _xp("eye", device)
    return _make(xp.eye(n, m, dtype=_dtype(dtype)), requires_grad)


def arange(
    start: Any, end: Any = None, step: Any = 1, dtype: Any = None, requires_grad: bool = False, device: Any = None
) -> Tensor:
    """Evenly spaced values in ``[start, end)``; integers give an int64 Tensor, floats the default dtype.

    Example:
        >>> import chainrule as cr
        >>> cr.arange(4)
        Tensor([0, 1, 2, 3])
    """
    _xp("arange", device)
    arr = np.arange(start, end, step) if end is not None else np.arange(start, step=step)
    if dtype is None:
        dtype = get_default_dtype() if arr.dtype.kind == "f" else np.int64
    return _make(arr.astype(dtype), requires_grad, device, "arange")


def linspace(start: Any, end: Any, steps: int | None = None, dtype: Any = None, requires_grad: bool = False,
             device: Any = None, **numpy_keywords: Any) -> Any:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included), as ``torch.linspace``.

    Numbers give a Tensor in the default dtype, like :func:`arange` (``cr.linspace(...).unsqueeze(-1)``
    works as in PyTorch); Tensor endpoints give a result differentiable in them. ``numpy.linspace``
    (and ``chainrule.numpy.linspace``) keep NumPy's meaning; NumPy's keywords (``num=``, ``endpoint=``,
    ``retstep=``, ``axis=``) pass on to it.

    Example:
        >>> import chainrule as cr
        >>> cr.linspace(0, 1, 3)
        Tensor([0. , 0.5, 1. ], dtype=float32)
    """
    from ..numeric import linspace as numpy_linspace  # on first use: keeps `import chainrule` light

    _xp("linspace", device)
    if steps is None:
        steps = numpy_keywords.pop("num", 50)
    if isinstance(start, Tensor) or isinstance(end, Tensor) or numpy_keywords:
        return numpy_linspace(start, end, steps, dtype=dtype, **numpy_keywords)
    arr = numpy_linspace(start, end, steps)
    if not isinstance(arr, np.ndarray):  # a batched endpoint under vmap: keep it
        return arr if dtype is None else arr.astype(dtype)
    return _make(arr.astype(_dtype(dtype)), requires_grad, device, "linspace")


def rand(*size: Any, dtype: Any = None, requires_grad: bool = False, rng: Any = None, device: Any = None,
         generator: Any = None) -> Tensor:
    """Uniform random values in [0, 1) (from the generator ``manual_seed`` seeds, or ``generator``/``rng``).

    Example:
        >>> import chainrule as cr
        >>> cr.rand(2, 3).shape
        (2, 3)
    """
    _xp("rand", device)
    rng = generator if generator is not None else rng  # (PyTorch's name for it)
    return _make(draw(_drawn, "random", rng, (_shape("rand", size),), _dtype(dtype)), requires_grad, device, "rand")


def randn(*size: Any, dtype: Any = None, requires_grad: bool = False, rng: Any = None, device: Any = None,
          generator: Any = None) -> Tensor:
    """Standard normal random values (from the generator ``manual_seed`` seeds, or ``generator``/``rng``).

    Example:
        >>> import chainrule as cr
        >>> cr.randn(4, requires_grad=True).requires_grad
        True
    """
    _xp("randn", device)
    rng = generator if generator is not None else rng  # (PyTorch's name for it)
    return _make(draw(_drawn, "standard_normal", rng, (_shape("randn", size),), _dtype(dtype)), requires_grad, device,
                 "randn")


def randint(low: int, high: int | None = None, size: Any = None, *, dtype: Any = None, rng: Any = None,
            device: Any = None, generator: Any = None, requires_grad: bool = False) -> Tensor:
    """Random integers in [low, high) (PyTorch's ``randint(high, size)`` or ``randint(low, high, size)``), int64.

    Example:
        >>> import chainrule as cr
        >>> t = cr.randint(0, 10, (2, 3))
        >>> t.shape, t.dtype, bool(((t.numpy() >= 0) & (t.numpy() < 10)).all())
        ((2, 3), dtype('int64'), True)
    """
    _xp("randint", device)
    rng = generator if generator is not None else rng  # (PyTorch's name for it)
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None and size is not None:  # randint(high, size=(1,)), as the data tutorial draws an index
        low, high = 0, low
    if size is None or high is None:
        raise TypeError("randint: give randint(high, size) or randint(low, high, size), with size a tuple "
                        "such as (2, 3)")
    values = draw(_drawn, "integers", rng, (low, high, _shape("randint", tuple(size))), _dtype(dtype, "i"))
    return _make(values, requires_grad, device, "randint")


def _like(x: Any) -> Any:
    data = x._data if isinstance(x, Tensor) else x
    return data if of(data) is not CPU else np.asarray(data)


def _where(like: Any, device: Any) -> Any:
    """``device``, or else the device of ``like`` (PyTorch's ``*_like`` keep their input's device)."""
    return device if device is not None else of(like).name


def rand_like(x: Any, dtype: Any = None, requires_grad: bool = False, rng: Any = None, device: Any = None,
              generator: Any = None, *, layout: Any = None, memory_format: Any = None) -> Tensor:
    """Uniform random values in [0, 1) of the shape of ``x``, in its dtype (floating ``x``) or ``dtype``.

    Example:
        >>> import chainrule as cr
        >>> cr.rand_like(cr.zeros(2, 3)).shape
        (2, 3)
    """
    _xp("rand_like", device)
    rng = generator if generator is not None else rng  # (PyTorch's name for it)
    like = _like(x)
    dtype = dtype if dtype is not None else _float_like(like)
    return _make(draw(_drawn, "random", rng, (like.shape,), dtype), requires_grad, _where(like, device), "rand_like")


def randn_like(x: Any, dtype: Any = None, requires_grad: bool = False, rng: Any = None, device: Any = None,
               generator: Any = None, *, layout: Any = None, memory_format: Any = None) -> Tensor:
    """Standard normal values of the shape of ``x``, in its dtype (floating ``x``) or ``dtype``.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.randn_like(np.zeros((2, 2), np.float64)).dtype
        dtype('float64')
    """
    _xp("randn_like", device)
    rng = generator if generator is not None else rng  # (PyTorch's name for it)
    like = _like(x)
    dtype = dtype if dtype is not None else _float_like(like)
    values = draw(_drawn, "standard_normal", rng, (like.shape,), dtype)
    return _make(values, requires_grad, _where(like, device), "randn_like")


def _float_like(like: np.ndarray) -> np.dtype:
    if like.dtype.kind not in "fc":
        raise TypeError(f"random values like an array of dtype {like.dtype}: give a floating dtype= "
                        "(PyTorch raises too)")
    return like.dtype


def zeros_like(x: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None, *, layout: Any = None,
               memory_format: Any = None) -> Tensor:
    """A Tensor of zeros with the shape and dtype of ``x`` (a new leaf, not linked to ``x``).

    Example:
        >>> import chainrule as cr
        >>> cr.zeros_like(cr.Tensor([1.0, 2.0]))
        Tensor([0., 0.])
    """
    _xp("zeros_like", device)
    like = _like(x)
    return _make(np.zeros_like(like, dtype=dtype), requires_grad, _where(like, device), "zeros_like")


def ones_like(x: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None, *, layout: Any = None,
              memory_format: Any = None) -> Tensor:
    """A Tensor of ones with the shape and dtype of ``x`` (a new leaf, not linked to ``x``).

    Example:
        >>> import chainrule as cr
        >>> cr.ones_like(cr.Tensor([1.0, 2.0]))
        Tensor([1., 1.])
    """
    _xp("ones_like", device)
    like = _like(x)
    return _make(np.ones_like(like, dtype=dtype), requires_grad, _where(like, device), "ones_like")


def empty_like(x: Any, dtype: Any = None, requires_grad: bool = False, device: Any = None, *, layout: Any = None,
               memory_format: Any = None) -> Tensor:
    """PyTorch's ``empty_like``: a Tensor with the shape and dtype of ``x`` whose values are not meant to be read
    (zeros here: a new leaf, not linked to ``x``)."""
    _xp("empty_like", device)
    like = _like(x)
    return _make(np.zeros_like(like, dtype=dtype), requires_grad, _where(like, device), "empty_like")


def full_like(x: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False,
              device: Any = None, *, layout: Any = None, memory_format: Any = None) -> Tensor:
    """A Tensor filled with ``fill_value``, with the shape and dtype of ``x``. (``layout``, ``memory_format``:
    PyTorch's, accepted: a Tensor here is dense and strided, and a format changes no value.)"""
    _xp("full_like", device)
    like = _like(x)
    return _make(np.full_like(like, fill_value, dtype=dtype), requires_grad, _where(like, device), "full_like")


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None, device: Any = None) -> Tensor:
    """``Tensor(data, requires_grad=..., dtype=...)`` as ``torch.tensor``: Python floats (a number or nested
    lists) take the default dtype (float32 unless changed, so they fit ``nn`` layers); arrays keep theirs.
    ``device``: where the values are put (``"cpu"``, ``"cuda"``, ...).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.tensor([1.0, 2.0]).dtype, cr.tensor(np.array([1.0, 2.0])).dtype, cr.Tensor([1.0, 2.0]).dtype
        (dtype('float32'), dtype('float64'), dtype('float64'))
    """
    _xp("tensor", device)
    if dtype is None and isinstance(data, (float, list, tuple)):
        try:
            values = np.asarray(data)
        except (ValueError, TypeError):  # ragged, or Tensors inside: Tensor() says what is wrong
            values = None
        if values is not None and values.dtype == np.float64 and _python_numbers(data):
            dtype = get_default_dtype()
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def _python_numbers(data: Any) -> bool:
    """Only Python numbers in (nested lists of) ``data``: torch.tensor gives them the default dtype."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif not isinstance(item, (int, float)) or isinstance(item, np.generic):
            return False
    return True
