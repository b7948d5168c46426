"""``chainrule.random``: JAX's key-based API. Draws are deterministic functions of the key (not JAX's bits),
split keys are independent, the statistics are right, and jit and vmap treat a key as a value: a jitted
function given a new key draws that key's numbers, vmap over keys draws each key's own."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import random

KEY = random.PRNGKey(42)
SAMPLERS = {
    "uniform": lambda k: random.uniform(k, (500,), minval=-1.0, maxval=3.0),
    "normal": lambda k: random.normal(k, (500,)),
    "exponential": lambda k: random.exponential(k, (500,)),
    "gumbel": lambda k: random.gumbel(k, (500,)),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (500,)),
    "randint": lambda k: random.randint(k, (500,), 2, 9),
    "categorical": lambda k: random.categorical(k, np.log(np.array([0.2, 0.5, 0.3])), shape=(500,)),
    "permutation": lambda k: random.permutation(k, 500),
    "permutation_array": lambda k: random.permutation(k, np.arange(500.0) * 2),
    "choice": lambda k: random.choice(k, 10, (500,)),
    "choice_p_no_replace": lambda k: random.choice(k, np.arange(700.0), (500,), replace=False,
                                                   p=np.linspace(1, 2, 700) / np.linspace(1, 2, 700).sum()),
    "truncated_normal": lambda k: random.truncated_normal(k, -0.5, 1.5, (500,)),
}


def test_prng_key_is_jaxs_raw_key():
    jax = pytest.importorskip("jax")
    for seed in (0, 42, 2**31 - 1):
        np.testing.assert_array_equal(random.PRNGKey(seed), jax.random.PRNGKey(seed))
    np.testing.assert_array_equal(random.key(3), random.PRNGKey(3))


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_same_key_same_numbers_split_keys_other_numbers(name):
    draw = SAMPLERS[name]
    k1, k2 = random.split(KEY)
    np.testing.assert_array_equal(draw(k1), draw(random.split(KEY)[0]))
    assert not np.array_equal(draw(k1), draw(k2))
    assert not np.array_equal(draw(k1), draw(KEY))
    assert not np.array_equal(draw(random.fold_in(KEY, 1)), draw(random.fold_in(KEY, 2)))


def test_split_and_fold_in_shapes_and_independence():
    keys = random.split(KEY, 5)
    assert keys.shape == (5, 2) and keys.dtype == np.uint32 and len({tuple(k) for k in keys}) == 5
    assert random.split(KEY, (2, 3)).shape == (2, 3, 2)
    assert random.fold_in(KEY, 7).shape == (2,)
    a, b = random.normal(keys[0], (20000,)), random.normal(keys[1], (20000,))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.03


def test_shapes_and_dtypes_as_jax():
    assert random.uniform(KEY).shape == () and random.uniform(KEY).dtype == np.float32  # JAX's default float
    assert random.normal(KEY, (2, 3), dtype=np.float64).dtype == np.float64
    assert random.randint(KEY, (4,), 0, 5).dtype == np.int32
    assert random.bernoulli(KEY, np.full((2, 2), 0.5)).shape == (2, 2)
    assert random.categorical(KEY, np.zeros((4, 3))).shape == (4,)
    assert random.categorical(KEY, np.zeros((4, 3)), axis=0).shape == (3,)
    assert random.choice(KEY, np.zeros((5, 7)), (2, 3), axis=1).shape == (5, 2, 3)
    assert random.truncated_normal(KEY, np.zeros(3), 1.0).shape == (3,)
    with pytest.raises(TypeError, match="random.normal: expected one key"):
        random.normal(random.split(KEY, 3), (2,))
    with pytest.raises(TypeError, match="floating type"):
        random.uniform(KEY, (2,), dtype=np.int32)
    with pytest.raises(ValueError, match="without replacement"):
        random.choice(KEY, 3, (4,), replace=False)


def test_rough_statistics():
    n = 40000
    u = random.uniform(KEY, (n,), np.float64, -1.0, 3.0)
    assert -1 <= u.min() and u.max() < 3 and abs(u.mean() - 1.0) < 0.03
    z = random.normal(KEY, (n,), np.float64)
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert abs(random.exponential(KEY, (n,)).mean() - 1) < 0.03
    assert abs(random.gumbel(KEY, (n,), np.float64).mean() - np.euler_gamma) < 0.03
    assert abs(random.bernoulli(KEY, 0.3, (n,)).mean() - 0.3) < 0.01
    r = random.randint(KEY, (n,), 2, 9)
    assert set(np.unique(r)) == set(range(2, 9))
    counts = np.bincount(random.categorical(KEY, np.log(np.array([0.2, 0.5, 0.3])), shape=(n,)), minlength=3) / n
    np.testing.assert_allclose(counts, [0.2, 0.5, 0.3], atol=0.015)
    assert sorted(random.permutation(KEY, 50).tolist()) == list(range(50))
    assert len(set(random.choice(KEY, 100, (100,), replace=False).tolist())) == 100
    t = random.truncated_normal(KEY, -0.5, 1.5, (n,), np.float64)
    assert t.min() >= -0.5 and t.max() <= 1.5
    scipy_stats = pytest.importorskip("scipy.stats")
    assert abs(t.mean() - scipy_stats.truncnorm(-0.5, 1.5).mean()) < 0.02


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_jit_given_a_new_key_draws_that_keys_numbers(name):
    draw = SAMPLERS[name]
    jitted = cr.jit(draw)
    keys = random.split(KEY, 3)
    for k in keys:  # the first call traces, the others replay with their own key
        np.testing.assert_array_equal(np.asarray(jitted(k)), draw(k))


def test_jit_with_fold_in_and_parameters():
    f = cr.jit(lambda k, step, x: random.uniform(random.fold_in(k, step), (3,), minval=x, maxval=x + 1.0))
    x = np.zeros(3)
    for step in range(3):
        np.testing.assert_array_equal(np.asarray(f(KEY, np.array(step), x)),
                                      random.uniform(random.fold_in(KEY, step), (3,), minval=x, maxval=x + 1.0))


@pytest.mark.parametrize("name", ["uniform", "normal", "randint", "permutation_array", "categorical"])
def test_vmap_over_keys_draws_each_keys_own_numbers(name):
    draw = SAMPLERS[name]
    keys = random.split(KEY, 4)
    np.testing.assert_array_equal(cr.vmap(draw)(keys), np.stack([draw(k) for k in keys]))


def test_gradients_flow_through_the_parameters():
    u = random.uniform(KEY, (3,), np.float64)
    g = cr.grad(lambda lo, hi: cnp.sum(random.uniform(KEY, (3,), np.float64, lo, hi) * np.arange(3.0)),
                argnums=(0, 1))(0.5, 2.0)
    np.testing.assert_allclose(g, (np.sum((1 - u) * np.arange(3.0)), np.sum(u * np.arange(3.0))))
    x = np.arange(4.0)
    np.testing.assert_array_equal(cr.grad(lambda x: cnp.sum(random.permutation(KEY, x) * x))(x),
                                  random.permutation(KEY, x) + x[np.argsort(random.permutation(KEY, 4))])
    assert cr.grad(lambda lo: cnp.sum(random.categorical(KEY, lo) * lo))(np.zeros(3)).shape == (3,)
    with pytest.raises(TypeError, match="truncated_normal.*not differentiable in its parameters"):
        cr.grad(lambda lo: random.truncated_normal(KEY, lo, 2.0))(0.0)
