"""``nn.utils.parametrizations.orthogonal`` against PyTorch's: the initial weight, the weight and gradients for the
same original (and base), optimiser steps (the weight stays orthogonal), assignment, state dict names, errors."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.nn.utils import parametrize
from chainrule.nn.utils.parametrizations import orthogonal

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3)]
MAPS = ["matrix_exp", "cayley", "householder"]


class _Holder(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.weight = nn.Parameter(w.copy(), dtype=np.float64)


class _THolder(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.tensor(w))


def _pair(shape, orthogonal_map, trivial, seed=0):
    w = np.random.default_rng(seed).normal(size=shape)
    cm, tm = _Holder(w), _THolder(w)
    torch.manual_seed(seed)
    orthogonal(cm, orthogonal_map=orthogonal_map, use_trivialization=trivial)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=orthogonal_map, use_trivialization=trivial)
    return cm, tm


def _is_orthogonal(w):
    w = w if w.shape[-2] >= w.shape[-1] else np.swapaxes(w, -1, -2)
    return np.allclose(np.swapaxes(w, -1, -2) @ w, np.eye(w.shape[-1]), atol=1e-10)


def _cases():
    for shape in SHAPES:
        for m in MAPS:
            for trivial in (True, False):
                yield pytest.param(shape, m, trivial, id=f"{shape}-{m}-{'trivial' if trivial else 'plain'}")


@pytest.mark.parametrize("shape, orthogonal_map, trivial", list(_cases()))
def test_orthogonal_weight_gradient_and_steps_equal_pytorchs(shape, orthogonal_map, trivial):
    cm, tm = _pair(shape, orthogonal_map, trivial)
    assert list(cm.state_dict()) == list(tm.state_dict())
    if trivial or orthogonal_map == "householder":  # the weight starts as the original one, orthogonalised
        np.testing.assert_allclose(cm.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-12)
        assert _is_orthogonal(cm.weight.detach().numpy())
    # the same original (and base): the same weight and gradient (PyTorch's random columns of a non-square base)
    cm.load_state_dict({k: v.numpy() for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(cm.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-12)
    target = np.random.default_rng(1).normal(size=shape)
    copt, topt = optim.SGD(cm.parameters(), lr=0.05), torch.optim.SGD(tm.parameters(), lr=0.05)
    for _ in range(4):
        copt.zero_grad(), topt.zero_grad()
        ((cm.weight - cr.tensor(target)) ** 2).sum().backward()
        ((tm.weight - torch.tensor(target)) ** 2).sum().backward()
        original = cm.parametrizations.weight.original
        np.testing.assert_allclose(original.grad.numpy(), tm.parametrizations.weight.original.grad.numpy(),
                                   rtol=1e-9, atol=1e-11)
        copt.step(), topt.step()
    w = cm.weight.detach().numpy()
    np.testing.assert_allclose(w, tm.weight.detach().numpy(), rtol=1e-9, atol=1e-11)
    assert _is_orthogonal(w)  # every map gives an orthogonal matrix, whatever the original


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_a_layer_stays_orthogonal_while_it_trains(orthogonal_map):
    layer = orthogonal(nn.Linear(4, 6, rng=0, dtype=np.float64), orthogonal_map=orthogonal_map)
    opt = optim.Adam(layer.parameters(), lr=0.05)
    x, y = np.random.default_rng(0).normal(size=(16, 4)), np.random.default_rng(1).normal(size=(16, 6))
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = ((layer(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    assert _is_orthogonal(layer.weight.detach().numpy())


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_assigning_an_orthogonal_weight_sets_it_as_pytorchs(shape):
    cm, tm = _pair(shape, None, True)
    q = np.linalg.qr(np.random.default_rng(2).normal(size=(max(shape), min(shape))))[0]
    q = q if shape[0] >= shape[1] else q.T
    cm.weight = cr.tensor(q)
    with torch.no_grad():
        tm.weight = torch.tensor(q)
    np.testing.assert_allclose(cm.weight.detach().numpy(), q, atol=1e-12)
    np.testing.assert_allclose(cm.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-12)


def test_householder_without_trivialization_matches_pytorchs_geqrf_original():
    cm, tm = _pair((5, 3), "householder", False)
    np.testing.assert_allclose(cm.parametrizations.weight.original.detach().numpy(),
                               tm.parametrizations.weight.original.detach().numpy(), atol=1e-12)


def test_defaults_and_refusals_are_pytorchs():
    assert orthogonal(nn.Linear(3, 3)).parametrizations.weight[0].orthogonal_map == "matrix_exp"
    assert orthogonal(nn.Linear(3, 5)).parametrizations.weight[0].orthogonal_map == "householder"
    assert parametrize.is_parametrized(orthogonal(nn.Linear(3, 5)), "weight")
    with pytest.raises(ValueError, match="expected a matrix or batch of matrices"):
        orthogonal(nn.Linear(3, 5), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        orthogonal(nn.Linear(3, 5), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer named 'w'"):
        orthogonal(nn.Linear(3, 5), "w")
    layer = orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        layer.weight = np.eye(3, dtype=np.float32)
