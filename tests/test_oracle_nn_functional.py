"""PyTorch as the oracle for ``chainrule.nn.functional`` at the inputs a random fuzzer found apart.

Each case runs one program on both libraries and compares the value, the gradient and the gradient of
the squared gradient norm (second order), in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as CF

torch = pytest.importorskip("torch", reason="the oracle tests need PyTorch")
pytestmark = pytest.mark.oracle


def _derivatives(lib, functional, tensor, program, inputs):
    xs = [tensor(a, requires_grad=True) for a in inputs]
    out = program(functional, tensor, *xs)
    grads = lib.autograd.grad(out, xs, create_graph=True)
    penalty = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(penalty, xs) if lib is cr or penalty.requires_grad else [torch.zeros_like(x) for x in xs]
    as_numpy = (lambda t: t.detach().numpy()) if lib is torch else (lambda t: np.asarray(t.data))
    return [as_numpy(out)], [as_numpy(g) for g in grads], [as_numpy(g) for g in second]


def assert_same_as_torch(program, *inputs):
    inputs = [np.asarray(a, dtype=np.float64) for a in inputs]
    ours = _derivatives(cr, CF, lambda a, **kw: cr.Tensor(a, **kw), program, inputs)
    theirs = _derivatives(torch, torch.nn.functional, lambda a, **kw: torch.tensor(a, **kw), program, inputs)
    for what, a, b in zip(("value", "gradient", "gradient-penalty gradient"), ours, theirs):
        for k, (x, y) in enumerate(zip(a, b)):
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12, err_msg=f"{what} of input {k}")


X = np.array([[0.5, -1.0, 2.0], [1e3, -1e3, 0.0]])
WEIGHT = np.array([0.5, 2.0, 1.0])


@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weight", [None, WEIGHT])
def test_cross_entropy_mean_with_every_row_ignored_is_nan_with_a_zero_gradient(weight, smoothing):
    # PyTorch's value is 0/0 = NaN, but its backward visits no row: the gradient is 0, not NaN
    def loss(F, T, x):
        return F.cross_entropy(x, T(np.array([1, 1])), weight=None if weight is None else T(weight), ignore_index=1,
                               label_smoothing=smoothing) * 1.0 + (x * x).sum()

    ours = _derivatives(cr, CF, lambda a, **kw: cr.Tensor(a, **kw), loss, [np.asarray(X)])
    assert np.isnan(ours[0][0])
    theirs = _derivatives(torch, torch.nn.functional, lambda a, **kw: torch.tensor(a, **kw), loss, [np.asarray(X)])
    np.testing.assert_allclose(ours[1][0], theirs[1][0], rtol=1e-12)
    np.testing.assert_allclose(ours[2][0], theirs[2][0], rtol=1e-12)


@pytest.mark.parametrize("weight", [None, WEIGHT])
def test_nll_loss_mean_with_every_row_ignored_is_nan_with_a_zero_gradient(weight):
    def loss(F, T, x):
        return F.nll_loss(F.log_softmax(x, dim=1), T(np.array([-1, -1])), ignore_index=-1,
                          weight=None if weight is None else T(weight)) * 1.0 + (x * x).sum()

    ours = _derivatives(cr, CF, lambda a, **kw: cr.Tensor(a, **kw), loss, [np.asarray(X)])
    assert np.isnan(ours[0][0])
    theirs = _derivatives(torch, torch.nn.functional, lambda a, **kw: torch.tensor(a, **kw), loss, [np.asarray(X)])
    np.testing.assert_allclose(ours[1][0], theirs[1][0], rtol=1e-12)
    np.testing.assert_allclose(ours[2][0], theirs[2][0], rtol=1e-12)


def test_cross_entropy_with_some_rows_ignored_still_matches():
    # the fix above must leave the usual mean alone: a kept row among ignored ones, weighted and not
    for weight in (None, WEIGHT):
        assert_same_as_torch(lambda F, T, x: F.cross_entropy(
            x, T(np.array([1, 2])), ignore_index=1, weight=None if weight is None else T(weight),
            label_smoothing=0.1), X)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, np.inf])
def test_embedding_max_norm_rescales_the_picked_rows_in_place_as_pytorch(norm_type):
    # max_norm used to be refused (a TypeError on the keyword); PyTorch rescales the rows it picks, in place
    table = np.array([[3.0, 4.0], [0.1, 0.2], [-2.0, 0.0], [1.0, 1.0]])
    idx = np.array([[0, 2, 0], [1, 2, 1]])
    ours, theirs = cr.Tensor(table.copy(), requires_grad=True), torch.tensor(table.copy(), requires_grad=True)
    ours_out = CF.embedding(idx, ours, padding_idx=2, max_norm=1.5, norm_type=norm_type)
    theirs_out = torch.nn.functional.embedding(torch.tensor(idx), theirs, padding_idx=2, max_norm=1.5,
                                               norm_type=norm_type)
    np.testing.assert_allclose(ours_out.data, theirs_out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)  # rows 0 and 2 shrunk, 3 untouched
    (ours_out * ours_out).sum().backward()
    (theirs_out * theirs_out).sum().backward()
    np.testing.assert_allclose(ours.grad.data, theirs.grad.numpy(), rtol=1e-12)
    layer = cr.nn.Embedding(4, 2, max_norm=1.5, norm_type=norm_type, dtype=np.float64)
    layer.weight.data[...] = table
    np.testing.assert_allclose(layer(idx).data, ours_out.data, rtol=1e-12)


@pytest.mark.parametrize("name", ["LayerNorm", "RMSNorm", "BatchNorm1d"])
def test_a_layer_without_parameters_converted_by_to_takes_inputs_of_the_new_dtype(name):
    # .to(np.float64) converted parameters and buffers but not the dtype a parameter-less layer keeps: it then
    # refused a float64 input, with an error that told the user to call .to(np.float64)
    build = {"LayerNorm": lambda m: m.LayerNorm(3, elementwise_affine=False),
             "RMSNorm": lambda m: m.RMSNorm(3, elementwise_affine=False),
             "BatchNorm1d": lambda m: m.BatchNorm1d(3, affine=False)}[name]
    x = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 0.5]])
    ours = build(cr.nn).to(np.float64)(cr.Tensor(x))
    theirs = build(torch.nn).double()(torch.tensor(x))
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12)


def test_pad_with_negative_sizes_crops_as_pytorch():
    # negative padding used to raise NotImplementedError; PyTorch's constant mode crops those ends
    x = np.arange(24.0).reshape(2, 3, 4) / 7
    for pads in [(-1, 2), (1, -4), (0, 0, -1, 1), (-2, 3, 0, 0, 1, -1)]:
        assert_same_as_torch(lambda F, T, a: (F.pad(a, pads, value=1.5) ** 2).sum(), x)
    for mode in ("replicate", "reflect", "circular"):  # these crop first, then pad what is left
        assert_same_as_torch(lambda F, T, a, mode=mode: (F.pad(a, (-1, 2, 1, -1), mode=mode) ** 2).sum(), x)


A = np.array([[0.5, -1.0, 0.0], [2.0, 0.0, 0.0], [1.0, 1.0, -1.0]])
B = np.array([[0.5, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, -1.0, 2.0]])
SIGNS = np.array([1.0, -1.0, -1.0])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["margin_ranking", "hinge_embedding", "soft_margin", "multilabel_soft_margin",
                                  "cosine_embedding", "triplet", "triplet_swap", "poisson", "poisson_full"])
def test_margin_losses_match_pytorch_at_kinks_and_zeros(name, reduction):
    # new in chainrule: each follows PyTorch's formula (clamp_min passes the gradient at 0; where on the target)
    losses = {
        "margin_ranking": lambda F, T, a, b: F.margin_ranking_loss(a[:, 0], b[:, 0], T(SIGNS), margin=0.5,
                                                                   reduction=reduction),
        "hinge_embedding": lambda F, T, a, b: F.hinge_embedding_loss(a * b, T(np.sign(A + 0.1)), margin=1.0,
                                                                     reduction=reduction),
        "soft_margin": lambda F, T, a, b: F.soft_margin_loss(a - b, T(np.sign(B + 0.1)), reduction=reduction),
        "multilabel_soft_margin": lambda F, T, a, b: F.multilabel_soft_margin_loss(
            a * b, T((A > 0).astype(float)), weight=T(np.array([0.5, 1.0, 2.0])), reduction=reduction),
        "cosine_embedding": lambda F, T, a, b: F.cosine_embedding_loss(a, b + 1.0, T(SIGNS), margin=0.2,
                                                                       reduction=reduction),
        "triplet": lambda F, T, a, b: F.triplet_margin_loss(a, b, a * b, margin=1.5, p=1.0, reduction=reduction),
        "triplet_swap": lambda F, T, a, b: F.triplet_margin_loss(a, b, b * 2.0, swap=True, reduction=reduction),
        "poisson": lambda F, T, a, b: F.poisson_nll_loss(a * b, T(np.abs(B)), reduction=reduction),
        "poisson_full": lambda F, T, a, b: F.poisson_nll_loss(a * a + b * b + 0.5, T(np.abs(B) * 2), log_input=False,
                                                              full=True, reduction=reduction),
    }
    loss = losses[name]
    assert_same_as_torch(lambda F, T, a, b: (loss(F, T, a, b) * T(np.array(1.5))).sum(), A, B)
    if name == "triplet":
        with pytest.raises(ValueError, match="triplet_margin_loss: margin must be greater than 0, got 0.0"):
            CF.triplet_margin_loss(A, B, A, margin=0.0)


@pytest.mark.parametrize("beta", [1.0, 2.0])
def test_softplus_exactly_at_the_threshold_has_pytorchs_derivatives(beta):
    # at beta * x == threshold PyTorch takes the smooth branch's value and slope, but its double backward tests
    # beta * x < threshold: second derivative 0 there (chainrule's was the smooth branch's)
    x = np.array([2.5, 5.0, 0.0, -1.0, 6.0]) / beta
    assert_same_as_torch(lambda F, T, a: (F.softplus(a, beta=beta, threshold=5.0) * T(np.arange(5.0))).sum(), x)
    assert_same_as_torch(lambda F, T, a: (F.softplus(a * a, beta=beta, threshold=5.0) ** 2).sum(), x)


@pytest.mark.parametrize("weight", [None, np.array([1.0, 2.0, 0.5, 1.0])])
def test_cross_entropy_under_vmap_with_an_example_whose_rows_are_all_ignored(weight):
    # vmap's path (the fused node cannot read batched targets) divided by a zero count too: NaN gradients
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    t = np.array([[1, -100, 2], [-100, -100, -100]])
    kw, tkw = ({}, {}) if weight is None else ({"weight": weight}, {"weight": torch.tensor(weight)})
    ours = cr.vmap(cr.grad(lambda a, b: CF.cross_entropy(a, b, **kw)))(x, t)
    theirs = torch.func.vmap(torch.func.grad(lambda a, b: torch.nn.functional.cross_entropy(a, b, **tkw)))(
        torch.tensor(x), torch.tensor(t))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12, atol=1e-15)
    values = cr.vmap(lambda a, b: CF.cross_entropy(a, b, **kw))(x, t)
    assert np.isfinite(values[0]) and np.isnan(values[1])
