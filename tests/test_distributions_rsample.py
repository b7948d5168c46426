"""Beta and Dirichlet ``rsample``: normalised Gamma draws differentiable through implicit reparameterisation
gradients. The Gamma gradient equals PyTorch's ``_standard_gamma_grad`` and the CDF's own derivative; Beta and
Dirichlet gradients equal PyTorch autograd's for the same Gamma draws; averaged over many draws they are the
gradients of the known moments."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import distributions as D
from chainrule.core import defaults
from chainrule.distributions.gamma_draws import standard_gamma_grad

torch = pytest.importorskip("torch")
special = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.oracle

ALPHAS = np.array([0.03, 0.2, 0.7, 1.0, 2.5, 7.9, 8.5, 15.0, 60.0, 400.0])
XS = np.array([1e-4, 0.05, 0.5, 0.79, 0.81, 1.5, 4.0, 8.0, 14.0, 16.0, 55.0, 63.0, 380.0, 420.0, 500.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_gamma_gradient_is_pytorchs_standard_gamma_grad_in_every_branch(dtype):
    a, x = (v.astype(dtype) for v in np.meshgrid(ALPHAS, XS))
    want = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    got = standard_gamma_grad(a, x)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_the_gamma_gradient_is_minus_the_cdfs_alpha_derivative_over_the_density():
    rng = np.random.default_rng(0)
    a = np.repeat(np.array([0.3, 1.0, 3.0, 7.0, 12.0, 50.0]), 200)
    x = rng.standard_gamma(a)
    h = 1e-6 * a
    dcdf = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(x) - x - special.gammaln(a))
    exact = -dcdf / pdf
    # PyTorch's approximation is good to about 2e-3 relative where the density is not negligible
    keep = pdf > 1e-6
    np.testing.assert_allclose(standard_gamma_grad(a, x)[keep], exact[keep], rtol=5e-3, atol=1e-6)


class _Gamma(torch.autograd.Function):
    """PyTorch's ``_standard_gamma`` backward, for draws given from outside."""

    @staticmethod
    def forward(ctx, alpha, draws):
        ctx.save_for_backward(alpha, draws)
        return draws.clone()

    @staticmethod
    def backward(ctx, g):
        alpha, draws = ctx.saved_tensors
        return g * torch._standard_gamma_grad(alpha, draws), None


def _gamma_draws(seed, alpha):
    """The Gamma draws rsample takes after manual_seed(seed): one standard_gamma call of the default generator."""
    cr.manual_seed(seed)
    return np.maximum(defaults.generator().standard_gamma(alpha), np.finfo(np.float64).tiny)


def test_dirichlet_rsample_gradient_is_pytorch_autograds_for_the_same_gamma_draws():
    alpha = np.array([[0.4, 2.0, 5.0], [1.5, 0.9, 12.0]])
    w = np.random.default_rng(1).normal(size=(6, 2, 3))
    c = cr.tensor(alpha, requires_grad=True)
    cr.manual_seed(3)
    x = D.Dirichlet(c).rsample((6,))
    (cr.sin(x) * w).sum().backward()
    draws = torch.tensor(_gamma_draws(3, np.broadcast_to(alpha, (6, 2, 3))))
    t = torch.tensor(alpha, requires_grad=True)
    g = _Gamma.apply(t.expand(6, 2, 3), draws)
    tx = g / g.sum(-1, keepdim=True)
    np.testing.assert_allclose(x.detach().numpy(), tx.detach().numpy(), rtol=1e-14)
    (torch.sin(tx) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=1e-10)


def test_beta_rsample_gradient_is_pytorch_autograds_for_the_same_gamma_draws():
    a, b = np.array([0.5, 2.0, 9.0]), np.array([3.0, 0.8, 20.0])
    ca, cb = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
    cr.manual_seed(5)
    x = D.Beta(ca, cb).rsample((4,))
    assert x.shape == (4, 3)
    (x**2).sum().backward()
    draws = torch.tensor(_gamma_draws(5, np.broadcast_to(np.stack([a, b], -1), (4, 3, 2))))
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    g = _Gamma.apply(torch.stack([ta, tb], -1).expand(4, 3, 2), draws)
    tx = (g / g.sum(-1, keepdim=True))[..., 0]
    np.testing.assert_allclose(x.detach().numpy(), tx.detach().numpy(), rtol=1e-14)
    (tx**2).sum().backward()
    np.testing.assert_allclose(ca.grad.numpy(), ta.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(cb.grad.numpy(), tb.grad.numpy(), rtol=1e-10)


def _mean_and_error(values):
    """The mean over axis 0 of per-draw values, and its standard error from 20 chunks."""
    chunks = np.stack([c.mean(0) for c in np.array_split(values, 20)])
    return chunks.mean(0), chunks.std(0, ddof=1) / np.sqrt(20)


def test_beta_rsample_gradients_average_to_the_gradients_of_its_moments():
    a, b, n = np.array([0.6, 2.0, 7.0]), np.array([1.5, 0.7, 3.0]), 40000
    ca = cr.tensor(np.broadcast_to(a, (n, 3)).copy(), requires_grad=True)  # one leaf entry per draw
    cb = cr.tensor(np.broadcast_to(b, (n, 3)).copy(), requires_grad=True)
    cr.manual_seed(0)
    x = D.Beta(ca, cb).rsample()
    (x + x**2).sum().backward()
    s = a + b  # d/da, d/db of E[X] + E[X^2] = a / s + a (a + 1) / (s (s + 1))
    mean_a = b / s**2
    mean_b = -a / s**2
    sq = a * (a + 1) / (s * (s + 1))
    sq_a = (2 * a + 1) / (s * (s + 1)) - sq * (2 * s + 1) / (s * (s + 1))
    sq_b = -sq * (2 * s + 1) / (s * (s + 1))
    for got, want in ((ca.grad.numpy(), mean_a + sq_a), (cb.grad.numpy(), mean_b + sq_b)):
        mean, err = _mean_and_error(got)
        assert np.all(np.abs(mean - want) < 5 * err + 1e-4), (mean, want, err)


def test_dirichlet_rsample_gradients_average_to_the_gradient_of_its_mean():
    alpha, n = np.array([0.5, 1.5, 4.0]), 40000
    c = cr.tensor(np.broadcast_to(alpha, (n, 3)).copy(), requires_grad=True)
    w = np.array([1.0, -2.0, 0.5])
    cr.manual_seed(1)
    x = D.Dirichlet(c).rsample()
    (x * w).sum().backward()
    s = alpha.sum()  # d/dalpha_j of sum_i w_i alpha_i / s = w_j / s - (w . alpha) / s^2
    want = w / s - (w @ alpha) / s**2
    mean, err = _mean_and_error(c.grad.numpy())
    assert np.all(np.abs(mean - want) < 5 * err + 1e-4), (mean, want, err)


def test_rsample_draws_follow_the_distribution_and_stay_in_its_support():
    cr.manual_seed(2)
    x = D.Beta(cr.tensor(2.0), cr.tensor(5.0)).rsample((50000,)).numpy()
    assert np.all((x > 0) & (x < 1))
    assert abs(x.mean() - 2 / 7) < 4 * np.sqrt(10 / (49 * 8) / 50000)
    y = D.Dirichlet(cr.tensor([0.1, 0.1, 0.1])).rsample((1000,)).numpy()  # tiny concentrations: draws near 0
    assert np.all(y > 0) and np.allclose(y.sum(-1), 1)
    assert y.dtype == np.float32


def test_a_second_derivative_through_rsample_is_refused_naming_it():
    c = cr.tensor([1.0, 2.0], requires_grad=True)
    cr.manual_seed(0)
    x = D.Dirichlet(c).rsample()
    with pytest.raises(NotImplementedError, match="standard_gamma_rsample: its derivative rules are exact at first"):
        cr.autograd.grad(x[0], [c], create_graph=True)
