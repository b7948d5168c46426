"""The reverse sweep: graph order and gradient accumulation over :class:`~chainrule.core.node.Node` s.

It knows no op and no value type. Roots and parents are nodes or leaves (anything else); a
gradient for a multi-output node is a list with one entry per output (None for an output that
got no gradient). Nothing here recurses, so graphs of any depth are fine.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

import numpy as np

from . import traces
from .clock import last_change as _last_change
from .errors import GradientShapeError
from .node import Node, check_saved, freed_error, unbroadcast
from .sparse import SliceGrad

_ndarray = np.ndarray
_MISSING = object()  # no gradient yet (a rule may hand back None, so None cannot say it)
# PyTorch's anomaly mode (``autograd.detect_anomaly``): [on, check for NaN]; when on, every rule's gradient is
# checked for NaN as it is made, and the error names the op
ANOMALY = [False, True]


def passthrough(g: Any, ans: Any, *args: Any, **kw: Any) -> Any:
    """The reverse rule that hands the output's gradient on unchanged (``x + y`` for each argument).

    A primitive that uses this very function as a rule lets the sweep skip the call at first order.

    Example:
        >>> passthrough(3.0, None, 1.0, 2.0)
        3.0
    """
    return g


def edge_gradient(node: Node, edge: tuple, g: Any, lift: Any) -> Any:
    """The gradient ``node``'s primitive gives the parent of ``edge``, reduced to that argument's shape."""
    argnum, _, _, shape, dtype = edge
    pg = node.prim.vjp(argnum, g, node, lift)
    if (pg.__class__ is _ndarray and pg.shape == shape and pg.dtype is dtype) or pg.__class__ is SliceGrad:
        return pg  # a SliceGrad is already the argument's shape and dtype (see getitem's rule)
    return _reduced(node, argnum, pg, shape, dtype)


def _dense(g: Any) -> Any:
    if g.__class__ is SliceGrad:
        return g.dense()
    if g.__class__ is list:  # one entry per output of a multi-output node
        return [x.dense() if x.__class__ is SliceGrad else x for x in g]
    return g


def backward_sweep(
    roots: list[tuple[Any, int | None]],
    seeds: list[Any],
    add: Callable[[Any, Any], Any],
    lift: Callable[[Node], Any] | None = None,
    wanted: set[Any] | None = None,
    retain: bool = True,
    leaf_hooks: Callable[[Any, Any], Any] | None = None,
) -> list[tuple[Any, Any]]:
    """Propagate ``seeds`` (d final / d root) from ``roots`` (``(node or leaf, output index)``) back.

    Returns ``(key, gradient)`` for each node or leaf in ``wanted``, or, when ``wanted`` is None,
    for each leaf and each node with linked ``outputs`` (e.g. retain_grad). ``add`` sums two gradients of one value.
    ``lift``: None for a first-order pass (rules run on the kept arrays), else the function that
    rebuilds a node's values as graph values, so the rules are recorded (``create_graph``).
    ``retain=False`` frees what each node's rules read as soon as they ran (a second pass through
    those nodes then raises, naming ``retain_graph``). A linked output's entry ``[ref, retain, label,
    hooks]`` may carry hooks (``hook(g) -> g``) run on its gradient once complete; ``leaf_hooks(leaf, g)``
    (optional) does the same for each leaf's gradient.

    A node's primitive provides ``vjp(argnum, g, node, lift)`` (the gradient for one argument, not yet
    reduced to its shape), ``n_outputs``, ``keeps`` (False: its nodes keep no value, nothing to free)
    and ``fast_vjps`` (None, or one rule per argument that ``vjp`` would just call as
    ``rule(g, node.ans, *node.args, **node.kw)`` at first order: the sweep then calls it itself).
    """
    if traces.open:  # a trace (jit's recording) may refuse a backward pass inside the traced function
        traces.backward_starts()
    grads: dict[Any, Any] = {}
    for (key, index), seed in zip(roots, seeds):
        _accumulate(grads, key, index, seed, add)
    found: list[tuple[Any, Any]] = []
    pop, get, keep = grads.pop, grads.get, found.append
    first_order = lift is None
    free = not retain
    # The order (toposort's, found as the sweep goes, with no walk of the graph beforehand): the nodes that got
    # a gradient, the latest made first, from a heap of (-stamp, node). A node is made after its parents, so every
    # child of a node ran before it (two nodes made by hand with one stamp tie-break on Node.__lt__).
    pending = [(-key.stamp, key) for key, _ in roots if key.__class__ is Node]
    if len(pending) > 1:  # each node once (a node given twice, or two outputs of one node)
        pending = sorted({entry[1]: entry for entry in pending}.values())
    # ``top``: the pending node made last, kept out of the heap while its stamp is above every stamp in it. A chain
    # hands each node on to the next this way, with no heap push and pop (two thirds of a small chain's nodes)
    top = None
    # with ``wanted``, only the nodes on a path to a wanted value run their rules (PyTorch's engine prunes the same
    # way: a hook or a custom backward elsewhere in the graph is not called)
    needed = None if wanted is None else _leading_to(pending, wanted)
    # the hot loop: names bound once, attribute reads hoisted per node (a chain of 4x4 ops is all overhead)
    while True:
        if top is not None:
            node = top
            top = None
        elif pending:
            node = heappop(pending)[1]
        else:
            break
        g = pop(node, None)
        if g is None:
            continue
        cls = g.__class__
        if cls is not _ndarray and (cls is SliceGrad or cls is list):
            g = _dense(g)
        outputs = node.outputs
        if outputs is not None:  # linked outputs: their hooks may replace the gradient before it flows on
            g = _run_hooks(outputs, g)
        if outputs is not None if wanted is None else node in wanted:
            keep((node, g))
        parents = node.parents
        if not parents or needed is not None and node not in needed:
            continue
        args = node.args
        if args is None:
            raise freed_error(node)
        if _last_change[0] >= node.stamp:  # something changed in place since the node was made
            check_saved(node)
        prim = node.prim
        ans, kw = node.ans, node.kw
        # first order: call the rules directly when the primitive says vjp would only do that
        rules = prim.fast_vjps if first_order and not ANOMALY[0] else None
        if rules is None:
            if top is not None:  # into the heap: the nodes _through_vjp finds go there
                heappush(pending, (-top.stamp, top))
                top = None
            _through_vjp(node, g, lift, grads, add, pending)
        else:
            # the arguments spread by hand for one or two (a call with *args costs ~60 ns more)
            n_args = -1 if kw else len(args)
            if n_args == 2:
                a0, a1 = args
            elif n_args == 1:
                a0 = args[0]
            for argnum, parent, index, shape, dtype in parents:
                try:
                    rule = rules[argnum]
                except IndexError:  # no rule for it: vjp raises the error that says so
                    rule = None
                if rule is passthrough:  # the gradient is g itself: no call
                    pg = g
                elif rule is None:
                    pg = prim.vjp(argnum, g, node, None)
                elif n_args == 2:
                    pg = rule(g, ans, a0, a1)
                elif n_args == 1:
                    pg = rule(g, ans, a0)
                elif kw:
                    pg = rule(g, ans, *args, **kw)
                else:
                    pg = rule(g, ans, *args)
                # reduce and accumulate as _through_vjp does, written out here: a call per edge costs ~0.1 us
                cls = pg.__class__
                if cls is _ndarray:
                    if pg.shape != shape or pg.dtype is not dtype:
                        pg = _reduced(node, argnum, pg, shape, dtype)
                elif cls is not SliceGrad:
                    if pg is None:  # the rule gives this argument no gradient (autograd.Function's None)
                        continue
                    pg = _reduced(node, argnum, pg, shape, dtype)
                if index is None:
                    prev = get(parent, _MISSING)
                    if prev is _MISSING:  # its first gradient: a node joins the order
                        grads[parent] = pg
                        if parent.__class__ is Node:
                            stamp = parent.stamp
                            if top is None:
                                if not pending or stamp > -pending[0][0]:
                                    top = parent
                                else:
                                    heappush(pending, (-stamp, parent))
                            elif stamp > top.stamp:
                                heappush(pending, (-top.stamp, top))
                                top = parent
                            else:
                                heappush(pending, (-stamp, parent))
                    else:
                        grads[parent] = pg if prev is None else add(prev, pg)
                elif _accumulate(grads, parent, index, pg, add):
                    if top is not None:
                        heappush(pending, (-top.stamp, top))
                        top = None
                    heappush(pending, (-parent.stamp, parent))
        if free and prim.keeps:  # what the rules read (and per-call state in kw) goes now
            node.args = node.ans = node.lifted = node.kw = None
    # what is left are the leaves' gradients
    for key, g in grads.items():
        if wanted is None or key in wanted:
            g = _dense(g)
            found.append((key, g if leaf_hooks is None else leaf_hooks(key, g)))
    return found


def _check_nan(node: Node, argnum: int, pg: Any) -> None:
    values = pg.dense() if pg.__class__ is SliceGrad else getattr(pg, "_data", pg)
    if np.isnan(np.asarray(values)).any():
        name = getattr(node.prim, "name", node.prim)
        raise RuntimeError(f"Function '{name}Backward' returned nan values in its {argnum}th output (anomaly mode: "
                           f"the gradient of '{name}' for its argument {argnum} holds NaN)")


def _leading_to(roots: list[tuple[int, Node]], wanted: set[Any]) -> set[Node]:
    """The nodes reachable from ``roots`` (heap entries) with a parent that is wanted or is itself such a node."""
    needed: set[Node] = set()
    seen: set[Node] = set()
    stack: list[tuple[Node, bool]] = [(node, False) for _, node in roots]
    while stack:
        node, visited = stack.pop()
        if visited:  # every parent decided: this node is needed when one of them is wanted or needed
            for edge in node.parents:
                if edge[1] in wanted or edge[1] in needed:
                    needed.add(node)
                    break
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for edge in node.parents:
            parent = edge[1]
            if parent.__class__ is Node and parent not in seen:
                stack.append((parent, False))
    return needed


def _through_vjp(node: Node, g: Any, lift: Any, grads: dict[Any, Any], add: Callable[[Any, Any], Any],
                 pending: list[tuple[int, Node]]) -> None:
    """The sweep's step for a node whose rules run through ``vjp`` (``create_graph``, or no fast rules)."""
    prim = node.prim
    for argnum, parent, index, shape, dtype in node.parents:
        pg = prim.vjp(argnum, g, node, lift)
        cls = pg.__class__
        if cls is _ndarray:
            if pg.shape != shape or pg.dtype is not dtype:
                pg = _reduced(node, argnum, pg, shape, dtype)
        elif cls is not SliceGrad:
            if pg is None:  # no gradient for this argument
                continue
            pg = _reduced(node, argnum, pg, shape, dtype)
        if ANOMALY[0] and ANOMALY[1]:
            _check_nan(node, argnum, pg)
        if _accumulate(grads, parent, index, pg, add) and parent.__class__ is Node:
            heappush(pending, (-parent.stamp, parent))


def _run_hooks(outputs: dict[Any, list], g: Any) -> Any:
    """``g`` after the hooks of the node's linked outputs (entry ``[ref, retain, label, hooks]``) ran on it."""
    for index, entry in outputs.items():
        hooks = entry[3]
        if not hooks:
            continue
        if index is None:
            for hook in list(hooks):
                g = hook(g)
        elif g[index] is not None:
            part = g[index]
            for hook in list(hooks):
                part = hook(part)
            g = list(g)
            g[index] = part
    return g


def _reduced(node: Node, argnum: int, pg: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    try:
        return unbroadcast(pg, shape, dtype)
    except ValueError:
        raise GradientShapeError(
            f"{getattr(node.prim, 'name', node.prim)}: the reverse rule for argument {argnum} returned a gradient "
            f"of shape {np.shape(pg)} for an input of shape {shape}; fix the rule"
        ) from None


def _accumulate(grads: dict[Any, Any], key: Any, index: int | None, g: Any, add: Callable[[Any, Any], Any]) -> bool:
    """Add ``g`` into ``key``'s gradient (output ``index`` of it); True when ``key`` had none before."""
    prev = grads.get(key, _MISSING)
    if index is None:
        grads[key] = g if prev is _MISSING or prev is None else add(prev, g)
        return prev is _MISSING
    parts = grads[key] = [None] * key.n_outputs if prev is _MISSING or prev is None else prev
    parts[index] = g if parts[index] is None else add(parts[index], g)
    return prev is _MISSING
