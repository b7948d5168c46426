"""``checkpoint``: run a block keeping none of its intermediates, recompute them in backward.

The block may close over Tensors (an ``nn`` block's weights, a captured ``w``): a first run
with the graph recorded finds every Tensor from outside that the result depends on, then
that graph is dropped. One node stands for the block, with the differentiated arguments
and those outside Tensors as its parents; its reverse rule runs the block again and takes
the gradients of that recomputation, so they are the same as without the checkpoint. With
``create_graph`` (higher order, or inside transforms) the recomputation is recorded on the
real inputs, so derivatives of any order come out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _batching
from ..autodiff.primitive import Primitive
from ..core import pytree as _pytree
from ..core import state
from ..core.clock import tick as _tick
from ..core.defaults import generator
from ..core.device import as_array, xp_of
from ..core.node import Node
from ..core.state import grad_mode
from ..tensor import Tensor, _output, sweep_from


def checkpoint(f: Callable[..., Any] | None = None, *, prevent_cse: bool = True, policy: Any = None,
               static_argnums: int | tuple[int, ...] = ()) -> Any:
    """``f`` that stores only its inputs and recomputes its insides during backward.

    Trades compute for memory on long chains (each checkpointed block keeps no intermediates).
    Arguments may be any pytree (tuples, lists, dicts) with non-array leaves (``axis=None``,
    strings); Tensors the block closes over (e.g. a module's weights) get their gradients.
    JAX's keywords are accepted (``checkpoint(f, static_argnums=1)``, ``functools.partial(checkpoint,
    policy=...)``): non-array arguments need no ``static_argnums`` here, there is no compiler to
    ``prevent_cse`` in, and ``policy`` (``chainrule.checkpoint_policies``) is ignored (nothing inside the block is
    saved).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> w = cr.Tensor([2.0, 3.0], requires_grad=True)
        >>> x = cr.Tensor([1.0, 1.0], requires_grad=True)
        >>> cr.checkpoint(lambda x, axis=None: np.sum(x * w, axis=axis))(x, axis=None).backward()
        >>> w.grad, x.grad
        (Tensor([1., 1.]), Tensor([2., 3.]))
    """
    if f is None:  # used as @checkpoint(...) with keywords only
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if state.forward_levels() or not state.grad_enabled():
            return f(*args, **kwargs)  # nothing is kept for a backward pass: nothing to save
        if _batching.open and _batching.batched_tree((args, kwargs)):
            return f(*args, **kwargs)  # under vmap: values one node cannot stand for (see _run); nothing is saved
        return _run(f, args, kwargs)

    return wrapper


def _run(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    leaves, treedef = _pytree.flatten((args, kwargs))
    diff = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor) and leaf._requires_grad]
    stand_ins = _stand_ins(leaves, diff)
    randomness = _RandomState(f)
    start = _tick()
    call_args, call_kwargs = _call_args(treedef, stand_ins)
    out = f(*call_args, **call_kwargs)
    out_leaves, out_def = _pytree.flatten(out)
    if _batching.open and _batching.batched_tree(out_leaves):
        # a value batched by vmap (closed over) made the result Batched: one node cannot stand for it, and it was
        # computed on the stand-ins, so gradients would stop here; the block runs as it is (nothing saved)
        return f(*args, **kwargs)
    outer = _outside_edges([o for o in out_leaves if isinstance(o, Tensor)], {id(stand_ins[i]) for i in diff}, start)
    if not any(isinstance(o, Tensor) and o._requires_grad for o in out_leaves):
        return out  # the result does not depend on anything differentiated
    traced = [i for i, o in enumerate(out_leaves) if isinstance(o, Tensor) and o._requires_grad]  # others: constants
    shapes = [out_leaves[i].shape for i in traced]
    values = [np.ravel(out_leaves[i]._data) for i in traced]
    flat = np.concatenate(values).astype(np.result_type(*values, np.float16))  # floats, in the block's precision
    pieces = list(out_leaves)
    del out, out_leaves  # the recorded insides go now: backward recomputes them
    # one node for the block: the differentiated arguments, then the outside values it read, as parents
    inputs = [leaves[i] for i in diff]
    edges = [(k, x if x._node is None else x._node, x._index, x._data.shape, x._data.dtype)
             for k, x in enumerate(inputs)]
    edges += [(len(inputs) + k, *edge) for k, edge in enumerate(outer)]
    prim = _Recompute(f, treedef, leaves, diff, len(outer), flat, randomness, traced)
    node = Node(prim, tuple(edges), None, [x._data for x in inputs] + [None] * len(outer), None, _tick())
    result = Tensor._linked(flat, node)
    k = 0
    for i, s in zip(traced, shapes):
        n = int(np.prod(s))
        pieces[i] = result[k:k + n].reshape(s)
        k += n
    return _pytree.unflatten(out_def, pieces)


def _stand_ins(leaves: list[Any], diff: list[int]) -> list[Any]:
    """Fresh leaves for the differentiated arguments (the first run must not record onto the real ones)."""
    out = list(leaves)
    for i in diff:
        out[i] = Tensor._wrap(leaves[i]._data)
        out[i]._requires_grad = True
    return out


def _call_args(treedef: Any, leaves: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args, kwargs = _pytree.unflatten(treedef, leaves)
    return tuple(args), dict(kwargs)


def _outside_edges(roots: list[Tensor], inputs: set[int], start: int) -> list[tuple[Any, Any, Any, Any]]:
    """``(parent, index, shape, dtype)`` of the values made before the block ran (stamp < start) that its
    result depends on: leaves and nodes of the graph outside (an iterative walk over the block's nodes)."""
    found: list[tuple[Any, Any, Any, Any]] = []
    seen: set[tuple[int, Any]] = set()
    stack = [(r if r._node is None else r._node, r._index, r._data.shape, r._data.dtype)
             for r in roots if r._requires_grad]
    while stack:
        parent, index, shape, dtype = stack.pop()
        if (id(parent), index) in seen or id(parent) in inputs:
            continue
        seen.add((id(parent), index))
        if parent.__class__ is not Node:
            if parent._stamp < start:
                found.append((parent, index, shape, dtype))
            continue
        if parent.stamp < start:
            found.append((parent, index, shape, dtype))
            continue
        stack.extend((p, i, s, d) for _, p, i, s, d in parent.parents)
    return found


@contextmanager
def _as_leaves(nodes: list[Any]) -> Any:
    """Let a gradient sweep stop at ``nodes`` (it would otherwise walk on through their own histories)."""
    nodes = [n for n in nodes if n.__class__ is Node]
    saved = [n.parents for n in nodes]
    for n in nodes:
        n.parents = ()
    try:
        yield
    finally:
        for n, p in zip(nodes, saved):
            n.parents = p


def _filled(cell: Any) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return False
    return True


class _RandomState:
    """The random generators a block may draw from (chainrule's default one, which ``manual_seed`` resets and
    dropout without ``rng`` draws from; the generators its modules hold; NumPy's global one), as they were before
    its first run, so the recomputation draws the same numbers (PyTorch's ``preserve_rng_state``)."""

    def __init__(self, block: Any) -> None:
        gens: list[np.random.Generator] = [generator(None)]
        held = [block] + [c.cell_contents for c in getattr(block, "__closure__", None) or () if _filled(c)]
        code, names = getattr(block, "__code__", None), getattr(block, "__globals__", {})
        held += [names[n] for n in (code.co_names if code else ()) if n in names]  # module-level models too
        for obj in held:  # the block itself (a Module) and what a function block closes over
            if isinstance(obj, np.random.Generator):
                gens.append(obj)
            modules = getattr(obj, "modules", None)
            if callable(modules) and hasattr(obj, "parameters"):
                for m in modules():
                    gens.extend(v for v in vars(m).values() if isinstance(v, np.random.Generator))
        self.saved = [(g, g.bit_generator.state) for g in {id(g): g for g in gens}.values()]
        self.legacy = np.random.get_state()

    @contextmanager
    def replayed(self) -> Any:
        now = [(g, g.bit_generator.state) for g, _ in self.saved]
        legacy_now = np.random.get_state()
        for g, saved in self.saved:
            g.bit_generator.state = saved
        np.random.set_state(self.legacy)
        try:
            yield
        finally:
            for g, current in now:
                g.bit_generator.state = current
            np.random.set_state(legacy_now)


class _Recompute(Primitive):
    """The node of one checkpointed call: its reverse rule reruns the block."""

    __slots__ = ("block", "treedef", "leaves", "diff", "n_outer", "cache", "flat", "randomness", "traced")

    def __init__(self, block: Callable[..., Any], treedef: Any, leaves: list[Any], diff: list[int], n_outer: int,
                 flat: np.ndarray, randomness: _RandomState, traced: list[int]) -> None:
        name = getattr(block, "__name__", type(block).__name__)
        super().__init__(f"checkpoint({name})", lambda *a: flat, register=False)
        self.block, self.treedef, self.leaves, self.diff, self.n_outer = block, treedef, leaves, diff, n_outer
        self.flat, self.randomness, self.traced = flat, randomness, traced
        self.cache: Any = None

    def has_vjp(self) -> bool:
        return True

    def vjp(self, argnum: int, g: Any, node: Any, lift: Any) -> Any:
        if self.cache is None or self.cache[0] is not g:
            self.cache = (g, self._gradients(g, node, lift is not None))
        return self.cache[1][argnum]  # the sweep reduces it to the argument's shape and dtype

    def _gradients(self, g: Any, node: Any, create_graph: bool) -> list[Any]:
        edges = node.parents
        n_in = len(self.diff)
        leaves = list(self.leaves)
        if create_graph:  # record the recomputation on the real inputs: derivatives of any order
            for i, edge in zip(self.diff, edges[:n_in]):
                _, parent, index, _, _ = edge
                leaves[i] = _output(parent, index, node.args[edge[0]]) if parent.__class__ is Node else parent
            keys = [edge[1] for edge in edges]
        else:
            leaves = _stand_ins(leaves, self.diff)
            keys = [leaves[i] for i in self.diff] + [edge[1] for edge in edges[n_in:]]
        from ..ops.shape import concatenate, ravel

        with grad_mode(True):
            args, kwargs = _call_args(self.treedef, leaves)
            with self.randomness.replayed():  # the same dropout masks and random draws as the first run
                out_leaves = _pytree.flatten(self.block(*args, **kwargs))[0]
            outs = [out_leaves[i] if i < len(out_leaves) else None for i in self.traced]
            if not all(isinstance(o, Tensor) for o in outs):
                raise RuntimeError(f"{self.name}: running the block again in backward returned other kinds of values "
                                   "than the first run; the block must be deterministic")
            flat = concatenate([ravel(o) for o in outs])
        if flat._data.shape != self.flat.shape or not np.allclose(flat._data, self.flat, rtol=1e-9, atol=0.0,
                                                                 equal_nan=True):
            raise RuntimeError(
                f"{self.name}: running the block again in backward gave other values than the first run, so its "
                "gradients would be wrong; the block must be deterministic (random numbers from a generator it "
                "does not hold, e.g. a new numpy.random.default_rng(), or state changed in between): draw from "
                "chainrule's generator (rng=None) or one the block holds, which are replayed, or do not checkpoint it"
            )
        if not flat._requires_grad:
            return [xp_of(flat._data).zeros(shape, dtype) for _, _, _, shape, dtype in edges]
        seed = g if create_graph else as_array(g, dtype=flat._data.dtype)  # (on the device it is on)
        with _as_leaves(keys):
            # (the leaves' hooks run once, in the outer sweep, on their whole gradient: not here on a part of it)
            found = dict(sweep_from([flat], [seed], create_graph, create_graph, set(keys), leaf_hooks=False))
        grads = []
        for key, (_, _, index, shape, dtype) in zip(keys, edges):
            gr = found.get(key)
            if gr is not None and index is not None:
                gr = gr[index]
            grads.append(xp_of(flat._data).zeros(shape, dtype) if gr is None else gr)
        return grads
