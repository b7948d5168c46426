"""JAX's ``jax.checkpoint_policies``: which values inside a ``checkpoint`` block may be saved for the backward pass.

chainrule's ``checkpoint`` saves nothing inside a block (every policy acts as ``nothing_saveable``): the gradients
are the same under every policy, only memory and time would differ. The names are here so that JAX programs
passing ``policy=jax.checkpoint_policies.dots_saveable`` run unchanged.

Example:
    >>> import numpy as np, chainrule as cr
    >>> block = cr.checkpoint(lambda x: np.sin(np.sin(x)), policy=cr.checkpoint_policies.dots_saveable)
    >>> round(cr.grad(block)(0.5), 6)
    0.778644
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable",
           "dots_with_no_batch_dims_saveable", "everything_saveable", "nothing_saveable",
           "save_any_names_but_these", "save_anything_except_these_names", "save_from_both_policies",
           "save_only_these_names"]

Policy = Callable[..., bool]


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every value (JAX's); chainrule recomputes the block all the same."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing: recompute the whole block in the backward pass (what chainrule does)."""
    return False


def dots_saveable(*_: Any, **__: Any) -> bool:
    """Save the results of matrix products (JAX's); chainrule recomputes them."""
    return False


checkpoint_dots = dots_saveable
dots_with_no_batch_dims_saveable = dots_saveable
checkpoint_dots_with_no_batch_dims = dots_saveable


def save_only_these_names(*names: str) -> Policy:
    """Save the values named with ``checkpoint_name`` in ``names`` (JAX's)."""
    return nothing_saveable


def save_anything_except_these_names(*names: str) -> Policy:
    """Save every value except those named in ``names`` (JAX's)."""
    return nothing_saveable


save_any_names_but_these = save_anything_except_these_names


def save_from_both_policies(policy_1: Policy, policy_2: Policy) -> Policy:
    """Save what either policy saves (JAX's)."""
    return nothing_saveable
