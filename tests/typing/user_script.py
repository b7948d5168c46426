"""An ordinary user script: it must type-check clean under mypy (tests/test_types.py)."""

from __future__ import annotations

import numpy as np

import chainrule as cr
from chainrule import Scalar, Tensor, nn


class TwoLayer(nn.Module):
    def __init__(self, d_in: int, d_hidden: int, d_out: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(d_in, d_hidden)
        self.out = nn.Linear(d_hidden, d_out)

    def forward(self, x: Tensor) -> Tensor:
        return self.out(self.hidden(x).relu())


def loss_of(w: Tensor, x: Tensor) -> Tensor:
    return ((x @ w).tanh() ** 2).sum() * 0.5 - w.mean()


x = cr.Tensor(np.random.default_rng(0).normal(size=(8, 3)), requires_grad=True)
w = cr.Tensor(np.ones(3), requires_grad=True)
y = (x * w + 1.0) / 2.0 - x.exp().sum(axis=1, keepdims=True)
total: Tensor = y.sum()
total.backward()
grad: Tensor | None = x.grad
if grad is not None:
    print(grad.shape, float(total))

g = cr.grad(loss_of)(w, x)
values, indices = x.max(dim=1)
print(g, values, indices, x.T.shape, (x @ x.T).mean().item(), -x, abs(x), x[0, 1:], x >= 0)

model = TwoLayer(3, 16, 2)
opt = cr.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(2):
    out = model(cr.tensor(np.ones((4, 3), dtype=np.float32)))
    loss = nn.functional.cross_entropy(out, cr.tensor(np.array([0, 1, 0, 1])))
    opt.zero_grad()
    loss.backward()
    opt.step()

a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
L = b * ((a + b) * (a - b))
L.backward()
print(a.grad, b.grad)
