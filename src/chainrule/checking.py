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

from . import transforms
from .tensor import Tensor


class GradcheckError(AssertionError):
    """A derivative disagreed with finite differences."""


def _value(x: Any) -> np.ndarray:
    arr = np.asarray(x.data if isinstance(x, Tensor) else x)
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
    rng = np.random.default_rng(seed)
    nums = tuple(argnums) if argnums is not None else tuple(i for i, a in enumerate(args) if _is_float(a))
    base = [_value(a) if i in nums else a for i, a in enumerate(args)]
    for mode in modes:
        for _ in range(n_directions):
            _check(f, base, nums, mode, order, 1, eps, rtol, atol, rng)
    return True


def _is_float(a: Any) -> bool:
    if isinstance(a, Tensor):
        return a.data.dtype.kind in "fc"
    return isinstance(a, (float, complex, np.inexact)) or (isinstance(a, np.ndarray) and a.dtype.kind in "fc")


def _call(f: Callable[..., Any], args: list[Any]) -> np.ndarray:
    out = f(*args)
    return _value(out)


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
) -> None:
    out = _call(f, args)
    u = _direction(rng, out)
    vs = {i: _direction(rng, _value(args[i])) for i in nums}

    def shifted(h: float) -> list[Any]:
        return [a + h * vs[i] if i in vs else a for i, a in enumerate(args)]

    expected = float(np.real(np.sum(u * (_call(f, shifted(eps)) - _call(f, shifted(-eps))) / (2 * eps))))

    def directional(*diff_args: Any) -> Any:
        full = list(args)
        for i, a in zip(nums, diff_args):
            full[i] = a
        g = lambda *xs: f(*_merge(full, nums, xs))  # noqa: E731
        if mode == "fwd":
            _, tangent = transforms.jvp(g, tuple(full[i] for i in nums), tuple(vs[i] for i in nums))
            return np.real((tangent * u).sum())
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
            f"gradcheck: order {level} ({mode} mode) for argument(s) {list(nums)} of {getattr(f, '__name__', f)}: "
            f"expected {expected:.10g} (finite differences), got {obtained:.10g}, error {err:.3g} "
            f"(allowed {atol + rtol * abs(expected):.3g})"
        )
    if level < order:
        second = lambda *xs: directional(*xs)  # noqa: E731
        _check(second, [args[i] for i in nums], tuple(range(len(nums))), mode, order, level + 1,
               eps ** 0.75, rtol * 10, atol * 10, rng)


def _merge(full: list[Any], nums: tuple[int, ...], xs: tuple[Any, ...]) -> list[Any]:
    merged = list(full)
    for i, x in zip(nums, xs):
        merged[i] = x
    return merged
