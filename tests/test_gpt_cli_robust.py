"""``chainrule gpt``: every option documented with its default; every bad value, damaged file, odd
corpus entry, full disk, diverging run or changed option on --resume ends in one line (no traceback)."""

from __future__ import annotations

import argparse
import errno
import os
import shutil

import numpy as np
import pytest

from chainrule import cli, nn

TINY = ["--layers", "1", "--d-model", "16", "--heads", "2", "--context", "16", "--batch-size", "4",
        "--eval-interval", "3", "--warmup", "2", "--quiet"]


def run(capsys, *argv):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as e:  # argparse's errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def fails(capsys, argv, phrase, status=1):
    code, _, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == status and len(lines) == 1 and lines[0].startswith("chainrule gpt "), (code, err)
    assert phrase in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    for i in range(30):
        (folder / f"m{i:02d}.py").write_text(f"def add_{i}(x):\n    return x + {i}\n")
    return folder


@pytest.fixture(scope="module")
def trained(tmp_path_factory, corpus):
    out = tmp_path_factory.mktemp("runs") / "run"
    assert cli.main(["gpt", "train", "--corpus", str(corpus), "--out", str(out), "--steps", "6", *TINY]) == 0
    return out


def test_every_option_has_help_and_a_shown_default():
    parser = cli.build_parser()
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)][0]
    commands = dict(subparsers.choices)
    gpt = commands.pop("gpt")
    gpt_sub = [a for a in gpt._actions if isinstance(a, argparse._SubParsersAction)][0]
    commands.update({f"gpt {k}": v for k, v in gpt_sub.choices.items()})
    assert {"demo", "gpt train", "gpt sample"} <= set(commands)
    for name, sub in commands.items():
        text = sub.format_help()
        for action in sub._actions:
            if action.default is argparse.SUPPRESS or not action.option_strings:
                continue  # --help
            assert action.help, (name, action.option_strings)
            helptext = sub._get_formatter()._expand_help(action) if sub.formatter_class else action.help
            assert "default" in helptext, (name, action.option_strings, helptext)
        assert "(default: 0.003)" in text if name == "gpt train" else True


@pytest.mark.parametrize("argv, phrase", [
    (["train", "--seed", "-1"], "argument --seed: must be an integer >= 0, got -1"),
    (["train", "--minutes", "inf"], "argument --minutes: must be between 0.01 (0.6 s) and 525600 (a year) minutes"),
    (["train", "--minutes", "1e308"], "got 1e308"),
    (["train", "--minutes", "1e-9"], "got 1e-9"),
    (["train", "--minutes", "nan"], "got nan"),
    (["train", "--lr", "inf"], "argument --lr: must be a finite number > 0, got inf"),
    (["train", "--batch-size", "2.5"], "argument --batch-size: must be a positive integer, got 2.5"),
    (["train", "--dropout", "1"], "argument --dropout: must be in [0, 1), got 1"),
    (["sample", "--temperature", "nan"], "argument --temperature: must be a finite number >= 0, got nan"),
    (["sample", "--tokens", "-3"], "argument --tokens: must be an integer >= 0, got -3"),
])
def test_bad_values_are_one_line_naming_option_value_and_help(capsys, argv, phrase, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (code that accepted the value would train into ./gpt-run)
    line = fails(capsys, ["gpt", *argv], phrase, status=2)
    assert line.endswith(f"(see chainrule gpt {argv[0]} --help)")


@pytest.mark.parametrize("argv, phrase", [
    (["--batch-size", "1e9"], "training with --layers 1 --d-model 16 --context 16 --batch-size 1000000000 needs "
                              "about"),
    (["--layers", "1e6", "--d-model", "128", "--heads", "4"], "training with --layers 1000000 --d-model 128"),
])
def test_absurd_sizes_are_refused_up_front_with_the_estimate_and_the_limit(capsys, tmp_path, argv, phrase):
    small = [a for a in TINY]
    for flag, value in zip(argv[::2], argv[1::2]):
        small[small.index(flag) + 1] = value if flag in small else small[small.index(flag) + 1]
        small += [] if flag in TINY else [flag, value]
    line = fails(capsys, ["gpt", "train", "--corpus", tmp_path, "--out", tmp_path / "run", "--steps", "2", *small],
                 phrase)
    assert "GB of memory, more than this machine's" in line and "use smaller values" in line
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_sampling_absurdly_many_tokens_is_refused(capsys, trained):
    fails(capsys, ["gpt", "sample", "--checkpoint", trained, "--tokens", "1e12"],
          "sampling --tokens 1000000000000 needs about 64,000.0 GB of memory")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_and_a_dangling_link_in_the_corpus_are_skipped_and_said(capsys, tmp_path, corpus):
    folder = tmp_path / "corpus"
    shutil.copytree(corpus, folder)
    os.mkfifo(folder / "x.py")  # reading it would block forever
    os.symlink(folder / "gone.py", folder / "dangling.py")
    code, out, err = run(capsys, "gpt", "train", "--corpus", folder, "--out", tmp_path / "run", "--steps", "2", *TINY)
    assert code == 0 and "corpus: 30 files" in out
    assert "skipped 2 corpus entries that are not regular files" in err


def test_out_under_a_file_or_unwritable_is_one_line(capsys, tmp_path, corpus, monkeypatch):
    (tmp_path / "file").write_text("")
    train = ["gpt", "train", "--corpus", corpus, "--steps", "2", *TINY]
    fails(capsys, [*train, "--out", tmp_path / "file"], "is a file, not a folder")
    fails(capsys, [*train, "--out", tmp_path / "file" / "run"], "cannot write under --out")

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    import tempfile

    monkeypatch.setattr(tempfile, "mkstemp", denied)  # (this test may run as root, whom chmod does not stop)
    fails(capsys, [*train, "--out", tmp_path / "locked"], f"cannot write under --out {str(tmp_path / 'locked')!r} "
                                                          "(Permission denied); pick a folder you can write to")
    assert not (tmp_path / "locked").exists()


def test_a_full_disk_is_one_line_and_keeps_the_last_checkpoint(capsys, tmp_path, corpus, monkeypatch):
    out = tmp_path / "run"
    real = np.lib.format.write_array

    def write_array(*args, **kwargs):
        if (out / "checkpoint.npz").exists():  # the first checkpoint fits, the second does not
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", write_array)
    fails(capsys, ["gpt", "train", "--corpus", corpus, "--out", out, "--steps", "6", *TINY],
          f"No space left on device on {str(out / 'checkpoint.npz')!r}; the last checkpoint (step 3) is kept in")
    assert nn.load(out / "checkpoint.npz")["extra"]["step"] == 3
    assert sorted(os.listdir(out)) == ["checkpoint.npz", "train.bin", "val.bin"]  # no temporary file left


def test_a_prompt_with_a_byte_that_is_not_utf8_is_one_line(capsys, trained):
    fails(capsys, ["gpt", "sample", "--checkpoint", trained, "--prompt", "def \udcff"],
          "--prompt holds the byte 0xff at position 4, which is not UTF-8 text")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the overflowing arithmetic of the diverging run
def test_a_diverging_run_stops_with_a_non_zero_status_and_writes_no_nan_checkpoint(capsys, tmp_path, corpus):
    out = tmp_path / "run"
    line = fails(capsys, ["gpt", "train", "--corpus", corpus, "--out", out, "--steps", "12", "--lr", "1e30", *TINY],
                 "training diverged at step")
    assert "train with a lower learning rate (--lr)" in line
    if (out / "checkpoint.npz").exists():
        state = nn.load(out / "checkpoint.npz")
        assert all(np.isfinite(w).all() for w in state["model"].values())


def test_nan_weights_and_nan_temperature_never_sample(capsys, tmp_path, trained):
    state = nn.load(trained / "checkpoint.npz")
    state["model"]["wte.weight"][3, 3] = np.nan
    nn.save(state, tmp_path / "nan.npz")
    fails(capsys, ["gpt", "sample", "--checkpoint", tmp_path / "nan.npz"], "holds non-finite weights")
    fails(capsys, ["gpt", "sample", "--checkpoint", trained, "--temperature", "nan"], "--temperature", status=2)


def test_a_manifest_claiming_a_huge_model_is_refused_before_allocating(capsys, tmp_path, trained):
    run_dir = tmp_path / "run"
    shutil.copytree(trained, run_dir)
    state = nn.load(run_dir / "checkpoint.npz")
    state["extra"]["model_config"]["d_model"] = 10**6
    nn.save(state, run_dir / "checkpoint.npz")
    phrase = "is damaged: its model does not load (its configuration, n_layers 1, d_model 1000000"
    fails(capsys, ["gpt", "sample", "--checkpoint", run_dir], phrase)
    fails(capsys, ["gpt", "train", "--out", run_dir, "--resume", "--quiet"], phrase)


def test_sample_without_checkpoint_uses_the_default_run_and_says_so(capsys, tmp_path, trained, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fails(capsys, ["gpt", "sample"], "no --checkpoint given and the default run 'gpt-run/checkpoint.npz' does not "
                                     "exist here; train one with `chainrule gpt train`")
    shutil.copytree(trained, tmp_path / "gpt-run")
    code, out, err = run(capsys, "gpt", "sample", "--tokens", "5")
    assert code == 0 and out.startswith("def ")
    assert err.strip() == "sampling the default run gpt-run/checkpoint.npz (--checkpoint picks another)"
    assert run(capsys, "gpt", "sample", "--tokens", "5", "--checkpoint", "gpt-run")[1] == out  # a run folder works
    assert run(capsys, "gpt", "sample", "--max-tokens", "5")[1] == out  # complete's name for it works too
    assert run(capsys, "gpt", "sample", "--max-new-tokens", "5")[1] == out  # and nanoGPT's


def test_resume_refuses_changed_options_and_extends_with_more_steps(capsys, tmp_path, trained):
    run_dir = tmp_path / "run"
    shutil.copytree(trained, run_dir)
    resume = ["gpt", "train", "--out", run_dir, "--resume", "--quiet"]
    fails(capsys, [*resume, "--layers", "2"], "--layers 2 differs from the saved run's 1: --resume continues the run "
                                              f"in {str(run_dir)!r} as it was (drop --layers, or start a new run")
    fails(capsys, [*resume, "--lr", "0.01"], "--lr 0.01 differs from the saved run's 0.003")
    fails(capsys, [*resume, "--tokenizer", "bpe"], "--tokenizer bpe differs from the saved run's byte")
    fails(capsys, [*resume, "--steps", "4"], "--steps 4 is not past the saved run's step 6")
    code, out, _ = run(capsys, *resume, "--steps", "9", *TINY)  # the same options again are fine
    assert code == 0, out
    assert "resuming at step 6 of 9 with the saved model, data and training options; --steps 9 extends the " \
           "schedule of 6" in out and "step 9: training loss" in out
    state = nn.load(run_dir / "checkpoint.npz")
    assert state["extra"]["step"] == 9 and state["extra"]["train_config"]["max_steps"] == 9


def test_resume_of_a_time_fitted_run_says_what_it_does_with_the_budget(capsys, tmp_path, corpus):
    out = tmp_path / "run"
    assert run(capsys, "gpt", "train", "--corpus", corpus, "--out", out, "--minutes", "0.01", *TINY)[0] == 0
    total = nn.load(out / "checkpoint.npz")["scheduler"]["total_steps"]
    code, text, _ = run(capsys, "gpt", "train", "--out", out, "--resume", "--quiet")
    assert code == 0
    if total < 10**9:  # (a loaded machine may not have timed enough steps to fix it)
        assert "finishing the saved schedule (--minutes M would re-fit it to a new budget)" in text
    code, text, _ = run(capsys, "gpt", "train", "--out", out, "--resume", "--quiet", "--minutes", "0.02")
    assert code == 0 and "the rest of the schedule is fitted to 0.02 minute(s)" in text


def test_a_checkpoint_whose_header_claims_10_to_the_12_elements_is_one_line(capsys, tmp_path, trained):
    import io
    import zipfile

    with zipfile.ZipFile(trained / "checkpoint.npz") as zf:
        items = {n: zf.read(n) for n in zf.namelist()}
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f4", "fortran_order": False, "shape": (10**12,)})
    items["model/wte.weight.npy"] = head.getvalue() + b"\0" * 64
    with zipfile.ZipFile(tmp_path / "c.npz", "w") as zf:
        for name, blob in items.items():
            zf.writestr(name, blob)
    fails(capsys, ["gpt", "sample", "--checkpoint", tmp_path / "c.npz"],
          "is damaged or not an .npz archive (its entry 'model/wte.weight' claims shape (1000000000000,)")


def test_a_full_disk_while_writing_the_tokens_is_one_line(capsys, tmp_path, corpus, monkeypatch):
    from chainrule.gpt import dataset

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as ndarray.tofile raises it: no file name

    monkeypatch.setattr(dataset, "write_tokens", full)
    out = tmp_path / "run"
    fails(capsys, ["gpt", "train", "--corpus", corpus, "--out", out, "--steps", "2", *TINY],
          f"No space left on device on {str(out)!r}; free some space or pick another --out")
