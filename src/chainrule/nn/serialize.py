"""Saving and loading models, optimisers and schedulers as ``.npz`` files that never unpickle.

A file holds plain numeric arrays (a model's under their flat names, e.g.
``layers.0.weight``) and, for nested states such as an optimiser's, a JSON manifest that
records the structure (numbers, strings, lists, dicts). Loading uses
``numpy.load(allow_pickle=False)``: a file that holds pickled Python objects is refused with
:class:`UnsafeFileError`, so loading an untrusted file cannot run code.

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
    >>> bool((fresh.weight.data == model.weight.data).all())
    True
"""

from __future__ import annotations

import json
import os
import secrets
import zipfile
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.device import as_array, is_off_host, of
from ..tensor import Tensor

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
        if isinstance(value, Tensor):
            value = value.data
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
            holder[slot] = {"$a": key}
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
            holder[slot] = arrays[key]
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


# -- files ----------------------------------------------------------------------------------------
def _write_npz(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray]) -> None:
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # created with mode 0o666 so the process's umask applies, as for any file the user writes
    # (tempfile.mkstemp would leave it 0600)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, arr in arrays.items():
                with zf.open(name + ".npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(arr), allow_pickle=False)
        os.replace(tmp, path)  # a crash mid-save never leaves a half-written file under the real name
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


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


def _read_npz(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    try:
        f = np.load(path, allow_pickle=False)
    except _DAMAGE as e:
        raise _damaged(path, e) from None
    except ValueError as e:
        with open(path, "rb") as fh:
            head = fh.read(1)
        if head == b"\x80":  # the opcode that starts every pickle of protocol 2 or later
            raise _refused(path, "the whole file is a pickle") from None
        raise ValueError(
            f"load: {os.fspath(path)!s} is not a NumPy .npz archive (NumPy could only read it by unpickling, "
            f"which is refused: {e})"
        ) from None
    if not isinstance(f, np.lib.npyio.NpzFile):
        raise ValueError(
            f"load: {os.fspath(path)!s} holds a single array (.npy), not an .npz archive of named arrays"
        )
    out: dict[str, np.ndarray] = {}
    with f:
        for name in f.files:
            try:
                out[name] = f[name]
            except _DAMAGE as e:
                raise _damaged(path, e) from None
            except ValueError as e:
                if "pickle" in str(e).lower() or "object arrays" in str(e).lower():
                    raise _refused(path, f"entry {name!r} is an object array") from None
                raise _damaged(path, e) from None
    return out


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
    manifest = json.dumps({"format": FORMAT, "state": skeleton})
    arrays[MANIFEST] = np.array(manifest)
    _write_npz(path, arrays)


def load(path: str | os.PathLike[str], map_location: Any = None, weights_only: bool = True) -> Any:
    """Load what :func:`save` wrote (never unpickling; see :class:`UnsafeFileError`). A plain
    ``.npz`` of numeric arrays (no manifest) loads as ``{name: array}``. PyTorch's ``map_location``
    (a device: the arrays are put there, e.g. ``"cuda"``; default the CPU) and ``weights_only`` are
    accepted: nothing is ever unpickled, so loading is always weights-only.

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
    try:
        return _decode(manifest["state"], arrays)
    except (TypeError, ValueError, KeyError) as e:
        raise ValueError(f"load: {os.fspath(path)!s} has a damaged manifest ({e})") from None


def save_checkpoint(
    path: str | os.PathLike[str], model: Any = None, optimizer: Any = None, scheduler: Any = None, **extra: Any
) -> None:
    """Save a model, its optimiser and scheduler (and extra numbers such as the epoch) in one file.

    Resuming with :func:`load_checkpoint` gives the same next steps as never having stopped.
    """
    state: dict[str, Any] = {}
    if model is not None:
        state["model"] = model.state_dict()
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
    return dict(state["extra"])


def _takes_strict(model: Any) -> bool:
    from .module import Module

    return isinstance(model, Module)
