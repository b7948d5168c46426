"""The op registry: every primitive has a reverse rule, a forward rule and test cases that
really exercise it; ``chainrule.ops.table()`` lists every function; docs/ops.md is current."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule.autodiff.backprop import grad as grads_of
from chainrule.autodiff.primitive import REGISTRY
from chainrule.core.node import Node
from op_cases import CASES, CASES_BY_PRIMITIVE, draw_inputs

ROOT = Path(__file__).resolve().parent.parent


IMPORT_ALL = """
import importlib, pkgutil
import chainrule
for m in pkgutil.walk_packages(chainrule.__path__, "chainrule."):
    if not m.name.endswith("__main__"):
        try:
            importlib.import_module(m.name)
        except ImportError:  # an optional extra that is not installed
            pass
"""


@pytest.fixture(scope="module")
def library_primitives():
    """The primitives the library itself defines: every chainrule module imported in a fresh
    interpreter (so primitives that other tests make do not count), then here too."""
    script = IMPORT_ALL + "from chainrule.autodiff.primitive import REGISTRY\nprint(sorted(REGISTRY))\n"
    out = subprocess.run([sys.executable, "-Werror", "-c", script], capture_output=True, text=True, check=True)
    names = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    exec(IMPORT_ALL, {})
    return {name: REGISTRY[name] for name in names}


def without_rules(prims):
    return [(n, p.has_vjp(), p.has_jvp()) for n, p in prims.items() if not (p.has_vjp() and p.has_jvp())]


def without_cases(prims):
    return sorted(set(prims) - set(CASES_BY_PRIMITIVE))


def test_every_primitive_has_a_reverse_and_a_forward_rule(library_primitives):
    assert len(library_primitives) >= 80
    missing = without_rules(library_primitives)
    assert not missing, f"primitives without a rule (name, reverse, forward): {missing}"


def test_every_primitive_has_a_test_case(library_primitives):
    missing = without_cases(library_primitives)
    assert not missing, f"primitives with no case in tests/op_cases.py: {missing}"
    unknown = sorted(set(CASES_BY_PRIMITIVE) - set(library_primitives))
    assert not unknown, f"cases name primitives that do not exist: {unknown}"


def test_a_missing_rule_or_case_is_reported(library_primitives):
    from chainrule.autodiff.primitive import Primitive

    lonely = Primitive("only_reverse_test_only", np.negative, register=False)
    lonely.defvjp(lambda g, ans, x: -g)
    fake = {**library_primitives, lonely.name: lonely}
    assert without_rules(fake) == [("only_reverse_test_only", True, False)]
    assert without_cases(fake) == ["only_reverse_test_only"]


def ops_in_graph(roots):
    """Names of the primitives behind ``roots`` (iterative walk)."""
    seen, names = set(), set()
    stack = [r._node for r in roots if isinstance(r, cr.Tensor) and r._node is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, Node):  # a leaf
            continue
        seen.add(id(node))
        names.add(node.prim.name)
        stack.extend(edge[1] for edge in node.parents)
    return names


def traced_ops(case, examples=4):
    """Primitives used by the case's function and by its gradient (recorded with create_graph),
    over a few drawn inputs. The loss is quadratic in the outputs, so the gradient of a linear
    op depends on the inputs and its reverse rule's ops are recorded too."""
    names: set[str] = set()

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        arrays, params = draw_inputs(case, data)
        xs = [cr.Tensor(a, requires_grad=True) for a in arrays]
        out = case.fn(*xs, **params)
        outs = [o for o in (out if isinstance(out, (list, tuple)) else [out])
                if isinstance(o, cr.Tensor) and o._requires_grad]
        names.update(ops_in_graph(outs))
        if outs:
            total = sum(np.real((o * o * np.random.default_rng(0).normal(size=o.shape)).sum()) for o in outs)
            names.update(ops_in_graph(grads_of(total, xs, create_graph=True)))

    run()
    return names


@pytest.mark.parametrize("case", [c for c in CASES if c.prims], ids=str)
def test_case_exercises_the_primitives_it_is_filed_under(case):
    missing = set(case.prims) - traced_ops(case)
    assert not missing, f"case {case.name} does not use primitive(s) {sorted(missing)}"


def _resolve(name):
    """The function a table row names: "cumsum" -> chainrule.cumsum, "linalg.inv" -> chainrule.linalg.inv,
    "numpy.linalg.eigh" -> chainrule.numpy.linalg.eigh (NumPy's spelling, where it differs from chainrule's)."""
    if name.startswith("numpy."):
        import chainrule.numpy as cnp

        return inspect.unwrap(getattr(cnp.linalg, name.rpartition(".")[2]))
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(f"chainrule.{module}") if module else cr.ops, attr)


def test_table_lists_every_public_function_with_modes_and_numpy_names():
    rows = {r.name: r for r in cr.ops.table()}
    assert rows["cumsum"] == cr.ops.OpInfo(
        "cumsum", True, True, ("numpy.cumsum",), "primitive", rows["cumsum"].doc, ("cumsum",)
    )
    assert rows["sum"].kind == "linear" and rows["sum"].methods == ("sum",)
    assert rows["add"].methods == ("__add__", "__radd__", "add")  # t.add(other, alpha=...): ops/torch_extras/
    assert rows["cumsum"].doc.startswith("Running sum")
    assert rows["linalg.eigh"].numpy == () and rows["numpy.linalg.eigh"].numpy == ("numpy.linalg.eigh",)
    assert rows["linalg.eigh"].kind == "primitive" and rows["linalg.eigh"].reverse and rows["linalg.eigh"].forward
    assert rows["argmax"].kind == "constant" and not rows["argmax"].reverse
    if "special.gammaln" in rows:
        assert "scipy.special.gammaln" in rows["special.gammaln"].numpy
    listed = {id(_resolve(name)) for name in rows}
    for fn_name, fn in cr.ops.FUNCTIONS.items():
        if fn in cr.ops.NONDIFFERENTIABLE and fn_name == "shape":
            continue  # chainrule.ops.shape is the module of shape ops; numpy.shape works on Tensors all the same
        assert id(fn) in listed, f"{fn_name} is registered but not exported by chainrule.ops / linalg / special"
    for r in rows.values():
        assert r.doc, f"{r.name} has no docstring"
        assert r.kind == "constant" or (r.reverse and r.forward), f"{r.name} lacks a mode"


def test_every_registered_numpy_callable_is_listed_in_the_table():
    listed = {n for r in cr.ops.table() for n in r.numpy}
    for np_fn in [*cr.ops.NUMPY_UFUNCS, *cr.ops.NUMPY_FUNCTIONS]:
        if np_fn is np.shape:
            continue
        assert any(n.endswith("." + np_fn.__name__) for n in listed), np_fn


def _generator():
    spec = importlib.util.spec_from_file_location("gen_ops_table", ROOT / "docs" / "gen_ops_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_ops_page_is_up_to_date():
    page = ROOT / "docs" / "ops.md"
    committed = page.read_text()
    rendered = _generator().render()
    if rendered.splitlines()[2] != committed.splitlines()[2]:  # "(NumPy x, SciPy y)": another environment
        pytest.skip("docs/ops.md was generated with other NumPy/SciPy versions")
    assert rendered == committed, "docs/ops.md is out of date: run python docs/gen_ops_table.py"


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "relu"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.complex128])
def test_a_reverse_rule_written_out_gives_the_bits_of_g_times_the_derivative(name, dtype):
    # elementwise_op(vjp=...): the rule written as one function must equal g * d(ans, x), which is also the
    # forward rule t * d(ans, x) with t = g (on arrays: a first-order pass; on Tensors: create_graph)
    if name == "relu" and dtype is np.complex128:
        pytest.skip("relu is real only")
    prim = REGISTRY[name]
    rng = np.random.default_rng(3)
    x = rng.standard_normal(24).astype(dtype) * 3
    x[:3] = 0  # exact zeros: relu's kink
    if dtype is np.complex128:
        x = x + 1j * rng.standard_normal(24)
    ans, g = prim.fn(x), rng.standard_normal(24).astype(dtype)
    fused, product = prim.vjps[0](g, ans, x), prim.jvps[0](g, ans, x)
    assert fused.dtype == product.dtype == g.dtype and np.array_equal(fused, product, equal_nan=True)
    traced = [rule(cr.Tensor(g), cr.Tensor(ans), cr.Tensor(x)) for rule in (prim.vjps[0], prim.jvps[0])]
    assert all(isinstance(t, cr.Tensor) for t in traced)
    assert np.array_equal(traced[0].data, traced[1].data, equal_nan=True)
