"""PyTorch's lazy layers (``LazyLinear``, ``LazyConv1d``, ``LazyBatchNorm2d``, ...): the input size is read from
the first input, then the layer becomes the ordinary one (``LazyLinear(3)`` is a ``Linear(in, 3)`` after its
first call, as in PyTorch), and its ``UninitializedParameter`` placeholders become the real weights, the same
objects.

An optimiser needs the sizes of what it updates when it is built, so building one over a lazy layer before its
first forward raises, naming the fix (one forward pass first); PyTorch accepts it and sizes its state later. The
default initialisation draws from the default generator only when the layer is sized, as PyTorch's does.

Example:
    >>> import numpy as np
    >>> from chainrule import nn
    >>> layer = nn.LazyLinear(2)
    >>> layer.weight
    <UninitializedParameter>
    >>> layer(np.ones((4, 3), dtype=np.float32)).shape, layer
    ((4, 2), Linear(in_features=3, out_features=2, bias=True))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import defaults
from ..tensor import Tensor
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import Linear
from .module import Module
from .norm_layers import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .parameter import Parameter


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (a lazy layer's before its first input); ``materialize(shape)``
    makes it an ordinary ``Parameter`` of that shape, the same object.

    Example:
        >>> p = UninitializedParameter()
        >>> p.materialize((2, 3)); type(p).__name__, p.shape
        ('Parameter', (2, 3))
    """

    __slots__ = ()

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(np.zeros(0, dtype=dtype or defaults.get_default_dtype()), requires_grad=requires_grad)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become an ordinary ``Parameter`` of ``shape`` (zeros; a lazy layer then writes its initial values)."""
        self._data = np.zeros(tuple(shape), dtype=dtype or self._data.dtype)
        self.__class__ = Parameter  # type: ignore[assignment]  (same layout: the object stays the same)

    def __repr__(self) -> str:
        return "<UninitializedParameter>"


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (a lazy norm layer's running statistics before its first input)."""

    __slots__ = ()

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__(np.zeros(0, dtype=dtype or defaults.get_default_dtype()))

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"


class LazyModuleMixin(Module):
    """The lazy layers' base: ``cls_to_become`` built from the first input's size (``_infer``) and the arguments
    given, its weights written into the placeholders; ``has_uninitialized_params()`` says whether that happened."""

    cls_to_become: type[Module]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)  # (not the layer's own: its sizes are not known yet)
        order = ("eps", "momentum", "affine", "track_running_stats")  # (the norms' arguments, for the defaults)
        kwargs = {**{k: v for k, v in self._defaults.items() if order.index(k) >= len(args)}, **kwargs}
        object.__setattr__(self, "_lazy_arguments", (args, kwargs))
        groups = kwargs.get("groups", args[5] if len(args) > 5 and self._size_name == "in_channels" else 1)
        state = defaults.generator().bit_generator.state  # the probe's draws must not move the default generator
        try:  # what the layer registers, with which dtypes (a size the groups divide)
            probe = self.cls_to_become(int(groups), *args, **kwargs)
        finally:
            defaults.generator().bit_generator.state = state
        for name, p in probe._parameters.items():
            self.register_parameter(name, None if p is None else UninitializedParameter(p.requires_grad,
                                                                                        dtype=p.dtype))
        for name, b in probe._buffers.items():
            self.register_buffer(name, b if b is None or b.ndim == 0 else UninitializedBuffer(dtype=b.dtype),
                                 persistent=name not in probe.__dict__.get("_non_persistent", ()))
        _copy_settings(probe, self)  # out_features, eps, ...; the size 0 until the first input
        object.__setattr__(self, self._size_name, 0)

    _size_name = "in_features"
    _defaults: dict[str, Any] = {}  # keyword defaults that differ from the layer's (PyTorch's lazy instance norms)

    def _infer(self, x: Any) -> int:
        """The size the first input gives (overridden per layer)."""
        raise NotImplementedError

    def has_uninitialized_params(self) -> bool:
        """Whether the layer still waits for its first input."""
        return "_lazy_arguments" in self.__dict__

    def initialize_parameters(self, x: Any) -> None:
        """Size the layer from ``x`` and become ``cls_to_become`` (what the first forward does)."""
        args, kwargs = self.__dict__["_lazy_arguments"]
        real = self.cls_to_become(self._infer(x), *args, **kwargs)
        for name, p in real._parameters.items():
            mine = self._parameters.get(name)
            if isinstance(mine, UninitializedParameter) and p is not None:
                mine.materialize(p.shape, dtype=mine._data.dtype)  # (the placeholder's: to(float64) moved it)
                mine._data[...] = p._data
        for name, b in real._buffers.items():
            mine = self._buffers.get(name)
            if b is not None and mine is not None and b.dtype.kind == mine.dtype.kind == "f" and b.dtype != mine.dtype:
                b = Tensor._wrap(b._data.astype(mine.dtype))  # (the placeholder's dtype: to(float64) moved it)
            self._buffers[name] = b
            object.__setattr__(self, name, b)
        _copy_settings(real, self)
        self.__dict__.pop("_lazy_arguments", None)
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def forward(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        self.initialize_parameters(x)
        return self.forward(x, *args, **kwargs)


def _copy_settings(source: Module, target: Module) -> None:
    """``source``'s attributes that are neither registered (parameters, buffers, modules) nor the training flag."""
    for name, value in source.__dict__.items():
        if name not in ("_parameters", "_buffers", "_modules", "_non_persistent", "training") and not (
                name in source._parameters or name in source._buffers or name in source._modules):
            object.__setattr__(target, name, value)


def _last(self: Any, x: Any) -> int:
    return int(np.shape(x)[-1])


def _channels(self: Any, x: Any) -> int:
    """The channels: dim 1 of a batch, dim 0 of one example (``batched_ndim - 1`` dims)."""
    shape = np.shape(x)
    return int(shape[0 if len(shape) == self._batched_ndim - 1 else 1])


def _dim1(self: Any, x: Any) -> int:
    return int(np.shape(x)[1])


def _lazy(concrete: type[Module], size_name: str, infer: Any, doc: str, batched_ndim: int = 0,
          defaults: dict[str, Any] | None = None) -> type[Any]:
    namespace: dict[str, Any] = {"cls_to_become": concrete, "_size_name": size_name, "_infer": infer,
                                 "_batched_ndim": batched_ndim, "_defaults": defaults or {}, "__doc__": doc,
                                 "__module__": __name__}
    # a subclass of the layer it becomes (isinstance(LazyLinear(3), Linear), as PyTorch's), the lazy steps first
    return type(f"Lazy{concrete.__name__}", (LazyModuleMixin, concrete), namespace)


_TRACKED = {"affine": True, "track_running_stats": True}
LazyLinear = _lazy(Linear, "in_features", _last, """PyTorch's ``LazyLinear(out_features, bias=True, ...)``: a
``Linear`` whose ``in_features`` is the first input's last size.""")
LazyConv1d = _lazy(Conv1d, "in_channels", _channels, """PyTorch's ``LazyConv1d(out_channels, kernel_size, ...)``: a
``Conv1d`` whose ``in_channels`` is the first input's channels.""", 3)
LazyConv2d = _lazy(Conv2d, "in_channels", _channels, """PyTorch's ``LazyConv2d(out_channels, kernel_size, ...)``: a
``Conv2d`` whose ``in_channels`` is the first input's channels.""", 4)
LazyConvTranspose1d = _lazy(ConvTranspose1d, "in_channels", _channels, """PyTorch's ``LazyConvTranspose1d(out_channels,
kernel_size, ...)``: a ``ConvTranspose1d`` sized by the first input's channels.""", 3)
LazyConvTranspose2d = _lazy(ConvTranspose2d, "in_channels", _channels, """PyTorch's ``LazyConvTranspose2d(out_channels,
kernel_size, ...)``: a ``ConvTranspose2d`` sized by the first input's channels.""", 4)
LazyBatchNorm1d = _lazy(BatchNorm1d, "num_features", _dim1, """PyTorch's ``LazyBatchNorm1d(eps, momentum, ...)``: a
``BatchNorm1d`` whose ``num_features`` is the first input's channels.""")
LazyBatchNorm2d = _lazy(BatchNorm2d, "num_features", _dim1, """PyTorch's ``LazyBatchNorm2d(eps, momentum, ...)``: a
``BatchNorm2d`` whose ``num_features`` is the first input's channels.""")
LazyInstanceNorm1d = _lazy(InstanceNorm1d, "num_features", _channels, """PyTorch's ``LazyInstanceNorm1d(eps, momentum,
...)``: an ``InstanceNorm1d`` whose ``num_features`` is the first input's channels; ``affine`` and
``track_running_stats`` are on by default, as PyTorch's lazy one has them.""", 3, _TRACKED)
LazyInstanceNorm2d = _lazy(InstanceNorm2d, "num_features", _channels, """PyTorch's ``LazyInstanceNorm2d(eps, momentum,
...)``: an ``InstanceNorm2d`` whose ``num_features`` is the first input's channels; ``affine`` and
``track_running_stats`` on by default (PyTorch's).""", 4, _TRACKED)
LazyConv3d = _lazy(Conv3d, "in_channels", _channels, """PyTorch's ``LazyConv3d(out_channels, kernel_size, ...)``: a
``Conv3d`` whose ``in_channels`` is the first input's channels.""", 5)
LazyConvTranspose3d = _lazy(ConvTranspose3d, "in_channels", _channels, """PyTorch's ``LazyConvTranspose3d(out_channels,
kernel_size, ...)``: a ``ConvTranspose3d`` sized by the first input's channels.""", 5)
LazyBatchNorm3d = _lazy(BatchNorm3d, "num_features", _dim1, """PyTorch's ``LazyBatchNorm3d(eps, momentum, ...)``: a
``BatchNorm3d`` whose ``num_features`` is the first input's channels.""")
LazyInstanceNorm3d = _lazy(InstanceNorm3d, "num_features", _channels, """PyTorch's ``LazyInstanceNorm3d(eps, momentum,
...)``: an ``InstanceNorm3d`` whose ``num_features`` is the first input's channels; ``affine`` and
``track_running_stats`` on by default (PyTorch's).""", 5, _TRACKED)
