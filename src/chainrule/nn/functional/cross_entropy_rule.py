"""The fused cross-entropy primitive (softmax and negative log-likelihood in one node) behind
``nn.functional.cross_entropy``: its forward, reverse and forward-mode rules on the host and on a device, and the
calls a jit replay inlines. ``losses.cross_entropy`` checks the arguments and calls it.

Its gradient is ``softmax - target`` (per row, scaled by the reduction); with class indices the reverse rule
subtracts in place from the probabilities the forward pass kept, one (N, C) array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...autodiff.inlined import Inlined
from ...autodiff.primitive import Primitive
from ...core.device import OFF_HOST, add_at, indices_outside, reduce_max, xp_of
from ...ops._define import raw
from ...ops._saved import Saved


def _ce_prepare(
    x: Any, target: Any, ignore_index: int | None, smoothing: float, reduction: str
) -> tuple[Any, ...]:
    """(q, w): smoothed target distribution (N, C) and per-row weights (N, 1), both constant."""
    xr = raw(x)
    n, c = xr.shape
    dt = xr.dtype
    t = raw(target)
    if t.dtype.kind == "f":  # class probabilities
        q = t.astype(dt, copy=True)
        if smoothing:
            q = q * (1.0 - smoothing) + smoothing / c
        w = xp_of(t).ones((n, 1), dtype=dt)
        count = n
    else:
        xp = xp_of(t)  # where the targets are (the host or a device)
        valid = t != ignore_index if ignore_index is not None else xp.ones(n, dtype=bool)
        q = xp.full((n, c), smoothing / c, dtype=dt)
        q[xp.arange(n), np.where(valid, t, 0)] += 1.0 - smoothing
        w = valid.astype(dt).reshape(n, 1)
        count = valid.sum() if valid.__class__ in OFF_HOST else int(valid.sum())  # (a device's is not read)
    if reduction == "mean":
        w = _per_kept_row(w, count)
    return q, w


def _per_kept_row(g: Any, count: Any) -> Any:
    """``g / count``, the mean's share of each kept row; all 0 when every row is ignored (PyTorch's gradient;
    its value is 0/0 = NaN). A device's count stays there: dividing by max(count, 1) needs no read."""
    if count.__class__ in OFF_HOST:
        return g / xp_of(count).maximum(count, 1).astype(g.dtype)
    return g / count if count else g * 0.0


def _ce_rows(target: np.ndarray, ignore_index: int | None) -> tuple[np.ndarray, np.ndarray | None, int]:
    """Class index per row (0 where ignored), the 0/1 mask of kept rows (None: all kept), how many are kept.

    ``ignore_index=None``: ``cross_entropy`` checked that no target can equal the ignored index."""
    if ignore_index is None:
        return target, None, len(target)
    valid = target != ignore_index
    if valid.__class__ in OFF_HOST:  # on a device: the mask and the count stay there (a look at them is a sync)
        return np.where(valid, target, 0), valid, valid.sum()
    if valid.all():
        return target, None, len(target)
    return np.where(valid, target, 0), valid, int(valid.sum())


_KEEP_EXP = 65536  # logits up to this size keep exp(x - max) for the reverse rule (larger: recomputed, less memory)
_OFFSETS: dict[tuple[int, int], np.ndarray] = {}  # (rows, classes) -> read-only start of each row in the flat array


def _row_starts(n: int, c: int, like: Any = None) -> np.ndarray:
    """``arange(0, n * c, c)``: where each row starts in an (n, c) array seen flat (made once per shape),
    on the device of ``like`` when that is not the host."""
    if like is not None and like.__class__ is not np.ndarray:
        return xp_of(like).arange(0, n * c, c)
    starts = _OFFSETS.get((n, c))
    if starts is None:
        starts = np.arange(0, n * c, c)
        starts.flags.writeable = False
        if len(_OFFSETS) < 64:  # a training loop sees a few shapes; anything else is made per call
            _OFFSETS[(n, c)] = starts
    return starts


def _classes_outside(t: np.ndarray, c: int) -> bool:
    """True when a class index of ``t`` lies outside [0, c)."""
    return indices_outside(t, c)


def _class_error(t: np.ndarray, c: int) -> IndexError:
    bad = t[(t < 0) | (t >= c)].flat[0]
    return IndexError(
        f"cross_entropy: target holds class {int(bad)}, outside [0, {c}). In a jit replay: the function was traced "
        "with targets that were all classes (or rows to ignore), and a replay cannot change which rows it ignores; "
        "call the function without jit for this batch"
    )


def _ce_fn(
    x: np.ndarray, target: np.ndarray, ignore_index: int | None, smoothing: float, reduction: str,
    *, saved: Saved | None = None,
) -> np.ndarray:
    n, c = x.shape
    top = reduce_max(x, axis=-1, keepdims=True)
    s = x - top
    e = np.exp(s)
    sums = np.add.reduce(e, axis=-1)
    keep = saved is not None and saved.wanted and _plain(x)
    if keep:  # the reverse rule's softmax needs them again: O(N) (and exp(s) when small: no second exp)
        saved.values["stats"] = (x, top, sums, e if e.size <= _KEEP_EXP else None)
    lse = np.log(sums)  # log-sum-exp of the shifted logits, per row
    if target.dtype.kind == "f":  # -sum_c q_c (s_c - lse) with q the (smoothed) probabilities
        q = target * (1.0 - smoothing) + smoothing / c if smoothing else target
        losses = lse * q.sum(axis=-1) - (q * s).sum(axis=-1)
        count, valid = n, None
    else:
        t, valid, count = _ce_rows(target, ignore_index)
        checked = saved is not None and saved.values.pop("classes_checked", False)
        if not checked and _classes_outside(t, c):  # (cross_entropy checked its call's targets; a replay did not)
            raise _class_error(t, c)
        picked = _row_starts(n, c, t) + t  # s[arange(n), t] on the flat array: one index, reused by the reverse rule
        if keep and s.flags.c_contiguous:
            saved.values["picked"] = (t, picked)
        losses = lse - s.reshape(-1)[picked]
        if smoothing:
            losses = (1.0 - smoothing) * losses + smoothing * (lse - s.mean(axis=-1))
        if valid is not None:
            losses = losses * valid
    losses = losses.astype(x.dtype, copy=False)
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "mean":
        if count.__class__ in OFF_HOST:  # (0 / 0 when every row is ignored: NaN, PyTorch's value)
            return total / count.astype(total.dtype)
        return total / count if count else total * np.nan
    return total


def _plain(value: Any) -> bool:
    """Whether ``value`` is an array of the host or of a device (not a Tensor, nor an example under vmap)."""
    return value.__class__ is np.ndarray or value.__class__ in OFF_HOST


def _probabilities(x: Any) -> Any:
    e = np.exp(x - np.max(raw(x), axis=-1, keepdims=True))  # the shift is a constant: exact gradient
    return e / e.sum(axis=-1, keepdims=True)


def _ce_vjp(
    g: Any, ans: Any, x: Any, target: Any, ignore_index: int | None, smoothing: float, reduction: str,
    *, saved: Saved | None = None,
) -> Any:
    if _plain(x) and _plain(g):  # fast path: in place, one (N, C) array (on the host or a device)
        n, c = x.shape
        host = x.__class__ is np.ndarray
        stats = saved.values.pop("stats", None) if saved is not None else None  # used once, then let go
        picked = saved.values.pop("picked", None) if saved is not None else None
        if stats is not None and stats[0] is x:  # (not when a vmap loop shared one Saved between examples)
            p = stats[3] if stats[3] is not None else np.exp(x - stats[1])  # exp(x - max), as the forward's
            p /= stats[2].reshape(n, 1)  # the same sums as recomputing them: bit-identical
        else:
            p = np.exp(x - reduce_max(x, axis=-1, keepdims=True))
            p /= np.add.reduce(p, axis=-1, keepdims=True)
        if target.dtype.kind == "f":
            q = target * (1.0 - smoothing) + smoothing / c if smoothing else target
            p *= q.sum(axis=-1, keepdims=True)  # d/dx of lse * sum(q) - q.x: a target need not sum to 1 (PyTorch)
            p -= q
            valid, count = None, n
        else:
            t, valid, count = _ce_rows(target, ignore_index)
            if p.flags.c_contiguous:  # p[rows, t] -= ..., on the flat view (cheaper than 2-d fancy indexing)
                at = picked[1] if picked is not None and picked[0] is t else _row_starts(n, c, t) + t
                if host:
                    p.reshape(-1)[at] -= 1.0 - smoothing
                else:  # one scatter on a device, where a gather, a subtraction and a scatter are three launches
                    add_at(p.reshape(-1), at, smoothing - 1.0)  # (the rows' positions are distinct)
            else:
                p[xp_of(p).arange(n), t] -= 1.0 - smoothing
            if smoothing:
                p -= smoothing / c
        if reduction == "none":
            p *= g.reshape(-1, 1) if valid is None else (g * valid).reshape(-1, 1)
            return p
        scale = _per_kept_row(g, count) if reduction == "mean" else g
        if valid is not None:
            scale = scale * valid.reshape(-1, 1)
        p *= scale
        return p
    q, w = _ce_prepare(x, target, ignore_index, smoothing, reduction)
    scale = g.reshape(-1, 1) * w if reduction == "none" else g * w
    return (_weighted_probabilities(x, q) - q) * scale


def _weighted_probabilities(x: Any, q: np.ndarray) -> Any:
    """softmax(x) times each row's target total: the loss is lse * sum(q) - sum(q * x), and probability
    targets need not sum to 1 (PyTorch takes them as they are); class indices always do."""
    totals = q.sum(axis=-1, keepdims=True)
    probs = _probabilities(x)
    if q.__class__ is not np.ndarray:  # on a device: no test (it would wait for the device), the product always
        return probs * totals
    return probs if np.all(totals == 1.0) else probs * totals


def _ce_jvp(
    t: Any, ans: Any, x: Any, target: Any, ignore_index: int | None, smoothing: float, reduction: str,
    *, saved: Saved | None = None,
) -> Any:
    q, w = _ce_prepare(x, target, ignore_index, smoothing, reduction)
    per_row = ((_weighted_probabilities(x, q) - q) * t).sum(axis=-1) * w[:, 0]
    return per_row if reduction == "none" else per_row.sum()


def _ce_inline(ans: Any, args: list, kw: dict) -> Inlined | None:
    """For a jit replay: the calls ``_ce_fn`` and ``_ce_vjp`` make for class indices, no ignored index, no
    smoothing, the mean, and logits small enough to keep exp(x - max) (the reverse rule reads it: no second exp)."""
    x, target = args[0], args[1]
    if (type(x) is not np.ndarray or type(target) is not np.ndarray or x.ndim != 2 or x.dtype.kind != "f"
            or target.dtype.kind not in "iu" or target.shape != x.shape[:1] or not 0 < x.size <= _KEEP_EXP
            or kw.get("ignore_index") is not None or kw.get("smoothing") != 0.0 or kw.get("reduction") != "mean"):
        return None
    n, c = x.shape
    return Inlined(
        forward=["{p}top = np.maximum.reduce({a0}, axis=-1, keepdims=True)",
                 "{p}s = {a0} - {p}top",
                 "{p}e = np.exp({p}s)",
                 "{p}sums = np.add.reduce({p}e, axis=-1)",
                 "{p}lse = np.log({p}sums)",
                 "if {p}outside({a1}, {p}c): raise {p}error({a1}, {p}c)",
                 "{p}picked = {p}starts + {a1}",
                 "{out} = ({p}lse - {p}s.reshape(-1)[{p}picked]).astype({p}dtype, copy=False).sum() / {p}count"],
        keep=("{p}e", "{p}sums", "{p}picked"),
        # (out of place: a second backward through a replayed call reads the kept exp(x - max) again)
        backward={0: ["t = {p}e / {p}sums.reshape({p}n, 1)",
                      "t.reshape(-1)[{p}picked] -= 1.0",
                      "t *= {g} / {p}count"]},
        consts={"starts": _row_starts(n, c), "dtype": x.dtype, "count": n, "n": n, "c": c,
                "outside": _classes_outside, "error": _class_error},
    )


_cross_entropy = Primitive("nn.cross_entropy", _ce_fn)
_cross_entropy.defvjp(_ce_vjp, None)
_cross_entropy.defjvp(_ce_jvp, None)
_cross_entropy.inline = _ce_inline
