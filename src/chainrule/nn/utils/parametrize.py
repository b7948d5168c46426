"""``chainrule.nn.utils.parametrize``: PyTorch's parametrizations, a tensor of a module computed from others.

``register_parametrization(module, "weight", P)`` moves the parameter to ``module.parametrizations.weight.original``
and makes ``module.weight`` a property that returns ``P(original)`` (computed in the graph at each access, so the
gradient reaches ``original``). As PyTorch's, the module's class is swapped for a subclass that holds the
property, and the state dict reads ``parametrizations.weight.original`` (``original0``, ``original1``, ... when
``P.right_inverse`` returns a tuple).

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> from chainrule.nn.utils import parametrize
    >>> class Symmetric(nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).T
    >>> layer = nn.Linear(3, 3, rng=0)
    >>> _ = parametrize.register_parametrization(layer, "weight", Symmetric())
    >>> w = layer.weight.numpy(); bool(np.allclose(w, w.T)), list(layer.state_dict())
    (True, ['bias', 'parametrizations.weight.original'])
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...core.state import no_grad
from ...tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_depth = 0
_cache: dict[tuple[int, str], Any] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Within this context each parametrized tensor is computed once, at its first access, and reused (PyTorch's
    ``parametrize.cached()``: for a weight used many times in one forward, e.g. an RNN's).

    Example:
        >>> from chainrule import nn
        >>> from chainrule.nn.utils import parametrizations, parametrize
        >>> layer = parametrizations.weight_norm(nn.Linear(2, 2, rng=0))
        >>> with parametrize.cached():
        ...     layer.weight is layer.weight
        True
    """
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _tensor(x: Any) -> Any:
    return x if isinstance(x, Tensor) or x is None else Tensor._wrap(x)


def _raw(x: Any, where: str) -> np.ndarray:
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, np.ndarray):
        return x
    raise ValueError(f"{where}: expected a Tensor, got {type(x).__name__}")


def _set(original: Any, value: Any, where: str) -> None:
    """Give ``original`` (a Parameter or a buffer array) the values of ``value``, keeping its identity (PyTorch's
    ``set_``: the optimiser holding the parameter keeps training it)."""
    new = _raw(value, where)
    if isinstance(original, Tensor):
        if new.shape == original._data.shape:
            np.copyto(original._data, new, casting="unsafe")
        else:
            original._data = np.array(new, dtype=original._data.dtype)
        original._bump_version()
    elif new.shape == original.shape:
        np.copyto(original, new, casting="unsafe")
    else:
        raise ValueError(f"{where}: a buffer of shape {original.shape} cannot take shape {new.shape}")


def _register(module: Module, name: str, value: Any) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)  # (a Tensor kept as it is, an array wrapped)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s) they start from (held as
    ``original`` or ``original0``, ``original1``, ...): ``module.parametrizations[name]``."""

    def __init__(self, modules: list[Module], original: Any, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        new = _tensor(original)
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:  # (PyTorch's: the original kept, e.g. orthogonal's maps)
                        pass
        self.is_tensor = isinstance(new, (Tensor, np.ndarray))
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (new.shape != shape or new.dtype != dtype):
                raise ValueError(
                    f"register_parametrization: right_inverse changed the tensor from shape {shape} dtype {dtype} to "
                    f"shape {new.shape} dtype {new.dtype}; pass unsafe=True to allow it")
            _set(original, new, "register_parametrization")
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                arr = np.array(_raw(part, "register_parametrization (right_inverse's item)"))
                if isinstance(original, Parameter):
                    _register(self, f"original{i}", Parameter(arr, requires_grad=original.requires_grad))
                else:
                    self.register_buffer(f"original{i}", arr)
        if not unsafe:
            z = self()
            if not isinstance(z, Tensor) or z.shape != shape or z.dtype != dtype:
                raise ValueError(
                    "register_parametrization: the parametrization must return a tensor of the original's shape "
                    f"{shape} and dtype {dtype}, got {getattr(z, 'shape', type(z).__name__)} "
                    f"{getattr(z, 'dtype', '')}; pass unsafe=True to allow it")

    def right_inverse(self, value: Any) -> None:
        """Set the original tensor(s) so that the parametrized tensor is ``value`` (each parametrization's
        ``right_inverse``, last first): what ``module.weight = value`` does."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse, so the "
                                       "parametrized tensor cannot be assigned; define right_inverse(self, value)")
                value = m.right_inverse(value)
            if self.is_tensor:
                _set(self.original, value, "ParametrizationList.right_inverse")
            else:
                if len(value) != self.ntensors:
                    raise ValueError(f"right_inverse returned {len(value)} tensors, expected {self.ntensors}")
                for i, part in enumerate(value):
                    _set(getattr(self, f"original{i}"), part, "ParametrizationList.right_inverse")

    def forward(self) -> Any:
        mods = list(self)
        if self.is_tensor:
            x = mods[0](_tensor(self.original))
        else:
            x = mods[0](*(_tensor(getattr(self, f"original{i}")) for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x


def _property(name: str) -> property:
    def get(self: Module) -> Any:
        plist = self.parametrizations[name]
        if not _cache_depth:
            return plist()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = plist()
        return _cache[key]

    def put(self: Module, value: Any) -> None:
        self.parametrizations[name].right_inverse(value)

    return property(get, put, doc=f"'{name}', computed by module.parametrizations.{name}")


def _setattr(self: Module, name: str, value: Any) -> None:
    """Assigning a parametrized tensor (even a Parameter) sets its originals through ``right_inverse``."""
    if isinstance(getattr(type(self), name, None), property) and is_parametrized(self, name):
        self.parametrizations[name].right_inverse(value)
    else:
        Module.__setattr__(self, name, value)


def _getstate(self: Module) -> Any:
    raise RuntimeError("a parametrized module is saved through state_dict(), not pickled (as in PyTorch)")


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given)."""
    plists = module.__dict__.get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module: Module) -> type:
    """The module's class before ``register_parametrization`` swapped it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` equal ``parametrization(original)``, ``original`` being the former parameter or
    buffer (moved to ``module.parametrizations[tensor_name].original``). A second call on the same name chains
    another parametrization after the first. If ``parametrization`` has ``right_inverse(value)``, the original is
    initialised to ``right_inverse(weight)`` and ``module.<tensor_name> = value`` works; a ``right_inverse`` returning
    a tuple stores ``original0``, ``original1``, ... and ``forward`` receives them all. ``unsafe=True`` skips the
    checks that the shape and dtype are kept. Returns ``module``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> from chainrule.nn.utils import parametrize
        >>> class Double(nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        ...     def right_inverse(self, y):
        ...         return y / 2
        >>> layer = nn.Linear(2, 1, rng=0)
        >>> _ = parametrize.register_parametrization(layer, "bias", Double())
        >>> layer.bias = np.array([3.0], dtype=np.float32)
        >>> layer.bias.numpy(), layer.parametrizations.bias.original.item()
        (array([3.], dtype=float32), 1.5)
    """
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: the parametrization must be an nn.Module, got "
                        f"{type(parametrization).__name__}; wrap the function in a Module's forward")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor) or x.shape != y.shape or x.dtype != y.dtype:
                raise ValueError(f"register_parametrization: the new parametrization must keep the shape {y.shape} "
                                 f"and dtype {y.dtype} of '{tensor_name}'; pass unsafe=True to allow a change")
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"register_parametrization: '{tensor_name}' is None; there is nothing to parametrize")
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            cls = type(module)
            module.__class__ = type(f"Parametrized{cls.__name__}", (cls,),
                                    {"__setattr__": _setattr, "__getstate__": _getstate})
            module.parametrizations = ModuleDict()
        setattr(type(module), tensor_name, _property(tensor_name))
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"register_parametrization: module {type(module).__name__} has no parameter, buffer or "
                         f"parametrized tensor named '{tensor_name}'")
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization`` on ``tensor_name``: it becomes a parameter (or buffer) again, holding the
    parametrized value (``leave_parametrized=True``, the same Parameter object as the original when it is one
    tensor, so an optimiser keeps it) or the original's value (``leave_parametrized=False``).

    Example:
        >>> from chainrule import nn
        >>> from chainrule.nn.utils import parametrizations, parametrize
        >>> layer = parametrizations.weight_norm(nn.Linear(2, 2, rng=0))
        >>> _ = parametrize.remove_parametrizations(layer, "weight")
        >>> type(layer).__name__, list(layer.state_dict())
        ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"remove_parametrizations: module {type(module).__name__} has no parametrization on "
                         f"'{tensor_name}'")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            _set(original, t, "remove_parametrizations")
    else:
        if not leave_parametrized:
            raise ValueError("remove_parametrizations: cannot leave_parametrized=False a tensor parametrized by "
                             f"{plist.ntensors} tensors (there is no single original to restore)")
        t = getattr(module, tensor_name)
        original = Parameter(t._data.copy(), requires_grad=t.requires_grad) if t.requires_grad else t._data.copy()
    delattr(type(module), tensor_name)
    delattr(module.parametrizations, tensor_name)
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
