"""Idle OpenBLAS workers sleep at once: on by default where NumPy's OpenBLAS is loaded, off with
CHAINRULE_BLAS_SPIN=1 or a user's own OPENBLAS_THREAD_TIMEOUT, a no-op without OpenBLAS."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule.runtime import blas as blas_threads

HAVE_OPENBLAS = bool(blas_threads._loaded_openblas())
needs_openblas = pytest.mark.skipif(not HAVE_OPENBLAS, reason="NumPy here is not linked with an OpenBLAS")


def _info_in_child(**env_values: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CHAINRULE_BLAS_SPIN", "OPENBLAS_THREAD_TIMEOUT")}
    env.update(env_values)
    code = "import json, os, chainrule; i = chainrule.blas_threads_info(); " \
           "i['env'] = os.environ.get('OPENBLAS_THREAD_TIMEOUT'); print(json.dumps(i))"
    out = subprocess.run([sys.executable, "-Werror", "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


@needs_openblas
def test_on_by_default_and_the_environment_is_left_as_it_was():
    info = _info_in_child()
    assert info["active"] and info["timeout"] == blas_threads.QUIET_TIMEOUT and info["env"] is None
    assert info["libraries"] and all("openblas" in os.path.basename(p).lower() for p in info["libraries"])


@needs_openblas
def test_off_with_the_switch_or_the_users_own_timeout():
    off = _info_in_child(CHAINRULE_BLAS_SPIN="1")
    assert not off["active"] and off["timeout"] == 0  # OpenBLAS's default (2**28 cycles)
    own = _info_in_child(OPENBLAS_THREAD_TIMEOUT="20")
    assert not own["active"] and own["timeout"] == 20 and own["env"] == "20"


@needs_openblas
def test_switching_restarts_the_pool_and_results_do_not_change():
    a = np.random.default_rng(0).standard_normal((600, 600))  # big enough for OpenBLAS to use its threads
    expected = a @ a
    try:
        assert cr.set_blas_spin(True) is True
        assert cr.blas_threads_info()["timeout"] == 0 and not cr.blas_threads_info()["active"]
        np.testing.assert_array_equal(a @ a, expected)
        assert cr.set_blas_spin(False) is True
        assert cr.blas_threads_info()["timeout"] == blas_threads.QUIET_TIMEOUT and cr.blas_threads_info()["active"]
        np.testing.assert_array_equal(a @ a, expected)  # the pool starts again on the next threaded call
    finally:
        cr.set_blas_spin(False)


def test_without_openblas_nothing_is_done(monkeypatch):
    monkeypatch.setitem(blas_threads._state, "active", blas_threads._state["active"])  # restored afterwards
    monkeypatch.setattr(blas_threads, "_loaded_openblas", lambda: [])
    assert cr.set_blas_spin(False) is False
    assert cr.blas_threads_info() == {"libraries": [], "timeout": None, "active": False}




class FakeBLAS:
    """OpenBLAS's thread-count functions, faked: records the count each product ran with."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.threads, self.went_single = 2, False
        monkeypatch.setattr(blas_threads, "_thread_count_functions", lambda: ((lambda: self.threads, self.put),))

    def put(self, n: int) -> None:
        self.threads = n
        self.went_single |= n == 1

    def run(self, shape: tuple[int, int, int]) -> int:
        """The threads a product of ``shape`` (m, k, n) ran on."""
        m, k, p = shape
        self.went_single = False
        out = blas_threads.matmul(np.ones((m, k)), np.ones((k, p)))
        assert out[0, 0] == k and self.threads == 2  # the count is restored after every call
        return 1 if self.went_single else 2


def test_small_products_run_on_one_thread_big_ones_on_openblas_count(monkeypatch):
    fake = FakeBLAS(monkeypatch)
    assert fake.run((1, 128, 384)) == 1  # a token at a time in sampling
    assert fake.run((256, 256, 256)) == 1  # 3.4e7 flops: 170x slower on two threads on a busy machine
    assert fake.run((4096, 128, 512)) == 2  # 5.4e8 flops: two threads pay even on a busy machine


def test_the_bound_can_be_moved_or_switched_off(monkeypatch):
    fake = FakeBLAS(monkeypatch)
    was = blas_threads.set_blas_one_thread_below(0)
    try:
        assert fake.run((1, 128, 384)) == 2
        blas_threads.set_blas_one_thread_below(1 << 40)
        assert fake.run((4096, 128, 512)) == 1
    finally:
        blas_threads.set_blas_one_thread_below(was)
    assert blas_threads.ONE_THREAD_BELOW[0] == 1 << 27


def test_non_arrays_and_tensors_go_straight_to_matmul():
    t = cr.Tensor(np.ones((2, 3)), requires_grad=True)
    out = blas_threads.matmul(t, np.ones((3, 4)))
    assert isinstance(out, cr.Tensor) and out.requires_grad


def test_inside_a_one_thread_block_products_ask_no_thread_count(monkeypatch):
    fake = FakeBLAS(monkeypatch)
    asked = []
    monkeypatch.setattr(blas_threads, "_thread_count_functions",
                        lambda: ((lambda: asked.append(1) or fake.threads, fake.put),))
    with blas_threads.blas_threads_limited(1):
        assert fake.threads == 1
        asked.clear()
        out = blas_threads.matmul(np.ones((1, 128)), np.ones((128, 384)))
        assert out[0, 0] == 128 and asked == []  # (a token at a time when sampling: no call into OpenBLAS)
        with blas_threads.blas_threads_limited(2):  # an inner block that allows more keeps the outer one's promise
            blas_threads.matmul(np.ones((1, 4)), np.ones((4, 2)))
            assert asked == [1]  # (its own count, read on entry)
    assert fake.threads == 2 and not blas_threads._ONE_THREAD[0]
    blas_threads.matmul(np.ones((1, 128)), np.ones((128, 384)))
    assert len(asked) > 1  # outside, small products check again
