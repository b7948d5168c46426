"""A module moved to a device packs its parameters: one array per dtype, the weight matrices first, each parameter
a view of it (``nn.module_placement.packed``), so that an optimiser's group is one stretch of memory, updated
where it is, with no copy back per parameter (each copy is a kernel launch on a GPU). The results are those of
the same module with its parameters moved one by one (unpacked), bit for bit on the strict double, whatever order
the groups list the parameters in, with a frozen parameter in the middle, and after the user rebinds a
parameter's values."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from device_setup import NAME, backend, host, to_device

EXACT = NAME == "strict"


def _address(a):
    return backend().address(a)


def _model(seed=0):
    return nn.Sequential(nn.Linear(4, 3, rng=seed), nn.ReLU(), nn.Linear(3, 2, rng=seed + 1),
                         nn.LayerNorm(2))


def _unpacked(model):
    """``model`` on the device with each parameter an array of its own (as a user's own moves would make it)."""
    for p in model.parameters():
        p.data = cr.Tensor(to_device(p.numpy()))
    return model


def _check(got, want):
    if EXACT:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_parameters_moved_to_a_device_are_views_of_one_array_matrices_first():
    backend()
    m = _model()
    want = {k: v.numpy().copy() for k, v in m.state_dict().items()}
    m.to(NAME)
    ps = dict(m.named_parameters())
    order = ["0.weight", "2.weight", "0.bias", "2.bias", "3.weight", "3.bias"]
    position = _address(ps[order[0]]._data)
    for name in order:
        assert _address(ps[name]._data) == position, name
        position += ps[name]._data.nbytes
        _check(host(ps[name]), want[name])


def test_each_dtype_has_its_own_array():
    backend()
    m = nn.Sequential(nn.Linear(2, 2, dtype=np.float32), nn.Linear(2, 2, dtype=np.float64)).to(NAME)
    w32, b32, w64, b64 = (p._data for p in m.parameters())
    assert _address(b32) == _address(w32) + w32.nbytes and _address(b64) == _address(w64) + w64.nbytes
    assert w32.dtype == np.float32 and w64.dtype == np.float64


def _steps(model, x, make_opt, steps=3, between=None):
    opt = make_opt(model)
    for k in range(steps):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
        if between is not None:
            between(model, k)
    return {k: host(v) for k, v in model.state_dict().items()}


GROUPINGS = {
    "all": lambda m: optim.AdamW(m.parameters(), lr=0.1),
    "reversed": lambda m: optim.Adam(list(m.parameters())[::-1], lr=0.1),
    "decay_groups": lambda m: optim.AdamW(optim.weight_decay_groups(m, 0.1), lr=0.1),
    "sgd_momentum": lambda m: optim.SGD(m.parameters(), lr=0.1, momentum=0.9),
}


@pytest.mark.parametrize("grouping", GROUPINGS)
def test_a_packed_module_trains_as_on_the_cpu(grouping):
    backend()
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    want = _steps(_unpacked(_model()), cr.Tensor(to_device(x)), GROUPINGS[grouping])
    got = _steps(_model().to(NAME), cr.Tensor(to_device(x)), GROUPINGS[grouping])
    for k in want:
        _check(got[k], want[k])


def test_a_frozen_parameter_between_packed_ones():
    backend()
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)

    def run(model, xx):
        model[2].weight.requires_grad_(False)
        return _steps(model, xx, GROUPINGS["all"])

    want, got = run(_unpacked(_model()), cr.Tensor(to_device(x))), run(_model().to(NAME), cr.Tensor(to_device(x)))
    for k in want:
        _check(got[k], want[k])


def test_a_parameter_rebound_by_the_user_is_still_updated():
    backend()
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    fresh = np.full((3, 4), 0.25, dtype=np.float32)

    def rebind(model, k):
        if k == 0:
            model[0].weight.data = cr.Tensor(to_device(fresh))

    want = _steps(_unpacked(_model()), cr.Tensor(to_device(x)), GROUPINGS["all"], between=rebind)
    got = _steps(_model().to(NAME), cr.Tensor(to_device(x)), GROUPINGS["all"], between=rebind)
    for k in want:
        _check(got[k], want[k])


@pytest.mark.skipif(NAME != "strict", reason="launches are counted by the strict double only")
def test_a_packed_group_is_updated_in_place_with_no_copy_back():
    from strict_device import LAUNCHES

    backend()
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(10)]).to(NAME)
    x = cr.Tensor(to_device(np.ones((2, 4), np.float32)))
    opt = optim.AdamW(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(x).sum().backward()
        LAUNCHES.clear()
        opt.step()
    assert "setitem" not in LAUNCHES and LAUNCHES["concatenate"] == 1, LAUNCHES  # the gradients' only
