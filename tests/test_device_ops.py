"""Every op case (``op_cases.CASES``: the declared ops' generated cases and the hand-written ones) on the device
under test (the strict double of CuPy, or ``CHAINRULE_TEST_DEVICE=cuda``): values, first and second derivatives
in reverse and forward mode, compared with the same computation on the CPU (itself checked against finite
differences in ``test_ops_gradcheck.py``), and every result on the device, with no hidden host copy."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import chainrule as cr
from device_known_failures import KNOWN, LACKING  # the cases not yet device-clean, each with its cause
from device_setup import NAME, backend, host, on_device
from op_cases import CASES, draw_inputs


def _flat(fn, params):
    def f(*xs):
        out = fn(*xs, **params)
        if isinstance(out, (list, tuple)):
            return cr.concatenate([cr.ravel(o) for o in out])
        return out

    return f


def _derivatives(f, arrays, place):
    """Value, reverse first and second order, forward first and second order of ``f`` at ``arrays``."""
    rng = np.random.default_rng(1)
    xs = [cr.Tensor(place(a), requires_grad=a.dtype.kind in "fc") for a in arrays]
    out = f(*xs)
    results = {"value": out}
    live = [x for x in xs if x.requires_grad]
    if not live or out.dtype.kind not in "fc" or not out.requires_grad:
        return results
    w = cr.Tensor(place(rng.standard_normal(out.shape).astype(out.dtype)))
    loss = (out * w).sum()
    loss = loss.real if loss.dtype.kind == "c" else loss
    g1 = cr.autograd.grad(loss, live, create_graph=True, allow_unused=True, materialize_grads=True)
    results["rev1"] = g1
    vs = [cr.Tensor(place(rng.standard_normal(x.shape).astype(x.dtype))) for x in live]
    s = sum(((g * v).real.sum() for g, v in zip(g1, vs)), cr.Tensor(place(np.zeros(()))))
    if s.requires_grad:
        results["rev2"] = cr.autograd.grad(s, live, allow_unused=True, materialize_grads=True)
    ts = tuple(place(rng.standard_normal(x.shape).astype(x.dtype)) for x in xs)
    primals = tuple(x.detach()._data for x in xs)
    results["fwd1"] = cr.jvp(f, primals, ts)[1]
    results["fwd2"] = cr.jvp(lambda *p: cr.jvp(f, p, ts)[1], primals, ts)[1]
    return results


def _place_device(a):
    return backend().from_host(np.asarray(a))


def _marked(case):
    # strict on the double: a case that starts passing must leave the list (CHAINRULE_DEVICE_ALL=1: no marks)
    if case.name in KNOWN and not os.environ.get("CHAINRULE_DEVICE_ALL"):
        mark = pytest.mark.xfail(strict=NAME == "strict", reason=KNOWN[case.name])
        return pytest.param(case, id=str(case), marks=mark)
    return pytest.param(case, id=str(case))


@pytest.mark.parametrize("case", [_marked(c) for c in CASES])
@settings(max_examples=1, deadline=None, derandomize=True, database=None, phases=(Phase.generate,),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_op_case_on_device(case, data):
    arrays, params = draw_inputs(case, data)
    f = _flat(case.fn, params)
    if case.name in LACKING:  # a function the device does not have: refused, naming it and the device
        with pytest.raises(TypeError, match=rf"{case.name}: not available on the device '{NAME}'"):
            _derivatives(f, arrays, _place_device)
        return
    expected = _derivatives(f, arrays, lambda a: a)
    got = _derivatives(f, arrays, _place_device)
    assert set(got) == set(expected)
    scale = 1e-4 * case.tol if NAME != "strict" else 1e-9
    for kind, want in expected.items():
        have = got[kind]
        wants = want if isinstance(want, tuple) else (want,)
        haves = have if isinstance(have, tuple) else (have,)
        for w_, h_ in zip(wants, haves, strict=True):
            assert on_device(h_), f"{case.name} {kind}: a result not on {NAME}: {type(getattr(h_, 'data', h_))}"
            np.testing.assert_allclose(host(h_), host(w_), rtol=scale, atol=scale, err_msg=f"{case.name} {kind}")


def test_the_device_is_strict():
    """The double refuses what CuPy refuses: a test on it can fail."""
    if NAME != "strict":
        pytest.skip("about the strict double")
    x = backend().from_host(np.ones(3))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x)
    with pytest.raises(TypeError, match="host NumPy array"):
        x + np.ones(3)
    t = cr.Tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"add: expected all arguments on one device.*strict.*cpu"):
        t + np.ones(3)
    with pytest.raises(TypeError, match=r"t.cpu\(\).numpy\(\)"):
        t.numpy()

