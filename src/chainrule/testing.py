"""PyTorch's ``torch.testing``: ``assert_close``, with PyTorch's tolerances by dtype and its mismatch message.

Example:
    >>> import chainrule as cr
    >>> from chainrule.testing import assert_close
    >>> assert_close(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 2.0 + 1e-7]))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .tensor import Tensor

__all__ = ["assert_close"]

# torch.testing's defaults (rtol, atol) by dtype; every other dtype compares exactly
_TOLERANCES = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.complex64): (1.3e-6, 1e-5),
    np.dtype(np.complex128): (1e-7, 1e-7),
}


def _is_number(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex, np.number, np.bool_))


def _array(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        data = x._data
        return np.asarray(data.get() if hasattr(data, "get") and not isinstance(data, np.ndarray) else data)
    return np.asarray(x)


def _is_array_like(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray)) or _is_number(x)


def _default_tolerances(*dtypes: np.dtype) -> tuple[float, float]:
    pairs = [_TOLERANCES.get(np.dtype(d), (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: str | None = None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close: ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise, with equal shapes (and dtypes, with ``check_dtype``; a Python number on either side has
    no dtype to check). Tensors, arrays, numbers, and sequences and mappings of them (compared item by item).

    The default tolerances are PyTorch's for the dtypes compared (the looser of the two): float16 ``(1e-3, 1e-5)``,
    float32 and complex64 ``(1.3e-6, 1e-5)``, float64 and complex128 ``(1e-7, 1e-7)``, integers and booleans
    exact. Give both ``rtol`` and ``atol`` or neither. ``msg`` replaces the message.

    Example:
        >>> import numpy as np
        >>> from chainrule.testing import assert_close
        >>> try:
        ...     assert_close(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]))
        ... except AssertionError as e:
        ...     print(e)
        Tensor-likes are not close!
        <BLANKLINE>
        Mismatched elements: 1 / 3 (33.3%)
        Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)
        Greatest relative difference: 0.2 at index (1,) (up to 1e-07 allowed)
    """
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, ())


def _where(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p!r}]" for p in path)


def _fail(message: str, msg: str | None, path: tuple[Any, ...]) -> None:
    if msg is not None:
        raise AssertionError(msg)
    if path:
        message += f"\n\nThe failure occurred for item {_where(path)}"
    raise AssertionError(message)


def _compare(actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool, check_dtype: bool,
             msg: str | None, path: tuple[Any, ...]) -> None:
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match: {sorted(map(repr, actual))} != "
                  f"{sorted(map(repr, expected))}", msg, path)
        for key in actual:
            _compare(actual[key], expected[key], rtol, atol, equal_nan, check_dtype, msg, path + (key,))
        return
    nested = (Sequence,)
    if (isinstance(actual, nested) and not isinstance(actual, str)
            and isinstance(expected, nested) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", msg, path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, msg, path + (i,))
        return
    if not (_is_array_like(actual) and _is_array_like(expected)):
        raise TypeError(f"assert_close: no comparison for inputs of type {type(actual).__name__} and "
                        f"{type(expected).__name__}{' at item ' + _where(path) if path else ''}: pass Tensors, "
                        "arrays, numbers, or sequences or mappings of them")
    _compare_values(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path)


def _compare_values(actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool,
                    check_dtype: bool, msg: str | None, path: tuple[Any, ...]) -> None:
    a, e = _array(actual), _array(expected)
    if a.shape != e.shape:
        _fail(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.", msg, path)
    if check_dtype and not (_is_number(actual) or _is_number(expected)) and a.dtype != e.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.", msg, path)
    if rtol is None or atol is None:
        rtol, atol = _default_tolerances(a.dtype, e.dtype)
    common = np.result_type(a.dtype, e.dtype)
    exact = common.kind in "biu"
    work = np.float32 if exact else common  # differences in the inputs' own precision (ints: PyTorch's default float)
    a_w, e_w = a.astype(work), e.astype(work)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a_w - e_w)
        close = (a_w == e_w) | (np.isfinite(a_w) & np.isfinite(e_w) & (diff <= atol + rtol * np.abs(e_w)))
        if exact and rtol == 0 and atol == 0:
            close = a == e  # integers beyond float32's 2**24 stay distinct
        if equal_nan:
            close |= np.isnan(a_w) & np.isnan(e_w)
    if close.all():
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(e_w)
    word = "equal" if rtol == 0 and atol == 0 else "close"
    allowed_abs = "" if word == "equal" else f" (up to {atol} allowed)"
    allowed_rel = "" if word == "equal" else f" (up to {rtol} allowed)"
    if a.ndim == 0:  # PyTorch compares these as Python numbers
        rel = np.float64(abs(complex(diff)) / abs(complex(e.item()))) if e.item() != 0 else np.float64(np.inf)
        _fail(f"Scalars are not {word}!\n\nExpected {e.item()!r} but got {a.item()!r}.\n"
              f"Absolute difference: {_num(diff, exact)}{allowed_abs}\n"
              f"Relative difference: {_num(rel, False)}{allowed_rel}", msg, path)
    bad = ~close
    i_abs = np.unravel_index(int(np.argmax(np.where(bad, np.where(np.isnan(diff), np.inf, diff), -1))), a.shape)
    i_rel = np.unravel_index(int(np.argmax(np.where(bad, np.where(np.isnan(rel), np.inf, rel), -1))), a.shape)
    n_bad, total = int(bad.sum()), a.size
    _fail(f"Tensor-likes are not {word}!\n\nMismatched elements: {n_bad} / {total} ({100 * n_bad / total:.1f}%)\n"
          f"Greatest absolute difference: {_num(diff[i_abs], exact)} at index {tuple(int(k) for k in i_abs)}"
          f"{allowed_abs}\n"
          f"Greatest relative difference: {_num(rel[i_rel], False)} at index {tuple(int(k) for k in i_rel)}"
          f"{allowed_rel}", msg, path)


def _num(x: Any, exact: bool) -> str:
    """A difference as PyTorch prints it: an int for integer inputs, else the float's repr."""
    value = complex(x).real if np.iscomplexobj(x) else float(x)
    return str(int(value)) if exact and np.isfinite(value) else repr(value)
