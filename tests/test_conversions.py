"""Python numbers and NumPy arrays made from traced values: refused where the derivative would be lost."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor

NUMBER_MESSAGE = (
    r"{what} of a Tensor being differentiated \(inside grad.*math.exp\(x\) calls\s+float\(x\).*np.exp\(x\), cnp"
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
    ("numpy()", lambda x: x.numpy() * x),
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
    # math.exp(w) is a float without w's gradient: refused (PyTorch allows it silently), math.exp(w.item()) reads
    with pytest.raises(TypeError, match=r"math\.exp\(\) of a Tensor that requires grad"):
        math.exp(w)
    assert math.exp(w.item()) == pytest.approx(math.exp(2.5))
    assert Tensor([1.0, 2.0], requires_grad=True).tolist() == [1.0, 2.0]
    for convert, name in [(bool, "bool"), (float, "float"), (int, "int"), (complex, "complex")]:
        for error in (TypeError, ValueError):  # NumPy raises either, depending on the function
            with pytest.raises(error, match=rf"^{name}\(\): .*shape \(2,\)"):
                convert(Tensor([1.0, 2.0]))

    def traced_non_scalar(x):
        return float(x) * x

    with pytest.raises(TypeError, match=r"float\(\) of a Tensor being differentiated"):
        cr.grad(lambda x: traced_non_scalar(x).sum())(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"bool\(\): the truth value of a Tensor of shape \(2,\) is ambiguous"):
        cr.grad(lambda x: x.sum() if x else x.sum())(np.array([1.0, 2.0]))


# -- np.array([...]) of graph Tensors in the object API --------------------------------------------
LIST_MESSAGE = r"requires grad was put into a new NumPy array.*gradient would be lost.*chainrule.stack"


def test_np_array_of_a_list_of_graph_tensors_is_refused():
    a = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=LIST_MESSAGE):
        (np.array([a * 2, a * 3]).sum() + a.sum()).backward()
    assert a.grad is None
    parts = [a * 2, a * 3]

    class Holder:
        pass

    holder = Holder()
    holder.parts = parts
    for convert in (
        lambda: np.array(parts),
        lambda: np.asarray(parts),
        lambda: np.asarray((a, a)),  # leaves too: their gradient would be lost the same way
        lambda: np.array([p for p in parts]),
        lambda: np.array([a * 2], dtype=np.float32),
        lambda: np.array(object=[a]),
        lambda: np.array(holder.parts),
        lambda: np.array(list(parts)),
        lambda: np.stack(tuple(np.asarray(p) for p in [parts])),
        lambda: np.array(
            [a * 2,
             a * 3]
        ),
    ):
        with pytest.raises(TypeError, match=LIST_MESSAGE):
            convert()


def test_building_it_in_the_graph_gives_the_right_gradient():
    a = Tensor([1.0, 2.0], requires_grad=True)
    (cr.stack([a * 2, a * 3]).sum() + a.sum()).backward()
    np.testing.assert_array_equal(a.grad.data, [6.0, 6.0])


def test_reading_values_keeps_working():
    a = Tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    np.testing.assert_array_equal(np.asarray(y), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(a), [1.0, 2.0])
    np.testing.assert_allclose(y, [2.0, 4.0])
    assert np.allclose(y, [2.0, 4.0])
    assert repr(y) == "Tensor([2., 4.], op=multiply)"
    parts = [y, y]
    np.testing.assert_array_equal(np.array([p.detach() for p in parts]), [[2.0, 4.0], [2.0, 4.0]])
    with cr.no_grad():
        np.testing.assert_array_equal(np.array(parts), [[2.0, 4.0], [2.0, 4.0]])
    np.testing.assert_array_equal(np.array([Tensor([1.0]), Tensor([2.0])]), [[1.0], [2.0]])  # no grad: fine
    losses = [float(y.sum()), float((y * y).sum())]
    assert np.array(losses).tolist() == [6.0, 20.0]


def test_format_specs_format_the_value_of_a_one_element_tensor():
    loss = Tensor(1.23456, requires_grad=True) * 1.0
    assert f"{loss:.3f}" == "1.235" and f"{Tensor([2.5]):>6.2f}" == "  2.50"
    assert f"{loss}" == "1.23456" and f"{Tensor([1, 2])}" == str(Tensor([1, 2]))  # a 0-d one: its value (PyTorch's)
    assert f"{cr.tensor([3.0, 7.0]).argmax()}" == "1"
    assert cr.grad(lambda x: x * len(f"{x}"))(0.5) > 0  # a value being differentiated is shown, not read
    with pytest.raises(ValueError, match=r"item\(\): only a one-element Tensor"):
        f"{Tensor([1.0, 2.0]):.2f}"
    with pytest.raises(TypeError, match=r"item\(\) of a Tensor being differentiated"):
        cr.grad(lambda x: x * float(f"{x:.3f}"))(0.5)


# -- NumPy's own Python code converting an argument it does not dispatch on ----------------------------------
@pytest.mark.parametrize(
    "call, where",
    [
        (lambda w: np.pad(np.ones(2), 1, constant_values=w[0]), "np.pad"),
        (lambda w: np.piecewise(np.linspace(-1, 1, 4), [np.linspace(-1, 1, 4) < 0], [w[0], 0.0]), "np.piecewise"),
    ],
    ids=["pad-constant_values", "piecewise-funclist"],
)
def test_numpy_internals_converting_a_graph_tensor_raise(call, where):
    w = cr.Tensor(np.array([2.0, 3.0]), requires_grad=True)
    with pytest.raises(TypeError, match="inside NumPy's own code"):
        call(w)
    with cr.no_grad():  # reading values on purpose still works
        call(w)
    call(w.detach())


def test_numpy_testing_still_reads_graph_tensors():
    w = cr.Tensor(np.array([2.0, 3.0]), requires_grad=True)
    np.testing.assert_allclose(w * 1.0, [2.0, 3.0])
