"""The gradient field of f(a, b) = b(a + b)(a - b) on a 400 x 400 grid: one vectorised call
versus the tutorial's loop over grid points with a new Scalar graph each.

    python bench/bench_vector_field.py [--tiny] [--repeats N] [--loop-points N]

The vectorised call is ``chainrule.plot.gradient_grid`` (values and gradients of the whole grid,
f evaluated once, differentiated once). The loop builds a fresh graph per point and calls
``backward()``, as the tutorial does; it is timed on the first ``--loop-points`` points only and
extrapolated per point to the full grid (the output says so). The loop runs with the tutorial's
design of Scalar (micrograd's ``Value``: a set of children, closures, a recursive topological
sort) and with ``chainrule.Scalar``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import available, median_time, minor_faults, parser  # noqa: E402


def seed_L(x):
    return x[1] * (x[0] + x[1]) * (x[0] - x[1])


def loop(value_cls, A, B, n_points):
    """The tutorial's loop over the first n_points grid points; returns (dA, dB) for them."""
    nx = A.shape[1]
    dA, dB = np.zeros(n_points), np.zeros(n_points)
    for k in range(n_points):
        i, j = divmod(k, nx)
        a = value_cls(A[i, j])  # NumPy scalars, as the tutorial passes them
        b = value_cls(B[i, j])
        c = -b
        d = a + b
        e = a + c
        f = d * e
        L = f * b
        L.backward()
        dA[k], dB[k] = a.grad, b.grad
    return dA, dB


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=400, help="grid points per side (default 400)")
    p.add_argument("--loop-points", type=int, default=8000, help="grid points the loop is timed on")
    args = p.parse_args()
    n = 40 if args.tiny else args.n
    repeats = 1 if args.tiny else args.repeats
    loop_points = min(400 if args.tiny else args.loop_points, n * n)

    import chainrule as cr
    from chainrule import Scalar
    from chainrule.optimize._batch import rows_value_and_grad
    from chainrule.plot import gradient_grid

    total = n * n
    A, B = np.meshgrid(np.linspace(-10, 10, n), np.linspace(-10, 10, n))
    X, Y, Z, dX, dY = gradient_grid(seed_L, (-10, 10), (-10, 10), n)
    assert np.allclose(dX, 2 * A * B) and np.allclose(dY, A**2 - 3 * B**2), "vectorised gradient is wrong"

    rows: list[tuple[str, float, bool]] = []  # (what, seconds for the whole grid, extrapolated)
    call = lambda: rows_value_and_grad(seed_L, (A, B), (n, n), "bench")  # noqa: E731
    rows.append(("one vectorised call: f(x) reading x[0], x[1]", median_time(call, repeats), False))
    grid = lambda: gradient_grid(seed_L, (-10, 10), (-10, 10), n)  # noqa: E731
    rows.append(("gradient_grid: meshgrid + that call", median_time(grid, repeats), False))
    two = cr.value_and_grad(lambda a, b: (b * (a + b) * (a - b)).sum(), argnums=(0, 1))
    rows.append(("chainrule.value_and_grad(a, b)", median_time(lambda: two(A, B), repeats), False))

    torch = available("torch")
    if torch is not None:
        torch.set_num_threads(1)

        def torch_eager():
            a, b = torch.from_numpy(A).requires_grad_(), torch.from_numpy(B).requires_grad_()
            (b * (a + b) * (a - b)).sum().backward()
            return a.grad, b.grad

        rows.append(("PyTorch eager (Tensor + backward)", median_time(torch_eager, repeats), False))
    else:
        rows.append(("PyTorch eager (not installed)", float("nan"), False))
    try:
        jitted = cr.jit(lambda a, b: (b * (a + b) * (a - b)).sum())
    except (ImportError, AttributeError):  # a chainrule without jit
        jitted = None
    if jitted is not None:
        def replayed():
            a, b = cr.Tensor._wrap(A), cr.Tensor._wrap(B)
            a.requires_grad = b.requires_grad = True
            jitted(a, b).backward()
            return a.grad, b.grad

        replayed()
        rows.append(("chainrule.jit: traced once, replayed", median_time(replayed, repeats), False))
    calls = {what: fn for what, fn in [("one vectorised call: f(x) reading x[0], x[1]", call),
                                       ("chainrule.value_and_grad(a, b)", lambda: two(A, B))]}

    def by_hand():
        s, d = A + B, A - B
        e = s * d
        return B * e, B * d + B * s, e + B * d - B * s

    rows.append(("NumPy by hand (the floor)", median_time(by_hand, repeats), False))

    loops = [("tutorial's loop, micrograd Value", available("micrograd.engine")), ("loop, chainrule.Scalar", Scalar)]
    for name, mod in loops:
        if mod is None:
            rows.append((name + " (not installed)", float("nan"), True))
            continue
        cls = mod.Value if hasattr(mod, "Value") else mod
        ga, gb = loop(cls, A, B, loop_points)
        assert np.allclose(ga, dX.ravel()[:loop_points]) and np.allclose(gb, dY.ravel()[:loop_points])
        t = median_time(lambda cls=cls: loop(cls, A, B, loop_points), max(1, min(repeats, 3)))
        rows.append((name, t / loop_points * total, True))

    faults = {}
    for what, fn in calls.items():
        before = minor_faults()
        for _ in range(5):
            fn()
        faults[what] = (minor_faults() - before) / 5

    reference = next((t for what, t, ext in rows if ext and np.isfinite(t)), None)
    floor = next(t for what, t, ext in rows if what.startswith("NumPy by hand"))
    print(f"\nGradient field of b(a+b)(a-b) on a {n} x {n} grid ({total:,} points), median of {repeats} run(s)")
    print(f"  {'method':<44}{'whole grid':>14}{'per point':>14}{'speed-up vs tutorial loop':>28}")
    for what, t, ext in rows:
        if not np.isfinite(t):
            print(f"  {what:<44}{'-':>14}")
            continue
        star = " *" if ext else ""
        ratio = f"{reference / t:,.0f}x" if reference else ""
        fault = f"  ({faults[what]:.0f} page faults per call)" if what in faults else ""
        print(f"  {what + star:<44}{t * 1e3:>11.1f} ms{t / total * 1e6:>11.3f} us{ratio:>28}{fault}")
    print(f"  * timed on the first {loop_points:,} grid points and extrapolated per point to all {total:,}")
    peer = next((t for what, t, ext in rows if what.startswith("PyTorch eager (Tensor") and np.isfinite(t)), None)
    if peer:
        print(f"  the vectorised call takes {rows[0][1] / peer:.2f}x PyTorch eager's time (target: at most 1.0x)")
    if reference:
        print(
            f"\nthe vectorised call is {reference / rows[0][1]:,.0f}x faster than the tutorial's loop "
            f"(target: at least 1,000x); NumPy written by hand (no autodiff, the floor of any NumPy engine) "
            f"is {reference / floor:,.0f}x faster; the call costs {rows[0][1] / floor:.1f}x the hand-written NumPy"
        )


if __name__ == "__main__":
    main()
