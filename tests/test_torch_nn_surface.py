"""The ``nn`` surface a PyTorch program reaches for (``layers_more``, ``losses_more`` and the functional files
``activations_shrink``, ``channels``, ``distances``, ``losses_multiclass``), against PyTorch 2.13 as the oracle:
values, first-order gradients, and second-order ones for the smooth functions; the Modules with PyTorch's
parameters copied in; a few on the strict device double."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _check(cr_fn, torch_fn, inputs, grad_of=None, second=True, tol=1e-9):
    """Values of ``cr_fn(*inputs)`` and ``torch_fn(*inputs)``, and the gradients of ``sum(out * w)`` (and of its
    gradient's squared sum, second order) with respect to the inputs numbered in ``grad_of`` (default: all)."""
    grad_of = range(len(inputs)) if grad_of is None else grad_of
    ct = [cr.Tensor(a, requires_grad=k in grad_of) if isinstance(a, np.ndarray) else a for k, a in enumerate(inputs)]
    tt = [torch.tensor(a, requires_grad=k in grad_of) if isinstance(a, np.ndarray) else a
          for k, a in enumerate(inputs)]
    out_c, out_t = cr_fn(*ct), torch_fn(*tt)
    np.testing.assert_allclose(np.asarray(out_c.numpy()), out_t.detach().numpy(), rtol=tol, atol=tol)
    w = _x(*out_t.shape, seed=9)
    xs_c, xs_t = [ct[k] for k in grad_of], [tt[k] for k in grad_of]
    if not xs_c:
        return
    g_c = cr.autograd.grad((out_c * w).sum(), xs_c, create_graph=second)
    g_t = torch.autograd.grad((out_t * torch.tensor(w)).sum(), xs_t, create_graph=second)
    for a, b in zip(g_c, g_t):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    if second:
        h_c = cr.autograd.grad(sum((g * g).sum() for g in g_c), xs_c, allow_unused=True)
        h_t = torch.autograd.grad(sum((g * g).sum() for g in g_t), xs_t, allow_unused=True)
        for a, b in zip(h_c, h_t):
            a = np.zeros(1) if a is None else a.numpy()
            b = np.zeros(1) if b is None or b._is_zerotensor() else b.detach().numpy()
            np.testing.assert_allclose(np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)),
                                       np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)), rtol=tol, atol=tol)


KINKED = np.array([[-1.0, -0.5, 0.0, 0.5, 1.0, 2.0], [-2.0, 0.3, -0.3, 0.7, -0.7, 0.0]])


# -- activations ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kw", [("softshrink", {}), ("softshrink", {"lambd": 0.7}), ("hardshrink", {}),
                                      ("hardshrink", {"lambd": 0.3}), ("tanhshrink", {})])
def test_shrinks_match_torch_at_their_kinks_too(name, kw):
    x = np.concatenate([KINKED, _x(2, 6)])
    _check(lambda a: getattr(F, name)(a, **kw), lambda a: getattr(TF, name)(a, **kw), [x],
           second=name == "tanhshrink")


@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((4,), 0), ((2, 3, 4), -1), ((2, 3, 4), 0)])
def test_softmin_matches_torch(shape, dim):
    _check(lambda a: F.softmin(a, dim=dim), lambda a: TF.softmin(a, dim=dim), [_x(*shape)])


@pytest.mark.parametrize("shape, n", [((2, 3, 4), 3), ((2, 3, 4), 1), ((5,), 1), ((2, 3), 3),
                                      ((2, 3, 2, 2), 3)])
def test_prelu_matches_torch_with_shared_and_per_channel_slopes(shape, n):
    x = _x(*shape)
    x.flat[0] = 0.0  # derivative weight at 0, as PyTorch
    _check(F.prelu, TF.prelu, [x, np.linspace(0.1, 0.5, n)], second=False)


def test_prelu_refuses_a_weight_that_fits_no_channel_count():
    with pytest.raises(ValueError, match=r"prelu: mismatch .* found 4 parameters and channel size 3"):
        F.prelu(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match=r"prelu: mismatch .* found 5 parameters and channel size 1"):
        F.prelu(np.ones(5), np.ones(5))


def test_rrelu_in_eval_is_torch_and_in_training_draws_slopes_in_range():
    _check(lambda a: F.rrelu(a), lambda a: TF.rrelu(a), [KINKED], second=False)
    x = -np.ones(2000)
    y = np.asarray(F.rrelu(x, 0.1, 0.3, training=True, rng=0))
    assert np.all((-y >= 0.1) & (-y <= 0.3)) and np.std(y) > 0.03
    np.testing.assert_array_equal(np.asarray(F.rrelu(np.ones(3), training=True, rng=0)), np.ones(3))


def test_gumbel_softmax_is_a_distribution_and_hard_passes_the_soft_gradient():
    logits = cr.Tensor(_x(4, 5), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5, rng=1)
    np.testing.assert_allclose(soft.numpy().sum(-1), np.ones(4))
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True, rng=1)
    assert sorted(np.unique(hard.numpy())) == [0.0, 1.0] and np.all(hard.numpy().sum(-1) == 1)
    np.testing.assert_array_equal(hard.numpy().argmax(-1), soft.numpy().argmax(-1))
    w = _x(4, 5, seed=3)
    (g_hard,) = cr.autograd.grad((hard * w).sum(), [logits])
    (g_soft,) = cr.autograd.grad((F.gumbel_softmax(logits, tau=0.5, rng=1) * w).sum(), [logits])
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy())
    # the same draws as -log(Exponential) from the generator: softmax((logits + g) / tau)
    g = -np.log(np.random.default_rng(1).exponential(1.0, (4, 5)))
    want = torch.softmax((torch.tensor(_x(4, 5)) + torch.tensor(g)) / 0.5, -1).numpy()
    np.testing.assert_allclose(soft.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("name, args", [("relu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)),
                                        ("hardtanh_", (-0.5, 0.5)), ("selu_", ()), ("celu_", (2.0,)),
                                        ("threshold_", (0.1, 7.0))])
def test_in_place_activations_write_as_torch_and_only_where_torch_allows(name, args):
    x = cr.Tensor(KINKED.copy())
    t = torch.tensor(KINKED.copy())
    assert getattr(F, name)(x, *args) is x
    getattr(TF, name)(t, *args)
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-12)
    leaf = cr.Tensor(KINKED.copy(), requires_grad=True)
    with pytest.raises(RuntimeError, match=name):
        getattr(F, name)(leaf, *args)
    with cr.no_grad():
        getattr(F, name)(leaf, *args)
    np.testing.assert_allclose(leaf.numpy(), t.numpy(), rtol=1e-12)


# -- channels ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, r", [((2, 8, 3, 2), 2), ((9, 2, 3), 3), ((2, 1, 4, 3, 1), 1)])
def test_pixel_shuffle_and_unshuffle_match_torch(shape, r):
    _check(lambda a: F.pixel_shuffle(a, r), lambda a: TF.pixel_shuffle(a, r), [_x(*shape)], second=False)
    up = torch.nn.functional.pixel_shuffle(torch.tensor(_x(*shape)), r).numpy()
    _check(lambda a: F.pixel_unshuffle(a, r), lambda a: TF.pixel_unshuffle(a, r), [up], second=False)


def test_pixel_shuffle_refuses_channels_not_divisible():
    with pytest.raises(ValueError, match=r"pixel_shuffle: the channel dim \(size 3"):
        F.pixel_shuffle(np.ones((3, 2, 2)), 2)


@pytest.mark.parametrize("shape, g", [((2, 6, 3), 3), ((1, 4, 2, 2), 2), ((2, 6, 1, 1, 2), 2)])
def test_channel_shuffle_matches_torch(shape, g):
    _check(lambda a: F.channel_shuffle(a, g), lambda a: TF.channel_shuffle(a, g), [_x(*shape)], second=False)
    with pytest.raises(ValueError, match="channel_shuffle"):
        F.channel_shuffle(np.ones((4, 2)), 2)


@pytest.mark.parametrize("name, shape, batched", [("dropout1d", (4, 6, 5), True), ("dropout1d", (6, 5), False),
                                                  ("dropout2d", (4, 6, 3, 3), True), ("dropout2d", (6, 3, 3), True),
                                                  ("dropout3d", (2, 6, 2, 2, 2), True),
                                                  ("dropout3d", (6, 2, 2, 2), False)])
@pytest.mark.filterwarnings("ignore:dropout2d")
def test_channel_dropouts_zero_whole_channels_and_scale_the_rest(name, shape, batched):
    x = cr.Tensor(np.ones(shape), requires_grad=True)
    with pytest.warns(Warning) if shape == (6, 3, 3) else _nothing():
        y = getattr(F, name)(x, p=0.5, rng=0)
    v = y.numpy()
    per = v.reshape(shape[: 2 if batched or shape == (6, 3, 3) else 1] + (-1,))
    assert set(np.unique(per)) <= {0.0, 2.0} and np.all(per.min(-1) == per.max(-1))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), v)
    np.testing.assert_array_equal(getattr(F, name)(np.ones(shape), training=False), np.ones(shape))
    with pytest.raises(ValueError, match=name):
        getattr(F, name)(np.ones(shape), p=1.5)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_alpha_dropouts_keep_the_mean_and_variance_of_standard_inputs_and_are_identity_in_eval():
    x = _x(200, 50)
    y = np.asarray(F.alpha_dropout(x, 0.2, training=True, rng=0))
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    z = np.asarray(F.feature_alpha_dropout(_x(4, 100, 3), 0.5, training=True, rng=0))
    assert abs(z.mean()) < 0.2
    np.testing.assert_array_equal(F.alpha_dropout(x, 0.2), x)


# -- distances --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("s1, s2, p, keepdim", [((4, 3), (4, 3), 2.0, False), ((4, 3), (3,), 1.0, True),
                                                ((3,), (3,), 3.0, False), ((2, 4, 3), (4, 3), 2.0, False)])
def test_pairwise_distance_matches_torch(s1, s2, p, keepdim):
    a, b = _x(*s1), _x(*s2, seed=1)
    a[0] = b[0] if a.ndim == b.ndim else a[0]  # a zero difference (eps keeps it smooth)
    _check(lambda u, v: F.pairwise_distance(u, v, p=p, keepdim=keepdim),
           lambda u, v: TF.pairwise_distance(u, v, p=p, keepdim=keepdim), [a, b])


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0])
def test_pdist_matches_torch(p):
    _check(lambda u: F.pdist(u, p), lambda u: TF.pdist(u, p), [_x(5, 3)], second=False)  # (torch has no 2nd)


@pytest.mark.parametrize("lead", [(4,), (), (2, 3)])
def test_bilinear_matches_torch(lead):
    _check(F.bilinear, TF.bilinear, [_x(*lead, 3), _x(*lead, 2, seed=1), _x(4, 3, 2, seed=2), _x(4, seed=3)])


def test_cosine_similarity_layer_matches_torch():
    a, b = _x(4, 3), _x(4, 3, seed=1)
    _check(nn.CosineSimilarity(dim=1), torch.nn.CosineSimilarity(dim=1), [a, b])
    _check(nn.PairwiseDistance(p=1.0, keepdim=True), torch.nn.PairwiseDistance(p=1.0, keepdim=True), [a, b],
           second=False)


# -- windows ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, kw", [((2, 3, 7, 6), {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1,
                                                       "stride": 2}),
                                       ((3, 4, 4), {"kernel_size": 2}),
                                       ((1, 2, 5, 5), {"kernel_size": 3, "padding": 1})])
def test_unfold_and_fold_match_torch(shape, kw):
    _check(lambda a: F.unfold(a, **kw), lambda a: TF.unfold(a, **kw), [_x(*shape)], second=False)
    cols = TF.unfold(torch.tensor(_x(*shape)), **kw).numpy()
    size = shape[-2:]
    _check(lambda a: F.fold(a, size, **kw), lambda a: TF.fold(a, size, **kw), [cols], second=False)
    ours, theirs = nn.Fold(size, **kw), torch.nn.Fold(size, **kw)
    assert repr(ours) == repr(theirs) and repr(nn.Unfold(**kw)) == repr(torch.nn.Unfold(**kw))
    with pytest.raises(ValueError, match="fold: input of shape"):
        F.fold(cols[..., :-1], size, **kw)


@pytest.mark.parametrize("name, shape, size", [("adaptive_max_pool2d", (2, 3, 7, 6), (3, 4)),
                                               ("adaptive_max_pool2d", (3, 5, 5), 2),
                                               ("adaptive_max_pool2d", (1, 2, 4, 6), (None, 4)),
                                               ("adaptive_max_pool1d", (2, 3, 9), 4),
                                               ("adaptive_max_pool1d", (3, 7), 3),
                                               ("adaptive_max_pool1d", (2, 2, 6), 6)])
def test_adaptive_max_pools_match_torch_with_indices_and_ties(name, shape, size):
    x = np.round(_x(*shape), 0)  # many ties: the first largest is kept, as PyTorch keeps it
    _check(lambda a: getattr(F, name)(a, size), lambda a: getattr(TF, name)(a, size), [x], second=False)
    got, want = getattr(F, name)(x, size, return_indices=True), getattr(TF, name)(torch.tensor(x), size, True)
    np.testing.assert_array_equal(np.asarray(got[1]), want[1].numpy())
    layer = getattr(nn, "AdaptiveMaxPool" + name[-2:])(size, return_indices=True)
    np.testing.assert_array_equal(np.asarray(layer(x)[1]), want[1].numpy())
    assert repr(layer) == repr(getattr(torch.nn, "AdaptiveMaxPool" + name[-2:])(size, return_indices=True))


@pytest.mark.parametrize("p", [2.0, 3.0, 1.5])
def test_lp_pools_match_torch(p):
    x = np.abs(_x(2, 3, 6, 6)) + 0.1
    _check(lambda a: F.lp_pool2d(a, p, 2), lambda a: TF.lp_pool2d(a, p, 2), [x])
    _check(lambda a: F.lp_pool2d(a, p, (3, 2), stride=1), lambda a: TF.lp_pool2d(a, p, (3, 2), stride=1), [x])
    _check(lambda a: F.lp_pool1d(a, p, 3, 2), lambda a: TF.lp_pool1d(a, p, 3, 2), [x[0, 0]])
    assert repr(nn.LPPool2d(p, 2)) == repr(torch.nn.LPPool2d(p, 2))


@pytest.mark.parametrize("shape, size", [((2, 5, 4, 3), 3), ((2, 4, 6), 2), ((1, 6, 2, 2, 2), 4)])
def test_local_response_norm_matches_torch(shape, size):
    _check(lambda a: F.local_response_norm(a, size, alpha=0.1), lambda a: TF.local_response_norm(a, size, alpha=0.1),
           [_x(*shape)])
    assert repr(nn.LocalResponseNorm(size)) == repr(torch.nn.LocalResponseNorm(size))


def test_max_pool_with_indices_spellings_match_torch():
    x = _x(2, 3, 6, 6)
    got, want = F.max_pool2d_with_indices(x, 2), TF.max_pool2d_with_indices(torch.tensor(x), 2)
    np.testing.assert_array_equal(np.asarray(got[1]), want[1].numpy())
    got, want = F.max_pool1d_with_indices(x[0], 3), TF.max_pool1d_with_indices(torch.tensor(x[0]), 3)
    np.testing.assert_array_equal(np.asarray(got[1]), want[1].numpy())


@pytest.mark.parametrize("shape, k, s, p, size", [((2, 3, 6, 6), 2, None, 0, None), ((3, 7, 5), 3, 2, 1, (7, 5)),
                                                  ((2, 3, 5, 5), 2, 2, 0, (5, 5))])
def test_max_unpool2d_matches_torch(shape, k, s, p, size):
    pooled, idx = TF.max_pool2d(torch.tensor(_x(*shape)), k, s, p, return_indices=True)
    size_arg = None if size is None else size
    _check(lambda a: F.max_unpool2d(a, idx.numpy(), k, s, p, size_arg),
           lambda a: TF.max_unpool2d(a, idx, k, s, p, size_arg), [pooled.numpy()], second=False,
           grad_of=[] if s == 2 and k == 3 else None)  # (a position named twice: PyTorch sends g to both copies)
    ours, theirs = nn.MaxUnpool2d(k, s, p), torch.nn.MaxUnpool2d(k, s, p)
    np.testing.assert_array_equal(np.asarray(ours(pooled.numpy(), idx.numpy(), size_arg)),
                                  theirs(pooled, idx, size_arg).numpy())
    assert repr(ours) == repr(theirs)
    pooled1, idx1 = TF.max_pool1d(torch.tensor(_x(*shape[:-1])), k, s, p, return_indices=True)
    _check(lambda a: F.max_unpool1d(a, idx1.numpy(), k, s, p), lambda a: TF.max_unpool1d(a, idx1, k, s, p),
           [pooled1.numpy()], second=False, grad_of=[] if s == 2 and k == 3 else None)
    assert repr(nn.MaxUnpool1d(k, s, p)) == repr(torch.nn.MaxUnpool1d(k, s, p))


# -- embedding bags ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_embedding_bag_matches_torch_with_offsets_padding_and_empty_bags(mode, padding_idx, include_last_offset):
    w = np.round(_x(10, 3), 0)  # ties in the max
    i, o = np.array([1, 2, 4, 5, 4, 3, 2, 9, 4]), np.array([0, 3, 3, 6, 9])
    o = o if include_last_offset else o[:-1]
    _check(lambda t: F.embedding_bag(i, t, o, mode=mode, padding_idx=padding_idx,
                                     include_last_offset=include_last_offset),
           lambda t: TF.embedding_bag(torch.tensor(i), t, torch.tensor(o), mode=mode, padding_idx=padding_idx,
                                      include_last_offset=include_last_offset), [w], second=False)
    rows = np.array([[1, 2, 4], [4, 4, 0]])
    _check(lambda t: F.embedding_bag(rows, t, mode=mode, padding_idx=padding_idx),
           lambda t: TF.embedding_bag(torch.tensor(rows), t, mode=mode, padding_idx=padding_idx), [w], second=False)


def test_embedding_bag_per_sample_weights_and_the_layer_match_torch():
    w, i, o, psw = _x(10, 3), np.array([1, 2, 4, 5]), np.array([0, 1]), _x(4, seed=1)
    _check(lambda t, s: F.embedding_bag(i, t, o, mode="sum", per_sample_weights=s),
           lambda t, s: TF.embedding_bag(torch.tensor(i), t, torch.tensor(o), mode="sum", per_sample_weights=s),
           [w, psw], second=False)  # (torch has no second derivative of it)
    theirs = torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2, dtype=torch.float64)
    ours = nn.EmbeddingBag(10, 3, mode="max", padding_idx=2, dtype=np.float64)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(np.asarray(ours(i, o).detach().numpy()), theirs(torch.tensor(i), torch.tensor(o))
                               .detach().numpy())
    assert repr(ours) == repr(theirs)
    with pytest.raises(ValueError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(i, w, o, per_sample_weights=psw)
    with pytest.raises(IndexError, match="index 10 is out of range"):
        F.embedding_bag(np.array([10]), w, np.array([0]))


def test_triplet_margin_with_distance_loss_takes_any_distance():
    a, p, n = _x(4, 3), _x(4, 3, seed=1), _x(4, 3, seed=2)
    def dist(u, v):
        return 1 - F.cosine_similarity(u, v)

    def tdist(u, v):
        return 1 - TF.cosine_similarity(u, v)

    _check(lambda *t: F.triplet_margin_with_distance_loss(*t, distance_function=dist, swap=True),
           lambda *t: TF.triplet_margin_with_distance_loss(*t, distance_function=tdist, swap=True), [a, p, n])


# -- losses -----------------------------------------------------------------------------------------------
REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, margin, weighted", [(1, 1.0, False), (2, 0.5, True), (1, 0.3, True)])
def test_multi_margin_loss_matches_torch(reduction, p, margin, weighted):
    x, t = _x(5, 4), np.array([0, 3, 1, 1, 2])
    w = np.array([0.5, 1.0, 2.0, 1.5]) if weighted else None
    _check(lambda a: F.multi_margin_loss(a, t, p=p, margin=margin, weight=w, reduction=reduction),
           lambda a: TF.multi_margin_loss(a, torch.tensor(t), p=p, margin=margin,
                                          weight=None if w is None else torch.tensor(w), reduction=reduction),
           [x], second=False)  # (torch has no second derivative of it)
    _check(lambda a: F.multi_margin_loss(a, np.array(2), reduction=reduction),
           lambda a: TF.multi_margin_loss(a, torch.tensor(2), reduction=reduction), [x[0]], second=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_matches_torch(reduction):
    x = _x(3, 4)
    t = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 1, 2, 3]])
    _check(lambda a: F.multilabel_margin_loss(a, t, reduction=reduction),
           lambda a: TF.multilabel_margin_loss(a, torch.tensor(t), reduction=reduction), [x], second=False)
    _check(lambda a: F.multilabel_margin_loss(a, t[0], reduction=reduction),
           lambda a: TF.multilabel_margin_loss(a, torch.tensor(t[0]), reduction=reduction), [x[0]], second=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss_matches_torch(reduction, var_shape, full):
    x, y = _x(4, 3), _x(4, 3, seed=1)
    var = np.abs(_x(*var_shape, seed=2)) + 0.1
    var.flat[0] = 1e-8  # under eps: the value clamped, the gradient not
    _check(lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=full, reduction=reduction),
           lambda a, b, v: TF.gaussian_nll_loss(a, b, v, full=full, reduction=reduction), [x, y, var], tol=1e-7)
    with pytest.raises(ValueError, match="var has negative"):
        F.gaussian_nll_loss(x, y, -np.ones((4, 3)))


LOSS_LAYERS = [
    ("MarginRankingLoss", {"margin": 0.2}, lambda: [_x(5), _x(5, seed=1), np.array([1.0, -1, 1, -1, 1])]),
    ("HingeEmbeddingLoss", {"margin": 0.5}, lambda: [_x(5), np.array([1.0, -1, 1, -1, -1])]),
    ("SoftMarginLoss", {}, lambda: [_x(5), np.array([1.0, -1, 1, -1, -1])]),
    ("MultiLabelSoftMarginLoss", {}, lambda: [_x(3, 4), np.array([[1.0, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]])]),
    ("CosineEmbeddingLoss", {"margin": 0.1}, lambda: [_x(4, 3), _x(4, 3, seed=1), np.array([1.0, -1, 1, -1])]),
    ("TripletMarginLoss", {"margin": 2.0, "swap": True}, lambda: [_x(4, 3), _x(4, 3, seed=1), _x(4, 3, seed=2)]),
    ("TripletMarginWithDistanceLoss", {"margin": 2.0}, lambda: [_x(4, 3), _x(4, 3, seed=1), _x(4, 3, seed=2)]),
    ("PoissonNLLLoss", {"full": True}, lambda: [_x(5), np.array([0.0, 1, 2, 3, 5])]),
    ("GaussianNLLLoss", {}, lambda: [_x(4, 3), _x(4, 3, seed=1), np.abs(_x(4, 1, seed=2))]),
    ("MultiMarginLoss", {"margin": 0.7}, lambda: [_x(4, 3), np.array([0, 2, 1, 2])]),
    ("MultiLabelMarginLoss", {}, lambda: [_x(2, 3), np.array([[2, -1, 0], [0, 1, -1]])]),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, kw, inputs", LOSS_LAYERS, ids=[case[0] for case in LOSS_LAYERS])
def test_loss_layers_match_torch(name, kw, inputs, reduction):
    xs = inputs()
    ours, theirs = getattr(nn, name)(**kw, reduction=reduction), getattr(torch.nn, name)(**kw, reduction=reduction)
    floating = [k for k, a in enumerate(xs) if a.dtype.kind == "f" and not (k == len(xs) - 1 and name in (
        "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
        "CosineEmbeddingLoss", "PoissonNLLLoss"))]
    _check(ours, lambda *a: theirs(*a), xs, grad_of=floating, second=False)


def test_loss_layers_read_the_legacy_size_average_and_reduce_as_torch():
    assert nn.MarginRankingLoss(size_average=False).reduction == "sum"
    assert nn.MarginRankingLoss(reduce=False).reduction == "none"
    assert repr(nn.MultiMarginLoss(margin=0.5)) == "MultiMarginLoss(reduction='mean', p=1, margin=0.5)"


# -- layers -----------------------------------------------------------------------------------------------
def test_prelu_and_bilinear_layers_match_torch_with_its_parameters():
    for ours, theirs, xs in [(nn.PReLU(3, dtype=np.float64), torch.nn.PReLU(3, dtype=torch.float64), [_x(2, 3, 4)]),
                             (nn.Bilinear(3, 2, 4, dtype=np.float64), torch.nn.Bilinear(3, 2, 4, dtype=torch.float64),
                              [_x(5, 3), _x(5, 2, seed=1)])]:
        with torch.no_grad():
            for p in theirs.parameters():
                p.copy_(torch.tensor(_x(*p.shape, seed=4)))
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        _check(ours, theirs, xs, second=False)
        ours(*xs).sum().backward()
        theirs(*[torch.tensor(x) for x in xs]).sum().backward()
        got = dict(ours.named_parameters())
        for k, p in theirs.named_parameters():
            np.testing.assert_allclose(got[k].grad.numpy(), p.grad.numpy(), rtol=1e-12, err_msg=k)
    assert repr(nn.PReLU(3)) == repr(torch.nn.PReLU(3))
    assert repr(nn.Bilinear(3, 2, 4)) == repr(torch.nn.Bilinear(3, 2, 4))


def test_prelu_layer_weight_gets_torchs_gradient():
    x = _x(2, 3, 4)
    ours, theirs = nn.PReLU(3, init=0.1, dtype=np.float64), torch.nn.PReLU(3, init=0.1, dtype=torch.float64)
    ours(x).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)


SIMPLE_LAYERS = [
    ("Softmin", (1,), (2, 3, 4)), ("Softshrink", (0.3,), (2, 5)), ("Hardshrink", (), (2, 5)), ("Tanhshrink", (), (3,)),
    ("Threshold", (0.1, 20.0), (2, 5)), ("Softmax2d", (), (2, 3, 2, 2)), ("PixelShuffle", (2,), (1, 8, 2, 3)),
    ("PixelUnshuffle", (2,), (1, 2, 4, 2)), ("ChannelShuffle", (2,), (1, 4, 2)), ("RReLU", (0.1, 0.3), (2, 5)),
    *[(f"{kind}Pad{n}d", (args if kind != "Constant" else (args[0], 1.5)), (2, 3, 4, 5, 6)[: n + 2])
      for n in (1, 2, 3) for kind, args in [("Zero", (1,)), ("Constant", ((1, 2) * n,)), ("Reflection", (2,)),
                                            ("Replication", ((1, 0) * n,)), ("Circular", (1,))]],
    ("ZeroPad2d", ((1, -1, 2, 0),), (3, 4, 5)),
]


@pytest.mark.parametrize("name, args, shape", SIMPLE_LAYERS, ids=[case[0] for case in SIMPLE_LAYERS])
def test_simple_layers_match_torch_values_gradients_and_repr(name, args, shape):
    ours, theirs = getattr(nn, name)(*args).eval(), getattr(torch.nn, name)(*args).eval()
    x = np.concatenate([KINKED.reshape(-1)[: int(np.prod(shape)) // 2], _x(int(np.prod(shape)))])
    _check(ours, theirs, [x[: int(np.prod(shape))].reshape(shape)], second=False)
    assert repr(ours) == repr(theirs)


def test_channel_dropout_layers_are_identity_in_eval_and_drop_in_training():
    for cls in (nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout):
        layer = cls(0.5, rng=0)
        assert repr(layer) == repr(getattr(torch.nn, cls.__name__)(0.5))
        x = np.ones((2, 4, 3, 3, 3)) if cls is nn.Dropout3d else np.ones((2, 4, 3, 3)) if cls is nn.Dropout2d \
            else np.ones((2, 4, 3))
        assert not np.array_equal(np.asarray(layer(x)), x)
        np.testing.assert_array_equal(np.asarray(layer.eval()(x)), x)


# -- second order and transforms through the compositions ------------------------------------------------
def test_softmin_and_bilinear_under_vmap_and_jvp():
    x = _x(3, 4)
    got = cr.vmap(lambda r: F.softmin(r, dim=0))(x)
    np.testing.assert_allclose(np.asarray(got), TF.softmin(torch.tensor(x), dim=1).numpy(), rtol=1e-12)
    _, tangent = cr.jvp(lambda r: F.tanhshrink(r), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(tangent), np.tanh(x) ** 2, rtol=1e-12)


# -- on the strict device double ---------------------------------------------------------------------------
def test_a_few_run_on_the_device_double_with_the_cpus_values():
    from device_setup import backend, host, on_device, to_device

    backend()
    x, y = _x(2, 8, 2, 2), _x(2, 8, 2, 2, seed=1)
    slopes, var, classes = np.linspace(0.1, 0.8, 8), np.ones((2, 8, 2, 2)), np.array([0, 3, 5, 15])
    cases = [lambda a, b, m: F.pixel_shuffle(a, 2), lambda a, b, m: F.softshrink(a),
             lambda a, b, m: F.pairwise_distance(a, b), lambda a, b, m: F.prelu(a, m(slopes)),
             lambda a, b, m: F.channel_shuffle(a, 4), lambda a, b, m: F.gaussian_nll_loss(a, b, m(var)),
             lambda a, b, m: F.multi_margin_loss(a.reshape(4, 16), m(classes)),
             lambda a, b, m: F.multilabel_margin_loss(a.reshape(4, 16), m(np.tile(classes, (4, 4)))),
             lambda a, b, m: F.softmin(a, dim=1), lambda a, b, m: F.tanhshrink(a), lambda a, b, m: F.pdist(a[0, 0]),
             lambda a, b, m: F.unfold(a, 2, padding=1), lambda a, b, m: F.fold(a.reshape(2, 8, 4), (3, 3), 2),
             lambda a, b, m: F.adaptive_max_pool2d(a, (1, 2)), lambda a, b, m: F.local_response_norm(a, 3),
             lambda a, b, m: F.lp_pool2d(a * a + 0.1, 2.0, 2), lambda a, b, m: F.bilinear(a, b, m(np.ones((3, 2, 2)))),
             lambda a, b, m: F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2),
             lambda a, b, m: F.max_unpool2d(*F.max_pool2d(a, 2, 1, return_indices=True), 2, 1),
             lambda a, b, m: F.embedding_bag(m(classes), a.reshape(16, 4), m(np.array([0, 1])), mode="max"),
             lambda a, b, m: F.dropout2d(a, 0.5), lambda a, b, m: F.gumbel_softmax(a, hard=True, rng=0)]
    for k, fn in enumerate(cases):
        want = fn(cr.Tensor(x), cr.Tensor(y), cr.Tensor)
        a_d = cr.Tensor(to_device(x), requires_grad=True)
        got = fn(a_d, cr.Tensor(to_device(y)), lambda c: cr.Tensor(to_device(c)))
        assert on_device(got), k
        if k < len(cases) - 2:  # (the last two draw random masks)
            np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12, err_msg=str(k))
        (g,) = cr.autograd.grad(got.sum(), [a_d])
        assert on_device(g), k
