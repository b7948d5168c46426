"""Shared test helpers: a central-finite-difference gradient checker and input makers.

Test modules import these directly (``from conftest import check_grads``); this directory
is put on ``sys.path`` below so that works under every pytest import mode.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from chainrule import Tensor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

FD_EPS = 1e-6


def weights_like(out: Any, seed: int = 1234) -> np.ndarray:
    """Fixed random weights with the shape of ``out``: reduces any output to one number."""
    shape = np.shape(out.data if isinstance(out, Tensor) else out)
    return np.random.default_rng(seed).normal(size=shape)


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def scalar_loss(fn: Callable[..., Any], arrays: Sequence[np.ndarray], seeds: Sequence[int]) -> float:
    """sum(w_k * out_k) for the outputs of ``fn`` on constant Tensors (plain float64)."""
    outs = _as_list(fn(*[Tensor(a) for a in arrays]))
    return float(
        sum(np.sum(np.asarray(o.data, dtype=np.float64) * weights_like(o, s)) for o, s in zip(outs, seeds, strict=True))
    )


def numeric_grad(f: Callable[[list[np.ndarray]], float], arrays: Sequence[np.ndarray], eps: float = FD_EPS):
    """Central finite differences of the scalar function ``f`` at ``arrays``, one entry at a time."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            up = f(arrays)
            flat[i] = old - eps
            down = f(arrays)
            flat[i] = old
            gflat[i] = (up - down) / (2 * eps)
        grads.append(g)
    return grads


def analytic_grads(fn: Callable[..., Any], arrays: Sequence[np.ndarray], seeds: Sequence[int] | None = None):
    """Outputs of ``fn`` and reverse-mode gradients of sum(w * out) for each input."""
    xs = [Tensor(a, requires_grad=True) for a in arrays]
    outs = _as_list(fn(*xs))
    seeds = list(seeds) if seeds is not None else [1234 + k for k in range(len(outs))]
    loss = None
    for o, s in zip(outs, seeds, strict=True):
        assert isinstance(o, Tensor), f"expected a Tensor, got {type(o).__name__}"
        term = (o * Tensor(weights_like(o, s).astype(o.dtype))).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    grads = [x.grad.data if x.grad is not None else np.zeros_like(x.data) for x in xs]
    return outs, grads, seeds


def check_grads(
    fn: Callable[..., Any], *arrays: np.ndarray, rtol: float = 1e-5, atol: float = 1e-6, eps: float = FD_EPS
) -> list[np.ndarray]:
    """Assert reverse-mode gradients of ``fn`` equal central finite differences (float64).

    ``fn`` takes Tensors and returns a Tensor (or a list of Tensors); every output is
    reduced with fixed random weights, so every entry of the output is tested.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    outs, grads, seeds = analytic_grads(fn, arrays)
    num = numeric_grad(lambda arrs: scalar_loss(fn, arrs, seeds), arrays, eps)
    for k, (g, n, a) in enumerate(zip(grads, num, arrays, strict=True)):
        assert g.shape == a.shape, f"gradient {k} has shape {g.shape}, input has {a.shape}"
        np.testing.assert_allclose(g, n, rtol=rtol, atol=atol, err_msg=f"gradient of input {k}")
    return grads


def away_from(rng: np.random.Generator, shape: Sequence[int], lo: float, hi: float, gap: float = 0.1) -> np.ndarray:
    """Uniform in [lo, hi] with ``|x| >= gap`` (stays off the kinks at 0)."""
    x = rng.uniform(lo, hi, size=tuple(shape))
    return np.where(np.abs(x) < gap, np.copysign(gap, x) + x, x)


def distinct(rng: np.random.Generator, shape: Sequence[int], spread: float = 2.0) -> np.ndarray:
    """Entries that are pairwise apart by at least spread / size (no ties for max/min)."""
    n = int(np.prod(shape, dtype=int))
    values = np.linspace(-spread, spread, max(n, 1))[:n] + rng.uniform(-0.1, 0.1) * spread / max(n, 1)
    return rng.permutation(values).reshape(tuple(shape))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
