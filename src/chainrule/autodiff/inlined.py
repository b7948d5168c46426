"""``Inlined``: a primitive's forward call and reverse rules written out as lines of Python for a jit replay.

A jit replay (``chainrule.replay.program``) calls each primitive's function and reverse rules by
default: a Python frame, and the rule's branches on shapes and dtypes, per call. For the few
primitives a small training step is made of (linear, relu, cross-entropy), the primitive's
``inline(ans, args, kw)`` may instead hand the program generator the very NumPy calls its function
and rules make for these traced arguments (``None``: not for these; the calls stay). The lines are
format strings: ``{a0}``, ``{a1}``... name the arguments, ``{out}`` the output, ``{g}`` its
gradient, ``{p}`` a prefix for temporaries and for the constants in ``consts``. Each backward entry
ends by assigning ``t``, the argument's gradient, already of that argument's shape and dtype.
The replay must stay bit-for-bit the eager result: ``tests/test_jit_step.py`` compares them.

Example:
    >>> relu = Inlined(forward=["{out} = maximum({a0}, 0)"], backward={0: ["t = {g} * ({out} > 0)"]})
    >>> relu.forward[0].format(out="v1", a0="v0")
    'v1 = maximum(v0, 0)'
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Inlined"]


class Inlined(NamedTuple):
    """A primitive's forward and reverse rules as lines of Python (see the module docstring)."""

    forward: list[str]
    backward: dict[int, list[str]]
    keep: tuple[str, ...] = ()  # temporaries of the forward the backward lines read
    consts: dict[str, Any] = {}  # noqa: RUF012  (never mutated: bound once into the generated code)
