"""chainrule's warnings are its own classes, and NumPy's RuntimeWarnings do not leak out of its rules.

A rule's value may be infinite or NaN where the user's value is finite (d sqrt(x)/dx at 0 is inf):
that is the answer, as PyTorch gives it, not a NumPy warning from inside chainrule. A user's own
forward computation still warns as NumPy does (np.log(0.0) on a traced value).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn


def test_warning_classes_are_a_family_at_the_top_level():
    assert issubclass(cr.PerformanceWarning, cr.ChainruleWarning)
    assert issubclass(cr.ChainruleWarning, UserWarning)


def test_chainrules_own_warnings_are_chainrule_warnings():
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(cr.ChainruleWarning, match="cuts them from the graph"):
        cr.Tensor(x)
    with pytest.warns(cr.ChainruleWarning, match="does nothing"):
        nn.LSTM(3, 4, num_layers=1, dropout=0.5)
    with pytest.warns(cr.PerformanceWarning, match="runs the function as it is"):
        cr.jit(cr.jacfwd(np.sin))(np.array([0.5]))


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda x: cr.grad(np.sqrt)(x), 0.0),
        (lambda x: cr.grad(cr.grad(np.sqrt))(x), 0.0),
        (lambda x: cr.hessian(np.sqrt)(x), 0.0),
        (lambda x: cr.jvp(np.sqrt, (x,), (1.0,))[1], 0.0),
        (lambda x: cr.grad(np.cbrt)(x), 0.0),
        (lambda x: cr.grad(np.arcsin)(x), 1.0),
        (lambda x: cr.grad(lambda v: v ** 0.5)(x), 0.0),
        (lambda x: cr.grad(lambda v: np.linalg.norm(np.array([1.0, 1.0]) * v))(x), 0.0),
    ],
    ids=["sqrt", "sqrt''", "hessian sqrt", "jvp sqrt", "cbrt", "arcsin at 1", "pow 0.5", "norm at 0"],
)
def test_no_runtime_warning_from_a_rule_at_a_finite_input(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        value = f(x)
    assert np.all(np.isinf(value) | np.isnan(value) | np.isfinite(value))


def test_object_api_backward_at_zero_is_quiet_and_infinite():
    x = cr.Tensor([0.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        np.sqrt(x).sum().backward()
    assert x.grad.tolist() == [np.inf, 0.25]


def test_the_users_own_computation_still_warns_as_numpy_does():
    def f(v):
        return np.log(v) * 0 + v  # log(0) = -inf, then -inf * 0 = nan: NumPy warns twice

    def caught(run):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            run()
        return [(w.category, str(w.message)) for w in seen]

    x = np.array([0.0, 1.0])
    numpys = caught(lambda: f(x))
    assert [m for _, m in numpys] == ["divide by zero encountered in log", "invalid value encountered in multiply"]
    assert caught(lambda: cr.grad(lambda v: np.sum(f(v)))(x)) == numpys


def test_no_runtime_warning_from_chainrules_own_ops_at_their_edges():
    # logsumexp of nothing is -inf (PyTorch's, silently); fmax picks the number over a complex NaN
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        empty = cr.Tensor(np.zeros((2, 0)), requires_grad=True)
        assert empty.logsumexp(-1).tolist() == [-np.inf, -np.inf]
        assert empty.log_softmax(-1).shape == (2, 0)
        z = np.fmax(cr.Tensor([complex(np.nan, 0.0), 1 + 1j]), cr.Tensor([2 + 0j, complex(np.nan, 0.0)]))
    assert z.tolist() == [2 + 0j, 1 + 1j]
