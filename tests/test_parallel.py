"""ops/_parallel.for_blocks: every block once, errors reach the caller, and a nested call finishes."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from chainrule.runtime.threads import for_blocks


@pytest.fixture(autouse=True)
def two_threads(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NUM_THREADS", "2")


def test_every_block_is_computed_once_and_the_last_one_is_shorter():
    seen = np.zeros(103, dtype=int)
    spans = []

    def work(lo: int, hi: int) -> None:
        seen[lo:hi] += 1
        spans.append((lo, hi))

    for_blocks(work, 103, 10)
    assert seen.tolist() == [1] * 103
    assert sorted(spans) == [(lo, min(lo + 10, 103)) for lo in range(0, 103, 10)]


def test_an_error_in_a_block_reaches_the_caller():
    def work(lo: int, hi: int) -> None:
        if lo == 50:
            raise ValueError("block 50 failed")

    with pytest.raises(ValueError, match="block 50 failed"):
        for_blocks(work, 100, 10)


def test_a_call_inside_a_block_finishes():
    out = np.zeros(64)

    def inner(lo: int, hi: int) -> None:
        out[lo:hi] += 1

    def outer(lo: int, hi: int) -> None:  # may run in the pool's only worker: its own task must not be awaited
        for_blocks(inner, 64, 4)

    runner = threading.Thread(target=lambda: for_blocks(outer, 8, 1), daemon=True)
    runner.start()
    runner.join(30)
    assert not runner.is_alive(), "a for_blocks inside a for_blocks block never finished"
    assert out.tolist() == [8.0] * 64
