"""Module backward hooks (PyTorch's ``register_full_backward_hook`` and ``register_full_backward_pre_hook``).

A call of a module with backward hooks passes its Tensor inputs, and then its Tensor outputs, through an
identity ``autograd.Function`` (as PyTorch's ``BackwardHookFunction``). The outputs' identity gets the
gradients of every output at once: the pre-hooks see (and may replace) them, and they are kept as
``grad_output``. The inputs' identity then gets the gradients of the inputs: the full hooks see
``(module, grad_input, grad_output)`` and may replace ``grad_input``. When no input requires a gradient
the full hooks run at the outputs, with ``grad_input`` all None; otherwise an input Tensor that needs no gradient
gets zeros in ``grad_input`` (as PyTorch, whose identity materialises them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..custom.function import Function, FunctionCtx
from ..tensor import Tensor

Hook = Callable[..., Any]


def _tensors(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(v if isinstance(v, Tensor) else Tensor(v) for v in values)


class _Call:
    """One call of one module: its hooks, and the output gradients once they have arrived."""

    def __init__(self, module: Any, full: list[Hook], pre: list[Hook]) -> None:
        self.module, self.full, self.pre = module, full, pre
        self.n_inputs = 0
        self.inputs_hooked = False
        self.constant_inputs: dict[int, Any] = {}  # position -> input Tensor needing no gradient (zeros in grad_input)
        # the output gradients of the backward pass in progress; None once the full hooks have seen them, so a
        # later pass that reaches the inputs' identity without the outputs' (a double backward through the saved
        # inputs) calls no hook (PyTorch's BackwardHook does the same)
        self.grad_output: tuple[Any, ...] | None = None

    def run_full(self, grad_input: tuple[Any, ...]) -> tuple[Any, ...]:
        if self.grad_output is None:
            return grad_input
        for hook in self.full:
            changed = hook(self.module, grad_input, self.grad_output)
            if changed is not None:
                changed = tuple(changed) if isinstance(changed, (tuple, list)) else (changed,)
                if len(changed) != len(grad_input):
                    raise ValueError(f"{type(self.module).__name__}: a full backward hook returned {len(changed)} "
                                     f"gradient(s) for {len(grad_input)} input(s); return one per positional input "
                                     "(None for one that is not a Tensor)")
                grad_input = changed
        self.grad_output = None
        return grad_input


class _OutputHook(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, call: _Call, *outputs: Any) -> Any:
        ctx.call = call
        return outputs[0] if len(outputs) == 1 else outputs

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        call: _Call = ctx.call
        grads = _tensors(grads)
        for hook in call.pre:
            changed = hook(call.module, grads)
            if changed is not None:
                grads = tuple(changed) if isinstance(changed, (tuple, list)) else (changed,)
        call.grad_output = grads
        if call.full and not call.inputs_hooked:  # no input needs a gradient: the full hooks run here
            call.run_full((None,) * call.n_inputs)
        return (None, *grads)


class _InputHook(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, call: _Call, positions: tuple[int, ...], *inputs: Any) -> Any:
        ctx.call, ctx.positions = call, positions
        return inputs[0] if len(inputs) == 1 else inputs

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Any) -> Any:
        call: _Call = ctx.call
        grad_input: list[Any] = [None] * call.n_inputs
        for i, g in zip(ctx.positions, _tensors(grads)):
            grad_input[i] = g
        for i, t in call.constant_inputs.items():
            grad_input[i] = Tensor._wrap(np.zeros_like(t._data))
        changed = call.run_full(tuple(grad_input))
        return (None, None, *(changed[i] for i in ctx.positions))


def hook_inputs(module: Any, args: tuple[Any, ...], full: list[Hook], pre: list[Hook]) -> tuple[_Call, tuple[Any, ...]]:
    """A new call's record, and ``args`` with the Tensors that need gradients passed through the input identity."""
    call = _Call(module, full, pre)
    call.n_inputs = len(args)  # grad_input has one entry per positional argument, None for a non-Tensor (PyTorch's)
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad)
    if not full or not positions:
        return call, args
    call.inputs_hooked = True
    call.constant_inputs = {i: a for i, a in enumerate(args) if isinstance(a, Tensor) and i not in positions}
    hooked = _InputHook.apply(call, positions, *(args[i] for i in positions))
    hooked = hooked if isinstance(hooked, tuple) else (hooked,)
    new = list(args)
    for i, h in zip(positions, hooked):
        new[i] = h
    return call, tuple(new)


def hook_outputs(call: _Call, out: Any) -> Any:
    """``out`` (a Tensor, or a tuple or list with Tensors in it) with its Tensors that need gradients passed
    through the output identity."""
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    at = [i for i, o in enumerate(items) if isinstance(o, Tensor) and o.requires_grad]
    if not at:
        return out
    hooked = _OutputHook.apply(call, *(items[i] for i in at))
    hooked = hooked if isinstance(hooked, tuple) else (hooked,)
    for i, h in zip(at, hooked):
        items[i] = h
    if not isinstance(out, (tuple, list)):
        return items[0]
    return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)  # (a named tuple takes fields)
