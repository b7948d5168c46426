"""Every Python block of docs/nn.md runs, in order, in one namespace."""

from __future__ import annotations

import os
import re

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "nn.md")


def test_docs_nn_blocks_run(capsys):
    text = open(DOC, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 8
    namespace: dict = {}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"docs/nn.md block {i}", "exec"), namespace)  # noqa: S102
        except Exception as e:  # pragma: no cover - the message says which block failed
            raise AssertionError(f"docs/nn.md block {i} failed: {type(e).__name__}: {e}\n{block}") from e
    out = capsys.readouterr().out
    assert "has shape (8, 8) in the model but shape (4, 8) in the state dict" in out
    assert "refused:" in out and "pickled Python objects" in out
