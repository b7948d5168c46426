"""Kernel launches per training step: what a GPU step costs in launches, counted without a GPU.

On a GPU each array operation is a kernel launch of tens of microseconds from Python (CuPy's, measured on an
H200: 40-60 us for a small reduction), so for a model of modest size the step's time is mostly its launch
count. This counts them on the tests' CuPy double (tests/strict_device.py: every ufunc call, every function or
method that computes, every gather or scatter; not views) for the GPT step of bench/gpu.py (8 layers, 8 heads;
launches do not depend on the sizes, which are small here) and the MLP step, by phase. PyTorch's column counts
the ATen operators that compute (the leaves of its profiler's tree, views and allocations left out) with its
multi-tensor ``foreach`` AdamW and clipping, its default on CUDA: about one CUDA kernel each.

    python bench/bench_device_launches.py           # the table
    python bench/bench_device_launches.py --tiny    # 2 layers (CI)
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

# PyTorch's operators that make no kernel: views, metadata, allocation
TORCH_NO_KERNEL = {
    "aten::view", "aten::t", "aten::transpose", "aten::permute", "aten::reshape", "aten::_unsafe_view",
    "aten::expand", "aten::as_strided", "aten::select", "aten::slice", "aten::unsqueeze", "aten::squeeze",
    "aten::detach", "aten::alias", "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::resize_",
    "aten::unbind", "aten::split", "aten::chunk", "aten::narrow", "aten::lift_fresh", "aten::numpy_T",
    "aten::expand_as", "aten::view_as", "aten::flatten", "aten::_reshape_alias", "aten::result_type",
    "aten::contiguous", "aten::is_nonzero", "aten::item", "aten::_local_scalar_dense", "aten::unflatten",
    "aten::squeeze_", "aten::unsqueeze_", "aten::detach_", "aten::set_", "aten::to", "aten::_to_copy",
}


def chainrule_counts(layers: int, foreach: bool | None) -> dict[str, int]:
    import chainrule as cr
    import strict_device
    from chainrule import nn, optim
    from chainrule.gpt.training import lm_loss

    strict_device.use()
    config = nn.GPTConfig(vocab_size=64, context_length=32, d_model=64, n_heads=8, n_layers=layers)
    model = copy.deepcopy(nn.GPT(config, seed=0, dtype=np.float32)).to("strict")
    opt = optim.AdamW(optim.weight_decay_groups(model, 0.1), lr=3e-4, foreach=foreach)
    windows = np.random.default_rng(0).integers(0, 64, (2, 33))
    xb, yb = (cr.devices.move(w, cr.devices.backend("strict")) for w in (windows[:, :-1], windows[:, 1:]))
    counts: dict[str, int] = {}

    def phase(name: str, fn: Any) -> Any:
        strict_device.LAUNCHES.clear()
        reads = strict_device.HOST_COPIES[0]
        out = fn()
        counts[name] = sum(strict_device.LAUNCHES.values())
        counts["host reads"] = counts.get("host reads", 0) + strict_device.HOST_COPIES[0] - reads
        return out

    for _ in range(3):  # the last step's counts (the first ones also create the optimiser's state)
        opt.zero_grad()
        counts["host reads"] = 0
        loss = phase("forward", lambda: lm_loss(model, xb, yb))
        phase("backward", loss.backward)
        phase("clip", lambda: optim.clip_grad_norm_(model.parameters(), 0.01))  # small: the scaling happens
        phase("optimiser", opt.step)
    return counts


def _kernel(event: Any) -> bool:
    """Whether a profiler event is one kernel on CUDA: a leaf operator that computes, or a multi-tensor
    ``_foreach_`` operator (on the CPU it loops over its tensors; on CUDA it is a few fused launches)."""
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith("aten::_foreach_"):
            return False
        parent = parent.cpu_parent
    if event.name.startswith("aten::_foreach_"):
        return True
    return not event.cpu_children and event.name.startswith("aten::") and event.name not in TORCH_NO_KERNEL


def torch_counts(layers: int) -> dict[str, int] | None:
    try:
        import torch
        from _torch_gpt import TorchGPT
    except ImportError:
        return None
    from torch.profiler import ProfilerActivity, profile

    from chainrule import nn

    config = nn.GPTConfig(vocab_size=64, context_length=32, d_model=64, n_heads=8, n_layers=layers)
    tm = TorchGPT(config)
    opt = torch.optim.AdamW(tm.parameters(), lr=3e-4, foreach=True)
    windows = torch.tensor(np.random.default_rng(0).integers(0, 64, (2, 33)))
    x, y = windows[:, :-1], windows[:, 1:]
    counts: dict[str, int] = {}

    def phase(name: str, fn: Any) -> Any:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            out = fn()
        counts[name] = sum(1 for e in prof.events() if _kernel(e))
        return out

    for _ in range(3):
        opt.zero_grad()
        loss = phase("forward", lambda: torch.nn.functional.cross_entropy(tm(x).reshape(-1, 64), y.reshape(-1)))
        phase("backward", loss.backward)
        phase("clip", lambda: torch.nn.utils.clip_grad_norm_(tm.parameters(), 0.01, foreach=True))
        phase("optimiser", opt.step)
    return counts


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="2 layers (checks the script)")
    p.add_argument("--layers", type=int, default=8)
    a = p.parse_args()
    layers = 2 if a.tiny else a.layers
    flat = chainrule_counts(layers, None)
    loop = chainrule_counts(layers, False)
    theirs = torch_counts(layers)
    print(f"Launches per GPT training step ({layers} layers, 8 heads; AdamW, clip_grad_norm_), counted on the "
          "CuPy double")
    print(f"{'phase':<12}{'chainrule':>12}{'per layer':>11}{'loop optim':>12}{'PyTorch':>10}{'ratio':>8}")
    reads = {id(c): c.pop("host reads") for c in (flat, loop)}
    for name in ("forward", "backward", "clip", "optimiser", "total"):
        ours = sum(flat.values()) if name == "total" else flat[name]
        ref = sum(loop.values()) if name == "total" else loop[name]
        tv = (sum(theirs.values()) if name == "total" else theirs[name]) if theirs else None
        ratio = f"{ours / tv:.2f}x" if tv else "-"
        print(f"{name:<12}{ours:>12,}{ours / layers:>11.1f}{ref:>12,}{tv if tv is not None else '-':>10}"
              f"{ratio:>8}")
    print(f"host reads (each a sync on a GPU) per step: chainrule {reads[id(flat)]} ({reads[id(loop)]} with the loop); "
          "PyTorch 0")
    print("chainrule: one vector per parameter group for the optimiser (the default off the host); 'loop optim': "
          "foreach=False, one parameter at a time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
