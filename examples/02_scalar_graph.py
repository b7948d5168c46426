"""A Scalar remembers how it was made: the graph of L = b(a + b)(a - b) at a = 1, b = 2.

    python examples/02_scalar_graph.py [--out DIR]

Every operation on Scalars makes a node that records its op, its parents and the local
derivative d(node)/d(parent) for each. That record is the computation graph.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from chainrule import Scalar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the pictures (default: a temp folder)")
    out = parser.parse_args().out or Path(tempfile.mkdtemp(prefix="chainrule-example-"))

    a, b = Scalar(1.0, label="a"), Scalar(2.0, label="b")
    c = a + b
    d = a - b
    e = c * d
    L = e * b
    for node, name in [(c, "c"), (d, "d"), (e, "e"), (L, "L")]:
        node.label = name
        parents = ", ".join(f"{p.label}={p.data:g}" for p in node.parents)
        print(
            f"{name} = {node.data:g}   op {node.op!r}  parents ({parents})  local derivatives {node.local_derivatives}"
        )
    print(f"a and b are leaves: a.parents = {a.parents}, a.op = {a.op!r}")

    L.backward()
    print(f"\nafter L.backward(): a.grad = {a.grad}, b.grad = {b.grad}")

    try:
        from chainrule.graph import render, tree
    except ImportError:
        print("(chainrule.graph is not available)")
        return
    print("\n" + tree(L))
    for name in ("graph.svg", "graph.png"):
        try:
            path = render(L, out / name, title="L = b(a + b)(a - b)")
        except ImportError as err:  # neither Graphviz nor matplotlib installed
            print(f"skipped {name}: {err}")
            continue
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
