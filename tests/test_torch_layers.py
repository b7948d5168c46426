"""PyTorch as the oracle for the layers PyTorch programs asked for: ``Transformer`` and its encoder and
decoder (layers), ``MultiheadAttention``'s ``kdim`` / ``vdim``, ``ConvTranspose1d/2d``, ``GroupNorm``,
``InstanceNorm1d/2d``, ``Upsample``, ``Embedding.from_pretrained``, the containers' list methods and the
module backward hooks.

Each layer is built in both libraries with the same weights (PyTorch's state dict loaded into chainrule's
module), run on the same float64 inputs, and compared on the output and on the gradient of a random
projection of it with respect to every input and every parameter.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim

torch = pytest.importorskip("torch", reason="the oracle tests need PyTorch")
pytestmark = pytest.mark.oracle
TOL = dict(rtol=1e-10, atol=1e-12)


def _same_weights(tm, cm):
    """Load torch module ``tm``'s state into chainrule module ``cm`` (the names must be the same)."""
    state = {k: v.detach().numpy() for k, v in tm.state_dict().items()}
    assert list(state) == list(cm.state_dict())
    cm.load_state_dict(state)


def _compare(tm, cm, inputs, call=lambda m, *xs: m(*xs), grad_inputs=True, seed=0):
    """Forward values, input gradients and parameter gradients of ``call(module, *inputs)`` agree."""
    tm, cm = tm.double(), cm
    _same_weights(tm, cm)
    tx = [torch.tensor(a, requires_grad=grad_inputs) for a in inputs]
    cx = [cr.Tensor(a, requires_grad=grad_inputs) for a in inputs]
    to, co = call(tm, *tx), call(cm, *cx)
    np.testing.assert_allclose(co.data, to.detach().numpy(), **TOL)
    g = np.random.default_rng(seed).normal(size=tuple(to.shape))
    (to * torch.tensor(g)).sum().backward()
    (co * g).sum().backward()
    if grad_inputs:
        for t, c in zip(tx, cx):
            np.testing.assert_allclose(c.grad.data, t.grad.numpy(), **TOL)
    tp, cp = dict(tm.named_parameters()), dict(cm.named_parameters())
    assert list(tp) == list(cp)
    for name in tp:
        np.testing.assert_allclose(cp[name].grad.data, tp[name].grad.numpy(), **TOL, err_msg=name)
    return co


def _normal(*shape, seed=1):
    return np.random.default_rng(seed).normal(size=shape)


# -- transformers -----------------------------------------------------------------------------------------------
SMALL = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_matches_pytorch_with_masks(batch_first, norm_first, activation):
    kw = dict(SMALL, num_encoder_layers=2, num_decoder_layers=2, batch_first=batch_first, norm_first=norm_first,
              activation=activation)
    torch.manual_seed(0)
    tm, cm = torch.nn.Transformer(**kw), nn.Transformer(**kw, dtype=np.float64, rng=0)
    src = _normal(3, 7, 8) if batch_first else _normal(7, 3, 8)
    tgt = _normal(3, 5, 8, seed=2) if batch_first else _normal(5, 3, 8, seed=2)
    pad = np.zeros((3, 7), dtype=bool)
    pad[0, 5:] = pad[2, 6:] = True
    tgt_pad = np.zeros((3, 5), dtype=bool)
    tgt_pad[1, 4] = True

    def call(m, s, t):
        lib = torch if isinstance(m, torch.nn.Module) else None
        conv = (lambda a: torch.tensor(a)) if lib else (lambda a: a)
        causal = (torch.nn.Transformer if lib else nn.Transformer).generate_square_subsequent_mask(5)
        return m(s, t, tgt_mask=conv(causal.numpy()) if lib else causal, src_key_padding_mask=conv(pad),
                 tgt_key_padding_mask=conv(tgt_pad), memory_key_padding_mask=conv(pad))

    _compare(tm, cm, [src, tgt], call)


def test_transformer_parameters_are_pytorchs_names_shapes_and_initialisation():
    torch.manual_seed(0)
    tm = torch.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=3, dim_feedforward=24)
    cm = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=3, dim_feedforward=24, rng=0)
    ts, cs = tm.state_dict(), cm.state_dict()
    assert list(ts) == list(cs)
    for k in ts:
        assert tuple(ts[k].shape) == cs[k].shape, k
    # PyTorch's _reset_parameters: every matrix Xavier-uniform, bound sqrt(6 / (fan_in + fan_out))
    w = cs["decoder.layers.2.linear1.weight"]
    assert np.abs(w).max() <= np.sqrt(6 / (16 + 24)) and np.abs(w).max() > 0.8 * np.sqrt(6 / (16 + 24))
    assert cm.encoder.layers[0].dropout.p == 0.1 and tm.encoder.layers[0].dropout.p == 0.1  # PyTorch's defaults
    # each copy of a layer draws its own dropout masks (deep copies would share one generator's state)
    a, b = cm.encoder.layers[0].dropout, cm.encoder.layers[1].dropout
    assert not np.array_equal(a(np.ones(64)).data, b(np.ones(64)).data)


def test_transformer_in_eval_mode_ignores_dropout_and_matches_pytorch():
    torch.manual_seed(0)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, dropout=0.3)
    tm, cm = torch.nn.Transformer(**kw).double().eval(), nn.Transformer(**kw, dtype=np.float64, rng=0).eval()
    _compare(tm, cm, [_normal(4, 2, 8), _normal(3, 2, 8, seed=2)])


def test_encoder_with_callable_activation_unbatched_and_causal_detection():
    torch.manual_seed(0)
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation=torch.nn.functional.silu, norm_first=True)
    cl = nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation=nn.functional.silu, norm_first=True,
                                    dtype=np.float64, rng=0)
    tm = torch.nn.TransformerEncoder(tl, 3, norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    cm = nn.TransformerEncoder(cl, 3, norm=nn.LayerNorm(8, dtype=np.float64))
    causal = nn.Transformer.generate_square_subsequent_mask(6, dtype=np.float64)
    _compare(tm, cm, [_normal(6, 8)], lambda m, x: m(x, mask=torch.tensor(causal) if isinstance(
        m, torch.nn.Module) else causal))
    # is_causal=True with no mask: the causal mask (PyTorch needs the mask passed too)
    x = _normal(6, 8)
    np.testing.assert_allclose(cm(x, is_causal=True).data, cm(x, mask=causal).data, **TOL)
    assert not np.allclose(cm(x).data, cm(x, mask=causal).data)


def test_decoder_layer_with_boolean_and_float_memory_masks():
    torch.manual_seed(0)
    tm = torch.nn.TransformerDecoderLayer(8, 2, 12, 0.0, batch_first=True, layer_norm_eps=1e-3, bias=False)
    cm = nn.TransformerDecoderLayer(8, 2, 12, 0.0, batch_first=True, layer_norm_eps=1e-3, bias=False,
                                    dtype=np.float64, rng=0)
    memory_mask = np.zeros((4, 5), dtype=bool)
    memory_mask[:, 3] = True
    float_mask = _normal(4, 4, seed=3)

    def call(m, t, mem):
        wrap = torch.tensor if isinstance(m, torch.nn.Module) else np.asarray
        return m(t, mem, tgt_mask=wrap(float_mask), memory_mask=wrap(memory_mask))

    _compare(tm, cm, [_normal(2, 4, 8), _normal(2, 5, 8, seed=2)], call)


def test_multihead_attention_with_kdim_and_vdim():
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, kdim=5, vdim=3)
    cm = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, dtype=np.float64, rng=0)
    assert list(cm.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                     "out_proj.weight", "out_proj.bias"]
    assert cm.in_proj_weight is None and cm.k_proj_weight.shape == (8, 5)
    pad = np.array([[False, False, True, False], [False] * 4])
    for weights in (True, False):
        _compare(tm, cm, [_normal(3, 2, 8), _normal(4, 2, 5, seed=2), _normal(4, 2, 3, seed=3)],
                 lambda m, q, k, v: m(q, k, v, need_weights=weights, key_padding_mask=torch.tensor(pad) if isinstance(
                     m, torch.nn.Module) else pad)[0])
    with pytest.raises(ValueError, match=r"\(S, N, 5\)"):
        cm(_normal(3, 2, 8), _normal(4, 2, 8), _normal(4, 2, 3))
    assert nn.MultiheadAttention(8, 2, add_bias_kv=True).bias_k.shape == (1, 1, 8)  # (tests/test_torch_module_suite)


def test_transformer_rejects_bad_arguments_with_what_to_do():
    with pytest.raises(ValueError, match="activation should be 'relu', 'gelu' or a callable"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=8)
    with pytest.raises(RuntimeError, match="batch number of src"):
        model(np.ones((4, 2, 8)), np.ones((3, 3, 8)))
    with pytest.raises(RuntimeError, match="d_model"):
        model(np.ones((4, 2, 6)), np.ones((3, 2, 6)))


# -- convolution, normalisation, resampling ---------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(stride=2, padding=1, output_padding=1), dict(dilation=2, groups=2, bias=False),
                                dict(stride=(1, 3), padding=(0, 2), output_padding=(0, 2))])
def test_conv_transpose2d_layer(kw):
    torch.manual_seed(0)
    tm, cm = torch.nn.ConvTranspose2d(4, 6, (3, 2), **kw), nn.ConvTranspose2d(4, 6, (3, 2), **kw, dtype=np.float64)
    _compare(tm, cm, [_normal(2, 4, 5, 4)])


def test_conv_transpose1d_layer_unbatched_and_output_size():
    torch.manual_seed(0)
    tm, cm = torch.nn.ConvTranspose1d(3, 2, 4, stride=3, padding=1), nn.ConvTranspose1d(3, 2, 4, stride=3, padding=1,
                                                                                           dtype=np.float64)
    _compare(tm, cm, [_normal(3, 5)])
    _compare(tm, cm, [_normal(2, 3, 5)], lambda m, x: m(x, output_size=[15]))
    assert cm(_normal(2, 3, 5), output_size=(2, 2, 16)).shape == (2, 2, 16)
    with pytest.raises(ValueError, match="output_size"):
        cm(_normal(2, 3, 5), output_size=[17])
    with pytest.raises(ValueError, match="output_padding"):
        nn.functional.conv_transpose1d(_normal(1, 3, 5), _normal(3, 2, 4), output_padding=1)


def test_conv_transpose_initialisation_is_pytorchs():
    cm = nn.ConvTranspose2d(16, 4, 3, rng=0)
    bound = 1 / np.sqrt(4 * 9)  # PyTorch's fan_in of a transposed convolution: weight.shape[1] * kernel size
    assert cm.weight.shape == (16, 4, 3, 3)
    assert 0.9 * bound < np.abs(cm.weight.data).max() <= bound and np.abs(cm.bias.data).max() <= bound


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm_layer(groups):
    torch.manual_seed(0)
    tm, cm = torch.nn.GroupNorm(groups, 4, eps=1e-3), nn.GroupNorm(groups, 4, eps=1e-3, dtype=np.float64)
    with torch.no_grad():
        tm.weight.normal_(), tm.bias.normal_()
    _compare(tm, cm, [_normal(3, 4, 5, 2)])
    assert not nn.GroupNorm(2, 4, affine=False).state_dict()


@pytest.mark.parametrize("cls", ["InstanceNorm1d", "InstanceNorm2d"])
def test_instance_norm_layers_affine_and_running_statistics(cls):
    shape = (3, 4, 6) if cls == "InstanceNorm1d" else (3, 4, 3, 2)
    tm = getattr(torch.nn, cls)(4, affine=True, track_running_stats=True, momentum=0.3)
    cm = getattr(nn, cls)(4, affine=True, track_running_stats=True, momentum=0.3, dtype=np.float64)
    with torch.no_grad():
        tm.weight.normal_(), tm.bias.normal_()
    for step in range(2):  # training mode: the input's statistics, running ones updated as PyTorch's
        _compare(tm, cm, [_normal(*shape, seed=step)])
        tm.zero_grad(), cm.zero_grad()
        np.testing.assert_allclose(cm.running_var, tm.running_var.numpy(), **TOL)
        np.testing.assert_allclose(cm.running_mean, tm.running_mean.numpy(), **TOL)
    tm.eval(), cm.eval()  # eval mode: the running statistics
    _compare(tm, cm, [_normal(*shape, seed=5)])
    _compare(tm, cm, [_normal(*shape[1:], seed=6)])  # unbatched


def test_instance_norm_default_has_no_parameters_or_buffers():
    tm, cm = torch.nn.InstanceNorm2d(3), nn.InstanceNorm2d(3, dtype=np.float64)
    assert not cm.state_dict() and not tm.state_dict()
    x = _normal(2, 3, 4, 4)
    np.testing.assert_allclose(cm.eval()(x).data, tm.eval()(torch.tensor(x)).numpy(), **TOL)


@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(size=(5, 7), mode="bilinear"),
                                dict(scale_factor=1.5, mode="bilinear", align_corners=True),
                                dict(scale_factor=(0.5, 2.5), mode="nearest-exact")])
def test_upsample_layer(kw):
    tm, cm = torch.nn.Upsample(**kw), nn.Upsample(**kw)
    _compare(tm, cm, [_normal(2, 3, 4, 3)])


def test_upsampling_shorthands_and_linear_mode():
    _compare(torch.nn.UpsamplingBilinear2d(scale_factor=2), nn.UpsamplingBilinear2d(scale_factor=2),
             [_normal(1, 2, 3, 3)])
    _compare(torch.nn.UpsamplingNearest2d(size=5), nn.UpsamplingNearest2d(size=5), [_normal(1, 2, 3, 3)])
    _compare(torch.nn.Upsample(scale_factor=3, mode="linear"), nn.Upsample(scale_factor=3, mode="linear"),
             [_normal(2, 2, 4)])
    _compare(torch.nn.Upsample(scale_factor=2, mode="bicubic"), nn.Upsample(scale_factor=2, mode="bicubic"),
             [_normal(1, 2, 3, 3)])  # (more in tests/test_torch_module_suite.py)
    with pytest.raises(NotImplementedError, match="antialias"):
        nn.functional.interpolate(_normal(1, 1, 2, 2), scale_factor=2, mode="bicubic", antialias=True)
    with pytest.raises(ValueError, match="4-D"):
        nn.functional.interpolate(_normal(1, 1, 2), scale_factor=2, mode="bilinear")


# -- embedding, containers, hooks ------------------------------------------------------------------------------
def test_embedding_from_pretrained_freezes_and_keeps_the_padding_row():
    table = _normal(5, 3)
    idx = np.array([[0, 2, 2], [4, 1, 0]])
    for freeze in (True, False):
        tm = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze, padding_idx=2)
        cm = nn.Embedding.from_pretrained(table, freeze=freeze, padding_idx=2)
        assert cm.weight.requires_grad == tm.weight.requires_grad == (not freeze)
        to, co = tm(torch.tensor(idx)), cm(idx)
        np.testing.assert_allclose(co.data, to.detach().numpy(), **TOL)  # the padding row as given, not zeros
        if not freeze:
            (to ** 2).sum().backward(), (co ** 2).sum().backward()
            np.testing.assert_allclose(cm.weight.grad.data, tm.weight.grad.numpy(), **TOL)
    table[0, 0] = 99.0
    assert cm.weight.data[0, 0] != 99.0  # a copy


def _names(module):
    return [type(m).__name__ for m in module]


def test_module_list_and_sequential_list_methods_as_pytorch():
    results = []
    for lib in (torch.nn, nn):
        ml = lib.ModuleList([lib.Linear(1, i + 1) for i in range(4)])
        ml.insert(1, lib.ReLU())
        ml.insert(3, lib.Tanh())
        popped = ml.pop(2)
        del ml[0]
        ml[0] = lib.GELU()
        del ml[1:3]
        ml += [lib.ReLU()]
        seq = lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 1))
        seq.insert(1, lib.Tanh())
        seq.append(lib.Sigmoid())
        seq.pop(0)
        results.append((_names(ml), type(popped).__name__, [n for n, _ in ml.named_children()], _names(seq),
                        list(seq.state_dict()), type(seq[1:]).__name__, list(seq[1:].state_dict()),
                        _names(seq + seq), len(ml)))
    assert results[0] == results[1]
    with pytest.raises(IndexError, match="out of range for 4 modules"):
        nn.ModuleList([nn.ReLU()] * 4)[4]


def test_full_backward_hooks_see_and_replace_gradients_as_pytorch():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1)).double()
    x = np.arange(8.0).reshape(4, 2) / 7
    for x_needs_grad in (True, False):
        logs = []
        for lib, tensor in ((torch, torch.tensor), (cr, cr.Tensor)):
            net = copy.deepcopy(tm)
            if lib is cr:
                net = nn.Sequential(nn.Linear(2, 3, dtype=np.float64), nn.Tanh(), nn.Linear(3, 1, dtype=np.float64))
                _same_weights(tm, net)
            log = []

            def full(m, grad_input, grad_output, log=log):
                as_np = [None if g is None else np.array(g.detach().numpy() if hasattr(g, "detach") else g.data)
                         for g in (*grad_input, *grad_output)]
                log.append((type(m).__name__, len(grad_input), as_np))
                return tuple(None if g is None else 2 * g for g in grad_input)

            def pre(m, grad_output, log=log):
                log.append(("pre " + type(m).__name__, len(grad_output), []))
                return tuple(3 * g for g in grad_output)

            net[0].register_full_backward_hook(full)
            net[1].register_full_backward_hook(full)
            handle = net[2].register_full_backward_pre_hook(pre)
            xt = tensor(x, requires_grad=x_needs_grad)
            net(xt).sum().backward()
            handle.remove()
            net(tensor(x)).sum().backward()  # (without the pre-hook: its factor 3 no longer applies)
            grads = [np.array(p.grad.numpy() if lib is torch else p.grad.data) for p in net.parameters()]
            logs.append((log, grads, None if xt.grad is None else np.array(
                xt.grad.numpy() if lib is torch else xt.grad.data)))
        (tlog, tgrads, tx), (clog, cgrads, cx) = logs
        assert [e[:2] for e in tlog] == [e[:2] for e in clog]
        for te, ce in zip(tlog, clog):
            for a, b in zip(te[2], ce[2]):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(b, a, **TOL)
        for a, b in zip(tgrads, cgrads):
            np.testing.assert_allclose(b, a, **TOL)
        assert (tx is None) == (cx is None) and (tx is None or np.allclose(tx, cx, **TOL))


def test_forward_hooks_with_kwargs_and_prepend():
    layer = nn.Linear(2, 2, rng=0)
    order = []
    layer.register_forward_pre_hook(lambda m, args: order.append("second"))
    layer.register_forward_pre_hook(lambda m, args: order.append("first"), prepend=True)
    layer.register_forward_pre_hook(lambda m, args, kwargs: ((2 * args[0],), kwargs), with_kwargs=True)
    layer.register_forward_hook(lambda m, args, kwargs, out: out * 0 + len(kwargs), with_kwargs=True)
    assert layer(np.ones((1, 2))).data.tolist() == [[0.0, 0.0]] and order == ["first", "second"]


def test_backward_hook_on_a_module_with_several_outputs():
    gru = nn.GRU(2, 3, dtype=np.float64, rng=0)
    seen = []
    gru.register_full_backward_hook(lambda m, gi, go: seen.append((len(gi), [g.shape for g in go])))
    x = cr.Tensor(_normal(4, 1, 2), requires_grad=True)
    out, h = gru(x)
    out.sum().backward()
    assert seen == [(1, [(4, 1, 3), (1, 1, 3)])]  # the unused output's gradient: zeros (PyTorch: None)


# -- end to end: PyTorch tutorial programs, same weights, the same losses step by step -------------------------
def _train(lib, model, batches, steps, loss_of, lr=0.05):
    opt = (torch.optim if lib is torch else optim).SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = loss_of(model, *batches[step % len(batches)])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_tiny_transformer_seq2seq_trains_as_in_pytorch():
    """A tutorial-style sequence-to-sequence model: embeddings, nn.Transformer with masks, a linear head,
    cross entropy with teacher forcing; SGD with momentum, 6 steps."""
    vocab, d = 11, 16

    def build(lib, **kw):
        class Seq2Seq(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.src_emb = lib.nn.Embedding(vocab, d, padding_idx=0, **kw)
                self.tgt_emb = lib.nn.Embedding(vocab, d, **kw)
                self.transformer = lib.nn.Transformer(d, 2, 1, 1, 32, dropout=0.0, batch_first=True, **kw)
                self.head = lib.nn.Linear(d, vocab, **kw)

            def forward(self, src, tgt):
                mask = lib.nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
                if lib is torch:
                    mask = mask.double()
                h = self.transformer(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=mask,
                                     src_key_padding_mask=src == 0)
                return self.head(h)

        return Seq2Seq()

    torch.manual_seed(0)
    tm = build(torch).double()
    cm = build(cr, dtype=np.float64)
    _same_weights(tm, cm)
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(3):
        src = rng.integers(1, vocab, size=(4, 6))
        src[0, 4:] = 0
        tgt = rng.integers(1, vocab, size=(4, 5))
        batches.append((src, tgt))

    def loss_of(lib):
        def fn(model, src, tgt):
            wrap = torch.tensor if lib is torch else np.asarray
            logits = model(wrap(src), wrap(tgt[:, :-1]))
            return lib.nn.functional.cross_entropy(logits.reshape(-1, vocab), wrap(tgt[:, 1:].reshape(-1)))
        return fn

    tl = _train(torch, tm, batches, 6, loss_of(torch))
    cl = _train(cr, cm, batches, 6, loss_of(cr))
    np.testing.assert_allclose(cl, tl, rtol=1e-10)
    assert tl[-1] < tl[0]


def test_conv_autoencoder_trains_as_in_pytorch():
    """A tutorial-style convolutional autoencoder: Conv2d, GroupNorm, ReLU down; ConvTranspose2d, InstanceNorm2d,
    Upsample up; MSE reconstruction loss; SGD with momentum, 5 steps."""

    def build(lib, **kw):
        n = lib.nn
        return n.Sequential(
            n.Conv2d(1, 4, 3, stride=2, padding=1, **kw), n.GroupNorm(2, 4, **kw), n.ReLU(),
            n.Conv2d(4, 8, 3, stride=2, padding=1, **kw), n.ReLU(),
            n.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1, **kw),
            n.InstanceNorm2d(4, affine=True, **kw), n.ReLU(),
            n.Upsample(scale_factor=2, mode="bilinear"), n.Conv2d(4, 1, 3, padding=1, **kw), n.Sigmoid(),
        )

    torch.manual_seed(0)
    tm, cm = build(torch).double(), build(cr, dtype=np.float64)
    _same_weights(tm, cm)
    images = np.random.default_rng(0).uniform(size=(2, 6, 1, 8, 8))

    def loss_of(lib):
        wrap = torch.tensor if lib is torch else np.asarray
        return lambda model, x: lib.nn.functional.mse_loss(model(wrap(x)), wrap(x))

    tl = _train(torch, tm, [(images[0],), (images[1],)], 5, loss_of(torch), lr=0.5)
    cl = _train(cr, cm, [(images[0],), (images[1],)], 5, loss_of(cr), lr=0.5)
    np.testing.assert_allclose(cl, tl, rtol=1e-10)


def test_hooks_that_return_nothing_leave_gradients_of_gradients_unchanged():
    net = nn.Sequential(nn.Linear(2, 3, dtype=np.float64, rng=0), nn.Tanh(), nn.Linear(3, 1, dtype=np.float64, rng=1))
    x = _normal(4, 2)

    def derivatives():
        xt = cr.Tensor(x, requires_grad=True)
        (g,) = cr.autograd.grad(net(xt).sum(), [xt], create_graph=True)
        (gg,) = cr.autograd.grad((g * g).sum(), [xt])
        return g.data, gg.data

    plain = derivatives()
    calls = []
    for m in net:
        m.register_full_backward_hook(lambda m, gi, go: calls.append(type(m).__name__))
        m.register_full_backward_pre_hook(lambda m, go: None)
    hooked = derivatives()
    assert calls[:3] == ["Linear", "Tanh", "Linear"]
    for a, b in zip(plain, hooked):
        np.testing.assert_allclose(b, a, **TOL)
