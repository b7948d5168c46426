"""bench/bench_gpt_quality.py's measurements: the held-out functions it picks, its bits per byte, and the
PyTorch twin completing through chainrule's completion logic (the script itself runs in test_bench.py)."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chainrule import nn
from chainrule.gpt import ByteTokenizer, corpus_documents, train_bpe

BENCH = Path(__file__).resolve().parent.parent / "bench"


def bench_module(name: str):
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Q = bench_module("bench_gpt_quality")

SOURCE = '''import os


class A:
    @property
    def name(self):
        """The name."""
        # a comment first
        return self._name

    def long(self):
        """Too long a body."""
        a = 1
        b = 2
        return a + b


def no_doc(x):
    return x


def f(x,
      y):
    """Add
    them."""

    return x + y
'''


def test_functions_are_prompts_up_to_the_docstring_dedented():
    found = Q.functions([("m.py", SOURCE)], n=10, body_lines=2)
    assert [(f["line"], f["first_line"]) for f in found] == [(6, "# a comment first"), (22, "return x + y")]
    assert found[0]["prompt"] == 'def name(self):\n    """The name."""\n'
    assert found[1]["prompt"] == 'def f(x,\n      y):\n    """Add\n    them."""\n'
    assert found[1]["original"] == "\n    return x + y\n"
    assert len(Q.functions([("m.py", SOURCE)], n=10, body_lines=3)) == 3
    assert [f["line"] for f in Q.functions([("m.py", SOURCE)], n=1, body_lines=3)] == [6]


def test_held_out_documents_are_chainrule_gpt_trains_validation_files():
    docs = [(f"{i}.py", f"x = {i}\n") for i in range(30)]
    assert [p for p, _ in Q.held_out(docs)] == ["9.py", "19.py", "29.py"]


def test_bits_per_byte_of_a_uniform_model():
    tokens = np.arange(1, 66) % 256
    uniform = lambda x: np.zeros(x.shape + (256,))  # noqa: E731
    assert Q.bits_per_byte(uniform, tokens, ByteTokenizer(), context=8, batch=3, limit=None) == pytest.approx(8.0)
    tok = train_bpe(["def f(x):\n    return x\n"] * 20, vocab_size=64)
    ids = np.array(tok.encode("def f(x):\n    return x\n" * 3))
    n = (len(ids) - 1) // 4 * 4
    nbytes = len(tok.decode([int(i) for i in ids[1: n + 1]]).encode())
    bpe = Q.bits_per_byte(lambda x: np.zeros(x.shape + (tok.vocab_size,)), ids, tok, context=4, batch=2, limit=None)
    assert bpe == pytest.approx(n * math.log2(tok.vocab_size) / nbytes)


@pytest.mark.oracle
@pytest.mark.parametrize("recipe", ["gpt2", "modern"])
def test_the_torch_twin_completes_as_chainrule_does(recipe):
    torch = pytest.importorskip("torch")
    twins = bench_module("_torch_gpt"), bench_module("_torch_gpt_modern")
    config = nn.GPTConfig.from_recipe(recipe, vocab_size=256, context_length=16, d_model=32, n_heads=4, n_layers=2)
    model = nn.GPT(config, seed=1, dtype=np.float64)
    twin = twins[0].TorchGPT(config) if recipe == "gpt2" else twins[1].TorchModernGPT(config)
    twins[0].copy_weights(twin, model)
    prompt = 'def f(x):\n    """Twice x, a docstring longer than the context."""\n    return'
    funcs = [{"path": "f.py", "line": 1, "prompt": prompt, "first_line": "return 2 * x"}]
    ours = Q.complete_all(model, ByteTokenizer(), funcs, max_tokens=24)
    theirs = Q.complete_all(Q.TorchLM(torch, twin), ByteTokenizer(), funcs, max_tokens=24)
    assert ours["completions"][0]["completion"] == theirs["completions"][0]["completion"] != ""
    x = np.arange(32).reshape(2, 16)
    with torch.no_grad():
        expected = twin(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(Q.TorchLM(torch, twin).forward_logits(x), expected)


def test_functions_a_bpe_tokenizer_cannot_encode_are_left_out():
    tok = train_bpe([SOURCE] * 5, vocab_size=300)
    accented = SOURCE.replace("The name.", "Le nom: é.")
    assert [f["line"] for f in Q.functions([("m.py", accented)], n=10, body_lines=3, tokenizer=tok)] == [11, 22]
    assert len(Q.functions([("m.py", accented)], n=10, body_lines=3)) == 3


def test_a_chainrule_gpt_train_run_is_measured_on_the_files_it_held_out(tmp_path):
    run = [sys.executable, "-m", "chainrule", "gpt", "train", "--steps", "3", "--layers", "1", "--d-model", "16",
           "--heads", "2", "--context", "16", "--batch-size", "2", "--max-bytes", "1000000", "--quiet",
           "--out", str(tmp_path / "run")]
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src")}
    assert subprocess.run(run, capture_output=True, env=env).returncode == 0
    out = subprocess.run([sys.executable, str(BENCH / "bench_gpt_quality.py"), "--checkpoint", str(tmp_path / "run"),
                          "--functions", "2", "--max-tokens", "4", "--eval-tokens", "500"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    docs = corpus_documents(max_bytes=1_000_000)  # the run's --max-bytes, not the script's default
    assert f"held out: {len(Q.held_out(docs))} of {len(docs)} files" in out.stdout
    row = next(line for line in out.stdout.splitlines() if line.startswith("chainrule")).split()
    assert row[2] == "3" and 5.0 < float(row[5]) < 9.0  # its 3 steps; about 8 bits per byte untrained


@pytest.mark.oracle
def test_the_torch_side_trains_as_the_trainer_does(tmp_path):
    torch = pytest.importorskip("torch")
    from chainrule.gpt import TokenStream, TrainConfig, Trainer, write_tokens

    twins, train_loop = bench_module("_torch_gpt_modern"), bench_module("_torch_train")
    paths = write_tokens([f"def f_{i}(x):\n    return x * {i}\n" for i in range(60)], ByteTokenizer(), tmp_path)
    train, val = TokenStream(paths["train"]), TokenStream(paths["val"])
    config = nn.GPTConfig.from_recipe("modern", vocab_size=256, context_length=16, d_model=32, n_heads=4, n_layers=2)
    model = nn.GPT(config, seed=0, dtype=np.float64)
    twin = twins.TorchModernGPT(config)
    bench_module("_torch_gpt").copy_weights(twin, model)
    tconfig = TrainConfig(batch_size=4, lr=1e-2, min_lr=1e-3, warmup_steps=2, max_steps=6, eval_interval=3,
                          grad_clip=0.5, workers=1)
    ours = Trainer(model, train, val, tconfig).fit(progress=False)
    theirs = train_loop.train(torch, twin, train, val, tconfig, config.context_length)
    np.testing.assert_allclose(theirs["train_loss"], ours["train_loss"], rtol=1e-9)
    np.testing.assert_allclose(theirs["val_loss"], ours["val_loss"], rtol=1e-9)
    assert theirs["val_step"] == ours["val_step"] == [3, 6]
