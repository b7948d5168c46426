"""PyTorch's optimiser hooks: functions called around ``step``, ``state_dict`` and ``load_state_dict``.

The same registration methods, arguments and return values as ``torch.optim.Optimizer``'s: a step pre-hook is
called as ``hook(optimizer, args, kwargs)`` (``args`` holds the optimiser first, as PyTorch passes them) and may
return new ``(args, kwargs)``; a step post-hook is called the same way; ``state_dict`` pre-hooks get the
optimiser, its post-hooks ``(optimizer, state_dict)`` and may return a replacement; ``load_state_dict`` pre-hooks
get ``(optimizer, state_dict)`` and may return a replacement, its post-hooks the optimiser. Each registration
returns a handle whose ``remove()`` takes the hook off. ``register_optimizer_step_pre_hook`` (and ``_post_``)
hook every optimiser's step (the global hooks run before the optimiser's own pre-hooks, after its post-hooks).

Example:
    >>> import numpy as np
    >>> from chainrule import nn, optim, tensor
    >>> w = nn.Parameter(np.ones(2))
    >>> opt = optim.SGD([w], lr=0.1)
    >>> handle = opt.register_step_post_hook(lambda o, args, kwargs: print("stepped", o.param_groups[0]["lr"]))
    >>> w.grad = tensor(np.ones(2)); opt.step()
    stepped 0.1
    >>> handle.remove(); opt.step()
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..core.hooks import RemovableHandle

__all__ = ["OptimizerHooks", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "step_hooks"]

_GLOBAL: dict[str, list[Callable[..., Any]]] = {"step_pre": [], "step_post": []}


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimiser's ``step`` (it may return new ``(args,
    kwargs)``)."""
    _GLOBAL["step_pre"].append(hook)
    return RemovableHandle(_GLOBAL["step_pre"], hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimiser's ``step``."""
    _GLOBAL["step_post"].append(hook)
    return RemovableHandle(_GLOBAL["step_post"], hook)


class OptimizerHooks:
    """The registration methods (mixed into ``Optimizer``); the hooks are kept per optimiser, by kind."""

    def __getstate__(self) -> dict[str, Any]:
        """Without the hooks (often lambdas), as PyTorch's optimisers pickle and copy."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_optimizer_hooks", "_hooks_running")}

    def _hooks(self, kind: str) -> list[Callable[..., Any]]:
        table = self.__dict__.setdefault("_optimizer_hooks", {})
        return table.setdefault(kind, [])

    def _register(self, kind: str, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(f"{type(self).__name__}.register_{kind}_hook: expected a function, got "
                            f"{type(hook).__name__}")
        hooks = self._hooks(kind)
        hooks.insert(0, hook) if prepend else hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step`` (it may return new ``(args, kwargs)``)."""
        return self._register("step_pre", hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``."""
        return self._register("step_post", hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` before ``state_dict`` builds the dict."""
        return self._register("state_dict_pre", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on the dict ``state_dict`` built; a dict it returns replaces it."""
        return self._register("state_dict_post", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` before ``load_state_dict`` reads it; a dict it returns is read
        instead."""
        return self._register("load_state_dict_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` after ``load_state_dict``."""
        return self._register("load_state_dict_post", hook, prepend)


def step_hooks(optimizer: Any) -> tuple[list[Callable[..., Any]], list[Callable[..., Any]]]:
    """The step pre-hooks and post-hooks of ``optimizer``, in calling order, the global ones included (for a
    replayed step, ``chainrule.jit_step``, which updates without calling ``step``)."""
    return ([*_GLOBAL["step_pre"], *optimizer._hooks("step_pre")],
            [*optimizer._hooks("step_post"), *_GLOBAL["step_post"]])


def _outermost(kind: str, method: Callable[..., Any], hooked: Callable[..., Any]) -> Callable[..., Any]:
    """``hooked`` for the outermost call, ``method`` for a call inside it (a subclass's ``super().step()``), so
    the hooks run once per call the user makes."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not (self.__dict__.get("_optimizer_hooks") or _GLOBAL["step_pre"] or _GLOBAL["step_post"]):
            return method(self, *args, **kwargs)  # (no hooks: the common case, one lookup)
        running = self.__dict__.setdefault("_hooks_running", set())
        if kind in running:
            return method(self, *args, **kwargs)
        running.add(kind)
        try:
            return hooked(self, *args, **kwargs)
        finally:
            running.discard(kind)

    call._with_hooks = True  # type: ignore[attr-defined]
    return call


def with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` with the step hooks around it (PyTorch's order: global pre-hooks, the optimiser's pre-hooks, the
    step, its post-hooks, the global post-hooks)."""

    def hooked(self: Any, *args: Any, **kwargs: Any) -> Any:
        args = (self, *args)
        for hook in (*_GLOBAL["step_pre"], *self._hooks("step_pre")):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{type(self).__name__}.step: a step pre-hook must return None or a tuple "
                                       f"(new_args, new_kwargs), got {result!r:.60}")
                args, kwargs = result
        out = step(*args, **kwargs)
        for hook in (*self._hooks("step_post"), *_GLOBAL["step_post"]):
            hook(self, args, kwargs)
        return out

    return _outermost("step", step, hooked)


def with_state_dict_hooks(state_dict: Callable[..., Any]) -> Callable[..., Any]:
    """``state_dict`` with its pre-hooks before and its post-hooks (which may replace the dict) after."""

    def hooked(self: Any) -> Any:
        for hook in self._hooks("state_dict_pre"):
            hook(self)
        out = state_dict(self)
        for hook in self._hooks("state_dict_post"):
            replaced = hook(self, out)
            out = out if replaced is None else replaced
        return out

    return _outermost("state_dict", state_dict, hooked)


def with_load_state_dict_hooks(load: Callable[..., Any]) -> Callable[..., Any]:
    """``load_state_dict`` with its pre-hooks (which may replace the dict) before and its post-hooks after."""

    def hooked(self: Any, state_dict: Any) -> None:
        for hook in self._hooks("load_state_dict_pre"):
            replaced = hook(self, state_dict)
            state_dict = state_dict if replaced is None else replaced
        load(self, state_dict)
        for hook in self._hooks("load_state_dict_post"):
            hook(self)

    return _outermost("load_state_dict", load, hooked)


WRAPPERS = {"step": with_step_hooks, "state_dict": with_state_dict_hooks,
            "load_state_dict": with_load_state_dict_hooks}


def hook_methods(cls: type) -> None:
    """Wrap the ``step``, ``state_dict`` and ``load_state_dict`` that ``cls`` defines itself (once)."""
    for name, wrap in WRAPPERS.items():
        method = cls.__dict__.get(name)
        if method is not None and not getattr(method, "_with_hooks", False):
            setattr(cls, name, wrap(method))
