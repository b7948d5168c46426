"""The typed listing of Tensor's generated methods, for type checkers and editors.

``python -m chainrule.ops.typing_block`` rewrites the generated block of ``chainrule/tensor/methods.py``
from what the declarations put on ``TensorMethods``; ``tests/test_types.py`` fails when the file
is out of date. Parameters keep their names, kinds and defaults (as ``...``) and are typed ``Any``;
an op returns ``Self`` (a Tensor in, a Tensor out) unless its function says otherwise.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

BEGIN = "        # --- generated: python -m chainrule.ops.typing_block ---\n"
END = "        # --- end of generated ---\n"
# every module that declares methods: imported first, so the listing does not depend on import order
DECLARING = ("chainrule", "chainrule.special", "chainrule.linalg", "chainrule.fft", "chainrule.nn")
KEPT_RETURNS = {"bool": "bool", "int": "int", "None": "None", "tuple[Any, ...]": "tuple[Any, ...]"}
PROPERTIES = {"is_cuda": "bool", "retains_grad": "bool", "grad_fn": "Any", "device": "Any"}
# object's own comparisons return bool; a Tensor's return a Tensor (as numpy's and torch's stubs say)
OVERRIDES = {"__eq__", "__ne__"}
UNARY = {"__neg__", "__pos__", "__abs__", "__invert__"}
SPECIAL = {
    "__iter__": "def __iter__(self) -> Iterator[Self]: ...",
    "__round__": "def __round__(self, ndigits: Any = ...) -> Self: ...",
    "__array_ufunc__": "def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any: ...",
    "__array_function__": "def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any: ...",
}


def _returns(fn: Any) -> str:
    annotation = inspect.signature(fn).return_annotation
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    return KEPT_RETURNS.get(text, "Any" if text not in ("Any", "Tensor", "_empty") else "Self")


def _parameters(fn: Any) -> str:
    params = list(inspect.signature(fn).parameters.values())
    out, star_seen = ["self"], False
    for p in params[1:]:
        if p.kind is p.POSITIONAL_ONLY and not any(q.kind is q.POSITIONAL_ONLY for q in params[params.index(p) + 1:]):
            text = f"{p.name}: Any" + (" = ..." if p.default is not p.empty else "")
            out += [text, "/"]
            continue
        if p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}: Any")
            star_seen = True
        elif p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}: Any")
        else:
            if p.kind is p.KEYWORD_ONLY and not star_seen:
                out.append("*")
                star_seen = True
            out.append(f"{p.name}: Any" + (" = ..." if p.default is not p.empty else ""))
    return ", ".join(out)


def render() -> str:
    """The generated block: one stub per method and property ``TensorMethods`` holds now."""
    for name in DECLARING:
        importlib.import_module(name)
    from ..tensor.methods import TensorMethods

    lines = []
    for name, value in sorted(TensorMethods.__dict__.items()):
        if isinstance(value, property):
            lines += ["        @property", f"        def {name}(self) -> {PROPERTIES.get(name, 'Self')}: ..."]
        elif not callable(value) or name.startswith("_") and not re.fullmatch(r"__\w+__", name):
            continue
        elif name in SPECIAL:
            lines.append("        " + SPECIAL[name])
        elif re.fullmatch(r"__\w+__", name):  # an operator: its function's own parameter names say nothing
            ignore = "  # type: ignore[override]" if name in OVERRIDES else ""
            params = "self" if name in UNARY else "self, index: Any" if name == "__getitem__" else "self, other: Any"
            lines.append(f"        def {name}({params}) -> Self: ...{ignore}")
        else:
            lines.append(f"        def {name}({_parameters(value)}) -> {_returns(value)}: ...")
    return "".join(line + "\n" for line in lines)


def path() -> Path:
    return Path(__file__).resolve().parent.parent / "tensor/methods.py"


def current() -> str:
    """The generated block as the file holds it now."""
    text = path().read_text(encoding="utf-8")
    return text[text.index(BEGIN) + len(BEGIN): text.index(END)]


def write() -> None:
    text = path().read_text(encoding="utf-8")
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    path().write_text(text[:start] + render() + text[stop:], encoding="utf-8")


if __name__ == "__main__":
    write()
