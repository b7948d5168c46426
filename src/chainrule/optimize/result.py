"""What ``minimize`` returns: the final points and the trajectory that led there."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Trajectory:
    """Positions, values and gradients along a run; row ``k`` is the state after ``k`` steps.

    For a run with many starts the shapes are ``positions (steps+1, n_starts, dim)``,
    ``values (steps+1, n_starts)``, ``grads (steps+1, n_starts, dim)``; for one start the
    ``n_starts`` axis is left out. A start that stopped early keeps its last row.
    """

    positions: np.ndarray
    values: np.ndarray
    grads: np.ndarray

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class OptimizeResult:
    """The outcome of ``minimize``.

    - ``x``, ``fun``, ``grad``: final position, value and gradient (per start when ``x0`` held many);
    - ``converged``: the gradient norm reached ``tol`` (per start); ``diverged``: stopped on NaN/inf;
    - ``n_steps``: steps each start took; ``trajectory``: the whole run (``path(i)`` for one start);
    - ``method``, ``maximize``, ``message``.
    """

    x: np.ndarray | float
    fun: np.ndarray | float
    grad: np.ndarray | float
    converged: np.ndarray | bool
    n_steps: np.ndarray | int
    trajectory: Trajectory
    method: str
    maximize: bool = False
    diverged: np.ndarray | bool = False
    message: str = ""
    batched: bool = field(default=False, repr=False)

    @property
    def success(self) -> bool:
        """Every start converged."""
        return bool(np.all(self.converged))

    @property
    def n_starts(self) -> int:
        return int(np.size(self.converged))

    def path(self, i: int = 0) -> Trajectory:
        """The trajectory of start ``i`` alone, cut where that start stopped."""
        tr = self.trajectory
        if not self.batched:
            if i != 0:
                raise IndexError(f"OptimizeResult.path: this run has one start, got index {i}")
            return tr
        n = self.n_starts
        if not -n <= i < n:
            raise IndexError(f"OptimizeResult.path: start {i} out of range for {n} starts")
        end = int(np.asarray(self.n_steps)[i]) + 1
        return Trajectory(tr.positions[:end, i], tr.values[:end, i], tr.grads[:end, i])

    def __str__(self) -> str:
        kind = "maximize" if self.maximize else "minimize"
        conv = int(np.sum(self.converged))
        steps = np.asarray(self.n_steps)
        lines = [
            f"{kind} ({self.method}): {conv}/{self.n_starts} starts converged, "
            f"{int(steps.max()) if steps.size else 0} steps at most",
        ]
        if self.message:
            lines.append(self.message)
        if not self.batched:
            lines.append(f"x = {np.array2string(np.asarray(self.x), precision=6)}, f = {float(self.fun):.6g}")
        return "\n".join(lines)
