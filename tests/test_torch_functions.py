"""PyTorch's top-level functions (torch.cat, torch.clamp, torch.mm, ...) on chainrule, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch", reason="the oracle tests need PyTorch")
pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(3)
A, B = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
SQ = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
BATCH = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 4, 2))

# (name, arrays that require grad, the rest of the call): the same call on both libraries
CALLS = [
    ("clamp", [A], {"min": -0.5, "max": 0.5}),
    ("unsqueeze", [A], (1,)),
    ("permute", [A], ((1, 0),)),
    ("movedim", [BATCH[0]], (0, 2)),
    ("narrow", [A], (1, 1, 2)),
    ("gather", [A], (1, np.array([[0, 3], [1, 1], [2, 0]]))),
    ("index_select", [A], (0, np.array([2, 0]))),
    ("masked_fill", [A], (A > 0, 0.25)),
    ("repeat_interleave", [A], (2,), {"dim": 0}),
    ("t", [A], ()),
    ("amax", [A], (1,)),
    ("amin", [A], (0,)),
    ("norm", [A], ()),
    ("dist", [A, A[::-1].copy()], ()),
    ("pow", [np.abs(A) + 0.5], (1.5,)),
    ("neg", [A], ()),
    ("logit", [1 / (1 + np.exp(-A))], ()),
    ("lerp", [A, 2 * A], (0.25,)),
    ("addcmul", [A, 2 * A, A[::-1].copy()], ()),
    ("mm", [A, B], ()),
    ("bmm", list(BATCH), ()),
    ("mv", [A, B[:, 0].copy()], ()),
    ("addmm", [A[:, :2].copy(), A, B], ()),
    ("inverse", [SQ], ()),
    ("det", [SQ], ()),
]


def _call(lib, name, arrays, rest, kwargs):
    conv = (lambda a: lib.tensor(a)) if lib is torch else (lambda a: cr.Tensor(a))
    leaves = [conv(a).requires_grad_() if lib is torch else cr.Tensor(a, requires_grad=True) for a in arrays]
    rest = tuple(torch.tensor(r) if lib is torch and isinstance(r, np.ndarray) else r for r in rest)
    out = getattr(lib, name)(*leaves, *rest, **kwargs)
    return out, leaves


@pytest.mark.parametrize("case", CALLS, ids=[c[0] for c in CALLS])
def test_each_torch_function_is_the_method_and_agrees_with_pytorch(case):
    name, arrays, rest, *kw = case
    kwargs = kw[0] if kw else {}
    if isinstance(rest, dict):
        rest, kwargs = (), rest
    ours, leaves = _call(cr, name, arrays, rest, kwargs)
    theirs, tleaves = _call(torch, name, arrays, rest, kwargs)
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    weights = RNG.normal(size=ours.shape)
    (ours * weights).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    for leaf, tleaf in zip(leaves, tleaves):
        np.testing.assert_allclose(leaf.grad.data, tleaf.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cat_topk_chunk_unbind_comparisons_and_counts_as_pytorchs():
    x, t = cr.Tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    np.testing.assert_array_equal(cr.cat([x, 2 * x], dim=1).data, torch.cat([t, 2 * t], dim=1).detach().numpy())
    values, indices = cr.topk(x, 2, dim=1)
    tv, ti = torch.topk(t, 2, dim=1)
    np.testing.assert_array_equal(values.data, tv.detach().numpy())
    np.testing.assert_array_equal(indices.data, ti.numpy())
    assert [c.shape for c in cr.chunk(x, 2, dim=1)] == [tuple(c.shape) for c in torch.chunk(t, 2, dim=1)]
    assert [u.shape for u in cr.unbind(x, 1)] == [tuple(u.shape) for u in torch.unbind(t, 1)]
    for name in ("eq", "ne", "lt", "gt", "le", "ge"):
        np.testing.assert_array_equal(np.asarray(getattr(cr, name)(x, 0.0).data),
                                      getattr(torch, name)(t, 0.0).numpy())
    assert cr.numel(x) == torch.numel(t) == 12
    with pytest.raises(TypeError, match=r"cat: got both dim=1 and axis=0; pass one"):
        cr.cat([x, x], dim=1, axis=0)


def test_from_numpy_shares_memory_as_tensor_keeps_a_tensor_and_the_rest_of_pytorchs_names():
    a = np.zeros(3)
    t = cr.from_numpy(a)
    a[0] = 5.0
    assert t.data[0] == 5.0 and cr.is_tensor(t) and not cr.is_tensor(a)
    with pytest.raises(TypeError, match=r"from_numpy: expected a numpy.ndarray, got list"):
        cr.from_numpy([1.0])
    assert cr.as_tensor(t) is t and cr.as_tensor([1.0, 2.0]).dtype == np.float32
    assert cr.as_tensor(t, dtype=cr.float32).dtype == np.float32 and cr.float64 is np.float64
    x = cr.Tensor([1.0], requires_grad=True)
    with cr.inference_mode():
        assert not (x * 2).requires_grad
    cr.manual_seed(0)
    first = cr.randn(3)
    cr.manual_seed(0)
    np.testing.assert_array_equal(first.data, cr.randn(3).data)
    assert cr.pow(2.0, cr.Tensor([3.0])).tolist() == [8.0]  # a number first, as torch.pow(2, t)


def test_random_constructors_as_pytorchs_randint_rand_like_randn_like_and_the_default_dtype():
    cr.manual_seed(1)
    a = cr.randint(0, 5, (200,))
    cr.manual_seed(1)
    b = cr.randint(5, (200,))  # randint(high, size)
    assert a.dtype == np.int64 and a.tolist() == b.tolist() and set(a.tolist()) == {0, 1, 2, 3, 4}
    x = cr.zeros(3, 2, dtype=np.float64)
    assert cr.randn_like(x).dtype == np.float64 and cr.rand_like(x).shape == (3, 2)
    assert cr.randn_like(x, requires_grad=True).requires_grad and float(cr.rand_like(x).data.max()) < 1.0
    with pytest.raises(TypeError, match=r"random values like an array of dtype int64: give a floating dtype="):
        cr.randn_like(a)
    with pytest.raises(TypeError, match=r"randint: give randint\(high, size\) or randint\(low, high, size\)"):
        cr.randint(3)
    assert cr.get_default_dtype() == np.float32
    cr.set_default_dtype(np.float64)
    try:
        assert cr.tensor([1.0]).dtype == np.float64
    finally:
        cr.set_default_dtype(np.float32)
    assert cr.tensor([1.0]).dtype == np.float32


def test_torch_functions_run_under_vmap_and_grad_of_arrays():
    x = np.array([[-1.0, 2.0], [3.0, -4.0]])
    np.testing.assert_array_equal(cr.vmap(lambda r: cr.clamp(r, min=0.0))(x), np.maximum(x, 0.0))
    np.testing.assert_array_equal(cr.vmap(lambda r: cr.unsqueeze(r, 0))(x), x[:, None, :])
    np.testing.assert_array_equal(cr.grad(lambda r: cr.clamp(r, min=0.0).sum())(x), (x > 0).astype(float))


def test_the_aliases_hide_no_op_of_the_same_name():
    import chainrule.ops as ops
    from chainrule.ops.pytorch.functions import FUNCTIONS

    assert not [name for name in FUNCTIONS if hasattr(ops, name)]
    assert cr.masked_fill is ops.masked_fill and cr.concat is ops.concat  # the ops, as before


@pytest.mark.oracle
def test_cat_skips_an_empty_1d_tensor_beside_others_as_pytorchs():
    """``out = torch.tensor([]); out = torch.cat([out, row])`` with 2-d rows: PyTorch skips the legacy empty 1-d
    tensor (its dtype still counts); chainrule raised a shape mismatch."""
    for lib in (torch, cr):
        rows = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        grown = lib.cat([lib.tensor([]), rows])
        assert tuple(grown.shape) == (2, 3) and grown.dtype == lib.float64
        grown.sum().backward()
        assert tuple(rows.grad.shape) == (2, 3)
        assert tuple(lib.cat([lib.ones(2, 3), lib.tensor([], dtype=lib.float64)], dim=1).shape) == (2, 3)
        assert lib.cat([lib.ones(2, 3), lib.tensor([], dtype=lib.float64)], dim=1).dtype == lib.float64
        assert tuple(lib.cat([lib.tensor([]), lib.tensor([])]).shape) == (0,)
        with pytest.raises((RuntimeError, ValueError)):
            lib.cat([lib.zeros(2, 0), lib.ones(2, 3)])  # only the 1-d empty one is skipped
