"""The package is layered: a module imports only from its own layer or the layers below, and
the import graph of src/chainrule has no cycle. Imports are read with ``ast``, including the
ones inside functions (a lazy import is still a dependency). docs/design.md explains the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# Lowest first. A module belongs to the layer of the longest entry that names it or a package above it; the
# entry "chainrule" names the package's own __init__ only, so every other module must be listed by name
# (a new package or root module fails test_every_module_has_a_layer until it is placed).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("chainrule.core", "chainrule.runtime", "chainrule.tree_util", "chainrule.devices", "chainrule.cuda",
              "chainrule.tree", "chainrule.accelerator", "chainrule.amp", "chainrule.debug")),
    ("values", ("chainrule.tensor", "chainrule.scalar")),
    ("autodiff", ("chainrule.autodiff",)),
    ("ops", ("chainrule.ops", "chainrule.numpy", "chainrule.linalg", "chainrule.special", "chainrule.fft",
             "chainrule.random", "chainrule.lax_ops", "chainrule.scipy", "chainrule.flatten_util")),
    ("transforms", ("chainrule.transforms", "chainrule.batching", "chainrule.custom", "chainrule.autograd",
                    "chainrule.lax")),
    ("training", ("chainrule.nn", "chainrule.optim", "chainrule.optimize", "chainrule.data", "chainrule.utils",
                  "chainrule.gpt", "chainrule.distributed", "chainrule.func", "chainrule.replay",
                  "chainrule.backends", "chainrule.config", "chainrule.example_libraries", "chainrule.distributions",
                  "chainrule.testing", "chainrule.test_util", "chainrule.misc")),
    ("pictures", ("chainrule.pictures", "chainrule.graph", "chainrule.plot")),
    ("apps", ("chainrule.demo", "chainrule.cli", "chainrule.__main__", "chainrule.gpt.cli", "chainrule")),
]

# Upward imports that are allowed (none: a value draws its graph through core.views, which the root fills).
UPCALLS: set[tuple[str, str]] = set()

# Known upward imports in files owned by others at the time this test was written.
KNOWN: set[tuple[str, str]] = set()


def modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in sorted((SRC / "chainrule").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _targets(module: str, is_package: bool, node: ast.AST, known: dict[str, tuple[Path, bool]]) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        if node.level:
            base = module.split(".")[: None if is_package else -1]
            base = base[: len(base) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        names = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in known else origin for a in node.names]
    out = []
    for name in names:
        if name != "chainrule" and not name.startswith("chainrule."):
            continue
        while name not in known:  # chainrule.ops.shape.reshape -> chainrule.ops.shape
            name = name.rsplit(".", 1)[0]
        out.append(name)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the chainrule modules it imports anywhere in its body."""
    known = modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, (path, is_package) in known.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module].update(t for t in _targets(module, is_package, node, known) if t != module)
    return graph


def layer_of(module: str) -> int:
    best, level = -1, -1
    for k, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            names_it = module == prefix or (prefix != "chainrule" and module.startswith(prefix + "."))
            if names_it and len(prefix) > best:
                best, level = len(prefix), k
    return level


def _exempt(a: str, b: str) -> bool:
    return any(a == x and (b == y or b.startswith(y + ".")) for x, y in UPCALLS | KNOWN)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer_of(m) < 0] == []


def test_no_module_imports_from_a_layer_above_its_own():
    graph = import_graph()
    upward = [
        f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        for a, targets in sorted(graph.items())
        for b in sorted(targets)
        if layer_of(b) > layer_of(a) and not _exempt(a, b)
    ]
    assert upward == []


def test_the_import_graph_has_no_cycle():
    graph = {a: {b for b in targets if not _exempt(a, b)} for a, targets in import_graph().items()}
    assert cycles(graph) == []


def test_the_known_exceptions_still_exist():
    """An entry of KNOWN or UPCALLS that no longer happens must be deleted, so the lists stay true."""
    graph = import_graph()
    stale = [
        (a, b) for a, b in sorted(UPCALLS | KNOWN)
        if not any(t == b or t.startswith(b + ".") for t in graph.get(a, ()))
    ]
    assert stale == []


def test_the_checker_sees_function_level_imports_and_finds_a_cycle():
    tree = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(tree) == [["a", "b", "c"]]
    assert layer_of("chainrule.pictures.graph.views") > layer_of("chainrule.autodiff") > layer_of("chainrule.scalar")
    assert "chainrule.graph" in import_graph()["chainrule"]  # inside the root's drawer, a function-level import


def test_the_design_pages_layer_table_is_generated_from_this_one():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_layers_table", SRC.parent / "docs" / "gen_layers_table.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.current() == gen.render(), "docs/design.md's layer table is stale: run python docs/gen_layers_table.py"
