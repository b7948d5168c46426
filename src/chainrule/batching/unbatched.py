"""``UnbatchedArray``: how vmap hands over a NumPy array argument that is the same for every example.

JAX gives such an argument (``in_axes`` None) to the function as one of its own arrays, so JAX-style
code indexes it by a batched index (``table[i]``) and updates it (``x.at[i].set(v)``). A NumPy array
can do neither: its indexing reads the index with ``__index__``/``__array__`` (which a batched value
refuses) and it has no ``at``. This subclass adds just those two; everything else is NumPy's, and
results of NumPy functions on it are plain arrays again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff import batch_levels as _state
from ..ops.index_update import ArrayWithAt, IndexUpdates


class UnbatchedArray(np.ndarray):
    """A NumPy array that is the same for every example of a vmap: indexable by batched indices, with ``.at``."""

    @property
    def at(self) -> IndexUpdates:
        """JAX's functional index update: ``x.at[idx].set(v)`` returns an updated copy."""
        return IndexUpdates(self.view(np.ndarray))

    def __getitem__(self, index: Any) -> Any:
        if _state.open and _state.batched_tree(index if isinstance(index, tuple) else (index,)):
            from ..ops.shape import getitem

            return getitem(self.view(np.ndarray), index)
        return super().__getitem__(index)

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        if return_scalar:
            return array[()]
        return array.view(np.ndarray) if isinstance(array, np.ndarray) else array


def handed_over(x: Any) -> Any:
    """An argument with in_axes None, as the function sees it."""
    return x.view(UnbatchedArray) if type(x) is np.ndarray or type(x) is ArrayWithAt else x


def handed_back(x: Any) -> Any:
    """A result leaf as the caller gets it (never the subclass)."""
    return x.view(np.ndarray) if isinstance(x, UnbatchedArray) else x
