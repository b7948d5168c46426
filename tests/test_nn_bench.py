"""bench/bench_mlp_train.py measures the same computation in each implementation (no timing asserted)."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "bench_mlp_train.py")


def load():
    spec = importlib.util.spec_from_file_location("bench_mlp_train", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_numpy_chainrule_and_torch_steps_compute_the_same_losses():
    bench = load()
    sizes = [20, 16, 16, 5]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 20)).astype(np.float32)
    y = rng.integers(0, 5, size=8)
    steps = [bench.numpy_step_fn(sizes, x, y), bench.chainrule_step_fn(sizes, x, y)]
    if importlib.util.find_spec("torch") is not None:
        steps.append(bench.torch_step_fn(sizes, x, y))
    losses = np.array([[step() for _ in range(4)] for step in steps])
    assert losses[0, -1] < losses[0, 0]  # they train
    step = bench.chainrule_jit_step_step_fn(sizes, x, y)
    assert [step() for _ in range(4)] == losses[1].tolist()  # the replayed step: bit for bit the eager one
    np.testing.assert_allclose(losses[1:], np.broadcast_to(losses[0], losses[1:].shape), rtol=2e-5)


def test_tiny_run_returns_rows_with_ratios(capsys):
    bench = load()
    rows = bench.main(["--tiny", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "cr/numpy" in out and "cr/torch" in out
    timed = [r for r in rows if "numpy_ms" in r]
    assert len(timed) == 3 and all(r["chainrule_over_numpy"] > 0 for r in timed)
    assert all(r["loss_diff_vs_numpy"] < 1e-4 for r in timed)
    pytest.importorskip("micrograd")
    assert rows[-1]["micrograd_ms"] is not None
