"""Is NumPy building an array from a *list* of Tensors (``np.array([a * 2, a * 3])``)?

NumPy calls ``Tensor.__array__`` the same way for ``np.asarray(t)`` (reading one tensor's
values: fine) and for each element of ``np.array([t1, t2])`` (building a new array from
graph values: the gradient to ``t1`` and ``t2`` is lost). PyTorch refuses both; chainrule
keeps the first working and refuses the second, so it has to tell them apart from the
outside: it looks at the call expression that is running in the caller's frame (its
source, via the code positions of Python 3.11+) and at its first argument. A list or tuple
display, a comprehension, ``list(...)``/``tuple(...)``, or a name (or ``obj.attr``) bound to
a list or tuple holding a Tensor means "from a sequence". When the source is not available
(``python -c``, Python 3.10) the answer is "no": a read is never refused by mistake, but such
a list conversion is not caught.
"""

from __future__ import annotations

import ast
import dis
import itertools
import linecache
import sys
import types
from types import FrameType
from typing import Any

_SEQUENCE_NODES = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp, ast.Starred)
_SEQUENCE_MAKERS = {"list", "tuple", "sorted", "reversed"}  # np.array(list(parts)) converts a sequence too


def _call_source(frame: FrameType) -> str | None:
    code = frame.f_code
    try:
        positions = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None))
    except (AttributeError, StopIteration):  # Python 3.10 has no positions
        return None
    line, end_line, col, end_col = positions
    if line is None or end_line is None or col is None or end_col is None:
        return None
    lines = [linecache.getline(code.co_filename, n, frame.f_globals).encode() for n in range(line, end_line + 1)]
    if not any(lines):
        return None
    if len(lines) == 1:
        text = lines[0][col:end_col]
    else:
        text = lines[0][col:] + b"".join(lines[1:-1]) + lines[-1][:end_col]
    return text.decode(errors="replace")


def _call_node(frame: FrameType) -> ast.Call | None:
    """The call the frame is running, parsed from its source (None without source or when it is not a call)."""
    source = _call_source(frame)
    if source is None:
        return None
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    return node if isinstance(node, ast.Call) else None


def _first_argument(frame: FrameType) -> Any:
    """What the call being run passes first: True (a sequence display), a dotted name (tuple), or None."""
    key = (frame.f_code, frame.f_lasti)
    found = _seen.get(key, _seen)
    if found is not _seen:
        return found
    found = None
    node = _call_node(frame)
    if node is not None:
        first = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg in ("object", "a")), None
        )
        if isinstance(first, _SEQUENCE_NODES) or (
            isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id in _SEQUENCE_MAKERS
        ):
            found = True
        else:
            found = _dotted(first)
    if len(_seen) > 4096:
        _seen.clear()
    _seen[key] = found
    return found


_seen: dict[Any, Any] = {}


def _dotted(node: ast.AST) -> tuple[str, ...] | None:
    """``xs`` -> ("xs",); ``self.items`` -> ("self", "items"); anything else -> None."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    names.append(node.id)
    return tuple(reversed(names))


def _resolve(frame: FrameType, path: tuple[str, ...]) -> Any:
    """The value a dotted name has in ``frame``, reading plain attributes only (never running a property)."""
    value = frame.f_locals.get(path[0], frame.f_globals.get(path[0]))
    for attr in path[1:]:
        try:
            value = vars(value)[attr]
        except (TypeError, KeyError):
            return None
    return value


def _holds_tensor(value: Any, tensor_type: type) -> bool:
    return isinstance(value, (list, tuple)) and any(
        isinstance(v, tensor_type) or isinstance(v, (list, tuple)) and _holds_tensor(v, tensor_type) for v in value
    )


def from_sequence(tensor_type: type, depth: int = 2) -> bool:
    """True if the NumPy call running in the frame ``depth`` levels up converts a list or tuple of Tensors."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return False
    first = _first_argument(frame)
    if first is True:
        return True
    if isinstance(first, tuple):
        return _holds_tensor(_resolve(frame, first), tensor_type)
    return False


def numpy_internal_caller(depth: int = 2) -> str | None:
    """The name of NumPy's own Python function converting a value in the frame ``depth`` levels up, if any.

    ``np.pad(a, 1, constant_values=w)`` or ``np.piecewise(x, c, [w, 0])`` hand ``w`` to NumPy's Python
    code without dispatching on it (NumPy's dispatchers look at the first arguments only), and that
    code converts it with ``asarray``: for a Tensor in the graph, a silently lost gradient. NumPy's
    test helpers (``np.testing``) only read values, so they are not counted.
    """
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    module = frame.f_globals.get("__name__", "")
    if module.startswith("numpy.") and not module.startswith("numpy.testing"):
        return f"{module}.{frame.f_code.co_name}"
    return None


_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]


def storing_by_index(depth: int = 2) -> bool:
    """Is the frame ``depth`` levels up running ``target[index] = value`` (the conversion of ``value`` made by a
    NumPy array's ``__setitem__``, which calls ``float()`` or ``__array__`` from C)?"""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return False
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _STORE_SUBSCR


def called_function(depth: int = 2) -> Any:
    """The function that the call running in the frame ``depth`` levels up calls, found from the call's source and
    the frame's names (``math.exp(s)`` or ``exp(s)`` after ``from math import exp``: ``math.exp``); None when it
    cannot be told (no source, or not a plain name or attribute)."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    key = (id(frame.f_code), frame.f_lasti)  # (hashing a code object reads all of it: its id, checked below)
    known = _callees.get(key)
    if known is not None and known[0] is frame.f_code:
        path = known[1]
    else:
        node = _call_node(frame)
        path = None if node is None else _dotted(node.func)
        if len(_callees) > 4096:
            _callees.clear()
        _callees[key] = (frame.f_code, path)
    if path is None:
        return None
    code, name = frame.f_code, path[0]
    local = name in code.co_varnames or name in code.co_cellvars or name in code.co_freevars
    # (f_locals builds a dict: read only when the name is a local)
    value = frame.f_locals.get(name) if local else frame.f_globals.get(name, frame.f_builtins.get(name))
    for attr in path[1:]:
        value = getattr(value, attr, None) if isinstance(value, types.ModuleType) else None
    return value


_callees: dict[Any, Any] = {}
# math functions whose result has no derivative to lose (tests and piecewise-constant ones): they may read a value
NO_DERIVATIVE = frozenset({"isnan", "isinf", "isfinite", "isclose", "floor", "ceil", "trunc"})
