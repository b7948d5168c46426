"""Gathers with a batched index under vmap (a batch of index arrays, the values batched or not): JAX's ``x[i]``,
``jnp.take``, ``take_along_axis``, and torch.func's ``x.gather``, ``torch.gather``, ``index_select``, ``x[i]``,
with the gradients through vmap, against JAX and torch.func as oracles."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule import func

pytestmark = pytest.mark.oracle
RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 4, 5))  # a batch of 3 examples of shape (4, 5)
I1 = RNG.integers(0, 4, size=(3, 6))  # a batch of 3 index vectors into axis 0
I2 = RNG.integers(0, 4, size=(3, 2, 5))  # a batch of gather indices along axis 0 (shape (2, 5) each)
I3 = RNG.integers(0, 5, size=(3, 4, 3))  # ... along axis 1 (shape (4, 3) each)
J1 = RNG.integers(0, 5, size=(3, 6))


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


JAX_CASES = {  # name: (chainrule's f, JAX's f given jnp, the arguments' batch axes, the arguments)
    "x[i]": (lambda x, i: x[i], lambda jnp: lambda x, i: x[i], (0, 0), (X, I1)),
    "x[i] x unbatched": (lambda x, i: x[i], lambda jnp: lambda x, i: x[i], (None, 0), (X[0], I1)),
    "x[i] i unbatched": (lambda x, i: x[i], lambda jnp: lambda x, i: x[i], (0, None), (X, I1[0])),
    "x[:, j]": (lambda x, j: x[:, j], lambda jnp: lambda x, j: x[:, j], (0, 0), (X, J1)),
    "x[i, j]": (lambda x, i, j: x[i, j], lambda jnp: lambda x, i, j: x[i, j], (0, 0, 0), (X, I1, J1)),
    "x[i, j] x unbatched": (lambda x, i, j: x[i, j], lambda jnp: lambda x, i, j: x[i, j], (None, 0, 0),
                            (X[0], I1, J1)),
    "x[i 2-d]": (lambda x, i: x[i], lambda jnp: lambda x, i: x[i], (0, 0), (X, I1.reshape(3, 2, 3))),
    "take": (lambda x, i: cnp.take(x, i), lambda jnp: lambda x, i: jnp.take(x, i), (0, 0), (X, I1)),
    "take axis 1": (lambda x, j: cnp.take(x, j, axis=1), lambda jnp: lambda x, j: jnp.take(x, j, axis=1), (0, 0),
                    (X, J1)),
    "take x unbatched": (lambda x, i: cnp.take(x, i, axis=0), lambda jnp: lambda x, i: jnp.take(x, i, axis=0),
                         (None, 0), (X[0], I1)),
    "take_along_axis": (lambda x, i: cnp.take_along_axis(x, i, 0),
                        lambda jnp: lambda x, i: jnp.take_along_axis(x, i, 0), (0, 0), (X, I2)),
    "take_along_axis x unbatched": (lambda x, i: cnp.take_along_axis(x, i, 1),
                                    lambda jnp: lambda x, i: jnp.take_along_axis(x, i, 1), (None, 0), (X[0], I3)),
}


@pytest.mark.parametrize("name", list(JAX_CASES))
def test_batched_gathers_and_their_gradients_equal_jaxs(name):
    jax, jnp = _jax()
    f, jf, axes, args = JAX_CASES[name]
    jf, jargs = jf(jnp), [jnp.asarray(a) for a in args]  # (a NumPy array indexed by a tracer fails in JAX)
    np.testing.assert_allclose(cr.vmap(f, in_axes=axes)(*args), jax.vmap(jf, in_axes=axes)(*jargs), rtol=1e-14)
    w = RNG.normal(size=np.shape(jax.vmap(jf, in_axes=axes)(*jargs)))

    def loss(f, vmap, total):
        return lambda x, *idx: total(vmap(f, in_axes=axes)(x, *idx) ** 2 * w)

    got = cr.grad(loss(f, cr.vmap, cnp.sum))(*args)
    want = jax.grad(loss(jf, jax.vmap, jnp.sum))(*jargs)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if axes[0] == 0:  # per-example gradients: grad inside vmap
        def one(f, grad, total):
            return lambda x, *idx: grad(lambda x: total(f(x, *idx) ** 2))(x)
        np.testing.assert_allclose(cr.vmap(one(f, cr.grad, cnp.sum), in_axes=axes)(*args),
                                   jax.vmap(one(jf, jax.grad, jnp.sum), in_axes=axes)(*jargs), rtol=1e-12)


TORCH_CASES = {  # name: (f given the module (chainrule or torch), in_dims, the arguments)
    "x.gather(0, i)": (lambda t: lambda x, i: x.gather(0, i), (0, 0), (X, I2)),
    "torch.gather(x, 1, i)": (lambda t: lambda x, i: t.gather(x, 1, i), (0, 0), (X, I3)),
    "x.gather(1, i) x unbatched": (lambda t: lambda x, i: x.gather(1, i), (None, 0), (X[0], I3)),
    "x.gather(0, i) i unbatched": (lambda t: lambda x, i: x.gather(0, i), (0, None), (X, I2[0])),
    "x.gather(0, i) 1-d": (lambda t: lambda x, i: x[:, 0].gather(0, i), (0, 0), (X, I1)),
    "x.gather(0, i) 0-d index": (lambda t: lambda x, i: x[:, 0].gather(0, i[0]), (0, 0), (X, I1)),
    "index_select": (lambda t: lambda x, i: t.index_select(x, 0, i), (0, 0), (X, I1)),
    "index_select x unbatched": (lambda t: lambda x, i: x.index_select(1, i), (None, 0), (X[0], J1)),
    "x[i]": (lambda t: lambda x, i: x[i], (0, 0), (X, I1)),
    "x[i] x unbatched": (lambda t: lambda x, i: x[i], (None, 0), (X[0], I1)),
}


@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_batched_gathers_and_their_gradients_equal_torch_funcs(name):
    torch = pytest.importorskip("torch")
    make, dims, (x, i) = TORCH_CASES[name]
    f, tf = make(cr), make(torch)
    cx, ci, tx, ti = cr.tensor(x), cr.tensor(i), torch.tensor(x), torch.tensor(i)
    want = torch.func.vmap(tf, in_dims=dims)(tx, ti)
    np.testing.assert_allclose(func.vmap(f, in_dims=dims)(cx, ci).numpy(), want.numpy(), rtol=1e-14)
    w = RNG.normal(size=tuple(want.shape))
    got = func.grad(lambda x: (func.vmap(f, in_dims=dims)(x, ci) ** 2 * cr.tensor(w)).sum())(cx)
    want = torch.func.grad(lambda x: (torch.func.vmap(tf, in_dims=dims)(x, ti) ** 2 * torch.tensor(w)).sum())(tx)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_a_batched_gather_index_out_of_range_or_negative_is_refused_naming_it():
    x, i = cr.tensor(X), cr.tensor(I2.copy())
    i._data[1, 0, 0] = -1  # PyTorch refuses a negative gather index (NumPy would count it from the end)
    with pytest.raises(IndexError, match="gather: index -1 is out of range for dim 0 of size 4"):
        func.vmap(lambda x, i: x.gather(0, i))(x, i)
    i._data[1, 0, 0] = 4
    with pytest.raises(IndexError, match="gather: index 4 is out of range"):
        func.vmap(lambda x, i: x.gather(0, i), in_dims=(None, 0))(x[0], i)
    with pytest.raises(TypeError, match="gather: index must hold integers"):
        func.vmap(lambda x, i: x.gather(0, i))(x, cr.tensor(I2 * 1.0))


def test_nested_vmaps_of_gather_equal_torch_funcs():
    torch = pytest.importorskip("torch")
    x, i = RNG.normal(size=(2, 3, 4, 5)), RNG.integers(0, 4, size=(2, 3, 2, 5))
    f = lambda x, i: x.gather(0, i)  # noqa: E731
    for dims, xs in (((0, 0), x), ((None, 0), x[:, 0])):
        got = func.vmap(func.vmap(f, in_dims=dims))(cr.tensor(xs), cr.tensor(i))
        want = torch.func.vmap(torch.func.vmap(f, in_dims=dims))(torch.tensor(xs), torch.tensor(i))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
