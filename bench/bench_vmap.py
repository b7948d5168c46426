"""vmap: per-example gradients of an MLP, and minimize with many starts.

    python bench/bench_vmap.py [--tiny]

- per-example gradients of a small MLP's loss (batch 64, 32 -> 64 -> 10): chainrule's
  ``vmap(grad(loss))`` against ``torch.func.vmap(torch.func.grad(loss))``, against the workaround
  without vmap (``jacrev`` of the vector of per-example losses: one backward sweep per example),
  and against a Python loop of ``grad`` (PyTorch on one thread: at these sizes more threads only
  contend);
- ``minimize``'s evaluation of Himmelblau's function and its gradient at 1,000 starts: through
  ``vmap`` (f written for one point, what minimize does now) against the old coordinate-first
  call (``x`` of shape (2, 1000), ``x[0]`` the first coordinate of every start), per step and
  for a whole 100-step run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import available, median_time, parser, table  # noqa: E402


def ms(fn, repeats: int, min_seconds: float = 0.05) -> float:
    return 1e3 * median_time(fn, repeats, min_seconds)


def mlp_loss(np_, log_softmax, params, x, y):
    h = np_.tanh(x @ params["W1"] + params["b1"])
    return -(y * log_softmax(h @ params["W2"] + params["b2"])).sum()


def mlp_data(batch: int, d_in: int, hidden: int, d_out: int):
    rng = np.random.default_rng(0)
    params = {
        "W1": rng.normal(size=(d_in, hidden)) / np.sqrt(d_in), "b1": np.zeros(hidden),
        "W2": rng.normal(size=(hidden, d_out)) / np.sqrt(hidden), "b2": np.zeros(d_out),
    }
    x = rng.normal(size=(batch, d_in))
    y = np.eye(d_out)[rng.integers(0, d_out, batch)]
    return params, x, y


def rows_per_example(batch: int, repeats: int):
    import chainrule as cr

    params, x, y = mlp_data(batch, 32, 64, 10)
    loss = lambda p, a, b: mlp_loss(np, cr.log_softmax, p, a, b)  # noqa: E731
    per_example = cr.vmap(cr.grad(loss), in_axes=(None, 0, 0))
    losses = lambda p: cr.vmap(loss, in_axes=(None, 0, 0))(p, x, y)  # noqa: E731
    reference = per_example(params, x, y)
    workaround = cr.jacrev(losses)(params)
    for k in params:  # the three chainrule ways agree before they are timed
        np.testing.assert_allclose(workaround[k], reference[k], rtol=1e-10, atol=1e-12)
    rows = [
        ("chainrule vmap(grad)", ms(lambda: per_example(params, x, y), repeats)),
        ("chainrule jacrev workaround", ms(lambda: cr.jacrev(losses)(params), repeats)),
        ("chainrule loop of grad", ms(
            lambda: [cr.grad(loss)(params, a, b) for a, b in zip(x, y)], repeats)),
    ]
    if available("torch"):
        import torch
        from torch.func import grad, vmap

        torch.set_num_threads(1)  # small ops: more threads only contend (NumPy's matmuls are this size too)
        tp = {k: torch.tensor(v) for k, v in params.items()}
        tx, ty = torch.tensor(x), torch.tensor(y)
        tloss = lambda p, a, b: mlp_loss(torch, lambda z: torch.log_softmax(z, -1), p, a, b)  # noqa: E731
        tgrad = vmap(grad(tloss), in_dims=(None, 0, 0))
        got = tgrad(tp, tx, ty)
        for k in params:
            np.testing.assert_allclose(got[k].numpy(), reference[k], rtol=1e-9, atol=1e-12)
        rows.append(("torch.func vmap(grad)", ms(lambda: tgrad(tp, tx, ty), repeats)))
    return rows


def himmelblau(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def rows_minimize(n_starts: int, steps: int, repeats: int):
    from chainrule.optimize import minimize
    from chainrule.optimize._batch import batch_value_and_grad
    from chainrule.optimize._points import per_point_value_and_grad

    X = np.random.default_rng(0).uniform(-5, 5, size=(n_starts, 2))
    through_vmap = per_point_value_and_grad(himmelblau, "bench")
    v_new, g_new = through_vmap(X)
    v_old, g_old = batch_value_and_grad(himmelblau, np.ascontiguousarray(X.T), (n_starts,), "bench")
    np.testing.assert_allclose(v_new, v_old, rtol=1e-13)
    np.testing.assert_allclose(g_new, g_old.T, rtol=1e-13)

    def old_run():  # the old driver's inner loop: coordinate-first evaluation, plain gradient steps
        P = X.copy()
        for _ in range(steps):
            _, g = batch_value_and_grad(himmelblau, np.ascontiguousarray(P.T), (n_starts,), "bench")
            P -= 1e-3 * g.T
        return P

    new = minimize(himmelblau, X, lr=1e-3, steps=steps, tol=None)
    np.testing.assert_allclose(new.x, old_run(), rtol=1e-12)
    return [
        ("chainrule vmap (one step)", ms(lambda: through_vmap(X), repeats)),
        ("coordinate-first (one step)", ms(
            lambda: batch_value_and_grad(himmelblau, np.ascontiguousarray(X.T), (n_starts,), "bench"), repeats)),
        (f"chainrule minimize ({steps} steps)", ms(
            lambda: minimize(himmelblau, X, lr=1e-3, steps=steps, tol=None), max(1, repeats // 2), 0.0)),
        (f"coordinate-first loop ({steps})", ms(old_run, max(1, repeats // 2), 0.0)),
    ]


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    repeats = 1 if args.tiny else args.repeats
    batch = 4 if args.tiny else 64
    rows = rows_per_example(batch, repeats)
    table(f"per-example gradients of an MLP (batch {batch}, 32-64-10)", "ms", rows,
          baseline="chainrule vmap(grad)")
    n, steps = (20, 3) if args.tiny else (1000, 100)
    table(f"minimize: Himmelblau at {n} starts", "ms", rows_minimize(n, steps, repeats),
          baseline="chainrule vmap (one step)")


if __name__ == "__main__":
    main()
