"""In a notebook, pictures and graphs display from a cell's last expression, and the tutorial runs.

docs/tutorial.ipynb (the tutorials' story: finite differences to a trained net) is executed in a
real Jupyter kernel with nbclient; each cell must show what it is there to show.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
from chainrule import Scalar

ROOT = Path(__file__).resolve().parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def test_plots_display_inline_as_png():
    pytest.importorskip("matplotlib")
    import chainrule.plot as cp

    for fig in (cp.tangent(lambda x: x**3, 1.0), cp.loss_curve([3.0, 2.0, 1.5]), cp.loss_curve({"a": [1.0, 0.5]})):
        assert fig._repr_png_().startswith(PNG)
        fig.savefig(os.devnull, format="png")  # still a matplotlib Figure in every other way


def test_tree_and_explain_display_as_their_text():
    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    L = b * (a + b)
    text = cr.graph.tree(L)
    assert isinstance(text, str) and repr(text) == str(text) and "\n├─" in repr(text)
    e = cr.explain(L, a)
    shown: list[str] = []

    class Printer:
        def text(self, s: str) -> None:
            shown.append(s)

    e._repr_pretty_(Printer(), False)
    assert shown == [str(e)] and "backward() gives" in shown[0]


def _outputs(cell) -> tuple[dict, str]:
    data: dict = {}
    text = ""
    for out in cell.outputs:
        assert out.output_type != "error", f"cell failed: {out.get('ename')}: {out.get('evalue')}"
        data.update(out.get("data", {}))
        text += out.get("text", "")
    return data, text


def test_tutorial_notebook_runs_and_shows_its_pictures(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    nb = nbformat.read(ROOT / "docs" / "tutorial.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}})
    client.execute()
    cells = [c for c in nb.cells if c.cell_type == "code"]
    shown = [_outputs(c) for c in cells]
    stderr = [out.text for c in cells for out in c.outputs if out.get("name") == "stderr"]
    assert not stderr, f"the tutorial warns or writes to stderr: {stderr}"
    by_source = {c.source.splitlines()[-1]: s for c, s in zip(cells, shown)}

    assert "autodiff: 14.0" in shown[0][1]
    assert by_source["cp.tangent(f, 3.0, analytic=lambda x: 6 * x - 4)"][0]["image/png"]
    assert by_source["a.grad, b.grad"][0]["text/plain"] == "(4.0, -11.0)"
    tree = by_source["cr.graph.tree(L)"][0]["text/plain"]
    assert tree.startswith("L (*)") and "\\n" not in tree and tree.count("\n") > 3
    assert "<svg" in by_source["L.graph()"][0]["image/svg+xml"]
    assert "sum: 18 + 18 = 36" in by_source["cr.explain(L2, x)"][0]["text/plain"]
    assert by_source['cp.trajectories(result, loss, labels=("$a$", "$b$"), label="$L$")'][0]["image/png"]
    data, text = by_source["cp.loss_curve(losses)"]
    assert data["image/png"]
    accuracy = float(text.split("accuracy ")[1].rstrip("%\n")) / 100
    assert accuracy > 0.95 and np.isfinite(accuracy)
