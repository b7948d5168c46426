"""Optimisation trajectories over the contour map and gradient field of a 2-D function."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..mpl import finish, new_axes
from .field import arrow_handle, draw_field


def _positions(result: Any) -> tuple[np.ndarray, str]:
    """Positions as (steps+1, n_paths, 2), and a description of the run."""
    from ...optimize import OptimizeResult, Trajectory

    info = ""
    if isinstance(result, OptimizeResult):
        steps = int(np.max(result.n_steps))
        info = f"{result.method}, {steps} steps"
        pos = result.trajectory.positions
    elif isinstance(result, Trajectory):
        pos = result.positions
    else:
        pos = np.asarray(result, dtype=float)
    if pos.ndim not in (2, 3) or pos.shape[-1] != 2:
        raise ValueError(
            "trajectories: needs positions of 2-D points, shape (steps+1, n_starts, 2) or (steps+1, 2), "
            f"got shape {pos.shape}"
        )
    return (pos[:, None, :] if pos.ndim == 2 else pos), info


def _span(lo: float, hi: float, pad: float = 0.08) -> tuple[float, float]:
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    return lo - pad * width, hi + pad * width


def trajectories(
    result: Any,
    f: Callable[[Any], Any] | None = None,
    xrange: tuple[float, float] | None = None,
    yrange: tuple[float, float] | None = None,
    field: bool = True,
    arrows: int = 20,
    labels: tuple[str, str] = ("$x_0$", "$x_1$"),
    label: str = "$f$",
    title: str | None = None,
    ax: Any = None,
    path: str | Path | None = None,
) -> Any:
    """Draw every start's path (start: black dot, end: white cross) over ``f``'s map and gradient field.

    ``result`` is what ``minimize`` returned (or a ``Trajectory`` / positions array). Without
    ``xrange``/``yrange`` the view covers every path. Returns the figure (saved to ``path``).

    Example:
        >>> import numpy as np
        >>> from chainrule.optimize import minimize
        >>> from chainrule.plot import trajectories
        >>> f = lambda x: x[1] * (x[0] + x[1]) * (x[0] - x[1])
        >>> r = minimize(f, np.random.default_rng(0).uniform(-10, 10, (50, 2)), lr=1e-3, steps=25, tol=None)
        >>> fig = trajectories(r, f, labels=("$a$", "$b$"))
        >>> len(fig.axes)  # the plot and its colour bar
        2
    """
    pos, info = _positions(result)
    finite = pos[np.all(np.isfinite(pos), axis=-1)]
    if xrange is None:
        xrange = _span(float(finite[:, 0].min()), float(finite[:, 0].max()))
    if yrange is None:
        yrange = _span(float(finite[:, 1].min()), float(finite[:, 1].max()))
    fig, ax = new_axes("trajectories", ax, figsize=(7.2, 6.0))
    if f is not None:
        draw_field(ax, f, xrange, yrange, arrows=arrows if field else 0, label=label)
    n = pos.shape[1]
    from matplotlib import colormaps

    colors = colormaps["hsv"](np.linspace(0, 1, n, endpoint=False))
    for i in range(n):
        p = pos[:, i]
        ax.plot(p[:, 0], p[:, 1], "-o", color=colors[i], ms=2.5, lw=1.4, alpha=0.9, zorder=3)
    ax.plot(pos[0, :, 0], pos[0, :, 1], "o", color="black", ms=5, zorder=4, label="start")
    ax.plot(pos[-1, :, 0], pos[-1, :, 1], "x", color="white", mec="black", ms=7, mew=2.2, zorder=5, label="end")
    ax.plot(
        [], [], "-o", color="0.4", ms=2.5, label=f"{n} path{'s' if n != 1 else ''}" + (f" ({info})" if info else "")
    )
    if field and f is not None and arrows:
        arrow_handle(ax)
    ax.set_xlim(*xrange)
    ax.set_ylim(*yrange)
    ax.set_xlabel(labels[0], fontsize=13)
    ax.set_ylabel(labels[1], fontsize=13)
    ax.set_title(title or "Gradient descent paths", fontsize=12)
    fig.legend(loc="outside lower center", ncols=2, fontsize=10, frameon=False)
    return finish(fig, path)
