"""The functional API: grad, value_and_grad, jacrev/jacfwd/jacobian, hessian, jvp, vjp, hvp,
linearize, elementwise_grad, deriv; pytrees in and out, composition to third order,
perturbation confusion, create_graph on the object API, custom ops, stop_gradient,
checkpoint and gradcheck's messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import Scalar, Tensor
from chainrule.autodiff.backprop import grad as autograd_grad

SEED_F = lambda a, b: b * ((a + b) * (a - b))  # noqa: E731  (the tutorial's function, seed 002)


# -- structures in and out -------------------------------------------------------------------------------
def test_grad_keeps_the_structure_of_nested_inputs():
    f = lambda p: p["a"] ** 2 * p["b"][0] + np.sum(p["b"][1] * 3.0) + np.sum(p["c"][0] * p["c"][1])
    p = {"a": 2.0, "b": (3, np.array([1.0, 2.0])), "c": [Scalar(2.0), Tensor([0.5, 1.5])]}
    g = cr.grad(f)(p)
    assert set(g) == {"a", "b", "c"} and isinstance(g["b"], tuple) and isinstance(g["c"], list)
    assert g["a"] == 12.0 and type(g["a"]) is float
    assert g["b"][0] == 4.0 and type(g["b"][0]) is float  # an int input gives a float derivative
    np.testing.assert_array_equal(g["b"][1], [3.0, 3.0])
    assert g["c"][0] == 2.0 and type(g["c"][0]) is float  # a Scalar input: a float
    assert isinstance(g["c"][1], np.ndarray) and g["c"][1].tolist() == [2.0, 2.0]  # a Tensor input: an array


def test_floats_for_float_inputs_arrays_for_array_inputs():
    assert type(cr.grad(np.sin)(0.0)) is float
    assert type(cr.grad(np.sin)(np.float64(0.0))) is float
    out = cr.grad(lambda x: np.sum(np.sin(x)))(np.array([0.0]))
    assert isinstance(out, np.ndarray) and out.shape == (1,)
    value, g = cr.value_and_grad(lambda x: x * x)(3.0)
    assert (value, g) == (9.0, 6.0) and type(value) is float


def test_argnums_int_tuple_and_negative():
    assert cr.grad(SEED_F)(1.0, 2.0) == 4.0
    assert cr.grad(SEED_F, argnums=1)(1.0, 2.0) == -11.0
    assert cr.grad(SEED_F, argnums=(0, 1))(1.0, 2.0) == (4.0, -11.0)
    assert cr.grad(SEED_F, argnums=(-1,))(1.0, 2.0) == (-11.0,)
    with pytest.raises(ValueError, match="argnums"):
        cr.grad(SEED_F, argnums=2)(1.0, 2.0)


def test_has_aux_returns_plain_values():
    def f(x):
        return np.sum(x**2), {"mean": np.mean(x), "tag": "run-1"}

    g, aux = cr.grad(f, has_aux=True)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g, [2.0, 4.0])
    assert aux["tag"] == "run-1" and isinstance(aux["mean"], np.ndarray) and aux["mean"] == 1.5
    (value, aux), g = cr.value_and_grad(f, has_aux=True)(np.array([1.0, 2.0]))
    assert value == 5.0 and aux["mean"] == 1.5


def test_jacobians_of_structured_outputs():
    f = lambda p: {"s": p["w"] @ p["x"], "n": [p["w"] * 2.0]}
    p = {"w": np.array([1.0, 2.0]), "x": np.array([3.0, 4.0])}
    for jac in (cr.jacrev(f)(p), cr.jacfwd(f)(p), cr.jacobian(f, mode="fwd")(p)):
        np.testing.assert_array_equal(jac["s"]["w"], [3.0, 4.0])
        np.testing.assert_array_equal(jac["s"]["x"], [1.0, 2.0])
        np.testing.assert_array_equal(jac["n"][0]["w"], 2 * np.eye(2))
        np.testing.assert_array_equal(jac["n"][0]["x"], np.zeros((2, 2)))
    assert cr.jacrev(lambda x: np.stack([x, x**2]))(np.array([3.0])).shape == (2, 1, 1)
    with pytest.raises(ValueError, match="mode"):
        cr.jacobian(np.sin, mode="sideways")


def test_hessian_with_several_argnums_is_nested_like_jax():
    h = cr.hessian(SEED_F, argnums=(0, 1))(1.0, 2.0)
    # f = a^2 b - b^3: f_aa = 2b, f_ab = 2a, f_bb = -6b
    assert [[float(v) for v in row] for row in h] == [[4.0, 2.0], [2.0, -12.0]]


def test_jvp_vjp_hvp_linearize_elementwise_grad():
    f = lambda p: {"s": p["w"] @ p["x"], "n": [p["w"] * 2.0]}
    p = {"w": np.array([1.0, 2.0]), "x": np.array([3.0, 4.0])}
    out, tangent = cr.jvp(f, (p,), ({"w": np.array([1.0, 0.0]), "x": np.zeros(2)},))
    assert float(out["s"]) == 11.0 and float(tangent["s"]) == 3.0
    np.testing.assert_array_equal(tangent["n"][0], [2.0, 0.0])
    out, pullback = cr.vjp(f, p)
    (g,) = pullback({"s": 1.0, "n": [np.ones(2)]})
    np.testing.assert_array_equal(g["w"], [5.0, 6.0])
    np.testing.assert_array_equal(g["x"], [1.0, 2.0])
    with pytest.raises(ValueError, match="cotangent"):
        pullback({"s": np.ones(3), "n": [np.ones(2)]})
    hv = cr.hvp(lambda x: np.sum(x**3), (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
    np.testing.assert_array_equal(hv, [6.0, 0.0])
    value, f_jvp = cr.linearize(np.sin, 0.5)
    assert value == np.sin(0.5) and math.isclose(f_jvp(2.0), 2 * np.cos(0.5))
    np.testing.assert_allclose(cr.elementwise_grad(np.sin)(np.array([0.0, 1.0])), np.cos([0.0, 1.0]))
    with pytest.raises(ValueError, match="tangent"):
        cr.jvp(np.sin, (np.zeros(2),), (np.zeros(3),))


def test_grad_of_a_vector_function_says_what_to_use():
    with pytest.raises(TypeError, match="scalar.*jacobian"):
        cr.grad(lambda x: x * 2)(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="got a list"):
        cr.grad(lambda x: [x * 2])(1.0)


def test_constant_functions_have_zero_derivatives():
    assert cr.grad(lambda x: 5.0)(1.0) == 0.0
    assert cr.jvp(lambda x: 5.0, (1.0,), (1.0,)) == (5.0, 0.0)
    np.testing.assert_array_equal(cr.jacrev(lambda x: np.ones(2))(np.zeros(3)), np.zeros((2, 3)))


# -- higher order and composition ------------------------------------------------------------------------
def test_seed_002_second_derivatives():
    assert cr.grad(cr.grad(SEED_F, 0), 0)(1.0, 2.0) == 4.0
    assert cr.grad(cr.grad(SEED_F, 1), 1)(1.0, 2.0) == -12.0
    assert cr.jacfwd(cr.grad(SEED_F, 1), 1)(1.0, 2.0) == -12.0
    assert cr.jacobian(cr.jacobian(SEED_F, 0, mode="fwd"), 0)(1.0, 2.0) == 4.0
    assert float(cr.hessian(SEED_F, argnums=1)(1.0, 2.0)) == -12.0


@pytest.mark.parametrize(
    "outer, middle, inner",
    [(cr.grad, cr.grad, cr.grad), (cr.jacfwd, cr.jacrev, cr.jacfwd), (cr.jacrev, cr.jacfwd, cr.grad),
     (cr.jacfwd, cr.jacfwd, cr.jacfwd), (cr.grad, cr.jacfwd, cr.jacrev)],
)
def test_composition_to_third_order(outer, middle, inner):
    f = lambda x: np.sin(x) * x**3
    third = lambda x: -x**3 * np.cos(x) - 9 * x**2 * np.sin(x) + 18 * x * np.cos(x) + 6 * np.sin(x)
    assert math.isclose(float(outer(middle(inner(f)))(0.7)), third(0.7), rel_tol=1e-12)


def test_third_order_of_a_vector_function_matches_finite_differences():
    f = lambda x: np.sum(np.exp(x[0]) * np.sin(x) * x[1])
    x = np.array([0.3, -0.5, 1.1])
    t3 = cr.jacfwd(cr.hessian(f))(x)
    assert t3.shape == (3, 3, 3)
    eps = 1e-5
    fd = np.stack([(cr.hessian(f)(x + eps * e) - cr.hessian(f)(x - eps * e)) / (2 * eps) for e in np.eye(3)], -1)
    np.testing.assert_allclose(t3, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(t3, np.transpose(t3, (1, 0, 2)), atol=1e-12)  # symmetric
    assert cr.gradcheck(f, x, order=3)


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1, in every combination of modes
    inner_rev = lambda x: x * cr.grad(lambda y: x + y)(1.0)
    inner_fwd = lambda x: x * cr.jvp(lambda y: x + y, (1.0,), (1.0,))[1]
    for inner in (inner_rev, inner_fwd):
        assert cr.grad(inner)(2.0) == 1.0
        assert cr.jvp(inner, (2.0,), (1.0,))[1] == 1.0
        assert cr.jacfwd(inner)(2.0) == 1.0
    # Siskind and Pearlmutter's example: d/dx [x * d/dy (x * y)] = 2x
    assert cr.deriv(lambda x: x * cr.deriv(lambda y: x * y)(3.0))(2.0) == 4.0


def test_backward_create_graph_gives_a_differentiable_grad():
    x = Tensor(3.0, requires_grad=True)
    (x**3).backward(create_graph=True)
    g = x.grad
    assert g.item() == 27.0 and g.requires_grad
    x.grad = None
    g.backward()
    assert x.grad.item() == 18.0
    a = Tensor([1.0, 2.0], requires_grad=True)
    (ga,) = autograd_grad((a**3).sum(), a, create_graph=True)
    (gga,) = autograd_grad(ga.sum(), a)
    np.testing.assert_array_equal(gga.data, 6 * a.data)


def test_seed_002_object_api_second_derivatives():
    a, b = Tensor(1.0, requires_grad=True), Tensor(2.0, requires_grad=True)
    loss = b * ((a + b) * (a - b))
    ga, gb = autograd_grad(loss, [a, b], create_graph=True)
    assert (ga.item(), gb.item()) == (4.0, -11.0)
    assert autograd_grad(ga, a, retain_graph=True)[0].item() == 4.0  # gb shares the recorded graph
    assert autograd_grad(gb, b)[0].item() == -12.0


# -- custom ops, stop_gradient, checkpoint ---------------------------------------------------------------
def test_custom_primitive_with_both_rules_to_second_order():
    @cr.custom.primitive
    def softplus(x):
        return np.logaddexp(0.0, x)

    softplus.defvjp(lambda g, ans, x: g / (1 + np.exp(-x)))
    softplus.defjvp(lambda t, ans, x: t / (1 + np.exp(-x)))
    assert cr.grad(softplus)(0.0) == 0.5
    assert math.isclose(cr.grad(cr.grad(softplus))(0.0), 0.25)
    assert math.isclose(cr.jacfwd(cr.grad(softplus))(0.0), 0.25)
    assert cr.gradcheck(softplus, np.array([0.3, -1.2]), order=2)
    # user ops stay out of the library's table (which has a softplus of its own, left as it was)
    assert cr.autodiff.primitive.REGISTRY["softplus"] is cr.ops.DECLARATIONS["softplus"].primitive


def test_custom_vjp_first_and_higher_order():
    @cr.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -1.0, 1.0),))
    assert cr.grad(lambda x: 5 * clip_gradient(x))(2.0) == 1.0

    @cr.custom_vjp
    def cube(x):
        return x**3

    cube.defvjp(lambda x: (x**3, x), lambda x, g: (3 * x**2 * g,))
    cube.defjvp(lambda primals, tangents: 3 * primals[0] ** 2 * tangents[0])
    assert cr.grad(cube)(2.0) == 12.0
    assert cr.grad(cr.grad(cube))(2.0) == 12.0  # residuals recomputed on traced inputs
    assert cr.jacfwd(cr.grad(cube))(2.0) == 12.0
    assert cr.jvp(cube, (2.0,), (1.0,)) == (8.0, 12.0)
    assert cr.gradcheck(cube, np.array([0.5, -1.5]), order=2)
    with pytest.raises(TypeError, match="defvjp"):
        cr.custom_vjp(lambda x: x)(1.0)


def test_stop_gradient():
    assert cr.grad(lambda x: cr.stop_gradient(x) * x)(3.0) == 3.0
    assert cr.jvp(lambda x: cr.stop_gradient(x) * x, (3.0,), (1.0,)) == (9.0, 3.0)
    assert cr.grad(lambda x: cr.stop_gradient(x**2))(3.0) == 0.0


def test_checkpoint_gives_the_same_derivatives():
    def block(x, w):
        return np.tanh(x @ w) * np.sin(x).sum()

    ckpt = cr.checkpoint(block)
    x, w = np.array([[0.3, -0.2, 0.5]]), np.array([[0.1, 0.4], [-0.3, 0.2], [0.5, -0.1]])
    loss = lambda f: (lambda x, w: np.sum(f(x, w) ** 2))
    for a, b in zip(cr.grad(loss(ckpt), argnums=(0, 1))(x, w), cr.grad(loss(block), argnums=(0, 1))(x, w),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    np.testing.assert_allclose(cr.hessian(loss(ckpt))(x, w), cr.hessian(loss(block))(x, w), rtol=1e-12)
    np.testing.assert_allclose(cr.jacfwd(loss(ckpt))(x, w), cr.jacfwd(loss(block))(x, w), rtol=1e-13)
    # on the object API, and with create_graph
    xt = Tensor([1.0, 2.0], requires_grad=True)
    cr.checkpoint(lambda a: (a**3).sum())(xt).backward(create_graph=True)
    np.testing.assert_array_equal(xt.grad.data, [3.0, 12.0])
    assert xt.grad.requires_grad


# -- gradcheck ---------------------------------------------------------------------------------------------
def _broken(reverse_ok: bool, forward_ok: bool):
    p = cr.custom.primitive(lambda x, y: x * np.sin(y))
    p.defvjp(lambda g, ans, x, y: g * np.sin(y), lambda g, ans, x, y: g * x * np.cos(y) * (1 if reverse_ok else 2))
    p.defjvp(lambda t, ans, x, y: t * np.sin(y), lambda t, ans, x, y: t * x * np.cos(y) * (1 if forward_ok else 3))
    return p


def test_gradcheck_failures_name_the_argument_mode_and_order():
    x, y = np.array([0.5, 1.0]), np.array([0.3, -0.7])
    assert cr.gradcheck(_broken(True, True), x, y, order=2)
    with pytest.raises(cr.GradcheckError, match=r"order 1 \(rev mode\) for argument\(s\) \[0, 1\]"):
        cr.gradcheck(_broken(False, True), x, y)
    with pytest.raises(cr.GradcheckError, match=r"order 1 \(fwd mode\) for argument\(s\) \[1\].*expected .* got"):
        cr.gradcheck(_broken(True, False), x, y, argnums=[1])
    assert cr.gradcheck(_broken(True, False), x, y, modes=("rev",))
    with pytest.raises(ValueError, match="modes"):
        cr.gradcheck(np.sin, x, modes=("both",))


def test_custom_vjp_bwd_with_the_wrong_number_of_gradients_is_refused():
    """One gradient too many would have been dropped silently (or landed on the wrong argument)."""
    h = cr.custom_vjp(lambda a: a * 2)
    h.defvjp(lambda a: (a * 2, None), lambda res, g: (2 * g, g))
    with pytest.raises(TypeError, match=r"custom_vjp <lambda>: bwd returned 2 gradient\(s\) for a call with 1 arg"):
        cr.grad(lambda a: cr.sum(h(a)))(np.array([1.0, 2.0]))


@pytest.mark.oracle
def test_elementwise_grad_of_several_argnums_is_a_tuple_as_grad_and_matches_jax():
    # argnums=(0, 1) raised a raw TypeError (a tuple used as an index)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    f = lambda x, y: np.sin(x) * y ** 2  # noqa: E731
    x, y = np.array([0.5, 1.0, 2.0]), np.array([3.0, -1.0, 0.25])
    ours = cr.elementwise_grad(f, argnums=(0, 1))(x, y)
    jf = lambda x, y: jax.numpy.sin(x) * y ** 2  # noqa: E731
    theirs = jax.vmap(jax.grad(jf, argnums=(0, 1)))(x, y)
    assert isinstance(ours, tuple) and len(ours) == 2
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-12)
    np.testing.assert_allclose(cr.elementwise_grad(f, argnums=1)(x, y), np.asarray(theirs[1]), rtol=1e-12)
    batched = cr.vmap(cr.elementwise_grad(f, argnums=(0, 1)))(np.stack([x, x]), np.stack([y, y]))
    np.testing.assert_allclose(batched[1], np.stack([theirs[1]] * 2), rtol=1e-12)
    with pytest.raises(ValueError, match=r"argnums \(0, 2\) out of range"):
        cr.elementwise_grad(f, argnums=(0, 2))(x, y)


def test_a_jacobian_or_hessian_too_big_for_memory_is_refused_up_front_naming_its_size(monkeypatch):
    # a 30,000-dimensional hessian built an identity matrix of 7.2 GB and ended in a raw MemoryError
    from chainrule.core import memory

    x = np.ones(1_000_000)  # a Hessian of 8 TB: refused before anything of that size is allocated
    for transform in (cr.hessian, cr.jacrev, cr.jacfwd):
        f = (lambda v: np.sum(v ** 3)) if transform is cr.hessian else (lambda v: v ** 3)
        with pytest.raises(memory.ResultTooLargeError, match=r"1,000,000 output entries by 1,000,000 input entries "
                                                             r"needs about 16\.0 TB.*hvp.*CHAINRULE_MEMORY_CHECK=0"):
            transform(f)(x)
    monkeypatch.setattr(memory, "available_bytes", lambda: 100)  # (it needs 256 bytes)
    with pytest.raises(MemoryError, match=r"jacrev: the Jacobian of 4 output entries by 4 input entries"):
        cr.jacrev(lambda v: v ** 2)(np.ones(4))
    monkeypatch.setenv("CHAINRULE_MEMORY_CHECK", "0")  # the way to try anyway
    np.testing.assert_array_equal(cr.jacrev(lambda v: v ** 2)(np.ones(4)), 2 * np.eye(4))
