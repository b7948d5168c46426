"""``chainrule.sum(t, dim=1)``, ``chainrule.argmax(t, dim=1)``, ``chainrule.softmax(t, dim=-1)``: PyTorch's spelling.

The functions follow NumPy (``axis=``, ``keepdims=``); a call with PyTorch's ``dim=`` (or ``keepdim=``) on a
Tensor is PyTorch's, so it goes to the Tensor method of the same name, which reads the rest of the call as
PyTorch does (``chainrule.std(t, dim=0)`` is unbiased, as ``torch.std``). On NumPy values, or under a
transform given NumPy values, ``dim`` and ``keepdim`` are NumPy's ``axis`` and ``keepdims``.

``std`` and ``var`` differ in more than the name: ``torch.std(t)`` is unbiased, ``numpy.std`` not. So on a Tensor
(outside a transform given NumPy values) a call without NumPy's keywords (``axis=``, ``ddof=``, ``keepdims=``...)
is PyTorch's: ``chainrule.std(t)`` and ``chainrule.std(t, 0)`` are unbiased, ``chainrule.std(t, ddof=0)`` is NumPy's.

Example:
    >>> import chainrule as cr
    >>> cr.argmax(cr.Tensor([[1.0, 3.0], [4.0, 2.0]]), dim=1)
    Tensor([1, 0])
    >>> cr.sum(cr.Tensor([[1.0, 3.0], [4.0, 2.0]]), dim=0, keepdim=True)
    Tensor([[5., 5.]])
    >>> cr.var(cr.Tensor([1.0, 3.0])), cr.var(cr.Tensor([1.0, 3.0]), ddof=0)
    (Tensor(2.), Tensor(1.))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ...tensor import Tensor
from .dim_args import numpy_methods

# the top-level functions whose Tensor method of the same name takes PyTorch's dim=
NAMES = (
    "sum", "mean", "std", "var", "prod", "cumsum", "cumprod", "argmax", "argmin", "argsort", "sort", "softmax",
    "log_softmax", "logsumexp", "all", "any", "median", "nanmedian", "squeeze", "count_nonzero", "nansum", "nanmean",
    "diff", "quantile", "nonzero", "equal", "nanquantile",
)
# the functions whose PyTorch meaning differs from NumPy's even without dim= (std and var: unbiased; median: the
# lower of the two middle values, and a (values, indices) pair along a dim; sort: the pair; nonzero: index rows),
# with NumPy's keywords: any of them makes the call NumPy's
_NUMPY_KEYWORDS = {
    "std": frozenset({"axis", "ddof", "keepdims", "dtype", "out", "where", "mean"}),
    "var": frozenset({"axis", "ddof", "keepdims", "dtype", "out", "where", "mean"}),
    "median": frozenset({"axis", "out", "overwrite_input", "keepdims"}),
    "nanmedian": frozenset({"axis", "out", "overwrite_input", "keepdims"}),
    "sort": frozenset({"axis", "kind", "order"}),  # torch.sort(t): a (values, indices) pair
    "nonzero": frozenset(),  # torch.nonzero(t): one (n, ndim) Tensor of index rows
    "squeeze": frozenset({"axis"}),  # torch.squeeze(t, 0): a dimension of another size stays (NumPy's raises)
    "equal": frozenset({"out", "where", "casting", "order", "dtype", "subok"}),  # torch.equal(a, b): one bool
    "all": frozenset({"axis", "out", "keepdims", "where"}),  # torch.all(t): a Tensor (uint8 for uint8)
    "any": frozenset({"axis", "out", "keepdims", "where"}),
}


_SORTS = ("sort", "argsort")


def with_torch_dim(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` (NumPy's spelling) that also takes PyTorch's ``dim=`` and ``keepdim=``."""

    @functools.wraps(fn)
    def call(x: Any, *args: Any, **kw: Any) -> Any:
        if (name in _SORTS and isinstance(x, Tensor) and not numpy_methods()
                and (len(args) > 1 and isinstance(args[1], (bool, np.bool_)) or {"descending", "stable"} & set(kw))):
            return getattr(x, name)(*args, **kw)  # torch.argsort(t, 0, True): descending (NumPy's kind is a str)
        if (args and isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool) and isinstance(x, Tensor)
                and x.ndim == 0 and not numpy_methods()):
            return getattr(x, name)(*args, **kw)  # torch.cumsum(t, 0) of a 0-d: 0-d (NumPy's: 1-d, or an AxisError)
        if "dim" not in kw and "keepdim" not in kw:
            numpy_keywords = _NUMPY_KEYWORDS.get(name)
            if (numpy_keywords is not None and isinstance(x, Tensor) and not numpy_methods()
                    and not numpy_keywords & set(kw)):
                return getattr(x, name)(*args, **kw)  # torch.std(t): unbiased; torch.median(t): the lower middle
            return fn(x, *args, **kw)
        if isinstance(x, Tensor) and not numpy_methods():
            return getattr(x, name)(*args, **kw)
        for torch_name, numpy_name in (("dim", "axis"), ("keepdim", "keepdims")):
            if torch_name in kw:
                if numpy_name in kw:
                    raise TypeError(f"{name}: got both {numpy_name}= and {torch_name}= (PyTorch's name); pass one")
                kw[numpy_name] = kw.pop(torch_name)
        return fn(x, *args, **kw)

    return call
