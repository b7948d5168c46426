"""Functional transforms as a user coming from JAX writes them: each test pins a case where chainrule once
differed from JAX silently (or lacked JAX's spelling). JAX is the oracle where it is installed; the expected
values are also written out, so the tests run without it."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import chainrule as cr


def _jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_dicts_line_up_by_key_not_by_insertion_order():
    # a tangent / cotangent / in_axes dict built with its keys in another order once paired leaves by position
    p = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    t = {"b": np.zeros(2), "a": np.ones(2)}
    out, tangent = cr.jvp(lambda p: p["a"] ** 2 + 10 * p["b"], (p,), (t,))
    assert tangent.tolist() == [2.0, 4.0]
    _, pullback = cr.vjp(lambda x: {"u": x * 2, "v": x * 3}, np.ones(2))
    assert pullback({"v": np.array([1.0, 0.0]), "u": np.zeros(2)})[0].tolist() == [3.0, 0.0]
    batched = cr.vmap(lambda d: d["a"] * d["b"], in_axes=({"b": None, "a": 0},))(
        {"a": np.ones((3, 2)), "b": np.array([2.0, 5.0])})
    assert batched.tolist() == [[2.0, 5.0]] * 3
    # results keep the caller's key order; an OrderedDict keeps its own order for its leaves
    g = cr.grad(lambda d: d["z"] * d["a"])({"z": 2.0, "a": 3.0})
    assert list(g) == ["z", "a"] and g == {"z": 3.0, "a": 2.0}
    od = cr.grad(lambda d: d["z"] * d["a"])(OrderedDict(z=2.0, a=3.0))
    assert isinstance(od, OrderedDict) and list(od) == ["z", "a"]


def test_dict_tangents_match_jax():
    jax = _jax()
    p = {"w": np.array([[0.5, -1.0], [2.0, 0.3]]), "b": (np.array([0.1, 0.2]), 0.7)}
    t = {"b": (np.array([1.0, -1.0]), 0.5), "w": np.array([[0.0, 1.0], [2.0, 0.0]])}
    f = lambda p: np.tanh(p["w"] @ p["b"][0]) * p["b"][1]  # noqa: E731
    fj = lambda p: jax.numpy.tanh(p["w"] @ p["b"][0]) * p["b"][1]  # noqa: E731
    np.testing.assert_allclose(cr.jvp(f, (p,), (t,))[1], jax.jvp(fj, (p,), (t,))[1], rtol=1e-12)


def test_keyword_arguments_pass_through_jacobians_and_hessian():
    # JAX's jacrev/jacfwd/hessian pass keyword arguments to f undifferentiated; these once refused them
    x = np.array([1.0, 2.0])
    f = lambda x, s=2.0: x ** 3 * s  # noqa: E731
    assert cr.jacrev(f)(x, s=3.0).tolist() == [[9.0, 0.0], [0.0, 36.0]]
    assert cr.jacfwd(f)(x, s=3.0).tolist() == [[9.0, 0.0], [0.0, 36.0]]
    assert cr.hessian(lambda x, s: np.sum(f(x, s)))(x, s=3.0).tolist() == [[18.0, 0.0], [0.0, 36.0]]
    jac, aux = cr.jacrev(lambda x, s: (x * s, s), has_aux=True)(x, s=5.0)
    assert jac.tolist() == [[5.0, 0.0], [0.0, 5.0]] and aux == 5.0
