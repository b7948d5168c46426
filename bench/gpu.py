"""The GPU check in one run: the device test suite on real CuPy, then chainrule against PyTorch eager on the same
device (per-op overhead of a small-tensor chain; the MLP 784-512-512-10 step; a GPT training step; sampling
with the key/value cache).

    PYTHONPATH=src python3 bench/gpu.py                    # on a GPU machine: device cuda, full sizes
    PYTHONPATH=src python3 bench/gpu.py --device cpu --tiny --skip-tests   # the script's logic, anywhere

Every part runs in its own try/except under a time limit, so one failure does not lose the rest. Timings are
medians of repeats, with the device synchronised before each clock read. The table is printed and, when
``$OUT`` is set, also written to ``$OUT/gpu.txt``.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "src"))

LINES: list[str] = []


def say(text: str = "") -> None:
    print(text, flush=True)
    LINES.append(text)


class PartTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise PartTimeout("time limit reached")


def part(name: str, seconds: float, fn: Any, *args: Any) -> Any:
    """Run one part under a time limit; an error is printed (with its traceback's tail) and the run goes on."""
    say(f"\n== {name} (limit {seconds:.0f} s)")
    start = time.perf_counter()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(max(1, int(seconds)))
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 (every failure is reported, the next part still runs)
        say(f"   FAILED: {type(e).__name__}: {str(e)[:500]}")
        for line in traceback.format_exc().splitlines()[-8:]:
            say(f"   | {line}")
        return None
    finally:
        signal.alarm(0)
        say(f"   ({time.perf_counter() - start:.1f} s)")


# -- timing ------------------------------------------------------------------------------------------
class Clock:
    """Medians of repeats, the device synchronised before each clock read (chainrule's and torch's)."""

    def __init__(self, device: str, repeats: int) -> None:
        self.device, self.repeats = device, repeats

    def sync(self) -> None:
        import chainrule as cr

        if self.device not in ("cpu",):
            cr.devices.synchronize(self.device)
        torch = _torch()
        if torch is not None and torch.cuda.is_available():
            torch.cuda.synchronize()

    def median(self, fn: Any, min_seconds: float = 0.2) -> float:
        """Seconds per call: each repeat runs ``fn`` enough times to last ``min_seconds``."""
        fn()
        self.sync()
        start = time.perf_counter()
        fn()
        self.sync()
        once = time.perf_counter() - start
        number = max(1, int(min_seconds / max(once, 1e-9)))
        times = []
        for _ in range(self.repeats):
            self.sync()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            self.sync()
            times.append((time.perf_counter() - start) / number)
        return statistics.median(times)


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def torch_device(device: str) -> str:
    torch = _torch()
    if device == "cuda" and torch is not None and torch.cuda.is_available():
        return "cuda"
    return "cpu"


ROWS: list[tuple[str, str, str, str, str]] = []  # (what, unit, chainrule, torch, ratio)


def row(what: str, unit: str, ours: float | None, theirs: float | None, higher_is_better: bool = False) -> None:
    """One line of the table; the ratio is chainrule's speed over torch's (1.0: parity, 0.5: half as fast)."""
    ratio = ""
    if ours and theirs:
        ratio = f"{(ours / theirs) if higher_is_better else (theirs / ours):.2f}x"
    fmt = (lambda v: "-" if v is None else f"{v:,.3f}" if v < 100 else f"{v:,.0f}")
    ROWS.append((what, unit, fmt(ours), fmt(theirs), ratio))
    say(f"   {what}: chainrule {fmt(ours)} {unit}, torch {fmt(theirs)} {unit}, ratio {ratio or '-'}")


# -- (a) the device test suite ---------------------------------------------------------------------------
def device_tests(device: str, seconds: float) -> None:
    """The device suite under ``CHAINRULE_TEST_DEVICE``: layers, optimisers, GPT first, then every op case
    as long as the time allows (CuPy compiles each new kernel on first use); the verdicts stream to a file,
    so a run stopped by its limit still reports what it saw."""
    env = dict(os.environ, CHAINRULE_TEST_DEVICE=device, PYTHONPATH=f"{ROOT / 'src'}:{ROOT / 'tests'}")
    cmd = [sys.executable, "-m", "pytest", "-vv", "-p", "no:cacheprovider", "--tb=line",
           "tests/test_device_training.py", "tests/test_device_ops.py"]
    say("   " + " ".join(cmd[2:]) + f"  (CHAINRULE_TEST_DEVICE={device}, limit {seconds:.0f} s)")
    log = Path(os.environ.get("OUT") or "/tmp") / "gpu_tests.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            say(f"   (stopped at its limit of {seconds:.0f} s; the verdicts so far follow)")
    text = log.read_text(errors="replace")
    verdicts: dict[str, list[str]] = {}
    for ln in text.splitlines():
        found = re.match(r"^(tests/\S+::\S+) (PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR)", ln)
        if found:
            verdicts.setdefault(found[2], []).append(found[1])
    say("   " + ", ".join(f"{k.lower()} {len(v)}" for k, v in sorted(verdicts.items())) + f"  (log: {log})")
    for name in verdicts.get("FAILED", [])[:80] + verdicts.get("ERROR", [])[:20]:
        say(f"   FAILED {name}")
    for name in verdicts.get("XPASS", [])[:40]:
        say(f"   XPASS (passes on {device}, listed as not device-clean) {name}")
    errors = [ln for ln in text.splitlines() if re.match(r"^\S+\.py:\d+: \w+", ln)]
    for ln in errors[:40]:
        say("   | " + ln[:300])


# -- (b) per-op overhead: a chain of small elementwise ops ------------------------------------------------
def op_overhead(device: str, clock: Clock, tiny: bool) -> None:
    import chainrule as cr

    n_ops = 30 if tiny else 300
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal((4, 4)).astype(np.float32), rng.standard_normal((4, 4)).astype(np.float32)
    xd, wd = cr.Tensor(x0, device=device), cr.Tensor(w0, device=device)

    def ours() -> None:
        x = xd.detach().requires_grad_()
        w = wd.detach().requires_grad_()
        y = x
        for _ in range(n_ops // 3):
            y = cr.tanh(y * w + y)
        y.sum().backward()

    t_ours = clock.median(ours) / n_ops * 1e6
    t_theirs = None
    torch = _torch()
    if torch is not None:
        td = torch_device(device)
        xt, wt = torch.tensor(x0, device=td), torch.tensor(w0, device=td)

        def theirs() -> None:
            x = xt.detach().requires_grad_()
            w = wt.detach().requires_grad_()
            y = x
            for _ in range(n_ops // 3):
                y = torch.tanh(y * w + y)
            y.sum().backward()

        t_theirs = clock.median(theirs) / n_ops * 1e6
    row(f"small-tensor chain (4x4, {n_ops} ops, fwd+bwd), per op", "us", t_ours, t_theirs)


# -- (c) the MLP step --------------------------------------------------------------------------------------
def mlp_step(device: str, clock: Clock, tiny: bool) -> None:
    import chainrule as cr
    from chainrule import nn, optim

    sizes, batch = ((32, 16, 16, 10), 8) if tiny else ((784, 512, 512, 10), 256)
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y0 = rng.integers(0, sizes[-1], batch)
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(), nn.Linear(sizes[1], sizes[2]), nn.ReLU(),
                          nn.Linear(sizes[2], sizes[3])).to(device)
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = cr.Tensor(x0, device=device), cr.devices.move(y0, cr.devices.backend(device))

    def ours() -> None:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    t_ours = clock.median(ours) * 1e3
    t_theirs = None
    torch = _torch()
    if torch is not None:
        td = torch_device(device)
        tm = torch.nn.Sequential(torch.nn.Linear(sizes[0], sizes[1]), torch.nn.ReLU(),
                                 torch.nn.Linear(sizes[1], sizes[2]), torch.nn.ReLU(),
                                 torch.nn.Linear(sizes[2], sizes[3])).to(td)
        topt = torch.optim.SGD(tm.parameters(), lr=0.01, momentum=0.9)
        xt, yt = torch.tensor(x0, device=td), torch.tensor(y0, device=td)

        def theirs() -> None:
            topt.zero_grad()
            torch.nn.functional.cross_entropy(tm(xt), yt).backward()
            topt.step()

        t_theirs = clock.median(theirs) * 1e3
    row(f"MLP {'-'.join(map(str, sizes))} step (batch {batch}, float32, SGD)", "ms", t_ours, t_theirs)


# -- (d) the GPT training step and (e) sampling with the cache ---------------------------------------------
def gpt_config(tiny: bool) -> dict[str, int]:
    if tiny:
        return dict(vocab=64, d_model=32, n_layers=2, n_heads=4, context=32, batch=2, prompt=4, new_tokens=8)
    return dict(vocab=1024, d_model=512, n_layers=8, n_heads=8, context=512, batch=16, prompt=16, new_tokens=200)


def pool_peak_mb(device: str) -> float | None:
    if device != "cuda":
        return None
    import cupy

    return cupy.get_default_memory_pool().total_bytes() / 2**20


def gpt_step(device: str, clock: Clock, tiny: bool, models: dict[str, Any]) -> None:
    import chainrule as cr
    from chainrule import nn, optim
    from chainrule.gpt.training import lm_loss

    c = gpt_config(tiny)
    config = nn.GPTConfig(vocab_size=c["vocab"], context_length=c["context"], d_model=c["d_model"],
                          n_heads=c["n_heads"], n_layers=c["n_layers"])
    host_model = nn.GPT(config, seed=0, dtype=np.float32)
    models["host"] = host_model
    rng = np.random.default_rng(0)
    windows = rng.integers(0, c["vocab"], (c["batch"], c["context"] + 1))
    tokens = c["batch"] * c["context"]
    if device == "cuda":
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    import copy

    model = copy.deepcopy(host_model).to(device)
    models["chainrule"] = model
    opt = optim.AdamW(optim.weight_decay_groups(model, 0.1), lr=3e-4)
    xb = cr.devices.move(windows[:, :-1], cr.devices.backend(device))
    yb = cr.devices.move(windows[:, 1:], cr.devices.backend(device))

    def ours() -> None:
        opt.zero_grad()
        lm_loss(model, xb, yb).backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    t_ours = clock.median(ours, min_seconds=0.5 if not tiny else 0.05)
    peak_ours = pool_peak_mb(device)
    t_theirs = peak_theirs = None
    torch = _torch()
    if torch is not None:
        from _torch_gpt import TorchGPT, copy_weights, torch_weight_decay_groups

        td = torch_device(device)
        tm = TorchGPT(config)
        copy_weights(tm, host_model)
        tm = tm.to(td)
        models["torch"] = tm
        topt = torch.optim.AdamW(torch_weight_decay_groups(tm, 0.1), lr=3e-4)
        xt, yt = torch.tensor(windows[:, :-1], device=td), torch.tensor(windows[:, 1:], device=td)
        if td == "cuda":
            torch.cuda.reset_peak_memory_stats()

        def theirs() -> None:
            topt.zero_grad()
            logits = tm(xt)
            torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), yt.reshape(-1)).backward()
            torch.nn.utils.clip_grad_norm_(tm.parameters(), 1.0)
            topt.step()

        t_theirs = clock.median(theirs, min_seconds=0.5 if not tiny else 0.05)
        if td == "cuda":
            peak_theirs = torch.cuda.max_memory_allocated() / 2**20
            say(f"   torch max_memory_reserved: {torch.cuda.max_memory_reserved() / 2**20:,.0f} MB")
    shape = f"d{c['d_model']} L{c['n_layers']} H{c['n_heads']} ctx{c['context']} B{c['batch']} V{c['vocab']}"
    row(f"GPT training step ({shape}, float32, AdamW + clip)", "tokens/s", tokens / t_ours,
        tokens / t_theirs if t_theirs else None, higher_is_better=True)
    row(f"GPT training step ({shape}), time", "ms", t_ours * 1e3, t_theirs * 1e3 if t_theirs else None)
    if peak_ours is not None or peak_theirs is not None:
        ROWS.append(("GPT step peak GPU memory (CuPy pool total / torch max allocated)", "MB",
                     "-" if peak_ours is None else f"{peak_ours:,.0f}",
                     "-" if peak_theirs is None else f"{peak_theirs:,.0f}", ""))
        say(f"   peak memory: chainrule (CuPy pool) {peak_ours} MB, torch (max allocated) {peak_theirs} MB")


def sampling(device: str, clock: Clock, tiny: bool, models: dict[str, Any]) -> None:
    c = gpt_config(tiny)
    model = models.get("chainrule")
    if model is None:
        raise RuntimeError("the GPT part did not build the models")
    prompt = (np.arange(c["prompt"]) % c["vocab"])[None, :]
    n = c["new_tokens"]
    clock_once = Clock(device, max(1, clock.repeats // 2))
    t_ours = clock_once.median(lambda: model.generate(prompt, n, seed=0, use_cache=True), min_seconds=0.0)
    t_theirs = None
    torch = _torch()
    tm = models.get("torch")
    if torch is not None and tm is not None:
        td = torch_device(device)
        gen = torch.Generator(device=td).manual_seed(0)
        tp = torch.tensor(prompt, device=td)
        tm.eval()
        t_theirs = clock_once.median(lambda: tm.generate(tp, n, gen, use_cache=True), min_seconds=0.0)
    row(f"sampling with the KV cache (batch 1, {n} new tokens)", "tokens/s", n / t_ours,
        n / t_theirs if t_theirs else None, higher_is_better=True)


# -- the table ---------------------------------------------------------------------------------------------
def write_table(device: str, info: str) -> None:
    say("\n== summary: chainrule vs PyTorch eager on the same device (ratio: chainrule's speed / torch's)")
    say(f"   {info}")
    widths = [max(len(r[i]) for r in ROWS + [("what", "unit", "chainrule", "torch", "ratio")]) for i in range(5)]
    header = ("what", "unit", "chainrule", "torch", "ratio")
    say("   | " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    say("   |" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in ROWS:
        say("   | " + " | ".join(v.ljust(w) for v, w in zip(r, widths)) + " |")
    out = os.environ.get("OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "gpu.txt").write_text("\n".join(LINES) + "\n")
        print(f"(written to {Path(out) / 'gpu.txt'})")


def describe(device: str) -> str:
    parts = [f"device {device}", f"python {sys.version.split()[0]}", f"numpy {np.__version__}"]
    torch = _torch()
    if torch is not None:
        parts.append(f"torch {torch.__version__}")
        if torch.cuda.is_available():
            parts.append(torch.cuda.get_device_name(0))
    if device == "cuda":
        try:
            import cupy

            parts.append(f"cupy {cupy.__version__}")
        except ImportError:
            pass
    return ", ".join(parts)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", help="cuda (default), cpu, or strict (the tests' CuPy double)")
    p.add_argument("--tiny", action="store_true", help="tiny sizes (checks the script, measures nothing)")
    p.add_argument("--skip-tests", action="store_true", help="benchmarks only")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--test-seconds", type=float, default=170.0, help="limit of the device test run")
    a = p.parse_args()
    if a.device == "strict":
        sys.path.insert(0, str(ROOT / "tests"))
        import strict_device

        strict_device.use()
    import chainrule as cr

    try:
        cr.devices.backend(a.device)
    except Exception as e:  # noqa: BLE001
        print(f"gpu.py: {e}", file=sys.stderr)
        return 2
    info = describe(a.device)
    say(f"chainrule GPU check: {info}")
    start = time.perf_counter()
    if not a.skip_tests:
        part("device test suite", a.test_seconds + 20, device_tests, a.device, a.test_seconds)
    clock = Clock(a.device, 1 if a.tiny else a.repeats)
    models: dict[str, Any] = {}
    with warnings.catch_warnings(record=True) as caught:  # a fused kernel CuPy refused says so: reported below
        warnings.simplefilter("always", cr.ChainruleWarning)
        part("per-op overhead", 45, op_overhead, a.device, clock, a.tiny)
        part("MLP step", 45, mlp_step, a.device, clock, a.tiny)
        part("GPT training step", 120, gpt_step, a.device, clock, a.tiny, models)
        part("sampling with the cache", 45, sampling, a.device, clock, a.tiny, models)
    for message in sorted({str(w.message) for w in caught if issubclass(w.category, cr.ChainruleWarning)}):
        say(f"warning: {message}")
    write_table(a.device, info + f"; {time.perf_counter() - start:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
