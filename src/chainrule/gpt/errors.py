"""The one error type of the GPT tools: its message is one line, fit to print as is."""

from __future__ import annotations

__all__ = ["GPTError"]


class GPTError(ValueError):
    """A bad corpus, checkpoint, tokenizer or prompt; ``str(e)`` is one line naming what and why."""
