"""core.hooks.queue_callback: a callback queued during backward() runs once, after every .grad is written
(DistributedDataParallel finishes its gradient reductions there)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule.core.hooks import SWEEP_END, hooks_of, queue_callback


def test_a_callback_queued_by_a_leaf_hook_sees_every_grad_written():
    a, b = cr.tensor([1.0, 2.0], requires_grad=True), cr.tensor([3.0], requires_grad=True)
    seen = []

    def hook(g):
        if not seen:
            queue_callback(lambda: seen.append((a.grad.data.copy(), b.grad.data.copy())))
        seen.append("hook")
        return g

    hooks_of(a).append(hook)
    try:
        ((a * b).sum()).backward()
    finally:
        hooks_of(a).remove(hook)
    assert seen[0] == "hook" and len(seen) == 2
    np.testing.assert_array_equal(seen[1][0], [3.0, 3.0])
    np.testing.assert_array_equal(seen[1][1], [3.0])
    assert not SWEEP_END
    (a.sum()).backward()  # the next backward runs nothing more
    assert len(seen) == 2


def test_a_failing_callback_is_forgotten():
    a = cr.tensor([1.0], requires_grad=True)

    def hook(g):
        queue_callback(lambda: 1 / 0)
        return g

    hooks_of(a).append(hook)
    try:
        with pytest.raises(ZeroDivisionError):
            a.sum().backward()
    finally:
        hooks_of(a).remove(hook)
    assert not SWEEP_END
    a.sum().backward()


def test_backward_with_inputs_runs_the_callbacks_too():
    a = cr.tensor([2.0], requires_grad=True)
    ran = []

    def hook(g):
        queue_callback(lambda: ran.append(float(a.grad.data[0])))
        return g

    hooks_of(a).append(hook)
    try:
        (a * a).sum().backward(inputs=[a])
    finally:
        hooks_of(a).remove(hook)
    assert ran == [4.0]
