"""``Muon`` (Jordan et al., 2024): momentum SGD for weight matrices whose step is the momentum orthogonalised.

PyTorch's version step for step: the Nesterov momentum of the gradient goes through a few Newton-Schulz
iterations that push its singular values towards 1 (an approximation of ``U V^T`` from its SVD ``U S V^T``), in
bfloat16 as PyTorch computes them; NumPy has no bfloat16, so each product is computed in float32 and rounded to
bfloat16 (round to nearest even), which gives PyTorch's CPU results bit for bit.

Example:
    >>> import numpy as np
    >>> from chainrule import nn, optim, tensor
    >>> w = nn.Parameter(np.eye(2))
    >>> opt = optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> w.grad = tensor(np.diag([4.0, 1.0]))
    >>> opt.step(); np.round(w.numpy(), 2)  # both directions move alike, whatever the gradient's scale in each
    array([[0.93, 0.  ],
           [0.  , 0.93]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .optimizers import Optimizer

__all__ = ["Muon"]

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # PyTorch's (and Keller Jordan's) quintic iteration


def bfloat16_round(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to bfloat16 (the top 16 bits of its float32, round to nearest even), as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)).view(np.float32)


def newton_schulz(g: np.ndarray, coefficients: tuple[float, float, float], steps: int, eps: float) -> np.ndarray:
    """PyTorch's ``_zeropower_via_newtonschulz``: ``steps`` quintic iterations on ``g`` scaled to norm 1, in
    bfloat16 (each product's float32 result rounded); returns float32 values of bfloat16 numbers."""
    a, b, c = (np.float32(v) for v in coefficients)
    x = bfloat16_round(g)
    wide = g.shape[0] > g.shape[1]
    if wide:
        x = x.T
    norm = bfloat16_round(np.float32(np.sqrt(np.sum(x.astype(np.float64) ** 2))))
    x = bfloat16_round(x / max(norm, np.float32(eps)))
    for _ in range(steps):
        gram = bfloat16_round(x @ x.T)
        update = bfloat16_round(b * gram + c * (gram @ gram))  # addmm(gram, gram, gram, beta=b, alpha=c)
        x = bfloat16_round(a * x + update @ x)  # addmm(x, update, x, beta=a)
    return x.T if wide else x


def _lerp(start: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """``torch.lerp``'s formula (the end nearer to the weight is the one the difference is taken from)."""
    return start + weight * (end - start) if weight < 0.5 else end - (end - start) * (1 - weight)


class Muon(Optimizer):
    """Muon for 2-D parameters (weight matrices; give biases, norms and embeddings to AdamW): ``buf = lerp(buf, g,
    1 - momentum)``; the update ``lerp(g, buf, momentum)`` (Nesterov) or ``buf`` orthogonalised by ``ns_steps``
    Newton-Schulz iterations; ``p *= 1 - lr * weight_decay``; ``p -= lr * scale * update``, with ``scale``
    ``sqrt(max(1, rows / cols))`` (``adjust_lr_fn=None`` or ``"original"``) or ``0.2 * sqrt(max(rows, cols))``
    (``"match_rms_adamw"``: AdamW's learning rate and weight decay carry over). PyTorch's arguments and defaults.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn, optim
        >>> opt = optim.Muon([nn.Parameter(np.ones((4, 2)))], adjust_lr_fn="match_rms_adamw")
        >>> sorted(k for k in opt.param_groups[0] if k != "params")
        ['adjust_lr_fn', 'eps', 'lr', 'momentum', 'nesterov', 'ns_coefficients', 'ns_steps', 'weight_decay']
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if not 0.0 <= momentum:
            raise ValueError(f"Muon: momentum must be >= 0, got {momentum}")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Muon: adjust learning rate function {adjust_lr_fn!r} is not supported; use None or "
                             "'original' (scale by sqrt(max(1, rows / cols))) or 'match_rms_adamw'")
        if len(ns_coefficients) != 3:
            raise ValueError(f"Muon: ns_coefficients must be 3 numbers (a, b, c), got {ns_coefficients!r}")
        if not 0 <= ns_steps < 100:
            raise ValueError(f"Muon: ns_steps must be in [0, 100) (each is three matrix products), got {ns_steps}")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=tuple(float(c) for c in ns_coefficients), eps=eps,
                                      ns_steps=int(ns_steps), adjust_lr_fn=adjust_lr_fn))

    def _check(self, group: dict[str, Any]) -> None:
        super()._check(group)
        for i, p in enumerate(group["params"]):
            if len(getattr(p, "shape", ())) != 2:  # (a Scalar has none)
                raise ValueError(
                    f"Muon only supports 2D parameters (weight matrices), but parameter {i} has shape "
                    f"{tuple(p.shape)}; give biases, norms and embeddings to another optimiser (e.g. AdamW) "
                    "in a second optimiser")

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        momentum, lr = group["momentum"], group["lr"]
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = np.zeros_like(p)
        buf[...] = _lerp(buf, g, 1 - momentum)
        update = _lerp(g, buf, momentum) if group["nesterov"] else buf
        update = newton_schulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        rows, cols = p.shape
        scale = 0.2 * math.sqrt(max(rows, cols)) if group["adjust_lr_fn"] == "match_rms_adamw" else \
            math.sqrt(max(1, rows / cols))
        p *= 1 - lr * group["weight_decay"]
        p -= (lr * scale) * update.astype(p.dtype)
