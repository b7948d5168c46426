"""docs/graphs.md runs as written: every python block executes and prints the text block after it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "graphs.md"
BLOCK = re.compile(r"```python\n(.*?)```\n(?:\s*```text\n(.*?)```\n)?", re.S)

pytest.importorskip("matplotlib")
pytest.importorskip("networkx")


def _clean(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_graphs_doc_examples_run_and_print_what_the_doc_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    namespace: dict = {}
    for k, (code, expected) in enumerate(blocks, 1):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{DOC.name} block {k}", "exec"), namespace)
        if expected:
            assert _clean(out.getvalue()) == _clean(expected), f"block {k} printed something else"
    for name in ["seed002_graph.svg", "seed002_graph.png", "mlp.svg", "big.svg", "explain_paths.png"]:
        assert (tmp_path / name).stat().st_size > 1000, name
