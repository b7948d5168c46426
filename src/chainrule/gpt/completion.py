"""Completing code with a trained GPT: tokens one at a time (key/value cache), cut where a rule says.

:class:`Completion` iterates over the new text as it is generated (for streaming) and ends at
``max_tokens``, at one of the ``stop`` strings (OpenAI's rule, which the server uses), or, with
``block=True``, where the block at the end of the prompt ends (what ``chainrule gpt complete``
does; :func:`block_end` says where):

- a generated line indented less than the block being completed (the dedent), or
- a blank line after a complete statement (the code so far parses, or at least leaves no bracket
  or string open).

Example:
    >>> block_end("def f(x):\\n", "    return x\\n\\ndef g():\\n")  # the blank line after a whole statement
    13
    >>> block_end("def f(x):\\n    y = x\\n", "    return y\\nprint(")  # the dedent
    13
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..core.defaults import generator
from ..core.state import no_grad
from ..nn.language_model.generate import sample_next, sampler
from ..tensor import Tensor

__all__ = ["Completion", "block_end", "block_indent", "statement_complete", "iter_tokens"]


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def block_indent(prompt: str) -> int:
    """The least indentation a line of the block at the end of ``prompt`` has: its last non-blank
    line's, or one more when that line opens a block (ends with ``:``)."""
    lines = [line for line in prompt.splitlines() if line.strip()]
    if not lines:
        return 0
    last = lines[-1]
    code = last.split("#", 1)[0].rstrip() if "#" in last and "'" not in last and '"' not in last else last.rstrip()
    return _indent(last) + (1 if code.endswith(":") else 0)


def statement_complete(code: str) -> bool:
    """True when ``code`` parses (after removing a common indentation, for a fragment of a file), or,
    for a fragment that does not, when it leaves no bracket or string open at its end and its last
    line does not open a block (end with ``:``)."""
    try:
        ast.parse(textwrap.dedent(code))
        return True
    except (SyntaxError, ValueError):
        pass
    last = None
    skip = {tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type not in skip:
                last = tok
    except tokenize.TokenError:  # EOF in a multi-line statement or string
        return False
    except SyntaxError:  # an indentation the fragment's start does not explain: brackets were closed so far
        return True
    return last is None or last.string != ":"


def block_end(prompt: str, text: str) -> int | None:
    """Where the generated ``text`` leaves the block at the end of ``prompt`` (an index into ``text``,
    at the start of the line that ends it), or None while it has not."""
    least = block_indent(prompt)
    starts = ([0] if not prompt or prompt.endswith("\n") else []) + [i + 1 for i, c in enumerate(text) if c == "\n"]
    for s in starts:
        end = text.find("\n", s)
        line = text[s:] if end < 0 else text[s:end]
        if not line.strip():
            if end >= 0 and text[:s].strip() and statement_complete(prompt + text[:s]):
                return s  # a blank line after a complete statement
        elif _indent(line) < least:
            return s  # the dedent
    return None


def iter_tokens(model: Any, ids: Sequence[int], temperature: float = 0.0, top_k: int | None = None,
                top_p: float | None = None, seed: Any = None) -> Iterator[int]:
    """Sample tokens after ``ids`` for ever (the caller stops), as ``nn.generate`` does: the prompt
    once, then one token per step with the key/value cache; past the context the last
    ``context_length`` tokens run afresh. Temperature 0 is greedy."""
    gen = generator(seed)  # None: the generator manual_seed resets, as PyTorch's sampling
    ctx = model.config.context_length
    seq = [int(i) for i in ids]
    if not seq:
        raise ValueError("the prompt is empty: give at least one token")
    model.eval()
    run = sampler(model)
    caches = None
    with no_grad():
        while True:
            if hasattr(model, "new_caches") and caches is not None and caches[0].length < ctx:
                logits = run(np.array([seq[-1:]], dtype=np.int64), caches)
            elif hasattr(model, "new_caches"):
                caches = model.new_caches(1)
                logits = run(np.array([seq[-ctx:]], dtype=np.int64), caches)
            else:
                logits = run(np.array([seq[-ctx:]], dtype=np.int64))
            last = np.asarray(logits._data if isinstance(logits, Tensor) else logits)[:, -1, :]
            token = int(sample_next(last, float(temperature), top_k, top_p, gen)[0])
            seq.append(token)
            yield token


def _held_back(text: str, stops: Sequence[str]) -> int:
    """How many characters at the end of ``text`` could begin a stop string (not to be sent yet)."""
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:n]):
                longest = n
                break
    return longest


class Completion:
    """The completion of ``prompt``: iterate for the new text piece by piece; afterwards ``text`` holds
    all of it and ``finish_reason`` is ``"stop"`` (a stop string or the block's end) or ``"length"``
    (``max_tokens`` reached); ``prompt_tokens`` and ``completion_tokens`` count tokens.

    ``str(Completion(...))`` runs it to the end and gives the text.
    """

    def __init__(self, model: Any, tokenizer: Any, prompt: str, max_tokens: int = 128, temperature: float = 0.0,
                 top_k: int | None = None, top_p: float | None = None, seed: Any = None,
                 stop: Sequence[str] = (), block: bool = False) -> None:
        self.model, self.tokenizer, self.prompt = model, tokenizer, prompt
        self.max_tokens, self.block = int(max_tokens), bool(block)
        self.sampling = dict(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
        self.stops = [s for s in stop if s]
        self.ids = tokenizer.encode(prompt)
        self.prompt_tokens, self.completion_tokens = len(self.ids), 0
        self.text, self.finish_reason = "", None

    def _cut(self, text: str) -> int | None:
        cuts = [i for i in (text.find(s) for s in self.stops) if i >= 0]
        if self.block:
            end = block_end(self.prompt, text)
            if end is not None:
                cuts.append(len(text[:end].rstrip()))
        return min(cuts) if cuts else None

    def __iter__(self) -> Iterator[str]:
        sent = 0
        new: list[int] = []
        tokens = iter_tokens(self.model, self.ids, **self.sampling) if self.max_tokens > 0 else iter(())
        for token in tokens:
            new.append(token)
            self.completion_tokens = len(new)
            text = self.tokenizer.decode(new)
            cut = self._cut(text)
            if cut is not None:
                self.text, self.finish_reason = text[:cut], "stop"
                break
            if len(new) >= self.max_tokens:  # (a block's completion never ends in blank space)
                self.text, self.finish_reason = text.rstrip() if self.block else text, "length"
                break
            ready = len(text.rstrip("\ufffd"))  # a character whose bytes are not all here yet waits
            ready -= _held_back(text[:ready], self.stops)
            if self.block:  # the block's end cuts trailing blank space: send it only once text follows
                ready = min(ready, len(text.rstrip()))
            if ready > sent:
                yield text[sent:ready]
                sent = ready
        else:
            self.finish_reason = "length"
        if len(self.text) > sent:
            yield self.text[sent:]

    def __str__(self) -> str:
        for _ in self:
            pass
        return self.text
