"""What a picture of a graph shows, independent of who draws it (Graphviz or matplotlib).

A value node is a *box* (a record ``label | data | grad``); a node made by an operation
also gets a small op node, and each edge runs from an input box into the op node of the
box that uses it. Cut-off inputs become one dashed *hidden* box per node, saying how many.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .collect import collect, refuse_all_of_a_big_graph
from .format import label_of
from .views import view_of


@dataclass
class Highlight:
    """Colours laid over a picture: ``edges`` maps ``(id(child), slot)`` to colours, ``nodes``
    maps ``id(node)`` to a colour, ``legend`` is a list of ``(colour, text)`` lines."""

    edges: dict[tuple[int, int], tuple[str, ...]] = field(default_factory=dict)
    nodes: dict[int, str] = field(default_factory=dict)
    legend: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Box:
    key: str
    fields: tuple[str, ...]
    op: str = ""
    color: str | None = None
    output: bool = False
    hidden: bool = False


@dataclass
class Link:
    src: str  # key of the input box
    dst: str  # key of the box whose op node receives the edge
    label: str = ""
    colors: tuple[str, ...] = ()
    hidden: bool = False


@dataclass
class Scene:
    kind: str
    boxes: list[Box]
    links: list[Link]
    caption: list[str]
    legend: list[tuple[str, str]]
    n_shown: int
    n_total: int


DEFAULT_MAX_NODES = 100


def build_scene(
    out: Any,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    max_depth: int | None = None,
    highlight: Highlight | None = None,
    title: str | None = None,
    where: str = "draw",
) -> Scene:
    """The boxes, links and caption of the picture of ``out``'s graph (``where``: the caller, for errors)."""
    view = view_of(out, "draw")
    refuse_all_of_a_big_graph(out, max_nodes, where)
    g = collect(out, max_nodes=max_nodes, max_depth=max_depth)
    hl = highlight or Highlight()
    boxes: list[Box] = []
    for i, node in enumerate(g.nodes):
        boxes.append(
            Box(
                key=f"n{i}",
                fields=(label_of(node), view.data_text(node), view.grad_text(node)),
                op=node.op,
                color=hl.nodes.get(id(node)),
                output=i == 0,
            )
        )
    links = []
    for p, c, slot in g.edges:
        child = g.nodes[c]
        links.append(
            Link(f"n{p}", f"n{c}", view.edge_label(child, slot), hl.edges.get((id(child), slot), ()))
        )
    for i, cut in g.hidden_inputs.items():
        key = f"h{i}"
        text = f"\u2026 {cut} input{'s' if cut > 1 else ''} hidden"
        boxes.append(Box(key=key, fields=(text,), hidden=True))
        links.append(Link(key, f"n{i}", hidden=True))
    caption = [title] if title else []
    if g.n_hidden:
        caps = ", ".join(f"{k}={v}" for k, v in (("max_nodes", max_nodes), ("max_depth", max_depth)) if v is not None)
        caption.append(f"showing {len(g.nodes):,} of {g.n_total:,} nodes ({caps}): {g.n_hidden:,} nodes hidden")
    return Scene(g.kind, boxes, links, caption, list(hl.legend), len(g.nodes), g.n_total)
