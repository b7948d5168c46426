"""Optimisers, clipping and schedules against PyTorch (20 steps, parameter by parameter, float64),
float32 updates that really happen, Scalar-engine parameters, resuming and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from chainrule import Scalar, Tensor, nn, optim
from chainrule.nn import functional as F

torch = pytest.importorskip("torch")

STEPS = 20
RNG = np.random.default_rng(0)
XS = RNG.normal(size=(STEPS, 8, 3))
YS = RNG.normal(size=(STEPS, 8, 2))


def make_pair(dtype=np.float64):
    ours = nn.MLP(3, [5, 2], activation="tanh", dtype=dtype, rng=0)
    tdt = torch.float64 if dtype == np.float64 else torch.float32
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 5, dtype=tdt), torch.nn.Tanh(), torch.nn.Linear(5, 2, dtype=tdt))
    theirs.load_state_dict({k.removeprefix("layers."): torch.tensor(v) for k, v in ours.state_dict().items()})
    return ours, theirs


TORCH_OPT = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW,
             "RMSprop": torch.optim.RMSprop, "Adagrad": torch.optim.Adagrad}
OUR_OPT = {"SGD": optim.SGD, "Adam": optim.Adam, "AdamW": optim.AdamW, "RMSprop": optim.RMSprop,
           "Adagrad": optim.Adagrad}

SETTINGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.2, amsgrad=True)),
]

EXTRAS = {
    "plain": (None, None),
    "clip norm": (("norm", 0.3), None),
    "clip value": (("value", 0.05), None),
    "step schedule": (None, ("StepLR", dict(step_size=5, gamma=0.5))),
    "cosine schedule": (None, ("CosineAnnealingLR", dict(T_max=15, eta_min=1e-3))),
    "warm-up": (None, ("LinearLR", dict(start_factor=0.2, total_iters=6))),
    "exponential + clip": (("norm", 0.5), ("ExponentialLR", dict(gamma=0.9))),
}


def run_both(name, kwargs, clip, schedule, steps=STEPS, dtype=np.float64):
    ours, theirs = make_pair(dtype)
    opt = OUR_OPT[name](ours.parameters(), **kwargs)
    t_opt = TORCH_OPT[name](theirs.parameters(), foreach=False, **kwargs)
    sched = t_sched = None
    if schedule:
        sname, skw = schedule
        sched = getattr(optim, sname)(opt, **skw)
        t_sched = getattr(torch.optim.lr_scheduler, sname)(t_opt, **skw)
    for step in range(steps):
        x, y = XS[step].astype(dtype), YS[step].astype(dtype)
        opt.zero_grad()
        F.mse_loss(ours(x), y).backward()
        t_opt.zero_grad()
        torch.nn.functional.mse_loss(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        if clip:
            kind, value = clip
            if kind == "norm":
                n1 = optim.clip_grad_norm_(ours.parameters(), value)
                n2 = torch.nn.utils.clip_grad_norm_(theirs.parameters(), value)
                assert n1 == pytest.approx(float(n2), rel=1e-6)
            else:
                optim.clip_grad_value_(ours.parameters(), value)
                torch.nn.utils.clip_grad_value_(theirs.parameters(), value)
        opt.step()
        t_opt.step()
        if sched:
            sched.step()
            t_sched.step()
            assert sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-12)
    return ours, theirs


@pytest.mark.oracle
@pytest.mark.parametrize("extra", list(EXTRAS))
@pytest.mark.parametrize("name,kwargs", SETTINGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SETTINGS)])
def test_matches_torch_for_20_steps(name, kwargs, extra):
    clip, schedule = EXTRAS[extra]
    ours, theirs = run_both(name, kwargs, clip, schedule)
    moved = 0.0
    for (pname, p), tp in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=0, atol=1e-6, err_msg=pname)
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-9, atol=1e-10, err_msg=pname)
        moved += float(np.abs(p.data - make_pair()[0].state_dict()[pname]).sum())
    assert moved > 1e-3  # the runs really trained


ADAPTIVE = [
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.05)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.9, eps=1e-4, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3, eps=1e-6)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,kwargs", ADAPTIVE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ADAPTIVE)])
def test_rmsprop_and_adagrad_match_torch_for_20_steps(name, kwargs):
    ours, theirs = run_both(name, kwargs, ("norm", 0.5), ("StepLR", dict(step_size=5, gamma=0.5)))
    for (pname, p), tp in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-9, atol=1e-10, err_msg=pname)
        assert not np.allclose(p.data, make_pair()[0].state_dict()[pname])  # it trained


@pytest.mark.oracle
@pytest.mark.parametrize("name,kwargs", [SETTINGS[2], SETTINGS[6], SETTINGS[9]], ids=["SGD", "Adam", "AdamW"])
def test_float32_matches_torch_float32(name, kwargs):
    ours, theirs = run_both(name, kwargs, ("norm", 0.5), ("CosineAnnealingLR", dict(T_max=20)), dtype=np.float32)
    for (pname, p), tp in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        assert p.dtype == np.float32
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=pname)


@pytest.mark.oracle
def test_param_groups_match_torch():
    ours, theirs = make_pair()
    groups = lambda m, p: [{"params": list(p(m))[:2], "lr": 0.1}, {"params": list(p(m))[2:], "momentum": 0.5}]
    opt = optim.SGD(groups(ours, lambda m: m.parameters()), lr=0.01)
    t_opt = torch.optim.SGD(groups(theirs, lambda m: m.parameters()), lr=0.01)
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[0]["momentum"] == 0.0
    for step in range(5):
        opt.zero_grad()
        t_opt.zero_grad()
        F.mse_loss(ours(XS[step]), YS[step]).backward()
        torch.nn.functional.mse_loss(theirs(torch.tensor(XS[step])), torch.tensor(YS[step])).backward()
        opt.step()
        t_opt.step()
    for p, tp in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), atol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("start_factor", [0.1, 0.5])
def test_warmup_cosine_equals_torch_sequential(start_factor):
    import warnings

    w, tw = Tensor([1.0], requires_grad=True), torch.zeros(1, requires_grad=True)
    opt, t_opt = optim.SGD([w], lr=0.3), torch.optim.SGD([tw], lr=0.3)
    sched = optim.WarmupCosineLR(opt, warmup_steps=4, total_steps=15, eta_min=0.01, start_factor=start_factor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_sched = torch.optim.lr_scheduler.SequentialLR(t_opt, [
            torch.optim.lr_scheduler.LinearLR(t_opt, start_factor=start_factor, total_iters=4),
            torch.optim.lr_scheduler.CosineAnnealingLR(t_opt, T_max=11, eta_min=0.01),
        ], milestones=[4])
        ours, theirs = [], []
        for _ in range(16):
            ours.append(opt.param_groups[0]["lr"])
            theirs.append(t_opt.param_groups[0]["lr"])
            opt.step()
            t_opt.step()
            sched.step()
            t_sched.step()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.oracle
def test_clip_inf_and_p_norms_match_torch():
    g = [RNG.normal(size=(3, 4)), RNG.normal(size=5)]
    for norm_type in (1.0, 3.0, float("inf")):
        ps = [Tensor(np.zeros_like(a), requires_grad=True) for a in g]
        tps = [torch.zeros(a.shape, dtype=torch.float64, requires_grad=True) for a in g]
        for p, tp, a in zip(ps, tps, g, strict=True):
            p.grad = Tensor(a.copy())
            tp.grad = torch.tensor(a.copy())
        n = optim.clip_grad_norm_(ps, 0.5, norm_type=norm_type)
        tn = torch.nn.utils.clip_grad_norm_(tps, 0.5, norm_type=norm_type)
        assert n == pytest.approx(float(tn), rel=1e-12)
        for p, tp in zip(ps, tps, strict=True):
            np.testing.assert_allclose(p.grad.data, tp.grad.numpy(), rtol=1e-12)


# == float32 and float64: parameters really change and keep their dtype ===============================
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_step_changes_parameters_in_their_dtype(name, dtype):
    model = nn.MLP(3, [4, 2], dtype=dtype, rng=0)
    before = {k: v.copy() for k, v in model.state_dict().items()}
    ids = [id(p._data) for p in model.parameters()]
    opt = OUR_OPT[name](model.parameters(), lr=1e-3, **({"momentum": 0.9} if name == "SGD" else {}))
    F.mse_loss(model(XS[0]), YS[0].astype(dtype)).backward()
    opt.step()
    for slot, ((k, p), i) in enumerate(zip(model.named_parameters(), ids, strict=True)):
        assert p.dtype == dtype, k
        assert id(p._data) == i, f"{k}: updated in place"
        assert np.abs(p.data - before[k]).max() > 0, f"{k} did not change"
        for v in opt.state[slot].values():
            if isinstance(v, np.ndarray):
                assert v.dtype == dtype


def test_step_bumps_version_so_stale_graph_is_refused():
    w = nn.Parameter(np.ones(3))
    loss = (w * w).sum()
    loss.backward(retain_graph=True)  # kept, so the second pass meets the changed w, not a freed graph
    optim.SGD([w], lr=0.1).step()
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_frozen_parameters_are_accepted_and_left_alone():
    model = nn.MLP(3, [4, 2], rng=0)
    model.layers[0].requires_grad_(False)
    frozen = model.layers[0].weight.data.copy()
    trained = model.layers[2].weight.data.copy()
    opt = optim.AdamW(model.parameters(), lr=0.1)
    F.mse_loss(model(XS[0]), YS[0].astype(np.float32)).backward()
    opt.step()
    np.testing.assert_array_equal(model.layers[0].weight.data, frozen)
    assert model.layers[0].weight.grad is None and (model.layers[2].weight.data != trained).all()


def test_parameters_without_grad_are_skipped():
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert (a.data != 1).all() and (b.data == 1).all() and 1 not in opt.state


# == the Scalar engine shares the optimisers ==================================================================
@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1)),
])
def test_scalar_parameters_step_like_tensor_parameters(name, kwargs):
    values = RNG.normal(size=6)
    scalars = [Scalar(float(v)) for v in values]
    vec = Tensor(values.copy(), requires_grad=True)
    opt_s = OUR_OPT[name](scalars, **kwargs)
    opt_t = OUR_OPT[name]([vec], **kwargs)
    for step in range(10):
        grads = RNG.normal(size=6) * (step + 1)
        opt_s.zero_grad()
        assert all(s.grad == 0.0 for s in scalars)
        for s, g in zip(scalars, grads, strict=True):
            s.grad = float(g)
        vec.grad = Tensor(grads.copy())
        optim.clip_grad_norm_(scalars, 3.0)
        optim.clip_grad_norm_([vec], 3.0)
        opt_s.step()
        opt_t.step()
    np.testing.assert_allclose([s.data for s in scalars], vec.data, rtol=1e-13)


def test_scalar_mlp_trains_with_adam():
    model = nn.scalar.MLP(2, [4, 1], rng=0)
    opt = optim.Adam(model.parameters(), lr=0.05)
    xs = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    ys = [1.0, 1.0, 0.0, 0.0]
    first = None
    for _ in range(60):
        loss = sum(((model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)), Scalar(0.0))
        first = first if first is not None else loss.data
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.data < 0.25 * first


# == resuming ==================================================================================================
@pytest.mark.parametrize("name,kwargs", [SETTINGS[3], SETTINGS[7], SETTINGS[9]], ids=["SGD", "Adam", "AdamW"])
def test_state_dict_resume_gives_identical_next_steps(name, kwargs):
    def steps(model, opt, sched, start, n):
        for step in range(start, start + n):
            opt.zero_grad()
            F.mse_loss(model(XS[step]), YS[step]).backward()
            opt.step()
            sched.step()

    model = nn.MLP(3, [5, 2], dtype=np.float64, rng=0)
    opt = OUR_OPT[name](model.parameters(), **kwargs)
    sched = optim.CosineAnnealingLR(opt, T_max=10)
    steps(model, opt, sched, 0, 4)
    # (deep copies, as in PyTorch: a state dict shares the parameters' memory)
    saved_model, saved_opt, saved_sched = copy.deepcopy((model.state_dict(), opt.state_dict(), sched.state_dict()))
    steps(model, opt, sched, 4, 5)

    fresh = nn.MLP(3, [5, 2], dtype=np.float64, rng=99)
    fresh.load_state_dict(saved_model)
    opt2 = OUR_OPT[name](fresh.parameters(), **kwargs)
    sched2 = optim.CosineAnnealingLR(opt2, T_max=10)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    steps(fresh, opt2, sched2, 4, 5)
    for p, q in zip(model.parameters(), fresh.parameters(), strict=True):
        np.testing.assert_array_equal(p.data, q.data)


def test_state_dict_is_a_copy_and_load_checks_shapes():
    model = nn.MLP(3, [5, 2], rng=0)
    opt = optim.Adam(model.parameters())
    F.mse_loss(model(XS[0]), YS[0].astype(np.float32)).backward()
    opt.step()
    sd = opt.state_dict()
    assert sd["state"][0]["step"] == 1 and sd["param_groups"][0]["params"] == [0, 1, 2, 3]
    sd["state"][0]["exp_avg"][...] = 123
    assert not (opt.state[0]["exp_avg"] == 123).any()
    other = optim.Adam(nn.MLP(3, [6, 2], rng=0).parameters())
    with pytest.raises(ValueError, match=r"state 'exp_avg' of parameter 0 has shape \(5, 3\) but the parameter has "
                                         r"shape \(6, 3\)"):
        other.load_state_dict(sd)
    with pytest.raises(ValueError, match=r"holds 4 parameter slot\(s\) in the saved state but 2 here"):
        optim.Adam(nn.Linear(3, 5).parameters()).load_state_dict(sd)


# == errors =====================================================================================================
@pytest.mark.parametrize("make,exc,message", [
    (lambda: optim.SGD([], lr=0.1), ValueError, "empty parameter list"),
    (lambda: optim.SGD([np.zeros(3)], lr=0.1), TypeError, "parameter 0 is a ndarray, not a Tensor or a Scalar"),
    (lambda: optim.SGD([Tensor([1.0])], lr=0.1), ValueError, "does not require grad"),
    (lambda: optim.SGD([nn.Parameter([1.0])], lr=-1), ValueError, "lr must be >= 0"),
    (lambda: optim.SGD([nn.Parameter([1.0])], lr=0.1, nesterov=True), ValueError, "Nesterov momentum needs"),
    (lambda: optim.Adam([nn.Parameter([1.0])], betas=(0.9, 1.0)), ValueError, r"betas must be in \[0, 1\)"),
    (lambda: optim.SGD([{"params": [nn.Parameter([1.0])], "betas": 1}], lr=0.1), TypeError, "unknown hyperparameter"),
    (lambda: (lambda p: optim.SGD([p, p], lr=0.1))(nn.Parameter([1.0])), ValueError, "appears twice"),
    (lambda: optim.StepLR(object(), 3), TypeError, "expected a chainrule optimiser"),
    (lambda: optim.clip_grad_value_([nn.Parameter([1.0])], -1), ValueError, "clip_value must be >= 0"),
])
def test_errors(make, exc, message):
    with pytest.raises(exc, match=message):
        make()


def test_clip_error_if_nonfinite_and_non_leaf():
    p = nn.Parameter([1.0])
    p.grad = Tensor([np.inf])
    with pytest.raises(RuntimeError, match="total norm of the gradients is inf"):
        optim.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    with pytest.raises(ValueError, match="not a leaf tensor"):
        optim.SGD([p * 2], lr=0.1)


# == large parameters take the blocked in-place update; it matches PyTorch and plain NumPy ===============
def _train_large(name, kwargs, dtype, steps=8):
    model = nn.Linear(400, 400, dtype=dtype, rng=0)  # 160000 weights: above the blocked-update threshold
    opt = OUR_OPT[name](model.parameters(), **kwargs)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        x, y = rng.normal(size=(16, 400)).astype(dtype), rng.normal(size=(16, 400)).astype(dtype)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    return model


LARGE = [("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1)), ("Adam", dict(lr=0.01)), ("AdamW", dict(lr=0.01))]


@pytest.mark.oracle
@pytest.mark.parametrize("name,kwargs", LARGE, ids=[n for n, _ in LARGE])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_parameters_match_torch(name, kwargs, dtype):
    ours = _train_large(name, kwargs, dtype)
    theirs = torch.nn.Linear(400, 400, dtype=torch.float32 if dtype == np.float32 else torch.float64)
    start = nn.Linear(400, 400, dtype=dtype, rng=0).state_dict()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in start.items()})
    t_opt = TORCH_OPT[name](theirs.parameters(), foreach=False, **kwargs)
    rng = np.random.default_rng(1)
    for _ in range(8):
        x, y = rng.normal(size=(16, 400)).astype(dtype), rng.normal(size=(16, 400)).astype(dtype)
        t_opt.zero_grad()
        torch.nn.functional.mse_loss(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        t_opt.step()
    # float32: Adam divides by sqrt(v) ~ |g|, so where a gradient is tiny the two BLAS libraries' rounding of it
    # shows; 1e-4 is 1% of one step (lr = 0.01). float64 agrees to 1e-10.
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.weight.data, theirs.weight.detach().numpy(), **tol)
    assert ours.weight.dtype == dtype and np.abs(ours.weight.data - start["weight"]).max() > 5e-3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 5), (700, 300), (2 * 65536 + 17,)])
def test_blocked_axpy_is_bit_identical_to_numpy(dtype, shape):
    from chainrule.optim._kernels import axpy

    x, y = RNG.normal(size=shape).astype(dtype), RNG.normal(size=shape).astype(dtype)
    expected = y + (-0.37) * x
    before = y.ctypes.data
    axpy(-0.37, x, y)
    assert y.ctypes.data == before and y.dtype == dtype
    np.testing.assert_array_equal(y, expected)



@pytest.mark.oracle
def test_multistep_lr_by_pytorchs_lr_scheduler_path():
    schedule = ("MultiStepLR", dict(milestones=[7, 3], gamma=0.5))
    ours, theirs = run_both("SGD", dict(lr=0.1, momentum=0.9), None, schedule, steps=10)
    for p, tp in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert optim.lr_scheduler.MultiStepLR is optim.MultiStepLR and optim.lr_scheduler.StepLR is optim.StepLR


def test_a_0d_parameter_trains_with_momentum_and_weight_decay():
    # g + wd * p of 0-d arrays is a NumPy scalar: the momentum buffer was one, and the next step failed
    w = Tensor(np.array(2.0), requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9, weight_decay=0.1)
    for _ in range(3):
        opt.zero_grad()
        (w * w).backward()
        opt.step()
    assert isinstance(opt.state[0]["momentum_buffer"], np.ndarray)
    t = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    topt = torch.optim.SGD([t], lr=0.1, momentum=0.9, weight_decay=0.1)
    for _ in range(3):
        topt.zero_grad()
        (t * t).backward()
        topt.step()
    assert float(w) == pytest.approx(t.item(), rel=1e-12)


def test_a_0d_parameters_moments_survive_a_state_dict_round_trip():
    # a 0-d moment was loaded back as a Python float (taken for a step count), and the next step failed
    w = Tensor(np.array(1.5), requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    (w * w).backward()
    opt.step()
    opt.load_state_dict(opt.state_dict())
    assert isinstance(opt.state[0]["exp_avg"], np.ndarray) and opt.state[0]["exp_avg"].shape == ()
    assert opt.state[0]["step"] == 1 and isinstance(opt.state[0]["step"], int)
    opt.zero_grad()
    (w * w).backward()
    opt.step()
    assert float(w) < 1.5


def test_clip_grad_norm_returns_the_norm_as_a_0d_tensor_as_pytorch():
    """``clip_grad_norm_(...).item()`` is how PyTorch programs log it; in the gradients' dtype, as PyTorch's."""
    w = Tensor(np.array([3.0, 4.0], dtype=np.float32), requires_grad=True)
    (w * w).sum().backward()
    norm = optim.clip_grad_norm_([w], 1.0)
    assert isinstance(norm, Tensor) and norm.shape == () and norm.dtype == np.float32
    assert norm.item() == pytest.approx(10.0) and f"{norm:.1f}" == "10.0"
    np.testing.assert_allclose(w.grad.numpy(), [0.6, 0.8], rtol=1e-6)
