"""PyTorch's tensor ops added in ops/pytorch/ (scatter_reduce, index_reduce, index_copy, masked_scatter, ...):
values and gradients to second order against PyTorch 2.13, finite differences in both modes, the in-place and
top-level spellings, and what each refuses."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor

RNG = np.random.default_rng(11)
X = RNG.normal(size=(4, 3))
SRC = RNG.normal(size=(5, 3))
IDX = np.array([[0, 1, 3], [2, 1, 3], [0, 0, 3], [2, 3, 1], [0, 1, 2]])  # repeats in every column
ROWS = np.array([0, 2, 2, 1, 0])
MASK = np.array([[True, False, True], [False, False, False], [True, True, False], [False, True, True]])


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")


def _oracle(fn, arrays, second=True, rtol=1e-10):
    """fn(L, *tensors) on chainrule and on torch (L makes an index tensor): the values, the gradients of a weighted
    sum of squares of the output, and (second) the gradient of the squared gradients."""
    torch = _torch()
    ours = [Tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn(cr.tensor, *ours), fn(torch.tensor, *theirs)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=rtol, atol=1e-12)
    w = RNG.uniform(0.5, 1.5, out.shape)
    grads = cr.autograd.grad((out * out * w).sum(), ours, create_graph=second)
    tgrads = torch.autograd.grad((tout * tout * torch.tensor(w)).sum(), theirs, create_graph=second)
    for g, tg in zip(grads, tgrads, strict=True):
        np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=rtol, atol=1e-12)
    if second:
        v = [RNG.uniform(0.5, 1.5, a.shape) for a in arrays]
        again = cr.autograd.grad(sum((g * g * vi).sum() for g, vi in zip(grads, v, strict=True)), ours,
                                 allow_unused=True)
        tagain = torch.autograd.grad(sum((g * g * torch.tensor(vi)).sum() for g, vi in zip(tgrads, v, strict=True)),
                                     theirs, allow_unused=True)
        for g, tg in zip(again, tagain, strict=True):
            want = np.zeros(g.shape) if tg is None else tg.numpy()
            np.testing.assert_allclose(np.zeros(want.shape) if g is None else g.numpy(), want, rtol=rtol, atol=1e-10)


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


# -- scatter_reduce ------------------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_matches_pytorch(reduce, include_self):
    _oracle(lambda L, x, s: x.scatter_reduce(0, L(IDX), s, reduce, include_self=include_self), [X, SRC])
    _oracle(lambda L, x, s: x.scatter_reduce(1, L(IDX[:4, :2] % 3), s, reduce, include_self=include_self),
            [X, SRC[:4, :2]])  # along dim 1, an index narrower than self (torch: src as large as index)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_scatter_reduce_gradcheck(reduce, include_self):
    assert cr.gradcheck(lambda x, s: cr.scatter_reduce(x, 0, IDX, s, reduce, include_self=include_self), X, SRC)


@pytest.mark.oracle
def test_scatter_reduce_prod_with_zeros_and_extremes_with_ties_match_pytorch():
    x, s = X.copy(), SRC.copy()
    s[0, 0] = 0.0  # a zero factor: the other factors' product is the gradient
    s[2, 0] = 0.0  # two zeros at one position: every gradient there is 0
    _oracle(lambda L, x, s: x.scatter_reduce(0, L(IDX), s, "prod"), [x, s], second=False)
    tied = np.full((5, 3), 0.25)
    tied[1, 1] = -4.0  # column 1: position 1 gets three entries of 0.25; amax shares its gradient in thirds
    x = np.full((4, 3), 0.25)  # self ties too
    for reduce in ("amax", "amin"):
        _oracle(lambda L, x, s, r=reduce: x.scatter_reduce(0, L(IDX), s, r), [x, tied], second=False)


def test_scatter_reduce_ties_give_the_exact_value():
    out = cr.scatter_reduce(Tensor(np.full(2, 0.1)), 0, np.array([0, 0]), Tensor(np.full(2, 0.1)), "amax")
    assert out.tolist() == [0.1, 0.1]


def test_scatter_reduce_refuses_unknown_reductions_and_integers_have_no_gradient():
    with pytest.raises(ValueError, match="scatter_reduce: reduce must be one of 'sum', 'prod'.*got 'max'"):
        Tensor(X).scatter_reduce(0, IDX, Tensor(SRC), "max")
    out = cr.tensor([1, 5, 2]).scatter_reduce(0, cr.tensor([0, 0, 2]), cr.tensor([4, 3, 9]), "amax")
    assert out.tolist() == [4, 5, 9] and out.dtype == np.int64
    mean = cr.tensor([1, 5, 2]).scatter_reduce(0, cr.tensor([0, 0, 2]), cr.tensor([4, 3, 9]), "mean")
    assert mean.tolist() == [2, 5, 5]  # (1 + 4 + 3) // 3, as PyTorch's floor division


# -- index_reduce --------------------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_matches_pytorch(reduce, include_self):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: "index_reduce() is in beta"
        _oracle(lambda L, x, s: x.index_reduce(0, L(ROWS), s, reduce, include_self=include_self), [X, SRC])
        _oracle(lambda L, x, s: x.index_reduce(1, L([2, 0, 2]), s, reduce, include_self=include_self),
                [X, SRC[:4]])


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_gradcheck(reduce):
    assert cr.gradcheck(lambda x, s: cr.index_reduce(x, 0, ROWS, s, reduce, include_self=False), X, SRC)


def test_index_reduce_refuses_sum_and_wrong_shapes():
    with pytest.raises(ValueError, match="index_reduce: reduce must be one of 'prod', 'mean', 'amax', 'amin'"):
        Tensor(X).index_reduce(0, ROWS, Tensor(SRC), "sum")
    with pytest.raises(ValueError, match=r"index_reduce: source has shape \(4, 3\); .* it must be \(5, 3\)"):
        Tensor(X).index_reduce(0, ROWS, Tensor(SRC[:4]), "prod")
    with pytest.raises(IndexError, match="index_reduce: index 4 is out of range for dim 0 of size 4"):
        Tensor(X).index_reduce(0, [4], Tensor(SRC[:1]), "prod")


# -- index_copy, masked_scatter ------------------------------------------------------------------------
@pytest.mark.oracle
def test_index_copy_matches_pytorch():
    _oracle(lambda L, x, s: x.index_copy(0, L([3, 0]), s), [X, SRC[:2]])
    _oracle(lambda L, x, s: x.index_copy(1, L([2, 0]), s), [X, SRC[:4, :2]])
    _oracle(lambda L, x, s: x.index_copy(0, L([0]), s), [np.array(2.0), np.array([5.0])])  # 0-d self


def test_index_copy_gradcheck_and_refusals():
    assert cr.gradcheck(lambda x, s: cr.index_copy(x, 1, np.array([2, 0]), s), X, SRC[:4, :2])
    with pytest.raises(ValueError, match="index_copy: index names some slices more than once"):
        Tensor(X).index_copy(0, [1, 1], Tensor(SRC[:2]))
    with pytest.raises(ValueError, match=r"index_copy: source has shape \(3, 3\).* must be \(2, 3\)"):
        Tensor(X).index_copy(0, [1, 2], Tensor(SRC[:3]))


@pytest.mark.oracle
def test_masked_scatter_matches_pytorch():
    _oracle(lambda L, x, s: x.masked_scatter(L(MASK), s), [X, SRC])
    _oracle(lambda L, x, s: x.masked_scatter(L(MASK), s), [X[0], SRC])  # self broadcast to the mask
    _oracle(lambda L, x, s: x.masked_scatter(L(MASK[:, :1]), s), [X, SRC])  # the mask broadcast to self


def test_masked_scatter_gradcheck_and_refusals():
    assert cr.gradcheck(lambda x, s: cr.masked_scatter(x, MASK, s), X, SRC)
    with pytest.raises(ValueError, match="masked_scatter: the mask holds at 6 entries but source has only 4"):
        Tensor(X).masked_scatter(MASK, Tensor(np.ones(4)))
    with pytest.raises(TypeError, match="masked_scatter: mask must be boolean"):
        Tensor(X).masked_scatter(MASK.astype(int), Tensor(SRC))


# -- spellings -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, args", [
    ("scatter_reduce", (0, IDX, SRC, "amax")), ("index_reduce", (0, ROWS, SRC, "mean")),
    ("index_copy", (0, np.array([3, 1]), SRC[:2])), ("masked_scatter", (MASK, SRC)),
])
def test_in_place_and_top_level_spellings_give_the_method(name, args):
    want = getattr(Tensor(X), name)(*args).numpy()
    np.testing.assert_array_equal(getattr(cr, name)(Tensor(X), *args).numpy(), want)
    t = Tensor(X.copy())
    assert getattr(t, f"{name}_")(*args) is t
    np.testing.assert_array_equal(t.numpy(), want)
    leaf = Tensor(X.copy(), requires_grad=True)
    with pytest.raises(RuntimeError, match=f"{name}_"):
        getattr(leaf, f"{name}_")(*args)
