"""SequentialLR and ChainedScheduler against PyTorch's (rates step by step, several groups), resuming,
and the errors: a rate changed by hand, mixed optimisers, parts PyTorch would not multiply."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from chainrule import Tensor, optim

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the schedules")
TL = torch.optim.lr_scheduler


def _pair():
    ours = optim.SGD([{"params": [Tensor([1.0], requires_grad=True)]},
                      {"params": [Tensor([1.0], requires_grad=True)], "lr": 0.3}], lr=1.0)
    theirs = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)]},
                              {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.3}], lr=1.0)
    return ours, theirs


def _rates(opt, sched, steps):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "step() before optimizer.step()" and deprecations
        for _ in range(steps):
            out.append([g["lr"] for g in opt.param_groups])
            opt.step()
            sched.step()
    return np.array(out)


SEQUENCES = {
    "warmup then cosine": (lambda m, o: [m.LinearLR(o, start_factor=0.1, total_iters=4),
                                         m.CosineAnnealingLR(o, T_max=8, eta_min=0.01)], [4]),
    "three parts": (lambda m, o: [m.ExponentialLR(o, gamma=0.8), m.StepLR(o, step_size=2, gamma=0.5),
                                  m.MultiStepLR(o, milestones=[2, 5], gamma=0.3)], [3, 7]),
    "milestone at 0": (lambda m, o: [m.ExponentialLR(o, gamma=0.5), m.StepLR(o, step_size=2, gamma=0.5),
                                     m.LinearLR(o, 0.5, 1.0, total_iters=2)], [0, 4]),
    "lambda first": (lambda m, o: [m.LambdaLR(o, lambda e: 1 / (e + 1)), m.LinearLR(o, 0.5, 1.0, total_iters=3)],
                     [5]),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(SEQUENCES))
def test_sequential_lr_matches_torch(name):
    make, milestones = SEQUENCES[name]
    ours, theirs = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = optim.lr_scheduler.SequentialLR(ours, make(optim, ours), milestones)
        t = TL.SequentialLR(theirs, make(TL, theirs), milestones)
    np.testing.assert_allclose(_rates(ours, s, 16), _rates(theirs, t, 16), rtol=1e-12)


CHAINS = {
    "warmup and decay": lambda m, o: [m.LinearLR(o, start_factor=0.2, total_iters=4), m.ExponentialLR(o, gamma=0.9)],
    "steps": lambda m, o: [m.StepLR(o, step_size=3, gamma=0.5), m.MultiStepLR(o, [4, 6], gamma=0.1),
                           m.LinearLR(o, 1.0, 0.5, total_iters=5)],
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(CHAINS))
def test_chained_scheduler_matches_torch(name):
    ours, theirs = _pair()
    s = optim.ChainedScheduler(CHAINS[name](optim, ours))
    t = TL.ChainedScheduler(CHAINS[name](TL, theirs))
    np.testing.assert_allclose(_rates(ours, s, 12), _rates(theirs, t, 12), rtol=1e-12)


def test_resuming_from_state_dict_is_exact():
    for make in (lambda o: optim.SequentialLR(o, [optim.LinearLR(o, 0.1, total_iters=3),
                                                  optim.CosineAnnealingLR(o, T_max=5)], [3]),
                 lambda o: optim.ChainedScheduler([optim.StepLR(o, 2), optim.ExponentialLR(o, 0.9)])):
        opt, opt2 = optim.SGD([Tensor([1.0], requires_grad=True)], lr=1.0), optim.SGD(
            [Tensor([1.0], requires_grad=True)], lr=1.0)
        first, second = make(opt), make(opt2)
        _rates(opt, first, 5)
        second.load_state_dict(first.state_dict())
        assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
        np.testing.assert_array_equal(_rates(opt, first, 5), _rates(opt2, second, 5))


def test_errors_name_the_scheduler_and_the_fix():
    opt = optim.SGD([Tensor([1.0], requires_grad=True)], lr=1.0)
    other = optim.SGD([Tensor([1.0], requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match=r"SequentialLR: 2 schedulers need 1 milestone\(s\), got 2"):
        optim.SequentialLR(opt, [optim.StepLR(opt, 2), optim.StepLR(opt, 3)], [1, 2])
    with pytest.raises(ValueError, match=r"SequentialLR: scheduler 1 drives another optimiser"):
        optim.SequentialLR(opt, [optim.StepLR(opt, 2), optim.StepLR(other, 3)], [1])
    with pytest.raises(TypeError, match=r"SequentialLR: scheduler 0 is a ReduceLROnPlateau"):
        optim.SequentialLR(opt, [optim.ReduceLROnPlateau(opt)], [])
    with pytest.raises(TypeError, match=r"ChainedScheduler: scheduler 1 is a CosineAnnealingLR; chainrule chains"):
        optim.ChainedScheduler([optim.StepLR(opt, 2), optim.CosineAnnealingLR(opt, 5)])
    sched = optim.SequentialLR(opt, [optim.StepLR(opt, 2), optim.StepLR(opt, 3)], [4])
    opt.param_groups[0]["lr"] = 0.123  # by hand: the schedule would overwrite it, so it refuses
    with pytest.raises(ValueError, match=r"SequentialLR.step: the learning rate of parameter group 0 is 0.123"):
        sched.step()


def test_lambda_lr_takes_one_function_per_parameter_group_as_pytorch():
    # LambdaLR(opt, [f1, f2]) failed: the list was called as one function
    lambdas = [lambda e: 0.9 ** e, lambda e: 1.0 / (e + 1)]
    ours, theirs = _pair()
    mine, torchs = optim.LambdaLR(ours, lambdas), TL.LambdaLR(theirs, lambdas)
    np.testing.assert_allclose(_rates(ours, mine, 6), _rates(theirs, torchs, 6), rtol=1e-12)
    resumed = optim.LambdaLR(_pair()[0], lambdas)
    resumed.load_state_dict(mine.state_dict())
    assert resumed.get_last_lr() == mine.get_last_lr()
    with pytest.raises(ValueError, match="one function per parameter group"):
        optim.LambdaLR(_pair()[0], lambdas[:1])


def test_optimizer_load_state_dict_accepts_the_initial_lr_a_scheduler_wrote_as_pytorch():
    # a state saved with a scheduler holds initial_lr in each group; a fresh optimiser refused it as "another optimiser"
    model = [Tensor([1.0], requires_grad=True)]
    first = optim.Adam(model, lr=0.1)
    optim.StepLR(first, 2)
    state = first.state_dict()
    fresh = optim.Adam([Tensor([1.0], requires_grad=True)], lr=0.5)
    fresh.load_state_dict(state)
    assert fresh.param_groups[0]["lr"] == 0.1 and fresh.param_groups[0]["initial_lr"] == 0.1
    theirs = torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=0.5)
    theirs.load_state_dict({"state": {}, "param_groups": [dict(state["param_groups"][0], betas=(0.9, 0.999))]})
    assert theirs.param_groups[0]["initial_lr"] == 0.1
    state["param_groups"][0]["initial_lr"] = float("nan")
    with pytest.raises(TypeError, match="initial_lr"):
        fresh.load_state_dict(state)
