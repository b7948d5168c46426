"""The 3-D layers (convolution, transposed convolution, pooling, batch and instance norm) against PyTorch 2.13 as
the oracle: values, gradients of every argument and second order (the gradient of the gradient's squared norm);
the modules with PyTorch's parameters, state dicts and reprs; finite differences; the strict device double; and
the errors for inputs of the wrong shape. Shapes are small: each 3-D case is a few hundred entries."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests (pip install torch)")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _close(a, b, rtol=1e-9, atol=1e-10):
    np.testing.assert_allclose(np.asarray(getattr(a, "data", a)), b, rtol=rtol, atol=atol)


def compare_orders(torch, fn, tfn, arrays, second=True, grad_of=None):
    """fn vs tfn: the value, the gradients of <out, u> with respect to ``arrays[grad_of]`` (default: all), and
    (``second``) the gradient of that gradient's squared norm."""
    grad_of = tuple(range(len(arrays))) if grad_of is None else tuple(grad_of)
    tx = [torch.tensor(a, requires_grad=k in grad_of) for k, a in enumerate(arrays)]
    cx = [cr.Tensor(a, requires_grad=k in grad_of) for k, a in enumerate(arrays)]
    ty, cy = tfn(*tx), fn(*cx)
    _close(cy, ty.detach().numpy())
    up = np.random.default_rng(1).normal(size=tuple(ty.shape))
    tg = torch.autograd.grad((ty * torch.tensor(up)).sum(), [tx[k] for k in grad_of], create_graph=second)
    cg = cr.autograd.grad((cy * up).sum(), [cx[k] for k in grad_of], create_graph=second)
    for got, want in zip(cg, tg):
        _close(got, want.detach().numpy())
    if not second:
        return
    t2 = torch.autograd.grad(sum((g**2).sum() for g in tg), [tx[k] for k in grad_of], allow_unused=True)
    c2 = cr.autograd.grad(sum((g * g).sum() for g in cg), [cx[k] for k in grad_of], allow_unused=True)
    for got, want in zip(c2, t2):
        want = 0.0 if want is None else want.numpy()
        _close(0.0 if got is None else got, want, rtol=1e-8, atol=1e-9)


# -- convolution -----------------------------------------------------------------------------------------
CONVS = [  # (input shape, weight shape, keyword arguments)
    ((2, 2, 4, 5, 4), (3, 2, 2, 3, 2), {}),
    ((1, 4, 5, 6, 5), (6, 2, 3, 2, 3), {"stride": (2, 1, 2), "padding": (1, 0, 2), "dilation": (1, 2, 1),
                                        "groups": 2}),
    ((1, 2, 4, 5, 4), (2, 2, 3, 2, 3), {"padding": "same", "dilation": (1, 2, 1)}),
    ((2, 4, 5, 4), (3, 2, 2, 2, 2), {"padding": "valid", "stride": 2}),  # unbatched
]


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("xs, ws, kw", CONVS, ids=[str(c[2]) for c in CONVS])
def test_conv3d_values_gradients_and_second_order_equal_torch(torch, xs, ws, kw):
    x, w, b = _x(*xs), _x(*ws, seed=1), _x(ws[0], seed=2)
    compare_orders(torch, lambda x, w, b: F.conv3d(x, w, b, **kw),
                   lambda x, w, b: torch.nn.functional.conv3d(x, w, b, **kw), [x, w, b])


TRANSPOSED = [
    ((1, 2, 3, 2, 3), (2, 3, 2, 2, 2), {"stride": 2}),
    ((2, 4, 2, 3, 2), (4, 1, 3, 2, 2), {"stride": (2, 1, 3), "padding": (1, 0, 1), "output_padding": (1, 0, 2),
                                        "groups": 2, "dilation": (1, 2, 1)}),
    ((2, 3, 2, 2), (2, 2, 2, 3, 2), {"padding": 1}),  # unbatched
]


@pytest.mark.oracle
@pytest.mark.parametrize("xs, ws, kw", TRANSPOSED, ids=[str(c[2]) for c in TRANSPOSED])
def test_conv_transpose3d_values_gradients_and_second_order_equal_torch(torch, xs, ws, kw):
    groups = kw.get("groups", 1)
    x, w, b = _x(*xs), _x(*ws, seed=1), _x(ws[1] * groups, seed=2)
    compare_orders(torch, lambda x, w, b: F.conv_transpose3d(x, w, b, **kw),
                   lambda x, w, b: torch.nn.functional.conv_transpose3d(x, w, b, **kw), [x, w, b])


def test_conv3d_is_the_sum_over_its_windows_and_passes_finite_differences():
    x, w = _x(1, 2, 4, 3, 4), _x(2, 2, 2, 2, 3, seed=1)
    y = F.conv3d(x, w, stride=(1, 1, 2))
    want = np.zeros((1, 2, 3, 2, 1))
    for o in range(2):
        for i in range(3):
            for j in range(2):
                want[0, o, i, j, 0] = np.sum(x[0, :, i:i + 2, j:j + 2, 0:3] * w[o])
    _close(y, want, atol=1e-12)
    assert cr.gradcheck(lambda x, w: F.conv3d(x, w, padding=1, stride=2), x, w, modes=("rev", "fwd"), order=2)
    assert cr.gradcheck(lambda x, w: F.conv_transpose3d(x, w, stride=(2, 1, 1)), x, w, modes=("rev", "fwd"), order=2)


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv3d_layer_padding_modes_state_dict_and_repr_equal_torch(torch, mode):
    for shape, kw in (((2, 4, 4, 5, 4), {"padding": (1, 2, 1), "dilation": (2, 1, 1), "groups": 2}),
                      ((4, 4, 5, 4), {"padding": "same", "bias": False})):
        ref = torch.nn.Conv3d(4, 6, 3, padding_mode=mode, **kw).double()
        mine = nn.Conv3d(4, 6, 3, padding_mode=mode, dtype=np.float64, **kw)
        assert repr(mine) == repr(ref)
        assert {k: v.shape for k, v in mine.state_dict().items()} == {k: tuple(v.shape) for k, v in
                                                                       ref.state_dict().items()}
        mine.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
        x = _x(*shape)
        tx = torch.tensor(x, requires_grad=True)
        ty = ref(tx)
        _close(mine(x), ty.detach().numpy())
        (want,) = torch.autograd.grad(ty.sum(), tx)
        _close(cr.grad(lambda x: np.sum(mine(x)))(x), want.numpy())


@pytest.mark.oracle
def test_conv_transpose3d_layer_output_size_and_repr_equal_torch(torch):
    ref = torch.nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1, groups=2).double()
    mine = nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1, groups=2, dtype=np.float64)
    assert repr(mine) == repr(ref)
    mine.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    x = _x(1, 4, 2, 3, 2)
    for size in (None, (4, 6, 4), (1, 2, 3, 5, 4)):
        _close(mine(x, output_size=size), ref(torch.tensor(x), output_size=size).detach().numpy())
    bound = 1 / np.sqrt(1 * 27)  # PyTorch's fan_in: weight.shape[1] * kernel
    fresh = nn.ConvTranspose3d(4, 2, 3, groups=2, rng=0)
    assert fresh.weight.shape == (4, 1, 3, 3, 3) and np.abs(fresh.weight.data).max() <= bound


# -- pooling ---------------------------------------------------------------------------------------------------
POOLS = [
    ("max_pool3d", (2, 2, 5, 4, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("max_pool3d", (1, 2, 5, 6, 5), {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "padding": 1,
                                     "dilation": (2, 1, 1), "ceil_mode": True}),
    ("max_pool3d", (2, 4, 4, 3), {"kernel_size": 2}),  # unbatched
    ("avg_pool3d", (2, 2, 5, 4, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool3d", (1, 2, 5, 6, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                                     "count_include_pad": False}),
    ("avg_pool3d", (2, 4, 5, 3), {"kernel_size": (2, 3, 2), "stride": (1, 2, 1), "padding": 1,
                                  "divisor_override": 5}),
    ("adaptive_avg_pool3d", (2, 2, 5, 4, 6), {"output_size": (3, None, 4)}),
    ("adaptive_avg_pool3d", (2, 3, 4, 5), {"output_size": 2}),
    ("adaptive_max_pool3d", (2, 2, 5, 4, 6), {"output_size": (3, 4, 4)}),
    ("adaptive_max_pool3d", (2, 3, 4, 5), {"output_size": (7, None, 2)}),
]


@pytest.mark.oracle
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("name, shape, kw", POOLS, ids=[f"{p[0]}-{p[2]}" for p in POOLS])
def test_pool3d_values_gradients_second_order_and_indices_equal_torch(torch, name, shape, kw, ties):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, size=shape).astype(float) if ties else rng.normal(size=shape)  # ties: few values
    compare_orders(torch, lambda x: getattr(F, name)(x, **kw), lambda x: getattr(torch.nn.functional, name)(x, **kw),
                   [x])
    if "max" in name:
        _, want = getattr(torch.nn.functional, name)(torch.tensor(x), **kw, return_indices=True)
        _, got = getattr(F, name)(x, **kw, return_indices=True)
        np.testing.assert_array_equal(got, want.numpy())
        _, got = getattr(F, f"{name}_with_indices")(x, **kw)
        np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.oracle
@pytest.mark.parametrize("p, kw", [(2.0, {"kernel_size": 2}), (3.0, {"kernel_size": (2, 3, 2), "stride": (1, 2, 1),
                                                                      "ceil_mode": True})])
def test_lp_pool3d_values_gradients_and_second_order_equal_torch(torch, p, kw):
    x = np.abs(_x(2, 2, 4, 5, 4)) + 0.1
    compare_orders(torch, lambda x: F.lp_pool3d(x, p, **kw), lambda x: torch.nn.functional.lp_pool3d(x, p, **kw), [x])


@pytest.mark.oracle
@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": 2, "stride": 1}])  # (overlapping windows: a maximum twice)
def test_max_unpool3d_undoes_max_pool3d_as_torch(torch, kw):
    x = _x(2, 2, 4, 5, 4)
    y, idx = F.max_pool3d(x, **kw, return_indices=True)
    ty, t_idx = torch.nn.functional.max_pool3d(torch.tensor(x), **kw, return_indices=True)
    pool_kw = {k: v for k, v in kw.items() if k != "dilation"}
    want = torch.nn.functional.max_unpool3d(ty, t_idx, **pool_kw, output_size=x.shape[-3:])
    _close(F.max_unpool3d(y, idx, **pool_kw, output_size=x.shape[-3:]), want.numpy())
    layer, ref = nn.MaxUnpool3d(**pool_kw), torch.nn.MaxUnpool3d(**pool_kw)
    assert repr(layer) == repr(ref)
    _close(layer(y, idx, output_size=x.shape), ref(ty, t_idx, output_size=x.shape).numpy())
    if "stride" not in kw:  # (overlapping windows may name a maximum twice: PyTorch's gradient reaches each copy)
        up = _x(*want.shape, seed=4)
        tyg = ty.clone().requires_grad_(True)
        (t_g,) = torch.autograd.grad((torch.nn.functional.max_unpool3d(tyg, t_idx, **pool_kw, output_size=x.shape[-3:])
                                      * torch.tensor(up)).sum(), tyg)
        got = cr.grad(lambda v: np.sum(F.max_unpool3d(v, idx, **pool_kw, output_size=x.shape[-3:]) * up))(y)
        _close(got, t_g.numpy())


def test_max_pool3d_sends_the_gradient_of_tied_entries_to_the_first_in_row_major_order():
    x = np.zeros((1, 1, 2, 2, 2))
    x[0, 0, 1, 0, 1] = x[0, 0, 1, 1, 0] = 1.0  # two maxima: (1, 0, 1) comes first
    g = cr.grad(lambda x: np.sum(F.max_pool3d(x, 2)))(x)
    assert g[0, 0, 1, 0, 1] == 1.0 and g.sum() == 1.0
    assert int(F.max_pool3d(x, 2, return_indices=True)[1].item()) == 5


def test_3d_pools_pass_finite_differences_to_second_order():
    x = np.abs(_x(1, 2, 3, 4, 3)) + 0.5
    for fn in (lambda x: F.avg_pool3d(x, 2, 1, 1, ceil_mode=True, count_include_pad=False),
               lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
               lambda x: F.lp_pool3d(x, 3.0, (2, 2, 1)),
               lambda x: F.max_pool3d(x, 2, 1),
               lambda x: F.adaptive_max_pool3d(x, 2)):
        assert cr.gradcheck(fn, x, modes=("rev", "fwd"), order=2)


@pytest.mark.oracle
def test_pool3d_layers_print_and_compute_like_torch(torch):
    x = _x(2, 2, 5, 4, 5)
    for cls, args, kw in (("MaxPool3d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}),
                          ("AvgPool3d", (2,), {"padding": 1, "count_include_pad": False, "divisor_override": None}),
                          ("AvgPool3d", ((2, 3, 2),), {"stride": 1, "divisor_override": 4}),
                          ("AdaptiveAvgPool3d", ((2, None, 3),), {}),
                          ("AdaptiveMaxPool3d", (2,), {}),
                          ("LPPool3d", (2.0, 2), {"stride": 1})):
        mine, ref = getattr(nn, cls)(*args, **kw), getattr(torch.nn, cls)(*args, **kw)
        assert repr(mine) == repr(ref)
        _close(mine(np.abs(x)), ref(torch.tensor(np.abs(x))).numpy())
    y, idx = nn.MaxPool3d(2, return_indices=True)(x)
    ty, t_idx = torch.nn.MaxPool3d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(idx, t_idx.numpy())
    y, idx = nn.AdaptiveMaxPool3d((3, 2, 2), return_indices=True)(x)
    ty, t_idx = torch.nn.AdaptiveMaxPool3d((3, 2, 2), return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(idx, t_idx.numpy())


# -- batch and instance norm ---------------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_and_instance_norm_of_5d_inputs_equal_torch_to_second_order(torch, training):
    x, w, b = _x(2, 3, 2, 3, 2), _x(3, seed=1), _x(3, seed=2)
    mean, var = _x(3, seed=3), np.abs(_x(3, seed=4)) + 0.5
    compare_orders(torch, lambda x, w, b: F.batch_norm(x, mean.copy(), var.copy(), w, b, training, 0.3, 1e-3),
                   lambda x, w, b: torch.nn.functional.batch_norm(x, torch.tensor(mean), torch.tensor(var), w, b,
                                                                  training, 0.3, 1e-3), [x, w, b])
    compare_orders(torch, lambda x, w, b: F.instance_norm(x, mean.copy(), var.copy(), w, b, training, 0.3, 1e-3),
                   lambda x, w, b: torch.nn.functional.instance_norm(x, torch.tensor(mean), torch.tensor(var), w, b,
                                                                     training, 0.3, 1e-3), [x, w, b])


@pytest.mark.oracle
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("affine, track", [(True, True), (False, True), (True, False)])
def test_batchnorm3d_and_instancenorm3d_train_and_eval_like_torch(torch, momentum, affine, track):
    rng = np.random.default_rng(5)
    for cls, shape in (("BatchNorm3d", (3, 3, 2, 3, 2)), ("InstanceNorm3d", (2, 3, 3, 2, 3)),
                       ("InstanceNorm3d", (3, 2, 3, 2))):
        mine = getattr(nn, cls)(3, momentum=momentum, affine=affine, track_running_stats=track, dtype=np.float64)
        ref = getattr(torch.nn, cls)(3, momentum=momentum, affine=affine, track_running_stats=track).double()
        assert repr(mine) == repr(ref)
        if affine:
            w = rng.normal(size=3)
            mine.weight.data[...] = w
            ref.weight.data[...] = torch.tensor(w)
        assert sorted(mine.state_dict()) == sorted(ref.state_dict())
        for _ in range(3):
            x = rng.normal(size=shape) * 2 + 1
            tx = torch.tensor(x, requires_grad=True)
            ty = ref(tx)
            cx = cr.Tensor(x, requires_grad=True)
            cy = mine(cx)  # (one forward each: a training forward updates the running statistics)
            _close(cy, ty.detach().numpy(), atol=1e-9)
            (want,) = torch.autograd.grad((ty**3).sum(), tx)
            (got,) = cr.autograd.grad((cy**3).sum(), [cx])
            _close(got, want.numpy(), rtol=1e-8, atol=1e-8)
        for key, value in ref.state_dict().items():
            _close(mine.state_dict()[key], value.numpy(), atol=1e-12)
        mine.eval()
        ref.eval()
        x = rng.normal(size=shape)
        _close(mine(x), ref(torch.tensor(x)).detach().numpy(), atol=1e-9)


def test_batchnorm3d_passes_finite_differences_to_second_order():
    bn = nn.BatchNorm3d(2, dtype=np.float64)
    assert cr.gradcheck(lambda x: F.batch_norm(x, None, None, training=True), _x(2, 2, 2, 2, 1),
                        modes=("rev", "fwd"), order=2)
    assert cr.gradcheck(lambda x: F.instance_norm(x), _x(1, 2, 2, 2, 2), modes=("rev", "fwd"), order=2)
    assert bn(_x(2, 2, 2, 2, 2)).shape == (2, 2, 2, 2, 2)


# -- resampling volumes ---------------------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("kw", [{"size": (4, 6, 3)}, {"scale_factor": 2}, {"scale_factor": (1.5, 2, 0.5),
                                                                          "mode": "nearest-exact"},
                                {"size": (5, 3, 7), "mode": "trilinear", "align_corners": True},
                                {"scale_factor": 1.7, "mode": "trilinear"}, {"size": (2, 3, 2), "mode": "area"}],
                         ids=str)
def test_interpolate_of_volumes_equals_torch_with_gradients(torch, kw):
    compare_orders(torch, lambda x: F.interpolate(x, **kw), lambda x: torch.nn.functional.interpolate(x, **kw),
                   [_x(2, 2, 3, 4, 5)], second=False)  # (linear in x: no second order)
    up = nn.Upsample(**kw)
    _close(up(_x(1, 2, 3, 4, 5)), torch.nn.Upsample(**kw)(torch.tensor(_x(1, 2, 3, 4, 5))).numpy())


def test_interpolate_refuses_a_mode_of_another_dimension():
    with pytest.raises(ValueError, match=r"mode 'trilinear' takes a 5-D input"):
        F.interpolate(np.ones((1, 1, 4, 4)), scale_factor=2, mode="trilinear")
    with pytest.raises(ValueError, match=r"mode 'bilinear' takes a 4-D input"):
        F.interpolate(np.ones((1, 1, 2, 4, 4)), scale_factor=2, mode="bilinear")


# -- a small 3-D network ------------------------------------------------------------------------------------------
@pytest.mark.oracle
def test_a_small_3d_cnn_trains_three_steps_like_torch_from_its_state_dict(torch):
    from chainrule import optim

    def build(lib, **kw):
        return lib.Sequential(lib.Conv3d(2, 4, 3, padding=1, padding_mode="replicate", **kw), lib.BatchNorm3d(4, **kw),
                              lib.ReLU(), lib.MaxPool3d(2), lib.ConvTranspose3d(4, 3, 2, stride=2, **kw),
                              lib.InstanceNorm3d(3, affine=True, **kw), lib.AvgPool3d(2, padding=1),
                              lib.AdaptiveAvgPool3d(1), lib.Flatten(), lib.Linear(3, 2, **kw))

    torch.manual_seed(0)
    ref = build(torch.nn, dtype=torch.float64)
    mine = build(nn, dtype=np.float64)
    mine.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    t_opt, opt = torch.optim.SGD(ref.parameters(), lr=0.1), optim.SGD(mine.parameters(), lr=0.1)
    rng = np.random.default_rng(6)
    for _ in range(3):
        x, y = rng.normal(size=(3, 2, 4, 4, 4)), rng.integers(0, 2, size=3)
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


# -- the strict device double ----------------------------------------------------------------------------------
def on_the_device_double(cases, x):
    """Each ``case(x, m)`` (``m`` puts a constant where x is) gives on the strict device double the CPU's value and
    the CPU's gradient of its squared sum, and keeps both on the device."""
    from device_setup import backend, host, on_device, to_device

    backend()
    for k, fn in enumerate(cases):
        xc = cr.Tensor(x, requires_grad=True)
        want = fn(xc, cr.Tensor)
        (want_g,) = cr.autograd.grad((want * want).sum(), [xc])
        xd = cr.Tensor(to_device(x), requires_grad=True)
        got = fn(xd, lambda c: cr.Tensor(to_device(c)))
        assert on_device(got), k
        np.testing.assert_allclose(host(got), want.numpy(), rtol=1e-12, atol=1e-12, err_msg=str(k))
        (g,) = cr.autograd.grad((got * got).sum(), [xd])
        assert on_device(g), k
        np.testing.assert_allclose(host(g), want_g.numpy(), rtol=1e-12, atol=1e-12, err_msg=str(k))


def test_conv3d_and_conv_transpose3d_run_on_the_device_double_with_the_cpus_values():
    w = _x(3, 2, 2, 2, 2, seed=1)
    on_the_device_double([lambda a, m: F.conv3d(a, m(w), stride=2, padding=1),
                          lambda a, m: F.conv_transpose3d(a, m(w[:2]), stride=(1, 2, 1))], _x(1, 2, 3, 4, 3))


def test_3d_pools_run_on_the_device_double_with_the_cpus_values():
    on_the_device_double([lambda a, m: F.max_pool3d(a, 2, 1, ceil_mode=True),
                          lambda a, m: F.avg_pool3d(a, 3, 2, 1, count_include_pad=False),
                          lambda a, m: F.avg_pool3d(a, 2, divisor_override=3),
                          lambda a, m: F.adaptive_avg_pool3d(a, (2, 3, 2)),
                          lambda a, m: F.adaptive_max_pool3d(a, (2, 3, 2)),
                          lambda a, m: F.lp_pool3d(a * a + 0.1, 2.0, 2),
                          lambda a, m: F.max_unpool3d(*F.max_pool3d(a, 2, return_indices=True), 2),
                          lambda a, m: nn.AvgPool3d(2, 1)(a)],
                         _x(2, 2, 4, 4, 4))


# -- errors ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, message", [
    (lambda: F.conv3d(np.ones((2, 4, 4, 4)), np.ones((2, 1, 2, 2))), r"conv3d: weight must be 5-D"),
    (lambda: F.conv3d(np.ones((4, 4, 4)), np.ones((2, 1, 2, 2, 2))), r"conv3d: expected a 4-D .* or 5-D"),
    (lambda: F.conv3d(np.ones((1, 3, 4, 4, 4)), np.ones((2, 2, 2, 2, 2))), "input with 3 channels does not fit"),
    (lambda: F.conv3d(np.ones((1, 1, 4, 4, 4)), np.ones((2, 1, 2, 2, 2)), stride=(1, 2)),
     r"stride must be an int or a tuple of 3 ints"),
    (lambda: F.conv_transpose3d(np.ones((1, 2, 2, 2, 2)), np.ones((2, 1, 2, 2, 2)), output_padding=1),
     "output_padding .* must be smaller than the stride"),
    (lambda: nn.Conv3d(3, 4, 3, groups=2), r"divisible by groups \(2\)"),
    (lambda: nn.Conv3d(3, 4, 3, stride=2, padding="same"), "padding='same' is not supported for strided"),
    (lambda: nn.ConvTranspose3d(3, 4, 3, padding_mode="reflect"), "only padding_mode='zeros'"),
    (lambda: nn.Conv3d(1, 1, 2)(np.ones((1, 4, 4))), r"conv3d: expected a 4-D .* or 5-D"),
    (lambda: F.max_pool3d(np.ones((4, 4, 4)), 2), r"max_pool3d: expected a 4-D .* or 5-D"),
    (lambda: F.max_pool3d(np.ones((1, 4, 4, 4)), 2, padding=2), "padding should be at most half of the kernel"),
    (lambda: F.avg_pool3d(np.ones((1, 1, 4, 4, 4, 4)), 2), r"avg_pool3d: expected a 4-D .* or 5-D"),
    (lambda: F.avg_pool3d(np.ones((1, 4, 4, 4)), 2, divisor_override=0), "divisor_override must be a non-zero"),
    (lambda: F.avg_pool3d(np.ones((1, 1, 4, 4)), 2), "input of spatial shape .* is too small"),
    (lambda: F.adaptive_avg_pool3d(np.ones((4, 4)), 2), r"adaptive_avg_pool3d: expected a 4-D .* or 5-D"),
    (lambda: F.adaptive_avg_pool3d(np.ones((1, 4, 4, 4)), (2, 2)), "output_size must be an int or a tuple of 3"),
    (lambda: F.adaptive_max_pool3d(np.ones((4, 4, 4)), 2), "adaptive_max_pool3d: expects a 4-d .* or 5-d input"),
    (lambda: F.lp_pool3d(np.ones((1, 4, 4, 4)), 2, (2, 2)), r"lp_pool3d: kernel_size must be an int or a tuple of 3"),
    (lambda: F.max_unpool3d(np.ones((1, 2, 2, 2)), np.zeros((1, 2, 2), int), 2), "max_unpool3d: expects a 4-d"),
    (lambda: F.max_unpool3d(np.ones((1, 1, 1, 1)), np.full((1, 1, 1, 1), 8), 2), "found an invalid max index"),
    (lambda: nn.BatchNorm3d(3)(np.ones((2, 3, 4, 4))), r"BatchNorm3d: expected 5D input \(got 4D input\)"),
    (lambda: nn.InstanceNorm3d(3)(np.ones((3, 4, 4))), r"InstanceNorm3d: expected 4D \(unbatched\) or 5D"),
    (lambda: nn.InstanceNorm3d(3, affine=True)(np.ones((1, 2, 4, 4, 4))), "expected input with 3 channels"),
])
def test_3d_errors_name_the_function_the_argument_and_the_fix(call, message):
    with pytest.raises(ValueError, match=message):
        call()
