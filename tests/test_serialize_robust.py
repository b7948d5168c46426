"""Checkpoints that resume exactly (Dropout's generators too), damaged files refused before any
allocation, and saves that clean up after a killed predecessor and reach the disk before the rename."""

from __future__ import annotations

import errno
import io
import os
import zipfile

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.nn import serialize


def dropout_model():
    model = nn.Sequential(nn.Linear(8, 16, rng=0), nn.ReLU(), nn.Dropout(0.2, rng=1), nn.Linear(16, 1, rng=2))
    return model, optim.Adam(model.parameters(), lr=1e-2)


def train(model, opt, steps):
    x = cr.tensor(np.random.default_rng(0).normal(size=(32, 8)).astype(np.float32))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def test_resumed_run_with_dropout_equals_an_uninterrupted_one(tmp_path):
    whole = train(*dropout_model(), 60)
    model, opt = dropout_model()
    first = train(model, opt, 30)
    train(*dropout_model(), 7)  # other work in between must not matter
    nn.save_checkpoint(tmp_path / "c.npz", model=model, optimizer=opt)
    model2, opt2 = dropout_model()  # a fresh process: its dropout generator starts from the seed again
    nn.load_checkpoint(tmp_path / "c.npz", model=model2, optimizer=opt2)
    assert first + train(model2, opt2, 30) == whole


def test_a_generator_the_model_lacks_is_an_error_unless_not_strict(tmp_path):
    model, _ = dropout_model()
    nn.save_checkpoint(tmp_path / "c.npz", model=model)
    other = nn.Sequential(nn.Linear(8, 16, rng=0), nn.ReLU(), nn.Identity(), nn.Linear(16, 1, rng=2))
    with pytest.raises(ValueError, match="generator '2.rng'"):
        nn.load_checkpoint(tmp_path / "c.npz", model=other)
    nn.load_checkpoint(tmp_path / "c.npz", model=other, strict=False)


def claim_shape(path, entry, shape):
    """Rewrite ``entry``'s .npy header so it claims ``shape`` (the data stays as it was)."""
    with zipfile.ZipFile(path) as zf:
        items = {n: zf.read(n) for n in zf.namelist()}
    data = items[entry + ".npy"]
    version = np.lib.format.read_magic(io.BytesIO(data))
    old = io.BytesIO(data)
    np.lib.format.read_magic(old)
    _, _, dtype = np.lib.format.read_array_header_1_0(old)
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                "fortran_order": False, "shape": shape})
    assert version == (1, 0)
    items[entry + ".npy"] = head.getvalue() + data[old.tell():]
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in items.items():
            zf.writestr(name, blob)


def test_a_header_claiming_10_to_the_12_elements_is_refused_before_allocating(tmp_path):
    path = tmp_path / "m.npz"
    model, opt = dropout_model()
    nn.save_checkpoint(path, model=model, optimizer=opt)
    claim_shape(path, "model/0.weight", (10**6, 10**6))
    for loader in (nn.load, cr.load, lambda p: nn.load_checkpoint(p, model=dropout_model()[0])):
        with pytest.raises(nn.DamagedFileError, match=r"claims shape \(1000000, 1000000\) of float32 "
                                                      r"\(4,000,000,000,000 bytes\) but holds 512 bytes"):
            loader(path)


def test_a_single_npy_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "a.npy"
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    with pytest.raises(ValueError, match="single array"):
        nn.load(path)


def test_a_save_removes_the_temporary_files_a_killed_save_left(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()  # a process that has ended, as a killed save's has
    stale = [tmp_path / ".c.npz.0123456789ab.tmp", tmp_path / f".c.npz.{dead}-ba9876543210.tmp",
             tmp_path / f".c.npz.{os.getpid()}-0123456789ab.tmp"]
    kept = [tmp_path / ".other.npz.0123456789ab.tmp", tmp_path / "c.npz.tmp", tmp_path / ".c.npz.notours.tmp"]
    if os.name == "posix":  # a save still running in another process keeps its file
        kept.append(tmp_path / f".c.npz.{os.getppid()}-0123456789ab.tmp")
    for p in stale + kept:
        p.write_bytes(b"half a file")
    nn.save({"w": np.ones(3)}, tmp_path / "c.npz")
    assert sorted(os.listdir(tmp_path)) == sorted(["c.npz"] + [p.name for p in kept])


def test_a_save_syncs_the_file_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    nn.save({"w": np.ones(3)}, tmp_path / "c.npz")
    assert events[:2] == ["fsync", "replace"] and events.count("fsync") == (2 if os.name == "posix" else 1)


def test_a_full_disk_names_the_file_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(serialize.np.lib.format, "write_array", full)
    with pytest.raises(OSError) as info:
        nn.save({"w": np.ones(3)}, tmp_path / "c.npz")
    assert info.value.errno == errno.ENOSPC and info.value.filename == os.fspath(tmp_path / "c.npz")
    assert os.listdir(tmp_path) == []
