"""chainrule.plot: each picture returns its figure, saves a valid PNG and labels what it shows."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")

from chainrule.optimize import minimize  # noqa: E402
from chainrule.plot import gradient_grid, loss_curve, slopes, tangent, trajectories, vector_field  # noqa: E402

cubic = lambda x: x**3 - 10 * x**2 + 5 * x - 2
dcubic = lambda x: 3 * x**2 - 20 * x + 5
seed_L = lambda x: x[1] * (x[0] + x[1]) * (x[0] - x[1])


def png_size(path):
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        return im.format, im.size


def legend_texts(fig):
    texts = []
    for holder in [*fig.axes, fig]:
        for leg in getattr(holder, "legends", []) + ([holder.get_legend()] if hasattr(holder, "get_legend") else []):
            if leg is not None:
                texts += [t.get_text() for t in leg.get_texts()]
    return texts


def test_slopes_three_ways():
    s = slopes(cubic, 6.0, h=1e-5, analytic=dcubic)
    assert s["autodiff"] == -7.0 and s["analytic"] == -7.0
    assert s["finite difference"] == pytest.approx(-7.0, abs=1e-3)
    assert s["finite difference"] != -7.0


def test_tangent_png(tmp_path):
    path = tmp_path / "sub" / "tangent.png"
    fig = tangent(cubic, 6, analytic=dcubic, xrange=(0, 10), path=path)
    assert png_size(path) == ("PNG", (640, 500))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "$x$" and ax.get_ylabel() == "$f(x)$"
    assert "6" in ax.get_title()
    texts = legend_texts(fig)
    assert any(t.startswith("finite difference (h=1e-05): slope -6.9999") for t in texts), texts
    assert "autodiff (chainrule.grad): slope -7.000000" in texts
    assert "analytic: slope -7.000000" in texts


def test_tangent_without_analytic_and_errors():
    fig = tangent(np.sin, 0.5)
    assert not any(t.startswith("analytic") for t in legend_texts(fig))
    with pytest.raises(ValueError, match=r"tangent: x0 = 12 must lie inside xrange \(0, 10\)"):
        tangent(cubic, 12.0, xrange=(0, 10))
    with pytest.raises(ValueError, match="finite-difference step h must be positive"):
        tangent(cubic, 6.0, h=0.0)


def test_tangent_of_a_function_written_with_scalar_methods():
    # micrograd style: x.tanh() runs on a Scalar (and on the Tensor chainrule.grad passes), not on a float
    def f(x):
        return x.tanh() * x

    s = slopes(f, 0.5, h=1e-7)
    exact = np.tanh(0.5) + 0.5 * (1 - np.tanh(0.5) ** 2)
    assert s["autodiff"] == pytest.approx(exact, abs=1e-15) and s["finite difference"] == pytest.approx(exact, abs=1e-6)
    fig = tangent(f, 0.5, xrange=(-1.0, 1.0))
    curve = fig.axes[0].lines[0].get_ydata()
    assert curve[0] == pytest.approx(np.tanh(-1.0) * -1.0) and curve[-1] == pytest.approx(np.tanh(1.0))


def test_gradient_grid_is_one_vectorised_call():
    calls = []

    def f(x):
        calls.append((np.shape(x[0].data), np.shape(x[1].data)))
        return seed_L(x)

    X, Y, Z, dX, dY = gradient_grid(f, (-10, 10), (-5, 5), (40, 30))
    assert calls == [((30, 40), (30, 40))]
    assert X.shape == Y.shape == Z.shape == dX.shape == dY.shape == (30, 40)
    np.testing.assert_allclose(Z, Y * (X**2 - Y**2))
    np.testing.assert_allclose(dX, 2 * X * Y)
    np.testing.assert_allclose(dY, X**2 - 3 * Y**2)


def test_vector_field_png(tmp_path):
    calls = []

    def f(x):
        calls.append(1)
        return seed_L(x)

    path = tmp_path / "field.png"
    fig = vector_field(f, (-10, 10), (-10, 10), labels=("$a$", "$b$"), label="$f(a, b)$", title="field", path=path)
    assert len(calls) == 1, "values and gradients for the whole grid come from one call"
    assert png_size(path) == ("PNG", (640, 520))
    ax, cbar_ax = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("$a$", "$b$", "field")
    assert cbar_ax.get_ylabel() == "$f(a, b)$"
    assert len(ax.collections) >= 3  # mesh, contour lines, arrows
    assert r"$\nabla f$ direction (uphill)" in legend_texts(fig)


def test_trajectories_png(tmp_path):
    starts = np.random.default_rng(0).uniform(-10, 10, size=(50, 2))
    r = minimize(seed_L, starts, lr=1e-3, steps=25, tol=None)
    path = tmp_path / "traj.png"
    fig = trajectories(r, seed_L, labels=("$a$", "$b$"), label="$f(a, b)$", path=path)
    assert png_size(path) == ("PNG", (720, 600))
    ax = fig.axes[0]
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "$f(a, b)$"
    texts = legend_texts(fig)
    assert {"start", "end", "50 paths (gd, 25 steps)"} <= set(texts), texts
    # the view covers every path
    lo, hi = ax.get_xlim()
    assert lo <= r.trajectory.positions[..., 0].min() and hi >= r.trajectory.positions[..., 0].max()


def test_trajectories_of_one_start_and_of_arrays():
    r = minimize(seed_L, np.array([1.0, 2.0]), lr=1e-2, steps=5, tol=None)
    fig = trajectories(r, seed_L, xrange=(-3, 3), yrange=(-3, 3))
    assert fig.axes[0].get_xlim() == (-3, 3)
    fig = trajectories(r.trajectory.positions)  # no function: paths only
    assert len(fig.axes) == 1
    with pytest.raises(ValueError, match=r"positions of 2-D points, .* got shape \(4, 3\)"):
        trajectories(np.zeros((4, 3)))


def test_loss_curve_forms(tmp_path):
    rosen = lambda x: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    runs = {m: minimize(rosen, np.array([-1.2, 1.0]), method=m, lr=1e-3, steps=300) for m in ("gd", "momentum")}
    path = tmp_path / "loss.png"
    fig = loss_curve(runs, path=path)
    assert png_size(path) == ("PNG", (640, 440))
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "step" and ax.get_ylabel() == "loss"
    assert legend_texts(fig) == ["gd", "momentum"]
    many = minimize(seed_L, np.random.default_rng(0).uniform(-1, 1, (10, 2)), lr=1e-3, steps=20, tol=None)
    fig = loss_curve(many, ylabel="f")
    assert fig.axes[0].get_yscale() == "linear"  # values change sign
    assert legend_texts(fig) == ["median of 10 starts"]
    assert len(loss_curve([3.0, 2.0, 1.0]).axes[0].get_lines()) == 1
    with pytest.raises(TypeError, match="loss_curve: history must be a minimize result"):
        loss_curve(object())
    with pytest.raises(ValueError, match=r"values must have shape \(steps,\) or \(steps, n_starts\)"):
        loss_curve(np.zeros((2, 2, 2)))


def test_given_axes_are_drawn_on():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert tangent(cubic, 6.0, ax=ax) is fig


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"chainrule.plot.tangent needs matplotlib: pip install chainrule\[plot\]"):
        tangent(cubic, 6.0)


def test_import_is_light():
    code = "import sys, chainrule.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-Werror", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
