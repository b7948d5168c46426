"""PyTorch's lazy layers, nn.Buffer and the recurrent bases' names (chainrule.nn.lazy, nn.parameter.Buffer)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

RNG = np.random.default_rng(2)

# lazy layer, its arguments, an input, the layer it becomes and the size it reads
CASES = [
    ("LazyLinear", (3,), {}, (4, 5), "Linear", {"in_features": 5}),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 6, 7), "Conv1d", {"in_channels": 6}),
    ("LazyConv1d", (4, 3), {}, (6, 7), "Conv1d", {"in_channels": 6}),  # one example: channels first
    ("LazyConv2d", (4, 3), {"groups": 2, "bias": False}, (1, 6, 5, 5), "Conv2d", {"in_channels": 6}),
    ("LazyConvTranspose1d", (3, 2), {"stride": 2}, (2, 4, 5), "ConvTranspose1d", {"in_channels": 4}),
    ("LazyConvTranspose2d", (3, 2), {}, (2, 4, 5, 5), "ConvTranspose2d", {"in_channels": 4}),
    ("LazyBatchNorm1d", (), {"momentum": 0.2}, (8, 5), "BatchNorm1d", {"num_features": 5}),
    ("LazyBatchNorm1d", (), {}, (8, 5, 3), "BatchNorm1d", {"num_features": 5}),
    ("LazyBatchNorm2d", (), {}, (4, 3, 5, 5), "BatchNorm2d", {"num_features": 3}),
    ("LazyInstanceNorm1d", (), {}, (2, 5, 7), "InstanceNorm1d", {"num_features": 5, "affine": True}),
    ("LazyInstanceNorm1d", (1e-3, 0.1, False), {}, (3, 5, 7), "InstanceNorm1d", {"num_features": 5}),
    ("LazyInstanceNorm2d", (), {"track_running_stats": False}, (2, 3, 4, 4), "InstanceNorm2d",
     {"num_features": 3}),
    ("LazyConv3d", (2, 2), {"padding": 1}, (1, 3, 3, 4, 3), "Conv3d", {"in_channels": 3}),
    ("LazyConvTranspose3d", (2, 2), {"stride": 2}, (1, 3, 2, 2, 2), "ConvTranspose3d", {"in_channels": 3}),
    ("LazyBatchNorm3d", (), {}, (2, 3, 2, 2, 2), "BatchNorm3d", {"num_features": 3}),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 3, 2), "InstanceNorm3d", {"num_features": 3, "affine": True}),
]
IDS = [f"{c[0]}-{len(c[3])}d" for c in CASES]


def _torch():
    return pytest.importorskip("torch", reason="torch is not installed")


@pytest.mark.oracle
@pytest.mark.parametrize("name, args, kwargs, shape, becomes, size", CASES, ids=IDS)
def test_a_lazy_layer_becomes_pytorchs_layer_at_its_first_input(name, args, kwargs, shape, becomes, size):
    torch = _torch()
    layer, tlayer = getattr(nn, name)(*args, dtype=np.float64, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    placeholders = dict(layer.named_parameters())
    assert layer.has_uninitialized_params() and isinstance(layer, getattr(nn, becomes))
    assert all(type(p).__name__ == "UninitializedParameter" for p in placeholders.values())
    assert [n for n, _ in layer.named_parameters()] == [n for n, _ in tlayer.named_parameters()]
    x = RNG.normal(size=shape)
    out = layer(cr.tensor(x))
    tout = tlayer.double()(torch.tensor(x))
    assert type(layer).__name__ == becomes == type(tlayer).__name__
    assert all(getattr(layer, k) == v for k, v in size.items())
    assert repr(layer) == repr(tlayer)
    assert sorted(layer.state_dict()) == sorted(tlayer.state_dict())
    for (n, p), (tn, tp) in zip(layer.named_parameters(), tlayer.named_parameters()):
        assert n == tn and p.shape == tuple(tp.shape) and p is placeholders[n] and type(p) is nn.Parameter
    with torch.no_grad():  # the same weights: the same output
        for n, tp in tlayer.named_parameters():
            tp.copy_(torch.tensor(dict(layer.named_parameters())[n].numpy()))
        tout = tlayer(torch.tensor(x))
    np.testing.assert_allclose(layer(cr.tensor(x)).numpy(), tout.numpy(), rtol=1e-10, atol=1e-12)
    assert out.shape == tuple(tout.shape)


def test_an_optimiser_built_before_the_first_forward_raises_and_after_it_trains():
    model = nn.Sequential(nn.LazyLinear(4), nn.Tanh(), nn.LazyLinear(1))
    with pytest.raises(ValueError, match=r"SGD: parameter 0 is an UninitializedParameter of a lazy layer.*call the "
                                         r"model once on an example input"):
        cr.optim.SGD(model.parameters(), lr=0.1)
    x = cr.tensor(RNG.normal(size=(8, 3)).astype(np.float32))
    model(x)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    before = float(((model(x) - 1.0) ** 2).mean())
    for _ in range(20):
        opt.zero_grad()
        loss = ((model(x) - 1.0) ** 2).mean()
        loss.backward()
        opt.step()
    assert float(loss) < before


def test_the_default_initialisation_is_drawn_when_the_layer_is_sized():
    cr.manual_seed(5)
    lazy = nn.LazyLinear(3)
    lazy(np.ones((2, 4), dtype=np.float32))
    cr.manual_seed(5)
    eager = nn.Linear(4, 3)
    np.testing.assert_array_equal(lazy.weight.numpy(), eager.weight.numpy())
    np.testing.assert_array_equal(lazy.bias.numpy(), eager.bias.numpy())


def test_uninitialized_parameter_materializes_in_place():
    p = nn.UninitializedParameter(dtype=np.float64)
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == np.float64
    assert repr(nn.UninitializedBuffer()) == "<UninitializedBuffer>"


@pytest.mark.oracle
def test_buffer_registers_when_assigned_as_pytorchs():
    torch = _torch()

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Buffer(np.array([2.0, 3.0]))
            self.cache = nn.Buffer(np.array([1.0]), persistent=False)

        def forward(self, x):
            return x * self.scale

    class TScaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Buffer(torch.tensor([2.0, 3.0]))
            self.cache = torch.nn.Buffer(torch.tensor([1.0]), persistent=False)

    m, tm = Scaled(), TScaled()
    assert list(m.state_dict()) == list(tm.state_dict()) == ["scale"]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in tm.named_buffers()] == ["scale", "cache"]
    assert list(m.parameters()) == [] and m(cr.tensor([1.0, 1.0])).tolist() == [2.0, 3.0]


def test_recurrent_bases_have_pytorchs_names():
    assert isinstance(nn.LSTM(2, 3), nn.RNNBase) and isinstance(nn.GRU(2, 3), nn.RNNBase)
    assert isinstance(nn.LSTMCell(2, 3), nn.RNNCellBase) and isinstance(nn.RNNCell(2, 3), nn.RNNCellBase)
