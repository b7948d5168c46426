"""``copy.copy``, ``copy.deepcopy`` and ``pickle`` of a Tensor, as PyTorch's: the values, the dtype, the device,
``requires_grad`` and the label travel; the graph does not (a mixin of ``Tensor``).

A deep copy of a computed Tensor is refused: its copy would carry a copy of the graph whose leaves are not the
user's, so a backward through it would fill no ``.grad`` the user holds (and a deep graph would recurse). A pickled
or shallow-copied computed Tensor is a leaf with its values, as in PyTorch.
"""

from __future__ import annotations

import copy
from typing import Any


def rebuild(cls: type, data: Any, requires_grad: bool, label: str | None, attributes: dict | None) -> Any:
    """A leaf of type ``cls`` around ``data`` (what pickling a Tensor stores and loading calls)."""
    t = object.__new__(cls)
    t._set(data, None, None)
    t._label = label
    t._requires_grad = bool(requires_grad)
    if attributes:
        t.__dict__.update(attributes)
    return t


class CopyMethods:
    """``__reduce_ex__`` (pickle, ``copy.copy``) and ``__deepcopy__`` of ``Tensor`` (it inherits them)."""

    __slots__ = ()
    _data: Any
    _grad: Any
    _label: str | None
    _requires_grad: bool
    _node: Any
    _tangents: Any

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return rebuild, (type(self), self._data, self._requires_grad, self._label, getattr(self, "__dict__", None))

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        if self._node is not None or self._tangents:
            op = f"by {self._node.prim.name}" if self._node is not None else "a dual number of jvp"
            raise RuntimeError(
                f"deepcopy: only Tensors created by the user (graph leaves) can be deep-copied, as in PyTorch; this "
                f"one was computed ({op}), and its copy would carry a copy of the graph whose leaves are not yours. "
                "Use x.detach().clone() for a copy of the values, or x.clone() for one that stays in the graph (a "
                "module that keeps a computed weight, as nn.utils.weight_norm does: "
                "nn.utils.parametrizations.weight_norm copies)"
            )
        attributes = getattr(self, "__dict__", None)
        new = rebuild(type(self), copy.deepcopy(self._data, memo), self._requires_grad, self._label,
                      copy.deepcopy(attributes, memo) if attributes else None)
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        return new
