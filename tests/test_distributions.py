"""chainrule.distributions against torch.distributions (2.13) as the oracle: values, gradients of log_prob,
entropy, kl_divergence and rsample-based losses to second order (reverse mode against torch.autograd.grad with
create_graph=True; forward mode and reverse against finite differences through gradcheck), sampling checked
statistically and reproducibly under manual_seed, the checks validate_args makes, and two training programs
(REINFORCE and a VAE) as PyTorch users write them."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.distributions as D
from chainrule.testing import assert_close

torch = pytest.importorskip("torch")
TD = torch.distributions

RNG = np.random.default_rng(0)
LOC = np.array([[0.3, -1.2, 2.0], [0.0, 0.5, -0.7]])
SCALE = np.array([1.5, 0.4, 2.2])  # broadcasts against LOC's batch
X = np.array([[0.1, 2.0, -1.0], [1.0, -0.3, 0.2]])
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.7]])
LOGITS = np.array([[0.1, -2.0, 3.0, 0.5], [1.0, 1.0, 1.0, 1.0]])
PROBS_EDGE = np.array([[0.0, 0.3, 0.7, 0.0], [1.0, 0.0, 0.0, 0.0]])  # probabilities 0 and 1


def _np(x):
    if isinstance(x, cr.Tensor):
        return x.detach().numpy()
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def _close(a, b, tol=1e-10):
    assert_close(_np(a), _np(b), rtol=tol, atol=tol, check_dtype=False, equal_nan=True)


# -- values ---------------------------------------------------------------------------------------------
SCALAR_FAMILIES = [
    ("Normal", (LOC, SCALE), X),
    ("Laplace", (LOC, SCALE), X),
    ("Exponential", (SCALE,), np.abs(X)),
    ("Uniform", (LOC - 2.0, LOC + 3.5), LOC + 0.5 * X),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,params,value", SCALAR_FAMILIES, ids=[f[0] for f in SCALAR_FAMILIES])
def test_scalar_families_match_pytorch(name, params, value):
    ours, theirs = getattr(D, name)(*params), getattr(TD, name)(*map(torch.tensor, params))
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    for method in ("log_prob", "cdf"):
        _close(getattr(ours, method)(value), getattr(theirs, method)(torch.tensor(value)))
    q = np.array([0.05, 0.5, 0.93])
    _close(ours.icdf(q), theirs.icdf(torch.tensor(q)))
    _close(ours.entropy(), theirs.entropy())
    for moment in ("mean", "mode", "variance", "stddev"):
        _close(getattr(ours, moment), getattr(theirs, moment))


@pytest.mark.oracle
def test_beta_and_dirichlet_match_pytorch():
    a, b = np.array([[0.7, 2.0, 5.0], [1.5, 1.5, 3.0], [0.5, 0.3, 2.0]]), np.array([1.2, 0.6, 4.0])
    ours, theirs = D.Beta(a, b), TD.Beta(torch.tensor(a), torch.tensor(b))
    x = np.array([0.1, 0.5, 0.93])
    _close(ours.log_prob(x), theirs.log_prob(torch.tensor(x)))
    for name in ("mean", "mode", "variance"):
        _close(getattr(ours, name), getattr(theirs, name))
    _close(ours.entropy(), theirs.entropy(), 1e-9)
    alpha = np.array([[1.0, 2.0, 3.0], [0.5, 4.0, 2.5]])
    ours, theirs = D.Dirichlet(alpha), TD.Dirichlet(torch.tensor(alpha))
    assert (ours.batch_shape, ours.event_shape) == ((2,), (3,))
    x = np.array([0.2, 0.3, 0.5])
    _close(ours.log_prob(x), theirs.log_prob(torch.tensor(x)))
    for name in ("mean", "mode", "variance"):
        _close(getattr(ours, name), getattr(theirs, name))
    _close(ours.entropy(), theirs.entropy(), 1e-9)
    for ours, theirs in ((D.Beta(a, b), TD.Beta(torch.tensor(a), torch.tensor(b))),
                         (D.Dirichlet(alpha), TD.Dirichlet(torch.tensor(alpha)))):
        assert ours.has_rsample and theirs.has_rsample  # (their gradients: tests/test_distributions_rsample.py)
        assert ours.rsample((4,)).shape == tuple(theirs.rsample((4,)).shape)


@pytest.mark.oracle
@pytest.mark.parametrize("given", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_pytorch(given):
    matrix = np.stack([COV, 2 * COV]) if given != "scale_tril" else np.linalg.cholesky(np.stack([COV, 2 * COV]))
    loc = LOC[0]  # broadcasts against the matrices' batch
    ours = D.MultivariateNormal(loc, **{given: matrix})
    theirs = TD.MultivariateNormal(torch.tensor(loc), **{given: torch.tensor(matrix)})
    assert ours.batch_shape == (2,) and ours.event_shape == (3,)
    _close(ours.log_prob(X), theirs.log_prob(torch.tensor(X)))
    _close(ours.log_prob(X[:, None, :]), theirs.log_prob(torch.tensor(X[:, None, :])))  # sample dims broadcast
    _close(ours.entropy(), theirs.entropy())
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(ours, name), getattr(theirs, name), 1e-9)


@pytest.mark.oracle
@pytest.mark.parametrize("kw", [{"logits": LOGITS}, {"probs": PROBS_EDGE}, {"probs": np.array([2.0, 1.0, 1.0])},
                                {"logits": np.array([0.5, -np.inf, 1.0, -np.inf])}],
                         ids=["logits", "probs-0-and-1", "unnormalised", "logits--inf"])
def test_categorical_matches_pytorch(kw):
    ours = D.Categorical(**kw)
    theirs = TD.Categorical(**{k: torch.tensor(v) for k, v in kw.items()})
    value = np.array([[2, 0], [1, 0], [3, 1]]) if ours.batch_shape else np.array([2, 0, 1])
    _close(ours.log_prob(value), theirs.log_prob(torch.tensor(value)))
    _close(ours.entropy(), theirs.entropy())
    _close(ours.probs, theirs.probs)
    _close(ours.logits, theirs.logits)
    assert np.array_equal(_np(ours.mode), _np(theirs.mode))
    _close(ours.mean, theirs.mean)  # NaN, as PyTorch's
    assert np.array_equal(_np(ours.enumerate_support()), _np(theirs.enumerate_support()))


@pytest.mark.oracle
@pytest.mark.parametrize("kw", [{"logits": LOGITS}, {"probs": PROBS_EDGE}, {"probs": 0.5}],
                         ids=["logits", "probs-0-and-1", "half"])
def test_bernoulli_matches_pytorch(kw):
    ours = D.Bernoulli(**kw)
    theirs = TD.Bernoulli(**{k: torch.tensor(v) for k, v in kw.items()})
    value = (RNG.random(ours.batch_shape) < 0.5).astype(np.float64)
    _close(ours.log_prob(value), theirs.log_prob(torch.tensor(value)))
    _close(ours.entropy(), theirs.entropy())
    for name in ("mean", "mode", "variance", "probs", "logits"):
        _close(getattr(ours, name), getattr(theirs, name))


@pytest.mark.oracle
def test_one_hot_categorical_and_independent_match_pytorch():
    ours, theirs = D.OneHotCategorical(logits=LOGITS), TD.OneHotCategorical(logits=torch.tensor(LOGITS))
    value = np.eye(4)[[2, 0]]
    assert ours.event_shape == (4,) and ours.batch_shape == (2,)
    _close(ours.log_prob(value), theirs.log_prob(torch.tensor(value)))
    _close(ours.entropy(), theirs.entropy())
    _close(ours.variance, theirs.variance)
    _close(ours.mode, theirs.mode)
    ours_i = D.Independent(D.Normal(LOC, SCALE), 1)
    theirs_i = TD.Independent(TD.Normal(torch.tensor(LOC), torch.tensor(SCALE)), 1)
    assert (ours_i.batch_shape, ours_i.event_shape) == ((2,), (3,))
    _close(ours_i.log_prob(X), theirs_i.log_prob(torch.tensor(X)))
    _close(ours_i.entropy(), theirs_i.entropy())
    assert D.Independent(D.Normal(LOC, SCALE), 2).log_prob(X).shape == ()


def _kl_pairs():
    l2 = np.linalg.cholesky(np.stack([COV, 0.5 * COV + np.eye(3)]))
    return [
        ("Normal", lambda M: (M.Normal(LOC, SCALE), M.Normal(0.0, 1.0))),
        ("Categorical", lambda M: (M.Categorical(logits=LOGITS), M.Categorical(probs=PROBS_EDGE + 0.1))),
        ("Categorical-zeros", lambda M: (M.Categorical(probs=PROBS_EDGE), M.Categorical(probs=PROBS_EDGE[::-1]))),
        ("Bernoulli", lambda M: (M.Bernoulli(logits=LOGITS), M.Bernoulli(probs=0.3))),
        ("Bernoulli-0-and-1", lambda M: (M.Bernoulli(probs=PROBS_EDGE), M.Bernoulli(probs=PROBS_EDGE[::-1]))),
        ("MultivariateNormal", lambda M: (M.MultivariateNormal(LOC[0], covariance_matrix=COV),
                                          M.MultivariateNormal(LOC[1], scale_tril=l2))),
        ("Independent", lambda M: (M.Independent(M.Normal(LOC, SCALE), 1), M.Independent(M.Normal(X, 2.0), 1))),
        ("Uniform", lambda M: (M.Uniform(LOC - 1, LOC + 1), M.Uniform(LOC - 2, LOC + 1.5))),
        ("Exponential", lambda M: (M.Exponential(SCALE), M.Exponential(2.0))),
        ("Laplace", lambda M: (M.Laplace(LOC, SCALE), M.Laplace(X, 0.5))),
        ("OneHotCategorical", lambda M: (M.OneHotCategorical(logits=LOGITS), M.OneHotCategorical(logits=-LOGITS))),
        ("Beta", lambda M: (M.Beta(SCALE, 2.0), M.Beta(SCALE[::-1].copy(), SCALE))),
        ("Dirichlet", lambda M: (M.Dirichlet(np.abs(LOGITS[:, :3]) + 0.2), M.Dirichlet(SCALE))),
    ]


def _torch_namespace():
    class Wrapped:  # torch's families taking NumPy arrays, as ours do
        def __getattr__(self, name):
            family = getattr(TD, name)

            def make(*args, **kw):
                conv = lambda v: torch.tensor(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v  # noqa: E731
                return family(*(conv(a) for a in args), **{k: conv(v) for k, v in kw.items()})

            return make

    return Wrapped()


@pytest.mark.oracle
@pytest.mark.parametrize("name,make", _kl_pairs(), ids=[p[0] for p in _kl_pairs()])
def test_kl_divergence_matches_pytorch(name, make):
    _close(D.kl_divergence(*make(D)), TD.kl_divergence(*make(_torch_namespace())), 1e-9)


# -- gradients ------------------------------------------------------------------------------------------
def _against_torch(loss, *params, tol=1e-9):
    """``loss(M, lib, *params)`` in both libraries (M the distributions module, lib the top namespace): the value,
    its gradient and the second-order derivative (the gradient of ``grad . u``) in every parameter."""
    ours = [cr.tensor(p, requires_grad=True) for p in params]
    theirs = [torch.tensor(p, requires_grad=True) for p in params]
    lo, lt = loss(D, cr, *ours), loss(TD, torch, *theirs)
    _close(lo, lt, tol)
    go = cr.autograd.grad(lo, ours, create_graph=True)
    gt = torch.autograd.grad(lt, theirs, create_graph=True)
    for a, b in zip(go, gt):
        _close(a, b, tol)
    directions = [RNG.normal(size=np.shape(p)) for p in params]
    so = sum((g * cr.tensor(u)).sum() for g, u in zip(go, directions))
    st = sum((g * torch.tensor(u)).sum() for g, u in zip(gt, directions))
    ho = cr.autograd.grad(so, ours, allow_unused=True) if so.requires_grad else [None] * len(ours)
    ht = torch.autograd.grad(st, theirs, allow_unused=True) if st.requires_grad else [None] * len(theirs)
    for p, a, b in zip(params, ho, ht):
        _close(np.zeros(np.shape(p)) if a is None else a, np.zeros(np.shape(p)) if b is None else b, tol)


GRADIENT_CASES = [
    ("Normal.log_prob", lambda M, lib, m, s: M.Normal(m, s).log_prob(lib.tensor(X)).sum(), (LOC, SCALE)),
    ("Normal.entropy+cdf", lambda M, lib, m, s: M.Normal(m, s).entropy().sum() + M.Normal(m, s).cdf(
        lib.tensor(X)).sum(), (LOC, SCALE)),
    ("Normal.icdf", lambda M, lib, m, s: M.Normal(m, s).icdf(lib.tensor(np.full(3, 0.3))).sum(), (LOC, SCALE)),
    ("Laplace.log_prob+entropy", lambda M, lib, m, s: (M.Laplace(m, s).log_prob(lib.tensor(X)) ** 2).sum()
     + M.Laplace(m, s).entropy().sum(), (LOC, SCALE)),
    ("Exponential", lambda M, lib, r: (M.Exponential(r).log_prob(lib.tensor(np.abs(X))) ** 2).sum()
     + M.Exponential(r).entropy().sum(), (SCALE,)),
    ("Uniform", lambda M, lib, a, b: M.Uniform(a, b).log_prob(lib.tensor(LOC + 0.1 * X)).sum() + (
        M.Uniform(a, b).entropy() ** 2).sum(), (LOC - 2.0, LOC + 3.5)),
    ("Categorical.logits", lambda M, lib, z: (M.Categorical(logits=z).log_prob(lib.tensor([2, 1])) ** 2).sum()
     + (M.Categorical(logits=z).entropy() ** 2).sum(), (LOGITS,)),
    ("Categorical.logits--inf", lambda M, lib, z: M.Categorical(logits=z).log_prob(lib.tensor([0, 2])).sum()
     + (M.Categorical(logits=z).entropy() ** 2).sum(), (np.array([[0.5, -np.inf, 1.0, -np.inf], [0.1, 0.2, 0.3, 0.4]]),
                                                          )),
    ("Categorical.probs-0-and-1", lambda M, lib, p: M.Categorical(probs=p).log_prob(lib.tensor([2, 0])).sum()
     + (M.Categorical(probs=p).entropy() ** 2).sum(), (PROBS_EDGE,)),
    ("Bernoulli.logits", lambda M, lib, z: (M.Bernoulli(logits=z).log_prob(lib.tensor(np.eye(4)[[2, 0]])) ** 2
                                            ).sum() + (M.Bernoulli(logits=z).entropy() ** 2).sum(), (LOGITS,)),
    ("Bernoulli.probs", lambda M, lib, p: M.Bernoulli(probs=p).log_prob(lib.tensor(np.eye(4)[[2, 0]])).sum()
     + (M.Bernoulli(probs=p).entropy() ** 2).sum(), (np.array([0.2, 0.5, 0.9, 0.01]),)),
    ("MultivariateNormal.covariance", lambda M, lib, m, c: (M.MultivariateNormal(m, covariance_matrix=c).log_prob(
        lib.tensor(X)) ** 2).sum() + M.MultivariateNormal(m, covariance_matrix=c).entropy(), (LOC[0], COV)),
    ("MultivariateNormal.precision", lambda M, lib, m, c: M.MultivariateNormal(m, precision_matrix=c).log_prob(
        lib.tensor(X)).sum(), (LOC[0], COV)),
    ("MultivariateNormal.scale_tril", lambda M, lib, m, c: (M.MultivariateNormal(m, scale_tril=c).log_prob(
        lib.tensor(X)) ** 2).sum(), (LOC[0], np.linalg.cholesky(COV))),
    ("Beta", lambda M, lib, a, b: (M.Beta(a, b).log_prob(lib.tensor(np.array([0.1, 0.5, 0.93]))) ** 2).sum()
     + M.Beta(a, b).entropy().sum(), (SCALE, SCALE[::-1].copy())),
    ("Dirichlet", lambda M, lib, a: (M.Dirichlet(a).log_prob(lib.tensor(np.array([0.2, 0.3, 0.5]))) ** 2).sum()
     + M.Dirichlet(a).entropy().sum(), (np.abs(LOGITS[:, :3]) + 0.2,)),
    ("kl Beta", lambda M, lib, a, b: M.kl_divergence(M.Beta(a, b), M.Beta(b, lib.tensor(SCALE))).sum(),
     (SCALE, SCALE[::-1].copy())),
    ("kl Dirichlet", lambda M, lib, a: M.kl_divergence(M.Dirichlet(a), M.Dirichlet(lib.tensor(SCALE))).sum(),
     (np.abs(LOGITS[:, :3]) + 0.2,)),
    ("kl Normal", lambda M, lib, m, s: (M.kl_divergence(M.Normal(m, s), M.Normal(lib.tensor(X), s * 2)) ** 2).sum(),
     (LOC, SCALE)),
    ("kl Categorical", lambda M, lib, a, b: M.kl_divergence(M.Categorical(logits=a), M.Categorical(logits=b)).sum(),
     (LOGITS, -LOGITS)),
    ("kl Bernoulli", lambda M, lib, a, b: (M.kl_divergence(M.Bernoulli(probs=a), M.Bernoulli(probs=b)) ** 2).sum(),
     (np.array([0.2, 0.5, 0.9]), np.array([0.6, 0.1, 0.3]))),
    ("kl MultivariateNormal", lambda M, lib, m, c: M.kl_divergence(
        M.MultivariateNormal(m, covariance_matrix=c), M.MultivariateNormal(lib.tensor(LOC[1]), scale_tril=lib.tensor(
            np.linalg.cholesky(COV + np.eye(3))))), (LOC[0], COV)),
    ("kl Independent", lambda M, lib, m, s: M.kl_divergence(M.Independent(M.Normal(m, s), 1), M.Independent(
        M.Normal(0.0, lib.tensor(SCALE)), 1)).sum(), (LOC, SCALE)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,loss,params", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradients_to_second_order_match_pytorch(name, loss, params):
    # (lgamma and digamma's derivatives are series whose last digits differ between SciPy and PyTorch)
    _against_torch(loss, *params, tol=1e-7 if "Beta" in name or "Dirichlet" in name else 1e-9)


FORWARD_CASES = [
    ("Normal", lambda m, s: D.Normal(m, s).log_prob(X).sum() + D.Normal(m, s).entropy().sum(), (LOC[0], SCALE)),
    ("Categorical", lambda z: D.Categorical(logits=z).log_prob(np.array([2, 1])).sum()
     + D.Categorical(logits=z).entropy().sum(), (LOGITS,)),
    ("Bernoulli", lambda z: D.Bernoulli(logits=z).log_prob(np.eye(4)[[2, 0]]).sum(), (LOGITS,)),
    ("MultivariateNormal", lambda m, c: D.MultivariateNormal(m, scale_tril=np.tril(c)).log_prob(X).sum(),
     (LOC[0], np.linalg.cholesky(COV))),
    ("kl Normal", lambda m, s: D.kl_divergence(D.Normal(m, s), D.Normal(0.0, 1.0)).sum(), (LOC[0], SCALE)),
]


@pytest.mark.parametrize("name,f,params", FORWARD_CASES, ids=[c[0] for c in FORWARD_CASES])
def test_reverse_and_forward_mode_to_second_order_under_the_transforms(name, f, params):
    assert cr.gradcheck(f, *params, modes=("rev", "fwd"), order=2)


def test_functional_transforms_see_the_parameters():
    x = np.array([0.5, -1.0, 2.0])
    g = cr.grad(lambda mu: D.Normal(mu, 2.0).log_prob(x).sum())(np.zeros(3))
    assert_close(g, x / 4)
    h = cr.hessian(lambda s: D.kl_divergence(D.Normal(0.0, s), D.Normal(0.0, 1.0)).sum())(np.array([0.5, 2.0]))
    assert_close(h, np.diag(1 + 1 / np.array([0.5, 2.0]) ** 2))  # d2/ds2 of (s^2 - 1 - 2 log s) / 2
    _, tangent = cr.jvp(lambda z: D.Categorical(logits=z).entropy(), (np.zeros(3),), (np.array([1.0, 0, 0]),))
    assert_close(tangent, np.asarray(0.0), atol=1e-12, rtol=0)  # uniform is the maximum


VMAP_CASES = {
    "Normal": lambda m: D.Normal(m, 2.0).log_prob(X[0, :2]).sum() + D.Normal(m, 2.0).icdf(np.array([0.2, 0.6])).sum(),
    "Laplace": lambda m: D.Laplace(m, 1.0).log_prob(X[0, :2]).sum() + D.Laplace(m, 2.0).cdf(X[0, :2]).sum(),
    "Uniform": lambda m: D.Uniform(m - 6, m + 6).log_prob(X[0, :2]).sum(),
    "Categorical": lambda z: D.Categorical(logits=z).log_prob(np.array(1)) + D.Categorical(logits=z).entropy(),
    "Bernoulli": lambda z: D.Bernoulli(logits=z).log_prob(np.array([1.0, 0.0])).sum(),
    "MultivariateNormal": lambda m: D.MultivariateNormal(m, covariance_matrix=2 * np.eye(2)).log_prob(X[0, :2]),
    "kl": lambda m: D.kl_divergence(D.Categorical(logits=m), D.Categorical(logits=-m)) + D.kl_divergence(
        D.MultivariateNormal(m, scale_tril=np.eye(2)), D.MultivariateNormal(-m, precision_matrix=np.eye(2))),
}


@pytest.mark.parametrize("name", list(VMAP_CASES))
def test_vmap_of_log_prob_and_its_gradient_is_the_loop(name):
    f, rows = VMAP_CASES[name], np.array([[0.5, 1.0], [2.0, -3.0], [0.1, 0.2]])
    assert_close(cr.vmap(f)(rows), np.array([float(f(r)) for r in rows]), rtol=1e-12, atol=1e-12)
    assert_close(cr.vmap(cr.grad(f))(rows), np.stack([_np(cr.grad(f)(r)) for r in rows]), rtol=1e-12, atol=1e-12)


def test_per_example_policy_gradients_batch_the_actions():
    """vmap over the actions (per-example REINFORCE gradients), and jit with new actions each call."""
    z, actions = np.array([0.1, 0.5, 2.0]), np.array([0, 2, 1])
    log_pi = lambda logits, a: D.Categorical(logits=logits).log_prob(a)  # noqa: E731
    assert_close(cr.vmap(log_pi, in_axes=(None, 0))(z, actions), _np(log_pi(z, actions)), rtol=1e-12, atol=1e-12)
    per_example = cr.vmap(cr.grad(log_pi), in_axes=(None, 0))(z, actions)
    assert_close(per_example, np.stack([_np(cr.grad(log_pi)(z, a)) for a in actions]), rtol=1e-12, atol=1e-12)
    jitted = cr.jit(log_pi)
    with pytest.warns(Warning, match="runs the function as it is"):  # it reads the actions: not traced, still right
        for a in ([0, 1, 2], [2, 2, 0]):
            assert_close(jitted(z, np.array(a)), _np(log_pi(z, np.array(a))), rtol=1e-12, atol=1e-12)


def test_rsample_is_reparameterised():
    loc = cr.tensor(LOC, requires_grad=True)
    scale = cr.tensor(SCALE, requires_grad=True)
    cr.manual_seed(3)
    draw = D.Normal(loc, scale).rsample((5,))
    assert draw.shape == (5, 2, 3) and draw.requires_grad
    (draw.sum()).backward()
    eps = (_np(draw) - LOC) / SCALE
    assert_close(loc.grad, np.full(LOC.shape, 5.0))
    assert_close(scale.grad, eps.sum((0, 1)))
    sample = D.Normal(loc, scale).sample((5,))
    assert not sample.requires_grad
    with pytest.raises(NotImplementedError, match="Categorical has no rsample.*REINFORCE"):
        D.Categorical(logits=LOGITS).rsample()


@pytest.mark.parametrize("family", ["Normal", "Laplace", "Exponential", "Uniform", "MultivariateNormal"])
def test_rsample_gradients_to_second_order(family):
    """A loss of draws made from a reseeded generator is a function of the parameters alone: gradcheck it."""
    make = {
        "Normal": lambda a, b: D.Normal(a, b), "Laplace": lambda a, b: D.Laplace(a, b),
        "Exponential": lambda a, b: D.Exponential(a * b), "Uniform": lambda a, b: D.Uniform(a, a + b),
        "MultivariateNormal": lambda a, b: D.MultivariateNormal(a, scale_tril=np.diag(b) + np.tril(np.ones((3, 3)),
                                                                                                  -1)),
    }[family]

    def loss(a, b):
        cr.manual_seed(7)
        return (make(a, b).rsample((4,)) ** 3).sum()

    assert cr.gradcheck(loss, np.array([0.3, 1.2, 0.8]), np.array([1.5, 0.4, 2.2]), order=2)


# -- sampling -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,mean,var", [
    (lambda: D.Normal(np.array([0.5, -2.0]), np.array([1.0, 3.0])), [0.5, -2.0], [1.0, 9.0]),
    (lambda: D.Laplace(1.0, 2.0), 1.0, 8.0),
    (lambda: D.Exponential(np.array([0.5, 4.0])), [2.0, 0.25], [4.0, 1 / 16]),
    (lambda: D.Uniform(-1.0, 3.0), 1.0, 16 / 12),
    (lambda: D.Bernoulli(probs=np.array([0.0, 0.3, 1.0])), [0.0, 0.3, 1.0], [0.0, 0.21, 0.0]),
    (lambda: D.Categorical(probs=np.array([[0.0, 0.3, 0.7, 0.0], [1.0, 0.0, 0.0, 0.0]])), [1.7, 0.0], [0.21, 0.0]),
    (lambda: D.OneHotCategorical(probs=np.array([0.2, 0.0, 0.8])), [0.2, 0.0, 0.8], [0.16, 0.0, 0.16]),
    (lambda: D.MultivariateNormal(np.array([1.0, -1.0, 0.0]), covariance_matrix=COV), [1.0, -1.0, 0.0], np.diag(COV)),
    (lambda: D.Beta(np.array([2.0, 0.5]), np.array([3.0, 0.5])), [0.4, 0.5], [0.04, 0.125]),
    (lambda: D.Dirichlet(np.array([1.0, 2.0, 3.0])), [1 / 6, 2 / 6, 3 / 6], [5 / 252, 8 / 252, 9 / 252]),
], ids=["Normal", "Laplace", "Exponential", "Uniform", "Bernoulli", "Categorical", "OneHotCategorical", "MVN", "Beta",
        "Dirichlet"])
def test_samples_have_the_distributions_moments(make, mean, var):
    n = 20_000
    cr.manual_seed(0)
    d = make()
    draws = _np(d.sample((n,)))
    assert draws.shape == (n,) + d.batch_shape + d.event_shape
    standard_error = np.sqrt(np.asarray(var) / n)
    assert np.all(np.abs(draws.mean(0) - mean) <= 5 * standard_error + 1e-12)
    assert np.all(np.abs(draws.var(0) - var) <= 0.1 * np.asarray(var) + 1e-12)
    cr.manual_seed(0)
    assert np.array_equal(_np(make().sample((n,))), draws)  # reproducible under manual_seed


def test_sample_shapes_and_dtypes():
    assert D.Normal(0.0, 1.0).sample().shape == ()
    assert D.Normal(cr.zeros(3), 1.0).sample([2, 5]).shape == (2, 5, 3)
    assert D.Normal(0.0, 1.0).sample(torch.Size([4])).shape == (4,)
    assert D.Normal(0.0, 1.0).sample((2,)).dtype == np.float32  # Python floats take the default dtype, as PyTorch
    assert D.Normal(np.zeros(2), 1.0).sample().dtype == np.float64  # arrays keep theirs
    c = D.Categorical(logits=cr.zeros(2, 5)).sample((3,))
    assert c.shape == (3, 2) and c.dtype == np.int64
    mvn = D.MultivariateNormal(np.zeros((4, 1, 2)), covariance_matrix=np.eye(2))
    assert mvn.batch_shape == (4, 1) and mvn.rsample((3,)).shape == (3, 4, 1, 2)
    big = D.Normal(cr.zeros(3), 1.0).expand((2, 3))
    assert big.batch_shape == (2, 3) and big.sample().shape == (2, 3) and big.log_prob(X).shape == (2, 3)
    assert D.Categorical(logits=cr.zeros(5)).expand((4,)).sample().shape == (4,)
    assert D.Independent(D.Normal(cr.zeros(3), 1.0), 1).expand((6,)).batch_shape == (6,)
    with pytest.raises(TypeError, match=r"sample_shape must be a tuple of ints such as \(3,\)"):
        D.Normal(0.0, 1.0).sample("3")


# -- errors ---------------------------------------------------------------------------------------------
def test_invalid_parameters_raise_naming_the_distribution_and_the_fix():
    with pytest.raises(ValueError, match=r"parameter scale .* Normal\(loc: 0.0, scale: -1.0\) .* GreaterThan"
                                         r"(?s:.*)Pass scale values that satisfy it"):
        D.Normal(0.0, -1.0)
    D.Normal(0.0, -1.0, validate_args=False)  # as PyTorch: the check can be turned off
    with pytest.raises(ValueError, match="parameter probs .* Bernoulli"):
        D.Bernoulli(probs=1.5)
    with pytest.raises(ValueError, match="Categorical: pass either probs= or logits="):
        D.Categorical(probs=[0.5, 0.5], logits=[0.0, 0.0])
    with pytest.raises(ValueError, match="parameter probs .* Categorical"):
        D.Categorical(probs=[-0.5, 1.0])
    with pytest.raises(ValueError, match="Uniform is not defined when low >= high.*pass low < high"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="exactly one of covariance_matrix"):
        D.MultivariateNormal(np.zeros(2))
    with pytest.raises(ValueError, match="must be 2 x 2 to match loc"):
        D.MultivariateNormal(np.zeros(2), covariance_matrix=np.eye(3))
    with pytest.raises(ValueError, match="covariance_matrix .* PositiveDefinite"):
        D.MultivariateNormal(np.zeros(2), covariance_matrix=-np.eye(2))


def test_values_outside_the_support_raise():
    with pytest.raises(ValueError, match=r"value argument .* support \(IntegerInterval\(lower_bound=0, upper_bound=3"
                                         r"\)\) of the distribution Categorical"):
        D.Categorical(logits=LOGITS).log_prob(np.array([4, 0]))
    with pytest.raises(ValueError, match=r"support \(GreaterThanEq\(lower_bound=0.0\)\) .* Exponential"):
        D.Exponential(1.0).log_prob(-1.0)
    with pytest.raises(ValueError, match="support .* Bernoulli"):
        D.Bernoulli(probs=0.5).log_prob(0.5)
    with pytest.raises(ValueError, match=r"does not broadcast with the distribution's shape \(2, 3\)"):
        D.Normal(LOC, 1.0).log_prob(np.zeros(4))
    with pytest.raises(ValueError, match="Normal.icdf: expected probabilities in"):
        D.Normal(0.0, 1.0).icdf(1.5)
    assert float(D.Exponential(1.0, validate_args=False).log_prob(-1.0)) == 1.0  # PyTorch's formula, unchecked


def test_kl_registry():
    with pytest.raises(NotImplementedError, match="No KL.*Normal.*Exponential.*register_kl"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Exponential(1.0))

    class Narrow(D.Normal):
        pass

    assert float(D.kl_divergence(Narrow(1.0, 1.0), D.Normal(0.0, 1.0))) == 0.5  # a subclass finds Normal's rule

    @D.register_kl(Narrow, D.Normal)
    def _narrow(p, q):
        return p.loc * 0 + 42.0

    assert float(D.kl_divergence(Narrow(1.0, 1.0), D.Normal(0.0, 1.0))) == 42.0  # the most specific rule wins


# -- programs -------------------------------------------------------------------------------------------
def test_reinforce_learns_the_rewarding_action():
    """A policy network, Categorical actions and the score-function loss -log pi(a) * return."""
    cr.manual_seed(0)
    policy = cr.nn.Linear(4, 3)
    opt = cr.optim.Adam(policy.parameters(), lr=0.05)
    state = cr.ones(64, 4)
    rewards = np.array([0.0, 0.2, 1.0])
    expected = []
    for _ in range(40):
        dist = D.Categorical(logits=policy(state))
        actions = dist.sample()
        returns = cr.tensor(rewards[_np(actions)])
        loss = -(dist.log_prob(actions) * (returns - returns.mean())).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        expected.append(float((dist.probs * cr.tensor(rewards)).sum(-1).mean()))
    assert expected[-1] > expected[0] + 0.3 and expected[-1] > 0.8


def test_vae_with_rsample_and_kl_to_the_prior_trains():
    cr.manual_seed(0)
    data = cr.randn(128, 6) @ cr.randn(6, 6)
    encoder, decoder = cr.nn.Linear(6, 2 * 2), cr.nn.Linear(2, 6)
    opt = cr.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=0.02)
    losses = []
    for _ in range(60):
        h = encoder(data)
        mu, log_var = h[:, :2], h[:, 2:]
        q = D.Normal(mu, (0.5 * log_var).exp())
        z = q.rsample()
        recon = D.Normal(decoder(z), 1.0).log_prob(data).sum(-1)
        kl = D.kl_divergence(q, D.Normal(cr.zeros(2), cr.ones(2))).sum(-1)
        loss = (kl - recon).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert np.mean(losses[-10:]) < 0.8 * np.mean(losses[:10])
