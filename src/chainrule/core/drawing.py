"""How a value draws its own graph (``Tensor.graph()``, ``Scalar.graph()``) while the values stay below the
pictures: the package root registers the drawer (``chainrule.graph.draw``, imported on first use), and the
values ask this registry for it. The import graph keeps one direction, lazy imports included.

Example:
    >>> from chainrule.core import drawing
    >>> drawing.drawer() is not None  # registered by `import chainrule`
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_drawer: Callable[..., Any] | None = None


def register_drawer(draw: Callable[..., Any]) -> None:
    """Set the function that pictures a value's graph: ``draw(value, **options)``."""
    global _drawer
    _drawer = draw


def drawer() -> Callable[..., Any] | None:
    """The registered drawer, or None."""
    return _drawer


def draw(value: Any, **options: Any) -> Any:
    """A picture of ``value``'s graph, through the registered drawer."""
    if _drawer is None:
        raise RuntimeError("graph(): no drawer is registered; import chainrule (chainrule.graph.draw draws graphs)")
    return _drawer(value, **options)
