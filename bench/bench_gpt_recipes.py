"""Every speed figure of the GPT issue in one run: chainrule against PyTorch eager on this CPU.

At the issue's size (4 layers, d_model 128, 4 heads, context 128, batch 32, float32, ``--threads`` 2):

- a training step (forward, backward, AdamW) in one process, tokens/s: the GPT a user writes from the
  public layers (bench/_user_gpt.py, docs/gpt.md's), ``nn.GPT`` with GPT-2's block, and ``nn.GPT``
  with the modern block (RMSNorm, rotary positions, SwiGLU, ``--kv-heads`` key/value heads); PyTorch's
  twins (bench/_torch_gpt.py, bench/_torch_gpt_modern.py) hold the same weights;
- the two-process split: chainrule's batch shared by ``--threads`` processes of one thread each
  (``chainrule.gpt.workers``, what ``gpt train`` does by default), against PyTorch in one process;
- greedy sampling with the key/value cache, tokens/s (16-token prompt, 100 new tokens, batch 1).

Each library runs in a process of its own (their thread pools never meet), the two alternated for
``--rounds`` rounds; every figure is the median over the rounds of a median of ``--repeats``. The
load average is printed with each round: on a busy machine the figures move, the ratios less. The
BLAS library and kernel are named (threadpoolctl; run without ``OPENBLAS_CORETYPE`` set, as on a
user's machine, or OpenBLAS runs an older kernel). ``--tiny`` runs it in seconds (CI).

    python bench/bench_gpt_recipes.py [--tiny] [--threads 2] [--rounds 3] [--repeats 5] [--kv-heads 2]
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from _harness import available, parser  # noqa: E402

FULL = dict(vocab_size=256, context_length=128, d_model=128, n_heads=4, n_layers=4)
TINY = dict(vocab_size=256, context_length=16, d_model=32, n_heads=4, n_layers=1)
# (figure, label, target ratio chainrule/torch or None)
ROWS = [("train_user", "training, user-written GPT (1 process)", 1.0),
        ("train_gpt2", "training, nn.GPT gpt2 (1 process)", 1.0),
        ("train_modern", "training, nn.GPT modern (1 process)", 1.0),
        ("split_gpt2", "training, nn.GPT gpt2, split over processes", 1.2),
        ("split_modern", "training, nn.GPT modern, split over processes", None),
        ("sample_gpt2", "sampling, nn.GPT gpt2 (kv cache)", 1.0),
        ("sample_modern", "sampling, nn.GPT modern (kv cache)", 1.0)]


def timed(fn, repeats: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds of this process) of one ``fn()`` call, after one warm-up call.
    The CPU time leaves out the time the process waited for a core: on a busy machine it moves less."""
    fn()
    walls, cpus = [], []
    for _ in range(repeats):
        gc.collect()
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def record(out: dict, key: str, units: float, fn, repeats: int) -> None:
    """``out[key]``: units per wall second; ``out[key + '_cpu']``: units per CPU second."""
    wall, cpu = timed(fn, repeats)
    out[key], out[key + "_cpu"] = units / wall, units / max(cpu, 1e-9)


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def blas_kernel() -> str:
    """The BLAS libraries loaded and the kernel each runs (threadpoolctl), e.g. 'openblas SkylakeX'."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "? (pip install threadpoolctl to name it)"
    import numpy  # noqa: F401  (its BLAS loaded)

    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(f"{i.get('internal_api')} {i.get('version', '')} {i.get('architecture', '?')}" for i in infos) \
        or "none found"


def limit_threads(n: int) -> None:
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:
        pass


def data(size: dict, tiny: bool):
    import numpy as np

    batch = 4 if tiny else 32
    rng = np.random.default_rng(0)
    x = rng.integers(0, size["vocab_size"], size=(batch, size["context_length"]))
    y = rng.integers(0, size["vocab_size"], size=(batch, size["context_length"]))
    return x, y


def configs(size: dict, kv_heads: int) -> dict:
    from chainrule import nn

    return {"gpt2": nn.GPTConfig.from_recipe("gpt2", **size),
            "modern": nn.GPTConfig.from_recipe("modern", n_kv_heads=kv_heads, **size)}


def chainrule_figures(args, size: dict) -> dict:
    import numpy as np

    from chainrule import nn, optim
    from chainrule.gpt import lm_loss
    from chainrule.gpt.workers import GradientWorkers, fork_available

    user = load("_user_gpt")
    x, y = data(size, args.tiny)
    repeats = 1 if args.tiny else args.repeats
    out: dict = {}
    for recipe, config in configs(size, args.kv_heads).items():
        model = nn.GPT(config, seed=0, dtype=np.float32)
        models = {recipe: model}
        if recipe == "gpt2":
            mine = user.TinyGPT(size["vocab_size"], size["context_length"], size["d_model"], size["n_heads"],
                                size["n_layers"])
            mine.load_state_dict(model.state_dict())
            models["user"] = mine
        for name, m in models.items():
            opt = optim.AdamW(m.parameters(), lr=1e-3)

            def step(m=m, opt=opt):
                opt.zero_grad()
                lm_loss(m, x, y).backward()
                opt.step()

            record(out, f"train_{name}", x.size, step, repeats)
        if fork_available() and args.threads > 1:
            opt = optim.AdamW(model.parameters(), lr=1e-3)
            steps = iter(range(10**9))  # (seeds the workers' dropout: none here)
            with GradientWorkers(model, lm_loss, processes=args.threads) as workers:
                def split():
                    opt.zero_grad()
                    workers.accumulate(x, y, 1.0, next(steps), 0)
                    opt.step()

                record(out, f"split_{recipe}", x.size, split, repeats)  # (CPU: this process's part alone)
        prompt = x[:1, :args.prompt]
        record(out, f"sample_{recipe}", args.new, lambda: model.generate(prompt, args.new, temperature=0), repeats)
    return out


def torch_figures(args, size: dict) -> dict:
    import numpy as np

    from chainrule import nn

    torch = available("torch")
    if torch is None:
        return {}
    torch.set_num_threads(args.threads)
    twins = load("_torch_gpt"), load("_torch_gpt_modern")
    x, y = data(size, args.tiny)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    repeats = 1 if args.tiny else args.repeats
    out: dict = {}
    for recipe, config in configs(size, args.kv_heads).items():
        model = twins[0].TorchGPT(config) if recipe == "gpt2" else twins[1].TorchModernGPT(config)
        twins[0].copy_weights(model, nn.GPT(config, seed=0, dtype=np.float32))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def step(model=model, opt=opt):
            opt.zero_grad()
            logits = model(tx)
            torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ty.reshape(-1)).backward()
            opt.step()

        record(out, f"train_{recipe}", x.size, step, repeats)
        for key in [f"split_{recipe}"] + (["train_user"] if recipe == "gpt2" else []):  # one process, all threads
            out[key], out[key + "_cpu"] = out[f"train_{recipe}"], out[f"train_{recipe}_cpu"]
        model.eval()
        prompt = tx[:1, :args.prompt]
        record(out, f"sample_{recipe}", args.new, lambda m=model: twins[1].greedy(m, prompt, args.new), repeats)
    return out


def child(args) -> None:
    size = TINY if args.tiny else FULL
    limit_threads(args.threads)
    figures = (chainrule_figures if args.library == "chainrule" else torch_figures)(args, size)
    kernel = f"NumPy's {blas_kernel()}" if args.library == "chainrule" else torch_kernel()
    print(json.dumps({"figures": figures, "kernel": kernel}))


def torch_kernel() -> str:
    """PyTorch's own BLAS (its build's BLAS_INFO) and the CPU kernels it picked."""
    import re

    torch = available("torch")
    if torch is None:
        return "PyTorch not installed"
    blas = re.findall(r"BLAS_INFO=(\w+)", torch.__config__.show()) or ["?"]
    return f"PyTorch's {blas[0]}, {torch.backends.cpu.get_cpu_capability()} kernels"


def run_child(library: str, argv: list[str]) -> dict:
    env = dict(os.environ)
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    threads = argv[argv.index("--threads") + 1] if "--threads" in argv else "2"
    for var in ("CHAINRULE_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = threads  # chainrule's own split passes too, not only BLAS
    done = subprocess.run([sys.executable, __file__, *argv, "--library", library], capture_output=True, text=True,
                          env=env)
    if done.returncode:
        print(done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"the {library} run failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2, help="threads of one process (and processes of the split)")
    p.add_argument("--rounds", type=int, default=3, help="chainrule and PyTorch alternated this many times")
    p.add_argument("--kv-heads", type=int, default=2, help="key/value heads of the modern block")
    p.add_argument("--prompt", type=int, default=None, help="prompt tokens when sampling (16; tiny 4)")
    p.add_argument("--new", type=int, default=None, help="new tokens when sampling (100; tiny 8)")
    p.add_argument("--library", choices=["chainrule", "torch"], help=argparse_suppress())
    args = p.parse_args(argv)
    args.prompt = args.prompt or (4 if args.tiny else 16)
    args.new = args.new or (8 if args.tiny else 100)
    if args.library:
        child(args)
        return
    argv = list(sys.argv[1:] if argv is None else argv)
    rounds = 1 if args.tiny else args.rounds
    size = TINY if args.tiny else FULL
    print(f"GPT speed, chainrule against PyTorch eager: {size['n_layers']} layers, d_model {size['d_model']}, "
          f"{size['n_heads']} heads, context {size['context_length']}, batch {4 if args.tiny else 32}, float32, "
          f"{args.threads} thread(s); OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}")
    results: dict[str, list[dict]] = {"chainrule": [], "torch": []}
    for r in range(rounds):
        for library in ("chainrule", "torch"):
            before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            t0 = time.perf_counter()
            res = run_child(library, argv)
            results[library].append(res["figures"])
            print(f"  round {r + 1} {library:<9} {time.perf_counter() - t0:5.1f} s, load average {before:.1f}; "
                  f"{res['kernel']}")
    print(f"\n  {'tokens/s (median of rounds)':<48}{'chainrule':>11}{'PyTorch':>11}{'ratio':>8}{'target':>8}  met"
          f"  {'per CPU-second: chainrule':>26}{'PyTorch':>10}{'ratio':>8}")
    for key, label, target in ROWS:
        a, b = (median_of(results[lib], key) for lib in ("chainrule", "torch"))
        if a is None:
            continue
        ratio = a / b if b else None
        met = "" if ratio is None or target is None else ("yes" if ratio >= target else "NO")
        ca, cb = (median_of(results[lib], key + "_cpu") for lib in ("chainrule", "torch"))
        cpu = f"{ca:>26,.0f}{cb:>10,.0f}{ca / cb:>7.2f}x" if ca and cb and not key.startswith("split") else ""
        print(f"  {label:<48}{a:>11,.0f}{(f'{b:,.0f}' if b else '-'):>11}"
              f"{(f'{ratio:.2f}x' if ratio else ''):>8}{(f'{target:.1f}x' if target else ''):>8}  {met:<3}{cpu}")
    print(f"  (the split: chainrule in {args.threads} processes of one thread each, PyTorch in one process of "
          f"{args.threads} threads; load average {os.getloadavg()[0]:.1f} at the end)")


def median_of(rounds: list[dict], key: str) -> float | None:
    values = [f[key] for f in rounds if key in f]
    return statistics.median(values) if values else None


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
