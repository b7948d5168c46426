"""``affine_grid`` and ``grid_sample`` against PyTorch 2.13 as the oracle: values, gradients with respect to the
input and the grid (and theta), and second order, for every mode (bilinear, nearest, bicubic), padding mode and
``align_corners``, on 4-D and 5-D inputs, at random points and at the kinks (pixel centres, edges, far outside);
finite differences; the strict device double; the errors and the default's warning."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.core.errors import ChainruleWarning
from test_nn_3d import compare_orders, on_the_device_double


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests (pip install torch)")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _grid(*shape, seed=1, reach=1.3):
    return np.random.default_rng(seed).uniform(-reach, reach, shape)


SETTINGS = list(itertools.product(["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"],
                                  [True, False]))


@pytest.mark.oracle
@pytest.mark.parametrize("d, mode, padding, corners",  # (bicubic takes 4-D inputs only, as PyTorch: refused below)
                         [(d, *s) for d in (2, 3) for s in SETTINGS if d == 2 or s[0] != "bicubic"])
def test_grid_sample_values_gradients_and_second_order_equal_torch(torch, d, mode, padding, corners):
    x = _x(2, 2, 4, 5) if d == 2 else _x(2, 2, 3, 4, 3)
    g = _grid(2, 3, 4, 2) if d == 2 else _grid(2, 2, 3, 2, 3)
    compare_orders(torch, lambda x, g: F.grid_sample(x, g, mode, padding, corners),
                   lambda x, g: torch.nn.functional.grid_sample(x, g, mode, padding, corners), [x, g])


@pytest.mark.oracle
@pytest.mark.parametrize("mode, padding, corners", SETTINGS)
def test_grid_sample_at_the_kinks_follows_torchs_conventions(torch, mode, padding, corners):
    """Points on pixel centres, on the edges (-1, 1), and far outside: where the map is not differentiable
    PyTorch's one-sided choices (the floor's right side; a clamp's edge gives 0) hold here too."""
    x = _x(1, 2, 3, 4)
    h, w = 3, 4
    centres_x = (np.arange(w) * 2 / (w - 1) - 1) if corners else ((np.arange(w) * 2 + 1) / w - 1)
    centres_y = (np.arange(h) * 2 / (h - 1) - 1) if corners else ((np.arange(h) * 2 + 1) / h - 1)
    xs = np.concatenate([centres_x, [-1.0, 1.0, 0.0, -3.7, 2.9, 1.0 + 2 / w]])
    ys = np.concatenate([centres_y, [-1.0, 1.0, 0.0, 2.9, -3.7, -1.0 - 2 / h, 1.0]])
    g = np.stack(np.meshgrid(xs, ys), axis=-1)[None]  # (1, 10, 10, 2)
    compare_orders(torch, lambda x, g: F.grid_sample(x, g, mode, padding, corners),
                   lambda x, g: torch.nn.functional.grid_sample(x, g, mode, padding, corners), [x, g])


@pytest.mark.oracle
@pytest.mark.parametrize("corners", [True, False])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 1), (2, 2, 2, 3, 4)])
def test_affine_grid_values_and_gradients_equal_torch(torch, size, corners):
    d = len(size) - 2
    theta = _x(2, d, d + 1)
    if corners and min(size[2:]) == 1:
        with pytest.warns(ChainruleWarning, match="unit-size grid"):
            F.affine_grid(theta, size, corners)
        return
    compare_orders(torch, lambda t: F.affine_grid(t, size, corners),  # (linear: no second order)
                   lambda t: torch.nn.functional.affine_grid(t, size, corners), [theta], second=False)


@pytest.mark.oracle
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("d", [2, 3])
def test_a_spatial_transformer_differentiates_through_theta_like_torch(torch, d, padding):
    """grid_sample(x, affine_grid(theta)): the gradients of x and theta, and second order."""
    x = _x(2, 2, 4, 5) if d == 2 else _x(2, 1, 3, 4, 3)
    theta = np.tile(np.eye(d, d + 1), (2, 1, 1)) * 0.9 + 0.2 * _x(2, d, d + 1, seed=3)
    size = (2, x.shape[1], *((3, 4) if d == 2 else (2, 3, 2)))
    compare_orders(torch, lambda x, t: F.grid_sample(x, F.affine_grid(t, size, False), "bilinear", padding, False),
                   lambda x, t: torch.nn.functional.grid_sample(
                       x, torch.nn.functional.affine_grid(t, size, False), "bilinear", padding, False), [x, theta])


def test_grid_sample_passes_finite_differences_to_second_order():
    x, g = _x(1, 2, 3, 4), _grid(1, 2, 3, 2, reach=0.9)
    for padding in ("zeros", "border", "reflection"):
        assert cr.gradcheck(lambda x, g: F.grid_sample(x, g, "bilinear", padding, False), x, g,
                           modes=("rev", "fwd"), order=2)
    x3, g3 = _x(1, 1, 2, 3, 2), _grid(1, 2, 1, 2, 3, reach=0.9)
    assert cr.gradcheck(lambda x, g: F.grid_sample(x, g, "bilinear", "reflection", True), x3, g3,
                        modes=("rev", "fwd"), order=2)
    assert cr.gradcheck(lambda x, g: F.grid_sample(x, g, "bicubic", "reflection", False), x, g,
                        modes=("rev", "fwd"), order=2)
    assert cr.gradcheck(lambda t: F.affine_grid(t, (1, 1, 2, 3), True), _x(1, 2, 3), modes=("rev", "fwd"), order=2)


def test_grid_sample_written_out_for_one_point():
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    # x = 0 is column 1.5 with align_corners=False (((x + 1) * 4 - 1) / 2); y = 1 / 3 is row 1.5
    got = F.grid_sample(x, np.array([[[[0.0, 1 / 3]]]]), align_corners=False)
    np.testing.assert_allclose(got, [[[[(x[0, 0, 1, 1] + x[0, 0, 1, 2] + x[0, 0, 2, 1] + x[0, 0, 2, 2]) / 4]]]])
    # nearest: 1.5 rounds to 2 (halves to even), row 0.5 to 0
    got = F.grid_sample(x, np.array([[[[0.0, -1 / 3]]]]), mode="nearest", align_corners=False)
    np.testing.assert_allclose(got, [[[[x[0, 0, 0, 2]]]]])
    # zeros padding: half a pixel outside reads half of the edge pixel
    got = F.grid_sample(x, np.array([[[[-1.0, -1.0]]]]), align_corners=False)
    np.testing.assert_allclose(got, [[[[x[0, 0, 0, 0] / 4]]]])


def test_grid_sample_and_affine_grid_run_on_the_device_double_with_the_cpus_values():
    x, g = _x(2, 2, 3, 4), _grid(2, 3, 2, 2)
    x3 = _x(1, 2, 2, 3, 2)
    cases = [lambda a, m, p=p, mode=mode: F.grid_sample(m(x), a, mode, p, False)
             for p in ("zeros", "border", "reflection") for mode in ("bilinear", "nearest", "bicubic")]
    on_the_device_double(cases, g)
    on_the_device_double([lambda a, m: F.grid_sample(a, m(g), "bilinear", "reflection", True),
                          lambda a, m: F.grid_sample(a, m(g), "nearest", "zeros", True)], x)
    on_the_device_double([lambda a, m: F.grid_sample(m(x3), a, "bilinear", "border", True)], _grid(1, 2, 2, 1, 3))
    on_the_device_double([lambda a, m: F.affine_grid(a, (2, 1, 2, 3), False)], _x(2, 2, 3))


def test_grid_sample_under_vmap_batches_the_input_and_refuses_a_batched_grid_clearly():
    from chainrule.batching.value import ConcreteValueError

    xs, g = _x(3, 1, 2, 3, 4), _grid(1, 2, 2, 2)
    got = cr.vmap(lambda x: F.grid_sample(x, g, "bilinear", "reflection", False))(xs)
    np.testing.assert_allclose(got, np.stack([F.grid_sample(x, g, "bilinear", "reflection", False) for x in xs]))
    with pytest.raises(ConcreteValueError, match="vmap: a batched value was converted to a NumPy array"):
        cr.vmap(lambda g: F.grid_sample(xs[0], g, "bilinear", "zeros", False))(np.stack([g] * 3))


def test_the_default_align_corners_warns_as_torch_and_is_false():
    x, g = _x(1, 1, 3, 4), _grid(1, 2, 2, 2)
    with pytest.warns(ChainruleWarning, match="align_corners=False"):
        got = F.grid_sample(x, g)
    np.testing.assert_array_equal(got, F.grid_sample(x, g, align_corners=False))
    with pytest.warns(ChainruleWarning, match="align_corners=False"):
        got = F.affine_grid(_x(1, 2, 3), (1, 1, 2, 2))
    np.testing.assert_array_equal(got, F.affine_grid(_x(1, 2, 3), (1, 1, 2, 2), align_corners=False))


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.grid_sample(np.ones((1, 1, 3, 3, 3)), np.zeros((1, 2, 2, 2, 3)), "bicubic", align_corners=False),
     ValueError, r"mode='bicubic' takes a 4-D input \(N, C, H, W\) only .* use mode='bilinear'"),
    (lambda: F.grid_sample(np.ones((1, 1, 3, 3)), np.zeros((1, 2, 2, 2)), "linear", align_corners=False),
     ValueError, "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
    (lambda: F.grid_sample(np.ones((1, 1, 3, 3)), np.zeros((1, 2, 2, 2)), padding_mode="reflect",
                           align_corners=False), ValueError, "expected padding_mode to be 'zeros', 'border'"),
    (lambda: F.grid_sample(np.ones((1, 3, 3)), np.zeros((1, 2, 2)), align_corners=False), ValueError,
     r"expected a 4-D \(N, C, H, W\) or 5-D"),
    (lambda: F.grid_sample(np.ones((1, 1, 3, 3)), np.zeros((1, 2, 2, 3)), align_corners=False), ValueError,
     r"a 4-D input needs a grid of shape \(N, \*out, 2\)"),
    (lambda: F.grid_sample(np.ones((1, 1, 3, 3, 3)), np.zeros((1, 2, 2, 2)), align_corners=False), ValueError,
     r"a 5-D input needs a grid of shape \(N, \*out, 3\)"),
    (lambda: F.grid_sample(np.ones((2, 1, 3, 3)), np.zeros((1, 2, 2, 2)), align_corners=False), ValueError,
     "must have the same batch size"),
    (lambda: F.grid_sample(np.ones((1, 1, 3, 3)), np.array([[[[np.nan, 0.0]]]]), align_corners=False), ValueError,
     "the grid holds NaN or infinite coordinates"),
    (lambda: F.grid_sample(np.ones((1, 1, 3, 3)), np.array([[[[np.inf, 0.0]]]]), align_corners=False), ValueError,
     "the grid holds NaN or infinite coordinates"),
    (lambda: F.affine_grid(np.ones((1, 3, 3)), (1, 1, 2, 2), False), ValueError,
     r"expected a batch of 2-D affine matrices of shape N x 2 x 3"),
    (lambda: F.affine_grid(np.ones((1, 2, 3)), (1, 1, 2, 2, 2), False), ValueError,
     r"expected a batch of 3-D affine matrices of shape N x 3 x 4"),
    (lambda: F.affine_grid(np.ones((1, 2, 3)), (1, 1, 2), False), NotImplementedError, "only 4-D and 5-D sizes"),
    (lambda: F.affine_grid(np.ones((2, 2, 3)), (1, 1, 2, 2), False), ValueError, "theta holds 2 matrices"),
    (lambda: F.affine_grid(np.ones((1, 2, 3)), (1, 1, 0, 2), False), ValueError, "expected a positive output size"),
])
def test_bad_arguments_are_refused_naming_the_function_and_the_fix(call, error, message):
    with pytest.raises(error, match=message):
        call()
