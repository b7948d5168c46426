"""``leaky_relu``, ``elu``, ``hardtanh``, ..., ``l1_loss``, ``huber_loss``, ``binary_cross_entropy``, ``kl_div``,
``normalize``, ``cosine_similarity``: PyTorch's values and derivatives to second order, at the kinks too."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn

torch = pytest.importorskip("torch", reason="torch is not installed")
pytestmark = pytest.mark.oracle
TF = torch.nn.functional

# the kinks of every activation below: 0, +-1, +-3, 6, and large values on both sides
X = np.array([[-4.0, -3.0, -1.0, 0.0, 0.5], [1.0, 2.9, 3.0, 6.0, 7.5], [-0.2, 30.0, -30.0, 1e-3, -2.5]])
Y = np.array([[-3.0, -3.5, -1.0, 1.0, 0.5], [1.2, 2.0, 3.0, 5.0, 7.0], [0.8, 29.5, -31.0, 0.0, -2.5]])
P = np.array([[0.0, 0.2, 0.5, 1.0, 0.9], [0.3, 0.7, 1e-3, 0.6, 0.5], [0.1, 0.99, 0.4, 0.5, 0.05]])
T = np.array([[0.0, 1.0, 0.5, 1.0, 0.0], [1.0, 0.0, 1.0, 0.3, 0.5], [0.0, 1.0, 0.2, 0.5, 1.0]])


def same_to_second_order(ours, theirs, values, other=None, second=True, rtol=1e-10):
    x, t = cr.Tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    y = ours(x) if other is None else ours(x, cr.Tensor(other))
    ty = theirs(t) if other is None else theirs(t, torch.tensor(other))
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=rtol, atol=1e-12)
    w = np.random.default_rng(0).normal(size=ty.shape)
    (g,) = cr.autograd.grad((y * w).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad((ty * torch.tensor(w)).sum(), t, create_graph=True)
    np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=rtol, atol=1e-12)
    if second:
        v = np.random.default_rng(1).normal(size=values.shape)
        (h,) = cr.autograd.grad((g * v).sum(), x, allow_unused=True, materialize_grads=True)
        th = torch.autograd.grad((tg * torch.tensor(v)).sum(), t)[0] if tg.requires_grad else None
        expected = np.zeros(values.shape) if th is None or th._is_zerotensor() else th.numpy()
        np.testing.assert_allclose(h.data, expected, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name, options", [
    ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}),
    ("celu", {"alpha": 2.0}), ("hardtanh", {}), ("hardtanh", {"min_val": -3.0, "max_val": 3.0}), ("relu6", {}),
    ("softsign", {}), ("logsigmoid", {}), ("mish", {}), ("hardswish", {}),
])
def test_activations_match_pytorch_at_their_kinks(name, options):
    same_to_second_order(lambda x: getattr(F, name)(x, **options), lambda x: getattr(TF, name)(x, **options), X)
    layer = {"leaky_relu": "LeakyReLU", "elu": "ELU", "selu": "SELU", "celu": "CELU", "hardtanh": "Hardtanh",
             "relu6": "ReLU6", "softsign": "Softsign", "logsigmoid": "LogSigmoid", "mish": "Mish",
             "hardswish": "Hardswish"}[name]
    np.testing.assert_allclose(getattr(nn, layer)(**options)(cr.Tensor(X)).data,
                               getattr(torch.nn, layer)(**options)(torch.tensor(X)).numpy(), rtol=1e-12)


def test_hardsigmoid_and_glu_match_pytorch():
    # torch has no second derivative here, and its first is grad * float32(1/6)
    same_to_second_order(F.hardsigmoid, TF.hardsigmoid, X, second=False, rtol=1e-7)
    same_to_second_order(lambda x: F.glu(x[:, :4], dim=1), lambda x: TF.glu(x[:, :4], dim=1), X)
    with pytest.raises(ValueError, match="glu: dim -1 has odd size 5"):
        F.glu(X)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses_match_pytorch(reduction):
    for beta in (1.0, 0.5, 0.0):
        same_to_second_order(lambda x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=beta),
                             lambda x, y: TF.smooth_l1_loss(x, y, reduction=reduction, beta=beta), X, Y)
    for delta in (1.0, 2.0):
        same_to_second_order(lambda x, y: F.huber_loss(x, y, reduction=reduction, delta=delta),
                             lambda x, y: TF.huber_loss(x, y, reduction=reduction, delta=delta), X, Y)
    same_to_second_order(lambda x, y: F.l1_loss(x, y, reduction), lambda x, y: TF.l1_loss(x, y, reduction=reduction),
                         X, Y)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_probability_losses_match_pytorch_including_probabilities_of_0_and_1(reduction):
    same_to_second_order(lambda p, y: F.binary_cross_entropy(p, y, reduction=reduction),
                         lambda p, y: TF.binary_cross_entropy(p, y, reduction=reduction), P[:, 1:4], T[:, 1:4],
                         rtol=1e-8)
    # p exactly 0 or 1: the logs are clamped at -100 and the gradient is PyTorch's formula, never NaN
    same_to_second_order(lambda p, y: F.binary_cross_entropy(p, y, reduction=reduction),
                         lambda p, y: TF.binary_cross_entropy(p, y, reduction=reduction), P, T, second=False)
    for log_target, target in ((False, T), (True, np.log(T + 0.2))):
        same_to_second_order(lambda x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target),
                             lambda x, t: TF.kl_div(x, t, reduction=reduction, log_target=log_target),
                             np.log(P + 0.1), target)
    assert float(nn.KLDivLoss(reduction="batchmean")(np.log(P + 0.1), T)) == pytest.approx(
        float(TF.kl_div(torch.tensor(np.log(P + 0.1)), torch.tensor(T), reduction="batchmean")), rel=1e-13)
    with pytest.raises(ValueError, match="binary_cross_entropy: input must hold probabilities in"):
        F.binary_cross_entropy(X, T)


def test_normalize_cosine_similarity_and_one_hot_match_pytorch():
    same_to_second_order(F.normalize, TF.normalize, X)
    same_to_second_order(lambda x: F.normalize(x, p=1, dim=0), lambda x: TF.normalize(x, p=1, dim=0), X)
    same_to_second_order(F.cosine_similarity, TF.cosine_similarity, X, Y)
    same_to_second_order(lambda x, y: F.cosine_similarity(x, y[:1], dim=-1),
                         lambda x, y: TF.cosine_similarity(x, y[:1], dim=-1), X, Y)
    assert F.one_hot(np.array([1, 0, 3])).tolist() == TF.one_hot(torch.tensor([1, 0, 3])).tolist()


@pytest.mark.parametrize("pads, mode, value", [((1, 2), "constant", None), ((1, 1, 0, 2), "constant", 3.0),
                                               ((2, 1), "reflect", None), ((1, 2, 2, 0), "replicate", None),
                                               ((1, 1), "circular", None)])
def test_pad_takes_pytorchs_last_dim_first_pairs(pads, mode, value):
    values = np.arange(24.0).reshape(2, 3, 4)
    options = {} if value is None else {"value": value}
    same_to_second_order(lambda x: F.pad(x, pads, mode, **options) ** 2,
                         lambda x: TF.pad(x, pads, mode, **options) ** 2, values)
