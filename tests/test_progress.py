"""One progress bar helper (chainrule.nn.progress) for training loops and the demo."""

from __future__ import annotations

import io
import sys

from chainrule import nn
from chainrule.demo import bar as demo_progress


def test_without_tqdm_the_stand_in_iterates_and_reports_only_on_a_given_stream(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    stream = io.StringIO()
    bar = nn.progress(range(3), desc="loop", file=stream)
    assert list(bar) == [0, 1, 2]
    assert stream.getvalue().splitlines()[-1].startswith("    ... loop: 3/3 (")
    silent = nn.progress(range(2), desc="quiet")
    silent.set_postfix(loss=1.0)
    assert list(silent) == [0, 1]
    assert nn.progress(range(2), file=stream, disable=True).file is None


def test_the_demo_stage_is_the_same_helper(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    calls = []
    monkeypatch.setattr(demo_progress, "progress", lambda **kw: calls.append(kw) or nn.progress(**kw))
    with demo_progress.stage("drawing", 2, io.StringIO()) as tick:
        tick()
    assert calls[0]["delay"] == demo_progress.DELAY and calls[0]["total"] == 2
