"""PyTorch's ``inplace=`` flag of nn.functional's activations: ``F.relu(x, inplace=True)``, ``F.elu(x, 1.0, True)``.

With the flag the result is written into the input, as ``F.relu_`` writes it: in the graph the change is recorded
as PyTorch records it (``ops/pytorch/in_place_methods.py``), and where chainrule cannot record it (a tensor whose
memory another one shares) it refuses, naming the out-of-place spelling. The layers' flag (``nn.ReLU(inplace=True)``)
keeps computing out of place: the same numbers, and a model never refused for it.

Example:
    >>> import chainrule as cr
    >>> import chainrule.nn.functional as F
    >>> x = cr.tensor([-1.0, 2.0])
    >>> F.relu(x, inplace=True) is x, x.tolist()
    (True, [0.0, 2.0])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from .writes import written_over


def taking_inplace(fn: Callable[..., Any], n_params: int) -> Callable[..., Any]:
    """``fn(input, *params)`` with PyTorch's ``inplace`` flag after its ``n_params`` parameters (positional too)."""
    name = fn.__name__
    write = written_over(f"{name}_", fn)

    @functools.wraps(fn)
    def call(input: Any, *args: Any, inplace: bool = False, **kw: Any) -> Any:  # noqa: A002  (PyTorch's name)
        if len(args) > n_params:  # PyTorch's flag given positionally, after the parameters
            if len(args) > n_params + 1 or inplace is not False:
                raise TypeError(f"{name}: takes {n_params + 2} arguments at most (input, parameters, inplace), "
                                f"got {1 + len(args)} positional")
            args, inplace = args[:n_params], args[n_params]
        if not isinstance(inplace, bool):
            raise TypeError(f"{name}: inplace must be True or False, got {inplace!r}")
        return write(input, *args, **kw) if inplace else fn(input, *args, **kw)

    signature = inspect.signature(fn)
    flag = inspect.Parameter("inplace", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=False, annotation="bool")
    call.__signature__ = signature.replace(parameters=[*signature.parameters.values(), flag])  # type: ignore[attr-defined]
    return call
