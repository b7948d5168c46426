"""Regenerate the pictures used by docs/graphs.md: ``python docs/img/make_graph_images.py``.

Graphviz draws them when its ``dot`` program is installed (matplotlib otherwise); the
``*_matplotlib.png`` picture always shows the pip-only renderer.
"""

from __future__ import annotations

from pathlib import Path

from chainrule.demo.seeds import L_graph, line_loss
from chainrule.graph import explain, render

HERE = Path(__file__).resolve().parent


def main() -> None:
    f = L_graph()["L"]  # seed 002's graph, labelled as in the tutorial, after backward()
    for name in ("seed002_graph.svg", "seed002_graph.png"):
        print(render(f, HERE / name))
    print(render(f, HERE / "seed002_graph_matplotlib.png", engine="matplotlib"))
    nodes = line_loss()  # seed 000's L = (y - (m x + c))^2, built as the tutorial does
    nodes["L"].backward()
    drawing = explain(nodes["L"], nodes["x"]).draw()
    for name in ("explain_paths.png", "explain_paths.svg"):
        print(drawing.render(HERE / name))


if __name__ == "__main__":
    main()
