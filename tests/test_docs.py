"""The README and every page in docs/ run: their ```python blocks execute, in order, per file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_code_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = BLOCK.findall(page.read_text())
    if page.name == "README.md":
        assert len(blocks) >= 3, "the README shows a scalar, a tensor and a function example"
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"{page.name}[block {i}]", "exec"), namespace)
        except Exception as e:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"{page.name}, block {i} failed: {type(e).__name__}: {e}\n{code}") from e


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
