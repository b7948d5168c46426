"""The examples reach their accuracies (fixed seeds, small budgets) and write their plots."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_moons_scalar_mlp_reaches_95_percent(tmp_path):
    ex = load_example("moons_scalar_mlp")
    result = ex.train(n_samples=100, steps=40, seed=0, show_progress=False)
    assert result["accuracy"] >= 0.95
    assert result["losses"][-1] < 0.25 * result["losses"][0]
    pytest.importorskip("matplotlib")
    png = ex.plot_decision_boundary(result["model"], result["X"], result["y"], str(tmp_path / "b.png"), resolution=20)
    ex.plot_losses(result["losses"], str(tmp_path / "l.png"))
    assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and os.path.getsize(tmp_path / "l.png") > 1000


def test_digits_mlp_reaches_96_percent_test_accuracy(tmp_path):
    pytest.importorskip("sklearn")
    ex = load_example("digits_mlp")
    result = ex.train(epochs=40, seed=0, show_progress=False)
    assert result["test_accuracy"] >= 0.96
    assert all(p.dtype == np.float32 for p in result["model"].parameters())
    assert np.mean(result["losses"][-20:]) < 0.5 * np.mean(result["losses"][:20])
    pytest.importorskip("matplotlib")
    assert os.path.getsize(ex.plot_losses(result["losses"], str(tmp_path / "loss.png"))) > 1000
