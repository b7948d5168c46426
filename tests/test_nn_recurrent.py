"""nn.RNN / nn.LSTM / nn.GRU and their cells against PyTorch: outputs, final states, gradients of every
parameter, of the input and of the initial states (float64, 1e-10), over layers, directions, layouts and
initial states; second order; loading a torch state dict; a char-LSTM trained with Adam; errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor, nn, optim
from chainrule.autodiff.backprop import grad
from chainrule.nn import functional as F

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the recurrent layers")

L, N, IN, HID = 4, 3, 3, 5
TOL = dict(rtol=1e-10, atol=1e-10)
OURS = {"RNN": nn.RNN, "LSTM": nn.LSTM, "GRU": nn.GRU}


def _np(t):
    return t.detach().numpy()


def pair(kind, seed=0, **kw):
    """A torch layer (float64, torch's init) and ours with its weights loaded from torch's state dict."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, kind)(IN, HID, dtype=torch.float64, **kw)
    ours = OURS[kind](IN, HID, dtype=np.float64, rng=seed, **kw)
    ours.load_state_dict({k: _np(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def weights(shape, seed):
    return np.random.default_rng(seed).normal(size=shape)


def compare(ours, theirs, x, states, is_lstm):
    """Run both on x (and initial states), backpropagate one weighted sum of every result, compare all."""
    tx = torch.tensor(x, requires_grad=True)
    cx = Tensor(x, requires_grad=True)
    t_states = [torch.tensor(s, requires_grad=True) for s in states]
    c_states = [Tensor(s, requires_grad=True) for s in states]
    t_hx = None if not states else (tuple(t_states) if is_lstm else t_states[0])
    c_hx = None if not states else (tuple(c_states) if is_lstm else c_states[0])
    t_out, t_h = theirs(tx, t_hx)
    c_out, c_h = ours(cx, c_hx)
    t_res = [t_out, *(t_h if is_lstm else [t_h])]
    c_res = [c_out, *(c_h if is_lstm else [c_h])]
    for k, (a, b) in enumerate(zip(c_res, t_res, strict=True)):
        assert a.shape == tuple(b.shape), k
        np.testing.assert_allclose(a.data, _np(b), **TOL)
    ws = [weights(tuple(r.shape), k) for k, r in enumerate(t_res)]
    sum((r * torch.tensor(w)).sum() for r, w in zip(t_res, ws, strict=True)).backward()
    sum((r * w).sum() for r, w in zip(c_res, ws, strict=True)).backward()
    np.testing.assert_allclose(cx.grad.data, _np(tx.grad), **TOL)
    for a, b in zip(c_states, t_states, strict=True):
        np.testing.assert_allclose(a.grad.data, _np(b.grad), **TOL)
    t_params = dict(theirs.named_parameters())
    c_params = dict(ours.named_parameters())
    assert list(c_params) == list(t_params)
    for name, p in c_params.items():
        np.testing.assert_allclose(p.grad.data, _np(t_params[name].grad), err_msg=name, **TOL)


LAYOUTS = ["seq_first", "batch_first", "unbatched"]


@pytest.mark.oracle
@pytest.mark.parametrize("kind,num_layers,bidirectional,layout,with_state", [
    (k, n, b, lay, s) for k, n, b, lay, s in itertools.product(
        ["RNN", "LSTM", "GRU"], [1, 2], [False, True], LAYOUTS, [False, True])
])
def test_forward_and_gradients_match_torch(kind, num_layers, bidirectional, layout, with_state):
    ours, theirs = pair(kind, num_layers=num_layers, bidirectional=bidirectional,
                        batch_first=layout == "batch_first")
    shape = {"seq_first": (L, N, IN), "batch_first": (N, L, IN), "unbatched": (L, IN)}[layout]
    x = weights(shape, 10)
    count = num_layers * (2 if bidirectional else 1)
    state_shape = (count, HID) if layout == "unbatched" else (count, N, HID)
    states = [weights(state_shape, 20 + k) for k in range(2 if kind == "LSTM" else 1)] if with_state else []
    compare(ours, theirs, x, states, kind == "LSTM")


@pytest.mark.oracle
@pytest.mark.parametrize("kind,kw", [
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bias=False)),
    ("LSTM", dict(bias=False, bidirectional=True)),
    ("GRU", dict(bias=False, num_layers=2, batch_first=True)),
])
def test_relu_and_no_bias_match_torch(kind, kw):
    ours, theirs = pair(kind, **kw)
    x = weights((N, L, IN) if kw.get("batch_first") else (L, N, IN), 11)
    compare(ours, theirs, x, [], kind == "LSTM")


CELLS = {"RNNCell": nn.RNNCell, "LSTMCell": nn.LSTMCell, "GRUCell": nn.GRUCell}


@pytest.mark.oracle
@pytest.mark.parametrize("kind,kw,batched,with_state", [
    (k, kw, b, s) for (k, kw), b, s in itertools.product(
        [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu")), ("LSTMCell", {}), ("GRUCell", {}),
         ("GRUCell", dict(bias=False))], [True, False], [False, True])
])
def test_cells_match_torch(kind, kw, batched, with_state):
    torch.manual_seed(1)
    theirs = getattr(torch.nn, kind)(IN, HID, dtype=torch.float64, **kw)
    ours = CELLS[kind](IN, HID, dtype=np.float64, **kw)
    ours.load_state_dict({k: _np(v) for k, v in theirs.state_dict().items()})
    x = weights((N, IN) if batched else (IN,), 3)
    is_lstm = kind == "LSTMCell"
    tx, cx = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
    states = [weights((N, HID) if batched else (HID,), 4 + k) for k in range(2 if is_lstm else 1)] if with_state else []
    t_st = [torch.tensor(s, requires_grad=True) for s in states]
    c_st = [Tensor(s, requires_grad=True) for s in states]
    t_hx = (tuple(t_st) if is_lstm else t_st[0]) if states else None
    c_hx = (tuple(c_st) if is_lstm else c_st[0]) if states else None
    t_res, c_res = theirs(tx, t_hx), ours(cx, c_hx)
    t_res, c_res = (list(t_res), list(c_res)) if is_lstm else ([t_res], [c_res])
    ws = [weights(tuple(r.shape), 7 + k) for k, r in enumerate(t_res)]
    for a, b in zip(c_res, t_res, strict=True):
        np.testing.assert_allclose(a.data, _np(b), **TOL)
    sum((r * torch.tensor(w)).sum() for r, w in zip(t_res, ws, strict=True)).backward()
    sum((r * w).sum() for r, w in zip(c_res, ws, strict=True)).backward()
    np.testing.assert_allclose(cx.grad.data, _np(tx.grad), **TOL)
    for a, b in zip(c_st, t_st, strict=True):
        np.testing.assert_allclose(a.grad.data, _np(b.grad), **TOL)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.data, _np(p.grad), err_msg=name, **TOL)


@pytest.mark.oracle
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_second_order_gradient_of_the_gradient_norm_matches_torch(kind):
    ours, theirs = pair(kind, num_layers=2, bidirectional=True)
    x = weights((3, 2, IN), 5)
    tx, cx = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
    t_params, c_params = list(theirs.parameters()), list(ours.parameters())
    t_out = theirs(tx)[0]
    t_grads = torch.autograd.grad((t_out * torch.tensor(weights(tuple(t_out.shape), 6))).sum(), [tx, *t_params],
                                  create_graph=True)
    sum((g**2).sum() for g in t_grads).backward()
    c_out = ours(cx)[0]
    c_grads = grad((c_out * weights(c_out.shape, 6)).sum(), [cx, *c_params], create_graph=True)
    sum((g**2).sum() for g in c_grads).backward()
    np.testing.assert_allclose(cx.grad.data, _np(tx.grad), **TOL)
    for c, t in zip(c_params, t_params, strict=True):
        np.testing.assert_allclose(c.grad.data, _np(t.grad), **TOL)


def test_forward_mode_agrees_with_reverse_mode():
    lstm = nn.LSTM(IN, HID, num_layers=2, bidirectional=True, dtype=np.float64, rng=0)
    x, v = weights((L, N, IN), 1), weights((L, N, IN), 2)
    w = weights((L, N, 2 * HID), 3)

    def f(xs):
        return (lstm(xs)[0] * w).sum()

    _, tangent = cr.jvp(f, (x,), (v,))
    cx = Tensor(x, requires_grad=True)
    f(cx).backward()
    np.testing.assert_allclose(float(np.asarray(tangent)), float((cx.grad.data * v).sum()), rtol=1e-10)


@pytest.mark.oracle
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_a_torch_state_dict_loads_and_names_shapes_and_init_match(kind):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(6, 7, num_layers=2, bidirectional=True)  # float32, as a torch user has it
    ours = OURS[kind](6, 7, num_layers=2, bidirectional=True, rng=0)
    t_state = theirs.state_dict()
    assert list(ours.state_dict()) == list(t_state)
    assert {k: v.shape for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in t_state.items()}
    bound = 1 / np.sqrt(7)
    for name, p in ours.named_parameters():  # PyTorch's init: U(-1/sqrt(hidden), 1/sqrt(hidden)), float32
        assert p.dtype == np.float32 and np.abs(p.data).max() <= bound, name
    values = np.concatenate([p.data.ravel() for p in ours.parameters()])
    assert abs(values.std() - bound / np.sqrt(3)) < 0.02 and values.min() < -0.9 * bound < 0.9 * bound < values.max()
    ours.load_state_dict({k: v.numpy() for k, v in t_state.items()})
    x = weights((5, 2, 6), 0).astype(np.float32)
    out, t_out = ours(x)[0], theirs(torch.tensor(x))[0]
    np.testing.assert_allclose(out.data, _np(t_out), atol=1e-5)
    assert repr(ours) == repr(theirs)
    assert [[tuple(p.shape) for p in ps] for ps in ours.all_weights] == \
        [[tuple(p.shape) for p in ps] for ps in theirs.all_weights]


@pytest.mark.oracle
def test_dropout_between_layers_follows_training_mode():
    ours, theirs = pair("LSTM", num_layers=3, dropout=1.0)  # p = 1: the masks are all zeros in both
    x = weights((L, N, IN), 1)
    np.testing.assert_allclose(ours(x)[0].data, _np(theirs(torch.tensor(x))[0]), **TOL)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(x)[0].data, _np(theirs(torch.tensor(x))[0]), **TOL)
    half = nn.GRU(IN, HID, num_layers=2, dropout=0.5, dtype=np.float64, rng=0)
    a, b = half(x)[0].data, half(x)[0].data
    assert not np.allclose(a, b)  # a fresh mask per call in training mode
    again = nn.GRU(IN, HID, num_layers=2, dropout=0.5, dtype=np.float64, rng=0)
    np.testing.assert_array_equal(again(x)[0].data, a)  # rng=seed: the same weights and the same masks
    half.eval()
    np.testing.assert_array_equal(half(x)[0].data, half(x)[0].data)
    with pytest.warns(UserWarning, match="with num_layers=1 it does nothing"):
        nn.RNN(2, 3, dropout=0.2)


@pytest.mark.oracle
def test_a_char_lstm_trained_five_steps_with_adam_equals_torch():
    text = "hello world, hello recurrent nets"
    vocab = sorted(set(text))
    ids = np.array([vocab.index(ch) for ch in text])
    batch = np.stack([ids[i:i + 9] for i in range(0, 24, 4)])  # (6, 9): inputs [:, :-1], targets [:, 1:]
    xb, yb = batch[:, :-1], batch[:, 1:]

    class CharLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(len(vocab), 6, dtype=np.float64, rng=0)
            self.lstm = nn.LSTM(6, 10, num_layers=2, batch_first=True, dtype=np.float64, rng=1)
            self.head = nn.Linear(10, len(vocab), dtype=np.float64, rng=2)

        def forward(self, x):
            return self.head(self.lstm(self.emb(x))[0])

    class TorchCharLSTM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(len(vocab), 6, dtype=torch.float64)
            self.lstm = torch.nn.LSTM(6, 10, num_layers=2, batch_first=True, dtype=torch.float64)
            self.head = torch.nn.Linear(10, len(vocab), dtype=torch.float64)

        def forward(self, x):
            return self.head(self.lstm(self.emb(x))[0])

    ours, theirs = CharLSTM(), TorchCharLSTM()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    opt, t_opt = optim.Adam(ours.parameters(), lr=1e-2), torch.optim.Adam(theirs.parameters(), lr=1e-2)
    losses, t_losses = [], []
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(ours(xb).reshape(-1, len(vocab)), yb.reshape(-1))
        loss.backward()
        opt.step()
        t_opt.zero_grad()
        t_loss = torch.nn.functional.cross_entropy(theirs(torch.tensor(xb)).reshape(-1, len(vocab)),
                                                   torch.tensor(yb).reshape(-1))
        t_loss.backward()
        t_opt.step()
        losses.append(float(loss))
        t_losses.append(t_loss.item())
    np.testing.assert_allclose(losses, t_losses, **TOL)
    assert losses[-1] < losses[0]
    for (name, p), (t_name, tp) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        assert name == t_name
        np.testing.assert_allclose(p.data, _np(tp), err_msg=name, **TOL)


def test_float32_stays_float32_and_a_float64_input_is_refused():
    lstm = nn.LSTM(IN, HID, rng=0)
    out, (h, c) = lstm(weights((L, N, IN), 0))  # arrays are cast to the layer's dtype
    assert out.dtype == h.dtype == c.dtype == np.float32
    with pytest.raises(TypeError, match=r"LSTM: input dtype float64 differs from the layer's dtype float32"):
        lstm(Tensor(weights((L, N, IN), 0)))


def test_errors_name_the_layer_and_the_fix():
    with pytest.raises(ValueError, match=r"LSTM: proj_size=4 must be smaller than hidden_size=4"):
        nn.LSTM(2, 4, proj_size=4)
    with pytest.raises(ValueError, match=r"LSTM: proj_size must be an int >= 0 \(0: no projection\), got -1"):
        nn.LSTM(2, 4, proj_size=-1)
    with pytest.raises(ValueError, match=r"RNN: nonlinearity must be 'tanh' or 'relu', got 'gelu'"):
        nn.RNN(2, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match=r"GRU: num_layers must be a positive int, got 0"):
        nn.GRU(2, 4, num_layers=0)
    with pytest.raises(ValueError, match=r"GRU: dropout must be a number in \[0, 1\], got 1.5"):
        nn.GRU(2, 4, num_layers=2, dropout=1.5)
    with pytest.raises(ValueError, match=r"LSTMCell: hidden_size must be a positive int, got -1"):
        nn.LSTMCell(2, -1)
    gru = nn.GRU(2, 4, num_layers=2, batch_first=True, dtype=np.float64)
    with pytest.raises(ValueError, match=r"GRU: input must be batched \(N, L, 2\) or unbatched \(L, 2\), got shape "
                                         r"\(3, 5, 7\)"):
        gru(np.zeros((3, 5, 7)))
    with pytest.raises(ValueError, match=r"GRU: h0 must have shape \(2, 3, 4\) .*got \(1, 3, 4\)"):
        gru(np.zeros((3, 5, 2)), np.zeros((1, 3, 4)))
    with pytest.raises(TypeError, match=r"GRU: the initial state is one array h0"):
        gru(np.zeros((3, 5, 2)), (np.zeros((2, 3, 4)), np.zeros((2, 3, 4))))
    lstm = nn.LSTM(2, 4, dtype=np.float64)
    with pytest.raises(TypeError, match=r"LSTM: the initial state must be a pair \(h0, c0\), got ndarray"):
        lstm(np.zeros((5, 3, 2)), np.zeros((1, 3, 4)))
    with pytest.raises(ValueError, match=r"LSTM: c0 must have shape \(1, 3, 4\)"):
        lstm(np.zeros((5, 3, 2)), (np.zeros((1, 3, 4)), np.zeros((1, 4))))
    with pytest.raises(ValueError, match=r"LSTM: the input sequence is empty"):
        lstm(np.zeros((0, 3, 2)))
    with pytest.raises(ValueError, match=r"GRUCell: the hidden state must have shape \(3, 4\)"):
        nn.GRUCell(2, 4)(np.zeros((3, 2)), np.zeros((4,)))


@pytest.mark.oracle
def test_torchs_packed_sequence_is_refused_with_what_to_do_instead():
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.zeros(5, 2, 3), [5, 3])
    with pytest.raises(TypeError, match=r"LSTM: got another library's PackedSequence \(torch.*pack_padded_sequence"):
        nn.LSTM(3, 4)(packed)
    ours = nn.utils.rnn.pack_padded_sequence(np.zeros((5, 2, 3), dtype=np.float32), [5, 3])
    out, (h, c) = nn.LSTM(3, 4)(ours)  # (tests/test_packed_sequences.py checks the values)
    assert out.data.shape == (8, 4) and h.shape == (1, 2, 4)


def test_jit_step_replays_a_recurrent_model_bit_for_bit():
    def make():
        return nn.Sequential(nn.GRU(4, 6, num_layers=2, batch_first=True, bidirectional=True, dtype=np.float64,
                                    rng=0), _First(), nn.Linear(12, 3, dtype=np.float64, rng=1))

    rng = np.random.default_rng(0)
    xb, yb = rng.normal(size=(5, 7, 4)), rng.integers(0, 3, 35)
    eager, jitted = make(), make()
    opt, jit_opt = optim.Adam(eager.parameters(), lr=1e-2), optim.Adam(jitted.parameters(), lr=1e-2)
    step = cr.jit_step(lambda x, y: F.cross_entropy(jitted(x).reshape(-1, 3), y), jit_opt)
    for _ in range(3):  # the first call traces, the others replay
        opt.zero_grad()
        loss = F.cross_entropy(eager(xb).reshape(-1, 3), yb)
        loss.backward()
        opt.step()
        assert float(step(xb, yb)) == float(loss)
    for p, q in zip(eager.parameters(), jitted.parameters(), strict=True):
        np.testing.assert_array_equal(p.data, q.data)


class _First(nn.Module):
    """The output of a recurrent layer, without its final state (to put one in a Sequential)."""

    def forward(self, result):
        return result[0]
