"""PyTorch's keywords on chainrule's NumPy-style functions: ``torch.matmul(input=a, other=b)``, ``out=``.

chainrule's top-level ``matmul``, ``add``, ``exp``... take NumPy's positional arguments. A PyTorch program also
names them (``torch.matmul(input=g, other=x)``, in PyTorch's own tutorials) and writes into an existing tensor
with ``out=`` (``torch.matmul(a, b, out=c)``). Here ``input``/``other`` go to their positions, and ``out=`` copies
the result into ``out`` and returns it, as PyTorch does; like PyTorch, ``out=`` refuses a result that needs a
gradient (the copy cannot carry one), and refuses an ``out`` of another shape (PyTorch would resize it).
``torch.add`` also takes ``alpha=`` (``input + alpha * other``).

Example:
    >>> import chainrule as cr
    >>> a, c = cr.tensor([[1.0, 2.0]]), cr.zeros(1, 1)
    >>> cr.matmul(input=a, other=a.T).tolist(), cr.matmul(a, a.T, out=c) is c, c.tolist()
    ([[5.0]], True, [[5.0]])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ...core.state import is_grad_enabled, no_grad
from ...tensor import Tensor
from .arithmetic import div
from .common import scaled

# the top-level functions that take PyTorch's torch.<name>(input, *, out=) / torch.<name>(input, other, *, out=)
# (not relu: torch.relu has no out=, and cr.relu stays the declared function nn.functional.relu is)
UNARY = (
    "exp", "log", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt", "abs", "sigmoid", "floor", "ceil", "sign",
    "square", "exp2", "log2", "log10", "log1p", "expm1", "reciprocal", "sinh", "cosh", "erf", "trunc",
)
BINARY = ("matmul", "add", "maximum", "minimum", "fmax", "fmin", "dot", "outer", "inner", "hypot", "remainder",
          "fmod", "logaddexp", "kron", "divide")


def with_torch_keywords(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` (NumPy's positional spelling) that also takes PyTorch's ``input=``, ``other=`` and ``out=``."""
    params = ("input", "other") if name in BINARY else ("input",)

    @functools.wraps(fn)
    def call(*args: Any, **kw: Any) -> Any:
        if not kw:
            return fn(*args)
        out = kw.pop("out", None)
        rounding = kw.pop("rounding_mode", None) if name == "divide" else None  # torch.divide(a, b, rounding_mode=)
        alpha = kw.pop("alpha", 1) if name == "add" else 1  # torch.add(input, other, alpha=2): input + 2 * other
        args = _positional(name, params, args, kw)
        if alpha != 1:
            args = (args[0], scaled(args[1], alpha))
        result = fn(*args) if rounding is None else div(*args, rounding_mode=rounding)
        return result if out is None else write_out(name, result, out)

    return call


def _positional(name: str, params: tuple[str, ...], args: tuple[Any, ...], kw: dict[str, Any]) -> tuple[Any, ...]:
    placed = list(args)
    for param in params[len(args):]:
        if param not in kw:
            raise TypeError(f"{name}() missing the argument {param!r}; it takes {', '.join(params)} (and out=)")
        placed.append(kw.pop(param))
    if kw:
        taken = [k for k in kw if k in params]
        why = f"got {taken} both by position and by name" if taken else f"got unexpected keyword(s) {sorted(kw)}"
        raise TypeError(f"{name}(): {why}; it takes {', '.join(params)} (and out=)")
    return tuple(placed)


def write_out(name: str, result: Any, out: Any) -> Any:
    """PyTorch's ``out=``: ``result`` copied into the Tensor ``out``, which is returned."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): out= must be a Tensor, got {type(out).__name__}")
    if is_grad_enabled() and (getattr(result, "requires_grad", False) or out.requires_grad):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, but one of the "
            f"arguments requires grad; drop out= (y = {name}(...)) or call it under no_grad()")
    shape = tuple(getattr(result, "shape", ()))
    if tuple(out.shape) != shape:
        raise ValueError(f"{name}(): out= has shape {tuple(out.shape)} but the result has shape {shape}; "
                         f"pass an out of shape {shape} (chainrule does not resize out as PyTorch does)")
    with no_grad():
        out.copy_(result)
    return out


# PyTorch's names for NumPy's keywords of the same meaning (torch.flip(t, dims=...), torch.linalg.norm(keepdim=))
RENAMED = {
    "flip": {"dims": "axis"}, "diagflat": {"offset": "k"}, "tensordot": {"dims": "axes"},
    "trapezoid": {"dim": "axis"}, "cross": {"dim": "axis"}, "cov": {"correction": "ddof"},
    "tril": {"diagonal": "k"}, "triu": {"diagonal": "k"}, "roll": {"shifts": "shift", "dims": "axis"},
}


def with_renamed_keywords(fn: Callable[..., Any], name: str, renames: dict[str, str]) -> Callable[..., Any]:
    """``fn`` that also takes PyTorch's names for its keywords (``renames``: PyTorch's name to NumPy's).

    Example:
        >>> import chainrule as cr
        >>> cr.flip(cr.tensor([[1.0, 2.0]]), dims=(1,)).tolist()
        [[2.0, 1.0]]
    """

    @functools.wraps(fn)
    def call(*args: Any, **kw: Any) -> Any:
        for torch_name, numpy_name in renames.items():
            if torch_name in kw:
                if numpy_name in kw:
                    raise TypeError(f"{name}(): got both {numpy_name}= and {torch_name}= (PyTorch's name); pass one")
                kw[numpy_name] = kw.pop(torch_name)
        return fn(*args, **kw)

    return call
