"""Found by running tinygrad's op suite (test/backend/test_ops.py) through an adapter onto chainrule's Tensor: each
focused test is one place where chainrule silently differed from PyTorch or crashed on a PyTorch spelling, checked
against PyTorch; the table at the end is a sample of that suite's cases chainrule passes, forward and backward."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr

RNG = np.random.default_rng(11)


def _torch():
    return pytest.importorskip("torch")


def _same(ours, theirs, rtol=1e-5, atol=1e-6):
    got, want = np.asarray(ours._data), theirs.detach().numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- silent differences --------------------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("divisor", [3, -3, 5])
def test_div_trunc_of_integers_stays_integer(divisor):
    torch = _torch()
    a = np.array([5, 6, 7, 0, -5, -6, -7], np.int32)
    b = np.asarray(divisor, np.int32)
    _same(cr.Tensor(a).div(cr.Tensor(b), rounding_mode="trunc"), torch.tensor(a).div(torch.tensor(b),
                                                                                      rounding_mode="trunc"))
    _same(cr.div(cr.Tensor(a), divisor, rounding_mode="trunc"), torch.div(torch.tensor(a), torch.tensor(divisor),
                                                                          rounding_mode="trunc").to(torch.int32))


@pytest.mark.oracle
@pytest.mark.parametrize("op", ["__lshift__", "__rshift__", "bitwise_left_shift", "bitwise_and"])
@pytest.mark.parametrize("amount", [0, 2, 8, 31])
def test_integer_ops_with_a_python_int_keep_the_dtype(op, amount):
    torch = _torch()
    data = np.array([[-1, -3, 1, 7], [0, -2**31, 2**31 - 1, -1]], np.int32)
    _same(getattr(cr.Tensor(data), op)(amount), getattr(torch.tensor(data), op)(amount))


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("shape,axis,correction", [((1, 2, 3, 1, 5), (0, 3), 5), ((2, 3, 5), (0, 2), 12),
                                                   ((3, 4), 1, 7)])
def test_a_correction_past_the_count_gives_nan_or_inf_not_a_negative_spread(name, shape, axis, correction):
    torch = _torch()
    x = RNG.uniform(-2, 2, shape).astype(np.float32)
    with pytest.warns(RuntimeWarning, match="degrees of freedom <= 0"):
        ours = getattr(cr.Tensor(x), name)(axis=axis, correction=correction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTorch's own note about the degrees of freedom
        theirs = getattr(torch.tensor(x), name)(axis, correction=correction)
    _same(ours, theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("fn", ["std_mean", "var_mean"])
@pytest.mark.parametrize("kw", [{"axis": (1, 2)}, {"axis": 0, "keepdims": True}, {"dim": 1, "correction": 0}])
def test_std_mean_reads_axis_and_keepdims_as_pytorch(fn, kw):
    torch = _torch()
    x = RNG.normal(size=(3, 4, 5)).astype(np.float32)
    for ours, theirs in zip(getattr(cr, fn)(cr.Tensor(x), **kw), getattr(torch, fn)(torch.tensor(x), **kw),
                            strict=True):
        _same(ours, theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("values,dtype", [([0.0, 100.0], np.float32), ([0.0, 1000.0, -1000.0], np.float64)])
def test_logcumsumexp_of_entries_far_apart(values, dtype):
    torch = _torch()
    x = cr.Tensor(np.array(values, dtype), requires_grad=True)
    t = torch.tensor(np.array(values, dtype), requires_grad=True)
    w = np.arange(1.0, len(values) + 1).astype(dtype)
    ours, theirs = x.logcumsumexp(0), t.logcumsumexp(0)
    _same(ours, theirs)
    (ours * cr.Tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad._data, t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_logcumsumexp_gradients_to_second_order():
    x = RNG.normal(size=(3, 5, 2))
    assert cr.gradcheck(lambda v: cr.logcumsumexp(v, 1), x)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape,axis", [((5, 6), 1), ((2, 0, 3), 1), ((4, 3), 0), ((), 0)])
def test_cummax_cummin_take_axis_and_empty_dims(name, shape, axis):
    torch = _torch()
    x = RNG.normal(size=shape).astype(np.float32)
    ours, theirs = getattr(cr.Tensor(x), name)(axis=axis), getattr(torch.tensor(x), name)(axis=axis)
    _same(ours[0], theirs.values)
    _same(ours[1], theirs.indices)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [-1, 0])
def test_softmax_of_a_0d_tensor_along_its_one_entry(name, dim):
    torch = _torch()
    x, t = cr.tensor(1.5, requires_grad=True), torch.tensor(1.5, requires_grad=True)
    ours, theirs = getattr(x, name)(dim), getattr(t, name)(dim)
    _same(ours, theirs)
    ours.backward()
    theirs.backward()
    np.testing.assert_allclose(x.grad._data, t.grad.numpy())


@pytest.mark.oracle
def test_where_with_a_tensor_condition_and_numbers_gives_a_tensor():
    torch = _torch()
    x = RNG.normal(size=(5, 5)).astype(np.float32)
    ours, theirs = cr.where(cr.Tensor(x) > 0.5, 4, 2), torch.where(torch.tensor(x) > 0.5, 4, 2)
    assert isinstance(ours, cr.Tensor)
    _same(ours.int().permute(1, 0), theirs.int().permute(1, 0))


def test_tensor_where_refuses_a_condition_that_is_not_boolean():
    cond = cr.tensor([True, False])
    x, y = cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])
    with pytest.raises(TypeError, match=r"Tensor\.where: the condition must be boolean.*cr\.where\(cond, x, y\)"):
        cond.where(x, y)  # tinygrad's order: PyTorch's reads x as the condition
    with pytest.raises(TypeError, match="condition must be boolean"):
        x.where(1, 3)
    assert x.where(cond, y).tolist() == [1.0, 4.0]


@pytest.mark.oracle
@pytest.mark.parametrize("kw", [{"dim": 1, "descending": True, "stable": True}, {"dim": 0}])
def test_argsort_gives_a_tensor(kw):
    torch = _torch()
    x = RNG.integers(0, 4, (6, 5)).astype(np.float32)
    ours = cr.argsort(cr.Tensor(x), **kw)
    assert isinstance(ours, cr.Tensor) and isinstance(cr.Tensor(x).argsort(**kw), cr.Tensor)
    _same(ours.int(), torch.argsort(torch.tensor(x), **kw).int())


@pytest.mark.parametrize("dims", [(0, 0), (1, -1)])
def test_flip_refuses_a_repeated_dim(dims):
    with pytest.raises(ValueError, match=r"flip: axis .* names an axis more than once"):
        cr.ones(3, 4).flip(dims)


@pytest.mark.parametrize("shifts,dims", [((1, 2), None), (1, (0, 1)), ((1, 2), 0)])
def test_roll_refuses_shifts_and_dims_that_do_not_align(shifts, dims):
    with pytest.raises(ValueError, match=r"roll: shifts=.* and dims=.* do not align.*np\.roll"):
        cr.ones(3, 4).roll(shifts, dims)


@pytest.mark.oracle
@pytest.mark.parametrize("shifts,dims", [(1, None), ((1,), None), ((2, -3), (0, 1)), (5, 0)])
def test_roll_that_aligns_matches_pytorch(shifts, dims):
    torch = _torch()
    x = np.arange(12.0).reshape(3, 4)
    _same(cr.Tensor(x).roll(shifts, dims), torch.tensor(x).roll(shifts, dims))


@pytest.mark.oracle
@pytest.mark.parametrize("subscripts,shapes", [("i,i->i", [(5,), (5,)]), ("ijk,ikl->ijl", [(2, 4, 6), (2, 6, 8)]),
                                               ("ij->ji", [(3, 4)])])
def test_einsum_takes_the_operands_as_one_list(subscripts, shapes):
    torch = _torch()
    xs = [RNG.normal(size=s) for s in shapes]
    _same(cr.einsum(subscripts, [cr.Tensor(x) for x in xs]), torch.einsum(subscripts, [torch.tensor(x) for x in xs]))
    assert float(cr.einsum("i->", [1.0, 2.0])) == 3.0  # one list of numbers stays NumPy's array operand
    with pytest.raises(ValueError, match="einsum: subscripts 'ij,jk->ij' name 2 operands, got 3"):
        cr.einsum("ij,jk->ij", [cr.Tensor(x) for x in (np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 2)))])


@pytest.mark.oracle
@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("src", ["tensor", 1.5])
def test_scatter_reduce_keyword(reduce, src):
    torch = _torch()
    x = RNG.normal(size=(4, 5, 6)).astype(np.float32)
    s = RNG.normal(size=(4, 5, 6)).astype(np.float32)
    idx = RNG.integers(0, 3, (3, 4, 5))
    ours_src, their_src = (cr.Tensor(s), torch.tensor(s)) if src == "tensor" else (src, src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTorch deprecates reduce= with a Tensor src
        theirs = torch.tensor(x).scatter(1, torch.tensor(idx), their_src, reduce=reduce)
    _same(cr.Tensor(x).scatter(1, cr.tensor(idx), ours_src, reduce=reduce), theirs)


@pytest.mark.oracle
def test_max_pool_indices_of_a_tensor_are_a_tensor():
    torch = _torch()
    x = RNG.normal(size=(2, 3, 6, 6)).astype(np.float32)
    ours = cr.nn.functional.max_pool2d(cr.Tensor(x), 2, return_indices=True)[1]
    theirs = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)[1]
    assert isinstance(ours, cr.Tensor)
    _same(ours.int(), theirs.int())


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8", "float16", "int64"])
def test_view_as_another_dtype_reads_the_same_bytes(dtype):
    torch = _torch()
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    ours, theirs = cr.Tensor(x).view(getattr(cr, dtype)), torch.tensor(x).view(getattr(torch, dtype))
    np.testing.assert_array_equal(ours._data, theirs.numpy())
    with pytest.raises(NotImplementedError, match="view: reading the bits .* has no derivative"):
        cr.Tensor(x, requires_grad=True).view(cr.float16)


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(1, -2, 2, -1), (-1, 2, 2, -1), (0, 0, 0, -4), (2, 2, -1, -1), (0, -3, 2, -2)])
def test_pad_with_negative_sizes_crops_as_pytorch_in_every_mode(mode, pads):
    torch = _torch()
    x = RNG.normal(size=(1, 1, 5, 6)).astype(np.float32)
    theirs = torch.nn.functional.pad(torch.tensor(x), pads, mode=mode)
    _same(cr.nn.functional.pad(cr.Tensor(x), pads, mode=mode), theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("mode,pads", [("reflect", (3, -3, 0, -3)), ("replicate", (2, -4, 1, -5))])
def test_reflect_and_replicate_pad_then_crop(mode, pads):
    torch = _torch()  # (their padding reads the input's edge before the crop, even past what the crop leaves)
    x = RNG.normal(size=(1, 1, 5, 6)).astype(np.float32)
    theirs = torch.nn.functional.pad(torch.tensor(x), pads, mode=mode)
    _same(cr.nn.functional.pad(cr.Tensor(x), pads, mode=mode), theirs)


@pytest.mark.parametrize("mode,pads", [("circular", (3, -5, 1, -4)), ("reflect", (0, 0, 5, 0)),
                                       ("circular", (7, 0))])
def test_pad_past_what_there_is_to_wrap_or_reflect_raises(mode, pads):
    # (PyTorch refuses it too, or in circular mode past what a crop leaves, reads uninitialised memory)
    with pytest.raises(ValueError, match=f"pad: mode='{mode}' pads dim .* the padding can be at most"):
        cr.nn.functional.pad(cr.ones(1, 1, 5, 6), pads, mode=mode)


@pytest.mark.oracle
@pytest.mark.parametrize("size", [(10, 10), (5, 13), (100, 70)])
@pytest.mark.parametrize("align_corners", [None, True])
def test_bilinear_interpolation_of_uint8_images(size, align_corners):
    torch = _torch()
    x = RNG.uniform(0, 255, (2, 3, 64, 64)).astype(np.uint8)
    ours = cr.nn.functional.interpolate(cr.Tensor(x), size=size, mode="bilinear", align_corners=align_corners)
    theirs = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode="bilinear", align_corners=align_corners)
    assert ours.dtype == np.uint8
    # (the weights used to be made in uint8, hence 0: every entry came out 0); PyTorch rounds fixed-point passes
    np.testing.assert_allclose(ours._data.astype(int), theirs.numpy().astype(int), atol=1)


INDEX_CASES = [  # an integer beside integer arrays: PyTorch applies it first, NumPy counts it among the arrays
    lambda ix: (1, slice(None), slice(3, 11, 2), ix([[0, 1], [2, 3]]), slice(0, 2)),
    lambda ix: (slice(None), ix([1, 0]), slice(None), 1),
    lambda ix: (1, Ellipsis, ix([1, 0])),
    lambda ix: (1, None, ix([1, 0])),
    lambda ix: (0, slice(None), 2, ix([1, 0])),
    lambda ix: (1, slice(None), ix([True, False, True, False, True, False])),
    lambda ix: (1, ix([[1], [3]]), slice(None), ix([[0, 1], [2, 3]])),  # arrays apart: both put them first
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_indexing_with_an_integer_beside_arrays_reads_as_pytorch(case):
    torch = _torch()
    x = RNG.normal(size=(2, 5, 6, 5, 3, 4))
    ours, mine = cr.Tensor(x, requires_grad=True), INDEX_CASES[case](cr.tensor)
    theirs, key = torch.tensor(x, requires_grad=True), INDEX_CASES[case](torch.tensor)
    out, want = ours[mine], theirs[key]
    _same(out, want)
    w = RNG.normal(size=out.shape)
    (out * cr.Tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.grad._data, theirs.grad.numpy())


@pytest.mark.oracle
def test_writing_with_an_integer_beside_arrays_reads_as_pytorch():
    torch = _torch()
    x, v = RNG.normal(size=(2, 3, 3)), RNG.normal(size=(3, 3))
    plain, theirs = cr.Tensor(x.copy()), torch.tensor(x)
    plain[1, :, cr.tensor([2, 0, 1])] = cr.Tensor(v)  # (NumPy's reading writes v transposed: same shape)
    theirs[1, :, torch.tensor([2, 0, 1])] = torch.tensor(v)
    _same(plain, theirs)
    w, value = cr.Tensor(x, requires_grad=True), cr.Tensor(v, requires_grad=True)
    tw, tv = torch.tensor(x, requires_grad=True), torch.tensor(v, requires_grad=True)
    h, th = w * 1, tw * 1
    h[1, :, cr.tensor([2, 0, 1])] = value * 2  # in the graph: recorded
    th[1, :, torch.tensor([2, 0, 1])] = tv * 2
    (h * h).sum().backward()
    (th * th).sum().backward()
    _same(h, th)
    np.testing.assert_allclose(w.grad._data, tw.grad.numpy())
    np.testing.assert_allclose(value.grad._data, tv.grad.numpy())


def test_indexing_numpy_values_keeps_numpy_reading():
    x = np.arange(12.0).reshape(2, 2, 3)
    picked = cr.grad(lambda a: a[1, :, np.array([0, 2])][0, 1])(x)  # NumPy's: the array's axis first
    assert picked[1, 1, 0] == 1 and picked.sum() == 1
    assert cr.Tensor(x)[1, :, np.array([0, 2])].shape == (2, 2)
    assert cr.Tensor(x)[1, :, np.array([0, 2])][0, 1] == x[1, 0, 2]  # a Tensor: PyTorch's (the array's axis in place)


@pytest.mark.parametrize("pick", [lambda x: x[x.nonzero()[:, 0]].sum(), lambda x: x[x.argsort(dim=0)][0]],
                         ids=["nonzero", "argsort"])
def test_jit_replays_a_function_that_reads_an_index_tensor(pick):
    # a replay compares what the function read with what the trace read: Tensors too (it asked bool() of ==)
    fn = cr.jit(lambda x: pick(x) * 1)
    first = np.array([1.0, 0.0, 2.0])
    assert float(fn(cr.Tensor(first, requires_grad=True))) == float(pick(cr.Tensor(first)))
    assert float(fn(cr.Tensor(first, requires_grad=True))) == float(pick(cr.Tensor(first)))  # replayed
    other = np.array([0.0, 3.0, -1.0])  # another index: traced again, never the first call's
    assert float(fn(cr.Tensor(other, requires_grad=True))) == float(pick(cr.Tensor(other)))
    assert fn.traces_again == 1


# -- a sample of the suite's cases chainrule passes: forward values and the gradients of .sum() ----------------
# (name, shapes, the op written once for both libraries; it may call `lib`, chainrule or torch)
PASSING = [
    ("add_broadcast", [(45, 65), (45, 1)], lambda lib, x, y: x + y),
    ("rsub_scalar", [(45, 65)], lambda lib, x: 2 - x),
    ("div", [(45, 65), (45, 65)], lambda lib, x, y: x / y),
    ("pow_tensor", [(45, 65), (45, 65)], lambda lib, x, y: x.abs() ** y),
    ("pow_half", [(45, 65)], lambda lib, x: x.abs() ** 0.5),
    ("sum_two_axes", [(4, 4, 4)], lambda lib, x: x.sum((0, 2)).sum()),
    ("mean_keepdim", [(3, 4, 5)], lambda lib, x: x.mean(dim=1, keepdim=True)),
    ("max_all", [(45, 3)], lambda lib, x: x.max()),
    ("amax_dim", [(3, 4, 5)], lambda lib, x: x.amax(dim=1)),
    ("std_dim", [(15, 25, 35)], lambda lib, x: x.std(dim=(0, 2))),
    ("var_correction", [(15, 25)], lambda lib, x: x.var(dim=1, correction=0)),
    ("logsumexp", [(45, 65)], lambda lib, x: x.logsumexp(1)),
    ("softmax", [(45, 65)], lambda lib, x: x.softmax(1)),
    ("log_softmax", [(45, 65)], lambda lib, x: x.log_softmax(0)),
    ("relu", [(45, 65)], lambda lib, x: x.relu()),
    ("sigmoid", [(45, 65)], lambda lib, x: x.sigmoid()),
    ("tanh", [(45, 65)], lambda lib, x: x.tanh()),
    ("exp_log", [(45, 65)], lambda lib, x: (x.exp() + 1).log()),
    ("sqrt_rsqrt", [(45, 65)], lambda lib, x: x.abs().add(0.1).sqrt() * x.abs().add(0.1).rsqrt()),
    ("sin_cos", [(45, 65)], lambda lib, x: x.sin() * x.cos()),
    ("clamp", [(45, 65)], lambda lib, x: x.clamp(-0.3, 1.2)),
    ("lerp", [(45, 35), (45, 35), (45, 35)], lambda lib, x, y, z: x.lerp(y, z)),
    ("tril", [(5, 3, 3)], lambda lib, x: x.tril(1)),
    ("triu", [(4, 5)], lambda lib, x: x.triu(-1)),
    ("matmul_batched", [(8, 45, 65), (8, 65, 10)], lambda lib, x, y: x @ y),
    ("matmul_vector", [(65,), (65, 45)], lambda lib, x, y: x @ y),
    ("permute", [(1, 2, 3, 4)], lambda lib, x: x.permute(3, 0, 2, 1)),
    ("reshape_infer", [(4, 3, 6, 6)], lambda lib, x: x.reshape((-1, 1, 6, 6))),
    ("flatten", [(4, 3, 6)], lambda lib, x: x.flatten(1)),
    ("expand", [(4, 1)], lambda lib, x: x.expand(4, 5)),
    ("unsqueeze_squeeze", [(3, 1, 4)], lambda lib, x: x.squeeze(1).unsqueeze(-1)),
    ("transpose", [(3, 4, 5)], lambda lib, x: x.transpose(0, 2)),
    ("flip", [(4, 3, 6, 6)], lambda lib, x: x.flip((0, 1, 3))),
    ("roll", [(2, 4, 6)], lambda lib, x: x.roll(shifts=(2, -3), dims=(0, 2))),
    ("slice_step", [(8, 7)], lambda lib, x: x[1:7:2, ::3]),
    ("index_lists", [(5, 6)], lambda lib, x: x[[0, 2, 2], [1, 1, 5]]),
    ("cat", [(3, 4), (3, 2)], lambda lib, x, y: lib.cat([x, y], dim=1)),
    ("stack", [(5, 6, 3), (5, 6, 3)], lambda lib, x, y: lib.stack((x, y), 2)),
    ("split", [(10, 3)], lambda lib, x: x.split([1, 4, 5])[1] * 2),
    ("chunk", [(8, 13)], lambda lib, x: x.chunk(6, 1)[2]),
    ("cumsum", [(20, 30)], lambda lib, x: x.cumsum(1)),
    ("cumprod", [(4, 5)], lambda lib, x: x.cumprod(0)),
    ("logcumsumexp", [(5, 6)], lambda lib, x: x.logcumsumexp(1)),
    ("cummax", [(5, 6, 7)], lambda lib, x: x.cummax(axis=2)[0]),
    ("gather", [(4, 5, 6)], lambda lib, x: x.gather(1, lib.tensor(np.arange(60).reshape(2, 5, 6) % 5))),
    ("masked_fill", [(32, 10)], lambda lib, x: x.masked_fill((x > 0.1).detach(), -3.0)),
    ("where", [(10, 10), (10,)], lambda lib, x, a: lib.where(x > 0.5, x, a)),
    ("unfold", [(3, 3, 3, 3, 3)], lambda lib, x: x.unfold(-1, 2, 2)),
    ("trace_like", [(5, 5)], lambda lib, x: x.diagonal().sum()),
    ("norm", [(4, 5)], lambda lib, x: x.norm(dim=1)),
    ("sort_values", [(6, 5)], lambda lib, x: x.sort(dim=1, descending=True)[0]),
    ("topk_values", [(5, 5, 4)], lambda lib, x: x.topk(4, 0)[0]),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,shapes,fn", PASSING, ids=[case[0] for case in PASSING])
def test_suite_case_matches_pytorch_forward_and_backward(name, shapes, fn):
    torch = _torch()
    np.random.seed(0)
    data = [np.random.uniform(-2, 2, s).astype(np.float32) for s in shapes]
    ours = [cr.Tensor(d.copy(), requires_grad=True) for d in data]
    theirs = [torch.tensor(d, requires_grad=True) for d in data]
    out, want = fn(cr, *ours), fn(torch, *theirs)
    _same(out, want, rtol=1e-3, atol=1e-5)
    out.sum().backward()
    grads = torch.autograd.grad(want.sum(), theirs)
    for x, g in zip(ours, grads, strict=True):
        np.testing.assert_allclose(x.grad._data, g.numpy(), rtol=1e-3, atol=1e-4)
