"""How good a GPT trained for a fixed wall-clock budget is, in chainrule and in its PyTorch twin
(same recipe, data, tokenizer, initial weights, data order, schedule and budget), each library in a
process of its own, both at the same time (so both see the same load):

- bits per byte on the held-out standard-library files: the files ``chainrule gpt train`` keeps
  for validation (one in ten, spread over the corpus, never trained on; same ``--max-bytes``), every
  token of them predicted once, in windows of the context length;
- for ``--functions`` functions never trained on (from the held-out files, then from standard-library
  files the capped corpus never read; signature and docstring as the prompt, at most ``--body-lines``
  lines after the docstring), greedy completions cut where ``chainrule gpt complete`` cuts them (the
  dedent): the share that make the function parse with a body (``ast.parse``) and the share whose
  first line after the docstring is the original's.

``--checkpoint PATH`` evaluates a run of ``chainrule gpt train`` instead (its tokenizer, corpus and
``--max-bytes``: the files it held out). ``--tiny`` runs in seconds. ``--threads`` sets BLAS's and
torch's threads in each process (default 1). The script prints the load average next to the figures.

    python bench/bench_gpt_quality.py [--tiny] [--minutes 10] [--recipe modern] [--tokenizer byte]
                                      [--library both|chainrule|torch] [--checkpoint RUN] [--json FILE]

The defaults are ``chainrule gpt train``'s (the modern recipe, byte tokens, 4 layers, d_model 128).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from _harness import available, parser  # noqa: E402

LIBRARIES = ("chainrule", "torch")


# -- the held-out data ----------------------------------------------------------------------------
def held_out(docs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The documents ``write_tokens`` puts in validation (``chainrule gpt train``'s split)."""
    from chainrule.gpt.dataset import validation_documents

    return [d for d, is_val in zip(docs, validation_documents(len(docs), 0.1)) if is_val]


def untrained_files(root: str | None, docs: list[tuple[str, str]]) -> Any:
    """The corpus folder's files a run with the corpus ``docs`` never read (its cap skipped them), as
    ``(path, text)`` pairs in a fixed shuffled order (so the first ones already span the folder)."""
    import numpy as np

    from chainrule.gpt import corpus_files, default_corpus_dir

    read = {path for path, _ in docs}
    others = [p for p in corpus_files(root if root is not None else default_corpus_dir()) if p not in read]
    for i in np.random.default_rng(0).permutation(len(others)):
        try:
            with open(others[i], encoding="utf-8") as fh:
                yield others[i], fh.read()
        except (UnicodeDecodeError, OSError):
            continue


def functions(docs: Any, n: int, body_lines: int, tokenizer: Any = None,
              per_file: int | None = None) -> list[dict[str, Any]]:
    """``n`` functions spread evenly over ``docs`` (``(path, text)`` pairs; with ``per_file``, at most
    that many from each file, files read in order until there are ``n``), each with a docstring and at
    most ``body_lines`` lines after it: the prompt (from ``def`` to the docstring's end, dedented to
    column 0), the original rest and its first non-blank line. With a ``tokenizer``, only functions it
    can encode (a BPE tokenizer refuses characters its corpus never had)."""
    found: list[dict[str, Any]] = []
    for path, text in docs:
        if per_file is not None and len(found) >= n:
            break
        mine = sorted(_file_functions(path, text, body_lines, tokenizer), key=lambda f: f["line"])
        found += mine if per_file is None else _spread(mine, per_file)
    if per_file is not None:
        return found[:n]
    return _spread(sorted(found, key=lambda f: (f["path"], f["line"])), n)


def _spread(items: list[Any], n: int) -> list[Any]:
    return items if len(items) <= n else [items[i * len(items) // n] for i in range(n)]


def _file_functions(path: str, text: str, body_lines: int, tokenizer: Any) -> list[dict[str, Any]]:
    from chainrule.gpt import GPTError

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    lines, found = text.splitlines(), []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or len(node.body) < 2:
            continue
        doc = node.body[0]
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)) or node.body[1].lineno <= doc.end_lineno:
            continue
        col = node.col_offset
        own = lines[node.lineno - 1: node.end_lineno]
        if any("\t" in line or line[:col].strip() for line in own):
            continue
        own = [line[col:] for line in own]
        cut = doc.end_lineno - node.lineno + 1
        prompt, rest = "\n".join(own[:cut]) + "\n", "\n".join(own[cut:]) + "\n"
        body = [line for line in rest.splitlines() if line.strip()]
        if not body or len(rest.splitlines()) > body_lines:
            continue
        try:
            ast.parse(prompt + rest)
            if tokenizer is not None:
                tokenizer.encode(prompt + rest)
        except (SyntaxError, GPTError):
            continue
        found.append({"path": path, "line": node.lineno, "prompt": prompt, "original": rest,
                      "first_line": body[0].strip()})
    return found


def prepare(args: Any, folder: str) -> None:
    """Corpus, tokenizer, token files and held-out functions under ``folder``, for both libraries."""
    from chainrule.gpt import ByteTokenizer, corpus_documents, train_bpe, write_tokens

    if args.checkpoint:  # the run's own corpus and cap: the files it held out
        from chainrule.gpt import load_gpt

        _, tokenizer, extra = load_gpt(args.checkpoint)
        options = extra.get("cli_options") or {}
        args.corpus = options.get("corpus") or extra.get("corpus") or args.corpus
        args.max_bytes = int(options.get("max_bytes") or args.max_bytes)
    docs = corpus_documents(args.corpus, max_bytes=args.max_bytes)
    if not args.checkpoint:
        texts = [t for _, t in docs]
        tokenizer = train_bpe(texts, args.vocab_size) if args.tokenizer == "bpe" else ByteTokenizer()
    write_tokens([t for _, t in docs], tokenizer, folder, val_fraction=0.1)
    kept = held_out(docs)
    chosen = functions(kept, args.functions, args.body_lines, tokenizer)
    more = functions(untrained_files(args.corpus, docs), args.functions - len(chosen), args.body_lines, tokenizer,
                     per_file=3) if len(chosen) < args.functions else []
    meta = {"tokenizer": tokenizer.spec(), "files": len(docs), "held_out_files": len(kept),
            "held_out_bytes": sum(len(t.encode()) for _, t in kept), "functions": chosen + more,
            "functions_from_held_out": len(chosen)}
    with open(os.path.join(folder, "meta.json"), "w") as fh:
        json.dump(meta, fh)


# -- one library's run ---------------------------------------------------------------------------
class _TorchCache(dict):
    @property
    def length(self) -> int:
        return int(self["k"].shape[2]) if "k" in self else 0


class TorchLM:
    """The torch twin seen as ``completion.iter_tokens`` sees a chainrule GPT (cache, logits as arrays)."""

    def __init__(self, torch: Any, model: Any) -> None:
        self.torch, self.model, self.config = torch, model, model.config

    def eval(self) -> None:
        self.model.eval()

    def new_caches(self, n: int) -> list[_TorchCache]:
        return [_TorchCache() for _ in self.model.blocks]

    def sampling_logits(self, ids: Any, caches: list[_TorchCache]) -> Any:
        with self.torch.no_grad():
            return self.model(self.torch.from_numpy(ids), caches).numpy()

    def forward_logits(self, x: Any) -> Any:
        with self.torch.no_grad():
            return self.model(self.torch.from_numpy(x)).numpy()


def bits_per_byte(logits_of: Any, tokens: Any, tokenizer: Any, context: int, batch: int, limit: int | None) -> float:
    """Bits per byte over ``tokens`` (every token after the first predicted once, in windows of
    ``context``): the summed negative log-likelihood in bits over the UTF-8 bytes the targets stand for."""
    import numpy as np

    if tokenizer.kind == "bpe":  # byte-level BPE: one character of a token's text per byte
        inner = tokenizer.tokenizer
        nbytes = np.array([len(inner.id_to_token(i)) for i in range(tokenizer.vocab_size)], dtype=np.int64)
    else:
        nbytes = np.ones(256, dtype=np.int64)
    tokens = np.asarray(tokens[: limit + 1] if limit else tokens, dtype=np.int64)
    n = (len(tokens) - 1) // context
    nll, count = 0.0, 0
    for start in range(0, n, batch):
        rows = range(start, min(n, start + batch))
        x = np.stack([tokens[r * context: (r + 1) * context] for r in rows])
        y = np.stack([tokens[r * context + 1: (r + 1) * context + 1] for r in rows])
        logits = np.asarray(logits_of(x), dtype=np.float64)
        logits -= logits.max(-1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        nll -= np.take_along_axis(logp, y[..., None], -1).sum()
        count += int(nbytes[y].sum())
    return nll / np.log(2.0) / count


def complete_all(model: Any, tokenizer: Any, funcs: list[dict[str, Any]], max_tokens: int) -> dict[str, Any]:
    """Greedy block completions of ``funcs``: the parse and first-line shares and every completion."""
    from chainrule.gpt.completion import Completion

    parsed = first = 0
    shown = []
    for f in funcs:
        text = str(Completion(model, tokenizer, f["prompt"], max_tokens=max_tokens, block=True))
        try:
            fn = ast.parse(f["prompt"] + text + "\n").body[0]
            ok = len(fn.body) >= 2  # a body beyond the docstring (an empty completion does not count)
        except (SyntaxError, ValueError, IndexError):
            ok = False
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        same = bool(lines) and lines[0] == f["first_line"]
        parsed, first = parsed + ok, first + same
        shown.append({"path": f["path"], "line": f["line"], "completion": text, "parses": ok, "first_line": same})
    n = max(1, len(funcs))
    return {"parse": parsed / n, "first_line_match": first / n, "completions": shown}


def run_library(args: Any) -> dict[str, Any]:
    """Train (or load) ``args.library``'s model and measure it; the figures as a dict."""
    import numpy as np

    from chainrule import nn
    from chainrule.core.state import no_grad
    from chainrule.gpt import TokenStream, TrainConfig, Trainer, load_gpt, tokenizer_from_spec

    try:
        from threadpoolctl import threadpool_info, threadpool_limits

        threadpool_limits(args.threads)
        kernel = ", ".join(f"{i.get('internal_api')} {i.get('architecture', '?')}" for i in threadpool_info())
    except ImportError:
        kernel = "?"
    with open(os.path.join(args.data, "meta.json")) as fh:
        meta = json.load(fh)
    tokenizer = tokenizer_from_spec(meta["tokenizer"])
    train, val = (TokenStream(os.path.join(args.data, f"{p}.bin")) for p in ("train", "val"))
    if args.checkpoint:
        model, _, extra = load_gpt(args.checkpoint)
        config, history = model.config, {"steps": [extra["step"]]}
    else:
        config = nn.GPTConfig.from_recipe(args.recipe, vocab_size=tokenizer.vocab_size, context_length=args.context,
                                          d_model=args.d_model, n_heads=args.heads, n_layers=args.layers,
                                          n_kv_heads=args.kv_heads)
        model = nn.GPT(config, seed=args.seed, dtype=np.float32)
    tconfig = TrainConfig(batch_size=args.batch_size, lr=args.lr, min_lr=args.lr / 10, warmup_steps=args.warmup,
                          max_steps=None, minutes=args.minutes, eval_interval=args.eval_interval, seed=args.seed,
                          workers=1)
    if args.library == "torch":
        torch = available("torch")
        if torch is None:
            return {"library": "torch", "skipped": "torch is not installed"}
        torch.set_num_threads(args.threads)
        import _torch_gpt
        import _torch_gpt_modern
        import _torch_train

        twin = _torch_gpt.TorchGPT(config) if config.recipe == "gpt2" else _torch_gpt_modern.TorchModernGPT(config)
        _torch_gpt.copy_weights(twin, model)  # the same initial weights
        start = time.perf_counter()
        history = _torch_train.train(torch, twin, train, val, tconfig, config.context_length)
        lm = TorchLM(torch, twin)
        twin.eval()
        logits_of = lm.forward_logits
        params = sum(p.numel() for p in twin.parameters())
    else:
        start = time.perf_counter()
        if not args.checkpoint:
            trainer = Trainer(model, train, val, tconfig)
            history = dict(trainer.fit(progress=False), steps=[trainer.step_count])
        lm, params = model, model.num_parameters()
        model.eval()

        def logits_of(x: Any) -> Any:
            with no_grad():
                return model(x)._data
    trained = time.perf_counter() - start if not args.checkpoint else float("nan")  # (trained elsewhere)
    t0 = time.perf_counter()
    bpb = bits_per_byte(logits_of, val.tokens, tokenizer, config.context_length,
                        args.batch_size, args.eval_tokens)
    t1 = time.perf_counter()
    completions = complete_all(lm, tokenizer, meta["functions"], args.max_tokens)
    return {"library": args.library, "recipe": config.recipe, "tokenizer": tokenizer.kind, "params": int(params),
            "steps": int(history["steps"][-1]), "train_s": trained,
            "tokens_per_s": history["steps"][-1] * args.batch_size * config.context_length / trained,
            "val_loss_history": list(zip(history.get("val_step", []), history.get("val_loss", []))),
            "bpb": float(bpb), "eval_s": t1 - t0, "complete_s": time.perf_counter() - t1,
            "functions": len(meta["functions"]), "kernel": kernel, **completions}


# -- both, side by side ----------------------------------------------------------------------------
def child_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "CHAINRULE_NUM_THREADS"):
        env[name] = str(threads)
    return env


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=10.0, help="training budget of each library")
    p.add_argument("--recipe", choices=["gpt2", "modern"], default="modern")
    p.add_argument("--tokenizer", choices=["byte", "bpe"], default="byte")
    p.add_argument("--vocab-size", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=None)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--eval-interval", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-bytes", type=int, default=4_000_000, help="corpus cap (as chainrule gpt train's)")
    p.add_argument("--corpus", default=None, help="corpus folder (default: the standard library)")
    p.add_argument("--functions", type=int, default=200, help="held-out functions to complete")
    p.add_argument("--body-lines", type=int, default=8, help="most lines after a chosen function's docstring")
    p.add_argument("--max-tokens", type=int, default=256, help="token budget of each completion")
    p.add_argument("--eval-tokens", type=int, default=None, help="held-out tokens scored (default: all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--checkpoint", default=None, help="evaluate this chainrule gpt train run (chainrule only)")
    p.add_argument("--library", choices=["both", *LIBRARIES], default="both",
                   help="both: each in its own process, at the same time")
    p.add_argument("--data", default=None, help=argparse_hidden())
    p.add_argument("--json", default=None, help="also write the figures (and every completion) here")
    args = p.parse_args(argv)
    if args.checkpoint and os.path.isdir(args.checkpoint):  # a run folder, as chainrule gpt takes it
        args.checkpoint = os.path.join(args.checkpoint, "checkpoint.npz")
    if args.tiny:
        args.minutes, args.layers, args.d_model, args.heads, args.context, args.batch_size = 0.03, 1, 32, 2, 32, 4
        args.functions, args.max_tokens, args.eval_tokens, args.max_bytes, args.warmup = 4, 16, 2048, 1_000_000, 2
    if args.data is not None:  # one library's process, started below
        print(json.dumps(run_library(args)))
        return
    given = list(argv if argv is not None else sys.argv[1:])
    rest = [a for i, a in enumerate(given)  # (without --library and its value: each process gets its own)
            if not a.startswith("--library") and not (i and given[i - 1] == "--library")]
    libraries = ("chainrule",) if args.checkpoint else LIBRARIES if args.library == "both" else (args.library,)
    with tempfile.TemporaryDirectory() as folder:
        prepare(args, folder)
        with open(os.path.join(folder, "meta.json")) as fh:
            meta = json.load(fh)
        load_before = os.getloadavg()
        # (each process writes to a file: a pipe would block a long report until the other process ends)
        logs = {lib: open(os.path.join(folder, f"{lib}.log"), "w+") for lib in libraries}
        procs = {lib: subprocess.Popen([sys.executable, __file__, *rest, "--library", lib, "--data", folder],
                                       stdout=logs[lib], stderr=subprocess.STDOUT, text=True,
                                       env=child_env(args.threads)) for lib in libraries}
        loads = []
        while any(proc.poll() is None for proc in procs.values()):
            loads.append(os.getloadavg()[0])
            time.sleep(0.2 if args.tiny else 10)
        results = []
        for lib, proc in procs.items():
            logs[lib].seek(0)
            out = logs[lib].read()
            logs[lib].close()
            if proc.wait():
                print(out[-3000:], file=sys.stderr)
                raise SystemExit(f"{lib}'s run failed")
            results.append(json.loads(out.strip().splitlines()[-1]))
    loads.append(os.getloadavg()[0])
    report(args, meta, results, load_before, loads)


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


def report(args: Any, meta: dict[str, Any], results: list[dict[str, Any]], before: Any, loads: list[float]) -> None:
    kernel = next((r.get("kernel") for r in results if r.get("kernel")), "?")
    what = f"checkpoint {args.checkpoint}" if args.checkpoint else (
        f"{args.recipe} recipe, {args.tokenizer} tokenizer, {args.layers} layers, d_model {args.d_model}, context "
        f"{args.context}, batch {args.batch_size}, lr {args.lr:g}, {args.minutes:g} min each"
        + (f", {args.kv_heads} kv heads" if args.kv_heads else ""))
    together = ", run at the same time" if len(results) > 1 else ""
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {what}; {args.threads} thread(s) per library"
          f"{together}; BLAS kernel: {kernel}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}")
    print(f"held out: {meta['held_out_files']} of {meta['files']} files ({meta['held_out_bytes']:,} bytes), "
          f"{len(meta['functions'])} functions ({meta['functions_from_held_out']} from them, the rest from files the "
          f"capped corpus never read); load average {before[0]:.1f} before, {sum(loads) / len(loads):.1f} "
          f"mean during, {max(loads):.1f} max")
    print(f"\n{'library':<11}{'params':>9}{'steps':>7}{'train s':>9}{'tok/s':>8}{'bits/byte':>11}{'parses':>8}"
          f"{'1st line':>10}")
    for r in results:
        if "skipped" in r:
            print(f"{r['library']:<11}  {r['skipped']}")
            continue
        print(f"{r['library']:<11}{r['params']:>9,}{r['steps']:>7}{r['train_s']:>9.0f}{r['tokens_per_s']:>8,.0f}{r['bpb']:>11.3f}"
              f"{100 * r['parse']:>7.0f}%{100 * r['first_line_match']:>9.0f}%")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "load_before": before, "loads": loads, "meta": meta, "results": results},
                      fh, indent=1)


if __name__ == "__main__":
    main()
