"""Devices: a name bound to an array module with CuPy's spelling of the essentials.

A device is an array module ``xp`` (``ndarray``, ``asarray``, ``asnumpy``, and NumPy's functions by name)
registered under a name. ``"cpu"`` is NumPy; ``"cuda"`` is CuPy, registered the first time it is asked for
when CuPy imports and sees a GPU. A Tensor's device is found from its array's type, so an op runs where
its inputs are: the rules call NumPy's functions, which CuPy's arrays take through NumPy's dispatch
protocols (``__array_ufunc__``, ``__array_function__``).

Example:
    >>> from chainrule.core.device import backend, Device
    >>> backend("cpu:0").name, str(Device("cuda", 0)), Device("cuda", 0) == "cuda"
    ('cpu', 'cuda:0', True)
    >>> Device("cuda", 0)
    device(type='cuda', index=0)
    >>> check_cpu("zeros", "cpu:0")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


class DeviceError(RuntimeError, ValueError):
    """A device that is not available (both a RuntimeError, as PyTorch's, and a ValueError, as a bad argument)."""


class Device:
    """What ``t.device`` tells (PyTorch's ``torch.device``): a type (``"cpu"``, ``"cuda"``, ...) and an index.

    It compares equal to its string (``t.device == "cuda"``, ``"cuda:0"`` for index 0) and to PyTorch's device,
    and may be passed on as ``device=``.
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:  # noqa: A002 (PyTorch's name)
        if ":" in type and index is None:
            type, _, i = type.partition(":")
            index = int(i)
        self.type = type
        self.index = index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"

    def __eq__(self, other: object) -> bool:
        if not (isinstance(other, (str, Device)) or type(other).__name__ == "device"):
            return False
        text = str(other)
        kind, _, index = text.partition(":")
        return kind == self.type and (not index or self.index is None or int(index) == self.index)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.type)

    def __reduce__(self) -> Any:
        return (Device, (self.type, self.index))


class Backend:
    """A registered device: its name, its array module and how arrays move to and from the host."""

    def __init__(self, name: str, xp: Any, *, special: Callable[[], Any] | None = None,
                 synchronize: Callable[[], None] | None = None, seed: Callable[[int], None] | None = None,
                 fuse: Callable[[str, Callable[..., Any]], Callable[..., Any]] | None = None) -> None:
        self.name = name
        self.xp = xp
        self.ndarray = xp.ndarray
        self._special = special
        self._synchronize = synchronize
        self._seed = seed
        self._fuse = fuse
        self._kernels: dict[str, Callable[..., Any]] = {}

    def __repr__(self) -> str:
        return f"<chainrule device {self.name!r} ({getattr(self.xp, '__name__', self.xp)})>"

    def device(self, arr: Any = None) -> Device:
        if self.name == "cpu":
            return CPU_DEVICE
        dev = getattr(arr, "device", None)
        return Device(self.name, getattr(dev, "id", 0))

    def to_host(self, arr: Any) -> np.ndarray:
        if self.xp is np:
            return arr
        flush_checks()  # (a read: the queued checks are answered first)
        return self.xp.asnumpy(arr)

    def from_host(self, arr: Any) -> Any:
        return arr if self.xp is np else self.xp.asarray(arr)

    def special(self) -> Any:
        """SciPy's ``scipy.special`` for this device's arrays (``cupyx.scipy.special`` for CuPy)."""
        if self._special is not None:
            return self._special()
        import scipy.special

        return scipy.special

    def address(self, arr: Any) -> int:
        """Where the array's first entry is in memory (NumPy's data pointer, CuPy's ``arr.data.ptr``)."""
        return arr.__array_interface__["data"][0] if self.xp is np else arr.data.ptr

    def kernel(self, name: str, make: Callable[[Any, Any], Callable[..., Any]]) -> Callable[..., Any]:
        """The elementwise function ``make(xp, special)`` (written with the array module's functions and its
        ``scipy.special``) for this device's arrays: one fused kernel where the device fuses (CuPy's
        ``cupy.fuse``: one launch instead of one per operation), else the operations one by one. Made once."""
        fn = self._kernels.get(name)
        if fn is None:
            fn = self._kernels[name] = (make(self.xp, self.special()) if self._fuse is None
                                        else self._fuse(name, make))
        return fn

    def synchronize(self) -> None:
        flush_checks()
        if self._synchronize is not None:
            self._synchronize()

    def seed(self, seed: int) -> None:
        if self._seed is not None:
            self._seed(seed)
        elif self.xp is not np and hasattr(getattr(self.xp, "random", None), "seed"):
            self.xp.random.seed(seed)


CPU_DEVICE = Device("cpu")
CPU = Backend("cpu", np)
_BY_NAME: dict[str, Backend] = {"cpu": CPU}
_BY_TYPE: dict[type, Backend] = {np.ndarray: CPU}
ARRAY_TYPES: set[type] = {np.ndarray}  # every registered device's array type (apply keeps these as they are)
OFF_HOST: set[type] = set()  # the array types of devices other than the CPU


def register(name: str, xp: Any, **kw: Any) -> Backend:
    """Bind ``name`` to the array module ``xp`` (which has ``ndarray``, ``asarray``, ``asnumpy``).

    ``special``: a function giving its ``scipy.special`` (SciPy's by default); ``synchronize``: waits for its
    queued work; ``seed``: seeds its random generator (``xp.random.seed`` by default).
    """
    missing = [a for a in ("ndarray", "asarray", "asnumpy") if not hasattr(xp, a)] if xp is not np else []
    if missing:
        raise TypeError(f"devices.register({name!r}): the array module lacks {missing} (CuPy's spelling is needed)")
    old = _BY_NAME.get(name)
    if old is not None and old.ndarray is not np.ndarray:
        _BY_TYPE.pop(old.ndarray, None)
        ARRAY_TYPES.discard(old.ndarray)
        OFF_HOST.discard(old.ndarray)
    b = _BY_NAME[name] = Backend(name, xp, **kw)
    if _SEED:
        b.seed(_SEED[0])
    _BY_TYPE[b.ndarray] = b
    ARRAY_TYPES.add(b.ndarray)
    if b.ndarray is not np.ndarray:
        OFF_HOST.add(b.ndarray)
    return b


_SEED: list[int] = []  # the last seed of manual_seed: a device registered later is seeded with it


def seed_all(seed: int) -> None:
    """Seed the random generator of every device (``cr.manual_seed``), and of those registered later."""
    _SEED[:] = [seed]
    for b in _BY_NAME.values():
        b.seed(seed)


def unregister(name: str) -> None:
    """Forget the device ``name`` (tests register a device of their own and take it away again)."""
    b = _BY_NAME.pop(name, None)
    if b is not None and b.ndarray is not np.ndarray:
        _BY_TYPE.pop(b.ndarray, None)
        ARRAY_TYPES.discard(b.ndarray)
        OFF_HOST.discard(b.ndarray)


def registered() -> list[str]:
    """The names of the devices bound so far (``"cuda"`` appears once asked for and found)."""
    return list(_BY_NAME)


def _cuda_backend() -> Backend:
    """CuPy as the device ``"cuda"``, or an error saying what is missing."""
    try:
        import cupy
    except ImportError:
        raise DeviceError(
            "device 'cuda' is not available: CuPy is not installed; install it with pip install "
            "'chainrule[cuda12]' (or [cuda13], matching your CUDA toolkit), or use device='cpu'"
        ) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA's runtime raises its own error class when no driver is found
        raise DeviceError(f"device 'cuda' is not available: CuPy found no usable GPU ({e}); use device='cpu'") from None
    if count < 1:
        raise DeviceError("device 'cuda' is not available: CuPy found no GPU; use device='cpu'")

    def special() -> Any:
        import cupyx.scipy.special

        return cupyx.scipy.special

    def seed(n: int) -> None:
        cupy.random.seed(n)

    return register("cuda", cupy, special=special, synchronize=cupy.cuda.get_current_stream().synchronize,
                    seed=seed, fuse=lambda name, make: _cupy_fused(cupy, special(), name, make))


def _cupy_fused(cupy: Any, special: Any, name: str, make: Callable[[Any, Any], Callable[..., Any]]) -> Any:
    """``make``'s function compiled by ``cupy.fuse`` into one kernel; should CuPy fail to fuse it (a function it
    cannot compile), the same operations one by one from then on, with a warning saying so."""
    plain = make(cupy, special)
    fused: list[Any] = [cupy.fuse(kernel_name=f"chainrule_{name}")(make(cupy, special))]

    def call(*args: Any) -> Any:
        if fused:
            try:
                out = fused[0](*args)
            except Exception as e:  # noqa: BLE001 (any failure to compile: the unfused path computes the same)
                import warnings

                from .errors import ChainruleWarning

                warnings.warn(f"{name}: CuPy could not fuse it into one kernel ({type(e).__name__}: {e}); its "
                              "operations run one by one instead", ChainruleWarning, stacklevel=2)
                fused.clear()
            else:  # (a fused kernel may compute in a wider type than the arrays': the unfused operations' type)
                if out is None:  # a kernel that updates its arguments in place
                    return None
                want = np.result_type(*(getattr(a, "dtype", a) for a in args))
                return out.astype(want, copy=False) if out.dtype != want else out
        return plain(*args)

    return call


def backend(spec: Any) -> Backend:
    """The device named by ``spec``: None or ``"cpu"`` (the CPU), ``"cuda"``, ``"cuda:0"``, a ``Device``,
    PyTorch's ``torch.device``, or the name of any registered device. Raises for a device not available."""
    if spec is None:
        return CPU
    if isinstance(spec, Backend):
        return spec
    name = spec.type if isinstance(spec, Device) or type(spec).__name__ == "device" else spec
    if not isinstance(name, str):
        raise TypeError(f"device: expected a device name such as 'cpu' or 'cuda', got {type(spec).__name__} {spec!r}")
    name, _, index = name.partition(":")
    found = _BY_NAME.get(name)
    if found is None:
        if name == "cuda":
            found = _cuda_backend()
        elif name == "meta":  # PyTorch's shapes-without-values device (torch.func's ensembling tutorial moves to it)
            raise DeviceError(
                "device 'meta' is not available: chainrule has no tensors without values. To run a module with other "
                "parameters (torch.func's model ensembling), use it as it is: functional_call replaces its parameters "
                f"and buffers (base = copy.deepcopy(models[0])); the devices known are {registered() + ['cuda']!r}"
            )
        else:
            raise DeviceError(
                f"device {str(spec)!r} is not available; the devices known are {registered() + ['cuda']!r}"
            )
    if index and name != "cpu" and index.isdigit() and int(index) > 0:
        count = device_count(name)
        if int(index) >= count:
            raise DeviceError(f"device {str(spec)!r} is not available: {count} {name} device(s) found")
    return found


def device_count(name: str = "cuda") -> int:
    if name == "cpu":
        return 1
    if name != "cuda":
        return 1 if name in _BY_NAME else 0
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver: no GPU
        return 0


def of(arr: Any) -> Backend:
    """The device an array lives on (from its type): the CPU for NumPy arrays, numbers and anything unknown."""
    return _BY_TYPE.get(arr.__class__, CPU)


def xp_of(arr: Any) -> Any:
    """The array module of ``arr`` (NumPy, or the device's): create arrays that go with ``arr`` from it."""
    return _BY_TYPE.get(arr.__class__, CPU).xp


def is_off_host(arr: Any) -> bool:
    return arr.__class__ in OFF_HOST


def as_array(value: Any, dtype: Any = None) -> Any:
    """``value`` as an array: a registered device's array as it is (in ``dtype``), anything else through NumPy."""
    b = _BY_TYPE.get(value.__class__)
    if b is None:
        return np.asarray(value, dtype=dtype)
    return value if dtype is None or value.dtype == dtype else value.astype(dtype)


def kernel(like: Any, name: str, make: Callable[[Any, Any], Callable[..., Any]]) -> Callable[..., Any]:
    """``make(xp, special)``'s elementwise function for the device of the array ``like`` (see
    :meth:`Backend.kernel`): one fused kernel on a GPU."""
    return of(like).kernel(name, make)


def reduce_max(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``np.maximum.reduce`` on host arrays (its fast path); ``x.max`` elsewhere (CuPy's ufuncs reduce only for
    add and multiply)."""
    if x.__class__ is np.ndarray:
        return np.maximum.reduce(x, axis=axis, keepdims=keepdims)
    return x.max(axis=axis, keepdims=keepdims)


_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}  # an index seen unsigned: negative ones are huge


def indices_outside(idx: Any, size: int, low: int = 0) -> bool:
    """Whether the integer array ``idx`` (on any device) holds a value outside ``[low, size)``, ``low`` 0 or
    ``-size``: one reduction and one scalar read (an index seen unsigned, a negative one is larger than any size;
    ``low=-size`` shifts by ``size`` first), where a min, a max and two comparisons were four launches on a GPU."""
    if not idx.size:
        return False
    if low:
        idx = idx.astype(np.int64, copy=False) + size  # (in int64: a small type could overflow)
        size += size
    if idx.dtype.kind == "i":
        idx = idx.view(_UNSIGNED[idx.itemsize])
    return int(reduce_max(idx, axis=None)) >= size


# == range checks that wait for the next read ================================================
# On a GPU a range check is a reduction whose answer the host must read: a sync, after which the host no longer
# queues work ahead of the device (a training step paid one per check). As PyTorch's device-side asserts, a
# device's check is queued, and its answer read with the next value the program reads: a Tensor's item(),
# float(), tolist(), a copy to the host, synchronize(), or the end of a function transform.
_PENDING: list[tuple[Any, Callable[[], Exception]]] = []
_MAX_PENDING = 64  # then read together: one sync per 64 checks


def check_indices(idx: Any, size: int, error: Callable[[], Exception], low: int = 0) -> None:
    """Raise ``error()`` when the integer array ``idx`` holds a value outside ``[low, size)`` (``low`` 0 or
    ``-size``): at once for a host array; for a device's, at the next read of a value (see above)."""
    if idx.__class__ not in OFF_HOST:
        if indices_outside(idx, size, low):
            raise error()
        return
    if not idx.size:
        return
    outside = kernel(idx, "indices_outside", lambda xp, special: lambda i, low, size: xp.sum((i < low) | (i >= size)))
    check_later(outside(idx, low, size), error)  # (how many: one kernel, not read now)


def check_later(failures: Any, error: Callable[[], Exception]) -> None:
    """Raise ``error()`` if the device's 0-d count ``failures`` is not 0, at the next read of a value (see above)."""
    _PENDING.append((failures, error))
    if len(_PENDING) >= _MAX_PENDING:
        flush_checks()


def flush_checks() -> None:
    """Read the queued range checks of devices (one host read per device) and raise the first that failed."""
    if not _PENDING:
        return
    pending = _PENDING[:]
    _PENDING.clear()
    by_device: dict[Backend, list[int]] = {}
    for i, (flag, _) in enumerate(pending):
        by_device.setdefault(of(flag), []).append(i)
    failed = []
    for device, rows in by_device.items():
        answers = device.to_host(device.xp.stack([pending[i][0] for i in rows]))
        failed += [i for i, bad in zip(rows, answers.tolist()) if bad]
    if failed:
        error = pending[min(failed)][1]()
        error.add_note("(checked on the device without waiting for the answer, as PyTorch's device-side asserts: "
                       "raised at the next read of a value after the operation)")
        raise error


def contiguous(arr: Any) -> Any:
    """``np.ascontiguousarray(arr)`` where ``arr`` is (NumPy's would copy a device's array to the host)."""
    return _BY_TYPE.get(arr.__class__, CPU).xp.ascontiguousarray(arr)


def move(arr: Any, target: Backend) -> Any:
    """``arr`` on the device ``target``: the same array when it is there already, else a copy."""
    source = _BY_TYPE.get(arr.__class__)
    if source is target:
        return arr
    if source is None:
        arr = np.asarray(arr)
        source = CPU
    host = source.to_host(arr)
    return target.from_host(host)


def constant_on(like: Any, value: Any) -> Any:
    """A constant an op made on the host (a transform's matrix, an index plane) where the array ``like`` is: itself
    on the host, else one copy to that device (made on the host, it is uploaded: the op's values never leave)."""
    b = _BY_TYPE.get(like.__class__)
    if b is None or b is CPU or value.__class__ is not np.ndarray:
        return value
    return b.from_host(value)


def index_on(index: Any, like: Any) -> Any:
    """``index`` (an int, slice, array or a tuple of them) with its host arrays copied to where ``like`` is: an
    index into a device's array must be on that device too (CuPy would copy it silently, one copy per use)."""
    b = _BY_TYPE.get(like.__class__)
    if b is None or b is CPU:
        return index
    if index.__class__ is tuple:
        return tuple(b.from_host(i) if i.__class__ is np.ndarray else i for i in index)
    return b.from_host(index) if index.__class__ is np.ndarray else index


def add_at(out: Any, index: Any, values: Any) -> None:
    """``np.add.at(out, index, values)`` (in place, repeated positions adding up) where ``out`` is: NumPy's on the
    host; on a device its own ``add.at`` with the index moved there (CuPy's dispatch of ``np.add.at`` refuses a
    tuple index, and a host index array), complex values as their real and imaginary parts (CuPy's add.at takes
    real types only)."""
    if out.__class__ is np.ndarray:
        np.add.at(out, index, values)
        return
    xp = _BY_TYPE.get(out.__class__, CPU).xp
    index = index_on(index, out)
    if out.dtype.kind != "c":
        xp.add.at(out, index, values)
        return
    re, im = xp.zeros(out.shape, dtype=out.real.dtype), xp.zeros(out.shape, dtype=out.real.dtype)
    xp.add.at(re, index, xp.real(values))
    xp.add.at(im, index, xp.imag(values))
    out += re + 1j * im


def uniform_like(like: Any, shape: tuple[int, ...], rng: Any = None) -> Any:
    """Uniform [0, 1) draws of ``shape`` where ``like`` (an array, or a device's Backend) is (dropout masks): from
    ``rng`` (a NumPy Generator or a seed) on the host; on a device from its own generator (seeded by
    ``manual_seed``) when ``rng`` is None, else drawn from ``rng`` on the host and copied there (the same masks as
    on the CPU)."""
    b = like if like.__class__ is Backend else _BY_TYPE.get(like.__class__, CPU)
    if b is not CPU and rng is None:
        return b.xp.random.random(shape)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    draws = gen.random(shape)
    return draws if b is CPU else b.from_host(draws)


def check_cpu(where: str, device: Any) -> None:
    """Raise unless ``device`` names an available device (kept for the callers that only check the name)."""
    try:
        backend(device)
    except DeviceError as e:
        raise DeviceError(f"{where}: {e}") from None


def mixed_devices(name: str, values: Any) -> Exception | None:
    """The error for an op given arrays on different devices, or None when they are all on one."""
    seen: dict[str, int] = {}
    for i, v in enumerate(values):
        if isinstance(v, (list, tuple)):
            for w in v:
                if w.__class__ in ARRAY_TYPES:
                    seen.setdefault(of(w).name, i)
        elif v.__class__ in ARRAY_TYPES:
            seen.setdefault(of(v).name, i)
    if len(seen) < 2:
        return None
    (a, i), (b, j) = list(seen.items())[:2]
    return RuntimeError(
        f"{name}: expected all arguments on one device, but argument {i} is on {a} and argument {j} is on {b}; "
        f"move them to one device first, e.g. x.to({b!r}) (a NumPy array is on the cpu)"
    )
