"""chainrule: automatic differentiation for Python, from one scalar to a small language model.

Objects (``Scalar``, ``Tensor``) with ``.backward()`` and ``.grad``; NumPy-style functions
that work on Tensors (``chainrule.exp``, ``chainrule.sum``, ...); ``no_grad``.
"""

from __future__ import annotations

from .autodiff.modes import enable_grad, no_grad
from .autodiff.engine import is_grad_enabled, set_grad_enabled
from .scalar import Scalar
from .tensor import Tensor, tensor
from . import ops
from .ops import *  # noqa: F401,F403
from .autodiff.backprop import grad as autograd_grad

Value = Scalar  # micrograd's name

__version__ = "0.1.0"
