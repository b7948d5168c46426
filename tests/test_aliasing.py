"""No op hands back its input's memory unless it is a view, as in PyTorch.

PyTorch's view ops (``view``/``reshape`` where possible, slicing, ``transpose``, ``permute``,
``expand``/``broadcast_to``, ``squeeze``/``unsqueeze``, ``diagonal``-style selections, ``split``,
``unbind``, ``real``/``conj`` of a real tensor, ...) return tensors that share memory with their
input; every other op returns new memory, even when it has nothing to do (``roll`` by the length,
``pad`` by zeros, ``nan_to_num`` of integers). Otherwise writing into a result (``r[:, 0] = 0``)
silently changes the input. Each op case of ``tests/op_cases.py`` is run, every result written
into, and the inputs checked; the cases of view ops are listed below, each with its PyTorch twin.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from op_cases import CASES, draw_inputs

EXAMPLES = int(os.environ.get("CHAINRULE_ALIAS_EXAMPLES", "4"))

# The cases whose results may be views of their inputs, and the PyTorch view op each one mirrors.
VIEW_CASES = {
    "getitem": "indexing (basic slicing)", "reshape": "reshape", "method_reshape": "reshape",
    "np_shapes": "reshape, transpose, squeeze",
    "transpose": "permute", "T": "T", "swapaxes": "swapaxes", "permute_dims": "permute",
    "matrix_transpose": "mT", "moveaxis": "movedim", "rollaxis": "movedim",
    "expand_dims": "unsqueeze", "squeeze": "squeeze", "broadcast_to": "expand", "broadcast_arrays":
    "broadcast_tensors", "meshgrid": "meshgrid", "meshgrid_ij_sparse": "meshgrid",
    "split": "split", "array_split": "tensor_split", "unstack": "unbind",
    "complex_real": "real", "complex_imag": "imag", "real": "real", "conjugate": "conj", "positive": "positive",
    "einsum_sublist": "einsum (a permutation is a view)",
    "to_device": "to (to the device it is on: the tensor itself, as PyTorch's)",
    "diagonal": "diagonal", "diagonal_method": "diagonal", "linalg_trace_diagonal": "linalg.diagonal",
}


def _arrays(out):
    if isinstance(out, (list, tuple)):
        for o in out:
            yield from _arrays(o)
    elif isinstance(out, cr.Tensor):
        yield out._data
    elif isinstance(out, np.ndarray):
        yield out


def test_view_cases_exist():
    names = {c.name for c in CASES}
    assert set(VIEW_CASES) <= names, set(VIEW_CASES) - names


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in VIEW_CASES], ids=str)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("CHAINRULE_TEST_RANDOM"),
          database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_results_are_new_memory(case, data):
    arrays, params = draw_inputs(case, data)
    for requires_grad in (False, True):
        xs = [cr.Tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
        out = case.fn(*xs, **params)
        for result in _arrays(out):
            for x in xs:
                assert not np.shares_memory(result, x._data), f"{case.name}: a result shares memory with an input"
            if result.flags.writeable and result.size:
                result[...] = 7  # what a program writing into the result does
        for x, a in zip(xs, arrays, strict=True):
            np.testing.assert_array_equal(x._data, a, err_msg=f"{case.name}: writing into the result changed an input")


def _t(shape, dtype=float):
    return cr.Tensor(np.arange(int(np.prod(shape))).reshape(shape).astype(dtype))


# Calls outside the case table (trivial arguments, integer inputs), each with PyTorch's twin.
CALLS = {
    "roll of an (N, 1) by 1 along dim 1": (lambda x: cr.roll(x, 1, 1), lambda t: t.roll(1, 1), (3, 1), float),
    "roll by 0": (lambda x: x.roll(0, 0), lambda t: t.roll(0, 0), (3, 2), float),
    "flip": (lambda x: x.flip(0), lambda t: t.flip(0), (3, 2), float),
    "fliplr": (lambda x: cr.fliplr(x), lambda t: t.fliplr(), (3, 2), float),
    "rot90 k=0": (lambda x: cr.rot90(x, 0), lambda t: t.rot90(0), (3, 2), float),
    "rot90 k=4": (lambda x: cr.rot90(x, 4), lambda t: t.rot90(4), (3, 2), float),
    "F.pad by zeros": (lambda x: F.pad(x, (0, 0)), lambda t: _torch_f().pad(t, (0, 0)), (3, 2), float),
    "F.pad cropping": (lambda x: F.pad(x, (-1, 0)), lambda t: _torch_f().pad(t, (-1, 0)), (3, 2), float),
    "np.pad by zeros": (lambda x: np.pad(x, 0), lambda t: _torch_f().pad(t, (0, 0)), (3, 2), float),
    "np.pad edge by zeros": (lambda x: np.pad(x, 0, mode="edge"), lambda t: _torch_f().pad(t, (0, 0)), (3, 2), float),
    "nan_to_num of ints": (lambda x: cr.nan_to_num(x), lambda t: t.nan_to_num(), (3, 2), int),
    "nan_to_num of bools": (lambda x: cr.nan_to_num(x), lambda t: t.nan_to_num(), (3, 2), bool),
    "tile (1, 1)": (lambda x: cr.tile(x, (1, 1)), lambda t: t.tile((1, 1)), (3, 2), float),
    "tile of one entry": (lambda x: cr.tile(x, 3), lambda t: t.tile(3), (1,), float),
    "diff n=0": (lambda x: cr.diff(x, n=0), lambda t: t.diff(n=0), (3, 2), float),
    "matrix_power 1": (lambda x: cr.linalg.matrix_power(x, 1), lambda t: _torch().linalg.matrix_power(t, 1),
                       (2, 2), float),
    # views in both
    "narrow": (lambda x: x.narrow(0, 0, 2), lambda t: t.narrow(0, 0, 2), (3, 2), float),
    "expand": (lambda x: x.expand(3, 4), lambda t: t.expand(3, 4), (3, 1), float),
    "view": (lambda x: x.view(-1), lambda t: t.view(-1), (3, 2), float),
    "select": (lambda x: x.select(0, 1), lambda t: t.select(0, 1), (3, 2), float),
    "unsqueeze": (lambda x: x.unsqueeze(0), lambda t: t.unsqueeze(0), (3, 2), float),
    "permute": (lambda x: x.permute(1, 0), lambda t: t.permute(1, 0), (3, 2), float),
    "slice": (lambda x: x[1:], lambda t: t[1:], (3, 2), float),
    "chunk": (lambda x: x.chunk(2)[0], lambda t: t.chunk(2)[0], (4, 2), float),
    # views in PyTorch that NumPy computes as copies (np.diagonal's view is read-only)
    "diagonal": (lambda x: x.diagonal(), lambda t: t.diagonal(), (3, 2), float),
    "diagonal -1 of a transpose": (lambda x: x.t().diagonal(-1), lambda t: t.t().diagonal(-1), (3, 3), float),
    "unfold": (lambda x: x.unfold(0, 2, 1), lambda t: t.unfold(0, 2, 1), (3, 2), float),
    # copies in both
    "diag of a matrix": (lambda x: cr.diag(x), lambda t: t.diag(), (3, 2), float),
    "contiguous of a transpose": (lambda x: x.t().contiguous(), lambda t: t.t().contiguous(), (3, 2), float),
}


def _torch():
    return pytest.importorskip("torch")


def _torch_f():
    return _torch().nn.functional


@pytest.mark.parametrize("name", list(CALLS))
def test_calls_share_memory_as_pytorch_says(name):
    fn, torch_fn, shape, dtype = CALLS[name]
    x = _t(shape, dtype)
    before = x._data.copy()
    result = fn(x)
    view = np.shares_memory(result._data, x._data)
    assert view == (name in _VIEW_CALLS), name
    if not view and result._data.flags.writeable:
        result._data[...] = 7
        np.testing.assert_array_equal(x._data, before)


_VIEW_CALLS = {"narrow", "expand", "view", "select", "unsqueeze", "permute", "slice", "chunk", "diagonal",
               "diagonal -1 of a transpose", "unfold"}

# Writes through a view reach its base (diagonal and unfold were copies: the write was silently lost); a copy's
# do not (contiguous() of a transpose was the transpose itself: the write changed the base).
WRITES = {
    "diagonal mul_": lambda t: t.diagonal().mul_(10.0),
    "diagonal 1 of a transpose": lambda t: t.transpose(0, 1).diagonal(1).fill_(-1.0),
    "diagonal over dims 2, 0": lambda t: t.diagonal(0, 2, 0).fill_(-1.0),
    "diagonal of a diagonal": lambda t: t.diagonal(0, 1, 2).diagonal().fill_(-1.0),
    "unfold": lambda t: t.unfold(2, 2, 2)[1, 0].fill_(-1.0),
    "unfold of a step": lambda t: t[:, ::2].unfold(2, 3, 1)[0, 1].fill_(-1.0),
    "contiguous of a transpose": lambda t: t.transpose(0, 2).contiguous().fill_(-1.0),
    "contiguous of a contiguous": lambda t: t.contiguous().fill_(-1.0),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(WRITES))
def test_writes_through_views_reach_the_base_as_in_pytorch(name):
    torch = _torch()
    x = np.arange(24.0).reshape(2, 3, 4)
    c, t = cr.tensor(x.copy()), torch.tensor(x.copy())
    WRITES[name](c)
    WRITES[name](t)
    np.testing.assert_array_equal(c.numpy(), t.numpy())


def test_a_write_through_a_diagonal_view_is_seen_by_backward():
    """The view's base is the owner of the memory, so the version clock sees the write as PyTorch's does."""
    x = cr.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    h = x * 2
    p = h**2  # keeps h for its gradient
    with cr.no_grad():
        h.diagonal().fill_(0.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        p.sum().backward()
    h = x * 2
    h.diagonal().mul_(3.0)  # in the graph: h's history is rebased, as PyTorch's
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 + 4 * np.eye(3))


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(CALLS))
def test_the_view_list_is_pytorchs(name):
    torch = _torch()
    _, torch_fn, shape, dtype = CALLS[name]
    t = torch.as_tensor(_t(shape, dtype).data)
    result = torch_fn(t)
    assert (result.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()) == (name in _VIEW_CALLS)


def test_roll_result_written_leaves_the_input():
    """The issue's program: a no-op roll of an (N, 1) context, then the result's column written."""
    x = cr.Tensor([[1.0], [2.0], [3.0]])
    r = cr.roll(x, 1, 1)
    r[:, 0] = 0
    assert x.tolist() == [[1.0], [2.0], [3.0]]


def test_tile_of_ones_is_writable():
    r = cr.tile(cr.Tensor([[1.0, 2.0]]), (1, 1))
    r[0, 0] = 5.0
    assert r.tolist() == [[5.0, 2.0]]


def test_transform_results_are_not_the_callers_arrays():
    """The transforms wrap the caller's arrays without a copy; a result that is one of them (``jvp`` of the
    identity, a pullback passing its cotangent on) is copied, so writing into it leaves the caller's arrays."""
    x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
    results = [*cr.jvp(lambda a: a, (x,), (v,)), cr.vjp(lambda a: a, x)[0], cr.vjp(lambda a: a, x)[1](v)[0],
               cr.vjp(lambda a: a + 1.0, x)[1](v)[0]]
    for r in results:
        assert not np.shares_memory(r, x) and not np.shares_memory(r, v)
        r[...] = 7.0
    assert x.tolist() == [1.0, 2.0] and v.tolist() == [1.0, 0.0]


# Tensor methods that may share memory with the tensor, called with no arguments: PyTorch's views and the
# methods it gives the tensor itself back from (contiguous, cpu, to and double when nothing changes); in-place
# methods (a trailing underscore) return the tensor itself.
VIEW_METHODS = {"conj", "conjugate", "contiguous", "cpu", "diagonal", "double", "flatten", "positive", "ravel",
                "reshape", "squeeze", "t", "to", "transpose", "unbind", "view",
                "adjoint", "conj_physical", "resolve_conj", "resolve_neg"}  # (a real tensor's: PyTorch's share too)


@pytest.mark.parametrize("dtype", [float, int])
def test_tensor_methods_share_memory_only_as_pytorchs_views(dtype):
    from chainrule.ops.declare import TENSOR_METHODS

    shared = set()
    for shape in [(3, 2), (3, 1), (1,)]:
        for name in sorted(TENSOR_METHODS):
            if name.endswith("_"):
                continue
            x = _t(shape, dtype)
            try:
                method = getattr(x, name)
                with np.errstate(all="ignore"):  # (the values lie outside some methods' domains: log, arccos...)
                    result = method() if callable(method) else None
            except Exception:  # noqa: BLE001  (a method that needs arguments)
                continue
            if any(np.shares_memory(r, x._data) for r in _arrays(result)):
                shared.add(name)
    assert shared <= VIEW_METHODS, sorted(shared - VIEW_METHODS)
