"""``chainrule.nn.utils``: where PyTorch keeps ``clip_grad_norm_``, ``clip_grad_value_`` and
``parameters_to_vector`` / ``vector_to_parameters`` (the clipping lives in ``chainrule.optim``), and ``rnn``: padded
and packed sequences (:mod:`chainrule.nn.utils.rnn`), ``parametrize`` and ``parametrizations`` (``weight_norm``,
``spectral_norm``), and the older hook-based ``weight_norm`` / ``spectral_norm`` (:mod:`.norm_hooks`).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> p = nn.Parameter(np.array([3.0, 4.0]), dtype=np.float64)
    >>> (p * p).sum().backward()
    >>> round(float(nn.utils.clip_grad_norm_([p], 1.0)), 6), nn.utils.parameters_to_vector([p, p]).shape
    (10.0, (4,))
"""

from __future__ import annotations

from typing import Any

from ...core.device import as_array
from ...core.state import no_grad
from ...ops.shape import concatenate, reshape
from ...tensor import Tensor
from . import parametrizations, parametrize, rnn
from .norm_hooks import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters", "rnn",
           "parametrize", "parametrizations", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm"]


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Any:
    """``chainrule.optim.clip_grad_norm_``: scale the gradients so their total norm is at most ``max_norm``."""
    from ...optim.clip import clip_grad_norm_ as clip  # (optim imports nn: imported when called)

    return clip(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Any, clip_value: float) -> None:
    """``chainrule.optim.clip_grad_value_``: clip each gradient entry to ``[-clip_value, clip_value]``."""
    from ...optim.clip import clip_grad_value_ as clip

    clip(parameters, clip_value)


def parameters_to_vector(parameters: Any) -> Any:
    """The parameters flattened and joined into one vector (in the graph, as PyTorch's)."""
    return concatenate([reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec: Any, parameters: Any) -> None:
    """Copy consecutive slices of ``vec`` into the parameters, in place (outside the graph, as PyTorch's)."""
    values = as_array(vec._data if isinstance(vec, Tensor) else vec)
    start = 0
    with no_grad():
        for p in parameters:
            n = p.size
            if start + n > values.size:
                raise ValueError(f"vector_to_parameters: the vector has {values.size} entries, fewer than the "
                                 "parameters need")
            p._data[...] = values[start:start + n].reshape(p.shape)
            p._bump_version()
            start += n
    if start != values.size:
        raise ValueError(f"vector_to_parameters: the vector has {values.size} entries, the parameters {start}")
