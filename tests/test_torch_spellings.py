"""PyTorch's spellings on Tensors, nn.functional and Modules: dim=/keepdim=, view, permute, ...; constructors."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import Tensor, nn

X = np.array([[1.0, 5.0, -2.0], [7.0, 2.0, 0.5]])


def _torch():
    return pytest.importorskip("torch")


REDUCTIONS = ["sum", "mean", "prod", "logsumexp", "std", "var", "max", "min"]


@pytest.mark.oracle
@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dim, keepdim", [(1, False), (0, True), (-1, True)])
def test_reductions_with_dim_keepdim_match_pytorch_values_and_gradients(name, dim, keepdim):
    torch = _torch()
    x = Tensor(X, requires_grad=True)
    out = getattr(x, name)(dim=dim, keepdim=keepdim)
    tx = torch.tensor(X, requires_grad=True)
    tout = getattr(tx, name)(dim=dim, keepdim=keepdim)
    if name in ("max", "min"):  # PyTorch's (values, indices)
        np.testing.assert_array_equal(out.indices.data, tout.indices.numpy())
        out, tout = out.values, tout.values
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_with_dim_send_the_gradient_to_the_returned_index_at_ties_like_pytorch(name, keepdim):
    torch = _torch()
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    for dim in (0, 1, -1):
        x = Tensor(ties, requires_grad=True)
        tx = torch.tensor(ties, requires_grad=True)
        out = getattr(x, name)(dim=dim, keepdim=keepdim)
        tout = getattr(tx, name)(dim=dim, keepdim=keepdim)
        np.testing.assert_array_equal(out.indices.data, tout.indices.numpy())
        weights = np.arange(1.0, 1.0 + out.values.data.size).reshape(out.values.shape)
        (out.values * weights).sum().backward()
        (tout.values * torch.tensor(weights)).sum().backward()
        np.testing.assert_array_equal(x.grad.data, tx.grad.numpy())
        # the whole-tensor reduction shares the gradient among ties, in both libraries
        x.grad = None
        tx.grad = None
        getattr(x, name)().backward()
        getattr(tx, name)().backward()
        np.testing.assert_array_equal(x.grad.data, tx.grad.numpy())


def test_numpy_spelling_keeps_numpy_meaning():
    x = Tensor(X)
    np.testing.assert_allclose(x.std(axis=1).data, X.std(axis=1))  # ddof=0, NumPy's default
    np.testing.assert_allclose(x.std(dim=1).data, X.std(axis=1, ddof=1))  # PyTorch's unbiased default
    np.testing.assert_allclose(x.var(dim=1, correction=0).data, X.var(axis=1))
    np.testing.assert_allclose(x.var(dim=1, unbiased=False).data, X.var(axis=1))
    np.testing.assert_allclose(x.max(axis=1).data, X.max(axis=1))  # values only
    assert x.sum(1, True).shape == (2, 1)
    with pytest.raises(TypeError, match=r"sum: got both axis=0 and dim=1; pass one"):
        x.sum(axis=0, dim=1)
    with pytest.raises(TypeError, match=r"mean: got both keepdims and keepdim"):
        x.mean(keepdims=True, keepdim=True)
    with pytest.raises(TypeError, match=r"var: pass one of ddof, unbiased and correction"):
        x.var(dim=1, ddof=0, correction=1)


def test_value_methods_and_cumulative_ones_take_dim():
    x = Tensor(X)
    np.testing.assert_array_equal(x.argmax(dim=1, keepdim=True), [[1], [0]])
    np.testing.assert_array_equal(x.argmin(dim=0), [0, 1, 0])
    np.testing.assert_array_equal(x.any(dim=1), [True, True])
    np.testing.assert_array_equal(x.all(dim=0, keepdim=True), [[True, True, True]])
    np.testing.assert_allclose(x.cumsum(dim=1).data, np.cumsum(X, axis=1))
    np.testing.assert_allclose(x.cumprod(dim=0).data, np.cumprod(X, axis=0))
    np.testing.assert_allclose(x.softmax(dim=0).data.sum(axis=0), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(np.exp(x.log_softmax(dim=1).data).sum(axis=1), [1.0, 1.0])
    assert Tensor(np.zeros((2, 1, 3))).squeeze(dim=1).shape == (2, 3)


@pytest.mark.oracle
def test_functional_softmax_takes_dim_like_pytorch():
    torch = _torch()
    for fn in ("softmax", "log_softmax"):
        for dim in (0, 1, -1):
            x = Tensor(X, requires_grad=True)
            tx = torch.tensor(X, requires_grad=True)
            out = getattr(F, fn)(x, dim=dim)
            tout = getattr(torch.nn.functional, fn)(tx, dim=dim)
            np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
            (out * Tensor(X)).sum().backward()
            (tout * torch.tensor(X)).sum().backward()
            np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(F.softmax(Tensor(X), 0).data, F.softmax(Tensor(X), dim=0).data)
    with pytest.raises(TypeError, match="softmax: got both axis=0 and dim=1"):
        F.softmax(Tensor(X), 0, dim=1)


@pytest.mark.oracle
def test_shape_methods_match_pytorch():
    torch = _torch()
    a = np.arange(24.0).reshape(2, 3, 4)
    x, tx = Tensor(a), torch.tensor(a)
    cases = [
        (lambda t: t.view(6, 4), lambda t: t.view(6, 4)),
        (lambda t: t.view(-1), lambda t: t.view(-1)),
        (lambda t: t.view((4, -1)), lambda t: t.view((4, -1))),
        (lambda t: t.unsqueeze(1), lambda t: t.unsqueeze(1)),
        (lambda t: t.unsqueeze(-1), lambda t: t.unsqueeze(-1)),
        (lambda t: t.permute(2, 0, 1), lambda t: t.permute(2, 0, 1)),
        (lambda t: t.permute((1, 2, 0)), lambda t: t.permute((1, 2, 0))),
        (lambda t: t.transpose(0, 2), lambda t: t.transpose(0, 2)),
        (lambda t: t.transpose(-1, -2), lambda t: t.transpose(-1, -2)),
        (lambda t: t.flatten(1), lambda t: t.flatten(1)),
        (lambda t: t.flatten(0, 1), lambda t: t.flatten(0, 1)),
        (lambda t: t.flatten(), lambda t: t.flatten()),
        (lambda t: t[0].t(), lambda t: t[0].t()),
        (lambda t: t[:, :1].expand(2, 5, 4), lambda t: t[:, :1].expand(2, 5, 4)),
        (lambda t: t[:, :1].expand(-1, 3, -1), lambda t: t[:, :1].expand(-1, 3, -1)),
        (lambda t: t.clamp(min=3.0, max=20.0), lambda t: t.clamp(min=3.0, max=20.0)),
        (lambda t: t.clamp(max=5.0), lambda t: t.clamp(max=5.0)),
        (lambda t: t.pow(2), lambda t: t.pow(2)),
        (lambda t: t.norm(), lambda t: t.norm()),
        (lambda t: t.norm(dim=1), lambda t: t.norm(dim=1)),
        (lambda t: t.norm(p=1, dim=-1, keepdim=True), lambda t: t.norm(p=1, dim=-1, keepdim=True)),
        (lambda t: t.norm(dim=(1, 2)), lambda t: t.norm(dim=(1, 2))),
        (lambda t: t.masked_fill(t > 10, 0.0), lambda t: t.masked_fill(t > 10, 0.0)),
        (lambda t: t.clone(), lambda t: t.clone()),
        (lambda t: t.contiguous(), lambda t: t.contiguous()),
    ]
    for i, (ours, theirs) in enumerate(cases):
        got = ours(x)
        want = theirs(tx)
        assert got.shape == tuple(want.shape), i
        np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-12, err_msg=str(i))
    assert x.numel() == tx.numel() == 24 and x.dim() == tx.dim() == 3
    assert x.size() == tuple(tx.size()) and x.size(1) == tx.size(1) == 3 and x.size(-1) == 4
    assert x.size == 24  # ndarray's meaning too


def test_gradients_flow_through_the_new_methods():
    def through(t):
        t = t if isinstance(t, Tensor) else Tensor(t)  # gradcheck also calls it on plain arrays
        return (t.view(6).unsqueeze(0).permute(1, 0).clamp(min=0.5).pow(2).sum() + t.norm()
                + t.masked_fill(t.detach() > 2, 0.0).sum() + t.clone().t().sum())

    a = np.array([[1.0, 2.5, 3.0], [0.25, -1.0, 4.0]])  # away from the kinks at 0.5 and 2
    assert cr.gradcheck(lambda v: through(v), a, modes=("rev", "fwd"), order=2)


def test_dtype_and_device_conversions():
    x = Tensor(X, requires_grad=True)
    assert x.float().dtype == np.float32 and x.double() is x
    assert x.to("cpu") is x and x.to(np.float32).dtype == np.float32 and x.to("cpu", np.float32).dtype == np.float32
    assert x.to(dtype="float32").dtype == np.float32 and x.to(Tensor(np.float32(1.0))).dtype == np.float32
    assert x.cpu() is x and x.long().dtype == np.int64
    y = x.float()
    y.sum().backward()  # differentiable: the gradient comes back in the input's dtype
    assert x.grad.dtype == np.float64
    if not cr.cuda.is_available():
        with pytest.raises(ValueError, match=r"to: device 'cuda' is not available"):
            x.to("cuda")
        with pytest.raises(RuntimeError, match=r"cuda\(\): device 'cuda' is not available"):
            x.cuda()
    with pytest.raises(TypeError, match="masked_fill: mask must be boolean"):
        x.masked_fill(np.ones((2, 3)), 0.0)
    # a 2-D Tensor's transpose(0, 1) is PyTorch's (NumPy's identity permutation only inside a transform of arrays)
    for axes in ((0, 1), (-2, -1), (1, 0), (0, -1)):
        np.testing.assert_array_equal(x.transpose(*axes).data, X.T)
    np.testing.assert_array_equal(x.transpose(dim0=0, dim1=1).data, X.T)
    np.testing.assert_array_equal(x.transpose((0, 1)).data, X)  # one sequence: NumPy's permutation
    np.testing.assert_array_equal(cr.grad(lambda a: (a.transpose(0, 1) * np.arange(6.0).reshape(2, 3)).sum())(X),
                                  np.arange(6.0).reshape(2, 3))  # NumPy's identity, as on the array
    np.testing.assert_array_equal(cr.grad(lambda a: (a.transpose(0, 1) * np.arange(6.0).reshape(3, 2)).sum())(
        Tensor(X)).data, np.arange(6.0).reshape(3, 2).T)  # given a Tensor: PyTorch's
    with pytest.raises(IndexError, match=r"size\(5\): a Tensor of 2 dimensions has no such dim"):
        x.size(5)


def test_in_place_zero_and_fill_and_detach():
    t = Tensor(X.copy())
    assert t.zero_() is t and not t.data.any()
    assert t.fill_(2.0) is t and (t.data == 2.0).all()
    assert t.detach().numpy() is t.numpy()


def test_constructors_return_tensors_in_the_default_dtype():
    assert isinstance(cr.zeros(2, 3), Tensor) and cr.zeros(2, 3).shape == (2, 3) and cr.zeros((2, 3)).shape == (2, 3)
    assert cr.zeros(2).dtype == nn.get_default_dtype() == np.float32
    assert cr.ones(3, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(cr.ones(2, 2).data, np.ones((2, 2)))
    np.testing.assert_array_equal(cr.full((2,), 7).data, [7, 7])
    assert cr.full((2,), 0.5).dtype == np.float32
    np.testing.assert_array_equal(cr.eye(3).data, np.eye(3))
    np.testing.assert_array_equal(cr.arange(4).data, [0, 1, 2, 3])
    assert cr.arange(4).dtype == np.int64 and cr.arange(0.0, 1.0, 0.25).dtype == np.float32
    np.testing.assert_array_equal(cr.arange(1, 7, 2).data, [1, 3, 5])
    w = cr.randn(3, 2, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.shape == (3, 2)
    u = cr.rand(1000)
    assert 0.0 <= u.data.min() and u.data.max() < 1.0
    nn.init.manual_seed(3)
    first = cr.randn(4).data
    nn.init.manual_seed(3)
    np.testing.assert_array_equal(cr.randn(4).data, first)
    np.testing.assert_array_equal(cr.randn(2, rng=5).data, cr.randn(2, rng=5).data)
    like = cr.zeros_like(Tensor([1.0, 2.0]), requires_grad=True)
    assert isinstance(like, Tensor) and like.requires_grad and like.dtype == np.float64
    assert isinstance(cr.ones_like(np.ones(2)), Tensor)
    # NumPy's own zeros_like keeps NumPy's meaning
    assert type(np.zeros_like(Tensor([1.0]))) is np.ndarray
    with pytest.raises(TypeError, match="only floating-point tensors can require grad"):
        cr.arange(3, requires_grad=True)
    with pytest.raises(TypeError, match=r"zeros: sizes must be non-negative integers"):
        cr.zeros(2.5)
    if not cr.cuda.is_available():
        with pytest.raises(ValueError, match="device 'cuda' is not available"):
            cr.ones(2, device="cuda")


@pytest.mark.parametrize("make", [
    lambda d: cr.ones(2, device=d), lambda d: cr.tensor([1.0], device=d), lambda d: Tensor([1.0]).to(d),
    lambda d: Tensor([1.0]).new_zeros(2, device=d), lambda d: nn.Linear(2, 3, device=d),
    lambda d: nn.Linear(2, 3).to(d),
], ids=["zeros", "tensor", "Tensor.to", "new_zeros", "Linear", "Module.to"])
def test_every_device_argument_takes_the_cpu_in_pytorchs_spellings_and_refuses_others(make):
    for cpu in ("cpu", "cpu:0"):
        make(cpu)
    if cr.cuda.device_count() < 2:
        with pytest.raises(ValueError, match=r"device 'cuda(:1)?' is not available"):
            make("cuda:1")


def test_a_training_loop_written_the_pytorch_way():
    nn.init.manual_seed(0)
    model = nn.Linear(3, 1).to("cpu")
    x = cr.randn(16, 3)
    y = (x * cr.arange(1.0, 4.0)).sum(dim=1, keepdim=True)
    losses = []
    for _ in range(200):
        loss = ((model(x) - y) ** 2).mean()
        model.zero_grad()
        loss.backward()
        with cr.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        losses.append(loss.item())
    assert losses[-1] < 1e-3 * losses[0]
    np.testing.assert_allclose(model.weight.data, [[1.0, 2.0, 3.0]], atol=1e-2)


def test_module_to_accepts_devices_and_dtypes():
    layer = nn.Linear(2, 1)
    assert layer.to("cpu") is layer and layer.cpu() is layer
    assert layer.to("cpu", np.float64).weight.dtype == np.float64
    assert layer.to(dtype=np.float32).weight.dtype == np.float32
    assert layer.to("double").weight.dtype == np.float64
    if not cr.cuda.is_available():
        with pytest.raises(ValueError, match=r"Linear.to: device 'cuda' is not available"):
            layer.to("cuda:0")
        with pytest.raises(RuntimeError, match=r"Linear.to: device 'cuda' is not available"):
            layer.cuda()


@pytest.mark.oracle
def test_sort_argsort_and_selection_with_pytorchs_keywords_match_pytorch():
    torch = _torch()
    a = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, 0.5, 4.0, -1.0]])
    for dim, descending in [(1, False), (1, True), (0, True), (-1, False)]:
        x, tx = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        values, indices = x.sort(dim=dim, descending=descending)
        tvalues, tindices = tx.sort(dim=dim, descending=descending, stable=True)
        np.testing.assert_array_equal(values.data, tvalues.detach().numpy())
        np.testing.assert_array_equal(indices.data, tindices.numpy())
        weights = np.arange(8.0).reshape(2, 4)
        (values * Tensor(weights)).sum().backward()
        (tvalues * torch.tensor(weights)).sum().backward()
        np.testing.assert_array_equal(x.grad.data, tx.grad.numpy())
        np.testing.assert_array_equal(
            x.argsort(dim=dim, descending=descending), tx.argsort(dim=dim, descending=descending, stable=True).numpy()
        )
    x, tx = Tensor(a), torch.tensor(a)
    np.testing.assert_array_equal(x.repeat_interleave(2, dim=1).data, tx.repeat_interleave(2, dim=1).numpy())
    np.testing.assert_array_equal(
        x.index_select(1, np.array([3, 0])).data, tx.index_select(1, torch.tensor([3, 0])).numpy()
    )
    # ndarray's in-place sort only with its own keyword kind=
    u = Tensor([3.0, 1.0, 2.0])
    assert u.sort(kind="stable") is None
    np.testing.assert_array_equal(u.numpy(), [1.0, 2.0, 3.0])


@pytest.mark.oracle
def test_sort_of_a_tensor_without_grad_is_pytorchs_values_and_indices_not_an_in_place_sort():
    # t.sort() / t.sort(-1) of a plain tensor sorted it in place and returned None (ndarray.sort)
    torch = _torch()
    a = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, -1.0, 4.0, 2.0]])
    for args, kw in [((), {}), ((-1,), {}), ((0,), {}), ((1, True), {}), ((), {"dim": 0, "descending": True}),
                     ((), {"dim": -1, "stable": True})]:
        x = Tensor(a)
        values, indices = x.sort(*args, **kw)
        tvalues, tindices = torch.tensor(a).sort(*args, **kw)
        np.testing.assert_array_equal(values.numpy(), tvalues.numpy())
        if kw.get("stable"):
            np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
        np.testing.assert_array_equal(x.numpy(), a)  # unchanged


@pytest.mark.oracle
def test_positional_dim_of_max_and_min_is_pytorchs_values_and_indices_and_a_tensor_is_the_elementwise_form():
    torch = _torch()
    ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    for name in ("max", "min"):
        x, tx = Tensor(ties, requires_grad=True), torch.tensor(ties, requires_grad=True)
        values, indices = getattr(x, name)(1)  # was NumPy's values only: unpacking took its two rows
        tvalues, tindices = getattr(tx, name)(1)
        np.testing.assert_array_equal(indices.data, tindices.numpy())
        kept, tkept = getattr(x, name)(0, True)[0], getattr(tx, name)(0, True)[0]
        assert kept.shape == tuple(tkept.shape) == (1, 3)
        other = ties[::-1].copy()
        both, tboth = getattr(x, name)(Tensor(other)), getattr(tx, name)(torch.tensor(other))
        ((values * values).sum() + (kept * 3.0).sum() + (both * both).sum()).backward()
        ((tvalues * tvalues).sum() + (tkept * 3.0).sum() + (tboth * tboth).sum()).backward()
        np.testing.assert_array_equal(x.grad.data, tx.grad.numpy())
        np.testing.assert_array_equal(getattr(x, name)(1, keepdims=True).data, getattr(ties, name)(1, keepdims=True))
        np.testing.assert_array_equal(getattr(x, name)((0, 1)).data, getattr(ties, name)((0, 1)))  # NumPy's tuple
    with pytest.raises(AttributeError, match=r"'ValuesIndices' has no attribute 'sum': this is PyTorch's \(values, "
                                             r"indices\) pair .* use .values.sum \(or axis= for NumPy's values only\)"):
        Tensor(ties).max(1).sum()
    with pytest.raises(TypeError, match=r"max: the second positional argument is PyTorch's keepdim \(a bool\)"):
        Tensor(ties).max(1, 0)


@pytest.mark.oracle
def test_softplus_takes_pytorchs_beta_and_threshold_to_second_order():
    torch = _torch()
    data = np.array([-3.0, -0.2, 0.4, 0.6, 2.5, 30.0])
    for beta, threshold in [(1.0, 20.0), (2.0, 1.0), (0.5, 3.0)]:
        x, tx = Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        (g,) = cr.autograd.grad(F.softplus(x, beta=beta, threshold=threshold).sum(), [x], create_graph=True)
        (tg,) = torch.autograd.grad(torch.nn.functional.softplus(tx, beta, threshold).sum(), [tx], create_graph=True)
        (h,) = cr.autograd.grad((g * g).sum(), [x])
        (th,) = torch.autograd.grad((tg * tg).sum(), [tx])
        np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(h.data, th.numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(nn.Softplus(beta, threshold)(Tensor(data)).data,
                                   torch.nn.Softplus(beta, threshold)(torch.tensor(data)).numpy(), rtol=1e-12)


@pytest.mark.oracle
def test_bce_with_logits_takes_pytorchs_weight_and_embedding_its_padding_idx():
    torch = _torch()
    logits = np.array([[0.3, -1.2, 2.0], [-0.4, 0.9, -2.5]])
    target = np.array([[1.0, 0.0, 0.6], [0.0, 1.0, 1.0]])
    weight, pos_weight = np.array([1.0, 2.0, 0.5]), np.array([0.5, 3.0, 1.5])
    for reduction in ("mean", "sum", "none"):
        x, tx = Tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
        loss = nn.BCEWithLogitsLoss(Tensor(weight), reduction=reduction, pos_weight=pos_weight)(x, target)
        tloss = torch.nn.functional.binary_cross_entropy_with_logits(
            tx, torch.tensor(target), torch.tensor(weight), reduction=reduction, pos_weight=torch.tensor(pos_weight))
        (g,) = cr.autograd.grad((loss * loss).sum(), [x], create_graph=True)
        (tg,) = torch.autograd.grad((tloss * tloss).sum(), [tx], create_graph=True)
        np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(cr.autograd.grad(g.sum(), [x])[0].data,
                                   torch.autograd.grad(tg.sum(), [tx])[0].numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match=r"BCEWithLogitsLoss: the first argument is weight .* pass reduction='sum'"):
        nn.BCEWithLogitsLoss("sum")
    table = np.arange(12.0).reshape(4, 3)
    w, tw = Tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    (F.embedding(np.array([[0, 2], [2, 3]]), w, padding_idx=-2) ** 2).sum().backward()
    (torch.nn.functional.embedding(torch.tensor([[0, 2], [2, 3]]), tw, padding_idx=-2) ** 2).sum().backward()
    np.testing.assert_array_equal(w.grad.data, tw.grad.numpy())


def test_grad_fn_and_swapdims_as_pytorch():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    y = (x * 2).swapdims(0, 1)
    assert x.grad_fn is None and y.grad_fn is not None and y.grad_fn.name() == y.op and y.shape == (3, 2)
    assert (Tensor([1.0]) * 2).grad_fn is None and x.detach().grad_fn is None
    with cr.no_grad():
        assert (x * 2).grad_fn is None
    kept, labelled = x * 3, x * 4
    kept.retain_grad()
    labelled.label = "h"
    assert kept.retains_grad and not labelled.retains_grad and not x.retains_grad


def test_device_facts_and_device_arguments_as_pytorch():
    x = cr.tensor([1.0, 2.0], requires_grad=True, device="cpu")
    assert str(x.device) == "cpu" and x.device == "cpu" and x.device.type == "cpu" and not x.is_cuda
    assert x.is_floating_point() and not x.is_complex() and x.ndimension() == 1
    assert not cr.Tensor([1, 2]).is_floating_point()
    assert cr.zeros(2, device=x.device).shape == (2,) and x.to(x.device) is x
    assert cr.ones_like(x, device=x.device).tolist() == [1.0, 1.0] and cr.zeros_like(x, device="cpu").shape == (2,)
    if not cr.cuda.is_available():
        with pytest.raises(ValueError, match=r"tensor: device 'cuda' is not available"):
            cr.tensor([1.0], device="cuda")


def test_layers_take_pytorchs_device_argument_for_the_cpu():
    assert nn.Linear(2, 3, device="cpu").weight.shape == (3, 2)
    assert nn.LayerNorm(3, device=cr.zeros(1).device).weight.shape == (3,)
    assert nn.Embedding(4, 2, device="cpu").weight.shape == (4, 2) and nn.RMSNorm(3, device="cpu").weight.shape == (3,)
    assert nn.MultiheadAttention(4, 2, device="cpu").embed_dim == 4
    if not cr.cuda.is_available():  # another device's name is taken (tests/test_device_layers.py) where it is known
        with pytest.raises(ValueError, match=r"Linear: device 'cuda' is not available"):
            nn.Linear(2, 3, device="cuda:0")


@pytest.mark.oracle
def test_unique_argwhere_nonzero_as_tuple_and_new_tensors_as_pytorch():
    torch = _torch()
    a = np.array([[3.0, 1.0], [3.0, 0.0]])
    x, t = Tensor(a, requires_grad=True), torch.tensor(a)
    ours = [x.unique(), *x.unique(return_inverse=True, return_counts=True), x.unique(dim=1), x.argwhere(),
            x.nonzero(as_tuple=False), *x.nonzero(as_tuple=True)]
    theirs = [t.unique(), *t.unique(return_inverse=True, return_counts=True), t.unique(dim=1), t.argwhere(),
              t.nonzero(as_tuple=False), *t.nonzero(as_tuple=True)]
    for o, th in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(np.asarray(o.data if isinstance(o, Tensor) else o), th.numpy())
    assert x.new_zeros(2, 3, requires_grad=True).requires_grad and x.new_empty((2,)).shape == (2,)
    assert x.new_full((2,), 3.0, device="cpu").tolist() == [3.0, 3.0]


@pytest.mark.oracle
def test_module_dict_named_sequential_flatten_and_nll_loss_layer_as_pytorch():
    torch = _torch()
    from collections import OrderedDict

    net = nn.Sequential(OrderedDict([("fc", nn.Linear(4, 3, dtype=np.float64)), ("act", nn.ReLU()),
                                     ("flat", nn.Flatten(0))]))
    assert [n for n, _ in net.named_parameters()] == ["fc.weight", "fc.bias"] and net(np.ones((2, 4))).shape == (6,)
    heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Linear(2, 2)})
    heads["c"] = nn.Linear(2, 3)
    assert list(heads) == ["a", "b", "c"] and "c" in heads and len(list(heads.parameters())) == 6
    heads.pop("a")
    assert list(heads.state_dict()) == ["b.weight", "b.bias", "c.weight", "c.bias"]
    with pytest.raises(KeyError, match=r"ModuleDict: no module named 'a'"):
        heads["a"]
    assert nn.Unflatten(1, (2, 2))(np.zeros((3, 4))).shape == (3, 2, 2)
    assert nn.Flatten()(cr.zeros(2, 3, 4)).shape == (2, 12)
    logits, target, weight = RNG_X, np.array([1, -100, 0]), np.array([1.0, 2.0, 0.5])
    x, tx = Tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    nn.NLLLoss(weight)(x.log_softmax(dim=1), target).backward()
    torch.nn.NLLLoss(torch.tensor(weight))(tx.log_softmax(dim=1), torch.tensor(target)).backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-12)


RNG_X = np.array([[0.3, -1.2, 2.0], [-0.4, 0.9, -2.5], [1.1, 0.2, -0.3]])


@pytest.mark.oracle
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_takes_pytorchs_extra_dims_and_a_single_example(reduction):
    torch = _torch()
    logits = np.random.default_rng(3).normal(size=(2, 5, 2, 2))
    target = np.array([[[1, 0], [4, 4]], [[2, -100], [3, 0]]])
    weight = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    x, tx = Tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    loss = F.nll_loss(x.log_softmax(dim=1), target, weight=weight, reduction=reduction)
    tloss = torch.nn.functional.nll_loss(tx.log_softmax(dim=1), torch.tensor(target), weight=torch.tensor(weight),
                                         reduction=reduction)
    single = F.nll_loss(x[0, :, 0, 0].log_softmax(dim=0), np.array(3), reduction=reduction)
    tsingle = torch.nn.functional.nll_loss(tx[0, :, 0, 0].log_softmax(dim=0), torch.tensor(3), reduction=reduction)
    ((loss * loss).sum() + single * 3.0).backward()
    ((tloss * tloss).sum() + tsingle * 3.0).backward()
    assert loss.shape == tuple(tloss.shape) and single.shape == tuple(tsingle.shape)
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["std", "var"])
def test_positional_dim_of_std_and_var_is_pytorchs_unbiased_one(name):
    torch = _torch()
    for args in [(1,), (0, True), (1, False, True), ((0, 1),)]:
        x, tx = Tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
        out, tout = getattr(x, name)(*args), getattr(tx, name)(*args)  # x.std(1) was NumPy's ddof=0
        assert out.shape == tuple(tout.shape)
        (g,) = cr.autograd.grad((out * out).sum(), [x], create_graph=True)
        (tg,) = torch.autograd.grad((tout * tout).sum(), [tx], create_graph=True)
        np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(cr.autograd.grad(g.sum(), [x])[0].data,
                                   torch.autograd.grad(tg.sum(), [tx])[0].numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(getattr(Tensor(X), name)().data, getattr(torch.tensor(X), name)().numpy(),
                               rtol=1e-12)  # no arguments: PyTorch's (unbiased)
    np.testing.assert_allclose(getattr(np, name)(Tensor(X)).data, getattr(np, name)(X))  # NumPy's function: NumPy's
    np.testing.assert_allclose(getattr(Tensor(X), name)(axis=1).data, getattr(X, name)(axis=1))
    with pytest.raises(TypeError, match=rf"{name}: got a positional dim 1 and an axis/dim keyword; pass one"):
        getattr(Tensor(X), name)(1, axis=0)


def test_argsort_takes_pytorchs_positional_descending():
    a = np.array([[2.0, 1.0, 2.0], [0.0, 3.0, 3.0]])
    np.testing.assert_array_equal(Tensor(a).argsort(1, True), [[0, 2, 1], [1, 2, 0]])  # stable, as PyTorch's
    np.testing.assert_array_equal(Tensor(a).argsort(0, False), np.argsort(a, axis=0, kind="stable"))
    np.testing.assert_array_equal(Tensor(a).argsort(kind="stable"), np.argsort(a, kind="stable"))  # NumPy's kind
