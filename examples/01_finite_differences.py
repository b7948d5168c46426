"""Finite differences versus autodiff: the slope of f(x) = x^3 - 10x^2 + 5x - 2 at x0 = 6.

    python examples/01_finite_differences.py [--out DIR]

A finite difference (f(x + h) - f(x)) / h only approximates the slope: a large h pays the
truncation error, a tiny h the round-off. Autodiff gives the exact slope of the code.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import chainrule as cr


def f(x):
    return x**3 - 10 * x**2 + 5 * x - 2


def df(x):  # the derivative by hand
    return 3 * x**2 - 20 * x + 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the picture (default: a temp folder)")
    out = parser.parse_args().out or Path(tempfile.mkdtemp(prefix="chainrule-example-"))

    x0 = 6.0
    print(f"analytic  f'(6) = {df(x0)}")
    print(f"autodiff  f'(6) = {cr.grad(f)(x0)}")
    print(f"finite difference, h = 1e-5: {(f(x0 + 1e-5) - f(x0)) / 1e-5:.10f}")

    print("\n      h   forward difference       error")
    for k in range(1, 15, 2):
        h = 10.0**-k
        slope = (f(x0 + h) - f(x0)) / h
        print(f"  {h:5.0e}   {slope:18.12f}   {abs(slope - df(x0)):9.1e}")

    try:
        from chainrule.plot import tangent
    except ImportError:
        print("\n(matplotlib is missing: pip install chainrule[plot] for the picture)")
        return
    path = out / "tangent.png"
    tangent(f, x0, analytic=df, xrange=(0, 10), label="$f(x) = x^3 - 10x^2 + 5x - 2$", path=path)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
