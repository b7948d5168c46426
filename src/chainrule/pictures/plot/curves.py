"""Loss curves: the value of the objective step by step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..mpl import finish, new_axes


def _values(history: Any) -> np.ndarray:
    from ...optimize import OptimizeResult, Trajectory

    if isinstance(history, OptimizeResult):
        history = history.trajectory
    if isinstance(history, Trajectory):
        history = history.values
    try:
        values = np.asarray(history, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            "loss_curve: history must be a minimize result, a Trajectory, a list or array of values, "
            f"or a dict of them, got {type(history).__name__}"
        ) from None
    if values.ndim not in (1, 2) or values.shape[0] == 0:
        raise ValueError(f"loss_curve: values must have shape (steps,) or (steps, n_starts), got {values.shape}")
    return values


def loss_curve(
    history: Any,
    yscale: str | None = None,
    ylabel: str = "loss",
    title: str | None = None,
    ax: Any = None,
    path: str | Path | None = None,
) -> Any:
    """Plot values against steps; ``history`` may be a dict ``{label: history}`` to compare runs.

    A history is a ``minimize`` result, a ``Trajectory``, or values of shape ``(steps,)`` or
    ``(steps, n_starts)`` (each start drawn thin, the median bold). ``yscale`` defaults to
    "log" when every value is positive and they span over two decades. Returns the figure.

    Example:
        >>> from chainrule.plot import loss_curve
        >>> fig = loss_curve({"gd": [4.0, 2.0, 1.0, 0.5], "adam": [4.0, 1.0, 0.1, 0.01]})
        >>> fig.axes[0].get_yscale()
        'log'
    """
    runs = history if isinstance(history, dict) else {None: history}
    if not runs:
        raise ValueError("loss_curve: got an empty dict of histories")
    fig, ax = new_axes("loss_curve", ax, figsize=(6.4, 4.4))
    everything = []
    for k, (name, h) in enumerate(runs.items()):
        values = _values(h)
        everything.append(values.ravel())
        color = f"C{k % 10}"
        steps = np.arange(values.shape[0])
        if values.ndim == 2 and values.shape[1] > 1:
            ax.plot(steps, values, color=color, lw=0.6, alpha=0.25)
            ax.plot(
                steps,
                np.median(values, axis=1),
                color=color,
                lw=2.2,
                label=f"{name}: median of {values.shape[1]} starts" if name else f"median of {values.shape[1]} starts",
            )
        else:
            ax.plot(steps, values.reshape(len(steps)), color=color, lw=2, label=name)
    allv = np.concatenate(everything)
    allv = allv[np.isfinite(allv)]
    if yscale is None:
        positive = allv.size and np.all(allv > 0)
        yscale = "log" if positive and allv.max() / allv.min() > 100 else "linear"
    ax.set_yscale(yscale)
    ax.set_xlabel("step", fontsize=12)
    ax.set_ylabel(ylabel, fontsize=12)
    ax.set_title(title or "Loss per step", fontsize=12)
    ax.grid(alpha=0.3, which="both" if yscale == "log" else "major")
    if any(line.get_label() and not line.get_label().startswith("_") for line in ax.get_lines()):
        ax.legend(fontsize=9)
    return finish(fig, path)
