"""A module's state: ``state_dict`` (every parameter and buffer by dotted name, sharing memory as PyTorch's)
and ``load_state_dict`` (checked whole before anything is written).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from ..core.device import as_array, is_off_host, move, of
from ..tensor import Tensor


class StateDictError(ValueError, RuntimeError):
    """A state dict does not fit a model: missing, extra or mis-shaped entries (a RuntimeError too, as PyTorch's,
    so that ``except RuntimeError:`` around ``load_state_dict`` catches it)."""


class LoadResult(NamedTuple):
    """What ``load_state_dict(..., strict=False)`` could not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def dotted(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class StateDict:
    """The state half of :class:`~chainrule.nn.Module` (a mixin: it walks ``named_modules()``, ``_parameters``
    and ``_buffers``)."""

    def _state_entries(self) -> OrderedDict[str, tuple[Any, str, str]]:
        """name -> (owning module, attribute, kind) for every parameter and buffer, shared ones under each name."""
        out: OrderedDict[str, tuple[Any, str, str]] = OrderedDict()
        for mprefix, mod in self.named_modules():
            for name, p in mod._parameters.items():
                if p is not None:
                    out[dotted(mprefix, name)] = (mod, name, "parameter")
            skip = mod.__dict__.get("_non_persistent", ())
            for name, b in mod._buffers.items():
                if b is not None and name not in skip:
                    out[dotted(mprefix, name)] = (mod, name, "buffer")
        return out

    def state_dict(self) -> OrderedDict[str, Tensor]:
        """``{dotted name: Tensor}`` for every parameter and buffer, as PyTorch's.

        Each value shares its parameter's (or buffer's) memory and is cut from the graph, so
        ``sd[k].copy_(w)`` under ``no_grad()`` loads a weight in place; take ``copy.deepcopy(sd)``
        (or save it) to keep a state that later training must not change.

        Example:
            >>> from chainrule import nn
            >>> model = nn.Linear(2, 1)
            >>> sd = model.state_dict(); list(sd)
            ['weight', 'bias']
            >>> _ = sd["bias"].fill_(0.5); model.bias
            Parameter([0.5], dtype=float32)
        """
        out: OrderedDict[str, Tensor] = OrderedDict()
        for key, (mod, name, kind) in self._state_entries().items():
            value = (mod._parameters if kind == "parameter" else mod._buffers)[name]._data
            # sharing the live array, as PyTorch's; a device's array as a host copy (a state dict loads anywhere)
            out[key] = Tensor._wrap(of(value).to_host(value) if is_off_host(value) else value)
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> LoadResult:
        """Copy arrays from ``state_dict`` into the parameters and buffers, in place.

        With ``strict=True`` (default) every name must match; any missing or extra name is an
        error that lists them. A shape mismatch is always an error naming the entry and both
        shapes. Values are cast to each parameter's dtype. Nothing is changed when an error
        is raised.
        """
        if not hasattr(state_dict, "keys"):
            raise TypeError(
                f"load_state_dict: expected a mapping of names to arrays, got {type(state_dict).__name__}"
            )
        entries = self._state_entries()
        missing = [k for k in entries if k not in state_dict]
        unexpected = [k for k in state_dict.keys() if k not in entries]
        cls = type(self).__name__
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing key(s) {missing}")
            if unexpected:
                parts.append(f"unexpected key(s) {unexpected}")
            raise StateDictError(
                f"load_state_dict for {cls}: " + " and ".join(parts)
                + "; the state dict was saved from a different model (or pass strict=False to load what matches)"
            )
        staged = []
        for key, (mod, name, kind) in entries.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            value = value._data if isinstance(value, Tensor) else as_array(value)
            target = (mod._parameters if kind == "parameter" else mod._buffers)[name]._data
            value = move(value, of(target))  # onto the module's device (a host state dict, a GPU model)
            if value.shape != target.shape:
                raise StateDictError(
                    f"load_state_dict for {cls}: {kind} '{key}' has shape {target.shape} in the model but "
                    f"shape {value.shape} in the state dict"
                )
            if value.dtype.kind not in "fiub":
                raise StateDictError(
                    f"load_state_dict for {cls}: {kind} '{key}' holds dtype {value.dtype} in the state dict, "
                    "not numbers"
                )
            staged.append((mod, name, kind, target, value))
        for mod, name, kind, target, value in staged:
            np.copyto(target, value, casting="unsafe")
            (mod._parameters if kind == "parameter" else mod._buffers)[name]._bump_version()
        return LoadResult(missing, unexpected)
