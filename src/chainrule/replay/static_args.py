"""JAX's static arguments of ``jit`` (``static_argnums``, ``static_argnames``) and its keyword arguments.

A static argument chooses what the function does (a loop count, a mode string, a shape): as in JAX, the function
sees the value itself and is traced once per value (values must be hashable; equal values share a trace). Every
other argument, keyword arguments included, is traced as usual. ``split`` cuts a call into the static part (the
key of its trace) and the traced values; ``bind`` makes, for one key, the function of the traced values alone.

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> def power(x, n):
    ...     out = x
    ...     for _ in range(n - 1):
    ...         out = out * x
    ...     return out
    >>> f = cr.jit(power, static_argnums=1)
    >>> float(f(np.array(2.0), 3)), float(f(np.array(2.0), 5)), float(f(np.array(3.0), n=2))
    (8.0, 32.0, 9.0)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _as_tuple(value: Any, kind: type, what: str) -> tuple:
    values = () if value is None else (value,) if isinstance(value, kind) else tuple(value)
    bad = [v for v in values if not isinstance(v, kind) or isinstance(v, bool)]
    if bad:
        raise TypeError(f"jit: {what} must be {kind.__name__}s (or one {kind.__name__}), got {value!r}")
    return values


def static_names(fn: Callable[..., Any], argnums: Any, argnames: Any) -> tuple[tuple[int, ...], frozenset[str]]:
    """The static positions and names, each completed from the other through ``fn``'s signature (as JAX does, so a
    static argument may be passed by position or by name)."""
    nums = _as_tuple(argnums, int, "static_argnums")
    names = _as_tuple(argnames, str, "static_argnames")
    try:
        params = [p for p in inspect.signature(fn).parameters.values() if p.kind in _POSITIONAL]
    except (TypeError, ValueError):  # no signature (a builtin): positions and names stay as given
        params = []
    n = len(params)
    by_name = {p.name: i for i, p in enumerate(params)}
    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    more_names = {params[i].name for i in nums if -n <= i < n and params[i].kind is keyword}
    more_nums = {by_name[name] for name in names if name in by_name}
    nums = tuple(sorted({i + n if i < 0 and n else i for i in nums} | more_nums))
    return nums, frozenset(names) | more_names


def split(name: str, args: tuple, kwargs: dict[str, Any], nums: tuple[int, ...],
          names: frozenset[str]) -> tuple[tuple, list[Any]]:
    """``(key, traced)``: the key of the trace this call needs (the static values, the count of positional
    arguments and the names of the traced keywords) and the traced values, positional ones first."""
    n = len(args)
    static = {i + n if i < 0 else i for i in nums if -n <= i < n}
    static_pos = tuple((i, args[i]) for i in sorted(static))
    static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in names))
    traced_kw = tuple(sorted(k for k in kwargs if k not in names))
    key = (n, static_pos, static_kw, traced_kw)
    try:
        hash(key)
    except TypeError:
        which = [f"argument {i}" for i, v in static_pos if not _hashable(v)]
        which += [f"argument {k!r}" for k, v in static_kw if not _hashable(v)]
        raise ValueError(
            f"jit({name}): static {', '.join(which)} is not hashable; a static argument selects a trace by its "
            "value, so it must be hashable (JAX's rule): pass a tuple instead of a list or an array, or leave it "
            "out of static_argnums/static_argnames so that it is traced"
        ) from None
    traced = [a for i, a in enumerate(args) if i not in static] + [kwargs[k] for k in traced_kw]
    return key, traced


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def bind(fn: Callable[..., Any], key: tuple) -> Callable[..., Any]:
    """``fn`` as a function of the traced values of ``split``'s ``key``, the static ones put back in place."""
    n, static_pos, static_kw, traced_kw = key
    fixed = dict(static_pos)

    def traced_only(*traced: Any) -> Any:
        given = iter(traced)
        args = [fixed[i] if i in fixed else next(given) for i in range(n)]
        kwargs = dict(static_kw)
        kwargs.update(zip(traced_kw, given, strict=True))
        return fn(*args, **kwargs)

    traced_only.__name__ = getattr(fn, "__name__", type(fn).__name__)
    traced_only.__wrapped__ = fn  # type: ignore[attr-defined]  (the guards read what fn reads by name)
    return traced_only
