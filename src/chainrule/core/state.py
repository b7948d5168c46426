"""Autodiff state, one copy per thread and per async task.

Three things decide what an operation records: whether grad mode is on, how many function
transforms (grad, jvp, jacobian, ...) are running, and which forward-mode levels are live
(and which of them are visible right now). Each is a :class:`contextvars.ContextVar`
holding an immutable value, so

- two threads never see each other's mode (a new thread starts with the defaults: grad
  mode on, no transform, no forward level), and
- two asyncio tasks each get their own copy (a task starts from a copy of its creator's).

A mutable default (a set or a list) would be shared by every thread, which is why the
forward levels are a ``frozenset`` replaced on every change, never updated in place.

Example:
    >>> from chainrule.core import state
    >>> state.is_grad_enabled()
    True
    >>> with state.no_grad():
    ...     state.is_grad_enabled()
    False
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from .device import flush_checks

_GRAD: ContextVar[bool] = ContextVar("chainrule_grad_enabled", default=True)
_DEPTH: ContextVar[int] = ContextVar("chainrule_transform_depth", default=0)
_LEVELS: ContextVar[frozenset[int]] = ContextVar("chainrule_forward_levels", default=frozenset())
_HIDDEN: ContextVar[frozenset[int]] = ContextVar("chainrule_forward_hidden", default=frozenset())

# Fast readers for the hot path (one C call each, no Python frame).
grad_enabled: Callable[[], bool] = _GRAD.get
"""True when new operations record the graph (the hot-path reader; same as is_grad_enabled)."""
forward_levels: Callable[[], frozenset[int]] = _LEVELS.get
"""The forward-mode levels opened by running ``jvp`` calls in this thread or task."""
transform_depth: Callable[[], int] = _DEPTH.get
set_grad: Callable[[bool], Any] = _GRAD.set
"""Set grad mode; returns a token for :data:`reset_grad` (the hot-path form of ``grad_mode``)."""
reset_grad: Callable[[Any], None] = _GRAD.reset
"""Restore the grad mode a :data:`set_grad` token saved."""
"""How many function transforms are running in this thread or task."""

# Forward-level ids only need to be unique, so one process-wide counter is right (its
# next() is atomic under the GIL).
_level_ids = itertools.count(1).__next__


# -- grad mode --------------------------------------------------------------------------------
def is_grad_enabled() -> bool:
    """True when new operations record the graph needed by ``backward`` (in this thread or task).

    Example:
        >>> import chainrule as cr
        >>> cr.is_grad_enabled()
        True
    """
    return _GRAD.get()


def _switch_grad(mode: bool) -> bool:
    previous = _GRAD.get()
    _GRAD.set(bool(mode))
    return previous


class set_grad_enabled:
    """Switch graph recording on or off in this thread or task, at once, as PyTorch's.

    Called as a function it switches and hands back the previous mode (``bool(...)`` of the
    result); used in a ``with`` statement, the previous mode comes back at the end of the block.

    Example:
        >>> import chainrule as cr
        >>> previous = cr.set_grad_enabled(False)
        >>> cr.is_grad_enabled(), bool(previous)
        (False, True)
        >>> _ = cr.set_grad_enabled(previous)
        >>> with cr.set_grad_enabled(False):
        ...     cr.is_grad_enabled()
        False
        >>> cr.is_grad_enabled()
        True
    """

    def __init__(self, mode: bool) -> None:
        self.previous = _switch_grad(mode)

    def __bool__(self) -> bool:
        return self.previous

    def __repr__(self) -> str:
        return f"set_grad_enabled(previous={self.previous})"

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _GRAD.set(self.previous)

    def __call__(self, func: Any) -> Any:
        """As a decorator (``@set_grad_enabled(False)``): the mode switched when it was made goes back, and
        ``func`` runs in the mode asked for each time it is called (PyTorch's)."""
        mode = _GRAD.get()
        _GRAD.set(self.previous)
        return grad_mode(mode)(func)


class no_grad(contextlib.ContextDecorator):
    """Run without recording the graph (faster; results do not require grad).

    A context manager, or a decorator with or without parentheses (``@no_grad`` or
    ``@no_grad()``). The mode belongs to the running thread (and asyncio task): other
    threads keep recording.

    Example:
        >>> from chainrule import Tensor, no_grad
        >>> w = Tensor([1.0], requires_grad=True)
        >>> with no_grad():
        ...     y = w * 2
        >>> y.requires_grad
        False
    """

    _mode = False

    def __new__(cls, func: Any = None) -> Any:
        self = super().__new__(cls)
        self._previous: list[bool] = []
        if callable(func):  # used bare, as @no_grad
            return self(func)
        return self

    def __init__(self, func: Any = None) -> None:
        pass

    def _recreate_cm(self) -> no_grad:
        # a decorated function called from two threads at once must not share one stack
        return type(self)()

    def __call__(self, func: Any) -> Any:
        if inspect.isgeneratorfunction(func):  # the mode holds while the generator's body runs, not at creation
            return _each_step_in(self._recreate_cm, func)
        return super().__call__(func)

    def __enter__(self) -> None:
        self._previous.append(_switch_grad(self._mode))

    def __exit__(self, *exc: object) -> None:
        _GRAD.set(self._previous.pop())


def _each_step_in(mode: Any, func: Any) -> Any:
    """A generator function that runs each step of ``func``'s generator inside ``mode()`` (the caller's mode
    in between: it may differ from one ``next`` to the next), as PyTorch's decorators do."""

    @functools.wraps(func)
    def steps(*args: Any, **kwargs: Any) -> Any:
        inner = func(*args, **kwargs)
        try:
            with mode():
                value = inner.send(None)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with mode():
                        inner.close()
                    raise
                except BaseException as error:  # thrown in by the caller: into the body, under the mode
                    with mode():
                        value = inner.throw(error)
                else:
                    with mode():
                        value = inner.send(sent)
        except StopIteration as stop:
            return stop.value

    return steps


class enable_grad(no_grad):
    """Record the graph even inside ``no_grad`` (in this thread or task).

    Example:
        >>> import chainrule as cr
        >>> with cr.no_grad(), cr.enable_grad():
        ...     cr.is_grad_enabled()
        True
    """

    _mode = True


_INFERENCE: ContextVar[bool] = ContextVar("chainrule_inference_mode", default=False)


def is_inference_mode_enabled() -> bool:
    """Whether ``inference_mode()`` is on in this thread or task (PyTorch's ``torch.is_inference_mode_enabled``)."""
    return _INFERENCE.get()


class inference_mode(no_grad):
    """PyTorch's ``inference_mode(mode=True)``: no graph is recorded (as ``no_grad``) and
    ``is_inference_mode_enabled()`` says so; ``inference_mode(False)`` records again (as ``enable_grad``, PyTorch's
    meaning), so ``with inference_mode(not training):`` keeps training's gradients. A decorator too, bare or called.

    Example:
        >>> import chainrule as cr
        >>> with cr.inference_mode():
        ...     with cr.inference_mode(False):
        ...         print(cr.is_grad_enabled(), cr.is_inference_mode_enabled())
        ...     print(cr.is_grad_enabled(), cr.is_inference_mode_enabled())
        True False
        False True
    """

    def __new__(cls, mode: Any = True) -> Any:
        self = object.__new__(cls)
        self._previous = []
        self._flags: list[Any] = []
        self._inference = True if callable(mode) else bool(mode)
        self._mode = not self._inference
        if callable(mode):  # used bare (@inference_mode) or given the function (inference_mode(func))
            return self(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        pass

    def _recreate_cm(self) -> inference_mode:
        return type(self)(self._inference)

    def __enter__(self) -> None:
        super().__enter__()
        self._flags.append(_INFERENCE.set(self._inference))

    def __exit__(self, *exc: object) -> None:
        _INFERENCE.reset(self._flags.pop())
        super().__exit__(*exc)


class grad_mode(no_grad):
    """Set grad mode to ``mode`` for a block (the context-manager form of ``set_grad_enabled``).

    Example:
        >>> from chainrule.core.state import grad_mode, is_grad_enabled
        >>> with grad_mode(False):
        ...     is_grad_enabled()
        False
    """

    def __new__(cls, mode: bool = True) -> Any:
        self = super().__new__(cls)
        self._mode = bool(mode)
        return self

    def __init__(self, mode: bool = True) -> None:
        pass

    def _recreate_cm(self) -> grad_mode:
        return type(self)(self._mode)


# -- function transforms ------------------------------------------------------------------------
@contextlib.contextmanager
def transform() -> Iterator[None]:
    """Run one function transform: grad mode on, and counted (inside one, results stay traced)."""
    depth_token = _DEPTH.set(_DEPTH.get() + 1)
    grad_token = _GRAD.set(True)
    try:
        yield
    finally:
        _GRAD.reset(grad_token)
        _DEPTH.reset(depth_token)
    if not _DEPTH.get():  # its results may be read as arrays, past Tensor's reads: the queued device checks now
        flush_checks()


# -- forward-mode levels ------------------------------------------------------------------------
def visible(level: int) -> bool:
    """True if forward level ``level`` is open and not hidden (see :func:`below`)."""
    return level in _LEVELS.get() and level not in _HIDDEN.get()


def any_visible(levels: Any) -> bool:
    """True if any of ``levels`` (e.g. the keys of a tangent dict) is open and visible now."""
    live = _LEVELS.get()
    if not live:
        return False
    hidden = _HIDDEN.get()
    return any(lv in live and lv not in hidden for lv in levels)


@contextlib.contextmanager
def new_level() -> Iterator[int]:
    """Open a forward-mode level (a fresh id) for the duration of one ``jvp`` call."""
    level = _level_ids()
    token = _LEVELS.set(_LEVELS.get() | {level})
    try:
        yield level
    finally:
        _LEVELS.reset(token)


@contextlib.contextmanager
def below(level: int) -> Iterator[None]:
    """Hide ``level`` and every open level above it while its tangent is computed. A level opened meanwhile (a
    ``jvp`` called inside a rule, as a custom_jvp rule may) is a new perturbation and stays visible."""
    token = _HIDDEN.set(_HIDDEN.get() | {lv for lv in _LEVELS.get() if lv >= level})
    try:
        yield
    finally:
        _HIDDEN.reset(token)


# -- one definition of "traced" -----------------------------------------------------------------
def is_traced(node: Any) -> bool:
    """True if ``node`` (anything with ``_requires_grad`` and ``_tangents``, e.g. a Tensor) is being differentiated.

    That is: it requires grad and grad mode is on, or it carries a tangent of a visible
    forward level. A traced value turned into a plain number or array would lose its derivative.
    """
    if node._requires_grad and _GRAD.get():
        return True
    tangents = node._tangents
    return bool(tangents) and any_visible(tangents)
