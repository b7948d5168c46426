"""Containers: ``Sequential`` (call in order) and ``ModuleList`` (hold a list of modules)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

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

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end."""
        self.add_module(str(len(self._modules)), _check(module, type(self).__name__, len(self._modules)))
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(list(self._modules.values()))

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return type(self)(items[index])
        try:
            return items[index]
        except IndexError:
            raise IndexError(f"{type(self).__name__}: index {index} out of range for {len(items)} modules") from None


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
        if len(modules) == 1 and not isinstance(modules[0], Module) and isinstance(modules[0], Iterable):
            modules = tuple(modules[0])
        super().__init__(modules)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x
