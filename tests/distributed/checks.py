"""Checks that run on every rank under ``mpiexec -n N`` (tests/test_distributed.py launches them).

``python checks.py NAME [NAME ...]`` runs the named checks in order; each prints ``PASS NAME`` on rank 0.
A failed assertion on any rank ends the job (chainrule.distributed aborts on an uncaught exception).
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from chainrule import distributed as dist
from chainrule import nn, optim
from chainrule.data import DistributedSampler
from chainrule.nn.parallel import DistributedDataParallel


def collectives() -> None:
    rank, size = dist.get_rank(), dist.get_world_size()
    x = np.full(5, rank + 1.0)
    buffer = x.ctypes.data
    dist.all_reduce(x)
    assert x.ctypes.data == buffer and np.all(x == size * (size + 1) / 2), x  # in place, the sum
    x[:] = rank + 1.0
    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    assert np.all(x == (size + 1) / 2), x
    for op, want in ((dist.ReduceOp.MAX, size - 1), (dist.ReduceOp.MIN, 0)):
        t = nn.Parameter(np.array([rank, -rank], dtype=np.float64))
        dist.all_reduce(t, op=op)
        assert np.all(t.data == [want, -(size - 1 - want)]), (op, t.data)
    ints = np.array([rank], dtype=np.int64)
    dist.all_reduce(ints, op=dist.ReduceOp.SUM, async_op=True).wait()
    assert ints[0] == size * (size - 1) // 2
    b = np.arange(6.0).reshape(2, 3) * (rank + 1)
    dist.broadcast(b, src=size - 1)
    assert np.array_equal(b, np.arange(6.0).reshape(2, 3) * size)
    out = [np.zeros(3, np.float32) for _ in range(size)]
    dist.all_gather(out, np.full(3, rank, np.float32))
    assert [o.tolist() for o in out] == [[r] * 3 for r in range(size)]
    whole = np.zeros((size, 2))
    dist.all_gather_into_tensor(whole, np.array([rank, 2.0 * rank]))
    assert np.array_equal(whole, [[r, 2.0 * r] for r in range(size)])
    objs: list = []
    dist.all_gather_object(objs, {"rank": rank})
    assert objs == [{"rank": r} for r in range(size)]
    try:
        dist.all_reduce(np.ones((3, 4))[:, 1])
    except ValueError as e:
        assert "C-contiguous" in str(e)
    else:
        raise AssertionError("a strided view was accepted")
    dist.barrier()


def _mlp(seed: int) -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8, rng=seed, dtype=np.float64), nn.Tanh(),
                         nn.Linear(8, 3, rng=seed + 1, dtype=np.float64))


def _batches(steps: int, rows: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(42)
    return [(rng.normal(size=(rows, 4)), rng.integers(0, 3, rows)) for _ in range(steps)]


def _train(model: nn.Module, data: list) -> list[np.ndarray]:
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    for x, y in data:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optim.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
    return [p.data.copy() for p in model.parameters()]


def ddp_mlp() -> None:
    """5 steps of DDP on shares of a batch equal 5 steps of one process on the whole batch (float64)."""
    rank, size = dist.get_rank(), dist.get_world_size()
    data = _batches(5, 6 * size)
    alone = _train(_mlp(0), data)
    model = DistributedDataParallel(_mlp(rank * 10), bucket_cap_mb=0.0005)  # tiny buckets: several reductions
    assert len(model._buckets) > 1
    assert np.array_equal(model.module[0].weight.data, _mlp(0)[0].weight.data)  # rank 0's start
    mine = [(x[rank::size], y[rank::size]) for x, y in data]
    together = _train(model, mine)
    for a, b in zip(alone, together):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    assert list(model.state_dict())[0].startswith("module.")


def no_sync() -> None:
    """Two micro-batches, the first under no_sync: one reduction of the summed gradients."""
    rank, size = dist.get_rank(), dist.get_world_size()
    (x1, y1), (x2, y2) = _batches(2, 4 * size)
    whole = _mlp(0)
    for x, y in ((x1, y1), (x2, y2)):
        nn.functional.cross_entropy(whole(x), y).backward()
    model = DistributedDataParallel(_mlp(0))
    with model.no_sync():
        nn.functional.cross_entropy(model(x1[rank::size]), y1[rank::size]).backward()
    local = model.module[0].weight.grad.data.copy()
    nn.functional.cross_entropy(model(x2[rank::size]), y2[rank::size]).backward()
    for p, q in zip(whole.parameters(), model.module.parameters()):
        np.testing.assert_allclose(q.grad.data, p.grad.data, rtol=1e-12, atol=1e-14)
    others = [np.zeros_like(local) for _ in range(size)]
    dist.all_gather(others, local)
    assert size == 1 or not np.allclose(others[0], others[1])  # no_sync's gradients were each rank's own


def unused() -> None:
    """A parameter outside the loss raises, naming find_unused_parameters; with it, it is skipped."""
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.spare = nn.Linear(4, 3, rng=0, dtype=np.float64), nn.Linear(4, 3, rng=1, dtype=np.float64)

        def forward(self, x):
            return self.body(x)

    x = np.ones((2, 4))
    model = DistributedDataParallel(TwoHeads())
    try:
        model(x).sum().backward()
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e) and "spare.weight" in str(e), e
    else:
        raise AssertionError("an unused parameter was not reported")
    model = DistributedDataParallel(TwoHeads(), find_unused_parameters=True)
    model(x * (dist.get_rank() + 1)).sum().backward()
    assert model.module.spare.weight.grad is None
    assert np.allclose(model.module.body.weight.grad.data, dist.get_world_size() + 1)  # 2 rows of rank + 1


def sampler() -> None:
    size = dist.get_world_size()
    for n, drop_last in ((10, False), (11, False), (11, True), (2, False)):
        s = DistributedSampler(range(n), seed=5, drop_last=drop_last)
        seen = []
        for epoch in (0, 1):
            s.set_epoch(epoch)
            mine = list(s)
            assert len(mine) == len(s)
            everyone: list = []
            dist.all_gather_object(everyone, mine)
            union = sorted(i for part in everyone for i in part)
            if drop_last:
                assert len(set(union)) == len(union) == size * (n // size)
            else:  # every index, and only the padding twice
                assert set(union) == set(range(n)) and len(union) == size * -(-n // size)
                if n % size == 0:
                    assert union == list(range(n))
            seen.append(everyone)
        assert seen[0] != seen[1] or n <= 2  # a new order each epoch


def gpt_ddp() -> None:
    """DDP of a small GPT on shares of the batch equals one process on the whole batch for 5 steps (float64)."""
    rank, size = dist.get_rank(), dist.get_world_size()
    config = nn.GPTConfig(vocab_size=32, context_length=8, d_model=16, n_heads=2, n_layers=1)
    rng = np.random.default_rng(0)
    data = [rng.integers(0, 32, (2 * size, 9)) for _ in range(5)]

    def run(model, rows):
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        for w in data:
            opt.zero_grad()
            x, y = w[rows, :-1], w[rows, 1:]
            logits = model(x)
            nn.functional.cross_entropy(logits.reshape(-1, 32), y.reshape(-1)).backward()
            opt.step()
        return [p.data.copy() for p in model.parameters()]

    alone = run(nn.GPT(config, seed=0, dtype=np.float64), slice(None))
    together = run(DistributedDataParallel(nn.GPT(config, seed=rank, dtype=np.float64)), slice(rank, None, size))
    for a, b in zip(alone, together):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def _trainer(folder: str, parallel: str, workers: int = 1, dropout: float = 0.0):
    from chainrule.gpt import ByteTokenizer, TokenStream, TrainConfig, Trainer, write_tokens

    if dist.get_rank() == 0 and not os.path.exists(os.path.join(folder, "train.bin")):
        write_tokens([f"def add_{i}(x):\n    return x * {i} + 1\n" for i in range(300)], ByteTokenizer(), folder)
    dist.barrier()
    train, val = (TokenStream(os.path.join(folder, f"{n}.bin")) for n in ("train", "val"))
    model = nn.GPT(nn.GPTConfig(vocab_size=256, context_length=16, d_model=16, n_heads=2, n_layers=1, dropout=dropout),
                   seed=0, dtype=np.float64)
    config = TrainConfig(batch_size=7, accum_steps=2, max_steps=6, warmup_steps=2, grad_clip=0.5, eval_interval=3,
                         eval_batches=2, workers=workers)
    return Trainer(model, train, val, config, checkpoint_path=os.path.join(folder, f"{parallel}.npz"),
                   parallel=parallel)


def gpt_resume_part1() -> None:
    """3 of 6 steps on these ranks, checkpointed by rank 0 (7 rows: an uneven split over 2 or 3)."""
    trainer = _trainer(os.environ["CHECKS_DIR"], "mpi")
    assert trainer.mpi and trainer.writer == (dist.get_rank() == 0)
    trainer.fit(progress=False, stop_after=3)


def gpt_resume_part2() -> None:
    """The rest on another number of ranks: the result is one process's 6 steps (float64, 1e-12)."""
    folder = os.environ["CHECKS_DIR"]
    trainer = _trainer(folder, "mpi")
    trainer.resume(os.path.join(folder, "mpi.npz"))
    assert trainer.step_count == 3
    history = trainer.fit(progress=False)
    alone = _trainer(folder, "fork")
    alone_history = alone.fit(progress=False)
    np.testing.assert_allclose(history["train_loss"], alone_history["train_loss"], rtol=1e-12)
    for a, b in zip(alone.model.parameters(), trainer.model.parameters()):
        np.testing.assert_allclose(b.data, a.data, rtol=1e-12, atol=1e-12)


def gpt_dropout_matches_fork_split() -> None:
    """With dropout, rank k draws the masks forked worker k would: N ranks give the fork split over N."""
    folder = os.environ["CHECKS_DIR"]
    ranks = _trainer(folder, "mpi", dropout=0.2)
    steps = [ranks.step() for _ in range(2)]
    forked = _trainer(folder, "fork", workers=dist.get_world_size(), dropout=0.2)
    assert forked.processes == dist.get_world_size()
    reference = [forked.step() for _ in range(2)]
    forked.close()
    np.testing.assert_allclose(steps, reference, rtol=1e-12)


def raises() -> None:
    if dist.get_rank() == dist.get_world_size() - 1:
        time.sleep(0.2)
        raise ValueError("a deliberate failure")
    dist.barrier()  # the others wait here: the job must end anyway


def killed() -> None:
    if dist.get_rank() == dist.get_world_size() - 1:
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would
    dist.barrier()


def exits() -> None:
    if dist.get_rank() == dist.get_world_size() - 1:
        time.sleep(0.2)
        os._exit(7)  # dies without a word
    dist.barrier()


if __name__ == "__main__":
    dist.init_process_group(backend="mpi")
    for name in sys.argv[1:]:
        globals()[name]()
        if dist.get_rank() == 0:
            print(f"PASS {name}", flush=True)
    dist.destroy_process_group()
