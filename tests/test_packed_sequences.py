"""nn.utils.rnn: padded and packed sequences, and the recurrent layers on packed batches, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule.nn.utils import rnn as crnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

RNG = np.random.default_rng(0)
LENGTHS = [3, 5, 1, 5, 2]
SEQS = [RNG.standard_normal((n, 4)) for n in LENGTHS]


@pytest.mark.oracle
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_pack_and_unpack_match_pytorch(batch_first, padding_side):
    tx = [torch.tensor(s, requires_grad=True) for s in SEQS]
    cx = [cr.tensor(s, requires_grad=True) for s in SEQS]
    tp = trnn.pad_sequence(tx, batch_first=batch_first, padding_value=-1.0, padding_side=padding_side)
    cp = crnn.pad_sequence(cx, batch_first=batch_first, padding_value=-1.0, padding_side=padding_side)
    np.testing.assert_array_equal(cp.detach().numpy(), tp.detach().numpy())
    if padding_side == "left":
        return
    tk = trnn.pack_padded_sequence(tp, LENGTHS, batch_first=batch_first, enforce_sorted=False)
    ck = crnn.pack_padded_sequence(cp, cr.tensor(LENGTHS), batch_first=batch_first, enforce_sorted=False)
    np.testing.assert_array_equal(ck.data.detach().numpy(), tk.data.detach().numpy())
    for a, b in [(ck.batch_sizes, tk.batch_sizes), (ck.sorted_indices, tk.sorted_indices),
                 (ck.unsorted_indices, tk.unsorted_indices)]:
        assert a.tolist() == b.tolist()
    tu, tl = trnn.pad_packed_sequence(tk, batch_first=batch_first, padding_value=7.0, total_length=6)
    cu, cl = crnn.pad_packed_sequence(ck, batch_first=batch_first, padding_value=7.0, total_length=6)
    np.testing.assert_array_equal(cu.detach().numpy(), tu.detach().numpy())
    assert cl.tolist() == tl.tolist() and cl.dtype == np.int64
    w = RNG.standard_normal(tuple(tu.shape))
    (tu * torch.tensor(w)).sum().backward()
    (cu * cr.tensor(w)).sum().backward()
    for a, b in zip(cx, tx):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())
    for a, b in zip(crnn.unpack_sequence(ck), trnn.unpack_sequence(tk)):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.oracle
def test_pack_sequence_sorted_keeps_no_permutation():
    ordered = sorted(SEQS, key=len, reverse=True)
    tk = trnn.pack_sequence([torch.tensor(s) for s in ordered])
    ck = crnn.pack_sequence([cr.tensor(s) for s in ordered])
    assert ck.sorted_indices is None and tk.sorted_indices is None
    np.testing.assert_array_equal(ck.data.numpy(), tk.data.numpy())
    with pytest.raises(ValueError, match="not in decreasing order.*enforce_sorted=False"):
        crnn.pack_sequence([cr.tensor(s) for s in SEQS])
    with pytest.raises(ValueError, match=r"every length must be in \[1, 5\]"):
        crnn.pack_padded_sequence(cr.zeros(5, 2, 1), [6, 1])


@pytest.mark.oracle
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_recurrent_layers_run_each_packed_sequence_for_its_own_length(kind, bidirectional, batch_first):
    tm = getattr(torch.nn, kind)(4, 3, num_layers=2, bidirectional=bidirectional, batch_first=batch_first).double()
    cm = getattr(cr.nn, kind)(4, 3, num_layers=2, bidirectional=bidirectional, batch_first=batch_first,
                              dtype=np.float64)
    cm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    tx = [torch.tensor(s, requires_grad=True) for s in SEQS]
    cx = [cr.tensor(s, requires_grad=True) for s in SEQS]
    tk = trnn.pack_padded_sequence(trnn.pad_sequence(tx, batch_first), LENGTHS, batch_first, enforce_sorted=False)
    ck = crnn.pack_padded_sequence(crnn.pad_sequence(cx, batch_first), LENGTHS, batch_first, enforce_sorted=False)
    h0 = RNG.standard_normal((2 * (2 if bidirectional else 1), len(SEQS), 3))
    thx = (torch.tensor(h0), torch.tensor(h0 / 2)) if kind == "LSTM" else torch.tensor(h0)
    chx = (cr.tensor(h0), cr.tensor(h0 / 2)) if kind == "LSTM" else cr.tensor(h0)
    to, th = tm(tk, thx)
    co, ch = cm(ck, chx)
    assert isinstance(co, crnn.PackedSequence) and co.sorted_indices.tolist() == to.sorted_indices.tolist()
    np.testing.assert_allclose(co.data.detach().numpy(), to.data.detach().numpy(), rtol=1e-10)
    th, ch = (th[0] + th[1], ch[0] + ch[1]) if kind == "LSTM" else (th, ch)
    np.testing.assert_allclose(ch.detach().numpy(), th.detach().numpy(), rtol=1e-10)
    w = RNG.standard_normal(tuple(to.data.shape))
    ((to.data * torch.tensor(w)).sum() + th.sum()).backward()
    ((co.data * cr.tensor(w)).sum() + ch.sum()).backward()
    for a, b in zip(cx, tx):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    for a, b in zip(cm.parameters(), tm.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
