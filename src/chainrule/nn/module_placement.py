"""Where a module's values live and in which dtype: ``Module.to``, ``cpu``, ``cuda``, ``float``, ``double``,
and ``place`` (PyTorch's layer argument ``device=``).

Moving converts every parameter (and its gradient) and buffer in place: the Parameter objects stay the same,
so an optimiser made earlier still holds them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.device import Device, backend, check_cpu, move, of, registered
from ..tensor import Tensor
from .parameter import resolve_dtype


def packed(values: list[Any], target: Any) -> list[Any]:
    """``values`` moved to the device ``target`` as views of one array per dtype, filled by one copy: the
    arrays with two axes or more first, then the others, each in the order given. An optimiser's group of
    weight matrices, or of biases and norm weights, is then one or two stretches of memory, updated there with
    no copy back per parameter (:mod:`chainrule.optim.flat`: on a GPU each copy is a kernel launch)."""
    out: list[Any] = [None] * len(values)
    by_dtype: dict[Any, list[int]] = {}
    for i, v in enumerate(values):
        by_dtype.setdefault(np.dtype(v.dtype), []).append(i)
    for members in by_dtype.values():
        order = [i for i in members if values[i].ndim >= 2] + [i for i in members if values[i].ndim < 2]
        hosts = [of(values[i]).to_host(values[i]) for i in order]
        whole = target.from_host(np.concatenate([h.reshape(-1) for h in hosts]))
        start = 0
        for i, h in zip(order, hosts, strict=True):
            out[i] = whole[start:start + h.size].reshape(h.shape)
            start += h.size
    return out


def place(module: Any, device: Any) -> None:
    """PyTorch's layer argument ``device=``, called at the end of a layer's ``__init__``: the layer was built on
    the host (its draws are the same on every device for one seed) and moves to ``device`` as ``module.to(device)``
    moves it. None leaves it where it is; a device not available raises, naming the layer."""
    if device is not None:
        check_cpu(type(module).__name__, device)
        module._move_to(backend(device))


class Placement:
    """The moving and converting half of :class:`~chainrule.nn.Module` (a mixin: it walks ``parameters()``,
    ``modules()`` and ``_buffers``)."""

    def to(self, *args: Any, dtype: Any = None, device: Any = None) -> Any:
        """Move every parameter and buffer to ``device`` and/or convert the floating ones to ``dtype``, in place
        (the Parameter objects stay the same, so an optimiser made earlier still holds them).

        PyTorch's forms are accepted: ``to("cuda")``, ``to("cpu", np.float64)``, ``to(dtype=...)``.

        Example:
            >>> import numpy as np
            >>> from chainrule import nn
            >>> layer = nn.Linear(2, 1).to("cpu").to(np.float64)
            >>> layer.weight.dtype
            dtype('float64')
        """
        where = f"{type(self).__name__}.to"
        for a in args:
            if _is_device(a):
                device = a
            elif dtype is None:
                dtype = a
            else:
                raise TypeError(f"{where}: expected a device and/or a dtype, got {args!r}")
        check_cpu(where, device)
        if device is not None:
            self._move_to(backend(device))
        if dtype is None:
            return self
        dt = resolve_dtype(_dtype_name(dtype), where)
        for p in self.parameters():
            if p._data.dtype != dt:
                p._data = p._data.astype(dt)
                if p.grad is not None:
                    p.grad = Tensor._wrap(p.grad._data.astype(dt))
                p._bump_version()
        for m in self.modules():
            if isinstance(m.__dict__.get("_dtype"), np.dtype):  # a layer without parameters (LayerNorm(..., False))
                m._dtype = dt  # takes its inputs in the dtype kept here
            for name, b in list(m._buffers.items()):
                if b is not None and b._data.dtype.kind == "f" and b._data.dtype != dt:
                    m._buffers[name] = Tensor._wrap(b._data.astype(dt))  # a new buffer, as PyTorch's
                    object.__setattr__(m, name, m._buffers[name])
        return self

    def _move_to(self, target: Any) -> None:
        """Every parameter (and its grad) and buffer on the device ``target``, in place; off the host the
        parameters of one dtype are packed into one array (see :func:`packed`)."""
        moving = [p for p in self.parameters() if of(p._data) is not target]
        arrays = packed([p._data for p in moving], target) if target.xp is not np else None
        for i, p in enumerate(moving):
            p.data = arrays[i] if arrays is not None else move(p._data, target)
            if p.grad is not None:
                p.grad = Tensor._wrap(move(p.grad._data, target))
            p._bump_version()
        for m in self.modules():
            for name, b in list(m._buffers.items()):
                if b is not None and of(b._data) is not target:
                    m._buffers[name] = Tensor._wrap(move(b._data, target))  # a new buffer, as PyTorch's
                    object.__setattr__(m, name, m._buffers[name])

    def cpu(self) -> Any:
        """PyTorch's ``cpu()``: every parameter and buffer moved to the CPU, in place."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Any:
        """PyTorch's ``cuda()``: every parameter and buffer moved to the GPU (CuPy), in place."""
        return self.to("cuda" if device is None or isinstance(device, int) else device)

    def float(self) -> Any:
        """Parameters in float32."""
        return self.to(np.float32)

    def double(self) -> Any:
        """Parameters in float64."""
        return self.to(np.float64)

    def bfloat16(self) -> Any:
        """PyTorch's ``bfloat16()``: refused with a TypeError saying what to use (NumPy has no bfloat16 type)."""
        from ..core.absent_dtype import bfloat16

        return self.to(bfloat16)


_DEVICES = ("cpu", "cuda", "mps", "xpu", "meta")
_DTYPE_NAMES = {"float": "float32", "double": "float64", "half": "float16"}


def _is_device(a: Any) -> bool:
    return (isinstance(a, str) and a.split(":")[0] in (*_DEVICES, *registered()) or type(a).__name__ == "device"
            or isinstance(a, Device))


def _dtype_name(dtype: Any) -> Any:
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.")
        return _DTYPE_NAMES.get(name, name)
    return dtype
