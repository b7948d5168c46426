"""Draw a graph :class:`~chainrule.pictures.graph.scene.Scene` with matplotlib only (no Graphviz program needed).

Same picture as the DOT source: record boxes ``label | data | grad``, grey op circles,
edges with their labels, dashed boxes for hidden inputs, a caption on top.
"""

from __future__ import annotations

from typing import Any

from ..mpl import new_figure, require
from .layout import layered_layout
from .scene import Scene

FONT_SIZE = 9.0
EDGE_FONT_SIZE = 8.0
PAD = 0.07  # inches of space around the text in a record field
BOX_H = 0.3
CAPTION_LINE = 0.22
MARGIN = 0.2
MAX_PIXELS = 16000  # longest side of a PNG
MAX_AREA = 30e6  # pixels of a PNG: huge graphs get a lower resolution


def _matplotlib() -> Any:
    return require("chainrule.graph (drawing without Graphviz)", "viz")


_WIDTHS: dict[tuple[str, float], float] = {}


def _text_width(text: str, size: float) -> float:
    """Width of ``text`` in inches at font ``size`` (points), from the font's glyph advances."""
    if not text.strip():
        return 0.0
    key = (text, size)
    if key not in _WIDTHS:
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import text_to_path

        width, _, _ = text_to_path.get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
        _WIDTHS[key] = width / 72.0
    return _WIDTHS[key]


def _field_widths(fields: tuple[str, ...]) -> list[float]:
    return [max(_text_width(f, FONT_SIZE) + 2 * PAD, 0.2) for f in fields]


def _op_size(op: str) -> tuple[float, float]:
    """A circle for short op names, an ellipse as tall as a circle for longer ones."""
    d = max(0.3, _text_width(op, FONT_SIZE) + 0.1)
    return (d, d) if len(op) <= 3 else (d + 0.06, 0.3)


def _smooth_path(points: list[tuple[float, float]]) -> Any:
    """A path through ``points``: straight for two, Catmull-Rom curves (as Beziers) for more."""
    from matplotlib.path import Path

    if len(points) == 2:
        return Path(points, [Path.MOVETO, Path.LINETO])
    verts = [points[0]]
    codes = [Path.MOVETO]
    ext = [points[0]] + points + [points[-1]]
    for i in range(1, len(ext) - 2):
        p0, p1, p2, p3 = ext[i - 1], ext[i], ext[i + 1], ext[i + 2]
        c1 = (p1[0] + (p2[0] - p0[0]) / 6, p1[1] + (p2[1] - p0[1]) / 6)
        c2 = (p2[0] - (p3[0] - p1[0]) / 6, p2[1] - (p3[1] - p1[1]) / 6)
        verts += [c1, c2, p2]
        codes += [Path.CURVE4] * 3
    return Path(verts, codes)


def scene_figure(scene: Scene) -> Any:
    """A matplotlib Figure (not attached to pyplot) showing ``scene``."""
    _matplotlib()
    from matplotlib.patches import Ellipse, FancyArrowPatch, FancyBboxPatch, Rectangle

    size: dict[str, tuple[float, float]] = {}
    fields_w: dict[str, list[float]] = {}
    keys: list[str] = []
    edges: list[tuple[str, str]] = []
    for box in scene.boxes:
        widths = _field_widths(box.fields)
        fields_w[box.key] = widths
        size[box.key] = (sum(widths), BOX_H)
        keys.append(box.key)
        if box.op:
            size[box.key + "_op"] = _op_size(box.op)
            keys.append(box.key + "_op")
            edges.append((box.key + "_op", box.key))
    n_internal = len(edges)
    edges += [(link.src, link.dst + "_op") for link in scene.links]
    # parallel edges (x * x) get bent apart
    seen: dict[tuple[str, str], int] = {}
    placed: list[tuple[float, float, float, float]] = []  # edge label boxes already drawn
    layout = layered_layout(keys, edges, size)
    caption = list(scene.caption) + [text for _, text in scene.legend]
    cap_h = CAPTION_LINE * len(caption) + (0.1 if caption else 0.0)
    W = layout.width + 2 * MARGIN
    H = layout.height + 2 * MARGIN + cap_h
    if caption:
        W = max(W, max(_text_width(c, FONT_SIZE + 1) for c in caption) + 2 * MARGIN)
    fig = new_figure((W, H))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, W)
    ax.set_ylim(0, H)
    ax.axis("off")

    def at(p: tuple[float, float]) -> tuple[float, float]:
        return (p[0] + MARGIN, H - cap_h - MARGIN - p[1])

    box_by_key = {b.key: b for b in scene.boxes}
    for box in scene.boxes:
        cx, cy = at(layout.pos[box.key])
        w, h = size[box.key]
        x0 = cx - w / 2
        if box.hidden:
            ax.add_artist(FancyBboxPatch((x0, cy - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.08",
                                        fc="white", ec="gray", ls="--", lw=1, zorder=3))
            ax.text(cx, cy, box.fields[0], ha="center", va="center", fontsize=FONT_SIZE, color="dimgray", zorder=4)
            continue
        ec = box.color or "black"
        lw = 2.0 if box.output or box.color else 1.0
        fc = "lightblue" if box.output else "white"
        ax.add_artist(Rectangle((x0, cy - h / 2), w, h, fc=fc, ec=ec, lw=lw, zorder=3))
        x = x0
        for k, (text, fw) in enumerate(zip(box.fields, fields_w[box.key], strict=True)):
            if k:
                ax.plot([x, x], [cy - h / 2, cy + h / 2], color=ec, lw=lw * 0.8, zorder=4)
            ax.text(x + fw / 2, cy, text, ha="center", va="center", fontsize=FONT_SIZE, zorder=5)
            x += fw
        if box.op:
            ox, oy = at(layout.pos[box.key + "_op"])
            ow, oh = size[box.key + "_op"]
            ax.add_artist(Ellipse((ox, oy), ow, oh, fc="lightgray", ec=ec, lw=lw if box.color else 1.0, zorder=3))
            ax.text(ox, oy, box.op, ha="center", va="center", fontsize=FONT_SIZE, zorder=5)

    for i, route in enumerate(layout.routes):
        src, dst = edges[i]
        pts = [at(p) for p in route]
        pts[0] = _leave(pts[0], pts[1], size[src], src)
        pts[-1] = _arrive(pts[-1], pts[-2], size[dst], dst)
        if i < n_internal:
            color = box_by_key[dst].color
            _arrow(ax, FancyArrowPatch, pts, [color or "dimgray"], 2.0 if color else 1.0, "-")
            continue
        link = scene.links[i - n_internal]
        dup = seen.get((src, dst), 0)
        seen[(src, dst)] = dup + 1
        if dup and len(pts) == 2:
            (x1, y1), (x2, y2) = pts
            bend = 0.18 * ((dup + 1) // 2) * (1 if dup % 2 else -1)
            pts = [pts[0], ((x1 + x2) / 2, (y1 + y2) / 2 + bend), pts[1]]
        colors = list(link.colors) or ["dimgray"]
        _arrow(ax, FancyArrowPatch, pts, colors, 2.0 if link.colors else 1.0, "--" if link.hidden else "-")
        if link.label:
            lx, ly = _label_spot(pts[-2], pts[-1], _text_width(link.label, EDGE_FONT_SIZE) + 0.06, placed)
            ax.text(lx, ly, link.label, ha="center", va="center",
                    fontsize=EDGE_FONT_SIZE, color=link.colors[0] if link.colors else "black", zorder=6,
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.85})
    for k, line in enumerate(caption):
        color = "black"
        if k >= len(scene.caption):
            color = scene.legend[k - len(scene.caption)][0]
        ax.text(MARGIN, H - MARGIN - CAPTION_LINE * (k + 0.5), line, ha="left", va="center",
                fontsize=FONT_SIZE + 1, color=color)
    return fig


Point = tuple[float, float]


def _leave(p: Point, nxt: Point, size: Point, key: str) -> Point:
    if key.endswith("_op"):
        return _on_ellipse(p, nxt, size)
    return (p[0] + size[0] / 2, p[1])


def _arrive(p: Point, prev: Point, size: Point, key: str) -> Point:
    if key.endswith("_op"):
        return _on_ellipse(p, prev, size)
    return (p[0] - size[0] / 2, p[1])


def _label_spot(a: Point, b: Point, width: float, placed: list[tuple[float, float, float, float]]) -> Point:
    """A point on the segment a-b for an edge label, away from the labels already placed."""
    h = 0.15
    spot = a
    for t in (0.55, 0.72, 0.38, 0.85, 0.25, 0.5):
        spot = (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)
        box = (spot[0] - width / 2, spot[1] - h / 2, spot[0] + width / 2, spot[1] + h / 2)
        if not any(box[0] < q[2] and q[0] < box[2] and box[1] < q[3] and q[1] < box[3] for q in placed):
            break
    placed.append((spot[0] - width / 2, spot[1] - h / 2, spot[0] + width / 2, spot[1] + h / 2))
    return spot


def _on_ellipse(c: Point, towards: Point, size: Point) -> Point:
    """Where the line from the centre ``c`` of an ellipse towards a point leaves the ellipse."""
    dx, dy = towards[0] - c[0], towards[1] - c[1]
    a, b = size[0] / 2, size[1] / 2
    t = 1.0 / (((dx / a) ** 2 + (dy / b) ** 2) ** 0.5 or 1.0)
    return (c[0] + dx * t, c[1] + dy * t)


def _arrow(ax: Any, patch: Any, pts: list[tuple[float, float]], colors: list[str], lw: float, ls: str) -> None:
    n = len(colors)
    for k, color in enumerate(colors):
        off = (k - (n - 1) / 2) * 0.035
        shifted = [(x, y + off) for x, y in pts]
        ax.add_artist(patch(path=_smooth_path(shifted), arrowstyle="-|>", mutation_scale=9, color=color, lw=lw,
                           ls=ls, zorder=2, shrinkA=0, shrinkB=0))


def save_scene(scene: Scene, target: Any, fmt: str, dpi: float = 120) -> None:
    """Write ``scene`` as ``fmt`` ('svg', 'png' or 'pdf') to a path or a binary file object."""
    matplotlib = _matplotlib()
    fig = scene_figure(scene)
    w, h = fig.get_size_inches()
    dpi = min(dpi, MAX_PIXELS / max(w, h, 1.0), (MAX_AREA / max(w * h, 1.0)) ** 0.5)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "chainrule"}):
        fig.savefig(target, format=fmt, dpi=dpi, metadata={"Date": None} if fmt == "svg" else None)
