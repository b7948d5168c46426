"""A PyTorch training program that uses this issue's names (dtype names, random_split, samplers, DataLoader over
arrays, NAdam, CyclicLR, amp, compile, backends) runs with only ``import torch`` changed, and ends where PyTorch
does (the random parts use orders that do not depend on the generator)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def program(torch, init):
    """Written for PyTorch; ``torch`` is either library."""
    torch.backends.cudnn.benchmark = True
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 3))
    labels = (x[:, 0] > 0).astype(np.int64)

    class Points(torch.utils.data.Dataset):
        def __len__(self):
            return len(x)

        def __getitem__(self, i):
            return x[i], labels[i]

    part, val = torch.utils.data.random_split(Points(), [0.75, 0.25])
    assert len(part) == 18 and len(val) == 6
    train = torch.utils.data.Subset(Points(), list(range(24)))
    order = torch.utils.data.SequentialSampler(train)
    loader = torch.utils.data.DataLoader(train, batch_sampler=torch.utils.data.BatchSampler(order, 5, False))
    model = torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        model.weight.copy_(torch.tensor(init[0]))
        model.bias.copy_(torch.tensor(init[1]))
    model = torch.compile(model)
    opt = torch.optim.NAdam(model.parameters(), lr=0.05, weight_decay=0.01, decoupled_weight_decay=True)
    sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3, cycle_momentum=True,
                                              base_momentum=0.85, max_momentum=0.95)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    for _ in range(3):
        for xb, yb in loader:
            assert yb.dtype == torch.long and xb.dtype == torch.float64
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb.long())
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
    probs = torch.softmax(model(torch.tensor(x[:4])), dim=1)
    picked = torch.multinomial(probs, 2)  # two different classes per row: a permutation of {0, 1}
    assert sorted(picked[0].tolist()) == [0, 1] and picked.dtype == torch.int64
    return [p.detach().numpy().copy() for p in model.parameters()], len(val)


def test_the_program_runs_with_the_import_swapped_and_ends_where_torch_does():
    init = (np.random.default_rng(1).standard_normal((2, 3)) * 0.3, np.zeros(2))
    ours, n_val = program(chainrule, init)
    theirs, n_val_torch = program(torch, init)
    assert n_val == n_val_torch == 6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
