"""Collect the nodes and edges behind an output, breadth first, without recursion."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from . import _node


@dataclass
class Graph:
    """The nodes and edges behind ``output`` (possibly only its top part).

    - ``nodes``: node objects, ``nodes[0]`` is the output, then breadth first towards the inputs;
    - ``edges``: ``(parent, child, slot)`` index triples, data flowing from ``nodes[parent]`` into
      ``nodes[child]``, which uses it as its parent number ``slot`` (``x * x`` has two edges);
    - ``level``: distance (in edges) from the output, per node;
    - ``hidden_inputs``: for nodes whose inputs were cut off by a cap, how many edges were cut;
    - ``n_total``: how many nodes the whole graph has (counted even when capped).

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import collect
        >>> a, b = Scalar(2.0, label="a"), Scalar(3.0, label="b")
        >>> g = collect(a * b + a)
        >>> len(g.nodes), len(g.edges), g.n_hidden
        (4, 4, 0)
    """

    output: Any
    kind: str
    nodes: list[Any]
    edges: list[tuple[int, int, int]]
    level: list[int]
    edge_start: list[int]
    hidden_inputs: dict[int, int] = field(default_factory=dict)
    n_total: int = 0
    _index: dict[int, int] | None = field(default=None, repr=False)

    @property
    def n_hidden(self) -> int:
        """Nodes of the whole graph that are not in ``nodes``."""
        return self.n_total - len(self.nodes)

    def index(self, node: Any) -> int | None:
        """Position of ``node`` in ``nodes`` (by identity), or None."""
        if self._index is None:
            self._index = {id(n): i for i, n in enumerate(self.nodes)}
        return self._index.get(id(node))

    def inputs(self, i: int) -> list[tuple[int, int, int]]:
        """The edges into node ``i`` (those to shown nodes), in parent order."""
        return self.edges[self.edge_start[i]:self.edge_start[i + 1]]

    def edge_objects(self) -> Iterator[tuple[Any, Any]]:
        """``(parent, child)`` node objects for every edge."""
        nodes = self.nodes
        for p, c, _ in self.edges:
            yield nodes[p], nodes[c]

    def children_first(self) -> list[int]:
        """Node indices, each before all of its parents (Kahn's algorithm from the output)."""
        consumers = [0] * len(self.nodes)
        for p, _, _ in self.edges:
            consumers[p] += 1
        ready = [i for i, n in enumerate(consumers) if n == 0]
        order: list[int] = []
        edges, start = self.edges, self.edge_start
        while ready:
            i = ready.pop()
            order.append(i)
            for k in range(start[i], start[i + 1]):
                p = edges[k][0]
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
    kind = _node.kind_of(out, "collect")
    if max_nodes is not None and max_nodes < 1:
        raise ValueError(f"collect: max_nodes must be at least 1 (or None for all), got {max_nodes}")
    if max_depth is not None and max_depth < 0:
        raise ValueError(f"collect: max_depth must be 0 or more (or None for all), got {max_depth}")
    get_parents = _node.parents_getter(kind)
    cap = max_nodes if max_nodes is not None else -1
    nodes = [out]
    level = [0]
    index = {id(out): 0}
    edges: list[tuple[int, int, int]] = []
    start = [0]
    hidden: dict[int, int] = {}
    beyond: list[Any] = []  # parents not kept, to count the rest of the graph
    i = 0
    while i < len(nodes):
        node = nodes[i]
        depth = level[i] + 1
        cut = 0
        for slot, parent in enumerate(get_parents(node)):
            j = index.get(id(parent))
            if j is None:
                if len(nodes) == cap or (max_depth is not None and depth > max_depth):
                    cut += 1
                    beyond.append(parent)
                    continue
                j = len(nodes)
                index[id(parent)] = j
                nodes.append(parent)
                level.append(depth)
            edges.append((j, i, slot))
        if cut:
            hidden[i] = cut
        i += 1
        start.append(len(edges))
    n_total = len(nodes) + (_count_beyond(beyond, index, get_parents) if beyond else 0)
    return Graph(out, kind, nodes, edges, level, start, hidden, n_total)


def _count_beyond(stack: list[Any], known: dict[int, int], get_parents: Any) -> int:
    """How many nodes are reachable from ``stack`` and not in ``known``."""
    seen: set[int] = set()
    add = seen.add
    while stack:
        node = stack.pop()
        key = id(node)
        if key in seen or key in known:
            continue
        add(key)
        stack.extend(get_parents(node))
    return len(seen)


def count_nodes(out: Any) -> int:
    """How many nodes the graph behind ``out`` has (iterative, stores only ids)."""
    return _count_beyond([out], {}, _node.parents_getter(_node.kind_of(out, "count_nodes")))
