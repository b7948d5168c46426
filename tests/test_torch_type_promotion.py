"""PyTorch's type promotion for ops on Tensors (core/promotion.py), checked against torch as the oracle."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.core.promotion import promote_pair, result_dtype

DTYPES = ["bool", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]
KINDS = ["dim", "zero", "python", "numpy"]
OPS = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "truediv": (lambda a, b: a / b, lambda a, b: a / b),
    "maximum": (cr.maximum, None),
    "atan2": (cr.arctan2, None),
    "where": (lambda a, b: cr.where(_mask(a, b), a, b), None),
}


def _mask(a, b):
    return cr.tensor(np.array([True, False, True]))


def _value(dtype: str, kind: str):
    """One operand: a (3,) array, a 0-dim array, a Python number or a NumPy scalar of ``dtype``."""
    base = np.array([1, 2, 3]).astype(dtype) if dtype != "bool" else np.array([True, False, True])
    if kind == "dim":
        return base
    if kind == "zero":
        return np.array(base[1])
    if kind == "numpy":
        return base.dtype.type(base[1])
    return base[1].item()


def _operands(da, ka, db, kb):
    return _value(da, ka), _value(db, kb)


CASES = [(da, ka, db, kb) for da, db in itertools.product(DTYPES, DTYPES) for ka, kb in itertools.product(KINDS, KINDS)
         if ka in ("dim", "zero")]  # a Tensor first (the second any kind)


@pytest.mark.oracle
@pytest.mark.parametrize("op", sorted(OPS))
def test_result_dtypes_and_values_match_torch(op):
    torch = pytest.importorskip("torch")
    ours_fn = OPS[op][0]
    torch_fns = {"maximum": torch.maximum, "atan2": torch.atan2,
                 "where": lambda a, b: torch.where(torch.tensor([True, False, True]), a, b)}
    theirs_fn = OPS[op][1] or torch_fns[op]
    checked = 0
    for da, ka, db, kb in CASES:
        x, y = _operands(da, ka, db, kb)
        tx = torch.tensor(x) if isinstance(x, np.ndarray) else x
        ty = torch.tensor(y) if isinstance(y, np.ndarray) else y.item() if isinstance(y, np.generic) else y
        # (torch's own reading of NumPy scalars is erratic: bool tensor + np.True_ is float32, + np.complex128
        # drops the imaginary part; chainrule reads them as the Python numbers they hold)
        if op in ("maximum", "atan2") and not isinstance(ty, torch.Tensor):
            continue  # torch takes only Tensors there
        if op == "where" and not isinstance(ty, torch.Tensor):
            y = np.asarray(y)
            ty = torch.tensor(y)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (complex32's experimental-support warning)
                expected = theirs_fn(tx, ty)
        except (RuntimeError, TypeError):
            continue  # torch refuses (e.g. bool - bool, complex maximum): not a promotion question
        if expected.dtype in (torch.bfloat16, torch.complex32):  # NumPy has no complex32: ours is complex64
            continue
        cx = cr.tensor(x) if isinstance(x, np.ndarray) else x
        cy = cr.tensor(y) if isinstance(y, np.ndarray) else y
        with np.errstate(all="ignore"):
            got = ours_fn(cx, cy)
        want = expected.numpy()
        assert got.dtype == want.dtype, (op, da, ka, db, kb, got.dtype, want.dtype)
        tol = 1e-2 if want.dtype in (np.float16, np.complex64, np.float32) else 1e-12
        np.testing.assert_allclose(np.asarray(got._data), want, rtol=tol, atol=tol, err_msg=str((op, da, db)))
        checked += 1
    assert checked > 100


@pytest.mark.oracle
@pytest.mark.parametrize("da", ["float16", "float32", "float64"])
@pytest.mark.parametrize("db", ["float16", "float32", "float64", "int64", "bool"])
def test_gradients_come_back_in_each_inputs_dtype(da, db):
    torch = pytest.importorskip("torch")
    x = cr.tensor(np.array([1.0, 2.0, 3.0], da), requires_grad=True)
    y = cr.tensor(np.array([2, 1, 2]).astype(db), requires_grad=db.startswith("float"))
    tx = torch.tensor(np.array([1.0, 2.0, 3.0], da), requires_grad=True)
    ty = torch.tensor(np.array([2, 1, 2]).astype(db), requires_grad=db.startswith("float"))
    out, tout = x * y + x / (y + 1), tx * ty + tx / (ty + 1)
    assert out.dtype == tout.detach().numpy().dtype
    out.sum().backward()
    tout.sum().backward()
    assert x.grad.dtype == np.dtype(da)
    np.testing.assert_allclose(x.grad._data, tx.grad.numpy(), rtol=1e-2)
    if db.startswith("float"):
        assert y.grad.dtype == np.dtype(db)
        np.testing.assert_allclose(y.grad._data, ty.grad.numpy(), rtol=1e-2)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["sqrt", "exp", "log1p", "sin", "tanh", "sigmoid", "reciprocal", "rsqrt"])
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
def test_integer_inputs_of_floating_ops_give_the_default_dtype(name, dtype):
    torch = pytest.importorskip("torch")
    x = np.array([1, 2, 3]).astype(dtype)
    got = getattr(cr.tensor(x), name)()
    want = getattr(torch.tensor(x), name)().numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got._data, want, rtol=1e-6)


def test_the_brief_examples():
    a = cr.tensor(np.ones(3, np.float32))
    i = cr.tensor(np.arange(3))
    assert (a + i).dtype == np.float32
    assert (i / 2).dtype == np.float32
    assert (i * 1.5).dtype == np.float32
    assert (a + cr.tensor(np.float64(2.0))).dtype == np.float32
    assert (a + np.float64(2)).dtype == np.float32
    assert (a + 1j).dtype == np.complex64
    assert (a + cr.tensor(np.complex128(1j))).dtype == np.complex64


def test_numpy_arrays_alone_keep_numpys_rule():
    assert cr.add(np.ones(3, np.float32), np.arange(3)).dtype == np.float64


def test_promotion_tables():
    assert promote_pair(np.dtype("int64"), np.dtype("float16")) == np.float16
    assert result_dtype([np.arange(3), np.float64(1.0)]) == np.float32


def test_in_place_ops_that_would_downcast_raise_as_in_torch():
    a = cr.tensor(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="cannot be stored in place"):
        a += 1j
    a += cr.tensor(np.arange(3))  # float32 += int64 stays float32 (torch too)
    assert a.dtype == np.float32


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide"])
@pytest.mark.parametrize("other", [2.5, 3, "int32", "float64_0d"])
def test_composite_quotients_match_torch(name, other):
    torch = pytest.importorskip("torch")
    x = np.array([-3, 1, 2, 7])
    y = {"int32": np.array([2, 3, 4, 5], np.int32), "float64_0d": np.array(0.75)}.get(other, other)
    ours = getattr(cr, name)(cr.tensor(x), cr.tensor(y) if isinstance(y, np.ndarray) else y)
    theirs = getattr(torch, name)(torch.tensor(x), torch.tensor(y) if isinstance(y, np.ndarray) else y).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours._data, theirs, rtol=1e-6)


@pytest.mark.oracle
def test_integer_statistics():
    torch = pytest.importorskip("torch")
    x = np.array([3, 1, 2, 7, 5, 4])
    got, want = cr.median(cr.tensor(x)), torch.median(torch.tensor(x)).numpy()
    assert got.dtype == want.dtype == np.int64 and got.item() == want.item()  # the lower middle entry itself
    # torch refuses the mean of integers; chainrule gives NumPy's float64 (the division inside is not promoted)
    for name in ("mean", "nanmean", "quantile"):
        args = (0.5,) if name == "quantile" else ()
        assert getattr(cr, name)(cr.tensor(x), *args).dtype == np.float64, name
