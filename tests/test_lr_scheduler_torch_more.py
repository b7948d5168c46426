"""ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts and CyclicLR against ``torch.optim.lr_scheduler``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _optimisers(name="SGD", groups=1, **kw):
    lrs = [0.1, 0.03][:groups]
    ours = getattr(optim, name)([{"params": [cr.tensor([1.0], requires_grad=True)], "lr": lr} for lr in lrs], **kw)
    theirs = getattr(torch.optim, name)([{"params": [torch.tensor([1.0], requires_grad=True)], "lr": lr}
                                         for lr in lrs], **kw)
    return ours, theirs


def _run(make, steps=60, name="SGD", groups=2, opt_kw=None, momentum_key=None, stepper=None):
    opt, topt = _optimisers(name, groups, **(opt_kw or {}))
    sched, tsched = make(optim, opt), make(torch.optim.lr_scheduler, topt)
    for k in range(steps):
        np.testing.assert_allclose(sched.get_last_lr(), tsched.get_last_lr(), rtol=1e-12, atol=1e-15, err_msg=str(k))
        np.testing.assert_allclose([g["lr"] for g in opt.param_groups], [g["lr"] for g in topt.param_groups],
                                   rtol=1e-12, atol=1e-15)
        if momentum_key:
            got = [np.atleast_1d(g[momentum_key])[0] for g in opt.param_groups]
            want = [np.atleast_1d(g[momentum_key])[0] for g in topt.param_groups]
            np.testing.assert_allclose(got, want, rtol=1e-12)
        opt.step()
        topt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's deprecation warning for step(epoch)
            (stepper or (lambda s, k: s.step()))(sched, k)
            (stepper or (lambda s, k: s.step()))(tsched, k)
    return sched, tsched


@pytest.mark.parametrize("kw", [{}, dict(factor=0.5, total_iters=7), dict(factor=0.1, total_iters=1)])
def test_constant_lr(kw):
    _run(lambda lib, o: lib.ConstantLR(o, **kw))


@pytest.mark.parametrize("kw", [{}, dict(total_iters=30, power=0.9), dict(total_iters=10, power=2.0)])
def test_polynomial_lr(kw):
    _run(lambda lib, o: lib.PolynomialLR(o, **kw))


@pytest.mark.parametrize("kw", [dict(T_0=10), dict(T_0=3, T_mult=2, eta_min=0.001), dict(T_0=5, T_mult=3)])
def test_cosine_warm_restarts(kw):
    _run(lambda lib, o: lib.CosineAnnealingWarmRestarts(o, **kw), steps=100)


@pytest.mark.parametrize("kw", [dict(T_0=4), dict(T_0=3, T_mult=2, eta_min=0.001)])
def test_cosine_warm_restarts_with_fractional_epochs(kw):
    _run(lambda lib, o: lib.CosineAnnealingWarmRestarts(o, **kw), steps=80,
         stepper=lambda s, k: s.step(k // 4 + (k % 4) / 4))


CYCLIC = [
    dict(base_lr=0.01, max_lr=0.1, step_size_up=5),
    dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=4, step_size_down=7, mode="triangular2"),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.97),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations"),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=3, cycle_momentum=False),
]


@pytest.mark.parametrize("kw", CYCLIC)
def test_cyclic_lr_with_sgd_momentum(kw):
    _run(lambda lib, o: lib.CyclicLR(o, **kw), steps=80, opt_kw=dict(momentum=0.5), momentum_key="momentum")


def test_cyclic_lr_cycles_adam_beta1():
    kw = dict(base_lr=0.001, max_lr=0.01, step_size_up=4, base_momentum=0.85, max_momentum=0.95)
    _run(lambda lib, o: lib.CyclicLR(o, **kw), steps=40, name="Adam", momentum_key="betas")


def test_cyclic_lr_refuses_an_optimiser_without_momentum():
    opt, topt = _optimisers("Adagrad")
    with pytest.raises(ValueError):
        torch.optim.lr_scheduler.CyclicLR(topt, 0.01, 0.1)
    with pytest.raises(ValueError, match="cycle_momentum"):
        optim.CyclicLR(opt, 0.01, 0.1)
    optim.CyclicLR(opt, 0.01, 0.1, cycle_momentum=False)


@pytest.mark.parametrize("make", [
    lambda lib, o: lib.ConstantLR(o, factor=0.25, total_iters=6),
    lambda lib, o: lib.PolynomialLR(o, total_iters=12, power=1.5),
    lambda lib, o: lib.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    lambda lib, o: lib.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="triangular2"),
])
def test_state_dict_resumes(make):
    sched, _ = _run(make, steps=9)
    saved = sched.state_dict()
    want = []
    for _ in range(10):
        sched.optimizer.step()
        sched.step()
        want.append(sched.get_last_lr())
    fresh = make(optim, _optimisers(groups=2)[0])
    fresh.load_state_dict(saved)
    got = []
    for _ in range(10):
        fresh.optimizer.step()
        fresh.step()
        got.append(fresh.get_last_lr())
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_constant_and_polynomial_chain_as_torchs():
    def make(lib, o):
        return lib.ChainedScheduler([lib.ConstantLR(o, factor=0.5, total_iters=4),
                                     lib.PolynomialLR(o, total_iters=20, power=2.0),
                                     lib.ExponentialLR(o, gamma=0.97)])

    _run(make, steps=30)


CHAINS = {  # two schedulers on one optimiser, stepped one after the other (PyTorch's documented chaining)
    "exponential+multistep": lambda lib, o: [lib.ExponentialLR(o, gamma=0.9), lib.MultiStepLR(o, [5, 12], 0.1)],
    "step+cosine": lambda lib, o: [lib.StepLR(o, 3, 0.5), lib.CosineAnnealingLR(o, T_max=10)],
    "cosine(eta_min)+step": lambda lib, o: [lib.CosineAnnealingLR(o, T_max=7, eta_min=0.01), lib.StepLR(o, 4, 0.5)],
    "linear+exponential": lambda lib, o: [lib.LinearLR(o, start_factor=0.2, total_iters=4), lib.ExponentialLR(o, 0.95)],
    "constant+polynomial": lambda lib, o: [lib.ConstantLR(o, factor=0.5, total_iters=3),
                                           lib.PolynomialLR(o, total_iters=8, power=2.0)],
    "multiplicative+linear": lambda lib, o: [lib.MultiplicativeLR(o, lambda k: 0.97),
                                             lib.LinearLR(o, start_factor=0.5, total_iters=6)],
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_two_chainable_schedulers_on_one_optimiser_compose_as_pytorchs(name):
    # chainrule's schedules were closed forms of the step and refused a rate changed by another scheduler
    opt, topt = _optimisers(groups=2)
    ours, theirs = CHAINS[name](optim, opt), CHAINS[name](torch.optim.lr_scheduler, topt)
    for k in range(30):
        np.testing.assert_allclose([g["lr"] for g in opt.param_groups], [g["lr"] for g in topt.param_groups],
                                   rtol=1e-9, atol=1e-15, err_msg=str(k))
        for s, t in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(s.get_last_lr(), t.get_last_lr(), rtol=1e-9, atol=1e-15, err_msg=str(k))
        opt.step()
        topt.step()
        for s, t in zip(ours, theirs, strict=True):
            s.step()
            t.step()
    saved, saved_opt = [s.state_dict() for s in ours], opt.state_dict()  # resumed: the rate is the optimiser's
    opt2, _ = _optimisers(groups=2)
    again = CHAINS[name](optim, opt2)
    opt2.load_state_dict(saved_opt)
    for s, state in zip(again, saved, strict=True):
        s.load_state_dict(state)
    for _ in range(5):
        for o, scheds in ((opt2, again), (topt, theirs)):
            o.step()
            for s in scheds:
                s.step()
        np.testing.assert_allclose([g["lr"] for g in opt2.param_groups], [g["lr"] for g in topt.param_groups],
                                   rtol=1e-9, atol=1e-15)
