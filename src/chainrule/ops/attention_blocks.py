"""NumPy kernels for attention on packed q/k/v (``qkv_attention``), one batch block at a time.

The first-order fast path of ``nn.qkv_attention``: for a block of batch items, the scores,
softmax and products run while the block's (H, T, T) scores stay in the CPU cache (one pass
over main memory instead of seven), and blocks are split between threads (``ops._parallel``).
Every block is computed by the same operations whatever the split, so results do not depend
on the number of threads.

Layouts: ``qkv`` is (B, T, 3, H, E); q, k, v are its (B, H, T, E) views (unit-stride rows, so
BLAS takes them as they are, transposed or not, and writes results straight into views of the
output (B, T, H, E) and of the gradient, laid out like qkv).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._parallel import for_blocks

_BLOCK_SCORES = 65536  # scores per block: 256 KiB in float32, in L2 with the block's other arrays
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


def _probabilities_t(q: np.ndarray, k: np.ndarray, bias_t: Any, scale: Any, out: np.ndarray) -> np.ndarray:
    """P^T = softmax(q k^T scale + bias)^T for one block, as (..., S, L) in ``out``.

    The transposed layout puts the softmax's reductions across rows (axis -2), where NumPy
    runs them as vectorised row operations (a reduction along each short row is ~3x slower);
    the sum is a product with a row of ones (BLAS), and one reciprocal per column replaces
    S divisions.
    """
    np.matmul(k, _transposed(q, scale), out=out)  # S^T = k (q scale)^T
    if bias_t is not None:
        out += bias_t
    out -= np.maximum.reduce(out, axis=-2, keepdims=True)
    np.exp(out, out=out)
    out *= np.reciprocal(np.matmul(np.ones((1, out.shape[-2]), dtype=out.dtype), out))  # (as PyTorch's CPU softmax)
    return out


def _block(heads: int, t: int) -> int:
    return max(1, _BLOCK_SCORES // max(1, heads * t * t))


def packed_forward(qkv: np.ndarray, bias: Any, scale: float, drop: Any, keep_p: bool) -> tuple[np.ndarray, Any]:
    """(output (B, T, H, E), the transposed probabilities P^T (B, H, S, L) when ``keep_p``, else None)."""
    b, t, _, h, e = qkv.shape
    q, k, v = _views(qkv)
    sc, bias_t = qkv.dtype.type(scale), _bias_t(bias)
    out = np.empty((b, t, h, e), dtype=qkv.dtype)
    out_h = out.transpose(0, 2, 1, 3)
    p_all = np.empty((b, h, t, t), dtype=qkv.dtype) if keep_p else None

    def work(lo: int, hi: int) -> None:
        p_t = p_all[lo:hi] if p_all is not None else np.empty((hi - lo, h, t, t), qkv.dtype)
        _probabilities_t(q[lo:hi], k[lo:hi], bias_t, sc, p_t)
        if drop is not None:
            p_t = p_t * drop[lo:hi].swapaxes(-1, -2)
        np.matmul(p_t.swapaxes(-1, -2), v[lo:hi], out=out_h[lo:hi])  # BLAS reads P^T transposed, writes in place

    for_blocks(work, b, _block(h, t), min_blocks=2)
    return out, p_all


def packed_backward(g: np.ndarray, ans: np.ndarray, qkv: np.ndarray, p_all: Any, bias: Any, scale: float,
                    drop: Any) -> np.ndarray:
    """The gradient for qkv (B, T, 3, H, E) given the output gradient g (B, T, H, E).

    Uses rowsum(dP * P) = rowsum(g * out) (as FlashAttention does), so no second score-sized
    array; ``p_all`` (P^T from the forward pass) None: recomputed block by block.
    """
    b, t, _, h, e = qkv.shape
    q, k, v = _views(qkv)
    sc, bias_t = qkv.dtype.type(scale), _bias_t(bias)
    g_h, ans_h = g.transpose(0, 2, 1, 3), ans.transpose(0, 2, 1, 3)
    grad = np.empty_like(qkv)
    dq, dk, dv = _views(grad)

    def work(lo: int, hi: int) -> None:
        p_t = p_all[lo:hi] if p_all is not None else _probabilities_t(
            q[lo:hi], k[lo:hi], bias_t, sc, np.empty((hi - lo, h, t, t), qkv.dtype))
        dr_t = None if drop is None else drop[lo:hi].swapaxes(-1, -2)
        gb = g_h[lo:hi]
        np.matmul(p_t if dr_t is None else p_t * dr_t, gb, out=dv[lo:hi])  # dV = P^T g
        ds_t = np.matmul(v[lo:hi], _transposed(gb))  # dP^T = v g^T (a transposed view here is ~1000x slower
        # when OpenBLAS runs this size on 2 threads)
        if dr_t is not None:
            ds_t *= dr_t
        ds_t -= np.einsum("...i,...i->...", gb, ans_h[lo:hi])[..., None, :]  # rowsum(dP * P) = rowsum(g * out)
        ds_t *= p_t  # dS^T
        np.matmul(ds_t, q[lo:hi], out=dk[lo:hi])  # dK = dS^T q scale
        dk[lo:hi] *= sc
        np.matmul(ds_t.swapaxes(-1, -2), k[lo:hi], out=dq[lo:hi])  # dQ = dS k scale
        dq[lo:hi] *= sc

    for_blocks(work, b, _block(h, t), min_blocks=2)
    return grad
