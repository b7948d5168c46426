"""Optimisers updating a parameter group as one vector (``foreach``; the default off the host): the same results
bit for bit as the loop over parameters, the per-parameter state still readable and resumable, and a fall back
to the loop whenever the group cannot be one vector."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor, nn, optim
from strict_device import LAUNCHES

ELEMENTWISE = [
    (optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True)),
    (optim.SGD, dict(lr=0.1)),
    (optim.Adam, dict(lr=0.1, amsgrad=True, weight_decay=0.05)),
    (optim.AdamW, dict(lr=0.1, maximize=True)),
    (optim.RMSprop, dict(centered=True, momentum=0.5)),
    (optim.Adagrad, dict(lr_decay=0.1, initial_accumulator_value=0.2)),
    (optim.Adadelta, {}),
    (optim.Adamax, dict(weight_decay=0.1)),
    (optim.NAdam, {}),
    (optim.RAdam, dict(weight_decay=0.1, decoupled_weight_decay=True)),
]


def _params(dtype=np.float64):
    rng = np.random.default_rng(0)
    return [Tensor(rng.normal(size=s).astype(dtype), requires_grad=True) for s in [(3,), (2, 4), (5,), ()]]


def _train(cls, kw, foreach, steps=6, missing_at=None, dtype=np.float64):
    ps = _params(dtype)
    opt = cls([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.05}], foreach=foreach, **kw)
    for k in range(steps):
        opt.zero_grad()
        loss = sum(((p - 0.3) ** 2 * (j + 1)).sum() for j, p in enumerate(ps)
                   if not (missing_at in (k, "always") and j == 1))
        loss.backward()
        opt.step()
    return [p.numpy().copy() for p in ps], opt


def _same_state(a, b):
    assert set(a) == set(b)
    for i in a:
        assert set(a[i]) == set(b[i])
        for k, v in a[i].items():
            if isinstance(v, np.ndarray):
                np.testing.assert_array_equal(v, b[i][k], err_msg=f"state {i} {k}")
            else:
                assert v == b[i][k], (i, k)


@pytest.mark.parametrize("cls,kw", ELEMENTWISE, ids=[f"{c.__name__}{i}" for i, (c, _) in enumerate(ELEMENTWISE)])
@pytest.mark.parametrize("missing_at", [None, 2, "always"], ids=["every-grad", "a-step-without-one-grad", "frozen"])
def test_one_vector_per_group_is_the_loop_bit_for_bit(cls, kw, missing_at):
    loop, opt_loop = _train(cls, kw, False, missing_at=missing_at)
    flat, opt_flat = _train(cls, kw, True, missing_at=missing_at)
    for a, b in zip(loop, flat, strict=True):
        np.testing.assert_array_equal(a, b)
    _same_state(opt_loop.state_dict()["state"], opt_flat.state_dict()["state"])


def test_a_frozen_parameter_is_left_out_of_the_vector():
    _, opt = _train(optim.Adam, dict(lr=0.1), True, missing_at="always")
    assert opt._flat[0].indices == (0,) and 1 not in opt.state  # parameter 1 never had a gradient


def test_the_flat_path_runs_and_the_state_is_views_of_it():
    _, opt = _train(optim.Adam, dict(lr=0.1), True, steps=2)
    assert set(opt._flat) == {0, 1}
    moment = opt.state[1]["exp_avg"]
    assert moment.shape == (2, 4) and moment.base is not None  # a view of the group's flat moment
    moment[...] = 7.0  # writing through the per-parameter view reaches the flat state the next step reads
    np.testing.assert_array_equal(opt._flat[0].state["exp_avg"][3:], 7.0)


def _loss(ps):
    return sum(((p - 0.3) ** 2 * (j + 1)).sum() for j, p in enumerate(ps))


def _step(opt, ps):
    opt.zero_grad()
    _loss(ps).backward()
    opt.step()


def test_a_loaded_state_replaces_the_flat_one():
    ref = _params()
    ref_opt = optim.AdamW(ref, lr=0.1, foreach=True)
    for _ in range(6):
        _step(ref_opt, ref)
    ps = _params()
    opt = optim.AdamW(ps, lr=0.1, foreach=True)
    for _ in range(3):
        _step(opt, ps)
    saved = opt.state_dict()
    resumed = _params()
    opt2 = optim.AdamW(resumed, lr=0.1, foreach=True)
    _step(opt2, resumed)  # a flat state of its own, which the load must replace
    for p, q in zip(ps, resumed, strict=True):
        q.data.copy_(p.data)
    opt2.load_state_dict(saved)
    for _ in range(3):
        _step(opt2, resumed)
    for a, b in zip(ref, resumed, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_group_of_mixed_dtypes_is_updated_in_the_loop():
    a = Tensor(np.ones(3, np.float32), requires_grad=True)
    b = Tensor(np.ones(2), requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1, foreach=True)
    (a.sum() * 2 + (b * b).sum()).backward()
    opt.step()
    assert opt._flat == {}
    np.testing.assert_allclose(a.numpy(), 0.9, rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), 0.9)


def test_pytorch_implementation_switches():
    w = Tensor(np.ones(2), requires_grad=True)
    for cls in (optim.SGD, optim.Adam, optim.AdamW, optim.Adagrad):
        assert cls([w], lr=0.1, fused=True)._foreach is True
        assert cls([w], lr=0.1, foreach=False)._foreach is False
    with pytest.raises(RuntimeError, match="foreach and fused cannot both be True"):
        optim.Adam([w], foreach=True, fused=True)
    with pytest.raises(NotImplementedError, match=r"AdamW\(differentiable=True\).*outside the graph"):
        optim.AdamW([w], differentiable=True)
    assert optim.RMSprop([w], capturable=True)._foreach is None


@pytest.mark.oracle
def test_adamw_fused_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    shapes = [(4, 3), (3,), (2, 2, 2)]
    init = [rng.normal(size=s) for s in shapes]
    ours = [Tensor(v.copy(), requires_grad=True) for v in init]
    theirs = [torch.tensor(v.copy(), requires_grad=True) for v in init]
    opt = optim.AdamW(ours, lr=0.05, weight_decay=0.1, amsgrad=True, fused=True)
    topt = torch.optim.AdamW(theirs, lr=0.05, weight_decay=0.1, amsgrad=True, foreach=True)
    for _ in range(5):
        opt.zero_grad()
        topt.zero_grad()
        sum((p**3).sum() for p in ours).backward()
        sum((p**3).sum() for p in theirs).backward()
        opt.step()
        topt.step()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.fixture
def strict():
    import device_setup

    if device_setup.NAME != "strict":
        pytest.skip("launches are counted by the strict double only")
    device_setup.backend()


def test_off_the_host_a_step_is_a_few_launches_per_group_not_per_parameter(strict):
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(10)]).to("strict")
    x = cr.devices.move(np.ones((2, 4), np.float32), cr.devices.backend("strict"))
    counts = {}
    for foreach in (None, False):
        opt = optim.AdamW(model.parameters(), lr=0.1, foreach=foreach)
        for _ in range(2):
            opt.zero_grad()
            model(x).sum().backward()
            LAUNCHES.clear()
            opt.step()
        counts[foreach] = sum(LAUNCHES.values())
    # 20 parameters: the loop launches Adam's kernel for each (14 launches each before it was one kernel); one
    # vector: one kernel for the group, the gradients' concatenation, and the copy back (packed: none)
    assert counts[False] >= 20, counts
    assert counts[None] <= 3, counts


def test_clipping_off_the_host_is_one_vector(strict):
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(10)]).to("strict")
    host = nn.Sequential(*[nn.Linear(4, 4) for _ in range(10)])
    host.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    model(cr.devices.move(x, cr.devices.backend("strict"))).pow(2).sum().backward()
    host(x).pow(2).sum().backward()
    LAUNCHES.clear()
    norm = optim.clip_grad_norm_(model.parameters(), 1e-3)
    assert sum(LAUNCHES.values()) <= 4  # concatenate, dot, scale
    assert float(norm) == pytest.approx(float(optim.clip_grad_norm_(host.parameters(), 1e-3)), rel=1e-5)
    for p, q in zip(model.parameters(), host.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-9)
