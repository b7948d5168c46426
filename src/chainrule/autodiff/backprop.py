"""Reverse mode for Tensors: ``backward`` into ``.grad``, and ``grad`` that returns gradients."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.device import as_array
from ..core.hooks import SWEEP_END, run_queued_callbacks
from ..tensor import Tensor, backward, key, seed, sweep_from

__all__ = ["backward", "grad"]


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    retain_graph: bool | None = None,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is untouched).

    An input the outputs do not depend on gets zeros by default; as in PyTorch, ``allow_unused=True``
    gives ``None`` for it instead (zeros again with ``materialize_grads=True``) and ``allow_unused=False``
    raises.
    With ``create_graph=True`` the results can be differentiated again. What the graph kept is
    freed as it is used unless ``retain_graph=True`` (default: ``create_graph``, as PyTorch).

    Example:
        >>> from chainrule import Tensor
        >>> from chainrule.autodiff.backprop import grad
        >>> x = Tensor(3.0, requires_grad=True)
        >>> (g,) = grad(x * x, x, create_graph=True)
        >>> float(g), float(grad(g, x)[0])
        (6.0, 2.0)
    """
    single = isinstance(outputs, Tensor)
    outs = [outputs] if single else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None:
        gouts: list[Any] = [None] * len(outs)
    else:
        gouts = [grad_outputs] if single else list(grad_outputs)
    live = [(o, g) for o, g in zip(outs, gouts) if o._requires_grad]
    found: dict[Any, Any] = {}
    for o, g in live:
        if g is None and o._data.size != 1 and o._data.dtype.kind != "c":
            raise RuntimeError(
                f"grad: an output has shape {o.shape}, not one element; pass grad_outputs= (one array of its shape "
                "per output: d final / d output), or reduce it first, e.g. grad(out.sum(), inputs)"
            )
    if live:
        seeds = [seed(o, g, create_graph) for o, g in live]
        wanted = {key(t) for t in ins}
        found = dict(sweep_from([o for o, _ in live], seeds, create_graph, retain_graph, wanted))
        if SWEEP_END:  # callbacks a hook or custom backward queued (run at the end of a grad() too, as PyTorch)
            run_queued_callbacks()
    results: list[Tensor | None] = []
    for t in ins:
        g = found.get(key(t))
        if g is not None and t._index is not None:
            g = g[t._index]
        if g is None:
            if allow_unused is False:
                raise RuntimeError(f"grad: an input of shape {t.shape} is not used to compute the outputs. "
                                   "Set allow_unused=True to get None for it (or leave allow_unused unset for zeros)")
            if allow_unused and not materialize_grads:
                results.append(None)
                continue
            g = np.zeros_like(t._data)
        results.append(g if isinstance(g, Tensor) else Tensor._wrap(as_array(g)))
    return tuple(results)
