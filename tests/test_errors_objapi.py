"""Clear errors: unsupported NumPy keywords, damaged files, loaded hyperparameters, the demo's --out, file modes."""

from __future__ import annotations

import copy
import os
import stat

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor, nn, optim
from chainrule.cli import main


@pytest.mark.parametrize(
    "call, func, keyword",
    [
        (lambda x: np.std(x, mean=1.0), "numpy.std", "'mean'"),
        (lambda x: np.var(x, mean=1.0), "numpy.var", "'mean'"),  # (where= is supported now)
    ],
)
def test_an_unsupported_keyword_names_the_keyword_and_the_function(call, func, keyword):
    x = Tensor([1.0, 2.0], requires_grad=True)
    message = rf"{func}: chainrule does not support the keyword argument {keyword} of {func}"
    with pytest.raises(TypeError, match=message):
        call(x)
    with pytest.raises(TypeError, match="mean: the 'out' argument is not supported"):
        np.mean(x, out=np.zeros(()))
    assert float(np.sum(x, axis=0, keepdims=True)[0]) == 3.0  # supported keywords still work


def _saved(tmp_path):
    path = tmp_path / "model.npz"
    nn.save(nn.Linear(8, 8, rng=0), path)
    return path, path.read_bytes()


def test_a_truncated_or_corrupted_file_names_the_file(tmp_path):
    path, raw = _saved(tmp_path)
    for i, cut in enumerate(range(0, len(raw), max(1, len(raw) // 7))):
        bad = tmp_path / f"cut{i}.npz"
        bad.write_bytes(raw[:cut])
        with pytest.raises(nn.DamagedFileError, match=rf"load: {bad}.* is damaged or truncated"):
            nn.load(bad)
    good = nn.load(path)
    for pos in range(0, len(raw), max(1, len(raw) // 23)):
        flipped = bytearray(raw)
        flipped[pos] ^= 0xFF
        bad = tmp_path / f"flip{pos}.npz"
        bad.write_bytes(bytes(flipped))
        try:
            loaded = nn.load(bad)
        except ValueError as e:  # DamagedFileError, or "not a NumPy .npz archive"
            assert str(e).startswith(f"load: {bad}"), e
        else:  # a byte no reader looks at: the values must be intact
            assert loaded.keys() == good.keys() and all(np.array_equal(loaded[k], good[k]) for k in good)
    assert issubclass(nn.DamagedFileError, ValueError)


def test_saved_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path, _ = _saved(tmp_path)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
        os.umask(0o077)
        nn.save({"w": np.ones(2)}, tmp_path / "private.npz")
        assert stat.S_IMODE(os.stat(tmp_path / "private.npz").st_mode) == 0o600
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def _adam_state():
    model = nn.Linear(2, 1, rng=0)
    opt = optim.Adam(model.parameters(), lr=1e-3)
    model(Tensor(np.ones((1, 2), dtype=np.float32))).sum().backward()
    opt.step()
    return model, opt, opt.state_dict()


@pytest.mark.parametrize(
    "key, value, error, message",
    [
        ("lr", "fast", TypeError, r"hyperparameter 'lr' of group 0 must be a finite number, got str 'fast'"),
        ("lr", float("nan"), TypeError, r"'lr' of group 0 must be a finite number, got float nan"),
        ("lr", -1.0, ValueError, r"'lr' of group 0 must be >= 0, got -1.0"),
        ("betas", [0.9], TypeError, r"'betas' of group 0 must be 2 finite numbers"),
        ("betas", ["a", 0.9], TypeError, r"'betas' of group 0 must be 2 finite numbers"),
        ("amsgrad", "yes", TypeError, r"'amsgrad' of group 0 must be a bool"),
        ("momentum", 0.9, ValueError, r"a hyperparameter 'momentum' that Adam does not have.*another optimiser"),
    ],
)
def test_loaded_hyperparameters_are_type_checked(key, value, error, message):
    model, opt, state = _adam_state()
    bad = copy.deepcopy(state)
    bad["param_groups"][0][key] = value
    before = dict(opt.param_groups[0])
    with pytest.raises(error, match=message):
        opt.load_state_dict(bad)
    assert {k: v for k, v in opt.param_groups[0].items() if k != "params"} == {
        k: v for k, v in before.items() if k != "params"
    }  # a refused load changes nothing


def test_good_hyperparameters_still_load_through_a_checkpoint(tmp_path):
    model, opt, state = _adam_state()
    state["param_groups"][0]["lr"] = 0.5
    opt.load_state_dict(state)
    assert opt.param_groups[0]["lr"] == 0.5 and isinstance(opt.param_groups[0]["betas"], tuple)
    nn.save_checkpoint(tmp_path / "c.npz", model=model, optimizer=opt)
    fresh = optim.Adam(model.parameters())
    nn.load_checkpoint(tmp_path / "c.npz", model=model, optimizer=fresh)
    assert fresh.param_groups[0]["lr"] == 0.5


@pytest.mark.parametrize("where", ["a_file", "a_file/below"])
def test_demo_out_to_an_unwritable_place_prints_one_line(tmp_path, capsys, where):
    (tmp_path / "a_file").write_text("not a folder")
    status = main(["demo", "--out", str(tmp_path / where)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"chainrule demo: cannot write to --out '{tmp_path / where}' (")
    assert "Traceback" not in captured.err


def test_cr_namespace_still_has_numpy_dispatch_helpers():
    # np.zeros_like on a Tensor goes to chainrule.ops (an ndarray constant); cr.zeros_like is the constructor
    assert type(cr.ops.zeros_like(Tensor([1.0]))) is np.ndarray


def test_a_tensor_function_given_a_scalar_names_the_scalars_own_method():
    import chainrule as cr

    with pytest.raises(TypeError, match=r"tanh: argument 0 is a Scalar; .*the Scalar's own method \(s\.tanh\(\)\)"):
        cr.tanh(cr.Scalar(0.5))
