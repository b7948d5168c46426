"""Products that contract axes: matmul, dot, outer, tensordot, einsum."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.batch_levels import is_value
from ..autodiff.primitive import Primitive
from ..core.device import as_array, xp_of
from ..runtime.blas import matmul as blas_matmul
from ._define import is_complex, ndim_of, raw, shape_of
from .declare import bilinear_primitive, implements, op
from .shape import expand_dims, getitem, ravel, reshape, transpose


def _matmul_vjp_a(g: Any, ans: Any, a: Any, b: Any) -> Any:
    if np.ndim(b) == 1:
        return g[..., None] * b if np.ndim(a) > 1 else g * b
    if np.ndim(a) == 1:
        return (b @ g[..., None])[..., 0]
    return blas_matmul(g, b.swapaxes(-1, -2))


def _matmul_vjp_b(g: Any, ans: Any, a: Any, b: Any) -> Any:
    if np.ndim(a) == 1:
        return a[:, None] * g[..., None, :] if np.ndim(b) > 1 else a * g
    if np.ndim(b) == 1:
        return (a.swapaxes(-1, -2) @ g[..., None])[..., 0]
    return blas_matmul(a.swapaxes(-1, -2), g)


# linear in a with b constant and in b with a constant: the transposes alone give both modes
# (products run on the BLAS thread count measured to pay for their size: blas_threads.matmul)
_matmul = bilinear_primitive("matmul", blas_matmul, _matmul_vjp_a, _matmul_vjp_b)


def _check_operand(op: str, name: str, x: Any) -> None:
    """A TypeError naming the argument for None, strings and sequences of non-numbers."""
    bad = x is None or isinstance(x, (str, bytes))
    if not bad and isinstance(x, (list, tuple)):
        bad = as_array(x, dtype=object).size > 0 and as_array(x).dtype.kind not in "biufc"
    if bad:
        raise TypeError(f"{op}: argument '{name}' must be an array, a Tensor or a number, got {type(x).__name__}")


@op(primitive=_matmul, kind="bilinear", numpy=np.matmul, method=("__matmul__", "__rmatmul__", "matmul"),
    cases="none")
def matmul(a: Any, b: Any) -> Any:
    """Matrix product with NumPy's rules (batched over leading axes, 1-D vectors allowed)."""
    _check_operand("matmul", "a", a)
    _check_operand("matmul", "b", b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise ValueError(f"matmul: operands must be at least 1-D, got shapes {sa} and {sb}; use * for scalars")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ValueError(
            f"matmul: shapes {sa} and {sb} do not align: the last axis of the first ({ka}) must equal "
            f"the {'only' if len(sb) == 1 else 'second-to-last'} axis of the second ({kb}); "
            "transpose or reshape one of them"
        )
    return _matmul(a, b)


@op(numpy=np.dot, method=True, cases="none")
def dot(a: Any, b: Any) -> Any:
    """NumPy's dot: products of scalars, vectors, matrices and N-d arrays."""
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return a * b
    if ndim_of(b) <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([-1], [-2]))


@implements(np.vdot)
def vdot(a: Any, b: Any) -> Any:
    """Dot product of the flattened arrays, the first one conjugated (as numpy.vdot)."""
    return dot(np.conjugate(ravel(a)) if is_complex(a) else ravel(a), ravel(b))


@implements(np.inner)
def inner(a: Any, b: Any) -> Any:
    """Sum product over the last axes."""
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return a * b
    return tensordot(a, b, axes=([-1], [-1]))


@implements(np.outer)
def outer(a: Any, b: Any) -> Any:
    """Outer product of the flattened arrays."""
    return expand_dims(ravel(a), 1) * expand_dims(ravel(b), 0)


@implements(np.tensordot)
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Sum products over the given axes, as numpy.tensordot (built from transpose and matmul)."""
    sa, sb = shape_of(a), shape_of(b)
    if isinstance(axes, (int, np.integer)):
        ax_a = list(range(len(sa) - int(axes), len(sa)))
        ax_b = list(range(int(axes)))
    else:
        ax_a, ax_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
        ax_a = [x % len(sa) for x in ax_a]
        ax_b = [x % len(sb) for x in ax_b]
    if [sa[i] for i in ax_a] != [sb[i] for i in ax_b]:
        raise ValueError(f"tensordot: shapes {sa} and {sb} do not match on axes {ax_a} and {ax_b}")
    free_a = [i for i in range(len(sa)) if i not in ax_a]
    free_b = [i for i in range(len(sb)) if i not in ax_b]
    k = int(np.prod([sa[i] for i in ax_a]))
    a2 = reshape(transpose(a, free_a + ax_a), (-1, k))
    b2 = reshape(transpose(b, ax_b + free_b), (k, -1))
    return reshape(matmul(a2, b2), tuple(sa[i] for i in free_a) + tuple(sb[i] for i in free_b))


# -- einsum -----------------------------------------------------------------------------------
def _parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """Explicit-form subscripts with '...' replaced by fresh capital letters."""
    subscripts = subscripts.replace(" ", "")
    lhs, _, rhs = subscripts.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"einsum: subscripts '{subscripts}' name {len(inputs)} operands, got {len(shapes)}")
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts]
    ell_len = max((len(s) - len(sub.replace("...", "")) for sub, s in zip(inputs, shapes) if "..." in sub), default=0)
    ell = "".join(spare[:ell_len])
    fixed = []
    for sub, s in zip(inputs, shapes):
        if "..." in sub:
            n = len(s) - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[ell_len - n:])
        if len(sub) != len(s):
            raise ValueError(f"einsum: operand with subscripts '{sub}' has shape {s} ({len(s)} axes)")
        fixed.append(sub)
    if "->" in subscripts:
        out = rhs.replace("...", ell)
    else:
        letters = "".join(fixed)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    return fixed, out


def _einsum_vjp(argnum: int, g: Any, ans: Any, *ops: Any, subscripts: str) -> Any:
    ins, out = _parse(subscripts, [np.shape(o) for o in ops])
    target = ins[argnum]
    shape = np.shape(ops[argnum])
    size = {c: shape[i] for i, c in enumerate(target)}
    unique = "".join(dict.fromkeys(target))  # a letter repeated in one operand (a diagonal) once
    others = [(s, o) for i, (s, o) in enumerate(zip(ins, ops, strict=True)) if i != argnum]
    known = set(out).union(*[set(s) for s, _ in others])
    kept = "".join(c for c in unique if c in known)
    spec = ",".join([out] + [s for s, _ in others]) + "->" + kept
    grad = einsum(spec, g, *[o for _, o in others])
    if kept != unique:  # letters only in this operand: the gradient is constant along them
        grad = np.broadcast_to(
            grad.reshape(tuple(size[c] if c in known else 1 for c in unique)), tuple(size[c] for c in unique)
        )
    if unique != target:  # put the gradient on the diagonal: one identity matrix per repeat
        used = set(subscripts) | set("".join(ins)) | set(out)
        fresh = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used)
        renamed, deltas, seen = [], [], set()
        for c in target:
            if c in seen:
                d = next(fresh)
                renamed.append(d)
                deltas.append(c + d)
            else:
                seen.add(c)
                renamed.append(c)
        eyes = [np.eye(size[d[0]], dtype=np.result_type(raw(grad))) for d in deltas]
        grad = einsum(",".join([unique, *deltas]) + "->" + "".join(renamed), grad, *eyes)
    return grad


def _einsum_jvp(argnum: int, t: Any, ans: Any, *ops: Any, subscripts: str) -> Any:
    return einsum(subscripts, *[t if i == argnum else o for i, o in enumerate(ops)])


def _einsum_fn(*ops: Any, subscripts: str) -> Any:
    ins, out = _parse(subscripts, [np.shape(o) for o in ops])
    return np.einsum(",".join(ins) + "->" + out, *ops, optimize=len(ops) > 2)


_einsum = Primitive("einsum", _einsum_fn)
_einsum.defvjp_argnum(_einsum_vjp)
_einsum.defjvp_argnum(_einsum_jvp)


@implements(np.einsum)
def einsum(subscripts: Any, *operands: Any, **kwargs: Any) -> Any:
    """Einstein summation, as numpy.einsum: string subscripts ('...' allowed) or the sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    Example:
        >>> import chainrule as cr, numpy as np
        >>> x = cr.Tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> np.einsum(x, [0, 1], [1, 0]).tolist()
        [[1.0, 3.0], [2.0, 4.0]]
    """
    if not isinstance(subscripts, str) and operands and isinstance(operands[0], (list, tuple)):
        subscripts, operands = _from_sublists((subscripts, *operands))
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: argument 'subscripts' must be a string, got {type(subscripts).__name__}")
    listed = operands[0] if len(operands) == 1 and isinstance(operands[0], (list, tuple)) and operands[0] else ()
    if listed and all(hasattr(o, "shape") for o in listed) and (
            all(is_value(o) for o in listed) or subscripts.split("->")[0].count(",") + 1 == len(listed)):
        operands = tuple(listed)  # PyTorch's einsum("ij,jk", [a, b]): the operands as one list
    unsupported = sorted(k for k, v in kwargs.items() if k != "optimize" and v is not None)  # optimize: a speed hint
    if unsupported:  # out=, dtype=, casting=, order= would otherwise be silently ignored
        raise TypeError(f"einsum: chainrule does not support the keyword(s) {unsupported} on Tensors")
    _parse(subscripts, [shape_of(o) for o in operands])
    return _einsum(*operands, subscripts=subscripts)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(labels: Any) -> str:
    out = []
    for k in labels:
        if k is Ellipsis:
            out.append("...")
        elif isinstance(k, (int, np.integer)) and 0 <= k < len(_LETTERS):
            out.append(_LETTERS[int(k)])
        else:
            raise ValueError(f"einsum: a sublist holds integers in [0, {len(_LETTERS)}) or Ellipsis, got {k!r}")
    return "".join(out)


def _from_sublists(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """NumPy's sublist form (operand, labels, operand, labels, ..., [output labels]) as a subscripts string."""
    operands, inputs = list(args[0::2][: len(args) // 2]), [_sublist(s) for s in args[1::2][: len(args) // 2]]
    spec = ",".join(inputs)
    if len(args) % 2:
        spec += "->" + _sublist(args[-1])
    return spec, operands


@op(numpy=np.trace, cases="none", method={
    "trace": lambda self, offset=0, axis1=0, axis2=1, dtype=None, out=None: trace(self, offset, axis1, axis2)})
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Sum of a diagonal."""
    sa = shape_of(a)
    n = max(0, min(sa[axis1], sa[axis2] - offset) if offset >= 0 else min(sa[axis1] + offset, sa[axis2]))
    xp = xp_of(raw(a))  # the positions where the values are (the host or a device)
    rows = xp.arange(n) + max(0, -offset)
    cols = xp.arange(n) + max(0, offset)
    moved = transpose(a, [axis1, axis2] + [i for i in range(len(sa)) if i not in (axis1 % len(sa), axis2 % len(sa))])
    return getitem(moved, (rows, cols)).sum(axis=0)



