"""``chainrule.lax``: JAX's control flow and lax names, checked against JAX as the oracle (values, gradients and
second derivatives in both modes, under vmap and jit). Each program is written once and run with
(chainrule.lax, chainrule.numpy) and with (jax.lax, jax.numpy)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import lax

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
pytestmark = pytest.mark.oracle

OURS, THEIRS = (lax, cnp), (jax.lax, jnp)


def scan_pytree(L, N, reverse=False):
    def step(c, xs):
        a, b = xs
        c = {"s": c["s"] + a * c["p"], "p": c["p"] * N.tanh(b)}
        return c, (c["s"], N.sin(a) * b)

    def f(x):
        c, (ys, zs) = L.scan(step, {"s": x[0], "p": 1.0 + 0 * x[1]}, (x, x[::-1] * 0.5), reverse=reverse)
        return c["s"] + c["p"] + N.sum(ys * zs)
    return f


def scan_length(L, N):
    def f(x):
        c, ys = L.scan(lambda c, _: (c * N.cos(x[1]) + x[0], c ** 2), x[2], None, length=4)
        return c + N.sum(ys)
    return f


def fori(L, N):
    def f(x):
        v = L.fori_loop(0, 3, lambda i, v: (v[0] * N.cos(v[1]) + i, v[1] + v[0] * 0.1), (x[0], x[1]))
        return v[0] * v[1] + x[2]
    return f


def cond(L, N):
    return lambda x: L.cond(x[0] > 0, lambda a, b: N.sin(a) * b, lambda a, b: a - b ** 2, x[1], x[2])


def switch(L, N):
    branches = [lambda v: N.sin(v[0]) * v[1], lambda v: v[1] ** 3, lambda v: N.exp(v[2]) * v[0]]
    return lambda x: L.switch(N.sum(x > 0.5), branches, x)


def while_fixed_count(L, N):
    def f(x):
        v = L.while_loop(lambda v: v[1] < 4, lambda v: (v[0] * N.sin(v[0]) + x[1], v[1] + 1), (x[0], 0))
        return v[0] * x[2]
    return f


def mapped(L, N):
    return lambda x: N.sum(L.map(lambda r: N.sum(r ** 2) * r[0], N.reshape(x, (2, -1))))


def assoc(L, N, reverse=False):
    def f(x):
        a, b = L.associative_scan(lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (N.tanh(x), x ** 2),
                                  reverse=reverse)
        return N.sum(a * N.sin(b))
    return f


PROGRAMS = {
    "scan_pytree": scan_pytree, "scan_reverse": lambda L, N: scan_pytree(L, N, reverse=True),
    "scan_length": scan_length, "fori_loop": fori, "cond": cond, "switch": switch, "map": mapped,
    "associative_scan": assoc, "associative_scan_reverse": lambda L, N: assoc(L, N, reverse=True),
}
X = np.array([0.7, -0.3, 0.4, 1.2])
V = np.array([0.3, 1.1, -0.5, 0.2])


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.parametrize("x", [X, -X[::-1]], ids=["x", "-x"])
def test_values_and_derivatives_agree_with_jax(name, x):
    ours, theirs = PROGRAMS[name](*OURS), PROGRAMS[name](*THEIRS)
    np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-12)
    np.testing.assert_allclose(cr.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(cr.jvp(ours, (x,), (V,))[1], jax.jvp(theirs, (x,), (V,))[1], rtol=1e-10, atol=1e-14)
    # second order: forward over reverse and reverse over reverse
    hv = jax.jvp(jax.grad(theirs), (x,), (V,))[1]
    np.testing.assert_allclose(cr.jvp(cr.grad(ours), (x,), (V,))[1], hv, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cr.hessian(ours)(x), jax.hessian(theirs)(x), rtol=1e-9, atol=1e-12)


BATCH = np.array([[0.7, -0.3, 0.4, 1.2], [-0.2, 0.9, 0.8, -1.0], [0.6, 0.1, -0.4, 0.55]])


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_under_vmap_as_jax(name):
    """A batched predicate (cond, switch: the rows take different branches) runs every branch and selects."""
    ours, theirs = PROGRAMS[name](*OURS), PROGRAMS[name](*THEIRS)
    np.testing.assert_allclose(cr.vmap(ours)(BATCH), jax.vmap(theirs)(BATCH), rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.grad(ours))(BATCH), jax.vmap(jax.grad(theirs))(BATCH), rtol=1e-10,
                               atol=1e-14)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_under_jit_a_replay_follows_the_new_input(name):
    ours, theirs = PROGRAMS[name](*OURS), PROGRAMS[name](*THEIRS)
    jitted = cr.jit(ours)
    for x in BATCH:  # the rows take different branches: a replay must not keep the first one
        np.testing.assert_allclose(np.asarray(jitted(x)), theirs(x), rtol=1e-12)


def test_while_loop_reverse_mode_differentiates_the_loop_that_ran():
    """JAX refuses reverse mode through while_loop; chainrule differentiates the iterations that ran: the same
    derivatives as JAX's forward mode, to second order."""
    ours, theirs = while_fixed_count(*OURS), while_fixed_count(*THEIRS)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(theirs)(X)
    np.testing.assert_allclose(ours(X), theirs(X), rtol=1e-12)
    np.testing.assert_allclose(cr.grad(ours)(X), jax.jacfwd(theirs)(X), rtol=1e-10)
    np.testing.assert_allclose(cr.hessian(ours)(X), jax.jacfwd(jax.jacfwd(theirs))(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cr.jvp(ours, (X,), (V,))[1], jax.jvp(theirs, (X,), (V,))[1], rtol=1e-10)
    np.testing.assert_allclose(cr.vmap(cr.grad(ours))(BATCH), jax.vmap(jax.jacfwd(theirs))(BATCH), rtol=1e-10)


def test_while_loop_under_vmap_runs_each_example_its_own_number_of_times():
    def program(L, N):
        return lambda x: L.while_loop(lambda v: v[0] < 3.0, lambda v: (v[0] * 1.5 + v[1], v[1] * 0.9), (x[0], x[1]))

    starts = np.array([[0.5, 0.1], [2.9, 0.2], [4.0, 0.3], [0.01, 0.05]])
    ours, theirs = cr.vmap(program(*OURS))(starts), jax.vmap(program(*THEIRS))(starts)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    jac = jax.vmap(jax.jacfwd(lambda x: program(*THEIRS)(x)[0]))(starts)
    np.testing.assert_allclose(cr.vmap(cr.grad(lambda x: program(*OURS)(x)[0]))(starts), jac, rtol=1e-10)


def test_fori_loop_with_batched_bounds_under_vmap_as_jax():
    def program(L, N):
        return lambda n, x: L.fori_loop(0, n, lambda i, v: v * N.sin(x) + i, x)

    ns, xs = np.array([0, 3, 1, 5]), np.array([0.3, -0.7, 1.1, 0.4])
    np.testing.assert_allclose(cr.vmap(program(*OURS))(ns, xs), jax.vmap(program(*THEIRS))(ns, xs), rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.grad(program(*OURS), argnums=1))(ns, xs),
                               jax.vmap(jax.jacfwd(program(*THEIRS), argnums=1))(ns, xs), rtol=1e-10)


def test_a_jitted_while_loop_whose_count_changes_is_traced_again_rather_than_replaying_the_old_count():
    jitted = cr.jit(lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x))
    assert float(jitted(np.array(3.0))) == 12.0
    assert float(jitted(np.array(3.5))) == 14.0  # the same count (2): the replay holds
    assert jitted.traces_again == 0
    assert float(jitted(np.array(1.0))) == 16.0  # four steps: traced again (an eager run)
    assert jitted.traces_again == 1


def test_cond_branches_must_agree_when_both_run():
    with pytest.raises(TypeError, match="lax.cond: the branches must output the same structure"):
        cr.vmap(lambda x: lax.cond(x > 0, lambda: (x, x), lambda: x))(np.array([1.0, -1.0]))


def test_switch_clamps_the_index_as_jax():
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    for index in (-3, 0, 1, 2, 9):
        assert lax.switch(index, branches, 2.0) == jax.lax.switch(index, branches, 2.0)
    batched = cr.vmap(lambda i, x: lax.switch(i, branches, x))(np.array([-1, 1, 5]), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(batched, [2.0, 20.0, -3.0])


def test_scan_with_no_steps_gives_empty_outputs_of_the_right_shape():
    carry, ys = lax.scan(lambda c, x: (c + x.sum(), (x * 2.0, c)), 1.0, np.zeros((0, 3)))
    theirs = jax.lax.scan(lambda c, x: (c + x.sum(), (x * 2.0, c)), 1.0, np.zeros((0, 3)))[1]
    assert carry == 1.0 and [y.shape for y in ys] == [y.shape for y in theirs] == [(0, 3), (0,)]


def test_scan_returns_none_ys_as_jax():
    carry, ys = lax.scan(lambda c, x: (c + x, None), 0.0, np.arange(4.0))
    assert carry == 6.0 and ys is None


@pytest.mark.parametrize("loop, match", [
    (lambda: lax.scan(lambda c, x: ((c, c), x), 0.0, np.ones(3)), "lax.scan: f's carry must keep the structure of"),
    (lambda: lax.scan(lambda c, x: (c * x, x), 0.0, np.ones((3, 2))), r"lax.scan: .*leaf 0 was f\[\].*float64\[2\]"),
    (lambda: lax.fori_loop(0, 3, lambda i, v: v + 0.5, 0), "lax.fori_loop: body_fun must keep each leaf's shape"),
    (lambda: lax.fori_loop(0, 3, lambda i, v: {"a": v["a"]}, {"a": 1.0, "b": 2.0}), "lax.fori_loop: body_fun"),
    (lambda: lax.while_loop(lambda v: v[0] < 3, lambda v: (v[0] + 1, v[1].astype(np.float32)),
                            (0, np.ones(2))), "leaf 1 was float64.*float32"),
])
def test_a_loop_that_changes_its_carry_raises_naming_the_function(loop, match):
    with pytest.raises(TypeError, match=match):
        loop()


def test_cond_and_switch_refuse_a_predicate_that_is_not_a_scalar():
    with pytest.raises(TypeError, match="lax.cond: the predicate must be a scalar"):
        lax.cond(np.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(ValueError, match="lax.switch: branches is empty"):
        lax.switch(0, [], 1.0)


def test_associative_scan_along_another_axis():
    elems = (np.arange(12.0).reshape(3, 4) / 7, np.arange(12.0).reshape(3, 4) ** 0.5)
    fn = lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1])  # noqa: E731  (associative, not commutative)
    for reverse in (False, True):
        ours = lax.associative_scan(fn, elems, reverse=reverse, axis=1)
        for a, b in zip(ours, jax.lax.associative_scan(fn, elems, reverse=reverse, axis=1)):
            np.testing.assert_allclose(a, b, rtol=1e-12)


A = np.array([[0.5, -1.2, 2.0], [0.3, 0.8, -0.4]])
B = np.arange(24.0).reshape(2, 3, 4) / 10
OPS = {
    "logistic": lambda L: L.logistic(A), "rsqrt": lambda L: L.rsqrt(A ** 2 + 1), "erf": lambda L: L.erf(A),
    "erf_inv": lambda L: L.erf_inv(A / 3), "lgamma": lambda L: L.lgamma(A + 3), "digamma": lambda L: L.digamma(A + 3),
    "max": lambda L: L.max(A, A[::-1] * 0.9), "integer_pow": lambda L: L.integer_pow(A, 3),
    "clamp": lambda L: L.clamp(-0.5, A, 1.0), "select": lambda L: L.select(A > 0, A, -A * 2),
    "div_int": lambda L: L.div(np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])),
    "reduce_sum": lambda L: L.reduce_sum(B, (0, 2)), "reduce_max": lambda L: L.reduce_max(B, (1,)),
    "cumsum_reverse": lambda L: L.cumsum(A, axis=1, reverse=True),
    "dot_general": lambda L: L.dot_general(B, B.transpose(0, 2, 1) + 1, (((2,), (1,)), ((0,), (0,)))),
    "dot_general_free": lambda L: L.dot_general(B, A, (((1,), (1,)), ((), ()))),
    "broadcast_in_dim": lambda L: L.broadcast_in_dim(A, (3, 2, 4, 3), (1, 3)),
    "reshape_dims": lambda L: L.reshape(B, (4, 6), dimensions=(2, 0, 1)),
    "transpose": lambda L: L.transpose(B, (2, 0, 1)), "concatenate": lambda L: L.concatenate([A, A * 2], 1),
    "slice": lambda L: L.slice(B, (0, 1, 0), (2, 3, 4), (1, 1, 2)),
    "dynamic_slice": lambda L: L.dynamic_slice(B, (1, 2, -1), (1, 2, 3)),
    "dynamic_update_slice": lambda L: L.dynamic_update_slice(B, -np.ones((1, 2, 2)), (0, 5, 1)),
    "dynamic_update_slice_negative": lambda L: L.dynamic_update_slice(B, -np.ones((1, 2, 2)), (-1, -2, -9)),
    "pad": lambda L: L.pad(A, -1.0, [(1, -1, 2), (-1, 2, 0)]), "rev": lambda L: L.rev(B, (0, 2)),
    "full_like": lambda L: L.full_like(A, 3.0), "stop_gradient": lambda L: L.stop_gradient(A),
}


@pytest.mark.parametrize("name", list(OPS))
def test_lax_functions_give_jax_values(name):
    ours, theirs = OPS[name](lax), np.asarray(OPS[name](jax.lax))
    assert np.shape(ours) == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["pad", "dynamic_update_slice", "dynamic_slice", "dot_general", "broadcast_in_dim"])
def test_lax_shape_functions_differentiate_as_jax(name):
    def program(L, N):
        def f(a, b):
            calls = {
                "pad": lambda: L.pad(a, b[0, 0, 0], [(1, -1, 2), (-1, 2, 0)]),
                "dynamic_update_slice": lambda: L.dynamic_update_slice(b, N.reshape(a[:, :2], (1, 2, 2)), (1, 1, 7)),
                "dynamic_slice": lambda: L.dynamic_slice(b, (1, 2, -1), (1, 2, 3)) * a[0, 0],
                "dot_general": lambda: L.dot_general(b, a, (((1,), (1,)), ((), ()))),
                "broadcast_in_dim": lambda: L.broadcast_in_dim(a, (3, 2, 4, 3), (1, 3)) * b[0, 0, 0],
            }
            return N.sum(N.sin(calls[name]()))
        return f

    ours, theirs = program(*OURS), program(*THEIRS)
    for g, h in zip(cr.grad(ours, argnums=(0, 1))(A, B), jax.grad(theirs, argnums=(0, 1))(A, B)):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-14)


def test_lax_stop_gradient_is_chainrules():
    assert lax.stop_gradient is cr.stop_gradient
    assert cr.grad(lambda x: x * lax.stop_gradient(x))(3.0) == 3.0


def test_lax_updates_of_numpy_arrays_give_numpy_arrays_as_the_other_lax_functions():
    # dynamic_update_slice and pad of NumPy arrays gave Tensors (JAX: arrays in, arrays out)
    x = np.arange(6.0).reshape(2, 3)
    for out in (lax.dynamic_update_slice(x, np.ones((1, 2)), (1, 1)), lax.dynamic_update_index_in_dim(x, 7.0, 1, 1),
                lax.dynamic_update_slice_in_dim(x, np.ones((2, 1)), 1, 1), lax.pad(x, 0.0, [(1, 0, 0), (0, 1, 1)])):
        assert isinstance(out, np.ndarray) and not isinstance(out, cr.Tensor)  # (with JAX's .at: cnp's ArrayWithAt)
    assert lax.dynamic_update_slice(x, np.ones((1, 2)), (1, 1)).tolist() == [[0.0, 1.0, 2.0], [3.0, 1.0, 1.0]]
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]  # the operand is not changed
    assert cr.grad(lambda u: lax.dynamic_update_slice(x, u * 2, (1, 1)).sum())(np.ones((1, 2))).tolist() == [[2.0, 2.0]]
