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
from device_setup import NAME, backend, host, on_device, to_device
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
    # the case's constant arrays (masks, targets, indices) on the device too, as a GPU user would pass them
    got = _derivatives(_flat(case.fn, {k: _place_device(v) if isinstance(v, np.ndarray) else v
                                       for k, v in params.items()}), arrays, _place_device)
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



def test_the_double_refuses_what_cupy_refused_on_a_gpu():
    """What CuPy 14 refused on an H200 (each once a failure of the device suite there), the double refuses too."""
    if NAME != "strict":
        pytest.skip("about the strict double")
    xp = backend().xp
    out, rows, v = xp.zeros((2, 2)), xp.asarray(np.array([0, 1, 1])), xp.asarray(np.ones(3))
    with pytest.raises(TypeError, match="NotImplemented"):  # CuPy's __array_ufunc__: a tuple index for at
        np.add.at(out, (rows, rows), v)
    xp.add.at(out, (rows, rows), v)  # its own add.at takes it
    assert host(out).tolist() == [[1.0, 0.0], [0.0, 2.0]]
    with pytest.raises(TypeError, match="host"):
        xp.add.at(out, (np.array([0]), rows[:1]), v[:1])
    with pytest.raises(TypeError, match="only supports"):  # CuPy's add.at: real types only
        xp.add.at(out.astype(complex), (rows, rows), v)
    a = np.array([0.0, 1, 2, 3, 5, 4])  # NumPy leaves 5, 4 as they are: CuPy's (and the double's) sorts them
    assert np.argpartition(a, (0, 2)).tolist() != host(np.argpartition(xp.asarray(a), (0, 2))).tolist() == [
        0, 1, 2, 3, 5, 4]
    with pytest.raises(AttributeError, match="'bool' object has no attribute 'astype'"):
        np.where(True, v, v)
    np.where(np.True_, v, v)  # a NumPy bool CuPy takes
    with pytest.raises(TypeError, match="unexpected keyword argument 'kind'"):
        np.argpartition(v, 1, kind="introselect")
    with pytest.raises(ValueError, match="does not broadcast"):
        np.linalg.solve(xp.asarray(np.ones((2, 3, 3))), xp.asarray(np.ones((3, 2))))
    special = backend().special()
    for name in ("jv", "yv", "iv", "ive", "jn"):
        assert not hasattr(special, name), name
    with pytest.raises(AttributeError, match="astype"):
        special.polygamma(1, v)
    np.testing.assert_allclose(host(special.polygamma(xp.asarray(np.array(1)), v)), np.full(3, np.pi**2 / 6))


def test_pytorchs_counting_and_drawing_functions_run_on_the_device():
    """bucketize, isin, bincount, histc, randint_like, bernoulli and multinomial on a device's values compute there
    (they refused them); the counting ones give the CPU's results."""
    x = np.array([0.2, 0.7, 0.7, 1.5])
    t, bounds = cr.Tensor(to_device(x)), cr.Tensor(to_device(np.array([0.5, 1.0])))
    ints = cr.Tensor(to_device(np.array([0, 2, 2, 5])))
    cases = [(cr.bucketize(t, bounds), cr.bucketize(cr.Tensor(x), cr.tensor([0.5, 1.0]))),
             (cr.bucketize(t, bounds, right=True, out_int32=True),
              cr.bucketize(cr.Tensor(x), cr.tensor([0.5, 1.0]), right=True, out_int32=True)),
             (cr.isin(t, bounds), cr.isin(cr.Tensor(x), cr.tensor([0.5, 1.0]))),
             (cr.isin(t, [0.7]), cr.isin(cr.Tensor(x), [0.7])),
             (cr.bincount(ints, minlength=7), cr.bincount(cr.tensor([0, 2, 2, 5]), minlength=7)),
             (cr.bincount(ints, t), cr.bincount(cr.tensor([0, 2, 2, 5]), cr.Tensor(x))),
             (cr.histc(t, bins=3), cr.histc(cr.Tensor(x), bins=3))]
    for got, want in cases:
        assert on_device(got) and got.dtype == want.dtype
        np.testing.assert_array_equal(host(got), want.numpy())
    cr.manual_seed(0)
    for drawn in (cr.randint_like(t, 5), cr.bernoulli(t / 2), cr.multinomial(t, 2),
                  cr.multinomial(t, 8, replacement=True)):
        assert on_device(drawn)
    assert set(host(cr.multinomial(t, 4)).tolist()) == {0, 1, 2, 3}  # without replacement: each once
    assert host(cr.multinomial(cr.Tensor(to_device(np.array([0.0, 1.0, 0.0]))), 5, replacement=True)).tolist() == \
        [1] * 5
    assert set(np.unique(host(cr.bernoulli(t, p=0.5)))) <= {0.0, 1.0}
    with pytest.raises(RuntimeError, match="bucketize: expected all arguments on one device"):
        cr.bucketize(t, cr.tensor([0.5]))  # boundaries on the host, values on the device
    with pytest.raises(RuntimeError, match="mode: computes on the host .* pass t\\.cpu\\(\\)"):
        t.mode()
