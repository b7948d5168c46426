"""``chainrule.optim.swa_utils``: PyTorch's stochastic weight averaging and exponential moving averages of a model
(``AveragedModel``, ``get_ema_multi_avg_fn``, ``get_ema_avg_fn``, ``get_swa_avg_fn``, ``get_swa_multi_avg_fn``),
the ``SWALR`` schedule and ``update_bn``, with PyTorch's arithmetic (its CPU path) and state dict names.

Example:
    >>> from chainrule import nn
    >>> from chainrule.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
    >>> model = nn.Linear(2, 1, rng=0)
    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    >>> ema.update_parameters(model); list(ema.state_dict()), int(ema.n_averaged)
    (['n_averaged', 'module.weight', 'module.bias'], 1)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core.state import no_grad
from ..nn.batchnorm import _BatchNorm
from ..nn.module import Module
from ..tensor import Tensor
from .optimizers import Optimizer
from .schedules import LRScheduler

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
           "get_swa_multi_avg_fn", "update_bn"]


def _raw(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """``start += weight * (end - start)`` in place, in PyTorch's two-sided form (exact at weight 0 and 1)."""
    if weight < 0.5:
        np.copyto(start, start + weight * (end - start), casting="unsafe")
    else:
        np.copyto(start, end - (end - start) * (1 - weight), casting="unsafe")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[list[Any], list[Any], Any], None]:
    """For ``AveragedModel(multi_avg_fn=...)``: ``ema = decay * ema + (1 - decay) * param``, in place on every tensor.

    Example:
        >>> import numpy as np
        >>> from chainrule import Tensor
        >>> from chainrule.optim.swa_utils import get_ema_multi_avg_fn
        >>> ema, now = Tensor(np.array([0.0])), Tensor(np.array([1.0]))
        >>> get_ema_multi_avg_fn(0.75)([ema], [now], None); ema.item()
        0.25
    """

    def ema_update(ema_param_list: list[Any], current_param_list: list[Any], _: Any) -> None:
        for e, c in zip(ema_param_list, current_param_list, strict=True):
            e_arr, c_arr = _raw(e), _raw(c)
            if e_arr.dtype.kind in "fc":
                _lerp_(e_arr, c_arr, 1 - decay)
            else:
                np.copyto(e_arr, e_arr * decay + c_arr * (1 - decay), casting="unsafe")

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[list[Any], list[Any], Any], None]:
    """For ``AveragedModel(multi_avg_fn=...)``: the running mean ``avg += (param - avg) / (n + 1)``, in place
    (integer buffers too, truncated, where PyTorch's raises)."""

    def swa_update(averaged_param_list: list[Any], current_param_list: list[Any], num_averaged: Any) -> None:
        n = int(_raw(num_averaged))
        weight = float(np.float32(1) / np.float32(n + 1))  # (PyTorch's 1 / (n_averaged + 1): a float32 tensor)
        for a, c in zip(averaged_param_list, current_param_list, strict=True):
            a_arr, c_arr = _raw(a), _raw(c)
            if a_arr.dtype.kind in "fc":
                _lerp_(a_arr, c_arr, weight)
            else:
                np.copyto(a_arr, a_arr + (c_arr - a_arr) / (n + 1), casting="unsafe")

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Any, Any, Any], Any]:
    """For ``AveragedModel(avg_fn=...)``: returns ``decay * ema + (1 - decay) * param`` (one tensor at a time)."""

    def ema_update(ema_param: Any, current_param: Any, num_averaged: Any) -> Any:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Any, Any, Any], Any]:
    """For ``AveragedModel(avg_fn=...)``: returns ``avg + (param - avg) / (n + 1)`` (one tensor at a time)."""

    def swa_update(averaged_param: Any, current_param: Any, num_averaged: Any) -> Any:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """PyTorch's ``AveragedModel``: a deep copy of ``model`` (``self.module``) whose parameters
    ``update_parameters(model)`` averages: the running mean by default (SWA), or ``multi_avg_fn(averaged_list,
    current_list, n_averaged)`` in place (e.g. :func:`get_ema_multi_avg_fn`), or ``avg_fn(averaged, current,
    n_averaged)`` returning each new average. ``use_buffers=True`` averages the buffers too (else they are copied
    from ``model``). The first update copies the model. Calling it calls the averaged copy.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> from chainrule.optim.swa_utils import AveragedModel
        >>> model = nn.Linear(1, 1, bias=False, rng=0)
        >>> swa = AveragedModel(model)
        >>> for w in (1.0, 2.0, 6.0):
        ...     _ = model.weight.data.fill_(w)
        ...     swa.update_parameters(model)
        >>> swa.module.weight.item(), swa(np.ones((1, 1), dtype=np.float32)).item()
        (3.0, 3.0)
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable[..., Any] | None = None,
                 multi_avg_fn: Callable[..., Any] | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: pass avg_fn or multi_avg_fn, not both")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", np.array(0, dtype=np.int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list[Any]:
        params = list(model.parameters())
        return params + list(model.buffers()) if self.use_buffers else params

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the average."""
        mine, theirs = self._tensors(self.module), self._tensors(model)
        if len(mine) != len(theirs):
            raise ValueError(f"AveragedModel.update_parameters: the model has {len(theirs)} tensors to average, "
                             f"the averaged copy {len(mine)}; pass the model it was built from")
        n = int(self.n_averaged)
        with no_grad():
            if n == 0:
                for a, c in zip(mine, theirs, strict=True):
                    np.copyto(_raw(a), _raw(c), casting="unsafe")
            elif self.multi_avg_fn is not None:
                counts = Tensor._wrap(np.array(n))
                for dtype in dict.fromkeys(_raw(a).dtype for a in mine):  # grouped by dtype, as PyTorch's
                    pairs = [(a, c) for a, c in zip(mine, theirs, strict=True) if _raw(a).dtype == dtype]
                    self.multi_avg_fn([Tensor._wrap(_raw(a)) for a, _ in pairs],
                                      [Tensor._wrap(_raw(c)) for _, c in pairs], counts)
            else:
                avg_fn = self.avg_fn or get_swa_avg_fn()
                counts = Tensor._wrap(np.array(n))
                for a, c in zip(mine, theirs, strict=True):
                    new = avg_fn(Tensor._wrap(_raw(a)), Tensor._wrap(_raw(c).copy()), counts)
                    np.copyto(_raw(a), _raw(new), casting="unsafe")
            if not self.use_buffers:  # keep the buffers in step with the model
                for a, c in zip(self.module.buffers(), model.buffers(), strict=True):
                    np.copyto(_raw(a), _raw(c), casting="unsafe")
        for t in self._tensors(self.module):
            t._bump_version()
        self.n_averaged.fill_(n + 1)


class SWALR(LRScheduler):
    """PyTorch's ``SWALR``: anneals each group's learning rate from its current value to ``swa_lr`` (one number, or
    one per group) over ``anneal_epochs`` steps (``"cos"`` or ``"linear"``), then holds it. It builds on the rate
    it finds, so it may take over from another schedule mid-training, as in PyTorch.

    Example:
        >>> from chainrule import Tensor, optim
        >>> from chainrule.optim.swa_utils import SWALR
        >>> opt = optim.SGD([Tensor([1.0], requires_grad=True)], lr=1.0)
        >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
        >>> lrs = []
        >>> for _ in range(3):
        ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
        >>> lrs
        [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | Iterable[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        groups = getattr(optimizer, "param_groups", [])
        swa_lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(groups)
        if len(swa_lrs) != len(groups):
            raise ValueError(f"SWALR: swa_lr holds {len(swa_lrs)} values for {len(groups)} parameter groups")
        for lr, group in zip(swa_lrs, groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"SWALR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"SWALR: anneal_epochs must be an int >= 0, got {anneal_epochs!r}")
        self.anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    def _check_untouched(self) -> None:
        """None: SWALR starts from whatever rate it finds (another schedule's), as PyTorch's."""

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` (or PyTorch's SWALR's); as PyTorch's, the optimiser's rates are left as they are
        (SWALR builds on them: they come from the optimiser's own state dict)."""
        state = dict(state)
        if "_anneal_strategy" in state:  # (PyTorch's name)
            state["anneal_strategy"] = state.pop("_anneal_strategy")
        kept = [group["lr"] for group in self.optimizer.param_groups]
        super().load_state_dict(state)
        for group, lr in zip(self.optimizer.param_groups, kept, strict=True):
            group["lr"] = lr
        self._last_lr = [float(v) for v in state.get("_last_lr", kept)]

    def get_lr(self) -> list[float]:
        step = self.last_epoch if self.anneal_epochs else max(1, self.last_epoch)
        prev_alpha = self._anneal(max(0.0, min(1.0, (step - 1) / max(1, self.anneal_epochs))))
        alpha = self._anneal(max(0.0, min(1.0, step / max(1, self.anneal_epochs))))
        out = []
        for group in self.optimizer.param_groups:
            swa = group["swa_lr"]
            prev = swa if prev_alpha == 1 else (group["lr"] - prev_alpha * swa) / (1 - prev_alpha)
            out.append(swa * alpha + prev * (1 - alpha))
        return out


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """PyTorch's ``update_bn``: recompute every BatchNorm's running statistics as the plain average over one pass
    of ``loader`` (its items, or their first element when they are tuples, are fed to ``model`` in training mode).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> from chainrule.optim.swa_utils import update_bn
        >>> model = nn.BatchNorm1d(1)
        >>> update_bn([np.array([[0.0], [2.0]]), np.array([[4.0], [6.0]])], model)
        >>> model.running_mean
        Tensor([3.], dtype=float32)
    """
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with no_grad():
        for item in loader:
            if isinstance(item, (list, tuple)):
                item = item[0]
            if device is not None and hasattr(item, "to"):
                item = item.to(device)
            model(item)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)
