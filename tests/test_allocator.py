"""The allocator switch: on by default on glibc, off with CHAINRULE_MALLOC=0, a no-op elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule.runtime import allocator

GLIBC = allocator._libc is not None


def _info_in_child(env_value: str | None) -> dict:
    env = dict(os.environ)
    env.pop("CHAINRULE_MALLOC", None)
    if env_value is not None:
        env["CHAINRULE_MALLOC"] = env_value
    code = "import json, chainrule; print(json.dumps(chainrule.allocator_info()))"
    out = subprocess.run([sys.executable, "-Werror", "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_on_by_default_and_off_with_the_environment_switch():
    on, off = _info_in_child(None), _info_in_child("0")
    assert on["glibc"] and on["active"] and on["keep_bytes"] == allocator.KEEP_BYTES
    assert off["glibc"] and not off["active"] and off["keep_bytes"] is None


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
def test_switching_off_and_on_reports_it_and_memory_is_reported():
    try:
        assert cr.set_allocator(False) is True
        assert cr.allocator_info()["active"] is False
        assert cr.set_allocator(True, keep_bytes=64 << 20) is True
        info = cr.allocator_info()
        assert info["active"] is True and info["keep_bytes"] == 64 << 20
        if hasattr(allocator._libc, "mallinfo2"):
            assert info["in_use_bytes"] > 0 and info["free_held_bytes"] >= 0
    finally:
        cr.set_allocator(True)
    assert isinstance(cr.release_memory(), bool)


def test_results_do_not_depend_on_the_allocator():
    x0 = np.random.default_rng(0).standard_normal((300, 300))  # above glibc's default mmap threshold

    def run() -> tuple[np.ndarray, np.ndarray]:
        x = cr.Tensor(x0, requires_grad=True)
        y = (cr.tanh(x @ x) * x).sum()
        y.backward()
        return y.data.copy(), x.grad.data.copy()

    try:
        cr.set_allocator(False)
        a = run()
    finally:
        cr.set_allocator(True)
    b = run()
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_a_negative_bound_is_refused():
    if not GLIBC:
        assert cr.set_allocator(True, keep_bytes=-1) is False
        return
    with pytest.raises(ValueError, match="keep_bytes must be >= 0, got -1"):
        cr.set_allocator(True, keep_bytes=-1)


def test_without_glibc_everything_is_a_quiet_no_op(monkeypatch):
    monkeypatch.setattr(allocator, "_libc", None)
    assert cr.set_allocator(True) is False
    assert cr.set_allocator(False) is False
    assert cr.release_memory() is False
    info = cr.allocator_info()
    assert info["glibc"] is False and info["in_use_bytes"] is None
