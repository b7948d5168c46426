"""PyTorch's dtype names (``cr.long``, ``cr.float``, ...), ``cr.Generator`` and ``cr.multinomial``, as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

NAMES = ["long", "int", "int64", "int32", "int16", "short", "int8", "uint8", "bool", "float", "double", "half",
         "float16", "float32", "float64", "complex64", "complex128", "cfloat", "cdouble"]


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_dtype_names_match_torch(name):
    torch = pytest.importorskip("torch")
    want = str(torch.empty(0, dtype=getattr(torch, name)).numpy().dtype)
    assert np.dtype(getattr(cr, name)) == np.dtype(want)
    assert cr.zeros(2, dtype=getattr(cr, name)).dtype == getattr(cr, name)


@pytest.mark.oracle
def test_conversions_match_torch():
    torch = pytest.importorskip("torch")
    values = [1.7, -2.5, 0.0, 3.2]
    t, tt = cr.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    for method in ["long", "int", "bool", "double", "half", "float"]:
        got, want = getattr(t, method)(), getattr(tt, method)()
        assert got.dtype == getattr(cr, str(want.dtype).removeprefix("torch."))
        np.testing.assert_array_equal(got.data, want.detach().numpy())
    for name in ["long", "int32", "uint8", "float64", "bool"]:
        got, want = t.to(getattr(cr, name)), tt.to(getattr(torch, name))
        assert got.dtype == getattr(cr, name) and got.dtype != cr.float32
        np.testing.assert_array_equal(got.data, want.detach().numpy())
    assert cr.tensor([1, 2], dtype=cr.long).dtype == cr.int64
    assert cr.arange(3, dtype=cr.double).dtype == cr.float64


def test_names_do_not_shadow_builtins_on_star_import():
    namespace: dict = {}
    exec("from chainrule import *", namespace)
    assert "float" not in namespace and "int" not in namespace and "bool" not in namespace
    exec("from chainrule import long", namespace)
    assert namespace["long"] is np.int64


def test_bfloat16_is_a_name_whose_arrays_are_refused_saying_numpy_has_none():
    assert cr.bfloat16 is cr.bfloat16  # (tests/test_torch_standins.py: every way of making an array of it)
    with pytest.raises(TypeError, match="NumPy.*no bfloat16.*float32"):
        cr.ones(2, dtype=cr.bfloat16)


def test_generator_is_seeded_like_torch_generator():
    a = cr.Generator().manual_seed(5)
    b = cr.Generator()
    assert b.manual_seed(5) is b and a.initial_seed() == 5
    assert a.permutation(10).tolist() == b.permutation(10).tolist()


def test_multinomial_shapes_and_distribution():
    cr.manual_seed(0)
    probs = cr.tensor([[0.1, 0.0, 0.6, 0.3], [5.0, 5.0, 0.0, 0.0]])
    draws = cr.multinomial(probs, 10000, replacement=True)
    assert draws.shape == (2, 10000) and draws.dtype == cr.long
    freq = np.bincount(draws.data[0], minlength=4) / 10000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.02)
    assert set(draws.data[1].tolist()) <= {0, 1}
    no_repeat = probs.multinomial(2)
    assert no_repeat.shape == (2, 2)
    for row in no_repeat.data:
        assert len(set(row.tolist())) == 2
    assert sorted(cr.multinomial(cr.tensor([1.0, 2.0, 3.0]), 3).tolist()) == [0, 1, 2]


def test_multinomial_follows_manual_seed_and_generator():
    p = cr.tensor([0.2, 0.3, 0.5])
    cr.manual_seed(1)
    a = cr.multinomial(p, 20, True)
    cr.manual_seed(1)
    b = p.multinomial(20, replacement=True)
    assert a.tolist() == b.tolist()
    g1, g2 = cr.Generator().manual_seed(3), cr.Generator().manual_seed(3)
    assert cr.multinomial(p, 20, True, generator=g1).tolist() == cr.multinomial(p, 20, True, generator=g2).tolist()


@pytest.mark.oracle
@pytest.mark.parametrize("probs, n, replacement", [
    ([0.5, float("nan")], 1, True), ([0.5, float("inf")], 1, True), ([0.5, -0.1], 1, True), ([0.0, 0.0], 1, True),
    ([0.5, 0.5], 3, False), ([0.5, 0.5], 0, True),
])
def test_multinomial_refuses_what_torch_refuses(probs, n, replacement):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor(probs), n, replacement)
    with pytest.raises(RuntimeError, match="multinomial"):
        cr.multinomial(cr.tensor(probs), n, replacement)


@pytest.mark.oracle
def test_multinomial_without_replacement_ends_with_zero_weights():
    torch = pytest.importorskip("torch")
    probs = [0.0, 0.5, 0.0, 0.0]
    want = torch.multinomial(torch.tensor(probs), 4, False).tolist()
    got = cr.multinomial(cr.tensor(probs), 4).tolist()
    assert got[0] == want[0] == 1 and sorted(got) == sorted(want) == [0, 1, 2, 3]


def test_the_random_constructors_take_a_generator_as_pytorchs():
    # makemore: g = torch.Generator().manual_seed(2147483647); C = torch.randn((27, 10), generator=g)
    def draws(g):
        return [cr.randn((3, 2), generator=g), cr.rand(4, generator=g), cr.randint(0, 5, (6,), generator=g),
                cr.randn_like(cr.zeros(2), generator=g), cr.rand_like(cr.zeros(2), generator=g)]

    first, again = draws(cr.Generator().manual_seed(2147483647)), draws(cr.Generator().manual_seed(2147483647))
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    other = draws(cr.Generator().manual_seed(1))
    assert not np.array_equal(first[0].numpy(), other[0].numpy())
    t = cr.randint(0, 5, (2,), dtype=cr.float32, requires_grad=True)  # PyTorch's keyword, a float dtype
    assert t.requires_grad and t.dtype == np.float32
