"""More of ``torch.nn.functional``'s activations: ``softmin``, ``softshrink``, ``hardshrink``, ``tanhshrink``,
``prelu``, ``rrelu``, ``gumbel_softmax`` and PyTorch's in-place spellings ``relu_``, ``elu_``, ``leaky_relu_``,
``hardtanh_``, ``selu_``, ``celu_``, ``threshold_``, ``rrelu_``.

Each is built from chainrule's differentiable ops (every derivative, forward mode, vmap and jit follow). The
branch at a kink is PyTorch's: ``softshrink``'s and ``hardshrink``'s derivative is 0 at ``±lambd``, ``prelu``'s
is ``weight`` at 0. The in-place ones write over a Tensor only where PyTorch allows it: under ``no_grad`` or
on a Tensor outside the graph.

Example:
    >>> import numpy as np
    >>> import chainrule.nn.functional as F
    >>> F.softshrink(np.array([-2.0, 0.2, 1.5]), 0.5)
    array([-1.5,  0. ,  1. ])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...core.device import as_array, xp_of
from ...core.errors import ChainruleWarning
from ...ops import elementwise as ew
from ...ops import reductions
from ...ops._define import raw, xp_where
from ...tensor import Tensor
from .draws import drawn_like
from .extras import _floating, _values, celu, elu, hardtanh, leaky_relu, selu, threshold
from .writes import written_over

__all__ = ["softmin", "softshrink", "hardshrink", "tanhshrink", "prelu", "rrelu", "gumbel_softmax",
           "relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "threshold_", "rrelu_"]


def _zero(v: Any) -> Any:
    return np.zeros((), dtype=v.dtype)


def _zero_or_nan(v: Any) -> Any:
    """0, or NaN where ``v`` is NaN: PyTorch's shrinks keep a NaN (with gradient 0), a constant here."""
    nan = v != v
    return xp_of(v).where(nan, v, 0) if nan.any() else _zero(v)


def softmin(input: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Any:  # noqa: A002
    """``softmax(-input)`` along ``dim`` (PyTorch's implicit choice, with its warning, when ``dim`` is None).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.softmin(np.array([0.0, 0.0]), dim=0)
        array([0.5, 0.5])
    """
    x = _floating("softmin", input)
    if dtype is not None:
        x = x.astype(dtype) if isinstance(x, Tensor) else as_array(x, dtype=dtype)
    if dim is None:
        nd = np.ndim(raw(x))
        dim = -1 if nd <= 2 else (0 if nd == 3 else 1)
        if nd > 2:
            warnings.warn(f"softmin: implicit dimension choice for softmin has been deprecated (PyTorch's rule picks "
                          f"dim {dim} for a {nd}-d input); pass dim=", ChainruleWarning, stacklevel=_stacklevel)
    return reductions.softmax(ew.negative(x), dim)


def _check_lambd(name: str, lambd: float) -> None:
    if lambd < 0:
        raise ValueError(f"{name}: lambda must be greater or equal to 0, got lambd={lambd}")


def softshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    _check_lambd("softshrink", lambd)
    x = _floating("softshrink", input)
    v = _values(x)
    return ew.where(v > lambd, ew.subtract(x, lambd), ew.where(v < -lambd, ew.add(x, lambd), _zero_or_nan(v)))


def hardshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0."""
    x = _floating("hardshrink", input)
    v = _values(x)
    return ew.where((v > lambd) | (v < -lambd), x, _zero_or_nan(v))


def tanhshrink(input: Any) -> Any:  # noqa: A002
    """``x - tanh(x)``."""
    x = _floating("tanhshrink", input)
    return ew.subtract(x, ew.tanh(x))


def prelu(input: Any, weight: Any) -> Any:  # noqa: A002
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` has 1 entry or one per channel (dim 1; a 0-d or 1-d
    input is one channel), as PyTorch's.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.prelu(np.array([[-1.0, 2.0]]), np.array([0.25, 0.5]))
        array([[-0.25,  2.  ]])
    """
    x = _floating("prelu", input)
    shape, wshape = np.shape(raw(x)), np.shape(raw(weight))
    n = int(np.prod(wshape))
    if len(wshape) > 1:
        raise ValueError(f"prelu: weight must be 0-d or 1-d, got shape {wshape}")
    if n != 1:
        channels = shape[1] if len(shape) >= 2 else 1  # (a 1-d input is one channel, as PyTorch has it)
        if n != channels:
            raise ValueError(f"prelu: mismatch of parameter numbers and input channel size: found {n} parameters "
                             f"and channel size {channels} (input shape {shape}); pass 1 weight or one per channel")
        if len(shape) >= 2:
            weight = weight.reshape((n,) + (1,) * (len(shape) - 2))
    else:
        weight = weight.reshape(())  # (one slope: the output has the input's shape, a 0-d input's too)
    v = _values(x)
    return ew.where(v > 0, x, ew.multiply(weight, x))


def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False, rng: Any = None) -> Any:
    """Randomized leaky ReLU: in training a slope drawn from U(lower, upper) per entry below 0; otherwise the
    slope ``(lower + upper) / 2`` (``rng``: a seed or Generator for the draws)."""
    if not 0 <= lower <= upper:
        raise ValueError(f"rrelu: needs 0 <= lower <= upper, got lower={lower}, upper={upper}")
    if inplace:
        return rrelu_(input, lower, upper, training, rng=rng)
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    x = _floating("rrelu", input)
    v = _values(x)
    slopes = drawn_like(x, rng, np.shape(v), v.dtype, _slope, lower, upper)  # (a replay draws new ones)
    return ew.where(v >= 0, x, ew.multiply(x, slopes))


def gumbel_softmax(logits: Any, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1,
                   rng: Any = None) -> Any:
    """Samples of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with Gumbel noise ``g``;
    ``hard=True`` returns the one-hot of the largest entry, with the soft sample's gradient (straight through).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y = F.gumbel_softmax(np.zeros((2, 3)), hard=True, rng=0)
        >>> y.sum(axis=-1).tolist()
        [1.0, 1.0]
    """
    x = _floating("gumbel_softmax", logits)
    v = _values(x)
    gumbels = drawn_like(x, rng, np.shape(v), v.dtype, _gumbel, method="standard_exponential")  # (replays redraw)
    soft = reductions.softmax(ew.divide(ew.add(x, gumbels), tau), dim)
    if not hard:
        return soft
    s = _values(soft)
    ax = dim % s.ndim
    plane = [1] * s.ndim
    plane[ax] = s.shape[ax]
    xp = xp_where(soft)
    one_hot = (xp.arange(s.shape[ax]).reshape(plane) == xp.expand_dims(s.argmax(axis=ax), ax)).astype(s.dtype)
    return ew.add(ew.subtract(soft, soft.detach() if isinstance(soft, Tensor) else s), one_hot)


def _slope(u: Any, lower: float, upper: float) -> Any:
    return lower + (upper - lower) * u


def _gumbel(e: Any) -> Any:
    return -np.log(e)  # of an Exp(1) draw




relu_ = written_over("relu_", lambda x: x.relu() if isinstance(x, Tensor) else np.maximum(x, _zero(x)))
elu_ = written_over("elu_", elu)
leaky_relu_ = written_over("leaky_relu_", leaky_relu)
hardtanh_ = written_over("hardtanh_", hardtanh)
selu_ = written_over("selu_", selu)
celu_ = written_over("celu_", celu)
threshold_ = written_over("threshold_", threshold)
rrelu_ = written_over("rrelu_", lambda x, lower=1.0 / 8, upper=1.0 / 3, training=False, rng=None: rrelu(
    x, lower, upper, training, rng=rng))
