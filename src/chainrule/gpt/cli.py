"""``chainrule gpt train`` and ``chainrule gpt sample``: the command-line face of :mod:`chainrule.gpt`.

A problem the user can fix ends the command with one line on stderr, never a traceback: a bad
option value (a negative seed, a budget of ``inf`` minutes) with exit status 2, naming the option,
the value and the range; anything else (a bad corpus path, a damaged checkpoint, a size that needs
more memory than the machine has, a full disk, a run that diverged) with exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

import numpy as np

from ..distributed import processes as dist_processes
from .averaging import from_rank0, launch_rank
from .errors import GPTError
from .options import (
    Given,
    GivenFlag,
    HelpFormatter,
    OneLineParser,
    fraction,
    minutes,
    nonnegative_float,
    nonnegative_int,
    port_number,
    positive_float,
    positive_int,
)

TRAIN_HELP = """\
Train a small GPT on source code, then write under --out:
  checkpoint.npz   model, optimiser, schedule, data position, configs, tokenizer (safe .npz)
  tokenizer.json   the BPE tokenizer (with --tokenizer bpe), for the `tokenizers` library
  train.bin, val.bin  the corpus as token ids (memory-mapped while training)
  loss.png         the loss curve (needs matplotlib)
The default corpus is the Python standard library of this interpreter: no download.
Continue an interrupted run with --resume (same --out)."""

COMPLETE_HELP = """\
Complete the code block at the end of FILE (or of standard input) with a trained GPT and print only
the completion. It stops where the block ends: at a generated line indented less than the block,
at a blank line after a complete statement, or after --max-tokens tokens. Greedy unless
--temperature is above 0. Without --checkpoint it uses the run `chainrule gpt train` writes by default."""

SERVE_HELP = """\
Answer HTTP completion requests with a trained GPT in the shape editors' completion plugins speak
(OpenAI's API): POST /v1/completions with {"prompt": "...", "max_tokens": 16, "temperature": 1,
"top_p": 1, "stop": [...], "stream": false, "seed": null}, and GET /v1/models. One request is
served at a time. Without --checkpoint it serves the run `chainrule gpt train` writes by default."""

SAMPLE_HELP = """\
Continue a prompt with a trained GPT (key/value cache: one forward step per new token).
Without --checkpoint it samples the run `chainrule gpt train` writes by default (gpt-run/checkpoint.npz)."""

DEFAULT_OUT = "gpt-run"
def _sub_parser(cmds: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    p = cmds.add_parser(name, formatter_class=HelpFormatter, **kwargs)
    p.register("action", None, Given)
    p.register("action", "store", Given)
    p.register("action", "store_true", GivenFlag)
    return p


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
                         description="A small GPT on source code: `chainrule gpt train`, `chainrule gpt sample`, "
                                     "`chainrule gpt complete`, `chainrule gpt serve`.")
    gpt.set_defaults(gpt_parser=gpt)
    cmds = gpt.add_subparsers(dest="gpt_command", metavar="{train,sample,complete,serve}", parser_class=OneLineParser)
    t = _sub_parser(cmds, "train", help="train a GPT (default: the standard library's sources)", description=TRAIN_HELP)
    t.add_argument("--minutes", type=minutes, default=None,
                   help="wall-clock budget; the schedule (validations included) is fitted to it and its decay ends "
                        "at the deadline; with --steps only a cap (default: 5 without --steps, else none)")
    t.add_argument("--steps", type=positive_int, default=None,
                   help="optimiser steps, the schedule's length (default: fitted to --minutes)")
    t.add_argument("--corpus", metavar="DIR", default=None,
                   help="folder of .py files (default: the standard library of this Python)")
    t.add_argument("--max-bytes", type=positive_int, default=4_000_000, help="corpus size cap in bytes")
    t.add_argument("--out", metavar="DIR", default=DEFAULT_OUT, help="output folder")
    t.add_argument("--tokenizer", choices=["byte", "bpe"], default="byte",
                   help="byte: 256 tokens, never unknown; bpe: trained on the corpus (needs `tokenizers`)")
    t.add_argument("--vocab-size", type=positive_int, default=1024, help="BPE vocabulary size (with --tokenizer bpe)")
    t.add_argument("--layers", type=positive_int, default=4, help="transformer blocks")
    t.add_argument("--d-model", type=positive_int, default=128, help="width of the model")
    t.add_argument("--heads", type=positive_int, default=4, help="attention heads (must divide --d-model)")
    t.add_argument("--context", type=positive_int, default=128, help="tokens the model sees at once")
    t.add_argument("--recipe", choices=["gpt2", "modern"], default="modern",
                   help="modern: RMSNorm, rotary positions, SwiGLU MLP, no biases (lower validation loss after 5 "
                        "minutes, docs/gpt.md#quality); gpt2: LayerNorm, learned positions, GELU MLP, biases (the "
                        "four options below change one choice each) (default: 'modern')")
    t.add_argument("--norm", choices=["layer", "rms"], default=None, help="normalisation (default: the recipe's)")
    t.add_argument("--mlp", choices=["gelu", "swiglu"], default=None, help="MLP kind (default: the recipe's)")
    t.add_argument("--position", choices=["learned", "rope"], default=None,
                   help="learned position embedding or rotary positions (default: the recipe's)")
    t.add_argument("--bias", choices=["on", "off"], default=None,
                   help="biases in Linear and LayerNorm layers (default: the recipe's)")
    t.add_argument("--kv-heads", type=positive_int, default=None,
                   help="key/value heads, dividing --heads; fewer is grouped-query attention (default: --heads)")
    t.add_argument("--rope-theta", type=positive_float, default=10000.0, help="base of the rotary angles")
    t.add_argument("--dropout", type=fraction(low_open=False), default=0.0, help="dropout probability")
    t.add_argument("--batch-size", type=positive_int, default=32, help="windows per micro-batch")
    t.add_argument("--accum", type=positive_int, default=1, help="micro-batches per optimiser step")
    t.add_argument("--lr", type=positive_float, default=3e-3,
                   help="peak learning rate (the cosine ends at a tenth of it)")
    t.add_argument("--warmup", type=nonnegative_int, default=50, help="linear warm-up steps")
    t.add_argument("--eval-interval", type=positive_int, default=100,
                   help="steps between validations (each writes a checkpoint)")
    t.add_argument("--eval-batches", type=positive_int, default=8, help="batches per validation")
    t.add_argument("--dtype", choices=["float32", "float64"], default="float32", help="floating-point type")
    t.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the weights, data order and dropout")
    t.add_argument("--workers", type=positive_int, default=None,
                   help="processes sharing each batch (default: one per core, up to 4, for models big enough to gain)")
    t.add_argument("--resume", action="store_true",
                   help="continue the run saved in --out (options that would change it are refused)")
    t.add_argument("--device", default="cpu", help=_DEVICE_HELP)
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    s = _sub_parser(cmds, "sample", help="continue a prompt with a trained GPT", description=SAMPLE_HELP)
    _add_checkpoint(s)
    s.add_argument("--prompt", default="def ", help="text to continue")
    s.add_argument("--tokens", type=nonnegative_int, default=200, help="new tokens")
    s.add_argument("--max-tokens", "--max-new-tokens", dest="tokens", type=nonnegative_int, default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS)  # (complete's name, and nanoGPT's: the same)
    _add_sampling(s, temperature=0.8)
    s.add_argument("--no-cache", action="store_true", help="rerun the whole window for every token")
    s.add_argument("--device", default="cpu", help=_DEVICE_HELP)
    c = _sub_parser(cmds, "complete", help="complete the code block at the end of a file", description=COMPLETE_HELP)
    c.add_argument("file", metavar="FILE", nargs="?", default=None, help="code to complete (default: standard input)")
    _add_model_options(c)
    v = _sub_parser(cmds, "serve", help="answer completion requests over HTTP (OpenAI's /v1/completions)",
                    description=SERVE_HELP)
    _add_checkpoint(v)
    v.add_argument("--port", type=port_number, default=8000, help="TCP port (0: any free one, printed)")
    v.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (the default answers this machine only; 0.0.0.0 opens it to the network)")
    v.add_argument("--model-name", default=None,
                   help="the model's name in replies and /v1/models (default: the run folder's name)")
    v.add_argument("--quiet", action="store_true", help="no line per request on stderr")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """--checkpoint and the sampling options of `complete` (greedy by default)."""
    _add_checkpoint(p)
    p.add_argument("--max-tokens", type=positive_int, default=128, help="most tokens to generate")
    _add_sampling(p, temperature=0.0)


def _add_checkpoint(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", metavar="PATH", default=None,
                   help=f"checkpoint.npz written by `gpt train`, or its --out folder (default: "
                        f"{DEFAULT_OUT}/checkpoint.npz, where `gpt train` writes by default)")


def _add_sampling(p: argparse.ArgumentParser, temperature: float) -> None:
    """The sampling options that `sample` and `complete` share (their default temperatures differ)."""
    p.add_argument("--temperature", type=nonnegative_float, default=temperature,
                   help="softmax temperature (0: always the most likely token)")
    p.add_argument("--top-k", type=positive_int, default=None,
                   help="sample among the k most likely tokens (default: all)")
    p.add_argument("--top-p", type=fraction(low_open=True), default=None,
                   help="sample among the most likely tokens holding this probability (default: all)")
    p.add_argument("--seed", type=nonnegative_int, default=0, help="seed of the sampling")


COMMANDS = {"train": "train_command", "sample": "sample_command", "complete": "complete_command",
            "serve": "serve_command"}


def run_gpt(args: argparse.Namespace) -> int:
    """Run ``chainrule gpt ...``; returns the exit status (1 with a one-line message on a user error)."""
    if args.gpt_command is None:
        args.gpt_parser.print_help()
        return 2
    try:
        return globals()[COMMANDS[args.gpt_command]](args)
    except GPTError as e:
        message = str(e)
    except OSError as e:  # a full disk, a folder that went away: one line, not a traceback
        where = e.filename or getattr(args, "out", None) or getattr(args, "checkpoint", None) or "?"
        fix = "free some space or pick another --out" if args.gpt_command == "train" else "check the file"
        message = f"{e.strerror or e} on {where!r}; {fix}"
    except MemoryError:
        message = "ran out of memory; use smaller sizes (--batch-size, --layers, --d-model, --context, --tokens)"
    print(f"chainrule gpt {args.gpt_command}: error: {message}", file=sys.stderr)
    from .averaging import end_job_if_mpi

    end_job_if_mpi(1)
    return 1


def _prepare_out(out: str) -> bool:
    """Make ``out`` (True if this made it) after checking files can be written there."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise GPTError(f"--out {out!r} is a file, not a folder; pick a folder (it is made if missing)")
    made = not os.path.exists(out)
    try:
        os.makedirs(out, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".chainrule-probe-")
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        if made and os.path.isdir(out) and not os.listdir(out):
            os.rmdir(out)
        raise GPTError(f"cannot write under --out {out!r} ({e.strerror or e}); pick a folder you can write to") \
            from None
    return made


def _check_training_fits(config: Any, batch_size: int, dtype: Any) -> None:
    from .memory import check_fits, training_bytes

    needed = training_bytes(config, batch_size, np.dtype(dtype).itemsize)
    sizes = (f"--layers {config.n_layers} --d-model {config.d_model} --context {config.context_length} "
             f"--batch-size {batch_size}")
    check_fits(f"training with {sizes}", needed, "use smaller values")


# -- train ------------------------------------------------------------------------------------------
def _resolve_recipe(args: argparse.Namespace) -> None:
    """Fill the recipe choices left unset with --recipe's (so the run records what it trains)."""
    from ..nn.language_model.model import RECIPES

    chosen = RECIPES[args.recipe]
    for name in ("norm", "mlp", "position"):
        if getattr(args, name) is None:
            setattr(args, name, chosen[name])
    if args.bias is None:
        args.bias = "on" if chosen["bias"] else "off"


def _model_fields(args: argparse.Namespace) -> dict[str, Any]:
    return dict(context_length=args.context, d_model=args.d_model, n_heads=args.heads, n_layers=args.layers,
                dropout=args.dropout, norm=args.norm, mlp=args.mlp, position=args.position, bias=args.bias == "on",
                n_kv_heads=args.kv_heads, rope_theta=args.rope_theta)


def train_command(args: argparse.Namespace) -> int:
    from ..nn.language_model.model import GPT, GPTConfig
    from .checkpoint import check_model_state, read_checkpoint
    from .corpus import default_corpus_dir, read_corpus
    from .dataset import TokenStream, write_tokens
    from .plotting import plot_loss_curve
    from .resuming import apply_schedule_options, recorded_options, refuse_changes
    from .tokens import ByteTokenizer, train_bpe
    from .training import UNFIXED, TrainConfig, Trainer

    device = _device(args.device)
    out = args.out
    ckpt = os.path.join(out, "checkpoint.npz")
    rank = launch_rank()  # under mpiexec: rank 0 prepares, prints and writes; the others train along
    if rank:
        sys.stdout = open(os.devnull, "w")  # (for the rest of this process: rank 0 speaks for all)
    if os.path.exists(out) and not os.path.isdir(out):
        raise GPTError(f"--out {out!r} is a file, not a folder; pick a folder (it is made if missing)")
    if rank:
        config, tconfig, dtype, token_spec, corpus, options = from_rank0(None)
    elif args.resume:
        state = read_checkpoint(ckpt)
        extra = state["extra"]
        try:
            config = GPTConfig(**extra["model_config"])
            tconfig = TrainConfig.from_dict(extra["train_config"])
        except (KeyError, TypeError, ValueError) as e:
            raise GPTError(f"checkpoint {ckpt!r} is damaged: {str(e).splitlines()[0] if str(e) else e!r}") from None
        check_model_state(config, state["model"], ckpt)
        refuse_changes(args, extra)
        tconfig.workers = args.workers  # how this machine runs it, not part of the run
        dtype = np.float64 if extra.get("dtype") == "float64" else np.float32
        token_spec, corpus = extra.get("tokenizer"), extra.get("corpus", "?")
        options = extra.get("cli_options", {})
        _check_training_fits(config, tconfig.batch_size, dtype)
    else:
        if os.path.exists(ckpt):
            raise GPTError(f"{out!r} already holds a run; continue it with --resume or pick another --out")
        dtype = np.dtype(args.dtype).type
        vocab = 256 if args.tokenizer == "byte" else args.vocab_size  # BPE: at most this many
        _resolve_recipe(args)
        try:
            config = GPTConfig(vocab_size=vocab, **_model_fields(args))
        except ValueError as e:
            raise GPTError(str(e).splitlines()[0]) from None
        _check_training_fits(config, args.batch_size, dtype)
        made = _prepare_out(out)
        try:
            corpus = default_corpus_dir() if args.corpus is None else args.corpus
            skipped: list[str] = []
            texts = read_corpus(corpus, max_bytes=args.max_bytes, skipped=skipped)
            if skipped:
                print(f"skipped {len(skipped)} corpus entr{'y' if len(skipped) == 1 else 'ies'} that are not regular "
                      f"files (named pipes, dangling links, ...), e.g. {skipped[0]!r}", file=sys.stderr)
            size = sum(len(t.encode("utf-8")) for t in texts)
            print(f"corpus: {len(texts)} files, {size / 1e6:.2f} MB from {corpus}")
            if args.tokenizer == "bpe":
                tokenizer: Any = train_bpe(texts, vocab_size=args.vocab_size)
                with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as fh:
                    fh.write(tokenizer.to_json())
            else:
                tokenizer = ByteTokenizer()
            write_tokens(texts, tokenizer, out, val_fraction=0.1)
        except GPTError:
            if made and not os.listdir(out):
                os.rmdir(out)  # a failed start leaves nothing behind
            raise
        try:
            config = GPTConfig(vocab_size=tokenizer.vocab_size, **_model_fields(args))
            minutes = args.minutes if args.minutes is not None or args.steps is not None else 5.0
            warmup = min(args.warmup, args.steps - 1) if args.steps is not None else args.warmup
            tconfig = TrainConfig(batch_size=args.batch_size, accum_steps=args.accum, lr=args.lr, min_lr=args.lr / 10,
                                  warmup_steps=max(warmup, 0), max_steps=args.steps, minutes=minutes,
                                  eval_interval=args.eval_interval, eval_batches=args.eval_batches, seed=args.seed,
                                  workers=args.workers)
        except ValueError as e:
            raise GPTError(str(e).splitlines()[0]) from None
        token_spec = tokenizer.spec()
        options = recorded_options(args)
    if rank == 0:
        from_rank0((config, tconfig, dtype, token_spec, corpus, options))
    train, val = (TokenStream(os.path.join(out, f"{name}.bin")) for name in ("train", "val"))
    model = GPT(config, seed=tconfig.seed, dtype=dtype).to(device)  # built on the host (the same on any device)
    extra_out = {"tokenizer": token_spec, "corpus": os.fspath(corpus), "dtype": np.dtype(dtype).name,
                 "cli_options": options}
    trainer = Trainer(model, train, val, tconfig, checkpoint_path=ckpt, extra=extra_out)
    if args.resume:
        trainer.resume(ckpt)
        notes = apply_schedule_options(args, trainer, UNFIXED)
        shown = "?" if trainer.total_steps >= UNFIXED else trainer.total_steps
        print(f"resuming at step {trainer.step_count} of {shown} with the saved model, data and training options"
              + (f"; {notes}" if notes else ""))
    print(f"model: {model.num_parameters():,} parameters ({config.recipe} recipe, {config.n_layers} layer(s), "
          f"d_model {config.d_model}, {config.n_heads} heads, context {config.context_length}, "
          f"vocabulary {config.vocab_size}); "
          f"{len(train):,} training and {len(val):,} validation tokens")
    if trainer.mpi:
        print(f"training in {trainer.processes} MPI ranks, each on its share of every batch; their processes: "
              + ", ".join(f"rank {r} = {pid} on {host}" for r, (pid, host) in enumerate(dist_processes())))
    elif trainer.processes > 1:
        print(f"training in {trainer.processes} processes, each on its share of every batch (--workers 1: one)")
    start = time.perf_counter()
    try:
        history = trainer.fit(progress=not args.quiet)
    except KeyboardInterrupt:
        print(f"\ninterrupted; the last checkpoint is in {ckpt} (continue with --resume)", file=sys.stderr)
        return 130
    except OSError as e:
        kept = (f"the last checkpoint (step {trainer.saved_step}) is kept in {ckpt} (continue with --resume)"
                if trainer.saved_step is not None else "no checkpoint was written")
        raise GPTError(f"{e.strerror or e} on {e.filename or out!r}; {kept}; free some space first") from None
    if rank:
        return 0
    seconds = time.perf_counter() - start
    tps = history["tokens_per_s"][-1] if history["tokens_per_s"] else float("nan")
    train_loss = f"{history['train_loss'][-1]:.3f}" if history["train_loss"] else "-"
    print(f"step {trainer.step_count}: training loss {train_loss}, validation loss "
          f"{history['val_loss'][-1]:.3f}, {tps:,.0f} tokens/s, {seconds:.0f} s")
    print(f"checkpoint: {ckpt}")
    png = os.path.join(out, "loss.png")
    if plot_loss_curve(history, png, title=f"GPT on {os.path.basename(os.path.normpath(str(corpus)))} sources"):
        print(f"loss curve: {png}")
    else:
        print("loss curve skipped (pip install matplotlib)")
    return 0


# -- sample -----------------------------------------------------------------------------------------
def _checkpoint_path(args: argparse.Namespace) -> str:
    """``--checkpoint`` (a file, or a run folder), else the default run, said on stderr."""
    path = args.checkpoint if args.checkpoint is not None else os.path.join(DEFAULT_OUT, "checkpoint.npz")
    if os.path.isdir(path):
        path = os.path.join(path, "checkpoint.npz")
    if args.checkpoint is None:
        if not os.path.exists(path):
            raise GPTError(f"no --checkpoint given and the default run {path!r} does not exist here; train one with "
                           "`chainrule gpt train`, or pass --checkpoint PATH")
        verb = "sampling" if args.gpt_command == "sample" else "using"
        print(f"{verb} the default run {path} (--checkpoint picks another)", file=sys.stderr)
    return path


def sample_command(args: argparse.Namespace) -> int:
    from .checkpoint import load_gpt
    from .memory import check_fits, sampling_bytes

    try:
        args.prompt.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(args.prompt[e.start])
        what = f"the byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise GPTError(f"--prompt holds {what} at position {e.start}, which is not UTF-8 text; give UTF-8 text") \
            from None
    device = _device(args.device)
    if not args.prompt:
        raise GPTError("the prompt is empty; give at least one character with --prompt")
    model, tokenizer, _ = load_gpt(_checkpoint_path(args))
    model.to(device)
    itemsize = model.wte.weight._data.dtype.itemsize
    check_fits(f"sampling --tokens {args.tokens}", sampling_bytes(model.config, args.tokens, itemsize),
               "ask for fewer --tokens")
    ids = tokenizer.encode(args.prompt)
    try:
        out = model.generate(np.array([ids], dtype=np.int64), args.tokens, temperature=args.temperature,
                             top_k=args.top_k, top_p=args.top_p, seed=args.seed, use_cache=not args.no_cache)
    except ValueError as e:  # non-finite probabilities: one line
        raise GPTError(str(e).splitlines()[0]) from None
    text = tokenizer.decode(out[0].tolist())
    _print_text(text)
    return 0


def _print_text(text: str) -> None:
    """Print generated text; bytes the terminal cannot show become replacement characters, not an error."""
    if hasattr(sys.stdout, "reconfigure"):
        try:
            sys.stdout.reconfigure(errors="replace")
        except (ValueError, OSError):
            pass
    print(text)


# -- complete ---------------------------------------------------------------------------------------
def _read_code(args: argparse.Namespace) -> str:
    """FILE's text, or standard input's; one line of error for a missing file or text that is not UTF-8."""
    where = "standard input" if args.file is None else repr(args.file)
    try:
        if args.file is None:
            data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
        else:
            with open(args.file, "rb") as fh:
                data = fh.read()
        code = data.decode("utf-8")
    except FileNotFoundError:
        raise GPTError(f"{where} does not exist; give the file to complete, or pipe the code in") from None
    except IsADirectoryError:
        raise GPTError(f"{where} is a folder; give a file to complete") from None
    except UnicodeDecodeError as e:
        raise GPTError(f"{where} is not UTF-8 text (byte 0x{data[e.start]:02x} at {e.start})") from None
    if not code.strip():
        raise GPTError(f"{where} holds no code to complete")
    return code


def complete_command(args: argparse.Namespace) -> int:
    from .checkpoint import load_gpt
    from .completion import Completion
    from .memory import check_fits, sampling_bytes

    code = _read_code(args)
    model, tokenizer, _ = load_gpt(_checkpoint_path(args))
    itemsize = model.wte.weight._data.dtype.itemsize
    check_fits(f"completing --max-tokens {args.max_tokens}", sampling_bytes(model.config, args.max_tokens, itemsize),
               "ask for fewer --max-tokens")
    try:
        text = str(Completion(model, tokenizer, code, args.max_tokens, args.temperature, args.top_k, args.top_p,
                              args.seed, block=True))
    except ValueError as e:  # non-finite probabilities: one line
        raise GPTError(str(e).splitlines()[0]) from None
    _print_text(text)
    return 0


# -- serve ------------------------------------------------------------------------------------------
def serve_command(args: argparse.Namespace) -> int:
    from .checkpoint import load_gpt
    from .server import make_server, serve

    path = _checkpoint_path(args)
    model, tokenizer, _ = load_gpt(path)
    name = args.model_name or os.path.basename(os.path.dirname(os.path.abspath(path))) or "chainrule-gpt"
    try:
        server = make_server(model, tokenizer, name, host=args.host, port=args.port, quiet=args.quiet)
    except OSError as e:
        raise GPTError(f"cannot listen on {args.host}:{args.port} ({e.strerror or e}); pick another --port "
                       "(0: any free one)") from None
    serve(server)
    return 0
