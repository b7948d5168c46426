"""Graphviz DOT source for a graph: record boxes ``label | data | grad``, op circles, labelled edges.

Plain text, written here: making the source needs no optional package.
"""

from __future__ import annotations

from typing import Any

from .scene import DEFAULT_MAX_NODES, Box, Highlight, Scene, build_scene

FONT = "Helvetica,Arial,sans-serif"
_RECORD_SPECIAL = "\\{}|<>"


def _quote(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _caption(scene: Scene) -> str:
    """An HTML-like label: the caption lines, then the legend lines in their colours, left aligned."""
    parts = [_html(line) + '<br align="left"/>' for line in scene.caption]
    parts += [f'<font color="{_html(color)}">{_html(text)}</font><br align="left"/>' for color, text in scene.legend]
    return "<" + "".join(parts) + ">"


def _record_field(text: str) -> str:
    """Escape the characters that structure a record label (the quotes are escaped by _quote_record)."""
    out = "".join("\\" + ch if ch in _RECORD_SPECIAL else ch for ch in text.replace("\n", " "))
    return out if out.strip() else " "


def _quote_record(label: str) -> str:
    """A DOT string holding a record label whose backslashes are already record escapes."""
    return '"' + label.replace('"', '\\"') + '"'


def _attrs(**kw: Any) -> str:
    body = ", ".join(f"{k}={v}" for k, v in kw.items() if v is not None)
    return f"[{body}]" if body else ""


def _box_lines(box: Box, rankdir: str) -> list[str]:
    if box.hidden:
        style = _quote("dashed,rounded")
        return [f"  {box.key} {_attrs(shape='box', style=style, color='gray50', label=_quote(box.fields[0]))};"]
    record = " | ".join(_record_field(f) for f in box.fields)
    if rankdir in ("LR", "RL"):  # fields side by side (the top level of a record is vertical there)
        record = "{ " + record + " }"
    color = _quote(box.color) if box.color else None
    attrs = _attrs(
        shape="record",
        style="filled",
        fillcolor="lightblue" if box.output else "white",
        label=_quote_record(record),
        color=color,
        penwidth="2" if box.output or box.color else None,
    )
    lines = [f"  {box.key} {attrs};"]
    if box.op:
        pen = "2" if box.color else None
        attrs = _attrs(
            shape="circle" if len(box.op) <= 3 else "ellipse",
            style="filled",
            fillcolor="lightgray",
            label=_quote(box.op),
            fontsize="10",
            width="0.3",
            height="0.3",
            margin="0.02",
            color=color,
            penwidth=pen,
        )
        lines.append(f"  {box.key}_op {attrs};")
        lines.append(f"  {box.key}_op -> {box.key} {_attrs(color=color, penwidth=pen)}".rstrip() + ";")
    return lines


def scene_to_dot(scene: Scene, rankdir: str = "LR") -> str:
    """DOT source for a :class:`~chainrule.graph.scene.Scene`."""
    lines = ["digraph chainrule {"]
    graph_attrs = {"rankdir": rankdir, "fontname": _quote(FONT), "nodesep": "0.25", "ranksep": "0.4"}
    if scene.caption or scene.legend:
        graph_attrs.update(label=_caption(scene), labelloc="t", labeljust="l", fontsize="12")
    lines.append(f"  graph {_attrs(**graph_attrs)};")
    lines.append(f"  node {_attrs(fontname=_quote(FONT), fontsize='11')};")
    lines.append(f"  edge {_attrs(fontname=_quote(FONT), fontsize='10', color='gray35', arrowsize='0.7')};")
    for box in scene.boxes:
        lines.extend(_box_lines(box, rankdir))
    for link in scene.links:
        dst = f"{link.dst}_op"
        if link.hidden:
            lines.append(f"  {link.src} -> {dst} {_attrs(style='dashed', color='gray50')};")
            continue
        color = _quote(":".join(link.colors)) if link.colors else None
        lines.append(
            f"  {link.src} -> {dst} "
            + _attrs(
                label=_quote(link.label) if link.label else None,
                color=color,
                fontcolor=_quote(link.colors[0]) if link.colors else None,
                penwidth="2" if link.colors else None,
            )
            + ";"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_dot(
    out: Any,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    max_depth: int | None = None,
    rankdir: str = "LR",
    highlight: Highlight | None = None,
    title: str | None = None,
) -> str:
    """Graphviz DOT source for the graph behind ``out`` (a Scalar or a Tensor).

    Each value is a record ``label | data | grad`` (Tensors: label, shape and dtype, grad);
    each operation a small circle; Scalar edges are labelled with the local derivative
    d(child)/d(parent), Tensor edges with the argument position. At most ``max_nodes``
    values are drawn (None: all, up to 5,000; pass the number itself for more), the rest are counted in the
    caption and in dashed boxes.

    Example:
        >>> from chainrule import Scalar
        >>> from chainrule.graph import to_dot
        >>> x = Scalar(3.0, label="x")
        >>> src = to_dot(x * 2.0)
        >>> src.startswith("digraph"), 'label="2"' in src
        (True, True)
    """
    if rankdir not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"to_dot: rankdir must be one of 'LR', 'RL', 'TB', 'BT', got {rankdir!r}")
    return scene_to_dot(build_scene(out, max_nodes, max_depth, highlight, title, "to_dot"), rankdir)
