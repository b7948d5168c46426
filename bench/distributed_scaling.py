"""Predicted data-parallel scaling of GPT training over MPI, on paper, from measured figures.

The model (docs/distributed.md): every machine runs the README's step on its own batch (weak
scaling: N machines train on N batches per step), then a ring all-reduce averages the gradients.
A ring moves 2(N-1)/N of the gradient's bytes in and out of each machine, in 2(N-1) messages, so

    step(N) = compute + 2 (N-1)/N * gradient bytes / bandwidth + 2 (N-1) * latency
    efficiency(N) = compute / step(N)       (tokens/s on N machines = N * efficiency * one machine's)

with chainrule's trainer, which reduces once per step after the backward pass (no overlap).
``compute`` is the measured one-process step time; ``--latency`` the per-message latency.

    python bench/distributed_scaling.py --step-seconds 0.31 --params 844288   # figures of your own
    python bench/bench_distributed.py                                        # measures them, then prints this
"""

from __future__ import annotations

import argparse

MACHINES = (2, 8, 64)
GBITS = (10, 25, 100)


def gpt_parameters(n_layers: int = 4, d_model: int = 128, context: int = 128, vocab: int = 256) -> int:
    """nn.GPT's parameter count (tied output head): embeddings, blocks (attention, MLP, 2 norms), final norm."""
    block = 4 * d_model * d_model + 4 * d_model + 8 * d_model * d_model + 5 * d_model + 4 * d_model
    return vocab * d_model + context * d_model + n_layers * block + 2 * d_model


def ring_seconds(grad_bytes: float, machines: int, gbits: float, latency: float) -> float:
    """One ring all-reduce of ``grad_bytes`` over ``machines`` links of ``gbits`` Gbit/s."""
    if machines == 1:
        return 0.0
    return 2 * (machines - 1) / machines * grad_bytes * 8 / (gbits * 1e9) + 2 * (machines - 1) * latency


def print_table(sizes: list[tuple[str, int, int, float]], latency: float = 20e-6) -> None:
    """``sizes``: (name, parameters, bytes per number, measured compute seconds per step)."""
    print(f"\nPredicted step time and efficiency: weak scaling, ring all-reduce, {latency * 1e6:.0f} us per message")
    for name, params, itemsize, compute in sizes:
        grad = params * itemsize
        print(f"  {name}: gradient {grad / 2**20:.2f} MB, measured compute {compute * 1e3:.0f} ms per step")
        print(f"  {'machines':>10}" + "".join(f"{f'{g} Gbit/s':>22}" for g in GBITS))
        for n in MACHINES:
            cells = ""
            for g in GBITS:
                comm = ring_seconds(grad, n, g, latency)
                cell = f"{(compute + comm) * 1e3:.0f} ms ({comm * 1e3:.1f}), {compute / (compute + comm):.0%}"
                cells += f"{cell:>22}"
            print(f"  {n:>10}{cells}")
        print("  (each cell: step time (of which all-reduce), efficiency)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--step-seconds", type=float, required=True, help="measured compute time of one step")
    p.add_argument("--params", type=int, default=gpt_parameters(), help="parameters (default: the README's GPT)")
    p.add_argument("--itemsize", type=int, default=4, help="bytes per number (4: float32)")
    p.add_argument("--latency", type=float, default=20e-6, help="seconds per message")
    a = p.parse_args()
    print_table([(f"GPT of {a.params:,} parameters", a.params, a.itemsize, a.step_seconds)], a.latency)


if __name__ == "__main__":
    main()
