"""The hyperparameters of a saved parameter group, checked before ``Optimizer.load_state_dict`` takes them.

A saved value must be of the kind this optimiser holds under its name (a bool, a number, a tuple of numbers, a
string); entries a learning-rate scheduler adds are taken; PyTorch's implementation switches (``foreach``, ...),
which a ``torch.optim`` checkpoint holds in every group, are left out; anything else means the state was saved
from another optimiser. A refused value changes nothing (the caller updates the groups only once all passed).

Example:
    >>> checked_hyperparameter("SGD", 0, "lr", 0.5, {"lr": 0.1})
    0.5
    >>> implementation_switch("SGD", 0, "foreach", None, {"lr": 0.1})
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["checked_hyperparameter", "implementation_switch", "SCALAR_STATE"]


# PyTorch's implementation switches, saved in each of its param groups: choices of kernels, not of results
IMPLEMENTATION_SWITCHES = frozenset({"foreach", "fused", "capturable", "differentiable"})


def implementation_switch(name: str, g: int, key: str, value: Any, group: dict[str, Any]) -> bool:
    """Whether a saved hyperparameter is one of PyTorch's implementation switches, which chainrule does not keep
    in its groups (a checkpoint of ``torch.optim`` loads); ``differentiable=True`` is refused as in the constructor."""
    if key not in IMPLEMENTATION_SWITCHES or key in group:
        return False
    if key == "differentiable" and value:
        raise NotImplementedError(
            f"{name}.load_state_dict: group {g} was saved with differentiable=True; chainrule's optimisers update "
            "parameters in place, outside the graph (save it with differentiable=False)")
    return True


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


# state entries that are numbers, not arrays (a 0-d array saved under another name is a 0-d parameter's moment)
SCALAR_STATE = frozenset({"step", "mu_product"})

# what schedulers add to each param group (PyTorch's names): a saved state may hold them without a scheduler here
SCHEDULER_KEYS = frozenset({"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum", "swa_lr"})


def checked_hyperparameter(name: str, g: int, key: str, value: Any, group: dict[str, Any]) -> Any:
    """A saved hyperparameter, checked against the kind of value this optimiser holds under ``key``."""
    where = f"{name}.load_state_dict: hyperparameter {key!r} of group {g}"
    if key == "param_names":  # (PyTorch's: the names given with the parameters, named_parameters())
        if (not isinstance(value, (list, tuple)) or len(value) != len(group["params"])
                or not all(isinstance(v, str) for v in value)):
            raise TypeError(f"{where} must be {len(group['params'])} names (str), got {value!r:.60}")
        return list(value)
    if key not in group and key in SCHEDULER_KEYS:  # written by a scheduler (PyTorch's load keeps them too)
        if not _is_number(value) or not np.isfinite(value):
            raise TypeError(f"{where} (set by a learning-rate scheduler) must be a finite number, got {value!r:.40}")
        return float(value)
    if key not in group:
        raise ValueError(
            f"{name}.load_state_dict: the saved state has a hyperparameter {key!r} that {name} does not have "
            f"(it has {sorted(k for k in group if k != 'params')}); it was saved from another optimiser"
        )
    current = group[key]
    if isinstance(current, (bool, np.bool_)) or current is None:
        if not isinstance(value, (bool, np.bool_)) and not (
                current is None and (value is None or _is_number(value) or isinstance(value, str))):
            raise TypeError(f"{where} must be {'a bool' if current is not None else 'None or a number'}, "
                            f"got {type(value).__name__} {value!r:.40}")
        return bool(value) if isinstance(value, np.bool_) else value
    if _is_number(current):
        if not _is_number(value) or not np.isfinite(value):
            raise TypeError(f"{where} must be a finite number, got {type(value).__name__} {value!r:.40}")
        if key in ("lr", "eps", "weight_decay", "momentum") and value < 0:
            raise ValueError(f"{where} must be >= 0, got {value}")
        return type(current)(value) if isinstance(current, (int, float)) else value
    if isinstance(current, tuple):  # (an entry that is None may stay None: Adafactor's eps)
        if (not isinstance(value, (list, tuple)) or len(value) != len(current)
                or not all((v is None and c is None) or (_is_number(v) and np.isfinite(v))
                           for v, c in zip(value, current))):
            raise TypeError(f"{where} must be {len(current)} finite numbers, got {value!r:.60}")
        return tuple(None if v is None else float(v) for v in value)
    if isinstance(current, str) and not isinstance(value, str):
        raise TypeError(f"{where} must be a string, got {type(value).__name__} {value!r:.40}")
    return value
