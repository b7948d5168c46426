"""Training-step benchmark: chainrule vs a hand-written NumPy MLP vs PyTorch eager (CPU).

One step = forward, softmax cross-entropy, backward, SGD update, in float32 (and float64 for
the large MLP), for

- the 784-512-512-10 ReLU MLP (MNIST-sized, batch 128 and 256),
- the digits MLP 64-128-10 (batch 32, as examples/digits_mlp.py),
- a Scalar-engine MLP 2-16-16-1 on 64 points (chainrule.Scalar vs micrograd, when installed).

Every implementation runs with the same number of threads (``--threads``; NumPy's BLAS via
threadpoolctl when available, ``torch.set_num_threads``). Each figure is the median of
the timed steps after warm-up steps; the implementations take turns in blocks of 10 steps,
so a change in the machine's load touches them all alike. The table gives the ratios chainrule/NumPy
(target <= 1.15) and chainrule/PyTorch (target <= 1.0).

    python bench/bench_mlp_train.py                 # full sizes
    python bench/bench_mlp_train.py --tiny          # seconds, for CI
    python bench/bench_mlp_train.py --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import memory_in_child, minor_faults, step_memory  # noqa: E402

LR = 0.01


# -- the three implementations of one training step --------------------------------------------------
def init_weights(sizes: list[int], seed: int = 0, dtype: Any = np.float32) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...] in ``dtype``, weights (out, in) as PyTorch's Linear."""
    rng = np.random.default_rng(seed)
    out = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1 / np.sqrt(a)
        out += [rng.uniform(-bound, bound, (b, a)).astype(dtype), rng.uniform(-bound, bound, b).astype(dtype)]
    return out


def numpy_step_fn(sizes: list[int], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    """A hand-written forward + backward + SGD step in NumPy (the speed reference)."""
    params = init_weights(sizes, dtype=x.dtype)
    n = len(x)
    rows = np.arange(n)

    def step() -> float:
        acts, pre = [x], []
        h = x
        for i in range(0, len(params), 2):
            z = h @ params[i].T
            z += params[i + 1]
            if i + 2 < len(params):
                pre.append(z)
                h = np.maximum(z, 0)
                acts.append(h)
            else:
                h = z
        m = h.max(axis=1, keepdims=True)
        e = np.exp(h - m)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) + m[:, 0] - h[rows, y]))
        g = e / s
        g[rows, y] -= 1
        g /= n
        for i in range(len(params) - 2, -1, -2):
            w = params[i]
            gw = g.T @ acts[i // 2]
            gb = g.sum(axis=0)
            if i > 0:
                g = g @ w
                g *= pre[i // 2 - 1] > 0
            w -= LR * gw
            params[i + 1] -= LR * gb
        return loss

    return step


def chainrule_mlp(sizes: list[int], dtype: np.dtype) -> Any:
    """chainrule's MLP with the shared initial weights."""
    from chainrule import nn

    model = nn.MLP(sizes[0], sizes[1:], activation="relu", dtype=dtype, rng=0)
    for p, w in zip(model.parameters(), init_weights(sizes, dtype=dtype), strict=True):
        p.data[...] = w
    return model


def chainrule_step_fn(sizes: list[int], x: np.ndarray, y: np.ndarray) -> Callable[[], float]:
    from chainrule import optim
    from chainrule.nn import functional as F

    model = chainrule_mlp(sizes, x.dtype)
    opt = optim.SGD(model.parameters(), lr=LR)

    def step() -> float:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return float(loss.data)

    return step


def chainrule_jit_step_fn(sizes: list[int], x: np.ndarray, y: np.ndarray) -> Callable[[], float] | None:
    """The same step with the loss function traced once by ``chainrule.jit`` and replayed."""
    from chainrule import optim
    from chainrule.nn import functional as F

    try:
        from chainrule import jit
    except ImportError:
        return None
    model = chainrule_mlp(sizes, x.dtype)
    opt = optim.SGD(model.parameters(), lr=LR)
    loss_fn = jit(lambda xb, yb: F.cross_entropy(model(xb), yb))

    def step() -> float:
        opt.zero_grad()
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()
        return float(loss.data)

    return step


def chainrule_jit_step_step_fn(sizes: list[int], x: np.ndarray, y: np.ndarray) -> Callable[[], float] | None:
    """The whole step (loss, backward, SGD update) traced once by ``chainrule.jit_step`` and replayed."""
    from chainrule import optim
    from chainrule.nn import functional as F

    try:
        from chainrule import jit_step
    except ImportError:
        return None
    model = chainrule_mlp(sizes, x.dtype)
    step = jit_step(lambda xb, yb: F.cross_entropy(model(xb), yb), optim.SGD(model.parameters(), lr=LR))
    return lambda: float(step(x, y).data)


def torch_step_fn(sizes: list[int], x: np.ndarray, y: np.ndarray) -> Callable[[], float] | None:
    try:
        import torch
    except ImportError:
        return None
    layers: list[Any] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).to(torch.float64 if x.dtype == np.float64 else torch.float32)
    with torch.no_grad():
        for p, w in zip(model.parameters(), init_weights(sizes, dtype=x.dtype), strict=True):
            p.copy_(torch.from_numpy(w))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def step() -> float:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(tx), ty)
        loss.backward()
        opt.step()
        return loss.item()

    return step


# -- the Scalar engine ----------------------------------------------------------------------------
def scalar_data(n: int) -> tuple[list[list[float]], list[float]]:
    from chainrule.data import make_moons

    X, y = make_moons(n, noise=0.1, seed=0)
    return X.tolist(), (y * 2 - 1).astype(float).tolist()


def chainrule_scalar_step_fn(sizes: list[int], n: int) -> Callable[[], float]:
    from chainrule import Scalar, nn, optim

    X, Y = scalar_data(n)
    model = nn.scalar.MLP(sizes[0], sizes[1:], rng=0)
    opt = optim.SGD(model.parameters(), lr=LR)

    def step() -> float:
        loss = sum(((1 - y * model(x)).relu() for x, y in zip(X, Y, strict=True)), Scalar(0.0)) * (1.0 / n)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.data

    return step


def micrograd_step_fn(sizes: list[int], n: int) -> Callable[[], float] | None:
    try:
        from micrograd.engine import Value
        from micrograd.nn import MLP
    except ImportError:
        return None
    X, Y = scalar_data(n)
    model = MLP(sizes[0], sizes[1:])

    def step() -> float:
        loss = sum(((1 + -y * model([Value(v) for v in x])).relu() for x, y in zip(X, Y, strict=True)),
                   Value(0.0)) * (1.0 / n)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= LR * p.grad
        return loss.data

    return step


# -- timing ----------------------------------------------------------------------------------------
def median_ms(steps: dict[str, Callable[[], float] | None], repeats: int, warmup: int,
              block: int = 10, faults: dict[str, float] | None = None) -> dict[str, float | None]:
    """Median milliseconds per step of each implementation. They take turns in blocks of ``block``
    steps (warm caches within a block, as in a training loop), so a change in the machine's load
    during the run affects them all alike. ``faults``, if given, receives minor page faults per step."""
    live = {k: f for k, f in steps.items() if f is not None}
    for f in live.values():
        for _ in range(warmup):
            f()
    times: dict[str, list[float]] = {k: [] for k in live}
    faulted = dict.fromkeys(live, 0)
    for _ in range(max(1, repeats // block)):
        for k, f in live.items():
            before = minor_faults()
            for _ in range(block):
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
            faulted[k] += minor_faults() - before
    if faults is not None:
        faults.update({k: faulted[k] / len(times[k]) for k in live})
    return {k: (1e3 * statistics.median(times[k]) if k in times else None) for k in steps}


@contextlib.contextmanager
def threads(n: int) -> Any:
    """Limit NumPy's BLAS and PyTorch to ``n`` threads."""
    try:
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(n)
    except ImportError:
        torch, previous = None, None
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        limiter: Any = contextlib.nullcontext()
        print(f"(threadpoolctl not installed: NumPy uses its default BLAS threads; torch uses {n})", file=sys.stderr)
    else:
        limiter = threadpool_limits(limits=n)
    try:
        with limiter:
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(previous)


def check_agreement(sizes: list[int], x: np.ndarray, y: np.ndarray) -> float:
    """Largest difference between the losses of NumPy and chainrule over 3 steps (they must agree)."""
    a, b = numpy_step_fn(sizes, x, y), chainrule_step_fn(sizes, x, y)
    return max(abs(a() - b()) for _ in range(3))


def fmt(v: float | None, spec: str = "9.3f") -> str:
    return "n/a".rjust(int(spec.split(".")[0])) if v is None else format(v, spec)


IMPLEMENTATIONS = {"numpy": "numpy_step_fn", "chainrule": "chainrule_step_fn", "chainrule.jit": "chainrule_jit_step_fn",
                   "chainrule.jit_step": "chainrule_jit_step_step_fn", "torch": "torch_step_fn"}


def case_data(sizes: list[int], batch: int, dtype: Any, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, sizes[0])).astype(dtype), rng.integers(0, sizes[-1], size=batch)


def memory_child(impl: str, sizes: list[int], batch: int, dtype: str, threads_n: int) -> None:
    """``--memory-of``: peak memory and page faults of one implementation alone, printed as JSON."""
    x, y = case_data(sizes, batch, np.dtype(dtype), 0)
    with threads(threads_n):
        report = step_memory(lambda: globals()[IMPLEMENTATIONS[impl]](sizes, x, y))
    print(json.dumps(report))


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny sizes and few repeats (CI smoke run)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--json", default=None, help="also write the rows to this JSON file")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs (one process each)")
    parser.add_argument("--memory-of", default=None, help=argparse.SUPPRESS)  # child mode: IMPL,SIZES,BATCH,DTYPE
    args = parser.parse_args(argv)
    if args.memory_of:
        impl, sizes_s, batch_s, dtype_s = args.memory_of.split(",")
        memory_child(impl, [int(v) for v in sizes_s.split("-")], int(batch_s), dtype_s, args.threads)
        return []

    if args.tiny:
        cases = [("mlp 32-16-16-4 b8", [32, 16, 16, 4], 8, np.float32),
                 ("mlp 32-16-16-4 b8 f64", [32, 16, 16, 4], 8, np.float64),
                 ("digits-like 16-8-4 b4", [16, 8, 4], 4, np.float32)]
        scalar_cases = [("scalar 2-4-1 n8", [2, 4, 1], 8)]
        repeats, warmup = args.repeats or 5, 1
    else:
        cases = [("mlp 784-512-512-10 b128", [784, 512, 512, 10], 128, np.float32),
                 ("mlp 784-512-512-10 b256", [784, 512, 512, 10], 256, np.float32),
                 ("mlp 784-512-512-10 b256 f64", [784, 512, 512, 10], 256, np.float64),
                 ("digits 64-128-10 b32", [64, 128, 10], 32, np.float32)]
        scalar_cases = [("scalar 2-16-16-1 n64", [2, 16, 16, 1], 64)]
        repeats, warmup = args.repeats or 50, 5

    rows: list[dict[str, Any]] = []
    with threads(args.threads):
        for k, (name, sizes, batch, dtype) in enumerate(cases):
            x, y = case_data(sizes, batch, dtype, k)
            diff = check_agreement(sizes, x, y)
            r = repeats if sizes[0] < 500 else max(5, repeats // 2)
            faults: dict[str, float] = {}
            ms = median_ms({f"{impl}_ms": globals()[fn](sizes, x, y) for impl, fn in IMPLEMENTATIONS.items()},
                           4 * r, warmup, faults=faults)
            row = {"case": name, **ms, "loss_diff_vs_numpy": diff,
                   **{k.replace("_ms", "_faults_per_step"): v for k, v in faults.items()}}
            if not args.tiny and not args.no_memory:
                spec = f"{'-'.join(map(str, sizes))},{batch},{np.dtype(dtype).name}"
                for impl in IMPLEMENTATIONS:
                    mem = memory_in_child(__file__, ["--memory-of", f"{impl},{spec}", "--threads", str(args.threads)])
                    row[f"{impl}_peak_mb"] = mem.get("peak_mb")
            rows.append(row)
        for name, sizes, n in scalar_cases:
            ms = median_ms({
                "chainrule_scalar_ms": chainrule_scalar_step_fn(sizes, n),
                "micrograd_ms": micrograd_step_fn(sizes, n),
            }, max(3, repeats // 5), 1, block=1)
            rows.append({"case": name, **ms})

    print(f"threads={args.threads}  python {platform.python_version()}  numpy {np.__version__}  "
          f"machine {platform.machine()} ({os.cpu_count()} cpus)")
    print("ms per step (median); cr = chainrule eager, jit = chainrule.jit replay of the loss, "
          "step = chainrule.jit_step replay of the whole step")
    print(f"{'case':28} {'numpy':>8} {'cr':>8} {'jit':>8} {'step':>8} {'torch':>8} {'cr/numpy':>9} {'jit/numpy':>9} "
          f"{'step/numpy':>10} {'cr/torch':>9}")
    for row in rows:
        if "numpy_ms" in row:
            c, n, j, t = row["chainrule_ms"], row["numpy_ms"], row["chainrule.jit_ms"], row["torch_ms"]
            st = row["chainrule.jit_step_ms"]
            row["chainrule_over_numpy"] = c / n
            row["jit_over_numpy"] = None if j is None else j / n
            row["jit_step_over_numpy"] = None if st is None else st / n
            row["chainrule_over_torch"] = None if t is None else c / t
            print(f"{row['case']:28} {fmt(n, '8.3f')} {fmt(c, '8.3f')} {fmt(j, '8.3f')} {fmt(st, '8.3f')} "
                  f"{fmt(t, '8.3f')} {fmt(row['chainrule_over_numpy'], '9.2f')} {fmt(row['jit_over_numpy'], '9.2f')} "
                  f"{fmt(row['jit_step_over_numpy'], '10.2f')} {fmt(row['chainrule_over_torch'], '9.2f')}")
    print("\nminor page faults per step (in this process) / peak MB above the set-up (each alone, a fresh process)")
    print(f"{'case':28} " + " ".join(f"{impl:>20}" for impl in IMPLEMENTATIONS))
    for row in rows:
        if "numpy_ms" in row:
            cells = []
            for impl in IMPLEMENTATIONS:
                f, m = row.get(f"{impl}_faults_per_step"), row.get(f"{impl}_peak_mb")
                cells.append(f"{fmt(f, '8.0f')} / {fmt(m, '7.1f')} MB")
            print(f"{row['case']:28} " + " ".join(f"{c:>20}" for c in cells))
    print(f"\n{'case':28} {'Scalar ms':>9} {'micrograd':>9} {'ratio':>9}")
    for row in rows:
        if "chainrule_scalar_ms" in row:
            s, m = row["chainrule_scalar_ms"], row["micrograd_ms"]
            row["scalar_over_micrograd"] = None if m is None else s / m
            print(f"{row['case']:28} {fmt(s)} {fmt(m)} {fmt(row['scalar_over_micrograd'], '9.2f')}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"threads": args.threads, "rows": rows}, fh, indent=2)
    return rows


if __name__ == "__main__":
    main()
