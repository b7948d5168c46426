"""GPT benchmark: chainrule vs PyTorch eager (CPU), the same model, data, optimiser and threads.

The model of the GPT issue: 4 layers, d_model 128, 4 heads, context 128, batch 32, float32,
byte tokens of the Python standard library, AdamW with weight-decay groups, warm-up + cosine,
clipping at 1.0 (one training step = ``chainrule.gpt.Trainer.step`` and its PyTorch twin in
bench/_torch_gpt.py). Each framework runs in its own subprocess (so peak memory and page faults
are its own), with 2 threads (``--threads``), and reports:

- training tokens/s: the median over ``--repeats`` timed blocks of steps, after warm-up steps.
  chainrule's Trainer splits each batch between ``--threads`` processes by default (forked workers,
  one thread each: chainrule.gpt.workers); ``--processes 1`` measures one process running
  ``--threads`` threads instead. PyTorch runs one process with ``--threads`` intra-op threads;
- peak memory: the process's peak resident set size (``ru_maxrss``), and its growth over the
  size before the first step (the interpreter and the framework's import are in the first); for
  chainrule with workers, the sum over all its processes (pages they share counted once each);
- minor page faults per training step (``ru_minflt``; each is the kernel handing out a fresh
  page, mostly for new large arrays), summed over the processes;
- sampling tokens/s: 16-token prompt, 100 new tokens, batch 1, with a key/value cache in both
  (the same loop: the prompt once, then one token per forward step);
- validation loss after ``--budget-seconds`` of training from the same initial weights (the
  schedule fitted to the budget from each one's own speed, as ``chainrule gpt train`` does).

    python bench/bench_gpt.py                       # the issue's figures (a few minutes)
    python bench/bench_gpt.py --budget-seconds 300  # the 5-minute validation-loss race
    python bench/bench_gpt.py --tiny                # seconds, for CI (tests/test_bench.py)
    python bench/bench_gpt.py --threads 1 --profile # and where a step's time goes, op by op
    python bench/bench_gpt.py --processes 1         # chainrule in one process, 2 threads per op
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
FULL = dict(n_layers=4, d_model=128, n_heads=4, context_length=128, batch=32, warmup=3, steps=5, new_tokens=100,
            prompt=16, corpus_bytes=1_500_000)
TINY = dict(n_layers=1, d_model=32, n_heads=2, context_length=32, batch=4, warmup=1, steps=3, new_tokens=10,
            prompt=4, corpus_bytes=40_000)
LR, WARMUP, EVAL_BATCHES, SEED = 3e-3, 20, 8, 0


def rss_mb() -> float:
    """The current resident set size (Linux /proc; else the peak so far)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return peak_mb()


def peak_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes on macOS, KiB on Linux


# -- one framework, in its own process -----------------------------------------------------------------
class ChainruleRun:
    def __init__(self, cfg: dict[str, Any], data: str, workers: int | None = None) -> None:
        import numpy as np

        from chainrule import nn
        from chainrule.gpt import TokenStream, TrainConfig, Trainer

        self.np = np
        self.config = nn.GPTConfig(vocab_size=256, context_length=cfg["context_length"], d_model=cfg["d_model"],
                                   n_heads=cfg["n_heads"], n_layers=cfg["n_layers"])
        self.model = nn.GPT(self.config, seed=SEED)
        self.train, self.val = TokenStream(os.path.join(data, "train.bin")), TokenStream(os.path.join(data, "val.bin"))
        self.cfg = cfg
        self._trainer = lambda minutes: Trainer(
            self.model, self.train, self.val,
            TrainConfig(batch_size=cfg["batch"], lr=LR, min_lr=LR / 10, warmup_steps=WARMUP,
                        max_steps=None if minutes else 10**6, minutes=minutes, eval_batches=EVAL_BATCHES,
                        eval_interval=10**9, seed=SEED, workers=workers),
        )
        self.trainer = self._trainer(None)

    def step(self) -> None:
        self.trainer.step()

    def workers_usage(self) -> tuple[float, int]:
        """(sum of the workers' peak resident MB, sum of their minor page faults so far)."""
        workers = self.trainer._workers
        usage = workers.usage if workers is not None else []
        return sum(mb for mb, _ in usage), sum(f for _, f in usage)

    def sample(self) -> None:
        prompt = self.np.arange(self.cfg["prompt"])[None, :] % 256
        self.model.generate(prompt, self.cfg["new_tokens"], seed=0, use_cache=True)

    def race(self, seconds: float) -> tuple[float, int]:
        from chainrule import nn

        self.model = nn.GPT(self.config, seed=SEED)  # the same initial weights as the torch run
        trainer = self._trainer(seconds / 60)
        history = trainer.fit(progress=False)
        return history["val_loss"][-1], trainer.step_count


class TorchRun:
    def __init__(self, cfg: dict[str, Any], data: str, threads: int) -> None:
        import numpy as np
        import torch

        sys.path.insert(0, HERE)
        import _torch_gpt as T

        from chainrule import nn
        from chainrule.gpt import TokenStream

        torch.set_num_threads(threads)
        self.np, self.torch, self.T, self.cfg = np, torch, T, cfg
        self.config = nn.GPTConfig(vocab_size=256, context_length=cfg["context_length"], d_model=cfg["d_model"],
                                   n_heads=cfg["n_heads"], n_layers=cfg["n_layers"])
        self.train, self.val = TokenStream(os.path.join(data, "train.bin")), TokenStream(os.path.join(data, "val.bin"))
        self.model, self.opt, self.sched, self.rng = self._fresh(10**6)

    def _fresh(self, total: int) -> tuple[Any, ...]:
        from chainrule import nn

        model = self.T.TorchGPT(self.config)
        self.T.copy_weights(model, nn.GPT(self.config, seed=SEED))
        opt = self.torch.optim.AdamW(self.T.torch_weight_decay_groups(model, 0.1), lr=LR, betas=(0.9, 0.95))
        sched = self.T.warmup_cosine(opt, WARMUP, total, eta_min=LR / 10)
        return model, opt, sched, self.np.random.default_rng(SEED)

    def _loss(self, model: Any, x: Any, y: Any) -> Any:
        torch = self.torch
        logits = model(torch.from_numpy(x))
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(y).reshape(-1))

    def step(self) -> None:
        x, y = self.train.batch(self.cfg["batch"], self.cfg["context_length"], self.rng)
        self.opt.zero_grad()
        loss = self._loss(self.model, x, y)
        loss.backward()
        self.torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.sched.step()

    def sample(self) -> None:
        prompt = self.torch.arange(self.cfg["prompt"])[None, :] % 256
        self.model.eval()
        self.model.generate(prompt, self.cfg["new_tokens"], self.torch.Generator().manual_seed(0), use_cache=True)
        self.model.train()

    def race(self, seconds: float) -> tuple[float, int]:
        """Train for ``seconds`` as Trainer.fit does: time 8 steps, fit the schedule to the last 4, go on; validate."""
        start = time.perf_counter()
        self.model, self.opt, self.sched, self.rng = self._fresh(10**9)
        probe, steps, total = [], 0, 10**9
        while steps < total and time.perf_counter() - start < seconds:
            t0 = time.perf_counter()
            self.step()
            steps += 1
            probe.append(time.perf_counter() - t0)
            if len(probe) == 8:
                left = seconds - (time.perf_counter() - start)
                total = max(steps + int(0.95 * left / statistics.median(probe[4:])), steps + 1)
                self.sched = self._refit(total, steps)
        rng = self.np.random.default_rng(SEED + 7919)  # Trainer.evaluate's windows
        self.model.eval()
        with self.torch.no_grad():
            losses = [self._loss(self.model, *self.val.batch(self.cfg["batch"], self.cfg["context_length"], rng)).item()
                      for _ in range(EVAL_BATCHES)]
        return float(self.np.mean(losses)), steps

    def _refit(self, total: int, done: int) -> Any:
        sched = self.T.warmup_cosine(self.opt, min(WARMUP, total - 1), total, eta_min=LR / 10)
        for _ in range(done):  # a fresh chain, moved to where the old one was
            sched.step()
        return sched


def profile_chainrule(run: ChainruleRun, steps: int) -> dict[str, float]:
    """Milliseconds per training step in each primitive's forward function and reverse rules, and in
    the optimiser (wall time; everything else is Python and bookkeeping)."""
    from chainrule.autodiff import primitive as P

    spent: dict[str, float] = {}
    clock = time.perf_counter

    def timed(label: str, f: Any) -> Any:
        def call(*a: Any, **k: Any) -> Any:
            t0 = clock()
            try:
                return f(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + clock() - t0
        return call

    saved_fns = {name: prim.fn for name, prim in P.REGISTRY.items()}
    saved_fast = {name: prim.fast_vjps for name, prim in P.REGISTRY.items()}
    vjp, opt = P.Primitive.vjp, run.trainer.optimizer
    for name, prim in P.REGISTRY.items():
        prim.fn = timed(f"forward {name}", prim.fn)
        prim.fast_vjps = None  # the sweep then calls every rule through vjp, which is timed
    P.Primitive.vjp = lambda self, *a, **k: timed(f"backward {self.name}", vjp)(self, *a, **k)
    opt.step = timed("optimizer step", opt.step)
    try:
        t0 = clock()
        for _ in range(steps):
            run.step()
        spent["whole step"] = clock() - t0
    finally:
        for name, fn in saved_fns.items():
            P.REGISTRY[name].fn = fn
            P.REGISTRY[name].fast_vjps = saved_fast[name]
        P.Primitive.vjp = vjp
        del opt.step
    return {k: 1e3 * v / steps for k, v in spent.items()}


def profile_torch(run: TorchRun, steps: int) -> dict[str, float]:
    """Milliseconds per training step in each ATen op (self time, torch.profiler), the top 15."""
    from torch.profiler import ProfilerActivity, profile

    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            run.step()
    out = {"whole step": 1e3 * (time.perf_counter() - t0) / steps}
    rows = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:15]
    out.update({e.key: e.self_cpu_time_total / 1e3 / steps for e in rows})
    return out


def worker(name: str, cfg: dict[str, Any], data: str, threads: int, repeats: int, budget: float,
           profile: bool = False, workers: int | None = None) -> dict[str, Any]:
    run = ChainruleRun(cfg, data, workers) if name == "chainrule" else TorchRun(cfg, data, threads)
    helpers = getattr(run, "workers_usage", lambda: (0.0, 0))  # chainrule's worker processes, if any
    before = rss_mb()
    for _ in range(cfg["warmup"]):
        run.step()
    tokens = cfg["batch"] * cfg["context_length"] * cfg["steps"]
    speeds, faults = [], []
    for _ in range(repeats):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt + helpers()[1]
        t0 = time.perf_counter()
        for _ in range(cfg["steps"]):
            run.step()
        speeds.append(tokens / (time.perf_counter() - t0))
        f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt + helpers()[1]
        faults.append((f1 - f0) / cfg["steps"])
    peak = peak_mb() + helpers()[0]
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run.sample()
        samples.append(cfg["new_tokens"] / (time.perf_counter() - t0))
    breakdown = None
    if profile:
        breakdown = (profile_chainrule if name == "chainrule" else profile_torch)(run, cfg["steps"])
    val_loss, race_steps = run.race(budget)
    return {"train_tokens_per_s": statistics.median(speeds), "peak_mb": peak, "growth_mb": peak - before,
            "faults_per_step": statistics.median(faults), "sample_tokens_per_s": statistics.median(samples),
            "val_loss": val_loss, "race_steps": race_steps, "profile": breakdown,
            "processes": getattr(getattr(run, "trainer", None), "processes", 1)}


# -- the driver ---------------------------------------------------------------------------------------
def prepare_data(folder: str, corpus_bytes: int) -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
    from chainrule.gpt import ByteTokenizer, read_corpus, write_tokens

    write_tokens(read_corpus(max_bytes=corpus_bytes), ByteTokenizer(), folder)


def spawn(name: str, cfg: dict[str, Any], data: str, args: argparse.Namespace) -> dict[str, Any] | None:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                "CHAINRULE_NUM_THREADS"):  # (chainrule's own split passes: GELU, norms, attention)
        env[var] = str(args.threads)
    if name == "torch":  # the torch run imports chainrule (config, data); keep glibc's malloc as torch has it
        env["CHAINRULE_MALLOC"] = "0"
    src = os.path.join(os.path.dirname(HERE), "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--data", data, "--threads", str(args.threads),
           "--repeats", str(args.repeats), "--budget-seconds", str(args.budget_seconds)]
    cmd += ["--tiny"] if args.tiny else []
    cmd += ["--profile"] if args.profile else []
    cmd += ["--processes", str(args.processes)] if args.processes else []
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        print(f"{name} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


ROWS = [("training tokens/s", "train_tokens_per_s", "{:,.0f}", True),
        ("peak memory (MB)", "peak_mb", "{:,.0f}", False),
        ("memory growth in training (MB)", "growth_mb", "{:,.0f}", False),
        ("minor page faults per step", "faults_per_step", "{:,.0f}", False),
        ("sampling tokens/s (kv cache)", "sample_tokens_per_s", "{:,.0f}", True),
        ("validation loss after budget", "val_loss", "{:.3f}", False),
        ("steps in the budget", "race_steps", "{:,}", True)]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="tiny sizes, one repeat (CI keeps the script runnable)")
    p.add_argument("--repeats", type=int, default=None, help="timed blocks per figure (default 5; tiny 1)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--budget-seconds", type=float, default=None, help="validation-loss race (default 60; tiny 2)")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--profile", action="store_true",
                   help="also time one block of steps op by op (chainrule: each primitive's forward and reverse "
                        "rules; PyTorch: torch.profiler's ATen ops) and print where a step's time goes")
    p.add_argument("--processes", type=int, default=None,
                   help="chainrule: processes sharing each batch (default: the Trainer's choice, one per thread)")
    p.add_argument("--worker", choices=["chainrule", "torch"], help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.repeats = args.repeats or (1 if args.tiny else 5)
    args.budget_seconds = args.budget_seconds or (2.0 if args.tiny else 60.0)
    cfg = TINY if args.tiny else FULL
    if args.worker:
        print(json.dumps(worker(args.worker, cfg, args.data, args.threads, args.repeats, args.budget_seconds,
                                args.profile, args.processes)))
        return []
    with tempfile.TemporaryDirectory() as data:
        prepare_data(data, cfg["corpus_bytes"])
        results = {"chainrule": spawn("chainrule", cfg, data, args)}
        try:
            import torch  # noqa: F401

            results["torch"] = spawn("torch", cfg, data, args)
        except ImportError:
            results["torch"] = None
            print("(PyTorch not installed: chainrule alone)", file=sys.stderr)
    cr, pt = results["chainrule"], results["torch"]
    if cr is None:
        raise SystemExit("the chainrule run failed")
    shape = f"{cfg['n_layers']} layers, d_model {cfg['d_model']}, {cfg['n_heads']} heads, context " \
            f"{cfg['context_length']}, batch {cfg['batch']}, float32, {args.threads} threads"
    print(f"\nGPT training and sampling ({shape}; budget {args.budget_seconds:g} s; medians of {args.repeats})")
    print(f"  (chainrule trains in {cr['processes']} process{'es' if cr['processes'] > 1 else ''}, one thread each "
          f"during a step; PyTorch in one, {args.threads} intra-op threads)" if cr["processes"] > 1 else
          f"  (chainrule and PyTorch each in one process, {args.threads} threads)")
    print(f"  {'':<34}{'chainrule':>14}{'PyTorch eager':>16}{'chainrule/torch':>18}")
    rows = []
    for label, key, fmt, _higher_better in ROWS:
        ours = cr[key]
        theirs = pt[key] if pt else None
        ratio = ours / theirs if theirs else None
        rows.append({"metric": key, "chainrule": ours, "torch": theirs, "ratio": ratio})
        print(f"  {label:<34}{fmt.format(ours):>14}{(fmt.format(theirs) if theirs is not None else '-'):>16}"
              f"{(f'{ratio:.2f}x' if ratio is not None else ''):>18}")
    for name, res in results.items():
        if res and res.get("profile"):
            split = res.get("processes", 1) > 1
            print(f"\n{name}: milliseconds per training step (one block of {cfg['steps']} steps, wall time"
                  + (f"; ops: the main process's share of the batch, 1/{res['processes']})" if split else ")"))
            whole = res["profile"]["whole step"]
            for label, ms in sorted(res["profile"].items(), key=lambda kv: -kv[1]):
                if label == "whole step" or ms >= 0.0025 * whole:  # the rows above a quarter of a percent
                    print(f"  {ms:9.1f}  {label}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"config": cfg, "threads": args.threads, "budget_seconds": args.budget_seconds, "rows": rows},
                      fh, indent=1)
    return rows


if __name__ == "__main__":
    main()
