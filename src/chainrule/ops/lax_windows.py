"""``jax.lax``'s window operations: ``conv_general_dilated`` (and ``conv``, ``conv_with_general_padding``),
``reduce_window`` and ``select_n``, with JAX's arguments.

The convolution is chainrule's convolution primitive (the one behind ``nn.functional.conv2d``): its three
bilinear forms are each other's transposes, so every order of derivative, in both modes, follows. JAX's layouts
(``dimension_numbers`` such as ``("NHWC", "HWIO", "NHWC")``) are transposes around it, ``lhs_dilation`` is
``lax.pad``'s interior padding of the input. ``reduce_window`` pads the operand with ``init_value``, takes each
offset of the window as a strided slice and reduces them: ``lax.add`` by a sum, ``lax.max``/``lax.min`` by
picking the first extreme of each window (its gradient goes to that one entry, as JAX's), anything else by
folding with ``computation``.

Example:
    >>> import numpy as np
    >>> from chainrule import lax
    >>> lax.reduce_window(np.arange(5.0), -np.inf, lax.max, (2,), (1,), "VALID").tolist()
    [1.0, 2.0, 3.0, 4.0]
    >>> lax.conv_general_dilated(np.ones((1, 1, 4)), np.ones((1, 1, 3)), (1,), "SAME").tolist()
    [[[2.0, 3.0, 3.0, 2.0]]]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import lax_ops
from . import shape as _shape
from .fused.convolution import conv_primitive


class ConvDimensionNumbers(NamedTuple):
    """JAX's ``lax.ConvDimensionNumbers``: for the input, the kernel and the output, the axis of (batch, feature,
    spatial...), of (out feature, in feature, spatial...) and of (batch, feature, spatial...)."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
                           ) -> ConvDimensionNumbers:
    """JAX's ``lax.conv_dimension_numbers``: ``dimension_numbers`` (None, three layout strings such as
    ``("NHWC", "HWIO", "NHWC")``, or ``ConvDimensionNumbers``) as the axes of each operand."""
    nd = len(lhs_shape)
    if dimension_numbers is None:
        default = tuple(range(nd))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, ConvDimensionNumbers) or (
            len(dimension_numbers) == 3 and not any(isinstance(s, str) for s in dimension_numbers)):
        return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    lhs, rhs, out = dimension_numbers
    if not (len(lhs) == len(rhs) == len(out) == nd and len(rhs_shape) == nd):
        raise TypeError(f"lax.conv_general_dilated: dimension_numbers {dimension_numbers!r} must name each of the "
                        f"{nd} axes of the input, kernel and output")

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs:
            spatial.sort(key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return ConvDimensionNumbers(perm(lhs, ("N", "C")), perm(rhs, ("O", "I")), perm(out, ("N", "C")))


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int], window_strides: Sequence[int],
                    padding: str) -> list[tuple[int, int]]:
    """JAX's ``lax.padtype_to_pads``: ``"SAME"``/``"SAME_LOWER"`` (the output ``ceil(in / stride)`` long, the
    odd one at the end, or at the start) and ``"VALID"`` (none) as ``(low, high)`` pairs."""
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"lax: padding {padding!r} is not 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = max((math.ceil(n / s) - 1) * s + k - n, 0)
        low = total // 2 if kind == "SAME" else total - total // 2
        pads.append((low, total - low))
    return pads


def _pairs(name: str, padding: Any, d: int) -> list[tuple[int, int]]:
    pads = [tuple(int(v) for v in p) for p in padding]
    if len(pads) != d or any(len(p) != 2 for p in pads):
        raise ValueError(f"lax.{name}: padding must be a string or {d} (low, high) pairs, got {padding!r}")
    return pads  # type: ignore[return-value]


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """JAX's ``lax.conv_general_dilated``: the cross-correlation of ``lhs`` (batch, feature, spatial...) with
    ``rhs`` (out feature, in feature / ``feature_group_count``, spatial...), in the layouts ``dimension_numbers``
    names; ``padding`` ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or ``(low, high)`` per spatial axis (negative
    crops), ``lhs_dilation`` (zeros between the input's entries: a transposed convolution) and ``rhs_dilation``
    (the kernel's). Differentiable in both arguments, to any order."""
    if batch_group_count != 1:
        raise NotImplementedError(
            f"lax.conv_general_dilated: batch_group_count={batch_group_count} is not supported (only 1); split the "
            "batch with lax.split / slicing and convolve each group with its kernels")
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    d = len(lhs_shape) - 2
    x = _shape.transpose(lhs, dn.lhs_spec)
    w = _shape.transpose(rhs, dn.rhs_spec)
    strides = tuple(int(s) for s in window_strides)
    lhs_dil = tuple(int(v) for v in lhs_dilation) if lhs_dilation is not None else (1,) * d
    rhs_dil = tuple(int(v) for v in rhs_dilation) if rhs_dilation is not None else (1,) * d
    if not (len(strides) == len(lhs_dil) == len(rhs_dil) == d):
        raise ValueError(f"lax.conv_general_dilated: window_strides, lhs_dilation and rhs_dilation need {d} entries "
                         f"(one per spatial axis), got {window_strides}, {lhs_dilation}, {rhs_dilation}")
    if isinstance(padding, str) and any(v != 1 for v in lhs_dil):
        raise ValueError(f"lax.conv_general_dilated: padding {padding!r} with lhs_dilation {lhs_dilation} (a "
                         "transposed convolution) is not defined, as in JAX: give (low, high) pairs or use "
                         "lax.conv_transpose")
    if isinstance(padding, str):
        kernel = [(k - 1) * r + 1 for k, r in zip(np.shape(w)[2:], rhs_dil)]
        pads = padtype_to_pads(np.shape(x)[2:], kernel, strides, padding)
    else:
        pads = _pairs("conv_general_dilated", padding, d)
    groups = int(feature_group_count)
    if np.shape(x)[1] != np.shape(w)[1] * groups or np.shape(w)[0] % groups:
        raise ValueError(f"lax.conv_general_dilated: the input has {np.shape(x)[1]} features, the kernel "
                         f"{np.shape(w)[1]} per group x feature_group_count={groups}, and {np.shape(w)[0]} outputs "
                         "(a multiple of the groups); they must agree")
    if any(v != 1 for v in lhs_dil):
        x = lax_ops.pad(x, 0.0, [(0, 0, 0), (0, 0, 0)] + [(0, 0, v - 1) for v in lhs_dil])
    dtype = np.result_type(lax_ops.dtype_of(x), lax_ops.dtype_of(w))
    x, w = _shape.astype(x, dtype) if lax_ops.dtype_of(x) != dtype else x, \
        _shape.astype(w, dtype) if lax_ops.dtype_of(w) != dtype else w
    y = conv_primitive(x, w, stride=strides, padding=tuple(pads), dilation=rhs_dil, groups=groups)
    y = _shape.transpose(y, tuple(np.argsort(dn.out_spec)))
    if preferred_element_type is not None:
        y = _shape.astype(y, preferred_element_type)
    return y


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any, precision: Any = None,
         preferred_element_type: Any = None) -> Any:
    """JAX's ``lax.conv``: ``conv_general_dilated`` in the (N, C, spatial...) / (O, I, spatial...) layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                              lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
                              precision: Any = None, preferred_element_type: Any = None) -> Any:
    """JAX's ``lax.conv_with_general_padding``: ``conv_general_dilated`` in the default layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


# ---------------------------------------------------------------- reduce_window

def _kind(computation: Callable[..., Any]) -> str:
    """Which reduction ``computation`` is, for the ones with a whole-array form."""
    kinds = {lax_ops.add: "add", np.add: "add", lax_ops.max: "max", np.maximum: "max", lax_ops.min: "min",
             np.minimum: "min", lax_ops.mul: "mul", np.multiply: "mul"}
    try:
        return kinds.get(computation, "fold")
    except TypeError:  # unhashable
        return "fold"


def reduce_window(operand: Any, init_value: Any, computation: Callable[[Any, Any], Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int], padding: Any,
                  base_dilation: Sequence[int] | None = None, window_dilation: Sequence[int] | None = None) -> Any:
    """JAX's ``lax.reduce_window``: ``computation`` (``lax.add``, ``lax.max``, ``lax.min``, ``lax.mul`` or any
    binary function) over each window of ``operand``, the operand padded with ``init_value`` (``padding``
    ``"SAME"``, ``"VALID"`` or ``(low, high)`` per axis); ``base_dilation`` spreads the operand (``init_value``
    between entries), ``window_dilation`` the window. Differentiable in ``operand``; a pytree of operands raises."""
    if isinstance(operand, (tuple, list, dict)):
        raise NotImplementedError("lax.reduce_window: a pytree of operands is not supported; reduce each array")
    shape = np.shape(operand)
    nd = len(shape)
    window = tuple(int(v) for v in window_dimensions)
    strides = tuple(int(v) for v in window_strides)
    base = tuple(int(v) for v in base_dilation) if base_dilation is not None else (1,) * nd
    wdil = tuple(int(v) for v in window_dilation) if window_dilation is not None else (1,) * nd
    if not (len(window) == len(strides) == len(base) == len(wdil) == nd):
        raise ValueError(f"lax.reduce_window: window_dimensions, window_strides, base_dilation and window_dilation "
                         f"need one entry per axis of the operand of shape {shape}")
    spread = [(n - 1) * b + 1 if n else 0 for n, b in zip(shape, base)]
    extent = [(k - 1) * r + 1 for k, r in zip(window, wdil)]
    pads = padtype_to_pads(spread, extent, strides, padding) if isinstance(padding, str) else \
        _pairs("reduce_window", padding, nd)
    if np.ndim(init_value) != 0:
        raise ValueError(f"lax.reduce_window: init_value must be a scalar, got shape {np.shape(init_value)}")
    init = np.asarray(getattr(init_value, "_data", init_value)).item()
    kind = _kind(computation)
    dtype = np.dtype(lax_ops.dtype_of(operand))
    # padding and the dilation's holes take no part (XLA's windows skip them): padded with the identity, or, for a
    # function without one, masked; init_value enters each window once
    identity = {"add": 0, "mul": 1, "max": -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min,
                "min": np.inf if dtype.kind in "fc" else np.iinfo(dtype).max}.get(kind, init)
    config = [(lo, hi, b - 1) for (lo, hi), b in zip(pads, base)]
    x = operand
    if any(c != (0, 0, 0) for c in config):
        x = lax_ops.pad(x, identity, config)
    inside = lax_ops.pad(np.ones(shape, dtype=bool), False, config) if kind == "fold" else None
    padded = np.shape(x)
    out = [max((n - e) // s + 1, 0) for n, e, s in zip(padded, extent, strides)]
    result = None
    parts = []
    for offset in itertools.product(*(range(k) for k in window)):
        index = tuple(slice(o * r, o * r + (m - 1) * s + 1, s) for o, r, m, s in zip(offset, wdil, out, strides))
        if kind == "fold":
            start = lax_ops.full(out, init, dtype) if result is None else result
            result = np.where(inside[index], computation(start, x[index]), start)
        else:
            parts.append(x[index])
    if kind == "fold" or not parts:  # (no window entries: every output is init_value)
        return lax_ops.full(out, init, dtype) if result is None else result
    stacked = _shape.stack(parts, axis=-1)
    if kind in ("add", "mul"):
        result = np.sum(stacked, axis=-1) if kind == "add" else np.prod(stacked, axis=-1)
        return result if init == identity else result + init if kind == "add" else result * init
    first = np.argmax(stacked, axis=-1) if kind == "max" else np.argmin(stacked, axis=-1)
    result = np.take_along_axis(stacked, np.expand_dims(first, -1), axis=-1)[..., 0]
    if init == identity:
        return result
    return np.maximum(result, init) if kind == "max" else np.minimum(result, init)


# ---------------------------------------------------------------- select_n

def select_n(which: Any, *cases: Any) -> Any:
    """JAX's ``lax.select_n``: ``cases[which]`` entry by entry (``which`` boolean, for two cases: False picks
    the first, or integer); the cases have one shape and dtype, ``which`` theirs or a scalar. Differentiable in
    the cases."""
    if not cases:
        raise ValueError("lax.select_n: needs at least one case")
    shapes = {tuple(np.shape(c)) for c in cases}
    if len(shapes) != 1:
        raise TypeError(f"lax.select_n: the cases must have one shape, got {sorted(shapes)}")
    which_dtype = np.dtype(lax_ops.dtype_of(which))
    if which_dtype == np.bool_ and len(cases) > 2:
        raise TypeError(f"lax.select_n: a boolean `which` selects between two cases, got {len(cases)}")
    if np.shape(which) not in ((), *shapes):
        raise TypeError(f"lax.select_n: `which` must be a scalar or have the cases' shape {shapes.pop()}, got "
                        f"shape {np.shape(which)}")
    if len(cases) == 1:
        return cases[0]
    if which_dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    result = cases[-1]
    for k in range(len(cases) - 2, -1, -1):  # out-of-range `which` is undefined in JAX: the last case here
        result = np.where(which == k, cases[k], result)
    return result
