"""The text a GPT trains on: every ``*.py`` file under a folder, in sorted order, capped by size.

A capped corpus takes every k-th file, so it spans the whole folder. The default folder is the
Python standard library of the running interpreter (``sysconfig.get_paths()["stdlib"]``,
without ``site-packages``), so training needs no download on any machine. Files that are not
UTF-8 are skipped (the standard library's tests hold a few on purpose).

Example:
    >>> import os, tempfile
    >>> from chainrule.gpt import read_corpus
    >>> root = tempfile.mkdtemp()
    >>> for name, text in [("b.py", "y = 2\\n"), ("a.py", "x = 1\\n"), ("notes.txt", "skipped")]:
    ...     with open(os.path.join(root, name), "w") as fh:
    ...         _ = fh.write(text)
    >>> read_corpus(root)
    ['x = 1\\n', 'y = 2\\n']
"""

from __future__ import annotations

import math
import os
import sysconfig

from .errors import GPTError

__all__ = ["default_corpus_dir", "corpus_files", "read_corpus", "corpus_documents"]

SKIPPED_DIRS = frozenset({"site-packages", "dist-packages", "__pycache__"})


def default_corpus_dir() -> str:
    """The folder of the running interpreter's standard library sources."""
    return sysconfig.get_paths()["stdlib"]


def corpus_files(root: str | os.PathLike[str], pattern_suffix: str = ".py",
                 skipped: list[str] | None = None) -> list[str]:
    """Every regular file under ``root`` whose name ends in ``pattern_suffix``, sorted by relative path
    (installed packages and caches skipped). Other entries with such a name (a named pipe, which
    would block reading forever, a dangling link, a folder) are left out and appended to ``skipped``.
    Raises :class:`GPTError` if ``root`` is not a folder."""
    root = os.fspath(root)
    if not os.path.isdir(root):
        what = "a file, not a folder" if os.path.exists(root) else "missing"
        raise GPTError(f"corpus folder {root!r} is {what}; pass a folder of {pattern_suffix} files")
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in files + [d for d in dirs if d.endswith(pattern_suffix)]:
            path = os.path.join(folder, name)
            if not name.endswith(pattern_suffix):
                continue
            if os.path.isfile(path):  # follows links: a link to a regular file is kept
                found.append(path)
            elif skipped is not None:
                skipped.append(path)
    return sorted(found, key=lambda p: os.path.relpath(p, root))


def read_corpus(root: str | os.PathLike[str] | None = None, max_bytes: int = 4_000_000,
                suffix: str = ".py", skipped: list[str] | None = None) -> list[str]:
    """The texts of the corpus files in sorted order, at most ``max_bytes`` of UTF-8 in all (at
    least one file is kept). When the folder holds more, every k-th file is read (k = total
    size / ``max_bytes``, rounded up), so a capped corpus still spans the whole folder instead of
    its first packages alphabetically. Entries that are not regular files are left out (and appended
    to ``skipped``). Raises :class:`GPTError` when there is no usable text."""
    return [text for _, text in corpus_documents(root, max_bytes, suffix, skipped)]


def corpus_documents(root: str | os.PathLike[str] | None = None, max_bytes: int = 4_000_000,
                     suffix: str = ".py", skipped: list[str] | None = None) -> list[tuple[str, str]]:
    """:func:`read_corpus`'s files as ``(path, text)`` pairs, in the same order: with
    :func:`chainrule.gpt.dataset.validation_documents` they say which files a run held out."""
    if max_bytes <= 0:
        raise GPTError(f"max_bytes must be positive, got {max_bytes}")
    root = default_corpus_dir() if root is None else os.fspath(root)
    files = corpus_files(root, suffix, skipped)
    sizes = {}
    for path in files:
        try:
            sizes[path] = os.path.getsize(path)
        except OSError:  # removed since the listing
            if skipped is not None:
                skipped.append(path)
    files = list(sizes)
    total_size = sum(sizes.values())
    stride = max(1, math.ceil(total_size / max_bytes))
    texts: list[tuple[str, str]] = []
    total = 0
    for path in files[::stride]:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        size = len(text.encode("utf-8"))
        if not text.strip():
            continue
        if texts and total + size > max_bytes:
            break
        texts.append((path, text))
        total += size
    if not texts:
        raise GPTError(f"corpus folder {root!r} holds no non-empty UTF-8 {suffix} file to train on")
    return texts
