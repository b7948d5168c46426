"""``chainrule gpt complete``: where a completion stops (the dedent, a blank line after a complete
statement, the token budget, stop strings), tested with a stub model that emits a scripted text,
the streaming pieces, the sampler against ``nn.GPT.generate``, and the command's input and errors."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from chainrule import cli, nn
from chainrule.gpt import ByteTokenizer
from chainrule.gpt.completion import Completion, block_end, block_indent, iter_tokens, statement_complete


class Scripted:
    """A 'model' whose most likely next byte is the next one of ``script`` (then spaces), whatever it is given."""

    def __init__(self, script: str, context_length: int = 64) -> None:
        self.script = list(script.encode("utf-8"))
        self.config = type("Config", (), {"context_length": context_length})()
        self.training = False
        self.calls = 0

    def eval(self):
        return self

    def __call__(self, idx):
        token = self.script[self.calls] if self.calls < len(self.script) else ord(" ")
        self.calls += 1
        logits = np.zeros((1, np.shape(idx)[1], 256))
        logits[0, -1, token] = 100.0  # certain even when sampled
        return logits


def complete(prompt, script, **options):
    return Completion(Scripted(script), ByteTokenizer(), prompt, block=True, **options)


# -- the rules, on text ------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt, indent", [
    ("def f(x):\n", 1), ("def f(x):", 1), ("def f(x):\n    y = 1\n", 4), ("class A:\n    def f(self):  # hi\n", 5),
    ("x = 1\n", 0), ("", 0), ("\n\n", 0), ("if a:\n\tb()\n", 8), ("    s = 'a:'\n", 4),
])
def test_block_indent_is_the_last_lines_or_one_more_after_a_colon(prompt, indent):
    assert block_indent(prompt) == indent


@pytest.mark.parametrize("code, complete_", [
    ("def f(x):\n    return x\n", True), ("x = f(1,\n", False), ('s = """abc\n', False),
    ("    y = 1\n    return y\n", True),  # a fragment of a function body, indented
    ("def f(x):\n", False), ("    return g(\n", False), ("    z = [1]\n  w = 2\n", True),
])
def test_statement_complete(code, complete_):
    assert statement_complete(code) is complete_


def test_block_end_at_the_dedent_and_at_a_blank_line_after_a_statement():
    assert block_end("def f(x):\n", "    y = x\n    return y\nprint(f(1))") == len("    y = x\n    return y\n")
    assert block_end("def f(x):\n", "    y = x\n    return y\n\n") == len("    y = x\n    return y\n")
    assert block_end("def f(x):\n", "    y = x\n    return y\n") is None  # not yet
    assert block_end("def f(x):\n", "    y = x\n    return y\n   ") is None  # indentation still coming
    assert block_end("def f(x):\n", "    return g(1,\n\n             2)\n") is None  # a bracket is open
    assert block_end("def f(x):\n", '    """Doc.\n\n    More."""\n') is None  # a string is open
    assert block_end("def f(x):\n", "\n    return x\n") is None  # nothing completed yet
    assert block_end("def f(x):\n    ret", "urn x\nx = 1") == len("urn x\n")  # the prompt's line continues
    assert block_end("class A:\n    def f(self):\n", "        return 1\n    def g(self):") == \
        len("        return 1\n")  # a method's body ends at the next method
    assert block_end("class A:\n    def f(self):\n        pass\n", "    def g(self):") == 0  # f's body had ended
    assert block_end("x = 1\n", "y = 2\nz = 3\n") is None  # top level: no dedent possible


# -- the rules, on a scripted model ------------------------------------------------------------------
def test_completion_stops_at_the_dedent_and_prints_only_the_block():
    c = complete("def f(x):\n", "    y = x + 1\n    return y\nprint(f(2))\n")
    assert str(c) == "    y = x + 1\n    return y" and c.finish_reason == "stop"


def test_completion_stops_at_a_blank_line_after_a_complete_statement():
    c = complete("def f(x):\n    y = x\n", "    return y\n\n    z = 1\n")
    assert str(c) == "    return y" and c.finish_reason == "stop"


def test_completion_stops_at_the_token_budget():
    c = complete("def f(x):\n", "    return [\n        1,\n        2,\n    ]\n", max_tokens=12)
    assert str(c) == "    return [" and c.finish_reason == "length" and c.completion_tokens == 12
    c = complete("def f(x):\n", "    return [\n          ", max_tokens=20)
    assert str(c) == "    return [" and c.finish_reason == "length"  # no trailing blank space


def test_stop_strings_cut_and_streamed_pieces_add_up_to_the_text_holding_back_a_stop_prefix():
    model = Scripted("abc END def")
    c = Completion(model, ByteTokenizer(), "x", max_tokens=50, stop=["END", "zzz"])
    pieces = list(c)
    assert "".join(pieces) == c.text == "abc " and c.finish_reason == "stop"
    assert all("E" not in p for p in pieces)


def test_a_character_of_several_bytes_is_sent_whole():
    c = Completion(Scripted("é = 1"), ByteTokenizer(), "x", max_tokens=6)  # 6 bytes
    pieces = list(c)
    assert pieces[0] == "é" and "".join(pieces) == "é = 1" and c.finish_reason == "length"
    assert list(Completion(Scripted("abc"), ByteTokenizer(), "x", max_tokens=0)) == []


@pytest.mark.parametrize("recipe", ["gpt2", "modern"])
def test_iter_tokens_gives_generates_tokens_past_the_context(recipe):
    model = nn.GPT(nn.GPTConfig.from_recipe(recipe, vocab_size=20, context_length=8, d_model=16, n_heads=2,
                                            n_layers=1), seed=0)
    prompt = [1, 2, 3]
    tokens = iter_tokens(model, prompt, temperature=0.9, top_k=5, seed=7)
    ours = [next(tokens) for _ in range(12)]
    expected = model.generate(np.array([prompt]), 12, temperature=0.9, top_k=5, seed=7)[0, 3:]
    assert ours == expected.tolist()


# -- the command -------------------------------------------------------------------------------------
def run(capsys, *argv):
    try:
        code = cli.main(list(argv))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def scripted_checkpoint(monkeypatch):
    """`complete` loading a scripted model instead of a checkpoint."""
    from chainrule.gpt import checkpoint, memory

    def fake_load(path):
        model = Scripted("    return x * 2\n\nprint(1)\n")
        model.wte = nn.Embedding(1, 1)  # what the command reads the dtype from
        return model, ByteTokenizer(), {}

    monkeypatch.setattr(checkpoint, "load_gpt", fake_load)
    monkeypatch.setattr(memory, "sampling_bytes", lambda *a: 0)


def test_complete_reads_a_file_and_prints_only_the_completion(capsys, tmp_path, scripted_checkpoint, monkeypatch):
    src = tmp_path / "code.py"
    src.write_text("import os\n\ndef double(x):\n")
    code, out, err = run(capsys, "gpt", "complete", "--checkpoint", str(tmp_path), str(src))
    assert code == 0, err
    assert out == "    return x * 2\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"def double(x):\n")))
    code, out, err = run(capsys, "gpt", "complete", "--checkpoint", str(tmp_path), "--max-tokens", "6")
    assert code == 0 and out == "    re\n", err


def test_complete_with_a_trained_checkpoint_runs_end_to_end(capsys, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(10):
        (corpus / f"m{i}.py").write_text(f"def add_{i}(x):\n    return x + {i}\n")
    run_dir = tmp_path / "run"
    code, _, err = run(capsys, "gpt", "train", "--corpus", str(corpus), "--out", str(run_dir), "--steps", "2",
                       "--layers", "1", "--d-model", "16", "--heads", "2", "--context", "16", "--batch-size", "2",
                       "--recipe", "modern", "--quiet")
    assert code == 0, err
    src = tmp_path / "a.py"
    src.write_text("def f(x):\n")
    code, out, err = run(capsys, "gpt", "complete", "--checkpoint", str(run_dir), str(src), "--max-tokens", "5",
                         "--temperature", "0.8", "--top-k", "3", "--seed", "2")
    assert code == 0 and err == "" and len(out.encode("utf-8", "replace")) <= 5 * 3 + 1


@pytest.mark.parametrize("setup, argv, phrase", [
    (None, ["missing.py"], "'missing.py' does not exist"),
    ("folder", ["folder"], "is a folder"),
    ("empty", ["empty.py"], "holds no code to complete"),
    ("latin", ["latin.py"], "is not UTF-8 text (byte 0xe9"),
])
def test_complete_refuses_bad_input_in_one_line(capsys, tmp_path, monkeypatch, setup, argv, phrase):
    monkeypatch.chdir(tmp_path)
    if setup == "folder":
        (tmp_path / "folder").mkdir()
    elif setup == "empty":
        (tmp_path / "empty.py").write_text("  \n")
    elif setup == "latin":
        (tmp_path / "latin.py").write_bytes(b"s = '\xe9'\n")
    code, _, err = run(capsys, "gpt", "complete", *argv)
    assert code == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and phrase in err, err


def test_complete_without_checkpoint_names_the_default_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("def f():\n")
    code, _, err = run(capsys, "gpt", "complete", "a.py")
    assert code == 1 and "no --checkpoint given and the default run" in err
    code, _, err = run(capsys, "gpt", "complete", "a.py", "--max-tokens", "0")
    assert code == 2 and "--max-tokens" in err
