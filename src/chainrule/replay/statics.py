"""JAX's ``jit(f, static_argnums=..., static_argnames=...)`` and keyword arguments to a jitted function.

A static argument is part of what the function is, not of what it is given: JAX compiles once per value of
the static arguments. Here each set of static values (and of keyword names) gets its own :class:`Jitted` of a
function that closes over them and takes the other arguments by position, so a replay is checked against
its own trace and a new static value traces again.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any


def _as_tuple(given: Any, kind: type) -> tuple:
    if given is None:
        return ()
    return (given,) if isinstance(given, kind) else tuple(given)


def _parameters(fn: Callable[..., Any]) -> list[inspect.Parameter] | None:
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return None


def resolve_statics(fn: Callable[..., Any], static_argnums: Any, static_argnames: Any) -> tuple[tuple, tuple]:
    """The static positions and names, each completed from the other through ``fn``'s signature, as JAX does
    (``static_argnames="n"`` makes ``n`` static when passed by position too)."""
    nums, names = _as_tuple(static_argnums, int), _as_tuple(static_argnames, str)
    params = _parameters(fn)
    if params is None:
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if static_argnames is None:
        names = tuple(positional[i] for i in nums if -len(positional) <= i < len(positional))
    if static_argnums is None:
        nums = tuple(positional.index(n) for n in names if n in positional)
    return nums, names


class WithStatics:
    """A function jitted once per value of its static arguments and per set of keyword names (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any], static_argnums: Iterable[int], static_argnames: Iterable[str],
                 make_jitted: Callable[[Callable[..., Any]], Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.static_argnums, self.static_argnames = tuple(static_argnums), tuple(static_argnames)
        self._make_jitted = make_jitted
        self._by_static: dict[Any, Any] = {}
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        n = len(args)
        static_positions = sorted({i % n for i in self.static_argnums if -n <= i < n})  # others: not passed
        static_pos = tuple((i, args[i]) for i in static_positions)
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        dynamic_names = tuple(sorted(k for k in kwargs if k not in self.static_argnames))
        key = (n, static_pos, static_kw, dynamic_names)
        try:
            jitted = self._by_static.get(key)
        except TypeError as e:  # JAX's words: static values are part of the function, so they must be hashable
            raise ValueError(f"jit({self.name}): static arguments must be hashable (a tuple, not a list; a number, "
                             f"not an array): {e}") from None
        if jitted is None:
            jitted = self._by_static[key] = self._make_jitted(self._bound(n, dict(static_pos), dict(static_kw),
                                                                          dynamic_names))
        dynamic = [a for i, a in enumerate(args) if i not in static_positions]
        return jitted(*dynamic, *(kwargs[k] for k in dynamic_names))

    def _bound(self, n: int, static_pos: dict[int, Any], static_kw: dict[str, Any],
               dynamic_names: tuple[str, ...]) -> Callable[..., Any]:
        """``fn`` with the static values put back: it takes the dynamic positional arguments, then the dynamic
        keyword arguments in ``dynamic_names``' order."""
        fn, n_dynamic = self.fn, n - len(static_pos)

        def bound(*dynamic: Any) -> Any:
            given = iter(dynamic[:n_dynamic])
            args = [static_pos[i] if i in static_pos else next(given) for i in range(n)]
            return fn(*args, **static_kw, **dict(zip(dynamic_names, dynamic[n_dynamic:], strict=True)))

        bound.__name__ = self.name
        return bound
