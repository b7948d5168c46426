"""Found by running HIPS autograd's own test suites through an adapter onto chainrule: each test is one
difference that suite exposed, checked here against finite differences of the function chainrule computes
(and against autograd, JAX or PyTorch where they compute the same function)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

RNG = np.random.default_rng(7)


def _fd_directional(f, x, v, eps=1e-6):
    return (np.sum(f(x + eps * v / 2)) - np.sum(f(x - eps * v / 2))) / eps


def _spd(n):
    m = RNG.normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


# NumPy's eigh, eigvalsh and cholesky read one triangle of the input; through NumPy's spelling the derivatives are
# those of that function: for an input that is not symmetric, finite differences move the result only through the
# triangle read. The gradient used to be the symmetric part, which is not the derivative there (chainrule.linalg's
# spelling is PyTorch's and JAX's, the symmetric part: tests/test_torch_opinfo_suite.py).
@pytest.mark.parametrize("name,fn,make", [
    ("eigvalsh", lambda a: np.linalg.eigvalsh(a) * np.arange(1.0, 5.0), lambda: RNG.normal(size=(4, 4))),
    ("eigvalsh_U", lambda a: np.linalg.eigvalsh(a, "U") * np.arange(1.0, 5.0), lambda: RNG.normal(size=(4, 4))),
    ("eigh_vectors", lambda a: np.linalg.eigh(a)[1] ** 2 * np.arange(16.0).reshape(4, 4),
     lambda: RNG.normal(size=(4, 4))),
    ("eigh_U", lambda a: np.linalg.eigh(a, UPLO="U")[0] ** 3, lambda: RNG.normal(size=(2, 4, 4))),
    ("cholesky", lambda a: np.linalg.cholesky(a) * np.arange(16.0).reshape(4, 4),
     lambda: _spd(4) + np.triu(RNG.normal(size=(4, 4)), 1)),
    ("cholesky_upper", lambda a: np.linalg.cholesky(a, upper=True) ** 2,
     lambda: _spd(4) + np.triu(RNG.normal(size=(4, 4)), 1)),
])
def test_triangle_reading_decompositions_match_finite_differences_off_symmetric(name, fn, make):
    a = make()
    assert cr.gradcheck(fn, a, order=2)
    g = cr.grad(lambda x: np.sum(fn(x)))(a)
    v = RNG.normal(size=a.shape)
    np.testing.assert_allclose(np.sum(g * v), _fd_directional(fn, a, v), rtol=1e-5, atol=1e-6)


def test_eigh_gradient_lies_on_the_triangle_read():
    a = RNG.normal(size=(3, 3))
    g_low = cr.grad(lambda x: np.linalg.eigh(x)[0][-1])(a)
    g_up = cr.grad(lambda x: np.linalg.eigh(x, "U")[0][-1])(a)
    assert np.all(np.triu(g_low, 1) == 0) and np.all(np.tril(g_up, -1) == 0)
    # on a matrix built symmetric, the gradient of what it was built from is the symmetric convention's
    b = RNG.normal(size=(3, 3))
    gb = cr.grad(lambda x: np.linalg.eigh(x + x.T)[0][-1])(b)
    v = np.linalg.eigh(b + b.T)[1][:, -1]
    np.testing.assert_allclose(gb, 2 * np.outer(v, v), atol=1e-12)


@pytest.mark.oracle
def test_eigh_matches_autograd_off_symmetric():
    ag = pytest.importorskip("autograd", reason="HIPS autograd is not installed")
    anp = pytest.importorskip("autograd.numpy")
    a = RNG.normal(size=(4, 4))
    w = np.arange(16.0).reshape(4, 4)
    ours = cr.grad(lambda x: np.sum(np.linalg.eigh(x)[1] ** 2 * w) + np.sum(np.linalg.eigh(x)[0] ** 2))(a)
    theirs = ag.grad(lambda x: anp.sum(anp.linalg.eigh(x)[1] ** 2 * w) + anp.sum(anp.linalg.eigh(x)[0] ** 2))(a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)


def test_cholesky_upper_reads_the_upper_triangle_as_numpy():
    a = np.array([[4.0, 1.0], [-50.0, 3.0]])  # lower triangle not positive definite, upper triangle is
    np.testing.assert_allclose(np.linalg.cholesky(cr.Tensor(a), upper=True).data, np.linalg.cholesky(a, upper=True))
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(cr.Tensor(a.T), upper=True)


def test_integer_casts_of_a_traced_tensor_give_indices():
    def fun(w):
        rows = np.int64(w[:, -1] * 0 + np.arange(3.0))  # an integer copy: used as indices, no derivative
        assert rows.dtype == np.int64
        return np.sum(w[:, :-1][rows] ** 2) + np.sum(np.asarray(w, dtype=bool))

    w = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(cr.grad(fun)(w), np.concatenate([2 * w[:, :-1], np.zeros((3, 1))], axis=1))
    with pytest.raises(TypeError, match="converted to a NumPy array"):
        cr.grad(lambda x: np.sum(np.asarray(x, dtype=np.float32)))(w)


def test_cnp_linalg_reads_lists_of_tensors():
    import chainrule.numpy as cnp

    assert cr.grad(lambda x: cnp.linalg.norm([x, x + 2]))(0.0) == 1.0
    assert cr.grad(lambda x: cnp.linalg.norm((x, x + 2)))(0.0) == 1.0
    assert cr.grad(lambda x: cnp.linalg.det([[x, 1.0], [2.0, x]]))(3.0) == 6.0
    assert cnp.fft.fftfreq(4).tolist() == [0.0, 0.25, -0.5, -0.25]


# scipy.special functions HIPS autograd differentiates and chainrule lacked: j0, j1, y0, y1, jn, yn, jv, yv, i0, i1,
# i0e, i1e, iv, ive, gammainc, gammaincc, rgamma (their derivatives: op_cases.py, by finite differences)
@pytest.mark.oracle
@pytest.mark.parametrize("name,args", [
    ("j0", ()), ("j1", ()), ("y0", ()), ("y1", ()), ("i0", ()), ("i1", ()), ("rgamma", ()),
    ("jn", (2,)), ("yn", (2,)), ("iv", (1.5,)), ("ive", (2.5,)), ("gammainc", (1.5,)), ("gammaincc", (2.0,)),
])
def test_special_functions_match_autograd(name, args):
    ag = pytest.importorskip("autograd", reason="HIPS autograd is not installed")
    asp = pytest.importorskip("autograd.scipy.special")
    import scipy.special as sc

    from chainrule import special

    x = np.array([0.7, 1.9, 3.4])
    ours = cr.elementwise_grad(lambda z: getattr(special, name)(*args, z))(x)
    theirs = ag.elementwise_grad(lambda z: getattr(asp, name)(*args, z))(x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(getattr(special, name)(*args, cr.Tensor(x)).data, getattr(sc, name)(*args, x))
    assert cr.grad(lambda z: np.sum(getattr(sc, name)(*args, z)))(x).shape == (3,)  # SciPy's ufunc is traced too


def test_special_orders_are_constants():
    from chainrule import special

    with pytest.raises(TypeError, match="jn: argument 0 is not differentiable"):
        cr.grad(lambda n: special.jn(n, 1.0))(2.0)


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (1, False)])
def test_logsumexp_weights_of_both_signs(axis, keepdims):
    import scipy.special as sc

    from chainrule import special

    a = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    b = np.array([1.0, -1.0, 0.7])
    value, sign = special.logsumexp(cr.Tensor(a), axis=axis, b=b, keepdims=keepdims, return_sign=True)
    want_value, want_sign = sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(value.data, want_value)
    np.testing.assert_array_equal(sign, want_sign)
    with np.errstate(invalid="ignore"):  # SciPy: NaN for a negative sum without return_sign
        np.testing.assert_array_equal(np.isnan(special.logsumexp(cr.Tensor(a), axis=axis, b=b, keepdims=keepdims).data),
                                      np.isnan(sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims)))
    assert cr.gradcheck(lambda x, w: special.logsumexp(x, axis=axis, b=w, keepdims=keepdims, return_sign=True)[0], a, b)


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("widths", [(2, 0), (1, 3), (5, 4)])
def test_pad_odd_reflection_values(mode, widths):
    # odd reflection pads 2 * edge - mirrored entry; the padded entries were taken as indices (-1 wrapped round)
    x = np.array([1.0, 5.0, 2.0])
    got = np.pad(cr.Tensor(x), widths, mode=mode, reflect_type="odd")
    np.testing.assert_allclose(got.data, np.pad(x, widths, mode=mode, reflect_type="odd"))
    assert cr.gradcheck(lambda a: np.pad(a, widths, mode=mode, reflect_type="odd") ** 2, x)
    with pytest.raises(ValueError, match="reflect_type"):
        np.pad(cr.Tensor(x), 1, mode="edge", reflect_type="odd")


@pytest.mark.oracle
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh_matches_autograd(uplo):
    # Hermitian eigh had no complex rule (it raised); autograd's test_eigvalh_*_complex differentiate it
    ag = pytest.importorskip("autograd", reason="HIPS autograd is not installed")
    anp = pytest.importorskip("autograd.numpy")
    a = RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))
    w = RNG.normal(size=(4, 4))

    def ours(x):
        vals, vecs = np.linalg.eigh(x, uplo)
        return np.sum(np.abs(vecs) ** 2 * w) + np.sum(vals ** 3)

    def theirs(x):
        vals, vecs = anp.linalg.eigh(x, uplo)
        return anp.sum(anp.abs(vecs) ** 2 * w) + anp.sum(vals ** 3)

    np.testing.assert_allclose(cr.grad(ours)(a), ag.grad(theirs)(a), rtol=1e-8, atol=1e-10)
    assert cr.gradcheck(lambda x: (lambda r: (r[0], np.abs(r[1])))(np.linalg.eigh(x, uplo)), a)


@pytest.mark.oracle
@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 5), (2, 4, 3)])
def test_complex_svd_matches_autograd(shape):
    # svd had no complex rule (it raised); autograd's test_svd_*_complex differentiate it through |u|, s, |v|
    ag = pytest.importorskip("autograd", reason="HIPS autograd is not installed")
    anp = pytest.importorskip("autograd.numpy")
    a = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
    k = min(shape[-2:])
    w1, w2 = RNG.normal(size=shape[:-1] + (k,)), RNG.normal(size=shape[:-2] + (k, shape[-1]))

    def loss(mod, x):
        u, s, vh = mod.linalg.svd(x, full_matrices=False)
        return mod.sum(mod.abs(u) ** 2 * w1) + mod.sum(s ** 3) + mod.sum(mod.abs(vh) ** 3 * w2)

    np.testing.assert_allclose(cr.grad(lambda x: loss(np, x))(a), ag.grad(lambda x: loss(anp, x))(a), rtol=1e-8,
                               atol=1e-10)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_hfft_and_ihfft(norm):
    x = RNG.normal(size=(3, 5))
    z = x + 1j * RNG.normal(size=(3, 5))
    np.testing.assert_allclose(np.fft.hfft(cr.Tensor(z), 7, 0, norm).data, np.fft.hfft(z, 7, 0, norm))
    np.testing.assert_allclose(np.fft.ihfft(cr.Tensor(x), None, -1, norm).data, np.fft.ihfft(x, None, -1, norm))
    assert cr.gradcheck(lambda t: np.fft.hfft(t, 6, -1, norm), z)
    assert cr.gradcheck(lambda t: np.fft.ihfft(t, 4, 0, norm), x)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_modes(mode):
    x = RNG.normal(size=(3, 4))
    for axis, indices in [(None, [0, 13, -20]), (1, [[1, 9], [-1, -20]])]:
        np.testing.assert_allclose(np.take(cr.Tensor(x), indices, axis=axis, mode=mode).data,
                                   np.take(x, indices, axis=axis, mode=mode))
        assert cr.gradcheck(lambda t: np.take(t, indices, axis=axis, mode=mode), x)
    with pytest.raises(ValueError, match="mode must be"):
        np.take(cr.Tensor(x), [0], mode="nearest")
