"""``jax.nn.initializers``: functions ``init(key, shape, dtype)`` that draw a parameter array from a
``chainrule.random`` key, with JAX's names, defaults and fan conventions (a dense kernel is (in, out): fan in is
``shape[in_axis]`` (default -2) times the receptive field, the product of the other axes but ``out_axis``).

Example:
    >>> from chainrule import random
    >>> from chainrule.nn import initializers
    >>> w = initializers.glorot_normal()(random.PRNGKey(0), (64, 32))
    >>> w.shape, w.dtype, bool(abs(w.std() - (2 / 96) ** 0.5) < 0.02)
    ((64, 32), dtype('float32'), True)
    >>> initializers.zeros(random.PRNGKey(0), (2,)).tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import random
from ..core.defaults import get_default_dtype

__all__ = ["constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones", "orthogonal",
           "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]

Initializer = Callable[..., Any]


def _dtype(dtype: Any) -> np.dtype:
    return np.dtype(get_default_dtype() if dtype is None else dtype)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> np.ndarray:
    return np.zeros(tuple(shape), _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> np.ndarray:
    return np.ones(tuple(shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> np.ndarray:
        return np.full(tuple(shape), value, _dtype(dtype))

    return init


def normal(stddev: float = 1e-2, dtype: Any = None) -> Initializer:
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> np.ndarray:
        return (random.normal(key, tuple(shape), _dtype(dtype)) * stddev).astype(_dtype(dtype))

    return init


def uniform(scale: float = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform on ``[0, scale)``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> np.ndarray:
        return (random.uniform(key, tuple(shape), _dtype(dtype)) * scale).astype(_dtype(dtype))

    return init


def truncated_normal(stddev: float = 1e-2, dtype: Any = None, lower: float = -2.0, upper: float = 2.0) -> Initializer:
    """A normal truncated to ``[lower, upper]`` standard deviations, scaled by ``stddev``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> np.ndarray:
        return (random.truncated_normal(key, lower, upper, tuple(shape), _dtype(dtype)) * stddev).astype(
            _dtype(dtype))

    return init


def _fans(shape: tuple[int, ...], in_axis: Any, out_axis: Any, batch_axis: Any = ()) -> tuple[float, float]:
    if len(shape) < 1:
        return 1.0, 1.0
    axes = lambda a: tuple(i % len(shape) for i in ((a,) if isinstance(a, int) else a))  # noqa: E731
    ins, outs, batch = axes(in_axis), axes(out_axis), axes(batch_axis)
    receptive = np.prod([d for i, d in enumerate(shape) if i not in ins + outs + batch])
    return float(np.prod([shape[i] for i in ins]) * receptive), float(np.prod([shape[i] for i in outs]) * receptive)


def variance_scaling(scale: float, mode: str, distribution: str, in_axis: Any = -2, out_axis: Any = -1,
                     batch_axis: Any = (), dtype: Any = None) -> Initializer:
    """Draws with variance ``scale / n``, ``n`` the fan in, the fan out or their mean (``mode``: "fan_in",
    "fan_out", "fan_avg"); ``distribution`` "truncated_normal", "normal" or "uniform"."""
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"variance_scaling: mode must be 'fan_in', 'fan_out' or 'fan_avg', got {mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError("variance_scaling: distribution must be 'truncated_normal', 'normal' or 'uniform', got "
                         f"{distribution!r}")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> np.ndarray:
        shape, dt = tuple(shape), _dtype(dtype)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        variance = scale / {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        if distribution == "truncated_normal":  # (the standard deviation of a unit normal cut at +-2)
            draw = random.truncated_normal(key, -2.0, 2.0, shape, dt) * (np.sqrt(variance) / 0.87962566103423978)
        elif distribution == "normal":
            draw = random.normal(key, shape, dt) * np.sqrt(variance)
        else:
            draw = random.uniform(key, shape, dt, -1.0, 1.0) * np.sqrt(3 * variance)
        return np.asarray(draw).astype(dt)

    return init


def glorot_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def glorot_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


xavier_normal, xavier_uniform, kaiming_normal, kaiming_uniform = glorot_normal, glorot_uniform, he_normal, he_uniform


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """A (scaled) matrix with orthonormal columns or rows, from the QR decomposition of a normal draw; for more
    than two axes, the others are flattened into the rows."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> np.ndarray:
        shape, dt = tuple(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"orthogonal: needs at least two axes, got shape {shape}")
        n_cols = shape[column_axis]
        n_rows = int(np.prod(shape)) // n_cols
        a = np.asarray(random.normal(key, (max(n_rows, n_cols), min(n_rows, n_cols)), np.float64))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))  # a uniform draw over the orthogonal matrices
        q = q if n_rows >= n_cols else q.T
        return np.moveaxis((scale * q).reshape(*np.delete(shape, column_axis % len(shape)), n_cols), -1,
                           column_axis).astype(dt)

    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """For convolution kernels (spatial..., in, out): zero but at the centre, an orthogonal (in, out) matrix."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> np.ndarray:
        shape, dt = tuple(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5) or shape[-2] > shape[-1]:
            raise ValueError(f"delta_orthogonal: needs a 3-, 4- or 5-axis kernel with in <= out, got shape {shape}")
        out = np.zeros(shape, dt)
        out[tuple(d // 2 for d in shape[:-2])] = orthogonal(scale, column_axis, dt)(key, shape[-2:])
        return out

    return init
