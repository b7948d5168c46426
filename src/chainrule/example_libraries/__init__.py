"""JAX's ``jax.example_libraries``: the small optimiser library (``optimizers``) its tutorials use."""

from . import optimizers

__all__ = ["optimizers"]
