"""chainrule.optimize.minimize: four methods, many starts at once, early stopping, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule.optimize import DivergenceError, OptimizeResult, minimize


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def bowl(x):
    # an elongated quadratic bowl with its minimum at (1, -2, 0.5)
    return 0.5 * (x[0] - 1) ** 2 + 2.0 * (x[1] + 2) ** 2 + 4.0 * (x[2] - 0.5) ** 2


def himmelblau(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def seed_L(x):  # f(a, b) = b (a + b)(a - b)
    return x[1] * (x[0] + x[1]) * (x[0] - x[1])


HIMMELBLAU_MINIMA = np.array(
    [
        [3.0, 2.0],
        [-2.805118086952745, 3.131312518250573],
        [-3.779310253377747, -3.283185991286170],
        [3.584428340330492, -1.848126526964404],
    ]
)

# per method: settings that reach the minima to 1e-6 quickly (Adam with a decaying rate)
ROSENBROCK = {
    "gd": dict(lr=1.9e-3, steps=40000),
    "momentum": dict(lr=1e-3, steps=10000),
    "nesterov": dict(lr=1e-3, steps=10000),
    "adam": dict(lr=lambda t: 0.1 / (1 + t / 1000), steps=10000),
}
BOWL = {
    "gd": dict(lr=0.1, steps=2000),
    "momentum": dict(lr=0.05, steps=2000),
    "nesterov": dict(lr=0.05, steps=2000),
    "adam": dict(lr=lambda t: 0.1 / (1 + t / 500), steps=5000),
}
HIMMELBLAU = {
    "gd": dict(lr=0.01, steps=5000),
    "momentum": dict(lr=2e-3, steps=5000),
    "nesterov": dict(lr=2e-3, steps=5000),
    "adam": dict(lr=0.1, steps=5000),
}
METHODS = ["gd", "momentum", "nesterov", "adam"]


@pytest.mark.parametrize("method", METHODS)
def test_rosenbrock_minimum(method):
    starts = np.array([[-1.2, 1.0], [1.5, 2.0]])
    r = minimize(rosenbrock, starts, method=method, tol=1e-7, **ROSENBROCK[method])
    assert r.success, r.message
    np.testing.assert_allclose(r.x, np.ones((2, 2)), atol=1e-6)
    assert np.all(r.fun < 1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_quadratic_bowl_minimum(method):
    starts = np.random.default_rng(0).uniform(-5, 5, size=(8, 3))
    r = minimize(bowl, starts, method=method, tol=1e-8, **BOWL[method])
    assert r.success, r.message
    np.testing.assert_allclose(r.x, np.tile([1.0, -2.0, 0.5], (8, 1)), atol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_himmelblau_four_minima_from_a_grid(method):
    g = np.linspace(-4.5, 4.5, 7)  # 49 starts, none on a saddle's stable line
    starts = np.array([(a, b) for a in g for b in g])
    r = minimize(himmelblau, starts, method=method, tol=1e-8, **HIMMELBLAU[method])
    assert r.success, r.message
    dist = np.linalg.norm(r.x[:, None, :] - HIMMELBLAU_MINIMA[None], axis=2)  # (49, 4)
    nearest = dist.argmin(axis=1)
    assert np.all(np.abs(r.x - HIMMELBLAU_MINIMA[nearest]) <= 1e-6)
    assert set(nearest.tolist()) == {0, 1, 2, 3}, "every one of the four minima is found from some start"


@pytest.mark.parametrize("method", METHODS)
def test_vectorised_starts_match_one_start_at_a_time(method):
    starts = np.array([[-3.0, 3.0], [0.5, -4.0], [4.0, 4.0], [-1.0, -1.0], [3.1, 1.9]])
    kw = dict(method=method, tol=1e-4, **HIMMELBLAU[method])
    kw["steps"] = 300
    together = minimize(himmelblau, starts, **kw)
    assert together.n_steps.min() < together.n_steps.max(), "starts stop at different steps (early stopping)"
    for i, s in enumerate(starts):
        alone = minimize(himmelblau, s, **kw)
        path = together.path(i)
        np.testing.assert_array_equal(path.positions, alone.trajectory.positions)
        np.testing.assert_array_equal(path.values, alone.trajectory.values)
        np.testing.assert_array_equal(path.grads, alone.trajectory.grads)
        assert alone.n_steps == together.n_steps[i]
        assert alone.converged == together.converged[i]


def test_one_call_per_step_for_all_starts():
    calls = []

    def f(x):
        calls.append(np.shape(x))
        return seed_L(x)

    starts = np.random.default_rng(1).uniform(-10, 10, size=(50, 2))
    r = minimize(f, starts, lr=1e-3, steps=25, tol=None)
    assert len(calls) == 26  # the start, then one (vectorised) evaluation per step for all 50 starts
    assert calls[0] == (2,), "f sees one point"
    assert r.trajectory.positions.shape == (26, 50, 2)
    assert r.trajectory.values.shape == (26, 50)
    assert r.trajectory.grads.shape == (26, 50, 2)


def test_f_using_x_as_a_whole_array_matches_f_by_coordinates():
    t = np.array([1.0, -2.0])

    def whole(x):  # arithmetic on x itself, a vector constant, a reduction over the coordinates
        return np.sum((x - t) ** 2)

    def by_rows(x):
        return (x[0] - 1.0) ** 2 + (x[1] + 2.0) ** 2

    starts = np.random.default_rng(2).uniform(-3, 3, size=(7, 2))
    a = minimize(whole, starts, lr=0.1, steps=20, tol=None)
    b = minimize(by_rows, starts, lr=0.1, steps=20, tol=None)
    np.testing.assert_allclose(a.trajectory.positions, b.trajectory.positions, rtol=1e-14)
    np.testing.assert_allclose(a.trajectory.grads, b.trajectory.grads, rtol=1e-14)


def test_trajectory_records_positions_values_and_gradients():
    # one step from the seed's point (a, b) = (1, 2) with lr 0.01
    r = minimize(seed_L, np.array([1.0, 2.0]), lr=0.01, steps=1, tol=None)
    tr = r.trajectory
    np.testing.assert_allclose(tr.positions, [[1.0, 2.0], [0.96, 2.11]])
    np.testing.assert_allclose(tr.grads[0], [4.0, -11.0])
    assert tr.values[0] == -6.0
    assert tr.values[1] == pytest.approx(2.11 * (0.96**2 - 2.11**2))
    np.testing.assert_allclose(r.x, [0.96, 2.11])
    assert r.n_steps == 1 and r.converged is False
    assert isinstance(r, OptimizeResult)


def test_gradient_steps_by_hand_for_each_method():
    f = lambda x: 0.5 * x[0] ** 2  # gradient = x
    x0, lr = np.array([1.0]), 0.1
    # gd: 1 -> 0.9 -> 0.81
    np.testing.assert_allclose(
        minimize(f, x0, "gd", lr=lr, steps=2, tol=None).trajectory.positions[:, 0], [1.0, 0.9, 0.81]
    )
    # momentum 0.9: v1 = 1 -> x1 = 0.9; v2 = 0.9 + 0.9 = 1.8 -> x2 = 0.72
    np.testing.assert_allclose(
        minimize(f, x0, "momentum", lr=lr, steps=2, tol=None).trajectory.positions[:, 0], [1.0, 0.9, 0.72]
    )
    # nesterov: v1 = 1, x1 = 1 - 0.1 (1 + 0.9) = 0.81; v2 = 0.9 + 0.81 = 1.71, x2 = 0.81 - 0.1 (0.81 + 1.539)
    np.testing.assert_allclose(
        minimize(f, x0, "nesterov", lr=lr, steps=2, tol=None).trajectory.positions[:, 0],
        [1.0, 0.81, 0.81 - 0.1 * (0.81 + 0.9 * 1.71)],
    )
    # adam: the first step is lr * sign(g)
    np.testing.assert_allclose(
        minimize(f, x0, "adam", lr=lr, steps=1, tol=None).trajectory.positions[:, 0], [1.0, 0.9], rtol=1e-7
    )


def test_maximize_climbs_and_reports_f():
    f = lambda x: -((x[0] - 2.0) ** 2) - (x[1] + 1.0) ** 2 + 3.0
    r = minimize(f, np.array([0.0, 0.0]), lr=0.1, steps=500, tol=1e-10, maximize=True)
    np.testing.assert_allclose(r.x, [2.0, -1.0], atol=1e-9)
    assert r.fun == pytest.approx(3.0)
    assert r.maximize and r.converged
    assert np.all(np.diff(r.trajectory.values) >= 0), "values go up"


def test_function_of_one_number():
    f = lambda x: x**3 - 10 * x**2 + 5 * x - 2  # local minimum at (20 + sqrt(340)) / 6
    r = minimize(f, 6.0, lr=0.01, steps=2000, tol=1e-10)
    assert isinstance(r.x, float)
    assert r.x == pytest.approx((20 + np.sqrt(340)) / 6, abs=1e-9)
    assert r.trajectory.positions.shape == (r.n_steps + 1,)


def test_early_stop_on_tol_and_per_start_freeze():
    f = lambda x: x[0] ** 2
    starts = np.array([[1e-9], [1.0]])  # the first start is converged from the outset
    r = minimize(f, starts, lr=0.25, steps=100, tol=1e-6)
    assert r.n_steps.tolist()[0] == 0
    assert 0 < r.n_steps[1] < 100
    assert r.success
    assert len(r.trajectory) == r.n_steps.max() + 1, "the run stops once every start converged"
    np.testing.assert_array_equal(r.trajectory.positions[:, 0, 0], 1e-9), "a converged start stays put"


def test_nan_stops_with_a_message_naming_step_and_start():
    f = lambda x: x[0] ** 4  # gd with a large rate blows up
    starts = np.array([[0.1], [0.2], [30.0]])
    with pytest.raises(DivergenceError, match=r"start 2 diverged at step \d+ \(method 'gd', lr=0\.1\)") as info:
        minimize(f, starts, lr=0.1, steps=100)
    err = info.value
    assert isinstance(err, FloatingPointError)
    assert err.start == 2 and err.step >= 1
    assert len(err.result.trajectory) == err.step + 1


def test_nan_stop_mode_goes_on_with_the_others():
    f = lambda x: x[0] ** 4
    r = minimize(f, np.array([[0.1], [30.0]]), lr=0.1, steps=50, tol=None, on_nonfinite="stop")
    assert r.diverged.tolist() == [False, True]
    assert r.n_steps[0] == 50
    assert "1 diverged" in r.message


def test_nan_at_the_start():
    with pytest.raises(DivergenceError, match="start 1 diverged at step 0"):
        minimize(lambda x: np.log(x[0]), np.array([[1.0], [-1.0]]), steps=3)


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        (dict(method="newton"), ValueError, "unknown method 'newton'; choose one of 'gd', 'momentum'"),
        (dict(method="gd", momentum=0.9), TypeError, "method 'gd' takes no option 'momentum'"),
        (dict(method="adam", betas=(0.9, 1.5)), ValueError, "adam betas must lie in"),
        (dict(method="nesterov", momentum=1.0), ValueError, "nesterov momentum must lie in"),
        (dict(lr=-1.0), ValueError, "lr must be a positive number"),
        (dict(steps=-2), ValueError, "steps must be a non-negative integer"),
        (dict(tol=-1.0), ValueError, "tol must be a non-negative number"),
        (dict(on_nonfinite="ignore"), ValueError, "on_nonfinite must be 'raise' or 'stop'"),
    ],
)
def test_bad_arguments(kwargs, exc, message):
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")):
        minimize(bowl, np.zeros(3), **kwargs)


def test_bad_x0():
    with pytest.raises(ValueError, match=r"x0 must have shape \(dim,\) for one start or \(n_starts, dim\)"):
        minimize(bowl, np.zeros((2, 2, 3)))
    with pytest.raises(ValueError, match="x0 holds NaN or inf"):
        minimize(bowl, np.array([0.0, np.nan, 1.0]))
    with pytest.raises(TypeError, match="x0 must be a number or an array"):
        minimize(bowl, "start")


def test_function_breaking_the_contract_is_named():
    # f must return one number for one point
    with pytest.raises(ValueError, match=r"f must return one number for one point x of shape \(2,\), got shape \(2,\)"):
        minimize(lambda x: x**2, np.ones((4, 2)))
    with pytest.raises(IndexError, match=r"getitem: index 2 does not fit a tensor of shape \(2,\)"):
        minimize(lambda x: x[2] ** 2, np.ones((3, 2)))
    with pytest.raises(TypeError, match=r"vmap: bool\(\) of a batched value"):  # Python control flow on x
        minimize(lambda x: x[0] ** 2 if x[0] > 0 else -x[0], np.ones((3, 2)))
    # a sum over everything is one point's sum
    r = minimize(lambda x: np.sum(x**2), np.ones((4, 2)), lr=0.25, steps=100)
    np.testing.assert_allclose(r.x, 0.0, atol=1e-8)


def test_result_str_and_path_errors():
    r = minimize(bowl, np.zeros((2, 3)), lr=0.1, steps=3, tol=None)
    assert str(r).startswith("minimize (gd): 0/2 starts converged, 3 steps at most")
    with pytest.raises(IndexError, match="start 5 out of range for 2 starts"):
        r.path(5)
