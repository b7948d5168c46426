"""Sampling an input at arbitrary points (PyTorch's ``grid_sample``) and the sampling grids of affine maps
(``affine_grid``), for 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs, built from differentiable ops (no rules of
their own).

``grid_sample`` maps each grid point from [-1, 1] to the input's pixel coordinates (``align_corners``: -1 and 1
are the corner pixels' centres, else their outer edges), folds it back inside by ``padding_mode`` (``border``
clamps, ``reflection`` mirrors at the edges), then reads the input there: ``bilinear`` (trilinear for 5-D)
weighs the 2^d neighbours by products of the coordinates' fractional parts, ``nearest`` takes the closest one
(halves rounded to even, as PyTorch), ``bicubic`` (4-D only) weighs 4 x 4 neighbours by cubic polynomials of the
fractional parts (PyTorch's: the point is not folded, each neighbour is). The neighbours' positions are
constants found on the values; the weights are arithmetic on the grid, and the reads are gathers of the input:
gradients of every order with respect to both follow, with PyTorch's conventions where the map is not
differentiable (a clamp's or a mirror's edge gives the coordinate a zero gradient; ``nearest`` gives the grid a
zero one).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np

from ...core.device import as_array
from ...core.errors import ChainruleWarning
from .. import elementwise as ew
from .._define import on_device_of, raw, shape_of, xp_where
from ..contraction import matmul
from ..declare import declare_function
from ..shape import reshape, swapaxes, take_along_axis
from .convolution import as_float_input

_MODES = ("bilinear", "nearest", "bicubic")
_A = -0.75  # the cubic convolution's parameter (PyTorch's, as OpenCV's)
_PADDINGS = ("zeros", "border", "reflection")
_DEFAULT = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0 (as "
            "PyTorch warns); pass align_corners=True for the old behaviour, or False to keep this one")


def _align(name: str, align_corners: Any) -> bool:
    if align_corners is None:
        warnings.warn(f"{name}: {_DEFAULT}", ChainruleWarning, stacklevel=3)
        return False
    return bool(align_corners)


# -- affine_grid ---------------------------------------------------------------------------------------------
def _steps(n: int, align_corners: bool) -> np.ndarray:
    """PyTorch's n points spanning [-1, 1] (the pixels' centres; a single pixel sits at 0)."""
    if n <= 1:
        return np.zeros(n)
    r = np.linspace(-1.0, 1.0, n)
    return r if align_corners else r * (n - 1) / n


def affine_grid(theta: Any, size: Any, align_corners: bool | None = None) -> Any:
    """The sampling grid of a batch of affine maps (as ``torch.nn.functional.affine_grid``): theta (N, 2, 3) and
    size (N, C, H, W) give (N, H, W, 2), each point ``theta @ (x, y, 1)`` for the output pixel's normalised
    coordinates (x along W); theta (N, 3, 4) and size (N, C, D, H, W) give (N, D, H, W, 3). Linear in theta.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.affine_grid(np.array([[[1.0, 0, 0], [0, 1, 0]]]), (1, 1, 2, 2), align_corners=True)
        array([[[[-1., -1.],
                 [ 1., -1.]],
        <BLANKLINE>
                [[-1.,  1.],
                 [ 1.,  1.]]]])
    """
    name = "affine_grid"
    corners = _align(name, align_corners)
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"{name}: only 4-D and 5-D sizes (N, C, H, W) / (N, C, D, H, W) are supported, "
                                  f"got size {size}")
    d = len(size) - 2
    t = as_float_input(theta)
    st = tuple(shape_of(t))
    if len(st) != 3 or st[1:] != (d, d + 1):
        raise ValueError(f"{name}: expected a batch of {d}-D affine matrices of shape N x {d} x {d + 1} for size "
                         f"{size}, got theta of shape {st}")
    if st[0] != size[0]:
        raise ValueError(f"{name}: theta holds {st[0]} matrices but size asks for a batch of {size[0]}")
    spatial = size[2:]
    if min(size) <= 0:
        raise ValueError(f"{name}: expected a positive output size, got {size}")
    if corners and min(spatial) == 1:
        warnings.warn(f"{name}: a unit-size grid with align_corners=True puts its one point at 0 (PyTorch's "
                      "behaviour since 1.3.0), not at -1", ChainruleWarning, stacklevel=2)
    # the base grid (*spatial, d + 1): the coordinates x (last axis), y, (z), then 1
    axes = np.meshgrid(*(_steps(n, corners) for n in spatial), indexing="ij")
    base = np.stack([*reversed(axes), np.ones(spatial)], axis=-1).reshape(-1, d + 1)
    dt = np.result_type(raw(t))
    grid = matmul(on_device_of(t, base.astype(dt)), swapaxes(t, 1, 2))  # (N, points, d)
    return reshape(grid, (size[0], *spatial, d))


# -- grid_sample ---------------------------------------------------------------------------------------------
def _where(mask: Any, a: Any, b: Any) -> Any:
    return ew.where(mask, a, b)


def _values(c: Any) -> Any:
    """The array of a coordinate, read to place its neighbours (under vmap: refused, naming vmap)."""
    return as_array(raw(c))


def _clip(c: Any, size: int) -> Any:
    """c clamped to [0, size - 1]; its gradient 0 at and beyond the edges (PyTorch: the borders count as out)."""
    v = _values(c)
    return _where(v <= 0, v.dtype.type(0), _where(v >= size - 1, v.dtype.type(size - 1), c))


def _reflect(c: Any, twice_low: int, twice_high: int) -> Any:
    """c mirrored at twice_low / 2 and twice_high / 2 until inside (PyTorch's ``reflect_coordinates``)."""
    v = _values(c)
    if twice_low == twice_high:  # one pixel, corners aligned: every point is at 0
        return c * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = c - low
    flip = _values(shifted) < 0
    distance = _where(flip, -shifted, shifted)
    xp = xp_where(v)
    flips = xp.floor(_values(distance) / span)
    extra = distance - flips * span
    return _where(flips % 2 == 0, extra + low, (span + low) - extra)


def _unnormalize(c: Any, size: int, corners: bool) -> Any:
    """A grid coordinate in [-1, 1] as the input's pixel coordinate."""
    return (c + 1) * ((size - 1) / 2) if corners else ((c + 1) * size - 1) / 2


def _source(c: Any, size: int, padding_mode: str, corners: bool) -> Any:
    """A grid coordinate in [-1, 1] as the input's pixel coordinate, folded inside by ``padding_mode``."""
    c = _unnormalize(c, size, corners)
    if padding_mode == "border":
        c = _clip(c, size)
    elif padding_mode == "reflection":
        c = _clip(_reflect(c, 0, 2 * (size - 1)) if corners else _reflect(c, -1, 2 * size - 1), size)
    return c


def _cubic_weights(t: Any) -> list[Any]:
    """The four taps' weights (at -1, 0, 1, 2 from the floor) of the cubic convolution at fraction t."""

    def near(u: Any) -> Any:  # |u| <= 1
        return ((_A + 2) * u - (_A + 3)) * u * u + 1

    def far(u: Any) -> Any:  # 1 < |u| < 2
        return ((_A * u - 5 * _A) * u + 8 * _A) * u - 4 * _A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _fold_taps(v: Any, size: int, padding_mode: str, corners: bool) -> Any:
    """Integer tap positions (as floats) folded inside by ``padding_mode`` (bicubic pads each tap, not the point)."""
    xp = xp_where(v)
    if padding_mode == "zeros":
        return v
    if padding_mode == "reflection":
        twice_low, twice_high = (0, 2 * (size - 1)) if corners else (-1, 2 * size - 1)
        if twice_low == twice_high:
            return xp.zeros_like(v)
        low, span = twice_low / 2, (twice_high - twice_low) / 2
        distance = xp.abs(v - low)
        flips = xp.floor(distance / span)
        extra = distance - flips * span
        v = xp.where(flips % 2 == 0, extra + low, span - extra + low)
    return xp.clip(v, 0, size - 1)


def _check(name: str, x: Any, grid: Any, mode: str, padding_mode: str) -> int:
    if mode not in _MODES:
        raise ValueError(f"{name}: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"{name}: expected padding_mode to be 'zeros', 'border' or 'reflection', but got "
                         f"{padding_mode!r}")
    sx, sg = tuple(shape_of(x)), tuple(shape_of(grid))
    if len(sx) not in (4, 5):
        raise ValueError(f"{name}: expected a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, got shape {sx}")
    d = len(sx) - 2
    if len(sg) != d + 2 or sg[-1] != d:
        raise ValueError(f"{name}: a {d + 2}-D input needs a grid of shape (N, *out, {d}) ({d + 2}-D, its last axis "
                         f"the {d} coordinates x, y{', z' if d == 3 else ''}), got grid of shape {sg}")
    if mode == "bicubic" and d != 2:
        raise ValueError(f"{name}: mode='bicubic' takes a 4-D input (N, C, H, W) only (as PyTorch), got shape {sx}; "
                         "use mode='bilinear' (trilinear) for a volume")
    if sg[0] != sx[0]:
        raise ValueError(f"{name}: input and grid must have the same batch size, got input {sx} and grid {sg}")
    if min(sx[2:]) <= 0:
        raise ValueError(f"{name}: expected an input with non-empty spatial dimensions, got shape {sx}")
    return d


Taps = list[tuple[list[Any], Any]]  # (integer position per spatial axis, weight) per neighbour read


def _nearest_taps(coords: list[Any], xp: Any, dt: Any) -> Taps:
    near = [xp.rint(_values(k)).astype(np.int64) for k in coords]  # halves to even, as PyTorch's nearbyint
    # a weight of one that depends on the grid: PyTorch's grid gets a zero gradient here, not none
    return [(near, _where(xp.ones(near[0].shape, bool), dt.type(1), coords[0]))]


def _bilinear_taps(coords: list[Any], xp: Any, dt: Any) -> Taps:
    low = [xp.floor(_values(k)) for k in coords]
    far = [k - f.astype(dt) for k, f in zip(coords, low)]  # the far neighbour's weight on each axis
    taps = []
    for pick in itertools.product((0, 1), repeat=len(coords)):
        weight = math.prod(far[a] if p else 1 - far[a] for a, p in enumerate(pick))
        taps.append(([lo.astype(np.int64) + p for lo, p in zip(low, pick)], weight))
    return taps


def _bicubic_taps(coords: list[Any], spatial: tuple[int, ...], padding_mode: str, corners: bool, xp: Any,
                  dt: Any) -> Taps:
    low = [xp.floor(_values(k)) for k in coords]
    weights = [_cubic_weights(k - f.astype(dt)) for k, f in zip(coords, low)]
    taps = []
    for i, j in itertools.product(range(4), repeat=2):
        at = [xp.rint(_fold_taps(low[a] + (k - 1), spatial[a], padding_mode, corners)).astype(np.int64)
              for a, k in enumerate((i, j))]
        taps.append((at, weights[0][i] * weights[1][j]))
    return taps


def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Any:
    """The input read at the grid's points (as ``torch.nn.functional.grid_sample``): input (N, C, H, W) and grid
    (N, Ho, Wo, 2) give (N, C, Ho, Wo); input (N, C, D, H, W) and grid (N, Do, Ho, Wo, 3) give (N, C, Do, Ho, Wo).
    grid[..., 0] is x (along W), grid[..., 1] is y (along H), in [-1, 1]; ``mode`` ``"bilinear"`` (trilinear for
    5-D), ``"nearest"`` or ``"bicubic"`` (4-D only: PyTorch's cubic convolution, A = -0.75, over 4 x 4 taps,
    each padded); ``padding_mode`` ``"zeros"``, ``"border"`` or ``"reflection"``. Differentiable in both the input
    and the grid (the grid's gradient is zero for ``"nearest"``).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> image = np.arange(4.0).reshape(1, 1, 2, 2)
        >>> points = np.array([[[[-1.0, -1.0], [0.0, 0.0], [1.0, 0.0]]]])  # (x, y): a corner, the centre, an edge
        >>> F.grid_sample(image, points, align_corners=True)
        array([[[[0. , 1.5, 2. ]]]])
    """
    name = "grid_sample"
    x, g = as_float_input(input), as_float_input(grid)
    d = _check(name, x, g, mode, padding_mode)
    corners = _align(name, align_corners)
    sx, sg = tuple(shape_of(x)), tuple(shape_of(g))
    n, c, spatial, out = sx[0], sx[1], sx[2:], sg[1:-1]
    points = math.prod(out)
    flat_grid = reshape(g, (n, points, d))
    xp = xp_where(raw(x))
    if not bool(xp.isfinite(_values(g)).all()):  # (PyTorch's answers there differ by mode and padding)
        raise ValueError(f"{name}: the grid holds NaN or infinite coordinates; chainrule samples finite points "
                         "only (make them finite first, e.g. with nan_to_num or clip)")
    dt = np.result_type(raw(x), raw(g))
    axes = [flat_grid[:, :, d - 1 - a] for a in range(d)]  # spatial axis a reads grid component d - 1 - a
    if mode == "bicubic":  # the point itself is not folded: each of its taps is
        taps = _bicubic_taps([_unnormalize(k, n_a, corners) for k, n_a in zip(axes, spatial)], spatial,
                             padding_mode, corners, xp, dt)
    else:
        coords = [_source(k, n_a, padding_mode, corners) for k, n_a in zip(axes, spatial)]
        taps = (_nearest_taps if mode == "nearest" else _bilinear_taps)(coords, xp, dt)
    total = None
    values = reshape(x, (n, c, math.prod(spatial)))
    strides = [math.prod(spatial[a + 1:]) for a in range(d)]
    for at, weight in taps:  # a gather of the input per tap, weighted (0 outside the input)
        inside = xp.ones(at[0].shape, bool)
        index = xp.zeros(at[0].shape, np.int64)
        for a in range(d):
            inside &= (at[a] >= 0) & (at[a] < spatial[a])
            index += xp.clip(at[a], 0, spatial[a] - 1) * strides[a]
        read = take_along_axis(values, index[:, None, :], axis=2)  # (N, C, points)
        term = read * reshape(weight * inside.astype(dt), (n, 1, points))
        total = term if total is None else total + term
    return reshape(total, (n, c, *out))


for _fn in (affine_grid, grid_sample):
    declare_function(_fn, namespaces=("ops", "nn.functional"), cases="none",
                     torch=f"torch.nn.functional.{_fn.__name__}")

__all__ = ["affine_grid", "grid_sample"]
