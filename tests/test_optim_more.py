"""Rprop, ASGD, Adafactor and MultiplicativeLR against ``torch.optim``, step by step, in float64."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 2))
W0, B0, C0 = RNG.standard_normal((3, 2)), RNG.standard_normal(2), RNG.standard_normal((2, 3, 2))


def _loss(lib, w, b, c):
    x, y = (lib.tensor(X), lib.tensor(Y))
    pred = lib.tanh(x @ w + b) + (c * c).sum(0)[0]
    return ((pred - y) ** 2).sum() + (w**4).sum() * 0.1


def _params(lib):
    return tuple(lib.tensor(v.copy(), requires_grad=True) for v in (W0, B0, C0))


CASES = [
    ("Rprop", {}), ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))), ("Rprop", dict(maximize=True)),
    ("Rprop", dict(lr=0.02, foreach=True)),
    ("ASGD", {}), ("ASGD", dict(lr=0.005, lambd=1e-2, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.005, t0=3, foreach=True)), ("ASGD", dict(lr=1e-4, maximize=True, t0=0)),
    ("Adafactor", {}), ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(maximize=True)),
]


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_twenty_steps_match_torch(name, kw):
    ours, theirs = _params(cr), _params(torch)
    opt = getattr(optim, name)(list(ours), **kw)
    # (PyTorch's foreach ASGD computes eta in float32 arithmetic, its loop in float64 then rounds: they differ by
    # ~1e-9; chainrule's vector path follows the loop's arithmetic, so it is compared with the loop)
    tkw = {k: v for k, v in kw.items() if not (name == "ASGD" and k == "foreach")}
    topt = getattr(torch.optim, name)(list(theirs), **tkw)
    for _ in range(20):  # (ASGD keeps eta and mu in the default dtype, float32 in both libraries)
        opt.zero_grad()
        _loss(cr, *ours).backward()
        opt.step()
        topt.zero_grad()
        _loss(torch, *theirs).backward()
        topt.step()
        for p, tp in zip(ours, theirs):
            np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-10, atol=1e-12)
    if name == "ASGD":
        np.testing.assert_allclose(opt.state[0]["ax"], topt.state[theirs[0]]["ax"].numpy(), rtol=1e-10)


@pytest.mark.parametrize("name", ["Rprop", "ASGD", "Adafactor"])
def test_defaults_and_state_names_match_torch(name):
    ours, theirs = _params(cr), _params(torch)
    opt, topt = getattr(optim, name)(list(ours)), getattr(torch.optim, name)(list(theirs))
    for key, value in opt.param_groups[0].items():
        if key != "params":
            assert topt.param_groups[0][key] == value, key
    for o, lib, p in ((opt, cr, ours), (topt, torch, theirs)):
        _loss(lib, *p).backward()
        o.step()
    for i, tp in enumerate(theirs):
        assert set(opt.state[i]) == set(topt.state[tp]), i


@pytest.mark.parametrize("name", ["Rprop", "ASGD", "Adafactor"])
def test_state_dict_resumes_the_same_run(name):
    ours = _params(cr)
    opt = getattr(optim, name)(list(ours), lr=0.05)
    for _ in range(3):
        opt.zero_grad()
        _loss(cr, *ours).backward()
        opt.step()
    saved, values = opt.state_dict(), [p.data.copy() for p in ours]
    again = _params(cr)
    for p, v in zip(again, values):
        p.data = v.copy()
    resumed = getattr(optim, name)(list(again), lr=0.05)
    resumed.load_state_dict(saved)
    for o, ps in ((opt, ours), (resumed, again)):
        o.zero_grad()
        _loss(cr, *ps).backward()
        o.step()
    for p, q in zip(ours, again):
        np.testing.assert_array_equal(p.data, q.data)


def test_arguments_are_checked_as_pytorchs():
    w = cr.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"Rprop: etas must satisfy 0 < etas\[0\] < 1 < etas\[1\]"):
        optim.Rprop([w], etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="ASGD: weight_decay must be >= 0"):
        optim.ASGD([w], weight_decay=-1.0)
    with pytest.raises(ValueError, match="Adafactor: beta2_decay must be <= 0"):
        optim.Adafactor([w], beta2_decay=0.5)
    with pytest.raises(ValueError, match="Adafactor: the clipping threshold d must be >= 1"):
        optim.Adafactor([w], d=0.5)


@pytest.mark.parametrize("groups", [1, 2])
def test_multiplicative_lr_matches_torch_and_resumes(groups):
    lambdas = [lambda k: 0.9, lambda k: 1.0 / (k + 1)][:groups]
    ours, theirs = _params(cr), _params(torch)
    opt = optim.SGD([{"params": [p]} for p in ours[:groups]], lr=0.5)
    topt = torch.optim.SGD([{"params": [p]} for p in theirs[:groups]], lr=0.5)
    arg = lambdas if groups > 1 else lambdas[0]
    sched = optim.lr_scheduler.MultiplicativeLR(opt, arg)
    tsched = torch.optim.lr_scheduler.MultiplicativeLR(topt, arg)
    for _ in range(6):
        opt.step()
        sched.step()
        topt.step()
        tsched.step()
        np.testing.assert_allclose(sched.get_last_lr(), tsched.get_last_lr(), rtol=1e-14)
    saved = sched.state_dict()
    other = optim.SGD([{"params": [p]} for p in _params(cr)[:groups]], lr=0.5)
    resumed = optim.lr_scheduler.MultiplicativeLR(other, arg)
    resumed.load_state_dict(saved)
    assert resumed.get_last_lr() == sched.get_last_lr()
    opt.step()
    sched.step()
    other.step()
    resumed.step()
    assert resumed.get_last_lr() == sched.get_last_lr()
    assert optim.MultiplicativeLR is optim.lr_scheduler.MultiplicativeLR
