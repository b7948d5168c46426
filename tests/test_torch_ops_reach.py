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


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_extremes_of_mixed_dtypes_promote_and_keep_the_gradient(reduce, include_self):
    """float32 self, float64 source (PyTorch refuses the mix; here it promotes, as sum's): the result was computed
    in float32, so a source entry that won was no longer equal to it and got no gradient (0 where it is 3 r**2)."""
    s = cr.tensor([0.5, 0.5, 0.2], dtype=cr.float64, requires_grad=True)
    base = cr.tensor([0.5, 0.1] if reduce == "amax" else [0.5, 0.3], dtype=cr.float32)  # s[2] wins position 1
    r = base.scatter_reduce(0, cr.tensor([0, 0, 1]), s, reduce, include_self=include_self)
    assert r.dtype == np.float64 and r.tolist() == [0.5, 0.2]
    (g,) = cr.autograd.grad((r**3).sum(), [s])
    tie = 3 * 0.5**2 / (3 if include_self else 2)  # position 0: s[0], s[1] (and self) tie at 0.5
    np.testing.assert_allclose(g.numpy(), [tie, tie, 3 * 0.2**2])


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


# -- unfold, the *_scatter ops, block_diag, renorm -------------------------------------------------------
CUBE = RNG.normal(size=(3, 4, 5))


@pytest.mark.oracle
@pytest.mark.parametrize("dim, size, step", [(0, 2, 1), (2, 2, 2), (1, 4, 1), (2, 0, 3), (-1, 3, 2), (1, 1, 5)])
def test_unfold_matches_pytorch(dim, size, step):
    _oracle(lambda L, x: x.unfold(dim, size, step), [CUBE])


def test_unfold_gradcheck_zero_d_and_refusals():
    assert cr.gradcheck(lambda x: cr.as_tensor(x).unfold(1, 3, 1), CUBE)  # overlapping windows
    assert Tensor(2.0).unfold(0, 1, 1).shape == (1,)
    with pytest.raises(ValueError, match="unfold: size 6 does not fit dimension 2 of size 5"):
        Tensor(CUBE).unfold(2, 6, 1)
    with pytest.raises(ValueError, match="unfold: step must be positive, got 0"):
        Tensor(CUBE).unfold(2, 2, 0)


@pytest.mark.oracle
@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (1, 0, 1), (-2, 1, 2), (1, 2, 0), (-1, -1, 0)])
def test_diagonal_scatter_matches_pytorch(offset, dim1, dim2):
    torch = _torch()
    src = RNG.normal(size=tuple(torch.tensor(CUBE).diagonal(offset, dim1, dim2).shape))
    _oracle(lambda L, x, s: x.diagonal_scatter(s, offset, dim1, dim2), [CUBE, src])


@pytest.mark.oracle
def test_select_and_slice_scatter_match_pytorch():
    _oracle(lambda L, x, s: x.select_scatter(s, 1, -2), [CUBE, RNG.normal(size=(3, 5))])
    _oracle(lambda L, x, s: x.slice_scatter(s, 2, 1, None, 2), [CUBE, RNG.normal(size=(3, 4, 2))])
    _oracle(lambda L, x, s: x.slice_scatter(s), [CUBE, RNG.normal(size=(3, 4, 5))])


def test_scatter_views_gradcheck_and_refusals():
    assert cr.gradcheck(lambda x, s: cr.diagonal_scatter(x, s, 1, 2, 0), CUBE, RNG.normal(size=(4, 2)))
    assert cr.gradcheck(lambda x, s: cr.slice_scatter(x, s, dim=1, start=1, end=3), CUBE, RNG.normal(size=(3, 2, 5)))
    assert cr.gradcheck(lambda x, s: cr.select_scatter(x, s, 0, 1), CUBE, RNG.normal(size=(4, 5)))
    with pytest.raises(ValueError, match=r"select_scatter: src has shape \(4,\); the part .* has shape \(4, 5\)"):
        Tensor(CUBE).select_scatter(Tensor(np.ones(4)), 0, 1)
    with pytest.raises(IndexError, match="select_scatter: index 3 is out of range for dim 0 of size 3"):
        Tensor(CUBE).select_scatter(Tensor(np.ones((4, 5))), 0, 3)
    with pytest.raises(ValueError, match="diagonal_scatter: dim1 and dim2 must differ"):
        Tensor(CUBE).diagonal_scatter(Tensor(np.ones(3)), 0, 1, -2)


@pytest.mark.oracle
def test_block_diag_matches_pytorch():
    torch = _torch()
    blocks = [RNG.normal(size=(2, 3)), RNG.normal(size=(3,)), np.array(1.5), RNG.normal(size=(1, 2))]
    _oracle(lambda L, *bs: (cr if L is cr.tensor else torch).block_diag(*bs), blocks)
    assert cr.block_diag().shape == tuple(torch.block_diag().shape)
    mixed = cr.block_diag(cr.ones(1, 1, dtype=np.float32), np.ones((1, 1), dtype=np.int64))
    assert mixed.dtype == np.float32 and torch.block_diag(torch.ones(1, 1), torch.ones(1, 1, dtype=torch.int64)
                                                          ).dtype == torch.float32
    with pytest.raises(ValueError, match="block_diag: block 0 has 3 dimensions"):
        cr.block_diag(np.ones((1, 1, 1)))


@pytest.mark.oracle
@pytest.mark.parametrize("p, dim, maxnorm", [(2, 0, 1.0), (1, 1, 1.5), (3.0, 2, 0.8), (2, -1, 100.0)])
def test_renorm_matches_pytorch(p, dim, maxnorm):
    _oracle(lambda L, x: x.renorm(p, dim, maxnorm), [CUBE])


def test_renorm_gradcheck_in_place_and_refusals():
    assert cr.gradcheck(lambda x: cr.renorm(x, 2, 1, 1.0), CUBE)
    t = Tensor(CUBE.copy())
    assert t.renorm_(2, 0, 1.0) is t
    np.testing.assert_allclose(np.linalg.norm(t.numpy().reshape(3, -1), axis=1), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="renorm: p must be positive, got 0"):
        Tensor(CUBE).renorm(0, 0, 1.0)
    with pytest.raises(ValueError, match="renorm: needs at least 2 dimensions"):
        Tensor(np.ones(3)).renorm(2, 0, 1.0)


# -- numeric methods: special functions, integer ops, histogram, unravel_index -----------------------------
POS = RNG.uniform(0.6, 3.0, size=(2, 3))


@pytest.mark.oracle
def test_special_function_methods_match_pytorch():
    pytest.importorskip("scipy")
    # (PyTorch's trigamma series is good to about 1e-9; SciPy's to the last digits)
    _oracle(lambda L, x: x.polygamma(1), [POS], rtol=1e-8)
    _oracle(lambda L, x: (cr if L is cr.tensor else _torch()).polygamma(2, x), [POS], rtol=1e-8)
    _oracle(lambda L, x: x.mvlgamma(3), [POS + 1.0], rtol=1e-8)
    _oracle(lambda L, x: x.i0(), [POS - 1.5], rtol=1e-8)
    _oracle(lambda L, x: L(POS).igamma(x), [POS[::-1].copy()], rtol=1e-8)  # (a gradient in x only, as PyTorch's)
    _oracle(lambda L, x: L(POS).igammac(x), [POS[::-1].copy()], rtol=1e-8)
    _oracle(lambda L, x: x.ldexp(L([[1, 2, 3], [0, 1, 2]])), [X[:2]])  # (torch: 0 gradient for a negative one)


def test_special_function_methods_gradcheck_and_refusals():
    pytest.importorskip("scipy")
    assert cr.gradcheck(lambda x: cr.mvlgamma(x, 2), POS + 1.0)
    assert cr.gradcheck(lambda x: cr.polygamma(1, x), POS)
    with pytest.raises(ValueError, match=r"mvlgamma: all entries must be greater than \(p - 1\) / 2 = 1.0"):
        Tensor(POS).mvlgamma(3)


@pytest.mark.oracle
def test_frexp_nextafter_and_integer_ops_match_pytorch():
    torch = _torch()
    m, e = Tensor(X).frexp()
    tm, te = torch.tensor(X).frexp()
    np.testing.assert_array_equal(m.numpy(), tm.numpy())
    assert e.dtype == np.int32 and e.tolist() == te.tolist()
    np.testing.assert_array_equal(cr.nextafter(Tensor(X), Tensor(SRC[:4])).numpy(),
                                  torch.nextafter(torch.tensor(X), torch.tensor(SRC[:4])).numpy())
    a, b = np.array([[12, -18, 0], [7, 5, -3]]), np.array([[8, 27, 5], [1, 2, 3]])
    for name in ("gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift"):
        assert getattr(cr, name)(cr.tensor(a), cr.tensor(b)).tolist() == getattr(torch, name)(
            torch.tensor(a), torch.tensor(b)).tolist(), name
    assert cr.bitwise_not(cr.tensor(a)).tolist() == torch.bitwise_not(torch.tensor(a)).tolist()
    assert (cr.tensor(a) << 2).tolist() == (torch.tensor(a) << 2).tolist()
    assert (cr.tensor(a) >> cr.tensor(b)).tolist() == (torch.tensor(a) >> torch.tensor(b)).tolist()
    assert cr.bitwise_xor(cr.tensor([True, False]), cr.tensor([True, True])).tolist() == [False, True]


def test_ops_without_derivative_refuse_what_they_cannot_do():
    with pytest.raises(NotImplementedError, match=r"nextafter: has no derivative .* t.detach\(\)"):
        cr.nextafter(Tensor(X, requires_grad=True), Tensor(X))
    with cr.no_grad():
        assert cr.nextafter(Tensor(X, requires_grad=True), Tensor(X)).shape == X.shape
    with pytest.raises(TypeError, match="gcd: needs integer Tensors .* got dtype float64"):
        cr.gcd(Tensor(X), Tensor(X))
    with pytest.raises(TypeError, match="bitwise_and: needs integer or boolean Tensors"):
        Tensor(X).bitwise_and(Tensor(X))


@pytest.mark.oracle
def test_histogram_and_unravel_index_match_pytorch():
    torch = _torch()
    values = RNG.normal(size=(5, 4))
    for args, kw in [((7,), {}), ((3,), {"range": (-1.0, 1.0), "density": True}),
                     ((np.array([-2.0, 0.0, 0.5, 3.0]),), {"weight": np.abs(values)})]:
        ours = cr.histogram(Tensor(values), *[Tensor(a) if isinstance(a, np.ndarray) else a for a in args],
                            **{k: Tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
        theirs = torch.histogram(torch.tensor(values), *[torch.tensor(a) if isinstance(a, np.ndarray) else a
                                                         for a in args],
                                 **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()})
        for o, t in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)
    flat = np.array([[0, 5], [7, -1]])
    ours = cr.unravel_index(cr.tensor(flat), (2, 4))
    theirs = torch.unravel_index(torch.tensor(flat), (2, 4))
    assert [o.tolist() for o in ours] == [t.tolist() for t in theirs]
    with pytest.raises(IndexError, match=r"unravel_index: an index is out of range for shape \(2, 4\)"):
        cr.unravel_index(cr.tensor([8]), (2, 4))


@pytest.mark.oracle
def test_result_dtypes_of_mixed_float_operands_are_pytorchs():
    """copysign(float32, float64) is float64 (it was float32: the sign's dtype followed x alone); the *_scatter
    ops keep self's dtype (they promoted to the source's)."""
    torch = _torch()
    a, b = np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([[-1.0, 1.0], [2.0, -0.5]])
    calls = [
        lambda L, x, y: L.copysign(x, y), lambda L, x, y: L.copysign(y, x),
        lambda L, x, y: x.diagonal_scatter(y[0]), lambda L, x, y: x.select_scatter(y[0], 0, 1),
        lambda L, x, y: x.slice_scatter(y[:1], 0, 0, 1), lambda L, x, y: y.diagonal_scatter(x[0]),
    ]
    for call in calls:
        ours = call(cr, cr.tensor(a, dtype=cr.float32), cr.tensor(b, dtype=cr.float64))
        theirs = call(torch, torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float64))
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())
