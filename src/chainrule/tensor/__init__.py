"""``Tensor``: a NumPy array that records the operations applied to it.

The class holds state only; its operators and methods are the differentiable functions
of :mod:`chainrule.ops`, attached in :mod:`chainrule.ops.methods`.
"""

from __future__ import annotations

import operator
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import clock, drawing, sweep
from ..core.device import OFF_HOST, as_array, backend, check_cpu, move, xp_of
from ..core.device import of as backend_of
from ..core.errors import GradDtypeError, GradientShapeError
from ..core.hooks import (
    LEAF_HOOKS,
    SWEEP_END,
    HookList,
    RemovableHandle,
    hooks_of,
    run_leaf_hooks,
    run_queued_callbacks,
)
from ..core.node import Node
from ..core.state import reset_grad as _reset_grad
from ..core.state import set_grad as _set_grad
from .convert import ConversionMethods, _check_data, _copy_of_tracked, _refuse_sizes, _Size
from .copying import CopyMethods
from .inplace import InPlaceMethods
from .methods import TensorMethods

_new = object.__new__
_tick = clock.tick


class Tensor(ConversionMethods, CopyMethods, InPlaceMethods, TensorMethods):
    """An N-d array (NumPy-backed) that records operations for automatic differentiation.

    ``Tensor(data, requires_grad=False, dtype=None, label=None, device=None)``. Python floats become
    float64, other dtypes are kept (float32 works end to end). The data is copied.

    Example:
        >>> from chainrule import Tensor
        >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> y = (x ** 2).sum()
        >>> y.backward()
        >>> x.grad
        Tensor([2., 4., 6.])

    Calling ``backward()`` twice adds the new gradients to ``.grad`` (as PyTorch does);
    call ``zero_grad()`` (or set ``grad = None``) between steps.
    """

    # _data: the values (an ndarray; ``.data`` is a Tensor sharing them); grad: the accumulated gradient
    # (a Tensor) or None; _label: a name for pictures;
    # _requires_grad: whether it is differentiated (a leaf asked for it, or it was computed from one);
    # _node: the graph node that computed it (None for a leaf), _index: its position among that node's
    # outputs (None when the node has one); _stamp: its creation time on the version clock;
    # _tangents: {forward level: tangent} under jvp, or None; _hooks: a leaf's gradient hooks (unset: none);
    # _post_hooks: a leaf's hooks called with it once its .grad is written (unset: none);
    # _base: (the tensor this one is a view of, made with grad on), _views: a base's views, weakly (unset: none;
    # tensor/views.py).
    __slots__ = ("_data", "_grad", "_label", "_requires_grad", "_node", "_index", "_stamp", "_tangents", "_hooks",
                 "_post_hooks", "_base", "_views",
                 "__weakref__")
    __array_priority__ = 1000

    def __init__(
        self,
        data: Any,
        requires_grad: bool = False,
        dtype: Any = None,
        label: str | None = None,
        device: Any = None,
    ) -> None:
        if isinstance(data, Tensor):
            if data._requires_grad or data._tangents:
                _copy_of_tracked(data)
            data = data._data
        _check_data(data)
        try:
            # a device's array is copied on its device (CuPy refuses np.array of it: that would copy to the host)
            arr = xp_of(data).array(data, dtype=dtype) if data.__class__ in OFF_HOST else np.array(data, dtype=dtype)
        except (TypeError, ValueError) as e:
            if isinstance(data, (int, np.integer)) and isinstance(dtype, (int, np.integer)):
                _refuse_sizes(data, requires_grad, dtype)  # Tensor(5, 3, 4): sizes, as PyTorch's legacy constructor
            raise TypeError(f"Tensor: argument 'data' could not be read as an array of numbers ({e})") from None
        if arr.dtype == object or arr.dtype.kind in "USV":
            raise TypeError(
                f"Tensor: argument 'data' must hold numbers, got an array of dtype {arr.dtype} "
                f"(element type {type(arr.flat[0]).__name__ if arr.size else 'unknown'})"
            )
        if device is not None:  # PyTorch's Tensor(..., device=): the values are put there
            arr = move(arr, backend(device))
        self._set(arr, None, None)
        self.label = label
        if requires_grad:
            if requires_grad.__class__ is not bool and isinstance(requires_grad, (int, np.integer)):
                _refuse_sizes(data, requires_grad, dtype)
            self.requires_grad = True

    def _set(self, arr: np.ndarray, node: Node | None, index: int | None) -> None:
        """Every field of a new Tensor (the one place they are listed; ``apply`` calls this too)."""
        self._data = arr
        self._grad = self._label = self._tangents = None
        self._requires_grad = node is not None
        self._node = node
        self._index = index
        self._stamp = node.stamp if node is not None else _tick()

    @classmethod
    def _wrap(cls, arr: np.ndarray) -> Tensor:
        """A new Tensor around ``arr`` without copying (internal)."""
        t = _new(cls)
        t._set(arr, None, None)
        return t

    @classmethod
    def _linked(cls, arr: np.ndarray, node: Node, index: int | None = None) -> Tensor:
        """A new Tensor around ``arr``: output ``index`` of ``node`` (internal: custom nodes, replays)."""
        t = _new(cls)
        t._set(arr, node, index)
        return t

    # -- array attributes --------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """The values as a new Tensor that shares this one's memory and is cut from the graph (PyTorch's ``.data``).

        In-place writes to it change this tensor without being recorded (``p.data.add_(-lr * p.grad)``);
        ``.numpy()`` gives the ndarray itself. Setting ``t.data = x`` (a Tensor or an array) replaces the values.

        Example:
            >>> from chainrule import Tensor
            >>> w = Tensor([1.0, 2.0], requires_grad=True)
            >>> w.data.mul_(10)   # a Tensor sharing w's memory
            Tensor([10., 20.])
            >>> w
            Tensor([10., 20.], requires_grad=True)
        """
        return Tensor._wrap(self._data)

    @data.setter
    def data(self, value: Any) -> None:
        arr = value._data if isinstance(value, Tensor) else as_array(value)  # (a device array stays there)
        if self._requires_grad and arr.dtype.kind not in "fc":
            raise GradDtypeError(
                f"Tensor.data = ...: the tensor requires grad, so its values must be floating, not {arr.dtype}"
            )
        self._data = arr

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Tensor: cannot delete data; set it instead (t.data = ...)")

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward()`` accumulated here (None until then); ``del t.grad`` forgets it, as PyTorch's.
        (A property over the slot ``_grad``: a ``__delattr__`` would make every attribute assignment of every
        Tensor go through Python.)"""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> _Size:
        """The number of entries (ndarray's ``t.size``); called: the shape (PyTorch's ``t.size()``) or ``t.size(d)``."""
        return _Size(self._data.size, self._data.shape)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d Tensor")
        return len(self._data)

    def __repr__(self) -> str:
        data, extra = self._data, ""
        if data.__class__ in OFF_HOST:  # printing asks for the values: one copy to the host (as PyTorch's)
            extra = f", device='{self.device}'"
            data = backend_of(data).to_host(data)
        body = np.array2string(data, separator=", ", prefix="Tensor(")
        if self._data.dtype not in (np.float64, np.int64, np.bool_):
            extra = f", dtype={self._data.dtype}" + extra
        if self._requires_grad:
            extra += ", requires_grad=True" if self._node is None else f", op={self._node.prim.name}"
        return f"Tensor({body}{extra})"

    # -- autodiff state ------------------------------------------------------------------
    value_kept = True  # False for a stand-in of an intermediate value the graph did not keep (see parents)

    @property
    def label(self) -> str | None:
        """A name shown by the graph pictures (None: the op's name is shown)."""
        return self._label

    @label.setter
    def label(self, name: str | None) -> None:
        self._label = name
        if self._node is not None:  # the pictures find a named intermediate through its node
            self._link(False)

    def _link(self, retain: bool) -> None:
        """Let this tensor's node reach it (weakly): for retain_grad and for labels in pictures."""
        node = self._node
        if node.outputs is None:
            node.outputs = {}
        entry = node.outputs.get(self._index)
        if entry is None or entry[0]() is not self:  # [weak tensor, keeps its grad, label, hooks (kept on)]
            node.outputs[self._index] = [weakref.ref(self), retain, self._label, entry[3] if entry else None]
        else:
            entry[1] = entry[1] or retain
            entry[2] = self._label

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if flag and self._data.dtype.kind not in "fc":
            raise GradDtypeError(
                f"Tensor: only floating-point tensors can require grad, this one has dtype {self._data.dtype}; "
                "make it float, e.g. Tensor(data, dtype=float, requires_grad=True)"
            )
        if not flag and self._node is not None:
            raise RuntimeError("requires_grad can only be switched off on a leaf; use .detach() instead")
        self._requires_grad = bool(flag)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("Tensor: cannot delete requires_grad; set it instead (e.g. t.requires_grad_(False))")

    def requires_grad_(self, flag: bool = True) -> Tensor:
        self.requires_grad = flag
        return self

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def op(self) -> str:
        """Name of the operation that made this tensor ('' for a leaf)."""
        return self._node.prim.name if self._node is not None else ""

    @property
    def parents(self) -> tuple[Tensor, ...]:
        """The tensors this one was computed from (those that require grad), one per edge.

        A parent that is itself computed is given as a Tensor linked to its node, holding the value
        the node kept for its rule; the same Tensor each time it is asked for.
        """
        node = self._node
        if node is None:
            return ()
        args = node.args
        return tuple(
            _seen(parent, index, args[argnum] if args else None, shape, dtype) if parent.__class__ is Node else parent
            for argnum, parent, index, shape, dtype in node.parents
        )

    @property
    def _version(self) -> int:
        """When this tensor's memory was last changed in place (0: never), as PyTorch's ``_version`` grows."""
        return clock.version(self._data)

    def detach(self) -> Tensor:
        """The same data, cut from the graph (no gradient flows through it)."""
        return Tensor._wrap(self._data)

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after ``backward()`` (a leaf always keeps it)."""
        if self._node is not None:
            self._link(True)

    def register_hook(self, hook: Callable[[Tensor], Any]) -> RemovableHandle:
        """Call ``hook(grad)`` with this tensor's gradient when a backward pass has computed it (as PyTorch).

        The hook may return a replacement gradient (same shape), which then flows on (and, for a
        leaf, goes into ``.grad``), or None to keep it. Works on leaves and computed tensors.
        Returns a handle whose ``remove()`` takes the hook off.

        Example:
            >>> from chainrule import Tensor
            >>> x = Tensor([1.0, 2.0], requires_grad=True)
            >>> y = x * x
            >>> handle = y.register_hook(lambda g: g * 10)
            >>> y.sum().backward(); x.grad
            Tensor([20., 40.])
            >>> handle.remove(); x.grad = None
            >>> (x * x).sum().backward(); x.grad
            Tensor([2., 4.])
        """
        if not self._requires_grad:
            raise RuntimeError(
                "register_hook: this tensor does not require grad, so no gradient will reach it; create it with "
                "requires_grad=True (or compute it from one that requires grad)"
            )
        if not callable(hook):
            raise TypeError(f"register_hook: the hook must be callable, got {type(hook).__name__} {hook!r:.40}")
        if self._node is None:
            hooks = hooks_of(self)
        else:
            self._link(False)
            entry = self._node.outputs[self._index]
            if entry[3] is None:
                entry[3] = []
            hooks = entry[3]
        raw = _raw_hook(hook, self._data.shape)
        hooks.append(raw)
        return RemovableHandle(hooks, raw)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """Call ``hook(self)`` after ``backward()`` has added into this leaf's ``.grad`` (PyTorch's; an optimiser
        step per parameter inside the backward pass). The hook returns None; ``grad()`` does not call it.

        Example:
            >>> from chainrule import Tensor, no_grad
            >>> w = Tensor([1.0, 2.0], requires_grad=True)
            >>> def step(p):
            ...     with no_grad():
            ...         p -= 0.5 * p.grad
            >>> handle = w.register_post_accumulate_grad_hook(step)
            >>> (w * w).sum().backward(); w
            Tensor([0., 0.], requires_grad=True)
        """
        if self._node is not None:
            raise RuntimeError("register_post_accumulate_grad_hook: post accumulate grad hooks cannot be registered "
                               "on non-leaf tensors; register it on the leaf, or use register_hook(fn) here")
        if not self._requires_grad:
            raise RuntimeError("register_post_accumulate_grad_hook: this tensor does not require grad, so backward "
                               "never writes its .grad; create it with requires_grad=True")
        if not callable(hook):
            raise TypeError(f"register_post_accumulate_grad_hook: the hook must be callable, got {type(hook).__name__}")
        hooks = getattr(self, "_post_hooks", None)
        if hooks is None:
            hooks = self._post_hooks = HookList()
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def zero_grad(self) -> None:
        """Forget the accumulated gradient (sets ``.grad`` to None)."""
        self.grad = None

    def graph(self, **kw: Any) -> Any:
        """A picture of the graph behind this value (Jupyter shows it inline); see ``chainrule.draw``."""
        return drawing.draw(self, **kw)

    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None) -> None:  # (PyTorch's order: backward(g, True) retains, as there)
        """Add d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

        A one-element output needs no ``gradient``; a larger one needs the gradient of some
        final scalar with respect to it (same shape). With ``create_graph=True`` the
        gradients are themselves differentiable Tensors, for derivatives of higher order.
        What the graph kept for its rules is freed as backward uses it, unless
        ``retain_graph=True`` (the default is ``create_graph``, as in PyTorch): a second
        backward through the same graph needs ``retain_graph=True`` on the first.
        With ``inputs`` (a Tensor or a sequence of them, as PyTorch's) only their ``.grad`` is written.
        """
        if inputs is not None:
            return backward_into([self], [gradient], inputs, create_graph, retain_graph)
        backward([self], [gradient], create_graph=create_graph, retain_graph=retain_graph)


def _raw_hook(hook: Callable[[Tensor], Any], shape: tuple[int, ...]) -> Callable[[Any], Any]:
    """The user's hook on the sweep's raw gradients: an ndarray (first order) or a Tensor (create_graph)."""

    def raw(g: Any) -> Any:
        traced = isinstance(g, Tensor)
        out = hook(g if traced else Tensor._wrap(g))
        if out is None:
            return g
        if traced:
            new = out if isinstance(out, Tensor) else Tensor._wrap(as_array(out, dtype=g.dtype))
        else:  # a copy: the hook's own array must never become a .grad that aliases it (on g's device)
            new = xp_of(g).array(out._data if isinstance(out, Tensor) else out, dtype=g.dtype)
        if new.shape != shape:
            raise ValueError(
                f"register_hook: the hook returned a gradient of shape {new.shape} for a tensor of shape {shape}; "
                "return one of the same shape (or None to keep the gradient)"
            )
        return new

    return raw


# -- the graph behind Tensors -------------------------------------------------------------------
def key(t: Tensor) -> Any:
    """What stands for ``t`` in the graph: its node, or the tensor itself for a leaf."""
    return t if t._node is None else t._node


def _output(node: Node, index: int | None, value: Any) -> Any:
    """Output ``index`` of ``node`` as a Tensor linked to the graph (cached on the node), or None without a value.

    The node's own kept output is used when it has one, else ``value`` (the same array, kept by a child).
    """
    lifted = node.lifted
    if lifted is None:
        lifted = node.lifted = {}
    t = lifted.get(index)
    if t is None:
        ans = node.ans
        if ans is not None:
            value = ans if index is None else ans[index]
        if value is None:
            return None
        t = _new(Tensor)
        t._set(value if value.__class__ is np.ndarray else as_array(value), node, index)
        lifted[index] = t
    return t


def _seen(node: Node, index: int | None, value: Any, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """Output ``index`` of ``node`` for the pictures: the program's own tensor while it lives and is linked
    (labelled or retaining its grad), else one rebuilt from a kept value, else a stand-in without values."""
    entry = node.outputs.get(index) if node.outputs is not None else None
    if entry is not None and entry[0]() is not None:
        return entry[0]()
    t = _output(node, index, value)
    if t is None:
        t = node.lifted[index] = _new(_Unkept)
        t._set(np.broadcast_to(np.zeros((), dtype), shape), node, index)
    if entry is not None:
        t._label = entry[2]  # the name it was given, kept by the node after the tensor itself went
    return t


class _Unkept(Tensor):
    """An intermediate value the graph did not keep (no rule reads it): its shape and dtype, no values."""

    __slots__ = ()
    value_kept = False


LIFTED = "lifted"  # the key of ``node.lifted`` under which a node made under jvp keeps its call's own Tensors


def lift(node: Node) -> tuple[Any, list[Any]]:
    """``(ans, args)`` of ``node`` as Tensors linked to the graph, for a rule run under ``create_graph``.

    Arguments that have a parent become that parent (a leaf) or its output rebuilt from the kept
    array (PyTorch's saved variables), so a gradient computed from them reaches the same nodes and
    higher derivatives are exact; other arguments stay as they are (constants).
    """
    kept = node.lifted.get(LIFTED) if node.lifted else None
    if kept is not None:  # made under jvp: the Tensors themselves, with their tangents
        return kept
    args = list(node.args)
    for argnum, parent, index, _, _ in node.parents:
        args[argnum] = _output(parent, index, args[argnum]) if parent.__class__ is Node else parent
    n = node.n_outputs
    ans = _output(node, None, None) if n == 1 else tuple(_output(node, k, None) for k in range(n))
    return ans, args


def seed(root: Tensor, gradient: Any, create_graph: bool) -> Any:
    """d final / d root: ones for a one-element root, else ``gradient`` checked against the root."""
    if not root._requires_grad:
        raise RuntimeError(
            f"backward: this tensor (shape {root.shape}) has no graph: it does not require grad and was not "
            "computed from anything that does; create inputs with requires_grad=True"
        )
    if gradient is None:
        if root._data.dtype.kind == "c":
            raise RuntimeError(
                f"backward: the output is complex ({root._data.dtype}); a gradient needs a real-valued output "
                "(e.g. np.abs(z) ** 2 or np.real(z)), or pass gradient= (d final / d output, complex)"
            )
        if root._data.size != 1:
            raise RuntimeError(
                f"backward: the output has shape {root.shape}, not one element; pass gradient= an array of "
                f"shape {root.shape} (d final / d output), or reduce it first, e.g. out.sum().backward()"
            )
        data = root._data
        # a 0-d output (the usual loss): one C call instead of ones_like's two Python-level steps
        host = data.__class__ is np.ndarray
        seed = np.array(1, dtype=data.dtype) if data.shape == () and host else np.ones_like(data)
    else:
        raw = gradient._data if isinstance(gradient, Tensor) else as_array(gradient)
        if raw.dtype.kind == "c" and root._data.dtype.kind != "c":
            raise TypeError(
                f"backward: a complex gradient ({raw.dtype}) for a real output ({root._data.dtype}); "
                "pass a real one, or take np.real of the output gradient"
            )
        if raw.dtype.kind not in "biufc":
            raise TypeError(
                f"backward: argument 'gradient' must be an array of numbers of shape {root.shape} "
                f"(d final / d output), got {type(gradient).__name__} {gradient!r:.40}"
            )
        if raw.shape != root.shape:
            raise GradientShapeError(f"backward: mismatch in shape: the gradient has shape {raw.shape} but the output "
                                     f"has shape {root.shape}; pass one of the output's shape")
        if create_graph and isinstance(gradient, Tensor):
            return gradient
        seed = raw.astype(root._data.dtype, copy=False)
    return Tensor._wrap(seed) if create_graph else seed


_add = operator.add  # two gradients of one value (a C function: no Python frame per sum)


def sweep_from(
    roots: Sequence[Tensor], seeds: Sequence[Any], create_graph: bool, retain_graph: bool | None,
    wanted: set[Any] | None = None, leaf_hooks: bool = True,
) -> list[tuple[Any, Any]]:
    """Run the core's reverse sweep from Tensors: ``(node or leaf, gradient)`` pairs (see ``backward_sweep``).

    ``seeds``: d final / d root for each root, as made by :func:`seed`. ``leaf_hooks=False``: the leaves' hooks
    are not run (a sweep inside another one, e.g. a checkpoint's recomputation: the outer sweep runs them once,
    on the whole gradient).
    """
    retain = create_graph if retain_graph is None else retain_graph
    token = _set_grad(bool(create_graph))  # grad_mode(create_graph), without a context-manager object per call
    try:
        # a rule's value may be infinite where the user's is not (d sqrt(x)/dx at 0): an answer, as in PyTorch,
        # not something NumPy should warn about from inside chainrule (one errstate per sweep, not per rule)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return sweep.backward_sweep(
                [(key(r), r._index) for r in roots], seeds, _add, lift if create_graph else None, wanted, retain,
                run_leaf_hooks if LEAF_HOOKS and leaf_hooks else None,
            )
    finally:
        _reset_grad(token)


def backward(
    roots: Sequence[Tensor], gradients: Sequence[Any], create_graph: bool = False, retain_graph: bool | None = None
) -> None:
    """Accumulate gradients of ``roots`` into ``.grad`` of every leaf (and retained non-leaf)."""
    seeds = [seed(r, g, create_graph) for r, g in zip(roots, gradients)]
    found = sweep_from(roots, seeds, create_graph, retain_graph)
    handed_out = {id(s) for s in seeds}
    for k, g in found:
        if k.__class__ is Node:  # outputs that called retain_grad()
            for index, (ref, retain, _, _) in list(k.outputs.items()):
                t = ref()
                part = g if index is None else g[index]
                if retain and t is not None and part is not None:  # (PyTorch sums a non-leaf's out of place)
                    _accumulate(t, part, handed_out, False)
        else:
            _accumulate(k, g, handed_out)
            if getattr(k, "_post_hooks", None):
                _run_post_hooks(k, create_graph)
    if SWEEP_END:  # queued by a hook during this sweep (e.g. DistributedDataParallel's reductions)
        run_queued_callbacks()


def backward_into(roots: Sequence[Tensor], gradients: Sequence[Any], inputs: Any, create_graph: bool,
                  retain_graph: bool | None) -> None:
    """``backward(inputs=...)``: accumulate the gradients of ``roots`` into the ``.grad`` of ``inputs`` only."""
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not ins:
        raise RuntimeError("backward: `inputs` argument to `backward()` cannot be empty; pass the Tensors whose "
                           ".grad to write, or leave inputs out for all the leaves")
    if not all(isinstance(t, Tensor) for t in ins):
        raise TypeError(f"backward: inputs must be a Tensor or a non-empty sequence of Tensors, got {inputs!r:.60}")
    seeds = [seed(r, g, create_graph) for r, g in zip(roots, gradients)]
    found = dict(sweep_from(roots, seeds, create_graph, retain_graph, {key(t) for t in ins}))
    handed_out = {id(s) for s in seeds}
    for t in ins:
        g = found.get(key(t))
        if g is not None and t._index is not None:
            g = g[t._index]
        if g is not None:
            _accumulate(t, g, handed_out, t._node is None)
            if getattr(t, "_post_hooks", None):
                _run_post_hooks(t, create_graph)
    if SWEEP_END:
        run_queued_callbacks()


def _run_post_hooks(t: Tensor, create_graph: bool) -> None:
    token = _set_grad(bool(create_graph))  # as the backward pass itself runs (an in-place step on t is allowed)
    try:
        for hook in list(t._post_hooks):
            if hook(t) is not None:
                raise RuntimeError("register_post_accumulate_grad_hook: the hook returned a value; post accumulate "
                                   "grad hooks should return None. (They may change t.grad or t in place.)")
    finally:
        _reset_grad(token)


_ACCUMULATING = threading.Lock()  # backward() from several threads into shared leaves (Hogwild): no sum lost


def _accumulate(t: Tensor, g: Any, handed_out: set[int], in_place: bool = True) -> None:
    with _ACCUMULATING:
        _accumulate_locked(t, g, handed_out, in_place)


def _accumulate_locked(t: Tensor, g: Any, handed_out: set[int], in_place: bool) -> None:
    prev = t.grad
    if prev is not None and prev.__class__ is not Tensor:  # assigned by hand: checked here, not at each assignment
        _check_assigned_grad(t, prev, g)
    if prev is not None and in_place and _adds_in_place(prev, g):
        # PyTorch's AccumulateGrad: without create_graph the sum goes into the existing .grad (a reference to it,
        # e.g. an optimiser's or a hook's, sees the new value), recorded as an in-place change of that memory
        data = prev._data
        np.add(data, g, out=data)
        clock.record_change(data)
        return
    if not isinstance(g, Tensor):
        # each tensor gets its own writeable array: never a read-only broadcast view, never
        # an array shared with another tensor or with the caller's gradient
        if g.base is not None or id(g) in handed_out or (g.__class__ is np.ndarray and not g.flags.writeable):
            g = g.copy()
        handed_out.add(id(g))
        w = _new(Tensor)  # Tensor._wrap(g), inlined
        w._data = g
        w._grad = w._label = w._tangents = w._node = w._index = None
        w._requires_grad = False
        w._stamp = _tick()
        g = w
    if prev is not None and prev.shape != g.shape:
        _check_assigned_grad(t, prev, g)
    t.grad = g if prev is None else prev + g


def _check_assigned_grad(t: Tensor, prev: Any, g: Any) -> None:
    """A ``.grad`` set by hand that backward cannot add into (PyTorch refuses such an assignment)."""
    if not isinstance(prev, Tensor):
        raise TypeError(f"backward: .grad of a tensor of shape {t.shape} was set to {type(prev).__name__} "
                        f"{prev!r:.40}; assigned grad expected to be a Tensor or None: set it to None (or a Tensor of "
                        "the tensor's shape) before backward")
    if prev.shape != g.shape:
        raise RuntimeError(f"backward: .grad was set to a Tensor of shape {prev.shape} on a tensor of shape "
                           f"{t.shape}, so the gradient cannot be added to it (PyTorch refuses the assignment: "
                           "attempting to assign a gradient of a different size); set .grad to None or a Tensor of "
                           "the tensor's shape")


def _adds_in_place(prev: Any, g: Any) -> bool:
    """Can ``g`` (a first-order gradient: an array) be added into ``prev`` (a ``.grad``) in place?"""
    if g.__class__ is not np.ndarray or not isinstance(prev, Tensor) or prev._requires_grad:
        return False
    data = prev._data
    return data.__class__ is np.ndarray and data.flags.writeable and data.shape == g.shape and data.dtype == g.dtype


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None, device: Any = None) -> Tensor:
    """Shorthand for ``Tensor(data, requires_grad=..., dtype=..., device=...)``.
    ``chainrule.tensor`` is :func:`chainrule.ops.pytorch.constructors.tensor` (Python floats in the default dtype)."""
    check_cpu("tensor", device)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)
