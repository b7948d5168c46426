"""The functional API and jit on the device under test (the strict double of CuPy, or ``CHAINRULE_TEST_DEVICE=cuda``):
device arrays in, device arrays out (JAX's way with device arrays), the CPU's values, no hidden host copy (the
double refuses implicit conversions and mixing with host arrays); jit records on the device and replays there."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import JitError, jit_step, nn, optim
from chainrule.core.errors import PerformanceWarning
from device_setup import NAME, backend, host, on_device, to_device

TOL = 1e-12 if NAME == "strict" else 1e-6
X = np.array([0.5, -1.0, 2.0])


@pytest.fixture(autouse=True)
def _device():
    backend()


def f(v):
    return (np.tanh(v) * v).sum()


def g(v):
    return np.sin(v) * v[0]


@cr.custom_vjp
def twice_sin(a):
    return np.sin(a) * 2


twice_sin.defvjp(lambda a: (np.sin(a) * 2, a), lambda a, ct: (ct * np.cos(a) * 2,))


@cr.custom_jvp
def twice_cos(a):
    return np.cos(a) * 2


twice_cos.defjvp(lambda primals, tangents: (twice_cos(primals[0]), -np.sin(primals[0]) * 2 * tangents[0]))


@cr.custom_jvp
def scaled(a, b):
    return a * b


scaled.defjvp(lambda primals, tangents: (scaled(*primals), tangents[0] * primals[1] + primals[0] * tangents[1]))


@cr.custom_vjp
def sin_and_cos(a):
    return np.sin(a), np.cos(a)


sin_and_cos.defvjp(lambda a: (sin_and_cos(a), a),
                   lambda a, cts: ((0 if cts[0] is None else cts[0] * np.cos(a)) - cts[1] * np.sin(a),))


@cr.custom_vjp
def product(a, b):
    return a * b


product.defvjp(lambda a, b: (a * b, (a, b)), lambda res, ct: (ct * res[1], ct * res[0]))
product.defjvp(lambda primals, tangents: (primals[0] * primals[1],
                                          tangents[0] * primals[1] + primals[0] * tangents[1]))


TRANSFORMS = {
    "grad": cr.grad(f),
    "value_and_grad": cr.value_and_grad(f),
    "vjp": lambda v: cr.vjp(g, v)[1](v * 0 + 1),
    "jvp": lambda v: cr.jvp(g, (v,), (v * 0 + 1,)),
    "jacobian": cr.jacobian(g),
    "jacfwd": cr.jacfwd(g),
    "jacrev": cr.jacrev(g),
    "hessian": cr.hessian(f),
    "hvp": lambda v: cr.hvp(f, (v,), (v * 0 + 1,)),
    "vmap": lambda v: cr.vmap(g)(v[None] * v[:, None]),
    "vmap of grad": lambda v: cr.vmap(cr.grad(f))(v[None] * v[:, None]),
    "linearize": lambda v: cr.linearize(g, v)[1](v * 0 + 1),
    "checkpoint": cr.grad(lambda v: cr.checkpoint(g)(v).sum()),
    "custom_vjp": cr.grad(lambda v: twice_sin(v).sum()),
    "custom_jvp": lambda v: cr.jvp(twice_cos, (v,), (v * 0 + 1,)),
    "custom_jvp reversed": cr.grad(lambda v: twice_cos(v).sum()),
    "custom_jvp of two, one constant": lambda v: cr.jvp(lambda a: scaled(a, v[::-1]), (v,), (v * 0 + 1,)),
    "custom_vjp, one output unused": cr.grad(lambda v: sin_and_cos(v)[1].sum()),
    "custom_vjp's jvp, one constant": lambda v: cr.jvp(lambda a: product(a, v[::-1]), (v,), (v * 0 + 1,)),
    "jit": lambda v: cr.jit(g)(v),
    "grad of jit": lambda v: cr.grad(cr.jit(f))(v),
}


def _leaves(out):
    return [x for o in out for x in _leaves(o)] if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_a_transform_takes_device_arrays_and_gives_device_arrays_with_the_cpus_values(name):
    got, want = _leaves(TRANSFORMS[name](to_device(X))), _leaves(TRANSFORMS[name](X))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert isinstance(a, backend().ndarray), f"{name} gave a {type(a).__name__}, not the device's array type"
        np.testing.assert_allclose(host(a), host(b), rtol=TOL, atol=TOL)


def _replays(jitted, *args, calls=3):
    """The results of ``calls`` calls (the first traces, the others replay)."""
    outs = [jitted(*args) for _ in range(calls)]
    assert jitted.traces == 1, "a later call traced again instead of replaying"
    return outs


def test_jit_records_and_replays_on_the_device():
    a, b = np.array([0.1, 0.2, 0.3]), np.array([1.0, 3.0, -2.0])

    def h(x, y):
        return (np.exp(x) * y + x[::-1] / 2).sum(axis=0, keepdims=True)

    jitted = cr.jit(h)
    want = h(cr.Tensor(a), cr.Tensor(b))._data
    for out in _replays(jitted, to_device(a), to_device(b)):
        assert on_device(out)
        np.testing.assert_allclose(host(out), want, rtol=TOL, atol=TOL)
    assert "asarray_1" in jitted.source  # the replay's outputs are made arrays of the traced device
    on_host = jitted(a, b)  # host arrays: a trace of their own on the host (as JAX's jit), never a silent copy
    assert isinstance(on_host, np.ndarray) and not on_device(on_host) and len(jitted._by_arguments) == 1
    np.testing.assert_allclose(on_host, want, rtol=TOL, atol=TOL)


def test_a_float_argument_of_jit_joins_the_device_arrays_as_in_eager():
    jitted = cr.jit(lambda x, s: (x * s).sum())
    x = to_device(X)
    for s in (2.0, 3.0, 3.0):  # a traced value (JAX's): another number replays the same program
        out = jitted(x, s)
        assert on_device(out)
        np.testing.assert_allclose(host(out), (X * s).sum(), rtol=TOL, atol=TOL)
    assert jitted.traces == 1


def test_a_replay_on_the_device_reads_nothing_back_to_the_host():
    if NAME != "strict":
        pytest.skip("the strict double counts host copies")
    import strict_device

    w = cr.Tensor(to_device(np.array([1.0, -2.0, 0.5])), requires_grad=True)
    jitted = cr.jit(lambda x: (cr.tanh(x * w) ** 2).sum())
    x = to_device(X)
    jitted(x)  # the trace
    before = strict_device.HOST_COPIES[0]
    for _ in range(3):
        jitted(x).backward()
    assert strict_device.HOST_COPIES[0] == before
    assert jitted.traces == 1 and on_device(w.grad)


def test_jit_of_a_model_on_the_device_gives_the_eager_gradients():
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8, dtype=np.float64), nn.GELU(), nn.LayerNorm(8, dtype=np.float64),
                          nn.Linear(8, 2, dtype=np.float64))
    cpu, dev = model, copy.deepcopy(model).to(NAME)
    x, y = np.random.default_rng(0).standard_normal((4, 3)), np.array([0, 1, 1, 0])
    loss = cr.jit(lambda xb, yb: nn.functional.cross_entropy(dev(xb), yb))
    for _ in range(3):
        dev.zero_grad()
        cpu.zero_grad()
        out = loss(cr.Tensor(x, device=NAME), to_device(y))
        out.backward()
        nn.functional.cross_entropy(cpu(cr.Tensor(x)), y).backward()
        assert on_device(out)
        for p, q in zip(dev.parameters(), cpu.parameters()):
            assert on_device(p.grad)
            np.testing.assert_allclose(host(p.grad), host(q.grad), rtol=TOL, atol=TOL)
    assert loss.traces == 1
    dev.to("cpu")
    with pytest.raises(JitError, match=r"moved to the device cpu since the trace; make another jit"):
        loss(cr.Tensor(x, device=NAME), to_device(y))


def test_jit_of_grad_runs_as_it_is_on_the_device_and_grad_of_jit_replays_there():
    x = to_device(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jitted = cr.jit(cr.grad(f))
        outs = [jitted(x) for _ in range(2)]
    assert any(issubclass(w.category, PerformanceWarning) and "write grad(jit(f))" in str(w.message) for w in caught)
    inner = cr.jit(f)
    outs += [cr.grad(inner)(x) for _ in range(3)]
    assert inner.traces == 1
    for out in outs:
        assert on_device(out)
        np.testing.assert_allclose(host(out), cr.grad(f)(X), rtol=TOL, atol=TOL)


def test_a_guard_on_a_value_read_compares_on_the_device():
    def signed(x):
        return x * 2 if bool((x.sum() > 0).all()) else x * -1

    jitted = cr.jit(signed)
    pos, neg = to_device(np.array([1.0, 2.0])), to_device(np.array([-1.0, -2.0]))
    for out in _replays(jitted, cr.Tensor(pos)):
        np.testing.assert_array_equal(host(out), [2.0, 4.0])
    np.testing.assert_array_equal(host(jitted(cr.Tensor(neg))), [1.0, 2.0])  # the other branch: traced again
    assert jitted.traces_again == 1


def test_dropout_inside_jit_draws_on_the_device_at_each_replay():
    drop = nn.Dropout(0.5)
    jitted = cr.jit(lambda x: drop(x) * 1.0)
    ones = cr.Tensor(to_device(np.ones(64)))
    masks = [host(m) for m in _replays(jitted, ones)]
    assert all(set(np.unique(m)) <= {0.0, 2.0} for m in masks)
    assert not np.array_equal(masks[1], masks[2]), "a replay must draw a fresh mask"


@pytest.mark.parametrize("make_opt", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                      lambda ps: optim.AdamW(ps, lr=1e-2, weight_decay=0.1)], ids=["SGD", "AdamW"])
def test_jit_step_trains_on_the_device_as_the_eager_step_on_the_cpu(make_opt):
    nn.manual_seed(1)
    cpu = nn.MLP(4, [8, 3], activation="relu", dtype=np.float64)
    dev = copy.deepcopy(cpu).to(NAME)
    cpu_opt, dev_opt = make_opt(cpu.parameters()), make_opt(dev.parameters())
    step = jit_step(lambda x, y: nn.functional.cross_entropy(dev(x), y), dev_opt)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x, y = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)
        loss = step(to_device(x), to_device(y))
        cpu_opt.zero_grad()
        want = nn.functional.cross_entropy(cpu(x), y)
        want.backward()
        cpu_opt.step()
        assert on_device(loss)
        np.testing.assert_allclose(host(loss), host(want), rtol=TOL, atol=TOL)
    assert step.loss.traces == 1
    for p, q in zip(dev.parameters(), cpu.parameters()):
        assert on_device(p)
        np.testing.assert_allclose(host(p), host(q), rtol=TOL, atol=TOL)
    for state in dev_opt.state.values():
        assert all(on_device(v) for v in state.values() if getattr(v, "ndim", 0))


def test_a_guard_compares_device_arrays_on_the_device():
    from chainrule.replay.tape import same_answer

    a = to_device(np.array([1.0, np.nan]))
    assert same_answer(a, to_device(np.array([1.0, np.nan])))
    assert not same_answer(a, to_device(np.array([1.0, 2.0])))
    assert not same_answer(a, np.array([1.0, np.nan]))  # on another device: not the traced answer
    assert not same_answer(a, to_device(np.array([1.0, np.nan], dtype=np.float32)))
