"""PyTorch's ``torch.amp``: ``autocast`` and ``GradScaler``, as stand-ins that change nothing.

chainrule computes each op in the dtype of its inputs (NumPy has no bfloat16, and float16 on a CPU is slower
than float32), so there is no mixed precision to turn on: ``autocast`` runs its block as it is (and says so
once, with a warning), ``GradScaler`` behaves as PyTorch's ``GradScaler(enabled=False)`` (scale 1, ``step``
calls ``optimizer.step()``). A PyTorch training loop written for mixed precision runs unchanged, in float32.

Example:
    >>> import warnings
    >>> import chainrule as cr
    >>> w = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = cr.optim.SGD([w], lr=0.1)
    >>> scaler = cr.amp.GradScaler()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with cr.amp.autocast("cpu"):
    ...         loss = (w * w).sum()
    >>> scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
    >>> w, scaler.get_scale()
    (Tensor([0.8, 1.6], dtype=float32, requires_grad=True), 1.0)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from .core.errors import PerformanceWarning

__all__ = ["autocast", "GradScaler"]

_warned = [False]


class autocast:  # noqa: N801  (PyTorch's name)
    """``torch.autocast`` / ``torch.amp.autocast``: a context manager (or decorator) that leaves the dtypes as
    they are; the first one entered with ``enabled=True`` warns that it does nothing."""

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, bool(enabled)

    def __enter__(self) -> autocast:
        if self.enabled and not _warned[0]:
            _warned[0] = True
            warnings.warn("chainrule.amp.autocast does nothing: chainrule computes each op in its inputs' dtype "
                          "(no mixed precision); the block runs as it is", PerformanceWarning, stacklevel=2)
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


class GradScaler:
    """``torch.amp.GradScaler`` as PyTorch's ``GradScaler(enabled=False)``: the loss is not scaled (float32
    gradients do not underflow as float16 ones can), ``step(optimizer)`` is ``optimizer.step()``."""

    def __init__(self, device: str = "cpu", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self.device = device

    def scale(self, outputs: Any) -> Any:
        """The outputs, unscaled."""
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        """Nothing to unscale."""

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)``."""
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        """Nothing to update."""

    def get_scale(self) -> float:
        return 1.0

    def is_enabled(self) -> bool:
        """False: this scaler does not scale (as PyTorch's ``GradScaler(enabled=False)``)."""
        return False

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        pass
