"""vmap as JAX users write it: each test pins a case a JAX-style program (or JAX's own batching tests,
re-expressed) once met as a needless error. Expected values are written out; the oracle test compares a
few random compositions of vmap with the other transforms against JAX where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

RNG = np.random.default_rng(7)


def test_out_axes_none_takes_a_result_that_is_the_same_for_every_example():
    # a jvp's primal output, or a gradient at a point closed over, does not depend on the batch: JAX
    # sees that by tracing; chainrule once raised "differs per example" for them
    x = np.array([0.1, 0.7, -0.4])
    y, jac_t = cr.vmap(lambda v: cr.jvp(np.sin, (x,), (v,)), out_axes=(None, 0))(np.eye(3))
    np.testing.assert_allclose(y, np.sin(x), rtol=1e-15)
    np.testing.assert_allclose(jac_t, np.diag(np.cos(x)), rtol=1e-15)
    g, twice = cr.vmap(lambda v: (cr.grad(lambda a: np.sum(a ** 3))(x), 2 * v), out_axes=(None, 0))(np.ones((4, 3)))
    np.testing.assert_allclose(g, 3 * x ** 2, rtol=1e-15)
    assert twice.shape == (4, 3)
    # inside an outer vmap, the inner level's axis is not the array's first
    inner = cr.vmap(lambda a: a * 2.0, in_axes=None, axis_size=3, out_axes=None)
    np.testing.assert_array_equal(cr.vmap(inner, in_axes=1, out_axes=1)(np.arange(6.0).reshape(2, 3)),
                                  2 * np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="out_axes is None for a result that differs per example"):
        cr.vmap(lambda a: a * 2.0, out_axes=None)(np.arange(3.0))


def test_an_unbatched_numpy_argument_takes_batched_indices_and_at():
    # JAX hands an in_axes=None argument over as a jax array: table[i] and x.at[i].set(v) work on it
    table = np.arange(3.0) * 10
    idx = np.array([2, 0, 1, 2])
    got = cr.vmap(lambda t, i: t[i], in_axes=(None, 0))(table, idx)
    assert type(got) is np.ndarray and got.tolist() == [20.0, 0.0, 10.0, 20.0]
    got = cr.vmap(lambda t, i, v: t.at[i].set(v), in_axes=(None, 0, 0))(table, idx, -np.arange(4.0))
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, [[0, 10, 0], [-1, 10, 20], [0, -2, 20], [0, 10, -3]])
    # the argument is still NumPy's array in every other way, and results come back as plain arrays
    out = cr.vmap(lambda t, x: (t, np.sum(t) * x, t[1:]), in_axes=(None, 0), out_axes=(None, 0, None))(
        table, np.ones(2))
    assert [type(o) for o in out] == [np.ndarray] * 3
    np.testing.assert_array_equal(out[1], [30.0, 30.0])
    # a NumPy array closed over cannot be reached: the error says what to do
    with pytest.raises(TypeError, match=r"use chainrule.Tensor\(a\)\[i\]"):
        cr.vmap(lambda i: table[i])(idx)


def test_at_with_a_batched_index_runs_per_example_and_differentiates():
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([1, 0, 3])
    got = cr.vmap(lambda a, i, v: a.at[i].set(v))(x, idx, np.array([-1.0, -2.0, -3.0]))
    want = x.copy()
    want[np.arange(3), idx] = [-1.0, -2.0, -3.0]
    np.testing.assert_array_equal(got, want)
    g = cr.vmap(cr.grad(lambda a, i, v: np.sum(a.at[i].add(v * a[0]) ** 2), argnums=(0, 2)))(x, idx, np.ones(3))
    for b in range(3):
        a, i = x[b], idx[b]
        upd = a.copy()
        upd[i] += a[0]
        ga = 2 * upd
        ga[0] += 2 * upd[i]
        np.testing.assert_allclose(g[0][b], ga, rtol=1e-14)
        np.testing.assert_allclose(g[1][b], 2 * upd[i] * a[0], rtol=1e-14)


def test_cnp_functions_batch_as_numpys_do():
    # cnp.interp reads concrete values: under vmap it once raised where np.interp ran per example
    xp, fp = np.array([-1.0, 0.0, 1.0]), np.array([0.0, 2.0, 1.0])
    xs = np.array([[-0.5, 0.25], [0.75, -2.0]])
    np.testing.assert_allclose(cr.vmap(lambda x: cnp.interp(x, xp, fp))(xs), np.interp(xs, xp, fp), rtol=1e-15)
    np.testing.assert_array_equal(cr.vmap(lambda x: cnp.argmax(x))(xs), [1, 0])


def test_a_result_that_is_not_an_array_is_refused():
    with pytest.raises(TypeError, match="vmap: the function returned a str"):
        cr.vmap(lambda x: "hello")(np.arange(3.0))


def _compositions(lib, jnp):
    """Small programs under stacks of transforms, written once for JAX and for chainrule."""

    def prog(x, w):
        h = jnp.tanh(x @ w) * jnp.cumsum(x, axis=-1)[..., :1]
        return jnp.sort(h, axis=-1) + jnp.max(h, axis=-1, keepdims=True)

    def loss(x, w):
        return jnp.sum(prog(x, w) ** 2)

    return {
        "vmap(jacfwd) in_axes (-1, None) out_axes -1": lib.vmap(lib.jacfwd(prog), in_axes=(-1, None), out_axes=-1),
        "jacrev(vmap) in_axes (0, None)": lib.jacrev(lib.vmap(prog, in_axes=(0, None)), argnums=1),
        "vmap(hessian) argnums (0, 1)": lib.vmap(lib.hessian(loss, argnums=(0, 1)), in_axes=(0, None)),
        "vmap(vmap(grad))": lib.vmap(lambda x, w: lib.vmap(lib.grad(loss), in_axes=(None, 0), out_axes=1)(
            x, jnp.stack([w, 2 * w])), in_axes=(0, None)),
        "grad(vmap(grad)) ": lib.grad(lambda xs, w: jnp.sum(lib.vmap(lib.grad(loss, argnums=1),
                                                                      in_axes=(0, None))(xs, w) ** 2), argnums=1),
        "vmap(jvp) out_axes (None, 0)": lambda xs, w: lib.vmap(
            lambda t: lib.jvp(lambda v: prog(v, w), (xs[0],), (t,)), out_axes=(None, 0))(xs),
        "vmap(vjp)": lambda xs, w: lib.vmap(lambda x, c: lib.vjp(prog, x, w)[1](c), in_axes=(0, 0))(xs, xs[:, :2]),
    }


@pytest.mark.oracle
def test_compositions_match_jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    xs, w = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    ours, theirs = _compositions(cr, cnp), _compositions(jax, jax.numpy)
    for name, f in ours.items():
        xs_ = xs.T if "in_axes (-1" in name else xs
        got, want = jax.tree_util.tree_leaves(f(xs_, w)), jax.tree_util.tree_leaves(theirs[name](xs_, w))
        assert len(got) == len(want), name
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12, err_msg=name)


def test_reductions_take_where_and_initial():
    # jnp.sum(x, where=m) and jnp.max(x, where=m, initial=i) once raised a bare "unexpected keyword argument"
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    m = x > 0
    assert cnp.sum(x, where=m, initial=1.5) == 10.0
    np.testing.assert_array_equal(cnp.mean(x, axis=1, where=m), [2.0, 2.25])
    np.testing.assert_array_equal(cnp.max(x, axis=1, where=~m, initial=-5.0), [-2.0, -1.0])
    np.testing.assert_array_equal(cnp.prod(x, axis=0, where=m, initial=2.0), [1.0, 8.0, 6.0])
    np.testing.assert_array_equal(cr.grad(lambda a: cnp.sum(a, where=m))(x), m.astype(float))
    np.testing.assert_array_equal(cr.grad(lambda a: cnp.min(a, initial=0.0))(x), [[0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(cr.grad(lambda a: cnp.max(a, initial=9.0))(x), np.zeros((2, 3)))
    np.testing.assert_array_equal(cr.vmap(lambda a, k: cnp.mean(a, where=k))(x, m), [2.0, 2.25])
    with pytest.raises(ValueError, match="max: 'where' needs 'initial'"):
        cnp.max(x, where=m)


def test_tree_util_reduce_all_and_is_leaf():
    from chainrule import tree_util as tu

    tree = {"b": [3.0, {"c": 4.0}], "a": (1.0, 2.0)}
    assert tu.tree_reduce(lambda s, x: s * 10 + x, tree) == 1234.0  # leaves in sorted-key order
    assert tu.tree_reduce(lambda s, x: s + x, tree, 0.5) == 10.5
    with pytest.raises(TypeError, match="tree_reduce: the tree has no leaves and no initializer"):
        tu.tree_reduce(lambda s, x: s + x, {})
    assert tu.tree_all({"a": True, "b": [1, 2.0]}) and not tu.tree_all([True, (0,)]) and tu.tree_all(None)
    whole_tuples = tu.tree_map(lambda x: sum(x) if isinstance(x, tuple) else -x, tree,
                               is_leaf=lambda x: isinstance(x, tuple))
    assert whole_tuples == {"b": [-3.0, {"c": -4.0}], "a": 3.0}
    assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list)) == [1.0, 2.0, [3.0, {"c": 4.0}]]
    # the parameters of a model as JAX users add up a penalty over them
    params = {"w": np.array([1.0, -2.0]), "b": np.array(0.5)}
    g = cr.grad(lambda p: tu.tree_reduce(lambda s, x: s + cnp.sum(x ** 2), p, 0.0))(params)
    np.testing.assert_array_equal(g["w"], [2.0, -4.0])
    assert float(g["b"]) == 1.0


def test_functions_that_read_values_batch_per_example():
    # cnp.select (a list of batched conditions) and norm's order-p path once raised under vmap
    xs = RNG.normal(size=(2, 3, 4))
    got = cr.vmap(lambda a: cnp.select([a > 0.5, a < -0.5], [a, a ** 2], 0.1))(xs)
    np.testing.assert_array_equal(got, np.select([xs > 0.5, xs < -0.5], [xs, xs ** 2], 0.1))
    got = cr.vmap(lambda a: cnp.linalg.norm(a, ord=3, axis=1))(xs)
    np.testing.assert_allclose(got, np.linalg.norm(xs, ord=3, axis=2), rtol=1e-14)


def test_methods_take_numpys_meaning_when_transforms_are_given_arrays():
    # x.std() is NumPy's (ddof 0) on an array but PyTorch's (unbiased) on a Tensor; grad and vmap of f once used
    # PyTorch's, so they differentiated / batched another function than f(x) on the arrays they were given
    x = np.arange(1.0, 7.0).reshape(2, 3)

    def f(a):
        return a.std() + a.var(1).sum() + a.max(1).sum() + a.min(0, None, True).sum()

    want = x.std() + x.var(1).sum() + x.max(1).sum() + x.min(0).sum()
    assert cr.value_and_grad(f)(x)[0] == pytest.approx(want, rel=1e-14)
    np.testing.assert_allclose(cr.vmap(f)(np.stack([x, 2 * x])), [want, f(2 * x)], rtol=1e-14)
    h = 1e-6 * np.eye(6).reshape(6, 2, 3)
    numeric = np.array([(f(x + d) - f(x - d)) / 2e-6 for d in h]).reshape(2, 3)
    np.testing.assert_allclose(cr.grad(f)(x), numeric, rtol=1e-6)
    np.testing.assert_allclose(cr.jacfwd(f)(x), numeric, rtol=1e-6)
    # given Tensors, the object API stays PyTorch's
    t = cr.Tensor(x)
    assert float(cr.value_and_grad(lambda a: a.std())(t)[0]) == pytest.approx(x.std(ddof=1), rel=1e-14)
