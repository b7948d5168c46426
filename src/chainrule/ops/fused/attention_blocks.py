"""NumPy kernels for attention on packed q/k/v (``qkv_attention``), one batch block at a time.

The first-order fast path of ``nn.qkv_attention``: for a block of batch items, the scores,
softmax and products run while the block's (H, T, T) scores stay in the CPU cache (one pass
over main memory instead of seven), and blocks are split between threads (``runtime.threads``).
Every block is computed by the same operations whatever the split, so results do not depend
on the number of threads.

Layouts: ``qkv`` is (B, T, 3, H, E); q, k, v are its (B, H, T, E) views (unit-stride rows, so
BLAS takes them as they are, transposed or not, and writes results straight into views of the
output (B, T, H, E) and of the gradient, laid out like qkv).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...runtime.threads import for_blocks

# scores per block: 512 KiB in float32, in L2 with the block's other arrays. Twice the 64K that fits a small L2:
# each NumPy call hands the GIL over between threads, and on 2 cores the GPT's attention (fwd + bwd, B=32,
# H=4, T=128) took 8.6 ms with 64K-score blocks, 7.0 with 128K (one thread: 11.7 and 11.5)
_BLOCK_SCORES = 131072
_BIAS_T: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _views(qkv: np.ndarray) -> list[np.ndarray]:
    return [qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3)]


def _transposed(x: np.ndarray, scale: Any = None) -> np.ndarray:
    """(..., T, E) -> contiguous (..., E, T), times ``scale`` when given (one pass either way)."""
    out = np.empty((*x.shape[:-2], x.shape[-1], x.shape[-2]), dtype=x.dtype)
    if scale is None:
        np.copyto(out, x.swapaxes(-1, -2))
    else:
        np.multiply(x.swapaxes(-1, -2), scale, out=out)
    return out


def _bias_t(bias: Any) -> Any:
    """The (L, S) additive mask as (S, L), made once per mask array."""
    if bias is None:
        return None
    hit = _BIAS_T.get(id(bias))
    if hit is None or hit[0] is not bias:
        if len(_BIAS_T) > 64:
            _BIAS_T.clear()
        hit = _BIAS_T[id(bias)] = (bias, np.ascontiguousarray(np.swapaxes(bias, -1, -2)))
    return hit[1]


def _exponentials_t(q: np.ndarray, k: np.ndarray, bias_t: Any, scale: Any, out: np.ndarray) -> np.ndarray:
    """E^T = exp(q k^T scale + bias - m)^T for one block in ``out`` (..., S, L); returns r (..., 1, L), the
    reciprocal of each query's sum, so that P^T = E^T r.

    The shift m is the block's largest score (one reduction, folded into the mask's add, instead of
    a per-query maximum and a subtraction pass); a query whose own scores all lie far below it
    (sum < 1e-20: its exponentials could lose precision to underflow) gets its block redone with
    each query's own maximum. The transposed layout puts the softmax's sums across rows (axis -2),
    where a product with a row of ones (BLAS) makes them; P itself is never formed: the output and
    the reverse rule scale their small (..., L, E) factors by r instead of the score-sized array.
    """
    np.matmul(k, _transposed(q, scale), out=out)  # S^T = k (q scale)^T
    if out.size == 0:
        return np.ones((*out.shape[:-2], 1, out.shape[-1]), dtype=out.dtype)
    top = np.maximum.reduce(out, axis=None)
    if bias_t is not None:
        out += bias_t - top
    else:
        out -= top
    np.exp(out, out=out)
    sums = np.matmul(np.ones((1, out.shape[-2]), dtype=out.dtype), out)
    if sums.min() < 1e-20:  # some query's scores lie far below the block's largest: its own maximum instead
        np.matmul(k, _transposed(q, scale), out=out)
        if bias_t is not None:
            out += bias_t
        out -= np.maximum.reduce(out, axis=-2, keepdims=True)
        np.exp(out, out=out)
        sums = np.matmul(np.ones((1, out.shape[-2]), dtype=out.dtype), out)  # (as PyTorch's CPU softmax)
    return np.reciprocal(sums, out=sums)


def _block(heads: int, t: int) -> int:
    return max(1, _BLOCK_SCORES // max(1, heads * t * t))


def packed_forward(qkv: np.ndarray, bias: Any, scale: float, drop: Any, keep_p: bool) -> tuple[np.ndarray, Any]:
    """(output (B, T, H, E), and when ``keep_p`` what the reverse rule needs: the transposed unnormalised
    exponentials E^T (B, H, S, L) and the reciprocal sums r (B, H, 1, L), P^T = E^T r; else None)."""
    b, t, _, h, e = qkv.shape
    q, k, v = _views(qkv)
    sc, bias_t = qkv.dtype.type(scale), _bias_t(bias)
    out = np.empty((b, t, h, e), dtype=qkv.dtype)
    out_h = out.transpose(0, 2, 1, 3)
    e_all = np.empty((b, h, t, t), dtype=qkv.dtype) if keep_p else None
    r_all = np.empty((b, h, 1, t), dtype=qkv.dtype) if keep_p else None

    def work(lo: int, hi: int) -> None:
        e_t = e_all[lo:hi] if e_all is not None else np.empty((hi - lo, h, t, t), qkv.dtype)
        r = _exponentials_t(q[lo:hi], k[lo:hi], bias_t, sc, e_t)
        if r_all is not None:
            r_all[lo:hi] = r
        if drop is not None:
            e_t = e_t * drop[lo:hi].swapaxes(-1, -2)
        o = out_h[lo:hi]
        np.matmul(e_t.swapaxes(-1, -2), v[lo:hi], out=o)  # BLAS reads E^T transposed, writes in place
        o *= r.swapaxes(-1, -2)  # P v = (E v) r, on the small (L, E) side

    for_blocks(work, b, _block(h, t), min_blocks=2)
    return out, (None if e_all is None else (e_all, r_all))


def packed_backward(g: np.ndarray, ans: np.ndarray, qkv: np.ndarray, kept: Any, bias: Any, scale: float,
                    drop: Any) -> np.ndarray:
    """The gradient for qkv (B, T, 3, H, E) given the output gradient g (B, T, H, E).

    ``kept``: (E^T, r) from the forward pass, or None (recomputed block by block). With g' = g r
    (each query's row scaled: small), dV = P^T g = E^T g' and dS = P (dP - rowsum(dP P)) =
    E (v g'^T - rowsum(g' out)), using rowsum(dP * P) = rowsum(g * out) (as FlashAttention does):
    no second score-sized array, and no pass to normalise E.
    """
    b, t, _, h, e = qkv.shape
    q, k, v = _views(qkv)
    sc, bias_t = qkv.dtype.type(scale), _bias_t(bias)
    g_h, ans_h = g.transpose(0, 2, 1, 3), ans.transpose(0, 2, 1, 3)
    grad = np.empty_like(qkv)
    dq, dk, dv = _views(grad)
    e_all, r_all = kept if kept is not None else (None, None)

    def work(lo: int, hi: int) -> None:
        if e_all is not None:
            e_t, r = e_all[lo:hi], r_all[lo:hi]
        else:
            e_t = np.empty((hi - lo, h, t, t), qkv.dtype)
            r = _exponentials_t(q[lo:hi], k[lo:hi], bias_t, sc, e_t)
        dr_t = None if drop is None else drop[lo:hi].swapaxes(-1, -2)
        gs = g_h[lo:hi] * r.swapaxes(-1, -2)  # g' = g r, contiguous (..., L, E)
        np.matmul(e_t if dr_t is None else e_t * dr_t, gs, out=dv[lo:hi])  # dV = E^T g'
        ds_t = np.matmul(v[lo:hi], _transposed(gs, sc))  # dP'^T scale = v (g' scale)^T (a transposed view here
        # is ~1000x slower when OpenBLAS runs this size on 2 threads)
        if dr_t is not None:
            ds_t *= dr_t
        rows = np.einsum("...i,...i->...", gs, ans_h[lo:hi])  # rowsum(g' * out)
        rows *= sc
        ds_t -= rows[..., None, :]
        ds_t *= e_t  # dS^T scale
        np.matmul(ds_t, q[lo:hi], out=dk[lo:hi])  # dK = dS^T q scale
        np.matmul(ds_t.swapaxes(-1, -2), k[lo:hi], out=dq[lo:hi])  # dQ = dS k scale

    for_blocks(work, b, _block(h, t), min_blocks=2)
    return grad
