"""PyTorch-style gradient functions on Tensors: ``chainrule.autograd.grad`` and ``backward``.

``grad(outputs, inputs, grad_outputs=None, create_graph=False)`` returns the gradients
instead of accumulating them into ``.grad`` (``torch.autograd.grad``'s semantics).

Example:
    >>> import chainrule as cr
    >>> x = cr.Tensor(3.0, requires_grad=True)
    >>> (g,) = cr.autograd.grad(x ** 3, x, create_graph=True)
    >>> float(g), float(cr.autograd.grad(g, x)[0])
    (27.0, 18.0)
"""

from __future__ import annotations

from .autodiff.backprop import backward, grad
from .transforms import autograd_functional as functional  # torch.autograd.functional: jacobian, hessian, ...

__all__ = ["backward", "grad", "functional"]
