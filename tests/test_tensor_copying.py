"""copy.copy, copy.deepcopy and pickle of Tensors, Parameters and modules behave as PyTorch's: the values,
requires_grad and the label travel, the graph does not, and a deep copy of a computed Tensor is refused (its copy
would carry a copy of the graph whose leaves are not the user's: a backward through it filled no .grad they hold)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim


def test_a_deep_copy_of_a_leaf_copies_values_grad_and_flags():
    a = cr.Tensor([1.0, 2.0], requires_grad=True, label="a")
    a.grad = cr.tensor([3.0, 4.0])
    b = copy.deepcopy(a)
    assert b.requires_grad and b.is_leaf and b.label == "a"
    assert not np.shares_memory(b._data, a._data) and not np.shares_memory(b.grad._data, a.grad._data)
    np.testing.assert_array_equal(b.grad._data, [3.0, 4.0])
    (b * b).sum().backward()
    np.testing.assert_array_equal(b.grad._data, [5.0, 8.0])
    np.testing.assert_array_equal(a.grad._data, [3.0, 4.0])  # the original is untouched


def test_a_deep_copy_of_a_computed_tensor_is_refused_with_the_fix():
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"graph leaves.*computed \(by multiply\).*x.detach\(\).clone\(\)"):
        copy.deepcopy(a * 2)
    b = a
    for _ in range(20_000):  # a deep graph is refused at once (the old copy recursed: RecursionError)
        b = b + 1.0
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy({"loss": b})
    assert copy.deepcopy({"values": b.detach()})["values"].shape == (2,)


def test_pickle_and_copy_of_a_computed_tensor_give_a_leaf_with_its_values():
    a = cr.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    for c in (pickle.loads(pickle.dumps(b)), copy.copy(b)):
        assert c.requires_grad and c.is_leaf and c.grad_fn is None
        np.testing.assert_array_equal(c._data, [3.0, 6.0])
    assert np.shares_memory(copy.copy(b)._data, b._data)  # a shallow copy shares the values, as PyTorch's


def test_parameters_keep_their_type_and_shared_weights_stay_shared():
    lin = nn.Linear(3, 2)
    model = nn.Sequential(lin, nn.ReLU(), lin)  # one layer used twice
    for twin in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert type(twin[0].weight) is nn.Parameter and twin[0].weight.requires_grad
        assert twin[0].weight is twin[2].weight
        assert not np.shares_memory(twin[0].weight._data, lin.weight._data)
        np.testing.assert_array_equal(twin[0].weight._data, lin.weight._data)


class Tagged(cr.Tensor):
    """A user's subclass with attributes of its own (it has a __dict__)."""


def test_attributes_of_a_tensor_subclass_travel():
    t = Tagged._wrap(np.ones(2))
    t.tag = "mine"
    for c in (copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
        assert type(c) is Tagged and c.tag == "mine"


def test_a_model_and_its_optimiser_deep_copy_after_a_step():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    opt = optim.Adam(model.parameters(), lr=0.1)
    x = cr.tensor(np.random.default_rng(0).standard_normal((5, 3)), dtype=np.float32)
    model(x).sum().backward()
    opt.step()
    twin = copy.deepcopy(model)
    np.testing.assert_array_equal(twin(x)._data, model(x)._data)


def test_the_old_weight_norm_refuses_deepcopy_as_pytorch_and_the_parametrization_copies():
    old = nn.utils.weight_norm(nn.Linear(3, 2))
    old(cr.ones(1, 3))
    with pytest.raises(RuntimeError, match="parametrizations.weight_norm"):
        copy.deepcopy(old)
    new = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
    new(cr.ones(1, 3))
    np.testing.assert_allclose(copy.deepcopy(new)(cr.ones(1, 3))._data, new(cr.ones(1, 3))._data)


@pytest.mark.oracle
def test_the_same_copies_succeed_and_fail_as_pytorch():
    torch = pytest.importorskip("torch")

    def outcomes(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        got = []
        for f in (copy.deepcopy, copy.copy, lambda v: pickle.loads(pickle.dumps(v))):
            for v in (a, b):
                try:
                    c = f(v)
                    got.append((c.requires_grad, c.grad_fn is None))
                except RuntimeError:
                    got.append("refused")
        return got

    assert outcomes(cr) == outcomes(torch)
