"""Reverse mode for Tensors: ``backward`` into ``.grad``, and ``grad`` that returns gradients."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.state import grad_mode
from ..tensor import Tensor
from . import engine


def _seed(root: Tensor, gradient: Any, create_graph: bool) -> Any:
    if not root._rg:
        raise RuntimeError(
            f"backward: this tensor (shape {root.shape}) has no graph: it does not require grad and was not "
            "computed from anything that does; create inputs with requires_grad=True"
        )
    if gradient is None:
        if root.data.dtype.kind == "c":
            raise RuntimeError(
                f"backward: the output is complex ({root.data.dtype}); a gradient needs a real-valued output "
                "(e.g. np.abs(z) ** 2 or np.real(z)), or pass gradient= (d final / d output, complex)"
            )
        if root.data.size != 1:
            raise RuntimeError(
                f"backward: the output has shape {root.shape}, not one element; pass gradient= an array of "
                f"shape {root.shape} (d final / d output), or reduce it first, e.g. out.sum().backward()"
            )
        seed = np.ones_like(root.data)
    else:
        raw = gradient.data if isinstance(gradient, Tensor) else np.asarray(gradient)
        if raw.dtype.kind == "c" and root.data.dtype.kind != "c":
            raise TypeError(
                f"backward: a complex gradient ({raw.dtype}) for a real output ({root.data.dtype}); "
                "pass a real one, or take np.real of the output gradient"
            )
        if raw.dtype.kind not in "biufc":
            raise TypeError(
                f"backward: argument 'gradient' must be an array of numbers of shape {root.shape} "
                f"(d final / d output), got {type(gradient).__name__} {gradient!r:.40}"
            )
        if raw.shape != root.shape:
            raise ValueError(f"backward: gradient has shape {raw.shape} but the output has shape {root.shape}")
        if create_graph and isinstance(gradient, Tensor):
            return gradient
        seed = raw.astype(root.data.dtype, copy=False)
    return Tensor._wrap(seed) if create_graph else seed


_add = operator.add


def backward(roots: Sequence[Tensor], gradients: Sequence[Any], create_graph: bool = False) -> None:
    """Accumulate gradients of ``roots`` into ``.grad`` of every leaf (and retained node)."""
    seeds = [_seed(r, g, create_graph) for r, g in zip(roots, gradients)]
    with grad_mode(create_graph):
        found = engine.backward_sweep(list(roots), seeds, create_graph, _add)
    handed_out = {id(s) for s in seeds}
    for node, g in found:
        if not isinstance(g, Tensor):
            # each leaf gets its own writeable array: never a read-only broadcast view, never
            # an array shared with another leaf or with the caller's gradient
            if id(g) in handed_out or g.base is not None or not g.flags.writeable:
                g = g.copy()
            handed_out.add(id(g))
            g = Tensor._wrap(g)
        node.grad = g if node.grad is None else node.grad + g


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    create_graph: bool = False,
    allow_unused: bool = True,
) -> tuple[Tensor, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (``.grad`` is untouched).

    An input the outputs do not depend on gets zeros (or an error with ``allow_unused=False``).
    With ``create_graph=True`` the results can be differentiated again.

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
    live = [(o, g) for o, g in zip(outs, gouts) if o._rg]
    found: dict[Any, Any] = {}
    if live:
        seeds = [_seed(o, g, create_graph) for o, g in live]
        with grad_mode(create_graph):
            found = dict(engine.backward_sweep([o for o, _ in live], seeds, create_graph, _add, set(ins)))
    results = []
    for t in ins:
        g = found.get(t)
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: an input of shape {t.shape} is not used to compute the outputs")
            g = np.zeros_like(t.data)
        results.append(g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g)))
    return tuple(results)
