"""PyTorch as the oracle for GPT training: the same model, weights and batches in chainrule and
torch give the same loss, gradients, and parameters after clipping + AdamW (weight-decay
groups) + warm-up/cosine schedule, for one step and for ten. Errors are measured per tensor,
relative to its norm: ``|a - b| / |b|`` <= 1e-5 in float32, 1e-10 in float64."""

from __future__ import annotations

import importlib.util
import math
import os
import sys

import numpy as np
import pytest

from chainrule import nn, optim
from chainrule.gpt import TokenStream, TrainConfig, Trainer, lm_loss
from chainrule.gpt.workers import fork_available

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")


def twin():
    spec = importlib.util.spec_from_file_location("_torch_gpt", os.path.join(BENCH, "_torch_gpt.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


TOL = {np.float32: 1e-5, np.float64: 1e-10}
CONFIG = dict(vocab_size=40, context_length=12, d_model=16, n_heads=2, n_layers=2)


def rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def without_key_bias(bias):
    """The query and value thirds of c_attn's bias. The key third has a zero gradient in exact
    arithmetic (softmax ignores a constant added to a whole row of scores), so in float32 both
    libraries hand Adam rounding noise, and Adam's update of a noise-sized gradient is about
    +-lr whatever the noise: those entries cannot agree, and do not matter."""
    d = CONFIG["d_model"]
    return np.concatenate([bias[:d], bias[2 * d:]])


def stream(tmp_path, n=600, vocab=40, seed=0, name="train"):
    path = tmp_path / f"{name}.bin"
    np.random.default_rng(seed).integers(0, vocab, size=n).astype(np.uint16).tofile(path)
    return TokenStream(path)


def twins(dtype, tied=True):
    T = twin()
    cfg = nn.GPTConfig(**CONFIG, tied_embeddings=tied)
    model = nn.GPT(cfg, seed=1, dtype=dtype)
    tmodel = T.TorchGPT(cfg)
    T.copy_weights(tmodel, model)
    return T, model, tmodel


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_one_batch_gives_torch_loss_and_every_gradient(dtype, tied, tmp_path):
    T, model, tmodel = twins(dtype, tied)
    x, y = stream(tmp_path).batch(4, CONFIG["context_length"], np.random.default_rng(3))
    loss = lm_loss(model, x, y)
    loss.backward()
    logits = tmodel(torch.from_numpy(x))
    tloss = torch.nn.functional.cross_entropy(logits.reshape(-1, CONFIG["vocab_size"]), torch.from_numpy(y).reshape(-1))
    tloss.backward()
    tol = TOL[dtype]
    assert abs(float(loss) - tloss.item()) <= tol * abs(tloss.item())
    tgrads = {n: p.grad.numpy() for n, p in tmodel.named_parameters()}
    for name, p in model.named_parameters():
        assert p.grad.dtype == dtype
        assert rel(p.grad.data, tgrads[name]) <= tol, name


@pytest.mark.parametrize("workers", [1, 2], ids=["one process", "split between 2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_ten_training_steps_match_torch_adamw_groups_clipping_and_schedule(dtype, workers, tmp_path):
    if workers > 1 and not fork_available():
        pytest.skip("forked workers need Linux")
    T, model, tmodel = twins(dtype)
    train, val = stream(tmp_path), stream(tmp_path, seed=1, name="val")
    cfg = TrainConfig(batch_size=4, max_steps=8, warmup_steps=3, lr=1e-2, min_lr=1e-3, weight_decay=0.1,
                      betas=(0.9, 0.95), grad_clip=0.5, seed=5, workers=workers)
    trainer = Trainer(model, train, val, cfg)
    assert trainer.processes == workers
    topt = torch.optim.AdamW(T.torch_weight_decay_groups(tmodel, 0.1), lr=1e-2, betas=(0.9, 0.95), eps=1e-8)
    tsched = T.warmup_cosine(topt, 3, 8, eta_min=1e-3)
    rng = np.random.default_rng(5)  # the trainer's data generator, replayed for torch
    tol = TOL[dtype]
    clipped = 0
    for step in range(10):  # two steps past the end of the schedule: both hold eta_min... see the schedule test
        lr = trainer.optimizer.param_groups[0]["lr"]
        loss, norm = trainer.step()
        x, y = train.batch(4, CONFIG["context_length"], rng)
        topt.zero_grad()
        tlr = topt.param_groups[0]["lr"]
        tloss = torch.nn.functional.cross_entropy(tmodel(torch.from_numpy(x)).reshape(-1, CONFIG["vocab_size"]),
                                                  torch.from_numpy(y).reshape(-1))
        tloss.backward()
        tnorm = torch.nn.utils.clip_grad_norm_(tmodel.parameters(), 0.5).item()
        topt.step()
        if step < 8:
            tsched.step()
        else:  # PyTorch's cosine rises again after T_max; WarmupCosineLR holds eta_min (documented)
            for g in topt.param_groups:
                g["lr"] = 1e-3
        clipped += norm > 0.5
        assert math.isclose(lr, tlr, rel_tol=1e-12), (step, lr, tlr)
        assert abs(loss - tloss.item()) <= tol * abs(tloss.item()), step
        assert abs(norm - tnorm) <= tol * tnorm, step
        tparams = dict(tmodel.named_parameters())
        for name, p in model.named_parameters():
            ours, theirs = p.data, tparams[name].detach().numpy()
            assert rel(p.grad.data, tparams[name].grad.numpy()) <= tol, (step, name, "grad")
            if name.endswith("c_attn.bias") and dtype == np.float32:
                ours, theirs = without_key_bias(ours), without_key_bias(theirs)
            assert rel(ours, theirs) <= tol, (step, name, "value")
    assert clipped >= 3, "the test must exercise clipping"
    assert loss < trainer.history["train_loss"][0]
    trainer.close()


def test_warmup_cosine_equals_pytorch_sequential_lr_then_holds_eta_min():
    T = twin()
    w = nn.Parameter(np.zeros(1))
    opt = optim.SGD([w], lr=0.5)
    sched = optim.WarmupCosineLR(opt, warmup_steps=4, total_steps=12, eta_min=0.01)
    tw = torch.zeros(1, requires_grad=True)
    topt = torch.optim.SGD([tw], lr=0.5)
    tsched = T.warmup_cosine(topt, 4, 12, eta_min=0.01)
    ours, theirs = [], []
    for _ in range(16):
        ours.append(opt.param_groups[0]["lr"])
        theirs.append(topt.param_groups[0]["lr"])
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
    np.testing.assert_allclose(ours[:13], theirs[:13], rtol=1e-12)
    assert ours[12:] == [0.01] * 4  # after the last step: held at eta_min
    assert theirs[13] > 0.01 and theirs[15] > theirs[13]  # torch's cosine is periodic: it climbs back
