"""Test cases made from the op declarations (``chainrule.ops.declare``): each declared op with a
domain gets a case, drawn from its domain, compared with its PyTorch twin, with nothing
written here per op. ``op_cases.py`` adds them to its table (gradcheck, oracle, registry,
dispatch and vmap tests all read that table).

A declaration's ``domain`` says where its inputs are drawn (away from kinks and singularities);
its ``cases`` how their shapes are drawn: ``"elementwise"`` (broadcasting shapes, one per
argument) or ``"reduction"`` (one array, an ``axis`` and ``keepdims``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrule.ops.declare import Declaration, table_of_declarations
from op_specs import Maker, Shapes, all_distinct, bcast, interleaved, nonzero, one, reduction, uniform


def off_integers(rng: np.random.Generator, shapes: Shapes, p: dict) -> list[np.ndarray]:
    """Values at least 0.1 away from every integer (floor, ceil, round...)."""
    return [rng.integers(-3, 3, size=s) + rng.uniform(0.1, 0.9, size=s) for s in shapes]


_NAMED: dict[str, Maker] = {
    "real": uniform(-2, 2),
    "positive": uniform(0.3, 3),
    "nonzero": nonzero(-2, 2, 0.3),
    "off_integers": off_integers,
}
_INTERVAL = re.compile(r"^\(\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\)$")


def maker(domain: str, arity: int) -> Maker:
    """Inputs drawn from a domain: a name above, ``"distinct"``, or an open interval ``"(a,b)"``
    (drawn a tenth of its width inside each end)."""
    if domain == "distinct":
        return interleaved if arity == 2 else all_distinct
    if domain in _NAMED:
        return _NAMED[domain]
    found = _INTERVAL.match(domain)
    if found is None:
        raise ValueError(f"unknown test domain {domain!r}; use one of {sorted(_NAMED)}, 'distinct' or '(a,b)'")
    lo, hi = float(found[1]), float(found[2])
    margin = 0.1 * (hi - lo)
    return uniform(lo + margin, hi - margin)


def _per_argument(domains: tuple[str, ...]) -> Maker:
    makers = [maker(d, 1) for d in domains]
    return lambda rng, shapes, p: [m(rng, (s,), p)[0] for m, s in zip(makers, shapes, strict=True)]


def twin(spec: str | Callable[..., Any] | None) -> Callable[..., Any] | None:
    """The PyTorch twin: a callable as it is; a dotted path looked up in torch when called."""
    if spec is None or callable(spec):
        return spec
    path = spec.removeprefix("torch.").split(".")

    def call(*args: Any, **kw: Any) -> Any:
        import torch

        fn: Any = torch
        for part in path:
            fn = getattr(fn, part)
        return fn(*args, **kw)

    call.__name__ = spec
    return call


def _reduction_twin(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(t: Any, axis: Any = None, keepdims: bool = False) -> Any:
        dims = tuple(range(t.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        return fn(t, dim=dims, keepdim=keepdims)

    return call


def _torch() -> Any:
    import torch

    return torch


# Declared ops that PyTorch lacks (or lacks the derivative of) but can write out: these twins, only in the tests.
WRITTEN_OUT: dict[str, Callable[..., Any]] = {
    "cbrt": lambda x: _torch().sign(x) * x.abs() ** (1 / 3),
    "gamma": lambda x: _torch().exp(_torch().lgamma(x)),  # (the domains are x > 0, where Gamma is positive)
    "rgamma": lambda x: _torch().exp(-_torch().lgamma(x)),
    "erfcinv": lambda x: _torch().erfinv(1 - x),
}


def case_fields(decl: Declaration) -> dict[str, Any] | None:
    """What a test case of ``decl`` needs, or None when its inputs need a maker of their own."""
    if decl.domain is None or decl.cases == "none" or decl.primitive is None:
        return None
    if isinstance(decl.domain, tuple):
        make = _per_argument(decl.domain)
    else:
        make = maker(decl.domain, decl.arity)
    # called through NumPy's own function where there is one: NumPy's dispatch is tested as well
    fn = decl.numpy[0] if decl.numpy else decl.function
    torch_fn = twin(decl.torch) or WRITTEN_OUT.get(decl.name)
    if decl.cases == "reduction":
        shapes = reduction()
        torch_fn = _reduction_twin(torch_fn) if torch_fn is not None else None
    else:
        shapes = one() if decl.arity == 1 else bcast(decl.arity)
    return {"name": decl.name, "prims": (decl.primitive.name,), "fn": fn, "shapes": shapes, "make": make,
            "torch": torch_fn, "tol": decl.tol}


def declared_case_fields() -> list[dict[str, Any]]:
    """The fields of a case for every declaration that has a domain (see :func:`case_fields`)."""
    return [f for f in (case_fields(d) for d in table_of_declarations()) if f is not None]
