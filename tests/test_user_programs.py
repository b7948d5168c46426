"""Small programs a new user writes, at the points where a derivative is easy to get silently wrong.

Each one was a silent wrong answer once; the oracle tests compare with PyTorch as the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr


def test_power_derivative_in_the_base_is_zero_where_the_exponent_is_zero():
    # d/dx x ** y at x = 0, y = 0 is 0 (x ** 0 is 1 everywhere), not 0 * 0 ** -1 = nan
    x = cr.Tensor(np.array([0.0, 0.0, 2.0]), requires_grad=True)
    y = cr.Tensor(np.array([0.0, 1.0, 0.0]), requires_grad=True)
    (x**y).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    h = cr.hessian(lambda a: np.sum(a ** np.array([0.0, 1.0, 2.0])))(np.zeros(3))
    assert h.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]]
    assert cr.jvp(lambda a: a ** np.zeros(2), (np.zeros(2),), (np.ones(2),))[1].tolist() == [0.0, 0.0]


@pytest.mark.oracle
def test_power_at_zero_matches_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    base, expo = np.array([0.0, 0.0, 0.0, 2.0, -1.5]), np.array([0.0, 1.0, 2.0, 0.0, 2.0])
    x, y = cr.Tensor(base, requires_grad=True), cr.Tensor(expo, requires_grad=True)
    tx, ty = torch.tensor(base, requires_grad=True), torch.tensor(expo, requires_grad=True)
    (x**y).sum().backward()
    (tx**ty).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy())
    np.testing.assert_allclose(y.grad.data, ty.grad.numpy(), equal_nan=True)


def test_autograd_grad_of_an_unused_input_follows_allow_unused():
    x, y = cr.Tensor([1.0], requires_grad=True), cr.Tensor([2.0], requires_grad=True)
    gx, gy = cr.autograd.grad((x * 2).sum(), [x, y], allow_unused=True, retain_graph=True)
    assert gx.tolist() == [2.0] and gy is None  # PyTorch's None
    gx, gy = cr.autograd.grad((x * 2).sum(), [x, y], allow_unused=True, materialize_grads=True)
    assert gy.tolist() == [0.0]
    assert cr.autograd.grad((x * 2).sum(), [x, y])[1].tolist() == [0.0]  # unset: zeros
    with pytest.raises(RuntimeError, match=r"input of shape \(1,\) is not used.*Set allow_unused=True"):
        cr.autograd.grad((x * 2).sum(), [x, y], allow_unused=False)


@pytest.mark.oracle
def test_arctan2_gradient_at_the_origin_is_zero_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    ys, xs = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, -2.0])
    y, x = cr.Tensor(ys, requires_grad=True), cr.Tensor(xs, requires_grad=True)
    ty, tx = torch.tensor(ys, requires_grad=True), torch.tensor(xs, requires_grad=True)
    cr.arctan2(y, x).sum().backward()
    torch.atan2(ty, tx).sum().backward()
    np.testing.assert_array_equal(y.grad.data, ty.grad.numpy())
    np.testing.assert_array_equal(x.grad.data, tx.grad.numpy())
    assert y.grad.tolist()[0] == 0.0 and x.grad.tolist()[0] == 0.0


def test_vmap_names_a_keyword_argument_that_cannot_be_batched():
    scaled = cr.vmap(lambda a, scale=1.0: a * scale)
    with pytest.raises(ValueError, match=r"keyword argument 'scale' has shape \(\), but keyword arguments are always "
                                         r"batched along axis 0.*functools.partial"):
        scaled(np.ones(3), scale=2.0)
    assert scaled(np.ones(3), scale=np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"in_axes 0 is out of range for an argument of shape \(\); use None"):
        cr.vmap(lambda a, b: a)(np.ones(3), 2.0)


def test_item_assignment_in_the_graph_is_pytorchs_and_says_how_to_write_it_out_of_place_when_shared():
    x = cr.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    h[0] = 0.0  # recorded, as in PyTorch
    h.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0]
    h = x * 2
    view = h[1:]  # a view sees the change, as in PyTorch
    h[1] = 0.0
    assert view.tolist() == [0.0, 6.0]
    cut = h.detach()  # shares h's memory outside the graph's views
    with pytest.raises(RuntimeError, match=r"__setitem__: in-place change of a tensor in the graph whose memory is "
                                           r"shared .*h = h.at\[index\].set\(v\), or cr.where\(mask, v, h\)"):
        h[0] = 0.0
    del cut


def test_holomorphic_jacobians_refuse_a_real_output_and_jacobian_takes_holomorphic():
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    for jac in (cr.jacfwd, cr.jacrev):
        with pytest.raises(TypeError, match=r"with holomorphic=True requires a complex output, got dtype float64"):
            jac(np.abs, holomorphic=True)(z)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(cr.jacobian(lambda w: w**2, mode=mode, holomorphic=True)(z), np.diag(2 * z))


def test_autograd_grad_of_a_vector_output_asks_for_grad_outputs():
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"grad: an output has shape \(2,\), not one element; pass grad_outputs="):
        cr.autograd.grad(x * 2, x)
    assert cr.autograd.grad(x * 2, x, grad_outputs=cr.Tensor([1.0, 3.0]))[0].tolist() == [2.0, 6.0]


@pytest.mark.parametrize("pick", [
    lambda x: x.max(dim=0).values, lambda x: x.min(dim=0)[0], lambda x: x.sort(dim=0)[0][0],
    lambda x: x.topk(1)[0].sum(), lambda x: x.median(dim=0)[0], lambda x: x.median(), lambda x: x.kthvalue(1)[0],
    lambda x: x.mode()[0], lambda x: x[x.argsort(descending=True)][0],
], ids=["max_dim", "min_dim", "sort", "topk", "median_dim", "median", "kthvalue", "mode", "argsort_descending"])
def test_jit_never_replays_an_index_chosen_from_other_values(pick):
    # the index these pick was computed from the traced values; a replay on other values must not reuse it
    fn = cr.jit(lambda x: pick(x) * 1)
    first = np.array([1.0, -1.0, 2.0])
    assert float(fn(cr.Tensor(first, requires_grad=True))) == float(pick(cr.Tensor(first)))
    assert float(fn(cr.Tensor(first, requires_grad=True))) == float(pick(cr.Tensor(first)))  # same values: replayed
    other = np.array([3.0, 1.0, -2.0])  # the index differs: traced again (an eager run), never the old index
    assert float(fn(cr.Tensor(other, requires_grad=True))) == float(pick(cr.Tensor(other)))
    assert fn.traces_again == 1


@pytest.mark.oracle
def test_vjp_has_aux_matches_jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    value, pullback, aux = cr.vjp(lambda v: (np.sin(v) * v, {"s": v.sum()}), x[0], has_aux=True)
    jvalue, jpullback, jaux = jax.vjp(lambda v: (jnp.sin(v) * v, {"s": v.sum()}), x[0], has_aux=True)
    np.testing.assert_allclose(value, jvalue)
    np.testing.assert_allclose(pullback(np.array([1.0, -2.0]))[0], jpullback(jnp.array([1.0, -2.0]))[0])
    assert float(aux["s"]) == float(jaux["s"]) == 3.0

    def per_example(v):
        _, pb, a = cr.vjp(lambda y: (np.sin(y) * y, y.sum() * 2), v, has_aux=True)
        return pb(np.ones(2))[0], a

    grads, auxes = cr.vmap(per_example)(x)
    assert isinstance(auxes, np.ndarray) and auxes.tolist() == [6.0, 14.0]
    np.testing.assert_allclose(grads, np.sin(x) + x * np.cos(x))
    with pytest.raises(TypeError, match=r"vjp: with has_aux=True the function must return a pair \(value, aux\)"):
        cr.vjp(lambda v: v, 1.0, has_aux=True)


@pytest.mark.oracle
def test_std_of_equal_entries_has_pytorchs_zero_gradient_to_second_order():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rows = np.array([[2.0, 2.0, 2.0], [1.0, 3.0, 0.5]])
    for correction in (0, 1):
        x = cr.Tensor(rows, requires_grad=True)
        t = torch.tensor(rows, requires_grad=True)
        (g,) = cr.autograd.grad(x.std(dim=1, correction=correction).sum(), x, create_graph=True)
        (tg,) = torch.autograd.grad(t.std(dim=1, correction=correction).sum(), t, create_graph=True)
        np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=1e-12)
        assert g.data[0].tolist() == [0.0, 0.0, 0.0]
        (h,) = cr.autograd.grad((g * g).sum(), x)
        (th,) = torch.autograd.grad((tg * tg).sum(), t)
        np.testing.assert_allclose(h.data, th.numpy(), rtol=1e-10, atol=1e-12)
    assert cr.hessian(np.std)(np.array([3.0, 3.0])).tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.oracle
def test_topk_and_descending_sort_count_nan_as_the_largest_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rows = np.array([[1.0, np.nan, 2.0, np.inf, np.nan], [3.0, 1.0, 3.0, -np.inf, 0.0]])
    x, t = cr.Tensor(rows, requires_grad=True), torch.tensor(rows, requires_grad=True)
    for ours, theirs in [(x.topk(3), t.topk(3)), (x.sort(dim=1, descending=True), t.sort(dim=1, descending=True)),
                         (x.topk(2, largest=False), t.topk(2, largest=False))]:
        np.testing.assert_array_equal(ours[0].data, theirs[0].detach().numpy())
        np.testing.assert_array_equal(ours[1].data, theirs[1].numpy())
    np.testing.assert_array_equal(x.argsort(dim=1, descending=True), t.argsort(dim=1, descending=True).numpy())
    x.topk(2)[0].sum().backward()
    t.topk(2)[0].sum().backward()
    np.testing.assert_array_equal(x.grad.data, t.grad.numpy())


def test_set_grad_enabled_is_a_context_manager_as_in_pytorch():
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    with cr.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad and cr.is_grad_enabled()
    with cr.no_grad(), cr.set_grad_enabled(True):
        assert (x * 2).requires_grad
    previous = cr.set_grad_enabled(False)  # the function form switches at once
    assert not cr.is_grad_enabled() and bool(previous) is True
    cr.set_grad_enabled(previous)
    assert cr.is_grad_enabled()


@pytest.mark.oracle
def test_backward_with_inputs_writes_only_their_grad_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    a, b = cr.Tensor([1.0, 2.0], requires_grad=True), cr.Tensor([3.0], requires_grad=True)
    ta, tb = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0], requires_grad=True)
    h, th = a * b, ta * tb
    y, ty = (h**2).sum(), (th**2).sum()
    for inputs, tinputs in [([a], [ta]), (b, tb), ([h], [th])]:
        y.backward(inputs=inputs, retain_graph=True)
        ty.backward(inputs=tinputs, retain_graph=True)
    assert a.grad.tolist() == ta.grad.tolist() == [18.0, 36.0]
    assert b.grad.tolist() == tb.grad.tolist() == [30.0]
    assert h.grad.tolist() == th.grad.tolist() == [6.0, 12.0]
    with pytest.raises(RuntimeError, match="cannot be empty"):  # (PyTorch raises RuntimeError too)
        y.backward(inputs=[])
    with pytest.raises(TypeError, match="backward: inputs must be a Tensor or a non-empty sequence of Tensors"):
        y.backward(inputs=[1.0])


@pytest.mark.oracle
def test_a_0d_tensor_has_one_entry_along_dim_0_or_minus_1_as_in_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    programs = [
        lambda x: x.sum(dim=-1), lambda x: x.mean(dim=0, keepdim=True), lambda x: x.amax(dim=-1),
        lambda x: x.max(dim=0)[0], lambda x: x.min(dim=-1, keepdim=True).values, lambda x: x.prod(dim=-1),
        lambda x: x.var(dim=0, correction=0), lambda x: x.logsumexp(dim=-1), lambda x: x.softmax(dim=-1),
        lambda x: x.log_softmax(dim=0), lambda x: x.cumsum(dim=0), lambda x: x.cumprod(dim=-1),
        lambda x: x.sort(dim=-1)[0], lambda x: x.norm(dim=-1), lambda x: x.squeeze(0) * 2,
    ]
    for program in programs:
        x = cr.Tensor(np.array(-1.5), requires_grad=True)
        t = torch.tensor(-1.5, dtype=torch.float64, requires_grad=True)
        y, ty = program(x), program(t)
        assert y.shape == tuple(ty.shape) == ()
        (y * 3).sum().backward()
        (ty * 3).sum().backward()
        assert (float(y), float(x.grad)) == (ty.item(), float(t.grad))
    x = cr.Tensor(np.array(2.0))
    assert x.max(dim=0).indices.shape == () and int(x.max(dim=-1).indices) == 0
    with pytest.raises(IndexError, match=r"sum: dim 1 is out of range for a 0-d Tensor \(expected -1 or 0\)"):
        x.sum(dim=1)
    with pytest.raises(IndexError, match=r"softmax: dim 2 is out of range for a 0-d Tensor \(expected -1 or 0\)"):
        x.softmax(dim=2)


@pytest.mark.oracle
def test_nan_entries_take_the_gradient_of_max_and_none_of_abs_as_in_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    values = np.array([[np.nan, -2.0], [0.0, 3.0]])
    for program in (lambda x: x.abs().sum(), lambda x: x.max(), lambda x: x.min(), lambda x: x.max(dim=1)[0].sum()):
        x, t = cr.Tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
        program(x).backward()
        program(t).backward()
        np.testing.assert_array_equal(x.grad.data, t.grad.numpy())
    assert cr.grad(np.max)(values).tolist() == [[1.0, 0.0], [0.0, 0.0]]  # not NaN for every entry
    assert cr.jvp(np.abs, (values,), (np.ones((2, 2)),))[1].tolist() == [[0.0, -1.0], [0.0, 1.0]]


@pytest.mark.oracle
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_class_weighted_cross_entropy_and_nll_match_pytorch_to_second_order(reduction, smoothing):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rng = np.random.default_rng(3)
    logits, weight = rng.normal(size=(5, 4)), np.array([1.0, 2.0, 0.5, 3.0])
    probs = rng.dirichlet(np.ones(4), size=5)
    for target in (np.array([0, -100, 1, 3, 3]), probs):
        x, t = cr.Tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        y = cr.nn.functional.cross_entropy(x, target, weight=weight, reduction=reduction, label_smoothing=smoothing)
        ty = torch.nn.functional.cross_entropy(t, torch.tensor(target), weight=torch.tensor(weight),
                                               reduction=reduction, label_smoothing=smoothing)
        np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-12)
        (g,) = cr.autograd.grad((y**2).sum(), x, create_graph=True)
        (tg,) = torch.autograd.grad((ty**2).sum(), t, create_graph=True)
        np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=1e-10, atol=1e-14)
        (h,) = cr.autograd.grad((g * g).sum(), x)
        (th,) = torch.autograd.grad((tg * tg).sum(), t)
        np.testing.assert_allclose(h.data, th.numpy(), rtol=1e-10, atol=1e-14)
    target = np.array([0, -100, 1, 3, 3])
    y = cr.nn.functional.nll_loss(cr.log_softmax(logits, axis=1), target, weight=weight, reduction=reduction)
    ty = torch.nn.functional.nll_loss(torch.log_softmax(torch.tensor(logits), 1), torch.tensor(target),
                                      weight=torch.tensor(weight), reduction=reduction)
    np.testing.assert_allclose(y.data, ty.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"cross_entropy: weight must have one entry per class, shape \(4,\), got \(3"):
        cr.nn.functional.cross_entropy(logits, target, weight=weight[:3])


@pytest.mark.oracle
@pytest.mark.parametrize("program", [
    lambda x, a: x.atan() + x.asinh() + x.sgn() * x + x.exp2() + x.deg2rad() + x.frac(),
    lambda x, a: (x * x + 0.5).log2() + x.sigmoid().logit() + x.sigmoid().acos() + x.fmax(x.flip(0)),
    lambda x, a: x.logaddexp(x.T.reshape(3, 4)) + x.copysign(-x) + x.clamp_min(0.1) + x.clamp_max(-0.1),
    lambda x, a: x.diff(dim=0).sum() + x.dist(x.flip(1)) + x.cummax(dim=1).values + x.cummin(0)[0],
    lambda x, a: x.logcumsumexp(1) + x.index_add(1, a([3, 3, 0, 1]), x * x, alpha=2.0),
    lambda x, a: x.index_fill(0, a([1]), -1.0) * x + x.nansum(dim=1, keepdim=True) + x.aminmax(dim=0).max,
    lambda x, a: (x[:, :3] @ x[:, :3].T + a(3 * np.eye(3))).logdet() + x[:, 1:].inverse().sum() + x.rot90().sum(),
    lambda x, a: (x.diag_embed(1) * x.diag_embed(1)).sum() * x,
], ids=["unary", "unary_domain", "binary", "dim", "running", "index", "linalg", "diag_embed"])
def test_pytorch_method_names_give_pytorchs_numbers_to_second_order(program):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    values = np.random.default_rng(5).normal(size=(3, 4))
    values[1, 2] = values[1, 1]  # a tie for cummax/cummin
    x, t = cr.Tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    y, ty = program(x, lambda v: cr.Tensor(np.asarray(v))), program(t, lambda v: torch.tensor(np.asarray(v)))
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-12)
    w = np.random.default_rng(6).normal(size=ty.shape)
    (g,) = cr.autograd.grad((y * w).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad((ty * torch.tensor(w)).sum(), t, create_graph=True)
    np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    (h,) = cr.autograd.grad((g * g).sum(), x)
    (th,) = torch.autograd.grad((tg * tg).sum(), t)
    np.testing.assert_allclose(h.data, th.numpy(), rtol=1e-9, atol=1e-11)
    indices = x.cummax(dim=1).indices.tolist(), x.cummin(dim=1).indices.tolist()
    assert indices == (t.cummax(dim=1).indices.tolist(), t.cummin(dim=1).indices.tolist())


def test_stack_and_concatenate_take_pytorchs_dim_and_torch_cat_is_concatenate():
    x = cr.Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    (cr.stack([x, 2 * x], dim=1).sum(axis=1) * cr.concatenate([x, x], dim=1)[:, :3]).sum().backward()
    assert cr.stack([x, x], dim=-1).shape == (2, 3, 2) and x.grad.tolist() == [[0.0, 6.0, 12.0], [18.0, 24.0, 30.0]]
    with pytest.raises(TypeError, match=r"stack: got both axis=1 and dim=0; pass one"):
        cr.stack([x, x], axis=1, dim=0)
    np.testing.assert_array_equal(cr.cat([x, x], dim=1).data, cr.concatenate([x, x], axis=1).data)
    assert cr.func.functional_call is not None and cr.func.vmap is not None  # torch.func's names


@pytest.mark.oracle
def test_pytorchs_in_place_methods_work_under_no_grad_and_are_recorded_in_the_graph():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    calls = [("relu_", ()), ("sigmoid_", ()), ("clamp_min_", (0.5,)), ("lerp_", ([1.0, 1.0, 1.0], 0.25)),
             ("masked_fill_", ([True, False, True], 9.0)), ("index_fill_", (0, [1], -1.0)), ("round_", ())]
    for name, args in calls:
        x = cr.Tensor([-1.0, 0.25, 2.0], requires_grad=True)
        t = torch.tensor([-1.0, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
        with cr.no_grad(), torch.no_grad():
            assert getattr(x, name)(*(np.array(a) if isinstance(a, list) else a for a in args)) is x
            getattr(t, name)(*(torch.tensor(np.array(a)) if isinstance(a, list) else a for a in args))
        np.testing.assert_array_equal(x.data, t.detach().numpy())
    leaf = cr.Tensor([1.0, -2.0], requires_grad=True)
    h = leaf * 1
    h.relu_()  # recorded, as in PyTorch
    h.sum().backward()
    assert leaf.grad.tolist() == [1.0, 0.0]
    x, w = cr.Tensor([1.0, -2.0], requires_grad=True), cr.Tensor([3.0, -4.0])
    y = (x * w).sum()
    w.relu_()  # w was saved by the product: backward must see the change
    with pytest.raises(RuntimeError, match="was modified in place after it was used"):
        y.backward()


@pytest.mark.oracle
def test_pytorch_layer_arguments_embedding_padding_idx_softmax_dim_and_positional_weight():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    emb, t_emb = cr.nn.Embedding(6, 3, 2, dtype=np.float64), torch.nn.Embedding(6, 3, padding_idx=2).double()
    assert emb.weight.data[2].tolist() == [0.0, 0.0, 0.0]
    emb.load_state_dict({"weight": t_emb.weight.detach().numpy()})
    rows = np.array([[0, 2, 2], [5, 1, 2]])
    w = np.random.default_rng(0).normal(size=(2, 3, 3))
    (emb(rows) * w).sum().backward()
    (t_emb(torch.tensor(rows)) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.data, t_emb.weight.grad.numpy())  # row 2 gets nothing
    assert emb.weight.grad.data[2].tolist() == [0.0, 0.0, 0.0]
    x = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    np.testing.assert_allclose(cr.nn.Softmax(dim=0)(cr.Tensor(x)).data, torch.nn.Softmax(dim=0)(torch.tensor(x)))
    assert repr(cr.nn.ReLU(inplace=True)) == "ReLU()" and cr.nn.Dropout(0.1, inplace=False).p == 0.1
    weight, target = np.array([1.0, 2.0, 3.0]), np.array([2, 0])
    tx, tt, tw = torch.tensor(x), torch.tensor(target), torch.tensor(weight)
    for ours, theirs in [(cr.nn.functional.cross_entropy(x, target, weight),  # torch's third positional argument
                          torch.nn.functional.cross_entropy(tx, tt, tw)),
                         (cr.nn.functional.nll_loss(cr.log_softmax(x, axis=1), target, weight),
                          torch.nn.functional.nll_loss(torch.log_softmax(tx, 1), tt, tw))]:
        assert float(ours) == pytest.approx(float(theirs), rel=1e-14)


@pytest.mark.oracle
def test_sdpa_with_a_fully_masked_row_gives_zeros_as_pytorch():  # (fixed on main in ops/attention)
    torch = pytest.importorskip("torch", reason="torch is not installed")
    q = np.random.default_rng(0).normal(size=(1, 3, 4))
    mask = np.ones((3, 3), dtype=bool)
    mask[1] = False
    x, t = cr.Tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
    y = cr.nn.functional.scaled_dot_product_attention(x, x, x, attn_mask=mask)
    ty = torch.nn.functional.scaled_dot_product_attention(t, t, t, attn_mask=torch.tensor(mask))
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-14, atol=1e-16)
    assert y.data[0, 1].tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.oracle
def test_custom_vjp_under_vmap_matches_jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def rules(lib, clip):
        return (lambda v: (lib.sin(v) * v, (lib.cos(v), v)),
                lambda res, g: (clip(g * (res[0] * res[1] + lib.sin(res[1])), -0.5, 0.5),))

    @cr.custom_vjp
    def f(v):
        return np.sin(v) * v

    @jax.custom_vjp
    def fj(v):
        return jnp.sin(v) * v

    f.defvjp(*rules(np, np.clip))
    fj.defvjp(*rules(jnp, jnp.clip))
    xs = np.array([[0.1, 1.0, 2.0], [0.2, 2.0, 4.0]])
    out = cr.vmap(f)(xs)  # was a leaked batched value, not an array
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, jax.vmap(fj)(xs), rtol=1e-14)
    np.testing.assert_allclose(cr.vmap(cr.grad(lambda v: np.sum(f(v))))(xs),
                               jax.vmap(jax.grad(lambda v: jnp.sum(fj(v))))(xs), rtol=1e-14)
    np.testing.assert_allclose(cr.grad(lambda m: np.sum(cr.vmap(f)(m) * 2))(xs),
                               jax.grad(lambda m: jnp.sum(jax.vmap(fj)(m) * 2))(xs), rtol=1e-14)


@pytest.mark.oracle
def test_max_and_min_with_dim_work_under_vmap_as_jax_max():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    xs = np.random.default_rng(0).normal(size=(3, 2, 4))
    assert cr.vmap(lambda a: a.max(dim=1).indices)(xs).tolist() == xs.argmax(axis=2).tolist()
    np.testing.assert_allclose(cr.vmap(cr.grad(lambda a: (a.max(dim=1)[0] ** 2).sum()))(xs),
                               jax.vmap(jax.grad(lambda a: (jnp.max(a, axis=1) ** 2).sum()))(xs), rtol=1e-14)
    x0, tangents = xs[0], xs[1:]
    f = lambda a: (a.min(dim=0, keepdim=True).values ** 3).sum()  # noqa: E731
    fj = lambda a: (jnp.min(a, axis=0, keepdims=True) ** 3).sum()  # noqa: E731
    np.testing.assert_allclose(cr.vmap(lambda t: cr.jvp(cr.grad(f), (x0,), (t,))[1])(tangents),
                               jax.vmap(lambda t: jax.jvp(jax.grad(fj), (x0,), (t,))[1])(tangents), rtol=1e-14)


@pytest.mark.oracle
@pytest.mark.parametrize("loss", [
    lambda F, W, x, y: F.cross_entropy(x, y), lambda F, W, x, y: F.cross_entropy(x[None], y[None], W),
    lambda F, W, x, y: F.cross_entropy(x, y, label_smoothing=0.2), lambda F, W, x, y: F.mse_loss(x.tanh(), x * 0.5),
    lambda F, W, x, y: F.binary_cross_entropy_with_logits(x, x.sigmoid() * 0.5),
    lambda F, W, x, y: F.huber_loss(x, x * x), lambda F, W, x, y: F.elu(x).sum() + F.hardtanh(x * 2).sum(),
], ids=["cross_entropy", "cross_entropy_weighted_rows", "label_smoothing", "mse", "bce_logits", "huber", "activations"])
def test_per_example_gradients_of_losses_under_vmap_match_torch_func(loss):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rng = np.random.default_rng(0)
    xs, ys, weight = rng.normal(size=(5, 4)), rng.integers(0, 4, 5), np.array([1.0, 2.0, 0.5, 1.5])
    ours = cr.vmap(cr.grad(lambda x, y: loss(cr.nn.functional, weight, x, y)))(xs, ys)  # ConcreteValueError before
    theirs = torch.func.vmap(torch.func.grad(lambda x, y: loss(torch.nn.functional, torch.tensor(weight), x, y)))(
        torch.tensor(xs), torch.tensor(ys))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.oracle
def test_index_put_and_fill_diagonal_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x, t = cr.Tensor(np.zeros((2, 3)), requires_grad=True), torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    v = cr.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    tv = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    rows, cols = np.array([0, 1, 1]), np.array([0, 2, 2])
    y = x.index_put((rows, cols), v, accumulate=True)
    ty = t.index_put((torch.tensor(rows), torch.tensor(cols)), tv, accumulate=True)
    w = np.arange(6.0).reshape(2, 3)
    (y * w).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(y.data, ty.detach().numpy())
    np.testing.assert_array_equal(v.grad.data, tv.grad.numpy())
    with pytest.raises(ValueError, match="index_put: indices name some positions more than once"):
        x.index_put((rows, cols), v)
    a, ta = cr.Tensor(np.ones((3, 3))), torch.ones(3, 3, dtype=torch.float64)
    a.fill_diagonal_(5.0)
    ta.fill_diagonal_(5.0)
    a.index_put_((np.array([2]), np.array([0])), cr.Tensor([7.0]))
    ta.index_put_((torch.tensor([2]), torch.tensor([0])), torch.tensor([7.0], dtype=torch.float64))
    np.testing.assert_array_equal(a.data, ta.numpy())


@pytest.mark.oracle
def test_autograd_backward_and_grads_batched_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x, t = cr.Tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = cr.autograd.grad(x**3, x, grad_outputs=cr.Tensor(np.eye(2)), is_grads_batched=True, create_graph=True)
    (tg,) = torch.autograd.grad(t**3, t, grad_outputs=torch.eye(2, dtype=torch.float64), is_grads_batched=True,
                                create_graph=True)
    np.testing.assert_array_equal(g.data, tg.detach().numpy())  # the rows of the Jacobian
    g.sum().backward()
    tg.sum().backward()
    np.testing.assert_array_equal(x.grad.data, t.grad.numpy())
    x.grad, t.grad = None, None
    cr.autograd.backward([(x * x).sum(), x * 3], [None, cr.Tensor([1.0, 2.0])])  # None for a one-element root
    torch.autograd.backward([(t * t).sum(), t * 3], [None, torch.tensor([1.0, 2.0], dtype=torch.float64)])
    np.testing.assert_array_equal(x.grad.data, t.grad.numpy())
    w = cr.Tensor([2.0], requires_grad=True)
    cr.autograd.backward((x * w).sum(), inputs=[w])
    assert w.grad.tolist() == [3.0] and x.grad.tolist() == [5.0, 10.0]  # x.grad untouched


@pytest.mark.oracle
def test_nn_utils_has_pytorchs_clipping_and_parameter_vectors():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    p = cr.nn.Parameter(np.array([3.0, 4.0]), dtype=np.float64)
    tp = torch.nn.Parameter(torch.tensor([3.0, 4.0], dtype=torch.float64))
    (p * p).sum().backward()
    (tp * tp).sum().backward()
    assert cr.nn.utils.clip_grad_norm_([p], 1.0) == pytest.approx(float(torch.nn.utils.clip_grad_norm_([tp], 1.0)))
    np.testing.assert_allclose(p.grad.data, tp.grad.numpy(), rtol=1e-15)
    layer = cr.nn.Linear(3, 2, dtype=np.float64)
    vector = cr.nn.utils.parameters_to_vector(layer.parameters())
    assert vector.shape == (8,) and vector.requires_grad
    cr.nn.utils.vector_to_parameters(np.arange(8.0), layer.parameters())
    assert layer.weight.data.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and layer.bias.data.tolist() == [6.0, 7.0]


@pytest.mark.oracle
def test_logaddexp_with_an_infinite_argument_and_p_norms_at_zero_entries_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    xs, ys = np.array([np.inf, 1.0, -np.inf]), np.array([2.0, 1.0, 0.5])
    x, y = cr.Tensor(xs, requires_grad=True), cr.Tensor(ys, requires_grad=True)
    tx, ty = torch.tensor(xs, requires_grad=True), torch.tensor(ys, requires_grad=True)
    cr.logaddexp(x, y).sum().backward()
    torch.logaddexp(tx, ty).sum().backward()
    np.testing.assert_array_equal(x.grad.data, tx.grad.numpy())  # 1 for +inf, not exp(inf - inf) = NaN
    np.testing.assert_array_equal(y.grad.data, ty.grad.numpy())
    rows = np.array([[0.0, 0.0, 3.0, -2.0], [1.0, 5.0, 0.0, 2.0]])
    for p in (0.5, 1.5, 3.0):
        a, t = cr.Tensor(rows, requires_grad=True), torch.tensor(rows, requires_grad=True)
        a.norm(p=p, dim=1).sum().backward()
        t.norm(p=p, dim=1).sum().backward()
        np.testing.assert_allclose(a.grad.data, t.grad.numpy(), rtol=1e-13)  # 0 at the zeros, not NaN


@pytest.mark.oracle
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_interpolations_match_pytorch(interpolation):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rows = np.array([[1.0, 5.0, 2.0, 2.0, -1.0], [0.0, 0.0, 3.0, -2.0, 4.0]])
    qs = np.array([0.0, 0.125, 0.3, 0.5, 0.625, 1.0])
    x, t = cr.Tensor(rows, requires_grad=True), torch.tensor(rows, requires_grad=True)
    y = x.quantile(qs, dim=1, interpolation=interpolation)
    ty = t.quantile(torch.tensor(qs), dim=1, interpolation=interpolation)
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-14)
    w = np.random.default_rng(0).normal(size=ty.shape)
    (y * w).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-14)


@pytest.mark.oracle
def test_module_forward_hooks_and_lookups_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    torch.manual_seed(0)
    t_model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1)).double()
    model = cr.nn.Sequential(cr.nn.Linear(2, 3), cr.nn.ReLU(), cr.nn.Linear(3, 1)).double()
    model.load_state_dict({k: v.detach().numpy() for k, v in t_model.state_dict().items()})
    seen, t_seen = [], []
    handles = [model[1].register_forward_hook(lambda m, args, out: seen.append(out.data.copy())),
               model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,)),
               model[2].register_forward_hook(lambda m, args, out: out + 1.0)]
    t_handles = [t_model[1].register_forward_hook(lambda m, args, out: t_seen.append(out.detach().numpy().copy())),
                 t_model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,)),
                 t_model[2].register_forward_hook(lambda m, args, out: out + 1.0)]
    x = np.random.default_rng(0).normal(size=(4, 2))
    np.testing.assert_allclose(model(x).data, t_model(torch.tensor(x)).detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(seen[0], t_seen[0], rtol=1e-14)
    for h in handles + t_handles:
        h.remove()
    np.testing.assert_allclose(model(x).data, t_model(torch.tensor(x)).detach().numpy(), rtol=1e-14)
    assert len(seen) == 1 and model.get_parameter("2.bias") is model[2].bias and model.get_submodule("0") is model[0]


@pytest.mark.oracle
def test_jacrev_jacfwd_hessian_and_jvp_take_has_aux_as_jax():
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'jax[cpu]'; the dev extra has it)")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x = np.array([0.3, -1.2, 2.0])

    def same(ours, theirs):
        leaves, their_leaves = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
        assert len(leaves) == len(their_leaves)
        for a, b in zip(leaves, their_leaves, strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13)

    f = lambda v: (np.sin(v) * v.sum(), {"n": np.sum(v**2)})  # noqa: E731
    fj = lambda v: (jnp.sin(v) * v.sum(), {"n": jnp.sum(v**2)})  # noqa: E731
    same(cr.jacrev(f, has_aux=True)(x), jax.jacrev(fj, has_aux=True)(x))
    same(cr.jacfwd(f, has_aux=True)(x), jax.jacfwd(fj, has_aux=True)(x))
    same(cr.jvp(f, (x,), (np.ones(3),), has_aux=True), jax.jvp(fj, (x,), (jnp.ones(3),), has_aux=True))
    same(cr.hessian(lambda v: (np.sum(np.sin(v) ** 3), v * 2), has_aux=True)(x),
         jax.hessian(lambda v: (jnp.sum(jnp.sin(v) ** 3), v * 2), has_aux=True)(x))
    xs = np.stack([x, 2 * x])
    same(cr.vmap(cr.jacrev(f, has_aux=True))(xs), jax.vmap(jax.jacrev(fj, has_aux=True))(xs))
    with pytest.raises(TypeError, match=r"jacrev: with has_aux=True the function must return a pair \(output, aux\)"):
        cr.jacrev(lambda v: v, has_aux=True)(x)


@pytest.mark.oracle
def test_fmax_and_fmin_give_a_tie_to_the_first_argument_as_pytorch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    a = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [0.0, -1.0, np.nan, -1.0]])
    b = np.array([[1.0, np.nan, 3.0, 5.0], [2.0, 1.0, 3.0, np.nan], [0.0, -1.0, np.nan, 0.0]])
    w = np.arange(1.0, 13.0).reshape(3, 4)
    for name in ("fmax", "fmin"):
        x, y = cr.Tensor(a, requires_grad=True), cr.Tensor(b, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        out = getattr(cr, name)(x, y) + getattr(x, name)(x.flip(1))
        tout = getattr(torch, name)(tx, ty) + getattr(tx, name)(tx.flip(1))
        np.testing.assert_array_equal(out.data, tout.detach().numpy())
        (out * cr.Tensor(w)).nansum().backward()
        (tout * torch.tensor(w)).nansum().backward()
        np.testing.assert_array_equal(x.grad.data, tx.grad.numpy())  # (was half of it at each tie)
        np.testing.assert_array_equal(y.grad.data, ty.grad.numpy())


@pytest.mark.oracle
def test_backward_and_autograd_grad_take_pytorchs_positional_order():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x, tx = cr.Tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y, ty = x.exp().sum(), tx.exp().sum()
    y.backward(None, True)  # retain_graph=True positionally (was read as create_graph)
    ty.backward(None, True)
    assert not x.grad.requires_grad
    y.backward()
    ty.backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-12)
    (g,) = cr.autograd.grad((x**3).sum(), x, None, True, True)  # retain_graph, create_graph
    (tg,) = torch.autograd.grad((tx**3).sum(), tx, None, True, True)
    np.testing.assert_allclose(cr.autograd.grad(g.sum(), x)[0].data, torch.autograd.grad(tg.sum(), tx)[0].numpy())


def test_torch_max_of_a_tensor_along_a_dim_is_pytorchs_values_and_indices_pair():
    # `_, predicted = torch.max(outputs, 1)`: NumPy's reading would unpack a batch of two into two max values
    outputs = cr.Tensor([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1]])
    _, predicted = cr.max(outputs, 1)
    assert predicted.tolist() == [1, 0]
    values, indices = cr.min(outputs, dim=0)
    assert values.tolist() == [0.1, 0.1, 0.0] and indices.tolist() == [0, 1, 0]
    assert cr.max(outputs, axis=1).tolist() == [0.9, 0.8]  # NumPy's keyword keeps NumPy's meaning
    assert cr.max(outputs, cr.Tensor([0.5, 0.5, 0.5])).tolist() == [[0.5, 0.9, 0.5], [0.8, 0.5, 0.5]]
    assert cr.max(np.array([[1.0, 2.0], [4.0, 3.0]]), 1).tolist() == [2.0, 4.0]
    # under a transform given NumPy values the function is NumPy's, as jax.numpy.max
    assert cr.grad(lambda x: cr.sum(cr.max(x, 1)))(np.array([[1.0, 2.0], [3.0, 0.0]])).tolist() == [[0, 1], [1, 0]]


def test_pytorch_tutorial_spellings_linspace_flatten_grad_fn_and_save_load(tmp_path):
    x = cr.linspace(-1, 1, 5)  # torch.linspace: a Tensor in the default dtype, so the methods work
    assert isinstance(x, cr.Tensor) and x.dtype == np.float32 and x.unsqueeze(-1).shape == (5, 1)
    assert cr.linspace(0.0, 1.0, num=3, endpoint=False).tolist() == [0.0, 1 / 3, 2 / 3]  # NumPy's keywords
    b = cr.Tensor(2.0, requires_grad=True)
    cr.linspace(0.0, b, 5).sum().backward()
    assert b.grad.item() == 2.5
    assert cr.flatten(cr.zeros(2, 3, 4, 5), 1).shape == (2, 60)  # torch.flatten(x, start_dim)
    assert cr.flatten(cr.zeros(2, 3, 4, 5), 1, 2).shape == (2, 12, 5)
    assert cr.flatten(cr.zeros(2, 3)).shape == (6,)
    w = cr.Tensor([1.0, 2.0], requires_grad=True)
    loss = ((w * 3) ** 2).mean()
    assert loss.grad_fn.name() == "mean" and loss.grad_fn.next_functions[0][0].name() == loss.parents[0].op
    assert (w * 3).grad_fn.next_functions == ((None, 0),)  # a leaf: PyTorch's AccumulateGrad
    net = cr.nn.Linear(2, 1)
    cr.save(net.state_dict(), tmp_path / "net.pth")
    other = cr.nn.Linear(2, 1)
    other.load_state_dict(cr.load(tmp_path / "net.pth", weights_only=True, map_location="cpu"))
    assert other.weight.tolist() == net.weight.tolist() and other.bias.tolist() == net.bias.tolist()


def test_jit_on_numpy_arguments_returns_arrays_and_replays_with_new_values_as_jax():
    import chainrule.numpy as cnp

    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * cnp.where(x > 0, x, alpha * cnp.exp(x) - alpha)

    fast = cr.jit(selu)
    x = np.array([-1.0, 0.5, 2.0])
    for values in (x, x + 1.0, -x):  # traced, then replayed with other values
        out = fast(values)
        assert type(out) is np.ndarray and np.allclose(out, selu(values))
    assert fast.source  # the second and third calls were replays
    square = cr.jit(lambda v: v * v)
    assert square(3.0) == 9.0 and square(4.0) == 16.0  # a float argument is traced, as JAX's


def test_jit_of_a_transform_on_numpy_arguments_runs_it_as_it_is_with_a_warning():
    import chainrule.numpy as cnp

    def sum_logistic(x):
        return cnp.sum(1.0 / (1.0 + cnp.exp(-x)))

    x = np.arange(3.0)
    with pytest.warns(UserWarning, match="runs the function as it is"):
        h = cr.jit(cr.jacfwd(cr.jacrev(sum_logistic)))(x)  # JAX quickstart's hessian
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(h, np.diag(s * (1 - s) * (1 - 2 * s)), atol=1e-12)


def test_jit_of_grad_of_a_custom_jvp_function_differentiates_and_runs_under_vmap():
    # functools.update_wrapper copied the custom_jvp's `fn` (the undifferentiated function) over jit's own
    import chainrule.numpy as cnp

    @cr.custom_jvp
    def log1pexp(x):
        return cnp.log(1.0 + cnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return log1pexp(x), (1 - 1 / (1 + cnp.exp(x))) * x_dot

    sigmoid = 1 / (1 + np.exp(-np.arange(3.0)))
    np.testing.assert_allclose(cr.vmap(cr.jit(cr.grad(log1pexp)))(np.arange(3.0)), sigmoid)  # JAX's vmap(jit(...))
    with pytest.warns(UserWarning, match="keeps per-call state"):  # a replay cannot hold the rule: runs as it is
        np.testing.assert_allclose(cr.jit(cr.grad(log1pexp))(2.0), sigmoid[2])
    assert cr.jvp(cr.jit(cr.sin), (0.5,), (1.0,))[1] == np.cos(0.5)  # jvp(jit(f)) runs f as it is


@pytest.mark.oracle
def test_top_level_functions_take_pytorchs_dim_and_keepdim_as_torch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    v = np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5]])
    x, tx = cr.Tensor(v), torch.tensor(v)
    for name in ("sum", "mean", "std", "var", "argmax", "softmax", "log_softmax", "logsumexp", "cumsum"):
        ours, theirs = getattr(cr, name)(x, dim=1), getattr(torch, name)(tx, dim=1)
        np.testing.assert_allclose(np.asarray(getattr(ours, "data", ours)), theirs.numpy(), err_msg=name)
    assert cr.sum(x, dim=0, keepdim=True).shape == (1, 3)
    assert cr.sum(v, dim=0).tolist() == [4.0, 1.0, 4.5]  # NumPy values: dim is axis
    assert cr.std(x, axis=1).tolist() == np.std(v, axis=1).tolist()  # NumPy's keywords keep NumPy's meaning
    with pytest.raises(TypeError, match="sum: got both axis= and dim="):
        cr.sum(v, axis=0, dim=0)


def test_a_dataloader_over_tensors_gives_tensor_batches_as_pytorch():
    from chainrule.data import DataLoader, TensorDataset

    x, y = cr.tensor(np.arange(12.0).reshape(3, 4)), cr.tensor(np.array([0, 1, 2]))
    xb, yb = next(iter(DataLoader(TensorDataset(x, y), batch_size=2)))
    assert isinstance(xb, cr.Tensor) and xb.view(-1, 2, 2).shape == (2, 2, 2) and yb.tolist() == [0, 1]
    xs, _ = next(iter(DataLoader(TensorDataset(x, y), batch_size=2, collate_fn=None, shuffle=True)))
    assert isinstance(xs, cr.Tensor)
    plain, _ = next(iter(DataLoader(TensorDataset(x.numpy(), y.numpy()), batch_size=2)))
    assert type(plain) is cr.Tensor  # arrays in, Tensors out, as torch's default_collate (issue 23)

    class Squares(cr.data.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return cr.tensor([float(i) ** 2])

    assert isinstance(next(iter(DataLoader(Squares(), batch_size=3))), cr.Tensor)


@pytest.mark.oracle
def test_torch_std_and_var_of_a_tensor_are_unbiased_as_pytorch_and_numpys_keywords_keep_numpys():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    v = np.array([[1.0, 2.0, 4.0], [0.5, -3.0, 2.0]])
    x, tx = cr.Tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    (cr.std(x) + cr.var(x, 1).sum()).backward()
    (torch.std(tx) + torch.var(tx, 1).sum()).backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy())
    assert cr.std(x, ddof=0).item() == pytest.approx(np.std(v))  # NumPy's keyword: NumPy's meaning
    assert np.std(x).item() == pytest.approx(np.std(v))  # NumPy's own function stays NumPy's
    assert cr.grad(lambda a: cr.var(a))(v) == pytest.approx(2 * (v - v.mean()) / v.size)  # JAX's jnp.var


def test_torch_tensor_of_python_floats_takes_the_default_dtype_and_fits_a_layer():
    layer = cr.nn.Linear(2, 1)
    assert layer(cr.tensor([[1.0, 2.0]])).dtype == np.float32  # was float64: the layer refused it
    assert cr.tensor([1.0, 2.0]).dtype == np.float32 and cr.tensor(0.5, requires_grad=True).dtype == np.float32
    assert cr.tensor([1, 2]).dtype == np.int64 and cr.tensor(np.array([1.0])).dtype == np.float64
    assert cr.tensor([1.0], dtype=np.float64).dtype == np.float64


def test_argmax_with_pytorchs_dim_is_an_int64_tensor_with_tensor_methods():
    out, target = cr.Tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), cr.tensor([1, 1, 1])
    pred = out.argmax(dim=1, keepdim=True)  # the MNIST example: pred.eq(target.view_as(pred)).sum().item()
    assert isinstance(pred, cr.Tensor) and pred.dtype == np.int64
    assert pred.eq(target.view_as(pred)).sum().item() == 2
    assert cr.argmax(out, dim=1).float().mean().item() == pytest.approx(2 / 3)
    assert cr.grad(lambda a: a[a.argmax()])(np.array([1.0, 3.0])).tolist() == [0.0, 1.0]  # NumPy's under a transform


def test_torch_style_gradcheck_takes_a_tuple_of_inputs_and_a_custom_function():
    class MyExp(cr.autograd.Function):
        @staticmethod
        def forward(ctx, i, scale):
            result = i.exp() * scale
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result, None

    x = cr.tensor([0.1, 0.2], requires_grad=True).double()
    assert cr.autograd.gradcheck(lambda t: MyExp.apply(t, 3.0), (x,))
    assert cr.autograd.gradgradcheck(lambda t: (t.sin() * t).sum(), x)

    class WrongExp(MyExp):
        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2.0, None

    assert not cr.autograd.gradcheck(lambda t: WrongExp.apply(t, 3.0), (x,), raise_exception=False)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):  # as PyTorch
        cr.autograd.gradcheck(lambda t: t.sum(), (cr.tensor([1.0], requires_grad=True),), atol=1e-2)


def test_autograd_function_with_a_variable_number_of_inputs():
    class Scaled(cr.autograd.Function):  # forward(ctx, scale, *tensors): called with 1, then 2 Tensors
        @staticmethod
        def forward(ctx, scale, *xs):
            ctx.scale = scale
            return xs[0] * scale if len(xs) == 1 else tuple(x * scale for x in xs)

        @staticmethod
        def backward(ctx, *grads):
            return (None, *(g * ctx.scale for g in grads))

    a, b = cr.tensor([1.0], requires_grad=True), cr.tensor([2.0], requires_grad=True)
    Scaled.apply(3.0, a).sum().backward()
    u, v = Scaled.apply(2.0, a, b)
    (u + v).sum().backward()
    assert a.grad.tolist() == [5.0] and b.grad.tolist() == [2.0]


def test_module_parameters_is_an_iterator_with_a_length():
    model = cr.nn.Sequential(cr.nn.Linear(2, 3), cr.nn.ReLU(), cr.nn.Linear(3, 1))
    params = model.parameters()
    assert len(params) == 4 and next(params).shape == (3, 2)  # micrograd's len(), PyTorch's next()
    assert len(list(params)) == 3 and list(params) == []  # used up, as a generator
    assert sum(p.numel() for p in model.parameters()) == 13


@pytest.mark.oracle
def test_top_level_tril_triu_and_roll_take_pytorchs_keywords():
    torch = pytest.importorskip("torch")
    x = np.arange(12.0).reshape(3, 4)
    assert cr.tril(cr.tensor(x), diagonal=-1).tolist() == torch.tril(torch.tensor(x), diagonal=-1).tolist()
    assert cr.triu(cr.tensor(x), diagonal=1).tolist() == torch.triu(torch.tensor(x), diagonal=1).tolist()
    rolled = cr.roll(cr.tensor(x), shifts=(1, -1), dims=(0, 1)).tolist()
    assert rolled == torch.roll(torch.tensor(x), shifts=(1, -1), dims=(0, 1)).tolist()
    with pytest.raises(TypeError, match="both k= and diagonal="):
        cr.tril(cr.tensor(x), k=1, diagonal=1)


@pytest.mark.oracle
def test_top_level_vmap_takes_torch_vmaps_in_dims_and_leaves_keywords_unbatched():
    torch = pytest.importorskip("torch")
    x, w = np.arange(6.0).reshape(3, 2), np.array([1.0, -2.0])

    def f(lib, x, w, scale=1.0):
        return (lib.sin(x) * w).sum() * scale

    ours = cr.vmap(lambda x, w, scale: f(cr, x, w, scale), in_dims=(0, None))(cr.tensor(x), cr.tensor(w), scale=2.0)
    theirs = torch.vmap(lambda x, w, scale: f(torch, x, w, scale), in_dims=(0, None))(
        torch.tensor(x), torch.tensor(w), scale=2.0)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert cr.vmap(cr.sin, in_dims=1, out_dims=1)(cr.ones(2, 3)).shape == (2, 3)
    with pytest.raises(TypeError, match="in_axes/out_axes and PyTorch's in_dims/out_dims; pass one"):
        cr.vmap(cr.sin, in_axes=1, in_dims=0)


def test_the_meta_device_is_refused_naming_the_ensembling_fix():
    import copy

    models = [cr.nn.Linear(3, 2) for _ in range(2)]
    from chainrule.core.device import DeviceError

    with pytest.raises(DeviceError, match=r"'meta' is not available.*functional_call replaces its parameters.*"
                                             r"copy\.deepcopy\(models\[0\]\)"):
        copy.deepcopy(models[0]).to("meta")
    params, buffers = cr.func.stack_module_state(models)
    base = copy.deepcopy(models[0])  # the fix the message names
    out = cr.func.vmap(lambda p, b, x: cr.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, cr.ones(4, 3))
    assert out.shape == (2, 4, 2) and np.allclose(out[1].detach().numpy(), models[1](cr.ones(4, 3)).detach().numpy())


def test_jaxs_device_queries_answer_for_the_cpu():
    # cr.devices is the devices module; jax.devices() raised "'module' object is not callable"
    assert cr.devices() == [cr.device("cpu")] and cr.devices("cpu") == cr.local_devices()
    assert cr.device_count() == cr.local_device_count() == 1 and cr.default_backend() == "cpu"
    assert cr.devices.of(np.zeros(2)).name == "cpu"  # the module's own functions are still there
    if not cr.cuda.is_available():
        with pytest.raises(RuntimeError, match="device 'cuda' is not available"):
            cr.devices("gpu")


def test_chainrule_numpys_namespaces_import_by_their_dotted_names_as_autograd_numpys():
    import subprocess
    import sys

    # in a fresh interpreter: the import must work before chainrule.numpy was imported by anything else
    code = ("import chainrule.numpy.random as npr, chainrule.numpy.linalg as la\n"
            "from chainrule.numpy.fft import fft\n"
            "import chainrule.numpy as np, chainrule as cr\n"
            "W = npr.RandomState(0).randn(3, 2)\n"
            "g = cr.grad(lambda w: la.norm(np.tanh(w)))(W)\n"
            "print(g.shape, npr is np.random, fft is np.fft.fft)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "(3, 2) True True", out.stderr


def test_check_grads_in_jaxs_and_hips_autograds_forms():
    # jax.test_util.check_grads / autograd.test_util.check_grads: "module 'chainrule' has no attribute 'test_util'"
    import chainrule.test_util as tu

    x = np.array([0.3, -1.2])
    assert cr.test_util.check_grads(np.sin, (x,), order=2) is None
    assert tu.check_grads(lambda a, b: np.tanh(a) * b, modes=["rev"], order=2)(x, x[::-1].copy()) is None

    @cr.custom_vjp
    def wrong(x):
        return np.sin(x)

    wrong.defvjp(lambda x: (np.sin(x), x), lambda x, g: (g * np.sin(x),))  # the gradient should be cos
    with pytest.raises(AssertionError, match="rev"):
        tu.check_grads(wrong, (x,), order=1, modes=["rev"])
    with pytest.raises(ValueError, match="modes must be 'fwd' and/or 'rev'"):
        tu.check_grads(np.sin, (x,), order=1, modes=["both"])
