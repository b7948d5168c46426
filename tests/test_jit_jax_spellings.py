"""``jit`` as a user coming from JAX calls it: static arguments, keyword arguments, the decorator form, and
arrays whose shapes, dtypes or plain values change between calls (JAX compiles again; chainrule traced once and
raised ``JitError``, or refused the keywords with a ``TypeError``)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp

X3 = np.array([0.3, -1.2, 0.7])
A = np.array([[0.5, -0.2, 1.0], [0.3, 0.8, -0.6]])


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_static_argnums_traces_once_per_value():
    f = cr.jit(lambda x, n: cnp.sum(x ** n), static_argnums=1)
    assert [f(X3, 2), f(X3, 3), f(X3, 2)] == pytest.approx([np.sum(X3 ** 2), np.sum(X3 ** 3), np.sum(X3 ** 2)])
    assert len(f._by_static) == 2  # one trace per static value, the third call replayed the first
    branch = cr.jit(lambda x, flag: cnp.sin(x) if flag else cnp.cos(x), static_argnums=(1,))
    np.testing.assert_allclose(branch(X3, True), np.sin(X3))
    np.testing.assert_allclose(branch(X3, False), np.cos(X3))


def test_static_argnames_also_cover_the_position_and_defaults():
    f = cr.jit(lambda x, n=1: cnp.sum(x) * n, static_argnames="n")
    assert f(X3, n=2) == pytest.approx(2 * X3.sum())
    assert f(X3, 5) == pytest.approx(5 * X3.sum())  # passed by position: static too, as in JAX
    assert f(X3) == pytest.approx(X3.sum())  # not passed: the default
    assert cr.jit(lambda x, n: x * n, static_argnums=-1)(X3, 3).tolist() == (X3 * 3).tolist()


def test_decorator_form_and_dynamic_keywords():
    @cr.jit(static_argnames=("m",))
    def scaled(x, m, *, shift):
        return x * m + shift

    np.testing.assert_allclose(scaled(X3, m=4, shift=1.0), X3 * 4 + 1.0)
    np.testing.assert_allclose(scaled(X3, 5, shift=np.ones(3)), X3 * 5 + 1.0)
    np.testing.assert_allclose(cr.jit(lambda x, *, k: x * k)(X3, k=2.0), X3 * 2.0)
    partial = functools.partial(cr.jit, static_argnums=1)(lambda x, n: x ** n)
    np.testing.assert_allclose(partial(X3, 3), X3 ** 3)


def test_unhashable_static_value_raises_as_jax():
    f = cr.jit(lambda x, n: x * len(n), static_argnums=1)
    with pytest.raises(ValueError, match="static argument 1 is not hashable"):
        f(X3, [1, 2])


def test_arrays_of_another_shape_dtype_or_int_value_are_traced_again():
    f = cr.jit(lambda x: cnp.sum(x ** 2, axis=0))
    for x in [X3, A, A.T, X3[:2], X3]:
        np.testing.assert_allclose(f(x), np.sum(x ** 2, axis=0))
    g = cr.jit(lambda x, n: x * n)
    for x, n in [(np.arange(3), 2), (X3, 2), (X3, 3), (np.float32(1.5), 2)]:
        out = g(x, n)
        np.testing.assert_allclose(out, x * n)
        assert out.dtype == np.asarray(x * n).dtype
    h = cr.jit(lambda x: (x * x).sum())  # Tensors of another shape too: a trace of their own
    for x in (X3, A, X3):
        assert float(h(cr.Tensor(x, requires_grad=True))) == pytest.approx(float((x * x).sum()))


def test_grad_of_jit_with_statics():
    f = cr.jit(lambda x, n: cnp.sum(x ** n), static_argnums=1)
    np.testing.assert_allclose(cr.grad(f)(X3, 3), 3 * X3 ** 2)
    np.testing.assert_allclose(cr.grad(f)(X3, 2), 2 * X3)
    np.testing.assert_allclose(cr.grad(f)(A, 2), 2 * A)


@pytest.mark.oracle
def test_jit_spellings_match_jax():
    jax = _jax()
    jnp = jax.numpy

    def program(np_, x, n, *, scale):
        return np_.sum(np_.sin(x) ** n * scale)

    ours = cr.jit(functools.partial(program, cnp), static_argnums=1)
    theirs = jax.jit(functools.partial(program, jnp), static_argnums=1)
    for x, n, scale in [(X3, 2, 1.0), (A, 3, 0.5), (X3, 3, 2.0), (A.T, 2, np.ones(2)), (X3, 2, 3.0)]:
        np.testing.assert_allclose(ours(x, n, scale=scale), theirs(x, n, scale=scale), rtol=1e-12)
        np.testing.assert_allclose(cr.grad(ours)(x, n, scale=scale), jax.grad(theirs)(x, n, scale=scale), rtol=1e-12)
