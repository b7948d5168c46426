"""Two moons with a Scalar-engine MLP (micrograd's network), trained by chainrule.optim.

    python examples/moons_scalar_mlp.py            # ~100 steps, writes PNGs to ./out/
    python examples/moons_scalar_mlp.py --steps 40 --no-plot

Every number in the network is a ``chainrule.Scalar``: one graph node per operation, with a
single ``dot`` node per neuron. The loss is micrograd's max-margin (hinge) loss; the
optimiser is the same ``optim.Adam`` that trains Tensor models. The script prints the
accuracy and draws the decision boundary and the loss curve (matplotlib, if installed).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

from chainrule import Scalar, nn, optim
from chainrule.data import make_moons


def hinge_loss(model: Any, X: np.ndarray, y: np.ndarray) -> tuple[Scalar, float]:
    """Mean of relu(1 - y * score) over the batch (labels in {-1, +1}), and the accuracy."""
    scores = [model(row.tolist()) for row in X]
    losses = [(1 - yi * s).relu() for yi, s in zip(y.tolist(), scores, strict=True)]
    loss = sum(losses, Scalar(0.0)) * (1.0 / len(losses))
    accuracy = float(np.mean([(s.data > 0) == (yi > 0) for yi, s in zip(y.tolist(), scores, strict=True)]))
    return loss, accuracy


def train(
    n_samples: int = 100,
    steps: int = 100,
    hidden: tuple[int, ...] = (16, 16),
    lr: float = 0.05,
    noise: float = 0.1,
    seed: int = 0,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Train on ``make_moons``; returns the model, the per-step losses and the final accuracy."""
    X, labels = make_moons(n_samples, noise=noise, seed=seed)
    y = labels * 2 - 1  # {-1, +1}
    model = nn.scalar.MLP(2, [*hidden, 1], rng=seed)
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = optim.CosineAnnealingLR(opt, T_max=steps, eta_min=lr * 0.05)
    losses, accuracy = [], 0.0
    bar = nn.progress(range(steps), desc="moons", disable=not show_progress)
    for _ in bar:
        loss, accuracy = hinge_loss(model, X, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.data)
        bar.set_postfix(loss=f"{loss.data:.4f}", acc=f"{accuracy:.2f}")
    _, accuracy = hinge_loss(model, X, y)
    return {"model": model, "losses": losses, "accuracy": accuracy, "X": X, "y": labels}


def plot_decision_boundary(model: Any, X: np.ndarray, y: np.ndarray, path: str, resolution: int = 60) -> str:
    """Write a PNG of the model's decision regions with the data on top (matplotlib's Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], resolution), np.linspace(lo[1], hi[1], resolution))
    grid = np.c_[xx.ravel(), yy.ravel()]
    zz = np.array([model(p.tolist()).data for p in grid]).reshape(xx.shape)
    fig = Figure(figsize=(5, 4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.contourf(xx, yy, zz > 0, cmap="Spectral", alpha=0.6)
    ax.scatter(X[:, 0], X[:, 1], c=y, s=25, cmap="Spectral", edgecolors="k")
    ax.set_title("Scalar MLP decision boundary")
    fig.savefig(path, dpi=100)
    return path


def plot_losses(losses: list[float], path: str, title: str = "training loss") -> str:
    """Write a PNG of the loss curve."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(losses)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    if min(losses) > 0:
        ax.set_yscale("log")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="out")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    result = train(n_samples=args.samples, steps=args.steps, seed=args.seed)
    print(f"accuracy {result['accuracy']:.3f} after {args.steps} steps ({time.perf_counter() - start:.1f} s)")
    if not args.no_plot:
        try:
            os.makedirs(args.out, exist_ok=True)
            print(
                "wrote",
                plot_decision_boundary(
                    result["model"], result["X"], result["y"], os.path.join(args.out, "moons_boundary.png")
                ),
            )
            print("wrote", plot_losses(result["losses"], os.path.join(args.out, "moons_loss.png"), "moons: hinge loss"))
        except ImportError:
            print("matplotlib is not installed (pip install chainrule[plot]); skipping the plots")


if __name__ == "__main__":
    main()
