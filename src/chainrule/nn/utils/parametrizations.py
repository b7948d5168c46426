"""``chainrule.nn.utils.parametrizations``: PyTorch's ``weight_norm``, ``spectral_norm`` and ``orthogonal`` (its
own module, :mod:`.orthogonal`) as parametrizations
(:mod:`chainrule.nn.utils.parametrize`), with PyTorch's state dict names and values.

Example:
    >>> from chainrule import nn
    >>> from chainrule.nn.utils.parametrizations import spectral_norm, weight_norm
    >>> list(weight_norm(nn.Linear(3, 2, rng=0)).state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    >>> list(spectral_norm(nn.Linear(3, 2, rng=0)).state_dict())[1:]
    ['parametrizations.weight.original', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core import defaults
from ...core.state import no_grad
from ...tensor import Tensor
from ..conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..functional import normalize
from ..module import Module
from . import parametrize
from .orthogonal import orthogonal

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def norm_except_dim(v: Any, dim: int) -> Any:
    """PyTorch's ``norm_except_dim(v, 2, dim)``: the 2-norm over every axis but ``dim``, kept for broadcasting
    (``dim=-1``: the norm of the whole tensor, a scalar, as PyTorch's)."""
    if dim == -1:
        return v.norm()
    axes = tuple(a for a in range(v.ndim) if a != dim % v.ndim)
    return v.norm(2, dim=axes, keepdim=True) if axes else abs(v)


def weight_norm_of(v: Any, g: Any, dim: int) -> Any:
    """PyTorch's ``torch._weight_norm(v, g, dim)``: ``v * g / norm_except_dim(v, dim)``."""
    return v * (g / norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Any, weight_v: Any) -> Any:
        return weight_norm_of(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Any) -> tuple[Any, Any]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """PyTorch's ``parametrizations.weight_norm``: ``weight = g * v / ||v||`` (the norm over every axis but ``dim``;
    ``dim=None``: of the whole tensor), trained as ``parametrizations.weight.original0`` (g) and ``original1`` (v).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> from chainrule.nn.utils.parametrizations import weight_norm
        >>> layer = weight_norm(nn.Linear(3, 2, rng=0))
        >>> g = layer.parametrizations.weight.original0
        >>> g.shape, bool(np.allclose(np.linalg.norm(layer.weight.numpy(), axis=1), g.numpy().ravel()))
        ((2, 1), True)
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Any, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"spectral_norm: dim must be in [-{ndim}, {ndim - 1}] for a {ndim}-d weight, got {dim}")
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            w = self._matrix(weight)._data
            rng = defaults.generator()  # the default generator: nn.manual_seed makes it reproducible
            u = rng.standard_normal(w.shape[0]).astype(w.dtype)
            v = rng.standard_normal(w.shape[1]).astype(w.dtype)
            self.register_buffer("_u", u / max(np.linalg.norm(u), eps))
            self.register_buffer("_v", v / max(np.linalg.norm(v), eps))
            self._power_method(w, 15)

    def _matrix(self, weight: Any) -> Any:
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, w: np.ndarray, n: int) -> None:
        """In place on the buffers, outside the graph (as PyTorch's)."""
        bu, bv = self._u._data, self._v._data
        for _ in range(n):
            u = w @ bv
            np.copyto(bu, u / max(float(np.linalg.norm(u)), self.eps))
            v = w.conj().T @ bu
            np.copyto(bv, v / max(float(np.linalg.norm(v)), self.eps))
        self._u._bump_version(), self._v._bump_version()

    def forward(self, weight: Any) -> Any:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        if self.training:
            self._power_method(w._data, self.n_power_iterations)
        u, v = Tensor(self._u._data.copy()), Tensor(self._v._data.copy())
        sigma = (u.conj() * (w @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Any) -> Any:
        return value  # (PyTorch's: assigning a weight sets the original as is)


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """PyTorch's ``parametrizations.spectral_norm``: ``weight = W / sigma(W)``, ``sigma`` the largest singular value
    of ``W`` (viewed as a matrix with axis ``dim`` first; default 1 for ``ConvTranspose``, else 0) estimated by power
    iteration, whose vectors ``_u``, ``_v`` are buffers updated at each access in training mode only.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> from chainrule.nn.utils.parametrizations import spectral_norm
        >>> layer = spectral_norm(nn.Linear(4, 3, rng=0))
        >>> for _ in range(30):  # each access in training mode is one more power step (the start is random)
        ...     w = layer.weight
        >>> round(float(np.linalg.svd(layer.weight.numpy(), compute_uv=False)[0]), 2)
        1.0
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, (Tensor, np.ndarray)):
        raise ValueError(f"spectral_norm: module {type(module).__name__} has no parameter or buffer named '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    with no_grad():
        sn = _SpectralNorm(parametrize._tensor(weight), n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, sn)
    return module
