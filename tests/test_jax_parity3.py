"""JAX programs on chainrule's functional API (``chainrule.numpy`` as ``jnp``, ``chainrule.lax``, the transforms,
``chainrule.scipy.stats``), each compared with JAX itself (x64, CPU): cases that once raised in chainrule."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import lax

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


@pytest.mark.parametrize(
    "call",
    [
        lambda m, c: m.where(c, size=2),
        lambda m, c: m.where(c, size=5, fill_value=-1),
        lambda m, c: m.nonzero(c, size=4, fill_value=7),
        lambda m, c: m.argwhere(c, size=4),
        lambda m, c: m.argwhere(c, size=2, fill_value=9),
        lambda m, c: m.flatnonzero(c, size=5),
    ],
)
def test_sized_positions_match_jax_and_batch(jax, call):
    _same(call(cnp, COND), call(jax.numpy, COND))
    _same(cr.vmap(lambda c: call(cnp, c))(COND), jax.vmap(lambda c: call(jax.numpy, c))(COND))


def test_sized_positions_under_nested_vmap(jax):
    # vmap(vmap(...)) of a sized nonzero read the outer batch's values as one array (ConcreteValueError)
    c = np.stack([COND, COND[::-1]])
    f = lambda m, v: m.nonzero(v, size=2, fill_value=-1)  # noqa: E731
    _same(cr.vmap(cr.vmap(lambda v: f(cnp, v)))(c), jax.vmap(jax.vmap(lambda v: f(jax.numpy, v)))(c))


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
    _same(
        cr.grad(lambda x: cnp.sum(cnp.clip(x, min=1.2) ** 2))(x),
        jax.grad(lambda x: jax.numpy.sum(jax.numpy.clip(x, min=1.2) ** 2))(x),
    )
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


# ---------------------------------------------------------------- lax: conv_general_dilated, reduce_window, select_n

RNG = np.random.default_rng(3)
IMG, KER = RNG.normal(size=(2, 3, 6, 5)), RNG.normal(size=(4, 3, 3, 2))


def _both_ways(jax, ours, theirs, *args, order=2):
    """Values, gradients and (to ``order``) a gradcheck of ``ours`` against ``theirs``."""
    _same(ours(*args), theirs(*args))
    argnums = tuple(range(len(args)))
    jnp = jax.numpy
    _same(
        cr.grad(lambda *a: cnp.sum(cnp.sin(ours(*a))), argnums=argnums)(*args),
        jax.grad(lambda *a: jnp.sum(jnp.sin(theirs(*a))), argnums=argnums)(*args),
    )
    if order >= 2:
        assert cr.gradcheck(ours, *args, order=2)


@pytest.mark.parametrize(
    "kw",
    [
        {"window_strides": (1, 1), "padding": "SAME"},
        {"window_strides": (2, 3), "padding": "VALID"},
        {"window_strides": (2, 1), "padding": "SAME_LOWER", "rhs_dilation": (2, 1)},
        {"window_strides": (1, 2), "padding": [(1, 2), (0, -1)], "lhs_dilation": (2, 1)},
    ],
)
def test_conv_general_dilated_matches_jax(jax, kw):
    _both_ways(
        jax,
        lambda x, w: lax.conv_general_dilated(x, w, **kw),
        lambda x, w: jax.lax.conv_general_dilated(x, w, **kw),
        IMG,
        KER,
    )


def test_conv_general_dilated_layouts_and_groups(jax):
    for dn, x, w in [
        (("NHWC", "HWIO", "NHWC"), IMG.transpose(0, 2, 3, 1), KER.transpose(2, 3, 1, 0)),
        (("NCHW", "OIHW", "NHWC"), IMG, KER),
    ]:
        _both_ways(
            jax,
            lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn),
            lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn),
            x,
            w,
            order=1,
        )
    x, w = RNG.normal(size=(2, 4, 5)), RNG.normal(size=(6, 2, 3))
    _both_ways(
        jax,
        lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", feature_group_count=2),
        lambda x, w: jax.lax.conv_general_dilated(x, w, (1,), "SAME", feature_group_count=2),
        x,
        w,
    )
    xs = RNG.normal(size=(3, 2, 4, 5))
    _same(
        cr.vmap(lambda x: lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2))(xs),
        jax.vmap(lambda x: jax.lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2))(xs),
    )
    with pytest.raises(ValueError, match="transposed convolution"):
        lax.conv_general_dilated(IMG, KER, (1, 1), "SAME", lhs_dilation=(2, 2))


A46 = RNG.normal(size=(4, 6))
A46[0, :2] = 5.0  # a tie inside a window: the gradient goes to the first, as JAX's


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(1, 0), (2, 1)]])
@pytest.mark.parametrize("name, init", [("max", -np.inf), ("add", 0.0), ("min", np.inf)])
def test_reduce_window_matches_jax(jax, name, init, padding):
    ours = lambda a: lax.reduce_window(a, init, getattr(lax, name), (2, 3), (1, 2), padding)  # noqa: E731
    theirs = lambda a: jax.lax.reduce_window(a, init, getattr(jax.lax, name), (2, 3), (1, 2), padding)  # noqa: E731
    _both_ways(jax, ours, theirs, A46, order=2 if name == "add" else 1)
    _same(cr.vmap(ours)(np.stack([A46, -A46])), jax.vmap(theirs)(np.stack([A46, -A46])))


def test_reduce_window_dilations_and_other_computations(jax):
    _both_ways(
        jax,
        lambda a: lax.reduce_window(a, 0.0, lax.add, (2, 2), (1, 1), "SAME", (1, 2), (2, 1)),
        lambda a: jax.lax.reduce_window(a, 0.0, jax.lax.add, (2, 2), (1, 1), "SAME", (1, 2), (2, 1)),
        A46,
    )
    product = lambda a: lax.reduce_window(a, 1.0, lax.mul, (2, 2), (2, 2), "VALID")  # noqa: E731
    _same(product(A46), jax.lax.reduce_window(A46, 1.0, jax.lax.mul, (2, 2), (2, 2), "VALID"))
    assert cr.gradcheck(product, A46, order=2)  # (JAX has no reverse mode for this one)
    for init, computation in [(1.0, "add"), (0.5, "max"), (2.0, "fold")]:  # an init_value that counts, once
        ours = lax.add if computation == "add" else lax.max if computation == "max" else lambda u, v: u + v
        theirs = jax.lax.add if computation == "add" else jax.lax.max if computation == "max" else lambda u, v: u + v
        for padding in ("SAME", [(2, 1), (0, 2)]):
            _same(
                lax.reduce_window(A46, init, ours, (2, 3), (1, 2), padding, (2, 1)),
                jax.lax.reduce_window(A46, init, theirs, (2, 3), (1, 2), padding, (2, 1)),
            )


def test_select_n_matches_jax(jax):
    a, b = A46[:2, :3], A46[2:, 3:]
    which = np.array([[0, 1, 2], [2, 1, 0]])
    _both_ways(
        jax, lambda a, b: lax.select_n(which, a, b, a * b), lambda a, b: jax.lax.select_n(which, a, b, a * b), a, b
    )
    _both_ways(jax, lambda a, b: lax.select_n(a > 0, a, b), lambda a, b: jax.lax.select_n(a > 0, a, b), a, b)
    _same(
        cr.vmap(lambda w, a: lax.select_n(w, a, -a))(which % 2 == 0, a),
        jax.vmap(lambda w, a: jax.lax.select_n(w, a, -a))(which % 2 == 0, a),
    )


def test_pad_with_infinite_value_keeps_it():
    # the update under lax.pad multiplied the entries it replaced by 0: -inf * 0 gave NaN next to the data
    assert lax.pad(np.array([1.0, 2.0]), -np.inf, [(1, 1, 0)]).tolist() == [-np.inf, 1.0, 2.0, -np.inf]
    assert cr.Tensor(np.array([np.inf, 1.0])).at[0].set(2.0).tolist() == [2.0, 1.0]


# ---------------------------------------------------------------- .at on what chainrule.numpy returns


def test_at_on_arrays_chainrule_numpy_returns(jax):
    jnp = jax.numpy

    def program(m):
        x = m.zeros(4).at[1].set(2.0).at[np.array([0, 0, 9])].add(1.5)
        y = (m.sin(m.arange(4.0)) * 2 + x).at[2:].multiply(3.0)
        z = m.linalg.inv(m.eye(2) * 2.0).at[0, 1].set(m.sum(y))
        return x, y, z, m.where(y > 1, y, 0.0).at[-1].get(), m.stack([x, y]).at[1, ::2].min(-1.0)

    _same(program(cnp), program(jnp))
    out = program(cnp)
    assert all(isinstance(o, np.ndarray) and not isinstance(o, cr.Tensor) for o in out[:3] + out[4:])
    assert repr(cnp.zeros(2)) == "array([0., 0.])" and type(np.asarray(cnp.zeros(2))) is np.ndarray
    # the same program differentiated, batched and closed over inside transforms
    f = lambda m, v: m.sum(m.zeros(3).at[1].set(v**2).at[0].add(v) * m.arange(3.0))  # noqa: E731
    _same(cr.grad(lambda v: f(cnp, v))(1.5), jax.grad(lambda v: f(jnp, v))(1.5))
    table = cnp.arange(5.0) * 2
    _same(
        cr.vmap(lambda i, t: t.at[i].set(-1.0), in_axes=(0, None))(np.array([0, 3]), table),
        jax.vmap(lambda i, t: t.at[i].set(-1.0), in_axes=(0, None))(np.array([0, 3]), jnp.arange(5.0) * 2),
    )


# ---------------------------------------------------------------- jax.scipy.stats' distributions

_X = np.array([0.3, 1.7, 2.5])
_Q = np.array([0.1, 0.5, 0.8])
STATS_CASES = {  # name: [(fn name, args tuple, diff argnums)]
    "t": [("logpdf", (_X - 1, 3.5, 0.2, 1.5), (0, 1, 2, 3)), ("pdf", (_X, 2.5), (0, 1))],
    "cauchy": [(f, (_X - 1, 0.3, 2.0), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")]
    + [(f, (_Q, 0.3, 2.0), (0, 1, 2)) for f in ("ppf", "isf")],
    "laplace": [(f, (_X - 1.1, 0.3, 2.0), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf")],
    "logistic": [(f, (_X - 1, 0.3, 2.0), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf", "sf")]
    + [(f, (_Q, 0.3, 2.0), (0, 1, 2)) for f in ("ppf", "isf")],
    "gamma": [(f, (_X, 2.5, 0.1, 1.5), (0, 2, 3)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")]
    + [("logpdf", (_X, 2.5), (1,))],
    "chi2": [(f, (_X, 3.0, 0.1, 1.5), (0, 2, 3)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    "beta": [(f, (_Q, 2.5, 1.5), (0, 1, 2)) for f in ("logpdf", "pdf")],
    "expon": [(f, (_X, 0.1, 1.5), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")]
    + [("ppf", (_Q, 0.1, 1.5), (0, 1, 2))],
    "uniform": [(f, (_X, 0.1, 2.0), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf")]
    + [("ppf", (_Q, 0.1, 1.5), (0, 1, 2))],
    "pareto": [(f, (_X + 1.1, 2.0, 0.1, 1.2), (0, 1, 2, 3)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")]
    + [("ppf", (_Q, 2.0, 0.1, 1.2), (0, 1, 2, 3))],
    "gumbel_r": [(f, (_X, 0.1, 1.5), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")]
    + [("ppf", (_Q, 0.1, 1.5), (0, 1, 2))],
    "gumbel_l": [(f, (_X, 0.1, 1.5), (0, 1, 2)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")]
    + [("ppf", (_Q, 0.1, 1.5), (0, 1, 2))],
    "poisson": [
        ("logpmf", (np.array([0.0, 2.0, 5.0]), 2.5), (1,)),
        ("pmf", (np.array([0.0, 2.0, 5.0]), 2.5, 1.0), (1,)),
        ("cdf", (np.array([0.0, 2.5, 5.0]), 2.5), (1,)),
    ],
    "bernoulli": [
        ("logpmf", (np.array([0.0, 1.0, 1.0]), 0.3), (1,)),
        ("pmf", (np.array([0.0, 1.0, 2.0]), 0.3), ()),
        ("cdf", (np.array([-1.0, 0.5, 1.0]), 0.3), (1,)),
        ("ppf", (_Q, 0.3), ()),
    ],
    "geom": [("logpmf", (np.array([1.0, 2.0, 5.0]), 0.3), (1,)), ("pmf", (np.array([0.0, 2.0, 5.0]), 0.3), ())],
    "binom": [
        ("logpmf", (np.array([0.0, 2.0, 5.0]), 6.0, 0.3), (2,)),
        ("pmf", (np.array([0.0, 2.0, 7.0]), 6.0, 0.3), ()),
    ],
    "nbinom": [
        ("logpmf", (np.array([0.0, 2.0, 5.0]), 3.0, 0.3), (1, 2)),
        ("pmf", (np.array([0.0, 2.0, 5.0]), 3.0, 0.3), ()),
    ],
    "multivariate_normal": [
        (
            "logpdf",
            (np.array([[0.3, -1.0], [1.0, 2.0]]), np.array([0.1, 0.2]), np.array([[2.0, 0.3], [0.3, 1.0]])),
            (0, 1, 2),
        ),
        ("pdf", (np.array([0.3, -1.0]), np.array([0.1, 0.2]), np.array([[2.0, 0.3], [0.3, 1.0]])), (0,)),
    ],
    "dirichlet": [
        ("logpdf", (np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 3.0])), (0, 1)),
        ("pdf", (np.array([[0.2, 0.1], [0.3, 0.6], [0.5, 0.3]]), np.array([1.5, 2.0, 3.0])), (1,)),
    ],
}


@pytest.mark.parametrize(
    "dist, fname, args, argnums",
    [(d, *item) for d, items in STATS_CASES.items() for item in items],
    ids=[f"{d}.{item[0]}" for d, items in STATS_CASES.items() for item in items],
)
def test_stats_distributions_match_jax(jax, dist, fname, args, argnums):
    import jax.scipy.stats as jax_stats

    from chainrule.scipy import stats

    ours, theirs = getattr(getattr(stats, dist), fname), getattr(getattr(jax_stats, dist), fname)
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-9, atol=1e-12)
    if not argnums:
        return
    grads = cr.grad(lambda *a: cnp.sum(ours(*a)), argnums=argnums)(*args)
    if dist.startswith("gumbel"):  # (JAX's own gradient of these raises: float0 of the default loc)
        assert cr.gradcheck(ours, *args)
        return
    expected = jax.grad(lambda *a: jax.numpy.sum(theirs(*a)), argnums=argnums)(*args)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-10, equal_nan=True)


def test_stats_beta_cdf_raises_naming_what_is_missing():
    from chainrule.scipy import stats

    with pytest.raises(NotImplementedError, match="incomplete beta"):
        stats.beta.cdf(0.5, 2.0, 3.0)


# ---------------------------------------------------------------- custom_vjp under forward over reverse


def _custom(lib, m):
    @lib.custom_vjp
    def f(x, y):
        return m.sin(x) * y

    def fwd(x, y):
        return m.sin(x) * y, (m.cos(x), x, y)

    def bwd(res, g):
        c, x, y = res
        return (g * c * y * 1.5, g * m.sin(x))  # not fwd's derivative in x: which rule each level uses shows

    f.defvjp(fwd, bwd)
    return f


def test_forward_over_reverse_of_custom_vjp_differentiates_fwd_and_bwd_as_jax(jax):
    # jvp(grad(f)) of a custom_vjp f raised (no forward rule); JAX differentiates fwd and bwd there
    x, y, ones = np.array([0.3, 1.2]), np.array([2.0, -1.0]), np.ones(2)
    f, fj = _custom(cr, cnp), _custom(jax, jax.numpy)
    loss, loss_j = (lambda x, y: cnp.sum(f(x, y) ** 2)), (lambda x, y: jax.numpy.sum(fj(x, y) ** 2))
    _same(cr.jvp(cr.grad(loss), (x, y), (ones, ones)), jax.jvp(jax.grad(loss_j), (x, y), (ones, ones)))
    _same(cr.jacfwd(cr.grad(loss, argnums=(0, 1)), argnums=(0, 1))(x, y),
          jax.jacfwd(jax.grad(loss_j, argnums=(0, 1)), argnums=(0, 1))(x, y))


def test_jvp_of_custom_vjp_raises_as_jax_naming_the_fix(jax):
    f, fj = _custom(cr, cnp), _custom(jax, jax.numpy)
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(fj, (1.0, 2.0), (1.0, 0.0))
    with pytest.raises(TypeError, match=r"custom_vjp f: forward mode .* add one with f.defjvp"):
        cr.jvp(f, (1.0, 2.0), (1.0, 0.0))


# ---------------------------------------------------------------- vmap of sort, argsort, top_k (ties included)

TIES = np.array([[3.0, 1.0, 3.0, 0.0], [2.0, 2.0, 2.0, 5.0], [0.0, -1.0, 4.0, 4.0]])


@pytest.mark.parametrize("call", [
    lambda m, lax, v: m.sort(v),
    lambda m, lax, v: m.argsort(v),
    lambda m, lax, v: m.argsort(-v, stable=True),
    lambda m, lax, v: lax.top_k(v, 2),
    lambda m, lax, v: m.sort(v * v)[..., ::-1],
])
def test_vmap_of_sorting_matches_jax(jax, call):
    _same(cr.vmap(lambda v: call(cnp, lax, v))(TIES), jax.vmap(lambda v: call(jax.numpy, jax.lax, v))(TIES))
    _same(cr.vmap(lambda v: call(cnp, lax, v), in_axes=1, out_axes=-1)(TIES.T.copy()),
          jax.vmap(lambda v: call(jax.numpy, jax.lax, v), in_axes=1, out_axes=-1)(TIES.T.copy()))


def test_gradients_through_vmapped_sort_and_top_k_match_jax(jax):
    x = np.array([[3.0, 1.0, 2.5, 0.5], [2.0, 4.0, -2.0, 5.0]])
    f = lambda m, lax, v: m.sum(m.sort(v)[..., -2:] * m.arange(2.0)) + m.sum(lax.top_k(v, 3)[0] ** 2)  # noqa: E731
    _same(cr.grad(lambda x: cnp.sum(cr.vmap(lambda v: f(cnp, lax, v))(x)))(x),
          jax.grad(lambda x: jax.numpy.sum(jax.vmap(lambda v: f(jax.numpy, jax.lax, v))(x)))(x))


# ---------------------------------------------------------------- running maxima: JAX's scan tree, ties included


@pytest.mark.parametrize("x", [np.array([0.0, 0.0, 0.0, -1.0]), np.array([2.0, 0.0, 2.0, 2.0, 1.0, 2.0, 3.0])])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_extrema_split_ties_as_jax(jax, x, reverse):
    # cummax/cummin combined entries in another order than JAX's scan: tied entries shared the gradient otherwise
    for ours, theirs in [(lax.cummax, jax.lax.cummax), (lax.cummin, jax.lax.cummin),
                         (lambda v, a, reverse: lax.associative_scan(cnp.maximum, v, reverse, a),
                          lambda v, a, reverse: jax.lax.associative_scan(jax.numpy.maximum, v, reverse, a))]:
        _same(ours(x, 0, reverse=reverse), theirs(x, 0, reverse=reverse))
        _same(cr.jacrev(lambda v: ours(v, 0, reverse=reverse))(x),
              jax.jacrev(lambda v: theirs(v, 0, reverse=reverse))(x))


def test_associative_scan_hands_fn_slices_as_jax(jax):
    m = RNG.normal(size=(5, 2, 2))
    _same(lax.associative_scan(cnp.matmul, m), jax.lax.associative_scan(jax.numpy.matmul, m))
    tree = {"s": np.arange(4.0), "p": np.arange(1.0, 5.0)}
    fn = lambda a, b: {"s": a["s"] + b["s"], "p": a["p"] * b["p"]}  # noqa: E731
    _same(lax.associative_scan(fn, tree, reverse=True), jax.lax.associative_scan(fn, tree, reverse=True))


@pytest.mark.parametrize("x", [np.array([[-1.0, 2.0, -2.0], [1.0, -1.0, -1.0]]), np.zeros((2, 3))])
def test_index_update_extrema_average_ties_as_jax(jax, x):
    # x.at[i].max(v) with the entry and repeated positions' values equal passed the derivative on pairwise (halving
    # it each time); JAX's scatter averages over all the equal ones
    for case in (lambda x: x.at[..., np.array([0, 0, 9])].max(x[..., -1:] * 0.5),
                 lambda x: x.at[np.array([0, 1, 0])].min(x[1] * 0.0 - 1.0)):
        _same(case(cr.Tensor(x))._data, case(jax.numpy.asarray(x)))
        _same(cr.jacrev(case)(x), jax.jacrev(case)(x))
        _same(cr.jacfwd(case)(x), jax.jacfwd(case)(x))
        _same(cr.vmap(case)(np.stack([x, -x])), jax.vmap(case)(np.stack([x, -x])))
