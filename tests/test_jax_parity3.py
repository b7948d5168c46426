"""JAX programs on chainrule's functional API (``chainrule.numpy`` as ``jnp``, ``chainrule.lax``, the transforms,
``chainrule.scipy.stats``), each compared with JAX itself (x64, CPU): cases that once raised in chainrule."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    return jax


def _same(ours, theirs, rtol=1e-10, atol=1e-12):
    ours_leaves, theirs_leaves = cr.tree_util.tree_leaves(ours), cr.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- sized nonzero / where / argwhere, clip, take

COND = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])


@pytest.mark.parametrize("call", [
    lambda m, c: m.where(c, size=2),
    lambda m, c: m.where(c, size=5, fill_value=-1),
    lambda m, c: m.nonzero(c, size=4, fill_value=7),
    lambda m, c: m.argwhere(c, size=4),
    lambda m, c: m.argwhere(c, size=2, fill_value=9),
    lambda m, c: m.flatnonzero(c, size=5),
])
def test_sized_positions_match_jax_and_batch(jax, call):
    _same(call(cnp, COND), call(jax.numpy, COND))
    _same(cr.vmap(lambda c: call(cnp, c))(COND), jax.vmap(lambda c: call(jax.numpy, c))(COND))


def test_nonzero_fill_value_per_axis(jax):
    _same(cnp.nonzero(COND, size=4, fill_value=(7, 8)), jax.numpy.nonzero(COND, size=4, fill_value=(7, 8)))


def test_sized_positions_under_grad_read_the_values(jax):
    f = lambda m, x: m.sum(x[m.nonzero(x > 0.5, size=2, fill_value=0)] ** 2)  # noqa: E731
    x = np.array([0.1, 0.7, 0.2, 0.9])
    _same(cr.grad(lambda x: f(cnp, x))(x), jax.grad(lambda x: f(jax.numpy, x))(x))


def test_clip_takes_min_and_max_keywords(jax):
    x = np.array([0.0, 1.0, 1.5, 2.0, 3.0])
    for kw in ({"max": 2.0}, {"min": 1.0}, {"min": 1.0, "max": 2.0}):
        _same(cnp.clip(x, **kw), jax.numpy.clip(x, **kw))
    _same(cr.grad(lambda x: cnp.sum(cnp.clip(x, min=1.2) ** 2))(x),
          jax.grad(lambda x: jax.numpy.sum(jax.numpy.clip(x, min=1.2) ** 2))(x))
    with pytest.raises(TypeError, match="once"):
        cnp.clip(x, 1.0, min=2.0)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint8, np.bool_])
def test_take_fill_mode_matches_jax(jax, dtype):
    x = np.arange(5).astype(dtype)
    i = np.array([1, 7, -1, -8])
    _same(cnp.take(x, i, mode="fill"), jax.numpy.take(x, i, mode="fill"))
    _same(cnp.take(x, i, mode="fill", fill_value=1), jax.numpy.take(x, i, mode="fill", fill_value=1))
    for mode in ("clip", "wrap"):
        _same(cnp.take(x, i, mode=mode), jax.numpy.take(x, i, mode=mode))


def test_take_fill_along_an_axis_is_differentiable(jax):
    x = np.arange(6.0).reshape(2, 3) + 1.0
    i = np.array([[0, 5], [1, -4]])
    f = lambda m, x: m.sum(m.take(x, i, axis=1, mode="fill", fill_value=0.0) ** 2)  # noqa: E731
    _same(cnp.take(x, i, axis=1, mode="fill"), jax.numpy.take(x, i, axis=1, mode="fill"))
    _same(cr.grad(lambda x: f(cnp, x))(x), jax.grad(lambda x: f(jax.numpy, x))(x))
    _same(cr.vmap(lambda r: cnp.take(r, i[0], mode="fill"))(x), jax.vmap(lambda r: jax.numpy.take(r, i[0]))(x))


def test_take_out_of_bounds_without_mode_raises_naming_jax_default():
    with pytest.raises(IndexError, match="mode='fill'"):
        cnp.take(np.arange(3.0), np.array([5]))


# ---------------------------------------------------------------- x.at[...] out of bounds: JAX's modes

X34 = np.arange(12.0).reshape(3, 4)
AT_CASES = [
    lambda x: x.at[5].get(),
    lambda x: x.at[5].get(mode="fill"),
    lambda x: x.at[1, 9].get(mode="fill"),
    lambda x: x.at[:, None, 7].get(mode="fill", fill_value=2.0),
    lambda x: x.at[np.array([[0, 3]]), np.array([[1], [9]])].get(mode="drop"),
    lambda x: x.at[np.array([1, 5, -1, -9]), np.array([0, 1, 2, 3])].get(mode="clip"),
    lambda x: x.at[np.array([0, 4]), 1:3].set(-1.0),
    lambda x: x.at[..., np.array([0, -5])].add(100.0),
    lambda x: x.at[np.array([1, 1, 7]), 0].multiply(2.0),
    lambda x: x.at[np.array([1, 1, 7]), 0].min(-1.0),
    lambda x: x.at[np.array([1, 1, 7]), 0].divide(4.0, mode="fill"),
    lambda x: x.at[5].set(3.0),
    lambda x: x.at[np.array([1, 5, -1, -9])].set(7.0, mode="clip"),
    lambda x: x.at[np.array([1, 5, -1, -9])].add(7.0, mode="clip"),
    lambda x: x.at[np.array([1, 5, -1, -9]), np.array([0, 1, 2, 3])].add(np.arange(4.0) ** 2),
    lambda x: x.at[np.array([1, 5, -1, -9]), np.array([0, 1, 2, 3])].subtract(x[0], mode="drop"),
]


@pytest.mark.parametrize("k", range(len(AT_CASES)))
def test_index_update_modes_out_of_bounds_match_jax(jax, k):
    case, jnp = AT_CASES[k], jax.numpy
    _same(case(cr.Tensor(X34))._data, case(jnp.asarray(X34)))
    _same(cr.grad(lambda x: cnp.nansum(cnp.sin(case(x))))(X34), jax.grad(lambda x: jnp.nansum(jnp.sin(case(x))))(X34))
    _same(cr.vmap(case)(np.stack([X34, -X34])), jax.vmap(case)(np.stack([X34, -X34])))


def test_index_update_options_that_do_not_exist_raise():
    with pytest.raises(TypeError, match="fill_value= is for get"):
        cr.Tensor(X34).at[0].set(1.0, fill_value=2.0)
    with pytest.raises(TypeError, match="unknown options"):
        cr.Tensor(X34).at[0].add(1.0, wrap=True)
