"""Random programs of shape and indexing ops on 1-3-d Tensors, run by chainrule and PyTorch side by side.

Each program chains 3-7 steps drawn from what fits the current shape: fancy indexing with repeated
indices, negative steps, integer and boolean indexing, flips, rolls, cumulative sums, reductions and
softmax along a dim, transposes, matrix products, diagonals, masks. It compares the value, the gradient,
a Hessian-vector product (double backward), the forward-mode derivative (``jvp`` against torch.func)
and forward-over-reverse under ``vmap``. About a seventh of the entries are exact zeros, and some
programs run on rounded values (ties for max and sort).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch", reason="torch is not installed")
pytestmark = pytest.mark.oracle


def _candidates(shape: tuple[int, ...], rng: np.random.Generator) -> list[tuple[str, object, object]]:
    """(name, chainrule step, torch step) pairs that apply to a Tensor of ``shape``."""
    nd, out = len(shape), []
    d = int(rng.integers(nd))
    n, before = shape[d], (slice(None),) * d
    picks = rng.integers(0, n, size=int(rng.integers(1, 5)))
    out += [
        ("fancy", lambda x: x[before + (picks.tolist(),)], lambda x: x[before + (torch.tensor(picks),)]),
        ("negstep", lambda x: x[before + (slice(None, None, -2),)],
         lambda x: x.flip(d)[before + (slice(None, None, 2),)]),
        ("flip", lambda x: x.flip(d), lambda x: x.flip(d)),
        ("cumsum", lambda x: x.cumsum(dim=d), lambda x: x.cumsum(dim=d)),
        ("max", lambda x: x.max(dim=d)[0], lambda x: x.max(dim=d)[0]),
        ("softmax", lambda x: x.softmax(dim=d), lambda x: x.softmax(dim=d)),
        ("roll", lambda x: x.roll(1, d), lambda x: x.roll(1, d)),
        ("square", lambda x: x * x + x.sin(), lambda x: x * x + x.sin()),
    ]
    i = int(rng.integers(-n, n))
    out.append(("int", lambda x: x[before + (i,)], lambda x: x[before + (i,)]))
    mask = rng.random(shape) < 0.5
    out.append(("mask", lambda x: x[mask], lambda x: x[torch.tensor(mask)]))
    if nd >= 2:
        rows, cols = rng.integers(0, shape[0], 3), rng.integers(0, shape[1], 3)
        out += [
            ("pairs", lambda x: x[rows.tolist(), cols.tolist()], lambda x: x[torch.tensor(rows), torch.tensor(cols)]),
            ("gram", lambda x: x.mT @ x, lambda x: x.mT @ x),
            ("diagonal", lambda x: x.diagonal(), lambda x: x.diagonal()),
            ("std", lambda x: x.std(dim=0), lambda x: x.std(dim=0)),
            ("swap", lambda x: x.swapaxes(0, -1), lambda x: x.swapaxes(0, -1)),
        ]
    if nd >= 3:
        out.append(("permute", lambda x: x.permute(2, 0, 1), lambda x: x.permute(2, 0, 1)))
    return out


def _program(seed: int):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(2, 5, size=int(rng.integers(1, 4))))
    x0 = rng.normal(size=shape)
    x0[rng.random(shape) < 0.15] = 0.0
    if rng.random() < 0.3:
        x0 = np.round(x0)
    names, ours, theirs = [], [], []
    for _ in range(int(rng.integers(3, 8))):
        name, step, twin = (c := _candidates(shape, rng))[int(rng.integers(len(c)))]
        shape = tuple(step(cr.Tensor(np.zeros(shape))).shape)
        names.append(name)
        ours.append(step)
        theirs.append(twin)
        if not shape or 0 in shape:
            break
    return x0, names, ours, theirs


def _run(steps, x):
    for step in steps:
        x = step(x)
    return (x**2).sum() if x.ndim else x**2


@pytest.mark.parametrize("seed", range(40))
def test_shape_and_indexing_programs_match_pytorch_to_second_order(seed):
    x0, names, ours, theirs = _program(seed)
    x, t = cr.Tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    y, ty = _run(ours, x), _run(theirs, t)
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-10, err_msg=str(names))
    (g,) = cr.autograd.grad(y, x, create_graph=True)
    (tg,) = torch.autograd.grad(ty, t, create_graph=True)
    np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=str(names))
    v = np.random.default_rng(seed).normal(size=x0.shape)
    (h,) = cr.autograd.grad((g * v).sum(), x, allow_unused=True, materialize_grads=True)
    th = torch.autograd.grad((tg * torch.tensor(v)).sum(), t)[0].numpy() if tg.requires_grad else np.zeros(x0.shape)
    if not np.isnan(th).any():  # torch's std of equal entries has a NaN second derivative; chainrule's is 0
        np.testing.assert_allclose(h.data, th, rtol=1e-9, atol=1e-11, err_msg=str(names))
    _, tangent = cr.jvp(lambda a: _run(ours, a), (x0,), (v,))
    _, t_tangent = torch.func.jvp(lambda a: _run(theirs, a), (torch.tensor(x0),), (torch.tensor(v),))
    np.testing.assert_allclose(tangent, t_tangent.numpy(), rtol=1e-10, atol=1e-12, err_msg=str(names))
    if not np.isnan(th).any():
        rows = cr.vmap(lambda u: cr.jvp(cr.grad(lambda a: _run(ours, a)), (x0,), (u,))[1])(np.stack([v, 2 * v]))
        np.testing.assert_allclose(rows[1], 2 * th, rtol=1e-9, atol=1e-11, err_msg=str(names))
