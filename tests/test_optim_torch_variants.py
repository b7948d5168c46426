"""Adadelta, Adamax, NAdam, RAdam and LBFGS against ``torch.optim``, step by step, in float64."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 2))
W0, B0 = RNG.standard_normal((3, 2)), RNG.standard_normal(2)


def _loss(lib, w, b):
    x, y = (lib.tensor(X), lib.tensor(Y))
    pred = lib.tanh(x @ w + b)
    return ((pred - y) ** 2).sum() + (w**4).sum() * 0.1


def _pair():
    w, b = cr.tensor(W0.copy(), requires_grad=True), cr.tensor(B0.copy(), requires_grad=True)
    tw, tb = torch.tensor(W0.copy(), requires_grad=True), torch.tensor(B0.copy(), requires_grad=True)
    return (w, b), (tw, tb)


CASES = [
    ("Adadelta", {}), ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Adamax", {}), ("Adamax", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1)), ("Adamax", dict(maximize=True)),
    ("NAdam", {}), ("NAdam", dict(lr=0.05, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)), ("NAdam", dict(maximize=True)),
    ("RAdam", {}), ("RAdam", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, foreach=False)),
    ("RAdam", dict(maximize=True)),
]


@pytest.mark.parametrize("name, kw", CASES)
def test_twenty_steps_match_torch(name, kw):
    (w, b), (tw, tb) = _pair()
    opt = getattr(optim, name)([w, b], **kw)
    topt = getattr(torch.optim, name)([tw, tb], **kw)
    for _ in range(20):
        opt.zero_grad()
        _loss(cr, w, b).backward()
        opt.step()
        topt.zero_grad()
        _loss(torch, tw, tb).backward()
        topt.step()
        np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(b.data, tb.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam"])
def test_defaults_and_state_names_match_torch(name):
    (w, b), (tw, tb) = _pair()
    opt, topt = getattr(optim, name)([w, b]), getattr(torch.optim, name)([tw, tb])
    ours = opt.param_groups[0]
    for key, value in ours.items():
        if key != "params":
            assert topt.param_groups[0][key] == value, key
    for o, lib, p in ((opt, cr, (w, b)), (topt, torch, (tw, tb))):
        _loss(lib, *p).backward()
        o.step()
    torch_keys = set(topt.state[tw])
    assert set(opt.state[0]) == torch_keys


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam"])
def test_state_dict_resumes_the_same_run(name):
    (w, b), _ = _pair()
    opt = getattr(optim, name)([w, b], lr=0.05)
    for _ in range(3):
        opt.zero_grad()
        _loss(cr, w, b).backward()
        opt.step()
    saved, w_saved, b_saved = opt.state_dict(), w.data.copy(), b.data.copy()
    for _ in range(2):
        opt.zero_grad()
        _loss(cr, w, b).backward()
        opt.step()
    want = w.data.copy()
    w2, b2 = cr.tensor(w_saved, requires_grad=True), cr.tensor(b_saved, requires_grad=True)
    opt2 = getattr(optim, name)([w2, b2])
    opt2.load_state_dict(saved)
    for _ in range(2):
        opt2.zero_grad()
        _loss(cr, w2, b2).backward()
        opt2.step()
    np.testing.assert_array_equal(w2.data, want)


@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe"), dict(lr=0.5, max_iter=5, history_size=3),
                                dict(line_search_fn="strong_wolfe", max_iter=7, history_size=2)])
def test_lbfgs_matches_torch(kw):
    (w, b), (tw, tb) = _pair()
    opt, topt = optim.LBFGS([w, b], **kw), torch.optim.LBFGS([tw, tb], **kw)

    def closure():
        opt.zero_grad()
        loss = _loss(cr, w, b)
        loss.backward()
        return loss

    def tclosure():
        topt.zero_grad()
        loss = _loss(torch, tw, tb)
        loss.backward()
        return loss

    for _ in range(4):
        got, want = opt.step(closure), topt.step(tclosure)
        np.testing.assert_allclose(float(got), float(want.detach()), rtol=1e-10)
        np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(b.data, tb.detach().numpy(), rtol=1e-9, atol=1e-11)
    assert opt.state[0]["func_evals"] == topt.state[tw]["func_evals"]
    assert opt.state[0]["n_iter"] == topt.state[tw]["n_iter"]


def test_lbfgs_refuses_what_torch_refuses():
    w = cr.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="closure"):
        optim.LBFGS([w]).step()
    with pytest.raises(ValueError, match="line_search_fn"):
        optim.LBFGS([w], line_search_fn="armijo")
    with pytest.raises(ValueError, match="groups"):
        optim.LBFGS([{"params": [w]}, {"params": [cr.tensor([2.0], requires_grad=True)]}])


def test_unknown_keyword_is_refused():
    with pytest.raises(TypeError, match="unexpected"):
        optim.NAdam([cr.tensor([1.0], requires_grad=True)], momentum=0.9)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS"])
def test_a_checkpoint_file_resumes_exactly(name, tmp_path):
    def run(opt, w, b, steps):
        for _ in range(steps):
            def closure():
                opt.zero_grad()
                loss = _loss(cr, w, b)
                loss.backward()
                return loss

            opt.step(closure)

    (w, b), _ = _pair()
    opt = getattr(optim, name)([w, b], lr=0.05)
    run(opt, w, b, 3)
    cr.nn.save_checkpoint(tmp_path / "c.npz", optimizer=opt, w=w.data, b=b.data)
    run(opt, w, b, 3)
    w2, b2 = cr.tensor(W0.copy(), requires_grad=True), cr.tensor(B0.copy(), requires_grad=True)
    opt2 = getattr(optim, name)([w2, b2])
    extra = cr.nn.load_checkpoint(tmp_path / "c.npz", optimizer=opt2)
    w2.data[...], b2.data[...] = extra["w"], extra["b"]
    run(opt2, w2, b2, 3)
    np.testing.assert_array_equal(w2.data, w.data)
