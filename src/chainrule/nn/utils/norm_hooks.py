"""PyTorch's older, hook-based ``nn.utils.weight_norm`` / ``remove_weight_norm`` and ``nn.utils.spectral_norm`` /
``remove_spectral_norm``: the weight is recomputed by a forward pre-hook from parameters named ``weight_g`` and
``weight_v`` (or ``weight_orig`` with buffers ``weight_u``, ``weight_v``), PyTorch's state dict names. PyTorch
deprecates them for :mod:`chainrule.nn.utils.parametrizations`; they are here for programs and checkpoints that
use them.

Example:
    >>> from chainrule import nn
    >>> list(nn.utils.weight_norm(nn.Linear(3, 2, rng=0)).state_dict())
    ['bias', 'weight_g', 'weight_v']
    >>> list(nn.utils.spectral_norm(nn.Linear(3, 2, rng=0)).state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core import defaults
from ...core.state import no_grad
from ...tensor import Tensor
from ..conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Module
from ..parameter import Parameter
from .parametrizations import norm_except_dim, weight_norm_of

__all__ = ["remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm"]


def _find(module: Module, kind: type, name: str) -> tuple[dict[int, Any], int, Any] | None:
    table = module.__dict__.get("_call_hooks", {}).get("pre", {})
    for key, (hook, _) in table.items():
        if isinstance(hook, kind) and hook.name == name:
            return table, key, hook
    return None


def _detached(module: Module, kind: type, name: str, what: str) -> Any:
    """The hook of ``what`` on ``name``, taken off the module (or a ValueError naming what is missing)."""
    found = _find(module, kind, name)
    if found is None:
        raise ValueError(f"remove_{what}: {what} of '{name}' not found in {type(module).__name__}")
    table, key, fn = found
    del table[key]
    return fn


def _replaced(module: Module, name: str, compute: Any, attributes: tuple[str, ...]) -> Module:
    """``name`` as one parameter again, holding ``compute(module)``, in place of the hook's ``attributes``."""
    with no_grad():
        weight = compute(module)
    for attr in attributes:
        delattr(module, attr)
    module.register_parameter(name, Parameter(weight._data.copy()))
    return module


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm`: sets ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module) -> Any:
        return weight_norm_of(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """PyTorch's (deprecated) ``nn.utils.weight_norm``: ``weight = g * v / ||v||``, the norm over every axis but
    ``dim`` (``None``: the whole tensor), trained as parameters ``weight_g`` and ``weight_v``; a forward pre-hook
    recomputes ``module.weight``. Prefer :func:`chainrule.nn.utils.parametrizations.weight_norm`.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> layer = nn.Linear(3, 2, rng=0)
        >>> w = layer.weight.numpy().copy()
        >>> layer = nn.utils.weight_norm(layer)
        >>> layer.weight_g.shape, bool(np.allclose(layer.weight.numpy(), w))
        ((2, 1), True)
    """
    if _find(module, WeightNorm, name) is not None:
        raise RuntimeError(f"weight_norm: cannot register two weight_norm hooks on the same parameter {name}")
    dim = -1 if dim is None else dim
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter named '{name}'")
    fn = WeightNorm(name, dim)
    delattr(module, name)
    with no_grad():
        g = norm_except_dim(weight, dim)
    module.register_parameter(name + "_g", Parameter(g._data.copy()))
    module.register_parameter(name + "_v", Parameter(weight._data.copy()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``weight`` becomes one parameter again, holding the current ``g * v / ||v||``."""
    fn = _detached(module, WeightNorm, name, "weight_norm")
    return _replaced(module, name, fn.compute_weight, (name, name + "_g", name + "_v"))


class SpectralNorm:
    """The forward pre-hook of :func:`spectral_norm`: sets ``module.<name> = <name>_orig / sigma``."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def matrix(self, weight: Any) -> Any:
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Any:
        weight = getattr(module, self.name + "_orig")
        bu, bv = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        u, v = bu._data, bv._data
        w = self.matrix(weight)
        if do_power_iteration:  # in place on the buffers, v first (as PyTorch's hook)
            m = w._data
            for _ in range(self.n_power_iterations):
                nv = m.T @ u
                np.copyto(v, nv / max(float(np.linalg.norm(nv)), self.eps))
                nu = m @ v
                np.copyto(u, nu / max(float(np.linalg.norm(nu)), self.eps))
            bu._bump_version(), bv._bump_version()
        sigma = (Tensor(u.copy()) * (w @ Tensor(v.copy()))).sum()
        return weight / sigma

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """PyTorch's (deprecated) ``nn.utils.spectral_norm``: ``weight = weight_orig / sigma``, ``sigma`` the largest
    singular value estimated by power iteration on buffers ``weight_u``, ``weight_v`` (updated by each call in
    training mode). Prefer :func:`chainrule.nn.utils.parametrizations.spectral_norm`.

    Example:
        >>> from chainrule import nn
        >>> layer = nn.utils.spectral_norm(nn.Linear(3, 2, rng=0))
        >>> layer.weight_u.shape, layer.weight_v.shape, [n for n, _ in layer.named_parameters()]
        ((2,), (3,), ['bias', 'weight_orig'])
    """
    if _find(module, SpectralNorm, name) is not None:
        raise RuntimeError(f"spectral_norm: cannot register two spectral_norm hooks on the same parameter {name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"spectral_norm: module {type(module).__name__} has no parameter named '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    h, w = fn.matrix(weight).shape
    rng = defaults.generator()  # the default generator: nn.manual_seed makes it reproducible
    u = rng.standard_normal(h).astype(weight.dtype)
    v = rng.standard_normal(w).astype(weight.dtype)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, Tensor._wrap(weight._data))
    module.register_buffer(name + "_u", u / max(float(np.linalg.norm(u)), eps))
    module.register_buffer(name + "_v", v / max(float(np.linalg.norm(v)), eps))
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``weight`` becomes one parameter, ``weight_orig / sigma`` (no power step)."""
    fn = _detached(module, SpectralNorm, name, "spectral_norm")
    return _replaced(module, name, lambda m: fn.compute_weight(m, do_power_iteration=False),
                     (name, name + "_u", name + "_v", name + "_orig"))
