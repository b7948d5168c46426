"""PyTorch's in-place methods (``t.<op>_``), made by one rule from the out-of-place ``t.<op>`` and recorded in the
graph as PyTorch records them (chainrule.ops.pytorch.in_place_methods): the values, the object kept, the gradient
through an in-place change of a non-leaf against PyTorch's, and PyTorch's refusals."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor

RNG = np.random.default_rng(0)
UNIT = RNG.uniform(0.15, 0.85, (2, 3))  # a domain every op below takes (acos, atanh, erfinv, logit, ...)
MAT = RNG.normal(size=(2, 3))
A, B = RNG.normal(size=(2, 4)), RNG.normal(size=(4, 3))
BA, BB = RNG.normal(size=(5, 2, 4)), RNG.normal(size=(5, 4, 3))
V2, V3, V4 = RNG.normal(size=2), RNG.normal(size=3), RNG.normal(size=4)

# name, the input, the operands (NumPy arrays become Tensors of either library), differentiable
CASES = [
    ("acosh_", UNIT + 1.5, (), True), ("arccos_", UNIT, (), True), ("arccosh_", UNIT + 1.5, (), True),
    ("arcsin_", UNIT, (), True), ("arcsinh_", MAT, (), True), ("arctan_", MAT, (), True),
    ("arctanh_", UNIT, (), True), ("asinh_", MAT, (), True), ("atanh_", UNIT, (), True),
    ("arctan2_", MAT, (UNIT,), True), ("deg2rad_", MAT, (), True), ("rad2deg_", MAT, (), True),
    ("digamma_", UNIT + 1, (), True), ("lgamma_", UNIT + 1, (), True), ("erfc_", MAT, (), True),
    ("erfinv_", UNIT - 0.5, (), True), ("sinc_", MAT, (), True), ("relu_", MAT, (), True),
    ("sigmoid_", MAT, (), True), ("tanh_", MAT, (), True), ("exp_", MAT, (), True), ("sqrt_", UNIT, (), True),
    ("addmm_", MAT, (A, B), True), ("addmm_", MAT, (A, B), True),
    ("addbmm_", MAT, (BA, BB), True), ("baddbmm_", RNG.normal(size=(5, 2, 3)), (BA, BB), True),
    ("addmv_", V2, (A, V4), True), ("addr_", MAT, (V2, V3), True),
    ("cumsum_", MAT, (1,), True), ("cumprod_", UNIT, (1,), True), ("float_power_", UNIT, (2.0,), True),
    ("heaviside_", MAT, (np.array([0.5]),), False), ("floor_divide_", MAT * 5, (2.0,), False),
    ("fix_", MAT * 5, (), False), ("clamp_", MAT, (-0.5, 0.5), True), ("masked_fill_", MAT, (MAT > 0, 2.0), True),
    ("mul_", MAT, (UNIT,), True), ("add_", MAT, (UNIT,), True), ("div_", MAT, (UNIT,), True),
    ("lerp_", MAT, (UNIT, 0.25), True), ("addcmul_", MAT, (UNIT, MAT), True), ("copy_", MAT, (UNIT,), True),
    ("logical_and_", MAT, (UNIT > 0.5,), False), ("logical_or_", MAT, (UNIT > 0.5,), False),
    ("logical_xor_", MAT, (UNIT > 0.5,), False), ("logical_not_", MAT, (), False),
    ("eq_", np.round(MAT), (0.0,), False), ("ne_", np.round(MAT), (0.0,), False), ("lt_", MAT, (0.1,), False),
    ("le_", MAT, (0.1,), False), ("gt_", MAT, (0.1,), False), ("ge_", MAT, (0.1,), False),
    ("greater_", MAT, (0.1,), False), ("greater_equal_", MAT, (0.1,), False), ("less_", MAT, (0.1,), False),
    ("less_equal_", MAT, (0.1,), False), ("not_equal_", np.round(MAT), (0.0,), False),
]
IDS = [f"{c[0]}{i}" for i, c in enumerate(CASES)]


def _torch():
    return pytest.importorskip("torch", reason="torch is not installed")


def _operands(args, as_tensor):
    return tuple(as_tensor(np.array(a)) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.oracle
@pytest.mark.parametrize("name, x, args, differentiable", CASES, ids=IDS)
def test_in_place_method_values_and_object_follow_pytorch(name, x, args, differentiable):
    torch = _torch()
    t, tt = Tensor(x.copy()), torch.tensor(x.copy())
    version = t._version
    assert getattr(t, name)(*_operands(args, Tensor)) is t
    getattr(tt, name)(*_operands(args, torch.tensor))
    np.testing.assert_allclose(t.data, tt.numpy(), rtol=1e-10, atol=1e-12)
    assert t.dtype == np.float64 and t._version > version


@pytest.mark.oracle
@pytest.mark.parametrize("name, x, args, differentiable", CASES, ids=IDS)
def test_gradient_through_an_in_place_change_of_a_non_leaf_follows_pytorch(name, x, args, differentiable):
    """``h = leaf * w; h.<op>_(...); loss(h).backward()``: the gradient to the leaf and to an operand that
    requires grad are PyTorch's."""
    torch = _torch()
    w = RNG.uniform(0.9, 1.1, x.shape)
    leaf, tleaf = Tensor(x.copy(), requires_grad=True), torch.tensor(x.copy(), requires_grad=True)
    ops = _operands(args, lambda a: Tensor(a, requires_grad=a.dtype == np.float64))
    tops = _operands(args, lambda a: torch.tensor(a, requires_grad=a.dtype == np.float64))
    h, th = leaf * Tensor(w), tleaf * torch.tensor(w)
    if name in ("sqrt_", "cumprod_", "float_power_", "arccosh_", "acosh_"):  # keep the input in the domain
        h, th = h * 1.0, th * 1.0
    assert getattr(h, name)(*ops) is h
    getattr(th, name)(*tops)
    np.testing.assert_allclose(h.data, th.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert h.requires_grad == th.requires_grad or not differentiable
    weights = RNG.normal(size=x.shape)
    if not differentiable:
        assert not h.requires_grad or h.grad_fn is not None
        return
    (h * Tensor(weights)).sum().backward()
    try:
        (th * torch.tensor(weights)).sum().backward()
    except NotImplementedError:  # PyTorch has no rule for a few in-place forms (acosh_): its out-of-place one
        th = tleaf * torch.tensor(w) * (1.0 if name in ("acosh_", "arccosh_") else 1)
        th = getattr(th, name[:-1])(*tops)
        (th * torch.tensor(weights)).sum().backward()
    got = leaf.grad.data if leaf.grad is not None else np.zeros(x.shape)  # (copy_: no gradient reaches the leaf)
    expected = tleaf.grad.numpy() if tleaf.grad is not None else np.zeros(x.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10)
    for a, ta in zip(ops, tops):
        if isinstance(a, Tensor) and a.requires_grad:
            np.testing.assert_allclose(a.grad.data, ta.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name, x, args, differentiable", CASES, ids=IDS)
def test_a_leaf_that_requires_grad_is_refused_as_in_pytorch_and_allowed_under_no_grad(name, x, args, differentiable):
    leaf = Tensor(x.copy(), requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"{name}: a leaf Tensor that requires grad is being used in an in-place"):
        getattr(leaf, name)(*_operands(args, Tensor))
    np.testing.assert_array_equal(leaf.data, x)
    with cr.no_grad():
        assert getattr(leaf, name)(*_operands(args, Tensor)) is leaf
    assert leaf.is_leaf and leaf.requires_grad


def test_gradients_through_in_place_changes_match_finite_differences():
    def f(x):
        x = cr.as_tensor(x)  # (gradcheck also calls f on arrays)
        h = x * 1.5
        h.sin_()
        h.mul_(x)
        h.addcmul_(x, x, value=0.5)
        h.clamp_(-0.9, 0.9)
        h.unsqueeze_(0)
        h.t_()
        return (h * h).sum()

    assert cr.gradcheck(f, np.array([0.3, -0.2, 0.4]), modes=("rev",))  # (forward mode refuses in-place changes)


@pytest.mark.oracle
def test_shape_methods_change_the_shape_in_place_and_record_it():
    torch = _torch()
    for name, args in [("squeeze_", ()), ("squeeze_", (0,)), ("unsqueeze_", (1,)), ("t_", ()),
                       ("transpose_", (0, 2)), ("swapaxes_", (1, 2)), ("swapdims_", (0, 1))]:
        x = RNG.normal(size=(1, 2, 3)) if name != "t_" else RNG.normal(size=(2, 3))
        leaf, tleaf = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        h, th = leaf * 2, tleaf * 2
        assert getattr(h, name)(*args) is h
        getattr(th, name)(*args)
        assert h.shape == tuple(th.shape), name
        np.testing.assert_array_equal(h.data, th.detach().numpy())
        weights = RNG.normal(size=h.shape)
        (h * Tensor(weights)).sum().backward()
        (th * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(leaf.grad.data, tleaf.grad.numpy())
        with pytest.raises(RuntimeError, match=rf"{name}: a leaf Tensor that requires grad"):
            getattr(leaf, name)(*args)
        plain = Tensor(x)
        assert getattr(plain, name)(*args) is plain and plain.shape == tuple(th.shape)


@pytest.mark.oracle
def test_top_level_in_place_functions_are_the_methods():
    torch = _torch()
    for name, args in [("exp_", ()), ("sin_", ()), ("relu_", ()), ("sigmoid_", ()), ("clamp_", (-0.3, 0.3)),
                       ("tanh_", ()), ("neg_", ()), ("sqrt_", ()), ("round_", ()), ("fill_", (2.0,)),
                       ("zero_", ()), ("log1p_", ()), ("rad2deg_", ()), ("xlogy_", (2.0,))]:
        x = UNIT.copy()
        t, tt = Tensor(x), torch.tensor(x)
        assert getattr(cr, name)(t, *args) is t
        getattr(torch, name)(tt, *args)
        np.testing.assert_allclose(t.data, tt.numpy(), rtol=1e-12, err_msg=name)


def test_float_power_in_place_needs_a_double_as_pytorchs():
    with pytest.raises(RuntimeError, match="float_power_: the base has dtype float32 but the operation's result "
                                           "requires dtype float64"):
        cr.ones(2).float_power_(2.0)


def test_a_tensor_whose_memory_is_shared_is_refused_in_the_graph():
    x = Tensor([0.5, 1.0, 2.0], requires_grad=True)
    h = x * 2
    cut = h.detach()  # shares h's memory, not as a view in the graph: the change would be lost to it
    with pytest.raises(RuntimeError, match=r"exp_: in-place change of a tensor in the graph whose memory is shared "
                                           r"\(another Tensor.*h = h.exp\(\.\.\.\)"):
        h.exp_()
    view = h[1:]
    with pytest.raises(RuntimeError, match=r"exp_: in-place change of a tensor in the graph whose memory is shared"):
        view.exp_()  # a view of h, and h shared with cut
    np.testing.assert_array_equal(h.data, [1.0, 2.0, 4.0])
    del cut
    h.exp_()  # nothing but its view shares it now: the view sees the change (PyTorch's rebasing)
    np.testing.assert_allclose(h.data, np.exp([1.0, 2.0, 4.0]))
    view.sum().backward()
    np.testing.assert_allclose(x.grad.data, [0.0, 2 * np.exp(2.0), 2 * np.exp(4.0)])


def test_a_value_saved_by_an_earlier_op_and_changed_without_grad_makes_its_backward_raise():
    x, w = Tensor([1.0, -2.0], requires_grad=True), Tensor([3.0, -4.0])
    y = (x * w).sum()
    w.sigmoid_()  # w is outside the graph: changed in place; the product saved it
    with pytest.raises(RuntimeError, match="was modified in place after it was used"):
        y.backward()


def test_an_in_place_change_keeps_retain_grad_and_writes_an_operand_into_a_plain_tensor():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    h.mul_(3)
    assert h.retains_grad
    buffer = cr.zeros(2, dtype=np.float64)
    buffer.add_(h, alpha=2)  # an operand in the graph: the buffer joins it, as in PyTorch
    assert buffer.requires_grad and not buffer.is_leaf
    buffer.sum().backward()
    assert x.grad.tolist() == [12.0, 12.0] and h.grad.tolist() == [2.0, 2.0]


def test_under_jit_an_in_place_change_in_the_graph_is_refused_clearly():
    def f(x):
        h = x * 2
        h.exp_()
        return h.sum()

    x = Tensor([0.5, 1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="exp_: an in-place change of a tensor in the graph inside jit"):
        cr.jit(f)(x)


@pytest.mark.oracle
@pytest.mark.parametrize("name, args", [("relu_", ()), ("elu_", ()), ("leaky_relu_", (0.1,)), ("hardtanh_", ()),
                                        ("selu_", ()), ("celu_", ()), ("threshold_", (0.6, -1.0))])
def test_nn_functional_in_place_activations_are_recorded_as_pytorchs(name, args):
    torch = _torch()
    F, tF = cr.nn.functional, torch.nn.functional
    x = np.array([-1.0, 0.5, 2.0])
    leaf, tleaf = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    h, th = leaf * 2, tleaf * 2
    assert getattr(F, name)(h, *args) is h
    getattr(tF, name)(th, *args)
    (h * h).sum().backward()
    (th * th).sum().backward()
    np.testing.assert_allclose(h.data, th.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(leaf.grad.data, tleaf.grad.numpy(), rtol=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("index", [0, (slice(None), 1), "mask", "pairs", (Ellipsis, slice(0, 2))],
                         ids=["int", "column", "mask", "pairs", "slice"])
def test_item_assignment_in_the_graph_follows_pytorch(index):
    torch = _torch()
    x = RNG.normal(size=(2, 3))
    if index == "mask":
        index, tindex = Tensor(x > 0), torch.tensor(x > 0)
    elif index == "pairs":
        index, tindex = (np.array([0, 1]), np.array([2, 0])), (torch.tensor([0, 1]), torch.tensor([2, 0]))
    else:
        tindex = index
    leaf, tleaf = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    h, th = leaf * 2, tleaf * 2
    shape = tuple(th[tindex].shape)
    v = RNG.normal(size=shape[-1:] if shape else ())
    value, tvalue = Tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    h[index] = value * 3
    th[tindex] = tvalue * 3
    weights = RNG.normal(size=x.shape)
    (h * h * Tensor(weights)).sum().backward()
    (th * th * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(h.data, th.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(leaf.grad.data, tleaf.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(value.grad.data, tvalue.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("make", [lambda x: cr.nn.functional.softmax(x, 1), lambda x: x.exp(), lambda x: x.sigmoid()],
                         ids=["softmax", "exp", "sigmoid"])
def test_a_change_of_an_output_its_op_kept_for_its_rule_hands_that_op_the_old_values(make):
    # Karpathy's makemore exercise: dlogits = F.softmax(logits, 1); dlogits[range(n), Yb] -= 1 (logits in the graph)
    rng = np.random.default_rng(0)
    x0, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    rows, cols = [0, 1, 2], [2, 0, 3]
    x = Tensor(x0, requires_grad=True)
    h = make(x)
    assert h._node.ans is h._data  # (kept: the case under test)
    h[rows, cols] -= 1
    h /= 3
    h[0] = 0.5
    (h * Tensor(w)).sum().backward()
    x2 = Tensor(x0, requires_grad=True)  # the same function written out of place
    h2 = make(x2)
    h2 = h2.at[rows, cols].add(-1) / 3
    h2 = h2.at[0].set(0.5)
    (h2 * Tensor(w)).sum().backward()
    np.testing.assert_allclose(h.detach().numpy(), h2.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)


def test_a_kept_output_also_read_by_a_later_op_is_still_refused():
    x = Tensor([0.5, 1.0], requires_grad=True)
    h = x.exp()
    y = h * x  # the product keeps h's values for x's gradient
    with pytest.raises(RuntimeError, match="whose memory is shared"):
        h[0] = 0.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]) * (1 + np.array([0.5, 1.0])))
