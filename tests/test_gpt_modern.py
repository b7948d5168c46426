"""The modern GPT recipe (RMSNorm, rotary positions, SwiGLU, grouped-query attention, no biases):
its configuration, sizes, key/value cache, checkpoints, and PyTorch as the oracle for the whole
model with the same weights (logits, every gradient, ten AdamW steps through the Trainer):
``|a - b| / |b|`` <= 1e-5 in float32, 1e-10 in float64."""

from __future__ import annotations

import importlib.util
import math
import os
import sys

import numpy as np
import pytest

from chainrule import nn
from chainrule.gpt import TokenStream, TrainConfig, Trainer, lm_loss
from chainrule.gpt.checkpoint import load_gpt
from chainrule.gpt.memory import parameter_count
from chainrule.gpt.tokens import ByteTokenizer
from chainrule.nn.language_model.modern import apply_rope, rope_tables

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
TOL = {np.float32: 1e-5, np.float64: 1e-10}
CONFIG = dict(vocab_size=40, context_length=12, d_model=16, n_heads=4, n_layers=2)


def bench_module(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def modern(**fields):
    return nn.GPTConfig.from_recipe("modern", **{**CONFIG, **fields})


def stream(tmp_path, n=600, vocab=40, seed=0, name="train"):
    path = tmp_path / f"{name}.bin"
    np.random.default_rng(seed).integers(0, vocab, size=n).astype(np.uint16).tofile(path)
    return TokenStream(path)


# -- configuration ----------------------------------------------------------------------------------
def test_recipes_name_their_choices_and_defaults_stay_gpt2():
    assert nn.GPTConfig(vocab_size=10).recipe == "gpt2"
    c = modern(n_kv_heads=2)
    assert (c.recipe, c.norm, c.mlp, c.position, c.bias, c.kv_heads) == ("modern", "rms", "swiglu", "rope", False, 2)
    assert nn.GPTConfig(vocab_size=10, norm="rms").recipe == "custom"
    assert modern(d_model=128, n_heads=4).hidden == 344  # 2/3 of 4 * 128, rounded up to a multiple of 8
    assert modern(mlp_hidden=20).hidden == 20


@pytest.mark.parametrize("fields, words", [
    (dict(n_kv_heads=3), "n_kv_heads=3 must be a positive divisor"),
    (dict(n_kv_heads=0), "positive divisor"),
    (dict(norm="batch"), "norm must be one of"),
    (dict(mlp="relu"), "mlp must be one of"),
    (dict(position="alibi"), "position must be one of"),
    (dict(d_model=12, n_heads=4), "head size d_model / n_heads = 3 must be even"),
    (dict(rope_theta=float("nan")), "rope_theta"),
    (dict(mlp_hidden=0), "mlp_hidden"),
])
def test_bad_recipe_fields_are_refused_by_name(fields, words):
    with pytest.raises(ValueError, match=words):
        modern(**fields)
    with pytest.raises(ValueError, match="recipe must be one of"):
        nn.GPTConfig.from_recipe("llama", vocab_size=10)


@pytest.mark.parametrize("fields", [
    {}, dict(n_kv_heads=1), dict(n_kv_heads=2, bias=True, tied_embeddings=False), dict(norm="layer"),
    dict(mlp="gelu"), dict(position="learned"), dict(mlp_hidden=24),
])
def test_parameter_count_formula_matches_the_built_model(fields):
    config = modern(**fields)
    assert parameter_count(config) == nn.GPT(config).num_parameters()


def test_gpt2_layout_still_builds_transformer_blocks():
    model = nn.GPT(nn.GPTConfig(**CONFIG), seed=0)
    assert all(type(b) is nn.TransformerBlock for b in model.blocks) and model.wpe is not None
    assert model.wpe is not None
    assert nn.GPT(modern(), seed=0).wpe is None


# -- rotary positions -------------------------------------------------------------------------------
def test_rope_keeps_lengths_and_makes_scores_depend_on_relative_position_only():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))

    def score(m, n):
        cq, sq = rope_tables(np.array([m]), 8, 10000.0, np.float64)
        ck, sk = rope_tables(np.array([n]), 8, 10000.0, np.float64)
        return float((apply_rope(q, cq, sq) @ apply_rope(k, ck, sk).T)[0, 0])

    cos, sin = rope_tables(np.array([5]), 8, 10000.0, np.float64)
    assert math.isclose(np.linalg.norm(apply_rope(q, cos, sin)), np.linalg.norm(q), rel_tol=1e-12)
    assert math.isclose(score(3, 1), score(9, 7), rel_tol=1e-12)
    assert not math.isclose(score(3, 1), score(3, 2), rel_tol=1e-3)
    assert math.isclose(score(0, 0), float((q @ k.T)[0, 0]), rel_tol=1e-12)  # position 0 is not turned


def test_rope_on_tensors_has_second_order_gradients():
    from chainrule import Tensor, grad

    cos, sin = rope_tables(np.arange(3), 4, 10000.0, np.float64)
    x0 = np.random.default_rng(1).normal(size=(3, 4))

    def f(x):
        return (apply_rope(x, cos, sin) ** 3).sum()

    g = grad(f)(Tensor(x0))
    eps = 1e-6
    e = np.zeros_like(x0)
    e[1, 2] = eps
    fd = (float(f(Tensor(x0 + e))) - float(f(Tensor(x0 - e)))) / (2 * eps)
    assert math.isclose(float(np.asarray(g.data)[1, 2]), fd, rel_tol=1e-6)
    h = grad(lambda x: grad(f)(x)[1, 2])(Tensor(x0))  # a row of the Hessian
    gp, gm = (np.asarray(grad(f)(Tensor(x0 + s * e)).data) for s in (1, -1))
    np.testing.assert_allclose(np.asarray(h.data), (gp - gm) / (2 * eps), rtol=1e-5, atol=1e-8)  # symmetric Hessian


# -- key/value cache --------------------------------------------------------------------------------
@pytest.mark.parametrize("kv", [None, 1, 2])
def test_sampling_with_the_cache_gives_the_tokens_sampling_without_it_gives(kv):
    model = nn.GPT(modern(n_kv_heads=kv), seed=3)
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    for options in (dict(temperature=0), dict(top_k=5, seed=4), dict(top_p=0.9, seed=5)):
        a = model.generate(prompt, 15, use_cache=True, **options)  # past the context: the window slides
        b = model.generate(prompt, 15, use_cache=False, **options)
        np.testing.assert_array_equal(a, b)


def test_the_cache_holds_only_the_key_value_heads():
    model = nn.GPT(modern(n_kv_heads=1), seed=0)
    assert model.new_caches(2)[0].k.shape == (2, 1, CONFIG["context_length"], 4)
    caches = model.new_caches(1)
    full = model(np.array([[1, 2, 3, 4, 5]])).data
    model(np.array([[1, 2, 3]]), caches)
    step = model(np.array([[4, 5]]), caches).data  # two new tokens at positions 3 and 4
    np.testing.assert_allclose(step, full[:, 3:], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fields", [dict(n_kv_heads=2), dict(norm="layer", mlp="gelu", bias=True, n_kv_heads=1),
                                    dict(position="learned", tied_embeddings=False)])
def test_sampling_on_arrays_computes_the_tensor_forwards_logits(fields):
    from chainrule.nn.language_model.modern import modern_layout

    model = nn.GPT(modern(**fields), seed=2).eval()
    assert modern_layout(model) and not modern_layout(model.train())
    assert not modern_layout(nn.GPT(nn.GPTConfig(**CONFIG)).eval())
    model.eval()
    idx = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_allclose(model.sampling_logits(idx), model(idx).data, rtol=1e-5, atol=1e-6)
    fast, slow = model.new_caches(2), model.new_caches(2)
    for part in (idx[:, :3], idx[:, 3:]):
        np.testing.assert_allclose(model.sampling_logits(part, fast), model(part, slow).data, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fast[0].k[:, :, :4], slow[0].k[:, :, :4], rtol=1e-6, atol=1e-7)


# -- checkpoints ------------------------------------------------------------------------------------
def test_checkpoints_record_the_recipe_and_old_ones_load_as_gpt2(tmp_path):
    from chainrule.gpt.checkpoint import FORMAT
    from chainrule.nn.serialize import save_checkpoint

    train = stream(tmp_path, vocab=40)
    for config in (modern(vocab_size=256, n_kv_heads=2), nn.GPTConfig(**{**CONFIG, "vocab_size": 256})):
        model = nn.GPT(config, seed=0)
        trainer = Trainer(model, train, train, TrainConfig(batch_size=2, max_steps=1, warmup_steps=0),
                          extra={"tokenizer": ByteTokenizer().spec()})
        path = tmp_path / "ckpt.npz"
        trainer.save(path)
        loaded, _, extra = load_gpt(path)
        assert loaded.config == config and extra["model_config"]["position"] == config.position
        x = np.array([[1, 2, 3]])
        np.testing.assert_array_equal(loaded(x).data, model.eval()(x).data)
    old = {k: v for k, v in nn.GPTConfig(**{**CONFIG, "vocab_size": 256}).to_dict().items()
           if k not in ("norm", "mlp", "position", "n_kv_heads", "rope_theta", "mlp_hidden")}
    gpt2 = nn.GPT(nn.GPTConfig(**old), seed=0)
    save_checkpoint(tmp_path / "old.npz", model=gpt2, format=FORMAT, model_config=old, tokenizer=ByteTokenizer().spec())
    loaded, _, _ = load_gpt(tmp_path / "old.npz")
    assert loaded.config.recipe == "gpt2" and type(loaded.blocks[0]) is nn.TransformerBlock
    state = nn.load(path)  # the GPT-2 run saved last, as an older version wrote it: resumes
    state["extra"]["model_config"] = old
    nn.save(state, tmp_path / "old_run.npz")
    trainer = Trainer(nn.GPT(nn.GPTConfig(**old), seed=0), train, train, TrainConfig(batch_size=2, max_steps=2))
    trainer.resume(tmp_path / "old_run.npz")
    assert trainer.step_count == 0


# -- PyTorch as the oracle --------------------------------------------------------------------------
def twins(dtype, **fields):
    torch = pytest.importorskip("torch")
    T, M = bench_module("_torch_gpt"), bench_module("_torch_gpt_modern")
    config = modern(**fields)
    model = nn.GPT(config, seed=1, dtype=dtype)
    torch.manual_seed(0)
    tmodel = M.TorchModernGPT(config)
    T.copy_weights(tmodel, model)
    return torch, T, M, model, tmodel


ORACLE_CASES = {
    "modern": dict(), "gqa": dict(n_kv_heads=2), "mqa untied": dict(n_kv_heads=1, tied_embeddings=False),
    "modern with biases": dict(bias=True, n_kv_heads=2),
    "rope with layernorm and gelu": dict(norm="layer", mlp="gelu", bias=True),
}


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", list(ORACLE_CASES))
def test_logits_and_every_gradient_match_torch(dtype, case, tmp_path):
    torch, T, M, model, tmodel = twins(dtype, **ORACLE_CASES[case])
    x, y = stream(tmp_path).batch(4, CONFIG["context_length"], np.random.default_rng(3))
    logits = model(x)
    tlogits = tmodel(torch.from_numpy(x))
    tol = TOL[dtype]
    assert rel(logits.data, tlogits.detach().numpy()) <= tol
    loss = lm_loss(model, x, y)
    loss.backward()
    tloss = torch.nn.functional.cross_entropy(tlogits.reshape(-1, CONFIG["vocab_size"]),
                                              torch.from_numpy(y).reshape(-1))
    tloss.backward()
    assert abs(float(loss) - tloss.item()) <= tol * abs(tloss.item())
    tgrads = {n: p.grad.numpy() for n, p in tmodel.named_parameters()}
    assert sorted(tgrads) == sorted(n for n, _ in model.named_parameters())
    for name, p in model.named_parameters():
        assert p.grad.dtype == dtype
        assert rel(p.grad.data, tgrads[name]) <= tol, name


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_ten_adamw_steps_match_torch(dtype, tmp_path):
    torch, T, M, model, tmodel = twins(dtype, n_kv_heads=2)
    train = stream(tmp_path)
    cfg = TrainConfig(batch_size=4, max_steps=8, warmup_steps=3, lr=1e-2, min_lr=1e-3, weight_decay=0.1,
                      betas=(0.9, 0.95), grad_clip=0.5, seed=5, workers=1)
    trainer = Trainer(model, train, train, cfg)
    topt = torch.optim.AdamW(T.torch_weight_decay_groups(tmodel, 0.1), lr=1e-2, betas=(0.9, 0.95), eps=1e-8)
    tsched = T.warmup_cosine(topt, 3, 8, eta_min=1e-3)
    rng = np.random.default_rng(5)  # the trainer's data generator, replayed for torch
    tol = TOL[dtype]
    for step in range(10):
        loss, norm = trainer.step()
        x, y = train.batch(4, CONFIG["context_length"], rng)
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(tmodel(torch.from_numpy(x)).reshape(-1, CONFIG["vocab_size"]),
                                                  torch.from_numpy(y).reshape(-1))
        tloss.backward()
        tnorm = torch.nn.utils.clip_grad_norm_(tmodel.parameters(), 0.5).item()
        topt.step()
        if step < 8:
            tsched.step()
        else:  # chainrule's schedule holds eta_min past its end (see test_gpt_oracle)
            for g in topt.param_groups:
                g["lr"] = 1e-3
        assert abs(loss - tloss.item()) <= tol * abs(tloss.item()), step
        assert abs(norm - tnorm) <= tol * tnorm, step
        tparams = dict(tmodel.named_parameters())
        for name, p in model.named_parameters():
            assert rel(p.grad.data, tparams[name].grad.numpy()) <= tol, (step, name, "grad")
            assert rel(p.data, tparams[name].detach().numpy()) <= tol, (step, name, "value")
    assert loss < trainer.history["train_loss"][0]
    trainer.close()


@pytest.mark.oracle
def test_greedy_tokens_with_the_cache_match_torch_with_its_cache():
    torch, T, M, model, tmodel = twins(np.float64, n_kv_heads=2)
    prompt = np.array([[1, 2, 3], [7, 8, 9]])
    ours = model.generate(prompt, 8, temperature=0)
    theirs = M.greedy(tmodel, torch.from_numpy(prompt), 8).numpy()
    np.testing.assert_array_equal(ours, theirs)


# -- command line -----------------------------------------------------------------------------------
def cli_run(capsys, *argv):
    from chainrule import cli

    try:
        code = cli.main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_gpt_train_recipe_flags_build_record_and_resume_the_modern_model(capsys, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(20):
        (corpus / f"m{i:02d}.py").write_text(f"def add_{i}(x):\n    return x + {i}\n")
    out = tmp_path / "run"
    tiny = ["--corpus", str(corpus), "--out", str(out), "--layers", "1", "--d-model", "16", "--heads", "4",
            "--context", "16", "--batch-size", "4", "--eval-interval", "3", "--warmup", "1", "--quiet"]
    code, text, err = cli_run(capsys, "gpt", "train", "--recipe", "modern", "--kv-heads", "2", "--steps", "3", *tiny)
    assert code == 0, err
    assert "(modern recipe, 1 layer(s)" in text
    model, _, extra = load_gpt(out / "checkpoint.npz")
    assert model.config.recipe == "modern" and model.config.kv_heads == 2 and model.wpe is None
    assert extra["cli_options"]["recipe"] == "modern" and extra["cli_options"]["norm"] == "rms"
    code, _, err = cli_run(capsys, "gpt", "train", "--resume", "--out", str(out), "--recipe", "gpt2", "--quiet")
    assert code == 1 and "--recipe gpt2 differs from the saved run's modern" in err
    code, text, err = cli_run(capsys, "gpt", "train", "--resume", "--out", str(out), "--steps", "4", "--quiet")
    assert code == 0 and "step 4:" in text, err
    code, text, _ = cli_run(capsys, "gpt", "sample", "--checkpoint", str(out), "--tokens", "5", "--temperature", "0")
    assert code == 0 and text.startswith("def ")
    code, text, err = cli_run(capsys, "gpt", "train", "--recipe", "gpt2", "--norm", "rms", "--position", "rope",
                              "--steps", "2", *tiny[:3], str(tmp_path / "run2"), *tiny[4:])
    assert code == 0, err
    assert load_gpt(tmp_path / "run2" / "checkpoint.npz")[0].config.recipe == "custom"
    code, _, err = cli_run(capsys, "gpt", "train", "--kv-heads", "3", "--steps", "2", *tiny[:3],
                           str(tmp_path / "run3"), *tiny[4:])
    assert code == 1 and "n_kv_heads=3 must be a positive divisor" in err and len(err.strip().splitlines()) == 1


def test_gpt_train_help_lists_every_recipe_option_with_its_default(capsys):
    code, text, _ = cli_run(capsys, "gpt", "train", "--help")
    assert code == 0
    flat = " ".join(text.split())
    for words in ("--recipe {gpt2,modern}", "(default: 'modern')", "--norm {layer,rms}", "--mlp {gelu,swiglu}",
                  "--position {learned,rope}", "--bias {on,off}", "--kv-heads", "(default: --heads)",
                  "--rope-theta", "(default: 10000.0)"):
        assert words in flat, words
