"""optim.swa_utils against PyTorch's torch.optim.swa_utils: averaged parameters and buffers step by step during
training (SWA, EMA by multi_avg_fn and by avg_fn, with and without use_buffers), state dicts, SWALR's learning
rates, and update_bn's running statistics."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule import nn, optim
from chainrule.optim import swa_utils

torch = pytest.importorskip("torch")
tswa = torch.optim.swa_utils

pytestmark = pytest.mark.oracle


def to_numpy(sd):
    return {k: v.detach().numpy().copy() for k, v in sd.items()}


def models(seed=0):
    """The same small network with a BatchNorm, in torch and in chainrule (float64)."""
    torch.manual_seed(seed)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(),
                            torch.nn.Linear(4, 2)).double()
    c = nn.Sequential(nn.Linear(3, 4, dtype=np.float64), nn.BatchNorm1d(4, dtype=np.float64), nn.ReLU(),
                      nn.Linear(4, 2, dtype=np.float64))
    c.load_state_dict(to_numpy(t.state_dict()))
    return t, c


def assert_same_state(c, t, rtol=1e-11):
    csd, tsd = c.state_dict(), t.state_dict()
    assert list(csd) == list(tsd)
    for k, v in tsd.items():
        np.testing.assert_allclose(csd[k].numpy(), v.numpy(), rtol=rtol, atol=1e-13, err_msg=k)


AVERAGINGS = {
    "swa": ({}, {}),
    "ema_multi": ({"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.8)},
                  {"multi_avg_fn": tswa.get_ema_multi_avg_fn(0.8)}),
    "ema_avg_fn": ({"avg_fn": swa_utils.get_ema_avg_fn(0.7)}, {"avg_fn": tswa.get_ema_avg_fn(0.7)}),
    "swa_multi": ({"multi_avg_fn": swa_utils.get_swa_multi_avg_fn()},
                  {"multi_avg_fn": tswa.get_swa_multi_avg_fn()}),
}


# (PyTorch's get_swa_multi_avg_fn raises on the integer buffer num_batches_tracked: no use_buffers case for it)
@pytest.mark.parametrize(("kind", "use_buffers"),
                         [(k, b) for k in AVERAGINGS for b in (False, True) if (k, b) != ("swa_multi", True)])
def test_averaged_model_matches_torch_step_by_step_while_training(kind, use_buffers):
    ckw, tkw = AVERAGINGS[kind]
    t, c = models(seed=1)
    tavg = tswa.AveragedModel(t, use_buffers=use_buffers, **tkw)
    cavg = swa_utils.AveragedModel(c, use_buffers=use_buffers, **ckw)
    topt = torch.optim.SGD(t.parameters(), lr=0.2, momentum=0.5)
    copt = optim.SGD(c.parameters(), lr=0.2, momentum=0.5)
    rng = np.random.default_rng(2)
    for _ in range(5):
        x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
        topt.zero_grad()
        ((t(torch.from_numpy(x)) - torch.from_numpy(y)) ** 2).mean().backward()
        topt.step()
        copt.zero_grad()
        ((c(x) - y) ** 2).mean().backward()
        copt.step()
        tavg.update_parameters(t)
        cavg.update_parameters(c)
        assert_same_state(cavg, tavg)
    assert int(cavg.n_averaged) == 5
    assert list(cavg.state_dict())[:2] == ["n_averaged", "module.0.weight"]
    xe = rng.standard_normal((4, 3))
    tavg.eval()
    cavg.eval()
    np.testing.assert_allclose(cavg(xe).numpy(), tavg(torch.from_numpy(xe)).detach().numpy(), rtol=1e-10)
    # the average is a copy: training the model further leaves it alone
    before = to_numpy(cavg.state_dict())
    next(iter(c.parameters())).data.fill_(7.0)
    np.testing.assert_array_equal(cavg.state_dict()["module.0.weight"].numpy(), before["module.0.weight"])


def test_averaged_model_loads_torch_state_dict():
    t, c = models(seed=3)
    tavg, cavg = tswa.AveragedModel(t), swa_utils.AveragedModel(c)
    tavg.update_parameters(t)
    tavg.update_parameters(t)
    cavg.load_state_dict(to_numpy(tavg.state_dict()))
    assert int(cavg.n_averaged) == 2
    assert_same_state(cavg, tavg)


def torch_lrs(make, steps, groups=1, lr=1.0):
    params = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr * (g + 1)} for g in range(groups)]
    opt = torch.optim.SGD(params, lr=lr)
    sched = make(opt)
    out = [list(sched.get_last_lr())]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(list(sched.get_last_lr()))
    return out


def chainrule_lrs(make, steps, groups=1, lr=1.0):
    from chainrule import Tensor

    params = [{"params": [Tensor([0.0], requires_grad=True)], "lr": lr * (g + 1)} for g in range(groups)]
    opt = optim.SGD(params, lr=lr)
    sched = make(opt)
    out = [list(sched.get_last_lr())]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(list(sched.get_last_lr()))
    return out


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_learning_rates_match_torch(strategy, anneal_epochs):
    args = {"swa_lr": [0.05, 0.3], "anneal_epochs": anneal_epochs, "anneal_strategy": strategy}
    expected = torch_lrs(lambda o: tswa.SWALR(o, **args), 8, groups=2)
    got = chainrule_lrs(lambda o: swa_utils.SWALR(o, **args), 8, groups=2)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_swalr_takes_over_from_a_cosine_schedule_as_in_torch():
    def run(lib, sched_lib, swa):
        def make(opt):
            main = sched_lib.CosineAnnealingLR(opt, T_max=10)
            swa_sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
            return main, swa_sched

        if lib is torch:
            opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        else:
            from chainrule import Tensor

            opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
        main, swa_sched = make(opt)
        lrs = []
        for epoch in range(9):
            opt.step()
            (swa_sched if epoch >= 4 else main).step()
            lrs.append(opt.param_groups[0]["lr"])
        return lrs

    expected = run(torch, torch.optim.lr_scheduler, tswa)
    got = run(None, optim, swa_utils)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_swalr_rejects_a_bad_strategy_and_epochs():
    from chainrule import Tensor

    opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)


def test_update_bn_matches_torch_and_restores_momentum_and_mode():
    t, c = models(seed=4)
    t.eval()
    c.eval()
    rng = np.random.default_rng(5)
    batches = [rng.standard_normal((5, 3)) for _ in range(4)]
    tswa.update_bn([(torch.from_numpy(b), 0) for b in batches], t)
    swa_utils.update_bn([(b, 0) for b in batches], c)
    assert_same_state(c, t)
    assert int(c[1].num_batches_tracked) == 4
    assert c[1].momentum == 0.1 and not c.training
    before = to_numpy(c.state_dict())
    swa_utils.update_bn(batches, nn.Linear(2, 2))  # no BatchNorm: nothing to do
    assert all(np.array_equal(v.numpy(), before[k]) for k, v in c.state_dict().items())


def test_an_ema_of_a_weight_normed_linear_matches_torch_step_by_step():
    from chainrule.nn.utils.parametrizations import weight_norm

    torch.manual_seed(6)
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2).double())
    c = weight_norm(nn.Linear(3, 2, dtype=np.float64))
    c.load_state_dict(to_numpy(t.state_dict()))
    tema = tswa.AveragedModel(t, multi_avg_fn=tswa.get_ema_multi_avg_fn(0.9))
    cema = swa_utils.AveragedModel(c, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
    topt = torch.optim.Adam(t.parameters(), lr=0.05)
    copt = optim.Adam(c.parameters(), lr=0.05)
    rng = np.random.default_rng(7)
    for _ in range(6):
        x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
        topt.zero_grad()
        ((t(torch.from_numpy(x)) - torch.from_numpy(y)) ** 2).mean().backward()
        topt.step()
        copt.zero_grad()
        ((c(x) - y) ** 2).mean().backward()
        copt.step()
        tema.update_parameters(t)
        cema.update_parameters(c)
        assert_same_state(cema, tema, rtol=1e-10)
        np.testing.assert_allclose(cema(x).numpy(), tema(torch.from_numpy(x)).detach().numpy(), rtol=1e-10)
    assert list(cema.state_dict())[2:] == ["module.parametrizations.weight.original0",
                                           "module.parametrizations.weight.original1"]


def test_swalr_resumes_from_its_and_torchs_state_dict():
    from chainrule import Tensor

    def torch_run(resume_at):
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        sched = tswa.SWALR(opt, swa_lr=0.1, anneal_epochs=5)
        for _ in range(resume_at):
            opt.step()
            sched.step()
        return opt, sched

    topt, tsched = torch_run(2)
    opt = optim.SGD([Tensor([0.0], requires_grad=True)], lr=1.0)
    opt.load_state_dict({"state": {}, "param_groups": [dict(g, params=[0]) for g in topt.state_dict()["param_groups"]]})
    sched = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=5)
    sched.load_state_dict(tsched.state_dict())
    assert sched.get_last_lr() == tsched.get_last_lr() and sched.anneal_strategy == "cos"
    for _ in range(5):
        topt.step()
        tsched.step()
        opt.step()
        sched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-12)
    again = swa_utils.SWALR(optim.SGD([Tensor([0.0], requires_grad=True)], lr=opt.param_groups[0]["lr"]), swa_lr=0.1)
    again.load_state_dict(sched.state_dict())
    assert again.last_epoch == sched.last_epoch and again.get_last_lr() == sched.get_last_lr()
