"""Backward by hand, then automatically: the chain rule node by node, and as a sum over paths.

    python examples/03_backward_by_hand.py

Part 1 fills in the gradients of L = b(a + b)(a - b) one node at a time, as the tutorial does,
and checks them against backward() and against nudging each input by h.
Part 2 finds every path from L = (y - (mx + c))^2 to x, multiplies the local derivatives
along each (its chain) and adds the products: dL/dx = 36.
"""

from __future__ import annotations

import argparse

from chainrule import Scalar


def build(a0=1.0, b0=2.0):
    a, b = Scalar(a0, label="a"), Scalar(b0, label="b")
    c = a + b
    d = a - b
    e = c * d
    L = e * b
    return a, b, c, d, e, L


def part1() -> None:
    a, b, c, d, e, L = build()
    # by hand, from the output back: dL/dL = 1, dL/de = b, dL/dc = dL/de * d, dL/dd = dL/de * c
    by_hand = {"L": 1.0, "e": b.data, "c": b.data * d.data, "d": b.data * c.data}
    by_hand["a"] = by_hand["c"] * 1 + by_hand["d"] * 1  # a feeds c and d: the two contributions add up
    by_hand["b"] = e.data + by_hand["c"] * 1 + by_hand["d"] * (-1)  # b feeds L, c and d
    L.backward()
    auto = {"L": L.grad, "e": e.grad, "c": c.grad, "d": d.grad, "a": a.grad, "b": b.grad}
    h = 1e-5
    nudged = {
        "a": (build(1.0 + h)[-1].data - L.data) / h,
        "b": (build(1.0, 2.0 + h)[-1].data - L.data) / h,
    }
    print("node   by hand   backward()   finite difference")
    for name in ("L", "e", "c", "d", "a", "b"):
        fd = f"{nudged[name]:.6f}" if name in nudged else ""
        print(f"  {name}   {by_hand[name]:7g}   {auto[name]:10g}   {fd}")
        assert by_hand[name] == auto[name]


def paths_and_chains() -> None:
    y, m, x, c = Scalar(1.0, label="y"), Scalar(2.0, label="m"), Scalar(3.0, label="x"), Scalar(4.0, label="c")
    L = (y - (m * x + c)) * (y - (m * x + c))
    L.label = "L"
    # depth-first walk from L with an explicit stack (no recursion): (node, path so far, chain so far)
    stack = [(L, [L], [])]
    paths, chains = [], []
    while stack:
        node, path, chain = stack.pop()
        if node is x:
            paths.append(path)
            chains.append(chain)
            continue
        for parent, local in zip(node.parents, node.local_derivatives, strict=True):
            stack.append((parent, path + [parent], chain + [local]))
    total = 0.0
    for path, chain in zip(paths, chains, strict=True):
        product = 1.0
        for local in chain:
            product *= local
        total += product
        names = " -> ".join(n.label or n.op for n in path)
        print(f"  {names}: chain {chain}, product {product:g}")
    L.backward()
    print(f"sum over {len(paths)} paths: dL/dx = {total:g}; backward() gives {x.grad:g}")
    assert total == x.grad == 36.0


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print("Part 1: L = b(a + b)(a - b) at a = 1, b = 2")
    part1()
    print("\nPart 2: L = (y - (mx + c))^2 at y = 1, m = 2, x = 3, c = 4")
    paths_and_chains()


if __name__ == "__main__":
    main()
