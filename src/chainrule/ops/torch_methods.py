"""PyTorch's spellings of Tensor methods: ``dim=``/``keepdim=``, ``view``, ``unsqueeze``, ``permute``, ...

The rule: a method name that ndarray also has keeps NumPy's meaning when called NumPy's
way (``t.sum(axis=1)``, ``t.std()``, ``t.repeat(3)``); called with PyTorch's keywords
(``dim=``, ``keepdim=``) it has PyTorch's meaning, including where the two libraries
differ: ``t.max(dim=1)`` returns ``(values, indices)`` and ``t.std(dim=1)`` is the unbiased
(``correction=1``) estimate, as in PyTorch. Names only PyTorch has (``view``, ``unsqueeze``,
``permute``, ``clamp``, ...) have PyTorch's meaning (``masked_fill`` is in :mod:`chainrule.ops.masking`).

Example:
    >>> import chainrule as cr
    >>> t = cr.Tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> t.sum(dim=1, keepdim=True).shape
    (2, 1)
    >>> t.max(dim=1).indices
    Tensor([1, 0])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..tensor import Tensor
from . import arrays as A
from . import elementwise as E
from . import reductions as R
from . import shape as S


def resolve_dim(name: str, axis: Any, dim: Any, keepdims: Any = False, keepdim: Any = None) -> tuple[Any, bool]:
    """``axis``/``keepdims`` from either spelling (NumPy's, or PyTorch's ``dim``/``keepdim``); not both."""
    if dim is not None:
        if axis is not None:
            raise TypeError(
                f"{name}: got both axis={axis!r} and dim={dim!r}; pass one (dim is PyTorch's name for axis)"
            )
        axis = dim
    if keepdim is not None:
        if keepdims:
            raise TypeError(f"{name}: got both keepdims and keepdim; pass one (keepdim is PyTorch's name)")
        keepdims = keepdim
    return axis, bool(keepdims)


class ValuesIndices(NamedTuple):
    """PyTorch's ``(values, indices)`` result of ``max(dim=...)`` and ``min(dim=...)``."""

    values: Any
    indices: Any


def reduction(fn: Any) -> Any:
    """A reduction method taking ``axis``/``keepdims`` or ``dim``/``keepdim``."""

    def method(self: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: Any = None,
               **kw: Any) -> Any:
        axis, keepdims = resolve_dim(fn.__name__, axis, dim, keepdims, keepdim)
        return fn(self, axis=axis, keepdims=keepdims, **kw)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def extreme(fn: Any, arg: Any) -> Any:
    """``max``/``min``: NumPy's meaning with ``axis``; with ``dim``, PyTorch's ``(values, indices)``."""

    def method(self: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: Any = None,
               **kw: Any) -> Any:
        if dim is None:
            axis, keepdims = resolve_dim(fn.__name__, axis, None, keepdims, keepdim)
            return fn(self, axis=axis, keepdims=keepdims, **kw)
        axis, keepdims = resolve_dim(fn.__name__, axis, dim, keepdims, keepdim)
        if kw:
            raise TypeError(f"{fn.__name__}(dim=...): unexpected arguments {sorted(kw)}")
        # PyTorch's gradient goes to the returned index only (not shared among ties, as amax does)
        kept = np.asarray(arg(self.data, axis=axis, keepdims=True))
        values = S.take_along_axis(self, kept, axis)
        if not keepdims:
            values = S.squeeze(values, axis=axis)
        indices = kept if keepdims else np.squeeze(kept, axis=axis)
        return ValuesIndices(values, Tensor._wrap(np.asarray(indices)))

    method.__name__ = fn.__name__
    method.__doc__ = (fn.__doc__ or "") + " With ``dim=`` (PyTorch's spelling): a ``(values, indices)`` pair."
    return method


def spread(fn: Any) -> Any:
    """``var``/``std``: NumPy's ``ddof`` (0) with ``axis``; PyTorch's ``correction`` (1) with ``dim``."""

    def method(self: Tensor, axis: Any = None, ddof: Any = None, keepdims: bool = False, *, dim: Any = None,
               keepdim: Any = None, unbiased: Any = None, correction: Any = None, **kw: Any) -> Any:
        torch_style = dim is not None or keepdim is not None or unbiased is not None or correction is not None
        axis, keepdims = resolve_dim(fn.__name__, axis, dim, keepdims, keepdim)
        given = [n for n, v in (("ddof", ddof), ("unbiased", unbiased), ("correction", correction)) if v is not None]
        if len(given) > 1:
            raise TypeError(f"{fn.__name__}: pass one of ddof, unbiased and correction, got {' and '.join(given)}")
        if correction is not None:
            ddof = correction
        elif unbiased is not None:
            ddof = 1 if unbiased else 0
        elif ddof is None:
            ddof = 1 if torch_style else 0
        return fn(self, axis=axis, ddof=ddof, keepdims=keepdims, **kw)

    method.__name__ = fn.__name__
    method.__doc__ = (fn.__doc__ or "") + " With ``dim=`` (PyTorch's spelling) the default is PyTorch's unbiased one."
    return method


def with_dim(fn: Any, name: str, default: Any = None) -> Any:
    """A method whose one axis argument may be spelled ``dim``."""

    def method(self: Tensor, axis: Any = default, *args: Any, dim: Any = None, **kw: Any) -> Any:
        if dim is not None:
            if axis is not default:
                raise TypeError(f"{name}: got both axis={axis!r} and dim={dim!r}; pass one")
            axis = dim
        return fn(self, axis, *args, **kw)

    method.__name__ = name
    return method


def _value_method(np_fn: Any, name: str) -> Any:
    def method(self: Tensor, axis: Any = None, keepdims: bool = False, *, dim: Any = None, keepdim: Any = None,
               **kw: Any) -> Any:
        axis, keepdims = resolve_dim(name, axis, dim, keepdims, keepdim)
        return np_fn(self.data, axis=axis, keepdims=keepdims, **kw)

    method.__name__ = name
    return method


def _shape_args(shape: tuple[Any, ...]) -> Any:
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list, np.ndarray)) else shape


def view(self: Tensor, *shape: Any) -> Any:
    """PyTorch's ``view``: the same values in another shape (``-1`` infers one size); as reshape."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
        raise TypeError(f"view: expected sizes (view(2, 3) or view((2, 3))), got {shape[0]!r}; use .astype(dtype)")
    return S.reshape(self, _shape_args(shape))


def unsqueeze(self: Tensor, dim: int) -> Any:
    """PyTorch's ``unsqueeze``: a new axis of size 1 at ``dim``."""
    return S.expand_dims(self, dim)


def permute(self: Tensor, *dims: Any) -> Any:
    """PyTorch's ``permute``: reorder the axes (``permute(2, 0, 1)``)."""
    dims = _shape_args(dims)
    if len(dims) != self.ndim:
        raise ValueError(f"permute: got {len(dims)} dims {tuple(dims)} for a Tensor of {self.ndim} dimensions")
    return S.transpose(self, tuple(dims))


def transpose(self: Tensor, *axes: Any, dim0: Any = None, dim1: Any = None) -> Any:
    """NumPy's ``transpose(*axes)`` (a permutation); two axes of a Tensor that is not 2-D swap them (PyTorch's)."""
    if dim0 is not None or dim1 is not None:
        axes = (dim0, dim1)
    if not axes:
        return S.transpose(self, None)
    if len(axes) != 2:  # one sequence, or as many axes as dimensions: NumPy's permutation
        return S.transpose(self, tuple(_shape_args(axes)))
    if self.ndim != 2:  # NumPy would need self.ndim axes: PyTorch's swap
        return S.swapaxes(self, axes[0], axes[1])
    if [int(a) % 2 for a in axes] == [0, 1]:
        raise ValueError(
            "transpose(0, 1) of a 2-D Tensor is the identity in NumPy but the transpose in PyTorch; "
            "say which: t.T, t.t() or t.swapaxes(0, 1) for the transpose, t itself for the identity"
        )
    return S.transpose(self, tuple(axes))


def t(self: Tensor) -> Any:
    """PyTorch's ``t()``: the transpose of a matrix (a 0-d or 1-d Tensor is returned as it is)."""
    if self.ndim > 2:
        raise ValueError(f"t(): expects a Tensor of at most 2 dimensions, got {self.ndim}; use .transpose(d0, d1)")
    return S.transpose(self) if self.ndim == 2 else self


def expand(self: Tensor, *sizes: Any) -> Any:
    """PyTorch's ``expand``: broadcast to ``sizes`` (``-1`` keeps a size)."""
    sizes = _shape_args(sizes)
    lead = len(sizes) - self.ndim
    if lead < 0:
        raise ValueError(f"expand: {len(sizes)} sizes {tuple(sizes)} for a Tensor of {self.ndim} dimensions")
    shape = tuple(self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes))
    return S.broadcast_to(self, shape)


def flatten(self: Tensor, start_dim: Any = 0, end_dim: int = -1) -> Any:
    """All axes (or ``start_dim`` to ``end_dim``, PyTorch's) merged into one; ``flatten('C')`` as ndarray's."""
    if isinstance(start_dim, str):
        if start_dim not in ("C", "A", "K"):
            raise ValueError(f"flatten: order {start_dim!r} is not supported; only 'C'")
        start_dim = 0
    nd = max(self.ndim, 1)
    lo, hi = start_dim % nd, end_dim % nd
    if self.ndim == 0:
        return S.reshape(self, (1,))
    shape = self.shape[:lo] + (-1,) + self.shape[hi + 1:]
    return S.reshape(self, shape)


def clamp(self: Tensor, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """PyTorch's ``clamp``: limit values to [min, max] (either may be None)."""
    if min is None and max is None:
        raise ValueError("clamp: give min, max or both")
    return E.clip(self, min, max)


def norm(self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Any:
    """PyTorch's ``norm``: the ``p``-norm of all entries (``dim=None``) or along ``dim``."""
    from .. import linalg

    order = 2 if p in ("fro", 2, 2.0) else p
    if dim is None:
        out = linalg.norm(S.reshape(self, (-1,)), ord=order)
        return S.reshape(out, (1,) * self.ndim) if keepdim else out
    if isinstance(dim, (tuple, list)):
        if order != 2:
            raise ValueError(f"norm: p={p!r} over several dims is not supported; use p='fro' (or 2)")
        return _vector_norm(self, tuple(dim), keepdim)
    return linalg.norm(self, ord=order, axis=dim, keepdims=keepdim)


def _vector_norm(self: Tensor, dim: Any, keepdim: bool) -> Any:
    from .. import linalg

    moved = S.moveaxis(self, tuple(dim), tuple(range(-len(dim), 0)))
    flat = S.reshape(moved, moved.shape[: moved.ndim - len(dim)] + (-1,))
    out = linalg.norm(flat, ord=2, axis=-1)
    if keepdim:
        shape = tuple(1 if i in {d % self.ndim for d in dim} else n for i, n in enumerate(self.shape))
        out = S.reshape(out, shape)
    return out


_FLOAT_NAMES = {"float32": np.float32, "float64": np.float64, "float": np.float32, "double": np.float64,
                "float16": np.float16, "half": np.float16}


def _dtype_of(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, str):
        name = x.removeprefix("torch.")
        if name in _FLOAT_NAMES:
            return np.dtype(_FLOAT_NAMES[name])
        return np.dtype(name)
    return np.dtype(x)


def to(self: Tensor, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False, **kw: Any) -> Any:
    """PyTorch's ``to``: ``to(dtype)``, ``to("cpu")``, ``to(other_tensor)``; chainrule runs on the CPU only."""
    if kw:
        raise TypeError(f"to: chainrule does not support the keyword(s) {sorted(kw)} of Tensor.to")
    for a in args:
        if isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda", "mps", "xpu", "meta") or _is_device(a):
            device = a
        else:
            dtype = a
    if device is not None and str(device) != "cpu":
        raise ValueError(f"to: chainrule runs on the CPU (NumPy) only; device {str(device)!r} is not available")
    if dtype is None:
        return S.copy(self) if copy else self
    dt = _dtype_of(dtype)
    if dt == self.dtype:
        return S.copy(self) if copy else self
    return S.astype(self, dt)


def _is_device(a: Any) -> bool:
    return type(a).__name__ == "device"


def cuda(self: Tensor, *args: Any, **kw: Any) -> Any:
    """Not available: chainrule runs on the CPU (NumPy) only."""
    raise RuntimeError("cuda(): chainrule runs on the CPU (NumPy) only; there is no GPU to move the Tensor to")


def _order(data: np.ndarray, axis: Any, descending: bool) -> np.ndarray:
    """Indices of a stable sort (equal entries keep their order), ascending or descending."""
    if descending:  # negating keeps ties in order, as PyTorch's stable descending sort
        data = -(data if data.dtype.kind in "fi" else data.astype(np.int64))
    return np.argsort(data, axis=axis, kind="stable")


def torch_sort(self: Tensor, axis: Any = -1, descending: bool = False) -> ValuesIndices:
    """PyTorch's ``sort(dim, descending)``: the sorted values (differentiable) and their indices."""
    idx = _order(self.data, axis, descending)
    return ValuesIndices(S.take_along_axis(self, idx, axis), Tensor._wrap(idx))


def torch_argsort(self: Tensor, axis: Any = -1, kind: Any = None, order: Any = None, *, dim: Any = None,
                  descending: bool = False, stable: Any = None) -> np.ndarray:
    """Indices that sort the values (``axis`` or PyTorch's ``dim``, optionally ``descending``)."""
    axis, _ = resolve_dim("argsort", None if axis == -1 and dim is not None else axis, dim)
    if descending:
        return _order(self.data, axis, True)
    return np.argsort(self.data, axis=axis, kind=kind)


def repeat_interleave(self: Tensor, repeats: Any, dim: Any = None) -> Any:
    """PyTorch's ``repeat_interleave``: each entry ``repeats`` times along ``dim`` (NumPy's ``repeat``)."""
    return A.repeat(self, repeats, dim)


def index_select(self: Tensor, dim: int, index: Any) -> Any:
    """PyTorch's ``index_select``: the entries at ``index`` along ``dim``."""
    return S.take(self, index, dim)


TORCH_METHODS: dict[str, Any] = {
    "sum": reduction(R.sum), "mean": reduction(R.mean), "prod": reduction(R.prod),
    "logsumexp": reduction(R.logsumexp),
    "max": extreme(R.max, np.argmax), "min": extreme(R.min, np.argmin),
    "var": spread(R.var), "std": spread(R.std),
    "softmax": with_dim(R.softmax, "softmax", -1), "log_softmax": with_dim(R.log_softmax, "log_softmax", -1),
    "argmax": _value_method(np.argmax, "argmax"), "argmin": _value_method(np.argmin, "argmin"),
    "any": _value_method(np.any, "any"), "all": _value_method(np.all, "all"),
    "squeeze": with_dim(S.squeeze, "squeeze"),
    "view": view, "unsqueeze": unsqueeze, "permute": permute, "transpose": transpose, "t": t,
    "expand": expand, "flatten": flatten, "clamp": clamp,
    "repeat_interleave": repeat_interleave, "index_select": index_select,
    "norm": norm, "to": to, "cuda": cuda,
    "pow": E.power, "clone": lambda self: S.copy(self),
    "contiguous": lambda self: self, "cpu": lambda self: self,
    "numel": lambda self: int(self.data.size), "dim": lambda self: self.data.ndim,
    "float": lambda self: to(self, np.float32), "double": lambda self: to(self, np.float64),
    "long": lambda self: Tensor._wrap(self.data.astype(np.int64)),
}
