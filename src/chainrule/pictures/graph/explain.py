"""``explain(out, wrt)``: a derivative shown as the sum, over every path, of the chain along it.

The algorithm of seed 000, as an explanation: label each edge with its local derivative,
find every path from the output to the input, multiply along each path (a *chain*), add
the chains, and compare with what ``backward()`` computes. Paths are counted by dynamic
programming (there can be exponentially many) and only the first ``max_paths`` listed.
For Tensors each edge is a vector-Jacobian product (VJP) instead of a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .collect import Graph, collect
from .format import label_of, num
from .paths import Edge, count_paths, distinct_texts, list_paths, path_nodes
from .scene import Highlight
from .views import NodeView, VJPStep, view_of

__all__ = ["Explanation", "VJPStep", "explain"]

PALETTE = ("red", "forestgreen", "blue", "darkorange", "purple", "deepskyblue", "brown", "magenta")


@dataclass
class Explanation:
    """The paths from ``out`` to ``wrt``, the chain along each, their sum, and the check.

    - ``paths``: the listed paths, each a list of nodes from ``out`` to ``wrt``;
    - ``chains``: per listed path, the local derivatives along it (Scalars: floats;
      Tensors: :class:`VJPStep` objects);
    - ``products``: per listed path, the product of its chain (Tensors: the path's
      contribution to the gradient, an array of ``wrt``'s shape);
    - ``n_paths``: how many paths there are in all (counted, never enumerated);
    - ``total``: the sum over all paths (by dynamic programming when not all are listed);
    - ``gradient``: what ``backward()`` gives; ``ok``: whether the two agree.
    """

    out: Any
    wrt: Any
    view: NodeView = field(repr=False)
    paths: list[list[Any]]
    edges: list[list[Edge]] = field(repr=False)
    chains: list[list[Any]]
    products: list[Any]
    n_paths: int
    total: Any
    gradient: Any
    ok: bool
    graph: Graph = field(repr=False)
    on_path: list[Any] = field(repr=False, default_factory=list)
    on_path_edges: list[tuple[Any, int]] = field(repr=False, default_factory=list)

    @property
    def kind(self) -> str:
        """'scalar' or 'tensor'."""
        return self.view.kind

    @property
    def n_unlisted(self) -> int:
        """Paths counted but not listed (``max_paths`` was smaller than ``n_paths``)."""
        return self.n_paths - len(self.paths)

    def path_texts(self) -> list[str]:
        """Each listed path as ``L -> * -> - -> + -> * -> x``; paths through the same ops are told
        apart by the argument they take where they part (``L -> *(1st) -> ...``, ``L -> *(2nd) -> ...``)."""
        return distinct_texts(self.paths, self.edges)

    @property
    def name(self) -> str:
        return f"d{label_of(self.out) or 'out'}/d{label_of(self.wrt) or 'wrt'}"

    def __str__(self) -> str:
        from .explain_text import explanation_text

        return explanation_text(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython and notebooks show the explanation's text (``print(e)``), not the record's fields."""
        printer.text(str(self))

    def highlight(self) -> Highlight:
        """Colours for a picture: each listed path in its own colour (all paths in red when many)."""
        hl = Highlight()
        per_path = len(self.paths) == self.n_paths and 0 < self.n_paths <= len(PALETTE)
        if per_path:
            texts = self.path_texts()
            for k, path_edges in enumerate(self.edges):
                color = PALETTE[k]
                for _, c, slot in path_edges:
                    key = (id(self.graph.nodes[c]), slot)
                    hl.edges[key] = hl.edges.get(key, ()) + (color,)
                for node in self.paths[k]:
                    hl.nodes.setdefault(id(node), color)
                hl.legend.append((color, f"path {k + 1}: {texts[k]}   {_product_text(self, k)}"))
        else:
            for child, slot in self.on_path_edges:
                hl.edges[(id(child), slot)] = ("red",)
            for node in self.on_path:
                hl.nodes[id(node)] = "red"
            if self.n_paths:
                hl.legend.append(("red", f"all {self.n_paths:,} paths from {_ends(self)} (edges in red)"))
        return hl

    def draw(self, max_nodes: int | None = 100, engine: str = "auto", rankdir: str = "LR") -> Any:
        """A :class:`~chainrule.graph.draw.Drawing` of the graph with the paths in colour."""
        from .draw import Drawing

        title = f"{self.name} = sum over the {self.n_paths:,} path{'s' if self.n_paths != 1 else ''} from {_ends(self)}"
        return Drawing(self.out, max_nodes=max_nodes, rankdir=rankdir, highlight=self.highlight(), title=title,
                       engine=engine)


def _ends(e: Explanation) -> str:
    return f"{label_of(e.out) or 'out'} to {label_of(e.wrt) or 'wrt'}"


def _product_text(e: Explanation, k: int) -> str:
    if e.view.numeric_edges:
        return f"chain [{', '.join(num(v) for v in e.chains[k])}], product {num(e.products[k])}"
    return f"{len(e.chains[k])} VJPs"


def explain(out: Any, wrt: Any, max_paths: int = 10, gradient: Any = None) -> Explanation:
    """Explain d(out)/d(wrt) as seed 000 computes it: every path, the chain along it, the sum.

    Lists at most ``max_paths`` paths (the number of paths can grow exponentially with
    depth; they are counted by dynamic programming, never enumerated, and the rest are
    summed the same way). Checks the sum against the gradient from ``backward()``, without
    changing any ``.grad``. For a Tensor ``out`` with more than one element pass
    ``gradient`` (d final / d out), as for ``backward``.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import explain
        >>> x, c = Scalar(3.0, label="x"), Scalar(4.0, label="c")
        >>> z = (x + c) * x
        >>> e = explain(z, x)
        >>> e.n_paths, e.chains, e.total, e.ok
        (2, [[3.0, 1.0], [7.0]], 10.0, True)
    """
    view = view_of(out, "explain")
    if isinstance(wrt, (list, tuple, dict)):
        raise TypeError(f"explain: wrt must be one Scalar or Tensor, got a {type(wrt).__name__}; "
                        "call explain(out, w) once for each input w")
    if view_of(wrt, "explain") is not view:
        raise TypeError(
            f"explain: out is a {type(out).__name__} but wrt is a {type(wrt).__name__}; "
            "both must be Scalars or both Tensors"
        )
    if not isinstance(max_paths, int) or max_paths < 0:
        raise ValueError(f"explain: max_paths must be an int >= 0, got {max_paths!r}")
    g = collect(out)
    target = g.index(wrt)
    counts, order = count_paths(g, target)
    listed = list_paths(g, target, counts, max_paths) if target is not None else []
    paths = [path_nodes(g, p) for p in listed]
    seed = view.seed(out, gradient)
    with view.not_recording():
        chains, products = _chains(view, g, listed, seed)
        total = _sum_over_paths(view, g, target, counts, order, seed) if target is not None else view.zero(wrt)
    if target is None:
        grad_value, ok = view.zero(wrt), True
    else:
        grad_value = view.backward_gradient(out, wrt, seed, g.nodes)
        ok = view.agree(total, grad_value)
        if len(listed) == counts[0] and products:
            ok = ok and view.agree(view.sum(products), total)
    on_path = [g.nodes[i] for i in range(len(g.nodes)) if counts[i]]
    on_path_edges = [
        (g.nodes[c], slot)
        for p, c, slot in zip(g.edge_parent, g.edge_child, g.edge_slot, strict=True)
        if counts[p] and counts[c]
    ]
    return Explanation(out, wrt, view, paths, listed, chains, products, counts[0], total, grad_value, ok,
                       g, on_path, on_path_edges)


def _chains(view: NodeView, g: Graph, listed: list[list[Edge]], seed: Any) -> tuple[list[list[Any]], list[Any]]:
    """Per listed path, what each edge contributes (a local derivative or a VJP step) and the
    gradient carried from the output to the input along it."""
    chains, products = [], []
    nodes = g.nodes
    for path in listed:
        chain, carried = [], seed
        for p, c, slot in path:
            carried = view.carry(nodes[c], slot, carried)
            chain.append(view.chain_entry(nodes[c], slot, nodes[p], carried))
        chains.append(chain)
        products.append(carried)
    return chains, products


def _sum_over_paths(view: NodeView, g: Graph, target: int, counts: list[int], order: list[int], seed: Any) -> Any:
    """Sum over all paths of the chain along each, in one pass over the edges.

    Each node collects the summed chains from the output down to it (children first), and
    passes them on across its edges, only along edges that lead to ``target``: the work of
    common path prefixes is shared, so exponentially many paths cost one sweep.
    """
    adjoint: dict[int, Any] = {0: seed}
    nodes, parent, slots, start = g.nodes, g.edge_parent, g.edge_slot, g.edge_start
    for i in order:
        if not counts[i] or i == target or i not in adjoint:
            continue
        a = adjoint.pop(i)
        for k in range(start[i], start[i + 1]):
            p = parent[k]
            if counts[p]:
                v = view.carry(nodes[i], slots[k], a)
                adjoint[p] = view.add(adjoint[p], v) if p in adjoint else v
    return adjoint[target]
