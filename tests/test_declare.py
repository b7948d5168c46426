"""An op is one declaration (chainrule/ops/declare.py), and everything else follows from it:
the function, the Tensor method, chainrule.numpy, the ops table and docs/ops.md, the test case
(gradcheck to second order in both modes), vmap; and linear ops from their transpose alone."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import math
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
import chainrule.numpy as cnp
from chainrule.autodiff.primitive import REGISTRY
from chainrule.ops.declare import DECLARATIONS, elementwise_op, linear_op, undeclare
from op_cases import CASES_BY_NAME
from op_declared import case_fields

ROOT = Path(__file__).resolve().parent.parent


def _ops_page():
    spec = importlib.util.spec_from_file_location("gen_ops_table", ROOT / "docs" / "gen_ops_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.render()


@pytest.fixture
def cube():
    """A throwaway op, declared in one statement, removed afterwards so other tests never see it."""
    fn = elementwise_op("cube_test_only", lambda x: x**3, lambda ans, x: 3 * x**2, doc="x ** 3 (a test op).",
                        method=True, namespaces=("ops", "numpy"), domain="real", torch=lambda t: t**3)
    yield fn
    undeclare("cube_test_only")


def test_a_throwaway_op_is_one_declaration(cube):
    # a function with its own name, signature and docstring, in chainrule, chainrule.ops and chainrule.numpy
    assert cr.cube_test_only is cube and cr.ops.cube_test_only is cube and cnp.cube_test_only is cube
    assert (cube.__name__, cube.__qualname__, cube.__doc__) == ("cube_test_only", "cube_test_only",
                                                               "x ** 3 (a test op).")
    assert str(inspect.signature(cube)) == "(x: 'Any') -> 'Any'"
    assert "cube_test_only" in cr.ops.__all__ and "cube_test_only" in cnp.__all__
    # a Tensor method, generated with its own name
    method = cr.Tensor.cube_test_only
    assert (method.__name__, method.__qualname__) == ("cube_test_only", "Tensor.cube_test_only")
    t = cr.Tensor([1.0, -2.0], requires_grad=True)
    y = t.cube_test_only()
    assert y.op == "cube_test_only"
    y.sum().backward()
    np.testing.assert_array_equal(t.grad.data, [3.0, 12.0])
    # in the ops table and on the generated docs page
    row = {r.name: r for r in cr.ops.table()}["cube_test_only"]
    assert (row.reverse, row.forward, row.kind, row.methods) == (True, True, "primitive", ("cube_test_only",))
    assert "| `cube_test_only` |  | yes | yes | primitive | `cube_test_only` | - | x ** 3 (a test op). |" in _ops_page()
    # its test case, from the declaration's domain: finite differences, second order, both modes
    fields = case_fields(DECLARATIONS["cube_test_only"])
    (x,) = fields["make"](np.random.default_rng(0), ((2, 3),), {})
    assert np.all(np.abs(x) <= 2) and fields["prims"] == ("cube_test_only",)
    assert cr.gradcheck(fields["fn"], x, modes=("rev", "fwd"), order=2)
    # vmap batches it as an elementwise op, with no batching rule written for it
    np.testing.assert_allclose(cr.vmap(cube)(x), x**3)


def test_undeclare_removes_every_trace():
    elementwise_op("square_test_only", np.square, lambda ans, x: 2 * x, doc="x ** 2 (a test op).", method=True)
    assert cr.square_test_only(3.0) == 9.0
    undeclare("square_test_only")
    assert not hasattr(cr, "square_test_only") and not hasattr(cr.ops, "square_test_only")
    assert not hasattr(cr.Tensor, "square_test_only") and "square_test_only" not in REGISTRY
    assert "square_test_only" not in cr.ops.__all__ and "square_test_only" not in DECLARATIONS


def test_a_second_declaration_of_a_name_or_a_method_is_refused():
    with pytest.raises(ValueError, match="exp: declared twice"):
        elementwise_op("exp", np.exp, lambda ans, x: ans, doc="again.")
    with pytest.raises(ValueError, match=r"Tensor\.exp is declared twice \(by exp and other_exp_test_only\)"):
        elementwise_op("other_exp_test_only", np.exp, lambda ans, x: ans, doc="again.", method="exp")
    assert "other_exp_test_only" not in REGISTRY and "other_exp_test_only" not in DECLARATIONS
    assert cr.Tensor.exp.__qualname__ == "Tensor.exp"


def test_softplus_has_the_parity_of_relu():
    x = np.array([-1.5, 0.0, 2.0])
    expected = np.log1p(np.exp(x))
    # function, Tensor method and nn.functional, all the declared function or its generated method
    np.testing.assert_allclose(cr.softplus(x), expected)
    np.testing.assert_allclose(cr.Tensor(x).softplus().data, expected)
    assert "softplus" in F.__all__ and F.relu.__wrapped__ is cr.relu  # (F's adds PyTorch's inplace flag)
    np.testing.assert_array_equal(F.softplus(x), cr.softplus(x))  # (F's takes PyTorch's beta= and threshold= too)
    assert cr.Tensor.softplus.__qualname__ == "Tensor.softplus"
    # stable where exp(x) overflows
    assert cr.softplus(1000.0) == 1000.0 and cr.softplus(-1000.0) == 0.0
    # a Scalar twin, differentiable to second order (sigmoid, then sigmoid * (1 - sigmoid))
    s = cr.Scalar(0.5)
    y = s.softplus()
    assert math.isclose(y.data, math.log1p(math.exp(0.5))) and y.op == "softplus"
    y.backward(create_graph=True)
    sig = 1 / (1 + math.exp(-0.5))
    assert math.isclose(float(s.grad.data), sig)
    g = s.grad
    s.grad = 0.0
    g.backward()
    assert math.isclose(s.grad, sig * (1 - sig))
    # docs and the test table (gradcheck, the PyTorch oracle, vmap, replay read it)
    assert "| `softplus` |  | yes | yes | primitive | `softplus` | yes |" in _ops_page()
    assert {r.name: r for r in cr.ops.table()}["relu"].scalar
    case = CASES_BY_NAME["softplus"]
    assert case.prims == ("softplus",) and case.torch is not None and "declared" in case.tags


def _statements_naming(name: str) -> list[str]:
    """Every top-level statement in src/chainrule that mentions ``name`` (as a name, attribute or string)."""
    found = []
    for path in sorted((ROOT / "src" / "chainrule").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for stmt in tree.body:
            for node in ast.walk(stmt):
                text = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                        else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None)
                if text == name:
                    found.append(f"{path.relative_to(ROOT)}:{stmt.lineno}")
                    break
    return found


def test_softplus_is_one_statement_in_one_file():
    found = _statements_naming("softplus")
    # the op is one statement; nn adds only PyTorch's beta=/threshold= spelling over it, its layer, and JAX's name
    assert [f for f in found if not f.startswith("src/chainrule/nn/")] == [
        f"src/chainrule/ops/elementwise.py:{_line_of('softplus = ')}"]
    assert {f.split(":")[0] for f in found if f.startswith("src/chainrule/nn/")} == {
        "src/chainrule/nn/functional/activations.py", "src/chainrule/nn/activations.py", "src/chainrule/nn/jax_nn.py"}


def _line_of(prefix: str) -> int:
    lines = (ROOT / "src" / "chainrule" / "ops" / "elementwise.py").read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if line.startswith(prefix))


# -- linear ops: one rule (the transpose) gives both modes ------------------------------------------
def test_a_linear_op_is_declared_by_its_transpose_alone():
    flip = linear_op("flip_test_only", lambda x: x[..., ::-1], lambda g, ans, x: g[..., ::-1],
                     doc="The last axis reversed (a test op).", domain="real")
    try:
        x = np.arange(6.0).reshape(2, 3)
        assert DECLARATIONS["flip_test_only"].linear
        # the forward rule is the op on the tangent: jvp(flip)(x; t) == flip(t)
        t = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        _, tangent = cr.jvp(flip, (x,), (t,))
        np.testing.assert_array_equal(tangent, t[..., ::-1])
        assert cr.gradcheck(lambda a: flip(a) * a, x, modes=("rev", "fwd"), order=2)
    finally:
        undeclare("flip_test_only")


@pytest.mark.parametrize("name", ["sum", "mean", "negative", "reshape", "transpose", "broadcast_to", "getitem",
                                  "concatenate", "expand_dims", "squeeze", "swapaxes", "copy", "real", "imag",
                                  "conjugate"])
def test_shape_ops_and_reductions_are_declared_linear(name):
    assert DECLARATIONS[name].linear


def test_matmul_is_declared_by_its_two_transposes():
    """matmul with a constant is linear: its forward rule is matmul with the tangent in that place."""
    decl = DECLARATIONS["matmul"]
    assert decl.kind == "bilinear"
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4) / 7
    ta, tb = np.ones((2, 3)), np.full((3, 4), 0.5)
    np.testing.assert_allclose(decl.primitive.jvps[0](ta, a @ b, a, b), ta @ b)
    np.testing.assert_allclose(decl.primitive.jvps[1](tb, a @ b, a, b), a @ tb)
    assert cr.gradcheck(lambda x, y: x @ y, a, b, modes=("rev", "fwd"), order=2)


def test_a_slice_keeps_its_sparse_gradient():
    """getitem is linear; its transpose still returns the sparse SliceGrad on a first-order pass."""
    from chainrule.core.sparse import SliceGrad

    x = cr.Tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    y = x[1:, :2]
    g = DECLARATIONS["getitem"].primitive.vjps[0](np.ones((2, 2)), y._data, x._data, (slice(1, None), slice(None, 2)))
    assert isinstance(g, SliceGrad)
    (y * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[0, 0, 0, 0], [2, 2, 0, 0], [2, 2, 0, 0]])


def test_methods_are_functions_with_their_own_names():
    for name in ("sum", "exp", "__add__", "__radd__", "reshape", "__getitem__", "view", "clamp"):
        method = getattr(cr.Tensor, name)
        assert (method.__name__, method.__qualname__) == (name, f"Tensor.{name}"), name
        assert method.__doc__, name
    assert "sum" not in cr.Tensor.__dict__  # from the TensorMethods mixin, not monkeypatched onto Tensor
    assert "TensorMethods" in [c.__name__ for c in cr.Tensor.__mro__[1:]]
    # the op methods never shadow the conversion and in-place mixins (nor they them)
    mixins = [c for c in cr.Tensor.__mro__[1:-1] if c.__name__ != "TensorMethods"]
    generated = next(c for c in cr.Tensor.__mro__ if c.__name__ == "TensorMethods")
    for mixin in mixins:
        own = {n for n in vars(mixin) if not n.startswith("__") or n in ("__iadd__", "__array__")}
        shared = own & set(vars(generated))
        assert not shared, (mixin.__name__, shared)
