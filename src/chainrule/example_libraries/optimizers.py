"""JAX's ``jax.example_libraries.optimizers``: each optimiser is a triple of functions on pytrees of arrays,
``(init_fun, update_fun, get_params)``, with ``update_fun(step, grads, opt_state)``; step sizes are numbers or
schedules (functions of the step number).

Example:
    >>> import numpy as np
    >>> import chainrule as cr
    >>> from chainrule.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.adam(0.1)
    >>> state = opt_init({"w": np.array([1.0, -2.0])})
    >>> for i in range(100):
    ...     state = opt_update(i, cr.grad(lambda p: cr.numpy.sum(p["w"] ** 2))(get_params(state)), state)
    >>> bool(np.abs(get_params(state)["w"]).max() < 0.05)
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ..tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov", "adagrad", "rmsprop",
           "rmsprop_momentum", "adam", "adamax", "constant", "exponential_decay", "inverse_time_decay",
           "polynomial_decay", "piecewise_constant", "make_schedule", "l2_norm", "clip_grads", "unpack_optimizer_state",
           "pack_optimizer_state"]

Schedule = Callable[[int], float]


class OptimizerState(NamedTuple):
    """The state of every leaf (a tuple of arrays each), with the parameters' structure."""

    packed_state: list[Any]
    tree_def: Any
    subtree_defs: list[Any]


class Optimizer(NamedTuple):
    init_fn: Callable[[Any], OptimizerState]
    update_fn: Callable[[int, Any, OptimizerState], OptimizerState]
    params_fn: Callable[[OptimizerState], Any]


def optimizer(opt_maker: Callable[..., tuple[Callable, Callable, Callable]]) -> Callable[..., Optimizer]:
    """Turn an optimiser written for one array (``init(x) -> state``, ``update(i, g, state) -> state``,
    ``get_params(state) -> x``) into one for pytrees, as JAX's decorator does."""

    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree: Any) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            initial = [init(np.asarray(x0)) for x0 in x0_flat]
            states_flat, subtrees = zip(*(tree_flatten(s) for s in initial)) if initial else ((), ())
            return OptimizerState(list(states_flat), tree, list(subtrees))

        def tree_update(i: int, grad_tree: Any, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(f"optimizer update: the gradients' structure {tree2} differs from the parameters' "
                                f"{tree}")
            states = [tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            new = [update(i, np.asarray(g), s) for g, s in zip(grad_flat, states)]
            new_flat, subtrees2 = zip(*(tree_flatten(s) for s in new)) if new else ((), ())
            return OptimizerState(list(new_flat), tree, list(subtrees2))

        def tree_get_params(opt_state: OptimizerState) -> Any:
            states_flat, tree, subtrees = opt_state
            states = [tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size must be a number or a schedule (a function of the step), got "
                    f"{type(scalar_or_schedule).__name__}")


@optimizer
def sgd(step_size: float | Schedule) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)

    def update(i: int, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return (lambda x0: (x0, np.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)

    def update(i: int, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return (lambda x0: (x0, np.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i: int, g: Any, state: Any) -> Any:
        x, g_sq, m = state
        g_sq = g_sq + np.square(g)
        g_sq_inv_sqrt = np.where(g_sq > 0, 1.0 / np.sqrt(np.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, (lambda state: state[0])


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)

    def update(i: int, g: Any, state: Any) -> Any:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + np.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / np.sqrt(avg_sq_grad + eps), avg_sq_grad

    return (lambda x0: (x0, np.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)

    def update(i: int, g: Any, state: Any) -> Any:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + np.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / np.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return (lambda x0: (x0, np.zeros_like(x0), np.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)

    def update(i: int, g: Any, state: Any) -> Any:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * np.square(g) + b2 * v
        m_hat = m / (1 - np.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - np.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (np.sqrt(v_hat) + eps), m, v

    return (lambda x0: (x0, np.zeros_like(x0), np.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> tuple[Callable, Callable, Callable]:
    step_size = make_schedule(step_size)

    def update(i: int, g: Any, state: Any) -> Any:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = np.maximum(b2 * u, np.abs(g))
        return x - (step_size(i) / (1 - np.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps), m, u

    return (lambda x0: (x0, np.zeros_like(x0), np.zeros_like(x0))), update, (lambda state: state[0])


# -- schedules ---------------------------------------------------------------------------------------------------
def constant(step_size: float) -> Schedule:
    return lambda i: step_size


def exponential_decay(step_size: float, decay_steps: int, decay_rate: float) -> Schedule:
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: float, decay_steps: int, decay_rate: float, staircase: bool = False) -> Schedule:
    if staircase:
        return lambda i: step_size / (1 + decay_rate * np.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: float, decay_steps: int, final_step_size: float, power: float = 1.0) -> Schedule:
    def schedule(i: int) -> float:
        i = min(i, decay_steps)
        return (step_size - final_step_size) * (1 - i / decay_steps) ** power + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps in ``[boundaries[k-1], boundaries[k])`` (``len(values) == len(boundaries) + 1``)."""
    boundaries, values = np.asarray(boundaries), np.asarray(values)
    if values.shape[0] != boundaries.shape[0] + 1:
        raise ValueError("piecewise_constant: needs one more value than boundaries, got "
                         f"{values.shape[0]} values and {boundaries.shape[0]} boundaries")
    return lambda i: values[int(np.sum(i > boundaries))]


# -- utilities ---------------------------------------------------------------------------------------------------
def l2_norm(tree: Any) -> Any:
    """The l2 norm of all the leaves together."""
    return np.sqrt(sum(np.vdot(x, x) for x in tree_leaves(tree)))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """The gradients scaled so that their joint l2 norm is at most ``max_norm``."""
    norm = l2_norm(grad_tree)
    factor = np.where(norm < max_norm, 1.0, max_norm / np.where(norm < max_norm, 1.0, norm))
    return tree_map(lambda g: g * factor, grad_tree)


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as the parameters' pytree of per-leaf tuples (to save it)."""
    states_flat, tree, subtrees = opt_state
    return tree_unflatten(tree, [tree_unflatten(s, f) for s, f in zip(subtrees, states_flat)])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """Undo :func:`unpack_optimizer_state` (the per-leaf states are tuples)."""
    sentinel = object()
    leaves, tree = tree_flatten(tree_map(lambda s: sentinel, marked_pytree, is_leaf=lambda s: isinstance(s, tuple)))
    states = tree_leaves(marked_pytree, is_leaf=lambda s: isinstance(s, tuple))
    flat, subtrees = zip(*(tree_flatten(s) for s in states)) if states else ((), ())
    return OptimizerState(list(flat), tree, list(subtrees))
