"""The GPT model: one forward/backward against a PyTorch twin with the same weights (loss and every
parameter's gradient), MultiheadAttention against torch.nn.MultiheadAttention with a copied state
dict, and sampling: the key/value cache gives the same tokens as full passes for the same seed."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn

CONFIG = nn.GPTConfig(vocab_size=13, context_length=8, d_model=16, n_heads=2, n_layers=2)


def torch_twin(model: nn.GPT, torch):
    """The same GPT written in PyTorch, holding copies of the chainrule model's weights."""
    tnn, tF = torch.nn, torch.nn.functional
    c = model.config

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            d = c.d_model
            self.ln_1 = tnn.LayerNorm(d)
            self.attn = tnn.Module()
            self.attn.c_attn, self.attn.c_proj = tnn.Linear(d, 3 * d), tnn.Linear(d, d)
            self.ln_2 = tnn.LayerNorm(d)
            self.mlp = tnn.Sequential(tnn.Linear(d, c.mlp_ratio * d), tnn.GELU(), tnn.Linear(c.mlp_ratio * d, d))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.attn.c_attn(self.ln_1(x)).view(b, t, 3, c.n_heads, d // c.n_heads).permute(2, 0, 3, 1, 4)
            y = tF.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
            x = x + self.attn.c_proj(y)
            return x + self.mlp(self.ln_2(x))

    class GPT(tnn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = tnn.Embedding(c.vocab_size, c.d_model), tnn.Embedding(c.context_length, c.d_model)
            self.blocks = tnn.ModuleList(Block() for _ in range(c.n_layers))
            self.ln_f = tnn.LayerNorm(c.d_model)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.T

    twin = GPT().to(getattr(torch, model.wte.weight.data.dtype.name))
    twin.load_state_dict({k: torch.tensor(v) for k, v in model.state_dict().items()})
    return twin


@pytest.mark.oracle
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-5), (np.float64, 1e-10)])
def test_one_training_step_matches_pytorch(dtype, rtol):
    torch = pytest.importorskip("torch")
    model = nn.GPT(CONFIG, seed=0, dtype=dtype)
    twin = torch_twin(model, torch)
    rng = np.random.default_rng(1)
    idx, targets = rng.integers(0, 13, (3, 8)), rng.integers(0, 13, (3, 8))
    logits = model(idx)
    loss = F.cross_entropy(logits.reshape(-1, 13), targets.reshape(-1))
    loss.backward()
    t_logits = twin(torch.tensor(idx)).reshape(-1, 13)
    t_loss = torch.nn.functional.cross_entropy(t_logits, torch.tensor(targets).reshape(-1))
    t_loss.backward()
    assert abs(float(loss) - t_loss.item()) <= rtol * abs(t_loss.item())
    t_grads = dict(twin.named_parameters())
    names = [n for n, _ in model.named_parameters()]
    assert sorted(names) == sorted(t_grads)
    for name, p in model.named_parameters():
        g, t = p.grad.data, t_grads[name].grad.numpy()
        assert g.dtype == dtype
        assert np.abs(g - t).max() <= rtol * np.abs(t).max(), name


def test_parameters_and_their_names():
    model = nn.GPT(CONFIG, seed=0)
    names = [n for n, _ in model.named_parameters()]
    assert names[:2] == ["wte.weight", "wpe.weight"] and names[-2:] == ["ln_f.weight", "ln_f.bias"]
    assert "blocks.1.attn.c_attn.weight" in names and "blocks.0.mlp.2.bias" in names
    d, v, L, c = 16, 13, 2, 8
    per_block = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
    assert model.num_parameters() == v * d + c * d + L * per_block + 2 * d
    untied = nn.GPT(nn.GPTConfig(**{**CONFIG.to_dict(), "tied_embeddings": False}), seed=0)
    assert untied.num_parameters() == model.num_parameters() + v * d
    assert model(np.zeros((1, 8), dtype=np.int64)).data.dtype == np.float32


def test_same_seed_same_model():
    a, b = nn.GPT(CONFIG, seed=3), nn.GPT(CONFIG, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_cached_logits_equal_full_passes():
    model = nn.GPT(CONFIG, seed=0, dtype=np.float64)
    idx = np.random.default_rng(0).integers(0, 13, (2, 7))
    full = model(idx).data
    with cr.no_grad():
        caches = model.new_caches(2)
        parts = [model(idx[:, :3], caches).data] + [model(idx[:, i:i + 1], caches).data for i in range(3, 7)]
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-12, atol=1e-12)


def test_sampling_logits_on_arrays_are_the_modules_logits_bit_for_bit():
    model = nn.GPT(nn.GPTConfig(vocab_size=13, context_length=8, d_model=16, n_heads=2, n_layers=2,
                                tied_embeddings=False), seed=0).eval()
    idx = np.random.default_rng(0).integers(0, 13, (2, 7))
    with cr.no_grad():
        assert nn.language_model.decode.standard_layout(model)
        np.testing.assert_array_equal(model.sampling_logits(idx), model(idx).data)
        c1, c2 = model.new_caches(2), model.new_caches(2)
        for part in (idx[:, :3], idx[:, 3:4], idx[:, 4:5]):  # a prompt, then one token at a time
            ours = model.sampling_logits(part, c1)
            assert isinstance(ours, np.ndarray)
            np.testing.assert_array_equal(ours, model(part, c2).data)
        np.testing.assert_array_equal(c1[1].k[:, :, :5], c2[1].k[:, :, :5])
    assert not nn.language_model.decode.standard_layout(model.train())  # dropout would act: the module itself runs
    model.eval().blocks[0].mlp = nn.Sequential(*model.blocks[0].mlp[:1], nn.ReLU(), *model.blocks[0].mlp[2:])
    assert not nn.language_model.decode.standard_layout(model)  # not the stock layers: the module itself runs
    with cr.no_grad():
        np.testing.assert_array_equal(model.sampling_logits(idx), model(idx).data)


def test_the_sampler_checks_the_layout_once_and_gives_the_same_logits():
    model = nn.GPT(CONFIG, seed=0).eval()
    idx = np.random.default_rng(0).integers(0, 13, (2, 5))
    run = model.sampler()
    with cr.no_grad():
        c1, c2 = model.new_caches(2), model.new_caches(2)
        np.testing.assert_array_equal(run(idx[:, :4], c1), model.sampling_logits(idx[:, :4], c2))
        np.testing.assert_array_equal(run(idx[:, 4:], c1), model.sampling_logits(idx[:, 4:], c2))
    model.blocks[0].mlp = nn.Sequential(*model.blocks[0].mlp[:1], nn.ReLU(), *model.blocks[0].mlp[2:])
    assert model.sampler() == model.sampling_logits  # not the stock layers: the module itself runs


@pytest.mark.parametrize("kw", [dict(), dict(temperature=0.7, top_k=4), dict(top_p=0.8), dict(temperature=0.0),
                                dict(temperature=1.3, top_k=3, top_p=0.9)])
def test_cache_gives_the_same_tokens(kw):
    model = nn.GPT(CONFIG, seed=0, dtype=np.float64)
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    with_cache = model.generate(prompt, 12, seed=5, **kw)  # 15 tokens: runs past the context of 8
    without = model.generate(prompt, 12, seed=5, use_cache=False, **kw)
    assert with_cache.shape == (2, 15) and with_cache.dtype == np.int64
    np.testing.assert_array_equal(with_cache, without)
    np.testing.assert_array_equal(with_cache[:, :3], prompt)


def test_sampling_is_seeded_and_respects_top_k_and_greedy():
    model = nn.GPT(CONFIG, seed=0)
    prompt = np.array([[1, 2]])
    a, b = model.generate(prompt, 6, seed=1), model.generate(prompt, 6, seed=1)
    np.testing.assert_array_equal(a, b)
    greedy = model.generate(prompt, 1, temperature=0.0)
    assert greedy[0, -1] == int(np.argmax(model(prompt).data[0, -1]))
    top1 = model.generate(prompt, 1, top_k=1, seed=9)
    assert top1[0, -1] == greedy[0, -1]


def test_filter_logits_top_p_keeps_the_smallest_set_reaching_p():
    from chainrule.nn.language_model.generate import filter_logits

    logits = np.log(np.array([[0.5, 0.3, 0.15, 0.05]]))
    kept = np.isfinite(filter_logits(logits, top_p=0.75))
    np.testing.assert_array_equal(kept, [[True, True, False, False]])
    np.testing.assert_array_equal(np.isfinite(filter_logits(logits, top_k=3)), [[True, True, True, False]])


@pytest.mark.parametrize("call, message", [
    (lambda m: m(np.zeros((1, 9), dtype=np.int64)), "9 tokens exceed context_length=8"),
    (lambda m: m(np.array([[0, 13]])), r"token ids must be in \[0, 13\)"),
    (lambda m: m(np.zeros(3, dtype=np.int64)), r"idx must be an integer array of shape \(batch, time\)"),
    (lambda m: m.generate(np.array([[1]]), 2, top_p=1.5), r"top_p must be in \(0, 1\]"),
    (lambda m: m.generate(np.array([[1]]), 2, top_k=0), "top_k must be a positive integer"),
    (lambda m: m.generate(np.array([[1]]), 2, temperature=-1), "temperature must be a finite number >= 0"),
])
def test_bad_inputs_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call(nn.GPT(CONFIG, seed=0))


def test_bad_config_is_named():
    with pytest.raises(ValueError, match="d_model=10 must be divisible by n_heads=4"):
        nn.GPTConfig(vocab_size=5, d_model=10, n_heads=4)
    with pytest.raises(ValueError, match="vocab_size must be a positive integer"):
        nn.GPTConfig(vocab_size=0)


@pytest.mark.oracle
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_matches_torch(batch_first):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=torch.float64)
    m = nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=np.float64)
    m.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    q = rng.normal(size=(3, 5, 8) if batch_first else (5, 3, 8))
    kv = rng.normal(size=(3, 4, 8) if batch_first else (4, 3, 8))
    pad = np.zeros((3, 4), bool)
    pad[0, 1] = True
    cases = [dict(), dict(need_weights=False), dict(key_padding_mask=pad),
             dict(attn_mask=rng.random((5, 4)) > 0.8, average_attn_weights=False),
             dict(attn_mask=rng.normal(size=(5, 4)))]
    for kw in cases:
        qt, kt = cr.Tensor(q, requires_grad=True), cr.Tensor(kv, requires_grad=True)
        out, w = m(qt, kt, kt, **kw)
        g = rng.normal(size=out.shape)
        out.backward(g)
        tq, tk = torch.tensor(q, requires_grad=True), torch.tensor(kv, requires_grad=True)
        to, tw = tm(tq, tk, tk, **{a: torch.tensor(b) if isinstance(b, np.ndarray) else b for a, b in kw.items()})
        to.backward(torch.tensor(g))
        np.testing.assert_allclose(out.data, to.detach().numpy(), rtol=1e-10, atol=1e-12)
        assert (w is None) == (tw is None)
        if w is not None:
            np.testing.assert_allclose(w.data, tw.detach().numpy(), rtol=1e-10, atol=1e-12)
        for a, t in ((qt, tq), (kt, tk)):
            np.testing.assert_allclose(a.grad.data, t.grad.numpy(), rtol=1e-10, atol=1e-12)
        params = dict(m.named_parameters())
        for name, p in tm.named_parameters():
            np.testing.assert_allclose(params[name].grad.data, p.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
        m.zero_grad()
        tm.zero_grad()
