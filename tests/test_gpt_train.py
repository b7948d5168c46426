"""chainrule.gpt: corpus, tokenizers, token streams, weight-decay groups, training that learns,
gradient accumulation, and checkpoints that resume exactly."""

from __future__ import annotations

import doctest
import math
import os

import numpy as np
import pytest

import chainrule.gpt
import chainrule.optim.groups
from chainrule import nn, optim
from chainrule.gpt import (
    ByteTokenizer,
    GPTError,
    TokenStream,
    TrainConfig,
    Trainer,
    corpus,
    corpus_files,
    dataset,
    load_gpt,
    plotting,
    read_corpus,
    tokenizer_from_spec,
    tokens,
    training,
    write_tokens,
)
from chainrule.gpt import checkpoint as gpt_checkpoint

TINY = dict(vocab_size=256, context_length=16, d_model=16, n_heads=2, n_layers=1)
CODE = [f"def add_{i}(x):\n    return x + {i}\n" for i in range(400)]


@pytest.mark.parametrize("module", [chainrule.gpt, corpus, dataset, tokens, training, plotting, chainrule.optim.groups],
                         ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    if module is tokens or module is chainrule.gpt.plotting:
        pytest.importorskip("tokenizers" if module is tokens else "matplotlib")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# -- corpus -----------------------------------------------------------------------------------------
def write(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


def test_corpus_is_sorted_skips_non_utf8_installed_packages_and_respects_the_cap(tmp_path):
    write(tmp_path, {"b/z.py": "z = 1\n", "a.py": "a = 1\n", "latin.py": b"s = '\xe9'\n", "blank.py": "\n\n",
                     "site-packages/pkg.py": "no = 1\n", "c.txt": "not python"})
    names = [os.path.relpath(p, tmp_path) for p in corpus_files(tmp_path)]
    assert names == ["a.py", "b/z.py", "blank.py", "latin.py"]
    assert read_corpus(tmp_path) == ["a = 1\n", "z = 1\n"]
    assert read_corpus(tmp_path, max_bytes=7) == ["a = 1\n"]


def test_a_capped_corpus_spans_the_folder(tmp_path):
    write(tmp_path, {f"m{i}.py": f"x = {i}\n" for i in range(10)})  # 6 bytes each
    assert read_corpus(tmp_path, max_bytes=18) == ["x = 0\n", "x = 4\n", "x = 8\n"]  # every 4th file
    assert len(read_corpus(tmp_path, max_bytes=60)) == 10


def test_corpus_documents_name_the_files_a_run_holds_out(tmp_path):
    write(tmp_path, {f"m{i:02d}.py": f"x = {i}\n" for i in range(20)})
    docs = chainrule.gpt.corpus_documents(tmp_path)
    assert [t for _, t in docs] == read_corpus(tmp_path)
    assert [os.path.basename(p) for p, _ in docs] == [f"m{i:02d}.py" for i in range(20)]
    held = [t for (_, t), v in zip(docs, dataset.validation_documents(len(docs), 0.1)) if v]
    paths = write_tokens([t for _, t in docs], ByteTokenizer(), tmp_path / "run", val_fraction=0.1)
    val = bytes(np.fromfile(paths["val"], dtype=np.uint16).astype(np.uint8)).decode()
    assert held == ["x = 9\n", "x = 19\n"] and val == "".join(t + dataset.DOC_SEPARATOR for t in held)


def test_default_corpus_is_the_standard_library():
    files = corpus_files(chainrule.gpt.default_corpus_dir())
    assert any(p.endswith(os.sep + "os.py") for p in files)
    assert not any("site-packages" in p for p in files)
    texts = read_corpus(max_bytes=50_000)
    assert len(texts) >= 1 and (sum(len(t.encode()) for t in texts) <= 50_000 or len(texts) == 1)


@pytest.mark.parametrize("case", ["missing", "file", "empty"])
def test_bad_corpus_raises_one_line(tmp_path, case):
    root = {"missing": tmp_path / "nope", "file": tmp_path / "f.py", "empty": tmp_path}[case]
    (tmp_path / "f.py").write_text("")
    with pytest.raises(GPTError) as e:
        read_corpus(root)
    expected = {"missing": "is missing", "file": "is a file, not a folder", "empty": "holds no non-empty UTF-8"}[case]
    assert expected in str(e.value) and "\n" not in str(e.value)


# -- tokenizers -------------------------------------------------------------------------------------
def test_byte_tokenizer_round_trips_any_text():
    tok = ByteTokenizer()
    text = "def f():\n\treturn 'é ✓'\n"
    assert tok.decode(tok.encode(text)) == text
    assert max(tok.encode(text)) < 256
    assert isinstance(tokenizer_from_spec(tok.spec()), ByteTokenizer)
    with pytest.raises(GPTError, match=r"ids must be in \[0, 256\), got \[300\]"):
        tok.decode([1, 300])


def test_bpe_tokenizer_compresses_round_trips_and_names_unknown_characters():
    pytest.importorskip("tokenizers")
    tok = chainrule.gpt.train_bpe(CODE, vocab_size=300)
    assert tok.vocab_size <= 300
    text = "def add_7(x):\n    return x + 7\n"
    ids = tok.encode(text)
    assert tok.decode(ids) == text and len(ids) < len(text) / 2
    again = tokenizer_from_spec(tok.spec())
    assert again.encode(text) == ids
    with pytest.raises(GPTError, match=r"never saw in its corpus: 'Zé'"):
        tok.encode("def Zé")
    with pytest.raises(GPTError, match="the saved BPE tokenizer is damaged"):
        tokenizer_from_spec({"kind": "bpe", "json": "{not json"})
    with pytest.raises(GPTError, match="unknown tokenizer description 'wordpiece'"):
        tokenizer_from_spec({"kind": "wordpiece"})


# -- token streams ----------------------------------------------------------------------------------
def test_write_tokens_splits_at_the_end_and_batches_are_shifted_seeded_windows(tmp_path):
    paths = write_tokens(["abc" * 100], ByteTokenizer(), tmp_path, val_fraction=0.1)
    train, val = TokenStream(paths["train"]), TokenStream(paths["val"])
    everything = list(b"abc" * 100 + b"\n\n")
    assert list(train.tokens) + list(val.tokens) == everything and len(val) == 30
    x, y = train.batch(5, 8, np.random.default_rng(1))
    x2, _ = train.batch(5, 8, np.random.default_rng(1))
    assert x.shape == y.shape == (5, 8) and x.dtype == np.int64
    assert (x == x2).all() and (x[:, 1:] == y[:, :-1]).all()
    assert all(bytes(row.tolist()) in bytes(everything) for row in y)  # windows are contiguous text
    with pytest.raises(GPTError, match="fewer than context \\+ 1 = 31"):
        val.batch(1, 30, np.random.default_rng(0))


def test_validation_is_whole_files_spread_over_the_corpus(tmp_path):
    texts = [f"doc{i:02d}" for i in range(20)]
    paths = write_tokens(texts, ByteTokenizer(), tmp_path, val_fraction=0.1)
    val = bytes(TokenStream(paths["val"]).tokens.tolist()).decode()
    train = bytes(TokenStream(paths["train"]).tokens.tolist()).decode()
    assert val == "doc09\n\ndoc19\n\n"
    assert train == "".join(t + "\n\n" for t in texts if t not in ("doc09", "doc19"))
    assert chainrule.gpt.dataset.validation_documents(5, 0.4) == [False, False, True, False, True]


def test_too_small_corpus_and_missing_token_file_raise(tmp_path):
    with pytest.raises(GPTError, match="the corpus is too small: 4 tokens"):
        write_tokens(["ab"], ByteTokenizer(), tmp_path)
    with pytest.raises(GPTError, match="is missing or empty"):
        TokenStream(tmp_path / "none.bin")


# -- weight decay groups ----------------------------------------------------------------------------
def test_weight_decay_groups_decay_only_linear_weights():
    model = nn.GPT(nn.GPTConfig(**{**TINY, "tied_embeddings": False}), seed=0)
    decay, rest = optim.weight_decay_groups(model, 0.1, names=True)
    assert decay["weight_decay"] == 0.1 and rest["weight_decay"] == 0.0
    assert decay["names"] == ["blocks.0.attn.c_attn.weight", "blocks.0.attn.c_proj.weight",
                              "blocks.0.mlp.0.weight", "blocks.0.mlp.2.weight", "lm_head.weight"]
    assert all(n.endswith("bias") or n.startswith(("wte", "wpe")) or ".ln_" in n or n.startswith("ln_f")
               for n in rest["names"])
    assert len(decay["params"]) + len(rest["params"]) == len(list(model.parameters()))
    tied = nn.GPT(nn.GPTConfig(**TINY), seed=0)
    groups = optim.weight_decay_groups(tied, 0.1, names=True)
    assert "wte.weight" in groups[1]["names"] and sum(len(g["names"]) for g in groups) == len(list(tied.parameters()))
    with pytest.raises(ValueError, match="weight_decay must be >= 0"):
        optim.weight_decay_groups(tied, -1.0)


# -- training ---------------------------------------------------------------------------------------
def streams(folder, texts=CODE):
    paths = write_tokens(texts, ByteTokenizer(), folder)
    return TokenStream(paths["train"]), TokenStream(paths["val"])


def unigram_entropy(stream: TokenStream) -> float:
    p = np.bincount(np.asarray(stream.tokens), minlength=256) / len(stream)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def test_a_tiny_model_learns_below_what_ignoring_the_context_allows(tmp_path):
    train, val = streams(tmp_path)
    model = nn.GPT(nn.GPTConfig(**{**TINY, "context_length": 32, "d_model": 32}), seed=0)
    config = TrainConfig(batch_size=8, max_steps=60, warmup_steps=5, lr=1e-2, eval_interval=20)
    history = Trainer(model, train, val, config).fit(progress=False)
    # the best model that ignores the context predicts the unigram frequencies: its loss is their entropy
    h = unigram_entropy(val)
    assert history["val_loss"][0] < math.log(256)
    assert history["val_loss"][-1] < 0.65 * h, (history["val_loss"], h)
    assert history["val_step"] == [20, 40, 60] and len(history["train_loss"]) == 60


def test_gradient_accumulation_equals_one_big_batch(tmp_path):
    train, val = streams(tmp_path)
    results = []
    for batch, accum in ((8, 1), (4, 2)):
        model = nn.GPT(nn.GPTConfig(**TINY), seed=0, dtype=np.float64)
        trainer = Trainer(model, train, val, TrainConfig(batch_size=batch, accum_steps=accum, max_steps=3,
                                                         warmup_steps=1, grad_clip=0.5))
        losses = [trainer.step()[0] for _ in range(3)]
        results.append((losses, [p.data.copy() for p in model.parameters()]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_resume_gives_exactly_the_parameters_of_an_uninterrupted_run(tmp_path, dropout):
    train, val = streams(tmp_path)
    config = TrainConfig(batch_size=4, max_steps=6, warmup_steps=2, eval_interval=3, grad_clip=0.5)
    make = lambda: nn.GPT(nn.GPTConfig(**{**TINY, "dropout": dropout}), seed=0)  # noqa: E731
    whole = Trainer(make(), train, val, config)
    whole.fit(progress=False)
    ckpt = tmp_path / "ckpt.npz"
    first = Trainer(make(), train, val, config, checkpoint_path=ckpt)
    first.fit(progress=False, stop_after=3)
    assert first.step_count == 3
    second = Trainer(nn.GPT(nn.GPTConfig(**{**TINY, "dropout": dropout}), seed=123), train, val, config)
    second.resume(ckpt)
    second.fit(progress=False)
    for (name, a), b in zip(whole.model.named_parameters(), second.model.parameters()):
        assert np.array_equal(a.data, b.data), name
    assert second.history == whole.history | {"tokens_per_s": second.history["tokens_per_s"]}
    assert second.optimizer.state_dict()["param_groups"] == whole.optimizer.state_dict()["param_groups"]


def test_checkpoint_loads_model_and_tokenizer_and_damage_is_one_line(tmp_path):
    train, val = streams(tmp_path)
    model = nn.GPT(nn.GPTConfig(**TINY), seed=0)
    ckpt = tmp_path / "ckpt.npz"
    Trainer(model, train, val, TrainConfig(batch_size=4, max_steps=2, warmup_steps=1), checkpoint_path=ckpt,
            tokenizer=ByteTokenizer()).fit(progress=False)
    loaded, tok, extra = load_gpt(ckpt)
    assert isinstance(tok, ByteTokenizer) and extra["step"] == 2 and not loaded.training
    assert all(np.array_equal(a.data, b.data) for a, b in zip(model.parameters(), loaded.parameters()))
    data = ckpt.read_bytes()
    cases = {
        "truncated.npz": (data[: len(data) // 2], "is damaged or not an .npz archive"),
        "noise.npz": (b"\x00garbage" * 10, "is damaged or not an .npz archive"),
        "pickle.npz": (b"\x80\x04K\x01.", "holds pickled Python objects; refused"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(GPTError, match=message) as e:
            load_gpt(tmp_path / name)
        assert "\n" not in str(e.value)
    nn.save({"w": np.zeros(2)}, tmp_path / "plain.npz")
    with pytest.raises(GPTError, match="is not a chainrule GPT checkpoint"):
        load_gpt(tmp_path / "plain.npz")
    with pytest.raises(GPTError, match="does not exist"):
        load_gpt(tmp_path / "missing.npz")
    state = nn.load(ckpt)
    state["model"]["wte.weight"] = np.zeros((3, 3), np.float32)
    nn.save(state, tmp_path / "wrong.npz")
    with pytest.raises(GPTError, match="its model does not load"):
        gpt_checkpoint.load_gpt(tmp_path / "wrong.npz")


def test_train_config_checks_its_values():
    with pytest.raises(GPTError, match="batch_size must be a positive integer, got 0"):
        TrainConfig(batch_size=0)
    with pytest.raises(GPTError, match="give max_steps, minutes, or both"):
        TrainConfig(max_steps=None)
    assert TrainConfig.from_dict(TrainConfig(betas=(0.8, 0.9)).to_dict()) == TrainConfig(betas=(0.8, 0.9))


def test_a_time_budget_alone_fixes_the_schedule_after_timing_the_first_steps(tmp_path):
    train, val = streams(tmp_path)
    trainer = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val,
                      TrainConfig(batch_size=4, max_steps=None, minutes=0.02, warmup_steps=2, eval_interval=1000))
    history = trainer.fit(progress=False)
    assert trainer.total_steps < 10**9 and trainer.scheduler.warmup_steps < trainer.total_steps
    assert len(history["train_loss"]) >= training.PROBE_STEPS and history["val_step"][-1] == trainer.step_count


def test_a_resumed_budget_run_keeps_the_schedule_it_fixed(tmp_path):
    train, val = streams(tmp_path)
    config = TrainConfig(batch_size=4, max_steps=None, minutes=10.0, warmup_steps=2, eval_interval=1000)
    first = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val, config, checkpoint_path=tmp_path / "b.npz")
    first.fit(progress=False, stop_after=training.PROBE_STEPS)  # that step turns the budget into a length
    assert first.step_count == training.PROBE_STEPS and first.total_steps < 10**9
    again = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val, config)
    again.resume(tmp_path / "b.npz")
    again.fit(progress=False, stop_after=5)
    assert again.step_count == training.PROBE_STEPS + 5 and again.total_steps == first.total_steps
