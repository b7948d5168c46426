"""Token streams on disk: a memory-mapped array of token ids, cut into seeded random windows.

:func:`write_tokens` encodes the corpus once into ``train.bin`` and ``val.bin`` (one file in
ten is validation, spread over the corpus: text the model never trains on).
:class:`TokenStream` maps such a file read-only (``numpy.memmap``: the corpus is never held in
memory twice) and :meth:`TokenStream.batch` draws ``batch_size`` windows of ``context + 1``
tokens at offsets from a NumPy generator, giving inputs and next-token targets.

Example:
    >>> import tempfile
    >>> import numpy as np
    >>> from chainrule.gpt import ByteTokenizer, TokenStream, write_tokens
    >>> folder = tempfile.mkdtemp()
    >>> paths = write_tokens(["abcdefghij" * 10], ByteTokenizer(), folder, val_fraction=0.2)
    >>> train = TokenStream(paths["train"])
    >>> len(train), train.dtype
    (82, dtype('uint16'))
    >>> x, y = train.batch(batch_size=2, context=4, rng=np.random.default_rng(0))
    >>> x.shape, bool((x[:, 1:] == y[:, :-1]).all())
    ((2, 4), True)
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import GPTError

__all__ = ["TokenStream", "write_tokens", "validation_documents", "DOC_SEPARATOR"]

DOC_SEPARATOR = "\n\n"  # between files: blank lines, which a byte or BPE tokenizer always knows


def _dtype_for(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16) if vocab_size <= 65536 else np.dtype(np.uint32)


def validation_documents(n_docs: int, val_fraction: float) -> list[bool]:
    """Which of ``n_docs`` documents are validation: evenly spread, a ``val_fraction`` of them
    (document i when ``floor((i + 1) f) > floor(i f)``), so both parts sample the whole corpus."""
    return [math.floor((i + 1) * val_fraction) > math.floor(i * val_fraction) for i in range(n_docs)]


def write_tokens(texts: Sequence[str], tokenizer: Any, folder: str | os.PathLike[str],
                 val_fraction: float = 0.1) -> dict[str, str]:
    """Encode ``texts`` (each followed by a blank line) and write ``train.bin`` / ``val.bin`` under
    ``folder``; returns their paths.

    With enough documents (``val_fraction * len(texts) >= 1``) whole documents go to validation,
    spread evenly over the corpus (:func:`validation_documents`): validation is files the model
    never saw, of the same kinds as the training files. With fewer, the last ``val_fraction`` of
    the tokens is validation. Each part must get 2 tokens or more, else :class:`GPTError`.
    """
    if not 0.0 < val_fraction < 1.0:
        raise GPTError(f"val_fraction must be in (0, 1), got {val_fraction}")
    dtype = _dtype_for(tokenizer.vocab_size)
    docs = [np.asarray(d, dtype=dtype) for d in tokenizer.encode_batch([t + DOC_SEPARATOR for t in texts])]
    if val_fraction * len(docs) >= 1:
        is_val = validation_documents(len(docs), val_fraction)
        parts = [[d for d, v in zip(docs, is_val) if not v], [d for d, v in zip(docs, is_val) if v]]
        train, val = (np.concatenate(p) if p else np.zeros(0, dtype) for p in parts)
    else:
        tokens = np.concatenate(docs) if docs else np.zeros(0, dtype)
        n_val = int(round(len(tokens) * val_fraction))
        train, val = tokens[: len(tokens) - n_val], tokens[len(tokens) - n_val:]
    if len(train) < 2 or len(val) < 2:
        raise GPTError(
            f"the corpus is too small: {len(train) + len(val)} tokens cannot make a train/validation split"
        )
    os.makedirs(folder, exist_ok=True)
    paths = {}
    for name, part in (("train", train), ("val", val)):
        path = os.path.join(os.fspath(folder), f"{name}.bin")
        part.tofile(path)
        paths[name] = path
    return paths


class TokenStream:
    """A read-only memory map of token ids (``uint16`` unless the vocabulary needs more)."""

    def __init__(self, path: str | os.PathLike[str], dtype: Any = np.uint16) -> None:
        self.path = os.fspath(path)
        if not os.path.isfile(self.path) or os.path.getsize(self.path) == 0:
            raise GPTError(f"token file {self.path!r} is missing or empty")
        self.tokens = np.memmap(self.path, dtype=np.dtype(dtype), mode="r")
        self.dtype = self.tokens.dtype

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def batch(self, batch_size: int, context: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``batch_size`` windows at random offsets: inputs ``x`` and targets ``y = x`` shifted by one,
        both ``(batch_size, context)`` int64. Raises :class:`GPTError` if the stream is shorter than
        ``context + 1`` tokens."""
        if len(self) < context + 1:
            raise GPTError(
                f"the token stream {self.path!r} has {len(self)} tokens, fewer than context + 1 = {context + 1}; "
                "use a bigger corpus or a shorter context"
            )
        starts = rng.integers(0, len(self) - context, size=batch_size)
        windows = np.stack([self.tokens[s: s + context + 1] for s in starts]).astype(np.int64)
        return windows[:, :-1], windows[:, 1:]
