"""A small GPT trained on source code: corpus, tokens, data on disk, training, checkpoints, sampling.

The model itself is :class:`chainrule.nn.GPT`; this package is everything around it, and what
``chainrule gpt train`` / ``chainrule gpt sample`` run. See docs/gpt.md.

Example:
    >>> import tempfile
    >>> from chainrule import nn
    >>> from chainrule.gpt import ByteTokenizer, TokenStream, Trainer, TrainConfig, write_tokens
    >>> paths = write_tokens(["print('hello')\\n" * 50], ByteTokenizer(), tempfile.mkdtemp())
    >>> model = nn.GPT(nn.GPTConfig(vocab_size=256, context_length=8, d_model=16, n_heads=2, n_layers=1), seed=0)
    >>> trainer = Trainer(model, TokenStream(paths["train"]), TokenStream(paths["val"]),
    ...                   TrainConfig(batch_size=4, max_steps=5, warmup_steps=1))
    >>> len(trainer.fit(progress=False)["train_loss"])
    5
"""

from __future__ import annotations

from .checkpoint import load_gpt, read_checkpoint
from .corpus import corpus_documents, corpus_files, default_corpus_dir, read_corpus
from .dataset import TokenStream, write_tokens
from .errors import GPTError
from .tokens import BPETokenizer, ByteTokenizer, tokenizer_from_spec, train_bpe
from .training import TrainConfig, Trainer, lm_loss

__all__ = [
    "GPTError", "default_corpus_dir", "corpus_files", "read_corpus", "corpus_documents",
    "ByteTokenizer", "BPETokenizer", "train_bpe", "tokenizer_from_spec",
    "TokenStream", "write_tokens", "TrainConfig", "Trainer", "lm_loss", "load_gpt", "read_checkpoint",
]
