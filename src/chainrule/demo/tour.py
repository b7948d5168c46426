"""The guided tour behind ``chainrule demo``: the tutorials' story, every number checked.

Sections, in order:

1. the derivatives the tutorials print, with expected value, value got and a pass/fail mark;
2. finite differences versus autodiff as the step shrinks (a table) and the tangent picture;
3. seed 000's paths and chains for dL/dx (sum over paths of the product of local derivatives);
4. the graph of seed 002's L = b(a + b)(a - b), written to SVG and PNG;
5. 50 gradient-descent trajectories over the contour map and gradient field of L, to PNG;
6. second derivatives.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from . import seeds
from .bar import stage

FILES = ("tangent.png", "graph.svg", "graph.png", "trajectories.png")


def _marks(stream: TextIO) -> tuple[str, str]:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "✓✗".encode(encoding)
        return "✓ pass", "✗ FAIL"
    except (UnicodeEncodeError, LookupError):
        return "pass", "FAIL"


def _num(v: float) -> str:
    if v != v:  # NaN
        return "nan"
    return f"{v:.12g}"


@dataclass
class Tour:
    """State of one run: where files go, what was checked and written."""

    out: Path
    stream: TextIO
    seed: int = 0
    results: list[seeds.Result] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def say(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    def heading(self, number: int, title: str) -> None:
        self.say()
        self.say(f"{number}. {title}")
        self.say("-" * (len(title) + 3))

    def show(self, results: list[seeds.Result]) -> None:
        ok, bad = _marks(self.stream)
        width = max((len(r.name) for r in results), default=0)
        for r in results:
            self.results.append(r)
            mark = ok if r.passed else bad
            line = f"  {mark}  {r.name:<{width}}  expected {_num(r.expected):<14} got {_num(r.got)}"
            self.say(line + (f"  ({r.error})" if r.error else ""))

    def fail(self, name: str, error: BaseException) -> None:
        """A step that crashed counts as a failed check."""
        self.show([seeds.Result("tour", name, np.nan, np.nan, 0.0, f"{type(error).__name__}: {error}")])

    def wrote(self, path: Path) -> None:
        self.files.append(path)
        self.say(f"  wrote {path}")

    def skip(self, what: str, why: str) -> None:
        self.skipped.append(what)
        self.say(f"  skipped {what} ({why})")


def _has_matplotlib() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _has_graph() -> bool:
    return importlib.util.find_spec("chainrule.graph") is not None


def _picture(tour: Tour, name: str, make: Callable[[Path], Any]) -> None:
    """Write one file with ``make(path)``; a missing optional package skips it, a crash fails it."""
    path = tour.out / name
    try:
        make(path)
    except ImportError as e:
        tour.skip(name, str(e))
        return
    except Exception as e:
        tour.fail(f"writing {name}", e)
        return
    if path.exists() and path.stat().st_size > 0:
        tour.wrote(path)
    else:
        tour.fail(f"writing {name}", FileNotFoundError(f"{path} was not written"))


# -- the sections ------------------------------------------------------------------------------
def derivatives(tour: Tour) -> None:
    tour.heading(1, "The tutorials' derivatives, recomputed (seeds 002 and 000)")
    tour.show(seeds.run(seeds.FIRST))


def finite_differences(tour: Tour) -> None:
    from ..transforms import grad

    tour.heading(2, "Finite differences versus autodiff as the step h shrinks: f'(6), f = x^3 - 10x^2 + 5x - 2")
    f, x0 = seeds.cubic, 6.0
    exact = seeds.dcubic(x0)
    auto = grad(f)(x0)
    tour.say(
        f"  autodiff (chainrule.grad): {_num(auto)}   analytic 3x^2 - 20x + 5: {_num(exact)}   "
        f"error {abs(auto - exact):.1e}"
    )
    tour.say(
        f"  {'h':>8}  {'forward (f(x+h)-f(x))/h':>24}  {'error':>9}  {'central (f(x+h)-f(x-h))/2h':>27}  {'error':>9}"
    )
    best = (np.inf, 0.0)
    for k in range(1, 15, 2):
        h = 10.0**-k
        fwd = (f(x0 + h) - f(x0)) / h
        cen = (f(x0 + h) - f(x0 - h)) / (2 * h)
        best = min(best, (abs(fwd - exact), h))
        tour.say(f"  {h:>8.0e}  {fwd:>24.12f}  {abs(fwd - exact):>9.1e}  {cen:>27.12f}  {abs(cen - exact):>9.1e}")
    tour.say(f"  the forward difference is best near h = {best[1]:.0e} (error {best[0]:.1e}): a large h pays the")
    tour.say("  truncation error ~ f''h/2, a small one the round-off ~ eps|f|/h; autodiff pays neither.")
    if not _has_matplotlib():
        tour.skip("tangent.png", "matplotlib is not installed: pip install chainrule[plot]")
        return
    with stage("drawing the tangent", 1, tour_stream()) as tick:
        from ..plot import tangent

        _picture(
            tour,
            "tangent.png",
            lambda p: tangent(
                f,
                x0,
                analytic=seeds.dcubic,
                xrange=(0.0, 10.0),
                label="$f(x) = x^3 - 10x^2 + 5x - 2$",
                title="Tangent of $f$ at $x_0 = 6$: autodiff, finite difference, analytic",
                path=p,
            ),
        )
        tick()


def paths_and_chains(tour: Tour) -> None:
    tour.heading(3, "Paths and chains: dL/dx for L = (y - (mx + c))^2 at y=1, m=2, x=3, c=4 (seed 000)")
    if not _has_graph():
        tour.skip("paths and chains", "graph module not available")
        return
    from ..graph import explain
    from ..scalar import Scalar

    g = seeds.line_loss()
    tour.say(_indent(str(explain(g["L"], g["x"]))))
    tour.say()
    x, c = Scalar(3.0, label="x"), Scalar(4.0, label="c")
    z = (x + c) * x
    z.label = "z"
    tour.say("  and for z = (x + c) x at x=3, c=4 (two paths: through x + c, and straight to x):")
    tour.say(_indent(str(explain(z, x))))
    tour.say()
    tour.show(seeds.run(seeds.CHAINS))


def graph_picture(tour: Tour) -> None:
    tour.heading(4, "The graph of L = b(a + b)(a - b) after L.backward(): data, grad, local derivatives")
    if not _has_graph():
        tour.skip("graph.svg, graph.png", "graph module not available")
        return
    from ..graph import render, tree

    L = seeds.L_graph()["L"]
    tour.say(_indent(tree(L)))
    with stage("rendering the graph", 2, tour_stream()) as tick:
        for name in ("graph.svg", "graph.png"):
            _picture(tour, name, lambda p: render(L, p, title="L = b(a + b)(a - b) at a = 1, b = 2"))
            tick()


def descent(tour: Tour) -> None:
    from ..optimize import minimize
    from ..plot import gradient_grid

    tour.heading(5, "Descent: 50 random starts on L = b(a + b)(a - b), lr = 1e-3, 25 steps, one vectorised run")
    with stage("descent and its picture", 3, tour_stream()) as tick:
        starts = np.random.default_rng(tour.seed).uniform(-10.0, 10.0, size=(50, 2))
        t0 = time.perf_counter()
        r = minimize(seeds.seed_L, starts, method="gd", lr=1e-3, steps=25, tol=None)
        ms = 1e3 * (time.perf_counter() - t0)
        tick()
        v = r.trajectory.values
        tour.say(f"  {r.n_starts} starts x 25 steps in {ms:.1f} ms (f evaluated once per step for all starts)")
        tr = r.trajectory
        tour.say(f"  trajectory: positions {tr.positions.shape}, values {tr.values.shape}, grads {tr.grads.shape}")
        tour.say(f"  median L: {np.median(v[0]):.1f} at the starts -> {np.median(v[-1]):.1f} after 25 steps")
        down = int(np.sum(v[-1] < v[0]))
        tour.show([seeds.Result("descent", "starts whose L went down", 50.0, float(down), 0.0)])
        t0 = time.perf_counter()
        gradient_grid(seeds.seed_L, (-10.0, 10.0), (-10.0, 10.0), 400)
        tour.say(
            f"  gradient field on a 400 x 400 grid: one vectorised call, {1e3 * (time.perf_counter() - t0):.1f} ms"
        )
        tick()
        if not _has_matplotlib():
            tour.skip("trajectories.png", "matplotlib is not installed: pip install chainrule[plot]")
            return
        from ..plot import trajectories

        _picture(
            tour,
            "trajectories.png",
            lambda p: trajectories(
                r,
                seeds.seed_L,
                labels=("$a$", "$b$"),
                label="$L = b(a+b)(a-b)$",
                title="50 descent paths on $L = b(a+b)(a-b)$ (lr = 1e-3, 25 steps)",
                path=p,
            ),
        )
        tick()


def second_derivatives(tour: Tour) -> None:
    from ..transforms import hessian

    tour.heading(6, "Second derivatives: differentiate the derivative (reverse over reverse)")
    H = hessian(seeds.seed_L)(np.array([1.0, 2.0]))
    tour.say("  Hessian of L = a^2 b - b^3 at (a, b) = (1, 2): [[2b, 2a], [2a, -6b]]")
    for row in H:
        tour.say("    [" + "  ".join(f"{v:6.1f}" for v in row) + " ]")
    tour.show(seeds.run(seeds.SECOND))


SECTIONS = (derivatives, finite_differences, paths_and_chains, graph_picture, descent, second_derivatives)

_progress_stream: list[TextIO | None] = [None]


def tour_stream() -> TextIO | None:
    return _progress_stream[0]


def _indent(text: str, pad: str = "  ") -> str:
    return "\n".join(pad + line for line in text.splitlines())


def run(
    out: str | Path = "chainrule-demo", stream: TextIO | None = None, seed: int = 0, progress: TextIO | None = None
) -> int:
    """Run the tour, writing files under ``out``; returns 0 when every check passed, else 1.

    Example:
        >>> import io, tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     code = run(d, stream=io.StringIO())
        >>> code
        0
    """
    start = time.perf_counter()
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    tour = Tour(out, stream if stream is not None else sys.stdout, seed)
    _progress_stream[0] = progress
    tour.say(f"chainrule demo: the tutorials' story, every number checked; files go to {out}")
    for section in SECTIONS:
        try:
            section(tour)
        except Exception as e:  # report and go on: one broken section must not hide the others
            tour.fail(f"section {section.__name__}", e)
    failed = [r for r in tour.results if not r.passed]
    tour.say()
    tour.say(f"{len(tour.results)} checks: {len(tour.results) - len(failed)} passed, {len(failed)} failed")
    for r in failed:
        tour.say(
            f"  FAILED: {r.name}" + (f" ({r.error})" if r.error else f" expected {_num(r.expected)}, got {_num(r.got)}")
        )
    tour.say(
        f"{len(tour.files)} files written to {out}" + (f"; skipped: {', '.join(tour.skipped)}" if tour.skipped else "")
    )
    tour.say(f"done in {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0
