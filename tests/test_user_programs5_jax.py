"""New users' programs, fifth round: JAX and HIPS autograd habits on chainrule's functional API.

The JAX programs are written once against `(jax, jnp, lax)` and run with chainrule's namesakes and with JAX
itself (the oracle, in float64); the HIPS autograd ones are checked against closed forms and finite differences.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections import namedtuple

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import lax as crlax

oracle = pytest.mark.oracle


def both(program):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    ours = program(cr, cnp, crlax)
    theirs = program(jax, jax.numpy, jax.lax)
    return ours, theirs


def close(a, b, tol=1e-10):
    jax = pytest.importorskip("jax")
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert len(la) == len(lb), (a, b)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), rtol=tol,
                                   atol=tol)


Params = namedtuple("Params", ["w", "b"])


@oracle
@pytest.mark.filterwarnings("ignore::chainrule.PerformanceWarning")  # jit(grad(f)) runs grad(f) as it is
def test_namedtuple_params_through_grad_vmap_and_jit():
    def program(jax, jnp, lax):
        def predict(p, x):
            return jnp.tanh(x @ p.w + p.b)

        def loss(p, x, y):
            return jnp.mean((predict(p, x) - y) ** 2)

        p = Params(jnp.array([[0.5, -0.3], [0.1, 0.2], [-0.4, 0.7]]), jnp.array([0.05, -0.1]))
        x = jnp.array(np.linspace(-1, 1, 12).reshape(4, 3))
        y = jnp.array(np.linspace(0, 1, 8).reshape(4, 2))
        g = jax.grad(loss)(p, x, y)
        assert type(g).__name__ == "Params"
        per_ex = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(p, x, y)
        fast = jax.jit(jax.grad(loss))(p, x, y)
        return tuple(g), tuple(per_ex), tuple(fast)

    ours, theirs = both(program)
    close(ours, theirs)


@oracle
def test_a_registered_dataclass_model_is_a_pytree_for_grad_and_tree_map():
    def program(jax, jnp, lax):
        @functools.partial(jax.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["act"])
        @dataclasses.dataclass
        class Layer:
            w: object
            b: object
            act: str = "tanh"

        def run(layer, x):
            h = x @ layer.w + layer.b
            return jnp.tanh(h) if layer.act == "tanh" else jnp.maximum(h, 0.0)

        layers = [Layer(jnp.array([[1.0, -0.5], [0.3, 0.8]]), jnp.array([0.1, 0.0])),
                  Layer(jnp.array([[0.2], [-0.7]]), jnp.array([0.3]), act="relu")]

        def loss(layers, x):
            for layer in layers:
                x = run(layer, x)
            return jnp.sum(x**2)

        x = jnp.array([[0.5, -1.0], [1.5, 0.25]])
        g = jax.grad(loss)(layers, x)
        assert [type(v).__name__ for v in g] == ["Layer", "Layer"] and g[1].act == "relu"
        new = jax.tree_util.tree_map(lambda p, d: p - 0.1 * d, layers, g)
        return [(v.w, v.b) for v in g], loss(new, x)

    ours, theirs = both(program)
    close(ours, theirs)


@oracle
def test_tree_util_toolbox_on_a_nested_parameter_dict():
    def program(jax, jnp, lax):
        tu = jax.tree_util
        params = {"enc": {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}, "dec": [jnp.full((3,), 2.0), (jnp.eye(2), None)]}
        leaves, treedef = tu.tree_flatten(params)
        shapes = [tuple(leaf.shape) for leaf in leaves]
        rebuilt = tu.tree_unflatten(treedef, [leaf * 2 for leaf in leaves])
        total = tu.tree_reduce(lambda a, b: a + b, tu.tree_map(jnp.sum, rebuilt))
        paths = [tu.keystr(path) for path, _ in tu.tree_flatten_with_path(params)[0]]
        summed = tu.tree_map(lambda a, b: a + b, params, rebuilt)
        n_leaves = treedef.num_leaves
        same = str(tu.tree_structure(3.0) == tu.tree_structure(4))
        return shapes, float(total), paths, tu.tree_leaves(summed), n_leaves, same

    ours, theirs = both(program)
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[2] == theirs[2] and ours[4] == theirs[4]
    assert ours[5] == theirs[5]
    close(ours[3], theirs[3])


@oracle
def test_value_and_grad_with_aux_returns_metrics_and_a_hand_written_adam_loop():
    def program(jax, jnp, lax):
        x = jnp.array(np.linspace(-2, 2, 20))
        y = 3.0 * x - 1.0 + 0.1 * jnp.sin(5 * x)

        def loss(p):
            pred = p["a"] * x + p["b"]
            err = pred - y
            return jnp.mean(err**2), {"mae": jnp.mean(jnp.abs(err)), "pred": pred}

        params = {"a": jnp.array(0.0), "b": jnp.array(0.0)}
        m = jax.tree_util.tree_map(jnp.zeros_like, params)
        v = jax.tree_util.tree_map(jnp.zeros_like, params)
        lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
        history = []
        for t in range(1, 31):
            (value, aux), g = jax.value_and_grad(loss, has_aux=True)(params)
            m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
            v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g**2, v, g)
            params = jax.tree_util.tree_map(
                lambda p, m, v: p - lr * (m / (1 - b1**t)) / (jnp.sqrt(v / (1 - b2**t)) + eps), params, m, v)
            history.append(value)
        return params, history, aux["mae"]

    ours, theirs = both(program)
    close(ours, theirs, 1e-8)
    assert ours[1][-1] < 0.1 * ours[1][0]


def test_random_key_splitting_is_deterministic_and_independent():
    from chainrule import random

    key = random.PRNGKey(42)
    k1, k2, k3 = random.split(key, 3)
    a = random.normal(k1, (1000,))
    assert np.array_equal(a, random.normal(k1, (1000,)))  # same key, same numbers
    b = random.normal(k2, (1000,))
    assert not np.allclose(a, b) and abs(np.corrcoef(a, b)[0, 1]) < 0.1
    assert abs(a.mean()) < 0.1 and abs(a.std() - 1) < 0.1
    u = random.uniform(k3, (500,), minval=2.0, maxval=4.0)
    assert u.min() >= 2.0 and u.max() < 4.0
    f = random.fold_in(key, 7)
    assert not np.array_equal(random.normal(f, (4,)), random.normal(random.fold_in(key, 8), (4,)))
    keys = random.split(key, 5)
    assert len(keys) == 5
    perm = random.permutation(k1, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a zero probability is never drawn, and draws without a warning
        picks = np.asarray(random.choice(k2, 4, (2000,), p=np.array([0.0, 0.25, 0.0, 0.75])))
    assert set(picks.tolist()) == {1, 3} and abs((picks == 3).mean() - 0.75) < 0.04
    assert sorted(np.asarray(perm).tolist()) == list(range(10))
    # a dropout mask from a key inside a differentiated function
    mask = random.bernoulli(k2, 0.5, (6,))
    g = cr.grad(lambda x: cnp.sum(cnp.where(mask, x / 0.5, 0.0) ** 2))(np.ones(6))
    assert np.allclose(g, np.where(np.asarray(mask), 8.0, 0.0))


@oracle
def test_lax_loops_and_branches_under_grad():
    def program(jax, jnp, lax):
        def rollout(theta, x0):
            def step(carry, t):
                x, acc = carry
                x = x + 0.1 * jnp.sin(theta * x + t)
                return (x, acc + x**2), x

            (x, acc), xs = lax.scan(step, (x0, 0.0), jnp.arange(5.0))
            y = lax.fori_loop(0, 3, lambda i, v: v * theta + i, x)
            z = lax.cond(acc > 1.0, lambda a: a * 2.0, lambda a: a / 2.0, acc)
            w = lax.switch(1, [lambda a: a, lambda a: jnp.exp(-a), lambda a: -a], y)
            return z + w + jnp.sum(xs)

        g = jax.grad(rollout, argnums=(0, 1))(0.7, 1.2)
        h = jax.grad(jax.grad(rollout))(0.7, 1.2)
        return g, h

    ours, theirs = both(program)
    close(ours, theirs, 1e-9)


@oracle
def test_while_loop_value_and_fori_loop_with_a_traced_bound_from_a_python_int():
    def program(jax, jnp, lax):
        def newton_sqrt(a):
            def body(state):
                x, i = state
                return 0.5 * (x + a / x), i + 1

            x, n = lax.while_loop(lambda s: (jnp.abs(s[0] ** 2 - a) > 1e-12) & (s[1] < 50), body, (a, 0))
            return x, n

        x, n = newton_sqrt(2.0)
        # gradient of a fixed-trip fori_loop computing a power series
        series = lambda t: lax.fori_loop(1, 8, lambda k, acc: acc + t**k / k, 0.0)
        return x, n, jax.grad(series)(0.3)

    ours, theirs = both(program)
    close(ours, theirs)


@oracle
def test_stop_gradient_for_a_target_network_and_a_straight_through_estimator():
    def program(jax, jnp, lax):
        def td_loss(w, s, s2, r):
            target = r + 0.9 * lax.stop_gradient(jnp.dot(w, s2))
            return (jnp.dot(w, s) - target) ** 2

        def ste_round(x):
            return x + lax.stop_gradient(jnp.round(x) - x)

        w = jnp.array([0.5, -0.2])
        g = jax.grad(td_loss)(w, jnp.array([1.0, 2.0]), jnp.array([0.5, 0.5]), 1.0)
        g2 = jax.grad(lambda x: jnp.sum(ste_round(x) * x))(jnp.array([0.4, 1.6]))
        return g, g2

    ours, theirs = both(program)
    close(ours, theirs)


@oracle
def test_custom_jvp_and_custom_vjp_with_nondiff_argnums():
    def program(jax, jnp, lax):
        @functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
        def soft_clip(x, limit):
            return limit * jnp.tanh(x / limit)

        @soft_clip.defjvp
        def soft_clip_jvp(limit, primals, tangents):
            (x,), (t,) = primals, tangents
            y = soft_clip(x, limit)
            return y, t * (1 - (y / limit) ** 2)

        @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
        def scaled_sin(scale, x):
            return scale * jnp.sin(x)

        def fwd(scale, x):
            return scaled_sin(scale, x), x

        def bwd(scale, x, g):
            return (scale * jnp.cos(x) * g,)

        scaled_sin.defvjp(fwd, bwd)
        x = jnp.array([0.5, 3.0, -4.0])
        g1 = jax.grad(lambda x: jnp.sum(soft_clip(x, 2.0) ** 2))(x)
        j1 = jax.jacfwd(lambda x: soft_clip(x, 2.0))(x)
        g2 = jax.grad(lambda x: jnp.sum(scaled_sin(0.1, x) ** 2))(x)
        h2 = jax.grad(lambda x: jnp.sum(jax.grad(lambda z: jnp.sum(scaled_sin(3.0, z) ** 3))(x)))(x)
        return g1, j1, g2, h2

    ours, theirs = both(program)
    close(ours, theirs)


@oracle
@pytest.mark.filterwarnings("ignore::chainrule.PerformanceWarning")  # a jitted step that calls grad runs as it is
def test_jit_of_a_training_step_on_a_parameter_dict_agrees_with_the_eager_step():
    def program(jax, jnp, lax):
        def loss(p, x, y):
            logits = x @ p["W"] + p["b"]
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

        @jax.jit
        def update(p, x, y):
            g = jax.grad(loss)(p, x, y)
            return {k: p[k] - 0.5 * g[k] for k in p}

        rng = np.random.default_rng(0)
        x = jnp.array(rng.normal(size=(16, 3)))
        y = jnp.array(np.eye(4)[rng.integers(0, 4, 16)])
        p = {"W": jnp.zeros((3, 4)), "b": jnp.zeros(4)}
        losses = []
        for _ in range(20):
            p = update(p, x, y)
            losses.append(loss(p, x, y))
        return p, losses

    ours, theirs = both(program)
    close(ours, theirs, 1e-9)


def test_hips_autograd_style_tanh_and_its_derivatives_with_elementwise_grad():
    import chainrule.numpy as np_  # `import autograd.numpy as np`
    from chainrule import elementwise_grad as egrad
    from chainrule import grad

    def tanh(x):
        y = np_.exp(-2.0 * x)
        return (1.0 - y) / (1.0 + y)

    x = np.linspace(-3, 3, 11)
    d1 = egrad(tanh)(x)
    d2 = egrad(egrad(tanh))(x)
    d3 = egrad(egrad(egrad(tanh)))(x)
    t = np.tanh(x)
    assert np.allclose(d1, 1 - t**2)
    assert np.allclose(d2, -2 * t * (1 - t**2))
    assert np.allclose(d3, (1 - t**2) * (6 * t**2 - 2))
    assert np.isclose(grad(tanh)(1.0), 1 - np.tanh(1.0) ** 2)
    with pytest.raises(ValueError):
        egrad(lambda v: np_.cumsum(v))(x)  # not elementwise: refused


def test_hips_autograd_logistic_regression_from_their_readme():
    import chainrule.numpy as anp
    from chainrule import grad

    def sigmoid(x):
        return 0.5 * (anp.tanh(x / 2.0) + 1)

    inputs = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]])
    targets = np.array([True, True, False, True])

    def training_loss(weights):
        preds = sigmoid(anp.dot(inputs, weights))
        label_probabilities = preds * targets + (1 - preds) * (1 - targets)
        return -anp.sum(anp.log(label_probabilities))

    weights = np.array([0.0, 0.0, 0.0])
    g0 = grad(training_loss)(weights)
    # at w = 0 every prediction is 1/2: the gradient is -sum((t - 1/2) x)
    assert np.allclose(g0, -((targets - 0.5)[:, None] * inputs).sum(axis=0))
    first = training_loss(weights)
    for _ in range(100):
        weights -= grad(training_loss)(weights) * 0.01
    assert training_loss(weights) < 0.6 * first
    assert isinstance(weights, np.ndarray) and weights.dtype == np.float64


def test_hips_autograd_jacobian_and_hessian_of_plain_numpy_code():
    import chainrule.numpy as anp
    from chainrule import hessian, jacobian

    def polar(v):
        r, theta = v[0], v[1]
        return anp.array([r * anp.cos(theta), r * anp.sin(theta)])

    v = np.array([2.0, 0.6])
    J = jacobian(polar)(v)
    assert np.allclose(J, [[np.cos(0.6), -2 * np.sin(0.6)], [np.sin(0.6), 2 * np.cos(0.6)]])
    assert np.isclose(np.linalg.det(J), 2.0)  # det of the polar map is r

    def rosen(x):
        return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x = np.array([1.0, 1.0, 1.0])
    H = hessian(rosen)(x)
    expected = np.array([[802.0, -400.0, 0.0], [-400.0, 1002.0, -400.0], [0.0, -400.0, 200.0]])
    assert np.allclose(H, expected)


@oracle
def test_holomorphic_grad_of_a_complex_function_matches_jax():
    def program(jax, jnp, lax):
        f = lambda z: jnp.sin(z) * z**2 + jnp.exp(1j * z)
        z = 0.3 + 0.8j
        g = jax.grad(f, holomorphic=True)(z)
        J = jax.jacrev(lambda v: v**3 + jnp.conj(jnp.array([1j, 2.0])) * v, holomorphic=True)(
            jnp.array([1.0 + 1j, 0.5 - 0.2j]))
        return g, J

    ours, theirs = both(program)
    close([np.real(ours[0]), np.imag(ours[0]), np.real(ours[1]), np.imag(ours[1])],
          [np.real(theirs[0]), np.imag(theirs[0]), np.real(theirs[1]), np.imag(theirs[1])])
    z = 0.3 + 0.8j
    assert np.isclose(ours[0], np.cos(z) * z**2 + 2 * z * np.sin(z) + 1j * np.exp(1j * z))


@oracle
def test_jax_grad_of_a_real_loss_of_complex_parameters_is_the_conjugate_convention():
    def program(jax, jnp, lax):
        f = lambda z: jnp.abs(z * (1 + 2j) - 1.0) ** 2
        return jax.grad(f)(jnp.array(0.5 - 0.25j)), jax.value_and_grad(lambda z: jnp.sum(jnp.real(z * z.conj())))(
            jnp.array([1 + 1j, 2 - 1j]))[1]

    ours, theirs = both(program)
    close([np.real(ours[0]), np.imag(ours[0]), np.real(ours[1]), np.imag(ours[1])],
          [np.real(theirs[0]), np.imag(theirs[0]), np.real(theirs[1]), np.imag(theirs[1])])


def test_hips_autograd_neural_net_example_with_misc_optimizers_adam_and_flatten():
    # autograd's examples/neural_net.py: params as a list of (W, b) tuples, adam from autograd.misc.optimizers
    import chainrule.numpy as anp
    from chainrule import grad
    from chainrule.misc.flatten import flatten
    from chainrule.misc.optimizers import adam, rmsprop, sgd

    rs = np.random.RandomState(0)
    params = [(rs.randn(2, 8) * 0.5, rs.randn(8) * 0.1), (rs.randn(8, 2) * 0.5, rs.randn(2) * 0.1)]
    X = rs.randn(60, 2)
    T = np.eye(2)[(X[:, 0] * X[:, 1] > 0).astype(int)]

    def predict(params, inputs):
        for W, b in params:
            outputs = anp.dot(inputs, W) + b
            inputs = anp.tanh(outputs)
        return outputs - anp.log(anp.sum(anp.exp(outputs), axis=1, keepdims=True))

    def objective(params, i):
        return -anp.sum(predict(params, X) * T) / len(X)

    seen = []
    trained = adam(grad(objective), params, callback=lambda p, i, g: seen.append((i, objective(p, i))),
                   step_size=0.05, num_iters=150)
    assert [type(layer) for layer in trained] == [tuple, tuple] and trained[0][0].shape == (2, 8)
    assert [i for i, _ in seen[:3]] == [0, 1, 2] and len(seen) == 150
    assert objective(trained, 0) < 0.5 * objective(params, 0)
    # the first adam step moves every weight by step_size against the sign of its gradient
    flat0, unflatten = flatten(params)
    g0, _ = flatten(grad(objective)(params, 0))
    one = flatten(adam(grad(objective), params, step_size=0.05, num_iters=1))[0]
    np.testing.assert_allclose(one, flat0 - 0.05 * np.sign(g0), atol=1e-6)
    assert flatten(unflatten(flat0))[0].tolist() == flat0.tolist()
    # sgd with momentum and rmsprop by their update formulas, one step from a quadratic
    q = lambda x, i: anp.sum((x - 2.0) ** 2)
    np.testing.assert_allclose(sgd(grad(q), np.zeros(2), num_iters=1, step_size=0.5, mass=0.9), [0.2, 0.2])
    np.testing.assert_allclose(rmsprop(grad(q), np.zeros(2), num_iters=1, step_size=0.1, gamma=0.9),
                               [0.1 * 4 / np.sqrt(0.9 + 1.6)] * 2)


@oracle
def test_a_remat_block_with_a_jax_checkpoint_policy_gives_jaxs_gradients():
    # chainrule.checkpoint_policies was missing: `policy=jax.checkpoint_policies.dots_saveable` raised AttributeError
    def program(jax, jnp, lax):
        def block(x, w):
            return jnp.tanh(x @ w) @ w.T

        out = []
        for policy in (jax.checkpoint_policies.nothing_saveable, jax.checkpoint_policies.dots_saveable,
                       jax.checkpoint_policies.everything_saveable,
                       jax.checkpoint_policies.dots_with_no_batch_dims_saveable):
            step = jax.checkpoint(block, policy=policy)
            loss = lambda w: jnp.sum(step(step(jnp.ones((2, 3)), w), w) ** 2)
            out.append(jax.grad(loss)(jnp.array([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]])))
        return out

    ours, theirs = both(program)
    close(ours, theirs)


def test_hips_autograd_argnum_keyword_picks_the_argument_in_every_transform():
    # HIPS autograd spells it `grad(fun, argnum=1)`; chainrule took only JAX's argnums= (TypeError before)
    import chainrule.numpy as anp
    from chainrule import elementwise_grad, grad, hessian, holomorphic_grad, jacobian, value_and_grad

    f = lambda x, y: anp.sum(x * y**3)
    x, y = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    np.testing.assert_allclose(grad(f, argnum=1)(x, y), 3 * x * y**2)
    value, g = value_and_grad(f, argnum=0)(x, y)
    assert np.isclose(value, np.sum(x * y**3)) and np.allclose(g, y**3)
    np.testing.assert_allclose(elementwise_grad(lambda x, y: x * anp.sin(y), argnum=1)(x, y), x * np.cos(y))
    np.testing.assert_allclose(jacobian(lambda x, y: x * y**2, argnum=1)(x, y), np.diag(2 * x * y))
    np.testing.assert_allclose(hessian(f, argnum=1)(x, y), np.diag(6 * x * y))
    assert np.isclose(holomorphic_grad(lambda a, z: a * z**2, argnum=1)(2.0, 1j), 4j)
    with pytest.raises(TypeError, match="argnums=1 and argnum=0"):
        grad(f, argnums=1, argnum=0)


def test_hips_autograd_differential_operators_make_vjp_make_jvp_hvp_and_named_grads():
    # autograd's `from autograd import make_vjp, hessian_tensor_product, ...` had no chainrule names (AttributeError)
    import chainrule.numpy as anp
    from chainrule import (
        grad_and_aux,
        grad_named,
        hessian_tensor_product,
        make_hvp,
        make_jvp,
        make_vjp,
        multigrad_dict,
        tensor_jacobian_product,
    )

    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    vjp, value = make_vjp(lambda x, y: anp.sum(x**2 * y), argnum=1)(x, y)
    assert value == -1.0 and vjp(2.0).tolist() == [2.0, 8.0]
    value, tangent = make_jvp(lambda x: anp.sin(x) * x)(x)(np.array([1.0, 0.0]))
    np.testing.assert_allclose(tangent, [np.cos(1.0) + np.sin(1.0), 0.0])
    g, aux = grad_and_aux(lambda x: (anp.sum(x**3), {"n": len(x)}))(x)
    assert g.tolist() == [3.0, 12.0] and aux == {"n": 2}
    rosen = lambda x: anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    v = np.array([0.5, -1.0, 2.0])
    point = np.array([1.0, 1.0, 1.0])
    H = np.array([[802.0, -400.0, 0.0], [-400.0, 1002.0, -400.0], [0.0, -400.0, 200.0]])
    np.testing.assert_allclose(hessian_tensor_product(rosen)(point, v), H @ v)
    hvp, gradient = make_hvp(rosen)(point)
    np.testing.assert_allclose(hvp(v), H @ v)
    np.testing.assert_allclose(gradient, 0.0, atol=1e-12)  # (1, 1, 1) is the minimum
    np.testing.assert_allclose(tensor_jacobian_product(lambda x: x**2)(x, np.array([1.0, 10.0])), [2.0, 40.0])
    assert grad_named(lambda a, b: a * b**2, "b")(2.0, 3.0) == 12.0
    assert multigrad_dict(lambda a, b=2.0: a * b**2)(3.0) == {"a": 4.0, "b": 12.0}
    with pytest.raises(TypeError, match="no argument 'c'"):
        grad_named(lambda a, b: a * b, "c")
