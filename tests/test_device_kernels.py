"""Fused kernels (``Backend.kernel``): one elementwise function written with an array module's ufuncs runs as one
CuPy kernel on a GPU (``cupy.fuse``), as the operations one by one on a device that does not fuse, and falls back
to those operations, with a warning, should CuPy fail to fuse it. CuPy is stood in for here by a fake module."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

from chainrule.core.device import Backend, _cupy_fused
from chainrule.core.errors import ChainruleWarning


def _axpy(xp, special):
    return lambda x, y: 2.0 * x + xp.exp(y) + special.erf(y)


def test_a_device_that_does_not_fuse_runs_the_operations_one_by_one():
    import scipy.special

    b = Backend("plain", np)
    x, y = np.arange(3.0), np.linspace(-1, 1, 3)
    np.testing.assert_array_equal(b.kernel("axpy", _axpy)(x, y), 2.0 * x + np.exp(y) + scipy.special.erf(y))
    assert b.kernel("axpy", _axpy) is b.kernel("axpy", _axpy)  # made once


def _fake_cupy(fused_fn):
    """NumPy standing in for CuPy, with a ``fuse`` whose compiled function is ``fused_fn(plain)``."""
    calls = []

    def fuse(kernel_name):
        calls.append(kernel_name)
        return lambda fn: fused_fn(fn)

    return types.SimpleNamespace(exp=np.exp, fuse=fuse), calls


def test_cupy_fuse_is_used_with_the_kernel_named():
    import scipy.special

    cupy, calls = _fake_cupy(lambda fn: fn)
    call = _cupy_fused(cupy, scipy.special, "axpy", _axpy)
    x = np.arange(3.0)
    np.testing.assert_allclose(call(x, x), 2.0 * x + np.exp(x) + scipy.special.erf(x))
    assert calls == ["chainrule_axpy"]


def test_a_kernel_cupy_cannot_fuse_falls_back_to_the_operations_with_one_warning():
    import scipy.special

    def broken(fn):
        def run(*args):
            raise RuntimeError("nvrtc: error: identifier erf is undefined")

        return run

    cupy, _ = _fake_cupy(broken)
    call = _cupy_fused(cupy, scipy.special, "axpy", _axpy)
    x = np.arange(3.0)
    with pytest.warns(ChainruleWarning, match="axpy: CuPy could not fuse it.*RuntimeError: nvrtc"):
        got = call(x, x)
    np.testing.assert_allclose(got, 2.0 * x + np.exp(x) + scipy.special.erf(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(call(x, x), got)  # no second warning, no second try


def test_a_fused_kernel_computing_wider_gives_the_unfused_operations_type():
    import scipy.special

    cupy, _ = _fake_cupy(lambda fn: lambda *a: fn(*a).astype(np.float64))
    call = _cupy_fused(cupy, scipy.special, "axpy", _axpy)
    x = np.arange(3, dtype=np.float32)
    assert call(x, x).dtype == np.float32
    assert call(x, x.astype(np.float16)).dtype == np.float32  # the promotion of the arguments, not the first's
    cupy, _ = _fake_cupy(lambda fn: lambda *a: fn(*a).astype(np.float32))
    assert _cupy_fused(cupy, scipy.special, "axpy", _axpy)(x, x.astype(np.float64)).dtype == np.float64
