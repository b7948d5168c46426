"""Collect the nodes and edges behind an output, breadth first, without recursion."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from .views import view_of


class EdgeView(Sequence[tuple[int, int, int]]):
    """The edges of a :class:`Graph` as ``(parent, child, slot)`` triples, read from compact arrays."""

    def __init__(self, parent: array, child: array, slot: array) -> None:
        self._p, self._c, self._s = parent, child, slot

    def __len__(self) -> int:
        return len(self._p)

    @overload
    def __getitem__(self, k: int) -> tuple[int, int, int]: ...

    @overload
    def __getitem__(self, k: slice) -> list[tuple[int, int, int]]: ...

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return list(zip(self._p[k], self._c[k], self._s[k], strict=True))
        return (self._p[k], self._c[k], self._s[k])

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        return zip(self._p, self._c, self._s, strict=True)


@dataclass
class Graph:
    """The nodes and edges behind ``output`` (possibly only its top part).

    - ``nodes``: node objects, ``nodes[0]`` is the output, then breadth first towards the inputs;
    - ``edges``: ``(parent, child, slot)`` index triples, data flowing from ``nodes[parent]`` into
      ``nodes[child]``, which uses it as its parent number ``slot`` (``x * x`` has two edges);
      grouped by child, in node order; ``edge_start[i]:edge_start[i + 1]`` are node i's inputs;
    - ``level``: distance (in edges) from the output, per node;
    - ``hidden_inputs``: for nodes whose inputs were cut off by a cap, how many edges were cut;
    - ``n_total``: how many nodes the whole graph has (counted even when capped).

    Edges are stored in arrays (24 bytes each), so a graph of a million nodes stays small.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import collect
        >>> a, b = Scalar(2.0, label="a"), Scalar(3.0, label="b")
        >>> g = collect(a * b + a)
        >>> len(g.nodes), len(g.edges), g.n_hidden
        (4, 4, 0)
        >>> [(g.nodes[p].label or g.nodes[p].op, g.nodes[c].op) for p, c, _ in g.edges]
        [('*', '+'), ('a', '+'), ('a', '*'), ('b', '*')]
    """

    output: Any
    kind: str
    nodes: list[Any]
    edge_parent: array
    edge_child: array
    edge_slot: array
    edge_start: array
    level: array
    hidden_inputs: dict[int, int] = field(default_factory=dict)
    n_total: int = 0

    @property
    def edges(self) -> EdgeView:
        return EdgeView(self.edge_parent, self.edge_child, self.edge_slot)

    @property
    def n_hidden(self) -> int:
        """Nodes of the whole graph that are not in ``nodes``."""
        return self.n_total - len(self.nodes)

    def index(self, node: Any) -> int | None:
        """Position of ``node`` in ``nodes`` (by identity), or None."""
        for i, n in enumerate(self.nodes):
            if n is node:
                return i
        return None

    def inputs(self, i: int) -> list[tuple[int, int, int]]:
        """The edges into node ``i`` (those to shown nodes), in parent order."""
        return self.edges[self.edge_start[i]:self.edge_start[i + 1]]

    def edge_objects(self) -> Iterator[tuple[Any, Any]]:
        """``(parent, child)`` node objects for every edge."""
        nodes = self.nodes
        for p, c in zip(self.edge_parent, self.edge_child, strict=True):
            yield nodes[p], nodes[c]

    def children_first(self) -> list[int]:
        """Node indices, each before all of its parents (Kahn's algorithm from the output)."""
        consumers = [0] * len(self.nodes)
        for p in self.edge_parent:
            consumers[p] += 1
        ready = [i for i, n in enumerate(consumers) if n == 0]
        order: list[int] = []
        parent, start = self.edge_parent, self.edge_start
        while ready:
            i = ready.pop()
            order.append(i)
            for k in range(start[i], start[i + 1]):
                p = parent[k]
                consumers[p] -= 1
                if consumers[p] == 0:
                    ready.append(p)
        return order


def collect(out: Any, max_nodes: int | None = None, max_depth: int | None = None) -> Graph:
    """Nodes and edges behind ``out`` (a Scalar or a Tensor), iteratively.

    ``max_nodes`` keeps the first nodes met breadth first from the output; ``max_depth``
    keeps the nodes at most that many edges from it. Cut-off nodes are still counted
    (``n_total``, ``n_hidden``), so pictures can say how much they leave out.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import collect
        >>> x = Scalar(1.0)
        >>> for _ in range(5):
        ...     x = x * 2.0
        >>> g = collect(x, max_nodes=3)
        >>> len(g.nodes), g.n_total, g.n_hidden
        (3, 6, 3)
    """
    kind = view_of(out, "collect").kind
    if max_nodes is not None and max_nodes < 1:
        raise ValueError(f"collect: max_nodes must be at least 1 (or None for all), got {max_nodes}")
    if max_depth is not None and max_depth < 0:
        raise ValueError(f"collect: max_depth must be 0 or more (or None for all), got {max_depth}")
    cap = max_nodes if max_nodes is not None else -1
    deepest = max_depth if max_depth is not None else -1
    nodes = [out]
    level = array("q", [0])
    index = {out: 0}  # Scalars and Tensors hash by identity
    e_parent, e_child, e_slot, start = array("q"), array("q"), array("q"), array("q", [0])
    hidden: dict[int, int] = {}
    beyond: list[Any] = []  # parents not kept, to count the rest of the graph
    i = 0
    while i < len(nodes):
        node = nodes[i]
        depth = level[i] + 1
        cut = 0
        slot = 0
        for parent in node.parents:
            j = index.get(parent)
            if j is None:
                if len(nodes) == cap or depth == deepest + 1 and deepest >= 0:
                    cut += 1
                    beyond.append(parent)
                    slot += 1
                    continue
                j = len(nodes)
                index[parent] = j
                nodes.append(parent)
                level.append(depth)
            e_parent.append(j)
            e_child.append(i)
            e_slot.append(slot)
            slot += 1
        if cut:
            hidden[i] = cut
        i += 1
        start.append(len(e_parent))
    n_total = len(nodes) + (_count_beyond(beyond, index) if beyond else 0)
    return Graph(out, kind, nodes, e_parent, e_child, e_slot, start, level, hidden, n_total)


def _count_beyond(stack: list[Any], known: dict[Any, int]) -> int:
    """How many nodes are reachable from ``stack`` and not in ``known``."""
    seen: set[Any] = set()
    add = seen.add
    while stack:
        node = stack.pop()
        if node in seen or node in known:
            continue
        add(node)
        stack.extend(node.parents)
    return len(seen)


ALL_NODES_LIMIT = 5_000  # "draw every node" (None) refuses a bigger graph: its picture would take minutes and GBs


class GraphTooLargeError(ValueError):
    """Asked to draw every node (``max_nodes=None`` / ``max_lines=None``) of a graph too big to draw."""


def refuse_all_of_a_big_graph(out: Any, cap: int | None, where: str, option: str = "max_nodes") -> None:
    """With ``cap`` None (all nodes), count the graph first and refuse it above ``ALL_NODES_LIMIT``, naming its
    size and the explicit ``option`` that draws it anyway (a number is the user saying they mean it)."""
    if cap is not None:
        return
    n = count_nodes(out)
    if n > ALL_NODES_LIMIT:
        raise GraphTooLargeError(
            f"{where}: the graph has {n:,} nodes; drawing all of them ({option}=None) is refused above "
            f"{ALL_NODES_LIMIT:,}, as it would take minutes and gigabytes. Pass {option}={n} to draw them all "
            f"anyway, or a smaller {option} (or max_depth=) to see the part nearest the output"
        )


def count_nodes(out: Any) -> int:
    """How many nodes the graph behind ``out`` has (iterative, stores only ids)."""
    view_of(out, "count_nodes")
    return _count_beyond([out], {})
