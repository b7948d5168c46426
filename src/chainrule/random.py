"""``chainrule.random``: JAX's key-based random numbers (``jax.random``'s names and arguments).

A key is a value, ``uint32[2]``: ``PRNGKey(seed)`` (or ``key(seed)``) makes one (the same two numbers as JAX's
raw ``PRNGKey``), ``split`` and ``fold_in`` derive new ones, and each sampler is a deterministic function of its
key: the same key gives the same numbers, keys from ``split`` give independent streams. The numbers are NumPy's
(a ``Generator`` seeded by the key through ``SeedSequence``), not JAX's threefry bits: a program gets numbers of
the same distributions as under JAX, not the same numbers.

Every draw is one op of a key, so transforms treat it as JAX does: under ``jit`` a replay given another key
draws that key's numbers, and under ``vmap`` over keys each example draws with its own key (the same numbers
as the key alone). Parameters (``minval``, ``maxval``, ``p``, ``logits``, ``lower``...) enter the
numbers through differentiable ops, so gradients flow through them, as JAX's reparameterised samplers do.

Example:
    >>> import chainrule as cr
    >>> from chainrule import random
    >>> key = random.PRNGKey(0)
    >>> k1, k2 = random.split(key)
    >>> x = random.normal(k1, (3,))
    >>> bool((x == random.normal(k1, (3,))).all()), bool((x == random.normal(k2, (3,))).any())
    (True, False)
    >>> random.uniform(k2, (2, 2), minval=1.0, maxval=2.0).shape
    (2, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import numpy as cnp
from .autodiff.primitive import Primitive, apply
from .core.defaults import get_default_dtype

__all__ = ["PRNGKey", "bernoulli", "beta", "categorical", "cauchy", "choice", "dirichlet", "exponential", "fold_in",
           "gamma", "gumbel", "key", "key_data", "laplace", "logistic", "multivariate_normal", "normal", "permutation",
           "poisson", "randint", "split", "t", "truncated_normal", "uniform"]

_MASK = 0xFFFFFFFF
_SPLIT, _FOLD = 1, 2  # what each derivation appends to the key before hashing it (a draw appends nothing)


def PRNGKey(seed: Any) -> np.ndarray:  # noqa: N802  (JAX's name)
    """A key from an integer seed: ``uint32[2]``, the high and low 32 bits (JAX's raw key)."""
    seed = int(seed)
    return np.array([(seed >> 32) & _MASK, seed & _MASK], dtype=np.uint32)


def key(seed: Any) -> np.ndarray:
    """JAX's ``jax.random.key``: here the same ``uint32[2]`` value as :func:`PRNGKey` (no typed key arrays)."""
    return PRNGKey(seed)


def key_data(keys: Any) -> Any:
    """The key's ``uint32`` numbers (a key here is its numbers already)."""
    return keys


def _generator(k: Any, *extra: int) -> np.random.Generator:
    return np.random.default_rng([int(v) for v in np.asarray(k, dtype=np.uint32).reshape(-1)] + list(extra))


def _split(k: Any, *, shape: tuple[int, ...]) -> np.ndarray:
    return _generator(k, _SPLIT).integers(0, 1 << 32, size=(*shape, 2), dtype=np.uint32)


def _fold_in(k: Any, data: Any) -> np.ndarray:
    return _generator(k, _FOLD, int(np.asarray(data)) & _MASK).integers(0, 1 << 32, size=2, dtype=np.uint32)


def _sample(k: Any, *params: Any, method: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    rng = _generator(k)
    make = _SAMPLERS.get(method)
    out = getattr(rng, method)(size=shape) if make is None else make(rng, shape, *params)
    return np.asarray(out).astype(dtype)


def _categorical(rng: np.random.Generator, shape: tuple[int, ...], logits: Any) -> np.ndarray:
    scores = np.broadcast_to(logits, (*shape, np.shape(logits)[-1])) + rng.gumbel(size=(*shape, np.shape(logits)[-1]))
    return np.argmax(scores, axis=-1)


def _choice(rng: np.random.Generator, shape: tuple[int, ...], n: int, replace: bool, p: Any) -> np.ndarray:
    count = int(np.prod(shape))
    if p is None:
        index = rng.integers(0, n, size=shape) if replace else rng.permutation(n)[:count]
    else:  # Gumbel-max (top-k without replacement): JAX's way
        with np.errstate(divide="ignore"):  # p == 0: log 0 = -inf, never chosen
            logp = np.log(np.asarray(p, dtype=np.float64))
        scores = logp + rng.gumbel(size=(*shape, n) if replace else (n,))
        index = np.argmax(scores, axis=-1) if replace else np.argsort(-scores, kind="stable")[:count]
    return np.reshape(index, shape)


def _truncated_normal(rng: np.random.Generator, shape: tuple[int, ...], lower: Any, upper: Any) -> np.ndarray:
    try:
        from scipy.special import ndtr, ndtri
    except ImportError as e:
        raise ImportError("random.truncated_normal needs SciPy: pip install chainrule[scipy]") from e
    a, b = ndtr(lower), ndtr(upper)
    return np.clip(ndtri(a + (b - a) * rng.random(size=shape)), lower, upper)


_SAMPLERS = {
    "categorical": _categorical, "choice": _choice, "truncated_normal": _truncated_normal,
    "permutation": lambda rng, shape: rng.permutation(shape[0]),
    "integers": lambda rng, shape, low, high: rng.integers(low, high, size=shape),
    "standard_gamma": lambda rng, shape, a: rng.standard_gamma(np.broadcast_to(a, shape)),
    "beta": lambda rng, shape, a, b: rng.beta(np.broadcast_to(a, shape), np.broadcast_to(b, shape)),
    "poisson": lambda rng, shape, lam: rng.poisson(np.broadcast_to(lam, shape)),
    "dirichlet": lambda rng, shape, alpha: _normalised(rng.standard_gamma(np.broadcast_to(alpha, shape))),
    "t": lambda rng, shape, df: rng.standard_t(np.broadcast_to(df, shape)),
}


def _normalised(g: np.ndarray) -> np.ndarray:
    return g / g.sum(axis=-1, keepdims=True)


# Ops of the key (no derivative: a key is integers): a jit replay runs them on its own key, vmap on each one's.
_SPLIT_OP = Primitive("random.split", _split, register=False)
_FOLD_OP = Primitive("random.fold_in", _fold_in, register=False)
_SAMPLE_OP = Primitive("random.sample", _sample, register=False)


def _integer_draws_only(argnum: int, g: Any, ans: Any, *args: Any, **kw: Any) -> Any:
    """Integers drawn with parameters (categorical's logits, choice's p) have derivative zero in them; a float
    draw's parameters here are read as values, so their derivative would be wrong: it raises instead."""
    if np.dtype(kw["dtype"]).kind in "iub":
        return 0.0 * args[argnum]
    raise TypeError(f"random: the draw ({kw['method']}) is not differentiable in its parameters here (JAX's "
                    "truncated_normal, gamma, beta and dirichlet are); pass them as constants, or draw a "
                    "reparameterised form (loc + scale * normal(key), minval + (maxval - minval) * uniform(key))")


_SAMPLE_OP.defvjp_argnum(_integer_draws_only)
_SAMPLE_OP.defjvp_argnum(_integer_draws_only)


def _checked(k: Any, name: str) -> Any:
    if np.shape(k) != (2,) or np.dtype(getattr(k, "dtype", None) or np.asarray(k).dtype).kind not in "iu":
        raise TypeError(f"random.{name}: expected one key (uint32[2], from random.PRNGKey or random.split), got "
                        f"shape {np.shape(k)}; for a batch of keys, vmap over them")
    return k


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if np.ndim(shape) == 0 and not isinstance(shape, tuple) else tuple(int(n) for n in shape)


def _float(dtype: Any) -> Any:
    dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"random: dtype must be a floating type, got {dtype}")
    return dtype


def _draw(k: Any, name: str, method: str, shape: Any, dtype: Any, *params: Any) -> Any:
    return apply(_SAMPLE_OP, (_checked(k, name), *params), {"method": method, "shape": _shape(shape), "dtype": dtype})


def split(key: Any, num: Any = 2) -> Any:
    """``num`` new keys (``num`` may be a shape): ``uint32[num, 2]``."""
    return apply(_SPLIT_OP, (_checked(key, "split"),), {"shape": _shape(num)})


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and an integer (a step number, a device index)."""
    return apply(_FOLD_OP, (_checked(key, "fold_in"), data), None)


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0) -> Any:
    """Uniform on ``[minval, maxval)``.

    Example:
        >>> from chainrule import random
        >>> u = random.uniform(random.PRNGKey(1), (1000,))
        >>> bool(0 <= u.min() and u.max() < 1), u.dtype
        (True, dtype('float32'))
    """
    dtype = _float(dtype)
    u = _draw(key, "uniform", "random", shape, dtype)
    if isinstance(minval, (int, float)) and isinstance(maxval, (int, float)) and (minval, maxval) == (0.0, 1.0):
        return u
    return cnp.clip(minval + (maxval - minval) * u, minval, maxval)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal."""
    return _draw(key, "normal", "standard_normal", shape, _float(dtype))


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Exponential with rate 1."""
    return _draw(key, "exponential", "standard_exponential", shape, _float(dtype))


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel (location 0, scale 1)."""
    return _draw(key, "gumbel", "gumbel", shape, _float(dtype))


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard Laplace (location 0, scale 1)."""
    return _draw(key, "laplace", "laplace", shape, _float(dtype))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard logistic (location 0, scale 1)."""
    return _draw(key, "logistic", "logistic", shape, _float(dtype))


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard Cauchy."""
    return _draw(key, "cauchy", "standard_cauchy", shape, _float(dtype))


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma with shape ``a`` and scale 1 (``a`` read as a value: no gradient flows to it)."""
    shape = np.shape(a) if shape is None else _shape(shape)
    return _draw(key, "gamma", "standard_gamma", shape, _float(dtype), a)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Beta with parameters ``a``, ``b`` (read as values)."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b)) if shape is None else _shape(shape)
    return _draw(key, "beta", "beta", shape, _float(dtype), a, b)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Dirichlet with concentrations ``alpha`` (its last axis; read as values): shape ``shape + alpha.shape[-1:]``.

    Example:
        >>> import numpy as np
        >>> from chainrule import random
        >>> x = random.dirichlet(random.PRNGKey(0), np.array([1.0, 2.0, 3.0]), (4,))
        >>> x.shape, np.allclose(x.sum(axis=-1), 1.0)
        ((4, 3), True)
    """
    k = np.shape(alpha)[-1]
    shape = np.shape(alpha)[:-1] if shape is None else _shape(shape)
    return _draw(key, "dirichlet", "dirichlet", (*shape, k), _float(dtype), alpha)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = np.int32) -> Any:
    """Poisson counts with rates ``lam`` (read as values)."""
    shape = np.shape(lam) if shape is None else _shape(shape)
    return _draw(key, "poisson", "poisson", shape, np.dtype(dtype), lam)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t with ``df`` degrees of freedom (read as values; ``shape``: ``df``'s by default, as JAX's)."""
    shape = np.shape(df) if shape is None else _shape(shape)
    return _draw(key, "t", "t", shape, _float(dtype), df)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """Normal with ``mean`` (..., n) and covariance ``cov`` (..., n, n): ``mean + L z``, ``L`` the Cholesky factor
    (or ``method="eigh"``/``"svd"``: ``V sqrt(w)``), differentiable in ``mean`` and ``cov``."""
    from . import linalg

    n = np.shape(mean)[-1]
    batch = np.broadcast_shapes(np.shape(mean)[:-1], np.shape(cov)[:-2])
    shape = batch if shape is None else _shape(shape)
    z = normal(key, (*shape, n), dtype)
    if method == "cholesky":
        factor = linalg.cholesky(cov)
    elif method in ("eigh", "svd"):
        w, v = linalg.eigh(cov)
        factor = v * cnp.sqrt(cnp.maximum(w, 0.0))[..., None, :]
    else:
        raise ValueError(f"random.multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', got {method!r}")
    return mean + cnp.einsum("...ij,...j->...i", factor, z)


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Any:
    """Booleans, True with probability ``p`` (``shape``: ``p``'s by default)."""
    shape = np.shape(p) if shape is None else _shape(shape)
    return _draw(key, "bernoulli", "random", shape, np.float64) < p


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Standard normal conditioned on ``[lower, upper]`` (by the inverse CDF; needs SciPy). ``lower`` and
    ``upper`` are read as values (no gradient flows to them).

    Example:
        >>> from chainrule import random
        >>> x = random.truncated_normal(random.PRNGKey(0), -1.0, 2.0, (1000,))
        >>> bool(x.min() >= -1.0 and x.max() <= 2.0)
        True
    """
    shape = np.broadcast_shapes(np.shape(lower), np.shape(upper)) if shape is None else _shape(shape)
    return _draw(key, "truncated_normal", "truncated_normal", shape, _float(dtype), lower, upper)


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = np.int32) -> Any:
    """Integers in ``[minval, maxval)`` (which may be arrays that broadcast to ``shape``)."""
    return _draw(key, "randint", "integers", shape, np.dtype(dtype), minval, maxval)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None) -> Any:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis`` (the Gumbel-max trick, as JAX's).

    Example:
        >>> import numpy as np
        >>> from chainrule import random
        >>> draws = random.categorical(random.PRNGKey(3), np.log(np.array([0.1, 0.9])), shape=(2000,))
        >>> bool(abs(draws.mean() - 0.9) < 0.05)
        True
    """
    logits = cnp.moveaxis(logits, axis, -1)
    shape = np.shape(logits)[:-1] if shape is None else _shape(shape)
    return _draw(key, "categorical", "categorical", shape, np.int32, logits)


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``range(x)`` (an int), or ``x`` shuffled along ``axis``."""
    if np.ndim(x) == 0 and isinstance(x, (int, np.integer)):
        return _draw(key, "permutation", "permutation", (int(x),), np.int32)
    if independent:
        raise NotImplementedError("random.permutation: independent=True is not supported; shuffle along the axis "
                                  "(independent=False) or vmap over the rows with split keys")
    return _take(x, _draw(key, "permutation", "permutation", (np.shape(x)[axis],), np.int64), axis)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None, axis: int = 0) -> Any:
    """Entries of ``a`` (or of ``range(a)``, an int) along ``axis``, with or without replacement, uniformly or
    with probabilities ``p`` (read as values)."""
    shape = _shape(shape)
    n = int(a) if np.ndim(a) == 0 else np.shape(a)[axis]
    if not replace and int(np.prod(shape)) > n:
        raise ValueError(f"random.choice: cannot take {int(np.prod(shape))} entries out of {n} without replacement")
    index = _draw(key, "choice", "choice", shape, np.int64, n, replace, p)
    return index if np.ndim(a) == 0 else _take(a, index, axis)


def _take(a: Any, index: Any, axis: int) -> Any:
    """``take(a, index, axis)``, differentiable in ``a``; a traced index (under jit, vmap) selects by a one-hot
    product, so that a replay with another key takes that key's entries (indexing would read the values)."""
    if isinstance(index, np.ndarray):
        return cnp.take(a, index, axis=axis)
    axis = axis % np.ndim(a)
    n = np.shape(a)[axis]
    one_hot = (cnp.expand_dims(index, -1) == np.arange(n)).astype(getattr(a, "dtype", np.float64))
    out = cnp.tensordot(one_hot, cnp.moveaxis(a, axis, 0), axes=1)  # index's axes, then a's other axes
    k = np.ndim(index)
    return cnp.moveaxis(out, list(range(k)), list(range(axis, axis + k)))
