"""nn.Module and the layers: registration, traversal, modes, state dicts and their errors,
dtypes, initialisers, and the layers' outputs against PyTorch's modules with the same weights."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor, nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4, rng=0), nn.ReLU(), nn.Dropout(0.5, rng=1))
        self.head = nn.Linear(4, 2, rng=2)
        self.scale = nn.Parameter(np.ones(2))
        self.register_buffer("count", np.zeros(1))
        self.note = "not a parameter"

    def forward(self, x):
        return self.head(self.body(x)) * self.scale


def test_parameters_are_found_in_registration_order():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "body.0.weight", "body.0.bias", "head.weight", "head.bias"]
    assert len(list(net.parameters())) == 5
    assert net.num_parameters() == 2 + 12 + 4 + 8 + 2
    assert [n for n, _ in net.named_modules()] == ["", "body", "body.0", "body.1", "body.2", "head"]
    assert [n for n, _ in net.named_children()] == ["body", "head"]
    assert list(net.state_dict()) == names[:1] + ["count"] + names[1:]


def test_shared_parameter_counted_once_and_reassignment_replaces():
    tied = nn.Module()
    tied.a = nn.Linear(2, 2, rng=0)
    tied.b = nn.Linear(2, 2, rng=1)
    tied.b.weight = tied.a.weight
    assert len(list(tied.parameters())) == 3
    assert "b.weight" in tied.state_dict()
    tied.a = nn.Identity()
    assert [n for n, _ in tied.named_parameters()] == ["b.weight", "b.bias"]
    del tied.b
    assert list(tied.parameters()) == []


def test_assigning_wrong_types_is_a_clear_error():
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign a ndarray to parameter 'weight'.*nn.Parameter"):
        lin.weight = np.zeros((2, 2))
    lin.bias = None
    assert [n for n, _ in lin.named_parameters()] == ["weight"]

    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.zeros(1))

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first in Forgot.__init__"):
        Forgot()
    with pytest.raises(NotImplementedError, match="define forward"):
        nn.Module()(1)


def test_train_eval_and_zero_grad():
    net = Net()
    assert net.training and net.body[2].training
    net.eval()
    assert not net.training and not net.body[2].training
    x = np.ones((4, 3), dtype=np.float32)
    np.testing.assert_array_equal(net(x).data, net(x).data)  # no dropout in eval
    net.train()
    out = net(x)
    out.sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    out = net(x)
    out.sum().backward()
    net.zero_grad(set_to_none=False)
    assert all((p.grad.data == 0).all() for p in net.parameters())


def test_state_dict_round_trip_and_copies():
    a, b = Net(), Net()
    for p in b.parameters():
        p.data[...] = 7
    state = a.state_dict()
    state["count"] = np.array([3.0])
    result = b.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        np.testing.assert_array_equal(p.data, q.data, err_msg=n)
    assert b.count[0] == 3.0
    saved = copy.deepcopy(state)
    saved["head.weight"][...] = 99  # a deep copy: the model is unchanged
    assert not (a.head.weight.data == 99).any()
    with cr.no_grad():
        state["head.weight"].copy_(np.full((2, 4), 5.0))  # the state's Tensors share the parameters' memory
    assert (a.head.weight.data == 5).all()


def test_load_state_dict_errors_name_keys_and_shapes():
    net = Net()
    state = net.state_dict()
    bad = dict(state)
    bad["head.weight"] = np.zeros((3, 4))
    with pytest.raises(nn.StateDictError, match=r"parameter 'head.weight' has shape \(2, 4\) in the model but shape "
                                                 r"\(3, 4\) in the state dict"):
        net.load_state_dict(bad)
    missing = {k: v for k, v in state.items() if k != "body.0.bias"}
    with pytest.raises(nn.StateDictError, match=r"missing key\(s\) \['body.0.bias'\]"):
        net.load_state_dict(missing)
    extra = dict(state, **{"tail.weight": np.zeros(1)})
    with pytest.raises(nn.StateDictError, match=r"unexpected key\(s\) \['tail.weight'\]"):
        net.load_state_dict(extra)
    before = net.head.weight.data.copy()
    partial = {"head.weight": np.full((2, 4), 5.0), "junk": np.zeros(1)}
    result = net.load_state_dict(partial, strict=False)
    assert result.unexpected_keys == ["junk"] and "head.bias" in result.missing_keys
    assert (net.head.weight.data == 5).all() and not (before == 5).all()
    # nothing changes when an error is raised part way
    bad2 = dict(state, **{"head.bias": np.zeros(3)})
    bad2["body.0.weight"] = np.full((4, 3), 42.0)
    with pytest.raises(nn.StateDictError):
        net.load_state_dict(bad2)
    assert not (net.body[0].weight.data == 42).any()


def test_load_bumps_version_so_stale_graphs_fail():
    lin = nn.Linear(2, 1, rng=0)
    out = lin(np.ones((1, 2))).sum()
    lin.load_state_dict(lin.state_dict())
    with pytest.raises(RuntimeError, match="modified in place"):
        out.backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layers_respect_dtype(dtype):
    mods = [nn.Linear(3, 2, dtype=dtype), nn.Embedding(5, 3, dtype=dtype), nn.LayerNorm(3, dtype=dtype),
            nn.RMSNorm(3, dtype=dtype), nn.MLP(3, [4, 2], dtype=dtype)]
    for m in mods:
        assert all(p.dtype == dtype for p in m.parameters()), m
    x = np.ones((2, 3))  # float64 data is cast to the layer's dtype
    assert mods[0](x).dtype == dtype and mods[2](x).dtype == dtype and mods[4](x).dtype == dtype


def test_to_converts_in_place_and_mismatched_tensor_input_is_an_error():
    mlp = nn.MLP(3, [4, 2], rng=0)
    params = list(mlp.parameters())
    mlp.to(np.float64)
    assert all(p.dtype == np.float64 for p in params) and list(mlp.parameters())[0] is params[0]
    mlp.float()
    assert mlp.layers[0].weight.dtype == np.float32
    with pytest.raises(TypeError, match="input dtype float64 differs from the layer's dtype float32"):
        mlp(Tensor(np.ones((1, 3))))
    with pytest.raises(TypeError, match=r"cr.Tensor keeps NumPy's float64 .* build the input with cr.tensor"):
        mlp(Tensor([[1.0, 2.0, 3.0]]))  # the everyday mix-up: cr.Tensor of Python floats is float64
    with pytest.raises(TypeError, match="float32 or float64"):
        mlp.to(np.int32)


def test_default_dtype_and_manual_seed():
    assert nn.get_default_dtype() == np.float32
    nn.set_default_dtype(np.float64)
    try:
        assert nn.Linear(2, 2).weight.dtype == np.float64
    finally:
        nn.set_default_dtype(np.float32)
    with pytest.raises(TypeError, match="floating dtype"):
        nn.set_default_dtype(np.int64)
    nn.manual_seed(5)
    a = nn.MLP(2, [3, 1])
    nn.manual_seed(5)
    b = nn.MLP(2, [3, 1])
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        np.testing.assert_array_equal(p.data, q.data)


def test_parameter_basics():
    p = nn.Parameter([1, 2, 3])
    assert p.requires_grad and p.dtype == np.float32 and isinstance(p, Tensor)
    assert repr(p).startswith("Parameter(")
    assert nn.Parameter(np.zeros(2), dtype=np.float64).dtype == np.float64
    with pytest.raises(TypeError, match="floating point"):
        nn.Parameter(np.array(["a"]))
    y = p * 2
    assert type(y) is Tensor and not isinstance(y, nn.Parameter)


def test_repr_shows_the_tree():
    text = repr(nn.MLP(2, [3, 1], rng=0))
    assert text.splitlines()[0] == "MLP("
    assert "(0): Linear(in_features=2, out_features=3, bias=True)" in text
    assert "(1): ReLU()" in text and text.rstrip().endswith(")")


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3, rng=0), nn.Tanh())
    assert len(seq) == 2 and isinstance(seq[1], nn.Tanh) and isinstance(seq[:1], nn.Sequential)
    seq.append(nn.Linear(3, 1, rng=1))
    assert seq(np.zeros((4, 2))).shape == (4, 1)
    assert nn.Sequential([nn.ReLU(), nn.ReLU()])(np.array([-1.0])).tolist() == [0.0]
    with pytest.raises(TypeError, match="item 0 is a int, not an nn.Module"):
        nn.Sequential(3)
    with pytest.raises(IndexError, match="index 5 out of range for 2 modules"):
        nn.ModuleList([nn.ReLU(), nn.ReLU()])[5]


def test_mlp_structure_and_activation_choice():
    mlp = nn.MLP(4, [8, 8, 3], activation="gelu", dropout=0.1, rng=0)
    kinds = [type(m).__name__ for m in mlp.layers]
    assert kinds == ["Linear", "GELU", "Dropout", "Linear", "GELU", "Dropout", "Linear"]
    assert mlp.sizes == [4, 8, 8, 3]
    with pytest.raises(ValueError, match="unknown activation 'nope'"):
        nn.MLP(2, [2, 1], activation="nope")
    with pytest.raises(ValueError, match="at least one layer size"):
        nn.MLP(2, [])


def test_dropout_module_is_seeded_and_off_in_eval():
    a, b = nn.Dropout(0.4, rng=3), nn.Dropout(0.4, rng=3)
    x = np.ones(1000)
    np.testing.assert_array_equal(a(x), b(x))
    assert not np.array_equal(a(x), a(x))  # fresh mask per call
    assert abs((a(x) == 0).mean() - 0.4) < 0.06
    a.eval()
    assert a(x) is x
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        nn.Dropout(-0.1)


# == initialisers ===================================================================================
def test_linear_default_init_bounds_like_torch():
    lin = nn.Linear(100, 50, rng=0)
    bound = 1 / math.sqrt(100)
    assert np.abs(lin.weight.data).max() <= bound and np.abs(lin.weight.data).max() > 0.9 * bound
    assert np.abs(lin.bias.data).max() <= bound


@pytest.mark.parametrize("fn,kwargs,std", [
    (nn.init.xavier_uniform_, {}, math.sqrt(2 / (300 + 200))),
    (nn.init.xavier_normal_, {"gain": 2.0}, 2 * math.sqrt(2 / (300 + 200))),
    (nn.init.kaiming_uniform_, {"nonlinearity": "relu"}, math.sqrt(2) / math.sqrt(300)),
    (nn.init.kaiming_normal_, {"mode": "fan_out", "nonlinearity": "relu"}, math.sqrt(2) / math.sqrt(200)),
    (nn.init.kaiming_normal_, {"a": 0.2}, math.sqrt(2 / (1 + 0.04)) / math.sqrt(300)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_initialisers_have_the_right_spread_and_keep_dtype(fn, kwargs, std, dtype):
    p = nn.Parameter(np.zeros((200, 300), dtype=dtype))
    v0 = p._version
    out = fn(p, rng=0, **kwargs)
    assert out is p and p.dtype == dtype and p._version > v0
    np.testing.assert_allclose(p.data.std(), std, rtol=0.03)
    if "uniform" in fn.__name__:
        assert np.abs(p.data).max() <= math.sqrt(3) * std * (1 + 1e-6)
    np.testing.assert_array_equal(fn(nn.Parameter(np.zeros((200, 300), dtype=dtype)), rng=0, **kwargs).data, p.data)


def test_init_helpers_and_errors():
    t = nn.Parameter(np.zeros((2, 3)))
    assert (nn.init.ones_(t).data == 1).all() and (nn.init.zeros_(t).data == 0).all()
    assert (nn.init.constant_(t, 0.5).data == 0.5).all()
    assert nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        nn.init.xavier_uniform_(nn.Parameter(np.zeros(3)))
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swishy'"):
        nn.init.calculate_gain("swishy")
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'"):
        nn.init.kaiming_normal_(t, mode="fan")


# == layers against torch.nn modules with the same weights ==============================================
@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layers_match_torch_modules(dtype):
    torch = pytest.importorskip("torch")
    tdt = torch.float32 if dtype == np.float32 else torch.float64
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 5)).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
    pairs = [
        (nn.Linear(5, 3, dtype=dtype, rng=0), torch.nn.Linear(5, 3, dtype=tdt)),
        (nn.LayerNorm(5, dtype=dtype), torch.nn.LayerNorm(5, dtype=tdt)),
        (nn.RMSNorm(5, dtype=dtype), torch.nn.RMSNorm(5, dtype=tdt)),
        (nn.MLP(5, [7, 3], activation="silu", dtype=dtype, rng=1),
         torch.nn.Sequential(torch.nn.Linear(5, 7, dtype=tdt), torch.nn.SiLU(), torch.nn.Linear(7, 3, dtype=tdt))),
    ]
    for ours, theirs in pairs:
        for p in ours.parameters():
            p.data[...] = rng.normal(size=p.shape)
        state = {k.removeprefix("layers."): torch.tensor(v) for k, v in ours.state_dict().items()}
        theirs.load_state_dict(state)
        out = ours(x)
        t_out = theirs(torch.tensor(x))
        w = rng.normal(size=out.shape).astype(dtype)
        (out * w).sum().backward()
        (t_out * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(out.data, t_out.detach().numpy(), **tol)
        for (name, p), tp in zip(ours.named_parameters(), theirs.parameters(), strict=True):
            assert p.grad.dtype == dtype
            np.testing.assert_allclose(p.grad.data, tp.grad.numpy(), **tol, err_msg=name)
    emb = nn.Embedding(10, 4, dtype=dtype, rng=0)
    t_emb = torch.nn.Embedding(10, 4, dtype=tdt)
    t_emb.load_state_dict({"weight": torch.tensor(emb.weight.data)})
    idx = np.array([[1, 2, 2], [9, 0, 1]])
    out, t_out = emb(idx), t_emb(torch.tensor(idx))
    out.sum().backward()
    t_out.sum().backward()
    np.testing.assert_allclose(emb.weight.grad.data, t_emb.weight.grad.numpy())


def test_trunc_normal_orthogonal_and_eye_initialisers_as_pytorch():
    w = nn.Parameter(np.zeros((300, 200)))
    nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04, rng=0)
    assert -0.04 <= w.data.min() and w.data.max() <= 0.04
    assert abs(w.data.std() - 0.02 * 0.8796) < 5e-4  # the std of N(0, 1) cut at +-2 is 0.8796
    for shape in [(3, 5), (5, 3), (4, 2, 3)]:
        q = nn.init.orthogonal_(nn.Parameter(np.zeros(shape)), gain=2.0, rng=1).data.reshape(shape[0], -1)
        small = min(q.shape)
        np.testing.assert_allclose((q @ q.T if q.shape[0] == small else q.T @ q), 4.0 * np.eye(small), atol=1e-12)
    np.testing.assert_array_equal(nn.init.eye_(nn.Parameter(np.ones((2, 3)))).data, np.eye(2, 3))
    with pytest.raises(ValueError, match=r"eye_: needs a matrix \(2 dimensions\), got shape \(3,\)"):
        nn.init.eye_(nn.Parameter(np.zeros(3)))


@pytest.mark.oracle
def test_state_dict_values_are_tensors_so_nanogpt_style_loading_works_as_in_pytorch():
    # state_dict() values were ndarrays: nanoGPT's from_pretrained (sd[k].copy_(sd_hf[k]) under no_grad, with
    # .t() for its Conv1D weights) raised AttributeError
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    hf = {"weight": rng.normal(size=(3, 2)), "bias": rng.normal(size=2)}  # a Conv1D weight: (in, out)
    ours, theirs = nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    for model, lib, wrap in [(ours, cr, Tensor), (theirs, torch, torch.tensor)]:
        sd = model.state_dict()
        with lib.no_grad():
            sd["weight"].copy_(wrap(hf["weight"]).t())
            sd["bias"].copy_(wrap(hf["bias"]))
        assert not sd["weight"].requires_grad
    np.testing.assert_array_equal(ours.weight.numpy(), theirs.weight.detach().numpy())
    np.testing.assert_array_equal(ours.bias.numpy(), hf["bias"])
    assert all(isinstance(v, Tensor) for v in ours.state_dict().values())
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})  # (DLPack)


def _applied(module, call):
    return lambda x: call(module, x[0])


@pytest.mark.parametrize("make", [
    lambda: nn.Dropout(0.5), lambda: nn.Dropout2d(0.5), lambda: nn.RReLU(),
    lambda: (lambda x: cr.nn.functional.dropout(x, 0.5)),
    lambda: _applied(nn.MultiheadAttention(4, 2, dropout=0.5, batch_first=True), lambda m, x: m(x, x, x)[0]),
    lambda: _applied(nn.LSTM(4, 4, num_layers=2, dropout=0.5), lambda m, x: m(x)[0]),
    lambda: _applied(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.5), lambda m, x: m(x)),
], ids=["Dropout", "Dropout2d", "RReLU", "F.dropout", "MultiheadAttention", "LSTM", "TransformerEncoderLayer"])
def test_manual_seed_makes_dropout_reproducible_as_pytorchs(make):
    """Without rng, the draws come from the generator manual_seed resets, at each call (as PyTorch's global one):
    a module drew from a generator of its own seeded when it was built, F.dropout from an unseeded one."""
    layer = make()
    x = cr.tensor(np.linspace(-1.0, 1.0, 64).reshape(1, 4, 4, 4), dtype=cr.float32)
    cr.manual_seed(3)
    first = layer(x).numpy()
    cr.manual_seed(3)
    np.testing.assert_array_equal(layer(x).numpy(), first)
    assert not np.array_equal(layer(x).numpy(), first)  # and the next call draws afresh
