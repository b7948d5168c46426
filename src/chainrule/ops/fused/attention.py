"""Scaled dot-product attention as one primitive, with PyTorch's semantics.

``softmax(q @ k^T * scale + mask) @ v`` over shapes (..., L, E), (..., S, E), (..., S, Ev).
The forward pass keeps only the attention probabilities P (B·H·L·S) for the reverse rule;
the scores, the exponentials and the mask-added copies are never held. The reverse rule
uses ``rowsum(dP * P) = rowsum(g * out)`` (as FlashAttention does) so it needs no second
score-sized temporary. With ``create_graph`` the rule recomputes P with differentiable ops,
so gradients of gradients work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...autodiff.primitive import Primitive
from ...core.defaults import generator
from ...core.device import OFF_HOST, as_array, contiguous, is_off_host, kernel, of, reduce_max, uniform_like, xp_of
from ...core.traces import draw
from ...runtime.blas import matmul as blas_matmul
from ...tensor import Tensor
from .._define import raw
from .._saved import Saved, on_values
from ..elementwise import where
from ..reductions import softmax
from ..shape import broadcast_to, expand_dims, reshape
from .attention_blocks import packed_backward, packed_forward

_CAUSAL: dict[tuple[int, int, Any], np.ndarray] = {}


def causal_bias(L: int, S: int, dtype: Any, like: Any = None) -> np.ndarray:
    """(L, S) additive mask: 0 where query i may see key j (j <= i, top-left aligned), -inf elsewhere
    (made once per shape and device; on the device of ``like``)."""
    xp = np if like is None else xp_of(like)
    key = (L, S, np.dtype(dtype), xp.__name__)
    bias = _CAUSAL.get(key)
    if bias is None:
        bias = np.where(xp.tril(xp.ones((L, S), dtype=bool)), 0.0, -np.inf).astype(dtype)
        if xp is np:
            bias.flags.writeable = False
        if len(_CAUSAL) > 64:
            _CAUSAL.clear()
        _CAUSAL[key] = bias
    return bias


def _t(x: Any) -> Any:
    """The transpose of the last two axes; for NumPy a contiguous copy, since np.matmul runs stacked
    products through BLAS only when each operand's last axis has unit stride (a transposed view
    falls back to a slow loop)."""
    return contiguous(np.swapaxes(x, -1, -2)) if isinstance(x, np.ndarray) else np.swapaxes(x, -1, -2)


def _probabilities(q: Any, k: Any, bias: Any, scale: float) -> Any:
    """P = softmax(q k^T scale + bias), with differentiable ops (Tensors) or NumPy (in place)."""
    if type(q) is np.ndarray and type(k) is np.ndarray and q.shape[-2] == 1 and q.ndim == k.ndim:
        # one query (sampling with a cache): the scores are k (q scale)^T, with no copy of the keys transposed
        qs = (q * scale).reshape(*q.shape[:-2], q.shape[-1], 1)
        s = np.swapaxes(blas_matmul(k, qs), -1, -2)
    elif q.__class__ in OFF_HOST and k.__class__ in OFF_HOST and (bias is None or bias.__class__ in OFF_HOST):
        return _device_softmax(blas_matmul(q, _t(k)), bias, scale)
    else:
        s = blas_matmul(q * scale, _t(k))
    if bias is not None:
        s = s + bias if isinstance(s, Tensor) or isinstance(bias, Tensor) else np.add(s, bias, out=s)
    return softmax(s, axis=-1) if isinstance(s, Tensor) else _softmax_inplace(s)


def _softmax_inplace(s: np.ndarray) -> np.ndarray:
    if s.__class__ is not np.ndarray:
        return _device_softmax(s, None, 1.0)
    s -= reduce_max(s, axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= np.add.reduce(s, axis=-1, keepdims=True)
    return s


def _device_softmax(s: Any, bias: Any, scale: float) -> Any:
    """softmax(s * scale + bias) over the last axis of a device's scores: three kernels where CuPy fuses (the
    rows' maxima, the sums of their shifted exponentials, the quotients), the scaled scores never written out."""
    name = f"{scale!r}_masked" if bias is not None else f"{scale!r}"
    top_of, total_of, quotient = (kernel(s, f"softmax_{part}_{name}", make)
                                  for part, make in zip(("max", "total", "quotient"), _softmax_kernels(scale, bias)))
    args = (s,) if bias is None else (s, bias)
    rows = (*s.shape[:-1], 1)
    top = top_of(*args).reshape(rows)
    total = total_of(*args, top).reshape(rows)
    return quotient(*args, top, total)


def _softmax_kernels(scale: float, bias: Any) -> tuple[Any, Any, Any]:
    """The three kernels' bodies (``make(xp, special)`` each), for scores with or without an additive mask."""
    if bias is None:
        return (lambda xp, special: lambda s: (s * scale).max(axis=-1),  # (the method: CuPy's fusion tests it)
                lambda xp, special: lambda s, top: xp.sum(xp.exp(s * scale - top), axis=-1),
                lambda xp, special: lambda s, top, total: xp.exp(s * scale - top) / total)
    return (lambda xp, special: lambda s, b: (s * scale + b).max(axis=-1),
            lambda xp, special: lambda s, b, top: xp.sum(xp.exp(s * scale + b - top), axis=-1),
            lambda xp, special: lambda s, b, top, total: xp.exp(s * scale + b - top) / total)


def _score_grad(xp: Any, special: Any) -> Any:
    return lambda dp, rows, p: (dp - rows) * p


def _scaled_score_grad(scale: float) -> Any:
    return lambda xp, special: lambda dp, rows, p: (dp - rows) * p * scale


def _rows_dot(xp: Any, special: Any) -> Any:
    return lambda g, out: xp.sum(g * out, axis=-1)


def _sdpa_fn(q: Any, k: Any, v: Any, bias: Any = None, *, scale: float, drop: Any, saved: Saved) -> Any:
    p = _probabilities(q, k, bias, scale)
    if saved.wanted:
        saved.values["p"] = p
    return blas_matmul(p if drop is None else p * drop, v)


def _saved_p(saved: Saved, q: Any, k: Any, bias: Any, scale: float) -> Any:
    p = saved.values.get("p") if on_values(q, k, bias) else None
    return _probabilities(q, k, bias, scale) if p is None else p


def _sdpa_grads(wanted: tuple[int, ...], g: Any, out: Any, q: Any, k: Any, v: Any, bias: Any, scale: float,
                drop: Any, saved: Saved) -> dict[int, Any]:
    """Gradients for the arguments in ``wanted`` (0 q, 1 k, 2 v, 3 a float mask), all from one P.

    Products are arranged so every operand has a unit-stride last axis: dV = (g^T P)^T and
    dK = (q^T dS)^T, with the small (..., E, L) transposes copied, never the (..., L, S) ones.
    """
    p = _saved_p(saved, q, k, bias, scale)
    pd = p if drop is None else p * drop
    grads: dict[int, Any] = {}
    if 2 in wanted:
        grads[2] = np.swapaxes(blas_matmul(_t(g), pd), -1, -2)
    if not {0, 1, 3} & set(wanted):
        return grads
    fast = on_values(g, out, p, v)
    dp = blas_matmul(g, _t(v))
    if drop is not None:
        dp = dp * drop
    if fast and dp.__class__ is not np.ndarray:  # a device's: a kernel each where CuPy fuses
        rows = kernel(g, "rows_dot", _rows_dot)(g, out).reshape(*g.shape[:-1], 1)
        if 3 not in wanted:  # (the scale goes into dS, not into each of dQ and dK)
            ds = kernel(dp, f"score_grad_{scale!r}", _scaled_score_grad(scale))(dp, rows, p)
            return _query_key_grads(wanted, grads, ds, q, k, 1.0)
        ds = kernel(dp, "score_grad", _score_grad)(dp, rows, p)
        return _query_key_grads(wanted, grads, ds, q, k, scale)
    rows = np.sum(g * out, axis=-1, keepdims=True)  # = rowsum(dP * P): no score-sized temporary
    if fast:
        dp -= rows
        dp *= p
        ds = dp
    else:
        ds = (dp - rows) * p
    return _query_key_grads(wanted, grads, ds, q, k, scale)


def _query_key_grads(wanted: tuple[int, ...], grads: dict[int, Any], ds: Any, q: Any, k: Any,
                     scale: float) -> dict[int, Any]:
    """dQ = dS k scale, dK = (q^T dS)^T scale and the mask's dS, into ``grads`` (``scale`` 1: already in dS)."""
    if 0 in wanted:
        grads[0] = blas_matmul(ds, k) * scale if scale != 1.0 else blas_matmul(ds, k)
    if 1 in wanted:
        grads[1] = np.swapaxes(blas_matmul(_t(q * scale if scale != 1.0 else q), ds), -1, -2)
    if 3 in wanted:
        grads[3] = ds
    return grads


def _sdpa_vjp(argnum: int) -> Any:
    def rule(g: Any, ans: Any, q: Any, k: Any, v: Any, bias: Any = None, *, scale: float, drop: Any,
             saved: Saved) -> Any:
        def compute(wanted: tuple[int, ...]) -> dict[int, Any]:
            return _sdpa_grads(wanted, g, ans, q, k, v, bias, scale, drop, saved)

        if on_values(g, q, k, v, bias):
            return saved.take(argnum, g, compute)
        return compute((argnum,))[argnum]  # on Tensors (create_graph): recomputed, differentiable

    return rule


def _sdpa_jvp(argnum: int) -> Any:
    def rule(t: Any, ans: Any, q: Any, k: Any, v: Any, bias: Any = None, *, scale: float, drop: Any,
             saved: Saved) -> Any:
        p = _saved_p(saved, q, k, bias, scale)
        if argnum == 2:
            return blas_matmul(p if drop is None else p * drop, t)
        if argnum == 0:
            ds = blas_matmul(t * scale, np.swapaxes(k, -1, -2))
        elif argnum == 1:
            ds = blas_matmul(q * scale, np.swapaxes(t, -1, -2))
        else:
            ds = t
        dp = p * (ds - np.sum(ds * p, axis=-1, keepdims=True))  # the softmax's tangent
        return blas_matmul(dp if drop is None else dp * drop, v)

    return rule


# the rules read q, k, v, the float mask and the output (the probabilities are in Saved)
_sdpa = Primitive("nn.scaled_dot_product_attention", _sdpa_fn, reads=(0, 1, 2, 3, "ans"))
_sdpa.defvjp(*[_sdpa_vjp(i) for i in range(4)])
_sdpa.defjvp(*[_sdpa_jvp(i) for i in range(4)])


def _check(q: Any, k: Any, v: Any, attn_mask: Any, is_causal: bool, dropout_p: float) -> tuple[int, int]:
    sq, sk, sv = np.shape(raw(q)), np.shape(raw(k)), np.shape(raw(v))
    where = "scaled_dot_product_attention"
    if len(sq) < 2 or len(sk) < 2 or len(sv) < 2:
        raise ValueError(f"{where}: q, k and v need shape (..., L, E), (..., S, E), (..., S, Ev); got {sq}, {sk}, {sv}")
    if sq[-1] != sk[-1]:
        raise ValueError(f"{where}: q {sq} and k {sk} must have the same last axis E (the query/key size)")
    if sk[-2] != sv[-2]:
        raise ValueError(f"{where}: k {sk} and v {sv} must have the same number of positions S (axis -2)")
    try:
        np.broadcast_shapes(sq[:-2], sk[:-2], sv[:-2])
    except ValueError:
        raise ValueError(f"{where}: the batch axes of q {sq}, k {sk} and v {sv} do not broadcast") from None
    if attn_mask is not None:
        if is_causal:
            raise ValueError(f"{where}: pass either attn_mask or is_causal=True, not both")
        sm = np.shape(raw(attn_mask))
        try:
            np.broadcast_shapes(sm, (*np.broadcast_shapes(sq[:-2], sk[:-2]), sq[-2], sk[-2]))
        except ValueError:
            raise ValueError(
                f"{where}: attn_mask of shape {sm} does not broadcast to the scores' shape (..., L={sq[-2]}, "
                f"S={sk[-2]})"
            ) from None
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"{where}: dropout_p must be in [0, 1), got {dropout_p}")
    return sq[-2], sk[-2]


def scaled_dot_product_attention(
    q: Any, k: Any, v: Any, attn_mask: Any = None, is_causal: bool = False, dropout_p: float = 0.0,
    scale: float | None = None, enable_gqa: bool = False, rng: Any = None,
) -> Any:
    """``softmax(q @ k^T * scale + mask) @ v``, as ``torch.nn.functional.scaled_dot_product_attention``.

    Shapes (..., L, E), (..., S, E), (..., S, Ev) -> (..., L, Ev); batch axes broadcast.
    ``attn_mask``: boolean (True = may attend) or float (added to the scores; it gets a
    gradient when it is a Tensor), broadcastable to (..., L, S). ``is_causal``: query i sees
    keys 0..i (top-left aligned, as PyTorch). ``scale`` defaults to 1/sqrt(E). ``dropout_p``
    zeroes attention probabilities with that probability (``rng``: a seed or Generator).
    ``enable_gqa``: grouped-query attention; q (..., Hq, L, E) against k, v with Hkv heads
    (Hq a multiple of Hkv): each key/value head serves Hq / Hkv consecutive query heads.
    A query that may attend to nothing (its mask row all False or -inf) gets zeros and passes
    no gradient, as PyTorch 2.13 does.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> q = k = v = np.eye(2).reshape(1, 2, 2)
        >>> np.round(F.scaled_dot_product_attention(q, k, v, is_causal=True), 2)
        array([[[1.  , 0.  ],
                [0.33, 0.67]]])
    """
    if enable_gqa:
        k, v = _share_heads(q, k, v)
    L, S = _check(q, k, v, attn_mask, is_causal, float(dropout_p))
    dt = np.result_type(raw(q), raw(k), raw(v))
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    s = 1.0 / math.sqrt(np.shape(raw(q))[-1]) if scale is None else float(scale)
    bias = None
    if is_causal:
        bias = causal_bias(L, S, dt, raw(q))
    elif attn_mask is not None:
        m = attn_mask if isinstance(attn_mask, Tensor) else as_array(attn_mask)
        if raw(m).dtype == bool:
            bias = np.where(raw(m), dt.type(0), dt.type(-np.inf))
        else:
            bias = m
    live = None
    if bias is not None and not is_causal:
        live = ~np.all(np.isneginf(raw(bias)), axis=-1, keepdims=True)  # queries that see at least one key
        if live.all():
            live = None
        else:  # such a query's mask row is made finite (no NaN in any rule), and its output zeroed below
            bias = where(live, bias, 0) if isinstance(bias, Tensor) else np.where(live, bias, dt.type(0))
    drop = None
    if dropout_p > 0.0:
        shape = (*np.broadcast_shapes(np.shape(raw(q))[:-2], np.shape(raw(k))[:-2]), L, S)
        drop = masked_by_dropout(_where(q), rng, shape, dropout_p, dt)
    args = (q, k, v) if bias is None else (q, k, v, bias)
    out = _sdpa(*args, scale=s, drop=drop, saved=Saved(*args))
    return out if live is None else out * live.astype(dt)


def _where(x: Any) -> Any:
    """``x``'s array for where it lives (host or device), read without telling a jit trace: not a value read."""
    return x._data if isinstance(x, Tensor) else x


def masked_by_dropout(like: Any, rng: Any, shape: tuple[int, ...], p: float, dt: np.dtype) -> Any:
    """A dropout mask of ``shape`` where ``like`` is: on the host, or on a device from the device's own draws
    (``uniform_like``); through ``core.traces.draw`` either way, so that a jit replay draws a new one."""
    if is_off_host(like):
        return draw(device_dropout_mask, of(like), rng, shape, p, dt)
    return draw(dropout_mask, rng, shape, p, dt)


def device_dropout_mask(device: Any, rng: Any, shape: tuple[int, ...], p: float, dt: np.dtype) -> Any:
    """:func:`dropout_mask` on ``device`` (a ``core.device.Backend``): from its own generator when ``rng`` is None,
    else drawn from ``rng`` on the host and copied (see ``uniform_like``)."""
    draws = uniform_like(device, shape, rng)
    return (draws >= p).astype(dt) * dt.type(1.0 / (1.0 - p))


def dropout_mask(rng: Any, shape: tuple[int, ...], p: float, dt: np.dtype) -> np.ndarray:
    """A dropout mask: 0 with probability ``p``, else 1 / (1 - p), from ``rng`` (a Generator, a seed, or None: the
    generator ``manual_seed`` resets). Drawn through ``core.traces.draw``, so that a jit replay draws a new one, as
    each eager call does."""
    gen = generator(rng)
    return (gen.random(shape) >= p).astype(dt) * dt.type(1.0 / (1.0 - p))


def _share_heads(q: Any, k: Any, v: Any) -> tuple[Any, Any]:
    """Grouped-query attention: repeat each key/value head for its group of query heads (PyTorch's order)."""
    sq, sk, sv = np.shape(raw(q)), np.shape(raw(k)), np.shape(raw(v))
    if min(len(sq), len(sk), len(sv)) < 3:
        raise ValueError(
            f"scaled_dot_product_attention: enable_gqa needs a head axis (..., H, L, E): got q {sq}, k {sk}, v {sv}"
        )
    hq, hk = sq[-3], sk[-3]
    if sv[-3] != hk or hk == 0 or hq % hk:
        raise ValueError(
            f"scaled_dot_product_attention: enable_gqa=True needs k and v with the same number of heads, dividing "
            f"q's {hq}; got q {sq}, k {sk}, v {sv}"
        )
    if hq == hk:
        return k, v
    return _spread(k, hq // hk), _spread(v, hq // hk)


def _spread(x: Any, r: int) -> Any:
    """Each head of x (..., H, S, E) ``r`` times in a row (..., H r, S, E): a broadcast and a reshape, so the
    gradient is a sum over the copies (as an index gather, ``repeat``'s, it would be a scatter-add)."""
    shape = np.shape(raw(x))
    wide = broadcast_to(expand_dims(x, -3), (*shape[:-2], r, *shape[-2:]))
    return reshape(wide, (*shape[:-3], shape[-3] * r, *shape[-2:]))


# -- attention on the packed output of one q/k/v projection ---------------------------------------
def _unpack(qkv: Any) -> list[Any]:
    """(B, T, 3, H, E) -> q, k, v as (B, H, T, E) views (differentiable slices on Tensors)."""
    return [np.swapaxes(qkv[:, :, i], 1, 2) for i in range(3)]


def _fast(*xs: Any) -> bool:
    """NumPy floating-point arrays only: the blocked kernels (ops.attention_blocks) apply."""
    return all(type(x) is np.ndarray and x.dtype.kind == "f" for x in xs)


def _packed_fn(qkv: Any, *, bias: Any, scale: float, drop: Any, saved: Saved) -> Any:
    if _fast(qkv):
        out, kept = packed_forward(qkv, bias, scale, drop, keep_p=bool(saved.wanted))
        if kept is not None:
            saved.values["p_t"] = kept  # (E^T, r), P^T = E^T r: not the "p" the generic rules read
        return out
    q, k, v = _unpack(qkv)
    return contiguous(np.swapaxes(_sdpa_fn(q, k, v, bias, scale=scale, drop=drop, saved=saved), 1, 2))


def _packed_vjp(g: Any, ans: Any, qkv: Any, *, bias: Any, scale: float, drop: Any, saved: Saved) -> Any:
    if _fast(g, ans, qkv) and g.dtype == qkv.dtype:  # dq, dk, dv written straight into qkv's layout
        kept = saved.values.pop("p_t", None)
        return packed_backward(g, ans, qkv, kept, bias, scale, drop)
    q, k, v = _unpack(qkv)
    gh, outh = np.swapaxes(g, 1, 2), np.swapaxes(ans, 1, 2)
    if on_values(g, qkv):  # write dq, dk, dv straight into one array laid out like qkv: no zeros, no sums
        grads = _sdpa_grads((0, 1, 2), gh, outh, q, k, v, bias, scale, drop, saved)
        saved.values.clear()
        if qkv.__class__ is not np.ndarray:  # a device's: one stacking kernel, not four launches
            return np.stack([np.swapaxes(grads[i], 1, 2) for i in range(3)], axis=2)
        out = np.empty_like(qkv)
        for i in range(3):
            out[:, :, i] = np.swapaxes(grads[i], 1, 2)
        return out
    grads = _sdpa_grads((0, 1, 2), gh, outh, q, k, v, bias, scale, drop, Saved())
    return np.stack([np.swapaxes(grads[i], 1, 2) for i in range(3)], axis=2)


def _packed_jvp(t: Any, ans: Any, qkv: Any, *, bias: Any, scale: float, drop: Any, saved: Saved) -> Any:
    q, k, v = _unpack(qkv)
    parts = [_sdpa_jvp(i)(ti, None, q, k, v, bias, scale=scale, drop=drop, saved=saved)
             for i, ti in enumerate(_unpack(t))]
    return np.swapaxes(parts[0] + parts[1] + parts[2], 1, 2)


_packed = Primitive("nn.qkv_attention", _packed_fn, reads=(0, "ans"))
_packed.defvjp(_packed_vjp)
_packed.defjvp(_packed_jvp)


def qkv_attention(qkv: Any, is_causal: bool = True, dropout_p: float = 0.0, scale: float | None = None,
                  rng: Any = None) -> Any:
    """Attention on packed queries, keys and values, as one projection makes them.

    ``qkv`` has shape (B, T, 3, H, E) (``linear(x, W_qkv).reshape(B, T, 3, H, E)``); the result,
    (B, T, H, E), is ``scaled_dot_product_attention(q, k, v)`` with heads moved next to E, so
    ``.reshape(B, T, H * E)`` joins the heads for free. Its gradient comes back in qkv's layout
    in one array (slicing q, k and v out instead would give each a full-size zero gradient).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.qkv_attention(np.ones((2, 5, 3, 4, 8))).shape
        (2, 5, 4, 8)
    """
    sh = np.shape(raw(qkv))
    if len(sh) != 5 or sh[2] != 3:
        raise ValueError(f"qkv_attention: qkv must have shape (B, T, 3, H, E), got {sh}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"qkv_attention: dropout_p must be in [0, 1), got {dropout_p}")
    dt = np.result_type(raw(qkv))
    if dt.kind != "f":
        raise TypeError(f"qkv_attention: qkv must be floating point, got {dt}")
    b, t, _, h, e = sh
    s = 1.0 / math.sqrt(e) if scale is None else float(scale)
    drop = None
    if dropout_p > 0.0:
        drop = masked_by_dropout(_where(qkv), rng, (b, h, t, t), dropout_p, dt)
    bias = causal_bias(t, t, dt, _where(qkv)) if is_causal else None
    return _packed(qkv, bias=bias, scale=s, drop=drop, saved=Saved(qkv))
