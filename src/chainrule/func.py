"""``chainrule.func``: PyTorch's ``torch.func`` names, for per-example gradients and other transforms of models.

``functional_call(module, params, args)`` runs a module with the given values in place of its parameters
and buffers, so a model becomes a function of its weights that ``grad``, ``vmap``, ``jacrev``... transform.
The transforms are chainrule's own (JAX's semantics, as ``torch.func``'s): ``grad``, ``grad_and_value``,
``vmap``, ``jacrev``, ``jacfwd``, ``hessian``, ``vjp``, ``jvp``. As ``torch.func``'s, they return Tensors when
given Tensors (chainrule's own, as JAX's, return arrays).

Example (per-example gradients, as torch.func users write them):
    >>> import numpy as np
    >>> from chainrule import nn
    >>> from chainrule.func import functional_call, grad, vmap
    >>> model = nn.Linear(3, 1, dtype=np.float64)
    >>> params = {k: v.detach() for k, v in model.named_parameters()}
    >>> def loss(p, x, y):
    ...     return ((functional_call(model, p, (x,)) - y) ** 2).sum()
    >>> per_example = vmap(grad(loss), in_dims=(None, 0, 0))(params, np.ones((8, 3)), np.zeros((8, 1)))
    >>> per_example["weight"].shape, per_example["bias"].shape
    ((8, 1, 3), (8, 1))
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from . import transforms
from .batching import vmap as _vmap
from .core.defaults import random_refused
from .core.device import is_off_host
from .nn.module import Module
from .tensor import Tensor
from .tree_util import tree_leaves, tree_map

__all__ = ["functional_call", "grad", "grad_and_value", "vmap", "jacrev", "jacfwd", "hessian", "vjp", "jvp",
           "linearize", "stack_module_state"]


def _tensors(tree: Any) -> Any:
    """The arrays and numbers of a result as Tensors (torch.func's results are Tensors)."""
    def one(leaf: Any) -> Any:
        if isinstance(leaf, (np.ndarray, np.generic, float, int, complex)) and not isinstance(leaf, bool):
            return Tensor._wrap(np.asarray(leaf))
        return Tensor._wrap(leaf) if is_off_host(leaf) else leaf

    return tree_map(one, tree)


def _given_tensors(tree: Any) -> bool:
    return any(isinstance(leaf, Tensor) for leaf in tree_leaves(tree))


def _check_floating(transform: str, args: tuple[Any, ...], argnums: Any) -> None:
    """Refuse integer or boolean Tensors where ``transform`` differentiates, as PyTorch does (JAX's own transforms,
    which chainrule's are, would give them a floating gradient)."""
    for n in (argnums,) if isinstance(argnums, int) else tuple(argnums):
        if not isinstance(n, int) or not -len(args) <= n < len(args):
            continue  # the transform itself reports a bad argnums
        for leaf in tree_leaves(args[n]):
            if isinstance(leaf, Tensor) and np.dtype(leaf.dtype).kind not in "fc":
                raise TypeError(
                    f"{transform}: argument {n} holds a Tensor of dtype {np.dtype(leaf.dtype)}, and only floating "
                    "Tensors are differentiated (as in torch.func); pass it as .double() or .float(), or leave "
                    "it out of argnums"
                )


def _tensor_results(transform: Callable[..., Any]) -> Callable[..., Any]:
    """``transform`` whose functions return Tensors when called with Tensors."""

    @functools.wraps(transform)
    def make(func: Callable[..., Any], *options: Any, **keywords: Any) -> Callable[..., Any]:
        inner = transform(func, *options, **keywords)
        argnums = options[0] if options else keywords.get("argnums", 0)

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            _check_floating(transform.__name__, args, argnums)
            out = inner(*args, **kwargs)
            return _tensors(out) if _given_tensors((args, kwargs)) else out

        return call

    return make


grad = _tensor_results(transforms.grad)
hessian = _tensor_results(transforms.hessian)
value_and_grad = _tensor_results(transforms.value_and_grad)
_jacrev = _tensor_results(transforms.jacrev)
_jacfwd = _tensor_results(transforms.jacfwd)


def jacrev(func: Callable[..., Any], argnums: Any = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """torch.func's ``jacrev``. ``chunk_size`` only bounds memory in PyTorch (the Jacobian is the same), so it is
    checked and accepted and the rows are computed whole."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size <= 0):
        raise ValueError(f"jacrev: chunk_size must be None or a positive int, got {chunk_size!r}")
    return _jacrev(func, argnums, has_aux=has_aux)


def jacfwd(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """torch.func's ``jacfwd``; ``randomness`` as :func:`vmap`'s (``'error'``, ``'same'``)."""
    _check_randomness("jacfwd", randomness)
    return _jacfwd(func, argnums, has_aux=has_aux)


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """torch.func's ``vjp``: ``(output, vjp_fn)`` (and the aux output), Tensors when given Tensors."""
    result = transforms.vjp(func, *primals, has_aux=has_aux)
    if not _given_tensors(primals):
        return result
    out, pullback, *aux = result

    def vjp_fn(*cotangents: Any) -> Any:
        return _tensors(pullback(*cotangents))

    return (_tensors(out), vjp_fn, *_tensors(aux))


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, has_aux: bool = False) -> Any:
    """torch.func's ``jvp``: ``(output, tangent)`` (and the aux output), Tensors when given Tensors."""
    result = transforms.jvp(func, primals, tangents, has_aux=has_aux)
    return _tensors(result) if _given_tensors((primals, tangents)) else result


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """torch.func's ``linearize``: ``(output, jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP at ``primals``.

    Example:
        >>> import chainrule as cr
        >>> from chainrule.func import linearize
        >>> out, jvp_fn = linearize(lambda x: x ** 2, cr.tensor([1.0, 2.0]))
        >>> jvp_fn(cr.tensor([1.0, 1.0])).tolist()
        [2.0, 4.0]
    """
    out, linear = transforms.linearize(func, *primals)
    if not _given_tensors(primals):
        return out, linear

    def jvp_fn(*tangents: Any) -> Any:
        return _tensors(linear(*tangents))

    return _tensors(out), jvp_fn


def _check_randomness(transform: str, randomness: str) -> None:
    if randomness == "different":
        raise NotImplementedError(
            f"{transform}(randomness='different'): chainrule draws one set of random numbers for the whole batch; "
            "draw them outside vmap (one row per example) and pass them in as a batched argument, or use "
            "randomness='same'"
        )
    if randomness not in ("error", "same"):
        raise ValueError(f"{transform}: randomness must be 'error', 'same' or 'different', got {randomness!r}")


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """torch.func's ``vmap``: chainrule's :func:`chainrule.vmap` with PyTorch's names (``in_dims``, ``out_dims``).

    As torch.func's, keyword arguments are passed to ``func`` unbatched, and the results are Tensors when given
    Tensors. ``chunk_size`` only bounds memory in PyTorch (the results are the same), so it is accepted and the
    batch runs whole. ``randomness='error'`` (the default) refuses a random function under vmap;
    ``'same'`` draws once for the whole batch; ``'different'`` is refused (draw outside vmap instead).

    Example:
        >>> import chainrule as cr
        >>> from chainrule.func import vmap
        >>> vmap(lambda x, scale: x.sum() * scale)(cr.ones(2, 3), scale=2.0).tolist()
        [6.0, 6.0]
    """
    _check_randomness("vmap", randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size must be None or a positive int, got {chunk_size!r}")

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        def positional(*batched: Any) -> Any:
            token = random_refused.set("vmap") if randomness == "error" else None
            try:
                return func(*batched, **kwargs)
            finally:
                if token is not None:
                    random_refused.reset(token)

        out = _vmap(positional, in_axes=in_dims, out_axes=out_dims)(*args)
        return _tensors(out) if _given_tensors((args, kwargs)) else out

    return call


def grad_and_value(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """torch.func's ``grad_and_value``: ``(gradient, value)``, the pair of ``value_and_grad`` the other way round."""
    vg = value_and_grad(func, argnums, has_aux)

    def call(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return g, value

    return call


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """torch.func's ``stack_module_state``: ``(params, buffers)``, each ``{name: the models' values stacked}``.

    The models must have the same structure. The stacked parameters are new leaves that require grad (as
    PyTorch's), the buffers plain copies; use them with :func:`functional_call` and :func:`vmap` to run an
    ensemble in one call.

    Example:
        >>> import chainrule as cr
        >>> from chainrule import nn
        >>> from chainrule.func import functional_call, stack_module_state, vmap
        >>> models = [nn.Linear(3, 2) for _ in range(4)]
        >>> params, buffers = stack_module_state(models)
        >>> params["weight"].shape
        (4, 2, 3)
        >>> def run(p, b, x):
        ...     return functional_call(models[0], (p, b), (x,))
        >>> vmap(run, in_dims=(0, 0, None))(params, buffers, cr.ones(5, 3)).shape
        (4, 5, 2)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: expected at least one model, got an empty list")
    kinds = {type(m).__name__ for m in models}
    if len(kinds) > 1:
        raise RuntimeError(f"stack_module_state: expected models of one type, got {sorted(kinds)}")

    def stacked(named: Callable[[Module], Iterator[tuple[str, Any]]], what: str, leaf: bool) -> dict[str, Tensor]:
        per_model = [dict(named(m)) for m in models]
        names = list(per_model[0])
        if any(list(d) != names for d in per_model):
            raise RuntimeError(f"stack_module_state: the models' {what} differ in names ({names} for the first)")
        out = {}
        for name in names:
            value = Tensor._wrap(np.stack([_array(d[name]) for d in per_model]))
            out[name] = value.requires_grad_(per_model[0][name].requires_grad) if leaf else value
        return out

    return stacked(lambda m: m.named_parameters(), "parameters", True), \
        stacked(lambda m: m.named_buffers(), "buffers", False)


def _array(value: Any) -> np.ndarray:
    """A parameter's or buffer's values (a buffer may be a plain array) as a NumPy array, for stacking."""
    return np.asarray(value._data if isinstance(value, Tensor) else value)


class FunctionalCallError(ValueError, RuntimeError):
    """A ``functional_call`` given names it cannot use: a RuntimeError, as PyTorch raises (and a ValueError)."""


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = (), kwargs: Any = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the values in ``parameter_and_buffer_dicts`` (``{dotted name: value}``,
    or a tuple of such dicts) in place of those parameters and buffers, as ``torch.func.functional_call``.

    The module is unchanged afterwards. A value may be a Tensor being differentiated (``grad``), a batched
    value (``vmap``) or an array. A parameter shared under two names takes the value given for either
    (``tie_weights=True``, PyTorch's default). With ``strict=True`` every parameter and buffer must be given.
    A single argument that is not a tuple is passed as the only one.
    """
    if not isinstance(module, Module):
        raise TypeError(f"functional_call: expected an nn.Module, got {type(module).__name__}")
    dicts = parameter_and_buffer_dicts
    dicts = tuple(dicts) if isinstance(dicts, (tuple, list)) else (dicts,)
    values: dict[str, Any] = {}
    for d in dicts:
        if not isinstance(d, Mapping):
            raise TypeError(f"functional_call: expected a dict of names to values, got {type(d).__name__}")
        for name, value in d.items():
            if name in values:
                raise FunctionalCallError(f"functional_call: {name!r} is given in more than one dict")
            values[name] = value
    if not isinstance(args, tuple):
        args = (args,)
    with _substituted(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


@contextmanager
def _substituted(module: Module, values: dict[str, Any], tie_weights: bool, strict: bool) -> Iterator[None]:
    """Put ``values`` in the modules' attributes (not their registries: parameters() stays the same); restore."""
    entries = module._state_entries()  # dotted name -> (owning module, attribute, kind), shared ones under each
    unknown = [name for name in values if name not in entries]
    if unknown:
        # PyTorch (strict=False) sets such names as new attributes, which the module never reads: a misspelt
        # name would silently leave the module's own value in use, so chainrule refuses it.
        raise FunctionalCallError(
            f"functional_call: {unknown} name no parameter or buffer of {type(module).__name__} "
            f"(it has {list(entries)[:8]}{' ...' if len(entries) > 8 else ''}); leave the extra names out of the dict"
        )
    if strict:
        missing = [name for name in entries if name not in values]
        if missing:
            raise FunctionalCallError(f"functional_call(strict=True): no value given for {missing}")
    targets: dict[tuple[int, str], tuple[Module, str, Any]] = {}
    for name, value in values.items():
        mod, attr, _ = entries[name]
        original = mod.__dict__[attr]
        places = [(m, a) for m, a, _ in entries.values() if m.__dict__[a] is original] if tie_weights else [(mod, attr)]
        for m, a in places:
            targets[(id(m), a)] = (m, a, value)
    saved = [(m, a, m.__dict__[a]) for m, a, _ in targets.values()]
    try:
        for m, a, value in targets.values():
            object.__setattr__(m, a, value)
        yield
    finally:
        for m, a, original in saved:
            object.__setattr__(m, a, original)
