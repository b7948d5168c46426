"""A 1e6-deep chain of Scalar ops, build + backward: time and memory per node.

    python bench/bench_deep_chain.py [--tiny]

Each library runs in its own process so its peak memory (RSS above the baseline after
imports) can be read; micrograd's recursive topological sort hits the recursion limit.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _harness import available, parser, table  # noqa: E402


def chain(x, n):
    """n ops: alternately multiply by a constant and take the sine."""
    for _ in range(n // 2):
        x = (x * 0.999).sin()
    return x


def run_chainrule(n):
    from chainrule import Scalar

    x = Scalar(0.5)
    chain(x, n).backward()
    return x.grad


def run_micrograd(n):
    from micrograd.engine import Value

    class V(Value):
        def sin(self):  # micrograd has no sin; a same-cost stand-in built on its own op pattern
            import math

            out = V(math.sin(self.data), (self,), "sin")

            def _backward():
                self.grad += math.cos(self.data) * out.grad

            out._backward = _backward
            return out

        def __mul__(self, other):
            other = other if isinstance(other, Value) else V(other)
            out = V(self.data * other.data, (self, other), "*")

            def _backward():
                self.grad += other.data * out.grad
                other.grad += self.data * out.grad

            out._backward = _backward
            return out

    x = V(0.5)
    chain(x, n).backward()
    return x.grad


def run_torch(n):
    import torch

    torch.set_num_threads(1)
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    chain(x, n).backward()
    return float(x.grad)


def run_autograd(n):
    import autograd
    import autograd.numpy as anp

    def f(x):
        for _ in range(n // 2):
            x = anp.sin(x * 0.999)
        return x

    return float(autograd.grad(f)(0.5))


RUNNERS = {"chainrule": run_chainrule, "micrograd": run_micrograd, "pytorch (0-d)": run_torch,
           "HIPS autograd": run_autograd}
MODULES = {"micrograd": "micrograd", "pytorch (0-d)": "torch", "HIPS autograd": "autograd"}


def one(name: str, n: int) -> dict:
    if name in MODULES:
        __import__(MODULES[name])
    import chainrule  # noqa: F401  (same baseline imports for everyone)

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        grad = RUNNERS[name](n)
        status = "ok"
    except RecursionError:
        grad, status = None, "RecursionError"
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": seconds, "bytes_per_node": (peak - base) * 1024 / n, "grad": grad, "status": status}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--one", help=argparse_hidden())
    p.add_argument("--n", type=int, default=None)
    args = p.parse_args()
    n = args.n or (20_000 if args.tiny else 1_000_000)
    if args.one:
        print(json.dumps(one(args.one, n)))
        return
    times, mems = [], []
    for name in RUNNERS:
        if name in MODULES and not available(MODULES[name]):
            times.append((name, "not installed"))
            mems.append((name, "not installed"))
            continue
        out = subprocess.run([sys.executable, __file__, "--one", name, "--n", str(n)], capture_output=True, text=True)
        if out.returncode != 0:
            times.append((name, "failed"))
            mems.append((name, "failed"))
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if r["status"] != "ok":
            times.append((name, r["status"]))
            mems.append((name, r["status"]))
        else:
            times.append((name, r["seconds"]))
            mems.append((name, r["bytes_per_node"]))
    table(f"{n}-deep Scalar chain, build + backward (one run each)", "seconds", times)
    table(f"{n}-deep Scalar chain, peak memory above baseline", "bytes per node", mems)


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
