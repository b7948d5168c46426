"""More of PyTorch's Tensor methods: ``sub(alpha=)``, ``eq``, ``amax``, ``mm``, ``gather``, ``topk``, ...

Each is a method of the op that computes it (``t.sub`` is ``subtract``, ``t.gather`` is
``take_along_axis``, ``t.atan2`` is ``arctan2``), recorded in that op's declaration; a method
that is no op of its own (``narrow``, ``view_as``, ``new_zeros``, in-place ``exp_``) is a
:func:`~chainrule.ops.declare.tensor_method`. Names ndarray has keep NumPy's meaning
(``t.repeat``, ``t.std()``); names only PyTorch has take PyTorch's, including the index a
``(values, indices)`` result sends the gradient to (``topk``, ``kthvalue``, ``median(dim)``,
``mode``) and a gradient shared among ties where PyTorch shares it (``amax``, ``median()``).

Example:
    >>> import chainrule as cr
    >>> t = cr.Tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> t.sub(1.0, alpha=2.0)
    Tensor([[-1.,  3.],
            [ 5.,  0.]])
    >>> t.topk(1, dim=1).indices
    Tensor([[1],
            [0]])
"""

# each module adds its methods when imported, in this order (a declaration lists its methods in that order)
from . import aliases as _aliases  # noqa: F401
from . import arithmetic as _arithmetic  # noqa: F401
from . import in_place_methods as _in_place_methods  # noqa: F401
from . import indexing as _selection  # noqa: F401
from . import renorm as _renorm  # noqa: F401
from . import scatter_reduce as _scatter_reduce  # noqa: F401
from . import scatter_views as _scatter_views  # noqa: F401
from . import shape_and_storage as _shape_and_storage  # noqa: F401


