"""HIPS autograd's other differential operators, by their names and argument orders, on chainrule's transforms.

``argnum`` picks the argument (an int, or a tuple: then that argument position takes a tuple of values). Results
are in autograd's orders: ``make_vjp(f)(x)`` is ``(vjp, value)``, ``make_jvp(f)(x)(v)`` is ``(value, jvp)``,
``grad_and_aux(f)(x)`` is ``(gradient, aux)`` for an ``f`` returning ``(value, aux)``.

Example:
    >>> import numpy as np
    >>> from chainrule import hessian_tensor_product, make_vjp
    >>> vjp, value = make_vjp(lambda x: x ** 2)(np.array([1.0, 3.0]))
    >>> vjp(np.ones(2)).tolist(), value.tolist()
    ([2.0, 6.0], [1.0, 9.0])
    >>> hessian_tensor_product(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [6.0, 0.0]
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .forward import jvp
from .reverse import grad, value_and_grad, vjp

__all__ = ["grad_and_aux", "grad_named", "hessian_tensor_product", "hessian_vector_product", "make_hvp", "make_jvp",
           "make_vjp", "multigrad_dict", "tensor_jacobian_product", "vector_jacobian_product"]


def _of_one(fun: Callable[..., Any], argnum: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """``(g, x)``: ``fun`` as a function ``g`` of the argument(s) at ``argnum`` alone, and their values ``x`` (a
    tuple for a tuple ``argnum``, as autograd's ``unary_to_nary``)."""
    nums = argnum if isinstance(argnum, tuple) else (argnum,)
    for i in nums:
        if not isinstance(i, int) or not -len(args) <= i < len(args):
            raise TypeError(f"argnum {i!r} does not name one of the {len(args)} positional argument(s)")

    def g(x: Any) -> Any:
        new = list(args)
        for i, v in zip(nums, x if isinstance(argnum, tuple) else (x,)):
            new[i] = v
        return fun(*new, **kwargs)

    x = tuple(args[i] for i in nums) if isinstance(argnum, tuple) else args[argnum]
    return g, x


def make_vjp(fun: Callable[..., Any], argnum: Any = 0) -> Callable[..., tuple[Callable[[Any], Any], Any]]:
    """``make_vjp(fun)(*args) -> (vjp, value)``, ``vjp(v)`` the vector-Jacobian product ``v^T J`` (autograd's)."""

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> tuple[Callable[[Any], Any], Any]:
        g, x = _of_one(fun, argnum, args, kwargs)
        value, pullback = vjp(g, x)
        return (lambda v: pullback(v)[0]), value

    return run


def make_jvp(fun: Callable[..., Any], argnum: Any = 0) -> Callable[..., Callable[[Any], tuple[Any, Any]]]:
    """``make_jvp(fun)(*args)(v) -> (value, jvp)``, ``jvp`` the Jacobian-vector product ``J v`` (autograd's)."""

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Callable[[Any], tuple[Any, Any]]:
        g, x = _of_one(fun, argnum, args, kwargs)
        return lambda v: jvp(g, (x,), (v,))

    return run


def grad_and_aux(fun: Callable[..., Any], argnum: Any = 0) -> Callable[..., tuple[Any, Any]]:
    """``grad_and_aux(fun)(*args) -> (gradient, aux)`` for ``fun`` returning ``(value, aux)`` (autograd's)."""

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        g, x = _of_one(fun, argnum, args, kwargs)
        gradient, aux = grad(g, has_aux=True)(x)
        return gradient, aux

    return run


def vector_jacobian_product(fun: Callable[..., Any], argnum: Any = 0) -> Callable[..., Any]:
    """``vector_jacobian_product(fun)(*args, v)``: ``v^T J`` at ``args`` (autograd's; ``v`` comes last)."""

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        return make_vjp(fun, argnum)(*args[:-1], **kwargs)[0](args[-1])

    return run


tensor_jacobian_product = vector_jacobian_product


def hessian_tensor_product(fun: Callable[..., Any], argnum: Any = 0) -> Callable[..., Any]:
    """``hessian_tensor_product(fun)(*args, v)``: ``H v`` for a scalar ``fun`` (autograd's; ``v`` comes last)."""

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        *point, v = args
        g, x = _of_one(fun, argnum, tuple(point), kwargs)
        return grad(lambda y: np.sum(grad(g)(y) * v))(x)

    return run


hessian_vector_product = hessian_tensor_product


def make_hvp(fun: Callable[..., Any], argnum: Any = 0) -> Callable[..., tuple[Callable[[Any], Any], Any]]:
    """``make_hvp(fun)(*args) -> (hvp, gradient)``: ``hvp(v)`` is ``H v`` at ``args`` (autograd's: the vjp of the
    gradient)."""

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> tuple[Callable[[Any], Any], Any]:
        g, x = _of_one(fun, argnum, args, kwargs)
        return make_vjp(grad(g))(x)

    return run


def grad_named(fun: Callable[..., Any], argname: str) -> Callable[..., Any]:
    """The gradient with respect to the argument called ``argname`` (autograd's)."""
    names = list(inspect.signature(fun).parameters)
    if argname not in names:
        raise TypeError(f"grad_named: {getattr(fun, '__name__', 'the function')} has no argument {argname!r}; its "
                        f"arguments are {names}")
    position = names.index(argname)

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        if argname in kwargs:  # passed by name: move it to its position
            args = (*args, *[kwargs.pop(n) for n in names[len(args):position + 1]])
        return grad(fun, position)(*args, **kwargs)

    return run


def multigrad_dict(fun: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    """``{name: gradient}`` for every argument of ``fun`` (positional or by name, defaults included; autograd's)."""
    signature = inspect.signature(fun)

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        names = list(bound.arguments)
        values = tuple(bound.arguments.values())
        _, grads = value_and_grad(lambda *v: fun(**dict(zip(names, v))), tuple(range(len(values))))(*values)
        return dict(zip(names, grads))

    return run
