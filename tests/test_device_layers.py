"""Layers built with PyTorch's ``device=`` on the device under test (the strict double of CuPy, or
``CHAINRULE_TEST_DEVICE=cuda``): each equals the same layer built on the CPU and moved with ``.to(device)`` (same
seed), its parameters and buffers are on the device, and its forward and backward run there with the CPU's
values (the double refuses every hidden host copy)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.core.device import DeviceError
from device_setup import NAME, backend, host, on_device, to_device

TOL = 1e-9 if NAME == "strict" else 1e-4
F64 = np.float64


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _tokens(*shape):
    return np.random.default_rng(1).integers(0, 10, shape)


TINY_GPT = nn.GPTConfig(vocab_size=10, context_length=4, d_model=8, n_heads=2, n_layers=1)

# every layer that takes device=: how to build it (with device=d) and its inputs (host arrays)
LAYERS = {
    "Linear": (lambda d: nn.Linear(3, 4, dtype=F64, device=d), lambda: [_x(2, 3)]),
    "Embedding": (lambda d: nn.Embedding(10, 4, dtype=F64, device=d), lambda: [_tokens(2, 3)]),
    "LayerNorm": (lambda d: nn.LayerNorm(4, dtype=F64, device=d), lambda: [_x(2, 4)]),
    "RMSNorm": (lambda d: nn.RMSNorm(4, dtype=F64, device=d), lambda: [_x(2, 4)]),
    "GroupNorm": (lambda d: nn.GroupNorm(2, 4, dtype=F64, device=d), lambda: [_x(2, 4, 3)]),
    "BatchNorm1d": (lambda d: nn.BatchNorm1d(3, dtype=F64, device=d), lambda: [_x(4, 3)]),
    "BatchNorm2d": (lambda d: nn.BatchNorm2d(3, dtype=F64, device=d), lambda: [_x(2, 3, 2, 2)]),
    "InstanceNorm1d": (lambda d: nn.InstanceNorm1d(3, affine=True, track_running_stats=True, dtype=F64, device=d),
                       lambda: [_x(2, 3, 5)]),
    "InstanceNorm2d": (lambda d: nn.InstanceNorm2d(3, affine=True, dtype=F64, device=d), lambda: [_x(2, 3, 4, 4)]),
    "Conv1d": (lambda d: nn.Conv1d(2, 3, 3, padding=1, dtype=F64, device=d), lambda: [_x(2, 2, 5)]),
    "Conv2d": (lambda d: nn.Conv2d(2, 3, 3, stride=2, dtype=F64, device=d), lambda: [_x(1, 2, 5, 5)]),
    "ConvTranspose1d": (lambda d: nn.ConvTranspose1d(2, 3, 3, dtype=F64, device=d), lambda: [_x(2, 2, 5)]),
    "ConvTranspose2d": (lambda d: nn.ConvTranspose2d(2, 3, 2, stride=2, dtype=F64, device=d),
                        lambda: [_x(1, 2, 3, 3)]),
    "RNN": (lambda d: nn.RNN(3, 4, num_layers=2, dtype=F64, device=d), lambda: [_x(5, 2, 3)]),
    "LSTM": (lambda d: nn.LSTM(3, 4, bidirectional=True, dtype=F64, device=d), lambda: [_x(5, 2, 3)]),
    "GRU": (lambda d: nn.GRU(3, 4, batch_first=True, dtype=F64, device=d), lambda: [_x(2, 5, 3)]),
    "RNNCell": (lambda d: nn.RNNCell(3, 4, dtype=F64, device=d), lambda: [_x(2, 3)]),
    "LSTMCell": (lambda d: nn.LSTMCell(3, 4, dtype=F64, device=d), lambda: [_x(2, 3)]),
    "GRUCell": (lambda d: nn.GRUCell(3, 4, dtype=F64, device=d), lambda: [_x(2, 3)]),
    "MultiheadAttention": (lambda d: nn.MultiheadAttention(8, 2, dtype=F64, device=d),
                           lambda: [_x(5, 2, 8), _x(4, 2, 8, seed=1), _x(4, 2, 8, seed=2)]),
    "TransformerEncoderLayer": (lambda d: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=F64, device=d),
                                lambda: [_x(5, 2, 8)]),
    "TransformerDecoderLayer": (lambda d: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True,
                                                                     dtype=F64, device=d),
                                lambda: [_x(5, 2, 8), _x(3, 2, 8, seed=1)]),
    "Transformer": (lambda d: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, dtype=F64, device=d),
                    lambda: [_x(5, 2, 8), _x(3, 2, 8, seed=1)]),
    "MLP": (lambda d: nn.MLP(3, [4, 2], dtype=F64, device=d), lambda: [_x(2, 3)]),
    "CausalSelfAttention": (lambda d: nn.CausalSelfAttention(8, 2, dtype=F64, device=d), lambda: [_x(1, 3, 8)]),
    "TransformerBlock": (lambda d: nn.TransformerBlock(8, 2, dtype=F64, device=d), lambda: [_x(1, 3, 8)]),
    "GPT": (lambda d: nn.GPT(TINY_GPT, seed=0, dtype=F64, device=d), lambda: [_tokens(2, 4)]),
    "PReLU": (lambda d: nn.PReLU(3, dtype=F64, device=d), lambda: [_x(2, 3, 4)]),
    "EmbeddingBag": (lambda d: nn.EmbeddingBag(10, 3, mode="max", dtype=F64, device=d), lambda: [_tokens(4, 3)]),
    "Bilinear": (lambda d: nn.Bilinear(3, 2, 4, dtype=F64, device=d), lambda: [_x(5, 3), _x(5, 2, seed=1)]),
    "Conv3d": (lambda d: nn.Conv3d(2, 3, 2, padding=1, padding_mode="circular", dtype=F64, device=d),
               lambda: [_x(1, 2, 3, 3, 2)]),
    "ConvTranspose3d": (lambda d: nn.ConvTranspose3d(2, 3, 2, stride=2, dtype=F64, device=d),
                        lambda: [_x(1, 2, 2, 2, 2)]),
    "BatchNorm3d": (lambda d: nn.BatchNorm3d(3, dtype=F64, device=d), lambda: [_x(2, 3, 2, 2, 2)]),
    "InstanceNorm3d": (lambda d: nn.InstanceNorm3d(3, affine=True, track_running_stats=True, dtype=F64, device=d),
                       lambda: [_x(2, 3, 2, 3, 2)]),
    "LinearCrossEntropyLoss": (lambda d: nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=True, dtype=F64,
                                                                   device=d),
                               lambda: [_x(5, 3), _tokens(5, 2) % 4]),
}


@pytest.fixture(autouse=True)
def _device():
    backend()


def test_every_layer_that_takes_device_is_checked_here():
    takes = sorted(name for name in dir(nn) if inspect.isclass(getattr(nn, name))
                   and issubclass(getattr(nn, name), nn.Module)
                   and not getattr(nn, name).__name__.startswith("_")  # (nn.RNNBase: a base, not a layer)
                   and "device" in inspect.signature(getattr(nn, name).__init__).parameters)
    assert takes == sorted(LAYERS)


def _states(model):
    return {**dict(model.named_parameters()), **dict(model.named_buffers())}


def _loss(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = None
    for k, o in enumerate(outs):
        if isinstance(o, tuple):  # an LSTM's (h, c)
            o = o[0]
        if isinstance(o, cr.Tensor) and o.dtype.kind == "f":
            term = (o * o).sum() * (k + 1)
            total = term if total is None else total + term
    return total


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_layer_built_with_device_is_the_cpu_layer_moved_and_trains_there(name):
    make, inputs = LAYERS[name]
    nn.manual_seed(3)
    built = make(NAME)
    nn.manual_seed(3)
    moved = make(None).to(NAME)
    nn.manual_seed(3)
    cpu = make(None)
    states = _states(built)
    assert states and list(states) == list(_states(moved))
    for key, v in states.items():
        assert on_device(v), f"{name}.{key} is not on {NAME}"
        np.testing.assert_array_equal(host(v), host(_states(moved)[key]))
    for p in built.parameters():
        assert p.device == NAME
    xs = inputs()
    got = built(*[to_device(x) for x in xs])
    want = cpu(*xs)
    loss, cpu_loss = _loss(got), _loss(want)
    assert on_device(loss)
    np.testing.assert_allclose(host(loss), host(cpu_loss), rtol=TOL, atol=TOL)
    loss.backward()
    cpu_loss.backward()
    for (key, p), q in zip(built.named_parameters(), cpu.parameters()):
        assert p.grad is not None and on_device(p.grad), f"{name}.{key}'s gradient is not on {NAME}"
        np.testing.assert_allclose(host(p.grad), host(q.grad), rtol=TOL, atol=TOL, err_msg=f"{name}.{key}")
    for key, b in built.named_buffers():
        assert on_device(b), f"{name}.{key} left {NAME} in the forward"


@pytest.mark.parametrize("name", ["Linear", "TransformerEncoderLayer", "GPT", "MLP"])
def test_an_unknown_device_is_refused_naming_the_layer(name):
    with pytest.raises(DeviceError, match=rf"{name}: device 'nowhere' is not available"):
        LAYERS[name][0]("nowhere")


def test_initialisers_fill_a_device_parameter_with_the_cpus_values():
    on, off = nn.Linear(3, 4, device=NAME), nn.Linear(3, 4)
    for init in (nn.init.xavier_uniform_, nn.init.kaiming_normal_, nn.init.orthogonal_, nn.init.trunc_normal_):
        init(on.weight, rng=5) if init is not nn.init.trunc_normal_ else init(on.weight, std=0.1, rng=5)
        init(off.weight, rng=5) if init is not nn.init.trunc_normal_ else init(off.weight, std=0.1, rng=5)
        assert on_device(on.weight)
        np.testing.assert_array_equal(host(on.weight), host(off.weight))
    nn.init.zeros_(on.bias)
    assert on_device(on.bias) and not host(on.bias).any()


def test_the_causal_mask_is_made_on_the_named_device():
    mask = nn.Transformer.generate_square_subsequent_mask(3, device=NAME)
    assert on_device(mask)
    np.testing.assert_array_equal(host(mask), nn.Transformer.generate_square_subsequent_mask(3))
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, device=NAME)
    out = layer(cr.randn(3, 2, 8, device=NAME), src_mask=mask)
    assert on_device(out)
