"""``numpy.fft`` on Tensors: the discrete Fourier transforms, as products with the DFT matrix.

Each transform is linear, so it is written as a matrix product along one axis (``x @ F``, with
``F[j, k] = exp(-2 pi i j k / n)``, symmetric) and inherits ``matmul``'s derivatives: both modes,
every order, complex inputs, vmap. That costs O(n^2) per transformed line instead of the FFT's
O(n log n): fine for the short signals differentiated in practice, slow for long ones. ``irfft``
reads only the real part of the first entry (and of the middle one for even ``n``), as NumPy does:
it is a real-linear map of the real and imaginary parts, written with those. Gradients follow
chainrule's complex convention (JAX's), so they match ``jax.numpy.fft``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._define import on_device_of
from .declare import implements

_NORMS = (None, "backward", "ortho", "forward")


def _numpy_for_plain(np_fn: Any) -> Any:
    """Plain arrays and numbers go to NumPy's own FFT (exact and fast); Tensors and batched values to the rule.
    PyTorch's ``dim=`` (``torch.fft.fft(x, dim=0)``, ``fft2(x, dim=(0, 1))``) is NumPy's ``axis=``/``axes=``, in the
    same place among the positional arguments."""

    def wrap(fn: Any) -> Any:
        axis_name = "axis" if "axis" in inspect.signature(fn).parameters else "axes"

        @functools.wraps(fn)
        def dispatch(a: Any, *args: Any, **kwargs: Any) -> Any:
            if "dim" in kwargs:
                if axis_name in kwargs:
                    raise TypeError(f"fft.{fn.__name__}: got both dim= (PyTorch's name) and {axis_name}=; pass one")
                dim = kwargs.pop("dim")
                kwargs[axis_name] = (dim,) if axis_name == "axes" and isinstance(dim, (int, np.integer)) else dim
            if type(a) is np.ndarray or isinstance(a, (int, float, complex, np.generic)):
                return np_fn(a, *args, **kwargs)
            return fn(a, *args, **kwargs)

        return dispatch

    return wrap


def _scale(n: int, norm: str | None, inverse: bool, name: str) -> float:
    if norm not in _NORMS:
        raise ValueError(f"fft.{name}: norm must be one of {_NORMS}, got {norm!r}")
    if norm == "ortho":
        return 1.0 / np.sqrt(n)
    if (norm == "forward") != inverse:  # the 1/n goes with the inverse by default, with the forward for "forward"
        return 1.0 / n
    return 1.0


@functools.lru_cache(maxsize=64)
def _dft(n: int, inverse: bool) -> np.ndarray:
    k = np.arange(n)
    return np.exp((2j if inverse else -2j) * np.pi * (np.outer(k, k) % n) / n)


def _length(x: Any, n: int | None, axis: int, name: str) -> int:
    shape = np.shape(x)
    if not shape:
        raise ValueError(f"fft.{name}: the input must have at least one axis, got a 0-d value")
    size = shape[axis]
    if n is None:
        n = size
    if int(n) < 1:
        raise ValueError(f"fft.{name}: invalid number of data points ({n}) specified")
    return int(n)


def _resized(x: Any, n: int, axis: int) -> Any:
    """``x`` cropped or padded with zeros to length ``n`` along ``axis`` (NumPy's ``n=``)."""
    size = np.shape(x)[axis]
    if n == size:
        return x
    if n < size:
        return x[(slice(None),) * (axis % np.ndim(x)) + (slice(0, n),)]
    pad = [(0, 0)] * np.ndim(x)
    pad[axis % np.ndim(x)] = (0, n - size)
    return np.pad(x, pad)


def _along(x: Any, axis: int, matrix: np.ndarray) -> Any:
    """``x``'s lines along ``axis`` times ``matrix`` (a new last axis moved back to ``axis``; the matrix made on
    the host goes where ``x`` is)."""
    return np.moveaxis(np.moveaxis(x, axis, -1) @ on_device_of(x, matrix), -1, axis)


def _c2c(x: Any, n: int | None, axis: int, norm: str | None, inverse: bool, name: str) -> Any:
    n = _length(x, n, axis, name)
    x = _resized(x, n, axis)
    return _along(x, axis, _dft(n, inverse) * _scale(n, norm, inverse, name))


def _real_input(x: Any, name: str) -> Any:
    """NumPy, JAX and PyTorch refuse a complex input to the real transforms; dropping its imaginary part would
    be a silent wrong answer (and a zero gradient for it)."""
    if np.iscomplexobj(x):
        dtype = getattr(x, "dtype", None) or np.result_type(x)
        raise TypeError(f"fft.{name}: the input must be real, got dtype {dtype}. Use fft.fft for a "
                        f"complex signal, or pass np.real(x) to transform its real part")
    return x


@implements(np.fft.fft, namespaces=("fft",))
@_numpy_for_plain(np.fft.fft)
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """One-dimensional discrete Fourier transform (``numpy.fft.fft``), differentiable.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> g = cr.grad(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(np.array([1.0, 2.0, 0.0]))
        >>> np.round(g, 12) + 0.0  # Parseval: 2 n x
        array([ 6., 12.,  0.])
    """
    _no_out("fft", out)
    return _c2c(a, n, axis, norm, False, "fft")


@implements(np.fft.ifft, namespaces=("fft",))
@_numpy_for_plain(np.fft.ifft)
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """One-dimensional inverse discrete Fourier transform (``numpy.fft.ifft``), differentiable."""
    _no_out("ifft", out)
    return _c2c(a, n, axis, norm, True, "ifft")


@implements(np.fft.rfft, namespaces=("fft",))
@_numpy_for_plain(np.fft.rfft)
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """Discrete Fourier transform of a real signal, the ``n // 2 + 1`` non-negative frequencies."""
    _no_out("rfft", out)
    a = _real_input(a, "rfft")
    n = _length(a, n, axis, "rfft")
    a = _resized(a, n, axis)
    half = _dft(n, False)[:, : n // 2 + 1] * _scale(n, norm, False, "rfft")
    return _along(a, axis, half)


@implements(np.fft.irfft, namespaces=("fft",))
@_numpy_for_plain(np.fft.irfft)
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """Inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``) from ``m`` frequencies."""
    _no_out("irfft", out)
    m = np.shape(a)[axis] if np.ndim(a) else 0
    n = _length(a, 2 * (m - 1) if n is None else n, axis, "irfft")
    a = _resized(a, n // 2 + 1, axis)
    k = np.arange(n // 2 + 1)
    weight = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0) * _scale(n, norm, True, "irfft")
    angle = 2 * np.pi * (np.outer(k, np.arange(n)) % n) / n
    cos, sin = weight[:, None] * np.cos(angle), weight[:, None] * np.sin(angle)
    if not np.iscomplexobj(a):
        return _along(a, axis, cos)
    return _along(np.real(a), axis, cos) - _along(np.imag(a), axis, sin)


def _axes(a: Any, s: Sequence[int] | None, axes: Sequence[int] | None, name: str) -> tuple[list[Any], list[int]]:
    nd = np.ndim(a)
    s, axes = ((v,) if isinstance(v, (int, np.integer)) else v for v in (s, axes))  # PyTorch's fftn(x, 3, dim=0)
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    axes = [int(ax) for ax in axes]
    sizes = [None] * len(axes) if s is None else [int(v) for v in s]
    if len(sizes) != len(axes):
        raise ValueError(f"fft.{name}: s and axes must have the same length, got {len(sizes)} and {len(axes)}")
    return sizes, axes


def _c2c_n(a: Any, s: Any, axes: Any, norm: str | None, inverse: bool, name: str) -> Any:
    sizes, axes = _axes(a, s, axes, name)
    for n, ax in zip(sizes, axes):
        a = _c2c(a, n, ax, norm, inverse, name)
    return a


@implements(np.fft.fftn, namespaces=("fft",))
@_numpy_for_plain(np.fft.fftn)
def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None,
         out: Any = None) -> Any:
    """N-dimensional discrete Fourier transform (one-dimensional transforms along ``axes``)."""
    _no_out("fftn", out)
    return _c2c_n(a, s, axes, norm, False, "fftn")


@implements(np.fft.ifftn, namespaces=("fft",))
@_numpy_for_plain(np.fft.ifftn)
def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None,
          out: Any = None) -> Any:
    """N-dimensional inverse discrete Fourier transform."""
    _no_out("ifftn", out)
    return _c2c_n(a, s, axes, norm, True, "ifftn")


@implements(np.fft.fft2, namespaces=("fft",))
@_numpy_for_plain(np.fft.fft2)
def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None,
         out: Any = None) -> Any:
    """Two-dimensional discrete Fourier transform (over the last two axes by default)."""
    _no_out("fft2", out)
    return _c2c_n(a, s, axes, norm, False, "fft2")


@implements(np.fft.ifft2, namespaces=("fft",))
@_numpy_for_plain(np.fft.ifft2)
def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None,
          out: Any = None) -> Any:
    """Two-dimensional inverse discrete Fourier transform."""
    _no_out("ifft2", out)
    return _c2c_n(a, s, axes, norm, True, "ifft2")


@implements(np.fft.rfftn, namespaces=("fft",))
@_numpy_for_plain(np.fft.rfftn)
def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None,
          out: Any = None) -> Any:
    """N-dimensional transform of a real input: ``rfft`` along the last of ``axes``, ``fft`` along the others."""
    _no_out("rfftn", out)
    a = _real_input(a, "rfftn")
    sizes, axes = _axes(a, s, axes, "rfftn")
    a = rfft(a, sizes[-1], axes[-1], norm)
    for n, ax in zip(sizes[:-1], axes[:-1]):
        a = _c2c(a, n, ax, norm, False, "rfftn")
    return a


@implements(np.fft.irfftn, namespaces=("fft",))
@_numpy_for_plain(np.fft.irfftn)
def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None,
           out: Any = None) -> Any:
    """Inverse of ``rfftn``: ``ifft`` along all but the last of ``axes``, then ``irfft`` along it."""
    _no_out("irfftn", out)
    sizes, axes = _axes(a, s, axes, "irfftn")
    for n, ax in zip(sizes[:-1], axes[:-1]):
        a = _c2c(a, n, ax, norm, True, "irfftn")
    return irfft(a, sizes[-1], axes[-1], norm)


@implements(np.fft.rfft2, namespaces=("fft",))
@_numpy_for_plain(np.fft.rfft2)
def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None,
          out: Any = None) -> Any:
    """Two-dimensional transform of a real input."""
    _no_out("rfft2", out)
    return rfftn(a, s, axes, norm)


@implements(np.fft.irfft2, namespaces=("fft",))
@_numpy_for_plain(np.fft.irfft2)
def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None,
           out: Any = None) -> Any:
    """Inverse of ``rfft2``."""
    _no_out("irfft2", out)
    return irfftn(a, s, axes, norm)


def _shifted(x: Any, axes: Any, sign: int) -> Any:
    if axes is None:
        axes = tuple(range(np.ndim(x)))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    shape = np.shape(x)
    return np.roll(x, tuple(sign * (shape[ax] // 2) for ax in axes), axis=tuple(axes))


@implements(np.fft.fftshift, namespaces=("fft",))
@_numpy_for_plain(np.fft.fftshift)
def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the middle (a roll)."""
    return _shifted(x, axes, 1)


@implements(np.fft.ifftshift, namespaces=("fft",))
@_numpy_for_plain(np.fft.ifftshift)
def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of ``fftshift``."""
    return _shifted(x, axes, -1)


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swapped(norm: str | None, name: str) -> str:
    if norm not in _SWAPPED:
        raise ValueError(f"fft.{name}: norm must be None, 'backward', 'ortho' or 'forward', got {norm!r}")
    return _SWAPPED[norm]


@implements(np.fft.hfft, namespaces=("fft",))
@_numpy_for_plain(np.fft.hfft)
def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """The real spectrum of a signal with Hermitian symmetry, given its first half (``numpy.fft.hfft``):
    ``irfft(conj(a), n)`` with the normalisation directions swapped, as NumPy computes it."""
    _no_out("hfft", out)
    return irfft(np.conj(a) if np.iscomplexobj(a) else a, n, axis, _swapped(norm, "hfft"))


@implements(np.fft.ihfft, namespaces=("fft",))
@_numpy_for_plain(np.fft.ihfft)
def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """The inverse of ``hfft`` for a real signal: ``conj(rfft(a, n))`` with the normalisation directions swapped."""
    _no_out("ihfft", out)
    return np.conj(rfft(a, n, axis, _swapped(norm, "ihfft")))


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"fft.{name}: the 'out' argument is not supported on Tensors (results are new tensors)")
