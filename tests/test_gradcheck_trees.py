"""gradcheck on the programs users write: tuple/list/dict inputs and outputs are checked (not passed
over), and what it cannot check (no float input, a None output, Scalar arguments) is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr


def _scaled_sin(factor: float):
    p = cr.custom.primitive(lambda x: np.sin(x))
    p.defvjp(lambda g, ans, x: g * np.cos(x) * factor)
    p.defjvp(lambda t, ans, x: t * np.cos(x) * factor)
    return p


X = np.array([0.3, -1.2, 2.0])


def test_dict_inputs_are_differentiated_so_a_wrong_rule_inside_one_is_caught():
    good, bad = _scaled_sin(1.0), _scaled_sin(1.01)
    assert cr.gradcheck(lambda d: cr.sum(good(d["a"]) * d["b"]), {"a": X, "b": X[::-1].copy()})
    with pytest.raises(cr.GradcheckError, match=r"order 1 \(rev mode\) for argument\(s\) \[0\]"):
        cr.gradcheck(lambda d: cr.sum(bad(d["a"]) * d["b"]), {"a": X, "b": X[::-1].copy()})


@pytest.mark.parametrize("wrap", [lambda a, b: (a, b), lambda a, b: [a, b], lambda a, b: {"s": a, "t": b}])
def test_tuple_list_and_dict_outputs_are_all_checked(wrap):
    good, bad = _scaled_sin(1.0), _scaled_sin(1.01)
    assert cr.gradcheck(lambda x: wrap(good(x), x ** 2), X, order=2)
    for mode in ("rev", "fwd"):  # the wrong rule sits in the second output only
        with pytest.raises(cr.GradcheckError, match=rf"order 1 \({mode} mode\)"):
            cr.gradcheck(lambda x: wrap(x ** 2, bad(x)), X, modes=(mode,))


def test_what_cannot_be_checked_is_refused_by_name():
    with pytest.raises(ValueError, match="nothing to differentiate"):
        cr.gradcheck(lambda a: a * 2, np.array([1, 2]))
    with pytest.raises(TypeError, match="returned None"):
        cr.gradcheck(lambda a: None, X)
    with pytest.raises(TypeError, match=r"argument 0 of .* is a Scalar.*s\.data"):
        cr.gradcheck(lambda a: a * a, cr.Scalar(0.5))
    # a micrograd-style method, run on the NumPy values of the finite differences: told why and what to write
    with pytest.raises(TypeError, match=r"calls a method NumPy values lack .*'tanh'.*cr\.tanh\(x\)"):
        cr.gradcheck(lambda a: (a * a).tanh(), 0.3)
    with pytest.raises(AttributeError, match="no_such_attribute"):  # other AttributeErrors pass through
        cr.gradcheck(lambda a: cr.Scalar.no_such_attribute, 0.3)


def test_argnums_still_picks_arguments_and_ints_pass_through():
    assert cr.gradcheck(lambda a, n: a ** n, X, 3)
    assert cr.gradcheck(lambda a, b: cr.sum(cr.sin(a) * b), X, np.ones(3), argnums=[1])
