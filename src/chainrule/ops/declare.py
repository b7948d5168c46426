"""One declaration per op: everything else (function, methods, namespaces, docs, tests) follows.

An op is declared once, in the ``ops/`` module of its family, by one of

- :func:`elementwise_op`: a NumPy function and its local derivative(s) ``d(ans, *args)``;
  the reverse rule is ``g * d`` and the forward rule ``t * d``;
- :func:`linear_op`: a function linear in its (first, or every) array argument and its
  *transpose* (or ``"same"`` when it is its own adjoint); the forward rule of a linear op is
  the op itself applied to the tangent, so one rule gives both modes;
- :func:`bilinear_primitive`: linear in each of two arguments with the other held constant
  (``matmul``): the two transposes give both modes;
- :func:`primitive_op`: a NumPy function with one reverse and one forward rule per argument;
- :func:`declare_function` (or the decorator :func:`op`): a public function written by hand
  (argument checks, several primitives), declared with the same fields.

Each returns the public function, and records a :class:`Declaration` in :data:`DECLARATIONS`
with what the layers above read:

- ``numpy``: the NumPy / SciPy callables it answers to (NumPy's dispatch sends
  ``np.exp(tensor)`` to it; ``chainrule.numpy`` lists it under those names);
- ``method``: the Tensor method names (``True``: its own name; ``"__add__"``-style operator
  names, where ``"__r..."`` ones take their arguments reflected; a dict gives a method its own
  body, for signatures that differ from the function's); they are generated into
  :class:`~chainrule.tensor.TensorMethods`, the mixin ``Tensor`` inherits;
- ``namespaces``: where the function is public: ``"ops"`` (``chainrule`` and
  ``chainrule.ops``), ``"numpy"``, ``"linalg"``, ``"special"``, ``"nn.functional"``;
- ``scalar``: the local derivative for a :class:`~chainrule.Scalar` twin, written as
  ``d(x, y, m)`` with ``m`` the math namespace of ``scalar_rules`` (so it runs on floats and
  on Scalars); the Scalar method is generated into ``ScalarMethods``. (The Scalar engine's
  own ops, ``exp`` or ``tanh``, are written in ``scalar/rules.py``; their declarations name
  that ``ScalarOp``.)
- ``domain`` and ``torch``: what the tests draw inputs from and the PyTorch twin they compare
  with (a dotted path such as ``"torch.special.expit"`` or a callable; this package never
  imports torch). Domains: ``"real"``, ``"positive"``, ``"nonzero"``, ``"off_integers"``,
  ``"distinct"`` (the arguments never within 0.1 of each other), an open interval ``"(a,b)"``;
  a tuple gives one per argument.

Example:
    >>> import numpy as np, chainrule as cr
    >>> from chainrule.ops.declare import elementwise_op, undeclare
    >>> cube = elementwise_op("cube_doc_example", lambda x: x**3, lambda ans, x: 3 * x**2,
    ...                       doc="x ** 3.", method=True, domain="real")
    >>> float(cr.grad(cube)(2.0)), cr.Tensor(2.0).cube_doc_example()
    (12.0, Tensor(8.))
    >>> undeclare("cube_doc_example")
"""

from __future__ import annotations

import linecache
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autodiff.primitive import REGISTRY, Primitive, apply, apply1, apply2  # noqa: F401  (apply1, apply2: generated code)
from ..core.device import xp_of
from ..scalar import Scalar, ScalarMethods, scalar_function
from ..scalar.rules import ScalarOp
from ..tensor import Tensor, TensorMethods
from ._define import FUNCTIONS, NONDIFFERENTIABLE, NUMPY_FUNCTIONS, NUMPY_NAMES, NUMPY_UFUNCS
from .operators import BINARY_OPERATORS, deferring, defers  # noqa: F401  (defers: the generated code's)
from .selection_rules import selected

# where each namespace lives (a namespace module reads its names from here when imported; a later
# declaration is published into the loaded ones at once)
NAMESPACE_MODULES: dict[str, tuple[str, ...]] = {
    "ops": ("chainrule.ops", "chainrule"),
    "numpy": ("chainrule.numpy",),
    "linalg": ("chainrule.linalg",),
    "special": ("chainrule.special",),
    "nn.functional": ("chainrule.nn.functional",),
}


@dataclass(eq=False)
class Declaration:
    """Everything chainrule knows about one op (see the module docstring)."""

    name: str
    function: Callable[..., Any]
    primitive: Primitive | None
    numpy: tuple[Any, ...]
    methods: tuple[str, ...]
    namespaces: tuple[str, ...]
    doc: str
    domain: str | tuple[str, ...] | None
    torch: str | Callable[..., Any] | None
    kind: str  # "elementwise", "linear", "bilinear", "primitive", "function" or "constant"
    arity: int  # number of array arguments (0: any)
    scalar: ScalarOp | None = None
    cases: str = "elementwise"  # how tests draw shapes: "elementwise" (broadcasting), "reduction", "none"
    tol: float = 1.0  # scales the tests' tolerances
    differentiable: bool = True
    tensor_methods: dict[str, Callable[..., Any]] = field(default_factory=dict)

    @property
    def linear(self) -> bool:
        return self.kind == "linear"


DECLARATIONS: dict[str, Declaration] = {}
# every method TensorMethods holds, by name (vmap's batched values take the same ones)
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
_OWNER: dict[str, str] = {}  # method name -> the declaration that made it ("" for methods that are not ops)


# -- generated code --------------------------------------------------------------------------
def _generated(name: str, qualname: str, params: tuple[str, ...], call_args: tuple[str, ...], prim: Primitive,
               doc: str, module: str) -> Callable[..., Any]:
    """``def name(*params): return apply(prim, (*call_args,), None)``, compiled: as fast as a hand-written
    forwarder, with its own name, signature and docstring. One or two arguments call ``apply1`` /
    ``apply2`` instead (the same result, unrolled: the hot path of small ops)."""
    # made by a factory run in this module's globals (apply1 and apply2 hand every call to apply while a trace,
    # such as chainrule.jit's recording, runs: see core/traces.py)
    arity = len(call_args)
    call = (f"apply{arity}(prim, {', '.join(call_args)})" if arity in (1, 2)
            else f"apply(prim, ({', '.join(call_args)},), None)")
    body = (f"        return {call}\n" if name not in BINARY_OPERATORS else  # (see ops/operators.py)
            f"        try:\n            return {call}\n        except (TypeError, ValueError):\n"
            f"            if defers({params[1]}):\n                return NotImplemented\n            raise\n")
    source = (f"def make(prim):\n"
              f"    def {name}({', '.join(params)}):\n"
              f"{body}"
              f"    return {name}\n")
    scope: dict[str, Any] = {}
    filename = f"<chainrule op {qualname}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show the line
    exec(compile(source, filename, "exec"), globals(), scope)  # noqa: S102  (our own template)
    fn = scope["make"](prim)
    fn.__qualname__, fn.__doc__, fn.__module__ = qualname, doc, module
    fn.__annotations__ = {p.lstrip("*"): "Any" for p in params} | {"return": "Any"}
    return fn


def _renamed(fn: Callable[..., Any], name: str, qualname: str) -> Callable[..., Any]:
    """A copy of a Python function under another name (same code: no extra call)."""
    if not isinstance(fn, types.FunctionType):
        return fn
    copy = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__dict__.update(fn.__dict__)
    copy.__doc__, copy.__module__, copy.__qualname__ = fn.__doc__, fn.__module__, qualname
    copy.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    return copy


def tensor_method(name: str, fn: Callable[..., Any] | None = None, *, owner: str = "") -> Any:
    """Put ``fn`` on :class:`TensorMethods` as ``Tensor.<name>`` (a decorator without ``fn``).

    For methods that are not ops of their own (PyTorch spellings such as ``view``, adapters that
    read ``dim=``, properties); an op's methods come from its declaration.
    """

    def attach(f: Any) -> Any:
        method = f if isinstance(f, property) else _renamed(f, name, f"Tensor.{name}")
        if name in BINARY_OPERATORS and getattr(method, "__code__", None) is not None \
                and not method.__code__.co_filename.startswith("<chainrule op"):  # (generated ones defer already)
            method = deferring(method)
        _check_method_name(name, owner)
        setattr(TensorMethods, name, method)
        TENSOR_METHODS[name] = method
        _OWNER[name] = owner
        return f

    return attach if fn is None else attach(fn)


def _check_new(name: str, primitive_name: str | None = None) -> None:
    """Refuse a name already declared, or a primitive name already registered (it would replace that one)."""
    if name in DECLARATIONS:
        raise ValueError(f"{name}: declared twice; an op is one declaration (see chainrule.ops.declare)")
    if primitive_name is not None and primitive_name in REGISTRY:
        raise ValueError(f"{name}: a primitive named {primitive_name!r} exists already; give the op another name")


def _check_method_name(name: str, owner: str) -> None:
    if name in TENSOR_METHODS and _OWNER.get(name) != owner:
        raise ValueError(
            f"Tensor.{name} is declared twice (by {_OWNER.get(name) or 'a tensor_method'} and "
            f"{owner or 'a tensor_method'}); give the second one another name"
        )
    if name in Tensor.__dict__:
        raise ValueError(f"Tensor.{name} is defined in chainrule/tensor/; an op cannot declare it as a method")


def _method_names(name: str, method: Any) -> tuple[str, ...]:
    if isinstance(method, dict):
        return tuple(method)
    if method is True:
        return (name,)
    if not method:
        return ()
    return (method,) if isinstance(method, str) else tuple(method)


def _reflected(method_name: str) -> bool:
    return method_name.startswith("__r") and method_name not in ("__round__", "__repr__")


# -- the declarations ------------------------------------------------------------------------
def declare_function(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    primitive: Primitive | None = None,
    numpy: Any = (),
    method: bool | str | Iterable[str] | dict[str, Callable[..., Any] | None] = False,
    method_adapter: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None,
    namespaces: Iterable[str] = ("ops",),
    domain: str | tuple[str, ...] | None = None,
    torch: str | Callable[..., Any] | None = None,
    kind: str = "function",
    arity: int = 1,
    scalar: Callable[..., Any] | ScalarOp | None = None,
    scalar_value: Callable[[float], float] | None = None,
    cases: str = "elementwise",
    tol: float = 1.0,
    differentiable: bool = True,
    _method_code: Callable[[str], Callable[..., Any]] | None = None,
) -> Callable[..., Any]:
    """Declare a public function written by hand (the other declarations end here too); returns it."""
    name = name or function.__name__
    try:
        _check_new(name)
        for method_name in _method_names(name, method):
            _check_method_name(method_name, name)
    except ValueError:
        if primitive is not None and REGISTRY.get(primitive.name) is primitive:
            del REGISTRY[primitive.name]  # a refused declaration leaves nothing behind
        raise
    numpy_callables = tuple(f for f in ((numpy,) if not isinstance(numpy, (tuple, list)) else numpy) if f is not None)
    decl = Declaration(
        name, function, primitive, numpy_callables, (), tuple(namespaces), (function.__doc__ or "").strip(), domain,
        torch, kind if differentiable else "constant", arity, cases=cases, tol=tol, differentiable=differentiable,
    )
    _register_numpy(decl)
    for method_name in _method_names(name, method):
        given = method.get(method_name) if isinstance(method, dict) else None
        if given is not None:  # a method with a signature of its own (PyTorch's dim=, ndarray's out=)
            body = given
        elif method_adapter is not None:
            body = method_adapter(function)
        elif _method_code is not None:
            body = _method_code(method_name)
        elif _reflected(method_name):
            body = _reflect(function, method_name)
        else:
            body = function
        tensor_method(method_name, body, owner=name)
        made = TENSOR_METHODS[method_name]
        if getattr(made, "__doc__", None) is None and isinstance(made, types.FunctionType):
            made.__doc__ = function.__doc__  # a method written as a lambda reads as its function
        decl.tensor_methods[method_name] = made
    decl.methods = tuple(decl.tensor_methods)
    if isinstance(scalar, ScalarOp):  # the Scalar twin written in scalar/ (its method is there)
        decl.scalar = scalar
    elif scalar is not None:
        decl.scalar = _scalar_twin(name, function, scalar, scalar_value, decl.doc)
    DECLARATIONS[name] = decl
    _publish(decl)
    return function


def implements(*numpy_callables: Any, differentiable: bool = True,
               namespaces: Iterable[str] = ("ops",)) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@implements(np.cumsum)``: declare a hand-written function by the NumPy callables it answers to
    alone (no method; its test cases are written by hand). ``differentiable=False``: it answers on the
    values only (indices, counts, booleans). On a function declared already, it adds NumPy callables to
    that declaration (``implements(np.linalg.outer)(outer)``)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        known = DECLARATIONS.get(fn.__name__)
        if known is None or known.function is not fn:
            return declare_function(fn, numpy=numpy_callables, differentiable=differentiable,
                                    namespaces=namespaces, cases="none")
        more = tuple(f for f in numpy_callables if f is not None and f not in known.numpy)
        known.numpy += more
        _register_numpy(known, more)
        return fn

    return register


def op(**declaration: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator form of :func:`declare_function`."""
    return lambda fn: declare_function(fn, **declaration)


def _reflect(fn: Callable[..., Any], method_name: str) -> Callable[..., Any]:
    def reflected(self: Any, other: Any) -> Any:
        return fn(other, self)

    reflected.__doc__ = f"{fn.__name__}(other, self): {fn.__doc__ or ''}".strip()
    return reflected


def primitive_op(
    name: str,
    fn: Callable[..., Any],
    vjps: tuple[Callable[..., Any] | None, ...],
    jvps: tuple[Callable[..., Any] | None, ...],
    *,
    params: tuple[str, ...] | None = None,
    doc: str,
    kind: str = "primitive",
    primitive_name: str | None = None,
    reads: Any = None,
    keep_constants: bool = True,
    **declaration: Any,
) -> Callable[..., Any]:
    """A primitive with one reverse and one forward rule per argument, and its public function.

    ``reads``: what the reverse rules read from the forward pass (see ``Primitive(reads=...)``;
    None: everything); ``keep_constants=False``: they read no constant argument either."""
    _check_new(name, primitive_name or name)
    prim = Primitive(primitive_name or name, fn, reads=reads)
    prim.keep_constants = keep_constants
    prim.defvjp(*vjps)
    prim.defjvp(*jvps)
    return _declare_primitive(name, prim, params or _default_params(len(vjps)), doc, kind, declaration)


def elementwise_op(name: str, fn: Callable[..., Any], *derivatives: Callable[..., Any] | None, doc: str,
                   params: tuple[str, ...] | None = None, reads: Any = None, vjp: Callable[..., Any] | None = None,
                   **declaration: Any) -> Callable[..., Any]:
    """An elementwise op from its local derivatives ``d(ans, *args)`` (None: not differentiable there).

    ``reads``: what the derivatives read (e.g. ``("ans",)`` for ``exp``; None: everything). ``vjp``: for a
    one-argument op, its reverse rule ``g * d(ans, x)`` written out as one function (a call fewer per node on
    the hot path of small arrays); it must give the same bits (tests/test_ops_registry.py checks)."""
    _check_new(name, name)
    prim = Primitive(name, fn, reads=reads)
    if len(derivatives) == 1 and derivatives[0] is not None:  # the common case, without *args packing
        d = derivatives[0]
        if getattr(d, "selects", False):
            prim.defvjp(vjp or (lambda g, ans, x: selected(g, d(ans, x))))
            prim.defjvp(lambda t, ans, x: selected(t, d(ans, x)))
        else:
            prim.defvjp(vjp or (lambda g, ans, x: g * d(ans, x)))
            prim.defjvp(lambda t, ans, x: t * d(ans, x))
    else:
        prim.defvjp(*[_times(d) for d in derivatives])
        prim.defjvp(*[_times(d) for d in derivatives])
    return _declare_primitive(name, prim, params or _default_params(len(derivatives)), doc, "elementwise",
                              declaration)


def _times(d: Callable[..., Any] | None) -> Callable[..., Any] | None:
    if d is None:
        return None
    if getattr(d, "selects", False):
        return lambda g, ans, *args: selected(g, d(ans, *args))
    return lambda g, ans, *args: g * d(ans, *args)


def linear_op(name: str, fn: Callable[..., Any], transpose: Callable[..., Any] | str, *, doc: str,
              params: tuple[str, ...] = ("x",), variadic: bool = False, **declaration: Any) -> Callable[..., Any]:
    """An op linear in its array argument(s), from its transpose alone.

    ``transpose(g, ans, x, *rest, **kw)`` maps an output cotangent back to ``x``'s space (the
    reverse rule); ``"same"`` says the op is its own adjoint (``negative``). The forward rule is
    the op applied to the tangent, with the other arguments as they are. ``variadic``: linear in
    every positional argument jointly (``concatenate``); ``transpose(argnum, g, ans, *xs, **kw)``,
    and the forward rule puts the tangent in its place among zeros.
    """
    _check_new(name)
    prim = linear_primitive(name, fn, transpose, variadic=variadic, reads=() if transpose == "same" else ("shapes",))
    return _declare_primitive(name, prim, params, doc, "linear", declaration)


def linear_primitive(name: str, fn: Callable[..., Any], transpose: Callable[..., Any] | str,
                     variadic: bool = False, reads: tuple[str, ...] = ("shapes",)) -> Primitive:
    """The primitive of a linear op (see :func:`linear_op`), for ops whose public function is hand-written.

    A transpose never reads the values of the argument it is linear in, only its shape: the graph
    keeps no copy of them (``reads=("shapes",)``; ``()`` when the rule needs not even the shape)."""
    _check_new(name, name)
    prim = Primitive(name, fn, reads=reads)
    if variadic:
        prim.defvjp_argnum(transpose)  # type: ignore[arg-type]

        def forward_argnum(argnum: int, t: Any, ans: Any, *xs: Any, **kw: Any) -> Any:
            dtype = np.result_type(ans._data if isinstance(ans, Tensor) else ans)
            xp = xp_of(t._data if isinstance(t, Tensor) else t)  # zeros where the tangent is (host or device)
            parts = [t if i == argnum else xp.zeros(np.shape(x), dtype=dtype) for i, x in enumerate(xs)]
            return apply(prim, tuple(parts), kw)

        prim.defjvp_argnum(forward_argnum)
        return prim
    if transpose == "same":
        prim.defvjp(lambda g, ans, x, *rest, **kw: apply(prim, (g, *rest), kw))
    else:
        prim.defvjp(transpose)  # type: ignore[arg-type]
    prim.defjvp(lambda t, ans, x, *rest, **kw: apply(prim, (t, *rest), kw))
    return prim


def bilinear_primitive(name: str, fn: Callable[..., Any], transpose_a: Callable[..., Any],
                       transpose_b: Callable[..., Any]) -> Primitive:
    """The primitive of an op linear in each of its two arguments while the other is held constant
    (``matmul``): from the two transposes; the forward rule for each argument is the op with that
    argument replaced by its tangent."""
    _check_new(name, name)
    prim = Primitive(name, fn, reads=(0, 1))  # each transpose reads the other argument; not the product
    prim.defvjp(transpose_a, transpose_b)
    prim.defjvp(lambda t, ans, a, b, **kw: apply(prim, (t, b), kw), lambda t, ans, a, b, **kw: apply(prim, (a, t), kw))
    return prim


def _default_params(n: int) -> tuple[str, ...]:
    return ("x",) if n == 1 else ("x", "y") if n == 2 else tuple(f"x{i}" for i in range(1, n + 1))


def _declare_primitive(name: str, prim: Primitive, params: tuple[str, ...], doc: str, kind: str,
                       declaration: dict[str, Any]) -> Callable[..., Any]:
    module = sys._getframe(2).f_globals.get("__name__", __name__)  # the ops module that declared it
    function = _generated(name, name, params, params, prim, doc, module)
    if prim.doc is None:
        prim.doc = doc

    def method_code(method_name: str) -> Callable[..., Any]:
        self_params = ("self", *params[1:])
        call = ((params[1], "self") if _reflected(method_name) and len(params) == 2 else self_params)
        return _generated(method_name, f"Tensor.{method_name}", self_params, call, prim, doc, module)

    return declare_function(function, name=name, primitive=prim, kind=kind, arity=len(params),
                            _method_code=method_code, **declaration)


# -- NumPy dispatch, namespaces, Scalar twins -------------------------------------------------
def _register_numpy(decl: Declaration, numpy_callables: tuple[Any, ...] | None = None) -> None:
    fn = decl.function
    for np_fn in decl.numpy if numpy_callables is None else numpy_callables:
        table = NUMPY_UFUNCS if isinstance(np_fn, np.ufunc) else NUMPY_FUNCTIONS
        table[np_fn] = fn
        NUMPY_NAMES.setdefault(fn, []).append(np_fn)
    FUNCTIONS.setdefault(decl.name, fn)
    if not decl.differentiable:
        NONDIFFERENTIABLE.add(fn)


def declared_in(namespace: str) -> dict[str, Callable[..., Any]]:
    """The declared functions public in ``namespace`` ("ops", "numpy", "linalg", ...), by name."""
    found = {d.name: d.function for d in DECLARATIONS.values() if namespace in d.namespaces}
    if namespace == "numpy":  # and every op under the NumPy names it answers to
        for d in DECLARATIONS.values():
            for np_fn in d.numpy:
                if getattr(np, getattr(np_fn, "__name__", ""), None) is np_fn:
                    found[np_fn.__name__] = d.function
    return found


def _publish(decl: Declaration) -> None:
    """Put a declaration made after its namespaces were loaded into them (a user's or a test's op)."""
    for namespace in decl.namespaces + (("numpy",) if decl.numpy else ()):
        names = [decl.name] if namespace != "numpy" or namespace in decl.namespaces else []
        names += [f.__name__ for f in decl.numpy if namespace == "numpy" and getattr(np, f.__name__, None) is f]
        for module_name in NAMESPACE_MODULES.get(namespace, ()):
            module = sys.modules.get(module_name)
            if module is None:
                continue
            for n in names:
                setattr(module, n, decl.function)
                listed = getattr(module, "__all__", None)
                if isinstance(listed, list) and n not in listed:
                    listed.append(n)
                if namespace == "numpy" and isinstance(getattr(module, "FUNCTIONS", None), dict):
                    module.FUNCTIONS[n] = decl.function


def undeclare(name: str) -> None:
    """Remove a declaration and everything made from it (for throwaway ops in tests and examples)."""
    decl = DECLARATIONS.pop(name)
    for method_name in decl.methods:
        TENSOR_METHODS.pop(method_name, None)
        _OWNER.pop(method_name, None)
        if TensorMethods.__dict__.get(method_name) is not None:
            delattr(TensorMethods, method_name)
    if decl.scalar is not None and name in ScalarMethods.__dict__:
        delattr(ScalarMethods, name)
    for np_fn in decl.numpy:
        (NUMPY_UFUNCS if isinstance(np_fn, np.ufunc) else NUMPY_FUNCTIONS).pop(np_fn, None)
    NUMPY_NAMES.pop(decl.function, None)
    NONDIFFERENTIABLE.discard(decl.function)
    if FUNCTIONS.get(name) is decl.function:
        del FUNCTIONS[name]
    if decl.primitive is not None and REGISTRY.get(decl.primitive.name) is decl.primitive:
        del REGISTRY[decl.primitive.name]
    for module_names in NAMESPACE_MODULES.values():
        for module_name in module_names:
            module = sys.modules.get(module_name)
            if module is None:
                continue
            for attr, value in list(vars(module).items()):
                if value is decl.function:
                    delattr(module, attr)
                    listed = getattr(module, "__all__", None)
                    if isinstance(listed, list) and attr in listed:
                        listed.remove(attr)
                    if isinstance(getattr(module, "FUNCTIONS", None), dict):
                        module.FUNCTIONS.pop(attr, None)


def _scalar_twin(name: str, function: Callable[..., Any], derivative: Callable[..., Any],
                 value: Callable[[float], float] | None, doc: str) -> ScalarOp:
    """``Scalar.<name>``: the value from ``value`` (or the op on a float), the local derivative
    ``derivative(x, y, m)`` on floats when the node is built and on Scalars for higher orders."""
    scalar_op = ScalarOp(name, 1, lambda x, y, c, m: derivative(x, y, m))
    value_of = value or (lambda x: float(function(x)))
    what = doc.splitlines()[0].rstrip(".") if doc else name
    method = scalar_function(scalar_op, value_of, what, name)
    if name in Scalar.__dict__:
        raise ValueError(f"Scalar.{name} is defined in chainrule/scalar/; declare the op without scalar=")
    setattr(ScalarMethods, name, method)
    return scalar_op


def table_of_declarations() -> list[Declaration]:
    """Every declaration, by name."""
    return [DECLARATIONS[k] for k in sorted(DECLARATIONS)]
