"""Random values where an input lives, drawn through ``core.traces.draw`` so that a jit replay draws afresh (a
value drawn with NumPy and then used as a constant would be frozen into the trace).

``drawn_like(x, rng, shape, dtype, shaped, *params, method="random")`` draws values of ``shape`` with the
generator method ``method`` (``random``: U[0, 1); ``standard_exponential``) and turns them into what a function
needs with ``shaped(u, *params)`` (NumPy functions, so on a device they run there): on a device from its own
generator (``rng`` None), else from ``rng`` (a seed or Generator; None: the default one, seeded by
``manual_seed``) on the host, copied to where ``x`` is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.device import is_off_host, of
from ...core.traces import draw
from ...ops._define import where_is
from .. import init


def drawn_like(x: Any, rng: Any, shape: tuple[int, ...], dtype: Any, shaped: Callable[..., Any], *params: Any,
               method: str = "random") -> Any:
    where = where_is(x)
    device = of(where) if is_off_host(where) else None
    return draw(_drawn, device, rng, tuple(shape), dtype, shaped, params, method)


def _drawn(device: Any, rng: Any, shape: tuple[int, ...], dtype: Any, shaped: Callable[..., Any],
           params: tuple[Any, ...], method: str) -> Any:
    if device is not None and rng is None:  # the device's own generator
        u = getattr(device.xp.random, method)(size=shape)
    else:
        u = getattr(init.generator(rng), method)(size=shape)
        u = u if device is None else device.from_host(u)
    return shaped(u, *params).astype(dtype)
