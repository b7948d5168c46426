"""Containers: ``Sequential`` (call in order), ``ModuleList`` (hold a list of modules) and ``ModuleDict``
(modules by name)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from .module import Module


def _check(m: Any, where: str, i: int) -> Module:
    if not isinstance(m, Module):
        raise TypeError(f"{where}: item {i} is a {type(m).__name__}, not an nn.Module")
    return m


class ModuleList(Module):
    """A list of modules whose parameters are registered (named '0', '1', ...).

    Example:
        >>> from chainrule import nn
        >>> blocks = nn.ModuleList([nn.Linear(2, 2, rng=i) for i in range(3)])
        >>> len(blocks), len(list(blocks.parameters()))
        (3, 6)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        for m in modules or ():  # (None: empty, as PyTorch's)
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end."""
        self.add_module(str(len(self._modules)), _check(module, type(self).__name__, len(self._modules)))
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> ModuleList:
        """Put a module before position ``index`` (as ``list.insert``); the modules after it are renumbered."""
        items = list(self._modules.values())
        items.insert(int(index), _check(module, type(self).__name__, int(index)))
        self._renumber(items)
        return self

    def pop(self, index: int = -1) -> Module:
        """Remove and return the module at ``index`` (the last by default); the rest are renumbered."""
        module = self[index]
        del self[index]
        return module

    def _renumber(self, items: list[Module]) -> None:
        """Hold exactly ``items``, named '0', '1', ... (PyTorch renumbers after an insertion or deletion)."""
        for name in list(self._modules):
            del self._modules[name]
            self.__dict__.pop(name, None)
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def _position(self, index: int) -> int:
        n = len(self._modules)
        if not isinstance(index, (int, np.integer)) or not -n <= index < n:
            raise IndexError(f"{type(self).__name__}: index {index!r} out of range for {n} modules")
        return int(index) % n

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(list(self._modules.values()))

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return type(self)(items[index])
        return items[self._position(index)]

    def __setitem__(self, index: int, module: Module) -> None:
        """Replace the module at ``index`` (its name, and so the state dict's keys, stay)."""
        name = list(self._modules)[self._position(index)]
        self.add_module(name, _check(module, type(self).__name__, int(index)))

    def __delitem__(self, index: int | slice) -> None:
        items = list(self._modules.values())
        if isinstance(index, slice):
            del items[index]
        else:
            del items[self._position(index)]
        self._renumber(items)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return type(self)([*self, *other])


class Sequential(ModuleList):
    """Modules called one after another: ``Sequential(a, b, c)(x) == c(b(a(x)))``.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> net = nn.Sequential(nn.Linear(2, 8, rng=0), nn.ReLU(), nn.Linear(8, 1, rng=1))
        >>> net(np.zeros((5, 2), dtype=np.float32)).shape
        (5, 1)
        >>> list(net.state_dict())
        ['0.weight', '0.bias', '2.weight', '2.bias']
    """

    def __init__(self, *modules: Module) -> None:
        if len(modules) == 1 and isinstance(modules[0], Mapping):  # PyTorch's Sequential(OrderedDict(name=m))
            super().__init__()
            for name, m in modules[0].items():
                self.add_module(str(name), _check(m, "Sequential", len(self._modules)))
            return
        if len(modules) == 1 and not isinstance(modules[0], Module) and isinstance(modules[0], Iterable):
            modules = tuple(modules[0])
        super().__init__(modules)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):  # PyTorch's: a slice keeps the modules' names
            return type(self)(dict(list(self._modules.items())[index]))
        return super().__getitem__(index)

    def __add__(self, other: Iterable[Module]) -> Sequential:
        return type(self)(*self, *other)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleDict(Module):
    """Modules held by name, their parameters registered under those names (PyTorch's ``ModuleDict``).

    Example:
        >>> from chainrule import nn
        >>> heads = nn.ModuleDict({"a": nn.Linear(2, 1, rng=0), "b": nn.Linear(2, 3, rng=1)})
        >>> list(heads), heads["b"].out_features, [n for n, _ in heads.named_parameters()][:2]
        (['a', 'b'], 3, ['a.weight', 'a.bias'])
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for i, (name, m) in enumerate(pairs):
            self.add_module(str(name), _check(m, "ModuleDict", i))

    def __getitem__(self, name: str) -> Module:
        try:
            return self._modules[name]
        except KeyError:
            raise KeyError(f"ModuleDict: no module named {name!r} (it has {list(self._modules)})") from None

    def __setitem__(self, name: str, module: Module) -> None:
        self.add_module(str(name), _check(module, "ModuleDict", len(self._modules)))

    def __delitem__(self, name: str) -> None:
        self[name]  # (a clear KeyError for a missing name)
        del self._modules[name]
        self.__dict__.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._modules))

    def keys(self) -> list[str]:
        return list(self._modules)

    def values(self) -> list[Module]:
        return list(self._modules.values())

    def items(self) -> list[tuple[str, Module]]:
        return list(self._modules.items())

    def clear(self) -> None:
        for name in list(self._modules):
            del self[name]

    def pop(self, name: str) -> Module:
        module = self[name]
        del self[name]
        return module
