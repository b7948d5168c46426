"""Regenerate the pictures used by docs/graphs.md: ``python docs/img/make_graph_images.py``.

Graphviz draws them when its ``dot`` program is installed (matplotlib otherwise); the
``*_matplotlib.png`` picture always shows the pip-only renderer.
"""

from __future__ import annotations

from pathlib import Path

from chainrule import Scalar
from chainrule.graph import explain, render

HERE = Path(__file__).resolve().parent


def seed002() -> Scalar:
    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    c = a + b
    c.label = "c"
    d = a - b
    d.label = "d"
    e = c * d
    e.label = "e"
    f = e * b
    f.label = "f"
    f.backward()
    return f


def seed000() -> tuple[Scalar, Scalar]:
    y, m, x, c = (Scalar(v, label=n) for v, n in [(1.0, "y"), (2.0, "m"), (3.0, "x"), (4.0, "c")])
    L = (y - (m * x + c)) * (y - (m * x + c))
    L.label = "L"
    L.backward()
    return L, x


def main() -> None:
    f = seed002()
    for name in ("seed002_graph.svg", "seed002_graph.png"):
        print(render(f, HERE / name))
    print(render(f, HERE / "seed002_graph_matplotlib.png", engine="matplotlib"))
    L, x = seed000()
    drawing = explain(L, x).draw()
    for name in ("explain_paths.png", "explain_paths.svg"):
        print(drawing.render(HERE / name))


if __name__ == "__main__":
    main()
