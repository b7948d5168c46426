"""The Tensor object: construction and dtypes, attributes, backward rules, gradient
recording (no_grad, requires_grad), broadcasting reduced in one place, and in-place changes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor, no_grad
from chainrule.autodiff.primitive import Primitive


# -- construction and dtypes --------------------------------------------------------------------
def test_python_numbers_become_float64_and_dtypes_are_kept():
    assert Tensor(1.5).dtype == np.float64
    assert Tensor([1.0, 2.0]).dtype == np.float64
    assert Tensor([[1, 2]]).dtype == np.int64
    assert Tensor(np.ones(2, dtype=np.float32)).dtype == np.float32
    assert Tensor([1, 2], dtype=np.float32).dtype == np.float32
    assert Tensor(Tensor([1.0])).dtype == np.float64
    assert cr.tensor([1.0], requires_grad=True).requires_grad


def test_data_is_copied_and_is_an_ndarray():
    source = np.array([1.0, 2.0])
    t = Tensor(source)
    source[0] = 99.0
    assert type(t.numpy()) is np.ndarray
    np.testing.assert_array_equal(t.data, [1.0, 2.0])


@pytest.mark.oracle
def test_data_is_a_tensor_sharing_memory_cut_from_the_graph_as_pytorchs():
    # .data was the ndarray: p.data.add_(...), p.grad.data.zero_() raised AttributeError
    torch = pytest.importorskip("torch")
    w, tw = Tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    for p in (w, tw):
        (p * p).sum().backward()
        d = p.data
        assert not d.requires_grad and d.is_leaf
        d.add_(p.grad, alpha=-0.25)  # a hand-written SGD step, as in PyTorch tutorials
        p.grad.data.zero_()
    assert isinstance(w.data, Tensor) and w.requires_grad
    np.testing.assert_array_equal(w.numpy(), tw.detach().numpy())
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    assert np.shares_memory(w.data.numpy(), w.numpy())
    w.data = Tensor([5.0, 6.0])  # setting .data replaces the values, as PyTorch's
    w.data = np.array([7.0, 8.0])
    assert w.tolist() == [7.0, 8.0] and w.requires_grad
    with pytest.raises(TypeError, match="must be floating"):
        w.data = np.array([1, 2])


def test_array_attributes():
    t = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert t.shape == (2, 3) and t.ndim == 2 and t.dtype == np.float64 and t.size == 6
    assert t.T.shape == (3, 2)
    np.testing.assert_array_equal(t.T.data, np.arange(6.0).reshape(2, 3).T)
    assert t.numpy() is t.data.numpy()
    assert t.grad is None and t.requires_grad and t.is_leaf
    assert Tensor([[7.0]]).item() == 7.0 and isinstance(Tensor([[7.0]]).item(), float)
    assert Tensor(3).item() == 3 and isinstance(Tensor(3).item(), int)
    assert len(t) == 2
    assert float(Tensor(2.5)) == 2.5


def test_item_of_a_larger_tensor_says_why_not():
    with pytest.raises(ValueError, match=r"item\(\).*one-element.*\(2,\)"):
        Tensor([1.0, 2.0]).item()


def test_T_is_differentiable():
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    (x.T * np.arange(6.0).reshape(3, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.arange(6.0).reshape(3, 2).T)


def test_repr_shows_values_and_grad_state():
    assert repr(Tensor([1.0, 2.0])) == "Tensor([1., 2.])"
    assert "requires_grad=True" in repr(Tensor([1.0], requires_grad=True))
    assert "float32" in repr(Tensor(np.ones(1, np.float32)))
    x = Tensor([1.0], requires_grad=True)
    assert "exp" in repr(x.exp())


def test_op_and_parents_are_inspectable():
    a = Tensor([1.0], requires_grad=True)
    b = Tensor([2.0], requires_grad=True)
    c = a * b
    assert c.op == "multiply" and a.op == ""
    assert c.parents == (a, b)
    assert not c.is_leaf


# -- detach -------------------------------------------------------------------------------------
def test_detach_cuts_the_graph():
    x = Tensor([1.0, 2.0], requires_grad=True)
    d = (x * 3).detach()
    assert not d.requires_grad and d.is_leaf
    np.testing.assert_array_equal(d.data, [3.0, 6.0])
    y = (x * d).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 6.0])  # d is a constant


# -- backward -------------------------------------------------------------------------------------
def test_scalar_output_needs_no_gradient():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x**2).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 4.0, 6.0])
    y = Tensor([[2.0]], requires_grad=True)
    (y * 3).backward()  # one element, any number of axes
    np.testing.assert_array_equal(y.grad.data, [[3.0]])


def test_backward_of_a_leaf_gives_one():
    x = Tensor(2.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_non_scalar_output_without_gradient_raises_a_clear_error():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"shape \(2,\).*gradient") as info:
        (x * 2).backward()
    assert "sum()" in str(info.value)


def test_non_scalar_output_with_a_gradient_is_a_vector_jacobian_product():
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x**3).backward(gradient=np.array([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad.data, [3.0, -12.0])
    x.zero_grad()
    (x**3).backward(Tensor([2.0, 0.0]))
    np.testing.assert_array_equal(x.grad.data, [6.0, 0.0])


def test_gradient_of_the_wrong_shape_is_refused():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        (x * 2).backward(np.ones(3))


def test_grad_is_a_tensor_of_the_input_shape_and_dtype():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    (x * Tensor([1.0, 2.0, 3.0])).sum().backward()
    assert isinstance(x.grad, Tensor)
    assert x.grad.shape == (2, 3) and x.grad.dtype == np.float64


def test_second_backward_accumulates_and_zero_grad_resets():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)  # as in PyTorch: a second pass through the graph needs it kept
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [4.0, 8.0])
    with pytest.raises(RuntimeError, match=r"second time \(at '\w+'\).*retain_graph=True"):
        y.backward()
    x.zero_grad()
    assert x.grad is None
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])
    doc = (Tensor.__doc__ + (Tensor.backward.__doc__ or "")).lower()
    assert "twice" in doc or "accumulat" in doc or "adds" in doc


def test_intermediate_nodes_keep_grad_only_when_asked():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = x * 3
    z.retain_grad()
    (y * z).sum().backward()
    assert y.grad is None
    np.testing.assert_array_equal(z.grad.data, [2.0, 4.0])
    np.testing.assert_array_equal(x.grad.data, [12.0, 24.0])


def test_shared_subexpressions_count_every_path():
    x = Tensor([3.0], requires_grad=True)
    c = Tensor([4.0], requires_grad=True)
    z = (x + c) * x
    z.backward()
    assert x.grad.item() == 2 * 3.0 + 4.0 and c.grad.item() == 3.0


def test_leaves_that_do_not_require_grad_get_no_grad():
    x = Tensor([1.0], requires_grad=True)
    k = Tensor([5.0])
    (x * k).sum().backward()
    assert k.grad is None and x.grad.item() == 5.0


def test_several_uses_of_a_tensor_as_the_same_argument():
    x = Tensor([2.0, -1.0], requires_grad=True)
    (x * x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.data, 3 * np.array([2.0, -1.0]) ** 2)


# -- broadcasting: gradients summed back to each input's shape, once, by the engine -------------
def test_broadcast_gradients_are_summed_back_to_each_input_shape():
    a = Tensor(np.ones((2, 1, 3)), requires_grad=True)
    b = Tensor(np.arange(4.0).reshape(4, 1), requires_grad=True)
    c = Tensor(2.0, requires_grad=True)
    (a * b + c).sum().backward()
    assert a.grad.shape == (2, 1, 3) and b.grad.shape == (4, 1) and c.grad.shape == ()
    np.testing.assert_array_equal(a.grad.data, np.full((2, 1, 3), 6.0))
    np.testing.assert_array_equal(b.grad.data, np.full((4, 1), 6.0))
    assert c.grad.item() == 24.0


def test_a_rule_never_reduces_broadcasting_itself():
    """A new primitive whose rules ignore broadcasting still gets gradients of the right shape."""
    plus = Primitive("test_plus_no_reduction", np.add, register=False)
    plus.defvjp(lambda g, ans, x, y: g, lambda g, ans, x, y: 2 * g)
    x = Tensor(np.ones((3, 1)), requires_grad=True)
    y = Tensor(np.ones(4), requires_grad=True)
    plus(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.full((3, 1), 4.0))
    np.testing.assert_array_equal(y.grad.data, np.full(4, 6.0))


# -- float32 end to end -------------------------------------------------------------------------
def test_float32_stays_float32_through_a_model_and_its_gradients():
    rng = np.random.default_rng(0)
    x = Tensor(rng.normal(size=(5, 4)).astype(np.float32))
    w = Tensor(rng.normal(size=(4, 3)).astype(np.float32), requires_grad=True)
    b = Tensor(np.zeros(3, np.float32), requires_grad=True)
    h = cr.tanh(x @ w + b) * 0.5 + 1.0
    h = cr.maximum(h, 0.2) ** 2 / 3.0
    logits = cr.concatenate([h, cr.sigmoid(h)], axis=1)
    loss = -cr.log_softmax(logits, axis=1)[np.arange(5), np.array([0, 1, 2, 3, 4])].mean() + cr.sqrt(cr.var(h) + 1.0)
    assert loss.dtype == np.float32
    loss.backward()
    assert w.grad.dtype == np.float32 and b.grad.dtype == np.float32
    assert np.all(np.isfinite(w.grad.data))


@pytest.mark.parametrize(
    "op",
    [
        cr.exp,
        cr.log1p,
        cr.sqrt,
        cr.sin,
        cr.cos,
        cr.tan,
        cr.tanh,
        cr.sigmoid,
        cr.relu,
        cr.abs,
        cr.sign,
        lambda t: t**2,
        lambda t: t**t,
        lambda t: 2.0**t,
        lambda t: 1.0 / t,
        lambda t: t.sum(axis=0),
        lambda t: t.mean(),
        lambda t: t.max(axis=1),
        lambda t: t.prod(),
        lambda t: t.var(axis=0),
        cr.std,
        lambda t: cr.clip(t, 0.2, 0.6),
        lambda t: cr.where(t.data > 0.5, t, 0.0),
        lambda t: cr.maximum(t, 0.5),
        lambda t: t @ t.T,
        lambda t: cr.einsum("ij,kj->ik", t, t),
        lambda t: cr.softmax(t, axis=0),
        lambda t: cr.logsumexp(t, axis=1),
        lambda t: t[[0, 0]],
        lambda t: cr.stack([t, t]),
    ],
)
def test_float32_ops_keep_float32_values_and_gradients(op):
    x = Tensor(np.linspace(0.1, 0.9, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    y = op(x)
    assert y.dtype == np.float32
    y.sum().backward()
    assert x.grad.dtype == np.float32


def test_mixed_precision_gives_each_input_a_gradient_in_its_own_dtype():
    x = Tensor(np.ones(2, np.float32), requires_grad=True)
    w = Tensor(np.ones(2), requires_grad=True)
    y = (x * w).sum()
    assert y.dtype == np.float64
    y.backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float64


# -- recording: requires_grad and no_grad ---------------------------------------------------------
def test_requires_grad_flows_through_ops():
    x = Tensor([1.0], requires_grad=True)
    k = Tensor([2.0])
    assert (x * k).requires_grad and (k * x).requires_grad and cr.exp(x).requires_grad
    assert not (k * k).requires_grad
    assert (x * 2.0 + 1.0).sum().requires_grad


def test_integer_tensors_cannot_require_grad():
    for make in (
        lambda: Tensor([1, 2], requires_grad=True),
        lambda: Tensor([1, 2]).requires_grad_(),
        lambda: Tensor([True]).requires_grad_(True),
    ):
        with pytest.raises(TypeError, match=r"floating-point.*(int64|bool)"):
            make()
    t = Tensor([1, 2])
    with pytest.raises(TypeError, match="dtype=float"):
        t.requires_grad = True


def test_requires_grad_cannot_be_switched_off_on_a_non_leaf():
    y = Tensor([1.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad = False


def test_no_grad_as_a_context_manager():
    x = Tensor([1.0], requires_grad=True)
    with no_grad():
        assert not cr.is_grad_enabled()
        y = x * 2
    assert cr.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf
    np.testing.assert_array_equal(y.data, [2.0])


def test_no_grad_as_a_decorator():
    @no_grad()
    def double(t):
        assert not cr.is_grad_enabled()
        return t * 2

    x = Tensor([1.0], requires_grad=True)
    assert not double(x).requires_grad
    assert cr.is_grad_enabled()
    assert (x * 2).requires_grad


def test_no_grad_restores_the_mode_after_an_exception_and_nests():
    with pytest.raises(ValueError, match="boom"):
        with no_grad():
            raise ValueError("boom")
    assert cr.is_grad_enabled()
    with no_grad():
        with no_grad():
            pass
        assert not cr.is_grad_enabled()
        with cr.enable_grad():
            assert (Tensor([1.0], requires_grad=True) * 2).requires_grad
        assert not cr.is_grad_enabled()
    assert cr.is_grad_enabled()


def test_backward_on_a_result_made_under_no_grad_says_there_is_no_graph():
    x = Tensor([1.0], requires_grad=True)
    with no_grad():
        y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="no graph"):
        y.backward()


# -- in-place changes: a version counter, checked at backward() -----------------------------------
def _modified_in_place(change):
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.sin().sum()  # sin's rule reads its input y
    with no_grad():
        change(y)
    with pytest.raises(RuntimeError, match="modified in place"):
        z.backward()


def test_only_what_a_rule_reads_is_checked_for_in_place_changes():
    # as PyTorch: exp's rule reads its output, not its input, so changing the input is harmless...
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    e = y.exp()
    with no_grad():
        y.add_(1.0)
    e.sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 * np.exp([2.0, 4.0]))
    # ...and changing its output is refused
    e2 = (x * 2).exp()
    z = e2.sum()
    with no_grad():
        e2.mul_(2.0)
    with pytest.raises(RuntimeError, match="needed by the gradient of 'exp' was modified in place"):
        z.backward()


@pytest.mark.parametrize(
    "change",
    [
        lambda y: y.add_(1.0),
        lambda y: y.sub_(1.0),
        lambda y: y.mul_(2.0),
        lambda y: y.div_(2.0),
        lambda y: y.fill_(0.0),
        lambda y: y.zero_(),
        lambda y: y.copy_(np.zeros(2)),
        lambda y: y.__setitem__(0, 5.0),
        lambda y: y.__setitem__(slice(None), Tensor([3.0, 4.0])),
    ],
    ids=["add_", "sub_", "mul_", "div_", "fill_", "zero_", "copy_", "setitem", "setitem_tensor"],
)
def test_changing_a_tensor_backward_needs_raises_at_backward(change):
    _modified_in_place(change)


def test_changing_a_leaf_after_use_raises_at_backward():
    w = Tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    with no_grad():
        w.sub_(0.1)  # an optimiser step before backward
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_changing_a_constant_input_after_use_raises_at_backward():
    x = Tensor([1.0, 2.0], requires_grad=True)
    k = Tensor([3.0, 4.0])
    loss = (x * k).sum()
    k.mul_(10.0)  # k does not require grad: allowed, but the product's gradient needed it
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_numpy_ufunc_out_argument_counts_as_an_in_place_change():
    x = Tensor([1.0, 2.0], requires_grad=True)
    k = Tensor([3.0, 4.0])
    loss = (x * k).sum()
    np.multiply(k, 2.0, out=k)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_changes_before_use_and_optimiser_steps_between_graphs_are_fine():
    w = Tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        loss = (w * w).sum()
        loss.backward()
        with no_grad():
            w.sub_(w.grad * 0.25)
        w.zero_grad()
    np.testing.assert_allclose(w.data, np.array([1.0, 2.0]) * 0.5**3)
    y = Tensor([1.0, 2.0])
    y.add_(1.0)
    x = Tensor([1.0, 1.0], requires_grad=True)
    (x * y).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 3.0])


def test_in_place_change_of_a_tensor_in_the_graph_outside_no_grad_is_refused():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    for change, name in [
        (lambda: x.__setitem__(0, 5.0), "__setitem__"),
        (lambda: x.add_(1.0), "add_"),
    ]:
        with pytest.raises(RuntimeError, match=rf"{name}.*in-place.*no_grad"):
            change()
    y[0] = 5.0  # recorded, as in PyTorch: y's first entry no longer depends on x
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0]
    x.grad = None
    copied = Tensor([0.0, 0.0]).copy_(x)  # recorded, as in PyTorch: the copy is in the graph
    (copied * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize(
    "view",
    [lambda v: v[0:2], lambda v: v.reshape(3, 1), lambda v: v.T, lambda v: v.detach()],
    ids=["slice", "reshape", "T", "detach"],
)
def test_changing_a_view_of_a_tensor_backward_needs_raises(view):
    x = Tensor([0.5, 1.0, 2.0], requires_grad=True)
    v = x * 1.0
    loss = (v * v).sum()
    with no_grad():
        view(v).mul_(10.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()
    assert x.grad is None


@pytest.mark.parametrize(
    "rule, shape",
    [(lambda g, ans, x: g, (3, 2)), (lambda g, ans, x: g[:2], (2, 2))],
    ids=["transposed", "too small"],
)
def test_a_rule_returning_a_gradient_of_the_wrong_shape_is_an_error(rule, shape):
    prim = Primitive("test_wrong_shape_rule", lambda x: x.T, register=False)
    prim.defvjp(rule)
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = (prim(x) * np.arange(6.0).reshape(3, 2)).sum()
    with pytest.raises(ValueError, match=rf"test_wrong_shape_rule.*{re.escape(str(shape))}.*\(2, 3\)"):
        y.backward()


def test_numpy_arrays_and_numbers_on_either_side_of_an_operator():
    x = Tensor([1.0, 2.0], requires_grad=True)
    a = np.array([3.0, 4.0])
    outs = [a + x, x + a, a - x, a * x, a / x, a**x, x**a, np.float64(2.0) * x, 2 - x, 2.0 / x, 2**x]
    assert all(isinstance(o, Tensor) and o.requires_grad for o in outs)
    np.testing.assert_allclose((a - x).data, [2.0, 2.0])
    np.testing.assert_allclose((a / x).data, [3.0, 2.0])
    sum(o.sum() for o in outs).backward()
    xs = np.array([1.0, 2.0])
    expected = 1 + 1 - 1 + a - a / xs**2 + a**xs * np.log(a) + a * xs ** (a - 1) + 2 - 1 - 2 / xs**2 + 2**xs * np.log(2)
    np.testing.assert_allclose(x.grad.data, expected)


@pytest.mark.parametrize("case", ["sum", "shared", "user gradient"])
def test_grads_are_writeable_and_never_shared(case):
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor([3.0, 4.0], requires_grad=True)
    seed = np.array([1.0, 1.0])
    if case == "sum":
        a.sum().backward()
    else:
        (a + b).backward(seed) if case == "user gradient" else (a + b).sum().backward()
    with no_grad():
        a.grad.mul_(10.0)  # e.g. gradient clipping in place, as in PyTorch
        a.grad.zero_()
    np.testing.assert_array_equal(a.grad.data, [0.0, 0.0])
    if case != "sum":
        np.testing.assert_array_equal(b.grad.data, [1.0, 1.0])
        np.testing.assert_array_equal(seed, [1.0, 1.0])


def test_an_operand_that_sets_array_ufunc_none_answers_the_operator_itself():
    """NumPy's protocol (pytest.approx, units libraries): the Tensor's operator returns NotImplemented, so Python
    asks the other operand, as NumPy's arrays and PyTorch's tensors do."""

    class Handles:
        __array_ufunc__ = None

        def __eq__(self, other):
            return "handled"

        def __radd__(self, other):
            return "added"

        def __rmatmul__(self, other):
            return "matmul"

    t = cr.tensor([1.0, 2.0])
    assert t == pytest.approx([1.0, 2.0]) and cr.tensor(10.0) == pytest.approx(10.0)
    assert (t == Handles()) == "handled" and t + Handles() == "added" and t @ Handles() == "matmul"
    with pytest.raises(TypeError):
        t + object()  # (an operand that does not handle it: still an error)


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod"])
def test_integer_division_by_zero_raises_as_pytorch(op):
    """NumPy answers 0 (with a warning): silently wrong where PyTorch raises. Floats still give inf/nan."""
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(torch, op)(torch.tensor([5, -3]), torch.tensor([0, 2]))
    with pytest.raises(ZeroDivisionError, match=f"{op}: integer division by zero"):
        getattr(cr, op)(cr.tensor([5, -3]), cr.tensor([0, 2]))
    with pytest.raises(RuntimeError, match="integer division by zero"):
        getattr(cr, op)(cr.tensor([5, -3]), 0)
    want = getattr(torch, op)(torch.tensor([5, -3]), torch.tensor([2, 2])).numpy()
    np.testing.assert_array_equal(getattr(cr, op)(cr.tensor([5, -3]), cr.tensor([2, 2])).numpy(), want)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.isnan(getattr(cr, op)(cr.tensor([0.0]), 0.0).numpy()).all() or op == "floor_divide"


@pytest.mark.oracle
def test_integer_floor_division_keeps_pytorchs_dtype_with_a_0d_operand():
    torch = pytest.importorskip("torch")
    for a, b in (("int8", "int64"), ("uint8", "int32"), ("int32", "int64")):
        want = (torch.tensor([7, 9], dtype=getattr(torch, a)) // torch.tensor(2, dtype=getattr(torch, b))).dtype
        got = (cr.tensor([7, 9], dtype=getattr(cr, a)) // cr.tensor(2, dtype=getattr(cr, b))).dtype
        assert str(got) == str(want).replace("torch.", "")


@pytest.mark.oracle
def test_logsumexp_and_softmax_of_unsigned_integers_are_right():
    """``x - max(x)`` of uint8 wraps around: logsumexp gave inf (and float16). PyTorch's is float32; NumPy-style
    calls answer in float64, as SciPy's logsumexp."""
    torch = pytest.importorskip("torch")
    values = [[1, 2, 3], [4, 0, 6]]
    want = torch.tensor(values, dtype=torch.uint8).logsumexp(0)
    got = cr.tensor(values, dtype=cr.uint8).logsumexp(0)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    x = np.array(values, dtype=np.uint8)
    np.testing.assert_allclose(cr.logsumexp(x, 0), np.log(np.exp(x.astype(float)).sum(0)), rtol=1e-12)
    e = np.exp(x.astype(float))
    np.testing.assert_allclose(cr.nn.functional.softmax(x, 1), e / e.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(cr.nn.functional.log_softmax(x, 1), np.log(e / e.sum(1, keepdims=True)), rtol=1e-12)


@pytest.mark.oracle
def test_pytorchs_storage_facts_kind_flags_and_per_entry_methods():
    torch = pytest.importorskip("torch")
    for lib in (torch, cr):
        a = lib.arange(12.0).reshape(3, 4)
        assert a.data_ptr() == a[0].data_ptr() != a[1].data_ptr()
        assert (a[1].storage_offset(), a[:, 2].storage_offset(), a.storage_offset()) == (4, 2, 0)
        assert not (a.is_sparse or a.is_quantized or a.is_meta or a.is_nested) and a.layout == lib.strided
        assert a.share_memory_() is a
        b = lib.tensor([1.0, 2.0])
        b.apply_(lambda v: v * 10)
        b.map_(lib.tensor([3.0, 4.0]), lambda x, y: x + y)
        c = lib.tensor([6, 4])
        c.bitwise_and_(lib.tensor([3, 5])).gcd_(lib.tensor([4, 6]))
        like = [f(a, memory_format=lib.preserve_format) for f in (lib.zeros_like, lib.ones_like, lib.empty_like)]
        if lib is torch:
            want = (b.tolist(), c.tolist())
    assert (b.tolist(), c.tolist()) == want
    assert [t.shape for t in like] == [(3, 4)] * 3 and isinstance(like[2], cr.Tensor)
    with pytest.raises(RuntimeError, match="apply_: a leaf Tensor that requires grad"):
        cr.tensor([1.0], requires_grad=True).apply_(abs)


@pytest.mark.oracle
def test_as_strided_windows_match_pytorch_in_values_gradient_and_writes():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, cr):
        a = lib.arange(10.0, dtype=lib.float64, requires_grad=True)
        windows = (a * 1).as_strided((4, 3), (2, 1))
        (windows ** 2).sum().backward()
        grid = lib.arange(12.0).reshape(3, 4)
        d = lib.zeros(6)
        d.as_strided((3,), (2,)).add_(1)
        results.append((windows.tolist(), a.grad.tolist(), grid.as_strided((2, 2), (4, 1), 1).tolist(),
                        lib.as_strided(grid[1], (2,), (2,)).tolist(), d.tolist()))
    assert results[1] == results[0]
    with pytest.raises(NotImplementedError, match="reach memory outside this tensor's entries"):
        cr.zeros(6).as_strided((3,), (2,), 5)
    with pytest.raises(RuntimeError, match="cannot be written in place"):
        cr.zeros(6).as_strided((2, 3), (0, 1)).add_(1)  # (a step of 0: entries repeat)
