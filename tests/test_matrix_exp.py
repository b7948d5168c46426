"""matrix_exp: values (Padé scaling and squaring, per matrix of a stack) and derivatives to second order in
both modes, against finite differences and PyTorch 2.13; its three spellings; what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

RNG = np.random.default_rng(3)


def _v(x):
    return x.numpy() if isinstance(x, cr.Tensor) else np.asarray(x)


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")


def test_spellings_are_one_function():
    a = RNG.normal(size=(3, 3))
    want = cr.matrix_exp(a)
    assert cr.linalg.matrix_exp is cr.matrix_exp
    np.testing.assert_array_equal(cr.Tensor(a).matrix_exp().numpy(), want)


def test_known_values():
    nilpotent = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(_v(cr.matrix_exp(nilpotent)), [[1, 1, 0.5], [0, 1, 1], [0, 0, 1]], atol=1e-15)
    diag = np.diag([1.0, -2.0, 30.0])  # the norm needs several squarings
    np.testing.assert_allclose(_v(cr.matrix_exp(diag)), np.diag(np.exp([1.0, -2.0, 30.0])), rtol=1e-13)
    np.testing.assert_allclose(_v(cr.matrix_exp(np.zeros((2, 2)))), np.eye(2), rtol=0, atol=1e-15)
    assert cr.matrix_exp(np.zeros((0, 3, 3))).shape == (0, 3, 3)


def test_each_matrix_of_a_stack_is_scaled_by_itself():
    """A small matrix stacked with a large one gives the value it gives alone (bit for bit)."""
    small, large = RNG.normal(size=(3, 3)) * 0.01, RNG.normal(size=(3, 3)) * 50
    stacked = _v(cr.matrix_exp(np.stack([small, large])))
    np.testing.assert_array_equal(stacked[0], _v(cr.matrix_exp(small)))
    np.testing.assert_array_equal(stacked[1], _v(cr.matrix_exp(large)))


def test_integers_become_floats_and_nonsquare_is_refused():
    assert cr.matrix_exp(np.eye(2, dtype=np.int64)).dtype == np.float64
    with pytest.raises(np.linalg.LinAlgError, match=r"matrix_exp: needs square matrices .* got shape \(2, 3\)"):
        cr.matrix_exp(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="matrix_exp: needs square"):
        cr.Tensor(np.ones(3)).matrix_exp()


@pytest.mark.parametrize("shape, scale", [((1, 1), 1.0), ((3, 3), 0.5), ((2, 3, 3), 3.0), ((2, 1, 4, 4), 6.0)])
def test_gradcheck_second_order_both_modes(shape, scale):
    assert cr.gradcheck(cr.matrix_exp, RNG.normal(size=shape) * scale, order=2, rtol=1e-4)


def test_gradcheck_complex_and_third_order():
    a = RNG.normal(size=(2, 2)) + 1j * RNG.normal(size=(2, 2))
    assert cr.gradcheck(cr.matrix_exp, a, order=2)
    assert cr.gradcheck(lambda x: cr.matrix_exp(x).sum(), RNG.normal(size=(2, 2)), order=3)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_match_pytorch(dtype):
    torch = _torch()
    for scale in (1e-3, 0.3, 2.0, 20.0):
        a = (RNG.normal(size=(3, 4, 4)) * scale).astype(dtype)
        ours = _v(cr.matrix_exp(a))
        assert ours.dtype == dtype
        want = torch.linalg.matrix_exp(torch.tensor(a)).numpy()
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(ours, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.oracle
def test_complex_values_match_pytorch_and_gradient_is_its_conjugate():
    torch = _torch()
    a = RNG.normal(size=(2, 3, 3)) + 1j * RNG.normal(size=(2, 3, 3))
    w = RNG.normal(size=a.shape) + 1j * RNG.normal(size=a.shape)
    np.testing.assert_allclose(_v(cr.matrix_exp(a)), torch.linalg.matrix_exp(torch.tensor(a)).numpy(),
                               rtol=1e-12, atol=1e-12)
    ta = torch.tensor(a, requires_grad=True)
    (torch.linalg.matrix_exp(ta) * torch.tensor(w)).real.sum().backward()
    ours = cr.grad(lambda x: np.real(np.sum(cr.matrix_exp(x) * w)))(a)
    np.testing.assert_allclose(np.conj(ours), ta.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.oracle
def test_first_and_second_order_gradients_match_pytorch():
    torch = _torch()
    a = RNG.normal(size=(2, 3, 3)) * 1.5
    w = RNG.normal(size=a.shape)
    x = cr.Tensor(a, requires_grad=True)
    (g,) = cr.autograd.grad((cr.matrix_exp(x) ** 2 * w).sum(), [x], create_graph=True)
    (gg,) = cr.autograd.grad((g * g).sum(), [x])
    t = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.linalg.matrix_exp(t) ** 2 * torch.tensor(w)).sum(), [t], create_graph=True)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), [t])
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.oracle
def test_forward_mode_matches_pytorch():
    torch = _torch()
    from torch.func import jvp

    a, t = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    _, ours = cr.jvp(cr.matrix_exp, (a,), (t,))
    _, want = jvp(torch.linalg.matrix_exp, (torch.tensor(a),), (torch.tensor(t),))
    np.testing.assert_allclose(np.asarray(ours), want.numpy(), rtol=1e-11, atol=1e-12)


def test_vmap_equals_the_loop():
    a = RNG.normal(size=(3, 2, 2))
    batched = cr.vmap(cr.grad(lambda x: cr.matrix_exp(x).sum()))(a)
    looped = np.stack([cr.grad(lambda x: cr.matrix_exp(x).sum())(m) for m in a])
    np.testing.assert_allclose(batched, looped, rtol=1e-12)
