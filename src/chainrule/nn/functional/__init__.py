"""Neural-network functions (as ``torch.nn.functional``): layers, activations, losses.

The fused ones are primitives (registered as ``nn.<name>``) with both a reverse (VJP) and
a forward (JVP) rule, written with NumPy functions so they also run on Tensors (gradients
of gradients work):
``linear``, ``gelu`` (exact and tanh), ``silu``, ``cross_entropy`` (softmax-minus-target
gradient, stable for large logits), ``binary_cross_entropy_with_logits``, ``layer_norm``,
``rms_norm``, ``scaled_dot_product_attention``, ``masked_softmax``. The others (``mse_loss``,
``dropout``, ...) are built from existing ops. This file holds linear, softmax, normalisation,
dropout and embedding; the activations live in ``functional_activations`` and the losses in
``functional_losses`` and ``functional_entry_losses``, and every name is importable from here.
Convolution, pooling, normalisation and sampling (``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``,
``max_pool1d/2d/3d``, ``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``, ``batch_norm``, ``group_norm``,
``instance_norm``, ``interpolate``, ``grid_sample``, ``affine_grid``) are declared in ``ops/fused/convolution.py``,
``ops/fused/conv_transpose.py``, ``ops/fused/pooling.py``, ``ops/fused/batch_norm.py``, ``ops/fused/group_norm.py``,
``ops/fused/interpolate.py`` and ``ops/fused/grid_sample.py`` and published here.

Example:
    >>> import numpy as np
    >>> from chainrule import Tensor
    >>> import chainrule.nn.functional as F
    >>> logits = Tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, np.array([0]))
    >>> loss.backward()
    >>> np.round(logits.grad.numpy(), 3)
    array([[-0.214,  0.175,  0.039]])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...autodiff.batch_levels import is_batched, is_value
from ...autodiff.inlined import Inlined
from ...autodiff.primitive import Primitive
from ...core.device import as_array, check_indices, is_off_host, xp_of
from ...core.errors import ChainruleWarning
from ...ops import reductions as _reductions
from ...ops._define import on_device_of, raw
from ...ops._saved import Saved
from ...ops.declare import declared_in
from ...ops.elementwise import relu, sigmoid, tanh
from ...ops.elementwise import where as _where
from ...ops.fused.attention import masked_by_dropout, qkv_attention, scaled_dot_product_attention
from ...ops.fused.normalization import layer_norm_primitive as _layer_norm
from ...ops.fused.normalization import rms_norm_primitive as _rms_norm
from ...ops.masking import masked_fill, masked_softmax
from ...ops.pytorch.methods import resolve_dim
from ...ops.shape import getitem
from ...runtime.blas import matmul as blas_matmul
from ...runtime.threads import for_blocks, num_threads
from ...tensor import Tensor
from .activations import gelu, silu
from .extras import *  # noqa: F403  (more of torch.nn.functional: leaky_relu, elu, l1_loss, ...)
from .extras import __all__ as _extras
from .losses import cross_entropy, nll_loss
from .losses_entrywise import binary_cross_entropy_with_logits, mse_loss
from .losses_margin import *  # noqa: F403  (margin_ranking_loss, hinge_embedding_loss, triplet_margin_loss, ...)
from .losses_margin import __all__ as _margin
from .more import *  # noqa: F403  (softmin, prelu, pixel_shuffle, dropout2d, pairwise_distance, multi_margin_loss, ...)
from .more import __all__ as _more

__all__ = [
    "linear", "relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
    "mse_loss", "cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
    "layer_norm", "rms_norm", "dropout", "embedding", "scaled_dot_product_attention",
    "masked_softmax", "masked_fill", "qkv_attention",
]

# Ops declared public in nn.functional (ops/declare.py: relu, sigmoid, tanh, softplus...), by their declarations.
globals().update(declared_in("nn.functional"))
__all__ += sorted(set(declared_in("nn.functional")) - set(__all__))
__all__ += [name for name in _extras + _margin + _more if name not in __all__]
from .activations import softplus  # noqa: E402, F401  (PyTorch's beta=, threshold=; over the declared op)
from .inplace_flags import taking_inplace  # noqa: E402
from .writes import written_over  # noqa: E402

# PyTorch's inplace= flag (after each one's parameters): the result written into the input, as F.relu_ does
relu, relu6, selu, silu, hardswish, hardsigmoid, mish = (
    taking_inplace(f, 0) for f in (relu, relu6, selu, silu, hardswish, hardsigmoid, mish))  # noqa: F405
elu, celu, leaky_relu = (taking_inplace(f, 1) for f in (elu, celu, leaky_relu))  # noqa: F405
hardtanh, threshold = taking_inplace(hardtanh, 2), taking_inplace(threshold, 2)  # noqa: F405


def _implicit_dim(name: str, x: Any) -> int:
    """PyTorch's choice when ``dim`` is not given: the last axis of 0-, 1- and 2-d inputs, else its deprecated rule
    (axis 0 of a 3-d input, 1 beyond), with its warning: the last axis would silently differ from PyTorch there."""
    nd = len(x.shape) if is_value(x) else np.ndim(x)  # (a vmap value's shape is one example's)
    if nd <= 2:
        return -1
    chosen = 0 if nd == 3 else 1
    warnings.warn(f"{name}: implicit dimension choice for {name} has been deprecated (PyTorch's rule picks dim "
                  f"{chosen} for a {nd}-d input); pass dim= (dim=-1 for the last axis)", ChainruleWarning,
                  stacklevel=3)
    return chosen


def softmax(x: Any, axis: Any = None, *, dim: Any = None, dtype: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along ``axis`` (PyTorch's ``dim``). Without one: the last axis of a 1-d or 2-d input,
    and PyTorch's deprecated choice beyond (axis 0 of a 3-d input, 1 of more), with its warning.

    Example:
        >>> import chainrule.nn.functional as F
        >>> F.softmax(np.array([[0.0, 0.0]]), dim=-1)
        array([[0.5, 0.5]])
    """
    axis, _ = resolve_dim("softmax", axis, dim)
    return _reductions.softmax(x, _implicit_dim("softmax", x) if axis is None else axis, dtype=dtype)


def log_softmax(x: Any, axis: Any = None, *, dim: Any = None, dtype: Any = None) -> Any:
    """x - logsumexp(x) along ``axis`` (PyTorch's ``dim``; without one, as :func:`softmax` chooses)."""
    axis, _ = resolve_dim("log_softmax", axis, dim)
    return _reductions.log_softmax(x, _implicit_dim("log_softmax", x) if axis is None else axis, dtype=dtype)


# == linear: x @ w.T + b, one node ========================================================
_SPLIT_BIAS = 262144  # outputs at least this big add the bias in row blocks split between threads


def _rows(x: Any) -> Any:
    """x as a matrix (rows, features): NumPy's matmul runs a 2-D product through one BLAS call,
    a stacked one through one call per leading index (much slower for (B, T, D) @ (D, E))."""
    return x if x.ndim == 2 else x.reshape(-1, x.shape[-1])


def _linear_fn(x: Any, w: Any, b: Any = None) -> Any:
    if x.ndim > 2:
        return _linear_fn(_rows(x), w, b).reshape(*x.shape[:-1], w.shape[0])
    out = blas_matmul(x, w.T)
    if b is not None:
        if type(out) is np.ndarray and out.ndim == 2 and out.size >= _SPLIT_BIAS:
            # one pass, one block per thread: every NumPy call hands the GIL over, so small blocks cost more
            # than they split (on (4096, 512): 64K-element blocks 0.47 ms, two blocks 0.30, one thread 0.41)
            for_blocks(lambda lo, hi: np.add(out[lo:hi], b, out=out[lo:hi]), out.shape[0],
                       -(-out.shape[0] // num_threads()), min_blocks=2)
        else:
            out += b
    return out


def _linear_vjp_x(g: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    return blas_matmul(g, w) if g.ndim <= 2 else blas_matmul(_rows(g), w).reshape(*g.shape[:-1], w.shape[1])


def _linear_vjp_w(g: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    nd = x.ndim
    if nd == 1:
        return g.reshape(-1, 1) * x.reshape(1, -1)
    g2, x2 = _rows(g), _rows(x)
    # OpenBLAS is much slower with a thin side first (few outputs, e.g. 10 classes) over many rows. Elsewhere the
    # direct product is as fast or faster, and C-ordered: the transposed one is copied before it becomes a .grad
    if 8 * g2.shape[1] <= x2.shape[1] and g2.shape[0] > 128 and type(g2) is np.ndarray:
        return blas_matmul(x2.T, g2).T
    return blas_matmul(g2.T, x2)


_ONES: dict[tuple[int, Any], np.ndarray] = {}  # (length, dtype) -> a read-only row of ones


def _ones_row(n: int, dtype: Any) -> np.ndarray:
    """A row of ``n`` ones, made once per length and dtype (every bias gradient of a training loop needs one)."""
    ones = _ONES.get((n, dtype))
    if ones is None:
        ones = np.ones(n, dtype=dtype)
        ones.flags.writeable = False
        if len(_ONES) < 64 and n <= 1 << 20:  # a training loop sees a few batch sizes; others are made per call
            _ONES[(n, dtype)] = ones
    return ones


def _linear_vjp_b(g: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    g2 = _rows(g)
    if type(g2) is np.ndarray and g2.dtype.kind == "f" and g2.ndim == 2:  # a row of ones times g: BLAS, ~2x sum(0)
        return _ones_row(g2.shape[0], g2.dtype) @ g2
    return g2.sum(axis=0)


def _linear_jvp_x(t: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    return t @ w.T if t.ndim <= 2 else (_rows(t) @ w.T).reshape(*t.shape[:-1], w.shape[0])


def _linear_jvp_w(t: Any, ans: Any, x: Any, w: Any, b: Any = None) -> Any:
    return x @ t.T if x.ndim <= 2 else (_rows(x) @ t.T).reshape(*x.shape[:-1], w.shape[0])


def _linear_inline(ans: Any, args: list, kw: dict) -> Inlined | None:
    """For a jit replay: the calls ``_linear_fn`` and its three rules make on 2-D arrays of one float dtype."""
    x, w, b = (*args, None)[:3]
    arrays = [v for v in (x, w, b) if v is not None]
    if kw or not all(type(v) is np.ndarray and v.dtype == ans.dtype for v in (*arrays, ans)) or (
            ans.dtype.kind != "f" or x.ndim != 2 or w.ndim != 2 or (b is not None and b.ndim != 1)
            or ans.size >= _SPLIT_BIAS):
        return None
    n, wide = x.shape[0], 8 * w.shape[0] <= x.shape[1] and x.shape[0] > 128  # _linear_vjp_w's choice of product
    return Inlined(
        forward=["{out} = {a0} @ {a1}.T"] + (["{out} += {a2}"] if b is not None else []),
        backward={0: ["t = {g} @ {a1}"], 1: ["t = ({a0}.T @ {g}).T" if wide else "t = {g}.T @ {a0}"],
                  2: ["t = {p}ones @ {g}"]},
        consts={"ones": _ones_row(n, ans.dtype)},
    )


_linear = Primitive("nn.linear", _linear_fn, reads=(0, 1))  # x and w: not the output, not the bias
_linear.defvjp(_linear_vjp_x, _linear_vjp_w, _linear_vjp_b)
_linear.defjvp(_linear_jvp_x, _linear_jvp_w, lambda t, ans, x, w, b=None: t)
_linear.inline = _linear_inline


def linear(x: Any, weight: Any, bias: Any = None) -> Any:
    """``x @ weight.T + bias`` (weight has shape (out_features, in_features), as in PyTorch).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.linear(np.ones((2, 3)), np.ones((4, 3)), np.zeros(4)).shape
        (2, 4)
    """
    if not hasattr(x, "shape"):  # (a batched value inside vmap has one)
        x = as_array(x)
    sx = x._data.shape if isinstance(x, Tensor) else x.shape
    sw = weight._data.shape if isinstance(weight, Tensor) else np.shape(weight)
    if len(sw) != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got shape {sw}")
    if len(sx) == 0 or sx[-1] != sw[1]:
        raise ValueError(
            f"linear: input of shape {sx} does not fit weight of shape {sw}: the input's last axis must have "
            f"size {sw[1]} (in_features)"
        )
    if bias is None:
        return _linear(x, weight)
    sb = bias._data.shape if isinstance(bias, Tensor) else np.shape(bias)
    if sb != (sw[0],):
        raise ValueError(f"linear: bias must have shape ({sw[0]},) to match weight {sw}, got {sb}")
    return _linear(x, weight, bias)


# == normalisation ==========================================================================
def _norm_axes(name: str, x: Any, normalized_shape: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ns = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    sx = np.shape(raw(x))
    if len(ns) > len(sx) or tuple(sx[len(sx) - len(ns):]) != ns:
        raise ValueError(f"{name}: input of shape {sx} does not end with normalized_shape {ns}")
    return ns, tuple(range(len(sx) - len(ns), len(sx)))


def _norm_args(name: str, x: Any, normalized_shape: Any, weight: Any, bias: Any) -> tuple[Any, tuple[int, ...]]:
    if not is_value(x):  # (a batched value inside vmap passes as is)
        x = as_array(x)
        if x.dtype.kind != "f":
            x = x.astype(np.float64)
    ns, axes = _norm_axes(name, x, normalized_shape)
    for what, p in (("weight", weight), ("bias", bias)):
        if p is not None and np.shape(raw(p)) != ns:
            raise ValueError(f"{name}: {what} must have shape normalized_shape {ns}, got {np.shape(raw(p))}")
    return x, axes


def layer_norm(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalise over the last ``len(normalized_shape)`` axes to mean 0 and variance 1 (biased),
    then scale by ``weight`` and shift by ``bias``; one fused node (as ``torch.nn.functional.layer_norm``).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> np.round(F.layer_norm(np.array([[1.0, 3.0]]), (2,)), 3)
        array([[-1.,  1.]])
    """
    x, axes = _norm_args("layer_norm", x, normalized_shape, weight, bias)
    args = (x, weight, bias)
    return _layer_norm(*args, axes=axes, eps=float(eps), saved=Saved(*args))


def rms_norm(x: Any, normalized_shape: Any, weight: Any = None, eps: float | None = None) -> Any:
    """Divide by the root mean square over the last axes (eps defaults to the dtype's machine epsilon,
    as PyTorch), then scale by ``weight``; one fused node.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> np.round(F.rms_norm(np.array([[3.0, 4.0]]), (2,)), 3)
        array([[0.849, 1.131]])
    """
    x, axes = _norm_args("rms_norm", x, normalized_shape, weight, None)
    if eps is None:
        eps = float(np.finfo(np.result_type(raw(x))).eps)
    args = (x, weight)
    return _rms_norm(*args, axes=axes, eps=float(eps), saved=Saved(*args))


# == dropout and embedding =====================================================================
def dropout(x: Any, p: float = 0.5, training: bool = True, inplace: bool = False, rng: Any = None) -> Any:
    """Zero each entry with probability ``p`` and scale the rest by 1 / (1 - p) (identity when not training).

    ``inplace``: PyTorch's flag (its fourth argument): the result written into ``x``, as PyTorch's (recorded in
    the graph; ``nn.Dropout(inplace=True)`` computes out of place). ``rng``: a ``numpy.random.Generator`` or a
    seed, for reproducible masks (None: the generator ``manual_seed`` resets).

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> y = F.dropout(np.ones(6), p=0.5, rng=0)
        >>> sorted(set(y.tolist())) in ([0.0, 2.0], [2.0], [0.0])
        True
    """
    if not isinstance(inplace, bool):
        raise TypeError(f"dropout: the fourth argument is PyTorch's inplace flag, got {type(inplace).__name__}; "
                        "pass the generator or seed as rng=")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability p must be in [0, 1], got {p}")
    if inplace and training and p > 0.0:
        return written_over("dropout_", lambda v: dropout(v, p, training, rng=rng))(x)
    if not training or p == 0.0:
        return x
    dt = np.result_type(raw(x))  # (shapes and dtypes only: a jit trace need not check the values)
    shape = np.shape(raw(x))
    where = x._data if isinstance(x, Tensor) else None  # the device the mask is made on (not a value read)
    if p == 1.0:
        return x * (np.zeros(shape, dtype=dt) if where is None else np.zeros_like(where, dtype=dt))
    return x * masked_by_dropout(where, rng, shape, p, dt)


def embedding(indices: Any, weight: Any, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """Rows of ``weight`` (num_embeddings, dim) picked by integer ``indices`` of any shape; the row
    ``padding_idx`` (PyTorch's) is picked without its gradient. ``max_norm``: as PyTorch, each picked row whose
    ``norm_type``-norm exceeds it is first multiplied by ``max_norm / (norm + 1e-7)``, in place in ``weight``
    (outside the graph). ``scale_grad_by_freq``: each row's gradient is divided by how often its index occurs in
    ``indices``. ``sparse`` (PyTorch's sparse gradient) gives the same gradient, kept dense.

    Example:
        >>> import numpy as np
        >>> import chainrule.nn.functional as F
        >>> F.embedding(np.array([[0, 2]]), np.eye(3)).shape
        (1, 2, 3)
    """
    batched = is_batched(indices)  # under vmap: the checks read every example's indices
    idx = as_array(raw(_whole_batch(indices) if batched else indices))
    n = np.shape(raw(weight))[0]
    if batched and (max_norm is not None or padding_idx is not None):
        raise NotImplementedError("embedding: max_norm= and padding_idx= have no batching rule under vmap; "
                                  "call the layer outside vmap, or without them")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {idx.dtype}")
    check_indices(idx, n, lambda: IndexError(
        f"embedding: index {int(idx[(idx < 0) | (idx >= n)].flat[0])} is out of range for an embedding table of {n} "
        "rows"))
    if scale_grad_by_freq and sparse:
        raise ValueError("embedding: scale_grad_by_freq is not supported with sparse gradients (PyTorch refuses it "
                         "too); pass sparse=False")
    if scale_grad_by_freq and batched:
        raise NotImplementedError("embedding: scale_grad_by_freq= has no batching rule under vmap; call it outside "
                                  "vmap, or without it")
    if max_norm is not None:
        _renormalize_rows(weight, np.unique(idx), float(max_norm), float(norm_type))
    out = getitem(weight, indices if batched else idx)
    if scale_grad_by_freq and isinstance(out, Tensor) and out.requires_grad:
        # each row's gradient divided by how often its index occurs (PyTorch's): the values stay, exactly
        _, where, counts = np.unique(idx, return_inverse=True, return_counts=True)
        scale = on_device_of(raw(out), (1.0 / counts[where.reshape(idx.shape)])[..., None].astype(out.dtype))
        out = out.detach() + (out - out.detach()) * scale
    if padding_idx is None:
        return out
    if not -n <= int(padding_idx) < n:
        raise ValueError(f"embedding: padding_idx {padding_idx} is out of range for an embedding table of {n} rows")
    padded = idx == int(padding_idx) % n
    if not padded.any() or not isinstance(out, Tensor):
        return out
    return _where(padded[..., None], out.detach(), out)  # the padding row's vector, without its gradient


def _whole_batch(x: Any) -> Any:
    """The values of every example of a batched value (under nested vmaps, of every level)."""
    while is_batched(x):
        x = x.value
    return x


def _renormalize_rows(weight: Any, rows: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: rows of the table longer than ``max_norm`` scaled down, in place."""
    table = weight._data if isinstance(weight, Tensor) else weight
    if not (isinstance(table, np.ndarray) and table.flags.writeable or is_off_host(table)):
        raise TypeError(f"embedding: max_norm rescales rows of the table in place; weight must be a writable NumPy "
                        f"array or a Tensor, got {type(weight).__name__}")
    picked = table[rows]
    norms = np.linalg.norm(picked, ord=norm_type, axis=-1) if picked.size else xp_of(table).zeros(len(rows))
    long = norms > max_norm
    table[rows[long]] = picked[long] * (max_norm / (norms[long] + 1e-7))[:, None].astype(table.dtype)
