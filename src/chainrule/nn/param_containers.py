"""``ParameterList`` and ``ParameterDict``: parameters held in a list or by name, registered as PyTorch's are
(a plain Python list of parameters is not registered, in PyTorch as here)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .module import Module
from .parameter import Parameter


def _as_parameter(value: Any) -> Parameter:
    # PyTorch wraps a plain tensor or array in a Parameter; a Parameter is kept (so it can be shared)
    return value if isinstance(value, Parameter) else Parameter(getattr(value, "data", value))


class ParameterList(Module):
    """Parameters in a list, registered under '0', '1', ... (PyTorch's ``ParameterList``).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> ps = nn.ParameterList([nn.Parameter(np.ones(2)) for _ in range(3)])
        >>> ps = ps.append(np.zeros(4))
        >>> len(ps), [n for n, _ in ps.named_parameters()], ps[-1].shape
        (4, ['0', '1', '2', '3'], (4,))
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for v in values or ():  # (None: empty, as PyTorch's)
            self.append(v)

    def append(self, value: Any) -> ParameterList:
        """Add a parameter at the end (an array or Tensor becomes a Parameter)."""
        self.register_parameter(str(len(self._parameters)), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        for v in values:
            self.append(v)
        return self

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(list(self._parameters.values()))

    def __getitem__(self, index: int) -> Parameter:
        items = list(self._parameters.values())
        try:
            return items[index]
        except (IndexError, TypeError):
            raise IndexError(f"ParameterList: index {index!r} out of range for {len(items)} parameters") from None

    def __setitem__(self, index: int, value: Any) -> None:
        self[index]  # (a clear IndexError for a missing index)
        self.register_parameter(str(index % len(self)), _as_parameter(value))

    def extra_repr(self) -> str:
        return ", ".join(str(tuple(p.shape)) for p in self._parameters.values())


class ParameterDict(Module):
    """Parameters by name, registered under those names (PyTorch's ``ParameterDict``).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> pd = nn.ParameterDict({"w": np.ones((2, 2)), "b": np.zeros(2)})
        >>> list(pd), [n for n, _ in pd.named_parameters()], "w" in pd
        (['w', 'b'], ['w', 'b'], True)
    """

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()  # (``parameters``: PyTorch's name of the argument)
        if parameters is not None:
            self.update(parameters)

    def update(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        pairs = values.items() if isinstance(values, Mapping) else values
        for name, v in pairs:
            self[name] = v

    def __getitem__(self, name: str) -> Parameter:
        try:
            return self._parameters[name]
        except KeyError:
            raise KeyError(f"ParameterDict: no parameter named {name!r} (it has {list(self._parameters)})") from None

    def __setitem__(self, name: str, value: Any) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"ParameterDict: a name must be a non-empty string without '.', got {name!r}")
        self.register_parameter(name, _as_parameter(value))

    def __delitem__(self, name: str) -> None:
        self[name]  # (a clear KeyError for a missing name)
        del self._parameters[name]
        self.__dict__.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._parameters

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._parameters))

    def keys(self) -> list[str]:
        return list(self._parameters)

    def values(self) -> list[Parameter]:
        return list(self._parameters.values())

    def items(self) -> list[tuple[str, Parameter]]:
        return list(self._parameters.items())

    def extra_repr(self) -> str:
        return ", ".join(f"{k}: {tuple(p.shape)}" for k, p in self._parameters.items())
