"""Layers with parameters: ``Linear``, ``Embedding``, ``LayerNorm``, ``RMSNorm``; ``Dropout``; ``MLP``.

Every layer takes ``dtype`` (float32 by default, see ``nn.set_default_dtype``) and, where it
draws random numbers, ``rng`` (a ``numpy.random.Generator`` or an int seed; by default the
generator that ``nn.manual_seed`` resets). Initialisation follows PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autodiff.batch_levels import is_value
from ..core.device import as_array, check_cpu
from ..tensor import Tensor
from . import functional as F
from . import init
from .activations import activation as make_activation
from .containers import Sequential
from .mlp_plan import mlp_plan
from .module import Module
from .module_placement import place
from .parameter import Parameter, resolve_dtype


def _input(x: Any, dtype: np.dtype, where: str) -> Any:
    """Arrays become ``dtype`` (cheap, no graph); a Tensor (or a batched value under vmap) of another float dtype
    is an error."""
    if is_value(x):
        if x.dtype != dtype:
            if x.dtype.kind == "f":
                hint = (
                    " (cr.Tensor keeps NumPy's float64 for Python floats; cr.tensor, cr.randn and the layers "
                    "default to float32: build the input with cr.tensor(...))"
                    if x.dtype == np.float64 and dtype == np.float32
                    else ""
                )
                raise TypeError(
                    f"{where}: input dtype {x.dtype} differs from the layer's dtype {dtype}; cast the input "
                    f"(x.astype(np.{dtype.name})) or the model (model.to(np.{x.dtype.name})){hint}"
                )
            return x._data.astype(dtype) if isinstance(x, Tensor) else x.astype(dtype)
        return x
    arr = as_array(x)
    return arr if arr.dtype == dtype else arr.astype(dtype)


class Linear(Module):
    """``y = x @ weight.T + bias``; weight (out_features, in_features), both drawn from
    U(-1/sqrt(in_features), 1/sqrt(in_features)) as in PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> layer = nn.Linear(3, 2, rng=0)
        >>> layer
        Linear(in_features=3, out_features=2, bias=True)
        >>> layer(np.ones((4, 3))).shape, layer.weight.dtype
        ((4, 2), dtype('float32'))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 *, rng: Any = None):
        super().__init__()
        if in_features <= 0 or out_features <= 0:
            raise ValueError(
                f"Linear: sizes must be positive, got in_features={in_features}, out_features={out_features}"
            )
        dt = resolve_dtype(dtype, "Linear", device)
        gen = init.generator(rng)
        self.in_features, self.out_features = int(in_features), int(out_features)
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(gen.uniform(-bound, bound, (out_features, in_features)), dtype=dt)
        self.bias = Parameter(gen.uniform(-bound, bound, (out_features,)), dtype=dt) if bias else None
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, x: Any) -> Any:
        w = self.weight
        if x.__class__ is not np.ndarray or x.dtype is not w.dtype:  # (an array of the layer's dtype as is)
            x = _input(x, w.dtype, "Linear")
        return F.linear(x, w, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, drawn from N(0, 1) (or PyTorch's
    ``_weight``; ``_freeze``: not trained); ``emb(indices)`` picks rows (indices of any shape); PyTorch's
    ``scale_grad_by_freq`` and ``sparse`` as ``F.embedding`` reads them.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> emb = nn.Embedding(10, 4, rng=0)
        >>> emb(np.array([[1, 2, 3]])).shape
        (1, 3, 4)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False, *,
                 dtype: Any = None, rng: Any = None, device: Any = None) -> None:
        super().__init__()
        dt = resolve_dtype(dtype, "Embedding", device)
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(f"Embedding: padding_idx {padding_idx} is out of range for {num_embeddings} rows")
        padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        if _weight is None:
            table = init.generator(rng).standard_normal((num_embeddings, embedding_dim))
            if padding_idx is not None:  # PyTorch's padding row: zeros, and it gets no gradient
                table[padding_idx] = 0.0
        else:  # PyTorch's initial table, taken as given
            table = np.array(_weight._data if isinstance(_weight, Tensor) else _weight)
            if table.shape != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight must have shape ({num_embeddings}, {embedding_dim}), got "
                                 f"{table.shape}")
            dt = dt if dtype is not None or table.dtype.kind != "f" else table.dtype
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, float(norm_type)
        self.scale_grad_by_freq, self.sparse = bool(scale_grad_by_freq), bool(sparse)  # (sparse: a dense gradient)
        self.weight = Parameter(table, dtype=dt, requires_grad=not _freeze)
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose table is ``embeddings`` (a 2-D array or Tensor, copied; rows kept as given, the
        padding row too), trained only with ``freeze=False`` (as PyTorch's).

        Example:
            >>> import numpy as np
            >>> from chainrule import nn
            >>> emb = nn.Embedding.from_pretrained(np.array([[1.0, 2.0], [3.0, 4.0]]))
            >>> emb(np.array([1])).numpy(), emb.weight.requires_grad
            (array([[3., 4.]]), False)
        """
        table = embeddings._data if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        if table.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D (rows, embedding_dim), got shape "
                             f"{table.shape}")
        emb = cls(table.shape[0], table.shape[1], padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                  dtype=table.dtype if table.dtype.kind == "f" else None, rng=0)
        emb.weight = Parameter(table, dtype=emb.weight._data.dtype, requires_grad=not freeze)
        return emb

    def forward(self, indices: Any) -> Any:
        # (the padding row gets no gradient; max_norm rescales the picked rows of the table in place, as PyTorch)
        return F.embedding(indices, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        pad = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


def _shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, (int, np.integer)):
        return (int(normalized_shape),)
    return tuple(int(n) for n in normalized_shape)


class LayerNorm(Module):
    """Normalise the last axes to mean 0, variance 1, then scale (weight = 1) and shift (bias = 0).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> y = nn.LayerNorm(4)(np.arange(8.0).reshape(2, 4))
        >>> np.allclose(y.numpy().mean(-1), 0, atol=1e-6)
        True
    """

    def __init__(
        self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
        device: Any = None, dtype: Any = None,
    ) -> None:
        super().__init__()
        dt = resolve_dtype(dtype, "LayerNorm", device)
        self.normalized_shape = _shape(normalized_shape)
        self.eps = float(eps)
        self.weight = Parameter(np.ones(self.normalized_shape), dtype=dt) if elementwise_affine else None
        self.bias = Parameter(np.zeros(self.normalized_shape), dtype=dt) if elementwise_affine and bias else None
        self._dtype = dt
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, x: Any) -> Any:
        dt = self.weight.dtype if self.weight is not None else self._dtype
        return F.layer_norm(_input(x, dt, "LayerNorm"), self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class RMSNorm(Module):
    """Divide the last axes by their root mean square, then scale (weight = 1). ``eps=None``
    uses the dtype's machine epsilon, as PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> y = nn.RMSNorm(2)(np.array([[3.0, 4.0]]))
        >>> np.allclose((y.numpy() ** 2).mean(), 1, atol=1e-5)
        True
    """

    def __init__(
        self, normalized_shape: Any, eps: float | None = None, elementwise_affine: bool = True, device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        dt = resolve_dtype(dtype, "RMSNorm", device)
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.weight = Parameter(np.ones(self.normalized_shape), dtype=dt) if elementwise_affine else None
        self._dtype = dt
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, x: Any) -> Any:
        dt = self.weight.dtype if self.weight is not None else self._dtype
        return F.rms_norm(_input(x, dt, "RMSNorm"), self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class Dropout(Module):
    """In training mode, zero each entry with probability ``p`` and scale the rest by 1/(1-p);
    in eval mode, the identity. ``rng`` (a seed or Generator) makes the masks reproducible.

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> drop = nn.Dropout(0.5, rng=0)
        >>> sorted(set(drop(np.ones(100)).tolist()))
        [0.0, 2.0]
        >>> drop.eval()(np.ones(3))
        array([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, *, rng: Any = None) -> None:
        super().__init__()  # inplace: PyTorch's flag, accepted; the result is the same numbers, computed out of place
        if not isinstance(inplace, bool):
            raise TypeError(f"Dropout: the second argument is PyTorch's inplace flag, got {inplace!r}; pass rng=")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability p must be in [0, 1], got {p}")
        self.p = float(p)
        self.rng = None if rng is None else init.generator(rng)  # None: the generator manual_seed resets, at each call

    def forward(self, x: Any) -> Any:
        return F.dropout(x, self.p, self.training, rng=self.rng)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class MLP(Module):
    """A multi-layer perceptron: ``MLP(nin, [h1, h2, ..., nout])`` is Linear, activation,
    (dropout,) ... and a last Linear without activation (micrograd's signature). The layers come
    from :func:`chainrule.nn.mlp_plan.mlp_plan`, as those of ``nn.scalar.MLP`` (the Scalar engine's).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> mlp = nn.MLP(64, [128, 10], activation="relu", rng=0)
        >>> mlp(np.zeros((3, 64))).shape, mlp.num_parameters()
        ((3, 10), 9610)
        >>> list(mlp.state_dict())[:2]
        ['layers.0.weight', 'layers.0.bias']
    """

    def __init__(
        self,
        nin: int,
        nouts: Iterable[int],
        activation: Any = "relu",
        dropout: float = 0.0,
        bias: bool = True,
        dtype: Any = None,
        rng: Any = None,
        *,
        device: Any = None,
    ) -> None:
        super().__init__()
        plan = mlp_plan(nin, nouts, "MLP")
        check_cpu("MLP", device)
        gen = init.generator(rng)
        mods: list[Module] = []
        for layer in plan:
            mods.append(Linear(layer.fan_in, layer.fan_out, bias=bias, dtype=dtype, rng=gen))
            if layer.activated:
                mods.append(make_activation(activation))
                if dropout:
                    mods.append(Dropout(dropout, rng=gen))
        self.sizes = [plan[0].fan_in, *[layer.fan_out for layer in plan]]
        self.layers = Sequential(*mods)
        place(self, device)  # PyTorch's device=: built here on the host, then moved

    def forward(self, x: Any) -> Any:
        for layer in self.layers._modules.values():  # (Sequential's loop, one call less per step)
            x = layer(x)
        return x


class Flatten(Module):
    """Merge dims ``start_dim`` to ``end_dim`` into one (PyTorch's ``Flatten``: the batch dim 0 is kept).

    Example:
        >>> import numpy as np
        >>> from chainrule import nn
        >>> nn.Flatten()(np.zeros((2, 3, 4))).shape, nn.Unflatten(1, (2, 2))(np.zeros((3, 4))).shape
        ((2, 12), (3, 2, 2))
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, x: Any) -> Any:
        return (x if is_value(x) else Tensor(x)).flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (PyTorch's ``Unflatten``)."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = int(dim), tuple(int(n) for n in unflattened_size)

    def forward(self, x: Any) -> Any:
        return (x if is_value(x) else Tensor(x)).unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
