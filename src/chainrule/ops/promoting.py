"""PyTorch's type promotion for ops with a Tensor operand (``core/promotion.py``'s rule), and which ops follow it.

``promote`` runs at the top of ``apply`` (``autodiff/primitive.py``), before a jit trace or vmap sees the call: it
casts the operands to PyTorch's result dtype with the ``astype`` primitive, so the casts are recorded by a trace,
batched by vmap (the rule reads one example's ndim), carried by forward mode, and reversed by backward (a float32
leaf used with a float64 Tensor gets a float32 gradient, as in PyTorch). Binary ops (and ``where``'s two values)
promote together; the ops that always give floats turn integer and bool inputs into the default dtype, as
``torch.sqrt(torch.arange(3))`` is float32. Operands that are all NumPy values, or any op inside a transform
called on NumPy values (``numpy_methods()``: JAX-style use), keep NumPy's rule (docs/design.md, "Dtypes").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import batch_levels, primitive
from ..autodiff.primitive import REGISTRY
from ..core.defaults import get_default_dtype
from ..core.promotion import result_dtype
from ..tensor import Tensor
from . import elementwise, pointwise  # noqa: F401  (the ops named here are declared there)
from .pytorch import arithmetic  # noqa: F401  (rsqrt)
from .pytorch.dim_args import numpy_methods
from .shape import _astype

BINARY = ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "arctan2", "hypot", "logaddexp")
FLOATING = ("divide", "arctan2", "sqrt", "rsqrt", "cbrt", "reciprocal", "exp", "exp2", "expm1", "log", "log2",
            "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
            "arccosh", "arctanh", "sigmoid", "erf", "sinc", "logsumexp")

_NUMBERS = (bool, int, float, complex)
_INT_NUMBERS = frozenset((bool, int))  # the Python numbers NumPy 2 promotes as PyTorch with arrays of each kind
_FLOAT_NUMBERS = frozenset((bool, int, float))
_ALL_NUMBERS = frozenset(_NUMBERS)


def promote(prim: primitive.Primitive, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``args`` with the operands at ``prim.promotes`` cast to PyTorch's result dtype, or None when there is
    nothing to cast (NumPy's rule gives the same dtype, no Tensor is an operand, or NumPy's rule applies).

    Example:
        >>> import numpy as np, chainrule as cr
        >>> (cr.tensor(np.ones(2, np.float32)) + cr.tensor(np.arange(2))).dtype
        dtype('float32')
    """
    # The common cases first, in one loop: Tensors of one dtype and Python numbers that do not raise its
    # category (x * 0.5, where(mask, x, 0.0)): NumPy's rule gives PyTorch's dtype, nothing to cast
    n = len(args)
    dtype = None
    rank = 0  # the Python numbers seen: 0 bool or int, 1 float, 2 complex
    for i in prim.promotes:
        if i >= n:
            break
        v = args[i]
        c = v.__class__
        if c in _ALL_NUMBERS:
            if c is float:
                rank = rank or 1
            elif c is complex:
                rank = 2
            continue
        if not isinstance(v, Tensor):
            break  # a NumPy value or a vmap's Batched one: the whole rule
        d = v._data.dtype
        if dtype is None:
            dtype = d
        elif d is not dtype:
            break
    else:
        if dtype is None:
            return None  # numbers only
        kind = dtype.kind
        if rank <= 2 if kind == "c" else rank <= 1 if kind == "f" else rank == 0 and not prim.floating:
            return None
    traced = (Tensor, *batch_levels.BATCHED)  # (a vmap's Batched value: set once chainrule.batching is imported)
    picked = [args[i] for i in prim.promotes if i < n]
    if not any(isinstance(v, traced) for v in picked) or numpy_methods():
        return None
    floating = prim.floating
    for v in picked:
        if not (isinstance(v, (*traced, np.ndarray, np.generic)) or v.__class__ in _NUMBERS):
            return None  # not numbers (the op explains its own error)
    target = result_dtype(picked)
    if floating and target.kind in "biu":
        target = get_default_dtype()
    out = list(args)
    changed = False
    for i in prim.promotes:
        if i >= n:
            continue
        v = out[i]
        if v.__class__ in _NUMBERS:
            continue  # a Python number takes the arrays' dtype (NumPy 2's weak scalars)
        if v.dtype != target:
            out[i] = _astype(v, dtype=target) if isinstance(v, traced) else np.asarray(v).astype(target)
            changed = True
    return tuple(out) if changed else None


for _name in BINARY:
    REGISTRY[_name].promotes = (0, 1)
for _name in FLOATING:
    REGISTRY[_name].promotes = REGISTRY[_name].promotes or (0,)
    REGISTRY[_name].floating = True
REGISTRY["where"].promotes = (1, 2)
primitive.PROMOTE = promote
