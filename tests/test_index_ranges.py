"""Indices of PyTorch's gather, scatter, index_select, ... are checked as PyTorch checks them.

NumPy's indexing counts a negative index from the end; PyTorch's gather, scatter, scatter_add,
index_add and index_select refuse it (``A.gather(1, [[-1], [0]])`` used to give ``[[2], [3]]``).
``index_fill`` and ``take_along_dim`` do count from the end in PyTorch, and ``take`` too. An index
out of range raises an IndexError naming the op, the dim, the index and the size.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

A = np.array([[1.0, 2.0], [3.0, 4.0]])
INDICES = {"negative": [[-1], [0]], "too large": [[2], [0]], "too negative": [[-3], [0]], "in range": [[1], [0]]}


def _ops(lib):
    """op name -> call(A, index as a list) in chainrule (lib=cr) or PyTorch (lib=torch)."""
    tensor = cr.Tensor if lib is cr else lib.tensor
    ones = (lambda *s: cr.ones(s)) if lib is cr else (lambda *s: lib.ones(s, dtype=lib.float64))

    def idx(i, flat=False):
        a = np.ravel(i) if flat else np.asarray(i)
        return cr.Tensor(a) if lib is cr else lib.tensor(a)

    return {
        "gather": lambda x, i: x.gather(1, idx(i)),
        "scatter": lambda x, i: x.scatter(1, idx(i), ones(2, 1)),
        "scatter value": lambda x, i: x.scatter(1, idx(i), value=5.0),
        "scatter_add": lambda x, i: x.scatter_add(1, idx(i), ones(2, 1)),
        "index_add": lambda x, i: x.index_add(1, idx(i, True), ones(2, 2)),
        "index_select": lambda x, i: x.index_select(1, idx(i, True)),
        "index_fill": lambda x, i: x.index_fill(1, idx(i, True), 7.0),
        "take_along_dim": lambda x, i: x.take_along_dim(idx(i), 1),
        "tensor": tensor,
    }


OPS = [k for k in _ops(cr) if k != "tensor"]
# The ops that count a negative index from the end, as in PyTorch 2.13 (whose take_along_dim reads past the
# end for an index out of range instead of raising: chainrule raises there, as NumPy's take_along_axis).
WRAPS = {"index_fill", "take_along_dim"}


@pytest.mark.parametrize("kind", list(INDICES))
@pytest.mark.parametrize("name", OPS)
def test_index_range(name, kind):
    index = INDICES[kind]
    call = _ops(cr)[name]
    x = cr.Tensor(A)
    wrapped = kind == "negative" and name in WRAPS
    if kind == "in range" or wrapped:
        call(x, index)
        return
    bad = np.ravel(index)[0]
    with pytest.raises(IndexError, match=rf"{name.split()[0]}: index {bad} is out of range for dim 1 of size 2"):
        call(x, index)


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "kind"), [(n, k) for n in OPS for k in ("negative", "in range", "too negative")
                                            if (n, k) != ("take_along_dim", "too negative")])  # torch reads past
def test_index_range_is_pytorchs(name, kind):
    torch = pytest.importorskip("torch")
    index = INDICES[kind]
    ours, theirs = _ops(cr)[name], _ops(torch)[name]
    try:
        expected = theirs(torch.tensor(A), index).numpy()
    except (RuntimeError, IndexError):
        with pytest.raises(IndexError):
            ours(cr.Tensor(A), index)
        return
    np.testing.assert_array_equal(ours(cr.Tensor(A), index).data, expected)


def test_gather_of_a_negative_index_raises_not_wraps():
    """The issue's example."""
    with pytest.raises(IndexError, match=r"gather: index -1 is out of range for dim 1 of size 2.*index % 2"):
        cr.Tensor(A).gather(1, [[-1], [0]])
