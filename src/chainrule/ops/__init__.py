# ruff: noqa: F401  (re-exports; __all__ is computed below)
"""Every differentiable function, grouped by kind; ``table()`` lists them with their modes.

``chainrule.linalg`` (NumPy's ``linalg``) and ``chainrule.special`` (SciPy's ``special``,
needs SciPy) are separate namespaces; their functions are registered here too, so NumPy's
own ``np.linalg.inv(tensor)`` is traced.
"""

from __future__ import annotations

import types as _types
from typing import Any, NamedTuple

from ..autodiff.primitive import REGISTRY

# each module declares its ops (ops/declare.py) when imported
from . import (  # noqa: F401
    arrays,
    assembled,
    contraction,
    cumulative,
    elementwise,
    masking,
    numeric,
    pointwise,
    products,
    queries,
    reductions,
    selection,
    shape,
    statistics,
)
from . import fourier as _fft  # noqa: F401  (registers numpy.fft)
from . import linear_algebra as _linalg  # noqa: F401  (registers numpy.linalg)
from . import methods as _methods  # noqa: F401  (Tensor methods that are not ops; NumPy's dispatch)
from . import promoting as _promoting  # noqa: F401  (PyTorch's dtype promotion for Tensor operands)
from ._define import FUNCTIONS, NONDIFFERENTIABLE, NUMPY_FUNCTIONS, NUMPY_NAMES, NUMPY_UFUNCS
from .declare import DECLARATIONS, declared_in
from .fused import batch_norm as _batch_norm  # noqa: F401  (nn.functional.batch_norm)
from .fused import conv_transpose as _conv_transpose  # noqa: F401  (nn.functional.conv_transpose1d, 2d)
from .fused import convolution as _convolution  # noqa: F401  (nn.functional.conv1d, conv2d)
from .fused import grid_sample as _grid_sample  # noqa: F401  (nn.functional.grid_sample, affine_grid)
from .fused import group_norm as _group_norm  # noqa: F401  (nn.functional.group_norm, instance_norm)
from .fused import interpolate as _interpolate  # noqa: F401  (nn.functional.interpolate)
from .fused import pooling as _pooling  # noqa: F401  (nn.functional.max_pool2d, avg_pool2d, ...)
from .linear_algebra import eig as _eig  # noqa: F401  (registers numpy.linalg.eig, eigvals)
from .masking import masked_fill
from .methods import ndim, ones_like, result_type, size, zeros_like  # (shape: the name of the ops.shape module)
from .numeric import add_at
from .pointwise import conj, degrees, radians, remainder
from .pytorch import extras as _torch_extras  # noqa: F401  (more of PyTorch's Tensor methods)
from .shape import flatten

# Every declared op public in chainrule.ops (ops/declare.py): no list of names to keep here
# (the imports above are the functions that are not declarations: aliases, masked_fill, add_at, flatten).
globals().update(declared_in("ops"))

# numpy.ndarray methods that have no function of the same name
METHODS = ("T", "mT", "real", "imag", "flatten", "astype", "copy", "item", "tolist", "fill", "sort")


class OpInfo(NamedTuple):
    """One row of :func:`table`."""

    name: str  # where to find it: "cumsum", "linalg.inv", "special.gammaln"
    reverse: bool  # has reverse-mode derivatives
    forward: bool  # has forward-mode derivatives
    numpy: tuple[str, ...]  # the NumPy / SciPy callables it stands for ("numpy.cumsum", ...)
    kind: str  # "primitive" (own rules), "linear" (declared by its transpose), "bilinear" (by its two
    # transposes), "composite" (built from other ops) or "constant" (no gradient)
    doc: str  # first line of the docstring
    methods: tuple[str, ...] = ()  # the Tensor methods its declaration gives (operators included)
    scalar: bool = False  # has a Scalar twin (chainrule.Scalar's method of the same op)


def numpy_names(fn: Any) -> tuple[str, ...]:
    """Every public name in numpy, numpy.linalg, numpy.fft and (if loaded) scipy.special that ``fn`` stands for."""
    import sys

    import numpy as np

    targets = {id(f) for f in NUMPY_NAMES.get(fn, ())}
    if not targets:
        return ()
    spaces = [("numpy.", np), ("numpy.linalg.", np.linalg), ("numpy.fft.", np.fft)]
    if "scipy.special" in sys.modules:
        spaces.append(("scipy.special.", sys.modules["scipy.special"]))
    found = []
    for prefix, module in spaces:
        for name in dir(module):
            if not name.startswith("_") and id(getattr(module, name, None)) in targets:
                found.append(prefix + name)
    return tuple(found)


def _namespaces() -> list[tuple[str, Any]]:
    import importlib

    spaces: list[tuple[str, Any]] = [("", importlib.import_module(__name__))]
    spaces.append(("linalg.", importlib.import_module("chainrule.linalg")))
    spaces.append(("fft.", importlib.import_module("chainrule.fft")))
    try:
        spaces.append(("special.", importlib.import_module("chainrule.special")))
    except ImportError:  # pragma: no cover - without SciPy
        pass
    return spaces


def table() -> list[OpInfo]:
    """Every public chainrule function: its name, modes, the NumPy names it answers to, its first doc line.

    A function that wraps a primitive (same name in the primitive registry) is a
    "primitive"; the others are built from primitives ("composite", both modes by
    construction) or give no gradient ("constant").

    Example:
        >>> import chainrule as cr
        >>> row = {r.name: r for r in cr.ops.table()}["cumsum"]
        >>> row.reverse, row.forward, row.numpy
        (True, True, ('numpy.cumsum',))
    """
    rows: dict[str, OpInfo] = {}
    seen: set[int] = set()
    for prefix, module in _namespaces():
        for name in getattr(module, "__all__", []):
            fn = getattr(module, name)
            if isinstance(fn, _types.ModuleType) or not callable(fn) or isinstance(fn, type) or name == "table":
                continue
            if id(fn) in seen and prefix:
                continue  # the same function under chainrule. already
            seen.add(id(fn))
            names = numpy_names(fn)
            decl = DECLARATIONS.get(name)
            decl = decl if decl is not None and decl.function is fn else None
            prim = (decl.primitive if decl is not None else None) or REGISTRY.get(name)
            if fn in NONDIFFERENTIABLE:
                kind, rev, fwd = "constant", False, False
            elif decl is not None and decl.kind in ("linear", "bilinear"):
                kind, rev, fwd = decl.kind, prim.has_vjp(), prim.has_jvp()
            elif prim is not None and (decl is None or decl.kind != "function" or REGISTRY.get(name) is prim):
                kind, rev, fwd = "primitive", prim.has_vjp(), prim.has_jvp()
            else:
                kind, rev, fwd = "composite", True, True
            doc = (fn.__doc__ or "").strip().splitlines()
            methods = decl.methods if decl is not None else ()
            scalar = decl is not None and decl.scalar is not None
            rows[prefix + name] = OpInfo(prefix + name, rev, fwd, names, kind, doc[0] if doc else "", methods, scalar)
    for decl in DECLARATIONS.values():  # NumPy's spelling where it differs from chainrule's (numpy.linalg.eigh)
        names = numpy_names(decl.function)
        if id(decl.function) not in seen and names and decl.function not in NONDIFFERENTIABLE:
            doc = (decl.function.__doc__ or "").strip().splitlines()
            rows[names[0]] = OpInfo(names[0], True, True, names, "composite", doc[0] if doc else "", (), False)
    return [rows[k] for k in sorted(rows)]


def primitives() -> list[tuple[str, bool, bool]]:
    """(primitive name, has a reverse rule, has a forward rule) for every registered primitive."""
    return [(name, p.has_vjp(), p.has_jvp()) for name, p in sorted(REGISTRY.items())]


__all__ = [
    n for n, v in dict(globals()).items()
    if not n.startswith("_") and not isinstance(v, _types.ModuleType)
    and n not in ("annotations", "Any", "NamedTuple", "table", "primitives", "OpInfo", "METHODS", "numpy_names",
                  "DECLARATIONS", "declared_in")
] + ["table", "primitives", "OpInfo", "numpy_names"]
