"""Forward-mode transforms: ``jvp`` and ``linearize``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autodiff import batch_levels as _batching
from ..core import pytree as _pytree
from ..core import state
from ..core.device import as_array
from ..ops.pytorch.dim_args import numpy_methods_for
from ..tensor import Tensor
from ._common import (
    _as_array,
    _callers_arrays,
    _check_leaves,
    _float,
    _input,
    _is_float0,
    _lifted,
    _name,
    _output,
    _traced,
    _transform,
    with_aux,
)


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> Any:
    """Forward mode: ``(f(*primals), J @ tangents)`` in one pass (``has_aux=True``: ``f`` returns
    ``(output, aux)`` and the result is ``(output, tangent, aux)``, as JAX's).

    Example:
        >>> import chainrule as cr, numpy as np
        >>> cr.jvp(np.sin, (0.0,), (1.0,))
        (0.0, 1.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: 'primals' and 'tangents' must be tuples (one entry per argument of f)")
    if has_aux:
        (out, tangent), aux = with_aux("jvp", lambda g: lambda *p: jvp(g, p, tangents), f)(*primals)
        return out, tangent, aux
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    if _batching.levels():
        return _lifted().jvp(f, primals, tangents)
    like = primals[0] if len(primals) == 1 else None
    with _transform(), numpy_methods_for(primals):
        with state.new_level() as level:
            args = []
            for p, t in zip(primals, tangents):
                p_leaves, p_def = _pytree.flatten(p)
                t_leaves, t_def = _pytree.flatten(t)
                if len(p_leaves) != len(t_leaves) or not _pytree.same_structure(p_def, t_def):
                    raise ValueError(
                        f"jvp: each tangent must have the same structure as its primal, got a tangent "
                        f"{_pytree.describe(t_def)} for a primal {_pytree.describe(p_def)}")
                duals = [_dual(pl, tl, level) for pl, tl in zip(p_leaves, t_leaves)]
                args.append(_pytree.unflatten(p_def, duals))
            out = f(*args)
            leaves, treedef = _pytree.flatten(out)
            _check_leaves(leaves, out, _name.get("jvp"))
            tans = [o._tangents.get(level) if isinstance(o, Tensor) and o._tangents else None for o in leaves]
        # the level is closed: outputs are traced only by outer transforms now
        given = _callers_arrays(primals, tangents)
        prim_out = [_output(o, like, given) for o in leaves]
        tan_out = [
            _output(np.zeros_like(_float(_as_array(o, "jvp"))) if t is None else t, like, given)
            for o, t in zip(leaves, tans)
        ]
    return _pytree.unflatten(treedef, prim_out), _pytree.unflatten(treedef, tan_out)


def _dual(primal: Any, tangent: Any, level: int) -> Any:
    if _is_float0(tangent):
        # JAX's tangent for an integer input: none; the primal goes in as it is
        if np.shape(tangent) != np.shape(_as_array(primal, "jvp")):
            raise ValueError(f"jvp: float0 tangent of shape {np.shape(tangent)} for a primal of shape "
                             f"{np.shape(_as_array(primal, 'jvp'))}")
        return primal
    x = _input(primal, _name.get("jvp"), reverse=False)
    t = tangent if _traced(tangent) else _as_array(tangent, "jvp")
    if np.shape(t._data if isinstance(t, Tensor) else t) != x.shape:
        raise ValueError(f"jvp: tangent of shape {np.shape(t)} for a primal of shape {x.shape}")
    if np.iscomplexobj(t._data if isinstance(t, Tensor) else t) and x._data.dtype.kind != "c":
        raise TypeError(
            f"jvp: a complex tangent for a real primal ({x._data.dtype}); make the primal complex "
            "(e.g. x.astype(complex)) or pass a real tangent"
        )
    if isinstance(t, Tensor):
        t = t if t._data.dtype == x._data.dtype else t.astype(x._data.dtype)
    else:
        t = as_array(t, dtype=x._data.dtype)
    x._tangents = dict(x._tangents or {})
    x._tangents[level] = t
    return x


def linearize(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``.

    With ``has_aux=True`` (as JAX), ``f`` returns ``(output, aux)`` and the result is ``(output, f_jvp, aux)``.

    Example:
        >>> import chainrule as cr
        >>> out, f_jvp, aux = cr.linearize(lambda x: (x ** 2, x > 0), 3.0, has_aux=True)
        >>> out, f_jvp(1.0), aux
        (9.0, 6.0, True)
    """
    if has_aux:
        result = f(*primals)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"linearize: with has_aux=True the function must return a pair (output, aux), but it "
                            f"returned {type(result).__name__} {result!r:.60}")
        return result[0], lambda *tangents: jvp(f, primals, tangents, has_aux=True)[1], result[1]
    out = f(*primals)
    return out, lambda *tangents: jvp(f, primals, tangents)[1]
