"""PyTorch-style gradient functions on Tensors: ``chainrule.autograd.grad`` and ``backward``.

``grad(outputs, inputs, grad_outputs=None, create_graph=False)`` returns the gradients
instead of accumulating them into ``.grad`` (``torch.autograd.grad``'s semantics).

Example:
    >>> import chainrule as cr
    >>> x = cr.Tensor(3.0, requires_grad=True)
    >>> (g,) = cr.autograd.grad(x ** 3, x, create_graph=True)
    >>> float(g), float(cr.autograd.grad(g, x)[0])
    (27.0, 18.0)
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .autodiff.backprop import backward as _backward
from .autodiff.backprop import grad as _grad
from .core.hooks import queue_callback
from .core.state import enable_grad, no_grad, set_grad_enabled  # noqa: F401  (torch.autograd's names for them)
from .core.sweep import ANOMALY
from .custom import function
from .custom.function import Function, FunctionCtx, once_differentiable
from .ops.shape import stack
from .tensor import Tensor, backward_into
from .transforms import autograd_functional as functional  # torch.autograd.functional: jacobian, hessian, ...
from .transforms import forward_ad  # torch.autograd.forward_ad: dual tensors

__all__ = ["backward", "grad", "functional", "function", "Function", "FunctionCtx", "gradcheck", "gradgradcheck",
           "once_differentiable", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "Variable",
           "forward_ad"]

# `from chainrule.autograd.functional import jacobian`, as PyTorch's: this module is a file, not a package
sys.modules[f"{__name__}.functional"] = functional
sys.modules[f"{__name__}.function"] = function  # torch.autograd.function.once_differentiable
sys.modules[f"{__name__}.forward_ad"] = forward_ad  # import torch.autograd.forward_ad as fwAD


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor], grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """PyTorch's ``torch.autograd.grad``, its arguments in PyTorch's order (see
    ``chainrule.autodiff.backprop.grad``; ``only_inputs`` is PyTorch's deprecated flag, ignored as there).

    ``is_grads_batched=True``: each ``grad_outputs`` has one more leading axis, a batch of cotangents; the
    results have it too (one reverse pass per batch entry, stacked).

    Example:
        >>> import numpy as np, chainrule as cr
        >>> x = cr.Tensor([1.0, 2.0], requires_grad=True)
        >>> cr.autograd.grad(x ** 2, x, grad_outputs=cr.Tensor(np.eye(2)), is_grads_batched=True)[0].tolist()
        [[2.0, 0.0], [0.0, 4.0]]
    """
    if isinstance(inputs, dict):  # PyTorch's {name: tensor}: the gradients under the same names
        found = grad(outputs, list(inputs.values()), grad_outputs, retain_graph, create_graph, only_inputs,
                     allow_unused, is_grads_batched, materialize_grads)
        return dict(zip(inputs, found, strict=True))  # type: ignore[return-value]
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    _check_grad_call(outs, ins, allow_unused, materialize_grads)
    if materialize_grads:  # zeros for the unused inputs, made here: under create_graph they require grad (PyTorch's)
        found = grad(outs, ins, grad_outputs, retain_graph, create_graph, only_inputs, True, is_grads_batched)
        return tuple(Tensor(np.zeros_like(t._data), requires_grad=create_graph) if g is None else g
                     for g, t in zip(found, ins, strict=True))
    if grad_outputs is not None:
        gouts = [grad_outputs] if isinstance(grad_outputs, Tensor) or not isinstance(grad_outputs, (tuple, list)) \
            else list(grad_outputs)
        if len(gouts) != len(outs):
            raise RuntimeError(f"grad: {len(outs)} output(s) but {len(gouts)} grad_outputs; pass one per output "
                               "(None for a one-element output)")
    if not is_grads_batched:
        return _grad(outs, ins, None if grad_outputs is None else gouts, create_graph, allow_unused, retain_graph)
    if grad_outputs is None:
        raise RuntimeError("grad: is_grads_batched=True needs grad_outputs, with a leading batch axis")
    for k, (o, b) in enumerate(zip(outs, gouts)):
        shape = np.shape(b._data if isinstance(b, Tensor) else b)
        if shape[1:] != o.shape:
            raise RuntimeError(f"grad: with is_grads_batched=True, the first axis of each grad_outputs is the batch "
                               f"and the rest the output's shape; grad_outputs[{k}] has shape {shape}, output[{k}] "
                               f"{o.shape}, so it should be (batch, {', '.join(map(str, o.shape))})")
    sizes = {int(np.shape(b._data if isinstance(b, Tensor) else b)[0]) for b in gouts}
    if len(sizes) != 1:
        raise RuntimeError(f"grad: is_grads_batched=True needs one batch size in grad_outputs, got {sorted(sizes)}")
    (n,) = sizes
    rows = []
    for i in range(n):
        rows.append(_grad(outs, ins, [b[i] for b in gouts], create_graph, allow_unused,
                          True if i < n - 1 else retain_graph))
    return tuple(None if rows[0][k] is None else stack([r[k] for r in rows]) for k in range(len(rows[0])))


def _check_grad_call(outs: list[Any], ins: list[Any], allow_unused: bool | None, materialize_grads: bool) -> None:
    """What ``torch.autograd.grad`` refuses: no inputs, an input outside the graph (its gradient would be a silent
    zero), ``allow_unused=False`` with ``materialize_grads=True``. An output outside the graph is not refused: a
    derivative chainrule found constant (of a piecewise-linear function) has no graph where PyTorch's has one, so
    its gradient is the zeros (None with ``allow_unused=True``) it is."""
    if not ins:
        raise RuntimeError("grad: `inputs` argument to `grad()` cannot be empty; pass the Tensors to differentiate "
                           "with respect to")
    if materialize_grads and allow_unused is False:
        raise ValueError("grad: materialize_grads=True gives zeros for unused inputs, so it needs allow_unused=True "
                         "or unset (Expected allow_unused to be True or not passed when materialize_grads=True)")
    for name, group in (("output", outs), ("input", ins)):
        for k, t in enumerate(group):
            if not isinstance(t, Tensor):
                raise TypeError(f"grad: {name} {k} is {type(t).__name__}, not a Tensor")
    for k, t in enumerate(ins):
        if not t._requires_grad:
            raise RuntimeError(
                f"grad: input {k} (shape {t.shape}) does not require grad and does not have a grad_fn, so no gradient "
                "can flow to it (One of the differentiated Tensors does not require grad); create it with "
                "requires_grad=True and compute the outputs from it")


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None, *, gradients: Any = None) -> None:
    """PyTorch's ``torch.autograd.backward``: add d(tensors)/d(leaf) into each leaf's ``.grad``.

    ``grad_tensors`` (also ``gradients=``): one cotangent per tensor, None for a one-element tensor.
    ``inputs``: only these Tensors' ``.grad`` are written.

    Example:
        >>> import chainrule as cr
        >>> x = cr.Tensor([1.0, 2.0], requires_grad=True)
        >>> cr.autograd.backward([(x * x).sum(), (3 * x).sum()])
        >>> x.grad.tolist()
        [5.0, 7.0]
    """
    if gradients is not None:
        if grad_tensors is not None:
            raise TypeError("backward: pass grad_tensors or gradients (its older name), not both")
        grad_tensors = gradients
    roots = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    cotangents = [None] * len(roots) if grad_tensors is None else (
        [grad_tensors] if isinstance(tensors, Tensor) else list(grad_tensors))
    if len(cotangents) != len(roots):
        raise ValueError(f"backward: {len(roots)} tensors but {len(cotangents)} grad_tensors")
    if inputs is None:
        _backward(roots, cotangents, create_graph=create_graph, retain_graph=retain_graph)
        return
    backward_into(roots, cotangents, inputs, create_graph, retain_graph)


class _Engine:
    """PyTorch's ``Variable._execution_engine``: what code reaches through it (``queue_callback``)."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        """Run ``callback()`` when the backward pass in progress has written every gradient."""
        queue_callback(callback)


class _VariableType(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableType):
    """PyTorch's old ``Variable(data, requires_grad=False)``: since PyTorch 0.4 a Tensor, here too (sharing
    ``data``'s memory, as there); ``isinstance(t, Variable)`` holds for every Tensor.

    Example:
        >>> import chainrule as cr
        >>> v = cr.autograd.Variable(cr.ones(2), requires_grad=True)
        >>> (v * 3).sum().backward(); v.grad.tolist(), isinstance(v, cr.autograd.Variable)
        ([3.0, 3.0], True)
    """

    _execution_engine = _Engine()

    def __new__(cls, data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:  # type: ignore[misc]
        t = Tensor._wrap(data._data) if isinstance(data, Tensor) else Tensor(data)
        return t.requires_grad_(requires_grad)


class detect_anomaly:
    """PyTorch's ``torch.autograd.detect_anomaly(check_nan=True)``: inside it, a backward pass raises as soon as
    an op's gradient holds NaN, naming the op (``Function 'logBackward' returned nan values in its 0th
    output``). Slower: every rule runs through the checked path. Also a decorator.

    Example:
        >>> import chainrule as cr
        >>> x = cr.Tensor([0.0, 1.0], requires_grad=True)
        >>> with cr.autograd.detect_anomaly():
        ...     try:
        ...         (cr.sqrt(x) * 0).sum().backward()
        ...     except RuntimeError as e:
        ...         print(str(e)[:61])
        Function 'sqrtBackward' returned nan values in its 0th output
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self.previous: list[list[bool]] = []

    def __enter__(self) -> None:
        self.previous.append(list(ANOMALY))
        ANOMALY[:] = [True, self.check_nan]

    def __exit__(self, *exc: object) -> None:
        ANOMALY[:] = self.previous.pop()

    def __call__(self, func: Any) -> Any:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)

        return checked


class set_detect_anomaly(detect_anomaly):
    """PyTorch's ``torch.autograd.set_detect_anomaly(mode, check_nan=True)``: switches anomaly mode on or off at
    once (as a context manager, until the end of the block)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        super().__init__(check_nan)
        self.previous.append(list(ANOMALY))
        ANOMALY[:] = [bool(mode), check_nan]

    def __enter__(self) -> None:
        return None


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on (``detect_anomaly``)."""
    return ANOMALY[0]


def gradcheck(func: Any, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **torch_options: Any) -> bool:
    """PyTorch's ``torch.autograd.gradcheck(func, inputs)``: ``inputs`` a Tensor or a tuple of them (where
    :func:`chainrule.gradcheck` takes them unpacked, as JAX's ``check_grads``); first derivatives in reverse
    mode (forward mode too with ``check_forward_ad=True``). PyTorch's other options (``nondet_tol``...) are
    accepted.

    Example:
        >>> import numpy as np, chainrule as cr
        >>> x = cr.Tensor(np.array([0.3, 1.2]), requires_grad=True)
        >>> cr.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
        True
    """
    modes = ("rev", "fwd") if torch_options.get("check_forward_ad") else ("rev",)
    return _torch_style_check("gradcheck", func, inputs, 1, eps, atol, rtol, raise_exception, modes)


def gradgradcheck(func: Any, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, **torch_options: Any) -> bool:
    """PyTorch's ``torch.autograd.gradgradcheck``: as :func:`gradcheck`, up to second derivatives."""
    modes = ("rev", "fwd") if torch_options.get("check_fwd_over_rev") else ("rev",)
    return _torch_style_check("gradgradcheck", func, inputs, 2, eps, atol, rtol, raise_exception, modes)


def _torch_style_check(name: str, func: Any, inputs: Any, order: int, eps: float, atol: float, rtol: float,
                       raise_exception: bool, modes: tuple[str, ...]) -> bool:
    from .transforms.checking import GradcheckError
    from .transforms.checking import gradcheck as check

    args = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    # PyTorch's rule: the inputs that require grad are the ones differentiated
    wanted = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    if not wanted:
        raise ValueError(f"{name}: no input requires grad, so there is nothing to check ({name} expects at least "
                         "one input tensor to require gradient); create them with requires_grad=True")
    for i in wanted:
        if args[i]._data.dtype not in (np.float64, np.complex128):
            warnings.warn(f"{name}: Input #{i} requires gradient and is not a double precision floating point "
                          f"({args[i]._data.dtype}): finite differences in it are coarse; make it with "
                          "dtype=np.float64 (x.double()) for a check that means something", UserWarning, stacklevel=3)

    def on_tensors(*values: Any) -> Any:  # the finite differences pass arrays: func is written with Tensor methods
        return func(*(_as_input(v) if isinstance(v, np.ndarray) else v for v in values))

    try:
        return check(on_tensors, *args, modes=modes, order=order, eps=eps, atol=atol, rtol=rtol, argnums=wanted)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _as_input(value: np.ndarray) -> Tensor:
    """An input for a finite-difference call, a leaf that requires grad (as PyTorch's gradcheck passes it: func
    may register hooks on what it computes)."""
    t = Tensor._wrap(value)
    t._requires_grad = value.dtype.kind in "fc"
    return t
