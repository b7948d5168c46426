"""PyTorch's in-place random fills ``Tensor.uniform_`` and ``Tensor.normal_`` (as ``nn.init`` uses them).

They draw from the generator of ``chainrule.nn.init.manual_seed`` (or ``generator=``), so they live
above the ops layer; the in-place rules are those of the other in-place methods (refused on a leaf
that requires grad outside ``no_grad``).

Example:
    >>> import chainrule as cr
    >>> w = cr.Tensor([0.0, 0.0, 0.0], requires_grad=True)
    >>> with cr.no_grad():
    ...     _ = w.uniform_(2.0, 2.5)
    >>> bool(((w >= 2.0) & (w < 2.5)).all())
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ops.declare import tensor_method
from .ops.torch_extras import in_place
from .tensor import Tensor


def _generator(generator: Any) -> np.random.Generator:
    from .nn.init import generator as init_generator  # on first use: keeps `import chainrule` light

    return init_generator(generator)


@tensor_method("uniform_")
def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """In place: values drawn uniformly from [a, b) (``nn.init.manual_seed``'s generator, or ``generator``)."""
    return in_place("uniform_", lambda d: _generator(generator).uniform(a, b, d.shape))(self)


@tensor_method("normal_")
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """In place: values drawn from a normal distribution (``nn.init.manual_seed``'s generator, or ``generator``)."""
    return in_place("normal_", lambda d: _generator(generator).normal(mean, std, d.shape))(self)
