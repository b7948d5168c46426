"""jax.example_libraries.optimizers' twin: the same parameters as JAX's after each step, for every optimiser."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule.example_libraries import optimizers as co

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jo = pytest.importorskip("jax.example_libraries.optimizers")
jax.config.update("jax_enable_x64", True)  # (float64 as chainrule's, as the other JAX oracle tests set it)

PARAMS = {"w": np.array([[1.0, -2.0], [0.5, 3.0]]), "b": [np.array([0.1, -0.3])]}


def _loss(n):
    return lambda p: n.sum(n.tanh(p["w"] @ p["b"][0]) ** 2) + n.sum(p["w"] ** 2) * 0.1


@pytest.mark.oracle
@pytest.mark.parametrize("name, args", [
    ("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)), ("adagrad", (0.1,)), ("rmsprop", (0.01,)),
    ("rmsprop_momentum", (0.01,)), ("adam", (0.05,)), ("adamax", (0.05,)), ("adam_scheduled", None),
])
def test_optimizers_follow_jaxs_steps(name, args):
    if name == "adam_scheduled":
        mine, theirs = co.adam(co.exponential_decay(0.1, 5, 0.5)), jo.adam(jo.exponential_decay(0.1, 5, 0.5))
    else:
        mine, theirs = getattr(co, name)(*args), getattr(jo, name)(*args)
    state_j, state_c = theirs[0](PARAMS), mine[0](PARAMS)
    for i in range(6):
        state_j = theirs[1](i, jax.grad(_loss(jnp))(theirs[2](state_j)), state_j)
        state_c = mine[1](i, cr.grad(_loss(cr.numpy))(mine[2](state_c)), state_c)
        for a, b in zip(jax.tree_util.tree_leaves(theirs[2](state_j)), cr.tree_util.tree_leaves(mine[2](state_c))):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-10, atol=1e-12)


@pytest.mark.oracle
def test_schedules_and_clipping_follow_jax():
    for a, b in [(co.polynomial_decay(1.0, 10, 0.1, 2.0), jo.polynomial_decay(1.0, 10, 0.1, 2.0)),
                 (co.inverse_time_decay(1.0, 3, 0.5, True), jo.inverse_time_decay(1.0, 3, 0.5, True)),
                 (co.inverse_time_decay(1.0, 3, 0.5), jo.inverse_time_decay(1.0, 3, 0.5)),
                 (co.piecewise_constant([2, 5], [1.0, 0.5, 0.1]), jo.piecewise_constant([2, 5], [1.0, 0.5, 0.1]))]:
        np.testing.assert_allclose([float(a(i)) for i in range(12)], [float(b(i)) for i in range(12)])
    g = {"a": np.array([3.0, 4.0]), "b": np.array([0.0])}
    np.testing.assert_allclose(co.clip_grads(g, 1.0)["a"], np.asarray(jo.clip_grads(g, 1.0)["a"]))
    np.testing.assert_allclose(co.clip_grads(g, 10.0)["a"], [3.0, 4.0])
    assert float(co.l2_norm(g)) == 5.0


def test_state_packs_and_unpacks_and_a_structure_mismatch_is_refused():
    init, update, get_params = co.adam(0.1)
    state = init(PARAMS)
    again = co.pack_optimizer_state(co.unpack_optimizer_state(state))
    for a, b in zip(state.packed_state, again.packed_state):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="the gradients' structure"):
        update(0, {"w": PARAMS["w"]}, state)
    with pytest.raises(ValueError, match="one more value than boundaries"):
        co.piecewise_constant([1, 2], [1.0])
