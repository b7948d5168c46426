"""Short numbers and arrays for pictures and text."""

from __future__ import annotations

import math

import numpy as np


def num(v: float) -> str:
    """A short number: integers without '.0', others with 4 significant digits."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.4g}"


def value(v: float) -> str:
    """A node's data or grad, as the seeds print them (4 decimals), shorter when huge or tiny."""
    v = float(v)
    if not math.isfinite(v) or (v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3)):
        return f"{v:.4g}"
    return f"{v:.4f}"


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def array_text(a: np.ndarray, limit: int = 4) -> str:
    """Small arrays in full (rounded), bigger ones as shape only."""
    if a.size == 1:
        return value(float(a.reshape(-1)[0].real))
    if a.size <= limit:
        return "[" + ", ".join(num(float(x)) for x in a.reshape(-1).real) + "]"
    return shape_text(a.shape)


def label_of(node: object) -> str:
    """A node's label, '' when it has none (Tensors keep None)."""
    return getattr(node, "label", None) or ""


def name(node: object) -> str:
    """The label, or the op for unlabeled intermediate nodes, or 'leaf'."""
    return label_of(node) or getattr(node, "op", "") or "leaf"
