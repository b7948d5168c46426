"""``minimize``: gradient-based descent from one or many starts in one vectorised run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import steppers
from ._batch import CONTRACT
from ._points import per_point_value_and_grad
from .result import OptimizeResult, Trajectory


class DivergenceError(FloatingPointError):
    """A run met NaN or inf; ``.step`` and ``.start`` say where, ``.result`` holds the run so far."""

    def __init__(self, message: str, step: int, start: int, result: OptimizeResult) -> None:
        super().__init__(message)
        self.step = step
        self.start = start
        self.result = result


def _starts(x0: Any) -> tuple[np.ndarray, str]:
    """x0 as an (n_starts, dim) float array, and its kind: 'number', 'vector' or 'batch'."""
    if np.iscomplexobj(x0):  # the float conversion below would drop the imaginary part (with a warning only)
        raise TypeError(
            f"minimize: x0 must be real, got complex values ({type(x0).__name__}); minimize over the real and "
            "imaginary parts: x0 = np.concatenate([z.real, z.imag]), f(v) = g(v[:n] + 1j * v[n:])"
        )
    try:
        arr = np.array(x0, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"minimize: x0 must be a number or an array of numbers, got {type(x0).__name__}") from None
    if arr.ndim > 2:
        raise ValueError(
            f"minimize: x0 must have shape (dim,) for one start or (n_starts, dim) for many, got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"minimize: x0 is empty (shape {arr.shape}); give at least one start")
    if not np.all(np.isfinite(arr)):
        bad = int(np.argwhere(~np.isfinite(arr))[0][0]) if arr.ndim == 2 else 0
        raise ValueError(f"minimize: x0 holds NaN or inf (start {bad}); every start must be finite")
    kind = ("number", "vector", "batch")[arr.ndim]
    return arr.reshape(1, 1) if arr.ndim == 0 else arr.reshape(1, -1) if arr.ndim == 1 else arr, kind


def _schedule(lr: Any, method: str) -> Callable[[int], float]:
    if lr is None:
        lr = steppers.DEFAULT_LR[method]
    if callable(lr):
        return lr
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.floating)) or not lr > 0:
        raise ValueError(f"minimize: lr must be a positive number or a function of the step, got {lr!r}")
    value = float(lr)
    return lambda t: value


def minimize(
    f: Callable[[Any], Any],
    x0: Any,
    method: str = "gd",
    lr: float | Callable[[int], float] | None = None,
    steps: int = 1000,
    tol: float | None = 1e-8,
    maximize: bool = False,
    on_nonfinite: str = "raise",
    **options: Any,
) -> OptimizeResult:
    """Minimise (or maximise) ``f`` by gradient steps from one start or many at once.

    ``f`` is written for ONE point ``x`` of shape ``(dim,)``, in any way (``x[0]``, ``x[..., 1]``,
    ``x @ A @ x``, ``np.linalg.norm(x - t)``, ``np.sum(x**2)``), and returns one number. All starts
    run together through ``chainrule.vmap``: whole-array NumPy calls over the batch of starts, each
    start getting exactly what it would get alone (one start and the same start inside a batch
    follow the same trajectory). For a function of one number, ``x0`` is a number (or an
    ``(n_starts, 1)`` array) and ``f`` gets one number.

    Args:
        f: the objective, e.g. ``lambda x: x[1] * (x[0] + x[1]) * (x[0] - x[1])``.
        x0: a number, one start ``(dim,)``, or many starts ``(n_starts, dim)`` run together.
        method: ``"gd"``, ``"momentum"``, ``"nesterov"`` or ``"adam"``.
        lr: the learning rate, or a function of the 0-based step returning it (a schedule);
            defaults: 1e-2, and 1e-3 for adam.
        steps: the most steps to take.
        tol: a start stops when its gradient norm is <= tol; the run stops when all have
            (``None``: never stop early).
        maximize: climb instead of descend.
        on_nonfinite: ``"raise"`` (a ``DivergenceError`` naming the step and the start) or
            ``"stop"`` (freeze that start, mark it ``diverged`` and go on with the others).
        **options: method options: ``momentum=0.9`` (momentum, nesterov), ``betas=(0.9, 0.999)``,
            ``eps=1e-8`` (adam).

    Returns:
        An ``OptimizeResult``: ``x``, ``fun``, ``grad``, ``converged``, ``n_steps`` and the
        ``trajectory`` (positions, values, gradients after each step).

    Example:
        >>> import numpy as np
        >>> from chainrule.optimize import minimize
        >>> bowl = lambda x: (x[0] - 1) ** 2 + 2 * (x[1] + 3) ** 2
        >>> r = minimize(bowl, np.array([[0.0, 0.0], [5.0, 5.0]]), method="gd", lr=0.1, steps=500)
        >>> np.round(r.x, 6).tolist(), r.success
        ([[1.0, -3.0], [1.0, -3.0]], True)
        >>> t = np.array([1.0, 2.0])
        >>> np.round(minimize(lambda x: np.sum((x - t) ** 2), np.zeros(2), lr=0.1).x, 6).tolist()
        [1.0, 2.0]
    """
    X, kind = _starts(x0)
    if not callable(f):
        raise TypeError(f"minimize: f must be callable, got {type(f).__name__}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"minimize: steps must be a non-negative integer, got {steps!r}")
    if tol is not None and not (isinstance(tol, (int, float)) and tol >= 0):
        raise ValueError(f"minimize: tol must be a non-negative number or None, got {tol!r}")
    if on_nonfinite not in ("raise", "stop"):
        raise ValueError(f"minimize: on_nonfinite must be 'raise' or 'stop', got {on_nonfinite!r}")
    n, dim = X.shape
    stepper = steppers.make(method, X.shape, options)
    rate = _schedule(lr, method)
    sign = -1.0 if maximize else 1.0

    evaluate_points = per_point_value_and_grad(f, "minimize")

    def evaluate(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pts = X[rows]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # NaN/inf are reported below
            if kind == "number":
                v, g = evaluate_points(pts[:, 0])
                return v, g[:, None]
            return evaluate_points(pts)

    everyone = np.arange(n)
    values, grads = evaluate(everyone)
    converged = np.zeros(n, dtype=bool)
    diverged = np.zeros(n, dtype=bool)
    n_steps = np.zeros(n, dtype=int)
    history: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [(X.copy(), values.copy(), grads.copy())]

    def result(message: str) -> OptimizeResult:
        pos, val, gr = (np.stack(parts) for parts in zip(*history, strict=True))
        if kind == "batch":
            return OptimizeResult(
                X.copy(),
                values.copy(),
                grads.copy(),
                converged.copy(),
                n_steps.copy(),
                Trajectory(pos, val, gr),
                method,
                maximize,
                diverged.copy(),
                message,
                batched=True,
            )
        if kind == "number":
            x, fun, g = float(X[0, 0]), float(values[0]), float(grads[0, 0])
            tr = Trajectory(pos[:, 0, 0], val[:, 0], gr[:, 0, 0])
        else:
            x, fun, g = X[0].copy(), float(values[0]), grads[0].copy()
            tr = Trajectory(pos[:, 0], val[:, 0], gr[:, 0])
        return OptimizeResult(
            x, fun, g, bool(converged[0]), int(n_steps[0]), tr, method, maximize, bool(diverged[0]), message
        )

    def check_finite(rows: np.ndarray, step: int) -> np.ndarray:
        """Rows of ``rows`` that are still finite; the others diverged (raise or freeze)."""
        bad = ~(
            np.isfinite(values[rows]) & np.all(np.isfinite(grads[rows]), axis=1) & np.all(np.isfinite(X[rows]), axis=1)
        )
        if not bad.any():
            return rows
        first = int(rows[np.argmax(bad)])
        lr_now = rate(max(step - 1, 0))
        what = (
            "f"
            if not np.isfinite(values[first])
            else "the gradient"
            if not np.all(np.isfinite(grads[first]))
            else "the position"
        )
        msg = (
            f"minimize: start {first} diverged at step {step} (method {method!r}, lr={lr_now:g}): {what} is "
            f"not finite (f = {values[first]:g} at x = {np.array2string(X[first], precision=4)}); "
            "lower lr, start closer, or pass on_nonfinite='stop' to go on with the other starts"
        )
        diverged[rows[bad]] = True
        if on_nonfinite == "raise":
            raise DivergenceError(msg, step, first, result(msg))
        return rows[~bad]

    def mark_converged(rows: np.ndarray) -> np.ndarray:
        if tol is None:
            return rows
        done = np.linalg.norm(grads[rows], axis=1) <= tol
        converged[rows[done]] = True
        return rows[~done]

    active = mark_converged(check_finite(everyone, 0))
    for t in range(steps):
        if active.size == 0:
            break
        lr_t = float(rate(t))
        with np.errstate(over="ignore", invalid="ignore"):
            points = X[active]
            stepper.step(active, points, sign * grads[active], lr_t, t + 1)
            X[active] = points
        n_steps[active] += 1
        values[active], grads[active] = evaluate(active)
        history.append((X.copy(), values.copy(), grads.copy()))
        active = mark_converged(check_finite(active, t + 1))

    n_conv, n_div = int(converged.sum()), int(diverged.sum())
    message = f"{n_conv} of {n} starts converged (gradient norm <= {tol:g})" if tol is not None else ""
    if n_div:
        message += f"; {n_div} diverged (NaN/inf), starts {np.flatnonzero(diverged).tolist()[:10]}"
    if tol is not None and n_conv + n_div < n:
        message += f"; the others ran out of steps ({steps})"
    return result(message.lstrip("; "))


__all__ = ["minimize", "DivergenceError", "CONTRACT"]
