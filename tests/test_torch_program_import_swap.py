"""A PyTorch training program that uses this issue's names (dtype names, random_split, samplers, DataLoader over
arrays, NAdam, CyclicLR, amp, compile, backends) runs with only ``import torch`` changed, and ends where PyTorch
does (the random parts use orders that do not depend on the generator)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def program(torch, init):
    """Written for PyTorch; ``torch`` is either library."""
    torch.backends.cudnn.benchmark = True
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 3))
    labels = (x[:, 0] > 0).astype(np.int64)

    class Points(torch.utils.data.Dataset):
        def __len__(self):
            return len(x)

        def __getitem__(self, i):
            return x[i], labels[i]

    part, val = torch.utils.data.random_split(Points(), [0.75, 0.25])
    assert len(part) == 18 and len(val) == 6
    train = torch.utils.data.Subset(Points(), list(range(24)))
    order = torch.utils.data.SequentialSampler(train)
    loader = torch.utils.data.DataLoader(train, batch_sampler=torch.utils.data.BatchSampler(order, 5, False))
    model = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        model.weight.copy_(torch.tensor(init[0]))
        model.bias.copy_(torch.tensor(init[1]))
    model = torch.compile(model)
    opt = torch.optim.NAdam(model.parameters(), lr=0.05, weight_decay=0.01, decoupled_weight_decay=True)
    sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3, cycle_momentum=True,
                                              base_momentum=0.85, max_momentum=0.95)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    for _ in range(3):
        for xb, yb in loader:
            assert yb.dtype == torch.long and xb.dtype == torch.float64
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb.long())
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
    probs = torch.softmax(model(torch.tensor(x[:4])), dim=1)
    picked = torch.multinomial(probs, 2)  # two different classes per row: a permutation of {0, 1}
    assert sorted(picked[0].tolist()) == [0, 1] and picked.dtype == torch.int64
    return [p.detach().numpy().copy() for p in model.parameters()], len(val)


def test_the_program_runs_with_the_import_swapped_and_ends_where_torch_does():
    init = (np.random.default_rng(1).standard_normal((2, 3)) * 0.3, np.zeros(2))
    ours, n_val = program(chainrule, init)
    theirs, n_val_torch = program(torch, init)
    assert n_val == n_val_torch == 6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def makemore_backprop_ninja(torch, F):
    """Karpathy's makemore exercise, condensed: a manual backward pass checked against autograd, with the
    in-place trick on a softmax output in the graph (``dlogits[range(n), Yb] -= 1``) and ``generator=``."""
    g = torch.Generator().manual_seed(2147483647)
    vocab, n_embd, block, n_hidden, n = 11, 5, 3, 16, 8
    C = torch.randn((vocab, n_embd), generator=g)
    W1 = torch.randn((n_embd * block, n_hidden), generator=g) * 0.2
    b1 = torch.randn(n_hidden, generator=g) * 0.1
    W2 = torch.randn((n_hidden, vocab), generator=g) * 0.1
    b2 = torch.randn(vocab, generator=g) * 0.1
    parameters = [C, W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    Xb = torch.randint(0, vocab, (n, block), generator=g)
    Yb = torch.randint(0, vocab, (n,), generator=g)
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    h = torch.tanh(embcat @ W1 + b1)
    logits = h @ W2 + b2
    for t in (logits, h, emb):
        t.retain_grad()
    loss = F.cross_entropy(logits, Yb)
    loss.backward()
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpre = (1.0 - h**2) * dh
    dW1 = embcat.T @ dhpre
    demb = (dhpre @ W1.T).view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            dC[Xb[k, j]] += demb[k, j]
    for mine, t in [(dlogits, logits), (dh, h), (dW2, W2), (db2, b2), (dW1, W1), (dC, C)]:
        assert torch.allclose(mine, t.grad, atol=1e-6), (mine - t.grad).abs().max()
    assert dlogits.requires_grad  # (in the graph: the write went through it)
    return loss.item()


def test_makemore_backprop_ninja_runs_as_written_in_both():
    import chainrule.nn.functional as crF

    makemore_backprop_ninja(torch, torch.nn.functional)
    assert np.isfinite(makemore_backprop_ninja(chainrule, crF))


def nanogpt_model(torch):
    """nanoGPT's model, condensed (its attention through scaled_dot_product_attention, tied embeddings)."""
    import math

    nn, F = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.c_attn, self.c_proj, self.heads = nn.Linear(d, 3 * d), nn.Linear(d, d), heads

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(d), Attention(d, heads), nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, vocab=17, block=8, d=16, heads=2, layers=2):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(vocab, d), wpe=nn.Embedding(block, d),
                                                  h=nn.ModuleList([Block(d, heads) for _ in range(layers)]),
                                                  ln_f=nn.LayerNorm(d)))
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

        def forward(self, idx, targets):
            pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    return GPT()


def nanogpt_steps(torch, model):
    """nanoGPT's train.py, condensed: its setup lines, then three AdamW steps of ``model``."""
    import inspect
    from contextlib import nullcontext

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}["float32"]
    device_type = "cpu"
    ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    extra = dict(fused=False) if "fused" in inspect.signature(torch.optim.AdamW).parameters else {}
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-2, betas=(0.9, 0.95), **extra)
    data = np.random.default_rng(0).integers(0, 17, (4, 9))
    x, y = torch.from_numpy(data[:, :-1].copy()), torch.from_numpy(data[:, 1:].copy())
    if device_type == "cuda":  # (nanoGPT's get_batch)
        x, y = x.pin_memory().to("cuda", non_blocking=True), y.pin_memory().to("cuda", non_blocking=True)
    else:
        x, y = x.to(device_type), y.to(device_type)
    losses = []
    for _ in range(3):
        with ctx:
            _, loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    torch.set_float32_matmul_precision("highest")
    return losses


def test_nanogpts_train_loop_runs_with_the_import_swapped_and_ends_where_torch_does():
    import warnings

    torch.manual_seed(0)
    theirs = nanogpt_model(torch)
    state = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    ours = nanogpt_model(chainrule)
    ours.load_state_dict(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.cuda.amp.GradScaler is deprecated in PyTorch
        want = nanogpt_steps(torch, theirs)
    got = nanogpt_steps(chainrule, ours)
    np.testing.assert_allclose(got, want, rtol=2e-5)
