"""chainrule.gpt.workers: a batch split between forked processes gives the one-process step (to float
rounding), resumes exactly, reports a dead or failing worker, and leaves no process behind."""

from __future__ import annotations

import doctest
import os
import signal

import numpy as np
import pytest

from chainrule import nn
from chainrule.gpt import ByteTokenizer, TokenStream, TrainConfig, Trainer, training, workers, write_tokens
from chainrule.gpt.workers import GradientWorkers, fork_available
from chainrule.runtime.blas import blas_threads_count, blas_threads_limited
from chainrule.runtime.threads import num_threads, threads_limited

pytestmark = pytest.mark.skipif(not fork_available(), reason="forked workers need Linux")

TINY = dict(vocab_size=256, context_length=16, d_model=16, n_heads=2, n_layers=1)
CODE = [f"def add_{i}(x):\n    return x * {i} + 1\n" for i in range(400)]


def streams(folder):
    paths = write_tokens(CODE, ByteTokenizer(), folder)
    return TokenStream(paths["train"]), TokenStream(paths["val"])


def gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_docstring_example_runs():
    result = doctest.testmod(workers)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("processes", [2, 3])
def test_split_steps_match_one_process_in_float64(tmp_path, processes):
    train, val = streams(tmp_path)
    results = []
    for n in (1, processes):
        model = nn.GPT(nn.GPTConfig(**TINY), seed=0, dtype=np.float64)
        config = TrainConfig(batch_size=7, accum_steps=2, max_steps=4, warmup_steps=1, grad_clip=0.5, workers=n)
        trainer = Trainer(model, train, val, config)
        assert trainer.processes == n
        steps = [trainer.step() for _ in range(4)]
        trainer.close()
        results.append((steps, [p.data.copy() for p in model.parameters()]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)  # losses and gradient norms
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_split_float32_step_matches_one_process_to_float_rounding(tmp_path):
    train, val = streams(tmp_path)
    grads = []
    for n in (1, 2):
        model = nn.GPT(nn.GPTConfig(**TINY), seed=0)
        trainer = Trainer(model, train, val, TrainConfig(batch_size=8, max_steps=2, warmup_steps=1, workers=n))
        loss, norm = trainer.step()
        grads.append((loss, norm, [p.data.copy() for p in model.parameters()]))
        trainer.close()
    assert abs(grads[0][0] - grads[1][0]) < 1e-6 * grads[0][0] and abs(grads[0][1] - grads[1][1]) < 1e-5 * grads[0][1]
    for a, b in zip(grads[0][2], grads[1][2]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_a_split_run_resumes_exactly(tmp_path, dropout):
    train, val = streams(tmp_path)
    config = TrainConfig(batch_size=4, max_steps=6, warmup_steps=2, eval_interval=3, grad_clip=0.5, workers=2)
    make = lambda seed=0: nn.GPT(nn.GPTConfig(**{**TINY, "dropout": dropout}), seed=seed)  # noqa: E731
    whole = Trainer(make(), train, val, config)
    whole.fit(progress=False)
    ckpt = tmp_path / "ckpt.npz"
    Trainer(make(), train, val, config, checkpoint_path=ckpt).fit(progress=False, stop_after=3)
    second = Trainer(make(seed=123), train, val, config)
    second.resume(ckpt)
    second.fit(progress=False)
    for (name, a), b in zip(whole.model.named_parameters(), second.model.parameters()):
        assert np.array_equal(a.data, b.data), name


def test_workers_see_parameters_replaced_between_steps_and_restart_when_they_change(tmp_path):
    train, val = streams(tmp_path)
    model = nn.GPT(nn.GPTConfig(**TINY), seed=0, dtype=np.float64)
    twin = nn.GPT(nn.GPTConfig(**TINY), seed=0, dtype=np.float64)
    split = Trainer(model, train, val, TrainConfig(batch_size=4, max_steps=5, warmup_steps=1, workers=2))
    alone = Trainer(twin, train, val, TrainConfig(batch_size=4, max_steps=5, warmup_steps=1, workers=1))
    for trainer in (split, alone):
        trainer.step()
    first = split._workers
    fresh = {k: v * 0.5 for k, v in twin.state_dict().items()}
    for m in (model, twin):
        m.load_state_dict(fresh)  # new arrays: the workers must compute with these values
    for trainer in (split, alone):
        trainer.step()
    assert split._workers is first
    pid = first.pids[0]
    for m in (model, twin):
        next(m.parameters()).requires_grad = False  # another set of trained parameters: new workers
    losses = [trainer.step()[0] for trainer in (split, alone)]
    assert split._workers is not first and gone(pid)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-12)
    for a, b in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(a.data, b.data, rtol=1e-9, atol=1e-12)
    split.close()


def test_a_killed_worker_is_reported_not_waited_for(tmp_path):
    model = nn.GPT(nn.GPTConfig(**TINY), seed=0)
    x = np.zeros((4, 17), dtype=np.int64)
    w = GradientWorkers(model, training.lm_loss, processes=2)
    w.accumulate(x[:, :-1], x[:, 1:], 1.0, 0, 0)
    pid = w.pids[0]
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"worker 1 \(process \d+\) stopped during a step .*workers=1"):
        w.accumulate(x[:, :-1], x[:, 1:], 1.0, 1, 0)
    assert gone(pid) and w.pids == []
    with pytest.raises(RuntimeError, match="closed; make new ones"):
        w.accumulate(x[:, :-1], x[:, 1:], 1.0, 2, 0)


def test_an_error_in_a_worker_comes_back_with_its_traceback():
    model = nn.GPT(nn.GPTConfig(**TINY), seed=0)
    parent = os.getpid()

    def loss(m, x, y):
        if os.getpid() != parent:
            raise ValueError("only in the worker")
        return training.lm_loss(m, x, y)

    w = GradientWorkers(model, loss, processes=2)
    x = np.zeros((4, 17), dtype=np.int64)
    with pytest.raises(RuntimeError, match=r"(?s)worker 1 failed:.*ValueError: only in the worker"):
        w.accumulate(x[:, :-1], x[:, 1:], 1.0, 0, 0)
    assert w.pids == []


def test_close_ends_every_worker_and_the_parameters_stay_usable():
    model = nn.GPT(nn.GPTConfig(**TINY), seed=0)
    with GradientWorkers(model, training.lm_loss, processes=3) as w:
        pids = list(w.pids)
        assert len(pids) == 2
    assert all(gone(pid) for pid in pids)
    p = next(model.parameters())
    p.data += 1.0  # the shared block is still this process's memory
    with pytest.raises(ValueError, match="processes must be at least 2"):
        GradientWorkers(model, training.lm_loss, processes=1)


def test_automatic_workers_split_only_big_micro_batches(tmp_path, monkeypatch):
    train, val = streams(tmp_path)
    monkeypatch.setenv("CHAINRULE_NUM_THREADS", "3")
    small = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val, TrainConfig(batch_size=4, max_steps=2))
    assert small.processes == 1  # a few thousand multiply-adds: not worth a process
    monkeypatch.setattr(training, "SPLIT_WORK", 1.0)
    assert Trainer(small.model, train, val, TrainConfig(batch_size=4, max_steps=2)).processes == 3
    assert Trainer(small.model, train, val, TrainConfig(batch_size=2, max_steps=2)).processes == 2  # rows
    with pytest.raises(Exception, match="workers must be a positive integer"):
        TrainConfig(workers=0)


def test_thread_limits_nest_and_restore():
    assert num_threads() >= 1
    with threads_limited(1):
        assert num_threads() == 1
        with threads_limited(4):
            assert num_threads() <= 4
        assert num_threads() == 1
    before = blas_threads_count()
    with blas_threads_limited(1):
        assert blas_threads_count() in (None, 1)
    assert blas_threads_count() == before


def test_workers_of_two_trainers_close_in_any_order():
    # the second group's workers are forked while the first group's pipes are open: closing the first
    # must not wait on a pipe end the second group's workers inherited
    a = GradientWorkers(nn.GPT(nn.GPTConfig(**TINY), seed=0), training.lm_loss, processes=2)
    b = GradientWorkers(nn.GPT(nn.GPTConfig(**TINY), seed=1), training.lm_loss, processes=2)
    pids = a.pids + b.pids
    a.close()
    x = np.zeros((2, 17), dtype=np.int64)
    assert np.isfinite(b.accumulate(x[:, :-1], x[:, 1:], 1.0, 0, 0))
    b.close()
    assert all(gone(pid) for pid in pids)


def test_fewer_rows_than_processes_leave_the_extra_workers_idle():
    model = nn.GPT(nn.GPTConfig(**TINY), seed=0, dtype=np.float64)
    x = np.random.default_rng(0).integers(0, 256, (2, 17))
    with GradientWorkers(model, training.lm_loss, processes=4) as w:
        loss = w.accumulate(x[:, :-1], x[:, 1:], 1.0, 0, 0)
        split = [p.grad.data.copy() for p in model.parameters()]
        with pytest.raises(ValueError, match="at least one"):
            w.accumulate(x[:0, :-1], x[:0, 1:], 1.0, 1, 0)
    for p in model.parameters():
        p.grad = None
    one = training.lm_loss(model, x[:, :-1], x[:, 1:])
    one.backward()
    assert abs(loss - float(one)) < 1e-12
    for g, p in zip(split, model.parameters()):
        np.testing.assert_allclose(g, p.grad.data, rtol=1e-10, atol=1e-14)


def test_a_platform_that_refuses_fork_trains_in_one_process_with_a_warning(tmp_path, monkeypatch):
    train, val = streams(tmp_path)
    trainer = Trainer(nn.GPT(nn.GPTConfig(**TINY), seed=0), train, val, TrainConfig(batch_size=4, max_steps=2,
                                                                                      workers=2))

    def refuse():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    with pytest.warns(UserWarning, match=r"could not start 1 worker process\(es\) .*alone"):
        loss, _ = trainer.step()
    assert trainer.processes == 1 and np.isfinite(loss) and trainer._workers is None
    trainer.step()  # and on, without asking again
