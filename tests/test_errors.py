"""Bad input gets a clear error: the op, the shapes, the argument; the tests assert the text."""

from __future__ import annotations

import re

import numpy as np
import pytest

import chainrule as cr
from chainrule import Scalar, Tensor, no_grad

A = Tensor(np.ones((2, 3)), requires_grad=True)
B = Tensor(np.ones((3, 2)), requires_grad=True)
V4 = Tensor(np.ones(4))


def shapes_pattern(op, *shapes):
    """The op's name, then every shape, in any order after it."""
    looks = "".join(f"(?=.*{re.escape(str(s))})" for s in shapes)
    return rf"(?s)^{re.escape(op)}\b{looks}"


# -- shape mismatches name the op and both shapes --------------------------------------------------
@pytest.mark.parametrize(
    "op, call, shapes",
    [
        ("add", lambda: A + B, [(2, 3), (3, 2)]),
        ("subtract", lambda: A - V4, [(2, 3), (4,)]),
        ("multiply", lambda: cr.multiply(B, A), [(3, 2), (2, 3)]),
        ("divide", lambda: A / B, [(2, 3), (3, 2)]),
        ("power", lambda: A**B, [(2, 3), (3, 2)]),
        ("maximum", lambda: cr.maximum(A, B), [(2, 3), (3, 2)]),
        ("minimum", lambda: cr.minimum(A, V4), [(2, 3), (4,)]),
        ("where", lambda: cr.where(np.ones(4, bool), A, 0.0), [(4,), (2, 3)]),
        ("matmul", lambda: A @ A, [(2, 3), (2, 3)]),
        ("matmul", lambda: cr.matmul(A, V4), [(2, 3), (4,)]),
        ("tensordot", lambda: cr.tensordot(A, A, axes=1), [(2, 3), (2, 3)]),
        ("concatenate", lambda: cr.concatenate([A, B]), [(2, 3), (3, 2)]),
        ("stack", lambda: cr.stack([A, B]), [(2, 3), (3, 2)]),
        ("reshape", lambda: A.reshape(4, 2), [(2, 3), (4, 2)]),
        ("broadcast_to", lambda: cr.broadcast_to(A, (3, 3)), [(2, 3), (3, 3)]),
        ("einsum", lambda: cr.einsum("ij,jk->ik", A, A), [(2, 3), (2, 3)]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_shape_mismatch_names_the_op_and_both_shapes(op, call, shapes):
    with pytest.raises(ValueError, match=shapes_pattern(op, *shapes)):
        call()


def test_backward_gradient_of_the_wrong_shape_names_both_shapes():
    with pytest.raises(ValueError, match=shapes_pattern("backward", (4,), (2, 3))):
        (A * 2).backward(np.ones(4))


def test_other_shape_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"squeeze: axis 0 has size 2"):
        cr.squeeze(A, axis=0)
    with pytest.raises(ValueError, match=r"split: an axis of length 3 does not split into 2 equal sections"):
        cr.split(A, 2, axis=1)
    with pytest.raises(ValueError, match=r"matmul: operands must be at least 1-D.*\(\).*\(2, 3\)"):
        cr.matmul(Tensor(2.0), A)
    with pytest.raises(IndexError, match=r"getitem: index 5 does not fit a tensor of shape \(2, 3\)"):
        A[5]
    with pytest.raises(ValueError, match=r"max: zero-size input of shape \(0,\)"):
        Tensor(np.zeros(0)).max()
    with pytest.raises(np.exceptions.AxisError, match=r"axis 2 is out of bounds.*dimension 2"):
        A.sum(axis=2)


# -- backward() with no graph says so ---------------------------------------------------------------
def test_backward_on_a_constant_says_there_is_no_graph():
    with pytest.raises(RuntimeError, match=r"backward: .*no graph.*requires_grad=True"):
        Tensor([1.0, 2.0]).sum().backward()


def test_backward_on_a_result_of_constants_only_says_there_is_no_graph():
    with pytest.raises(RuntimeError, match="no graph"):
        (Tensor([1.0]) * Tensor([2.0])).backward()
    with no_grad():
        y = A.sum()
    with pytest.raises(RuntimeError, match="no graph"):
        y.backward()


# -- wrong types: a TypeError that names the argument -------------------------------------------------
@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: Tensor("abc"), "data"),
        (lambda: Tensor(["a", "b"]), "data"),
        (lambda: Tensor(None), "data"),
        (lambda: Tensor(b"xy"), "data"),
        (lambda: Tensor([1.0, None]), "data"),
        (lambda: cr.tensor("abc"), "data"),
        (lambda: Scalar("abc"), "data"),
        (lambda: Scalar(None), "data"),
        (lambda: Scalar([1.0]), "data"),
        (lambda: Scalar(1.0) + "a", "other"),
        (lambda: "a" + Scalar(1.0), "other"),
        (lambda: Scalar(1.0) * None, "other"),
        (lambda: None - Scalar(1.0), "other"),
        (lambda: Scalar(1.0) / ["a"], "other"),
        (lambda: Scalar(2.0) ** "x", "exponent"),
        (lambda: "x" ** Scalar(2.0), "base"),
        (lambda: cr.concatenate("abc"), "arrays"),
        (lambda: cr.concatenate(None), "arrays"),
        (lambda: cr.stack(None), "arrays"),
        (lambda: cr.einsum(None, A), "subscripts"),
        (lambda: A @ "abc", "b"),
        (lambda: "abc" @ A, "a"),
        (lambda: cr.matmul(None, A), "a"),
        (lambda: cr.matmul(A, ["x", "y", "z"]), "b"),
    ],
)
def test_wrong_types_raise_a_type_error_naming_the_argument(call, argument):
    with pytest.raises(TypeError, match=rf"argument '{argument}'"):
        call()


WRONG_OPERANDS = {
    "x + str": (lambda: A + "a", "add"),
    "str + x": (lambda: "a" + A, "add"),
    "x * None": (lambda: A * None, "multiply"),
    "None * x": (lambda: None * A, "multiply"),
    "x - list of str": (lambda: A - ["a", "b", "c"], "subtract"),
    "x / None": (lambda: A / None, "divide"),
    "x ** str": (lambda: A ** "2", "power"),
    "maximum(x, str)": (lambda: cr.maximum(A, "a"), "maximum"),
    "exp(str)": (lambda: cr.exp("abc"), "exp"),
    "exp(None)": (lambda: cr.exp(None), "exp"),
    "sum(None)": (lambda: cr.sum(None), "sum"),
    "where(c, x, None)": (lambda: cr.where(np.ones(3, bool), A, None), "where"),
}


@pytest.mark.parametrize("case", list(WRONG_OPERANDS))
def test_wrong_operand_types_raise_a_type_error_naming_the_op_and_argument(case):
    call, op = WRONG_OPERANDS[case]
    with pytest.raises(TypeError, match=rf"(?s)^{op}\b.*argument"):
        call()


def test_backward_with_a_string_gradient_names_the_argument():
    with pytest.raises(TypeError, match=r"backward.*argument 'gradient'"):
        (A * 2).backward("abc")


def test_integer_tensor_cannot_require_grad_and_says_how_to_fix_it():
    with pytest.raises(TypeError, match=r"only floating-point tensors can require grad.*int64.*dtype=float"):
        Tensor([1, 2, 3], requires_grad=True)


def test_numpy_function_without_a_rule_refuses_to_drop_the_gradient():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"no derivative rule for numpy\..*drop the gradient"):
        np.roots(x)
    np.testing.assert_allclose(np.roots(x.detach()), np.roots([1.0, 2.0]))


def test_in_place_change_message_names_the_op_and_the_fix():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    loss = (y * y).sum()
    with no_grad():
        y.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"backward: .*shape \(2,\).*'multiply'.*modified in place.*copy"):
        loss.backward()


def test_an_axis_out_of_range_names_the_op_and_the_valid_range():
    with pytest.raises(np.exceptions.AxisError, match=r"^sum: axis 3 is out of bounds.*dimension 2.*\[-2, 1\]"):
        Tensor(np.ones((2, 3))).sum(axis=3)
    with pytest.raises(np.exceptions.AxisError, match=r"^softmax: axis 2"):
        cr.softmax(Tensor(np.ones(3)), axis=2)
