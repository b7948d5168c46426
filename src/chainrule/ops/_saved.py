"""``Saved``: what a fused op's forward pass computed and its reverse rule reuses.

A fused primitive (attention, layer norm, GELU) computes intermediate arrays its reverse rule
needs (attention probabilities, normalised inputs). The public function passes a fresh
``Saved`` as a keyword argument; the forward function fills ``values``. The engine asks for
one argument's gradient at a time with the same output gradient ``g``: the first request
computes every wanted gradient at once (they share most of the work), the others pick theirs
up, and once all are handed out the saved arrays are dropped, so memory is freed as soon as
backward has used it. A second backward through the same graph recomputes what it needs.

This is the first-order path on NumPy values only; with ``create_graph`` the rules run on
Tensors and recompute everything with differentiable ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import state
from ..tensor import Tensor


class Saved:
    """Arrays saved by a forward pass, and the gradients one backward step computed together."""

    __slots__ = ("values", "wanted", "_g", "_grads")

    def __init__(self, *args: Any) -> None:
        # the arguments the engine will ask gradients for: Tensors that require grad (none under no_grad)
        self.wanted = (
            tuple(i for i, a in enumerate(args) if isinstance(a, Tensor) and a._requires_grad)
            if state.grad_enabled() else ()
        )
        self.values: dict[str, Any] = {}
        self._g: Any = None
        self._grads: dict[int, Any] = {}

    def __repr__(self) -> str:
        return f"Saved({sorted(self.values)})"

    def take(self, argnum: int, g: Any, compute: Callable[[tuple[int, ...]], dict[int, Any]]) -> Any:
        """The gradient for ``argnum``; ``compute(argnums)`` returns all of them at once on first request."""
        if self._g is not g or argnum not in self._grads:
            wanted = self.wanted if argnum in self.wanted else (argnum,)
            self._grads = compute(wanted)
            self._g = g
        out = self._grads.pop(argnum)
        if not self._grads:  # every gradient handed out: let the saved arrays go
            self._g = None
            self.values.clear()
        return out


def on_values(*xs: Any) -> bool:
    """True when every value is a plain array or number (the first-order fast path)."""
    return not any(isinstance(x, Tensor) for x in xs)
