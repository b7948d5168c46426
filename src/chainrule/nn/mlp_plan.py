"""The layer description both MLPs are built from (``nn.MLP`` on Tensors, ``nn.scalar.MLP`` on Scalars).

``MLP(nin, [h1, ..., nout])`` means the same on both engines: dense layers ``nin -> h1 -> ...
-> nout``, each followed by the activation except the last (micrograd's signature). The sizes
are checked here once, with one error message, and each engine turns every
:class:`DenseLayer` into its own layer (a ``Linear`` and an activation module, or a layer
of Scalar neurons).

Example:
    >>> [(d.fan_in, d.fan_out, d.activated) for d in mlp_plan(2, [16, 16, 1], "MLP")]
    [(2, 16, True), (16, 16, True), (16, 1, False)]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["DenseLayer", "mlp_plan"]


class DenseLayer(NamedTuple):
    """One dense layer of an MLP: its sizes and whether the activation follows it."""

    fan_in: int
    fan_out: int
    activated: bool


def mlp_plan(nin: int, nouts: Iterable[int], where: str) -> list[DenseLayer]:
    """The dense layers of ``MLP(nin, nouts)``: every one but the last is activated."""
    sizes = [int(nin), *[int(n) for n in nouts]]
    if len(sizes) < 2:
        raise ValueError(f"{where}: nouts must list at least one layer size, e.g. MLP(2, [16, 16, 1])")
    bad = [n for n in sizes if n <= 0]
    if bad:
        raise ValueError(f"{where}: layer sizes must be positive, got {sizes}")
    last = len(sizes) - 2
    return [DenseLayer(a, b, i != last) for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=False))]
