"""Saving and loading models, optimisers and schedulers as ``.npz`` files that never unpickle.

A file holds plain numeric arrays (a model's under their flat names, e.g.
``layers.0.weight``) and, for nested states such as an optimiser's, a JSON manifest that
records the structure (numbers, strings, lists, dicts). Loading uses
``numpy.load(allow_pickle=False)``: a file that holds pickled Python objects is refused with
:class:`UnsafeFileError`, so loading an untrusted file cannot run code. A saved Tensor (or Parameter) loads as one,
with its ``requires_grad``; an array as an array.

Example:
    >>> import os, tempfile
    >>> import numpy as np
    >>> from chainrule import nn, optim
    >>> model = nn.Linear(3, 2, rng=0)
    >>> opt = optim.Adam(model.parameters(), lr=1e-3)
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.npz")
    >>> nn.save_checkpoint(path, model=model, optimizer=opt, epoch=3)
    >>> fresh = nn.Linear(3, 2, rng=1)
    >>> nn.load_checkpoint(path, model=fresh, optimizer=optim.Adam(fresh.parameters()))
    {'epoch': 3}
    >>> bool((fresh.weight.numpy() == model.weight.numpy()).all())
    True
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import time
import zipfile
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.device import as_array, is_off_host, of
from ..tensor import Tensor
from .parameter import Parameter

MANIFEST = "__chainrule__"
FORMAT = "chainrule-state/1"


class UnsafeFileError(ValueError):
    """The file holds pickled Python objects, which could run code when loaded; it was refused."""


class DamagedFileError(ValueError):
    """The file is truncated or corrupted (not a readable .npz archive, or an entry fails its checksum)."""


# -- encoding a nested state as (JSON skeleton, arrays) -----------------------------------------
def _encode(obj: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """Replace arrays by references; returns the JSON-able skeleton and the named arrays.

    Iterative (explicit stack), so deeply nested states cannot overflow the interpreter stack.
    """
    arrays: dict[str, np.ndarray] = {}
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[str, Any], Any, str]] = [(obj, root, 0, "")]
    while stack:
        value, holder, slot, path = stack.pop()
        tensor = None  # a Tensor loads as what it was: a Tensor or a Parameter, requires_grad kept
        if isinstance(value, Tensor):
            tensor = {"$T": "Parameter" if isinstance(value, Parameter) else "Tensor", "$g": value.requires_grad}
            value = value._data
        if is_off_host(value):  # a device's array is saved as a host array (it loads on any device)
            value = of(value).to_host(value)
        if isinstance(value, np.generic):
            value = as_array(value)
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in "biufc":
                raise TypeError(
                    f"save: the array at '{path or '<root>'}' has dtype {value.dtype}; only numeric arrays can be "
                    "saved (no objects or strings)"
                )
            key = path or "array"
            if key in arrays or key == MANIFEST:
                key = f"{key}#{len(arrays)}"
            arrays[key] = value
            holder[slot] = {"$a": key} if tensor is None else {"$a": key, **tensor}
        elif value is None or isinstance(value, (bool, int, float, str)):
            holder[slot] = value
        elif isinstance(value, Mapping):
            keys = list(value.keys())
            if all(isinstance(k, str) and not k.startswith("$") for k in keys):
                out: dict[str, Any] = {}
                holder[slot] = out
                for k in reversed(keys):
                    stack.append((value[k], out, k, f"{path}/{k}" if path else k))
            else:
                for k in keys:
                    if not isinstance(k, (str, int)) or isinstance(k, bool):
                        raise TypeError(f"save: dict keys must be str or int, got {type(k).__name__} at '{path}'")
                pairs: list[Any] = [[k, None] for k in keys]
                holder[slot] = {"$d": pairs}
                for pair, k in zip(reversed(pairs), reversed(keys), strict=False):
                    stack.append((value[k], pair, 1, f"{path}/{k}" if path else str(k)))
        elif isinstance(value, (list, tuple)):
            items: list[Any] = [None] * len(value)
            holder[slot] = items if isinstance(value, list) else {"$t": items}
            for i in reversed(range(len(value))):
                stack.append((value[i], items, i, f"{path}/{i}" if path else str(i)))
        else:
            raise TypeError(
                f"save: cannot store a {type(value).__name__} at '{path or '<root>'}'; only arrays, numbers, "
                "strings, None, lists, tuples and dicts can be saved"
            )
    return root[0], arrays


def _decode(skeleton: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(skeleton, root, 0)]
    while stack:
        node, holder, slot = stack.pop()
        if isinstance(node, dict) and "$a" in node:
            key = node["$a"]
            if key not in arrays:
                raise ValueError(f"load: the file's manifest refers to a missing array {key!r}; the file is damaged")
            holder[slot] = arrays[key] if "$T" not in node else _as_tensor(arrays[key], node["$T"], node.get("$g"))
        elif isinstance(node, dict) and "$t" in node:
            items = list(node["$t"])
            holder[slot] = items  # turned into a tuple below, once filled
            stack.append(({"$finish_tuple": True}, holder, slot))
            for i, v in enumerate(items):
                stack.append((v, items, i))
        elif isinstance(node, dict) and "$finish_tuple" in node:
            holder[slot] = tuple(holder[slot])
        elif isinstance(node, dict) and "$d" in node:
            out: dict[Any, Any] = {}
            holder[slot] = out
            for k, v in node["$d"]:
                out[k] = None
                stack.append((v, out, k))
        elif isinstance(node, dict):
            out = {}
            holder[slot] = out
            for k, v in node.items():
                out[k] = None
                stack.append((v, out, k))
        elif isinstance(node, list):
            items = list(node)
            holder[slot] = items
            for i, v in enumerate(items):
                stack.append((v, items, i))
        else:
            holder[slot] = node
    return root[0]


def _as_tensor(arr: Any, kind: str, requires_grad: Any) -> Tensor:
    """The saved Tensor back (older files, and plain ``.npz`` archives, hold arrays: they load as arrays)."""
    t = (Parameter if kind == "Parameter" else Tensor)._wrap(arr)
    t._requires_grad = bool(requires_grad) and arr.dtype.kind in "fc"
    return t


# -- files ----------------------------------------------------------------------------------------
def _write_npz(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray]) -> None:
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    _remove_stale_temps(folder, os.path.basename(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}-{secrets.token_hex(6)}.tmp")
    try:
        # created with mode 0o666 so the process's umask applies, as for any file the user writes
        # (tempfile.mkstemp would leave it 0600)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
                for name, arr in arrays.items():
                    with zf.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.asanyarray(arr), allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())  # the bytes are on disk before the name points at them (a power cut keeps
        os.replace(tmp, path)  # the old file or the new one); a crash never leaves a half-written file as path
        _fsync_folder(folder)
    except BaseException as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(e, OSError) and e.filename is None:  # say which file could not be written
            e.filename = path
        raise


_TEMP_NAME = re.compile(r"\.(?P<base>.+)\.(?:(?P<pid>\d+)-)?[0-9a-f]{12}\.tmp")


def _remove_stale_temps(folder: str, base: str) -> None:
    """Remove the temporary files that earlier saves of ``base`` left when they were killed (our naming
    only; a save still running in another process keeps its own)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return  # the save itself will say what is wrong with the folder
    for name in names:
        match = _TEMP_NAME.fullmatch(name)
        if match and match["base"] == base and not _writer_alive(match["pid"], os.path.join(folder, name)):
            try:
                os.remove(os.path.join(folder, name))
            except OSError:
                pass


def _writer_alive(pid: str | None, path: str) -> bool:
    """Whether the process that named a temporary file may still be writing it."""
    if pid is None or int(pid) == os.getpid():  # an older naming, or a save of ours that ended
        return False
    if os.name != "posix":  # (os.kill would end the process there): a writer takes less than an hour
        try:
            return time.time() - os.path.getmtime(path) < 3600
        except OSError:
            return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX; Windows cannot open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _damaged(path: Any, e: BaseException) -> DamagedFileError:
    return DamagedFileError(
        f"load: {os.fspath(path)!s} is damaged or truncated and cannot be read ({type(e).__name__}: {e}); "
        "save it again, or load an earlier copy"
    )


_DAMAGE = (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError)


def _refused(path: Any, where: str) -> UnsafeFileError:
    return UnsafeFileError(
        f"load: {os.fspath(path)!s} holds pickled Python objects ({where}); unpickling can run arbitrary code, so "
        "the file was refused. Only files of plain numeric arrays load (write them with chainrule.nn.save / "
        "save_checkpoint, or numpy.savez of numeric arrays)"
    )


class PyTorchFileError(UnsafeFileError):
    """The file was written by ``torch.save`` (a zip of pickles): refused, with how to convert it."""


def _refuse_other_zip(path: Any, names: list[str]) -> None:
    """A zip whose members are not all ``.npy`` arrays is no .npz: NumPy would hand back their raw bytes."""
    others = [n for n in names if not n.endswith(".npy")]
    if not others:
        return
    where = os.fspath(path)
    if any(n.endswith("data.pkl") for n in others):
        raise PyTorchFileError(
            f"load: {where!s} was written by torch.save (a zip of pickles), which chainrule does not unpickle; "
            "convert it once with PyTorch: sd = torch.load(path, weights_only=True); chainrule.save({k: "
            "v.detach().cpu().numpy() for k, v in sd.items()}, 'model.npz') (or write it with safetensors and read "
            "it with safetensors.numpy.load_file), then load the .npz"
        )
    raise ValueError(
        f"load: {where!s} is a zip archive but not a NumPy .npz: entry {others[0]!r} is not a .npy array; "
        "load files written by chainrule.save or numpy.savez"
    )


def _read_npz(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    # (the file is opened here, not by np.load, which leaves the file it opened open when the zip is damaged)
    with open(path, "rb") as fh:
        head = fh.read(6)
        if head.startswith(b"\x80"):  # the opcode that starts every pickle of protocol 2 or later
            raise _refused(path, "the whole file is a pickle")
        if head == b"\x93NUMPY":
            raise ValueError(
                f"load: {os.fspath(path)!s} holds a single array (.npy), not an .npz archive of named arrays"
            )
        fh.seek(0)
        try:
            f = np.load(fh, allow_pickle=False)
        except _DAMAGE as e:
            raise _damaged(path, e) from None
        except ValueError as e:
            raise ValueError(
                f"load: {os.fspath(path)!s} is not a NumPy .npz archive (NumPy could only read it by unpickling, "
                f"which is refused: {e})"
            ) from None
        if not isinstance(f, np.lib.npyio.NpzFile):
            raise ValueError(
                f"load: {os.fspath(path)!s} holds a single array (.npy), not an .npz archive of named arrays"
            )
        with f:
            return _read_entries(path, f)


def _read_entries(path: str | os.PathLike[str], f: Any) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    _refuse_other_zip(path, f.zip.namelist())
    for name in f.files:
        try:
            _check_claimed_size(f.zip, name, path)
            out[name] = f[name]
        except _DAMAGE as e:
            raise _damaged(path, e) from None
        except ValueError as e:
            if "pickle" in str(e).lower() or "object arrays" in str(e).lower():
                raise _refused(path, f"entry {name!r} is an object array") from None
            if isinstance(e, DamagedFileError):
                raise
            raise _damaged(path, e) from None
    return out


def _check_claimed_size(zf: zipfile.ZipFile, name: str, path: Any) -> None:
    """Refuse an entry whose header claims more bytes than the archive holds for it, before NumPy
    allocates them (a damaged header claiming 10**12 elements would end in a MemoryError)."""
    member = name if name in zf.NameToInfo else name + ".npy"
    info = zf.getinfo(member)
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            return  # NumPy reads (and checks) other versions itself
        stored = info.file_size - fh.tell()
    claimed = math.prod(shape) * dtype.itemsize
    if not dtype.hasobject and claimed > stored:
        raise DamagedFileError(
            f"load: {os.fspath(path)!s} is damaged: its entry {name!r} claims shape {tuple(shape)} of {dtype} "
            f"({claimed:,} bytes) but holds {stored:,} bytes; save it again, or load an earlier copy"
        )


def save(obj: Any, path: str | os.PathLike[str]) -> None:
    """Save a Module's ``state_dict()``, a state dict, or any nested state (dicts, lists, arrays,
    numbers, strings) to ``path`` as an ``.npz`` archive, written atomically to exactly ``path``.

    A flat ``{name: array}`` mapping (e.g. a state dict) is stored under its names, so
    ``numpy.load(path)`` shows ``layers.0.weight`` and so on.

    Example:
        >>> import os, tempfile
        >>> from chainrule import nn
        >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
        >>> nn.save(nn.Linear(2, 2, rng=0), path)
        >>> sorted(nn.load(path))
        ['bias', 'weight']
    """
    from .module import Module  # local: module.py does not depend on this file

    is_model = isinstance(obj, Module) or (hasattr(obj, "named_parameters") and hasattr(obj, "state_dict"))
    state = obj.state_dict() if is_model else obj
    skeleton, arrays = _encode(state)
    header = {"format": FORMAT, "state": skeleton}
    if is_model:  # load(path, weights_only=False), PyTorch's way back to the object, names the class in its refusal
        header["module"] = type(obj).__qualname__
    manifest = json.dumps(header)
    arrays[MANIFEST] = np.array(manifest)
    _write_npz(path, arrays)


def load(path: str | os.PathLike[str], map_location: Any = None, weights_only: bool = True) -> Any:
    """Load what :func:`save` wrote (never unpickling; see :class:`UnsafeFileError`). A plain
    ``.npz`` of numeric arrays (no manifest) loads as ``{name: array}``. PyTorch's ``map_location``
    (a device: the arrays are put there, e.g. ``"cuda"``; default the CPU) and ``weights_only`` are
    accepted: nothing is ever unpickled, so loading is always weights-only. A file that ``save(model)`` wrote
    holds the model's ``state_dict()``: ``load(path, weights_only=False)`` (PyTorch's way to get the model object
    back) raises a TypeError that says so, rather than return a dict where a model was expected.

    Example:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from chainrule import nn
        >>> path = os.path.join(tempfile.mkdtemp(), "bad.npz")
        >>> np.savez(path, w=np.array([object()], dtype=object))
        >>> try:
        ...     nn.load(path)
        ... except nn.UnsafeFileError as e:
        ...     print("refused")
        refused
    """
    from ..core.device import CPU, DeviceError, backend, move  # local: keeps this file's imports light

    try:
        target = backend(map_location)
    except DeviceError as e:
        raise DeviceError(f"load: {e}") from None
    arrays = _read_npz(path)
    if target is not CPU:
        arrays = {k: (v if k == MANIFEST else move(v, target)) for k, v in arrays.items()}
    if MANIFEST not in arrays:
        return dict(arrays)
    try:
        manifest = json.loads(str(arrays.pop(MANIFEST)))
    except (json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"load: {os.fspath(path)!s} has a damaged manifest ({type(e).__name__})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or "state" not in manifest:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise ValueError(f"load: {os.fspath(path)!s} was written in an unknown format {found!r}")
    if weights_only is False and "module" in manifest:
        raise TypeError(
            f"load: {os.fspath(path)!s} holds the state_dict of a whole {manifest['module']} (save(model) stores "
            f"its weights; chainrule never pickles a class), so weights_only=False cannot give the model back: "
            f"build it and call model.load_state_dict(load(path)) instead")
    try:
        return _decode(manifest["state"], arrays)
    except (TypeError, ValueError, KeyError) as e:
        raise ValueError(f"load: {os.fspath(path)!s} has a damaged manifest ({e})") from None


def save_checkpoint(
    path: str | os.PathLike[str], model: Any = None, optimizer: Any = None, scheduler: Any = None, **extra: Any
) -> None:
    """Save a model, its optimiser and scheduler (and extra numbers such as the epoch) in one file.

    Resuming with :func:`load_checkpoint` gives the same next steps as never having stopped: the
    file also holds the state of every NumPy generator the model's modules keep (Dropout's masks).
    """
    state: dict[str, Any] = {}
    if model is not None:
        state["model"] = model.state_dict()
        state["generators"] = generator_states(model)
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    if scheduler is not None:
        state["scheduler"] = scheduler.state_dict()
    state["extra"] = extra
    save(state, path)


def load_checkpoint(
    path: str | os.PathLike[str], model: Any = None, optimizer: Any = None, scheduler: Any = None, strict: bool = True
) -> dict[str, Any]:
    """Restore what :func:`save_checkpoint` wrote into ``model`` / ``optimizer`` / ``scheduler``
    (each optional); returns the extra values."""
    state = load(path)
    if not isinstance(state, dict) or "extra" not in state:
        raise ValueError(f"load_checkpoint: {os.fspath(path)!s} is not a checkpoint (use nn.load for a plain state)")
    for name, target in (("model", model), ("optimizer", optimizer), ("scheduler", scheduler)):
        if target is None:
            continue
        if name not in state:
            raise KeyError(f"load_checkpoint: {os.fspath(path)!s} holds no {name} state (it has {sorted(state)})")
        if name == "model" and _takes_strict(target):
            target.load_state_dict(state[name], strict=strict)
        else:
            target.load_state_dict(state[name])
    if model is not None:
        set_generator_states(model, state.get("generators") or {}, strict)  # older files hold none
    return dict(state["extra"])


def generator_states(model: Any) -> dict[str, Any]:
    """The state of every NumPy generator the model's modules hold (Dropout's ``rng``), by
    ``module.attribute`` name, so a resumed run draws the masks an uninterrupted one would."""
    if not hasattr(model, "named_modules"):
        return {}
    return {f"{name}.{attr}" if name else attr: value.bit_generator.state
            for name, mod in model.named_modules() for attr, value in vars(mod).items()
            if isinstance(value, np.random.Generator)}


def set_generator_states(model: Any, states: Mapping[str, Any], strict: bool = True) -> None:
    """Restore what :func:`generator_states` returned into the same model's generators (``strict``:
    a generator the model lacks is an error, else skipped)."""
    mine = {}
    if hasattr(model, "named_modules"):
        mine = {f"{name}.{attr}" if name else attr: value for name, mod in model.named_modules()
                for attr, value in vars(mod).items() if isinstance(value, np.random.Generator)}
    for key, st in states.items():
        if key not in mine and strict:
            raise ValueError(f"load_checkpoint: the file holds the generator {key!r}, which the model lacks; "
                             "load it into a model of the same structure")
        if key in mine:
            mine[key].bit_generator.state = st


def _takes_strict(model: Any) -> bool:
    from .module import Module

    return isinstance(model, Module)
