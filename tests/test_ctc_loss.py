"""``ctc_loss`` and ``nn.CTCLoss`` against PyTorch 2.13 as the oracle (values, and gradients through
``log_softmax``, for every reduction, ``zero_infinity``, padded and concatenated targets, other blanks, repeated
labels, unbatched input), against the definition (every alignment enumerated), finite differences to second order
(PyTorch has no second derivative of CTC), the impossible targets, the strict device double and the errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from test_nn_3d import on_the_device_double


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests (pip install torch)")


def _logits(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


TARGETS = np.array([[1, 2, 2], [3, 3, 0], [4, 1, 1]])
INPUT_LENGTHS, TARGET_LENGTHS = np.array([7, 5, 6]), np.array([3, 2, 0])
CASES = {  # (logits shape, targets, input_lengths, target_lengths, blank)
    "padded": ((7, 3, 5), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, 0),
    "concatenated": ((7, 3, 5), np.array([1, 2, 2, 3, 3]), INPUT_LENGTHS, TARGET_LENGTHS, 0),
    "blank-last": ((6, 2, 4), np.array([[0, 1, 1], [2, 0, 0]]), [6, 6], [3, 2], 3),
    "tuples-and-tight": ((5, 2, 3), np.array([[1, 1], [2, 1]]), (3, 5), (2, 2), 0),  # 1,1 needs 3 steps
    "unbatched": ((6, 4), np.array([1, 3, 1]), 6, 3, 0),
}


@pytest.mark.oracle
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_ctc_loss_values_and_gradients_through_log_softmax_equal_torch(torch, case, reduction, zero_infinity):
    shape, targets, il, tl, blank = CASES[case]
    logits = _logits(*shape)
    kw = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
    t_logits = torch.tensor(logits, requires_grad=True)
    t_loss = torch.nn.functional.ctc_loss(t_logits.log_softmax(-1), torch.tensor(targets), torch.tensor(il),
                                          torch.tensor(tl), **kw)
    c_logits = cr.Tensor(logits, requires_grad=True)
    c_loss = F.ctc_loss(F.log_softmax(c_logits, dim=-1), targets, il, tl, **kw)
    np.testing.assert_allclose(c_loss.numpy(), t_loss.detach().numpy(), rtol=1e-10)
    up = _logits(*t_loss.shape, seed=5)
    (want,) = torch.autograd.grad((t_loss * torch.tensor(up)).sum(), t_logits)
    (got,) = cr.autograd.grad((c_loss * up).sum(), [c_logits])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.oracle
def test_the_gradient_is_the_derivative_in_log_probs_where_torchs_adds_exp_log_probs(torch):
    """PyTorch's CTC kernel returns its derivative with respect to the logits under log_softmax: exp(log_probs)
    more than the derivative in log_probs (which finite differences confirm below), in each sequence's steps."""
    lp = torch.tensor(_logits(7, 3, 5)).log_softmax(-1).requires_grad_(True)
    loss = torch.nn.functional.ctc_loss(lp, torch.tensor(TARGETS), torch.tensor(INPUT_LENGTHS),
                                        torch.tensor(TARGET_LENGTHS), reduction="sum")
    (theirs,) = torch.autograd.grad(loss, lp)
    ours = cr.grad(lambda p: F.ctc_loss(p, TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction="sum"))(
        lp.detach().numpy())
    steps = (np.arange(7)[:, None] < INPUT_LENGTHS[None, :])[..., None]
    np.testing.assert_allclose(theirs.numpy(), ours + np.exp(lp.detach().numpy()) * steps, atol=1e-12)


def _by_enumeration(log_probs, target, blank):
    """-log of the summed probability of every path that collapses (merge repeats, drop blanks) to target."""
    t, c = log_probs.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t):
        collapsed = [k for i, k in enumerate(path) if k != blank and (i == 0 or path[i - 1] != k)]
        if collapsed == list(target):
            total += np.exp(sum(log_probs[i, k] for i, k in enumerate(path)))
    return -np.log(total) if total else np.inf


@pytest.mark.parametrize("target, length, blank", [([1, 2], 4, 0), ([1, 1], 5, 0), ([], 3, 0), ([0, 2, 0], 5, 1),
                                                   ([2, 2, 2], 5, 0)])
def test_ctc_loss_sums_every_alignment_written_out(target, length, blank):
    lp = np.log(np.random.default_rng(2).dirichlet(np.ones(3), size=(length,)))
    got = F.ctc_loss(lp, np.array(target, dtype=np.int64), length, len(target), blank=blank, reduction="sum")
    want = _by_enumeration(lp, target, blank)
    np.testing.assert_allclose(float(got), want, rtol=1e-12)


def test_ctc_loss_passes_finite_differences_to_second_order():
    logits = _logits(4, 2, 3, seed=3)
    targets, il, tl = np.array([[1, 2], [2, 2]]), [4, 4], [2, 1]
    assert cr.gradcheck(lambda x: F.ctc_loss(F.log_softmax(x, dim=2), targets, il, tl), logits,
                        modes=("rev", "fwd"), order=2)
    lp = np.log(np.random.default_rng(4).dirichlet(np.ones(3), size=(4, 2)))
    assert cr.gradcheck(lambda p: F.ctc_loss(p, targets, il, tl, reduction="sum"), lp, modes=("rev", "fwd"),
                        order=2)


@pytest.mark.oracle
def test_a_target_no_alignment_fits_is_infinite_or_zero_with_zero_infinity(torch):
    lp = torch.tensor(_logits(7, 3, 5)).log_softmax(-1)
    il = np.array([7, 2, 6])  # 3, 3 needs 3 steps: 2 are too few
    want = torch.nn.functional.ctc_loss(lp, torch.tensor(TARGETS), torch.tensor(il), torch.tensor(TARGET_LENGTHS),
                                        reduction="none")
    x = cr.Tensor(lp.numpy(), requires_grad=True)
    got = F.ctc_loss(x, TARGETS, il, TARGET_LENGTHS, reduction="none")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    assert np.isinf(got.numpy()[1])
    (g,) = cr.autograd.grad(got.sum(), [x])
    finite = np.isfinite(g.numpy()).all(axis=(0, 2))
    assert finite.tolist() == [True, False, True]  # (PyTorch's: NaN there too)
    zeroed = F.ctc_loss(x, TARGETS, il, TARGET_LENGTHS, reduction="none", zero_infinity=True)
    assert zeroed.numpy()[1] == 0.0
    (g,) = cr.autograd.grad(zeroed.sum(), [x])
    assert np.isfinite(g.numpy()).all() and not g.numpy()[:, 1].any()


@pytest.mark.oracle
def test_ctc_loss_layer_equals_the_function_and_prints_as_torch(torch):
    layer = nn.CTCLoss(blank=4, reduction="sum", zero_infinity=True)
    assert repr(layer) == repr(torch.nn.CTCLoss(blank=4, reduction="sum", zero_infinity=True)) == "CTCLoss()"
    lp = F.log_softmax(_logits(7, 3, 5), dim=2)
    targets = np.array([[1, 2, 2], [3, 3, 0], [0, 1, 1]])
    np.testing.assert_allclose(layer(lp, targets, INPUT_LENGTHS, TARGET_LENGTHS).numpy(),
                               F.ctc_loss(lp, targets, INPUT_LENGTHS, TARGET_LENGTHS, 4, "sum", True).numpy())


def test_ctc_loss_runs_on_the_device_double_with_the_cpus_values():
    on_the_device_double([lambda a, m: F.ctc_loss(F.log_softmax(a, dim=2), m(TARGETS), m(INPUT_LENGTHS),
                                                  m(TARGET_LENGTHS)),
                          lambda a, m: F.ctc_loss(F.log_softmax(a, dim=2), TARGETS, [7, 2, 6], TARGET_LENGTHS,
                                                  reduction="none", zero_infinity=True)],
                         _logits(7, 3, 5))


@pytest.mark.parametrize("call, message", [
    (lambda: F.ctc_loss(np.zeros((2, 3, 4, 5)), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS),
     r"log_probs must be \(T, N, C\) \(or \(T, C\) unbatched\)"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), TARGETS, [8, 5, 6], TARGET_LENGTHS), "input_lengths from 0 to T = 7"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), TARGETS, [7, 5], TARGET_LENGTHS), "one entry per sequence"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), TARGETS, INPUT_LENGTHS, [4, 2, 0]), r"need shape \(3, S\) with S >= 4"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), TARGETS + 3, INPUT_LENGTHS, TARGET_LENGTHS),
     r"class indices in \[0, 5\), got \[5, 6\]"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), np.array([1, 2]), INPUT_LENGTHS, TARGET_LENGTHS),
     r"concatenated \(sum\(target_lengths\),\)"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, blank=5),
     r"blank must be a class index in \[0, 5\)"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction="avg"),
     "reduction must be one of"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5)), TARGETS, [7.0, 5.0, 6.0], TARGET_LENGTHS),
     "input_lengths must hold integers"),
    (lambda: F.ctc_loss(np.zeros((7, 3, 5), np.float16), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS),
     "log_probs must be float32 or float64"),
    (lambda: F.ctc_loss(np.zeros((7, 5)), TARGETS, 7, 3), r"an unbatched input \(T, C\) takes targets of shape"),
])
def test_bad_arguments_are_refused_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
