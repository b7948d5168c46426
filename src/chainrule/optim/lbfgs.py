"""``LBFGS``: PyTorch's limited-memory BFGS, closure-based, with its optional strong-Wolfe line search.

A port of ``torch.optim.LBFGS`` (itself after minFunc) to NumPy, iteration for iteration: the parameters are
seen as one flat vector, ``step(closure)`` runs up to ``max_iter`` iterations, each calling ``closure()``
(which zeroes the gradients, computes the loss, calls ``backward`` and returns the loss) once, or several times
in the line search.

Example:
    >>> from chainrule import Tensor, optim
    >>> w = Tensor([1.0, -2.0], requires_grad=True)
    >>> opt = optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 3.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure); [round(float(v), 6) for v in w]
    [3.0, 3.0]
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.state import enable_grad
from .optimizers import Optimizer, lr_value

__all__ = ["LBFGS"]


def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                       bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through two points with their slopes, kept within ``bounds``."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (xmin_bound + xmax_bound) / 2.0
    d2 = d2_square**0.5
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, xmin_bound), xmax_bound)


def _strong_wolfe(obj_func: Callable[[float], tuple[float, np.ndarray]], t: float, d: np.ndarray, f: float,
                  g: np.ndarray, gtd: float, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, np.ndarray, float, int]:
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (PyTorch's bracketing and zoom);
    returns ``(loss, gradient, t, evaluations)``."""
    d_norm = np.abs(d).max()
    f_new, g_new = obj_func(t)
    evals, gtd_new = 1, g_new @ d
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done, ls_iter = False, 0
    bracket: list[float] = []
    bracket_f: list[float] = []
    bracket_g: list[np.ndarray] = []
    bracket_gtd: list[float] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = obj_func(t)
        evals, gtd_new, ls_iter = evals + 1, g_new @ d, ls_iter + 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:  # zoom: shrink the bracket until a point meets the conditions
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:  # too close to an end: move away unless progress is made
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(t)
        evals, gtd_new, ls_iter = evals + 1, g_new @ d, ls_iter + 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = \
                    bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS (PyTorch's, after minFunc): ``step(closure)`` runs up to ``max_iter`` quasi-Newton iterations from the
    last ``history_size`` steps, with a fixed step ``lr`` (``line_search_fn=None``) or a strong-Wolfe line search
    (``"strong_wolfe"``); it stops early when the gradient is below ``tolerance_grad`` or the loss or the step
    changes by less than ``tolerance_change``. One parameter group only, as PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import Tensor, optim
        >>> w = Tensor(np.zeros(3), requires_grad=True)
        >>> opt = optim.LBFGS([w], lr=1.0, max_iter=50)
        >>> def closure():
        ...     opt.zero_grad(); loss = ((w - np.arange(3.0)) ** 2).sum(); loss.backward(); return loss
        >>> float(opt.step(closure)) > 0, np.round(w.data, 6).tolist()  # returns the loss before the step
        (True, [0.0, 1.0, 2.0])
    """

    def __init__(self, params: Any, lr: float = 1.0, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS: parameter groups are not supported (there can be only one), as in PyTorch")

    def add_param_group(self, group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ValueError("LBFGS: parameter groups are not supported (there can be only one), as in PyTorch")
        super().add_param_group(group)

    # -- the parameters as one flat vector ---------------------------------------------------
    def _flat_grad(self) -> np.ndarray:
        parts = []
        for slot in self._slots[0]:
            g = slot.grad()
            parts.append(np.zeros(int(np.prod(slot.shape))) if g is None else np.asarray(g).reshape(-1))
        return np.concatenate(parts).astype(self._dtype(), copy=False)

    def _dtype(self) -> np.dtype:
        return np.result_type(*[slot.dtype for slot in self._slots[0]])

    def _add_grad(self, step_size: float, update: np.ndarray) -> None:
        offset = 0
        for slot in self._slots[0]:
            value = slot.value()
            n = value.size
            value += (step_size * update[offset:offset + n]).reshape(value.shape).astype(value.dtype, copy=False)
            slot.commit()
            offset += n

    def _set_param(self, values: list[np.ndarray]) -> None:
        for slot, v in zip(self._slots[0], values, strict=True):
            slot.value()[...] = v
            slot.commit()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        """Up to ``max_iter`` iterations; ``closure`` (required) recomputes the loss and its gradients.
        Returns the loss of the first evaluation."""
        if closure is None:
            raise TypeError("LBFGS.step needs a closure that zeroes the gradients, computes the loss, calls "
                            "backward() and returns the loss (PyTorch's LBFGS does too)")

        def evaluate() -> Any:
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr, max_iter, max_eval = lr_value(group), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        state = self.state.setdefault(0, {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1.0
            else:  # the two-loop recursion over the kept (y, s) pairs
                y, s = flat_grad - prev_flat_grad, d * t
                ys = y @ s  # (NumPy scalars of the parameters' dtype, as PyTorch's 0-d tensors: float32 stays float32)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / (y @ y)
                al = state.setdefault("al", [None] * history_size)  # (scratch kept in the state, as PyTorch)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = (old_stps[i] @ q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = (old_dirs[i] @ r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad @ d
            if gtd > -tolerance_change:  # not a descent direction
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = [slot.value().copy() for slot in self._slots[0]]

                def obj_func(step: float, x_init: list[np.ndarray] = x_init, d: np.ndarray = d) -> Any:
                    self._add_grad(step, d)
                    f_step = float(evaluate())
                    g_step = self._flat_grad()
                    self._set_param(x_init)
                    return f_step, g_step

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # re-evaluate (not in the last iteration: the caller's next step will)
                    loss = float(evaluate())
                    flat_grad = self._flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        out["state"] = copy.deepcopy(dict(self.state))
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the hyperparameters and the history (the flat vectors are not reshaped to the parameters)."""
        saved = state_dict.get("state", {}) if isinstance(state_dict, dict) else {}
        super().load_state_dict({**state_dict, "state": {}})
        self.state = {int(k): copy.deepcopy(v) for k, v in saved.items()}
