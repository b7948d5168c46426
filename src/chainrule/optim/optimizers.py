"""Optimisers: ``SGD`` (momentum, Nesterov, weight decay), ``Adam`` and ``AdamW``.

They follow PyTorch's update rules step for step (same state, same order of operations), and
update each parameter in place in its own dtype: a float32 model stays float32 and is
really updated. Parameters may be Tensors (``nn.Parameter``) or ``Scalar`` values (the
scalar engine); see :mod:`chainrule.optim.params`.

Example:
    >>> import numpy as np
    >>> from chainrule import nn, optim
    >>> model = nn.Linear(2, 1, rng=0)
    >>> opt = optim.AdamW(model.parameters(), lr=0.1)
    >>> x, y = np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32)
    >>> before = model.weight.numpy().copy()
    >>> opt.zero_grad(); nn.functional.mse_loss(model(x), y).backward(); opt.step()
    >>> bool((model.weight.numpy() != before).all()), model.weight.dtype
    (True, dtype('float32'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.device import as_array, is_off_host, move, of
from ..core.state import enable_grad
from ..tensor import Tensor
from . import flat, rules
from .hooks import OptimizerHooks, hook_methods
from .params import ParamState, Slot, as_param_list, make_slots, split_names
from .saved_groups import SCALAR_STATE, checked_hyperparameter, implementation_switch


class Optimizer(OptimizerHooks):
    """Base class: parameter groups, ``zero_grad``, ``step`` and a resumable ``state_dict``, with PyTorch's hooks
    around them (:mod:`chainrule.optim.hooks`).

    ``params``: an iterable of parameters (Tensors and/or Scalars), a Module, or a list of
    dicts (parameter groups) each with ``'params'`` and optional hyperparameters.
    Subclasses implement ``_update(value, grad, group, state)``, usually one call of a rule in
    :mod:`chainrule.optim.rules` (and may override ``_hyper`` to read the group's values once per step).
    """

    _state_keys: tuple[str, ...] = ()
    _elementwise = False  # whether ``_update`` is elementwise: a group may then be updated as one vector (flat.py)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hook_methods(cls)  # (a subclass's own step, state_dict, load_state_dict run the hooks too)

    def __init__(self, params: Any, defaults: dict[str, Any], foreach: bool | None = None) -> None:
        name = type(self).__name__
        self._foreach = foreach  # None: one vector per group for parameters off the host (a GPU's), as PyTorch
        self._flat: dict[int, flat.FlatGroup] = {}
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        self._slots: list[list[Slot]] = []
        self.state = {}
        spent = hasattr(params, "__next__") and iter(params) is params  # an iterator: a generator, parameters()
        items = as_param_list(params, name)
        if not items and spent:  # model.parameters() handed to a first optimiser already, or listed once
            raise ValueError(f"{name}: got an empty parameter list: params is an iterator that is already used up "
                             "(model.parameters() can be iterated once); call model.parameters() again for this "
                             "optimiser, or keep params = list(model.parameters()) to use it twice")
        if not items:
            raise ValueError(f"{name}: got an empty parameter list (did the model register its Parameters?)")
        groups = items if isinstance(items[0], dict) else [{"params": items}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add parameters with their own hyperparameters (missing ones come from the defaults)."""
        name = type(self).__name__
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(f"{name}: a parameter group must be a dict with a 'params' entry")
        params, names = split_names(as_param_list(group["params"], name), name)
        if any(("param_names" in g) != (names is not None) for g in self.param_groups):
            raise ValueError(
                f"{name}: all optimizer param groups should be with/without names. cannot add a param group "
                f"{'with' if names is not None else 'without'} names to an optimiser whose groups are "
                f"{'without' if names is not None else 'with'}; give every group (name, parameter) pairs "
                "(named_parameters()) or none"
            )
        known = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in known for p in params) or len({id(p) for p in params}) != len(params):
            raise ValueError(f"{name}: a parameter appears twice (in one group or in two groups)")
        unknown = set(group) - set(self.defaults) - {"params", "initial_lr", "param_names"}
        if unknown:
            raise TypeError(f"{name}: unknown hyperparameter(s) {sorted(unknown)}; known: {sorted(self.defaults)}")
        full = {**self.defaults, **group, "params": params}
        if names is not None:
            full["param_names"] = names
        self._check(full)
        self.param_groups.append(full)
        self._slots.append(make_slots(params, name))
        self._index_slots()

    def _check(self, group: dict[str, Any]) -> None:
        name = type(self).__name__
        lr = group["lr"]
        if isinstance(lr, Tensor) and lr._data.size != 1:
            raise ValueError(f"{name}: Tensor lr must be 1-element (a learning rate), got a Tensor of shape "
                             f"{tuple(lr.shape)}; pass a float or a one-element Tensor")
        if not float(lr) >= 0.0:
            raise ValueError(f"{name}: learning rate lr must be >= 0, got {group['lr']}")
        if group.get("weight_decay", 0.0) < 0.0:
            raise ValueError(f"{name}: weight_decay must be >= 0, got {group['weight_decay']}")

    def _all_slots(self) -> list[tuple[int, Slot, dict[str, Any]]]:
        out = []
        i = 0
        for group, slots in zip(self.param_groups, self._slots, strict=False):
            for slot in slots:
                out.append((i, slot, group))
                i += 1
        return out

    @property
    def state(self) -> ParamState:
        """Each slot's state (a dict per parameter) under its index, or under the Tensor parameter (PyTorch's key)."""
        return self._state

    @state.setter
    def state(self, value: dict[int, dict[str, Any]]) -> None:
        self._state = ParamState(value, self._slots)

    def _index_slots(self) -> None:
        """Per group, ``(state index, parameter, commit, None)`` for each slot: what ``step`` walks, prepared once
        (the last entry says where else the gradient comes from: see ``_apply``)."""
        self._members: list[list[tuple[int, Any, Any, int | None]]] = []
        i = 0
        for slots in self._slots:
            self._members.append([(i + k, slot.param, slot.commit, None) for k, slot in enumerate(slots)])
            i += len(slots)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``.grad = None`` on Tensors (or zeros), ``.grad = 0`` on Scalars."""
        if set_to_none:
            for members in self._members:
                for member in members:
                    member[1].grad = None
            return
        for slots in self._slots:
            for slot in slots:
                slot.zero_grad(set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` (optional) recomputes the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._apply(self._members, None)
        return loss

    def _apply(self, plan: list[list[tuple[int, Any, Any, int | None]]], grads: Any) -> None:
        """One update of the parameters listed in ``plan`` (per group, ``(state index, parameter, commit, k)``):
        from their ``.grad`` when ``grads`` is None, else from ``grads[k]`` (``k`` None: no gradient, no update),
        the arrays of a replayed training step (``chainrule.jit_step``)."""
        state, update, ndarray, get = self.state, self._update, np.ndarray, dict.get  # (dict's get: an index key)
        for key, (group, members) in enumerate(zip(self.param_groups, plan, strict=True)):
            maximize = group.get("maximize")
            hyper = self._hyper(group)
            if (grads is None and self._elementwise and self._as_vector(members)
                    and flat.step(members, state, update, hyper, maximize, self._flat, key)):
                continue
            for i, p, commit, k in members:
                value = p._data
                if grads is None:
                    grad = p.grad
                    if grad is None:
                        continue
                    if grad.__class__ is not ndarray:
                        grad = grad._data if isinstance(grad, Tensor) else as_array(grad)
                    if grad.shape != value.shape:
                        raise ValueError(
                            f"{type(self).__name__}: the gradient of parameter {i} has shape {grad.shape} but the "
                            f"parameter has shape {value.shape}"
                        )
                    if grad.dtype is not value.dtype and grad.dtype != value.dtype:
                        grad = grad.astype(value.dtype)
                elif k is None:
                    continue
                else:  # a replay's gradient: its parameter's shape and dtype (checked when the replay started)
                    grad = grads[k]
                if maximize:
                    grad = -grad
                st = get(state, i)
                if st is None:
                    st = state[i] = {}
                update(value, grad, hyper, st)
                commit()

    def _as_vector(self, members: list[tuple[int, Any, Any, int | None]]) -> bool:
        """Whether to update a group as one vector: ``foreach`` when given, else for parameters off the host (where
        each array operation is a kernel launch)."""
        if self._foreach is not None:
            return bool(self._foreach)
        first = members[0][1] if members else None
        return isinstance(first, Tensor) and first._data.__class__ is not np.ndarray

    def _hyper(self, group: dict[str, Any]) -> Any:
        """What ``_update`` receives as ``group``: the group itself, or its values read once per step (a Tensor
        ``lr``, PyTorch's spelling, is read as the float it holds now)."""
        if isinstance(group["lr"], Tensor):
            return {**group, "lr": lr_value(group)}
        return group

    def _state_shape(self, key: str, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of the state array ``key`` of a parameter of ``shape`` (its own, unless a rule keeps less)."""
        return shape

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        """Move ``p`` in place by one step from gradient ``g`` (never written to); ``group`` is what ``_hyper``
        made of the parameter group, ``state`` this slot's state."""
        raise NotImplementedError

    # -- resuming ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{'state': {slot index: {...}}, 'param_groups': [{hyperparameters, 'params': [slot indices]}]}``
        (arrays are copies). Save it with ``nn.save_checkpoint``."""
        groups = []
        state: dict[int, dict[str, Any]] = {}
        for (i, _slot, _group) in self._all_slots():
            if self.state.get(i):  # (a parameter without state, e.g. plain SGD's, is left out, as PyTorch)
                state[i] = {k: (v.copy() if isinstance(v, np.ndarray) else of(v).to_host(v) if is_off_host(v) else v)
                            for k, v in self.state[i].items()}  # host arrays: a checkpoint loads on any device
        start = 0
        for group, slots in zip(self.param_groups, self._slots, strict=False):
            packed = {k: (list(v) if isinstance(v, tuple) else v) for k, v in group.items() if k != "params"}
            packed["params"] = list(range(start, start + len(slots)))
            start += len(slots)
            groups.append(packed)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters, step counts and moment buffers saved by ``state_dict``; checks
        that the groups, parameter counts and shapes match. Buffers take each parameter's dtype."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError(f"{name}.load_state_dict: expected a dict with 'state' and 'param_groups'")
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: the saved state has {len(groups)} parameter group(s), this optimiser "
                f"{len(self.param_groups)}"
            )
        for k, (saved, slots) in enumerate(zip(groups, self._slots, strict=False)):
            if len(saved["params"]) != len(slots):
                raise ValueError(
                    f"{name}.load_state_dict: group {k} holds {len(saved['params'])} parameter slot(s) in the saved "
                    f"state but {len(slots)} here; it was saved from a different model"
                )
        slots_by_index = {i: slot for i, slot, _ in self._all_slots()}
        saved_state = {int(k): v for k, v in state_dict["state"].items()}
        new_state: dict[int, dict[str, Any]] = {}
        for i, entry in saved_state.items():
            if i not in slots_by_index:
                raise ValueError(f"{name}.load_state_dict: the saved state names parameter {i}, which does not exist")
            slot = slots_by_index[i]
            restored = {}
            for key, v in entry.items():
                if is_off_host(v):
                    v = of(v).to_host(v)
                if isinstance(v, np.ndarray) and (v.ndim > 0 or (slot.shape == () and key not in SCALAR_STATE)):
                    if v.shape != self._state_shape(key, slot.shape):
                        raise ValueError(
                            f"{name}.load_state_dict: state '{key}' of parameter {i} has shape {v.shape} but the "
                            f"parameter has shape {slot.shape}"
                        )
                    v = move(v.astype(slot.dtype, copy=True), of(slot.value()))  # on its parameter's device
                elif isinstance(v, np.ndarray):
                    v = v.item()
                restored[key] = v
            new_state[i] = restored
        checked = [
            {k: checked_hyperparameter(name, g, k, v, group) for k, v in saved.items()
             if k != "params" and not implementation_switch(name, g, k, v, group)}
            for g, (group, saved) in enumerate(zip(self.param_groups, groups, strict=False))
        ]
        for group, values in zip(self.param_groups, checked, strict=False):
            group.update(values)  # only after every value passed its check: a refused load changes nothing
        self.state = new_state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for k, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {k}")
            lines.extend(f"    {key}: {value}" for key, value in sorted(group.items()) if key != "params")
        return "\n".join(lines + [")"])


hook_methods(Optimizer)


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, Nesterov momentum and weight decay
    (PyTorch's rule: ``g += wd * p``; ``buf = momentum * buf + (1 - dampening) * g``;
    ``p -= lr * (g + momentum * buf if nesterov else buf)``).

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0, 2.0], requires_grad=True)
        >>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward(); opt.step(); w
        Tensor([0.8, 1.6], requires_grad=True)
    """

    _elementwise = True

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        maximize: bool = False,
        *,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if momentum < 0.0:
            raise ValueError(f"SGD: momentum must be >= 0, got {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize),
                         implementation("SGD", foreach, fused, differentiable))

    def _hyper(self, group: dict[str, Any]) -> Any:
        return lr_value(group), group["momentum"], group["dampening"], group["nesterov"], group["weight_decay"]

    def _update(self, p: np.ndarray, g: np.ndarray, group: Any, state: dict[str, Any]) -> None:
        lr, momentum, dampening, nesterov, wd = group  # (read once per step by _hyper)
        if momentum == 0:
            rules.sgd(p, g, None, lr, 0.0, dampening, nesterov, wd)
        else:
            state["momentum_buffer"] = rules.sgd(p, g, state.get("momentum_buffer"), lr, momentum, dampening,
                                                 nesterov, wd)


class Adam(Optimizer):
    """Adam (Kingma and Ba), with PyTorch's bias correction and optional AMSGrad. ``weight_decay``
    here is L2 (added to the gradient), or decoupled with ``decoupled_weight_decay=True`` (PyTorch's flag:
    then it is :class:`AdamW`).

    Example:
        >>> from chainrule import Tensor, optim
        >>> w = Tensor([1.0, -1.0], requires_grad=True)
        >>> opt = optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w
        Tensor([ 0.9, -0.9], requires_grad=True)
    """

    _decoupled = False
    _elementwise = True

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        maximize: bool = False,
        *,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        name = type(self).__name__
        b1, b2 = (float(b) for b in betas)
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"{name}: betas must be in [0, 1), got {tuple(betas)}")
        if eps < 0.0:
            raise ValueError(f"{name}: eps must be >= 0, got {eps}")
        super().__init__(params, dict(lr=lr, betas=(b1, b2), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, decoupled_weight_decay=bool(decoupled_weight_decay)),
                         implementation(name, foreach, fused, differentiable))

    def _update(self, p: np.ndarray, g: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p)
            state["exp_avg_sq"] = np.zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(p)
        state["step"] += 1
        vmax = None
        if group["amsgrad"]:  # (turned on after a step without it: the maximum starts now)
            vmax = state.get("max_exp_avg_sq")
            if vmax is None:
                vmax = state["max_exp_avg_sq"] = np.zeros_like(p)
        rules.adam(p, g, state["exp_avg"], state["exp_avg_sq"], state["step"], group["lr"], group["betas"],
                   group["eps"], group["weight_decay"], self._decoupled or group["decoupled_weight_decay"], vmax)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): ``p *= 1 - lr * weight_decay``
    before the Adam step; ``weight_decay`` defaults to 0.01, as PyTorch.

    Example:
        >>> import numpy as np
        >>> from chainrule import Tensor, optim
        >>> w = Tensor(np.ones(2, dtype=np.float32), requires_grad=True)
        >>> opt = optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> (w * 0).sum().backward(); opt.step(); w
        Tensor([0.95, 0.95], dtype=float32, requires_grad=True)
    """

    _decoupled = True  # (whatever a loaded state says, as PyTorch's AdamW)

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        maximize: bool = False,
        *,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)


def implementation(name: str, foreach: bool | None, fused: bool | None, differentiable: bool = False) -> bool | None:
    """The ``foreach`` choice from PyTorch's implementation switches: ``fused`` asks for one vector per group as
    ``foreach`` does (one set of array operations per group); ``differentiable`` (a step inside the graph) is
    refused, since chainrule's optimisers update outside it."""
    if differentiable:
        raise NotImplementedError(
            f"{name}(differentiable=True): chainrule's optimisers update parameters in place, outside the graph; "
            "to differentiate through an update, write the step with Tensor operations (e.g. p - lr * g)")
    if foreach and fused:
        raise RuntimeError(f"{name}: foreach and fused cannot both be True (PyTorch's rule)")
    return True if fused else foreach


def lr_value(group: dict[str, Any]) -> float:
    """A group's learning rate as a float (PyTorch also takes a one-element Tensor, read at each step)."""
    lr = group["lr"]
    return float(lr._data.reshape(-1)[0]) if isinstance(lr, Tensor) else lr
