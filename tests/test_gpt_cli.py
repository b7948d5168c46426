"""``chainrule gpt train`` then ``chainrule gpt sample`` end to end on a tiny corpus, and every
user error ending in exactly one line on stderr (no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from chainrule import cli, nn

TINY = ["--layers", "1", "--d-model", "16", "--heads", "2", "--context", "16", "--batch-size", "4",
        "--eval-interval", "3", "--warmup", "2", "--quiet"]


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i in range(30):
        (folder / f"m{i:02d}.py").write_text(f"def add_{i}(x):\n    return x + {i}\n")
    return folder


def run(capsys, *argv):
    try:
        code = cli.main(list(argv))
    except SystemExit as e:  # argparse's errors (status 2)
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, argv, phrase, status=1):
    code, _, err = run(capsys, *argv)
    assert code == status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chainrule gpt "), err
    assert phrase in lines[0], lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("tokenizer", ["byte", "bpe"])
def test_train_then_sample_end_to_end(capsys, tmp_path, corpus, tokenizer):
    if tokenizer == "bpe":
        pytest.importorskip("tokenizers")
    out = tmp_path / "run"
    code, text, _ = run(capsys, "gpt", "train", "--corpus", str(corpus), "--out", str(out), "--steps", "6",
                        "--tokenizer", tokenizer, "--vocab-size", "120", *TINY)
    assert code == 0
    assert "corpus: 30 files" in text and "step 6: training loss" in text
    names = {"checkpoint.npz", "train.bin", "val.bin"} | ({"tokenizer.json"} if tokenizer == "bpe" else set())
    assert names <= set(os.listdir(out))
    state = nn.load(out / "checkpoint.npz")
    assert state["extra"]["step"] == 6 and state["extra"]["tokenizer"]["kind"] == tokenizer
    code, text, _ = run(capsys, "gpt", "sample", "--checkpoint", str(out / "checkpoint.npz"), "--prompt", "def ",
                        "--tokens", "20", "--seed", "1", "--top-k", "5")
    assert code == 0 and text.startswith("def ")
    again = run(capsys, "gpt", "sample", "--checkpoint", str(out / "checkpoint.npz"), "--prompt", "def ",
                "--tokens", "20", "--seed", "1", "--top-k", "5", "--no-cache")
    assert again[1] == text  # the key/value cache changes nothing but the speed
    code, text, _ = run(capsys, "gpt", "train", "--out", str(out), "--resume", "--quiet")
    assert code == 0 and "resuming at step 6 of 6" in text
    if tokenizer == "bpe":
        one_line_error(capsys, ["gpt", "sample", "--checkpoint", str(out / "checkpoint.npz"), "--prompt", "λ + 1"],
                       "never saw in its corpus: 'λ'")


def test_loss_curve_is_written(capsys, tmp_path, corpus):
    pytest.importorskip("matplotlib")
    out = tmp_path / "run"
    code, text, _ = run(capsys, "gpt", "train", "--corpus", str(corpus), "--out", str(out), "--steps", "3", *TINY)
    assert code == 0 and f"loss curve: {out / 'loss.png'}" in text
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_user_errors_are_one_line(capsys, tmp_path, corpus):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "blank.py").write_text("  \n")
    train = ["gpt", "train", "--steps", "2", *TINY]
    one_line_error(capsys, [*train, "--corpus", str(tmp_path / "nowhere"), "--out", str(tmp_path / "a")], "is missing")
    one_line_error(capsys, [*train, "--corpus", str(empty), "--out", str(tmp_path / "b")], "holds no non-empty UTF-8")
    one_line_error(capsys, [*train, "--out", str(tmp_path / "c"), "--resume"], "does not exist")
    one_line_error(capsys, [*train, "--corpus", str(corpus), "--out", str(tmp_path / "d"), "--context", "4000"],
                   "fewer than context_length + 1")
    assert run(capsys, *train, "--corpus", str(corpus), "--out", str(tmp_path / "e"))[0] == 0
    one_line_error(capsys, [*train, "--corpus", str(corpus), "--out", str(tmp_path / "e")], "already holds a run")
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes((tmp_path / "e" / "checkpoint.npz").read_bytes()[:500])
    sample = ["gpt", "sample", "--prompt", "def "]
    one_line_error(capsys, [*sample, "--checkpoint", str(damaged)], "is damaged or not an .npz archive")
    one_line_error(capsys, [*sample, "--checkpoint", str(tmp_path / "none.npz")], "does not exist")
    nn.save({"w": np.zeros(2)}, tmp_path / "plain.npz")
    one_line_error(capsys, [*sample, "--checkpoint", str(tmp_path / "plain.npz")], "not a chainrule GPT checkpoint")
    good = str(tmp_path / "e" / "checkpoint.npz")
    one_line_error(capsys, ["gpt", "sample", "--checkpoint", good, "--prompt", ""], "the prompt is empty")
    one_line_error(capsys, [*sample, "--checkpoint", good, "--top-p", "1.5"], "argument --top-p: must be in (0, 1], "
                   "got 1.5 (see chainrule gpt sample --help)", status=2)


def test_gpt_without_a_subcommand_prints_its_help(capsys):
    code, out, _ = run(capsys, "gpt")
    assert code == 2 and "{train,sample,complete" in out


def test_the_installed_command_prints_no_traceback(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-Werror", "-m", "chainrule", "gpt", "sample", "--checkpoint",
                           str(tmp_path / "x.npz")], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == f"chainrule gpt sample: error: checkpoint {str(tmp_path / 'x.npz')!r} does not exist"
