"""A left-to-right layered layout (Sugiyama style), in pure Python, for the matplotlib renderer.

Steps: layers by longest path from the inputs (inputs then pulled next to their first
consumer); long edges broken by dummy points, one per layer crossed; orders within
layers by barycenter sweeps, keeping the order with fewest crossings; heights by a few
rounds of pulling each node towards its neighbours without overlaps. No recursion.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from dataclasses import dataclass


@dataclass
class Layout:
    pos: dict[str, tuple[float, float]]  # centre of each node (inches, y grows upwards)
    routes: list[list[tuple[float, float]]]  # per edge: source centre, bends, target centre
    width: float
    height: float


def _layers(n: int, preds: list[list[int]], succs: list[list[int]]) -> list[int]:
    indeg = [len(p) for p in preds]
    ready = [v for v in range(n) if indeg[v] == 0]
    order = []
    while ready:
        v = ready.pop()
        order.append(v)
        for w in succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    if len(order) != n:
        raise ValueError("layout: the graph has a cycle")
    layer = [0] * n
    for v in order:
        for w in succs[v]:
            layer[w] = max(layer[w], layer[v] + 1)
    for v in reversed(order):  # sources move right, next to their nearest consumer
        if not preds[v] and succs[v]:
            layer[v] = min(layer[w] for w in succs[v]) - 1
    return layer


def _crossings(upper: list[int], lower_pos: dict[int, int], succ: list[list[int]]) -> int:
    ends = [lower_pos[w] for v in upper for w in succ[v] if w in lower_pos]
    count = 0
    seen: list[int] = []  # inversions between edge endpoints, taken in the order of their sources
    for e in ends:
        count += len(seen) - bisect_right(seen, e)
        insort(seen, e)
    return count


def _total_crossings(rows: list[list[int]], succ: list[list[int]]) -> int:
    total = 0
    for k in range(len(rows) - 1):
        total += _crossings(rows[k], {v: i for i, v in enumerate(rows[k + 1])}, succ)
    return total


def _order(rows: list[list[int]], preds: list[list[int]], succs: list[list[int]], sweeps: int) -> list[list[int]]:
    def sweep(indices: range, side: list[list[int]], ref_offset: int) -> None:
        for k in indices:
            ref = {v: i for i, v in enumerate(rows[k + ref_offset])}
            row = rows[k]
            keys = {}
            for i, v in enumerate(row):
                nb = [ref[w] for w in side[v] if w in ref]
                keys[v] = sum(nb) / len(nb) if nb else i
            row.sort(key=lambda v: keys[v])

    n_edges = sum(len(s) for s in succs)
    best = [list(r) for r in rows]
    best_count = _total_crossings(rows, succs) if n_edges <= 20000 else 0
    for s in range(sweeps):
        if s % 2 == 0:
            sweep(range(len(rows) - 2, -1, -1), succs, 1)  # from the output back to the inputs
        else:
            sweep(range(1, len(rows)), preds, -1)
        if n_edges <= 20000:
            count = _total_crossings(rows, succs)
            if count < best_count:
                best, best_count = [list(r) for r in rows], count
        else:
            best = [list(r) for r in rows]
    return best


def _heights(
    rows: list[list[int]], height: list[float], preds: list[list[int]], succs: list[list[int]], vgap: float
) -> list[float]:
    y = [0.0] * len(height)
    for row in rows:
        top = 0.0
        for v in row:
            y[v] = top + height[v] / 2
            top += height[v] + vgap
    for _ in range(12):
        for row in rows:
            want = []
            for v in row:
                nb = preds[v] + succs[v]
                want.append(sum(y[w] for w in nb) / len(nb) if nb else y[v])
            placed = []
            for i, v in enumerate(row):
                lo = placed[-1] + (height[row[i - 1]] + height[v]) / 2 + vgap if placed else -1e18
                placed.append(max(want[i], lo))
            shift = sum(w - p for w, p in zip(want, placed, strict=True)) / len(row)
            for v, p in zip(row, placed, strict=True):
                y[v] = p + shift
    low = min(y[v] - height[v] / 2 for v in range(len(y)))
    return [v - low for v in y]


def layered_layout(
    nodes: list[str],
    edges: list[tuple[str, str]],
    size: dict[str, tuple[float, float]],
    hgap: float = 0.6,
    vgap: float = 0.25,
    sweeps: int = 8,
) -> Layout:
    """Positions for ``nodes`` (with ``size[key] = (width, height)`` in inches), edges left to right."""
    index = {k: i for i, k in enumerate(nodes)}
    width = [size[k][0] for k in nodes]
    height = [size[k][1] for k in nodes]
    n = len(nodes)
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        succs[index[a]].append(index[b])
        preds[index[b]].append(index[a])
    layer = _layers(n, preds, succs)
    chains = []  # per edge: vertices from source to target, dummies included
    for a, b in edges:
        u, v = index[a], index[b]
        chain = [u]
        for k in range(layer[u] + 1, layer[v]):
            d = len(width)
            width.append(0.0)
            height.append(0.12)
            layer.append(k)
            preds.append([chain[-1]])
            succs.append([])
            succs[chain[-1]].append(d)
            chain.append(d)
        if len(chain) > 1:
            succs[chain[-1]].append(v)
            preds[v].append(chain[-1])
            succs[u].remove(v)
            preds[v].remove(u)
        chain.append(v)
        chains.append(chain)
    n_layers = max(layer) + 1 if layer else 0
    rows: list[list[int]] = [[] for _ in range(n_layers)]
    for v in range(len(layer)):
        rows[layer[v]].append(v)
    rows = _order(rows, preds, succs, sweeps)
    y = _heights(rows, height, preds, succs, vgap)
    col_w = [max((width[v] for v in row), default=0.0) for row in rows]
    x_left = []
    x = 0.0
    for w in col_w:
        x_left.append(x)
        x += w + hgap
    xs = [x_left[layer[v]] + col_w[layer[v]] / 2 for v in range(len(layer))]
    total_w = max(x - hgap, 0.0)
    total_h = max((y[v] + height[v] / 2 for v in range(len(y))), default=0.0)
    pos = {k: (xs[i], y[i]) for k, i in index.items()}
    routes = [[(xs[v], y[v]) for v in chain] for chain in chains]
    return Layout(pos, routes, total_w, total_h)
