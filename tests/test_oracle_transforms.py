"""Function transforms against PyTorch's ``torch.func`` on composite functions written as plain
NumPy code: an MLP loss, a Gaussian log-likelihood, a Lennard-Jones potential, and the
tutorials' functions. Gradients, Jacobians (reverse and forward) and Hessians must agree.
Needs torch (the ``oracle`` marker)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")
tf = pytest.importorskip("torch.func")

pytestmark = pytest.mark.oracle

TOL = dict(rtol=1e-9, atol=1e-11)


def t64(x):
    return torch.tensor(np.asarray(x, dtype=np.float64))


def close(ours, theirs, what):
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert np.shape(ours) == theirs.shape, f"{what}: shape {np.shape(ours)}, torch {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, **TOL, err_msg=what)


# -- the functions, once for NumPy (chainrule) and once for torch -----------------------------------------------
RNG = np.random.default_rng(7)
X = RNG.normal(size=(5, 3))
LABELS = np.array([0, 1, 1, 0, 1])
SIZES = [(4, 3), (4,), (2, 4), (2,)]
THETA = RNG.normal(size=sum(int(np.prod(s)) for s in SIZES)) * 0.7


def unpack(theta, xp):
    parts, k = [], 0
    for s in SIZES:
        n = int(np.prod(s))
        parts.append(theta[k:k + n].reshape(s))
        k += n
    return parts


def mlp_logits_np(theta, x=X):
    w1, b1, w2, b2 = unpack(theta, np)
    h = np.tanh(x @ w1.T + b1)
    return h @ w2.T + b2


def mlp_loss_np(theta):
    logits = mlp_logits_np(theta)
    m = np.max(logits, axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(LABELS)), LABELS])


def mlp_logits_t(theta, x=None):
    x = t64(X) if x is None else x
    w1, b1, w2, b2 = unpack(theta, torch)
    return torch.tanh(x @ w1.T + b1) @ w2.T + b2


def mlp_loss_t(theta):
    logp = torch.log_softmax(mlp_logits_t(theta), dim=1)
    return -logp[torch.arange(len(LABELS)), torch.tensor(LABELS)].mean()


DATA = RNG.normal(size=(6, 3))


def gauss_nll_np(mu, a):
    """-log N(DATA | mu, a a^T + I), with a Cholesky factor, a triangular solve and log det."""
    cov = a @ a.T + np.eye(3)
    chol = np.linalg.cholesky(cov)
    z = np.linalg.solve(chol, (DATA - mu).T)
    _, logdet = np.linalg.slogdet(cov)
    return 0.5 * np.sum(z**2) + 0.5 * len(DATA) * logdet + 0.5 * DATA.size * np.log(2 * np.pi)


def gauss_nll_t(mu, a):
    cov = a @ a.T + torch.eye(3, dtype=torch.float64)
    chol = torch.linalg.cholesky(cov)
    z = torch.linalg.solve(chol, (t64(DATA) - mu).T)
    return 0.5 * (z**2).sum() + 0.5 * len(DATA) * torch.linalg.slogdet(cov)[1] + 0.5 * DATA.size * np.log(2 * np.pi)


ATOMS = np.array([[0.0, 0.0, 0.0], [1.1, 0.1, 0.0], [0.2, 1.2, 0.1], [0.9, 1.0, 1.0]])
PAIR_I, PAIR_J = np.triu_indices(len(ATOMS), k=1)


def lennard_jones_np(flat, eps=1.0, sigma=1.0):
    pos = np.reshape(flat, (-1, 3))
    r = np.linalg.norm(pos[PAIR_I] - pos[PAIR_J], axis=1)
    s6 = (sigma / r) ** 6
    return np.sum(4 * eps * (s6**2 - s6))


def lennard_jones_t(flat, eps=1.0, sigma=1.0):
    pos = flat.reshape(-1, 3)
    r = torch.linalg.vector_norm(pos[torch.tensor(PAIR_I)] - pos[torch.tensor(PAIR_J)], dim=1)
    s6 = (sigma / r) ** 6
    return (4 * eps * (s6**2 - s6)).sum()


# -- the suite --------------------------------------------------------------------------------------------------
def test_mlp_loss_gradient_hessian_and_jacobians():
    close(cr.grad(mlp_loss_np)(THETA), tf.grad(mlp_loss_t)(t64(THETA)), "grad")
    close(cr.hessian(mlp_loss_np)(THETA), tf.hessian(mlp_loss_t)(t64(THETA)), "hessian")
    close(cr.jacfwd(cr.grad(mlp_loss_np))(THETA), tf.hessian(mlp_loss_t)(t64(THETA)), "forward-over-reverse hessian")
    close(cr.jacrev(mlp_logits_np)(THETA), tf.jacrev(mlp_logits_t)(t64(THETA)), "jacrev of the logits")
    close(cr.jacfwd(mlp_logits_np)(THETA), tf.jacfwd(mlp_logits_t)(t64(THETA)), "jacfwd of the logits")
    # Jacobian with respect to the inputs, both modes
    ours = cr.jacrev(lambda x: mlp_logits_np(THETA, x))(X)
    close(ours, tf.jacrev(lambda x: mlp_logits_t(t64(THETA), x))(t64(X)), "jacrev wrt inputs")
    close(cr.jacfwd(lambda x: mlp_logits_np(THETA, x))(X), ours, "jacfwd wrt inputs")


def test_mlp_loss_with_a_parameter_dict_keeps_the_structure():
    params = dict(zip(["w1", "b1", "w2", "b2"], unpack(THETA, np), strict=True))

    def loss(p):
        return mlp_loss_np(np.concatenate([np.ravel(p[k]) for k in ("w1", "b1", "w2", "b2")]))

    g = cr.grad(loss)(params)
    assert set(g) == set(params) and all(g[k].shape == params[k].shape for k in params)
    tg = tf.grad(mlp_loss_t)(t64(THETA))
    close(np.concatenate([g[k].ravel() for k in ("w1", "b1", "w2", "b2")]), tg, "grad as a dict")


def test_gaussian_log_likelihood():
    mu, a = RNG.normal(size=3), RNG.normal(size=(3, 3)) * 0.5
    ours = cr.grad(gauss_nll_np, argnums=(0, 1))(mu, a)
    theirs = tf.grad(gauss_nll_t, argnums=(0, 1))(t64(mu), t64(a))
    close(ours[0], theirs[0], "d/dmu")
    close(ours[1], theirs[1], "d/da")
    h = cr.hessian(gauss_nll_np, argnums=1)(mu, a)
    close(h, tf.hessian(gauss_nll_t, argnums=1)(t64(mu), t64(a)), "hessian in a")
    close(cr.hessian(gauss_nll_np)(mu, a), tf.hessian(gauss_nll_t)(t64(mu), t64(a)), "hessian in mu")
    close(cr.jacfwd(cr.grad(gauss_nll_np, argnums=1), argnums=1)(mu, a), h, "forward-over-reverse")
    mixed = cr.jacrev(cr.grad(gauss_nll_np, argnums=0), argnums=1)(mu, a)
    close(mixed, tf.jacrev(tf.grad(gauss_nll_t, argnums=0), argnums=1)(t64(mu), t64(a)), "mixed d2/dmu da")


def test_lennard_jones_forces_and_hessian():
    flat = ATOMS.ravel()
    forces = -cr.grad(lennard_jones_np)(flat)
    close(forces, -tf.grad(lennard_jones_t)(t64(flat)), "forces")
    assert abs(forces.reshape(-1, 3).sum(axis=0)).max() < 1e-10, "forces of an isolated system sum to zero"
    h = cr.hessian(lennard_jones_np)(flat)
    close(h, tf.hessian(lennard_jones_t)(t64(flat)), "hessian")
    close(cr.jacfwd(cr.jacrev(lennard_jones_np))(flat), h, "jacfwd(jacrev)")
    close(cr.jacrev(cr.jacfwd(lennard_jones_np))(flat), h, "jacrev(jacfwd)")
    # third derivative along one direction, forward over reverse over reverse, against torch
    v = np.linspace(-1, 1, flat.size)
    ours = cr.jvp(lambda p: cr.hessian(lennard_jones_np)(p) @ v, (flat,), (v,))[1]
    theirs = tf.jvp(lambda p: tf.hessian(lennard_jones_t)(p) @ t64(v), (t64(flat),), (t64(v),))[1]
    close(ours, theirs, "third derivative along v")


def test_the_seeds_functions():
    # 000: L = (y - (m x + c))**2 at y=1, m=2, x=3, c=4: dL/dx = 36
    loss = lambda y, m, x, c: (y - (m * x + c)) ** 2
    ours = cr.grad(loss, argnums=(0, 1, 2, 3))(1.0, 2.0, 3.0, 4.0)
    theirs = tf.grad(loss, argnums=(0, 1, 2, 3))(*map(t64, (1.0, 2.0, 3.0, 4.0)))
    assert ours[2] == 36.0
    close(np.array(ours), torch.stack(theirs), "seed 000 gradient")
    close(cr.hessian(loss, argnums=(0, 1, 2, 3))(1.0, 2.0, 3.0, 4.0),
          torch.stack([torch.stack(row) for row in tf.hessian(loss, argnums=(0, 1, 2, 3))(
              *map(t64, (1.0, 2.0, 3.0, 4.0)))]), "seed 000 hessian")

    def poly(x):
        return (2 * x**3 + 4 * x**2 - 5 * x) * (3 * x**2 - 2 * x + 7) - (6 * x**4 + 2 * x**3 - 8 * x**2) + (
            5 * x**2 - 3 * x
        )

    assert cr.grad(poly)(2.0) == 578.0
    for order in (1, 2, 3, 4):
        theirs = poly
        for _ in range(order):
            theirs = tf.grad(theirs)
        assert cr.deriv(poly, order)(2.0) == pytest.approx(float(theirs(t64(2.0))), rel=1e-12)

    # 002: f(a, b) = b (a + b)(a - b): gradient (4, -11), second derivatives 4 and -12
    f = lambda a, b: b * ((a + b) * (a - b))
    assert cr.grad(f, argnums=(0, 1))(1.0, 2.0) == (4.0, -11.0)
    hess = cr.hessian(f, argnums=(0, 1))(1.0, 2.0)
    theirs = tf.hessian(f, argnums=(0, 1))(t64(1.0), t64(2.0))
    close(np.array(hess, dtype=float), torch.stack([torch.stack(row) for row in theirs]), "seed 002 hessian")
    assert hess[0][0] == 4.0 and hess[1][1] == -12.0
    tanh_grad = cr.grad(np.tanh)(1.0)
    assert tanh_grad == pytest.approx(float(tf.grad(torch.tanh)(t64(1.0))), rel=1e-14)
