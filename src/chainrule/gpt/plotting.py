"""The loss curve of a run as a PNG (matplotlib, ``pip install chainrule[gpt]``; skipped without it)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["plot_loss_curve"]


def _smooth(values: list[float], weight: float = 0.9) -> list[float]:
    out, avg = [], None
    for v in values:  # exponential moving average started at the first value
        avg = v if avg is None else weight * avg + (1 - weight) * v
        out.append(avg)
    return out


def plot_loss_curve(history: dict[str, list[Any]], path: str | os.PathLike[str], title: str = "GPT training") -> bool:
    """Draw the training loss (raw and smoothed) and the validation loss against the step, and
    write ``path``. Returns ``False`` (and writes nothing) when matplotlib is not installed.

    Example:
        >>> import os, tempfile
        >>> from chainrule.gpt.plotting import plot_loss_curve
        >>> path = os.path.join(tempfile.mkdtemp(), "loss.png")
        >>> h = {"step": [1, 2, 3], "train_loss": [5.0, 4.0, 3.5], "val_step": [3], "val_loss": [3.6]}
        >>> plot_loss_curve(h, path), os.path.getsize(path) > 0
        (True, True)
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=110)
    try:
        steps, loss = history["step"], history["train_loss"]
        ax.plot(steps, loss, color="tab:blue", alpha=0.25, linewidth=0.8)
        ax.plot(steps, _smooth(loss), color="tab:blue", label="training loss (smoothed)")
        if history.get("val_loss"):
            ax.plot(history["val_step"], history["val_loss"], "o-", color="tab:orange", markersize=3,
                    label="validation loss")
        ax.set_xlabel("step")
        ax.set_ylabel("cross-entropy (nats per token)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.fspath(path))
    finally:
        plt.close(fig)
    return True
