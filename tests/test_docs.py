"""The README and every page in docs/ run as written.

Their ```python blocks execute in order, one namespace per page, in a fresh folder; a block
followed by a ```text block must print exactly that text. Some pages also promise files or
messages, checked in ``PROMISES``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```\n(?:\s*```text\n(.*?)```\n)?", re.S)

# page -> (optional packages it needs, files it writes, phrases it prints)
PROMISES: dict[str, tuple[list[str], list[str], list[str]]] = {
    "descent.md": (["matplotlib"], ["tangent.png", "vector_field.png", "trajectories.png", "optimizers.png"], []),
    "graphs.md": (
        ["matplotlib", "networkx"],
        ["seed002_graph.svg", "seed002_graph.png", "mlp.svg", "big.svg", "explain_paths.png"],
        [],
    ),
    "nn.md": (
        [],
        [],
        ["has shape (8, 8) in the model but shape (4, 8) in the state dict", "refused:", "pickled Python objects"],
    ),
}


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_runs_and_prints_what_it_shows(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    needs, files, phrases = PROMISES.get(page.name, ([], [], []))
    for module in needs:
        pytest.importorskip(module)
    blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
    if page.name == "README.md":
        assert len(blocks) >= 3, "the README shows a scalar, a tensor and a function example"
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    printed = []
    for k, (code, expected) in enumerate(blocks, 1):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{page.name} block {k}", "exec"), namespace)
        except Exception as e:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"{page.name}, block {k} failed: {type(e).__name__}: {e}\n{code}") from e
        if expected:
            assert _lines(out.getvalue()) == _lines(expected), f"{page.name}, block {k} printed something else"
        printed.append(out.getvalue())
    for name in files:
        assert (tmp_path / name).stat().st_size > 1000, f"{page.name} should write {name}"
    for phrase in phrases:
        assert phrase in "".join(printed), f"{page.name} should print {phrase!r}"


def test_readme_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    first = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first is not None
    lines = [ln for ln in first.group(1).splitlines() if ln.strip()]
    assert len(lines) == 2
    assert lines[0].endswith("chainrule demo") and "pip install" in lines[0]
    assert "pytest" in lines[1] and "[dev]" in lines[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert lines[1] in ci, ".ci/run must run the README's test command verbatim"
