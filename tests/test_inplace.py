"""In-place arithmetic on Tensors (+=, -=, ..., add_, ...): PyTorch's rules, the version counter, dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor, nn

OPS = [
    ("__iadd__", lambda t, v: t.__iadd__(v), np.add),
    ("__isub__", lambda t, v: t.__isub__(v), np.subtract),
    ("__imul__", lambda t, v: t.__imul__(v), np.multiply),
    ("__itruediv__", lambda t, v: t.__itruediv__(v), np.divide),
    ("__ipow__", lambda t, v: t.__ipow__(v), np.power),
    ("add_", lambda t, v: t.add_(v), np.add),
    ("sub_", lambda t, v: t.sub_(v), np.subtract),
    ("mul_", lambda t, v: t.mul_(v), np.multiply),
    ("div_", lambda t, v: t.div_(v), np.divide),
    ("pow_", lambda t, v: t.pow_(v), np.power),
]


@pytest.mark.parametrize("name, change, ufunc", OPS, ids=[o[0] for o in OPS])
def test_augmented_assignment_changes_the_same_tensor_and_its_views(name, change, ufunc):
    start = np.array([1.0, 2.0, 4.0])
    t = Tensor(start)
    view = t.data[1:]
    before = t._version
    out = change(t, 2.0)
    assert out is t
    np.testing.assert_allclose(t.data, ufunc(start, 2.0))
    np.testing.assert_allclose(view, ufunc(start, 2.0)[1:])  # the same memory, as in PyTorch
    assert t._version > before


def test_python_augmented_operators_keep_the_object():
    t = Tensor([1.0, 2.0])
    ident = id(t)
    t += 1
    t -= Tensor([0.5, 0.5])
    t *= 4
    t /= 2
    t **= 2
    assert id(t) == ident
    np.testing.assert_allclose(t.data, [9.0, 25.0])
    m = Tensor(np.eye(2) * 2)
    m @= np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(m.data, [[2.0, 4.0], [6.0, 8.0]])
    i = Tensor([7, 8])
    i //= 2
    i %= 3
    np.testing.assert_array_equal(i.data, [0, 1])
    b = Tensor([True, False])
    b |= Tensor([False, True])
    np.testing.assert_array_equal(b.data, [True, True])


def test_the_pytorch_update_idiom_updates_module_parameters():
    for update in (
        lambda p, lr: p.__isub__(lr * p.grad),
        lambda p, lr: p.sub_(p.grad, alpha=lr),
        lambda p, lr: p.add_(-lr * p.grad),
        lambda p, lr: p.data.__isub__(lr * p.grad.data),
    ):
        model = nn.Linear(3, 2)
        before = [p.data.copy() for p in model.parameters()]
        x = Tensor(np.ones((4, 3), dtype=np.float32))
        model(x).sum().backward()
        grads = [p.grad.data.copy() for p in model.parameters()]
        with cr.no_grad():
            for p in model.parameters():
                update(p, 0.1)
        for p, b, g in zip(model.parameters(), before, grads):
            np.testing.assert_allclose(p.data, b - np.float32(0.1) * g, rtol=1e-6)
            assert p.dtype == np.float32


def test_loop_variable_form_changes_the_parameters():
    model = nn.Linear(2, 1)
    model(Tensor(np.ones((1, 2), dtype=np.float32))).sum().backward()
    expected = [p.data - 0.5 * p.grad.data for p in model.parameters()]
    with cr.no_grad():
        for p in model.parameters():
            p -= 0.5 * p.grad
    for p, e in zip(model.parameters(), expected):
        np.testing.assert_allclose(p.data, e, rtol=1e-6)
        assert isinstance(p, nn.Parameter)


def test_mul_div_in_place_under_no_grad():
    w = Tensor([2.0, 4.0], requires_grad=True)
    with cr.no_grad():
        w *= 3
        w /= Tensor([2.0, 4.0])
    np.testing.assert_allclose(w.data, [3.0, 3.0])
    assert w.requires_grad and w.is_leaf


@pytest.mark.parametrize("name, change, ufunc", OPS, ids=[o[0] for o in OPS])
def test_a_leaf_that_requires_grad_is_refused_with_pytorchs_error(name, change, ufunc):
    w = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"{name}: a leaf Tensor that requires grad is being used in an in-place "
                                           r"operation.*no_grad\(\).*p -= lr \* p.grad"):
        change(w, 2.0)
    np.testing.assert_array_equal(w.data, [1.0, 2.0])


def test_a_non_leaf_in_the_graph_is_changed_as_in_pytorch_unless_its_memory_is_shared():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    assert h.add_(1) is h  # recorded: h takes the add's node (ops/pytorch/in_place_methods.py)
    alias = h  # another name refers to h: h += 1 changes it too, as in PyTorch
    h += 1
    assert alias is h and h.tolist() == [4.0, 6.0]
    del alias
    view = h[1:]  # a view of h: it sees the change, in its values and its graph (PyTorch rebases it)
    h *= 2
    assert view.tolist() == [12.0]
    view.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.data, [0.0, 4.0])
    x.grad = None
    cut = h.detach()  # shares h's memory outside the graph's views: the change would be lost to it
    with pytest.raises(RuntimeError, match=r"__iadd__: in-place change of a tensor in the graph whose memory is "
                                           r"shared \(another Tensor.*h = h \+ b"):
        h += 1
    del cut
    np.testing.assert_array_equal(h.data, [8.0, 12.0])
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [4.0, 4.0])


def test_augmented_assignment_in_the_graph_is_pytorchs():
    """``loss = 0; loss += term`` in a loop (PyTorch's idiom, HIPS autograd's RNN example): recorded."""
    w = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = 0
    for k in range(1, 4):
        loss += (w * k).sum()
    loss *= 2
    loss -= w[0]
    loss /= 2
    loss.backward()
    np.testing.assert_allclose(w.grad.data, [5.5, 6.0, 6.0])
    c = Tensor([0.0, 0.0, 0.0])  # outside the graph, then given a term that is in it (PyTorch allows this too)
    c *= w
    c += w ** 2
    assert c.requires_grad and c.data.dtype == np.float64
    f = Tensor([1.0, 2.0], dtype=np.float32)
    f += Tensor([1.0, 1.0], requires_grad=True)  # in place keeps the dtype: still float32
    assert f.data.dtype == np.float32
    with pytest.raises(ValueError, match=r"__iadd__: the result of shape \(2, 2\) does not fit"):
        f += Tensor([[1.0], [2.0]], requires_grad=True)

    def g(x):
        total = 0
        for k in range(1, 4):
            total += (x * k).sum()
        return total

    np.testing.assert_allclose(cr.grad(g)(np.array([1.0, 2.0])), [6.0, 6.0])


def test_inside_transforms_in_place_is_refused():
    def f(x):
        x += 1
        return (x * x).sum()

    with pytest.raises(RuntimeError, match="__iadd__: a leaf Tensor|__iadd__: in-place change"):
        cr.grad(f)(np.array([1.0, 2.0]))

    def h(x):
        with cr.no_grad():  # the input may share memory with the caller's array: refused even so
            x -= 1
        return x.sum()

    start = np.array([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"__isub__: in-place change of a Tensor being differentiated inside grad"):
        cr.grad(h)(start)
    np.testing.assert_array_equal(start, [1.0, 2.0])

    def g(x):
        with cr.no_grad():  # no_grad does not switch forward mode off: x shares the caller's array, refused
            x *= 2
        return x

    start = np.array([1.0])
    with pytest.raises(RuntimeError, match=r"__imul__: in-place change of a tensor carrying a forward-mode tangent "
                                           r"\(inside jvp/jacfwd\) whose memory is shared"):
        cr.jvp(g, (start,), (np.array([1.0]),))
    assert start.tolist() == [1.0]

    def computed(x):
        y = x * 1
        with cr.no_grad():  # a value computed inside: changed, its tangent carried over (forward mode is on)
            y *= 2
        return y

    assert [v.tolist() for v in cr.jvp(computed, (np.array([1.0]),), (np.array([3.0]),))] == [[2.0], [6.0]]


def test_a_value_saved_for_backward_and_changed_in_place_later_raises():
    a = Tensor([1.0, 2.0])
    w = Tensor([3.0, 4.0], requires_grad=True)
    loss = (a * w).sum()
    a += 1  # a is outside the graph: allowed, but multiply saved its old value
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()
    w2 = Tensor([3.0, 4.0], requires_grad=True)
    loss2 = (w2 * w2).sum()
    with cr.no_grad():
        w2 -= 1
    with pytest.raises(RuntimeError, match="modified in place"):
        loss2.backward()


def test_dtype_rules_follow_pytorch():
    p = Tensor(np.array([1.0, 2.0], dtype=np.float32))
    p -= np.array([0.5, 0.5], dtype=np.float64)
    assert p.dtype == np.float32
    np.testing.assert_allclose(p.data, [0.5, 1.5])
    i = Tensor([1, 2])
    with pytest.raises(TypeError, match=r"__iadd__: the result has dtype float64, which cannot be stored in place "
                                        r"in a Tensor of dtype int64.*t = t \+ x"):
        i += 0.5
    with pytest.raises(TypeError, match=r"__itruediv__: the result has dtype float64.*int64"):
        i /= 2
    np.testing.assert_array_equal(i.data, [1, 2])
    i += 3
    np.testing.assert_array_equal(i.data, [4, 5])


def test_a_result_of_another_shape_is_refused():
    t = Tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"__iadd__: the result of shape \(2, 2\) does not fit in place in a Tensor "
                                         r"of shape \(2,\)"):
        t += np.ones((2, 2))
    m = Tensor(np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"__imatmul__: the product has shape \(2, 3\)"):
        m @= np.ones((2, 3))
    with pytest.raises(TypeError, match=r"__iadd__: cannot combine a Tensor with str"):
        t += "x"
    with pytest.raises(TypeError, match=r"__isub__: cannot combine a Tensor with NoneType"):
        t -= None
    with pytest.raises(TypeError, match=r"__iadd__: the result has dtype complex128.*dtype float64"):
        t += np.array([1j, 0])


def test_writes_through_numpy_are_not_tracked_and_through_data_are_caught_when_stale():
    # documented: .numpy() is the untracked escape hatch; .data is a Tensor sharing the memory (as detach()), so
    # a graph that saved the old values refuses to run backward rather than use the new ones silently
    w = Tensor([1.0, 2.0], requires_grad=True)
    v = w._version
    w.numpy()[...] -= 1.0
    assert w._version == v
    np.testing.assert_array_equal(w.data, [0.0, 1.0])
    y = (w * w).sum()
    w.data.sub_(1.0)
    with pytest.raises(RuntimeError, match="modified in place after it was used"):
        y.backward()


def test_a_second_change_of_the_same_memory_moves_its_stamp_and_is_still_caught():
    # the clock reuses its entry for memory changed before (an optimiser's step): the stamp must still move
    from chainrule.core import clock

    w = Tensor(np.arange(4.0), requires_grad=True)
    with cr.no_grad():
        w += 1.0
    first = w._version
    y = (w * w).sum()  # made after the first change: fine until the next one
    with cr.no_grad():
        w.data[1:] += 1.0  # a view: same memory
        w += 0.0
    assert w._version > first
    assert clock.version(w.numpy()[1:]) == w._version  # views read their owner's stamp
    with pytest.raises(RuntimeError, match="modified in place after it was used"):
        y.backward()


def test_a_new_array_at_a_freed_address_does_not_inherit_a_change():
    from chainrule.core import clock

    for _ in range(50):  # freed owners leave the table, so a fresh array at the same address starts at 0
        a = np.zeros(3)
        clock.record_change(a)
        clock.record_change(a)
        del a
        assert clock.version(np.zeros(3)) == 0


def test_in_place_methods_refuse_a_result_of_another_shape_and_leave_the_values():
    t = Tensor(np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"lerp_: the result has shape \(2, 3\), which cannot be stored in place in "
                                         r"a Tensor of shape \(3,\)"):
        t.lerp_(np.zeros((2, 3)), 0.5)
    np.testing.assert_array_equal(t.data, [1.0, 2.0, 3.0])
    assert t.relu_() is t and t.lerp_(np.zeros(3), 0.5).data.tolist() == [0.5, 1.0, 1.5]


def test_under_grad_a_refused_non_leaf_is_not_said_to_share_the_callers_memory():
    """Only the input itself may share memory with the caller's array; a value computed inside is changed in the
    graph (another name for it sees the change, as in PyTorch), or refused when a view shares its memory."""

    def f(x):
        h = x * 2
        kept = h
        h += 1
        return (h + kept).sum()

    np.testing.assert_array_equal(cr.grad(f)(np.array([1.0, 2.0])), [4.0, 4.0])

    def viewed(x):  # a view sees the change (PyTorch's rebasing of views)
        h = x * 2
        kept = h[1:]
        h += 1
        return (h.sum() + kept.sum())

    np.testing.assert_array_equal(cr.grad(viewed)(np.array([1.0, 2.0])), [2.0, 4.0])

    def shared(x):
        h = x * 2
        kept = h.detach()
        h += 1
        return (h.sum() + kept.sum())

    with pytest.raises(RuntimeError, match=r"__iadd__: in-place change of a tensor in the graph") as caught:
        cr.grad(shared)(np.array([1.0, 2.0]))
    assert "caller's array" not in str(caught.value)


@pytest.mark.oracle
def test_diagonal_and_unfold_are_views_a_change_in_place_reaches_their_source():
    """PyTorch's diagonal and unfold are views: ``m.diagonal().zero_()`` changes ``m`` (they were copies here,
    and the change was silently lost; in the graph it was lost from the gradient too, now refused)."""
    torch = pytest.importorskip("torch")
    for lib in (torch, cr):
        m = lib.ones(2, 3, 3, dtype=lib.float64)
        m.diagonal(1, 1, 2).mul_(lib.tensor([3.0, 4.0], dtype=lib.float64))
        lib.diagonal(m[0]).zero_()
        w = lib.ones(2, 6, dtype=lib.float64)
        w.unfold(1, 2, 2)[0, 1].add_(5)
        if lib is torch:
            want_m, want_w = m.numpy(), w.numpy()
    np.testing.assert_array_equal(m.numpy(), want_m)
    np.testing.assert_array_equal(w.numpy(), want_w)
    x = cr.tensor([1.0, 2.0], dtype=cr.float64, requires_grad=True)
    base = cr.ones(2, 2, dtype=cr.float64) * 2
    base.diagonal().mul_(x)  # the base's history is rebased, as PyTorch's (tests/test_inplace_views.py)
    (base ** 2).sum().backward()
    np.testing.assert_array_equal(base.numpy(), [[2.0, 2.0], [2.0, 4.0]])
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 16.0])  # d (2 x)^2 / dx
    windows = cr.ones(6).unfold(0, 3, 1)  # overlapping windows: a write through one reaches the others
    windows[1].add_(1)
    np.testing.assert_array_equal(windows.numpy()[:, 0], [1, 2, 2, 2])
    with pytest.raises(RuntimeError, match="add_: this Tensor's values cannot be written in place"):
        cr.ones(6).as_strided((2, 3), (0, 1)).add_(1)  # (a step of 0: one entry twice, PyTorch refuses too)


@pytest.mark.oracle
def test_adding_into_rows_of_a_buffer_in_the_graph_as_pytorch():
    """``out[i] += x[i] * k`` reads ``out[i]`` (a view of ``out``) into an addition that keeps none of it; the node
    kept that constant anyway, and its memory then blocked the write into ``out`` (refused, where PyTorch runs)."""
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (torch, cr):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=lib.float64, requires_grad=True)
        out = lib.zeros(3, 2, dtype=lib.float64)
        for i in range(3):
            out[i] += x[i] * (i + 1)
        out[1:] -= 0.5 * x[:2]
        grads.append(lib.autograd.grad((out ** 2).sum(), x)[0].detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
