"""``gradcheck``: compare chainrule's derivatives with central finite differences.

Along random directions ``v`` (inputs) and ``u`` (outputs), the number ``u . J v`` is
computed three ways: by finite differences of ``f``, by reverse mode (``u`` pulled back,
dotted with ``v``) and by forward mode (``J v`` pushed forward, dotted with ``u``). For
``order=2`` the same check is applied to the function ``x -> u . J(x) v`` computed in each
mode (reverse over reverse, forward over forward), and so on for higher orders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import transforms
from ..core import pytree as _pytree
from ..scalar import Scalar
from ..tensor import Tensor


class GradcheckError(AssertionError, RuntimeError):
    """A derivative disagreed with finite differences (a RuntimeError too, as PyTorch's GradcheckError)."""


def _value(x: Any) -> np.ndarray:
    arr = np.asarray(x._data if isinstance(x, Tensor) else x)
    return arr.astype(np.result_type(arr, float), copy=False)


def _direction(rng: np.random.Generator, like: Any) -> np.ndarray:
    v = rng.standard_normal(np.shape(like))
    if np.iscomplexobj(like):
        v = v + 1j * rng.standard_normal(np.shape(like))
    return v


def gradcheck(
    f: Callable[..., Any],
    *args: Any,
    modes: Sequence[str] = ("rev", "fwd"),
    order: int = 2,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    n_directions: int = 2,
    seed: int = 0,
    argnums: Sequence[int] | None = None,
) -> bool:
    """Check the derivatives of ``f`` at ``args`` up to ``order``, in each of ``modes``.

    Floating-point arguments (or those in ``argnums``) are differentiated; the others are
    passed through. Returns True, or raises :class:`GradcheckError` naming the argument, the
    mode, the order, the expected and obtained values and the error.

    Complex arguments are perturbed along random complex directions (real and imaginary
    parts both move), and complex outputs are paired with complex ``u`` through
    ``real(u * out)``: that checks the reverse rules as transposes (JAX's convention) and the
    forward rules as real-linear maps, whether or not ``f`` is holomorphic.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> cr.gradcheck(lambda x, y: np.sin(x) * y, np.array([0.3, 1.2]), np.array([2.0, -1.0]))
        True
    """
    for m in modes:
        if m not in ("rev", "fwd"):
            raise ValueError(f"gradcheck: modes must be 'rev' and/or 'fwd', got {m!r}")
    if order < 1:
        raise ValueError(f"gradcheck: order must be >= 1, got {order}")
    name = getattr(f, "__name__", f)
    flat = [_pytree.flatten(a) for a in args]
    for i, (leaves, _) in enumerate(flat):
        if any(isinstance(leaf, Scalar) for leaf in leaves):
            raise TypeError(f"gradcheck: argument {i} of {name} is a Scalar; gradcheck checks functions of arrays, "
                            "numbers and Tensors: pass its float value (s.data) and write f with chainrule "
                            "functions (cr.tanh(x), not x.tanh()) so it also runs on arrays")
    chosen = set(argnums) if argnums is not None else None
    # the differentiated leaves: (argument, leaf) positions, inside tuples, lists and dicts too
    where = [(i, j) for i, (leaves, _) in enumerate(flat) for j, leaf in enumerate(leaves)
             if (i in chosen if chosen is not None else _is_float(leaf))]
    if not where:
        raise ValueError(f"gradcheck: nothing to differentiate in the arguments of {name}: no floating-point array, "
                         "number or Tensor among them (ints are passed through); pass floats, or argnums=")
    arg_nums = sorted({i for i, _ in where})

    def flat_f(*xs: Any) -> Any:
        leaves = [list(lv) for lv, _ in flat]
        for (i, j), x in zip(where, xs):
            leaves[i][j] = x
        try:
            out = f(*[_pytree.unflatten(d, lv) for lv, (_, d) in zip(leaves, flat)])
        except AttributeError as err:
            # f is evaluated on NumPy values for the finite differences: a Scalar-style method (x.tanh(),
            # x.relu()) is not there, and the bare AttributeError did not say why
            if "'numpy." not in str(err):
                raise
            raise TypeError(f"gradcheck: {name} calls a method NumPy values lack ({err}); gradcheck evaluates f on "
                            "arrays for the finite differences: write it with chainrule functions (cr.tanh(x), "
                            "cr.relu(x), not x.tanh()), which run on arrays and Tensors alike") from err
        out_leaves, _ = _pytree.flatten(out)
        if not out_leaves:
            raise TypeError(f"gradcheck: {name} returned {out!r}; it must return an array, a number, a Tensor, "
                            "or a tuple, list or dict of them")
        return out_leaves[0] if len(out_leaves) == 1 and not isinstance(out, (tuple, list, dict)) else tuple(out_leaves)

    flat_f.__name__ = str(name)
    rng = np.random.default_rng(seed)
    base = [_value(flat[i][0][j]) for i, j in where]
    for mode in modes:
        for _ in range(n_directions):
            _check(flat_f, base, tuple(range(len(base))), mode, order, 1, eps, rtol, atol, rng, arg_nums)
    return True


def _is_float(a: Any) -> bool:
    if isinstance(a, Tensor):
        return a._data.dtype.kind in "fc"
    return isinstance(a, (float, complex, np.inexact)) or (isinstance(a, np.ndarray) and a.dtype.kind in "fc")


def _call(f: Callable[..., Any], args: list[Any]) -> Any:
    out = f(*args)
    return tuple(_value(o) for o in out) if isinstance(out, tuple) else _value(out)


def _dot(u: Any, out: Any) -> Any:
    """The pairing of output directions ``u`` with ``out`` (one leaf, or a tuple of leaves)."""
    if isinstance(u, tuple):
        return sum((_dot(a, b) for a, b in zip(u, out)), 0.0)
    return np.real((u * out).sum())


def _check(
    f: Callable[..., Any],
    args: list[Any],
    nums: tuple[int, ...],
    mode: str,
    order: int,
    level: int,
    eps: float,
    rtol: float,
    atol: float,
    rng: np.random.Generator,
    arg_nums: list[int] | None = None,
) -> None:
    out = _call(f, args)
    u = tuple(_direction(rng, o) for o in out) if isinstance(out, tuple) else _direction(rng, out)
    vs = {i: _direction(rng, _value(args[i])) for i in nums}

    def shifted(h: float) -> list[Any]:
        return [a + h * vs[i] if i in vs else a for i, a in enumerate(args)]

    plus, minus = _call(f, shifted(eps)), _call(f, shifted(-eps))
    for moved in (plus, minus):  # a jump in shape is no derivative (NumPy would broadcast the difference)
        if _shapes(moved) != _shapes(out):
            raise GradcheckError(
                f"gradcheck: {getattr(f, '__name__', f)} returns outputs of shapes {_shapes(moved)} when its inputs "
                f"are moved by {eps:g}, {_shapes(out)} at them: it is not differentiable there (PyTorch: expected "
                "`func` to return outputs with the same shape when inputs are perturbed)")
    if isinstance(u, tuple):
        diff: Any = tuple((p - m) / (2 * eps) for p, m in zip(plus, minus))
    else:
        diff = (plus - minus) / (2 * eps)
    expected = float(_dot(u, diff))

    def directional(*diff_args: Any) -> Any:
        full = list(args)
        for i, a in zip(nums, diff_args):
            full[i] = a
        g = lambda *xs: f(*_merge(full, nums, xs))  # noqa: E731
        if mode == "fwd":
            _, tangent = transforms.jvp(g, tuple(full[i] for i in nums), tuple(vs[i] for i in nums))
            return _dot(u, tangent)
        _, pullback = transforms.vjp(g, *[full[i] for i in nums])
        grads = pullback(u)
        total = 0.0
        for i, gr in zip(nums, grads):
            total = total + (gr * vs[i]).sum()
        return np.real(total)

    obtained = float(np.real(_value(directional(*[args[i] for i in nums]))))
    err = abs(obtained - expected)
    if not err <= atol + rtol * abs(expected):
        raise GradcheckError(
            f"gradcheck: order {level} ({mode} mode) for argument(s) {arg_nums or list(nums)} of "
            f"{getattr(f, '__name__', f)}: "
            f"expected {expected:.10g} (finite differences), got {obtained:.10g}, error {err:.3g} "
            f"(allowed {atol + rtol * abs(expected):.3g})"
        )
    if level < order:
        second = lambda *xs: directional(*xs)  # noqa: E731
        _check(second, [args[i] for i in nums], tuple(range(len(nums))), mode, order, level + 1,
               eps ** 0.75, rtol * 10, atol * 10, rng, arg_nums)


def _shapes(out: Any) -> Any:
    return tuple(np.shape(o) for o in out) if isinstance(out, tuple) else np.shape(out)


def _merge(full: list[Any], nums: tuple[int, ...], xs: tuple[Any, ...]) -> list[Any]:
    merged = list(full)
    for i, x in zip(nums, xs):
        merged[i] = x
    return merged
