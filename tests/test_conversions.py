"""Python numbers and NumPy arrays made from traced values: refused where the derivative would be lost."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor

NUMBER_MESSAGE = (
    r"{what} of a Tensor being differentiated \(inside grad.*math.exp\(x\) calls float\(x\).*np.exp\(x\), cnp"
)

CONVERSIONS = [
    ("float()", lambda x: float(x) ** 2),
    ("float()", lambda x: math.exp(x)),
    ("float()", lambda x: math.sin(x) * x),
    ("float()", lambda x: math.sqrt(x) + x),
    ("int()", lambda x: int(x) * x),
    ("complex()", lambda x: complex(x).real * x),
    ("item()", lambda x: x.item() * x),
    ("tolist()", lambda x: x.tolist() * x),
]


@pytest.mark.parametrize("what, f", CONVERSIONS, ids=[f"{w}-{i}" for i, (w, _) in enumerate(CONVERSIONS)])
@pytest.mark.parametrize("transform", ["grad", "jvp", "jacobian", "hessian", "value_and_grad"])
def test_python_numbers_from_traced_values_are_refused_in_transforms(what, f, transform):
    run = {
        "grad": lambda: cr.grad(f)(0.5),
        "jvp": lambda: cr.jvp(f, (0.5,), (1.0,)),
        "jacobian": lambda: cr.jacobian(f)(0.5),
        "hessian": lambda: cr.hessian(f)(0.5),
        "value_and_grad": lambda: cr.value_and_grad(f)(0.5),
    }[transform]
    with pytest.raises(TypeError, match=NUMBER_MESSAGE.format(what=re_escape(what))):
        run()


def re_escape(s: str) -> str:
    import re

    return re.escape(s)


def test_the_numpy_spelling_works_and_gives_the_right_derivative():
    assert cr.grad(lambda x: np.exp(x))(0.5) == pytest.approx(math.exp(0.5))
    assert cr.grad(lambda x: np.sin(x) * x)(0.5) == pytest.approx(math.sin(0.5) + 0.5 * math.cos(0.5))


def test_numbers_from_constants_and_detached_values_are_fine_in_transforms():
    def f(x):
        n = float(np.asarray(x.shape).prod()) if isinstance(x, Tensor) else 1.0
        scale = float(x.detach())  # on purpose: a constant
        return x * n * scale

    assert cr.grad(f)(2.0) == pytest.approx(2.0)  # d/dx (x * c) with c = 2 held fixed
    assert cr.grad(lambda x: x * float(Tensor(3.0)))(1.0) == 3.0


def test_outside_transforms_float_int_item_work_as_in_pytorch():
    w = Tensor(2.5, requires_grad=True)
    assert float(w) == 2.5 and int(w) == 2 and complex(w) == 2.5 + 0j and w.item() == 2.5
    assert math.exp(w) == pytest.approx(math.exp(2.5))
    assert Tensor([1.0, 2.0], requires_grad=True).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="ambiguous"):
        bool(Tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"item\(\): only a one-element Tensor"):
        float(Tensor([1.0, 2.0]))
