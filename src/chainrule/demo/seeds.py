"""Every number the tutorials (seeds 000 and 002) print, recomputed with chainrule.

Each check is a small function returning ``(name, expected, got)``; ``@check`` files it
under a section of the tour with the tolerance it is held to (exact for derivatives that
autodiff gets exactly, looser for finite differences).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..scalar import Scalar

CheckFn = Callable[[], tuple[str, float, float]]
REGISTRY: list[tuple[str, CheckFn, float]] = []


def check(section: str, tol: float = 1e-12) -> Callable[[CheckFn], CheckFn]:
    """File a check under ``section``; it passes when ``|got - expected| <= tol * max(1, |expected|)``."""

    def register(fn: CheckFn) -> CheckFn:
        REGISTRY.append((section, fn, tol))
        return fn

    return register


@dataclass
class Result:
    section: str
    name: str
    expected: float
    got: float
    tol: float
    error: str = ""

    @property
    def passed(self) -> bool:
        if self.error:
            return False
        return bool(abs(self.got - self.expected) <= self.tol * max(1.0, abs(self.expected)))


def run(section: str) -> list[Result]:
    """Run the checks of ``section``; a check that raises fails with its error as the reason."""
    out = []
    for sec, fn, tol in REGISTRY:
        if sec != section:
            continue
        try:
            name, expected, got = fn()
            out.append(Result(sec, name, float(expected), float(got), tol))
        except Exception as e:  # a crash is a failed check, reported, not a crashed demo
            out.append(Result(sec, fn.__name__, math.nan, math.nan, tol, f"{type(e).__name__}: {e}"))
    return out


# -- the functions of the tutorials -----------------------------------------------------------
def cubic(x):
    """Seed 002's first function, f(x) = x^3 - 10x^2 + 5x - 2."""
    return x**3 - 10 * x**2 + 5 * x - 2


def dcubic(x):
    """Its derivative by hand, 3x^2 - 20x + 5."""
    return 3 * x**2 - 20 * x + 5


def seed_L(x):
    """Seed 002's L = b(a + b)(a - b) for a point x = (a, b) (vectorised over columns)."""
    return x[1] * (x[0] + x[1]) * (x[0] - x[1])


def L_graph(a: float = 1.0, b: float = 2.0) -> dict[str, Scalar]:
    """L = b(a + b)(a - b) as a labelled Scalar graph, after ``L.backward()``."""
    sa, sb = Scalar(a, label="a"), Scalar(b, label="b")
    c = sa + sb
    c.label = "c"
    d = sa - sb
    d.label = "d"
    e = c * d
    e.label = "e"
    L = e * sb
    L.label = "L"
    L.backward()
    return {"a": sa, "b": sb, "c": c, "d": d, "e": e, "L": L}


def line_loss(y: float = 1.0, m: float = 2.0, x: float = 3.0, c: float = 4.0) -> dict[str, Scalar]:
    """Seed 000's L = (y - (m x + c))^2, written as the product of two equal factors."""
    sy, sm, sx, sc = Scalar(y, label="y"), Scalar(m, label="m"), Scalar(x, label="x"), Scalar(c, label="c")
    L = (sy - (sm * sx + sc)) * (sy - (sm * sx + sc))
    L.label = "L"
    return {"y": sy, "m": sm, "x": sx, "c": sc, "L": L}


def long_polynomial(x):
    """Seed 000's long polynomial (its derivative at 2 is 578)."""
    return (
        (2 * x * x * x + 4 * x * x - 5 * x) * (3 * x * x - 2 * x + 7)
        - (6 * x * x * x * x + 2 * x * x * x - 8 * x * x)
        + (5 * x * x - 3 * x)
    )


def forward_difference(f: Callable[[float], float], x: float, h: float) -> float:
    return (f(x + h) - f(x)) / h


# -- seed 002, first derivatives ----------------------------------------------------------------
FIRST = "first"


@check(FIRST)
def cubic_autodiff():
    from ..transforms import grad

    return "seed 002: f'(6) by autodiff, f = x^3 - 10x^2 + 5x - 2", dcubic(6.0), grad(cubic)(6.0)


@check(FIRST, tol=1e-4)
def cubic_finite_difference():
    return "seed 002: f'(6) by finite difference, h = 1e-5", -7.0, forward_difference(cubic, 6.0, 1e-5)


def _forward_value(node: str, text: str, want: float) -> CheckFn:
    return lambda: (f"seed 002: {text} at (a, b) = (1, 2)", want, L_graph()[node].data)


for _node, _text, _want in [("c", "c = a + b", 3.0), ("d", "d = a - b", -1.0), ("e", "e = c * d", -3.0)]:
    check(FIRST)(_forward_value(_node, _text, _want))


@check(FIRST)
def L_value():
    return "seed 002: L = b(a+b)(a-b) at (a, b) = (1, 2)", -6.0, L_graph()["L"].data


@check(FIRST)
def dL_da():
    return "seed 002: dL/da (Scalar.backward)", 4.0, L_graph()["a"].grad


@check(FIRST)
def dL_db():
    return "seed 002: dL/db (Scalar.backward)", -11.0, L_graph()["b"].grad


@check(FIRST)
def dL_dc():
    return "seed 002: dL/dc = b * d", -2.0, L_graph()["c"].grad


@check(FIRST)
def dL_dd():
    return "seed 002: dL/dd = b * c", 6.0, L_graph()["d"].grad


@check(FIRST)
def dL_de():
    return "seed 002: dL/de = b", 2.0, L_graph()["e"].grad


@check(FIRST, tol=1e-9)
def fd_dL_da():
    f = lambda a: float(seed_L(np.array([a, 2.0])))
    return "seed 002: dL/da by finite difference, h = 1e-5", 4.00002, forward_difference(f, 1.0, 1e-5)


@check(FIRST, tol=1e-9)
def fd_dL_db():
    f = lambda b: float(seed_L(np.array([1.0, b])))
    return "seed 002: dL/db by finite difference, h = 1e-5", -11.00006, forward_difference(f, 2.0, 1e-5)


def _transform_grad(k: int, want: float) -> CheckFn:
    def fn():
        from ..transforms import grad

        got = grad(lambda a, b: b * ((a + b) * (a - b)), argnums=(0, 1))(1.0, 2.0)[k]
        return f"seed 002: dL/d{'ab'[k]} by chainrule.grad (the JAX way)", want, got

    return fn


check(FIRST)(_transform_grad(0, 4.0))
check(FIRST)(_transform_grad(1, -11.0))


@check(FIRST)
def step_on_a():
    a, b = 1.0 - 0.01 * L_graph()["a"].grad, 2.0
    return "seed 002: L after a -= 0.01 * dL/da", -6.1568, float(seed_L(np.array([a, b])))


@check(FIRST)
def step_on_b():
    a, b = 1.0, 2.0 - 0.01 * L_graph()["b"].grad
    return "seed 002: L after b -= 0.01 * dL/db", -7.283931, float(seed_L(np.array([a, b])))


@check(FIRST)
def tanh_value():
    t = Scalar(1.0, label="t")
    y = t.tanh()
    y.backward()
    return "seed 002: tanh(1)", 0.7615941559557649, y.data


@check(FIRST)
def tanh_grad():
    t = Scalar(1.0)
    t.tanh().backward()
    return "seed 002: d tanh(t)/dt at 1 = 1 - tanh(1)^2", 1.0 - math.tanh(1.0) ** 2, t.grad


# -- seed 000 ------------------------------------------------------------------------------------
def _arith(symbol: str, want: float) -> CheckFn:
    ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
    return lambda: (f"seed 000: 3 {symbol} 4", want, ops[symbol](Scalar(3.0), Scalar(4.0)).data)


for _symbol, _want in [("+", 7.0), ("-", -1.0), ("*", 12.0)]:
    check(FIRST)(_arith(_symbol, _want))


def _product(wrt: int, want: float) -> CheckFn:
    def fn():
        a, b = Scalar(3.0), Scalar(4.0)
        (a * b).backward()
        name = "d(a*b)/da = b" if wrt == 0 else "d(a*b)/db = a"
        return f"seed 000: {name} at a=3, b=4", want, (a, b)[wrt].grad

    return fn


check(FIRST)(_product(0, 4.0))
check(FIRST)(_product(1, 3.0))


@check(FIRST)
def nested():
    a, b = Scalar(3.0), Scalar(4.0)
    z = a + a * b
    z.backward()
    return "seed 000: z = a + a*b, dz/db = a", 3.0, b.grad


@check(FIRST)
def line_loss_dx():
    g = line_loss()
    g["L"].backward()
    return "seed 000: dL/dx for L = (y - (mx + c))^2 at y=1, m=2, x=3, c=4", 36.0, g["x"].grad


@check(FIRST)
def line_loss_formula():
    y, m, x, c = 1.0, 2.0, 3.0, 4.0
    g = line_loss(y, m, x, c)
    g["L"].backward()
    return "seed 000: dL/dx = 2m(c + mx - y)", 2 * m * (c + m * x - y), g["x"].grad


@check(FIRST)
def polynomial():
    x = Scalar(2.0)
    long_polynomial(x).backward()
    return "seed 000: d/dx of the long polynomial at x = 2", 578.0, x.grad


@check(FIRST)
def polynomial_formula():
    from ..transforms import grad

    x = 2.0
    return (
        "seed 000: -38 + 102x - 33x^2 + 8x^3 + 30x^4 at x = 2",
        -38 + 102 * x - 33 * x**2 + 8 * x**3 + 30 * x**4,
        grad(long_polynomial)(x),
    )


@check(FIRST)
def z_x_plus_c():
    x, c = Scalar(3.0, label="x"), Scalar(4.0, label="c")
    z = (x + c) * x
    z.backward()
    return "seed 000: z = (x + c) x, dz/dx = 2x + c at x=3, c=4", 2 * 3.0 + 4.0, x.grad


@check(FIRST)
def z_dc():
    x, c = Scalar(3.0), Scalar(4.0)
    ((x + c) * x).backward()
    return "seed 000: z = (x + c) x, dz/dc = x", 3.0, c.grad


# -- paths and chains (needs chainrule.graph) -------------------------------------------------------
CHAINS = "chains"


@check(CHAINS)
def chains_total():
    from ..graph import explain

    g = line_loss()
    return "seed 000: sum over paths of the chain products, dL/dx", 36.0, explain(g["L"], g["x"]).total


@check(CHAINS)
def chains_count():
    from ..graph import explain

    g = line_loss()
    return "seed 000: number of paths from L to x", 2, len(explain(g["L"], g["x"]).chains)


def _chain_factor(k: int, want: float) -> CheckFn:
    def fn():
        from ..graph import explain

        g = line_loss()
        chains = explain(g["L"], g["x"]).chains
        worst = max((abs(ch[k] - want) for ch in chains), default=math.inf)
        return f"seed 000: local derivative {k + 1} along both chains", want, want + worst

    return fn


for _k, _want in enumerate([-9.0, -1.0, 1.0, 2.0]):
    check(CHAINS)(_chain_factor(_k, _want))


# -- second derivatives --------------------------------------------------------------------------
SECOND = "second"


@check(SECOND)
def d2L_da2():
    from ..transforms import hessian

    return "seed 002: d2L/da2 = 2b", 4.0, hessian(lambda a, b: b * ((a + b) * (a - b)), argnums=0)(1.0, 2.0)


@check(SECOND)
def d2L_db2():
    from ..transforms import hessian

    return "seed 002: d2L/db2 = -6b", -12.0, hessian(lambda a, b: b * ((a + b) * (a - b)), argnums=1)(1.0, 2.0)


@check(SECOND)
def d2L_dadb():
    from ..transforms import hessian

    return "seed 002: d2L/dadb = 2a", 2.0, hessian(seed_L)(np.array([1.0, 2.0]))[0, 1]


@check(SECOND)
def cubic_second():
    from ..transforms import deriv

    return "seed 002: f''(6) = 6x - 20", 6 * 6.0 - 20, deriv(cubic, 2)(6.0)
