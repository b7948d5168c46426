"""GPT-2's block against the modern one (RMSNorm, rotary positions, SwiGLU, grouped-query attention,
no biases), in chainrule and in its PyTorch twin, each library in a process of its own, at the issue's size
(4 layers, d_model 128, 4 heads, context 128, batch 32, float32):

- a training step (forward, backward, AdamW), median milliseconds and tokens/s;
- greedy sampling with the key/value cache, tokens/s (64 new tokens after a 64-token prompt).

``--tiny`` runs it in seconds; ``--threads`` sets BLAS's and torch's threads (default 2). The
figures depend on the machine's load: the script prints the load average next to them.

    python bench/bench_gpt_recipes.py [--tiny] [--threads 2] [--kv-heads 2]
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from _harness import available, median_time, parser  # noqa: E402


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--kv-heads", type=int, default=2, help="key/value heads of the modern block")
    p.add_argument("--library", choices=["both", "chainrule", "torch"], default="both",
                   help="both: each library in its own process (their thread pools do not meet)")
    args = p.parse_args(argv)
    if args.library == "both":
        rest = [a for a in (argv if argv is not None else sys.argv[1:])]
        for library in ("chainrule", "torch"):
            out = subprocess.run([sys.executable, __file__, *rest, "--library", library], capture_output=True,
                                 text=True)
            print(out.stdout if library == "chainrule" else "\n".join(out.stdout.splitlines()[3:]) + "\n", end="")
            if out.returncode:
                print(out.stderr[-2000:], file=sys.stderr)
                raise SystemExit(out.returncode)
        return
    import numpy as np

    from chainrule import nn, optim
    from chainrule.gpt import lm_loss

    size = dict(vocab_size=256, context_length=16, d_model=32, n_heads=4, n_layers=1) if args.tiny else \
        dict(vocab_size=256, context_length=128, d_model=128, n_heads=4, n_layers=4)
    batch, repeats = (4, 1) if args.tiny else (32, args.repeats)
    configs = {"gpt2": nn.GPTConfig.from_recipe("gpt2", **size),
               "modern": nn.GPTConfig.from_recipe("modern", n_kv_heads=args.kv_heads, **size)}
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(batch, size["context_length"]))
    y = rng.integers(0, 256, size=(batch, size["context_length"]))
    prompt_len = size["context_length"] // 2
    new = size["context_length"] - prompt_len
    torch = available("torch") if args.library == "torch" else None
    if torch is not None:
        torch.set_num_threads(args.threads)
        twins = load("_torch_gpt"), load("_torch_gpt_modern")
    try:
        from threadpoolctl import threadpool_info, threadpool_limits

        threadpool_limits(args.threads)
        kernels = ", ".join(f"{i.get('internal_api')} {i.get('architecture', '?')}" for i in threadpool_info())
    except ImportError:
        kernels = "? (pip install threadpoolctl to name it)"
    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.threads} thread(s); BLAS kernel: {kernels}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}; "
          f"load average {load_avg:.1f} before")
    print(f"\n{'recipe':<8}{'library':<11}{'params':>10}{'step ms':>10}{'train tok/s':>13}{'sample tok/s':>14}")
    if args.library == "torch" and torch is None:
        print("torch is not installed: skipped")
        return
    for recipe, config in configs.items():
        model = nn.GPT(config, seed=0, dtype=np.float32)
        if args.library == "torch":
            torch_rows(torch, twins, recipe, config, model, x, y, repeats, prompt_len, new)
            continue
        opt = optim.AdamW(model.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            lm_loss(model, x, y).backward()
            opt.step()

        seconds = median_time(step, repeats, min_seconds=0.0)
        start = time.perf_counter()
        model.generate(x[:1, :prompt_len], new, temperature=0)
        sample = new / (time.perf_counter() - start)
        model.train()
        print(f"{recipe:<8}{'chainrule':<11}{model.num_parameters():>10,}{1e3 * seconds:>10.1f}"
              f"{x.size / seconds:>13,.0f}{sample:>14,.0f}")
    print(f"load average {os.getloadavg()[0]:.1f} after" if hasattr(os, "getloadavg") else "")


def torch_rows(torch, twins, recipe, config, model, x, y, repeats, prompt_len, new) -> None:
    """The PyTorch twin's row, from ``model``'s weights."""
    tmodel = (twins[0].TorchGPT(config) if recipe == "gpt2" else twins[1].TorchModernGPT(config))
    twins[0].copy_weights(tmodel, model)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-3)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def tstep():
        topt.zero_grad()
        logits = tmodel(tx)
        torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ty.reshape(-1)).backward()
        topt.step()

    tseconds = median_time(tstep, repeats, min_seconds=0.0)
    start = time.perf_counter()
    twins[1].greedy(tmodel, tx[:1, :prompt_len], new) if recipe == "modern" else \
        tmodel.generate(tx[:1, :prompt_len], new, torch.Generator().manual_seed(0))
    tsample = new / (time.perf_counter() - start)
    print(f"{recipe:<8}{'torch':<11}{sum(p.numel() for p in tmodel.parameters()):>10,}{1e3 * tseconds:>10.1f}"
          f"{x.size / tseconds:>13,.0f}{tsample:>14,.0f}")


if __name__ == "__main__":
    main()
