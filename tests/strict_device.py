"""A strict device double: an array type over NumPy that behaves like CuPy's where it matters to chainrule.

``StrictArray`` implements NumPy's two dispatch protocols (``__array_ufunc__``, ``__array_function__``) and
returns its own type, and like ``cupy.ndarray`` it refuses what would be a hidden host copy on a GPU:

- implicit conversion to NumPy (``np.asarray(x)``, ``np.array(x)``: ``__array__`` raises TypeError);
- being mixed with host NumPy arrays in one op (``x + np.ones(3)``, ``np.concatenate([x, host])``, an
  index array or a value from the host), which CuPy refuses with a TypeError;
- SciPy's ufuncs (``scipy.special.gammaln(x)``): a device needs its own (``cupyx.scipy.special``);
- pickling (a checkpoint must hold host arrays);
- ``flags.writeable`` (CuPy's flags have only ``c_contiguous``, ``f_contiguous``, ``owndata``);
- what CuPy's functions take less of than NumPy's: ``np.add.at(a, index, v)`` with a tuple index (CuPy's
  ``__array_ufunc__`` returns NotImplemented for it: ``xp.add.at`` takes it), ``where`` with a Python bool as
  its condition (a NumPy bool it takes), ``kind=`` for ``argpartition`` and ``partition``, ``linalg.solve``
  broadcasting ``a`` and ``b`` against each other, and the special functions ``cupyx.scipy.special`` lacks
  (``jv``, ``yv``, ``iv``, ``ive``, ``jn``); its ``polygamma`` wants ``n`` as a device array, as CuPy's, and its
  ``add.at`` takes real types only;
- CuPy's reading of integer index arrays out of bounds (a gather, a scatter, ``add.at``): wrapped around, where
  NumPy raises (so a range check is chainrule's, not the double's);
- NumPy's arrangement where NumPy leaves it open: ``argpartition`` and ``partition`` give the entries besides the
  kth sorted, as CuPy's did on a GPU.

``strict`` is its array module with CuPy's essentials (``ndarray``, ``asarray``, ``asnumpy``, NumPy's
functions by name, ``random``, ``linalg``, ``fft``). ``use()`` registers it as the device ``"strict"``.
``HOST_COPIES`` counts the explicit copies to the host (``asnumpy``, ``.get()``, ``float()``, ``.item()``...).
``LAUNCHES`` counts, by name, the operations that would each be a kernel launch on a GPU (every ufunc call, every
function or method that computes, a gather or a scatter by index arrays; not views, reshapes and metadata): what
a step costs a GPU in launches, where each is tens of microseconds from Python.
"""

from __future__ import annotations

import collections
import types
from typing import Any

import numpy as np

HOST_COPIES = [0]
LAUNCHES: collections.Counter[str] = collections.Counter()
# what makes no kernel on a GPU: views, shapes and metadata
_NO_LAUNCH = frozenset({
    "reshape", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays",
    "view", "ravel", "result_type", "shape", "ndim", "size", "broadcast_shapes", "iscomplexobj", "isrealobj",
    "may_share_memory", "shares_memory", "can_cast", "atleast_1d", "atleast_2d", "atleast_3d", "split",
    "array_split", "unstack", "permute_dims", "matrix_transpose", "real", "imag", "diagonal",
})


def _launch(name: str) -> None:
    if name not in _NO_LAUNCH:
        LAUNCHES[name] += 1


class StrictArray:
    """A NumPy array held on a pretend device (see the module's docstring)."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    # -- what CuPy refuses ---------------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
                        "NumPy array explicitly. (strict device double)")

    def __reduce__(self) -> Any:
        raise TypeError("strict device double: refusing to pickle a device array; move it to the host first")

    def __copy__(self) -> StrictArray:
        return StrictArray(self._a.copy())  # as CuPy's: a copy on the device

    def __deepcopy__(self, memo: Any) -> StrictArray:
        return StrictArray(self._a.copy())

    @property
    def flags(self) -> Any:
        f = self._a.flags
        return types.SimpleNamespace(c_contiguous=f.c_contiguous, f_contiguous=f.f_contiguous, owndata=f.owndata)

    # -- the protocols -------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if getattr(np, ufunc.__name__, None) is not ufunc:
            return NotImplemented  # CuPy implements NumPy's own ufuncs only (SciPy's: cupyx.scipy.special)
        _launch(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
        if method not in _METHODS.get(ufunc.__name__, ("__call__", "outer")):
            return NotImplemented  # as CuPy: reduce and accumulate for add and multiply only, at for a few
        if method == "at":  # ufunc.at(a, index, b): CuPy's too (scatter_add), through NumPy's dispatch only for
            a, index, *rest = inputs  # an index that is one array or a scalar (a tuple of them: NotImplemented)
            if not isinstance(index, (StrictArray, np.ndarray, int, np.integer)):
                return NotImplemented
            getattr(ufunc, method)(a._a, _unwrap_key(index), *_unwrap(rest))
            return None
        if not _all_known(inputs) or not _all_known(kwargs.get("out", ())):
            return NotImplemented
        result = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
        if "out" in kwargs:
            out = kwargs["out"]
            return out[0] if isinstance(out, tuple) and len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        if not all(issubclass(t, (StrictArray, np.ndarray)) for t in types_):
            return NotImplemented
        _check_cupy_signature(func.__name__, args, kwargs)
        _launch(func.__name__)
        func = _CUPY_FUNCTIONS.get(func.__name__, func) if func.__module__.startswith("numpy") else func
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    # -- array attributes and methods ------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: StrictArray(self._a.T))
    mT = property(lambda self: StrictArray(self._a.mT))
    real = property(lambda self: StrictArray(self._a.real))
    imag = property(lambda self: StrictArray(self._a.imag))

    @property
    def base(self) -> Any:
        return None if self._a.base is None else StrictArray(self._a.base)

    @property
    def device(self) -> Any:
        return types.SimpleNamespace(id=0)

    @property
    def data(self) -> Any:  # CuPy's MemoryPointer: where the first entry is
        return types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _CUPY_FUNCTIONS:
            fn, a = _CUPY_FUNCTIONS[name], self._a
            return _wrapped(lambda *args, **kw: fn(a, *args, **kw), cupy_name=name)
        attr = getattr(self._a, name)
        if callable(attr):
            return _wrapped(attr, cupy_name=name)
        return _wrap(attr)

    def get(self) -> np.ndarray:
        HOST_COPIES[0] += 1
        return self._a.copy()

    def item(self) -> Any:
        HOST_COPIES[0] += 1
        return self._a.item()

    def tolist(self) -> Any:
        HOST_COPIES[0] += 1
        return self._a.tolist()

    def __float__(self) -> float:
        HOST_COPIES[0] += 1
        return float(self._a)

    def __int__(self) -> int:
        HOST_COPIES[0] += 1
        return int(self._a)

    def __complex__(self) -> complex:
        HOST_COPIES[0] += 1
        return complex(self._a)

    def __bool__(self) -> bool:
        HOST_COPIES[0] += 1
        return bool(self._a)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        return (StrictArray(a) if isinstance(a, np.ndarray) else _wrap(a) for a in self._a)

    def __repr__(self) -> str:
        return f"strict({np.array2string(self._a, separator=', ')}, dtype={self._a.dtype})"

    def __getitem__(self, key: Any) -> Any:
        if any(isinstance(k, (StrictArray, list)) for k in (key if isinstance(key, tuple) else (key,))):
            _launch("gather")  # (a basic index is a view)
        key = _unwrap_key(key)
        try:
            return _wrap(self._a[key])
        except IndexError:
            return _wrap(self._a[_wrapped_key(key, self._a.shape)])

    def __setitem__(self, key: Any, value: Any) -> None:
        _launch("setitem")
        if isinstance(value, np.ndarray):
            raise TypeError("strict device double: setting device values from a host NumPy array (a hidden copy)")
        key, value = _unwrap_key(key), value._a if isinstance(value, StrictArray) else value
        try:
            self._a[key] = value
        except IndexError:
            self._a[_wrapped_key(key, self._a.shape)] = value

    __hash__ = None  # type: ignore[assignment]


# CuPy's ufunc methods besides __call__ and outer (its documentation's table)
_METHODS = {
    "add": ("__call__", "outer", "reduce", "accumulate", "reduceat", "at"),
    "multiply": ("__call__", "outer", "reduce", "accumulate"),
    **{name: ("__call__", "outer", "at") for name in ("subtract", "maximum", "minimum", "bitwise_and", "bitwise_or",
                                                      "bitwise_xor")},
}


def _binary(ufunc: np.ufunc, reflected: bool = False) -> Any:
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
                   ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul),
                   ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor),
                   ("lshift", np.left_shift), ("rshift", np.right_shift)]:
    setattr(StrictArray, f"__{_name}__", _binary(_uf))
    setattr(StrictArray, f"__r{_name}__", _binary(_uf, True))

    def _inplace(self: StrictArray, other: Any, _uf: np.ufunc = _uf) -> StrictArray:
        _uf(self, other, out=(self,))
        return self

    setattr(StrictArray, f"__i{_name}__", _inplace)
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                   ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(StrictArray, f"__{_name}__", _binary(_uf))
for _name, _uf in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute), ("invert", np.invert)]:
    setattr(StrictArray, f"__{_name}__", lambda self, _uf=_uf: _uf(self))


def _all_known(values: Any) -> bool:
    for v in values:
        if isinstance(v, np.ndarray):
            raise TypeError(f"Unsupported type {type(v)} (strict device double: a host NumPy array mixed with "
                            "device arrays)")
        if not isinstance(v, (StrictArray, int, float, complex, bool, np.generic)) and v is not None:
            return False
    return True


def _wrapped_key(key: Any, shape: tuple[int, ...]) -> Any:
    """CuPy's reading of integer index arrays out of bounds: wrapped around, where NumPy raises (so a GPU's
    gather goes on, and chainrule's range check, answered later, is what tells)."""
    parts = list(key) if isinstance(key, tuple) else [key]
    if any(isinstance(p, np.ndarray) and p.dtype == bool for p in parts):
        raise IndexError(f"strict device double: out-of-bounds index {key!r} with a boolean mask")
    consuming = sum(p is not None and p is not Ellipsis for p in parts)
    out, axis = [], 0
    for p in parts:
        if p is Ellipsis:
            axis += len(shape) - consuming
        elif p is not None:
            if isinstance(p, np.ndarray) and p.dtype.kind in "iu":
                p = p % shape[axis]
            axis += 1
        out.append(p)
    return tuple(out)


def _unwrap(v: Any) -> Any:
    if isinstance(v, StrictArray):
        return v._a
    if isinstance(v, np.ndarray):
        raise TypeError(f"Unsupported type {type(v)} (strict device double: a host NumPy array mixed with "
                        "device arrays)")
    if isinstance(v, (list, tuple)):
        return type(v)(_unwrap(x) for x in v)
    if isinstance(v, dict):
        return {k: _unwrap(x) for k, x in v.items()}
    return v


def _unwrap_key(key: Any) -> Any:
    if isinstance(key, np.ndarray):
        raise TypeError("strict device double: indexing device values with a host NumPy array (a hidden copy)")
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k) for k in key)
    return key._a if isinstance(key, StrictArray) else key


def _wrap(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return StrictArray(v)
    if isinstance(v, np.generic):
        return StrictArray(np.asarray(v))  # CuPy gives 0-d arrays, never NumPy scalars
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return tuple(_wrap(x) for x in v)
    if isinstance(v, list):
        return [_wrap(x) for x in v]
    if hasattr(v, "_fields"):  # named tuples (np.linalg's results)
        return type(v)(*[_wrap(x) for x in v])
    return v


def _wrapped(fn: Any, cupy_name: str | None = None) -> Any:
    name = cupy_name or getattr(fn, "__name__", "call")

    def call(*args: Any, **kw: Any) -> Any:
        _check_cupy_signature(name, args if cupy_name is None else (None, *args), kw)
        _launch(name)
        return _wrap(fn(*_unwrap(args), **_unwrap(kw)))

    call.__name__ = name
    return call


# -- where CuPy's functions differ from NumPy's ----------------------------------------------------------------
def _sorted_partition(name: str) -> Any:
    """CuPy's ``argpartition`` (and ``partition``): its entries besides the kth come sorted (CuPy's argpartition
    sorts), not in NumPy's arrangement: NumPy leaves that order open, so nothing may rely on it."""

    def run(a: np.ndarray, kth: Any, axis: Any = -1) -> np.ndarray:
        if axis is None:
            a, axis = a.ravel(), -1
        return np.argsort(a, axis=axis, kind="stable") if name == "argpartition" else np.sort(a, axis=axis)

    run.__name__ = name
    return run


_CUPY_FUNCTIONS = {name: _sorted_partition(name) for name in ("argpartition", "partition")}


_NO_KEYWORD = {"argpartition": ("kind", "order"), "partition": ("kind", "order")}  # CuPy's signatures lack these


def _check_cupy_signature(name: str, args: Any, kwargs: Any) -> None:
    """Refuse what CuPy's function of that name refuses (``args``: as NumPy's function is called, the array
    first; a method's call passes a placeholder there)."""
    for kw in _NO_KEYWORD.get(name, ()):
        if kw in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument {kw!r} (strict device double: CuPy's "
                            f"{name} has no {kw!r})")
    if name == "where" and len(args) == 3:
        _check_where_condition(args[0])
    if name == "solve":
        _check_cupy_solve(*args[:2])


def _check_where_condition(cond: Any) -> None:
    """CuPy's ``where(condition, x, y)`` calls ``condition.astype``: a Python bool (or number) has none (a NumPy
    scalar has, and CuPy takes it as a scalar; a host array is refused as everywhere)."""
    if isinstance(cond, (bool, int, float, complex)):
        raise AttributeError(f"'{type(cond).__name__}' object has no attribute 'astype' (strict device double: "
                             "CuPy's where needs an array as its condition)")


def _check_cupy_solve(a: Any, b: Any) -> None:
    """CuPy's ``linalg.solve`` does not broadcast: ``b`` is ``a.shape[:-1]`` (a vector per matrix) or has
    ``a``'s batch shape and ``M`` rows (a matrix per matrix)."""
    sa, sb = np.shape(_unwrap(a)), np.shape(_unwrap(b))
    if not (len(sa) in (len(sb), len(sb) + 1) and sa[:-1] == sb[:len(sa) - 1]):
        raise ValueError("a must have (..., M, M) shape and b must have (..., M) or (..., M, K) (strict device "
                         f"double: CuPy's solve does not broadcast; got {sa} and {sb})")


class _Ufunc:
    """One of CuPy's ufuncs (``cupy.add``): called as NumPy's, and its methods where CuPy has them; ``at``
    takes any index (a tuple of device arrays too), as ``cupyx.scatter_add`` does."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args: Any, **kw: Any) -> Any:
        _launch(self.__name__)
        return _wrap(self._ufunc(*_unwrap(args), **_unwrap(kw)))

    def __getattr__(self, method: str) -> Any:
        if method not in _METHODS.get(self.__name__, ("__call__", "outer")):
            raise AttributeError(f"strict device double: CuPy's {self.__name__} has no {method!r}")
        return self._at if method == "at" else _wrapped(getattr(self._ufunc, method))

    def _at(self, a: StrictArray, index: Any, b: Any = None) -> None:
        if not isinstance(a, StrictArray):
            raise TypeError(f"strict device double: {self.__name__}.at needs a device array, got {type(a)}")
        if a.dtype.kind not in "iuf":
            raise TypeError(f"cupy.{self.__name__}.at only supports int32, int64, float16, float32, float64, uint32, "
                            f"uint64 as data type (strict device double; got {a.dtype})")
        _launch(f"{self.__name__}.at")
        key, rest = _unwrap_key(index), [] if b is None else _unwrap([b])
        try:
            self._ufunc.at(a._a, key, *rest)
        except IndexError:  # (CuPy's scatter reads indices as its indexing does: wrapped around)
            self._ufunc.at(a._a, _wrapped_key(key, a._a.shape), *rest)


class _Namespace:
    """NumPy's functions of one namespace on StrictArrays (results on the device)."""

    def __init__(self, inner: Any, name: str) -> None:
        self._inner = inner
        self.__name__ = name

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if isinstance(attr, np.ufunc) and self._inner is np:
            return _Ufunc(attr)
        if self._inner is np and name in _CUPY_FUNCTIONS:
            return _wrapped(_CUPY_FUNCTIONS[name])
        if isinstance(attr, (type, types.ModuleType)) or not callable(attr):
            return attr
        return _wrapped(attr)


class _Random:
    """CuPy's ``cupy.random``: a seeded generator whose draws are on the device."""

    def __init__(self) -> None:
        self._rng = np.random.default_rng(0)

    def seed(self, n: int) -> None:
        self._rng = np.random.default_rng(n)

    def standard_normal(self, size: Any = None, dtype: Any = float) -> StrictArray:
        return StrictArray(np.asarray(self._rng.standard_normal(size, dtype=np.dtype(dtype))))

    def random(self, size: Any = None, dtype: Any = float) -> StrictArray:
        return StrictArray(np.asarray(self._rng.random(size, dtype=np.dtype(dtype))))

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None, dtype: Any = float) -> StrictArray:
        return StrictArray(np.asarray(self._rng.uniform(low, high, size)).astype(dtype))

    def standard_exponential(self, size: Any = None, dtype: Any = float) -> StrictArray:
        return StrictArray(np.asarray(self._rng.standard_exponential(size)).astype(dtype))

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None, dtype: Any = float) -> StrictArray:
        return StrictArray(np.asarray(self._rng.normal(loc, scale, size)).astype(dtype))

    def randint(self, low: int, high: int | None = None, size: Any = None, dtype: Any = int) -> StrictArray:
        return StrictArray(np.asarray(self._rng.integers(low, high, size)).astype(dtype))

    def permutation(self, n: int) -> StrictArray:
        return StrictArray(self._rng.permutation(n))


class _StrictModule(_Namespace):
    """The array module of the strict double (CuPy's spelling of the essentials)."""

    ndarray = StrictArray

    def __init__(self) -> None:
        super().__init__(np, "strict")
        self.random = _Random()
        self.linalg = _Namespace(np.linalg, "strict.linalg")
        self.fft = _Namespace(np.fft, "strict.fft")

    def asarray(self, a: Any, dtype: Any = None, order: Any = None) -> StrictArray:
        if isinstance(a, StrictArray):
            return a if dtype is None or a.dtype == dtype else StrictArray(a._a.astype(dtype))
        return StrictArray(np.array(a, dtype=dtype, order=order))  # an explicit copy from the host

    def array(self, a: Any, dtype: Any = None, copy: bool = True, **kw: Any) -> StrictArray:
        if isinstance(a, StrictArray):
            return StrictArray(np.array(a._a, dtype=dtype, copy=copy))
        if isinstance(a, (list, tuple)) and any(isinstance(v, StrictArray) for v in a):
            return StrictArray(np.array(_unwrap(a), dtype=dtype))
        return StrictArray(np.array(a, dtype=dtype))

    def asnumpy(self, a: Any) -> np.ndarray:
        HOST_COPIES[0] += 1
        return a._a.copy() if isinstance(a, StrictArray) else np.asarray(a)


strict = _StrictModule()


class _Special(_Namespace):
    """SciPy's special functions on the double as ``cupyx.scipy.special`` has them: without the Bessel functions
    of any order (``jv``, ``yv``, ``iv``, ``ive``, ``jn``: CuPy has those of orders 0 and 1, and ``yn``), and
    ``polygamma`` written as CuPy's."""

    MISSING = ("jv", "yv", "iv", "ive", "jn")

    def __init__(self) -> None:
        import scipy.special

        super().__init__(scipy.special, "strict.special")

    def __getattr__(self, name: str) -> Any:
        if name in self.MISSING:
            raise AttributeError(f"strict device double: cupyx.scipy.special has no {name}")
        return super().__getattr__(name)

    def polygamma(self, n: Any, x: Any) -> Any:
        """CuPy's: ``broadcast_arrays`` leaves a Python number ``n`` as it is, so ``n == 0`` is a Python bool,
        which CuPy's ``where`` refuses (an int ``n`` must come as a device array)."""
        if not isinstance(n, StrictArray):
            _check_where_condition(n == 0)
        n, x = strict.broadcast_arrays(n, x)
        fac2 = (-1.0) ** (n + 1) * self.gamma(n + 1.0) * self.zeta(n + 1.0, x)
        return strict.where(n == 0, self.digamma(x), fac2)


def special() -> Any:
    """SciPy's special functions for the double (as ``cupyx.scipy.special`` is CuPy's)."""
    return _Special()


class _UfuncsOnly:
    """What ``cupy.fuse`` can put in one kernel: a module's elementwise functions (its ufuncs) and a sum over axes
    (CuPy fuses the elementwise operations before it and scalar arithmetic after it; the arrays' ``max`` and ``sum``
    methods likewise)."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._module, name)
        if name == "sum" and self._module is np:
            return fn
        if not isinstance(fn, np.ufunc):
            raise TypeError(f"strict device double: {name} is not elementwise: cupy.fuse cannot fuse it")
        return fn


def fuse(name: str, make: Any) -> Any:
    """CuPy's ``cupy.fuse`` as the double has it: ``make``'s function, given only ufuncs, counted as one launch."""
    import scipy.special

    body = make(_UfuncsOnly(np), _UfuncsOnly(scipy.special))

    def call(*args: Any) -> Any:
        _launch(f"fused:{name}")
        out = body(*_unwrap(args))
        return None if out is None else _wrap(np.asarray(out))  # (None: it updated its arguments in place)

    return call


def use(name: str = "strict") -> Any:
    """Register the double as the device ``name``; returns its Backend."""
    from chainrule import devices

    return devices.register(name, strict, special=special, fuse=fuse)
