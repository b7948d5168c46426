"""``draw(out)``: a picture object that notebooks show inline and that can be saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .collect import refuse_all_of_a_big_graph
from .format import name as node_name
from .render import pick_engine, render, scene_bytes
from .scene import DEFAULT_MAX_NODES, Highlight, Scene, build_scene
from .text import tree
from .views import view_of


class Drawing:
    """The picture of the graph behind a Scalar or Tensor.

    Jupyter shows it inline as SVG (``_repr_svg_`` / ``_repr_mimebundle_``); ``str()`` is
    the text tree; ``source`` is the DOT source; ``render(path)`` saves .svg / .png / .dot.
    It reads the graph each time it is shown, so it reflects later ``backward()`` calls.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import draw
        >>> x = Scalar(2.0, label="x")
        >>> d = draw(x * x, engine="matplotlib")
        >>> d._repr_svg_().count("<svg") >= 1
        True
    """

    def __init__(
        self,
        out: Any,
        max_nodes: int | None = DEFAULT_MAX_NODES,
        max_depth: int | None = None,
        rankdir: str = "LR",
        highlight: Highlight | None = None,
        title: str | None = None,
        engine: str = "auto",
    ) -> None:
        view_of(out, "draw")
        pick_engine(engine, "draw")  # validate early
        refuse_all_of_a_big_graph(out, max_nodes, "draw")
        self.out = out
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.rankdir = rankdir
        self.highlight = highlight
        self.title = title
        self.engine = engine

    def scene(self) -> Scene:
        return build_scene(self.out, self.max_nodes, self.max_depth, self.highlight, self.title)

    @property
    def source(self) -> str:
        """The Graphviz DOT source of the picture."""
        return scene_bytes(self.scene(), "dot", rankdir=self.rankdir).decode("utf-8")

    def svg(self) -> str:
        """The picture as SVG text."""
        return scene_bytes(self.scene(), "svg", self.engine, self.rankdir).decode("utf-8")

    def png(self) -> bytes:
        """The picture as PNG bytes."""
        return scene_bytes(self.scene(), "png", self.engine, self.rankdir)

    def render(self, path: str | Path, engine: str | None = None, format: str | None = None, dpi: float = 120) -> Path:
        """Save the picture (.svg, .png, .pdf or .dot, from the suffix); returns the path."""
        return render(
            self.out, path, engine=engine or self.engine, format=format, max_nodes=self.max_nodes,
            max_depth=self.max_depth, rankdir=self.rankdir, highlight=self.highlight, title=self.title, dpi=dpi,
        )

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"image/svg+xml": self.svg(), "text/plain": repr(self)}

    def __str__(self) -> str:
        return tree(self.out, max_lines=self.max_nodes)

    def __repr__(self) -> str:
        kind = type(self.out).__name__
        name = node_name(self.out)
        return f"<chainrule graph drawing of {kind} {name!r}: call .render('graph.svg') or show it in a notebook>"


def draw(
    out: Any,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    max_depth: int | None = None,
    rankdir: str = "LR",
    title: str | None = None,
    engine: str = "auto",
    highlight: Highlight | None = None,
) -> Drawing:
    """A :class:`Drawing` of the graph behind ``out``: shown inline in Jupyter, ``.render(path)`` to save.

    Same as ``out.graph()``. ``engine``: 'auto' (Graphviz if installed, else matplotlib),
    'graphviz' or 'matplotlib'.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import draw
        >>> a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
        >>> L = a * b
        >>> L.backward()
        >>> "grad 2.0000" in draw(L).source
        True
    """
    return Drawing(out, max_nodes, max_depth, rankdir, highlight, title, engine)
