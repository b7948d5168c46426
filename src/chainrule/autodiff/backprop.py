"""Reverse mode for Tensors: ``backward`` into ``.grad``, and ``grad`` that returns gradients."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import engine
from ..tensor import Tensor


def _seed(root: Tensor, gradient: Any, create_graph: bool) -> Any:
    if not root._rg:
        raise RuntimeError(
            f"backward: this tensor (shape {root.shape}) has no graph: it does not require grad and was not "
            "computed from anything that does; create inputs with requires_grad=True"
        )
    if gradient is None:
        if root.data.size != 1:
            raise RuntimeError(
                f"backward: the output has shape {root.shape}, not one element; pass gradient= an array of "
                f"shape {root.shape} (d final / d output), or reduce it first, e.g. out.sum().backward()"
            )
        seed = np.ones_like(root.data)
    else:
        raw = gradient.data if isinstance(gradient, Tensor) else np.asarray(gradient, dtype=root.data.dtype)
        if raw.shape != root.shape:
            raise ValueError(f"backward: gradient has shape {raw.shape} but the output has shape {root.shape}")
        if create_graph and isinstance(gradient, Tensor):
            return gradient
        seed = raw.astype(root.data.dtype, copy=False)
    return Tensor._wrap(seed) if create_graph else seed


def _add(a: Any, b: Any) -> Any:
    return a + b


def backward(roots: Sequence[Tensor], gradients: Sequence[Any], create_graph: bool = False) -> None:
    """Accumulate gradients of ``roots`` into ``.grad`` of every leaf (and retained node)."""
    seeds = [_seed(r, g, create_graph) for r, g in zip(roots, gradients)]

    def sink(node: Tensor, g: Any) -> None:
        if node._parents and not node._retain:
            return
        if not create_graph and not isinstance(g, Tensor):
            g = Tensor._wrap(g)
        elif create_graph and not isinstance(g, Tensor):
            g = Tensor._wrap(np.asarray(g))
        node.grad = g if node.grad is None else node.grad + g

    previous = engine.set_grad_enabled(create_graph)
    try:
        engine.backward_sweep(list(roots), seeds, create_graph, sink, _add)
    finally:
        engine.set_grad_enabled(previous)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    create_graph: bool = False,
    allow_unused: bool = True,
) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is untouched).

    Missing paths give zeros (or None when ``allow_unused`` is False... and raises).
    With ``create_graph=True`` the results are Tensors that can be differentiated again.

    Example:
        >>> from chainrule import Tensor
        >>> from chainrule.autodiff.backprop import grad
        >>> x = Tensor(3.0, requires_grad=True)
        >>> (g,) = grad(x * x, x, create_graph=True)
        >>> float(g), float(grad(g, x)[0])
        (6.0, 2.0)
    """
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    gouts = [None] * len(outs) if grad_outputs is None else (
        [grad_outputs] if isinstance(outs, Tensor) or len(outs) == 1 and not isinstance(grad_outputs, (list, tuple)) else list(grad_outputs)
    )
    live = [(o, g) for o, g in zip(outs, gouts) if o._rg]
    wanted = {id(t): i for i, t in enumerate(ins)}
    found: list[Any] = [None] * len(ins)

    def sink(node: Tensor, g: Any) -> None:
        i = wanted.get(id(node))
        if i is not None:
            found[i] = g

    if live:
        seeds = [_seed(o, g, create_graph) for o, g in live]
        previous = engine.set_grad_enabled(create_graph)
        try:
            engine.backward_sweep([o for o, _ in live], seeds, create_graph, sink, _add)
        finally:
            engine.set_grad_enabled(previous)
    results = []
    for t, g in zip(ins, found):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: an input of shape {t.shape} is not used to compute the outputs")
            g = np.zeros_like(t.data)
        if create_graph:
            results.append(g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g)))
        else:
            results.append(Tensor._wrap(g.data if isinstance(g, Tensor) else np.asarray(g)))
    return tuple(results)
