"""What a jit trace assumed beyond its arguments, checked before each replay (as ``torch.compile``'s guards).

A replay reads its arguments and the tensors it captured afresh, but a Python value the function
reads by name (a closed-over float, a global Tensor it rebinds, a module's ``training`` flag or
``p``) was read once, while tracing, and its effect baked into the tape. The guards remember each
such value: the cells a function closes over, the globals it reads (in the functions it calls too),
and the attributes of every module called while tracing. A replay first checks that each still
holds the same value (numbers and strings) or the same object (anything else); when one changed,
the function is traced again.

Example:
    >>> import chainrule as cr
    >>> scale = 2.0
    >>> f = cr.jit(lambda x: (x * scale).sum())
    >>> x = cr.Tensor([1.0, 2.0])
    >>> float(f(x)), float(f(x))
    (6.0, 6.0)
    >>> scale = 3.0
    >>> float(f(x))                  # traced again: scale changed
    9.0
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import numpy as np

_MISSING = object()
_PLAIN = (bool, int, float, complex, str, bytes, type(None), np.generic)
_REGISTRIES = frozenset({"_parameters", "_modules", "_buffers", "_call_hooks"})  # their entries are attributes too
_LIBRARY = str(Path(__file__).resolve().parent.parent)  # chainrule's own source files
_DEPTH = 4  # how deep into the functions a function calls by name the guards look


def _plain(v: Any) -> bool:
    return isinstance(v, _PLAIN) or isinstance(v, (tuple, frozenset)) and all(_plain(x) for x in v)


def _names(code: types.CodeType) -> set[str]:
    """The global (and attribute) names a code object reads, its nested functions' and comprehensions' included."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


class Guards:
    """The values a trace read by name: ``changed()`` names the first that is no longer the same (None: all are)."""

    def __init__(self) -> None:
        self.checks: list[tuple[Any, Any, Any, bool, str]] = []  # (dict or cell, key or None, value, plain, what)
        self._seen: set[int] = set()

    def _watch(self, holder: Any, key: Any, value: Any, what: str) -> None:
        self.checks.append((holder, key, value, _plain(value), what))

    def module(self, m: Any) -> None:
        """Every attribute of a module (or other object) called while tracing: its mode, settings, parameters."""
        if id(m) in self._seen:
            return
        self._seen.add(id(m))
        d = getattr(m, "__dict__", None)
        if d is None:
            return
        for k, v in list(d.items()):
            if k not in _REGISTRIES:
                self._watch(d, k, v, f"{type(m).__name__}.{k}")

    def function(self, fn: Any, depth: int = 0) -> None:
        """The cells ``fn`` closes over and the globals it reads; the same for the functions among them."""
        if isinstance(fn, types.MethodType):
            if hasattr(fn.__self__, "training"):  # a module's method (e.g. jit(model.forward))
                self.module(fn.__self__)
            fn = fn.__func__
        if not isinstance(fn, types.FunctionType) or id(fn) in self._seen or depth > _DEPTH:
            return
        self._seen.add(id(fn))
        if fn.__code__.co_filename.startswith((_LIBRARY, "<chainrule")):  # the library's read constants only
            self.function(getattr(fn, "__wrapped__", None), depth)  # (but a wrapper's user function is guarded)
            return
        code = fn.__code__
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
            try:
                value = cell.cell_contents
            except ValueError:  # not assigned yet
                continue
            self._watch(cell, None, value, f"the variable {name!r} the function closes over")
            self.function(value, depth + 1)
        scope = fn.__globals__
        for name in _names(code):
            value = scope.get(name, _MISSING)
            if value is _MISSING or isinstance(value, (types.ModuleType, type)):
                continue
            self._watch(scope, name, value, f"the global {name!r}")
            self.function(value, depth + 1)

    def changed(self) -> str | None:
        for holder, key, expected, plain, what in self.checks:
            if key is None:
                try:
                    now = holder.cell_contents
                except ValueError:
                    now = _MISSING
            else:
                now = holder.get(key, _MISSING)
            if now is expected or plain and type(now) is type(expected) and now == expected:
                continue
            return what
        return None
