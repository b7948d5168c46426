"""JAX's top-level helpers (``eval_shape``, ``ShapeDtypeStruct``, ``linear_transpose``, ``disable_jit``,
``device_put``, ``block_until_ready``), checked against JAX; and a JAX program that runs with chainrule
in JAX's place (``lax``, ``random``, the transforms) unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)


def test_eval_shape_as_jax():
    def f(x, p):
        h = np.tanh(x @ p["w"] + p["b"])
        return {"out": h.sum(axis=0), "pair": (h, x[:, :1])}

    def g(x, p):
        h = jnp.tanh(x @ p["w"] + p["b"])
        return {"out": h.sum(axis=0), "pair": (h, x[:, :1])}

    ours = cr.eval_shape(f, cr.ShapeDtypeStruct((8, 3), np.float32), {"w": np.ones((3, 5)), "b": np.zeros(5)})
    theirs = jax.eval_shape(g, jax.ShapeDtypeStruct((8, 3), np.float32), {"w": np.ones((3, 5)), "b": np.zeros(5)})
    ours_leaves, theirs_leaves = cr.tree.leaves(ours), jax.tree.leaves(theirs)
    assert [(s.shape, s.dtype) for s in ours_leaves] == [(s.shape, s.dtype) for s in theirs_leaves]
    assert cr.tree.structure(ours) == cr.tree.structure(cr.tree.map(lambda s: 0, ours))
    assert cr.eval_shape(lambda x: 1.0 / x, cr.ShapeDtypeStruct((2,), np.float64)).shape == (2,)  # no warning
    assert cr.ShapeDtypeStruct((2, 3), np.float32) == cr.ShapeDtypeStruct([2, 3], "float32")
    assert cr.ShapeDtypeStruct((2, 3), np.float32).size == 6


def test_linear_transpose_as_jax():
    a = np.arange(12.0).reshape(3, 4)
    ours = cr.linear_transpose(lambda x, y: (a @ x) * 2.0 + y[::-1], np.zeros(4), cr.ShapeDtypeStruct((3,), "float64"))
    theirs = jax.linear_transpose(lambda x, y: (a @ x) * 2.0 + y[::-1], np.zeros(4), np.zeros(3))
    ct = np.array([1.0, -2.0, 0.5])
    for o, t in zip(ours(ct), theirs(ct)):
        np.testing.assert_allclose(o, t)
    assert len(ours(ct)) == 2


def test_disable_jit_runs_the_function_as_it_is():
    calls = []

    def f(x):
        calls.append(float(np.sum(x)))  # a side effect runs on every call only without jit
        return x * 2.0

    jitted = cr.jit(f)
    with cr.disable_jit():
        jitted(np.ones(2))
        jitted(np.ones(2) * 3)
    assert calls == [2.0, 6.0] and jitted.traces == 0
    jitted(np.ones(2))
    jitted(np.ones(2))
    assert len(calls) == 3 and jitted.traces == 1  # traced once, then replayed
    with cr.disable_jit(False):
        jitted(np.ones(2))
    assert len(calls) == 3


def test_device_put_and_block_until_ready():
    tree = {"a": 1.0, "b": [np.ones(2), cr.Tensor([1.0, 2.0])]}
    put = cr.device_put(tree)
    assert isinstance(put["a"], np.ndarray) and put["a"].shape == () and isinstance(put["b"][1], cr.Tensor)
    assert cr.block_until_ready(put) is put
    assert isinstance(cr.device_put(np.ones(2), "cpu"), np.ndarray)


def _program(jax, jnp):
    """A small JAX program: a recurrent cell scanned over a random sequence, its loss differentiated."""
    def loss(params, xs, key, noise_scale=0.0):
        noise = jax.random.normal(key, xs.shape, dtype=xs.dtype) * noise_scale

        def cell(h, x):
            h = jnp.tanh(params["w"] * h + params["u"] * x)
            return h, h ** 2

        h, ys = jax.lax.scan(cell, 0.0 * params["w"], xs + noise)
        h = jax.lax.cond(h > 0, lambda h: h * 2.0, lambda h: -h, h)
        return jnp.sum(ys) + jax.lax.fori_loop(0, 3, lambda i, v: v * h, 1.0)

    return loss


def test_a_jax_program_runs_with_chainrule_in_jaxs_place():
    params, xs = {"w": 0.8, "u": -0.4}, np.linspace(-1, 1, 6)
    ours, theirs = _program(cr, cnp), _program(jax, jnp)
    key_ours, key_theirs = cr.random.PRNGKey(0), jax.random.PRNGKey(0)  # the same key, not the same numbers
    np.testing.assert_allclose(ours(params, xs, key_ours), theirs(params, xs, key_theirs), rtol=1e-12)
    g_ours, g_theirs = cr.grad(ours)(params, xs, key_ours), jax.grad(theirs)(params, xs, key_theirs)
    for k in params:
        np.testing.assert_allclose(g_ours[k], g_theirs[k], rtol=1e-10)
    jitted = cr.jit(lambda xs, key: ours(params, xs, key, 0.1))
    values = [np.asarray(jitted(xs, cr.random.PRNGKey(seed))) for seed in (1, 2, 1)]
    np.testing.assert_allclose(values, [ours(params, xs, cr.random.PRNGKey(seed), 0.1) for seed in (1, 2, 1)],
                               rtol=1e-12)
    assert values[0] != values[1] and values[0] == values[2]
