"""``chainrule.autograd.functional``: PyTorch's ``torch.autograd.functional`` (jacobian, hessian, vjp, jvp,
hvp, vhp) on Tensors, built on ``chainrule.autograd.grad`` so ``create_graph=True`` gives results that are
differentiable again.

Shapes and nesting are PyTorch's: a Tensor input gives a Tensor, a tuple of inputs a tuple; ``jacobian`` is
``output.shape + input.shape``; ``hessian`` of a tuple of inputs is a tuple of tuples ``H[i][j]``. The
JAX-style ``chainrule.jacrev``, ``hessian``, ``jvp`` do the same on arrays without building a graph.

Example:
    >>> import chainrule as cr
    >>> cr.autograd.functional.hessian(lambda x: (x ** 3).sum(), cr.Tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff.backprop import grad
from ..core.state import grad_mode
from ..tensor import Tensor

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _inputs(inputs: Any, create_graph: bool) -> tuple[tuple[Tensor, ...], bool]:
    """The inputs as a tuple of Tensors that require grad (the caller's own where their graph must be kept)."""
    single = not isinstance(inputs, (tuple, list))
    items = (inputs,) if single else tuple(inputs)
    out = []
    for x in items:
        t = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
        if t.dtype.kind not in "fc":
            raise TypeError(f"autograd.functional: inputs must be floating point Tensors, got dtype {t.dtype}")
        out.append(t if create_graph and t.requires_grad else Tensor(t._data.copy(), requires_grad=True))
    return tuple(out), single


def _outputs(out: Any) -> tuple[tuple[Tensor, ...], bool]:
    single = not isinstance(out, (tuple, list))
    items = (out,) if single else tuple(out)
    return tuple(o if isinstance(o, Tensor) else Tensor(np.asarray(o)) for o in items), single


def _real_part(t: Any) -> Any:
    from ..ops.pointwise import real

    return real(t) if isinstance(t, Tensor) and t.dtype.kind == "c" else t


def _kept(t: Any, create_graph: bool) -> Tensor:
    return t if create_graph else t.detach()


def _recording(api: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``api`` with the graph recorded, even inside ``no_grad`` (PyTorch's functions do the same: their
    results were silent zeros there); without ``create_graph`` the results come back detached as before."""

    @functools.wraps(api)
    def run(*args: Any, **kwargs: Any) -> Any:
        with grad_mode(True):
            return api(*args, **kwargs)

    return run


def _check_strict(outs: tuple[Tensor, ...]) -> None:
    """``strict=True``: every output must depend on the inputs (PyTorch's error otherwise)."""
    for i, o in enumerate(outs):
        if not (isinstance(o, Tensor) and o.requires_grad):
            raise RuntimeError(f"autograd.functional: Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable manner from the input "
                               "when running in strict mode (strict=True)")


def _unused_refused(found: tuple[Any, ...], strict: bool) -> tuple[Any, ...]:
    """Zeros for inputs the outputs do not depend on; with ``strict=True``, PyTorch's error instead."""
    for i, g in enumerate(found):
        if g is None and strict:
            raise RuntimeError(f"autograd.functional: The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode (strict=True)")
    return found


def _grads(output: Any, xs: tuple[Tensor, ...], grad_output: Any, create_graph: bool,
           strict: bool = False) -> tuple[Tensor, ...]:
    if not isinstance(output, Tensor) or not output.requires_grad:  # the output does not depend on the inputs
        return tuple(Tensor(np.zeros(x.shape, dtype=x.dtype)) for x in xs)
    found = grad(output, xs, grad_outputs=grad_output, retain_graph=True, create_graph=create_graph,
                 allow_unused=True)
    return tuple(Tensor(np.zeros(x.shape, dtype=x.dtype)) if g is None else g
                 for g, x in zip(_unused_refused(found, strict), xs, strict=True))


def _grads_of(outs: tuple[Tensor, ...], xs: tuple[Tensor, ...], cotangents: tuple[Tensor, ...],
              create_graph: bool, strict: bool = False) -> tuple[Tensor, ...]:
    """d(outs)/d(xs) pulled back from ``cotangents`` (chainrule's transpose rules: no conjugation)."""
    live = [(o, w) for o, w in zip(outs, cotangents, strict=True) if isinstance(o, Tensor) and o.requires_grad]
    if not live:
        return tuple(Tensor(np.zeros(x.shape, dtype=x.dtype)) for x in xs)
    found = grad([o for o, _ in live], xs, grad_outputs=[w for _, w in live], retain_graph=True,
                 create_graph=create_graph, allow_unused=True)
    return tuple(Tensor(np.zeros(x.shape, dtype=x.dtype)) if g is None else g
                 for g, x in zip(_unused_refused(found, strict), xs, strict=True))


def _stacked(rows: list[Tensor], shape: tuple[int, ...]) -> Tensor:
    from ..ops.shape import reshape, stack

    return reshape(stack(rows), shape) if rows else Tensor(np.zeros(shape))


@_recording
def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """PyTorch's ``jacobian``: d output / d input, shaped ``output.shape + input.shape``, one reverse pass
    per output entry."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f"jacobian: strategy must be 'reverse-mode' or 'forward-mode', got {strategy!r}")
    if strict and vectorize:
        raise RuntimeError("jacobian: strict=True and vectorize=True are not supported together (as in PyTorch); "
                           "drop one of them")
    xs, single_in = _inputs(inputs, create_graph)
    outs, single_out = _outputs(func(*xs))
    if strict:
        _check_strict(outs)
    table = []
    for out in outs:
        if out.dtype.kind == "c":
            raise TypeError(
                f"autograd.functional.jacobian: the output is complex ({out.dtype}), which has a Jacobian only for a "
                "holomorphic function (PyTorch's reverse mode refuses it too); use cr.jacrev(f, holomorphic=True) or "
                "cr.jacfwd(f, holomorphic=True), or return np.real(out) and np.imag(out)"
            )
        rows: list[list[Tensor]] = [[] for _ in xs]
        flat = out.reshape((-1,))
        for k in range(flat.shape[0]):
            seed = np.zeros(flat.shape, dtype=out.dtype)
            seed[k] = 1.0
            picked = (flat * Tensor(seed)).sum() if out.requires_grad else None
            for i, g in enumerate(_grads(picked, xs, None, create_graph, strict)):
                rows[i].append(g)
        per_input = tuple(_kept(_stacked(r, out.shape + x.shape), create_graph) for r, x in zip(rows, xs, strict=True))
        table.append(per_input[0] if single_in else per_input)
    return table[0] if single_out else tuple(table)


@_recording
def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """PyTorch's ``hessian`` of a function with one output entry: ``input.shape + input.shape`` (a tuple of
    tuples ``H[i][j]`` for several inputs)."""
    if strict and vectorize:
        raise RuntimeError("hessian: strict=True and vectorize=True are not supported together (as in PyTorch); "
                           "drop one of them")
    xs, single_in = _inputs(inputs, create_graph)

    def gradient(*args: Tensor) -> Any:
        out = _single("hessian", func(*args), strict)
        gs = _grads(out.reshape(()), args, None, True, strict)
        return gs[0] if single_in else gs

    return jacobian(gradient, xs[0] if single_in else xs, create_graph=create_graph, strict=strict)


def _single(name: str, result: Any, strict: bool) -> Tensor:
    """The one-entry Tensor a function given to hessian, vhp or hvp must return."""
    outs, single = _outputs(result)
    if not single:
        raise RuntimeError(f"{name}: The function given to {name} should return a single Tensor, got a "
                           f"{type(result).__name__} of {len(outs)}")
    (out,) = outs
    if out.size != 1:
        raise RuntimeError(f"{name}: the function must return one entry, got shape {out.shape}")
    if strict:
        _check_strict(outs)
    return out


@_recording
def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """PyTorch's ``vjp``: ``(func(inputs), v^T J)``; ``v`` may be None for an output of one entry."""
    xs, single_in = _inputs(inputs, create_graph)
    outs, single_out = _outputs(func(*xs))
    if strict:
        _check_strict(outs)
    vs = _cotangents("vjp", outs, v)
    # the cotangents go in as grad_outputs (not as a sum of o * v, which is complex for a complex output)
    gs = tuple(_kept(g, create_graph) for g in _grads_of(outs, xs, vs, create_graph, strict))
    shown = tuple(_kept(o, create_graph) for o in outs)
    return (shown[0] if single_out else shown), (gs[0] if single_in else gs)


def _cotangents(name: str, outs: tuple[Tensor, ...], v: Any) -> tuple[Tensor, ...]:
    if v is None:
        if any(o.size != 1 for o in outs):
            raise RuntimeError(f"{name}: v can be None only when the function returns one entry; pass v with the "
                               f"output's shape {[o.shape for o in outs]}")
        return tuple(Tensor(np.ones(o.shape, dtype=o.dtype)) for o in outs)
    vs = (v,) if not isinstance(v, (tuple, list)) else tuple(v)
    if len(vs) != len(outs) or any(np.shape(w._data if isinstance(w, Tensor) else w) != o.shape
                                   for w, o in zip(vs, outs, strict=False)):
        raise RuntimeError(f"{name}: v must match the output's shapes {[o.shape for o in outs]}")
    # a complex v for a real output keeps its dtype (and is refused by the backward pass, not silently cut)
    return tuple(w if isinstance(w, Tensor) else Tensor(np.asarray(w, dtype=np.result_type(o.dtype, np.asarray(w))))
                 for w, o in zip(vs, outs))


@_recording
def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """PyTorch's ``jvp``: ``(func(inputs), J v)``, by the double-backward trick (as PyTorch does)."""
    xs, single_in = _inputs(inputs, create_graph)
    outs, single_out = _outputs(func(*xs))
    if strict:
        _check_strict(outs)
    ts = _cotangents("jvp", xs, v)
    # u = a + i b with real a, b: gs = J^T u and real(<gs, t>) = real(<u, J t>) = <a, Re Jt> - <b, Im Jt>, so
    # J t = d/da - i d/db. That holds for non-holomorphic functions too, where J^T u is only real-linear in u.
    real_dtype = [np.zeros((), dtype=o.dtype).real.dtype for o in outs]
    a_s = tuple(Tensor(np.zeros(o.shape, dtype=d), requires_grad=True) for o, d in zip(outs, real_dtype))
    b_s = tuple(Tensor(np.zeros(o.shape, dtype=d), requires_grad=True) if o.dtype.kind == "c" else None
                for o, d in zip(outs, real_dtype))
    us = tuple(a if b is None else a + 1j * b for a, b in zip(a_s, b_s))
    gs = _grads_of(outs, xs, us, True, strict)
    inner = sum(_real_part((g * t).sum()) for g, t in zip(gs, ts, strict=True))
    wrt = a_s + tuple(b for b in b_s if b is not None)
    found = list(_grads(inner, wrt, None, create_graph))
    d_a, d_b = found[: len(a_s)], iter(found[len(a_s):])
    tangents = tuple(_kept(da if b is None else da - 1j * next(d_b), create_graph) for da, b in zip(d_a, b_s))
    shown = tuple(_kept(o, create_graph) for o in outs)
    return (shown[0] if single_out else shown), (tangents[0] if single_out else tangents)


@_recording
def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """PyTorch's ``vhp``: ``(func(inputs), v^T H)`` for a function with one output entry."""
    xs, single_in = _inputs(inputs, create_graph)
    out = _single("vhp", func(*xs), strict)
    vs = _cotangents("vhp", xs, v)
    gs = _grads(out.reshape(()), xs, None, True, strict)
    for i, g in enumerate(gs):
        if strict and not g.requires_grad:
            raise RuntimeError(f"vhp: The jacobian of the user-provided function with respect to input {i} is "
                               "independent of the input. This is not allowed in strict mode (strict=True)")
    # v pulled back through the gradient (not the gradient of sum(g * v): complex for complex inputs)
    products = tuple(_kept(h, create_graph) for h in _grads_of(gs, xs, vs, create_graph))
    return _kept(out, create_graph), (products[0] if single_in else products)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """PyTorch's ``hvp``: ``(func(inputs), H v)`` (H is symmetric where the function is twice differentiable)."""
    return vhp(func, inputs, v, create_graph, strict)
