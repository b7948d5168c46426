"""examples/ run as scripts and print the tutorials' numbers; the pictures docs/descent.md shows exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DOC = ROOT / "docs" / "descent.md"

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")

# script -> (arguments take --out?, lines it must print, files it must write)
CASES = {
    "01_finite_differences.py": (
        True,
        ["analytic  f'(6) = -7.0", "autodiff  f'(6) = -7.0", "finite difference, h = 1e-5: -6.9999200022"],
        ["tangent.png"],
    ),
    "02_scalar_graph.py": (
        True,
        ["c = 3   op '+'  parents (a=1, b=2)", "L = -6   op '*'", "after L.backward(): a.grad = 4.0, b.grad = -11.0"],
        ["graph.svg", "graph.png"],
    ),
    "03_backward_by_hand.py": (
        False,
        [
            "  a         4            4   4.000020",
            "  b       -11          -11   -11.000060",
            "sum over 2 paths: dL/dx = 36; backward() gives 36",
        ],
        [],
    ),
    "04_descent.py": (
        True,
        [
            "L(1, 2) = -6.0, gradient [  4. -11.]",
            "a -= 0.01 * dL/da  ->  L = -6.156800",
            "b -= 0.01 * dL/db  ->  L = -7.283931",
            "L went down for 50 of 50 starts",
        ],
        ["vector_field.png", "trajectories.png"],
    ),
    "05_optimizers.py": (
        True,
        [
            "Himmelblau from a 7 x 7 grid of starts (adam): 49 of 49 starts converged",
            "minimum at ( 3.000000,  2.000000)",
            "minimum at (-2.805118,  3.131313)",
            "minimum at (-3.779310, -3.283186)",
            "minimum at ( 3.584428, -1.848127)",
        ],
        ["optimizers.png"],
    ),
    "06_second_derivatives.py": (
        False,
        ["d2L/da2 = 4.0   (2b)", "d2L/db2 = -12.0   (-6b)", "f''(6) = 16.0"],
        [],
    ),
}


def test_the_tutorial_story_is_complete():
    names = {p.name for p in EXAMPLES.glob("*.py")}
    assert set(CASES) <= names, set(CASES) - names


def valid_png(path: Path) -> tuple[int, int]:
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        assert im.format == "PNG"
        return im.size


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs(script, tmp_path):
    takes_out, lines, files = CASES[script]
    cmd = [sys.executable, "-Werror", str(EXAMPLES / script)] + (["--out", str(tmp_path)] if takes_out else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for line in lines:
        assert line in proc.stdout, f"{script} should print {line!r}:\n{proc.stdout}"
    for name in files:
        path = tmp_path / name
        assert f"wrote {path}" in proc.stdout
        if name.endswith(".png"):
            w, h = valid_png(path)
            assert w >= 400 and h >= 100
        else:
            assert "<svg" in path.read_text()


def test_examples_say_what_they_do():
    for script in CASES:
        proc = subprocess.run([sys.executable, "-Werror", str(EXAMPLES / script), "--help"], capture_output=True,
                              text=True)
        assert proc.returncode == 0 and "usage:" in proc.stdout, script


def test_doc_pictures_exist():
    text = DOC.read_text(encoding="utf-8")
    for name in re.findall(r"\]\(img/([\w.]+)\)", text):
        assert valid_png(DOC.parent / "img" / name)
