"""Grad mode, transform depth and forward levels belong to one thread (and one asyncio task)."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import numpy as np

import chainrule as cr
from chainrule.core import state

ROUNDS = 300


def _run_together(*workers) -> None:
    """Start every worker at once; re-raise the first failure."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def wrap(work):
        def run():
            try:
                start.wait()
                work()
            except BaseException as e:  # noqa: BLE001  (reported to the test thread)
                errors.append(e)

        return run

    threads = [threading.Thread(target=wrap(w)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    if errors:
        raise errors[0]


def test_training_evaluating_and_transforming_threads_do_not_see_each_others_mode():
    w = cr.Tensor(np.ones(3), requires_grad=True)
    x = np.array([1.0, 2.0, 3.0])

    def train():
        for _ in range(ROUNDS):
            assert cr.is_grad_enabled()
            loss = (w * x).sum() ** 2
            assert loss.requires_grad, "recording was switched off by another thread"
            w.grad = None
            loss.backward()  # backward() switches recording off inside, for this thread only
            np.testing.assert_allclose(w.grad.data, 2 * 6.0 * x)
            assert cr.is_grad_enabled()

    def evaluate():
        for _ in range(ROUNDS):
            with cr.no_grad():
                y = (w * x).sum()
                assert not y.requires_grad, "recording was switched on by another thread"
                assert not cr.is_grad_enabled()
                assert float(y) == 6.0
            assert cr.is_grad_enabled()

    def transform():
        for _ in range(ROUNDS):
            assert cr.grad(lambda v: (v * v).sum())(np.array([3.0]))[0] == 6.0
            assert state.transform_depth() == 0
            tangent = cr.jvp(np.sin, (0.0,), (1.0,))[1]
            assert tangent == 1.0
            assert not state.forward_levels()

    def read_values():
        # another thread's transform must not make plain reads of a tensor that requires grad raise
        for _ in range(ROUNDS):
            assert state.transform_depth() == 0
            np.testing.assert_array_equal(np.asarray(w), np.ones(3))

    _run_together(train, evaluate, transform, read_values)


def test_a_new_thread_starts_with_grad_mode_on_even_if_its_creator_is_in_no_grad():
    seen = {}

    def child():
        seen["grad"] = cr.is_grad_enabled()
        seen["depth"] = state.transform_depth()

    with cr.no_grad():
        t = threading.Thread(target=child)
        t.start()
        t.join()
    assert seen == {"grad": True, "depth": 0}


def test_one_decorated_function_called_from_two_threads_restores_each_threads_mode():
    @cr.no_grad
    def evaluate(v):
        return (v * 2).requires_grad, cr.is_grad_enabled()

    w = cr.Tensor([1.0], requires_grad=True)

    def work():
        for _ in range(ROUNDS):
            assert evaluate(w) == (False, False)
            assert cr.is_grad_enabled()

    _run_together(work, work)


def test_asyncio_tasks_each_have_their_own_grad_mode():
    w = cr.Tensor([2.0], requires_grad=True)
    log = []

    async def evaluator():
        with cr.no_grad():
            for _ in range(20):
                await asyncio.sleep(0)
                log.append(("eval", cr.is_grad_enabled(), (w * 3).requires_grad))

    async def trainer():
        for _ in range(20):
            await asyncio.sleep(0)
            log.append(("train", cr.is_grad_enabled(), (w * 3).requires_grad))

    async def main():
        await asyncio.gather(evaluator(), trainer())

    asyncio.run(main())
    assert {entry for entry in log} == {("eval", False, False), ("train", True, True)}
    assert len(log) == 40
    assert cr.is_grad_enabled()


def test_a_copied_context_carries_the_mode_it_was_copied_in():
    with cr.no_grad():
        ctx = contextvars.copy_context()
    assert ctx.run(cr.is_grad_enabled) is False
    assert cr.is_grad_enabled()


def test_state_accessors_and_context_managers():
    assert state.is_grad_enabled() and not state.forward_levels() and state.transform_depth() == 0
    with state.transform():
        assert state.transform_depth() == 1
        with cr.no_grad():
            assert not cr.is_grad_enabled()
            with state.transform():  # a transform records even inside no_grad
                assert cr.is_grad_enabled() and state.transform_depth() == 2
            assert not cr.is_grad_enabled()
    assert state.transform_depth() == 0
    with state.new_level() as outer, state.new_level() as inner:
        assert state.visible(outer) and state.visible(inner)
        with state.below(inner):
            assert state.visible(outer) and not state.visible(inner)
    assert not state.forward_levels()
    with state.grad_mode(False):
        assert not cr.is_grad_enabled()
    assert bool(cr.set_grad_enabled(False)) is True  # the previous mode
    assert bool(cr.set_grad_enabled(True)) is False


def test_is_traced_is_the_one_definition():
    a = cr.Tensor([1.0], requires_grad=True)
    assert state.is_traced(a)
    with cr.no_grad():
        assert not state.is_traced(a)
    assert not state.is_traced(cr.Tensor([1.0]))
