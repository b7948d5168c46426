"""Moving a Tensor between devices, differentiably: ``t.to("cuda")``, ``t.cuda()``, ``t.cpu()``, and
``t.device`` / ``t.is_cuda`` (PyTorch's spellings).

A move is an op like any other: its gradient moves back (to the device the input was on), so
``x.cuda()`` in the middle of a program is differentiated as PyTorch does. A move to the device the
Tensor is on already returns the Tensor itself.

Example:
    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> x.cpu() is x, x.device, x.is_cuda
    (True, device(type='cpu'), False)
"""

from __future__ import annotations

from typing import Any

from ..autodiff.primitive import Primitive
from ..core.device import CPU, DeviceError, backend, move, of
from ..tensor import Tensor
from .declare import tensor_method


def _move(x: Any, target: str, source: str) -> Any:
    return move(x, backend(target))


to_device = Primitive("to_device", _move, reads=())
to_device.defvjp(lambda g, ans, x, target, source: to_device(g, target=source, source=target))
to_device.defjvp(lambda t, ans, x, target, source: to_device(t, target=target, source=source))


def moved(x: Tensor, device: Any, where: str = "to") -> Tensor:
    """``x`` on ``device`` (itself when it is there already); differentiable."""
    try:
        target = backend(device)
    except DeviceError as e:
        raise DeviceError(f"{where}: {e}") from None
    source = of(x._data)
    if source is target:
        return x
    return to_device(x, target=target.name, source=source.name)


@tensor_method("cuda")
def cuda(self: Tensor, device: Any = None, non_blocking: bool = False, **kw: Any) -> Tensor:
    """PyTorch's ``cuda()``: this Tensor on the GPU (CuPy; ``cr.cuda.is_available()`` says whether there is one)."""
    return moved(self, "cuda" if device is None or isinstance(device, int) else device, "cuda()")


@tensor_method("cpu")
def cpu(self: Tensor) -> Tensor:
    """PyTorch's ``cpu()``: this Tensor on the CPU (itself when it is there); ``.cpu().numpy()`` for NumPy."""
    if of(self._data) is CPU:
        return self
    return moved(self, "cpu", "cpu()")


tensor_method("device", property(lambda self: of(self._data).device(self._data),
                                 doc="PyTorch's ``device``: where the values are (``device(type='cpu')``, ...)."))
tensor_method("is_cuda", property(lambda self: of(self._data).name == "cuda",
                                  doc="PyTorch's ``is_cuda``: True for a Tensor on the GPU."))


@tensor_method("pin_memory")
def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """PyTorch's ``pin_memory()``: a copy (differentiable, as PyTorch's) in host memory; page-locked memory speeds up
    copies to a GPU there, here a copy to the GPU goes through CuPy from any host array. A device's is refused."""
    if of(self._data) is not CPU:
        raise DeviceError(f"pin_memory(): only a Tensor on the host can be pinned, this one is on {self.device}; "
                          "call it before moving the Tensor to the device")
    return self.clone()


@tensor_method("is_pinned")
def is_pinned(self: Tensor, device: Any = None) -> bool:
    """PyTorch's ``is_pinned()``: False (chainrule keeps no page-locked memory; see :func:`pin_memory`)."""
    return False
