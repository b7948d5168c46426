"""Handwritten digits (scikit-learn's bundled 8x8 images, no download) with a Tensor MLP.

    python examples/digits_mlp.py                  # ~40 epochs, a few seconds; PNG and checkpoint in ./out/
    python examples/digits_mlp.py --epochs 10 --no-plot

A plain training loop: seeded shuffling mini-batches, AdamW, a cosine schedule, gradient
clipping, a tqdm bar showing the loss, a validation split for choosing the epoch count, the
test accuracy at the end, a loss-curve plot and a pickle-free checkpoint (``.npz``).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

from chainrule import nn, no_grad, optim
from chainrule.data import Batches, train_val_split
from chainrule.nn import functional as F


def load_digits_split(seed: int = 0) -> dict[str, np.ndarray]:
    """Train / validation / test arrays: pixels scaled to [0, 1] as float32, labels as int64."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as e:
        raise ImportError("this example needs scikit-learn for its bundled digits: pip install scikit-learn") from e
    digits = load_digits()
    X = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    X_rest, X_test, y_rest, y_test = train_val_split(X, y, val_fraction=0.2, stratify=y, seed=seed)
    X_train, X_val, y_train, y_val = train_val_split(X_rest, y_rest, val_fraction=0.1, stratify=y_rest, seed=seed)
    return dict(X_train=X_train, y_train=y_train, X_val=X_val, y_val=y_val, X_test=X_test, y_test=y_test)


def accuracy(model: nn.Module, X: np.ndarray, y: np.ndarray) -> float:
    model.eval()
    with no_grad():
        pred = model(X).data.argmax(axis=1)
    model.train()
    return float((pred == y).mean())


def train(
    epochs: int = 40,
    hidden: tuple[int, ...] = (128,),
    batch_size: int = 32,
    lr: float = 3e-3,
    seed: int = 0,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Train the MLP; returns the model, the optimiser, per-step losses and the accuracies."""
    data = load_digits_split(seed)
    model = nn.MLP(64, [*hidden, 10], activation="relu", dropout=0.1, rng=seed)
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    loader = Batches(data["X_train"], data["y_train"], batch_size=batch_size, seed=seed)
    sched = optim.WarmupCosineLR(opt, warmup_steps=len(loader), total_steps=epochs * len(loader))
    losses: list[float] = []
    bar = nn.progress(range(epochs), desc="digits", disable=not show_progress)
    for _ in bar:
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb, label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            optim.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            sched.step()
            losses.append(float(loss))
        bar.set_postfix(
            loss=f"{np.mean(losses[-len(loader) :]):.4f}",
            val_acc=f"{accuracy(model, data['X_val'], data['y_val']):.3f}",
        )
    return {
        "model": model,
        "optimizer": opt,
        "scheduler": sched,
        "losses": losses,
        "val_accuracy": accuracy(model, data["X_val"], data["y_val"]),
        "test_accuracy": accuracy(model, data["X_test"], data["y_test"]),
    }


def plot_losses(losses: list[float], path: str, window: int = 20) -> str:
    """Write a PNG of the per-step loss and its moving average (matplotlib's Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(losses, alpha=0.3, label="step")
    if len(losses) >= window:
        ax.plot(
            np.arange(window - 1, len(losses)),
            np.convolve(losses, np.ones(window) / window, "valid"),
            label=f"mean of {window}",
        )
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_yscale("log")
    ax.set_title("digits MLP: training loss")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="out")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    result = train(epochs=args.epochs, seed=args.seed)
    seconds = time.perf_counter() - start
    print(
        f"test accuracy {result['test_accuracy']:.4f} (validation {result['val_accuracy']:.4f}) "
        f"after {args.epochs} epochs in {seconds:.1f} s"
    )
    os.makedirs(args.out, exist_ok=True)
    ckpt = os.path.join(args.out, "digits_mlp.npz")
    nn.save_checkpoint(
        ckpt, model=result["model"], optimizer=result["optimizer"], scheduler=result["scheduler"], epochs=args.epochs
    )
    print("wrote", ckpt)
    if not args.no_plot:
        try:
            print("wrote", plot_losses(result["losses"], os.path.join(args.out, "digits_loss.png")))
        except ImportError:
            print("matplotlib is not installed (pip install chainrule[plot]); skipping the plot")


if __name__ == "__main__":
    main()
