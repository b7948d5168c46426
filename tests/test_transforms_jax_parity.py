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


def test_custom_vjp_as_jax_users_write_it():
    # fwd calling f itself (JAX's idiom) once recursed forever; nondiff_argnums, pytree arguments and
    # outputs, and keyword arguments were refused
    import functools

    @cr.custom_vjp
    def f(a, b):
        return np.sin(a) * b

    f.defvjp(lambda a, b: (f(a, b), (a, b)), lambda res, g: (np.cos(res[0]) * res[1] * g * 2.0, np.sin(res[0]) * g))
    x = np.array([0.3, -1.2])
    ga, gb = cr.grad(lambda a, b: np.sum(f(a, b)), argnums=(0, 1))(x, x + 1)
    np.testing.assert_allclose(ga, 2 * np.cos(x) * (x + 1), rtol=1e-14)
    np.testing.assert_allclose(gb, np.sin(x), rtol=1e-14)
    assert np.isclose(cr.grad(lambda a: f(a, b=3.0))(0.4), 6 * np.cos(0.4))
    # second order: fwd reruns on traced inputs (b = a ** 2: d/da [2 cos(a) a^2 + 2 a sin(a)])
    h = cr.hessian(lambda a: np.sum(f(a, a ** 2)))(x)
    np.testing.assert_allclose(np.diag(h), -2 * x ** 2 * np.sin(x) + 6 * x * np.cos(x) + 2 * np.sin(x), rtol=1e-12)

    @functools.partial(cr.custom_vjp, nondiff_argnums=(0,))
    def power(n, a):
        return a ** n

    power.defvjp(lambda n, a: (a ** n, a), lambda n, a, g: (n * a ** (n - 1) * g * 10.0,))
    np.testing.assert_allclose(cr.grad(lambda a: np.sum(power(3, a)))(x), 30 * x ** 2, rtol=1e-14)

    @cr.custom_vjp
    def pair(p):
        return {"y": p["a"] * p["b"], "z": p["a"] + 1.0}

    pair.defvjp(lambda p: (pair(p), p), lambda p, g: ({"a": g["y"] * p["b"] + g["z"] * 3.0, "b": g["y"] * p["a"]},))
    g = cr.grad(lambda p: np.sum(pair(p)["y"]) + np.sum(pair(p)["z"]))({"a": x, "b": 2 * x})
    np.testing.assert_allclose(g["a"], 2 * x + 3.0, rtol=1e-14)
    np.testing.assert_allclose(g["b"], x, rtol=1e-14)
    jac = cr.jacrev(lambda p: pair(p)["z"])({"a": x, "b": 2 * x})  # an output with no cotangent gets zeros
    assert jac["a"].tolist() == [[3.0, 0.0], [0.0, 3.0]] and not jac["b"].any()


def test_custom_vjp_matches_jax_with_nondiff_and_tuple_outputs():
    jax = _jax()
    jnp = jax.numpy
    import functools

    def build(lib, m):
        @functools.partial(lib.custom_vjp, nondiff_argnums=(1,))
        def f(a, k):
            return m.sin(a) * k, a ** 2

        f.defvjp(lambda a, k: (f(a, k), a), lambda k, a, g: (g[0] * m.cos(a) * k * 0.5 + g[1] * 7.0,))
        return lambda a: m.sum(f(a, 3.0)[0] * f(a, 3.0)[1])

    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(cr.grad(build(cr, np))(x), jax.grad(build(jax, jnp))(x), rtol=1e-13)
    np.testing.assert_allclose(cr.vmap(cr.grad(build(cr, np)))(np.stack([x, -x])),
                               jax.vmap(jax.grad(build(jax, jnp)))(np.stack([x, -x])), rtol=1e-13)


def test_stop_gradient_stops_pytrees_and_batched_values():
    # a dict came back unchanged (the gradient flowed through it), and so did a value inside vmap
    assert cr.grad(lambda x: x * cr.stop_gradient({"k": x})["k"])(3.0) == 3.0
    assert cr.grad(lambda x: x * cr.stop_gradient([x, None])[0])(3.0) == 3.0
    xs = np.array([1.0, 2.0, 3.0])
    assert cr.vmap(cr.grad(lambda x: x * cr.stop_gradient(x)))(xs).tolist() == [1.0, 2.0, 3.0]
    assert cr.grad(lambda w: np.sum(cr.vmap(lambda x: x * cr.stop_gradient(x * w))(xs)))(2.0) == 0.0


def test_custom_jvp_forward_reverse_and_higher_order():
    import functools

    @cr.custom_jvp
    def log1pexp(x):
        return np.log1p(np.exp(x))

    @log1pexp.defjvp
    def _(primals, tangents):
        return log1pexp(primals[0]), tangents[0] / (1 + np.exp(-primals[0]))

    with np.errstate(over="ignore"):
        assert cr.grad(log1pexp)(1000.0) == 1.0  # the rule's stable form, in reverse mode too
    assert cr.jvp(log1pexp, (0.0,), (2.0,)) == (np.log(2.0), 1.0)
    assert np.isclose(cr.grad(cr.grad(log1pexp))(0.0), 0.25)  # sigmoid'(0)
    assert np.isclose(cr.jacfwd(cr.grad(log1pexp))(0.0), 0.25)

    @functools.partial(cr.custom_jvp, nondiff_argnums=(1,))
    def power(a, n):
        return a ** n

    power.defjvp(lambda n, p, t: (power(p[0], n), n * p[0] ** (n - 1) * t[0] * 2.0))  # twice the true slope
    assert cr.grad(lambda a: power(a, 3))(2.0) == 24.0
    assert cr.grad(cr.grad(lambda a: power(a, 3)))(2.0) == 24.0
    two = cr.custom_jvp(lambda a, b: np.sin(a) * b)
    two.defjvps(lambda t, ans, a, b: np.cos(a) * b * t, None)
    assert cr.grad(two, argnums=(0, 1))(0.0, 3.0) == (3.0, 0.0)


def test_custom_jvp_matches_jax():
    jax = _jax()
    jnp = jax.numpy

    def build(lib, m):
        @lib.custom_jvp
        def f(a, b):
            return m.sin(a) * b, a * b

        @f.defjvp
        def _(p, t):
            (a, b), (ta, tb) = p, t
            return f(a, b), (m.cos(a) * b * ta * 3.0 + m.sin(a) * tb, a * tb + b * ta)

        return lambda a: m.sum(f(a, a ** 2)[0] * f(a, 2.0)[1])

    x = np.array([0.3, -1.2, 2.0])
    for ours, theirs in ((cr.grad, jax.grad), (cr.hessian, jax.hessian), (cr.jacrev, jax.jacrev)):
        np.testing.assert_allclose(ours(build(cr, np))(x), theirs(build(jax, jnp))(x), rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.grad(build(cr, np)))(np.stack([x, -x])),
                               jax.vmap(jax.grad(build(jax, jnp)))(np.stack([x, -x])), rtol=1e-12)


def test_checkpoint_takes_jax_keywords():
    import functools

    x = np.array([0.3, -1.2])
    want = 3 * x ** 2
    block = cr.checkpoint(lambda b, n: b ** n, static_argnums=(1,))
    np.testing.assert_allclose(cr.grad(lambda a: np.sum(block(a, 3)))(x), want, rtol=1e-14)
    block = functools.partial(cr.checkpoint, policy=None, prevent_cse=False)(lambda b: b ** 3)
    np.testing.assert_allclose(cr.grad(lambda a: np.sum(block(a)))(x), want, rtol=1e-14)
    np.testing.assert_allclose(cr.grad(lambda a: np.sum(cr.remat(lambda b: b ** 3)(a)))(x), want, rtol=1e-14)


def test_functional_index_updates_at():
    # JAX's x.at[idx].set(v) was missing (AttributeError on Tensor and under vmap)
    x = np.array([0.3, -1.2, 2.0, 0.5])
    assert cr.grad(lambda a: np.sum(a.at[0].set(a[1] ** 2)))(x).tolist() == [0.0, 2 * -1.2 + 1, 1.0, 1.0]
    dup = np.array([0, 2, 0])
    # repeated positions: set keeps the last value (NumPy's assignment), add adds them all
    out = cr.jvp(lambda a: a.at[dup].set(a[1:4] * 10.0), (x,), (np.ones(4),))[0]
    np.testing.assert_allclose(out, [5.0, -1.2, 20.0, 0.5], rtol=1e-15)
    out = cr.jvp(lambda a: a.at[dup].add(1.0), (x,), (np.ones(4),))[0]
    np.testing.assert_allclose(out, [2.3, -1.2, 3.0, 0.5], rtol=1e-15)
    out = cr.jvp(lambda a: a.at[dup].multiply(np.array([2.0, 3.0, 5.0])), (x,), (np.ones(4),))[0]
    np.testing.assert_allclose(out, [3.0, -1.2, 6.0, 0.5], rtol=1e-15)

    def f(a):
        a = a if isinstance(a, cr.Tensor) else cr.Tensor(a)
        return np.sum(a.at[dup].multiply(a[1:4] ** 2 + 1.0).at[1:3].apply(np.sin).at[3].max(a[0]) ** 2)

    assert cr.gradcheck(f, x, order=2)
    m = np.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_allclose(cr.vmap(lambda a: a.at[0].set(a[1] ** 2))(m), [[4.0, 2.0, 3.0], [25.0, 5.0, 6.0]])
    # out of bounds: JAX's modes (tests/test_jax_parity3.py compares them with JAX); an unknown one raises
    assert cr.grad(lambda a: np.sum(a.at[9].set(0.0, mode="drop")))(x).tolist() == [1.0] * 4
    with pytest.raises(TypeError, match=r"at\[...\].set: mode='wrap' is not one of"):
        cr.grad(lambda a: np.sum(a.at[9].set(0.0, mode="wrap")))(x)


def test_index_updates_match_jax():
    jax = _jax()
    jnp = jax.numpy
    x = np.array([0.3, -1.2, 2.0, 0.5])
    idx = np.array([0, 2, 0])
    for method in ("set", "add", "min", "max"):
        def f(a, m=np):
            return m.sum(getattr(a.at[idx], method)(a[1:4] ** 2 + 1.0) ** 2)

        np.testing.assert_allclose(cr.hessian(f)(x), jax.hessian(lambda a: f(a, jnp))(x), rtol=1e-12, err_msg=method)


def test_hessian_of_array_and_pytree_outputs():
    # JAX's hessian (jacfwd of jacrev) takes any output; chainrule's once required a scalar
    x = np.array([0.5, -1.0])
    h = cr.hessian(lambda a: a ** 3)(x)
    assert h.shape == (2, 2, 2)
    np.testing.assert_allclose(h[0], [[3.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(h[1], [[0.0, 0.0], [0.0, -6.0]])
    h = cr.hessian(lambda a: {"u": np.sum(a ** 3), "v": a[0] * a[1]})(x)
    np.testing.assert_allclose(h["u"], [[3.0, 0.0], [0.0, -6.0]])
    np.testing.assert_allclose(h["v"], [[0.0, 1.0], [1.0, 0.0]])
    assert cr.hessian(lambda a: a ** 4)(2.0) == 48.0


def test_fft_matches_jax():
    # numpy.fft had no rules (cnp.fft raised AttributeError, np.fft.fft(tensor) TypeError)
    jax = _jax()
    jnp = jax.numpy
    x = np.array([0.3, -1.2, 2.0, 0.5, 1.1])

    def f(a, m):
        spectrum = m.fft.rfft(a, n=6, norm="ortho") * (1 + 0.5j)
        return m.sum(m.fft.irfft(spectrum, n=5) ** 3) + m.sum(m.abs(m.fft.fft(a * 1j + a ** 2)) ** 2)

    np.testing.assert_allclose(cr.grad(lambda a: f(a, np))(x), jax.grad(lambda a: f(a, jnp))(x), rtol=1e-11)
    np.testing.assert_allclose(cr.hessian(lambda a: f(a, np))(x), jax.hessian(lambda a: f(a, jnp))(x), rtol=1e-10)
    z = x[:3] + 1j * x[2:]
    np.testing.assert_allclose(cr.jacrev(lambda z: np.fft.ifft(z ** 2), holomorphic=True)(z),
                               jax.jacrev(lambda z: jnp.fft.ifft(z ** 2), holomorphic=True)(z), rtol=1e-12)
    m = x[:4].reshape(2, 2)
    np.testing.assert_allclose(cr.vmap(cr.grad(lambda r: np.sum(np.abs(np.fft.fft2(np.outer(r, r))) ** 3)))(m),
                               jax.vmap(jax.grad(lambda r: jnp.sum(jnp.abs(jnp.fft.fft2(jnp.outer(r, r))) ** 3)))(m),
                               rtol=1e-11)


def test_tree_util_as_jax():
    from chainrule.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten

    params = {"w": np.array([1.0, 2.0]), "b": (0.5, None)}
    grads = cr.grad(lambda p: np.sum(p["w"] ** 2) + p["b"][0])(params)
    new = tree_map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(new["w"], [0.8, 1.6])
    assert new["b"] == (0.4, None) and list(new) == ["w", "b"]
    leaves, treedef = tree_flatten(params)
    assert leaves[0] == 0.5 and treedef.num_leaves == 2  # sorted keys: "b" before "w"
    assert tree_unflatten(treedef, [1, 2]) == {"w": 2, "b": (1, None)}
    assert tree_structure({"b": (0, None), "w": 1}) == treedef and len(tree_leaves([1, (2, {"k": 3})])) == 3
    with pytest.raises(ValueError, match="tree_map: tree 1 has structure"):
        tree_map(lambda a, b: a + b, params, {"w": 1.0})


def test_numpy_like_constructors_of_a_traced_value_take_at():
    # jnp.zeros_like(x).at[0].set(v) is JAX's way to build an array from traced entries; cnp.zeros_like gave an
    # ndarray, which has no .at
    import chainrule.numpy as cnp

    f = lambda a: cnp.sum(cnp.zeros_like(a).at[0].set(a[1] ** 2) + cnp.full_like(a, 2.0).at[1].set(a[0]) * a)  # noqa: E731
    assert cr.grad(f)(np.array([3.0, 5.0])).tolist() == [2.0 + 5.0, 10.0 + 3.0]
    plain = cnp.zeros_like(np.ones(2))  # NumPy's result for NumPy input (an ndarray with JAX's .at too)
    assert isinstance(plain, np.ndarray) and not isinstance(plain, cr.Tensor)
    assert plain.at[0].set(1.0).tolist() == [1.0, 0.0]


def test_tangents_and_cotangents_must_have_the_structure_they_stand_for():
    # a tangent dict with other keys, or a cotangent dict for a tuple output, was paired leaf by leaf silently
    x = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match=r"jvp: each tangent must have the same structure as its primal, got a "
                                         r"tangent \{'b': \*\} for a primal \{'a': \*\}"):
        cr.jvp(lambda p: p["a"], ({"a": x},), ({"b": x},))
    _, pullback = cr.vjp(lambda a: {"u": a, "v": 2 * a}, x)
    with pytest.raises(ValueError, match=r"vjp: the cotangent must have the output's structure, got \(\*, \*\) for "
                                         r"an output \{'u': \*, 'v': \*\}"):
        pullback((x, x))
    _, pullback = cr.vjp(lambda a: (a, 2 * a), x)
    assert pullback([x, x])[0].tolist() == [3.0, 6.0]  # a list for a tuple is the same structure


def _rule_through_jvp(m, n):
    """A custom_jvp whose rule is the jvp of the function itself (JAX's common way to wrap a function)."""
    def h(x, y):
        return n.sin(x) * y ** 2

    f = m.custom_jvp(h)

    @f.defjvp
    def rule(primals, tangents):
        return m.jvp(h, primals, tangents)

    return f


def test_custom_jvp_rule_that_calls_jvp():
    # a jvp opened inside the rule was hidden while the rule ran (only levels below the outer one were visible),
    # so the rule's tangent came out 0: jvp(f, (0.5, 2.0), (1.0, 0.0)) gave 0.0, not 4 cos(0.5)
    f = _rule_through_jvp(cr, np)
    assert cr.jvp(f, (0.5, 2.0), (1.0, 0.0))[1] == pytest.approx(4 * np.cos(0.5))
    assert cr.jvp(f, (0.5, 2.0), (0.0, 1.0))[1] == pytest.approx(4 * np.sin(0.5))
    x, y = np.array([0.3, -1.2, 0.7]), np.array([0.9, 0.5, -1.1])
    np.testing.assert_allclose(cr.jacfwd(f)(x, y), np.diag(np.cos(x) * y ** 2))
    np.testing.assert_allclose(cr.grad(lambda a: np.sum(f(a, y)))(x), np.cos(x) * y ** 2)
    np.testing.assert_allclose(cr.hessian(lambda a: np.sum(f(a, y)))(x), np.diag(-np.sin(x) * y ** 2))
    # under vmap the rule runs once per example, and its jvp was lifted to the batch (ConcreteValueError)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(cr.vmap(lambda a: cr.jvp(f, (a, y), (np.ones(3), np.zeros(3)))[1])(xs),
                               np.cos(xs) * y ** 2)
    np.testing.assert_allclose(cr.jvp(lambda a: cr.vmap(f, in_axes=(0, None))(a, y), (xs,), (np.ones((2, 3)),))[1],
                               np.cos(xs) * y ** 2)


@pytest.mark.oracle
def test_custom_jvp_rule_that_calls_jvp_matches_jax():
    jax = _jax()
    jnp = jax.numpy
    x, y = np.array([0.3, -1.2, 0.7]), np.array([0.9, 0.5, -1.1])
    ours, theirs = _rule_through_jvp(cr, np), _rule_through_jvp(jax, jnp)
    for transform in [lambda m, f: m.jacfwd(f, argnums=(0, 1))(x, y),
                      lambda m, f: m.jvp(f, (x, y), (np.cos(y), np.sin(x))),
                      lambda m, f: m.vmap(m.jacfwd(f))(np.stack([x, y]), np.stack([y, x])),
                      lambda m, f: m.jacrev(m.jacfwd(lambda a: f(a, y)))(x)]:
        want, got = transform(jax, theirs), transform(cr, ours)
        for a, b in zip(jax.tree_util.tree_leaves(want), cr.tree_util.tree_leaves(got), strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_checkpoint_under_vmap_passes_gradients_to_unbatched_arguments():
    # the block ran on stand-ins of the differentiated arguments; with a vmap-batched value in it the result was a
    # batched value, taken for "nothing differentiated" and returned as it was, cut from the real argument: 0.0
    x, b = np.array([1.0, 2.0]), np.array([[1.0, 1.0], [2.0, 3.0]])
    block = cr.checkpoint(lambda a, c: a * c)
    assert cr.grad(lambda a: np.sum(cr.vmap(block, in_axes=(None, 0))(a, b)))(x).tolist() == [3.0, 4.0]
    assert cr.grad(lambda a: np.sum(cr.vmap(lambda c: block(a, c))(b)))(x).tolist() == [3.0, 4.0]
    closing = lambda a: np.sum(cr.vmap(lambda c: cr.checkpoint(lambda u: u * c)(a))(b))  # noqa: E731
    assert cr.grad(closing)(x).tolist() == [3.0, 4.0]
    cubed = cr.checkpoint(lambda a, c: a ** 3 * c)
    hess = cr.hessian(lambda a: np.sum(cr.vmap(cubed, in_axes=(None, 0))(a, b)))(x)
    assert hess.tolist() == [[18.0, 0.0], [0.0, 48.0]]


@pytest.mark.oracle
def test_checkpoint_under_vmap_matches_jax():
    jax = _jax()
    jnp = jax.numpy
    x, y = np.array([-0.3, 0.1, 0.4]), np.array([-1.0, 0.2, -0.6])

    def program(m, n, a, c):
        block = m.checkpoint(lambda u, v: n.linalg.solve(n.outer(u, v) * 0.1 + 2.0 * n.eye(3), u + v))
        batched = m.vmap(block, in_axes=(None, 1), out_axes=1)(a, n.stack([c, -c], axis=1))
        return n.sum(n.sin(batched))

    want = jax.grad(lambda a, c: program(jax, jnp, a, c), argnums=(0, 1))(x, y)
    got = cr.grad(lambda a, c: program(cr, np, a, c), argnums=(0, 1))(x, y)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
