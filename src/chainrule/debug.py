"""JAX's ``jax.debug``: ``print`` and ``callback``, which run as they read here (chainrule's ``jit`` traces by
running the function, and replays do not print: inside ``disable_jit()`` every call prints).

Example:
    >>> import numpy as np
    >>> from chainrule import debug
    >>> debug.print("x = {x}, total {}", np.float64(3.0), x=np.arange(2))
    x = [0 1], total 3.0
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

__all__ = ["print", "callback"]


def _value(v: Any) -> Any:
    return v.detach().numpy() if hasattr(v, "detach") and hasattr(v, "numpy") else v


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001  (JAX's name)
    """``fmt.format(*args, **kwargs)`` printed, Tensors shown by their values."""
    builtins.print(fmt.format(*map(_value, args), **{k: _value(v) for k, v in kwargs.items()}))


def callback(fn: Callable[..., Any], *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """``fn(*args, **kwargs)`` for its effect (its result is dropped, as JAX's)."""
    fn(*args, **kwargs)
