"""The process-wide defaults: the floating dtype of new parameters and constructors (float32), and the
generator that layers' initialisation and ``cr.randn``-style constructors draw from (``manual_seed``).

They live in the core so that constructors (``ops/pytorch``) and layers (``nn``) read the same ones without
one layer importing the other.
"""

from __future__ import annotations

import contextvars
from typing import Any

import numpy as np

from .device import seed_all

_default_dtype = np.dtype(np.float32)


def get_default_dtype() -> np.dtype:
    """The dtype new layers use when none is given (float32 unless changed).

    Example:
        >>> from chainrule import nn
        >>> nn.get_default_dtype()
        dtype('float32')
    """
    return _default_dtype


def set_default_dtype(dtype: Any) -> None:
    """Set the dtype of new layers' parameters: float32 or float64.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.set_default_dtype(np.float64); nn.Linear(2, 3).weight.dtype
        dtype('float64')
        >>> nn.set_default_dtype(np.float32)
    """
    global _default_dtype
    dt = np.dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"set_default_dtype: expected a floating dtype (float32 or float64), got {dt}")
    _default_dtype = dt


_generator = np.random.default_rng(0)
_seed = 0  # the seed of _generator (torch.initial_seed)


def manual_seed(seed: int) -> None:
    """Reset the generator used when no ``rng`` is given (layers' default initialisation).

    Example:
        >>> from chainrule import nn
        >>> nn.manual_seed(0); a = nn.Linear(2, 2).weight.numpy().copy()
        >>> nn.manual_seed(0); b = nn.Linear(2, 2).weight.numpy()
        >>> bool((a == b).all())
        True
    """
    global _seed
    # reseeded in place: layers and dropouts that hold the default generator (rng=None at build time) see it too
    _generator.bit_generator.state = np.random.default_rng(seed).bit_generator.state
    _seed = int(seed)
    seed_all(seed)  # and every device's own generator (dropout masks drawn on a GPU)


def initial_seed() -> int:
    """The seed the default generator started from (``manual_seed``'s; 0 until it is called)."""
    return _seed


class Generator:
    """PyTorch's ``torch.Generator``: a seeded NumPy generator (``Generator().manual_seed(42)``), accepted wherever
    ``rng=`` or ``generator=`` is (``random_split``, ``DataLoader``, ``multinomial``, ``randn``...). It draws
    NumPy's numbers, not PyTorch's. NumPy's methods (``integers``, ``permutation``...) pass through.

    Example:
        >>> from chainrule import nn
        >>> g = nn.init.Generator().manual_seed(0)
        >>> g.initial_seed(), int(g.integers(10)) == int(nn.init.Generator().manual_seed(0).integers(10))
        (0, True)
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.manual_seed(int(np.random.SeedSequence().entropy % 2**63))

    def manual_seed(self, seed: int) -> Generator:
        """Start again from ``seed``; returns the generator itself (as PyTorch)."""
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        """The seed the generator started from."""
        return self._seed

    def __getattr__(self, name: str) -> Any:
        if name == "rng":
            raise AttributeError(name)
        return getattr(self.rng, name)


# Set while a function runs under ``chainrule.func.vmap(randomness="error")``: the transform's name, so a random
# draw there is refused (as torch.func's) rather than silently giving every example the same numbers.
random_refused: contextvars.ContextVar[str | None] = contextvars.ContextVar("random_refused", default=None)


def generator(rng: Any = None) -> np.random.Generator:
    """``rng`` as a Generator: itself, a new one from an int seed, or the module's (None)."""
    refused = random_refused.get()
    if refused is not None:
        raise RuntimeError(
            f"{refused}: a random function was called under vmap with randomness='error' (the default, as "
            "torch.func's); pass randomness='same' (one draw shared by every example), or draw the numbers "
            "outside vmap and pass them in batched"
        )
    if rng is None:
        return _generator
    if isinstance(rng, Generator):
        return rng.rng
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(f"init: rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}")
