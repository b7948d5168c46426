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
from chainrule import blas_threads

HAVE_OPENBLAS = bool(blas_threads._loaded_openblas())
needs_openblas = pytest.mark.skipif(not HAVE_OPENBLAS, reason="NumPy here is not linked with an OpenBLAS")


def _info_in_child(**env_values: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CHAINRULE_BLAS_SPIN", "OPENBLAS_THREAD_TIMEOUT")}
    env.update(env_values)
    code = "import json, os, chainrule; i = chainrule.blas_threads_info(); " \
           "i['env'] = os.environ.get('OPENBLAS_THREAD_TIMEOUT'); print(json.dumps(i))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
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
    """OpenBLAS's thread-count functions and the clock, faked: a product costs ``cost[threads]`` per flop,
    where ``threads`` is the fewest the product ran on since the clock was last read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, single: float, many: float):
        self.threads, self.fewest, self.now, self.went_single = 2, 2, 0.0, False
        self.cost = {1: single, 2: many}
        self.flops = 0.0
        monkeypatch.setattr(blas_threads, "_thread_count_functions", lambda: ((lambda: self.threads, self.put),))
        monkeypatch.setattr(blas_threads.time, "perf_counter", self.clock)
        monkeypatch.setattr(blas_threads, "_classes", {})

    def put(self, n: int) -> None:
        self.threads = n
        self.fewest = min(self.fewest, n)
        self.went_single |= n == 1

    def clock(self) -> float:
        self.now += self.flops * self.cost[self.fewest]
        self.fewest = self.threads
        return self.now

    def run(self, shape: tuple[int, int, int], n: int) -> list[int]:
        """Threads each of ``n`` products of ``shape`` ran on."""
        m, k, p = shape
        a, b = np.ones((m, k)), np.ones((k, p))
        self.flops, used = 2.0 * m * k * p, []
        for _ in range(n):
            self.fewest, self.went_single = self.threads, False
            out = blas_threads.matmul(a, b)
            used.append(1 if self.went_single else 2)
            assert out[0, 0] == k and self.threads == 2  # the count is restored after every call
        return used


def test_small_products_run_on_one_thread_untimed(monkeypatch):
    fake = FakeBLAS(monkeypatch, single=10.0, many=1.0)  # even where two threads would be faster
    assert fake.run((1, 128, 128), 20) == [1] * 20  # a token at a time in sampling: 3e4 flops
    assert fake.now == 0.0  # no clock read


def test_on_a_busy_machine_one_thread_wins_and_two_are_retried_ever_less_often(monkeypatch):
    fake = FakeBLAS(monkeypatch, single=1.0, many=10.0)
    used = fake.run((256, 256, 256), 300)
    assert used[:2] == [1, 2]  # each choice measured once
    retries = [k for k, n in enumerate(used) if n == 2][1:]
    assert len(retries) <= 6 and all(b - a > 8 for a, b in zip(retries, retries[1:]))
    assert [b - a for a, b in zip(retries, retries[1:])] == sorted(b - a for a, b in zip(retries, retries[1:]))


def test_on_an_idle_machine_big_products_keep_every_thread(monkeypatch):
    fake = FakeBLAS(monkeypatch, single=2.0, many=1.0)
    used = fake.run((512, 512, 512), 100)
    assert used[:2] == [1, 2] and used[2:].count(2) >= 90


def test_the_choice_follows_the_load(monkeypatch):
    fake = FakeBLAS(monkeypatch, single=2.0, many=1.0)
    fake.run((512, 512, 512), 50)
    fake.cost = {1: 1.0, 2: 20.0}  # another process starts
    used = fake.run((512, 512, 512), 100)
    assert used[-50:].count(1) >= 45


def test_switched_off_it_leaves_threads_to_openblas(monkeypatch):
    fake = FakeBLAS(monkeypatch, single=1.0, many=10.0)
    was = blas_threads.set_blas_adaptive(False)
    try:
        assert fake.run((256, 256, 256), 5) == [2] * 5
    finally:
        blas_threads.set_blas_adaptive(was)


def test_non_arrays_and_tensors_go_straight_to_matmul():
    t = cr.Tensor(np.ones((2, 3)), requires_grad=True)
    out = blas_threads.matmul(t, np.ones((3, 4)))
    assert isinstance(out, cr.Tensor) and out.requires_grad
