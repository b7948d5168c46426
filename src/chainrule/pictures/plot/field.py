"""The gradient vector field of a function of two variables, computed in one vectorised call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...optimize._batch import rows_value_and_grad
from ..mpl import finish, new_axes


def gradient_grid(
    f: Callable[[Any], Any], xrange: tuple[float, float], yrange: tuple[float, float], n: int | tuple[int, int] = 200
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X, Y, Z, dX, dY)`` on an ``n`` x ``n`` grid: values and gradient of ``f`` in ONE call.

    ``f`` is written for one point ``x = (x[0], x[1])`` with elementwise NumPy operations; it is
    called once on the whole grid (``x`` of shape ``(2, ny, nx)``) and differentiated once.

    Example:
        >>> X, Y, Z, dX, dY = gradient_grid(lambda x: x[1] * (x[0] + x[1]) * (x[0] - x[1]), (0, 2), (1, 3), 3)
        >>> float(Z[1, 1]), float(dX[1, 1]), float(dY[1, 1])  # at (a, b) = (1, 2)
        (-6.0, 4.0, -11.0)
    """
    nx, ny = (n, n) if isinstance(n, (int, np.integer)) else n
    if nx < 2 or ny < 2:
        raise ValueError(f"gradient_grid: the grid needs at least 2 points per side, got {nx} x {ny}")
    X, Y = np.meshgrid(np.linspace(*xrange, nx), np.linspace(*yrange, ny))
    Z, (dX, dY) = rows_value_and_grad(f, (X, Y), (ny, nx), "gradient_grid")
    return X, Y, Z, dX, dY


def _norm(Z: np.ndarray) -> dict[str, Any]:
    """A diverging colour map centred on 0 when ``Z`` changes sign, else a sequential one.

    When a few extreme values would wash out the rest (the largest magnitude is over 30 times
    the typical one), the scale is symmetric-logarithmic so the structure near 0 stays visible.
    """
    from matplotlib.colors import Normalize, SymLogNorm

    finite = Z[np.isfinite(Z)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if lo < 0 < hi:
        m = max(-lo, hi)
        typical = float(np.median(np.abs(finite)))
        if typical > 0 and m > 30 * typical:
            return dict(cmap="RdBu_r", norm=SymLogNorm(linthresh=typical / 3, vmin=-m, vmax=m))
        return dict(cmap="RdBu_r", norm=Normalize(-m, m))
    return dict(cmap="viridis", norm=Normalize(lo, hi))


def arrow_handle(ax: Any) -> Any:
    """A legend entry for the gradient arrows."""
    (handle,) = ax.plot(
        [], [], ls="none", marker=r"$\rightarrow$", ms=14, color="black", label=r"$\nabla f$ direction (uphill)"
    )
    return handle


def draw_field(
    ax: Any,
    f: Callable[[Any], Any],
    xrange: tuple[float, float],
    yrange: tuple[float, float],
    resolution: int = 200,
    arrows: int = 20,
    levels: int = 30,
    normalize: bool = True,
    colorbar: bool = True,
    label: str = "$f$",
) -> tuple[Any, ...]:
    """Draw pcolormesh + contour + quiver of the gradient on ``ax``; returns the grid arrays."""
    X, Y, Z, dX, dY = gradient_grid(f, xrange, yrange, resolution)
    style = _norm(Z)
    norm = style["norm"]
    mesh = ax.pcolormesh(X, Y, Z, shading="auto", **style)
    # contour levels evenly spaced in colour, so a logarithmic scale gets lines everywhere
    lines = np.unique(norm.inverse(np.linspace(0.0, 1.0, levels + 2)[1:-1]))
    ax.contour(X, Y, Z, levels=lines, colors="black", linewidths=0.5, alpha=0.6)
    if arrows:
        step = max(1, resolution // arrows)
        sl = (slice(step // 2, None, step), slice(step // 2, None, step))
        U, V = dX[sl], dY[sl]
        if normalize:
            length = np.hypot(U, V)
            length[length == 0] = 1.0
            U, V = U / length, V / length
        ax.quiver(
            X[sl],
            Y[sl],
            U,
            V,
            color="black",
            alpha=0.8,
            pivot="middle",
            width=0.003,
            scale=1.4 * arrows if normalize else None,
        )
    if colorbar:
        cbar = ax.figure.colorbar(mesh, ax=ax)
        cbar.set_label(label, fontsize=12)
        if hasattr(norm, "linthresh"):  # symmetric log: 0, then 1 and 3 times powers of ten past the linear part
            m = max(-norm.vmin, norm.vmax)
            k = np.arange(np.floor(np.log10(norm.linthresh)), np.floor(np.log10(m)) + 1)
            nice = np.sort(np.concatenate([10.0**k, 3 * 10.0**k]))
            nice = nice[(nice >= 2 * norm.linthresh) & (nice <= m)]
            cbar.set_ticks(np.concatenate([-nice[::-1], [0.0], nice]))
    ax.set_xlim(*xrange)
    ax.set_ylim(*yrange)
    return X, Y, Z, dX, dY


def vector_field(
    f: Callable[[Any], Any],
    xrange: tuple[float, float] = (-10.0, 10.0),
    yrange: tuple[float, float] = (-10.0, 10.0),
    resolution: int = 200,
    arrows: int = 20,
    levels: int = 30,
    normalize: bool = True,
    labels: tuple[str, str] = ("$x_0$", "$x_1$"),
    label: str = "$f$",
    title: str | None = None,
    ax: Any = None,
    path: str | Path | None = None,
) -> Any:
    """Colour map, contour lines and gradient arrows of ``f``; returns the figure (saved to ``path``).

    Values and gradients on the ``resolution`` x ``resolution`` grid come from one vectorised
    call (see ``gradient_grid``); ``arrows`` per side are drawn, of unit length when ``normalize``.

    Example:
        >>> from chainrule.plot import vector_field
        >>> fig = vector_field(lambda x: x[1] * (x[0] + x[1]) * (x[0] - x[1]), labels=("$a$", "$b$"))
        >>> [a.get_xlabel() for a in fig.axes][:1]
        ['$a$']
    """
    fig, ax = new_axes("vector_field", ax, figsize=(6.4, 5.2))
    draw_field(ax, f, xrange, yrange, resolution, arrows, levels, normalize, label=label)
    ax.set_xlabel(labels[0], fontsize=13)
    ax.set_ylabel(labels[1], fontsize=13)
    ax.set_title(title or r"$f$ and its gradient field $\nabla f$", fontsize=12)
    if arrows:
        arrow_handle(ax)
        fig.legend(loc="outside lower center", fontsize=10, frameon=False)
    return finish(fig, path)
