"""Rules that select rather than multiply: the reverse and forward rules of piecewise ops (``relu``, ``clamp``,
``maximum``), whose local derivative is a 0/1 mask (0 / 0.5 / 1 at ties).

Example:
    >>> import numpy as np
    >>> from chainrule.ops.selection_rules import selected
    >>> with np.errstate(invalid="ignore"):
    ...     selected(np.array([np.inf, 2.0]), np.array([False, True]))
    array([0., 2.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.device import as_array


def selects(d: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a local derivative that is a selector (0/1 mask, or 0 / 0.5 / 1 at ties): it is applied with
    :func:`selected` rather than multiplied in."""
    d.selects = True  # type: ignore[attr-defined]
    return d


def selected(g: Any, weight: Any) -> Any:
    """``g * weight``, but exactly 0 where ``weight`` is 0, also where ``g`` is infinite or NaN.

    PyTorch's rules for piecewise ops (``relu``, ``clamp``, ``maximum``) select with ``where`` instead of
    multiplying by a 0/1 mask, so an infinite gradient from further on (``sqrt`` at 0 after ``clamp(min=0)``)
    gives 0 in the part cut off, not ``0 * inf = nan``; at second order too, as ``where`` is linear in ``g``.

    A finite ``g`` (an array) takes the product: NumPy's ``where`` with a random mask is ~12x slower than the
    product on a (256, 512) float32 gradient, and the result is the same but for the sign of a zero.
    """
    w = weight._data if hasattr(weight, "_requires_grad") else as_array(weight)  # a Tensor's values: a constant mask
    if g.__class__ is np.ndarray and np.isfinite(g).all():
        return g * w
    if w.dtype == bool:
        return np.where(w, g, 0.0)
    with np.errstate(invalid="ignore"):  # inf * 0 where the weight is 0: replaced by 0 at once
        return np.where(w != 0, g * w, 0.0)
