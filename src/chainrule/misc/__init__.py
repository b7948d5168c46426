"""HIPS autograd's ``autograd.misc``: ``flatten`` (a pytree as one vector) and ``optimizers`` (``sgd``, ``rmsprop``,
``adam`` over any pytree of parameters), so ``from chainrule.misc.optimizers import adam`` runs autograd's examples.

Example:
    >>> import numpy as np
    >>> from chainrule import grad
    >>> from chainrule.misc.optimizers import adam
    >>> loss = lambda p, i: np.sum((p["w"] - 3.0) ** 2)
    >>> np.round(adam(grad(loss), {"w": np.zeros(2)}, step_size=0.1, num_iters=300)["w"], 3).tolist()
    [3.0, 3.0]
"""

from . import flatten, optimizers

__all__ = ["flatten", "optimizers"]
