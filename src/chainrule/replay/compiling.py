"""``chainrule.compile``: PyTorch's ``torch.compile``, as the identity.

``torch.compile`` promises the results of the eager program, faster. chainrule's ``compile`` returns the model
or function itself (so ``model.parameters()``, ``state_dict()`` and training run as before): nothing is
compiled. For speed, trace a pure function of Tensors with :func:`chainrule.jit`, or a whole training step with
:func:`chainrule.jit_step`; they refuse what they cannot replay, where an automatic ``compile`` would have to
guess.

Example:
    >>> import chainrule as cr
    >>> model = cr.nn.Linear(2, 1)
    >>> cr.compile(model) is model
    True
    >>> @cr.compile(mode="max-autotune")
    ... def f(x):
    ...     return x * 2
    >>> f(cr.tensor([1.0]))
    Tensor([2.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile"]


def compile(model: Callable[..., Any] | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: Any = "inductor", mode: str | None = None, options: dict[str, Any] | None = None,
            disable: bool = False) -> Any:
    """``model`` itself (or, called with keywords only, a decorator that returns its function itself)."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise TypeError(f"compile: expected a model or a function, got {type(model).__name__}")
    return model
