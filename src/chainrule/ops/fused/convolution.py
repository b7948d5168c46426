"""Convolution (PyTorch's ``conv1d`` / ``conv2d`` / ``conv3d``: cross-correlation) as three bilinear primitives.

The convolution is the trilinear form ``T(x, w, g) = <conv(x, w), g>`` read three ways:

- ``nn.conv(x, w)``: the output (what ``T`` pairs with ``g``);
- ``nn.conv_input_grad(g, w)``: the input's gradient, a transposed convolution: the gradient spread
  by the stride, padded, and correlated with the flipped kernel (in and out channels swapped); for
  strided convolutions, and fewer input than output channels, the same sum is computed as col2im
  (the kernel's transpose times g, added back per kernel offset), which skips the spread's zeros;
- ``nn.conv_weight_grad(x, g)``: the weight's gradient, a correlation of the input with the gradient.

Each is linear in each argument, and the transpose of each with respect to one argument is another of
the three: the set is closed, so gradients of any order and forward mode need no other rule. Every
kernel is vectorised: ``sliding_window_view`` picks the windows (``im2col``) and one matmul per group
does the products; there is no Python loop over pixels or over the batch. Padding is given per side
``((lo, hi), ...)``; a negative amount crops (the input gradient's geometry needs it).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...autodiff.batch_levels import is_value
from ...core.device import as_array, contiguous, xp_of
from .._define import shape_of
from ..declare import bilinear_primitive, declare_function
from ..shape import reshape

Pairs = tuple[tuple[int, int], ...]


# -- NumPy kernels -------------------------------------------------------------------------------------------
def pad_or_crop(x: np.ndarray, padding: Pairs, value: float = 0.0) -> np.ndarray:
    """x with its trailing ``len(padding)`` axes padded by ``(lo, hi)`` (a negative amount crops)."""
    lead = x.ndim - len(padding)
    crop = (slice(None),) * lead + tuple(slice(max(-lo, 0), x.shape[lead + i] - max(-hi, 0))
                                         for i, (lo, hi) in enumerate(padding))
    x = x[crop]
    if any(lo > 0 or hi > 0 for lo, hi in padding):
        x = np.pad(x, [(0, 0)] * lead + [(max(lo, 0), max(hi, 0)) for lo, hi in padding], constant_values=value)
    return x


def windows(x: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...]) -> np.ndarray:
    """A view (..., *out, *kernel) of the windows of x's trailing ``len(kernel)`` axes (no copy)."""
    d = len(kernel)
    extent = tuple((k - 1) * dl + 1 for k, dl in zip(kernel, dilation))
    view = sliding_window_view(x, extent, axis=tuple(range(x.ndim - d, x.ndim)))
    lead = (slice(None),) * (x.ndim - d)
    return view[lead + tuple(slice(None, None, s) for s in stride) + tuple(slice(None, None, dl) for dl in dilation)]


def _columns(x: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], padding: Pairs,
             dilation: tuple[int, ...], groups: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """im2col: (groups, N, C / groups * kernel size, positions), and the output's spatial shape. The positions
    are the last axis: the copy reads rows of the input in order, and each product is one BLAS call."""
    d = len(kernel)
    view = windows(pad_or_crop(x, padding), kernel, stride, dilation)  # (N, C, *out, *kernel)
    n, c = view.shape[:2]
    out = view.shape[2:2 + d]
    view = view.reshape(n, groups, c // groups, *out, *kernel)
    order = (1, 0, 2, *range(3 + d, 3 + 2 * d), *range(3, 3 + d))  # (G, N, C/G, *kernel, *out)
    cols = view.transpose(order).reshape(groups, n, (c // groups) * math.prod(kernel), math.prod(out))
    return cols, out


def _conv_fn(x: np.ndarray, w: np.ndarray, *, stride: tuple[int, ...], padding: Pairs, dilation: tuple[int, ...],
             groups: int) -> np.ndarray:
    o, kernel = w.shape[0], w.shape[2:]
    dt = np.result_type(x, w)
    cols, out = _columns(as_array(x, dtype=dt), kernel, stride, padding, dilation, groups)
    wm = as_array(w, dtype=dt).reshape(groups, 1, o // groups, -1)  # (G, 1, O/G, C/G * k)
    y = np.matmul(wm, cols)  # (G, N, O/G, positions): one product per group and example
    n = x.shape[0]
    return contiguous(y.transpose(1, 0, 2, 3)).reshape(n, o, *out)  # (no copy when groups == 1)


def _weight_grad_fn(x: np.ndarray, g: np.ndarray, *, stride: tuple[int, ...], padding: Pairs,
                    dilation: tuple[int, ...], groups: int, kernel: tuple[int, ...]) -> np.ndarray:
    dt = np.result_type(x, g)
    cols, out = _columns(as_array(x, dtype=dt), kernel, stride, padding, dilation, groups)
    n, o = g.shape[:2]
    if tuple(g.shape[2:]) != tuple(out):  # (only reachable by calling the primitive directly)
        raise ValueError(f"nn.conv_weight_grad: gradient of spatial shape {g.shape[2:]} does not fit the output "
                         f"{out} of the convolution")
    # sums over examples and positions: (G, O/G, N * positions) times (G, C/G * k, N * positions)^T
    gm = as_array(g, dtype=dt).reshape(n, groups, o // groups, -1).transpose(1, 2, 0, 3).reshape(groups, o // groups,
                                                                                                 -1)
    cm = cols.transpose(0, 2, 1, 3).reshape(groups, cols.shape[2], -1)
    # one 2-D product per group: NumPy's stacked matmul has no BLAS path for a transposed operand. The long
    # operand goes on the left: threaded OpenBLAS took 1.8 s for gm @ cm.T (16 x 50176 by 50176 x 72) on a busy
    # two-core machine, 3 ms for (cm @ gm.T).T
    dw = np.stack([(cm[i] @ gm[i].T).T for i in range(groups)])
    return dw.reshape(o, x.shape[1] // groups, *kernel)


def _input_grad_fn(g: np.ndarray, w: np.ndarray, *, stride: tuple[int, ...], padding: Pairs,
                   dilation: tuple[int, ...], groups: int, size: tuple[int, ...]) -> np.ndarray:
    if any(s > 1 for s in stride) or w.shape[1] * groups < w.shape[0]:
        return _input_grad_col2im(g, w, stride, padding, dilation, groups, size)
    return _input_grad_transposed(g, w, stride, padding, dilation, groups, size)


def _input_grad_transposed(g: np.ndarray, w: np.ndarray, stride: tuple[int, ...], padding: Pairs,
                           dilation: tuple[int, ...], groups: int, size: tuple[int, ...]) -> np.ndarray:
    """The input gradient as a transposed convolution: the gradient spread by the stride, padded, correlated
    with the flipped kernel (in and out channels swapped). Its im2col has out_channels * kernel rows."""
    d = len(size)
    n, o = g.shape[:2]
    kernel = w.shape[2:]
    dt = np.result_type(g, w)
    spread_shape = tuple((m - 1) * s + 1 for m, s in zip(g.shape[2:], stride))
    if all(s == 1 for s in stride):
        spread = as_array(g, dtype=dt)
    else:  # the stride's gaps filled with zeros
        spread = np.zeros((n, o, *spread_shape), dtype=dt)
        spread[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)] = g
    pads = []
    for i in range(d):
        lo = (kernel[i] - 1) * dilation[i] - padding[i][0]
        pads.append((lo, size[i] + (kernel[i] - 1) * dilation[i] - lo - spread_shape[i]))
    # the kernel flipped, in and out channels swapped within each group: (C, O/G, *kernel)
    cg = w.shape[1]
    flipped = as_array(w, dtype=dt)[(slice(None), slice(None)) + (slice(None, None, -1),) * d]
    flipped = flipped.reshape(groups, o // groups, cg, *kernel).swapaxes(1, 2).reshape(groups * cg, o // groups,
                                                                                          *kernel)
    return _conv_fn(spread, flipped, stride=(1,) * d, padding=tuple(pads), dilation=dilation, groups=groups)


def _input_grad_col2im(g: np.ndarray, w: np.ndarray, stride: tuple[int, ...], padding: Pairs,
                       dilation: tuple[int, ...], groups: int, size: tuple[int, ...]) -> np.ndarray:
    """The same gradient as the kernel's transpose times g (one product per group), each kernel offset's
    columns added back onto the padded input with one strided slice. Cheaper than the transposed
    convolution for strided convolutions (no products with the spread's zeros) and for fewer input than
    output channels; the loop is over kernel offsets, never over pixels or examples."""
    n, o = g.shape[:2]
    kernel, cg, out = w.shape[2:], w.shape[1], g.shape[2:]
    dt = np.result_type(g, w)
    wt = as_array(w, dtype=dt).reshape(groups, 1, o // groups, -1).swapaxes(-1, -2)  # (G, 1, C/G * k, O/G)
    gm = as_array(g, dtype=dt).reshape(n, groups, o // groups, -1).swapaxes(0, 1)  # (G, N, O/G, positions)
    cols = np.matmul(wt, gm).reshape(groups, n, cg, math.prod(kernel), *out)
    padded = tuple(m + lo + hi for m, (lo, hi) in zip(size, padding))
    dxp = xp_of(gm).zeros((groups, n, cg, *padded), dtype=dt)
    for i, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        at = tuple(slice(k * dl, k * dl + (m - 1) * s + 1, s) for k, dl, m, s in zip(offset, dilation, out, stride))
        dxp[(slice(None),) * 3 + at] += cols[:, :, :, i]
    dx = dxp.swapaxes(0, 1).reshape(n, groups * cg, *padded)
    return contiguous(pad_or_crop(dx, tuple((-lo, -hi) for lo, hi in padding)))  # undo the padding


# -- the three primitives: each one's transposes are the other two ---------------------------------------------
def _geometry(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: kw[k] for k in ("stride", "padding", "dilation", "groups")}


def _spatial(a: Any) -> tuple[int, ...]:
    return tuple(shape_of(a)[2:])


conv_primitive = bilinear_primitive(
    "nn.conv", _conv_fn,
    lambda h, ans, x, w, **kw: conv_input_grad_primitive(h, w, **kw, size=_spatial(x)),
    lambda h, ans, x, w, **kw: conv_weight_grad_primitive(x, h, **kw, kernel=_spatial(w)),
)
conv_input_grad_primitive = bilinear_primitive(
    "nn.conv_input_grad", _input_grad_fn,
    lambda h, ans, g, w, **kw: conv_primitive(h, w, **_geometry(kw)),
    lambda h, ans, g, w, **kw: conv_weight_grad_primitive(h, g, **_geometry(kw), kernel=_spatial(w)),
)
conv_weight_grad_primitive = bilinear_primitive(
    "nn.conv_weight_grad", _weight_grad_fn,
    lambda h, ans, x, g, **kw: conv_input_grad_primitive(g, h, **_geometry(kw), size=_spatial(x)),
    lambda h, ans, x, g, **kw: conv_primitive(x, h, **_geometry(kw)),
)


# -- arguments as PyTorch takes them ---------------------------------------------------------------------------
def tuple_arg(name: str, what: str, value: Any, d: int, minimum: int = 1) -> tuple[int, ...]:
    """An int or a sequence of ``d`` ints, each at least ``minimum``, as a tuple (else a ValueError naming it)."""
    vals = (value,) * d if isinstance(value, (int, np.integer)) else tuple(value)
    if len(vals) == 1 and d > 1:
        vals = vals * d
    if len(vals) != d or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
        raise ValueError(f"{name}: {what} must be an int or a tuple of {d} ints, got {value!r}")
    if any(v < minimum for v in vals):
        raise ValueError(f"{name}: {what} must be at least {minimum}, got {value!r}")
    return tuple(int(v) for v in vals)


def as_float_input(x: Any) -> Any:
    """A Tensor as it is; anything else as a float array (integers become float64)."""
    if is_value(x):  # a Tensor, or a batched value inside vmap
        return x
    arr = as_array(x)
    return arr if arr.dtype.kind in "fc" else arr.astype(np.float64)


def batched(name: str, x: Any, d: int) -> tuple[Any, bool]:
    """(x with a batch axis, whether it had none): PyTorch's layers take (C, *spatial) unbatched."""
    nd = len(shape_of(x))
    if nd == d + 1:
        return reshape(x, (1, *shape_of(x))), True
    if nd != d + 2:
        raise ValueError(f"{name}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) input, got shape "
                         f"{shape_of(x)}")
    return x, False


def _conv_padding(name: str, padding: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
                  dilation: tuple[int, ...]) -> Pairs:
    d = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * d
        if padding != "same":
            raise ValueError(f"{name}: padding must be an int, a tuple, 'same' or 'valid', got {padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{name}: padding='same' is not supported for strided convolutions (stride={stride}); "
                             "give the padding as a number")
        total = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in total)  # an odd total puts the extra one on the right (PyTorch)
    return tuple((p, p) for p in tuple_arg(name, "padding", padding, d, minimum=0))


def _conv(name: str, d: int, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
          groups: int) -> Any:
    x = as_float_input(input)
    w = as_float_input(weight)
    sw = shape_of(w)
    if len(sw) != d + 2:
        raise ValueError(f"{name}: weight must be {d + 2}-D (out_channels, in_channels / groups, *kernel_size), "
                         f"got shape {sw}")
    x, unbatched = batched(name, x, d)
    sx = shape_of(x)
    if not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    if sx[1] != sw[1] * groups or sw[0] % groups:
        raise ValueError(
            f"{name}: input with {sx[1]} channels does not fit weight of shape {sw} and groups={groups}: the "
            f"input needs weight.shape[1] * groups = {sw[1] * groups} channels, and out_channels ({sw[0]}) must be "
            "divisible by groups"
        )
    kernel = tuple(sw[2:])
    stride_t = tuple_arg(name, "stride", stride, d)
    dilation_t = tuple_arg(name, "dilation", dilation, d)
    pads = _conv_padding(name, padding, kernel, stride_t, dilation_t)
    for i in range(d):
        if sx[2 + i] + sum(pads[i]) < (kernel[i] - 1) * dilation_t[i] + 1:
            raise ValueError(
                f"{name}: the kernel ({kernel[i]}, dilation {dilation_t[i]}) is larger than the padded input "
                f"({sx[2 + i]} + padding {sum(pads[i])}) along spatial axis {i}; pad more or use a smaller kernel"
            )
    y = conv_primitive(x, w, stride=stride_t, padding=pads, dilation=dilation_t, groups=int(groups))
    if bias is not None:
        sb = shape_of(bias)
        if tuple(sb) != (sw[0],):
            raise ValueError(f"{name}: bias must have shape ({sw[0]},) (out_channels), got {sb}")
        y = y + reshape(bias, (sw[0],) + (1,) * d)
    return reshape(y, shape_of(y)[1:]) if unbatched else y


def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """1-D convolution (cross-correlation, as ``torch.nn.functional.conv1d``): input (N, C, L) or (C, L),
    weight (out_channels, C / groups, k); padding an int, a tuple, ``"same"`` or ``"valid"``.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.conv1d(np.array([[[1.0, 2.0, 3.0, 4.0]]]), np.array([[[1.0, -1.0]]]))
        array([[[-1., -1., -1.]]])
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """2-D convolution (cross-correlation, as ``torch.nn.functional.conv2d``): input (N, C, H, W) or
    (C, H, W), weight (out_channels, C / groups, kh, kw); padding an int, a tuple, ``"same"`` or ``"valid"``.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.conv2d(np.ones((1, 1, 3, 3)), np.ones((2, 1, 2, 2)), padding=1).shape
        (1, 2, 4, 4)
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """3-D convolution (cross-correlation, as ``torch.nn.functional.conv3d``): input (N, C, D, H, W) or
    (C, D, H, W), weight (out_channels, C / groups, kd, kh, kw); padding an int, a tuple, ``"same"`` or
    ``"valid"``. The same d-dimensional primitives as ``conv2d``, so every order of gradient follows.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y = F.conv3d(np.ones((1, 2, 4, 4, 4)), np.ones((3, 2, 2, 2, 2)), stride=2)
        >>> y.shape, float(y.max())
        ((1, 3, 2, 2, 2), 16.0)
    """
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


for _fn in (conv1d, conv2d, conv3d):
    declare_function(_fn, primitive=conv_primitive, arity=2,
                     namespaces=("ops", "nn.functional"),
                     cases="none", torch=f"torch.nn.functional.{_fn.__name__}")

__all__ = ["conv1d", "conv2d", "conv3d"]
