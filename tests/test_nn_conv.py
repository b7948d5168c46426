"""Convolution, pooling and batch norm (nn.functional and nn layers) against PyTorch 2.13 as the oracle:
values, gradients of every argument, second order (the gradient of the gradient's squared norm),
running statistics, PyTorch state dicts, and a small CNN trained side by side. The tests that need
no oracle check against loops written out here, and the errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim

RTOL = 1e-9


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests (pip install torch)")


def _t(torch, a, grad=True):
    return torch.tensor(a, requires_grad=grad)


def _close(a, b, rtol=RTOL, atol=1e-10):
    np.testing.assert_allclose(np.asarray(getattr(a, "data", a)), b, rtol=rtol, atol=atol)


def _compare_orders(torch, fn, tfn, arrays):
    """fn vs tfn: the value, the gradients of <out, u>, and the gradient of that gradient's squared norm."""
    tx = [_t(torch, a) for a in arrays]
    ty = tfn(*tx)
    _close(fn(*arrays), ty.detach().numpy())
    up = np.random.default_rng(1).normal(size=tuple(ty.shape))
    tg = torch.autograd.grad((ty * torch.tensor(up)).sum(), tx, create_graph=True)
    t2 = torch.autograd.grad(sum((g**2).sum() for g in tg), tx, allow_unused=True)
    argnums = tuple(range(len(arrays)))

    def loss(*xs):
        return np.sum(fn(*xs) * up)

    for got, want in zip(cr.grad(loss, argnums=argnums)(*arrays), tg):
        _close(got, want.detach().numpy())

    def grad_norm(*xs):
        return sum(np.sum(g**2) for g in cr.grad(loss, argnums=argnums)(*xs))

    for got, want in zip(cr.grad(grad_norm, argnums=argnums)(*arrays), t2):
        _close(got, 0.0 if want is None else want.numpy(), rtol=1e-8, atol=1e-9)


# -- convolution -----------------------------------------------------------------------------------------
CONVS = [  # (d, input shape, weight shape, keyword arguments)
    (2, (2, 3, 7, 6), (4, 3, 3, 2), {}),
    (2, (2, 4, 7, 6), (6, 2, 3, 3), {"stride": 2, "padding": 1, "groups": 2}),
    (2, (1, 4, 9, 8), (4, 1, 3, 2), {"stride": (2, 3), "padding": (2, 0), "dilation": (2, 1), "groups": 4}),
    (2, (1, 2, 5, 6), (2, 2, 4, 3), {"padding": "same", "dilation": (1, 2)}),
    (2, (3, 6, 5), (2, 3, 2, 2), {"padding": "valid", "stride": 2}),  # unbatched
    (1, (3, 2, 10), (4, 2, 3), {"stride": 3, "padding": 4, "dilation": 2}),
    (1, (1, 2, 10), (2, 2, 4), {"padding": "same"}),
    (1, (2, 4, 9), (4, 2, 2), {"stride": 4, "groups": 2}),
]


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("d, xs, ws, kw", CONVS, ids=[str(c[3]) for c in CONVS])
def test_conv_values_gradients_and_second_order_equal_torch(torch, d, xs, ws, kw):
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=xs), rng.normal(size=ws), rng.normal(size=ws[0])
    f, tf = getattr(F, f"conv{d}d"), getattr(torch.nn.functional, f"conv{d}d")
    _compare_orders(torch, lambda x, w, b: f(x, w, b, **kw), lambda x, w, b: tf(x, w, b, **kw), [x, w, b])


def _conv2d_loops(x, w, stride, pad, dil, groups):
    """conv2d written as loops over every output entry (the definition; no oracle needed)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for b in range(n):
        for oc in range(o):
            g = oc // (o // groups)
            for i in range(oh):
                for j in range(ow):
                    patch = xp[b, g * cg:(g + 1) * cg, i * stride:i * stride + dil * (kh - 1) + 1:dil,
                               j * stride:j * stride + dil * (kw - 1) + 1:dil]
                    out[b, oc, i, j] = np.sum(patch * w[oc])
    return out


@pytest.mark.parametrize("stride, pad, dil, groups", [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 1), (3, 1, 2, 2)])
def test_conv2d_equals_its_definition_and_gradients_pass_finite_differences(stride, pad, dil, groups):
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(2, 4, 6, 5)), rng.normal(size=(4, 4 // groups, 2, 3))
    _close(F.conv2d(x, w, stride=stride, padding=pad, dilation=dil, groups=groups),
           _conv2d_loops(x, w, stride, pad, dil, groups), atol=1e-12)
    assert cr.gradcheck(lambda x, w: F.conv2d(x, w, stride=stride, padding=pad, dilation=dil, groups=groups),
                        x[:1, :, :5, :4], w, modes=("rev", "fwd"), order=2)


@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", [
    ((2, 4, 7, 6), (6, 2, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 2),
    ((1, 4, 9, 8), (4, 1, 3, 2), (1, 3), ((2, 2), (0, 0)), (2, 1), 4),
    ((3, 2, 10), (4, 2, 3), (3,), ((4, 4),), (2,), 1),
    ((2, 3, 11), (2, 3, 2), (3,), ((0, -1),), (1,), 1),  # a crop (avg_pool's unused last entry)
    ((2, 2, 5, 6), (2, 2, 3, 3), (1, 1), ((1, 3), (2, 0)), (1, 2), 1),
])
def test_both_input_gradient_kernels_give_the_same_sums(xs, ws, stride, padding, dilation, groups):
    """The transposed convolution and col2im (chosen by stride and channel counts) are one sum."""
    from chainrule.ops.fused import convolution as C

    rng = np.random.default_rng(9)
    w = rng.normal(size=ws)
    geometry = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    g = rng.normal(size=C._conv_fn(rng.normal(size=xs), w, **geometry).shape)
    args = (g, w, stride, padding, dilation, groups, xs[2:])
    _close(C._input_grad_transposed(*args), C._input_grad_col2im(*args), atol=1e-12)


def test_conv_gradients_are_transposed_convolutions_closed_under_differentiation():
    """The gradient of a conv uses the three conv primitives only (so every order has rules)."""
    from test_ops_registry import ops_in_graph

    x = cr.Tensor(np.ones((1, 2, 5, 5)), requires_grad=True)
    w = cr.Tensor(np.ones((3, 2, 3, 3)), requires_grad=True)
    y = F.conv2d(x, w, stride=2, padding=1)
    gx, gw = cr.autodiff.backprop.grad(np.sum(y * y), [x, w], create_graph=True)
    assert {"nn.conv_input_grad", "nn.conv_weight_grad"} <= ops_in_graph([gx, gw])


# -- pooling ---------------------------------------------------------------------------------------------
POOLS = [
    ("max_pool2d", (2, 3, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool2d", (1, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True}),
    ("max_pool2d", (2, 7, 5), {"kernel_size": (2, 3), "stride": 1}),
    ("max_pool1d", (2, 3, 9), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", (2, 3, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool2d", (2, 3, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False,
                                  "ceil_mode": True}),
    ("avg_pool2d", (2, 3, 5, 5), {"kernel_size": (2, 3), "stride": (1, 2), "padding": 1, "divisor_override": 3}),
    ("avg_pool1d", (2, 3, 9), {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True,
                               "count_include_pad": False}),
    ("adaptive_avg_pool2d", (2, 3, 7, 5), {"output_size": (3, 2)}),
    ("adaptive_avg_pool2d", (3, 7, 5), {"output_size": (None, 4)}),
    ("adaptive_avg_pool1d", (2, 3, 4), {"output_size": 6}),
]


@pytest.mark.oracle
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("name, shape, kw", POOLS, ids=[f"{p[0]}-{p[2]}" for p in POOLS])
def test_pool_values_gradients_and_indices_equal_torch(torch, name, shape, kw, ties):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, size=shape).astype(float) if ties else rng.normal(size=shape)  # ties: few values
    tx = _t(torch, x)
    ty = getattr(torch.nn.functional, name)(tx, **kw)
    _close(getattr(F, name)(x, **kw), ty.detach().numpy())
    up = rng.normal(size=tuple(ty.shape))
    (want,) = torch.autograd.grad((ty * torch.tensor(up)).sum(), tx)
    _close(cr.grad(lambda x: np.sum(getattr(F, name)(x, **kw) * up))(x), want.numpy())
    if name.startswith("max"):
        _, t_idx = getattr(torch.nn.functional, name)(tx, **kw, return_indices=True)
        np.testing.assert_array_equal(getattr(F, name)(x, **kw, return_indices=True)[1], t_idx.numpy())


def test_max_pool_sends_the_gradient_of_tied_entries_to_the_first_in_row_major_order():
    x = np.array([[[[1.0, 2.0, 2.0], [2.0, 0.0, 1.0], [3.0, 3.0, 3.0]]]])
    g = cr.grad(lambda x: np.sum(F.max_pool2d(x, 2, stride=1)))(x)  # windows tie 2|2|2, 2|2, 3|3, 3|3
    np.testing.assert_array_equal(g[0, 0], [[0, 2, 0], [0, 0, 0], [1, 1, 0]])
    y, idx = F.max_pool2d(x, 2, stride=1, return_indices=True)
    np.testing.assert_array_equal(idx[0, 0], [[1, 1], [6, 7]])
    np.testing.assert_array_equal(y[0, 0], [[2.0, 2.0], [3.0, 3.0]])


def test_avg_pool_divisors_and_adaptive_windows_written_out():
    x = np.arange(5.0).reshape(1, 1, 5)
    # windows (stride 2, padding 1, ceil): [pad, 0, 1], [1, 2, 3], [3, 4, pad]; divisors 3, 3, 3 or 2, 3, 2
    _close(F.avg_pool1d(x, 3, 2, 1), [[[1 / 3, 2.0, 7 / 3]]])
    _close(F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), [[[0.5, 2.0, 3.5]]])
    _close(F.adaptive_avg_pool1d(x, 3), [[[0.5, 2.0, 3.5]]])  # windows [0, 2), [1, 4), [3, 5)
    assert cr.gradcheck(lambda x: F.avg_pool2d(x, 2, 1, 1, ceil_mode=True, count_include_pad=False),
                        np.random.default_rng(0).normal(size=(1, 2, 3, 4)), modes=("rev", "fwd"), order=2)


# -- batch norm --------------------------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 3, 4, 3)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_values_gradients_second_order_and_running_stats_equal_torch(torch, shape, training):
    rng = np.random.default_rng(4)
    c = shape[1]
    x, w, b = rng.normal(size=shape), rng.normal(size=c), rng.normal(size=c)
    mean, var = rng.normal(size=c), rng.uniform(0.5, 2, size=c)
    t_mean, t_var = torch.tensor(mean), torch.tensor(var)
    for _ in range(3):  # three updates of the running statistics
        F.batch_norm(x, mean, var, w, b, training=training, momentum=0.3, eps=1e-3)
        torch.nn.functional.batch_norm(_t(torch, x, False), t_mean, t_var, training=training, momentum=0.3, eps=1e-3)
        _close(mean, t_mean.numpy(), atol=1e-12)
        _close(var, t_var.numpy(), atol=1e-12)
    m, v = mean.copy(), var.copy()
    _compare_orders(torch, lambda x, w, b: F.batch_norm(x, m.copy(), v.copy(), w, b, training, 0.3, 1e-3),
                    lambda x, w, b: torch.nn.functional.batch_norm(x, torch.tensor(m), torch.tensor(v), w, b,
                                                                   training, 0.3, 1e-3), [x, w, b])


@pytest.mark.oracle
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("affine, track", [(True, True), (False, True), (True, False)])
def test_batchnorm_layers_train_and_eval_like_torch(torch, momentum, affine, track):
    rng = np.random.default_rng(5)
    for cls, shape in (("BatchNorm2d", (4, 3, 5, 5)), ("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 7))):
        mine = getattr(nn, cls)(3, momentum=momentum, affine=affine, track_running_stats=track, dtype=np.float64)
        ref = getattr(torch.nn, cls)(3, momentum=momentum, affine=affine, track_running_stats=track).double()
        if affine:
            w = rng.normal(size=3)
            mine.weight.data[...] = w
            ref.weight.data[...] = torch.tensor(w)
        assert sorted(mine.state_dict()) == sorted(ref.state_dict())
        for _ in range(3):
            x = rng.normal(size=shape) * 2 + 1
            _close(mine(x), ref(torch.tensor(x)).detach().numpy(), atol=1e-9)
        for key, value in ref.state_dict().items():
            _close(mine.state_dict()[key], value.numpy(), atol=1e-12)
        mine.eval()
        ref.eval()
        x = rng.normal(size=shape)
        _close(mine(x), ref(torch.tensor(x)).detach().numpy(), atol=1e-9)
        if track:
            assert int(mine.num_batches_tracked) == 3


# -- layers, state dicts, training --------------------------------------------------------------------------
def _torch_cnn(torch):
    t = torch.nn
    return t.Sequential(t.Conv2d(3, 4, 3, padding=1), t.BatchNorm2d(4), t.ReLU(), t.MaxPool2d(2),
                        t.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), t.ReLU(), t.AdaptiveAvgPool2d(1),
                        t.Flatten(), t.Linear(6, 3)).double()


def _cnn():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(6, 3)).to(np.float64)


@pytest.mark.oracle
def test_a_small_cnn_trains_five_steps_like_torch_from_its_state_dict(torch):
    rng = np.random.default_rng(6)
    torch.manual_seed(0)
    ref, mine = _torch_cnn(torch), _cnn()
    mine.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    t_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = optim.SGD(mine.parameters(), lr=0.1, momentum=0.9)
    for _ in range(5):
        x, y = rng.normal(size=(8, 3, 8, 8)), rng.integers(0, 3, size=8)
        t_loss = torch.nn.functional.cross_entropy(ref(torch.tensor(x)), torch.tensor(y))
        t_opt.zero_grad()
        t_loss.backward()
        t_opt.step()
        loss = F.cross_entropy(mine(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        _close(float(loss), t_loss.item())
    for key, value in ref.state_dict().items():
        _close(mine.state_dict()[key], value.numpy(), rtol=1e-8, atol=1e-10)
    ref.eval()
    mine.eval()
    x = rng.normal(size=(2, 3, 8, 8))
    _close(mine(x), ref(torch.tensor(x)).detach().numpy(), rtol=1e-8)


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_layers_padding_modes_and_reprs_equal_torch(torch, mode):
    rng = np.random.default_rng(7)
    for cls, shape, kw in (("Conv2d", (2, 4, 6, 5), {"padding": (1, 2), "dilation": (2, 1), "groups": 2}),
                           ("Conv1d", (2, 4, 9), {"padding": "same", "dilation": 2}),
                           ("Conv1d", (4, 9), {"padding": 2, "stride": 2, "bias": False})):
        ref = getattr(torch.nn, cls)(4, 6, 3, padding_mode=mode, **kw).double()
        mine = getattr(nn, cls)(4, 6, 3, padding_mode=mode, dtype=np.float64, **kw)
        assert repr(mine) == repr(ref)
        mine.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
        x = rng.normal(size=shape)
        tx = _t(torch, x)
        ty = ref(tx)
        _close(mine(x), ty.detach().numpy())
        (want,) = torch.autograd.grad(ty.sum(), tx)
        _close(cr.grad(lambda x: np.sum(mine(x)))(x), want.numpy())


def test_conv2d_init_draws_from_torchs_bounds_and_the_layers_print_like_torch():
    conv = nn.Conv2d(6, 8, (3, 5), groups=2, rng=0)
    bound = 1 / math.sqrt(3 * 3 * 5)
    assert conv.weight.shape == (8, 3, 3, 5) and conv.weight.dtype == np.float32
    assert 0.9 * bound < np.abs(conv.weight.data).max() <= bound and np.abs(conv.bias.data).max() <= bound
    assert repr(conv) == "Conv2d(6, 8, kernel_size=(3, 5), stride=(1, 1), groups=2)"
    assert repr(nn.MaxPool2d(3, 2)) == "MaxPool2d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.BatchNorm2d(4)) == ("BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                       "track_running_stats=True)")
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"


def test_batchnorm_eval_uses_running_stats_and_train_updates_them():
    bn = nn.BatchNorm1d(2, momentum=None, dtype=np.float64)
    bn(np.array([[0.0, 1.0], [2.0, 5.0]]))
    bn(np.array([[4.0, 1.0], [6.0, 1.0]]))
    np.testing.assert_allclose(bn.running_mean, [3.0, 2.0])  # the cumulative average of the batch means 1|3, 5|1
    np.testing.assert_allclose(bn.running_var, [2.0, 4.0])  # of the unbiased variances 2|8, 2|0
    assert int(bn.num_batches_tracked) == 2
    bn.eval()
    np.testing.assert_allclose(bn(np.array([[3.0, 2.0]])).data, [[0.0, 0.0]], atol=1e-6)
    assert int(bn.num_batches_tracked) == 2


# -- errors --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda: F.conv2d(np.ones((1, 3, 5, 5)), np.ones((2, 2, 3, 3))), "input with 3 channels does not fit weight"),
    (lambda: F.conv2d(np.ones((1, 2, 5, 5)), np.ones((2, 2, 3, 3)), stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv1d(np.ones((1, 2, 2)), np.ones((2, 2, 3))), "the kernel .* is larger than the padded input"),
    (lambda: F.conv2d(np.ones((5, 5)), np.ones((2, 1, 3, 3))), "expected a 3-D .* or 4-D .* input"),
    (lambda: F.conv2d(np.ones((1, 1, 5, 5)), np.ones((2, 1, 3, 3)), np.ones(3)), r"bias must have shape \(2,\)"),
    (lambda: F.conv2d(np.ones((1, 1, 5, 5)), np.ones((2, 1, 3, 3)), padding=-1), "padding must be at least 0"),
    (lambda: F.max_pool2d(np.ones((1, 1, 5, 5)), 2, padding=2), "padding should be at most half of the kernel"),
    (lambda: nn.Conv2d(3, 4, 3, padding_mode="mirror"), "padding_mode must be one of"),
    (lambda: nn.Conv2d(3, 4, 3, groups=2), r"divisible by groups \(2\)"),
    (lambda: nn.BatchNorm2d(3)(np.ones((2, 3, 4))), r"expected 4D input \(got 3D input\)"),
    (lambda: F.batch_norm(np.ones((1, 3)), None, None, training=True), "expected more than 1 value per channel"),
    (lambda: F.batch_norm(np.ones((2, 3)), None, None), "running_mean and running_var are needed"),
])
def test_errors_name_the_function_the_argument_and_the_fix(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_conv_and_pools_run_under_vmap_and_jacfwd():
    rng = np.random.default_rng(8)
    xs, w = rng.normal(size=(3, 2, 2, 5, 5)), rng.normal(size=(4, 2, 3, 3))
    batched = cr.vmap(lambda x: F.avg_pool2d(F.conv2d(x, w, padding=1), 2))(xs)
    _close(batched, np.stack([F.avg_pool2d(F.conv2d(x, w, padding=1), 2) for x in xs]), atol=1e-12)
    jac = cr.jacfwd(lambda w: F.conv1d(xs[0, :, :, 0], w[:, :, 0]))(w)
    _close(jac, cr.jacrev(lambda w: F.conv1d(xs[0, :, :, 0], w[:, :, 0]))(w), atol=1e-12)
