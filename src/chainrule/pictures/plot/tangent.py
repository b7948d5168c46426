"""The tangent of a function of one number: autodiff, finite difference and analytic slopes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..mpl import finish, new_axes


def _at(f: Callable[[Any], Any], x: float) -> float:
    """``f(x)`` as a float. An ``f`` written with Scalar methods (``lambda x: x.tanh()``, which
    ``chainrule.grad`` differentiates) fails on a float: it is evaluated on ``Scalar(x)`` instead."""
    try:
        return float(f(x))
    except AttributeError:
        from ...scalar import Scalar

        return float(f(Scalar(x)))


def _curve(f: Callable[[Any], Any], xs: np.ndarray) -> np.ndarray:
    try:
        ys = np.asarray(f(xs), dtype=float)
        if ys.shape == xs.shape:
            return ys
    except (TypeError, ValueError, AttributeError):
        pass
    return np.array([_at(f, float(x)) for x in xs])


def slopes(f: Callable[[Any], Any], x0: float, h: float = 1e-5, analytic: Callable[[float], float] | None = None):
    """``{"autodiff": ..., "finite difference": ..., "analytic": ...}`` slopes of ``f`` at ``x0``.

    The finite difference is the forward one, ``(f(x0 + h) - f(x0)) / h``.

    Example:
        >>> s = slopes(lambda x: x**3 - 10 * x**2 + 5 * x - 2, 6.0, analytic=lambda x: 3 * x**2 - 20 * x + 5)
        >>> s["autodiff"], s["analytic"], round(s["finite difference"], 3)
        (-7.0, -7.0, -7.0)
    """
    from ...transforms import grad

    x0 = float(x0)
    out = {
        "autodiff": float(grad(f)(x0)),
        "finite difference": (_at(f, x0 + h) - _at(f, x0)) / h,
    }
    if analytic is not None:
        out["analytic"] = float(analytic(x0))
    return out


def tangent(
    f: Callable[[Any], Any],
    x0: float,
    analytic: Callable[[float], float] | None = None,
    h: float = 1e-5,
    xrange: tuple[float, float] | None = None,
    label: str = "$f(x)$",
    title: str | None = None,
    ax: Any = None,
    path: str | Path | None = None,
) -> Any:
    """Plot ``f`` with its tangent at ``x0`` three ways; returns the figure (saved to ``path`` if given).

    The autodiff slope is ``chainrule.grad(f)(x0)``; the finite-difference slope uses step
    ``h``; the analytic one is drawn when ``analytic`` (the derivative) is given.

    Example:
        >>> from chainrule.plot import tangent
        >>> fig = tangent(lambda x: x**3 - 10 * x**2 + 5 * x - 2, 6.0, analytic=lambda x: 3 * x**2 - 20 * x + 5)
        >>> fig.axes[0].get_xlabel()
        '$x$'
    """
    x0 = float(x0)
    if h <= 0:
        raise ValueError(f"tangent: the finite-difference step h must be positive, got {h!r}")
    lo, hi = xrange if xrange is not None else (x0 - 5.0, x0 + 5.0)
    if not lo < x0 < hi:
        raise ValueError(f"tangent: x0 = {x0:g} must lie inside xrange ({lo:g}, {hi:g})")
    s = slopes(f, x0, h, analytic)
    fig, ax = new_axes("tangent", ax)
    xs = np.linspace(lo, hi, 400)
    y0 = _at(f, x0)
    ax.plot(xs, _curve(f, xs), color="C0", lw=2, label=label)
    span = 0.12 * (hi - lo)
    xt = np.linspace(x0 - span, x0 + span, 2)
    styles = {
        "finite difference": dict(color="orange", lw=6, alpha=0.55, ls="-"),
        "autodiff": dict(color="black", lw=1.8, ls="--"),
        "analytic": dict(color="red", lw=2.2, ls=":"),
    }
    names = {
        "finite difference": f"finite difference (h={h:g})",
        "autodiff": "autodiff (chainrule.grad)",
        "analytic": "analytic",
    }
    for key in ("finite difference", "autodiff", "analytic"):
        if key in s:
            ax.plot(xt, y0 + s[key] * (xt - x0), label=f"{names[key]}: slope {s[key]:.6f}", **styles[key])
    ax.plot([x0], [y0], "o", color="black", ms=6, zorder=5)
    ax.annotate(f"$x_0 = {x0:g}$", (x0, y0), textcoords="offset points", xytext=(8, 12), ha="left", fontsize=11)
    err = abs(s["finite difference"] - s["autodiff"])
    ax.text(
        0.02,
        0.02,
        f"|finite difference - autodiff| = {err:.1e}",
        transform=ax.transAxes,
        fontsize=10,
        bbox=dict(boxstyle="round", fc="white", ec="0.7"),
    )
    ax.set_xlabel("$x$", fontsize=13)
    ax.set_ylabel("$f(x)$", fontsize=13)
    ax.set_title(title or f"Tangent at $x_0 = {x0:g}$: three ways to get the slope", fontsize=12)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=9, framealpha=0.9)
    return finish(fig, path)
