"""JAX's ``jax.config``: ``config.update("jax_enable_x64", True)`` and the other flags JAX programs set first.

chainrule keeps NumPy's dtypes (a float64 array computes in float64 with or without ``jax_enable_x64``; Python
numbers and the random samplers give ``get_default_dtype()``, float32 unless set), runs on the host or the device
of its arrays, and checks nothing for NaN by itself. So the flags are remembered and read back, and those with a
meaning here take effect: ``jax_disable_jit`` (as ``disable_jit()`` for the whole program) and ``jax_enable_x64``
(the samplers' and constructors' default dtype becomes float64, as JAX's). An unknown name raises, as JAX's.

Example:
    >>> import chainrule as cr
    >>> cr.config.update("jax_platform_name", "cpu")
    >>> cr.config.jax_platform_name, cr.config.read("jax_platform_name")
    ('cpu', 'cpu')
"""

from __future__ import annotations

from typing import Any

__all__ = ["update", "read"]

_FLAGS: dict[str, Any] = {
    "jax_enable_x64": False, "jax_platform_name": "", "jax_platforms": "", "jax_debug_nans": False,
    "jax_debug_infs": False, "jax_disable_jit": False, "jax_default_matmul_precision": None,
    "jax_numpy_rank_promotion": "allow", "jax_default_prng_impl": "threefry2x32", "jax_log_compiles": False,
    "jax_traceback_filtering": "auto", "jax_compilation_cache_dir": None, "jax_check_tracer_leaks": False,
    "jax_numpy_dtype_promotion": "standard", "jax_threefry_partitionable": True, "jax_enable_checks": False,
}


def update(name: str, value: Any) -> None:
    """Set a JAX flag (see the module's docstring for those that change what chainrule does)."""
    if name not in _FLAGS:
        raise AttributeError(f"config.update: unrecognized config option {name!r} (JAX's flags: "
                             f"{', '.join(sorted(_FLAGS))})")
    _FLAGS[name] = value
    if name == "jax_disable_jit":
        from .replay.disabling import _DISABLED

        _DISABLED.set(bool(value))
    elif name == "jax_enable_x64":
        import numpy as np

        from .core.defaults import set_default_dtype

        set_default_dtype(np.float64 if value else np.float32)


def read(name: str) -> Any:
    """The value of a JAX flag."""
    if name not in _FLAGS:
        raise AttributeError(f"config.read: unrecognized config option {name!r}")
    return _FLAGS[name]


def __getattr__(name: str) -> Any:  # cr.config.jax_enable_x64: each flag as an attribute, as JAX's
    if name in _FLAGS:
        return _FLAGS[name]
    raise AttributeError(f"module 'chainrule.config' has no attribute {name!r}")
