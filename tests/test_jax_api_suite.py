"""JAX's own tests of its functional API (tests/api_test.py and tests/custom_api_test.py, jax v0.10.2), run on
chainrule through a thin adapter: each test here re-expresses a case where chainrule differed (a JAX spelling it
refused, an error it did not raise, a crash), with the expected values written out and JAX as the oracle where it
is installed. The JAX test each one comes from is named in its comment."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp


def _jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_allow_int_leaves_integer_inputs_undifferentiated():
    # APITest.test_grad_of_int_index, test_grad_of_int, test_grad_of_bool, test_float0_reshape: allow_int was refused
    float0 = np.dtype([("float0", np.void, 0)])
    gx, gi = cr.grad(lambda x, i: x[i], argnums=(0, 1), allow_int=True)(np.ones(2), 1)
    assert gx.tolist() == [0.0, 1.0] and gi.dtype == float0 and gi.shape == ()
    g = cr.grad(lambda x: cnp.sum(x + 0.0), allow_int=True)(np.ones((2, 4), dtype=int))
    assert g.dtype == float0 and g.shape == (2, 4)
    value, g = cr.value_and_grad(lambda p: p["w"] * p["n"], allow_int=True)({"w": 2.0, "n": 3})
    assert value == 6.0 and g["w"] == 3.0 and g["n"].dtype == float0
    (g, aux) = cr.grad(lambda x, i: (x[i] ** 2, i), argnums=0, has_aux=True, allow_int=True)(np.full(2, 3.0), 1)
    assert g.tolist() == [0.0, 6.0] and aux == 1
    assert cr.grad(lambda b: 2.0 if b else 1.0, allow_int=True)(True).dtype == float0
    # under vmap, and inside an outer grad (the integer stays an integer: an index, a multiplier)
    per_example = cr.vmap(cr.grad(lambda x, i: x[i] ** 2, allow_int=True))(np.full((3, 2), 3.0), np.array([0, 1, 1]))
    assert per_example.tolist() == [[6.0, 0.0], [0.0, 6.0], [0.0, 6.0]]
    gx, gi = cr.vmap(cr.grad(lambda x, i: x[i] ** 2, argnums=(0, 1), allow_int=True))(np.full((3, 2), 3.0),
                                                                                      np.array([0, 1, 1]))
    assert gx.tolist() == [[6.0, 0.0], [0.0, 6.0], [0.0, 6.0]] and gi.dtype == float0 and gi.shape == (3,)
    assert cr.value_and_grad(lambda i: i * 2.0, allow_int=True)(3) == (6.0, np.zeros((), float0))
    assert cr.grad(cr.grad(lambda x, i: x ** 3 * i, allow_int=True))(2.0, 3) == 36.0
    # without it chainrule differentiates integers as real numbers (HIPS autograd's rule)
    assert cr.grad(lambda x: x ** 2)(3) == 6.0


def test_allow_int_matches_jax():
    jax = _jax()
    ours = cr.grad(lambda x, i: x[i] * 2.0, argnums=(0, 1), allow_int=True)(np.ones(3), 2)
    theirs = jax.grad(lambda x, i: x[i] * 2.0, argnums=(0, 1), allow_int=True)(np.ones(3), 2)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1].dtype == theirs[1].dtype == jax.dtypes.float0 and ours[1].shape == theirs[1].shape


def test_linearize_has_aux():
    # APITest.test_linearize_aux: linearize refused has_aux
    out, f_jvp, aux = cr.linearize(lambda x: (x * 2 - 3, x > 0), 3.4, has_aux=True)
    assert np.isclose(out, 3.8) and f_jvp(5.0) == 10.0 and aux
    with pytest.raises(TypeError, match=r"linearize: with has_aux=True the function must return a pair"):
        cr.linearize(lambda x: x, 1.0, has_aux=True)


def test_vmap_refuses_axes_jax_refuses():
    # APITest.test_vmap_in_axes_bool_error: in_axes=False was read as axis 0 silently;
    # test_vmap_in_axes_non_tuple_error: a dict for the whole argument list; test_vmap_in_axes_leaf_types
    with pytest.raises(TypeError, match=r"vmap: in_axes must be an int, None, or a tuple/list/dict of them, got bool"):
        cr.vmap(lambda x: x, in_axes=False)
    with pytest.raises(TypeError, match=r"out_axes must be an int, None, .* got bool True"):
        cr.vmap(lambda x: x, out_axes=(True,))
    with pytest.raises(TypeError, match=r"write in_axes=\(\{'a': 0\},\)"):
        cr.vmap(lambda x: x["a"], in_axes={"a": 0})
    with pytest.raises(TypeError, match=r"got ndarray"):
        cr.vmap(lambda x: x, in_axes=(np.array([1.0, 2.0]),))
    # the spellings that are right still work
    assert cr.vmap(lambda x: x["a"] * 2, in_axes=({"a": 0},))({"a": np.arange(3.0)}).tolist() == [0.0, 2.0, 4.0]
    assert cr.vmap(lambda x, y: x + y, in_axes=[np.int64(0), None])(np.arange(2.0), 1.0).tolist() == [1.0, 2.0]


def test_pullback_called_with_several_cotangents_says_what_it_takes():
    # APITest.test_vjp_too_many_args / test_vjp_multiple_arguments_error_message: Python's bare arity error
    _, pullback = cr.vjp(lambda x, y: (x * y, x + y), 1.0, 2.0)
    with pytest.raises(TypeError, match=r"vjp: the pullback takes one cotangent with the output's structure "
                                        r"\(\(\*, \*\)\), got 2 arguments; pass several outputs' cotangents as one"):
        pullback(1.0, 1.0)
    assert pullback((1.0, 1.0)) == (3.0, 2.0)


def test_custom_vjp_bwd_nones_inside_subtrees_are_zeros():
    # CustomVJPTest.test_nones_representing_zeros_in_subtrees_returned_by_bwd, test_pytree_nones_returned_by_bwd
    @cr.custom_vjp
    def first(x):
        return x[0]

    first.defvjp(lambda x: (first(x), None), lambda _, g: ((g, (None, None)),))
    assert cr.grad(first)((1.0, (2.0, 3.0))) == (1.0, (0.0, 0.0))
    first.defvjp(lambda x: (first(x), None), lambda _, g: ((g, None),))  # None for a whole subtree
    assert cr.grad(first)((1.0, (2.0, 3.0))) == (1.0, (0.0, 0.0))

    @cr.custom_vjp
    def pick(p):
        return p["a"] * 2.0

    pick.defvjp(lambda p: (pick(p), None), lambda _, g: ({"a": 2.0 * g, "b": None},))
    g = cr.grad(pick)({"a": 1.0, "b": np.ones(2)})
    assert g["a"] == 2.0 and np.array_equal(g["b"], np.zeros(2))
    pick.defvjp(lambda p: (pick(p), None), lambda _, g: ({"a": 2.0 * g},))  # a key missing: refused
    with pytest.raises(TypeError, match=r"custom_vjp pick: bwd's gradient for differentiated argument 0 has "
                                        r"structure \{'a': \*\}, the argument \{'a': \*, 'b': \*\}"):
        cr.grad(pick)({"a": 1.0, "b": np.ones(2)})


def test_custom_vjp_bwd_returning_none_under_vmap():
    # CustomVJPTest.test_bwd_nones_vmap: a per-example residual that was a traced Tensor crashed the sweep
    @cr.custom_vjp
    def f(x, y):
        return x * cnp.sin(y)

    f.defvjp(lambda x, y: (f(x, y), cnp.cos(y)), lambda cos, g: (None, 2 * cos * g))
    got = cr.grad(lambda x: cr.vmap(f)(x, x).sum())(np.arange(3.0))
    np.testing.assert_allclose(got, 2 * np.cos(np.arange(3.0)), rtol=1e-15)


def test_custom_vjp_bwd_nones_match_jax():
    jax = _jax()

    def build(lib, m):
        @lib.custom_vjp
        def f(x, y):
            return x * m.sin(y)

        f.defvjp(lambda x, y: (f(x, y), m.cos(y)), lambda cos, g: (None, 2 * cos * g))
        return lambda x: lib.vmap(f)(x, x ** 2).sum()

    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(cr.grad(build(cr, cnp))(x), jax.grad(build(jax, jax.numpy))(x), rtol=1e-14)


def test_custom_jvp_rule_with_a_tangent_of_the_wrong_shape_is_refused():
    # CustomJVPTest.test_primal_tangent_aval_disagreement_error_message: jvp returned the (1,) tangent for a ()
    # output silently; grad failed inside the sweep with a message about a gradient it had made itself
    @cr.custom_jvp
    def f(x):
        return x ** 2

    f.defjvp(lambda p, t: (f(p[0]), cnp.reshape(t[0], (1,))))
    message = r"custom_jvp f: the rule's tangent output has shape \(1,\), the function's output \(\); the tangent"
    with pytest.raises(TypeError, match=message):
        cr.jvp(f, (2.0,), (1.0,))
    with pytest.raises(TypeError, match=message):
        cr.grad(f)(2.0)
    # a tangent that broadcasts to the output (a constant 0.0 where nothing changes) is fine
    g = cr.custom_jvp(lambda x: x * np.ones(3))
    g.defjvp(lambda p, t: (g(p[0]), t[0] * 2.0))
    assert cr.jvp(g, (1.0,), (1.0,))[1].tolist() == [2.0, 2.0, 2.0]
    assert cr.grad(lambda x: cnp.sum(g(x)))(1.0) == 6.0


def test_custom_rules_take_nondiff_argnames_and_jax_keywords():
    # CustomJVPTest.test_nondiff_argnames, CustomVJPTest.test_nondiff_argnums_argnames, test_optimize_remat_*:
    # nondiff_argnames and defvjp(..., optimize_remat=True) were refused
    @functools.partial(cr.custom_jvp, nondiff_argnames=("f",))
    def app(f, x):
        return f(x)

    app.defjvp(lambda f, primals, tangents: (app(f, primals[0]), 3 * tangents[0]))
    assert app(lambda x: 2 * x, 1.0) == 2.0
    assert cr.grad(lambda x: app(lambda y: 2 * y, x))(1.0) == 3.0

    @functools.partial(cr.custom_vjp, nondiff_argnums=(0,), nondiff_argnames=("g",))
    def app2(f, g, x):
        return f(x) + g(x)

    app2.defvjp(lambda f, g, x: (app2(f, g, x), cnp.cos(x)), lambda f, g, cos_x, v: (cos_x * v,),
                optimize_remat=True)
    double = lambda x: 2 * x  # noqa: E731
    value, grad = cr.value_and_grad(lambda x: app2(double, double, x))(1.0)
    assert value == 4.0 and grad == np.cos(1.0)
    with pytest.raises(ValueError, match=r"custom_vjp _h: nondiff_argnames names 'z', which is not a positional "
                                         r"parameter of the function \(its parameters: \['x', 'y'\]\)"):
        cr.custom_vjp(_h, nondiff_argnames=("z",))
    with pytest.raises(NotImplementedError, match=r"custom_vjp app2: symbolic_zeros=True is not supported"):
        app2.defvjp(lambda f, g, x: (x, None), lambda f, g, r, v: (v,), symbolic_zeros=True)


def _h(x: float, y: float) -> float:
    return x


def test_custom_jvp_of_a_functools_partial():
    # CustomJVPTest.test_custom_jvp_functools_partial: a partial has no __name__ (AttributeError when called)
    def fun(x, y, z):
        return np.sin(x) * y + z

    f = cr.custom_jvp(functools.partial(fun, z=3.0))
    f.defjvp(lambda p, t: (f(*p), np.cos(p[0]) * p[1] * t[0] + np.sin(p[0]) * t[1]))
    assert f(0.5, 2.0) == np.sin(0.5) * 2.0 + 3.0
    assert np.isclose(cr.grad(f)(0.5, 2.0), np.cos(0.5) * 2.0)


def test_float0_tangents_and_cotangents_of_integer_values():
    # APITest.test_jvp_of_int_identity / test_jvp_of_int_add / test_vjp_of_int_shapes, CustomJVPTest.test_float0:
    # JAX's float0 tangent of an integer input was refused ("inputs must be numbers")
    float0 = np.dtype([("float0", np.void, 0)])
    assert cr.jvp(lambda x: x, (1,), (np.zeros((), float0),)) == (1, 0.0)
    out, tangent = cr.jvp(lambda x, i: x[i] * 2.0, (np.ones(3), 1), (np.array([1.0, 5.0, 7.0]), np.zeros((), float0)))
    assert out == 2.0 and tangent == 10.0  # the integer stays an index
    _, pullback = cr.vjp(lambda x, y: x * y, np.ones((2, 2)), 3.0)
    gx, gy = pullback(np.zeros((2, 2), float0))
    assert gx.tolist() == [[0.0, 0.0], [0.0, 0.0]] and gy == 0.0
    with pytest.raises(ValueError, match=r"jvp: float0 tangent of shape \(3,\) for a primal of shape \(2,\)"):
        cr.jvp(lambda x: x, (np.ones(2),), (np.zeros(3, float0),))


def test_float0_tangent_matches_jax():
    jax = _jax()
    f0 = jax.dtypes.float0
    args = (np.array([0.5, -1.0, 2.0]), 2)
    tangents = (np.array([1.0, 2.0, 3.0]), np.zeros((), f0))
    ours = cr.jvp(lambda x, i: np.sin(x[i]) * x, args, tangents)
    theirs = jax.jvp(lambda x, i: jax.numpy.sin(x[i]) * x, args, tangents)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_contractions_take_jax_precision():
    # RematTest.test_remat_checkpoint_dots_*: jnp.dot(a, b, precision=...) and jnp.einsum(..., precision=...) were
    # refused by chainrule.numpy (TypeError: unexpected keyword)
    a = np.arange(6.0).reshape(2, 3)

    def f(x):
        return (cnp.sum(cnp.dot(a, x, precision="highest")) + cnp.einsum("ij,j->", a, x, precision=None)
                + cnp.matmul(x, x, precision=None) + cnp.tensordot(x, x, axes=1, precision=None))

    assert cr.grad(f)(np.ones(3)).tolist() == [3.0 + 3.0 + 2.0 + 2.0, 5.0 + 5.0 + 2.0 + 2.0, 7.0 + 7.0 + 2.0 + 2.0]
    assert cr.vmap(lambda x: cnp.einsum("ij,j->i", a, x, precision="highest"))(np.ones((4, 3))).shape == (4, 2)


def test_custom_rules_closing_over_a_vmap_value_are_refused_with_the_fix():
    # CustomJVPTest.test_closure_with_vmap2, CustomVJPTest.test_bwd_closes_over_tracer: a rule reading a batched
    # value it closes over (not an argument) met vmap's generic "converted to a NumPy array" error
    def closes_in_bwd(y):
        @cr.custom_vjp
        def f(x):
            return 2.0 * cnp.sin(x)

        f.defvjp(lambda x: (f(x), ()), lambda _, g: (2.0 * cnp.cos(y) * g,))
        return cr.grad(f)(1.0)

    with pytest.raises(NotImplementedError, match=r"custom_vjp f: its bwd reads a value batched by an enclosing vmap "
                                                  r"that it closes over .* pass the value as an argument"):
        cr.vmap(closes_in_bwd)(np.arange(3.0))

    def closes_in_function(z):
        def per_example(x):
            @cr.custom_jvp
            def g(y):
                return x * y

            g.defjvp(lambda p, t: (x * p[0], x * t[0]))
            return g(z)

        return cr.vmap(per_example)(np.arange(3.0))

    with pytest.raises(NotImplementedError, match=r"custom_jvp g: its function reads a value batched by an "
                                                  r"enclosing vmap"):
        cr.jvp(closes_in_function, (1.0,), (2.0,))

    # a call that is not differentiated records nothing, and runs (CustomVJPTest.test_closed_over_vmap_tracer)
    def undifferentiated(x):
        @cr.custom_vjp
        def f(y):
            return x * y

        f.defvjp(lambda y: (f(y), cnp.cos(y)), lambda cos_y, g: (cos_y * g,))
        return f(3.0)

    assert cr.vmap(undifferentiated)(np.arange(3.0)).tolist() == [0.0, 3.0, 6.0]

    # the fix the message gives: the value as an argument (nondiff if it needs no derivative)
    def as_argument(y):
        @functools.partial(cr.custom_vjp, nondiff_argnums=(0,))
        def f(y, x):
            return 2.0 * cnp.sin(x)

        f.defvjp(lambda y, x: (f(y, x), ()), lambda y, _, g: (2.0 * cnp.cos(y) * g,))
        return cr.grad(lambda x: f(y, x))(1.0)

    np.testing.assert_allclose(cr.vmap(as_argument)(np.arange(3.0)), 2 * np.cos(np.arange(3.0)), rtol=1e-15)


def test_vmap_and_jax_spellings_of_batching():
    # BatchingTest.testNumpyIndexing1: an index tuple holding a batched index (a[:, i]) was converted to a NumPy
    # array (vmap's error) instead of batching; vmap(axis_name=...) (JAX's spelling) was refused
    a = np.arange(24.0).reshape(2, 3, 4)
    ind = np.array([[0, 1], [2, 0]])
    for f in (lambda a, i: a[:, i], lambda a, i: a[..., i], lambda a, i: a[1, i[0]]):
        want = np.stack([f(a, ind[k]) for k in range(2)])
        np.testing.assert_array_equal(cr.vmap(f, (None, 0))(a, ind), want)
        np.testing.assert_array_equal(cr.vmap(lambda i: f(cr.Tensor(a), i))(ind), want)  # noqa: B023
    g = cr.vmap(cr.grad(lambda x, i: cnp.sum(x[:, i] ** 2)), (None, 0))(a, ind)
    mask = np.isin(np.arange(3), ind[1])[None, :, None]
    np.testing.assert_array_equal(g[1], np.where(mask, 2 * a, 0.0))
    assert cr.vmap(lambda x: x * 2, axis_name="batch")(np.arange(3.0)).tolist() == [0.0, 2.0, 4.0]


def test_vmap_tuple_index_matches_jax():
    jax = _jax()
    a = np.arange(24.0).reshape(2, 3, 4)
    ind = np.array([[0, 1], [2, 0], [1, 1]])
    ours = cr.vmap(cr.grad(lambda x, i: cnp.sum(cnp.sin(x[:, i]))), (None, 0))(a, ind)
    theirs = jax.vmap(jax.grad(lambda x, i: jax.numpy.sum(jax.numpy.sin(x[:, i]))), (None, 0))(a, ind)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14)


def test_jacobians_take_jax_positional_order():
    # JAX's jacrev/jacfwd/hessian are (fun, argnums, has_aux, holomorphic): chainrule's had holomorphic third, so
    # jax.jacrev(f, 0, True) (has_aux) silently meant holomorphic=True here
    x = np.array([1.0, 2.0])
    f = lambda x: (x ** 2, "aux")  # noqa: E731
    for transform in (cr.jacrev, cr.jacfwd):
        jac, aux = transform(f, 0, True)(x)
        assert jac.tolist() == [[2.0, 0.0], [0.0, 4.0]] and aux == "aux"
    h, aux = cr.hessian(lambda x: (cnp.sum(x ** 3), 1), 0, True)(x)
    assert h.tolist() == [[6.0, 0.0], [0.0, 12.0]] and aux == 1
    jac, aux = cr.jacobian(f, has_aux=True)(x)
    assert jac.tolist() == [[2.0, 0.0], [0.0, 4.0]] and aux == "aux"
    z = np.array([1.0 + 1.0j])
    assert cr.jacrev(lambda z: z ** 2, 0, False, True)(z).tolist() == [[2.0 + 2.0j]]


def test_jax_tree_names():
    # jax.tree.map / jax.tree.leaves (JAX's current spelling of tree_util's helpers) had no chainrule twin
    params = {"w": np.array([1.0, 2.0]), "b": (0.5, None)}
    grads = cr.grad(lambda p: cnp.sum(p["w"] ** 2) + p["b"][0])(params)
    new = cr.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    assert new["w"].tolist() == [0.8, 1.6] and new["b"] == (0.4, None)
    leaves, treedef = cr.tree.flatten(params)
    assert cr.tree.unflatten(treedef, [1, 2]) == {"w": 2, "b": (1, None)} and cr.tree.leaves(params)[0] == 0.5
    assert cr.tree.structure(params) == treedef and cr.tree.reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert cr.tree.all([True, (1, None)]) and not cr.tree.all([True, 0])


def test_tree_paths_and_partial():
    # tree_util.tree_flatten_with_path / tree_map_with_path / keystr and tree_util.Partial (JAX's spellings, used
    # for masks such as "no weight decay on biases") were missing
    import collections

    from chainrule.tree_util import DictKey, GetAttrKey, Partial, SequenceKey, keystr, tree_flatten_with_path

    pair = collections.namedtuple("pair", "a b")
    tree = {"w": [1.0, (2.0, None)], "b": pair(3.0, {"z": 4.0, "a": 5.0})}
    pairs, treedef = tree_flatten_with_path(tree)
    assert [keystr(p) for p, _ in pairs] == ["['b'].a", "['b'].b['a']", "['b'].b['z']", "['w'][0]", "['w'][1][0]"]
    assert [x for _, x in pairs] == [3.0, 5.0, 4.0, 1.0, 2.0] and treedef == cr.tree.structure(tree)
    assert pairs[0][0] == (DictKey("b"), GetAttrKey("a")) and pairs[3][0] == (DictKey("w"), SequenceKey(0))
    assert keystr(pairs[1][0], simple=True, separator="/") == "b/b/a"
    decayed = cr.tree.map_with_path(lambda p, x: x if keystr(p).startswith("['w']") else 0.0, tree)
    assert decayed == {"w": [1.0, (2.0, None)], "b": pair(0.0, {"z": 0.0, "a": 0.0})}
    scale = Partial(lambda s, x: s * x, 3.0)
    assert cr.tree.leaves(scale) == [3.0] and scale(2.0) == 6.0
    assert cr.grad(lambda p, x: p(x))(scale, 2.0).args == (2.0,)  # the bound argument is differentiated
    assert cr.vmap(lambda p, x: p(x), in_axes=(None, 0))(scale, np.arange(3.0)).tolist() == [0.0, 3.0, 6.0]


def test_tree_paths_match_jax():
    jax = _jax()
    import collections

    from chainrule.tree_util import keystr, tree_leaves_with_path

    pair = collections.namedtuple("pair", "a b")
    tree = {"x": pair([1.0, {"k": 2.0}], None), "a": (3.0, [4.0]), "m": {"b": 5.0, "a": (6.0,)}}
    ours = [(keystr(p), x) for p, x in tree_leaves_with_path(tree)]
    theirs = [(jax.tree_util.keystr(p), x) for p, x in jax.tree_util.tree_leaves_with_path(tree)]
    assert ours == theirs


def test_tree_util_structure_helpers_as_jax():
    # TreeTest.testTreeMap (a first tree that is a prefix of the others), testFlattenUpTo*, testTranspose*,
    # testStringRepresentation, register_static / register_pytree_with_keys: missing or refused
    from chainrule import tree_util as tu

    x = ((1, 2), (3, 4, 5))
    y = (([3], None), ({"foo": "bar"}, 7, [5, 6]))
    assert tu.tree_map(lambda *xs: tuple(xs), x, y) == (((1, [3]), (2, None)),
                                                       ((3, {"foo": "bar"}), (4, 7), (5, [5, 6])))
    treedef = tu.tree_structure({"a": 0, "b": (0, None)})
    assert str(treedef) == "PyTreeDef({'a': *, 'b': (*, None)})"
    assert treedef.flatten_up_to({"a": [1, 2], "b": ({"k": 3}, None)}) == [[1, 2], {"k": 3}]
    assert treedef.unflatten([1, 2]) == {"a": 1, "b": (2, None)}
    for wrong in ({"a": 1}, {"a": 1, "b": [2, None]}, {"a": 1, "b": (2, 3)}):  # keys, list for tuple, None
        with pytest.raises(ValueError, match="flatten_up_to: the tree has"):
            treedef.flatten_up_to(wrong)
    per_example = [{"x": 1, "y": 2}, {"x": 3, "y": 4}]
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure({"x": 0, "y": 0})
    assert tu.tree_transpose(outer, inner, per_example) == {"x": [1, 3], "y": [2, 4]}
    assert cr.tree.transpose(outer, None, per_example) == {"x": [1, 3], "y": [2, 4]}
    assert tu.all_leaves([1, np.ones(2)]) and not tu.all_leaves([1, (2,)])

    @tu.register_static
    class Mode(str):
        pass

    g = cr.grad(lambda p: p["w"] * 2.0 if p["mode"] == "train" else 0.0)({"w": 1.0, "mode": Mode("train")})
    assert g["w"] == 2.0 and g["mode"] == "train" and tu.tree_leaves({"m": Mode("a")}) == []

    class Pair:
        def __init__(self, left, right):
            self.left, self.right = left, right

    tu.register_pytree_with_keys(Pair, lambda p: (((tu.GetAttrKey("left"), p.left), (tu.GetAttrKey("right"), p.right)),
                                                  None), lambda _, children: Pair(*children))
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Pair(1.0, {"k": 2.0}))]
    assert paths == [".left", ".right['k']"]
    assert cr.grad(lambda p: p.left * p.right["k"])(Pair(3.0, {"k": 2.0})).right == {"k": 3.0}


def test_an_integer_argument_used_as_an_index_says_how_to_keep_it_integer():
    # APITest.test_vjp_of_int_index: vjp differentiates every argument, so an integer index became a float and the
    # error named only the float index
    with pytest.raises(IndexError, match=r"a float index is often an integer argument that a transform "
                                         r"differentiates .* pass allow_int=True to grad"):
        cr.vjp(lambda x, i: x[i], np.ones(2), 1)
    out, pullback = cr.vjp(lambda x: x[1], np.ones(2) * 2)  # closed over, as the message says
    assert out == 2.0 and pullback(1.0)[0].tolist() == [0.0, 1.0]
