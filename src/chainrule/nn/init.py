"""Weight initialisers (Xavier/Glorot, Kaiming/He, uniform, normal, truncated normal, orthogonal, constants),
seeded.

Each ``*_`` function fills a Parameter (or Tensor, or ndarray) in place, keeps its dtype and
returns it. ``rng`` is a ``numpy.random.Generator`` or an int seed; without one the
module's generator is used, which ``manual_seed`` resets. The values are drawn on the host and copied once to
a device's parameter (the same values on every device for one seed).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> w = nn.Parameter(np.zeros((256, 128), dtype=np.float32))
    >>> _ = nn.init.xavier_uniform_(w, rng=0)
    >>> bool(np.abs(w.numpy()).max() <= np.sqrt(6 / (256 + 128))), w.dtype
    (True, dtype('float32'))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.defaults import Generator, generator, manual_seed  # noqa: F401  (nn.init's names too)
from ..core.device import ARRAY_TYPES, move, of
from ..tensor import Tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for an activation (PyTorch's values): linear/sigmoid 1, tanh 5/3,
    relu sqrt(2), leaky_relu sqrt(2 / (1 + slope**2)), selu 3/4.

    Example:
        >>> from chainrule import nn
        >>> round(nn.init.calculate_gain("relu"), 4)
        1.4142
    """
    linear = {"linear", "conv1d", "conv2d", "conv3d", "sigmoid", "identity"}
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(
        f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; use one of linear, sigmoid, tanh, relu, "
        "leaky_relu, selu"
    )


def _array(t: Any, name: str) -> np.ndarray:
    arr = t._data if isinstance(t, Tensor) else t
    if (arr.__class__ not in ARRAY_TYPES and not isinstance(arr, np.ndarray)) or arr.dtype.kind != "f":
        raise TypeError(f"{name}: expected a floating Parameter, Tensor or ndarray, got {type(t).__name__}")
    return arr


def _fill(t: Any, values: Any) -> Any:
    arr = t._data if isinstance(t, Tensor) else t
    arr[...] = move(values, of(arr)) if isinstance(values, np.ndarray) else values  # drawn on the host: one copy
    if isinstance(t, Tensor):
        t._bump_version()
    return t


def fans(shape: tuple[int, ...], name: str = "init") -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of ``shape`` laid out as (out, in, *kernel), as PyTorch."""
    if len(shape) < 2:
        raise ValueError(f"{name}: fan in and fan out need a weight with at least 2 dimensions, got shape {shape}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def uniform_(t: Any, a: float = 0.0, b: float = 1.0, rng: Any = None) -> Any:
    """Fill with U(a, b)."""
    arr = _array(t, "uniform_")
    return _fill(t, generator(rng).uniform(a, b, size=arr.shape))


def normal_(t: Any, mean: float = 0.0, std: float = 1.0, rng: Any = None) -> Any:
    """Fill with N(mean, std**2)."""
    arr = _array(t, "normal_")
    return _fill(t, generator(rng).normal(mean, std, size=arr.shape))


def constant_(t: Any, value: float) -> Any:
    """Fill with ``value``."""
    _array(t, "constant_")
    return _fill(t, value)


def zeros_(t: Any) -> Any:
    """Fill with 0."""
    return constant_(t, 0.0)


def ones_(t: Any) -> Any:
    """Fill with 1."""
    return constant_(t, 1.0)


def xavier_uniform_(t: Any, gain: float = 1.0, rng: Any = None) -> Any:
    """Glorot/Xavier uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = fans(_array(t, "xavier_uniform_").shape, "xavier_uniform_")
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -a, a, rng)


def xavier_normal_(t: Any, gain: float = 1.0, rng: Any = None) -> Any:
    """Glorot/Xavier normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fans(_array(t, "xavier_normal_").shape, "xavier_normal_")
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), rng)


def _kaiming_std(t: Any, a: float, mode: str, nonlinearity: str, name: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{name}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = fans(_array(t, name).shape, name)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    t: Any, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", rng: Any = None
) -> Any:
    """He/Kaiming uniform: U(-b, b) with b = gain * sqrt(3 / fan) (PyTorch's defaults)."""
    bound = math.sqrt(3.0) * _kaiming_std(t, a, mode, nonlinearity, "kaiming_uniform_")
    return uniform_(t, -bound, bound, rng)


def kaiming_normal_(
    t: Any, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", rng: Any = None
) -> Any:
    """He/Kaiming normal: N(0, std**2) with std = gain / sqrt(fan)."""
    return normal_(t, 0.0, _kaiming_std(t, a, mode, nonlinearity, "kaiming_normal_"), rng)


def trunc_normal_(t: Any, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  rng: Any = None) -> Any:
    """Fill with N(mean, std**2) truncated to [a, b] (PyTorch's ``trunc_normal_``: ``a``, ``b`` are values,
    not numbers of standard deviations); draws outside are redrawn."""
    arr = _array(t, "trunc_normal_")
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    gen = generator(rng)
    values = gen.normal(mean, std, size=arr.shape)
    outside = (values < a) | (values > b)
    for _ in range(1000):  # (each round keeps the draws inside; at most a few rounds unless [a, b] is far out)
        if not outside.any():
            break
        values[outside] = gen.normal(mean, std, size=int(outside.sum()))
        outside = (values < a) | (values > b)
    return _fill(t, np.clip(values, a, b))


def eye_(t: Any) -> Any:
    """Fill a matrix with the identity (ones on the diagonal), as PyTorch's ``eye_``."""
    arr = _array(t, "eye_")
    if arr.ndim != 2:
        raise ValueError(f"eye_: needs a matrix (2 dimensions), got shape {arr.shape}")
    return _fill(t, np.eye(*arr.shape))


def orthogonal_(t: Any, gain: float = 1.0, rng: Any = None) -> Any:
    """Fill with a (semi-)orthogonal matrix, rows flattened after the first dim (PyTorch's ``orthogonal_``:
    the Q of a Gaussian matrix's QR, its signs fixed by R's diagonal), times ``gain``."""
    arr = _array(t, "orthogonal_")
    if arr.ndim < 2:
        raise ValueError(f"orthogonal_: needs at least 2 dimensions, got shape {arr.shape}")
    rows, cols = arr.shape[0], arr.size // arr.shape[0]
    flat = generator(rng).standard_normal((rows, cols))
    q, r = np.linalg.qr(flat.T if rows < cols else flat)
    q = q * np.sign(np.diag(r))
    q = q.T if rows < cols else q
    return _fill(t, gain * q.reshape(arr.shape))
