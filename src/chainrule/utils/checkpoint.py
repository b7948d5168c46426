"""PyTorch's ``torch.utils.checkpoint``: ``checkpoint(function, *args, use_reentrant=...)`` calls ``function`` at
once, keeping none of its intermediates for backward (they are recomputed then); ``checkpoint_sequential`` does
it segment by segment. Both are :func:`chainrule.checkpoint` (one implementation: ``use_reentrant`` either way
gives the same gradients, random draws inside are replayed).

Example:
    >>> import chainrule as cr
    >>> from chainrule.utils.checkpoint import checkpoint
    >>> x = cr.tensor([0.5, 1.0], requires_grad=True)
    >>> checkpoint(lambda t: (t.exp() * t).sum(), x, use_reentrant=False).backward()
    >>> [round(g, 4) for g in x.grad.tolist()]
    [2.4731, 5.4366]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..custom.checkpoint import checkpoint as _checkpoint

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] | None = None, determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, its intermediates recomputed in backward instead of kept (PyTorch's)."""
    if context_fn is not None:
        raise NotImplementedError("checkpoint: context_fn (contexts for the forward and the recomputation) is not "
                                  "supported by chainrule; leave it out")
    return _checkpoint(function)(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,  # noqa: A002
                          **kwargs: Any) -> Any:
    """Run ``functions`` (a list of modules, or an ``nn.Sequential``) on ``input`` in ``segments`` chunks, each
    but the last checkpointed (PyTorch's ``checkpoint_sequential``)."""
    layers = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if not 0 < segments <= max(len(layers), 1):
        raise ValueError(f"checkpoint_sequential: segments must be between 1 and the number of functions "
                         f"({len(layers)}), got {segments}")
    size = len(layers) // segments
    ends = [size * (k + 1) - 1 for k in range(segments - 1)] + [len(layers) - 1]
    start = 0
    for k, end in enumerate(ends):
        part = layers[start:end + 1]

        def run(x: Any, part: list[Any] = part) -> Any:
            for layer in part:
                x = layer(x)
            return x

        input = run(input) if k == segments - 1 else checkpoint(run, input)  # noqa: A001
        start = end + 1
    return input
