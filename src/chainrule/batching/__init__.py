"""``vmap`` and the batching rules of every op (see ``rules`` for the kinds, ``table()`` for each op)."""

from . import lifted as _lifted  # noqa: F401  (registers vmap's versions of the transforms with them)
from . import methods as _methods  # noqa: F401  (Batched gets Tensor's operators and methods)
from . import protocol as _protocol  # noqa: F401  (registers how Batched answers NumPy's protocols)
from . import rules as _rules
from .api import vmap
from .value import Batched

table = _rules.table

__all__ = ["Batched", "table", "vmap"]
