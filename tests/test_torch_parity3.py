"""PyTorch-spelled programs whose dtypes, values, errors or gradients differed from PyTorch 2.13's (torch is the
oracle): integer and bool dtype corners, registration checks of nn.Module, div's rounding_mode in every spelling,
and what a random-program fuzzer against torch found."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _both(fn, *arrays):
    """``fn(lib, *tensors)`` in torch and in chainrule, on the same arrays."""
    return (fn(torch, *[torch.tensor(a) for a in arrays]), fn(cr, *[cr.tensor(a) for a in arrays]))


def _same(expected, ours):
    assert isinstance(ours, cr.Tensor), type(ours)
    assert str(expected.dtype).removeprefix("torch.") == str(ours.dtype), (expected.dtype, ours.dtype)
    assert tuple(expected.shape) == tuple(ours.shape)
    np.testing.assert_array_equal(expected.numpy(), ours.numpy())


# -- integer and bool dtypes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "bool"])
@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod"])
def test_sums_and_products_of_small_integers_are_int64(dtype, op):
    a = np.array([[1, 2, 3], [0, 1, 1]]).astype(dtype)
    args = (1,) if op.startswith("cum") else ()
    _same(*_both(lambda lib, t: getattr(t, op)(*args), a))
    _same(*_both(lambda lib, t: getattr(lib, op)(t, *args), a))
    if not op.startswith("cum"):
        _same(*_both(lambda lib, t: getattr(t, op)(dim=0), a))


@pytest.mark.parametrize("op", ["__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__"])
@pytest.mark.parametrize("other", ["zero_dim_int64", "python_int", "python_bool"])
def test_bitwise_operators_keep_a_dimensioned_tensors_dtype(op, other):
    a = np.array([1, 6, -3], dtype=np.int32)
    value = {"zero_dim_int64": np.array(5), "python_int": 5, "python_bool": True}[other]

    def program(lib, t):
        o = lib.tensor(value) if isinstance(value, np.ndarray) else value
        return getattr(t, op)(o)

    _same(*_both(program, a))


def test_square_of_bools_is_int64_and_all_any_of_uint8_are_uint8():
    b = np.array([True, False])
    _same(*_both(lambda lib, t: t.square(), b))
    u = np.array([[1, 0, 2], [3, 4, 5]], dtype=np.uint8)
    for fn in (lambda lib, t: t.all(), lambda lib, t: t.any(dim=1), lambda lib, t: lib.all(t),
               lambda lib, t: lib.any(t, dim=0), lambda lib, t: t.all(1, keepdim=True)):
        _same(*_both(fn, u))


def test_all_and_any_give_tensors_as_torch():
    """They gave NumPy values (t.any(dim=0).float() raised AttributeError)."""
    a = np.array([[0.0, 1.0], [2.0, 0.0]])
    _same(*_both(lambda lib, t: t.any(dim=0).float(), a))
    _same(*_both(lambda lib, t: lib.all(t).long(), a))


def test_sign_and_diff_of_bools():
    b = np.array([True, False, False, True])
    _same(*_both(lambda lib, t: t.sign(), b))
    _same(*_both(lambda lib, t: t.diff(), b))
    _same(*_both(lambda lib, t: lib.diff(t, n=2), b))


# -- nn.Module's registration checks -------------------------------------------------------------------------------
def _registration_error(lib, case):
    nn = lib.nn
    m = nn.Module()
    if case == "buffer_over_parameter":
        m.w = nn.Parameter(lib.ones(2))
        m.register_buffer("w", lib.zeros(2))
    elif case == "parameter_over_buffer":
        m.register_buffer("w", lib.zeros(2))
        m.register_parameter("w", nn.Parameter(lib.ones(2)))
    elif case == "buffer_over_attribute":
        m.x = 3
        m.register_buffer("x", lib.zeros(2))
    elif case == "buffer_over_method":
        m.register_buffer("forward", lib.zeros(2))
    elif case == "module_over_parameter":
        m.w = nn.Parameter(lib.ones(2))
        m.add_module("w", nn.Linear(2, 2))
    elif case == "buffer_with_a_dot":
        m.register_buffer("a.b", lib.zeros(2))
    elif case == "parameter_without_a_name":
        m.register_parameter("", nn.Parameter(lib.ones(2)))
    elif case == "tensor_over_parameter":
        m.w = nn.Parameter(lib.ones(2))
        m.w = lib.zeros(2)


@pytest.mark.parametrize("case", ["buffer_over_parameter", "parameter_over_buffer", "buffer_over_attribute",
                                  "buffer_over_method", "module_over_parameter", "buffer_with_a_dot",
                                  "parameter_without_a_name", "tensor_over_parameter"])
def test_module_registration_refuses_what_torch_refuses(case):
    with pytest.raises((KeyError, TypeError)) as expected:
        _registration_error(torch, case)
    with pytest.raises(expected.type):
        _registration_error(cr, case)


def test_module_re_registration_of_the_same_kind_replaces():
    for lib in (torch, cr):
        m = lib.nn.Module()
        m.register_buffer("b", lib.zeros(2))
        m.register_buffer("b", lib.ones(2))
        m.register_parameter("p", lib.nn.Parameter(lib.ones(2)))
        m.register_parameter("p", lib.nn.Parameter(lib.zeros(2)))
        m.b = lib.nn.Parameter(lib.ones(3))  # assignment of a Parameter over a buffer makes it a parameter
        assert sorted(dict(m.named_parameters())) == ["b", "p"] and list(dict(m.named_buffers())) == []


# -- division with rounding ----------------------------------------------------------------------------------------
_NUMERATORS = {"float32": np.array([-7.5, -3, -1, 0, 1, 3, 7.5, 2.5], np.float32),
               "int64": np.array([-7, -3, -1, 0, 1, 3, 7, 5]), "int32": np.array([-7, -3, -1, 0, 1, 3, 7, 5], np.int32)}
_DIVISORS = {"float32": np.array([2, -2, 2, 3, -3, 2, -2, 0.5], np.float32),
             "int64": np.array([2, -2, 2, 3, -3, 2, -2, 3]),
             "int": 2, "negative_int": -3, "float": 2.5, "zero_dim": np.array(-2)}
_ROUNDED = {
    "div": lambda lib, a, b, rm: a.div(b, rounding_mode=rm),
    "lib.div": lambda lib, a, b, rm: lib.div(a, b, rounding_mode=rm),
    "divide": lambda lib, a, b, rm: a.divide(b, rounding_mode=rm),
    "lib.divide": lambda lib, a, b, rm: lib.divide(a, b, rounding_mode=rm),
    "div_": lambda lib, a, b, rm: a.clone().div_(b, rounding_mode=rm),
    "divide_": lambda lib, a, b, rm: a.clone().divide_(b, rounding_mode=rm),
}


@pytest.mark.parametrize("spelling", sorted(_ROUNDED))
@pytest.mark.parametrize("rounding_mode", [None, "trunc", "floor"])
def test_div_rounding_mode_in_every_spelling(spelling, rounding_mode):
    for (xn, x), (yn, y) in itertools.product(_NUMERATORS.items(), _DIVISORS.items()):
        def program(lib, a, x=x, y=y):
            b = lib.tensor(y) if isinstance(y, np.ndarray) else y
            return _ROUNDED[spelling](lib, a, b, rounding_mode)

        try:
            expected = program(torch, torch.tensor(x))
        except RuntimeError:  # torch refuses (an integer tensor takes no float quotient in place)
            with pytest.raises((RuntimeError, TypeError)):
                program(cr, cr.tensor(x))
            continue
        ours = program(cr, cr.tensor(x))
        assert str(expected.dtype).removeprefix("torch.") == str(ours.dtype), (xn, yn)
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-6, err_msg=f"{xn} / {yn}")


def test_div_rounding_mode_in_place_in_the_graph_has_zero_gradient():
    for lib in (torch, cr):
        x = lib.tensor([-7.0, 3.0, 5.0], requires_grad=True)
        h = x * 1
        h.div_(2, rounding_mode="floor")
        (h * x).sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad.tolist()), [-4.0, 1.0, 2.0])


# -- found by fuzzing against torch --------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["sum", "mean", "prod", "logsumexp", "amax", "nansum"])
@pytest.mark.parametrize("dim", [0, -1])
def test_reductions_of_a_zero_dim_tensor_with_a_positional_dim_and_keepdim(op, dim):
    """t.sum(0, keepdim=True) of a 0-d Tensor raised an AxisError (t.sum(dim=0, keepdim=True) worked)."""
    for keepdim in (True, False):
        expected, ours = _both(lambda lib, t: getattr(t, op)(dim, keepdim=keepdim), np.array(2.5))
        assert tuple(ours.shape) == tuple(expected.shape) == ()
        np.testing.assert_allclose(ours.numpy(), expected.numpy())


@pytest.mark.parametrize("join", ["cat", "stack", "concat"])
def test_joining_tensors_of_several_dtypes_promotes_as_torch(join):
    """cat([float32, int32]) was float64 (NumPy's promotion); PyTorch's category rule keeps float32."""
    pairs = [(np.array([1.0, 2.0], np.float32), np.array([3, 4], np.int32)),
             (np.array([1, 2], np.int64), np.array([True, False])),
             (np.array([1, 2], np.uint8), np.array([3, 4], np.int8)),
             (np.array([1.0, 2.0], np.float16), np.array([3, 4], np.int64))]
    for a, b in pairs:
        _same(*_both(lambda lib, x, y: getattr(lib, join)([x, y]), a, b))
    _same(*_both(lambda lib, x, y: lib.cat([x, y.reshape(1, 2)]), np.zeros(0, np.float32), np.array([3, 4])))


def test_clamp_promotes_with_its_bounds():
    """An int Tensor clamped at 1.5 is float32 in PyTorch (was float64); Tensor bounds take part in the dtype."""
    a = np.array([-4, 4, 3], np.int32)
    _same(*_both(lambda lib, t: t.clamp(max=1.5), a))
    _same(*_both(lambda lib, t: t.clamp(0, 2), a))
    _same(*_both(lambda lib, t: lib.clamp(t, min=lib.tensor([1, 2, 3])), a))
    _same(*_both(lambda lib, t: t.clamp(min=lib.tensor(0.5, dtype=lib.float64)), np.array([1.0, 0.25], np.float32)))
    _same(*_both(lambda lib, t: t.clamp(min=lib.tensor([0.5], dtype=lib.float16)), np.array(1.0)))


def test_searchsorted_of_tensors_gives_a_tensor():
    """torch.searchsorted(s, v).to(...) raised AttributeError: the result was a NumPy array."""
    s, v = np.array([-1.0, 0.0, 1.0]), np.array([[0.5, -2.0], [0.0, 3.0]])
    _same(*_both(lambda lib, a, b: lib.searchsorted(a, b), s, v))
    _same(*_both(lambda lib, a, b: lib.searchsorted(a, b, right=True).to(lib.float32), s, v))
    _same(*_both(lambda lib, a, b: lib.searchsorted(a, b, out_int32=True), s, v))


def test_polygamma_keeps_float32():
    """polygamma(n >= 1) of a float32 Tensor was float64 (SciPy's promotion by the integer n)."""
    x = np.array([0.5, 1.5, 3.0], np.float32)
    for n in (0, 1, 2):
        expected, ours = _both(lambda lib, t: t.polygamma(n), x)
        assert str(ours.dtype) == str(expected.dtype).removeprefix("torch.") == "float32"
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-5)
    expected, ours = _both(lambda lib, t: lib.polygamma(1, t), x)
    assert str(ours.dtype) == "float32"


@pytest.mark.parametrize("fn", ["xlogy", "special.xlogy", "special.xlog1py", "copysign"])
def test_binary_float_functions_promote_as_torch(fn):
    """xlogy of integer Tensors was float64 (SciPy's), PyTorch's is float32; copysign by a 0-d float64 Tensor read
    it as a Python float (float32), PyTorch promotes it as a 0-d Tensor."""
    def call(lib, a, b):
        f = lib
        for part in fn.split("."):
            f = getattr(f, part)
        return f(a, b)

    values = {"int32": np.array([1, 2, 3], np.int32), "int64": np.array([1, 2, 3]),
              "float32": np.array([1, 2, 3], np.float32), "float64": np.array([1.0, 2.0, 3.0])}
    for (da, a), (db, b) in itertools.product(values.items(), values.items()):
        for zero in (False, True):
            y = np.array(b[1]) if zero else b
            expected, ours = _both(lambda lib, s, t: call(lib, s, t), a, y)
            assert str(expected.dtype).removeprefix("torch.") == str(ours.dtype), (da, db, zero)
            np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-6)
        for number in (2, 2.5):
            expected, ours = call(torch, torch.tensor(a), number), call(cr, cr.tensor(a), number)
            assert str(expected.dtype).removeprefix("torch.") == str(ours.dtype), (da, number)


@pytest.mark.parametrize("program", ["softshrink", "hardshrink", "hardshrink_method", "threshold", "Softshrink"])
def test_shrinks_and_threshold_keep_nan_as_torch(program):
    """softshrink, hardshrink and threshold of NaN were 0 (or the threshold's value): PyTorch's are NaN."""
    calls = {"softshrink": lambda lib, t: lib.nn.functional.softshrink(t, 0.5),
             "hardshrink": lambda lib, t: lib.nn.functional.hardshrink(t, 0.5),
             "hardshrink_method": lambda lib, t: t.hardshrink(0.5),
             "threshold": lambda lib, t: lib.nn.functional.threshold(t, 0.5, -1.0),
             "Softshrink": lambda lib, t: lib.nn.Softshrink(0.5)(t)}
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -3.0, 3.0, 0.5, -0.5, 0.3])
    results = []
    for lib in (torch, cr):
        t = lib.tensor(x, requires_grad=True)
        y = calls[program](lib, t)
        (g,) = lib.autograd.grad(y.sum(), t)
        results.append((np.asarray(y.tolist()), np.asarray(g.tolist())))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])


def test_transpose_of_a_dim_with_itself_changes_nothing():
    """t.transpose(0, 0) or t.transpose(-1, 1) of a matrix raised NumPy's 'repeated axis' error."""
    a = np.arange(6.0).reshape(2, 3)
    for dims in [(0, 0), (-1, 1), (1, -1), (1, 0), (-2, -1)]:
        _same(*_both(lambda lib, t: t.transpose(*dims), a))
        _same(*_both(lambda lib, t: lib.transpose(t, *dims), a))


def test_bincount_with_float32_weights_is_float32():
    """PyTorch's weighted bincount keeps float32 weights' dtype (float64 for the others); it was always float64."""
    for dtype in ("float16", "float32", "float64", "int32", "int64"):
        w = np.array([0.5, 1.0, 2.0]).astype(dtype)
        _same(*_both(lambda lib, x, v: lib.bincount(x, weights=v), np.array([0, 1, 1]), w))
        _same(*_both(lambda lib, x, v: x.bincount(v, minlength=4), np.array([0, 1, 1]), w))
