"""Tokenizers: bytes by default (256 tokens, nothing is ever unknown), or BPE trained on the corpus.

``ByteTokenizer`` maps text to its UTF-8 bytes. ``BPETokenizer`` wraps a byte-level BPE model
of the ``tokenizers`` library (``pip install chainrule[gpt]``) trained on the corpus by
:func:`train_bpe`: its alphabet is the bytes the corpus holds, so a prompt with a byte the
corpus never had cannot be encoded and :meth:`BPETokenizer.encode` says which characters.
Both turn into a plain ``spec`` dict (kind and, for BPE, the library's JSON) that a checkpoint
stores, and :func:`tokenizer_from_spec` rebuilds them.

Example:
    >>> from chainrule.gpt import ByteTokenizer
    >>> tok = ByteTokenizer()
    >>> ids = tok.encode("def é")
    >>> ids, tok.decode(ids), tok.vocab_size
    ([100, 101, 102, 32, 195, 169], 'def é', 256)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import GPTError

__all__ = ["ByteTokenizer", "BPETokenizer", "train_bpe", "tokenizer_from_spec", "Tokenizer"]


class ByteTokenizer:
    """Text to UTF-8 bytes and back; decoding replaces an incomplete character by U+FFFD."""

    kind = "byte"
    vocab_size = 256

    def encode(self, text: str) -> list[int]:
        """The UTF-8 bytes of ``text``, as ints."""
        return list(text.encode("utf-8"))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def decode(self, ids: Sequence[int]) -> str:
        """Text from byte ids (a cut-off multi-byte character becomes U+FFFD)."""
        bad = [i for i in ids if not 0 <= int(i) < 256]
        if bad:
            raise GPTError(f"ByteTokenizer.decode: ids must be in [0, 256), got {bad[:5]}")
        return bytes(int(i) for i in ids).decode("utf-8", errors="replace")

    def spec(self) -> dict[str, Any]:
        """What a checkpoint stores to rebuild this tokenizer."""
        return {"kind": "byte"}


def _library() -> Any:
    try:
        import tokenizers
    except ImportError:
        raise GPTError(
            "the BPE tokenizer needs the 'tokenizers' library: pip install chainrule[gpt] (or use --tokenizer byte)"
        ) from None
    return tokenizers


class BPETokenizer:
    """A byte-level BPE tokenizer (GPT-2's scheme) held by the ``tokenizers`` library."""

    kind = "bpe"

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.vocab_size = int(tokenizer.get_vocab_size())

    @classmethod
    def from_json(cls, text: str) -> BPETokenizer:
        """Rebuild from the library's JSON (``tokenizer.json``); a damaged text raises :class:`GPTError`."""
        tokenizers = _library()
        try:
            return cls(tokenizers.Tokenizer.from_str(text))
        except Exception as e:  # the library raises its own exception types
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise GPTError(f"the saved BPE tokenizer is damaged ({first})") from None

    def to_json(self) -> str:
        return self.tokenizer.to_str()

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; raises :class:`GPTError` naming the characters the corpus never had."""
        ids = self.tokenizer.encode(text).ids
        if self.tokenizer.decode(ids) != text:
            unknown = sorted({c for c in text if self.tokenizer.decode(self.tokenizer.encode(c).ids) != c})
            shown = "".join(unknown) if unknown else text
            raise GPTError(
                f"the text holds characters this BPE tokenizer never saw in its corpus: {shown!r} "
                "(remove them, or train with --tokenizer byte)"
            )
        return list(ids)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of many texts at once (in parallel, without the unknown-character check)."""
        return [list(e.ids) for e in self.tokenizer.encode_batch(list(texts))]

    def decode(self, ids: Sequence[int]) -> str:
        bad = [i for i in ids if not 0 <= int(i) < self.vocab_size]
        if bad:
            raise GPTError(f"BPETokenizer.decode: ids must be in [0, {self.vocab_size}), got {bad[:5]}")
        return self.tokenizer.decode([int(i) for i in ids])

    def spec(self) -> dict[str, Any]:
        return {"kind": "bpe", "json": self.to_json()}


Tokenizer = ByteTokenizer | BPETokenizer


def train_bpe(texts: Sequence[str], vocab_size: int = 1024) -> BPETokenizer:
    """Train a byte-level BPE tokenizer on ``texts`` with at most ``vocab_size`` tokens.

    Example:
        >>> from chainrule.gpt import train_bpe
        >>> tok = train_bpe(["def f(x):\\n    return x\\n"] * 20, vocab_size=64)
        >>> tok.decode(tok.encode("def f(x):")), len(tok.encode("return x")) < len("return x")
        ('def f(x):', True)
    """
    if vocab_size < 2 or vocab_size > 65535:
        raise GPTError(f"train_bpe: vocab_size must be in [2, 65535], got {vocab_size}")
    tokenizers = _library()
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=int(vocab_size), show_progress=False, initial_alphabet=[],
                                             special_tokens=[])
    tok.train_from_iterator(list(texts), trainer)
    return BPETokenizer(tok)


def tokenizer_from_spec(spec: Any) -> Tokenizer:
    """The tokenizer a checkpoint's ``spec`` describes (:class:`GPTError` if it is not one)."""
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind == "byte":
        return ByteTokenizer()
    if kind == "bpe" and isinstance(spec.get("json"), str):
        return BPETokenizer.from_json(spec["json"])
    raise GPTError(f"unknown tokenizer description {kind!r} (expected 'byte' or 'bpe')")
