"""No silent wrong answer: every route by which a traced value reaches NumPy without a rule raises;
a function returning None (or a string) under a transform raises; pytree leaves that are None or
strings, OrderedDicts, namedtuples and numbers come back as JAX gives them; elementwise_grad of a
function that is not elementwise raises."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import chainrule as cr

NO_RULE = "chainrule has no derivative rule for numpy.{}"
IDX = np.array([0, 1, 1])
X3 = np.array([0.0, 1.0, 2.0])

# NumPy functions without a rule, reached through a keyword or a nested container
ROUTES = {
    "bincount": lambda w: np.bincount(IDX, weights=w),
    "polydiv": lambda w: np.polydiv(X3, v=w),
    "histogram": lambda w: np.histogram(X3, weights=w),
    "histogram2d": lambda w: np.histogram2d(X3, X3, weights=w),
    "histogramdd_nested": lambda w: np.histogramdd([w, w]),
    "bincount_kwargs_dict": lambda w: np.bincount(IDX, **{"weights": w}),
    "ufunc_where_keyword": lambda w: np.add(X3, w, where=X3 > 0.0),
    "ufunc_reduce": lambda w: np.fmax.reduce(w),
    "ufunc_out_keyword": lambda w: np.sin(X3, out=(w,)),
}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_a_traced_value_by_keyword_or_nesting_raises_in_the_object_api(name):
    w = cr.Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    with pytest.raises(TypeError, match="chainrule has no derivative rule for numpy"):
        ROUTES[name](w)


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_a_traced_value_by_keyword_or_nesting_raises_inside_grad(name):
    def loss(w):
        out = ROUTES[name](w)
        return np.sum(out[0] if isinstance(out, tuple) else out)

    with pytest.raises(TypeError, match="chainrule has no derivative rule for numpy"):
        cr.grad(loss)(np.array([1.0, 2.0, 3.0]))


def test_the_keyword_error_names_the_function():
    w = cr.Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    with pytest.raises(TypeError, match=NO_RULE.format("bincount")):
        np.bincount(IDX, weights=w)
    with pytest.raises(TypeError, match=NO_RULE.format("polydiv")):
        np.polydiv(X3, v=w)


def test_untraced_tensors_by_keyword_still_compute():
    w = cr.Tensor(np.array([1.0, 2.0, 3.0]))  # not in a graph: NumPy answers on the values
    np.testing.assert_allclose(np.bincount(IDX, weights=w), [1.0, 5.0])
    with cr.no_grad():
        wg = cr.Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
        np.testing.assert_allclose(np.bincount(IDX, weights=wg), [1.0, 5.0])


def test_quantile_and_interp_are_differentiable_in_their_other_arguments():
    x = np.array([0.3, 1.7, 2.2, 0.9])
    # quantile of sorted [0.3, 0.9, 1.7, 2.2] at q: position 3q, slope 3 * (next - this)
    np.testing.assert_allclose(cr.grad(lambda q: np.sum(np.quantile(x, q)))(np.array([0.3, 0.9])), [1.8, 1.5])
    np.testing.assert_allclose(cr.grad(lambda q: np.percentile(x, q))(30.0), 0.018)
    np.testing.assert_allclose(cr.grad(lambda q: np.nanpercentile(x, q))(30.0), 0.018)
    np.testing.assert_allclose(cr.hessian(lambda q: np.quantile(x * q, q))(0.3), 3.6)
    # interp(1, [0, 2s], [0, 1]) = 1 / (2s): derivative -1/(2 s^2)
    g = cr.grad(lambda s: np.interp(1.0, np.array([0.0, 2.0]) * s, np.array([0.0, 1.0])))(1.0)
    np.testing.assert_allclose(g, -0.5)


def test_pad_fill_values_and_heaviside_h0_are_differentiable():
    x = cr.Tensor(np.array([-1.0, 0.0, 2.0]))
    assert cr.grad(lambda c: np.sum(np.pad(x, 1, constant_values=c)))(2.0) == 2.0
    g = cr.grad(lambda c: np.sum(np.pad(x, (1, 2), constant_values=c) * np.arange(6.0)))(np.array([2.0, 3.0]))
    np.testing.assert_allclose(g, [0.0, 9.0])  # before: 1 entry, weight 0; after: 2 entries, weights 4 and 5
    t = cr.Tensor(np.ones((2, 2)), requires_grad=True)
    c = cr.Tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    np.pad(t, 1, constant_values=c).sum().backward()
    np.testing.assert_allclose(c.grad.data, [[2.0, 2.0], [4.0, 4.0]])  # corners take the last axis's values
    np.testing.assert_allclose(np.pad(t, 1, constant_values=c).data,
                               np.pad(np.ones((2, 2)), 1, constant_values=[[1.0, 2.0], [3.0, 4.0]]))
    steps = cr.Tensor(np.array([-1.0, 0.0, 0.0, 3.0]))
    assert cr.grad(lambda h: np.sum(np.heaviside(steps, h)))(0.5) == 2.0
    np.testing.assert_allclose(np.heaviside(steps, cr.Tensor(0.5)).data, [0.0, 0.5, 0.5, 1.0])


# (the nan-reductions' where= and initial= are supported now: tests/test_jax_numpy_grad_suite.py)
@pytest.mark.parametrize("call", [
    lambda t: np.einsum("i->", t, out=np.zeros(())),
    lambda t: np.einsum("i->", t, dtype=np.float32),
], ids=["einsum_out", "einsum_dtype"])
def test_keywords_that_would_be_ignored_raise(call):
    t = cr.Tensor(np.array([1.0, np.nan, 3.0]), requires_grad=True)
    with pytest.raises(TypeError, match=r"chainrule does not support the keyword\(s\) \['(where|initial|out|dtype)'\]"):
        call(t)


# -- a function that returns None or a string -------------------------------------------------------
RETURNS_NONE = "the function must return a number or an array, but it returned None \\(did the function forget"


def _none(x):
    x * 2.0  # forgot the return


TRANSFORMS = {
    "grad": lambda f: cr.grad(f)(np.ones(2)),
    "value_and_grad": lambda f: cr.value_and_grad(f)(np.ones(2)),
    "grad_has_aux": lambda f: cr.grad(f, has_aux=True)(np.ones(2)),
    "jacobian": lambda f: cr.jacobian(f)(np.ones(2)),
    "jacfwd": lambda f: cr.jacfwd(f)(np.ones(2)),
    "hessian": lambda f: cr.hessian(f)(np.ones(2)),
    "jvp": lambda f: cr.jvp(f, (np.ones(2),), (np.ones(2),)),
    "vjp": lambda f: cr.vjp(f, np.ones(2)),
    "hvp": lambda f: cr.hvp(f, (np.ones(2),), (np.ones(2),)),
    "elementwise_grad": lambda f: cr.elementwise_grad(f)(np.ones(2)),
    "deriv": lambda f: cr.deriv(f)(1.0),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_a_function_returning_none_raises(name):
    with pytest.raises(TypeError, match="None"):
        TRANSFORMS[name](_none)


@pytest.mark.parametrize("name", ["grad", "jacobian", "jvp", "vjp", "elementwise_grad"])
def test_none_error_says_what_was_returned(name):
    with pytest.raises(TypeError, match=RETURNS_NONE):
        TRANSFORMS[name](_none)


@pytest.mark.parametrize("name", ["grad", "jacobian", "jacfwd", "jvp", "vjp", "elementwise_grad"])
@pytest.mark.parametrize("bad", ["loss", b"x", object()], ids=["str", "bytes", "object"])
def test_a_function_returning_a_non_number_raises(name, bad):
    with pytest.raises(TypeError, match=f"it returned a {type(bad).__name__}"):
        TRANSFORMS[name](lambda x: bad)


def test_a_string_inside_an_output_tree_is_named():
    with pytest.raises(TypeError, match=r"jacrev: .* returned a str \('label'\)"):
        cr.jacobian(lambda x: (x * 2.0, "label"))(np.ones(2))


# -- pytree leaves and containers ---------------------------------------------------------------------
def test_none_leaves_are_empty_subtrees():
    g = cr.grad(lambda d: d["a"] ** 2)({"a": 2.0, "b": None, "c": [None, 1.0]})
    assert g == {"a": 4.0, "b": None, "c": [None, 0.0]}
    out, tangent = cr.jvp(lambda x: (x * 3.0, None), (2.0,), (1.0,))
    assert out == (6.0, None) and tangent == (3.0, None)


def test_a_string_leaf_is_named_by_its_key_path():
    with pytest.raises(TypeError, match=r"grad: argument 0\['opts'\]\[1\] is a str \('relu'\)"):
        cr.grad(lambda p: p["w"] ** 2)({"w": 2.0, "opts": [3.0, "relu"]})
    with pytest.raises(TypeError, match=r"jacrev: argument 1\[0\] is a str"):
        cr.jacobian(lambda a, b: a * 2.0, argnums=(0, 1))(1.0, ("x",))


def test_containers_keep_their_types():
    od = collections.OrderedDict([("b", 2.0), ("a", 3.0)])
    g = cr.grad(lambda d: d["a"] * d["b"])(od)
    assert type(g) is collections.OrderedDict and list(g) == ["b", "a"] and g == {"b": 3.0, "a": 2.0}
    P = collections.namedtuple("P", "w b")
    g = cr.grad(lambda p: p.w * p.b)(P(2.0, 5.0))
    assert type(g) is P and g == P(5.0, 2.0)
    dd = collections.defaultdict(list, {"w": 2.0})
    g = cr.grad(lambda d: d["w"] ** 3)(dd)
    assert type(g) is collections.defaultdict and g.default_factory is list and g["w"] == 12.0
    jac = cr.jacobian(lambda x: collections.OrderedDict(sq=x**2, cube=x**3))(np.array([1.0, 2.0]))
    assert type(jac) is collections.OrderedDict and list(jac) == ["sq", "cube"]
    np.testing.assert_allclose(jac["cube"], np.diag([3.0, 12.0]))


def test_jacobian_and_hessian_of_a_number_are_numbers():
    for jac in (cr.jacobian, cr.jacfwd, cr.jacrev):
        j = jac(lambda x: x**3)(2.0)
        assert type(j) is float and j == 12.0
    h = cr.hessian(lambda x: x**3)(2.0)
    assert type(h) is float and h == 12.0
    h = cr.hessian(lambda x, y: x**3 * y, argnums=(0, 1))(2.0, 1.0)
    assert h == ((12.0, 12.0), (12.0, 0.0)) and type(h[0][1]) is float
    assert isinstance(cr.hessian(lambda x: np.sum(x**3))(np.array([2.0])), np.ndarray)  # arrays stay arrays


# -- elementwise_grad -------------------------------------------------------------------------------
def test_elementwise_grad_of_an_elementwise_function():
    x = np.array([0.0, 1.0, -2.0])
    np.testing.assert_allclose(cr.elementwise_grad(np.sin)(x), np.cos(x))
    np.testing.assert_allclose(cr.elementwise_grad(lambda x: x * np.exp(x))(x), (1 + x) * np.exp(x))
    np.testing.assert_allclose(cr.grad(lambda x: np.sum(cr.elementwise_grad(np.sin)(x)))(x), -np.sin(x))


@pytest.mark.parametrize("f", [np.cumsum, lambda x: x * np.sum(x), lambda x: x[::-1], np.sort,
                               lambda x: np.roll(x, 1) * x], ids=["cumsum", "scaled", "reverse", "sort", "roll"])
def test_elementwise_grad_of_a_non_elementwise_function_raises(f):
    with pytest.raises(ValueError, match="elementwise_grad: the function is not elementwise"):
        cr.elementwise_grad(f)(np.array([0.5, 1.0, -2.0]))


def test_elementwise_grad_of_a_shape_changing_function_raises():
    with pytest.raises(ValueError, match=r"elementwise_grad: the output has shape \(\) but argument 0 has shape.*"
                                         r"with one output, use grad\(\)"):
        cr.elementwise_grad(np.sum)(np.array([0.5, 1.0]))


def test_a_new_tensor_of_a_value_being_differentiated_is_refused_not_silently_cut():
    a = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"Tensor\(x\): x is a value being differentiated.*stop_gradient"):
        cr.grad(lambda a: cr.Tensor(a).sum() * a.sum())(a)  # would give 3, not 6
    with pytest.raises(ValueError, match="value being differentiated"):
        cr.jvp(lambda a: cr.tensor(a) * a, (a,), (np.ones(3),))
    np.testing.assert_allclose(cr.grad(lambda a: a.clone().sum() * a.sum())(a), 12.0)  # the graph kept
    np.testing.assert_allclose(cr.grad(lambda a: cr.stop_gradient(a).sum() * a.sum())(a), 6.0)  # cut on purpose
    x = cr.Tensor(a, requires_grad=True)
    with pytest.warns(UserWarning, match=r"copies its values and cuts them from the graph \(as torch.tensor"):
        y = cr.Tensor(x)
    assert not y.requires_grad and np.array_equal(y.data, a) and y._data is not x._data
    with cr.no_grad():
        cr.Tensor(x)  # nothing to warn about: no graph is being built


# -- a Tensor written into a NumPy array (out[i] = t) -------------------------------------------------------
def _chain(e):
    while e is not None:
        yield str(e)
        e = e.__cause__


def test_a_tensor_written_into_a_numpy_array_raises():
    """``out = np.zeros(3); out[i] = w[i] ** 2`` then ``(out * w).sum().backward()`` gave w.grad [1, 4, 9]
    (true [3, 12, 27]): the array kept the values only. NumPy converts with float() (one entry) or __array__
    (a slice); both refuse a Tensor that requires grad, naming the fix (NumPy wraps the first in a ValueError)."""
    w = cr.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = np.zeros(3)
    with pytest.raises((TypeError, ValueError)) as caught:
        for i in range(3):
            out[i] = w[i] ** 2
    assert any("written into a NumPy array" in m and "cr.stack" in m and ".item()" in m for m in _chain(caught.value))
    with pytest.raises(TypeError, match="written into a NumPy array"):
        out[0:2] = w[0:2] ** 2
    with pytest.raises(TypeError, match="written into a NumPy array"):
        np.zeros(3, dtype=int)[0] = w[0] * 2
    # the fix: the pieces stacked in the graph
    stacked = cr.stack([w[i] ** 2 for i in range(3)])
    (stacked * w).sum().backward()
    np.testing.assert_allclose(w.grad.data, [3.0, 12.0, 27.0])


def test_reading_a_tensor_into_numpy_still_works():
    """Values only, on purpose: item(), float(), detach(), no_grad, printing, np.allclose, an object array."""
    w = cr.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    history = np.zeros(4)
    history[0] = (w ** 2).sum().item()
    history[1] = float(w[1])
    history[2] = w[2].detach()
    with cr.no_grad():
        history[3] = w[0] * 4
    np.testing.assert_array_equal(history, [14.0, 2.0, 3.0, 4.0])
    assert np.allclose(w, [1, 2, 3]) and f"{float(w[0] * 2):.1f}" == "2.0" and "requires_grad" in str(w)
    kept = np.zeros(1, dtype=object)
    kept[0] = w[0]  # an object array keeps the Tensor itself
    assert kept[0].requires_grad


def test_math_functions_of_a_tensor_that_requires_grad_raise():
    """As for a Scalar: math.exp(t) is a float without t's gradient (outside transforms too)."""
    import math

    t = cr.Tensor(1.0, requires_grad=True)
    with pytest.raises(TypeError, match=r"math\.exp\(\) of a Tensor that requires grad .*cr\.exp\(t\)"):
        t * math.exp(t)
    assert math.exp(t.item()) == math.e and float(t) == 1.0 and not math.isnan(t)
    with cr.no_grad():
        assert math.exp(t) == math.e
