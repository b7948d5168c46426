"""``Module``: the base class of layers and models.

A module finds its parameters by itself: assigning a :class:`Parameter` or another
``Module`` to an attribute registers it (as in PyTorch). Everything that walks the tree of
modules does so with an explicit stack, never by recursion.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core import traces
from ..core.device import as_array
from ..tensor import Tensor
from . import module_hooks
from .module_placement import Placement
from .module_state import StateDict, dotted
from .parameter import Buffer, Parameter


class Module(Placement, StateDict):
    """Base class for layers and models: subclass it, assign parameters and sub-modules in
    ``__init__``, and compute the output in ``forward``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> class TwoLayer(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.hidden = nn.Linear(3, 4, rng=0)
        ...         self.out = nn.Linear(4, 1, rng=1)
        ...     def forward(self, x):
        ...         return self.out(nn.functional.relu(self.hidden(x)))
        >>> model = TwoLayer()
        >>> [name for name, _ in model.named_parameters()]
        ['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
        >>> model(np.ones((2, 3), dtype=np.float32)).shape
        (2, 1)
    """

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "training", True)

    # -- registration ----------------------------------------------------------------------
    def _registry(self, kind: str, name: str) -> dict[str, Any]:
        table = self.__dict__.get(kind)
        if table is None:
            raise AttributeError(
                f"{type(self).__name__}: cannot assign '{name}' before Module.__init__() ran; "
                f"call super().__init__() first in {type(self).__name__}.__init__"
            )
        return table

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Buffer):  # PyTorch's nn.Buffer: registered as a buffer, as a plain Tensor
            self.register_buffer(name, Tensor._wrap(value._data), persistent=value.persistent)
            return
        if isinstance(value, Parameter):
            table = self._registry("_parameters", name)
            self._forget(name, keep="_parameters")
            table[name] = value
        elif isinstance(value, Module):
            table = self._registry("_modules", name)
            self._forget(name, keep="_modules")
            table[name] = value
        elif name in d.get("_parameters", ()):
            if value is not None:
                raise TypeError(
                    f"{type(self).__name__}: cannot assign a {type(value).__name__} to parameter '{name}' "
                    "(a Parameter or None is expected); wrap it: nn.Parameter(value)"
                )
            d["_parameters"][name] = None
        elif name in d.get("_modules", ()):
            if value is not None:
                raise TypeError(
                    f"{type(self).__name__}: cannot assign a {type(value).__name__} to sub-module '{name}' "
                    "(a Module or None is expected)"
                )
            d["_modules"][name] = None
        elif name in d.get("_buffers", ()):
            d["_buffers"][name] = None if value is None else _as_buffer(value, name)
            value = d["_buffers"][name]
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._forget(name)
        object.__delattr__(self, name)

    def _forget(self, name: str, keep: str = "") -> None:
        """Unregister ``name`` (except from the ``keep`` table, where re-assignment keeps its place)."""
        for kind in ("_parameters", "_modules", "_buffers"):
            if kind != keep:
                self.__dict__.get(kind, {}).pop(name, None)
        self.__dict__.get("_non_persistent", set()).discard(name)

    def _check_new_name(self, kind: str, name: Any, table: str) -> None:
        """PyTorch's checks on a name to register: a string, not empty, without '.', and not the name of another
        attribute (a parameter cannot silently become a buffer: delete it first)."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if not name or "." in name:
            raise KeyError(f"{kind} name {name!r} must be non-empty and contain no '.'")
        if hasattr(self, name) and name not in self.__dict__.get(table, ()):
            raise KeyError(f"attribute '{name}' already exists (as PyTorch: delattr(module, '{name}') first to "
                           f"register a {kind} under its name)")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` under ``name`` (same as assigning the attribute)."""
        self._check_new_name("parameter", name, "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: '{name}' must be an nn.Parameter or None, got {type(param).__name__}")
        self._registry("_parameters", name)[name] = param
        object.__setattr__(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a sub-module under ``name`` (same as assigning the attribute)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: '{name}' must be an nn.Module or None, got {type(module).__name__}")
        self._check_new_name("module", name, "_modules")
        self._registry("_modules", name)[name] = module
        object.__setattr__(self, name, module)

    def register_buffer(self, name: str, value: Any, persistent: bool = True) -> None:
        """Register a Tensor that is not trained (e.g. running statistics); it is saved in ``state_dict``
        unless ``persistent=False`` (PyTorch's flag, for caches that a checkpoint should not hold). A Tensor is
        kept as it is; an array is wrapped in one that shares its memory."""
        self._check_new_name("buffer", name, "_buffers")
        self._forget(name)
        self._registry("_buffers", name)[name] = None if value is None else _as_buffer(value, name)
        if not persistent:
            # created on first use: modules restored by older code paths may lack the set
            self.__dict__.setdefault("_non_persistent", set()).add(name)
        object.__setattr__(self, name, self._buffers[name])

    # -- the tree ----------------------------------------------------------------------------
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module and every sub-module, parents first, each once."""
        seen: set[int] = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, mod = stack.pop()
            if id(mod) in seen:
                continue
            seen.add(id(mod))
            yield name, mod
            children = [(dotted(name, k), m) for k, m in mod._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        """This module and every sub-module."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct sub-modules, by name."""
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self) -> Iterator[Module]:
        """The direct sub-modules."""
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs; a parameter shared by two modules comes once."""
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mprefix, mod in mods:
            for name, p in mod._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield dotted(mprefix, name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (each once), in registration order; pass them to an optimiser. An iterator, as
        PyTorch's generator (``next(model.parameters())``), with a length (micrograd's ``len(model.parameters())``)."""
        return Parameters([p for _, p in self.named_parameters(recurse=recurse)])

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, Tensor)`` for every registered buffer."""
        for mprefix, mod in self.named_modules(prefix):
            for name, b in mod._buffers.items():
                if b is not None:
                    yield dotted(mprefix, name), b

    def num_parameters(self) -> int:
        """How many numbers the parameters hold in all."""
        return int(sum(p._data.size for p in self.parameters()))

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every sub-module (children before their parents), then return self."""
        for m in reversed(list(self.modules())):
            fn(m)
        return self

    # -- modes and gradients --------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout active) for this module and its sub-modules."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode (dropout off): ``train(False)``."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients (``.grad = None``, or zeros with ``set_to_none=False``)."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = Tensor._wrap(np.zeros_like(p._data))

    def requires_grad_(self, flag: bool = True) -> Module:
        """Switch gradient tracking of every parameter on or off (e.g. to freeze a model)."""
        for p in self.parameters():
            p.requires_grad = flag
        return self

    # -- calling and printing ----------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: define forward(self, ...) to compute the output")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if traces.open:  # a jit trace guards the module's mode and settings (traced again when they change)
            traces.called(self)
        if "input" in kwargs and not args:
            args, kwargs = _input_by_keyword(type(self), kwargs)
        hooks = self.__dict__.get("_call_hooks")
        if not hooks:
            return self.forward(*args, **kwargs)
        for hook, with_kwargs in list(hooks["pre"].values()):  # PyTorch's: a pre-hook may replace the inputs
            if with_kwargs:
                changed = hook(self, args, kwargs)
                if changed is not None:
                    args, kwargs = changed
                    args = args if isinstance(args, tuple) else (args,)
            else:
                changed = hook(self, args)
                if changed is not None:
                    args = changed if isinstance(changed, tuple) else (changed,)
        call = None
        if hooks["backward"] or hooks["backward_pre"]:
            call, args = module_hooks.hook_inputs(self, args, [h for h, _ in hooks["backward"].values()],
                                                  [h for h, _ in hooks["backward_pre"].values()])
        out = self.forward(*args, **kwargs)
        for hook, with_kwargs in list(hooks["post"].values()):  # and a forward hook the output
            changed = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
            if changed is not None:
                out = changed
        return out if call is None else module_hooks.hook_outputs(call, out)

    def _hook(self, kind: str, hook: Callable[..., Any], prepend: bool = False,
              with_kwargs: bool = False) -> _ModuleHookHandle:
        if not callable(hook):
            raise TypeError(f"{type(self).__name__}: a hook must be callable, got {type(hook).__name__}")
        hooks = self.__dict__.get("_call_hooks")
        if hooks is None:
            hooks = {"pre": {}, "post": {}, "backward": {}, "backward_pre": {}}
            object.__setattr__(self, "_call_hooks", hooks)
        table = hooks[kind]
        handle = _ModuleHookHandle(table)
        rest = list(table.items()) if prepend else []
        if prepend:
            table.clear()
        table[handle.id] = (hook, with_kwargs)
        table.update(rest)
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> _ModuleHookHandle:
        """``hook(module, args)`` before each call; a result (a tuple, or one value) replaces ``args``.
        ``with_kwargs=True``: ``hook(module, args, kwargs)``, a result ``(args, kwargs)``. ``prepend``: run it
        before the hooks already there. Returns a handle whose ``remove()`` takes the hook off (PyTorch's)."""
        return self._hook("pre", hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> _ModuleHookHandle:
        """``hook(module, args, output)`` after each call (``hook(module, args, kwargs, output)`` with
        ``with_kwargs=True``); a result other than None replaces the output. Returns a handle whose
        ``remove()`` takes the hook off (PyTorch's)."""
        return self._hook("post", hook, prepend, with_kwargs)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _ModuleHookHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of this module's inputs have been
        computed (PyTorch's): tuples, one entry per Tensor positional input (None where it needs no gradient) and
        per Tensor output (an output that the loss does not use gets zeros, where PyTorch gives None). A result
        other than None replaces ``grad_input``. The hook sees a fresh Tensor per call; keyword arguments are
        not hooked (as PyTorch).

        Example:
            >>> import numpy as np
            >>> from chainrule import Tensor, nn
            >>> layer = nn.Linear(2, 1, rng=0)
            >>> seen = []
            >>> handle = layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0].shape, go[0].shape)))
            >>> layer(Tensor(np.ones((3, 2), dtype=np.float32), requires_grad=True)).sum().backward()
            >>> seen
            [((3, 2), (3, 1))]
        """
        return self._hook("backward", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _ModuleHookHandle:
        """``hook(module, grad_output)`` when the gradients of this module's outputs have been computed
        (PyTorch's); a result other than None replaces ``grad_output`` (a tuple, one per Tensor output)."""
        return self._hook("backward_pre", hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> _ModuleHookHandle:
        """Not supported (PyTorch's deprecated spelling, whose gradients are those of the module's last op)."""
        raise NotImplementedError(
            f"{type(self).__name__}.register_backward_hook: PyTorch's deprecated module backward hook is not "
            "supported; use register_full_backward_hook(hook), called as hook(module, grad_input, grad_output)"
        )

    def get_submodule(self, target: str) -> Module:
        """The sub-module at the dotted path ``target`` ("" is this module), as PyTorch's."""
        mod: Module = self
        for part in filter(None, target.split(".")):
            child = mod._modules.get(part)
            if child is None:
                raise AttributeError(f"get_submodule: {type(mod).__name__} has no sub-module {part!r} (in {target!r})")
            mod = child
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (e.g. "0.weight"), as PyTorch's."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._parameters or mod._parameters[name] is None:
            raise AttributeError(f"get_parameter: {type(mod).__name__} has no parameter {name!r} (in {target!r})")
        return mod._parameters[name]

    def buffers(self) -> Iterator[Tensor]:
        """Every registered buffer (Tensors that are state but not trained, e.g. running statistics)."""
        for _, b in self.named_buffers():
            yield b

    def __deepcopy__(self, memo: dict[int, Any]) -> Module:
        """A deep copy whose random generators (dropout's masks) are new and independent of the original's (spawned
        from them: reproducible from the same seed), so that the copy does not replay the original's masks."""
        for value in self.__dict__.values():
            if isinstance(value, np.random.Generator) and id(value) not in memo:
                memo[id(value)] = value.spawn(1)[0]  # one generator shared by several modules stays shared
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            object.__setattr__(new, name, copy.deepcopy(value, memo))
        return new

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickling: a module pickled by an earlier version holds its buffers as plain arrays; they become
        Tensors here (attribute and registry the same object)."""
        self.__dict__.update(state)
        for name, b in list(state.get("_buffers", {}).items()):
            if b is not None and not isinstance(b, Tensor):
                self._buffers[name] = _as_buffer(b, name)
                object.__setattr__(self, name, self._buffers[name])

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (its settings)."""
        return ""

    def __repr__(self) -> str:
        lines: list[str] = []
        stack: list[tuple[str, Any, int]] = [("", self, 0)]
        while stack:
            label, mod, depth = stack.pop()
            pad = "  " * depth
            if mod is None:  # closing parenthesis
                lines.append(pad + ")")
                continue
            head = f"{pad}({label}): " if depth else ""
            kids = list(mod.named_children())
            if not kids:
                lines.append(f"{head}{type(mod).__name__}({mod.extra_repr()})")
                continue
            extra = mod.extra_repr()
            lines.append(f"{head}{type(mod).__name__}(" + (f"{extra}" if extra else ""))
            stack.append(("", None, depth))
            stack.extend((name, m, depth + 1) for name, m in reversed(kids))
        return "\n".join(lines)


_FIRST_NAMES: dict[type, str | None] = {}


def _input_by_keyword(cls: type, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """PyTorch's layers name their first input ``input``: ``layer(input=x)`` is ``layer(x)`` where ``forward``
    calls it something else (``x``)."""
    if cls not in _FIRST_NAMES:
        params = list(inspect.signature(cls.forward).parameters.values())[1:]
        takes = any(p.name == "input" or p.kind is p.VAR_KEYWORD for p in params)
        first = params[0] if params else None
        _FIRST_NAMES[cls] = (None if takes or first is None or first.kind not in (first.POSITIONAL_ONLY,
                                                                                  first.POSITIONAL_OR_KEYWORD)
                             else first.name)
    if _FIRST_NAMES[cls] is None:
        return (), kwargs
    rest = dict(kwargs)
    return (rest.pop("input"),), rest


def _as_buffer(value: Any, name: str) -> Tensor:
    """A buffer is a Tensor, as PyTorch's: a Tensor is kept as it is (the same object), anything else (an array,
    a list) is wrapped without a copy, so an array the caller holds stays the buffer's memory."""
    buffer = value if isinstance(value, Tensor) else Tensor._wrap(as_array(value))
    if buffer._data.dtype.kind not in "fiub":
        raise TypeError(f"register_buffer: '{name}' must hold numbers, got dtype {buffer._data.dtype}")
    return buffer


class _ModuleHookHandle:
    """What ``register_forward_hook`` returns: ``remove()`` takes the hook off."""

    _next = 0

    def __init__(self, table: dict[int, Any]) -> None:
        _ModuleHookHandle._next += 1
        self.id, self._table = _ModuleHookHandle._next, table

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self) -> _ModuleHookHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class Parameters:
    """What ``Module.parameters()`` returns: an iterator over the parameters (as PyTorch's generator) that also
    has ``len()`` (the number of parameter tensors, as micrograd's list)."""

    def __init__(self, params: list[Parameter]) -> None:
        self._params = params
        self._next = 0

    def __iter__(self) -> Parameters:
        return self

    def __next__(self) -> Parameter:
        if self._next >= len(self._params):
            raise StopIteration
        self._next += 1
        return self._params[self._next - 1]

    def __len__(self) -> int:
        return len(self._params)
