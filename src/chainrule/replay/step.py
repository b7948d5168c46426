"""``jit_step``: a whole training step (loss, backward, optimiser update) traced once and replayed flat.

``jit`` replays a loss function but still hands its gradients to the engine: one Tensor, one
graph node, a reverse sweep, ``.grad`` Tensors, then the optimiser reads them back. For a small
model that bookkeeping costs as much as the arithmetic. ``jit_step(loss_fn, optimizer)`` is the
eager step ``optimizer.zero_grad(); loss_fn(*args).backward(); optimizer.step()``, with the loss
traced by :func:`~chainrule.replay.jit` on the first call; later calls run the traced forward, the
traced backward, and the optimiser's own update on the gradient arrays, with no graph at all. The
parameters, the loss and the optimiser's state are bit-for-bit those of the eager step.

The checks and limits of ``jit`` apply (a call must match the trace's shapes, dtypes and the values
read into Python; :class:`JitError` otherwise). Besides: gradients may flow only into parameters of
the optimiser (an argument or another tensor that requires grad raises, naming it); hooks registered
on parameters run as in eager; after a replayed step every parameter's ``.grad`` is None (the
gradients go straight into the update, as if ``zero_grad`` followed the step).

Example:
    >>> import numpy as np
    >>> from chainrule import jit_step, nn, optim
    >>> model = nn.Linear(3, 1, dtype=np.float64, rng=0)
    >>> opt = optim.SGD(model.parameters(), lr=0.1)
    >>> step = jit_step(lambda x, y: nn.functional.mse_loss(model(x), y), opt)
    >>> x, y = np.ones((4, 3)), np.zeros((4, 1))
    >>> first = float(step(x, y))    # eager, traced
    >>> second = float(step(x, y))   # replayed: no graph, same arithmetic as eager
    >>> second < first, model.weight.grad is None
    (True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.device import as_array
from ..core.hooks import LEAF_HOOKS, run_leaf_hooks
from ..core.state import forward_levels
from ..tensor import Tensor
from .jitted import Jitted, OtherArguments, ReadChanged, _describe, under_vmap
from .tape import JitError

__all__ = ["jit_step", "JittedStep"]


class JittedStep:
    """A training step traced on its first call and replayed on later ones (see :func:`jit_step`).

    ``loss`` is the :class:`Jitted` loss function it traces; ``optimizer`` the optimiser it steps.
    """

    def __init__(self, loss_fn: Callable[..., Any], optimizer: Any) -> None:
        from ..optim.hooks import step_hooks  # (optim is heavier than jit: imported when a step is made)
        from ..optim.optimizers import Optimizer

        fn = loss_fn.fn if isinstance(loss_fn, Jitted) else loss_fn
        self.loss = Jitted(fn, arrays_in_arrays_out=False)  # a trace of its own
        self.name = self.loss.name
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"jit_step({self.name}): expected a chainrule optimiser (optim.SGD, optim.Adam, ...), "
                            f"got {type(optimizer).__name__}")
        if type(optimizer).step is not Optimizer.step:
            raise JitError(f"jit_step({self.name}): {type(optimizer).__name__} overrides step(); a replay runs "
                           "Optimizer.step's updates only. Use the eager step (zero_grad, backward, step)")
        self.optimizer = optimizer
        self._step_hooks = step_hooks
        self._targets: list[Tensor] = []  # the tensor each gradient of the replayed backward belongs to
        self._plan: list[list[tuple[int, Any, Any, int | None]]] = []
        self._planned_for: Any = None  # the optimiser's member lists the plan was made from
        self._by_arguments: dict[tuple, JittedStep] = {}  # the steps traced for other shapes, dtypes or values

    @property
    def source(self) -> str:
        """The generated Python of the loss's replay, forward and backward (after the first call)."""
        return self.loss.source

    def __call__(self, *args: Any) -> Tensor:
        opt = self.optimizer
        if self.loss._program is None or self.loss.expired():  # first call, or a guarded value changed
            return self._trace(args)
        if forward_levels() or under_vmap(args):
            raise JitError(f"jit_step({self.name}): a training step cannot run inside jvp or vmap")
        try:
            values, _ = self.loss._run_forward(args)
        except ReadChanged:  # a value the loss read into Python reads otherwise now: an eager step, traced again
            self.loss._program = None
            self.loss.traces_again += 1
            return self._trace(args)
        except OtherArguments as e:  # other shapes (a last, smaller batch): a step traced for them, as jit does
            return self._other_arguments(args, e)
        program = self.loss._program
        loss = values[program.out_positions[0]]
        host_scalar = loss.__class__ is np.ndarray and loss.shape == ()
        grads = program.backward(np.array(1, dtype=loss.dtype) if host_scalar else np.ones_like(loss), values)
        if LEAF_HOOKS:  # hooks on parameters see (and may replace) their gradients, as in eager
            grads = tuple(self._hooked(t, g) for t, g in zip(self._targets, grads, strict=True))
        for g in grads:
            if g.base is not None:  # a view (e.g. a transposed product): eager's .grad holds a copy
                grads = tuple(g if g.base is None else g.copy() for g in grads)
                break
        if opt._members is not self._planned_for:  # a parameter group was added since
            self._make_plan()
        opt.zero_grad()
        pre, post = self._step_hooks(opt)  # (PyTorch's step hooks run around the replayed update as around step())
        for hook in pre:
            if hook(opt, (opt,), {}) is not None:
                raise JitError(f"jit_step({self.name}): a step pre-hook of the optimiser returned new arguments; "
                               "a replayed step takes none. Use the eager step (zero_grad, backward, step)")
        opt._apply(self._plan, grads)
        for hook in post:
            hook(opt, (opt,), {})
        return Tensor._wrap(loss)

    def _other_arguments(self, args: tuple, error: JitError) -> Tensor:
        try:
            key = tuple(_describe(a) for a in args)
            hash(key)
        except TypeError:  # (an unhashable plain argument: no step can be looked up for it)
            raise JitError(str(error)) from None
        step = self._by_arguments.get(key)
        if step is None:
            step = self._by_arguments[key] = JittedStep(self.loss.fn, self.optimizer)
        return step(*args)

    def _hooked(self, t: Tensor, g: np.ndarray) -> np.ndarray:
        """``g`` through ``t``'s hooks, then as the optimiser's step would take it from ``.grad``."""
        out = run_leaf_hooks(t, g)
        out = out._data if isinstance(out, Tensor) else as_array(out)
        if out.shape != t._data.shape:
            raise ValueError(f"{type(self.optimizer).__name__}: a hook made the gradient of a parameter of shape "
                             f"{t._data.shape} an array of shape {out.shape}")
        return out if out.dtype == t._data.dtype else out.astype(t._data.dtype)

    def _trace(self, args: tuple) -> Tensor:
        opt = self.optimizer
        for a in args:
            if isinstance(a, Tensor) and a._requires_grad:
                raise JitError(f"jit_step({self.name}): an argument requires grad; a training step updates the "
                               "optimiser's parameters only: read them from outside the loss function and pass "
                               "arguments without requires_grad")
        opt.zero_grad()
        loss = self.loss(*args)
        if self.loss._eager:  # the loss cannot be replayed (its jit said why): an eager step, now and later
            loss.backward()
            opt.step()
            return Tensor._wrap(loss._data)
        try:  # checked before anything is updated; a refused trace is forgotten (the next call traces again)
            if not isinstance(loss, Tensor) or self.loss._grad_out is None:
                raise JitError(f"jit_step({self.name}): the loss function must return one Tensor that requires "
                               f"grad (the loss), got {type(loss).__name__}")
            tensors = [t for t, *_ in self.loss._captured]  # no argument requires grad: externals are all captured
            n_args = len([s for s in self.loss._inputs if s is not None])
            self._targets = [tensors[i - n_args] for i in self.loss._parents]
            held = {id(p) for members in opt._members for _, p, _, _ in members}
            for t in self._targets:
                if id(t) not in held:
                    raise JitError(f"jit_step({self.name}): the loss gives a gradient to a tensor of shape {t.shape} "
                                   "that the optimiser does not hold; add it to the optimiser or make it not require "
                                   "grad (e.g. .detach() it outside the loss function)")
        except JitError:
            self.loss = Jitted(self.loss.fn, arrays_in_arrays_out=False)
            raise
        loss.backward()
        opt.step()
        self._make_plan()
        return Tensor._wrap(loss._data)

    def _make_plan(self) -> None:
        opt = self.optimizer
        position = {id(t): k for k, t in enumerate(self._targets)}
        self._plan = [[(i, p, commit, position.get(id(p))) for i, p, commit, _ in members]
                      for members in opt._members]
        self._planned_for = opt._members


def jit_step(loss_fn: Callable[..., Any], optimizer: Any) -> JittedStep:
    """A training step: ``optimizer.zero_grad(); loss_fn(*args).backward(); optimizer.step()``, traced on the
    first call and replayed flat on later ones; each call returns the loss (a Tensor without graph).

    ``loss_fn`` reads the parameters from outside (a model's) and returns the loss; the optimiser holds
    every tensor that gets a gradient. As for :func:`jit`, arguments of other shapes, dtypes or plain values (a
    last, smaller batch) get a step traced for them. Results are bit-for-bit the eager step's; ``.grad`` is None
    after a replayed step.

    Example:
        >>> import numpy as np
        >>> import chainrule as cr
        >>> w = cr.Tensor([1.0, -2.0], requires_grad=True)
        >>> step = cr.jit_step(lambda x: ((w * x) ** 2).sum(), cr.optim.SGD([w], lr=0.1))
        >>> x = np.array([1.0, 0.5])
        >>> [round(float(step(x)), 4) for _ in range(3)]
        [2.0, 1.5425, 1.2241]
        >>> round(float(step(np.ones((3, 2)))), 4)  # another shape: a step traced for it
        9.6075
    """
    if not callable(loss_fn):
        raise TypeError(f"jit_step: expected a loss function, got {type(loss_fn).__name__}")
    return JittedStep(loss_fn, optimizer)
