"""``check_grads``: JAX's ``jax.test_util.check_grads`` and HIPS autograd's ``autograd.test_util.check_grads``.

Both check a function's derivatives against finite differences, in forward and reverse mode, to some order; here
both are :func:`chainrule.gradcheck`, which raises :class:`~chainrule.transforms.checking.GradcheckError` (an
``AssertionError``, as theirs raise) naming the argument, mode and order that disagree.

Example:
    >>> import numpy as np
    >>> from chainrule.test_util import check_grads
    >>> check_grads(np.sin, (np.array([0.3, 1.2]),), order=2)           # JAX's form: returns None
    >>> check_grads(np.tanh, modes=["rev"], order=2)(np.array([0.5]))  # HIPS autograd's: a checker of args
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .transforms.checking import gradcheck

__all__ = ["check_grads"]

_MODES = {"fwd": "fwd", "rev": "rev", "forward": "fwd", "reverse": "rev"}


def check_grads(f: Callable[..., Any], args: Sequence[Any] | None = None, order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None, rtol: float | None = None,
                eps: float | None = None) -> Any:
    """Check ``f``'s derivatives at ``args`` to ``order`` in ``modes`` (``"fwd"``, ``"rev"``); None, or an
    ``AssertionError`` saying what disagrees. Without ``args`` (HIPS autograd's form), a function that checks at
    the arguments it is given."""
    if isinstance(modes, str):
        modes = (modes,)
    unknown = [m for m in modes if m not in _MODES]
    if unknown:
        raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got {list(modes)!r}")
    options = {k: v for k, v in (("atol", atol), ("rtol", rtol), ("eps", eps)) if v is not None}
    chosen = tuple(dict.fromkeys(_MODES[m] for m in modes))

    def check(*given: Any) -> None:
        gradcheck(f, *given, modes=chosen, order=order, **options)

    if args is None:
        return check
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"check_grads: args must be a tuple of f's arguments, got {type(args).__name__} "
                        "(write check_grads(f, (x,), order))")
    check(*args)
    return None
