"""PyTorch's top-level functions that are neither a chainrule op nor a Tensor method.

Random draws (``randperm``, ``normal``, ``bernoulli``, ``poisson``, ``randint_like``) come from the default
generator of ``manual_seed`` (or ``generator=``) and are drawn again by a ``jit`` replay; index builders
(``tril_indices``, ``triu_indices``, ``bucketize``, ``isin``) and counts (``bincount``, ``histc``) give PyTorch's
layouts and dtypes, without gradient; the rest are composites of differentiable ops (``cartesian_prod``,
``combinations``, ``cdist``, ``logspace``, ``chain_matmul``, ``broadcast_tensors``, ``msort``, ``complex``,
``polar``, ``view_as_real``, ``view_as_complex``), so their derivatives are those ops'. ``gradient`` and
``meshgrid`` keep NumPy's reading for NumPy's spellings and give PyTorch's for Tensors (a tuple; 'ij' indexing).

Example:
    >>> import chainrule as cr
    >>> cr.manual_seed(0); sorted(cr.randperm(4).tolist())
    [0, 1, 2, 3]
    >>> cr.tril_indices(3, 3).tolist()
    [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    >>> cr.cdist(cr.tensor([[0.0, 0.0]]), cr.tensor([[3.0, 4.0], [0.0, 1.0]])).tolist()
    [[5.0, 1.0]]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_value
from ...core.defaults import generator, get_default_dtype
from ...core.device import DeviceError, as_array, constant_on, is_off_host, mixed_devices, of, xp_of
from ...core.traces import draw
from ...tensor import Tensor
from .. import shape as shape_ops
from .._define import literal_on, raw
from ..arrays import broadcast_arrays
from ..arrays import meshgrid as numpy_meshgrid
from .constructors import _make, _xp, linspace
from .dim_args import numpy_methods


def _tensor(x: Any) -> Any:
    return x if is_value(x) else Tensor(x)


def _values(x: Any) -> Any:
    """The values of ``x`` where they are (the host or a device), read (a jit trace checks them on replay)."""
    data = raw(x)
    return data if is_off_host(data) else np.asarray(data)


def _together(name: str, *xs: Any) -> list[Any]:
    """The values of ``xs``, all on one device (a host list or number goes where the others are), else the
    error naming the function and both devices."""
    values = [_values(x) if isinstance(x, Tensor) or is_off_host(x) or isinstance(x, np.ndarray) else x for x in xs]
    like = next((v for v in values if is_off_host(v)), None)
    values = [literal_on(like, v) if like is not None else np.asarray(v) for v in values]
    mixed = mixed_devices(name, values)
    if mixed is not None:
        raise mixed
    return values


def _host(x: Any, name: str) -> np.ndarray:
    """The values of ``x`` as a NumPy array; a device's values are refused (these functions compute on the host,
    and a hidden copy is what the device layer promises not to make)."""
    data = raw(x)  # (raw: a jit trace checks on replay the values read here)
    if is_off_host(data):
        raise DeviceError(f"{name}: computes on the host and got values on the device {of(data).name!r}; pass "
                          "t.cpu() (and move the result back with .to(device))")
    return np.asarray(data)


# -- random draws ------------------------------------------------------------------------------------
def _drawn(how: Callable[..., Any], rng: Any, args: tuple[Any, ...], dtype: Any) -> np.ndarray:
    """``how(generator, *args)`` in ``dtype``: the generator looked up on each call, and the array made here is
    the one a jit trace records, so that a replay draws afresh."""
    return np.asarray(how(generator(rng), *args)).astype(dtype)


def _permutation(g: np.random.Generator, n: int) -> Any:
    return g.permutation(n)


def _normal(g: np.random.Generator, mean: Any, std: Any, shape: tuple[int, ...]) -> Any:
    return g.normal(mean, std, shape)


def _bernoulli(g: np.random.Generator, chance: Any) -> Any:
    return g.random(chance.shape) < chance


def _poisson(g: np.random.Generator, rates: Any) -> Any:
    return g.poisson(rates)


def _integers(g: np.random.Generator, low: int, high: int, shape: tuple[int, ...]) -> Any:
    return g.integers(low, high, shape)


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``)."""
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise RuntimeError(f"randperm: n must be a non-negative integer, got {n!r}")
    _xp("randperm", device)
    dt = np.dtype(dtype) if dtype is not None else np.int64
    return _make(draw(_drawn, _permutation, generator, (int(n),), dt), requires_grad, device, "randperm")


def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Any = None, dtype: Any = None,
           device: Any = None) -> Tensor:
    """Draws from N(mean, std): ``mean`` and ``std`` broadcast together (Tensors or numbers), or numbers with a
    ``size``. As PyTorch's, the draws carry no gradient to ``mean`` or ``std``; for a reparameterised draw write
    ``mean + std * cr.randn_like(std)``."""
    m, s = _host(mean, "normal"), _host(std, "normal")
    if size is not None:
        if m.ndim or s.ndim:
            raise RuntimeError("normal: size= goes with a number mean and std; with Tensors the shape is theirs")
        shape = tuple(size)
    else:
        shape = np.broadcast_shapes(m.shape, s.shape)
    if (s < 0).any():
        raise RuntimeError(f"normal: std must be >= 0, got {s.min()}")
    floating = [x.dtype for x in (mean, std) if isinstance(x, Tensor) and x.dtype.kind == "f"]  # (numbers: default)
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*floating) if floating else get_default_dtype()
    return _make(draw(_drawn, _normal, generator, (m, s, shape), dt), False, device, "normal")


def bernoulli(input: Any, p: float | None = None, *, generator: Any = None) -> Tensor:  # noqa: A002
    """0 or 1 with probability ``input`` entry by entry (or ``p`` for all), in ``input``'s dtype (on a device: the
    uniform draws are made on the host, as ``cr.rand(device=)``'s, and compared there)."""
    if is_off_host(raw(input)):
        return _bernoulli_on_device(raw(input), p, generator)
    probs = _host(input, "bernoulli")
    chance = probs if p is None else np.full(probs.shape, p)
    if ((chance < 0) | (chance > 1)).any() or np.isnan(chance).any():
        raise RuntimeError("bernoulli: the probabilities must be in [0, 1]")
    dt = probs.dtype if probs.dtype.kind == "f" else get_default_dtype()
    return Tensor._wrap(draw(_drawn, _bernoulli, generator, (chance,), dt))


def _bernoulli_on_device(probs: Any, p: float | None, generator: Any) -> Tensor:
    chance = probs if p is None else xp_of(probs).full(probs.shape, p)
    if bool(((chance < 0) | (chance > 1) | np.isnan(chance)).any()):
        raise RuntimeError("bernoulli: the probabilities must be in [0, 1]")
    dt = probs.dtype if probs.dtype.kind == "f" else get_default_dtype()
    u = constant_on(probs, draw(_drawn, _uniform, generator, (probs.shape,), np.float64))
    return Tensor._wrap((u < chance).astype(dt))


def _uniform(g: np.random.Generator, shape: tuple[int, ...]) -> Any:
    return g.random(shape)


def poisson(input: Any, generator: Any = None) -> Tensor:  # noqa: A002
    """Poisson draws with the rates ``input`` (non-negative), in ``input``'s dtype."""
    rates = _host(input, "poisson")
    if (rates < 0).any():
        raise RuntimeError("poisson: the rates must be >= 0")
    return Tensor._wrap(draw(_drawn, _poisson, generator, (rates,), rates.dtype))


def randint_like(input: Any, low: int = 0, high: int | None = None, *, dtype: Any = None,  # noqa: A002
                 generator: Any = None) -> Tensor:
    """Random integers in [low, high) in ``input``'s shape (``randint_like(x, high)`` counts from 0)."""
    if high is None:
        low, high = 0, low
    like = input._data if isinstance(input, Tensor) else as_array(input)  # its shape, dtype and device: no values
    dt = np.dtype(dtype) if dtype is not None else like.dtype
    return _make(draw(_drawn, _integers, generator, (low, high, like.shape), dt), False, of(like), "randint_like")


# -- indices -----------------------------------------------------------------------------------------
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """The (2, N) row and column indices of the lower triangle of a ``row`` x ``col`` matrix."""
    rows, cols = np.tril_indices(row, offset, col)
    return _make(np.stack([rows, cols]).astype(np.dtype(dtype) if dtype is not None else np.int64), False, device,
                 "tril_indices")


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """The (2, N) row and column indices of the upper triangle of a ``row`` x ``col`` matrix."""
    rows, cols = np.triu_indices(row, offset, col)
    return _make(np.stack([rows, cols]).astype(np.dtype(dtype) if dtype is not None else np.int64), False, device,
                 "triu_indices")


def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """For each value, the index of its bucket among the sorted ``boundaries``: ``boundaries[i-1] < x <=
    boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``)."""
    bounds, values = _together("bucketize", boundaries, input)
    index = np.searchsorted(bounds, values, side="right" if right else "left")
    return Tensor._wrap(index.astype(np.int32 if out_int32 else np.int64))


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each entry of ``elements`` is among ``test_elements`` (bool)."""
    found = np.isin(*_together("isin", elements, test_elements), assume_unique=assume_unique, invert=invert)
    return Tensor._wrap(found)


# -- differentiable composites -------------------------------------------------------------------------
def broadcast_tensors(*tensors: Any) -> tuple[Any, ...]:
    """The tensors broadcast to one shape."""
    return broadcast_arrays(*[_tensor(t) for t in tensors])


def cartesian_prod(*tensors: Any) -> Any:
    """Every combination of one entry of each 1-D tensor, as rows (one tensor: itself)."""
    if len(tensors) == 1:
        return _tensor(tensors[0])
    grids = numpy_meshgrid(*[_tensor(t) for t in tensors], indexing="ij")
    return shape_ops.stack([shape_ops.reshape(g, (-1,)) for g in grids], axis=1)


def combinations(input: Any, r: int = 2, with_replacement: bool = False) -> Any:  # noqa: A002
    """The length-``r`` combinations of the entries of a 1-D tensor, as rows (in ``itertools``' order)."""
    x = _tensor(input)
    if x.ndim != 1:
        raise RuntimeError(f"combinations: expects a 1-D tensor, got shape {tuple(x.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return x[index]


def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: str | None = None) -> Any:
    """Pairwise ``p``-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M): (..., P, R).
    At a distance of 0 the gradient is 0, as PyTorch's."""
    from ..linear_algebra import vector_norm

    a, b = _tensor(x1), _tensor(x2)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"cdist: x1 and x2 must be (..., P, M) and (..., R, M), got {tuple(a.shape)} and "
                           f"{tuple(b.shape)}")
    diff = shape_ops.expand_dims(a, -2) - shape_ops.expand_dims(b, -3)
    return vector_norm(diff, ord=p, axis=-1)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             requires_grad: bool = False, device: Any = None) -> Any:
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in the exponent."""
    exponents = linspace(start, end, steps, dtype=dtype, device=device)
    out = base ** exponents
    if requires_grad:
        out.requires_grad = True
    return out


def chain_matmul(*matrices: Any) -> Any:
    """The product of the matrices, in the cheapest order (``linalg.multi_dot``)."""
    from ..linear_algebra import multi_dot

    if len(matrices) == 1:
        return _tensor(matrices[0]).clone()  # a new tensor, as PyTorch's (never the input itself)
    return multi_dot([_tensor(m) for m in matrices])


def msort(input: Any) -> Any:  # noqa: A002
    """The values sorted along dimension 0."""
    return _tensor(input).sort(dim=0)[0]


def is_nonzero(input: Any) -> bool:  # noqa: A002
    """Whether a one-entry tensor is not zero (an error for any other size, as PyTorch's)."""
    value = _host(input, "is_nonzero")
    if value.size != 1:
        count = "no values" if value.size == 0 else "more than one value"
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {count} is ambiguous")
    return bool(value.reshape(-1)[0])


def complex(real: Any, imag: Any) -> Any:  # noqa: A001  (PyTorch's name)
    """The complex tensor ``real + 1j * imag`` (both real, of one dtype), differentiable in both."""
    re, im = _tensor(real), _tensor(imag)
    if re.dtype.kind != "f" or im.dtype.kind != "f" or re.dtype != im.dtype:
        raise RuntimeError(f"complex: real and imag must be floating tensors of one dtype, got {re.dtype} and "
                           f"{im.dtype}")
    z = re + im * 1j
    if isinstance(z, Tensor) and isinstance(re, Tensor) and isinstance(im, Tensor):
        # the parts as given: im * 1j is (-0 + 0j) for im = -0.0, so the sum lost the sign of a zero part, which
        # decides a branch cut (angle, log and sqrt of complex(-1, -0.0) are PyTorch's -pi, -pi j and -1j)
        exact = z._data.real, z._data.imag
        exact[0][...], exact[1][...] = re._data, im._data
    return z


def polar(abs: Any, angle: Any) -> Any:  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + 1j * sin(angle))``, differentiable in both (rotary embeddings
    are often written with it)."""
    r, theta = _tensor(abs), _tensor(angle)
    return complex(r * theta.cos(), r * theta.sin())


def view_as_real(input: Any) -> Any:  # noqa: A002
    """A complex tensor as a real one with a last dimension of 2 (real and imaginary parts). A new tensor, not
    a view of the same memory as PyTorch's: writing into it does not change ``input``."""
    z = _tensor(input)
    if z.dtype.kind != "c":
        raise RuntimeError(f"view_as_real: expects a complex tensor, got {z.dtype}")
    return shape_ops.stack([z.real, z.imag], axis=-1)


def view_as_complex(input: Any) -> Any:  # noqa: A002
    """A real tensor whose last dimension is 2 as a complex one (a new tensor, not a view of the same memory)."""
    x = _tensor(input)
    if x.dtype.kind != "f" or x.ndim == 0 or x.shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: expects a floating tensor whose last dimension is 2, got {x.dtype} "
                           f"of shape {tuple(x.shape)}")
    return complex(x[..., 0], x[..., 1])


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each non-negative integer occurs in the 1-D ``input`` (summed ``weights`` when given); no
    gradient, as PyTorch's."""
    x, weighted = _together("bincount", input, weights) if weights is not None else (_values(input), None)
    counts = np.bincount(x, weighted, minlength)
    if weights is not None and np.result_type(weighted) == np.float32:  # PyTorch keeps float32 weights' dtype
        counts = counts.astype(np.float32)
    return Tensor._wrap(counts if weights is not None else counts.astype(np.int64))


def histc(input: Any, bins: int = 100, min: float = 0.0, max: float = 0.0) -> Tensor:  # noqa: A002
    """A histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0); values outside
    are ignored; in ``input``'s dtype, without gradient, as PyTorch's."""
    x = _values(input)
    lo, hi = (float(x.min()), float(x.max())) if min == max == 0 and x.size else (float(min), float(max))
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    inside = x[(x >= lo) & (x <= hi)]
    return Tensor._wrap(np.histogram(inside, bins=bins, range=(lo, hi))[0].astype(x.dtype))


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1, spacing: Any = None,
             dim: Any = None) -> Any:
    """``numpy.gradient``, or, for a Tensor given neither NumPy's spacings nor ``axis=``, PyTorch's
    ``torch.gradient(t, *, spacing=1, dim=None, edge_order=1)``: always a tuple, one Tensor per dimension (NumPy
    gives a 1-D array's alone), ``spacing`` a number, one per dimension, or coordinate Tensors."""
    from ..numeric import gradient as numpy_gradient

    if not isinstance(f, Tensor) or numpy_methods() or varargs or axis is not None:
        return numpy_gradient(f, *varargs, axis=axis if dim is None else dim, edge_order=edge_order)
    steps = () if spacing is None else tuple(spacing) if isinstance(spacing, (list, tuple)) else (spacing,)
    out = numpy_gradient(f, *steps, axis=dim, edge_order=edge_order)
    return tuple(out) if isinstance(out, (list, tuple)) else (out,)


def meshgrid(*tensors: Any, indexing: str | None = None, **numpy_keywords: Any) -> Any:
    """``numpy.meshgrid``, or, for Tensors without ``indexing=``, PyTorch's ``torch.meshgrid``: matrix indexing
    (``'ij'``, PyTorch's default) where NumPy's default is ``'xy'``; a list of Tensors as one argument too."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    torch_call = indexing is None and not numpy_methods() and any(isinstance(t, Tensor) for t in tensors)
    return numpy_meshgrid(*tensors, indexing="ij" if torch_call else indexing or "xy", **numpy_keywords)


def finfo(type: Any = None) -> np.finfo:  # noqa: A002
    """Machine limits of a floating dtype (the default dtype when none): ``eps``, ``max``, ``min``, ``tiny``..."""
    return np.finfo(get_default_dtype() if type is None else type)


def iinfo(type: Any) -> np.iinfo:  # noqa: A002
    """Machine limits of an integer dtype: ``max``, ``min``, ``bits``."""
    return np.iinfo(type)


FUNCTIONS: dict[str, Any] = dict(
    randperm=randperm, normal=normal, bernoulli=bernoulli, poisson=poisson, randint_like=randint_like,
    tril_indices=tril_indices, triu_indices=triu_indices, bucketize=bucketize, isin=isin,
    broadcast_tensors=broadcast_tensors, cartesian_prod=cartesian_prod, combinations=combinations, cdist=cdist,
    logspace=logspace, chain_matmul=chain_matmul, msort=msort, is_nonzero=is_nonzero, finfo=finfo, iinfo=iinfo,
    complex=complex, polar=polar, view_as_real=view_as_real, view_as_complex=view_as_complex, bincount=bincount,
    histc=histc, Size=tuple,  # torch.Size: chainrule's shapes are tuples
)
