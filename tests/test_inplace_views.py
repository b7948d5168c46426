"""In-place changes through a view of a tensor in the graph (``z[1:].mul_(y)``, ``a[i].copy_(h)``), as PyTorch's:
the base's history is rebased (its old values outside the view, the op's result inside), and every view of it sees
the new values and the new history (ops/pytorch/view_writes.py, tensor/views.py). PyTorch 2.13 is the oracle for
values, gradients (first and second order) and forward-mode tangents; finite differences check the rest."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule.tensor.views import base_of, positions


def slice_mul(lib, x, y):
    z = x * 1
    z[1:].mul_(y)
    return z


def rows_of_a_buffer(lib, h):
    a = lib.zeros(3, 2, dtype=lib.float64)
    for i in range(3):
        a[i].copy_(h[i].tanh())
    return a


def view_then_row(lib, h):
    h = h * 2
    h.view(2, 2)[0].mul_(3)
    return h


def diagonal_add(lib, x, w):
    z = x * 1
    z.diagonal().add_(w)
    return z


def transposed_relu(lib, x):
    z = x * 1
    z.t().relu_()
    return z


def column_zero(lib, x):
    z = x * 2
    z[:, 0].zero_()
    return z


def narrow_clamp(lib, x):
    z = x * 2
    z.narrow(0, 1, 2).clamp_(min=0)
    return z


def unsqueezed_sub(lib, x, v):
    z = x * 2
    z.unsqueeze(0)[0, 1:].sub_(v)
    return z


def earlier_views_see_it(lib, x, y):
    z = x * 1
    head, square = z[:2], z.view(2, 2)  # made before the change: they see the new values and history
    z[1:].mul_(y)
    return lib.cat([head * 3, (square @ square).reshape(-1), z])


def view_of_a_view(lib, x, y):
    z = x * 1
    v = z[1:]
    vv = v[1:]
    vv.mul_(y[1:])
    v.mul_(2)
    return lib.cat([z, vv, v.exp()])


def base_changed_under_its_views(lib, x, y):
    z = x * 1
    v = z[1:]
    z.mul_(y)
    z.sin_()
    return lib.cat([v * 2, z])


def assignment_into_a_view(lib, x, y):
    z = x * 1
    z[1:][0] = y[0] * y[1]
    z.view(2, 2)[:, 1] = y[1:]
    return z


def augmented_assignment_of_a_view(lib, x, y):
    z = x * 1
    v = z[1:]
    v += y  # in place in z, as PyTorch's
    v *= y
    return z


def rows_added_in_a_loop(lib, x):
    out = lib.zeros(3, 2, dtype=lib.float64)
    for i in range(3):
        out[i] += x[i] * (i + 1)
    return out


def other_views(lib, x, y):
    z = x * 1
    z.mT[1].mul_(y)
    z.reshape(1, 3, 2).squeeze(0)[2].neg_()
    z.view(-1).unfold(0, 2, 2)[1].div_(y[:2] ** 2 + 1)
    z.permute(1, 0)[0].exp_()  # (last: a later change would overwrite the output exp keeps, which PyTorch refuses)
    return z


def buffer_of_a_constant_then_more(lib, h):
    a = lib.ones(2, 3, dtype=lib.float64)
    a.t()[1].mul_(h)
    a[1, 2:].add_(h[:1] ** 2)
    return a


def zero_d_base(lib, x):
    z = (x * 3).sum()
    v = z.view(1)
    z[None].mul_(x[0])
    z.unsqueeze(0)[0].add_(1)
    return lib.stack([z, v[0]])


def shifted_copy(lib, x):
    z = x * 1
    z[1:].copy_(z[:-1].clone())
    z[0].mul_(5)
    return z


def strided_window(lib, x, y):
    z = x * 1
    z.as_strided((2, 2), (1, 2), 1).mul_(y)  # entries 1, 3, 2, 4 of z
    return z


CASES = {
    "slice_mul": (slice_mul, [(4,), (3,)]),
    "rows_of_a_buffer": (rows_of_a_buffer, [(3, 2)]),
    "view_then_row": (view_then_row, [(4,)]),
    "diagonal_add": (diagonal_add, [(3, 3), (3,)]),
    "transposed_relu": (transposed_relu, [(3, 2)]),
    "column_zero": (column_zero, [(3, 2)]),
    "narrow_clamp": (narrow_clamp, [(4, 2)]),
    "unsqueezed_sub": (unsqueezed_sub, [(4,), (3,)]),
    "earlier_views_see_it": (earlier_views_see_it, [(4,), (3,)]),
    "view_of_a_view": (view_of_a_view, [(4,), (3,)]),
    "base_changed_under_its_views": (base_changed_under_its_views, [(4,), (4,)]),
    "assignment_into_a_view": (assignment_into_a_view, [(4,), (3,)]),
    "augmented_assignment_of_a_view": (augmented_assignment_of_a_view, [(4,), (3,)]),
    "rows_added_in_a_loop": (rows_added_in_a_loop, [(3, 2)]),
    "other_views": (other_views, [(3, 2), (3,)]),
    "buffer_of_a_constant_then_more": (buffer_of_a_constant_then_more, [(2,)]),
    "zero_d_base": (zero_d_base, [(3,)]),
    "shifted_copy": (shifted_copy, [(4,)]),
    "strided_window": (strided_window, [(6,), (2, 2)]),
}


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2.0, 2.0, s) for s in shapes]


def _loss(lib, out):
    weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64)
    return (out * weights).sum() + (out ** 3).sum()


def _run(lib, fn, values):
    xs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    out = fn(lib, *xs)
    return xs, out


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    fn, shapes = CASES[name]
    values = _inputs(shapes)
    cx, cout = _run(cr, fn, values)
    tx, tout = _run(torch, fn, values)
    np.testing.assert_allclose(cout.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    _loss(cr, cout).backward()
    _loss(torch, tout).backward()
    for a, b in zip(cx, tx):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["slice_mul", "rows_of_a_buffer", "diagonal_add", "view_of_a_view",
                                  "base_changed_under_its_views", "other_views"])
def test_second_order_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    fn, shapes = CASES[name]
    values = _inputs(shapes, seed=1)
    got = []
    for lib in (cr, torch):
        xs, out = _run(lib, fn, values)
        grads = lib.autograd.grad(_loss(lib, out), xs, create_graph=True)
        total = sum((g * g).sum() for g in grads)
        got.append([g.detach().numpy() for g in lib.autograd.grad(total, xs)])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["slice_mul", "rows_of_a_buffer", "view_then_row", "earlier_views_see_it",
                                  "view_of_a_view", "assignment_into_a_view", "other_views"])
def test_forward_mode_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    fn, shapes = CASES[name]
    values = _inputs(shapes, seed=2)
    tangents = _inputs(shapes, seed=3)
    c_out, c_tan = cr.jvp(lambda *xs: fn(cr, *xs), tuple(cr.tensor(v) for v in values),
                          tuple(cr.tensor(t) for t in tangents))
    t_out, t_tan = torch.func.jvp(lambda *xs: fn(torch, *xs), tuple(torch.tensor(v) for v in values),
                                  tuple(torch.tensor(t) for t in tangents))
    np.testing.assert_allclose(np.asarray(c_out), t_out.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(c_tan), t_tan.numpy(), rtol=1e-10, atol=1e-12)


def _numeric_gradient(f, values, k, eps=1e-6):
    grad = np.zeros_like(values[k])
    for i in np.ndindex(values[k].shape):
        up = [v.copy() for v in values]
        down = [v.copy() for v in values]
        up[k][i] += eps
        down[k][i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("name", ["slice_mul", "diagonal_add", "view_of_a_view", "assignment_into_a_view",
                                  "buffer_of_a_constant_then_more"])
def test_gradients_and_second_order_match_finite_differences(name):
    fn, shapes = CASES[name]
    values = _inputs(shapes, seed=4)

    def loss(vals):
        with cr.no_grad():
            return float(_loss(cr, fn(cr, *[cr.tensor(v, dtype=cr.float64) for v in vals])))

    def grad_norm(vals):  # d/dx of |grad|^2 / 2 checks the second order
        xs, out = _run(cr, fn, vals)
        grads = cr.autograd.grad(_loss(cr, out), xs)
        return 0.5 * sum(float((g * g).sum()) for g in grads)

    xs, out = _run(cr, fn, values)
    grads = cr.autograd.grad(_loss(cr, out), xs, create_graph=True)
    second = cr.autograd.grad(0.5 * sum((g * g).sum() for g in grads), xs)
    for k in range(len(values)):
        np.testing.assert_allclose(grads[k].detach().numpy(), _numeric_gradient(loss, values, k), rtol=1e-6,
                                   atol=1e-6)
        np.testing.assert_allclose(second[k].numpy(), _numeric_gradient(grad_norm, values, k), rtol=1e-5, atol=1e-5)


def test_tangents_match_finite_differences():
    fn, shapes = CASES["view_of_a_view"]
    values, tangents = _inputs(shapes, seed=5), _inputs(shapes, seed=6)
    _, tan = cr.jvp(lambda *xs: fn(cr, *xs), tuple(cr.tensor(v) for v in values),
                    tuple(cr.tensor(t) for t in tangents))
    eps = 1e-6
    with cr.no_grad():
        up = fn(cr, *[cr.tensor(v + eps * t) for v, t in zip(values, tangents)]).numpy()
        down = fn(cr, *[cr.tensor(v - eps * t) for v, t in zip(values, tangents)]).numpy()
    np.testing.assert_allclose(np.asarray(tan), (up - down) / (2 * eps), rtol=1e-6, atol=1e-6)


def test_a_view_knows_its_base_and_where_its_entries_are():
    x = cr.tensor(np.arange(6.0), requires_grad=True)
    z = x * 1
    v = z.view(2, 3).t()[1:]
    assert base_of(v) is z and base_of(z) is None and base_of(x * 2) is None
    assert positions(z._data, v._data).tolist() == [[1, 4], [2, 5]]
    assert positions(z._data, (x * 2)._data) is None


@pytest.mark.oracle
def test_a_view_of_a_leaf_that_requires_grad_is_refused_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, cr):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        for change in (lambda: x[0].mul_(2), lambda: x[1:].zero_(), lambda: x.t()[0].relu_(),
                       lambda: x.view(4)[1:].add_(1)):
            with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                                   "in-place operation"):
                change()
        with lib.no_grad():  # allowed: an update of the leaf's values
            x[0].mul_(2)
            x.t()[1].add_(1)
        np.testing.assert_array_equal(x.detach().numpy(), [[2.0, 5.0], [3.0, 5.0]])
        assert x.is_leaf


@pytest.mark.oracle
def test_a_saved_value_changed_through_a_view_makes_its_backward_raise():
    torch = pytest.importorskip("torch")
    for lib in (torch, cr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()  # exp keeps its output for its gradient
        y[0].mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation|modified in place"):
            y.sum().backward()
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    p = h * x  # keeps h's values
    with pytest.raises(RuntimeError, match="mul_: in-place change of a tensor in the graph whose memory is shared"):
        h[1:].mul_(3)
    p.sum().backward()  # nothing was changed
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0, 12.0])


@pytest.mark.oracle
def test_a_view_made_under_no_grad_is_refused_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, cr):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        z = x * 1
        with lib.no_grad():
            v = z[1:]
        with pytest.raises(RuntimeError, match="created in no_grad mode and is being modified inplace"):
            v.mul_(2)
        with lib.no_grad():
            v.mul_(2)  # both under no_grad: allowed, not recorded
        assert z.tolist() == [1.0, 4.0, 6.0]


def test_entries_that_overlap_are_refused_not_written_twice():
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = x * 1
    with pytest.raises(RuntimeError, match="more than one entry of this view refers to one memory location"):
        z.unfold(0, 2, 1).mul_(2)
    with pytest.raises(RuntimeError, match="cannot be written in place"):
        z[:1].expand(3).mul_(2)
    assert z.tolist() == [1.0, 2.0, 3.0]


def test_memory_shared_outside_the_views_is_refused():
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = x * 1
    cut = z.detach()  # shares z's memory without being a view in the graph
    with pytest.raises(RuntimeError, match="whose memory is shared"):
        z[1:].mul_(x[1:])
    del cut
    z[1:].mul_(x[1:])
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 4.0, 6.0])


def test_outside_the_graph_a_view_writes_into_its_base():
    a = cr.zeros(2, 3)
    a.t()[1].fill_(5.0)
    a[1, 1:].mul_(2)
    assert a.tolist() == [[0.0, 5.0, 0.0], [0.0, 10.0, 0.0]]
    assert not a.requires_grad


def test_a_view_made_under_no_grad_gets_the_new_tangent():
    def f(x, y):
        z = x * 1
        with cr.no_grad():
            seen = z[:2]  # no history, but forward mode is on: its tangent follows the change
        z[1:].mul_(y)
        return seen * 1

    _, tangent = cr.jvp(f, (cr.tensor([1.0, 2.0, 3.0]), cr.tensor([4.0, 5.0])),
                        (cr.tensor([1.0, 1.0, 1.0]), cr.tensor([10.0, 0.0])))
    np.testing.assert_allclose(np.asarray(tangent), [1.0, 4.0 + 2.0 * 10.0])


def test_a_view_as_another_dtype_is_refused_not_left_stale():
    x = cr.tensor(np.array([1 + 2j, 3 + 4j]), requires_grad=True)
    z = x * 1
    real = z.real  # a float64 view of the complex memory
    with pytest.raises(RuntimeError, match=r"mul_: a view of this tensor's memory reads it as another dtype"):
        z[0].mul_(2)
    assert z.tolist() == [1 + 2j, 3 + 4j] and real.tolist() == [1.0, 3.0]
    del real
    z[0].mul_(2)
    z.real.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 1.0])
