"""NumPy functions that answer questions about values: indices, counts, comparisons, predicates.

Their results carry no gradient (they are integers or booleans), so on Tensors they simply
run on the values. Index results come back as NumPy arrays; elementwise boolean results as
Tensors (like ``x > 0``); single answers as Python or NumPy scalars.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import traces
from ._define import raw, wrap_like
from .declare import implements
from .pytorch.dim_args import numpy_methods


def _unwrap(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return type(v)(_unwrap(x) for x in v)
    return raw(v)


def _on_values(np_fn: Any, wrap: bool = False, namespaces: tuple[str, ...] = ("ops",)) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        if traces.open:  # a jit trace checks the values read on replay
            traces.reads_all("a NumPy query", (args, tuple(kwargs.values())))
        out = np_fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        return wrap_like(out, *args) if wrap else out

    fn.__name__ = np_fn.__name__
    fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"numpy.{np_fn.__name__} on the values (not differentiable: the result has no gradient)."
    return implements(np_fn, differentiable=False, namespaces=namespaces)(fn)


# indices and counts: plain NumPy results
argmax = _on_values(np.argmax)
argmin = _on_values(np.argmin)
argsort = _on_values(np.argsort)
argpartition = _on_values(np.argpartition)
argwhere = _on_values(np.argwhere)
nonzero = _on_values(np.nonzero)
flatnonzero = _on_values(np.flatnonzero)
nanargmax = _on_values(np.nanargmax)
nanargmin = _on_values(np.nanargmin)


@implements(np.searchsorted, differentiable=False, namespaces=("ops",))
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *, right: bool = False,
                 out_int32: bool = False) -> Any:
    """``numpy.searchsorted`` on the values (no gradient), and PyTorch's spelling: ``right=True``
    (``side='right'``), ``out_int32=``, and a sorted sequence of several dimensions searched row by row."""
    if traces.open:  # a jit trace checks the values read on replay
        traces.reads_all("a NumPy query", (a, v, sorter))
    side = "right" if right else side
    seq, values, order = raw(a), raw(v), None if sorter is None else np.asarray(raw(sorter))
    if np.ndim(seq) <= 1:
        found = np.searchsorted(seq, values, side, order)
    else:  # PyTorch's: each row of the sequence searched for the same row of values
        seq, values = np.asarray(seq), np.asarray(values)
        if seq.shape[:-1] != values.shape[:-1] or order is not None:
            raise ValueError(f"searchsorted: a sorted sequence of shape {seq.shape} is searched row by row (as PyTorch)"
                             f", so the values need its leading dimensions (and no sorter), got {values.shape}")
        lines = zip(seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1]), strict=True)
        found = np.array([np.searchsorted(s, x, side) for s, x in lines], dtype=np.int64).reshape(values.shape)
    found = np.asarray(found).astype(np.int32) if out_int32 else found
    # torch.searchsorted of Tensors gives a Tensor (so .to(), .float() work); NumPy's, NumPy values
    return found if numpy_methods() else wrap_like(np.asarray(found), a, v)
digitize = _on_values(np.digitize)
count_nonzero = _on_values(np.count_nonzero)
allclose = _on_values(np.allclose)
array_equal = _on_values(np.array_equal)
array_equiv = _on_values(np.array_equiv)
all = _on_values(np.all)  # noqa: A001
any = _on_values(np.any)  # noqa: A001
iscomplexobj = _on_values(np.iscomplexobj)
isrealobj = _on_values(np.isrealobj)
empty_like = _on_values(np.empty_like)
full_like = _on_values(np.full_like)
# elementwise booleans: Tensors, like the comparison operators
isclose = _on_values(np.isclose, wrap=True)
isposinf = _on_values(np.isposinf, wrap=True)
isneginf = _on_values(np.isneginf, wrap=True)
isreal = _on_values(np.isreal, wrap=True)
iscomplex = _on_values(np.iscomplex, wrap=True)


@implements(np.linalg.matrix_rank, differentiable=False, namespaces=())  # public as chainrule.linalg.matrix_rank
def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None, atol: Any = None) -> Any:  # noqa: N803
    """``numpy.linalg.matrix_rank`` on the values (no gradient); PyTorch's ``atol=`` (with ``rtol=``: singular
    values above ``max(atol, rtol * largest)`` count)."""
    if traces.open:  # a jit trace checks the values read on replay
        traces.reads_all("a NumPy query", (A, tol, rtol, atol))
    values = np.asarray(raw(A))
    if atol is not None:
        if tol is not None:
            raise TypeError("linalg.matrix_rank: got both tol= and atol= (PyTorch's name); pass one")
        if rtol is not None:  # PyTorch's rule for both
            largest = np.linalg.svd(values, compute_uv=False, hermitian=hermitian).max(axis=-1, initial=0.0)
            tol, rtol = np.maximum(atol, rtol * largest), None
        else:
            tol = atol
    return np.linalg.matrix_rank(values, tol, hermitian, rtol=rtol)
