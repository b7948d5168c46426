"""The graph as an indented tree of text: one line per node, shared parts printed once."""

from __future__ import annotations

from typing import Any

from .collect import count_nodes, refuse_all_of_a_big_graph
from .format import label_of
from .views import NodeView, view_of

_UNICODE = ("├─ ", "└─ ", "│  ", "   ")
_ASCII = ("|- ", "`- ", "|  ", "   ")


def _head(node: Any) -> str:
    label, op = label_of(node), node.op
    if op:
        return f"{label} ({op})" if label else f"({op})"
    return label or "leaf"


def _edge(view: NodeView, child: Any, slot: int) -> str:
    text = view.edge_label(child, slot)
    return f"  {view.edge_word}{text}" if text else ""


class TextTree(str):
    """The text of :func:`tree`: a ``str`` that shows as its lines, not as an escaped string.

    At a prompt or as a notebook cell's last expression, ``tree(L)`` displays the tree itself
    (a plain ``str`` would show one line full of ``\\n``). Everything else is ``str``'s.
    """

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def tree(out: Any, max_lines: int | None = 200, max_depth: int | None = None, ascii: bool = False) -> TextTree:
    """The graph behind ``out`` as an indented tree, output first, inputs indented below.

    Each line shows a node's label, its op in parentheses, its data and grad, and the
    edge to its consumer (Scalars: the local derivative; Tensors: the argument position).
    A node used more than once is printed in full the first time, tagged ``#k``, and
    referred to as ``#k`` after that. At most ``max_lines`` lines (None: all, for a graph of up to 5,000 nodes) and
    ``max_depth`` levels; the last line says how many nodes were left out.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import tree
        >>> a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
        >>> print(tree(a * b + a))
        (+)  data 3.0000  grad 0.0000
        ├─ (*)  data 2.0000  grad 0.0000  local 1
        │  ├─ a  data 1.0000  grad 0.0000  local 2
        │  └─ b  data 2.0000  grad 0.0000  local 1
        └─ a  data 1.0000  grad 0.0000  local 1
    """
    view = view_of(out, "tree")
    if max_lines is not None and max_lines < 1:
        raise ValueError(f"tree: max_lines must be at least 1 (or None for all), got {max_lines}")
    refuse_all_of_a_big_graph(out, max_lines, "tree", "max_lines")
    mid, last, bar, blank = _ASCII if ascii else _UNICODE
    entries: list[tuple[str, Any, str, bool, int]] = []  # (guide, node, edge text, is reference, hidden inputs)
    printed: set[int] = set()
    referenced: set[int] = set()
    stack: list[tuple[Any, str, str, str, int]] = [(out, "", "", "", 0)]
    while stack:
        if max_lines is not None and len(entries) >= max_lines:
            break
        node, guide, below, edge, depth = stack.pop()
        key = id(node)
        parents = node.parents
        if parents and key in printed:
            referenced.add(key)
            entries.append((guide, node, edge, True, 0))
            continue
        if parents and max_depth is not None and depth >= max_depth:
            entries.append((guide, node, edge, False, len(parents)))
            continue
        entries.append((guide, node, edge, False, 0))
        if not parents:
            continue
        printed.add(key)
        n = len(parents)
        for slot in range(n - 1, -1, -1):
            end = slot == n - 1
            stack.append((parents[slot], below + (last if end else mid), below + (blank if end else bar),
                          _edge(view, node, slot), depth + 1))
    tags: dict[int, int] = {}
    lines = []
    for guide, node, edge, is_ref, cut in entries:
        key = id(node)
        tag = ""
        if key in referenced:
            if key not in tags:
                tags[key] = len(tags) + 1
            tag = f" #{tags[key]}"
        if is_ref:
            lines.append(f"{guide}{_head(node)}{tag} (shown above){edge}")
            continue
        more = f"  [{cut} input{'s' if cut > 1 else ''} not shown]" if cut else ""
        lines.append(f"{guide}{_head(node)}{tag}  {view.data_text(node)}  {view.grad_text(node)}{edge}{more}")
    if stack:
        shown = len({id(e[1]) for e in entries})
        hidden = count_nodes(out) - shown
        what = f"{hidden:,} more nodes" if hidden else "more lines (repeats of nodes above)"
        lines.append(f"... {what} not shown (max_lines={max_lines}); pass max_lines=None to print all")
    return TextTree("\n".join(lines))


def print_graph(out: Any, max_lines: int | None = 200, max_depth: int | None = None, ascii: bool = False) -> None:
    """Print :func:`tree` of ``out`` (seed 002's ``graph()``, with shared nodes printed once).

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import print_graph
        >>> x = Scalar(3.0, label="x")
        >>> print_graph(x * x)
        (*)  data 9.0000  grad 0.0000
        ├─ x  data 3.0000  grad 0.0000  local 3
        └─ x  data 3.0000  grad 0.0000  local 3
    """
    print(tree(out, max_lines=max_lines, max_depth=max_depth, ascii=ascii))
