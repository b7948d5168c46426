"""Batching rules: how each primitive runs on a whole batch at once.

Every primitive declares a kind (``KINDS``), and the kind gives its rule:

- ``elementwise``: arguments broadcast against each other (the batch axis is lined up);
- ``reduction``: an ``axis`` parameter, moved past the batch axis (None: every axis of one example);
- ``shape``: reshape, transpose, broadcast_to, concatenate, indexing: the parameter describes one
  example's shape or axes and is rewritten for the batch;
- ``contraction``: matmul and einsum (a new einsum letter for the batch; 1-d matmul operands made 2-d);
- ``linalg``: NumPy's linalg already works on stacks of matrices (``solve``'s vector right-hand side is
  made a column first);
- ``loop``: no vectorized rule yet: the op runs once per example and the results are stacked (still
  differentiable, but a Python loop: ``table()`` shows which ops do this).

A rule gets the Batched arguments of the innermost level among them (``L``, batch size ``B``) and
calls the primitive on whole batches, so the graph (and forward tangents) of Tensors inside are
recorded as usual. Batched values of outer levels are constants here; when the primitive is called
on them the hook batches them next.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _state
from ..autodiff.primitive import REGISTRY, Primitive
from ..ops.declare import DECLARATIONS
from ..tensor import Tensor
from .value import Batched

Rule = Callable[[Primitive, tuple[Any, ...], dict[str, Any], int, int], Any]


# -- helpers -----------------------------------------------------------------------------------------------
def at(x: Any, level: int) -> bool:
    return isinstance(x, Batched) and x.level == level


def ndim(x: Any) -> int:
    """Number of axes of one example (a Batched value of level L) or of a constant."""
    cls = x.__class__
    if cls is float or cls is int:
        return 0
    if cls is np.ndarray:
        return x.ndim
    if isinstance(x, Batched):
        return x.ndim
    if isinstance(x, Tensor):
        return x._data.ndim
    if isinstance(x, (np.ndarray, np.generic, int, float, complex, bool, list)):
        return np.ndim(x)
    return 0


def _shape(v: Any) -> tuple[int, ...]:
    return tuple(v.shape) if hasattr(v, "shape") else np.shape(v)


def expand(v: Any, k: int) -> Any:
    """A batch value ``(B, *s)`` as ``(B, 1 * k, *s)``: one example gets ``k`` leading unit axes."""
    if k <= 0:
        return v
    s = _shape(v)
    return v.reshape(s[:1] + (1,) * k + s[1:])


def broadcast_batch(x: Any, size: int) -> Any:
    """A constant repeated over a batch of ``size`` (a view where NumPy allows)."""
    if isinstance(x, (Tensor, Batched)):
        return np.broadcast_to(x, (size,) + tuple(x.shape))
    a = np.asarray(x)
    return np.broadcast_to(a, (size,) + a.shape)


def batch_value(x: Any, level: int, size: int) -> Any:
    """The whole batch behind ``x`` at ``level``, batch axis first (constants repeated)."""
    return x.value if at(x, level) else broadcast_batch(x, size)


def _top(args: tuple[Any, ...], kw: dict[str, Any]) -> tuple[int, int]:
    best: Batched | None = None
    for a in (*args, *kw.values()) if kw else args:
        if a.__class__ is Batched:
            if best is None or a.level > best.level:
                best = a
        elif isinstance(a, (tuple, list)):
            for b in a:
                if isinstance(b, Batched) and (best is None or b.level > best.level):
                    best = b
    assert best is not None
    return best.level, best.value.shape[0]


def _param(args: tuple[Any, ...], kw: dict[str, Any], name: str, pos: int) -> Any:
    return kw[name] if name in kw else args[pos]


def _set(args: tuple[Any, ...], kw: dict[str, Any], name: str, pos: int, value: Any) -> tuple[tuple, dict]:
    if name in kw:
        return args, {**kw, name: value}
    return args[:pos] + (value,) + args[pos + 1:], kw


def _shift(axis: Any, nd: int) -> Any:
    """An axis parameter of one example, for the batch (batch on axis 0)."""
    if axis is None:
        return tuple(range(1, nd + 1))
    if isinstance(axis, (int, np.integer)):
        return int(axis) % max(nd, 1) + 1
    return tuple(int(a) % max(nd, 1) + 1 for a in axis)


# -- rules by kind ----------------------------------------------------------------------------------------
def elementwise(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    if kw and any(at(v, L) for v in kw.values()):
        return loop(prim, args, kw, L, B)
    if len(args) == 1:  # the common unary case
        return Batched(prim(args[0].value, **kw), L)
    nd = max(ndim(a) for a in args)
    vals = [expand(a.value, nd - a.ndim) if at(a, L) else a for a in args]
    return Batched(prim(*vals, **kw), L)


def reduction(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    x = args[0]
    if not at(x, L) or any(at(a, L) for a in args[1:]):
        return loop(prim, args, kw, L, B)
    axis = _param(args, kw, "axis", 1)
    new = () if x.ndim == 0 else _shift(axis, x.ndim)  # a 0-d example: reduce over nothing
    args, kw = _set((x.value,) + args[1:], kw, "axis", 1, new)
    return Batched(prim(*args, **kw), L)


def reshape(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    shape = _param(args, kw, "shape", 1)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    args, kw = _set((args[0].value,) + args[1:], kw, "shape", 1, (B,) + shape)
    return Batched(prim(*args, **kw), L)


def transpose(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    x = args[0]
    axes = _param(args, kw, "axes", 1)
    nd = x.ndim
    new = (0,) + (tuple(range(nd, 0, -1)) if axes is None else tuple(int(a) % max(nd, 1) + 1 for a in axes))
    args, kw = _set((x.value,) + args[1:], kw, "axes", 1, new)
    return Batched(prim(*args, **kw), L)


def broadcast_to(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    x = args[0]
    shape = _param(args, kw, "shape", 1)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    args, kw = _set((expand(x.value, len(shape) - x.ndim),) + args[1:], kw, "shape", 1, (B,) + shape)
    return Batched(prim(*args, **kw), L)


def concatenate(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    nd = ndim(args[0])
    vals = [batch_value(a, L, B) for a in args]
    return Batched(prim(*vals, **{**kw, "axis": _shift(kw["axis"], nd)}), L)


def _is_array_index(i: Any) -> bool:
    return isinstance(i, (np.ndarray, list, Tensor)) or (isinstance(i, np.generic) and i.dtype == bool)


def getitem(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    x = args[0]
    index = _param(args, kw, "index", 1)
    items = index if isinstance(index, tuple) else (index,)
    if not at(x, L) and at(index, L) and not isinstance(index.value, (Batched, Tensor)):
        return Batched(prim(x, index=index.value), L)  # a constant table looked up by batched integers
    if not at(x, L) or any(isinstance(i, Batched) for i in items):
        return loop(prim, args, kw, L, B)
    out = prim(x.value, index=(slice(None),) + items)
    arrays = [k for k, i in enumerate(items) if _is_array_index(i)]
    if arrays:  # NumPy puts the axes of non-adjacent advanced indices first, before the batch axis
        advanced = sorted(arrays + [k for k, i in enumerate(items) if isinstance(i, (int, np.integer))
                                    and not isinstance(i, (bool, np.bool_))])
        if advanced != list(range(advanced[0], advanced[-1] + 1)):
            shapes = [(int(np.count_nonzero(i)),) if np.asarray(i).dtype == bool else np.shape(i)
                      for i in (items[k] for k in advanced)]
            front = len(np.broadcast_shapes(*shapes))
            if front:
                out = np.moveaxis(out, front, 0)
    return Batched(out, L)


def matmul(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    a, b = args
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        raise ValueError("matmul: an operand is 0-d (one example is a number); use * to scale")
    va = a.value if at(a, L) else a
    vb = b.value if at(b, L) else b
    if na == 1:  # (n,) -> (1, n)
        va = expand(va, 1) if at(a, L) else va.reshape((1,) + _shape(va))
    if nb == 1:  # (n,) -> (n, 1)
        vb = vb.reshape(_shape(vb) + (1,))
    ea, eb = max(na, 2), max(nb, 2)
    nd = max(ea, eb)
    if at(a, L):
        va = expand(va, nd - ea)
    if at(b, L):
        vb = expand(vb, nd - eb)
    out = prim(va, vb, **kw)
    s = _shape(out)
    if na == 1 and nb == 1:
        out = out.reshape(s[:-2])
    elif na == 1:
        out = out.reshape(s[:-2] + s[-1:])
    elif nb == 1:
        out = out.reshape(s[:-1])
    return Batched(out, L)


def einsum(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    from ..ops.contraction import _parse

    subscripts = kw["subscripts"]
    ins, out = _parse(subscripts, [tuple(x.shape) if isinstance(x, (Batched, Tensor)) else np.shape(x)
                                   for x in args])
    used = set("".join(ins) + out)
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in used)
    ins = [letter + s if at(x, L) else s for s, x in zip(ins, args)]
    vals = [x.value if at(x, L) else x for x in args]
    return Batched(prim(*vals, subscripts=",".join(ins) + "->" + letter + out), L)


def stacked_linalg(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    """NumPy's linalg works on stacks of matrices: the batch is one more stacking axis."""
    if len(args) != 1 or any(at(v, L) for v in kw.values()):
        return loop(prim, args, kw, L, B)
    out = prim(args[0].value, **kw)  # keywords (svd's full_matrices, qr's mode) are the same for every example
    if prim.n_outputs > 1:  # one batched value per output (slogdet: sign, log|det|)
        return tuple(Batched(o, L) for o in out)
    return Batched(out, L)


def solve(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    a, b = args
    nb = ndim(b)
    vb = b.value if at(b, L) else b
    if nb == 1:  # a vector right-hand side: a column (NumPy 2 reads (B, n) as n right-hand sides)
        vb = vb.reshape(_shape(vb) + (1,))
    eb = max(nb, 2)
    na = ndim(a)
    nd = max(na, eb)
    va = expand(a.value, nd - na) if at(a, L) else a
    if at(b, L):
        vb = expand(vb, nd - eb)
    out = prim(va, vb, **kw)
    return Batched(out.reshape(_shape(out)[:-1]) if nb == 1 else out, L)


def linear(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else kw.get("b")
    if at(w, L) or at(bias, L):  # per-example weights: x @ w.T + b, each op batched
        from ..ops.contraction import matmul as mm
        from ..ops.shape import swapaxes

        out = mm(x, swapaxes(w, -1, -2))
        return out if bias is None else out + bias
    return Batched(prim(x.value, *args[1:], **kw), L)


def normalization(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    """layer_norm / rms_norm over ``axes`` of one example.

    Weights and biases that differ per example are applied after normalizing, by the batched
    elementwise ops (``normalized * w + b``).
    """
    from ..ops._saved import Saved

    x, rest = args[0], list(args[1:]) + [None] * (3 - len(args))
    w, b = rest[0], rest[1]
    if at(w, L) or at(b, L):
        plain = {**kw, "saved": Saved(x.value if at(x, L) else x)}
        if at(x, L):
            normalized: Any = Batched(prim(x.value, **{**plain, "axes": _shift(kw["axes"], x.ndim)}), L)
        else:
            normalized = prim(x, **plain)
        out = normalized if w is None else normalized * w
        return out if b is None else out + b
    return Batched(prim(x.value, *args[1:], **{**kw, "axes": _shift(kw["axes"], x.ndim)}), L)


def attention(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    """Attention is matmuls over the last two axes: the batch is one more leading axis of each operand."""
    if any(at(v, L) for v in kw.values()):
        raise NotImplementedError(f"vmap: {prim.name} with a dropout mask that differs per example has no "
                                  "batching rule")
    present = [a for a in args if a is not None]
    nd = max(ndim(a) for a in present)
    vals = [expand(a.value, nd - a.ndim) if at(a, L) else a for a in args]
    return Batched(prim(*vals, **kw), L)


def convolution(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    """nn.conv / nn.conv_input_grad with only the first (image-like) operand batched: the examples join its
    batch axis N and split off again (one call). Per-example kernels, and nn.conv_weight_grad (a sum over N),
    run once per example."""
    a, b = args[0], args[1]
    if prim.name == "nn.conv_weight_grad" or at(b, L) or not at(a, L):
        return loop(prim, args, kw, L, B)
    v = a.value
    s = _shape(v)
    out = prim(v.reshape(s[0] * s[1], *s[2:]), b, **kw)
    return Batched(out.reshape(*s[:2], *_shape(out)[1:]), L)


def unbatched(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    raise NotImplementedError(
        f"vmap: {prim.name} has no batching rule (it keeps arrays from its forward pass for its gradient, so it "
        "cannot run once per example either); call it on the whole batch outside vmap"
    )


def packed_attention(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    """qkv_attention on (examples, batch, T, 3, H, E): the examples join the batch axis, then split off again."""
    if any(at(v, L) for v in kw.values()):
        raise NotImplementedError(f"vmap: {prim.name} with a dropout mask that differs per example has no "
                                  "batching rule")
    v = args[0].value
    out = prim(v.reshape(-1, *_shape(v)[2:]), **kw)
    return Batched(out.reshape(*_shape(v)[:2], *_shape(out)[1:]), L)


def loop(prim: Primitive, args: tuple, kw: dict, L: int, B: int) -> Any:
    """One call per example, results stacked (for ops with no vectorized rule)."""
    from ..ops._saved import Saved
    from ..ops.shape import stack

    if any(isinstance(v, Saved) for v in kw.values()):  # one forward's saved arrays: B calls would mix them
        unbatched(prim, args, kw, L, B)

    def pick(a: Any, i: int) -> Any:
        if at(a, L):
            return a.value[i]
        if isinstance(a, (tuple, list)) and any(at(b, L) for b in a):
            return type(a)(pick(b, i) for b in a)
        if hasattr(a, "for_example"):  # a custom_vjp call: its output and residuals, example i's part of them
            return a.for_example(lambda b: pick(b, i))
        return a

    # each call is one example's, unbatched: level L is hidden from what it runs (a custom rule calling jvp)
    token = _state._LEVELS.set(tuple(lv for lv in _state._LEVELS.get() if lv != L))
    try:
        outs = [prim(*[pick(a, i) for a in args], **{k: pick(v, i) for k, v in kw.items()}) for i in range(B)]
    finally:
        _state._LEVELS.reset(token)
    if prim.n_outputs > 1:  # one batched value per output
        return tuple(Batched(stack([o[k] for o in outs]), L) for k in range(prim.n_outputs))
    return Batched(stack(outs), L)


# -- declarations ------------------------------------------------------------------------------------------
KIND_RULES: dict[str, Rule] = {"elementwise": elementwise, "reduction": reduction, "loop": loop,
                               "linalg": stacked_linalg, "unbatched": unbatched}
SPECIAL: dict[str, tuple[str, Rule]] = {
    "reshape": ("shape", reshape),
    "transpose": ("shape", transpose),
    "broadcast_to": ("shape", broadcast_to),
    "concatenate": ("shape", concatenate),
    "getitem": ("shape", getitem),
    "matmul": ("contraction", matmul),
    "einsum": ("contraction", einsum),
    "solve": ("linalg", solve),
    "nn.linear": ("contraction", linear),
    "nn.layer_norm": ("reduction", normalization),
    "nn.rms_norm": ("reduction", normalization),
    "nn.scaled_dot_product_attention": ("contraction", attention),
    "nn.qkv_attention": ("contraction", packed_attention),
    "nn.rope": ("elementwise", elementwise),  # the batch axis leads; the tables broadcast over it
    "nn.conv": ("contraction", convolution),
    "nn.conv_input_grad": ("contraction", convolution),
    "nn.conv_weight_grad": ("contraction", convolution),
}
ELEMENTWISE = (
    "abs add arccos arccosh arcsin arcsinh arctan arctan2 arctanh astype cbrt ceil clip cos cosh divide erf exp "
    "exp2 expm1 floor hypot identity ldexp log log10 log1p log2 logaddexp maximum minimum multiply negative power "
    "reciprocal relu round sigmoid sign sin sinc sinh sqrt square subtract tan tanh trunc where masked_fill "
    "nn.gelu nn.gelu_tanh nn.silu nn.binary_cross_entropy_with_logits nn.binary_cross_entropy "
    "nn.binary_cross_entropy_gradient "
    "gammaln gamma erfc erfinv erfcinv logit ndtr log_ndtr ndtri xlogy xlog1py polygamma digamma real imag conjugate "
    "to_device"
).split()
REDUCTIONS = "sum mean max min prod logsumexp softmax log_softmax cumsum cumprod norm2 nn.masked_softmax".split()
STACKED_LINALG = "inv det slogdet cholesky eigh svd qr eig pinv_constant_rank matrix_exp lu_unpivoted".split()
LOOPED = ("scatter_add", "nn.cross_entropy")
UNBATCHED: tuple[str, ...] = ()  # ops that raise a clear error under vmap (none today)

KINDS: dict[str, str] = {}
RULES: dict[str, Rule] = {}


def declare(kind: str, *names: str, rule: Rule | None = None) -> None:
    """Declare how primitives batch: a kind (its rule) or a kind with a rule of its own."""
    for name in names:
        KINDS[name] = kind
        RULES[name] = rule or KIND_RULES[kind]


declare("elementwise", *ELEMENTWISE)
declare("reduction", *REDUCTIONS)
declare("linalg", *STACKED_LINALG)
declare("loop", *LOOPED)
declare("unbatched", *UNBATCHED)
for _name, (_kind, _rule) in SPECIAL.items():
    declare(_kind, _name, rule=_rule)


def _declared_rule(prim: Primitive) -> Rule | None:
    """An op declared elementwise (ops/declare.py) batches as one, with no line here."""
    for decl in DECLARATIONS.values():
        if decl.primitive is prim and decl.kind == "elementwise":
            return elementwise
    return None


def table() -> dict[str, str]:
    """How each registered primitive batches under ``vmap`` (``"none"``: it raises inside vmap)."""
    declared = {d.primitive.name: "elementwise" for d in DECLARATIONS.values()
                if d.primitive is not None and d.kind == "elementwise"}
    return {name: KINDS.get(name, declared.get(name, "none")) for name in sorted(REGISTRY)}


def dispatch(prim: Primitive, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """The batching hook: run ``prim`` on whole batches by its declared rule."""
    if REGISTRY.get(prim.name) is not prim:  # a user's custom_vjp function: nothing known about its shapes
        rule: Rule | None = loop
    else:
        rule = RULES.get(prim.name) or _declared_rule(prim)
    if rule is None:
        raise NotImplementedError(
            f"vmap: {prim.name} has no batching rule; declare one in chainrule/batching/rules.py "
            f"(or call it outside vmap)"
        )
    kw = kw or {}
    L, B = _top(args, kw)
    return rule(prim, args, kw, L, B)


_state.dispatch = dispatch
