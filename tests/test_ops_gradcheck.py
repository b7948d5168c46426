"""Every op case: derivatives against central finite differences with ``chainrule.gradcheck``,
in reverse and forward mode, to second order (third for the products: dot, matmul,
tensordot, kron, linear), on shapes and broadcasting drawn by hypothesis."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
from op_cases import CASES, draw_inputs

EXAMPLES = int(os.environ.get("CHAINRULE_GRADCHECK_EXAMPLES", "3"))


def one_output(fn, params):
    """The case's function with all its outputs joined into one flat array (gradcheck wants one)."""

    def f(*xs):
        # plain arrays (finite differences) become constant Tensors, so methods like x.exp() work
        out = fn(*[x if isinstance(x, cr.Tensor) else cr.Tensor(x) for x in xs], **params)
        if isinstance(out, (list, tuple)):
            return cr.concatenate([cr.ravel(o) for o in out])
        return out

    return f


@pytest.mark.parametrize("case", CASES, ids=str)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("CHAINRULE_TEST_RANDOM"), database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_gradcheck(case, data):
    arrays, params = draw_inputs(case, data)
    assert cr.gradcheck(
        one_output(case.fn, params), *arrays, modes=("rev", "fwd"), order=case.order,
        rtol=1e-5 * case.tol, atol=1e-6 * case.tol,
    )


def test_third_order_cases_cover_the_products():
    third = {c.name for c in CASES if c.order >= 3}
    assert {"dot", "matmul", "tensordot", "fn_matmul"} <= third


def test_gradcheck_catches_a_wrong_second_derivative():
    """The harness can fail: a primitive whose reverse rule is right only at first order."""
    from chainrule.autodiff.primitive import Primitive

    cube = Primitive("cube_test_only", lambda x: x**3, register=False)
    cube.defvjp(lambda g, ans, x: g * 3 * np.asarray(x.data if hasattr(x, "data") else x) ** 2)  # constant in x
    cube.defjvp(lambda t, ans, x: t * 3 * x**2)
    assert cr.gradcheck(cube, np.array([0.5, 1.5]), modes=("rev",), order=1)
    with pytest.raises(cr.GradcheckError, match=r"order 2 \(rev mode\)"):
        cr.gradcheck(cube, np.array([0.5, 1.5]), modes=("rev",), order=2)
