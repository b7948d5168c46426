"""``chainrule gpt train`` and ``chainrule gpt sample``: the command-line face of :mod:`chainrule.gpt`.

A problem the user can fix (a bad corpus path, an empty corpus, a damaged checkpoint, a prompt
the tokenizer cannot encode, a bad option) ends the command with one line on stderr and exit
status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

from .errors import GPTError

TRAIN_HELP = """\
Train a small GPT on source code, then write under --out:
  checkpoint.npz   model, optimiser, schedule, data position, configs, tokenizer (safe .npz)
  tokenizer.json   the BPE tokenizer (with --tokenizer bpe), for the `tokenizers` library
  train.bin, val.bin  the corpus as token ids (memory-mapped while training)
  loss.png         the loss curve (needs matplotlib)
The default corpus is the Python standard library of this interpreter: no download.
Continue an interrupted run with --resume (same --out)."""

SAMPLE_HELP = "Continue a prompt with a trained GPT (key/value cache: one forward step per new token)."


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


_DEVICE_HELP = "where to compute: cpu (default) or cuda (a GPU, through CuPy: pip install 'chainrule[cuda12]')"


def _device(name: str) -> str:
    """``--device`` checked before any work: a device that is not there is a one-line error."""
    from ..core.device import DeviceError, backend

    try:
        backend(name)
    except (DeviceError, TypeError) as e:
        raise GPTError(f"--device {name}: {e}") from None
    return name


def add_gpt_parser(sub: Any) -> None:
    """Register ``gpt train`` and ``gpt sample`` on the ``chainrule`` command's subparsers."""
    gpt = sub.add_parser("gpt", help="train a small GPT on source code, or sample from one",
                         description="A small GPT on source code: `chainrule gpt train`, `chainrule gpt sample`.")
    gpt.set_defaults(gpt_parser=gpt)
    cmds = gpt.add_subparsers(dest="gpt_command", metavar="{train,sample}")
    raw = argparse.RawDescriptionHelpFormatter
    t = cmds.add_parser("train", help="train a GPT (default: the standard library's sources)", description=TRAIN_HELP,
                        formatter_class=raw)
    t.add_argument("--minutes", type=positive_float, default=None,
                   help="wall-clock budget; without --steps the schedule is fitted to it (default: 5)")
    t.add_argument("--steps", type=positive_int, default=None, help="optimiser steps (the schedule's length)")
    t.add_argument("--corpus", metavar="DIR", default=None, help="folder of .py files (default: the stdlib)")
    t.add_argument("--max-bytes", type=positive_int, default=4_000_000, help="corpus size cap (default: 4 MB)")
    t.add_argument("--out", metavar="DIR", default="gpt-run", help="output folder (default: ./gpt-run)")
    t.add_argument("--tokenizer", choices=["byte", "bpe"], default="byte", help="byte (default) or bpe")
    t.add_argument("--vocab-size", type=positive_int, default=1024, help="BPE vocabulary size (default: 1024)")
    t.add_argument("--layers", type=positive_int, default=4)
    t.add_argument("--d-model", type=positive_int, default=128)
    t.add_argument("--heads", type=positive_int, default=4)
    t.add_argument("--context", type=positive_int, default=128)
    t.add_argument("--dropout", type=float, default=0.0)
    t.add_argument("--batch-size", type=positive_int, default=32)
    t.add_argument("--accum", type=positive_int, default=1, help="micro-batches per optimiser step (default: 1)")
    t.add_argument("--lr", type=positive_float, default=3e-3)
    t.add_argument("--warmup", type=int, default=50, help="linear warm-up steps (default: 50)")
    t.add_argument("--eval-interval", type=positive_int, default=100)
    t.add_argument("--eval-batches", type=positive_int, default=8)
    t.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--workers", type=positive_int, default=None,
                   help="processes sharing each batch (default: one per core, up to 4, for models big enough to gain)")
    t.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    t.add_argument("--device", default="cpu", help=_DEVICE_HELP)
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    s = cmds.add_parser("sample", help="continue a prompt with a trained GPT", description=SAMPLE_HELP)
    s.add_argument("--checkpoint", metavar="PATH", required=True, help="checkpoint.npz written by `gpt train`")
    s.add_argument("--prompt", default="def ", help='text to continue (default: "def ")')
    s.add_argument("--tokens", type=int, default=200, help="new tokens (default: 200)")
    s.add_argument("--temperature", type=float, default=0.8)
    s.add_argument("--top-k", type=positive_int, default=None)
    s.add_argument("--top-p", type=float, default=None)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--no-cache", action="store_true", help="rerun the whole window for every token")
    s.add_argument("--device", default="cpu", help=_DEVICE_HELP)


def run_gpt(args: argparse.Namespace) -> int:
    """Run ``chainrule gpt ...``; returns the exit status (1 with a one-line message on a user error)."""
    if args.gpt_command is None:
        args.gpt_parser.print_help()
        return 2
    try:
        return train_command(args) if args.gpt_command == "train" else sample_command(args)
    except GPTError as e:
        print(f"chainrule gpt {args.gpt_command}: error: {e}", file=sys.stderr)
        return 1


# -- train ------------------------------------------------------------------------------------------
def train_command(args: argparse.Namespace) -> int:
    from ..nn.gpt import GPT, GPTConfig
    from .checkpoint import read_checkpoint
    from .corpus import default_corpus_dir, read_corpus
    from .dataset import TokenStream, write_tokens
    from .plotting import plot_loss_curve
    from .tokens import ByteTokenizer, train_bpe
    from .training import TrainConfig, Trainer

    device = _device(args.device)
    out = args.out
    ckpt = os.path.join(out, "checkpoint.npz")
    if os.path.exists(out) and not os.path.isdir(out):
        raise GPTError(f"--out {out!r} is a file, not a folder")
    if args.resume:
        extra = read_checkpoint(ckpt)["extra"]
        try:
            config = GPTConfig(**extra["model_config"])
            tconfig = TrainConfig.from_dict(extra["train_config"])
        except (KeyError, TypeError, ValueError) as e:
            raise GPTError(f"checkpoint {ckpt!r} is damaged: {str(e).splitlines()[0] if str(e) else e!r}") from None
        if args.minutes is not None:
            tconfig.minutes = args.minutes  # a new budget for this session; the schedule stays as saved
        tconfig.workers = args.workers  # how this machine runs it, not part of the run
        dtype = np.float64 if extra.get("dtype") == "float64" else np.float32
        token_spec, corpus = extra.get("tokenizer"), extra.get("corpus", "?")
    else:
        if os.path.exists(ckpt):
            raise GPTError(f"{out!r} already holds a run; continue it with --resume or pick another --out")
        if not 0.0 <= args.dropout < 1.0:
            raise GPTError(f"--dropout must be in [0, 1), got {args.dropout}")
        corpus = default_corpus_dir() if args.corpus is None else args.corpus
        texts = read_corpus(corpus, max_bytes=args.max_bytes)
        size = sum(len(t.encode("utf-8")) for t in texts)
        print(f"corpus: {len(texts)} files, {size / 1e6:.2f} MB from {corpus}")
        os.makedirs(out, exist_ok=True)
        if args.tokenizer == "bpe":
            tokenizer: Any = train_bpe(texts, vocab_size=args.vocab_size)
            with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as fh:
                fh.write(tokenizer.to_json())
        else:
            tokenizer = ByteTokenizer()
        write_tokens(texts, tokenizer, out, val_fraction=0.1)
        try:
            config = GPTConfig(vocab_size=tokenizer.vocab_size, context_length=args.context, d_model=args.d_model,
                               n_heads=args.heads, n_layers=args.layers, dropout=args.dropout)
            minutes = args.minutes if args.minutes is not None or args.steps is not None else 5.0
            warmup = min(args.warmup, args.steps - 1) if args.steps is not None else args.warmup
            tconfig = TrainConfig(batch_size=args.batch_size, accum_steps=args.accum, lr=args.lr, min_lr=args.lr / 10,
                                  warmup_steps=max(warmup, 0), max_steps=args.steps, minutes=minutes,
                                  eval_interval=args.eval_interval, eval_batches=args.eval_batches, seed=args.seed,
                                  workers=args.workers)
        except ValueError as e:
            raise GPTError(str(e).splitlines()[0]) from None
        dtype = np.dtype(args.dtype).type
        token_spec = tokenizer.spec()
    train, val = (TokenStream(os.path.join(out, f"{name}.bin")) for name in ("train", "val"))
    model = GPT(config, seed=tconfig.seed, dtype=dtype).to(device)  # built on the host (the same on any device)
    extra_out = {"tokenizer": token_spec, "corpus": os.fspath(corpus), "dtype": np.dtype(dtype).name}
    trainer = Trainer(model, train, val, tconfig, checkpoint_path=ckpt, extra=extra_out)
    if args.resume:
        trainer.resume(ckpt)
        print(f"resuming at step {trainer.step_count} of {trainer.total_steps}")
    print(f"model: {model.num_parameters():,} parameters ({config.n_layers} layer(s), d_model {config.d_model}, "
          f"{config.n_heads} heads, context {config.context_length}, vocabulary {config.vocab_size}); "
          f"{len(train):,} training and {len(val):,} validation tokens")
    if trainer.processes > 1:
        print(f"training in {trainer.processes} processes, each on its share of every batch (--workers 1: one)")
    start = time.perf_counter()
    try:
        history = trainer.fit(progress=not args.quiet)
    except KeyboardInterrupt:
        print(f"\ninterrupted; the last checkpoint is in {ckpt} (continue with --resume)", file=sys.stderr)
        return 130
    seconds = time.perf_counter() - start
    tps = history["tokens_per_s"][-1] if history["tokens_per_s"] else float("nan")
    print(f"step {trainer.step_count}: training loss {history['train_loss'][-1]:.3f}, validation loss "
          f"{history['val_loss'][-1]:.3f}, {tps:,.0f} tokens/s, {seconds:.0f} s")
    print(f"checkpoint: {ckpt}")
    png = os.path.join(out, "loss.png")
    if plot_loss_curve(history, png, title=f"GPT on {os.path.basename(os.path.normpath(str(corpus)))} sources"):
        print(f"loss curve: {png}")
    else:
        print("loss curve skipped (pip install matplotlib)")
    return 0


# -- sample -----------------------------------------------------------------------------------------
def sample_command(args: argparse.Namespace) -> int:
    from .checkpoint import load_gpt

    if args.tokens < 0:
        raise GPTError(f"--tokens must be >= 0, got {args.tokens}")
    if args.temperature < 0:
        raise GPTError(f"--temperature must be >= 0, got {args.temperature}")
    if args.top_p is not None and not 0.0 < args.top_p <= 1.0:
        raise GPTError(f"--top-p must be in (0, 1], got {args.top_p}")
    device = _device(args.device)
    model, tokenizer, _ = load_gpt(args.checkpoint)
    model.to(device)
    if not args.prompt:
        raise GPTError("the prompt is empty; give at least one character with --prompt")
    ids = tokenizer.encode(args.prompt)
    out = model.generate(np.array([ids], dtype=np.int64), args.tokens, temperature=args.temperature,
                         top_k=args.top_k, top_p=args.top_p, seed=args.seed, use_cache=not args.no_cache)
    text = tokenizer.decode(out[0].tolist())
    if hasattr(sys.stdout, "reconfigure"):
        try:
            sys.stdout.reconfigure(errors="replace")
        except (ValueError, OSError):
            pass
    print(text)
    return 0
