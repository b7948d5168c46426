"""PyTorch as the oracle to second order for the Tensor API spelled as PyTorch users spell it.

Each case is one small program written once and run on both libraries (the spellings are shared:
``x.clamp(min=0)``, ``F.cosine_similarity(a, b, dim=-1)``, ``x.xlogy(y)``...), at the inputs where a
fuzzer found chainrule and PyTorch apart: exact zeros, ties, broadcasting. Compared: the value, the
gradient of every input, the gradient of the squared gradient norm (a gradient penalty) and a
Hessian-vector product (grad of <grad, v>).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as CF

torch = pytest.importorskip("torch", reason="the oracle tests need PyTorch")
TF = torch.nn.functional
pytestmark = pytest.mark.oracle


class Side:
    """The namespaces a program calls: ``lib`` (torch or chainrule), ``F`` (its nn.functional), ``T`` (tensor)."""

    def __init__(self, lib, functional, tensor):
        self.lib, self.F, self.T = lib, functional, tensor


TORCH = Side(torch, TF, lambda a, **kw: torch.tensor(a, **kw))
CHAINRULE = Side(cr, CF, lambda a, **kw: cr.Tensor(a, **kw))


def _numpy(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else np.asarray(t.data)


def derivatives(side, program, inputs, v):
    """Value, gradients, gradient of the squared gradient norm, and Hessian-vector products along ``v``."""
    xs = [side.T(a, requires_grad=True) for a in inputs]
    out = program(side, *xs)
    grads = side.lib.autograd.grad(out, xs, create_graph=True)
    penalty = sum((g * g).sum() for g in grads)
    pen_grads = side.lib.autograd.grad(penalty, xs, retain_graph=True)
    hv = side.lib.autograd.grad(sum((g * side.T(vi)).sum() for g, vi in zip(grads, v)), xs)
    return [_numpy(out)], [_numpy(g) for g in grads], [_numpy(g) for g in pen_grads], [_numpy(h) for h in hv]


def assert_same_to_second_order(program, *inputs, seed=0):
    inputs = [np.asarray(a, dtype=np.float64) for a in inputs]
    v = [np.random.default_rng(seed).normal(size=a.shape) for a in inputs]
    ours, theirs = derivatives(CHAINRULE, program, inputs, v), derivatives(TORCH, program, inputs, v)
    for what, a, b in zip(("value", "gradient", "gradient-penalty gradient", "Hessian-vector product"), ours, theirs):
        for k, (x, y) in enumerate(zip(a, b)):
            assert np.shape(x) == np.shape(y), f"{what} {k}: shape {np.shape(x)}, torch {np.shape(y)}"
            # where PyTorch has no answer (NaN: 0/0 inside its backward formulas) chainrule may have a number
            lost = np.isnan(y) & np.isfinite(x)
            np.testing.assert_allclose(np.where(lost, 0.0, x), np.where(lost, 0.0, y), rtol=1e-9, atol=1e-12,
                                       err_msg=f"{what} of input {k}")


def weighted(out, seed=1):
    w = np.random.default_rng(seed).normal(size=tuple(out.shape))
    return (out * (torch.tensor(w) if isinstance(out, torch.Tensor) else cr.Tensor(w))).sum()


def test_cosine_similarity_broadcasts_before_taking_the_norms():
    # (3, 1) against (4,): each x1 entry counts four times in |x1|; chainrule used to take |x1| over one
    a, b = [[1.0], [2.0], [-1.0]], [1.0, 2.0, 0.5, 3.0]
    assert_same_to_second_order(lambda s, x, y: weighted(s.F.cosine_similarity(x, y, dim=-1)), a, b)


def test_cosine_similarity_below_eps_clamps_the_norm_value_only():
    # PyTorch clamps the norms at eps without recording it: the gradient is the unclamped norm's (0 at zero).
    # A large eps keeps the 1/eps terms mild, so rows 0 (a zero vector) and 1 (norm 0.3 < eps) compare tightly
    a = [[0.0, 0.0, 0.0], [-0.1, 0.2, 0.2], [-0.1, 0.27, 0.81]]
    b = [[-0.5, -0.7, 0.0], [0.1, 0.1, 0.0], [0.3, 0.0, -0.5]]
    assert_same_to_second_order(lambda s, x, y: weighted(s.F.cosine_similarity(x, y, dim=-1, eps=0.5)), a, b)


def test_xlogy_derivative_in_x_is_zero_where_x_and_y_are_zero():
    # PyTorch: xlogy(0, y) is 0 for every y, so its derivative in x is 0 where x == 0 and y <= 0 (no -inf)
    x, y = [0.0, 0.0, 1.0, 2.0], [2.0, 0.0, 3.0, 0.5]
    # y is a constant: PyTorch's derivative in y at x == y == 0 is 0/0 = NaN (chainrule's is 0)
    assert_same_to_second_order(lambda s, a: weighted(a.xlogy(s.T(y)) + a * a), x)
    assert_same_to_second_order(lambda s, a: weighted(a.xlogy(s.T(y) * a)), x)
    # PyTorch masks (masked_fill), so an infinite gradient from further on (sqrt at 0) gives 0 there, not nan
    assert_same_to_second_order(lambda s, a: weighted(a.xlogy(s.T(y)).clamp(min=0.0).sqrt() + a * a), x)


@pytest.mark.parametrize("cut", ["relu", "clamp", "clamp_min", "clamp_max", "maximum", "minimum", "F.relu", "hardtanh"])
def test_the_part_a_piecewise_op_cuts_off_gets_zero_even_from_an_infinite_gradient(cut):
    # sqrt at 0 sends back inf; PyTorch's relu/clamp/maximum select with where, so the cut-off part gets 0
    # (not 0 * inf = nan), at first and second order. Entries: below, at and above the kinks
    ops = {
        "relu": lambda s, x: x.relu(),
        "clamp": lambda s, x: x.clamp(0.0, 1.0),
        "clamp_min": lambda s, x: x.clamp(min=0.0),
        "clamp_max": lambda s, x: 0.0 - x.clamp(max=0.0),  # 0.0 - : no -0.0, whose sqrt has derivative -inf
        "maximum": lambda s, x: x.maximum(s.T(np.zeros(5))),
        "minimum": lambda s, x: 0.0 - x.minimum(s.T(np.zeros(5))),
        "F.relu": lambda s, x: s.F.relu(x),
        "hardtanh": lambda s, x: s.F.hardtanh(x, 0.0, 1.0),
    }
    x = [-1.0, 0.0, 0.5, 1.0, 2.0]
    assert_same_to_second_order(lambda s, a: weighted(ops[cut](s, a).clamp(min=0.0).sqrt() + a * a), x)


def test_sort_of_a_tensor_in_the_graph_is_pytorchs_sort():
    # x.sort() of a Tensor that requires grad used to raise (NumPy's in-place sort); PyTorch's returns a copy
    x = [[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 0.0, 2.0]]
    assert_same_to_second_order(lambda s, a: weighted((a * a).sort()[0] * a), x)
    assert_same_to_second_order(lambda s, a: weighted((a * a).sort(0, True)[0] * a), x)


def test_topk_and_kthvalue_send_a_ties_gradient_where_pytorch_does():
    # PyTorch's CPU topk/kthvalue are not stable: which equal entry wins follows their swaps (replayed)
    x = [[1.0, 0.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0], [0.0, 2.0, 0.5, 0.0], [3.0, 1.0, 3.0, 1.0]]
    assert_same_to_second_order(lambda s, a: weighted(a.topk(2, dim=-1)[0] * a.sum()), x)
    assert_same_to_second_order(lambda s, a: weighted((a * a).topk(3, dim=0, largest=False)[0]), x)
    assert_same_to_second_order(lambda s, a: weighted(a.kthvalue(1, dim=-1)[0] * a[:, 0]), x)
    assert_same_to_second_order(lambda s, a: weighted(a.kthvalue(2, dim=0, keepdim=True)[0] ** 2), x)
    assert_same_to_second_order(lambda s, a: weighted(a.take_along_dim(a.argsort(dim=1), dim=1) ** 2), x)


def test_topk_tie_order_matches_pytorch_on_long_rows():
    # long rows take std::partial_sort (64 k <= n) or introsort (k > 17): replayed too
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=(3, 200)).astype(float)
    for k, largest in [(1, True), (3, False), (40, True)]:
        ours, theirs = cr.Tensor(x).topk(k, largest=largest), torch.tensor(x).topk(k, largest=largest)
        np.testing.assert_array_equal(ours[1].data, theirs.indices.numpy())
        np.testing.assert_array_equal(cr.Tensor(x).kthvalue(k)[1].data, torch.tensor(x).kthvalue(k).indices.numpy())


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_with_probability_targets_that_do_not_sum_to_one(smoothing):
    # PyTorch takes -sum(q * log_softmax(x)) as it is: its gradient is softmax * sum(q) - q, not softmax - q
    rng = np.random.default_rng(0)
    x, q = rng.normal(size=(2, 3, 4)), rng.random((2, 3, 4))

    def loss(s, a):
        return weighted(s.F.cross_entropy(a, s.T(q), label_smoothing=smoothing, reduction="none"))

    assert_same_to_second_order(loss, x)
    assert_same_to_second_order(lambda s, a: s.F.cross_entropy(a * a, s.T(q[0])), x[0])


def test_sort_and_argsort_of_rows_longer_than_16_with_ties_match_pytorch():
    # PyTorch's default sort is std::sort: stable (insertion sort) up to 16 entries, an introsort beyond
    x = np.tile([1.0, 0.0, 2.0], (2, 7))  # rows of 21 with many ties
    for descending in (False, True):
        ours, theirs = cr.Tensor(x, requires_grad=True).sort(dim=-1, descending=descending), torch.tensor(x).sort(
            dim=-1, descending=descending)
        np.testing.assert_array_equal(ours[1].data, theirs.indices.numpy())
        np.testing.assert_array_equal(cr.Tensor(x).argsort(dim=-1, descending=descending),
                                      torch.tensor(x).argsort(dim=-1, descending=descending).numpy())
        np.testing.assert_array_equal(cr.Tensor(x).sort(dim=-1, stable=True, descending=descending)[1].data,
                                      torch.tensor(x).sort(dim=-1, stable=True, descending=descending).indices.numpy())
    assert_same_to_second_order(lambda s, a: weighted(a.sort(dim=-1)[0] * a), x)


def test_binary_cross_entropy_at_saturated_probabilities_has_pytorchs_second_derivative():
    # PyTorch's backward divides by max(p (1 - p), 1e-12) and its double backward adds 1e-12 to p and 1 - p:
    # far from the exact second derivative for a saturated sigmoid (1 - p = 4e-11 at a logit of 24)
    p = [0.0, 1.0, 1.0 - 1e-13, 1e-13, 0.5, 1.0, 1.0 - 3.8e-11, 1e-7]
    y = np.array([0.3, 0.3, 0.0, 1.0, 0.2, 1.0, 0.3, 0.9])
    assert_same_to_second_order(lambda s, a: weighted(s.F.binary_cross_entropy(a, s.T(y), reduction="none")), p)
    logits = [30.0, 24.0, -24.0, 14.0, 0.0, 3.0, -30.0, 9.0]
    assert_same_to_second_order(lambda s, a: s.F.binary_cross_entropy(a.sigmoid(), s.T(y), weight=s.T(y + 1)), logits)
    # the target's derivatives (-logit(p)) and the mixed partials too
    assert_same_to_second_order(lambda s, a, b: weighted(s.F.binary_cross_entropy(a, b, reduction="none")),
                                p[2:], y[2:])


def test_reductions_over_an_empty_axis_and_over_empty_tensors_where_pytorch_allows_them():
    # logsumexp over nothing is -inf, softmax of nothing is empty; amax along a full axis of a (0, 3) is empty
    x = [[1.0, 2.0, 3.0], [0.0, -1.0, 2.0]]
    assert_same_to_second_order(lambda s, a: (a[:, :0].logsumexp(-1).clamp(min=-5.0) * a[:, 0]).sum(), x)
    assert_same_to_second_order(lambda s, a: a[:, :0].softmax(-1).sum() + a[:, :0].log_softmax(-1).sum() + a.sum(), x)
    assert_same_to_second_order(lambda s, a: a[:0].amax(dim=1).sum() + a[:0].max(dim=1)[0].sum() + (a * a).sum(), x)
    with pytest.raises(ValueError, match=r"max: zero-size input of shape \(0, 3\) has no maximum along axis 0"):
        cr.Tensor(np.zeros((0, 3))).amax(dim=0)


def test_ties_beyond_the_replay_limit_keep_numpys_stable_order(monkeypatch):
    # the replay runs in Python: past REPLAY_LIMIT entries a call keeps NumPy's stable order (a valid choice)
    from chainrule.ops import tie_order

    x = np.tile([1.0, 0.0, 2.0], (2, 7))
    monkeypatch.setattr(tie_order, "REPLAY_LIMIT", x.size - 1)
    stable = np.argsort(x, axis=-1, kind="stable")
    np.testing.assert_array_equal(cr.Tensor(x, requires_grad=True).sort(dim=-1)[1].data, stable)
    np.testing.assert_array_equal(cr.Tensor(x).topk(4, dim=-1, largest=False)[1].data, stable[:, :4])
    np.testing.assert_array_equal(cr.Tensor(x).kthvalue(3, dim=-1)[1].data, stable[:, 2])
    monkeypatch.setattr(tie_order, "REPLAY_LIMIT", x.size)  # at the limit: replayed as PyTorch's
    np.testing.assert_array_equal(cr.Tensor(x).sort(dim=-1)[1].data, torch.tensor(x).sort(dim=-1).indices.numpy())


@pytest.mark.parametrize("program", [
    lambda s, x, y: (s.lib.complex(x * 2 + y, y * 3 - x).abs() * s.T([1.0, 0.5])).sum(),
    lambda s, x, y: (s.lib.complex(x, y).reshape(2, 1) @ s.lib.complex(y, x).reshape(1, 2)).abs().sum(),
])
def test_complex_modulus_at_zero_has_pytorchs_second_derivative(program):
    """|z| at z = 0: gradient 0 and derivative of the gradient 0, as PyTorch's sgn. The rule's conj(z) / 1 there
    (a divisor kept finite) had a derivative of its own: the gradient-penalty gradient was 3.5, PyTorch's 0."""
    assert_same_to_second_order(program, [0.0, 1.0], [0.0, 2.0])


def test_the_first_power_has_no_second_derivative_path_to_turn_an_infinite_cotangent_into_nan():
    """d/dy y ** 1 is 1, not 1 * y ** 0, whose own derivative 0 * y ** -1 met the infinite gradient of y ** -2 at
    y = 0 and gave NaN; PyTorch's (and the true limit's) gradient-penalty gradient there is -inf."""
    with np.errstate(divide="ignore", invalid="ignore"):  # (1 / 0 is the point)
        assert_same_to_second_order(lambda s, y: (y**-2 + y**1).sum(), [0.0, -0.0, 2.0])


@pytest.mark.parametrize("program", [
    lambda s, x, y: s.lib.linalg.vector_norm(s.lib.complex(x, y), dim=-1).sum(),
    lambda s, x, y: s.lib.linalg.vector_norm(s.lib.complex(x, y), dim=(0, 1), keepdim=True).sum(),
    lambda s, x, y: s.lib.linalg.matrix_norm(s.lib.complex(x, y)),
    lambda s, x, y: s.lib.linalg.norm(s.lib.complex(x, y)),
])
def test_the_two_norm_of_a_complex_tensor_with_a_zero_entry_is_smooth_there(program):
    """The norm is smooth along an entry that is 0 while others are not; taken as the norm of the moduli, whose
    kink at 0 has second derivative 0, its Hessian lost that entry's diagonal (0 where PyTorch's is 1 / norm)."""
    assert_same_to_second_order(program, [[1.0, 0.0, -1.0], [0.0, 0.0, 0.5]], [[-1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_fmod_and_remainder_values_are_exact_where_the_quotient_rounds(op):
    """fmod(0.5, 0.1) is 0.0999... (0.1 is a little more than a tenth: 0.5 holds it 4 times), as NumPy's and
    PyTorch's; x - trunc(x / y) * y with the rounded quotient 5 gave 0. The derivatives stay PyTorch's (in y,
    minus the rounded quotient)."""
    x = [-0.5, 0.5, 0.3, -0.7, 1.0, 2.5, 0.2]
    w = np.cos(np.arange(7.0))
    assert_same_to_second_order(lambda s, x, y: (getattr(s.lib, op)(x, y) * s.T(w)).sum() + (x * y).sum() ** 2,
                                x, [0.1, 0.1, 0.1, 0.1, 0.1, 0.7, 0.3])
