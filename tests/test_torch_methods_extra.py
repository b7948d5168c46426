"""PyTorch's Tensor methods added in ops/pytorch/: values and gradients (first and second order)
against PyTorch, ties and repeated indices included; errors where chainrule refuses; NumPy's meanings kept."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor

RNG = np.random.default_rng(7)
A = RNG.uniform(-2, 2, (3, 4))
B = RNG.uniform(-2, 2, (3, 4))
POS = RNG.uniform(0.5, 2, (3, 4))
SQ = RNG.uniform(-2, 2, (3, 3))
V3 = RNG.uniform(-2, 2, (3,))
V4 = RNG.uniform(-2, 2, (4,))
BA = RNG.uniform(-1, 1, (2, 3, 4))
BB = RNG.uniform(-1, 1, (2, 4, 2))
BC = RNG.uniform(-1, 1, (2, 3, 2))
TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 1.0], [0.5, 0.5, -1.0, -1.0]])
IDX = np.array([[0, 2, 2, 1], [0, 1, 2, 1]])  # columns 0, 2, 3 pick one row twice
ROW_IDX = np.array([[3, 3], [0, 1], [2, 2]])  # repeated along dim 1, narrower than A


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _float(t) -> bool:
    return np.asarray(t.data if isinstance(t, Tensor) else t.detach().numpy()).dtype.kind == "f"


def _both(fn, arrays, torch, second=False, rtol=1e-10):
    """fn(*tensors, L) on chainrule and on torch (L makes an index tensor of the library): values, gradients
    of a weighted sum of the float outputs, and (second=True) the gradient of a weighted sum of those gradients."""
    ours = [Tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = _outputs(fn(*ours, Tensor))
    tout = _outputs(fn(*theirs, torch.tensor))
    assert len(out) == len(tout)
    for o, t in zip(out, tout, strict=True):
        assert o.shape == tuple(t.shape)
        np.testing.assert_allclose(o.data, t.detach().numpy(), rtol=rtol, atol=1e-12)
    pairs = [(o, t) for o, t in zip(out, tout, strict=True) if _float(o) and t.requires_grad]
    if not pairs:
        return
    weights = [RNG.uniform(0.5, 1.5, o.shape) for o, _ in pairs]
    loss = sum(((o * w) * (o * w)).sum() for (o, _), w in zip(pairs, weights, strict=True))
    tloss = sum(((t * torch.tensor(w)) * (t * torch.tensor(w))).sum() for (_, t), w in zip(pairs, weights,
                                                                                          strict=True))
    loss.backward(create_graph=second)
    tgrads = torch.autograd.grad(tloss, theirs, create_graph=second, allow_unused=True)
    for x, tg in zip(ours, tgrads, strict=True):
        want = np.zeros(x.shape) if tg is None else tg.detach().numpy()
        got = np.zeros(x.shape) if x.grad is None else x.grad.data
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)
    if not second:
        return
    probes = [RNG.uniform(-1, 1, x.shape) for x in ours]
    grads = [x.grad for x in ours]
    for x in ours:
        x.grad = None
    sum((g * p).sum() for g, p in zip(grads, probes, strict=True) if g is not None).backward()
    tsum = sum((g * torch.tensor(p)).sum() for g, p in zip(tgrads, probes, strict=True) if g is not None)
    tsecond = torch.autograd.grad(tsum, theirs, allow_unused=True)
    for x, tg in zip(ours, tsecond, strict=True):
        want = np.zeros(x.shape) if tg is None else tg.detach().numpy()
        got = np.zeros(x.shape) if x.grad is None else x.grad.data
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


CASES = {
    "add_alpha": (lambda x, y, L: x.add(y, alpha=-1.5), [A, B]),
    "sub_alpha": (lambda x, y, L: x.sub(y, alpha=2.0), [A, B]),
    "mul": (lambda x, y, L: x.mul(y), [A, B]),
    "div": (lambda x, y, L: x.div(y), [A, POS]),
    "div_trunc": (lambda x, y, L: x.div(y, rounding_mode="trunc"), [A, POS]),
    "div_floor": (lambda x, y, L: x.div(y, rounding_mode="floor"), [A, POS]),
    "neg": (lambda x, L: x.neg(), [A]),
    "reciprocal": (lambda x, L: x.reciprocal(), [POS]),
    "rsqrt": (lambda x, L: x.rsqrt(), [POS]),
    "sinh": (lambda x, L: x.sinh(), [A]),
    "cosh": (lambda x, L: x.cosh(), [A]),
    "erf": (lambda x, L: x.erf(), [A]),
    "ceil_floor": (lambda x, L: (x.ceil(), x.floor()), [A]),
    "compare": (lambda x, y, L: (x.eq(y), x.ne(y), x.gt(y), x.ge(y), x.lt(y), x.le(y), x.eq(x)), [A, B]),
    "logical_isnan": (lambda x, L: (x.gt(0).logical_not(), x.isnan(), x.isclose(x + 1e-12)), [A]),
    "amax_dim": (lambda x, L: (x.amax(dim=1), x.amin(dim=0, keepdim=True), x.amax(), x.amin(dim=(0, 1))), [TIES]),
    "mm": (lambda x, y, L: x.mm(y), [A, A.T.copy()]),
    "bmm": (lambda x, y, L: x.bmm(y), [BA, BB]),
    "mv": (lambda x, y, L: x.mv(y), [A, V4]),
    "addmm": (lambda c, x, y, L: c.addmm(x, y, beta=0.5, alpha=2.0), [SQ, A, A.T.copy()]),
    "baddbmm": (lambda c, x, y, L: c.baddbmm(x, y, beta=-1.0, alpha=0.5), [BC, BA, BB]),
    "addcmul": (lambda x, y, z, L: x.addcmul(y, z, value=0.7), [A, B, POS]),
    "addcdiv": (lambda x, y, z, L: x.addcdiv(y, z, value=-2.0), [A, B, POS]),
    "lerp": (lambda x, y, w, L: x.lerp(y, w), [A, B, POS]),
    "hypot": (lambda x, y, L: x.hypot(y), [POS, B]),
    "atan2": (lambda x, y, L: x.atan2(y), [A, POS]),
    "fmod_remainder": (lambda x, y, L: (x.fmod(y), x.remainder(y)), [A * 3, POS]),
    "where": (lambda x, y, L: x.where(x > 0, y), [A, B]),
    "gather_repeated": (lambda x, L: (x.gather(0, L(IDX)), x.gather(1, L(ROW_IDX))), [A]),
    # (src the shape of index: PyTorch 2.13's backward refuses a larger src)
    "scatter_add_repeated": (lambda x, s, L: x.scatter_add(0, L(IDX), s), [A, B[:2]]),
    "scatter_add_narrow": (lambda x, s, L: x.scatter_add(1, L(ROW_IDX), s), [A, B[:, :2]]),
    "scatter_unique": (lambda x, s, L: x.scatter(1, L(np.array([[3, 0], [1, 2], [0, 3]])), s), [A, B[:, :2]]),
    "scatter_value": (lambda x, L: x.scatter(0, L(np.array([[2, 0, 1, 1]])), value=-3.0), [A]),
    "index_select_repeated": (lambda x, L: x.index_select(1, L(np.array([3, 0, 3, 3]))), [A]),
    "take_along_dim": (lambda x, L: (x.take_along_dim(L(ROW_IDX), dim=1), x.take_along_dim(L(np.array([5, 5, 0])))),
                       [A]),
    "masked_select": (lambda x, L: x.masked_select(L(np.array([True, False, True, True]))), [A]),
    "narrow_select": (lambda x, L: (x.narrow(1, 1, 2), x.narrow(0, -2, 2), x.select(1, -1), x.select(0, 1)), [A]),
    "split_sizes": (lambda x, L: (*x.split(3, dim=1), *x.split([1, 2], dim=0), *x.split(2)), [A]),
    "chunk_unbind": (lambda x, L: (*x.chunk(3, dim=1), *x.chunk(2), *x.unbind(1)), [A]),
    "unflatten_movedim": (lambda x, L: (x.unflatten(2, (2, -1)), x.movedim(0, 2), x.movedim((0, 1), (2, 0))), [BA]),
    "flip_roll_tile": (lambda x, L: (x.flip(0, 1), x.flip([1]), x.roll(1, 0), x.roll((1, -1), (0, 1)), x.tile(2),
                                     x.tile((2, 1))), [A]),
    "tril_triu_diag": (lambda x, L: (x.tril(), x.triu(1), x.tril(-1), x.diag(), x.diag(1), x[0].diag(-1)), [A]),
    "as_other": (lambda x, y, L: (x.reshape_as(y), x.view_as(y), x[:1].expand_as(y)), [A, B]),
    "topk": (lambda x, L: (*x.topk(2, dim=1), *x.topk(3, dim=0, largest=False)), [A]),
    "kthvalue_median_mode": (lambda x, L: (*x.kthvalue(2, dim=1), *x.median(dim=0), *x.median(dim=1, keepdim=True),
                                           x.median()), [A]),
    "median_ties_whole": (lambda x, L: x.median(), [TIES]),
    "cross": (lambda x, y, L: (x.cross(y, dim=0), x.cross(y)), [RNG.uniform(-1, 1, (3, 2)),
                                                               RNG.uniform(-1, 1, (3, 2))]),
    "outer_inner": (lambda x, y, L: (x.outer(y), x.inner(x)), [V3, V3[::-1].copy()]),
    "addmv_addr_ger": (lambda c, m, v, L: (c[:, 0].addmv(m, v, beta=0.5, alpha=2.0), c.addr(c[:, 1], v, alpha=-1.0),
                                           v.ger(c[:, 2]), m.absolute()), [A, A, V4]),
    "addbmm": (lambda c, x, y, L: c.addbmm(x, y, beta=0.3, alpha=-1.0), [BC[0], BA, BB]),
    "diagonal_dims": (lambda x, L: (x.diagonal(dim1=0, dim2=-1), x.diagonal(offset=1, dim1=2, dim2=1),
                                    x.diagonal(-1, 1, 2)), [BA]),
    "tensor_split": (lambda x, L: (*x.tensor_split(3, dim=1), *x.tensor_split([1, 2], dim=0),
                                   *x.tensor_split(L(np.array([2])), -1)), [A]),
}
SECOND_ORDER = {"div", "rsqrt", "mm", "baddbmm", "addcdiv", "lerp", "hypot", "atan2", "gather_repeated",
                "scatter_add_repeated", "scatter_unique", "scatter_value", "topk", "median_ties_whole", "amax_dim",
                "cross", "addmv_addr_ger", "addbmm"}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_method_matches_pytorch_values_and_gradients(name):
    torch = _torch()
    fn, arrays = CASES[name]
    _both(fn, arrays, torch, second=name in SECOND_ORDER)


@pytest.mark.oracle
def test_mode_matches_pytorch_with_repeated_values():
    torch = _torch()
    data = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 1.0], [4.0, 1.0, 4.0, 1.0]])
    _both(lambda x, L: (*x.mode(dim=1), *x.mode(0)), [data], torch)


@pytest.mark.oracle
@pytest.mark.parametrize("method, args", [("topk", (2,)), ("kthvalue", (2,)), ("median", ()), ("mode", ())])
def test_value_index_results_send_the_gradient_to_the_returned_index_at_ties(method, args):
    """PyTorch breaks ties in topk in its own order: the values match, and each value's gradient goes to the
    index returned with it (chainrule's: the first tied entry), never shared among the tied ones."""
    torch = _torch()
    x = Tensor(TIES, requires_grad=True)
    values, indices = getattr(x, method)(*args, dim=1)
    tvalues, _ = getattr(torch.tensor(TIES), method)(*args, dim=1)
    np.testing.assert_array_equal(values.data, tvalues.numpy())
    np.testing.assert_array_equal(np.take_along_axis(TIES, indices.data.reshape(3, -1), 1),
                                  values.data.reshape(3, -1))
    w = np.arange(1.0, 1.0 + values.data.size).reshape(values.shape)
    (values * w).sum().backward()
    want = np.zeros_like(TIES)
    np.add.at(want, (np.arange(3)[:, None], indices.data.reshape(3, -1)), w.reshape(3, -1))
    np.testing.assert_array_equal(x.grad.data, want)


@pytest.mark.oracle
@pytest.mark.parametrize("name, args", [("neg_", ()), ("sqrt_", ()), ("exp_", ()), ("abs_", ()), ("square_", ()),
                                        ("clamp_", (0.7, 1.5))])
def test_in_place_methods_follow_pytorch(name, args):
    torch = _torch()
    x, tx = Tensor(POS.copy()), torch.tensor(POS.copy())
    view = x[0]
    assert getattr(x, name)(*args) is x
    getattr(tx, name)(*args)
    np.testing.assert_allclose(x.data, tx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(view.data, tx[0].numpy(), rtol=1e-12)  # views see the change
    leaf = Tensor(POS.copy(), requires_grad=True)
    with pytest.raises(RuntimeError, match=f"{name}: a leaf Tensor that requires grad is being used in an in-place"):
        getattr(leaf, name)(*args)
    h, th = leaf * 2, torch.tensor(POS.copy(), requires_grad=True)
    tleaf, th = th, th * 2
    getattr(h, name)(*args).sum().backward()  # recorded in the graph, as in PyTorch
    getattr(th, name)(*args).sum().backward()
    np.testing.assert_allclose(leaf.grad.data, tleaf.grad.numpy(), rtol=1e-12)
    with cr.no_grad():
        getattr(leaf, name)(*args)
    np.testing.assert_allclose(leaf.data, tx.numpy(), rtol=1e-12)


def test_uniform_normal_and_detach_in_place():
    w = Tensor(np.zeros((200, 5)), requires_grad=True)
    with pytest.raises(RuntimeError, match="uniform_: a leaf Tensor that requires grad"):
        w.uniform_(-1, 1)
    with cr.no_grad():
        assert w.uniform_(-0.5, 0.25) is w
    assert w.requires_grad and -0.5 <= w.data.min() and w.data.max() < 0.25 and w.data.std() > 0.1
    with cr.no_grad():
        w.normal_(3.0, 0.5)
    assert abs(w.data.mean() - 3.0) < 0.1 and abs(w.data.std() - 0.5) < 0.1
    draws = []
    for _ in range(2):  # nn.init.manual_seed's generator, as nn.init's own functions
        cr.nn.init.manual_seed(11)
        draws.append(Tensor(np.zeros(4)).normal_().data.copy())
    np.testing.assert_array_equal(draws[0], draws[1])
    np.testing.assert_array_equal(Tensor(np.zeros(3)).uniform_(generator=5).data,
                                  np.random.default_rng(5).uniform(0, 1, 3))
    h = w * 2
    assert h.detach_() is h and not h.requires_grad and h.is_leaf
    (h * w).sum().backward()  # h is a constant now: d/dw (h * w) = h alone
    np.testing.assert_array_equal(w.grad.data, h.data)


@pytest.mark.oracle
def test_constructors_storage_facts_and_conversions_match_pytorch():
    torch = _torch()
    a = np.arange(24.0).reshape(2, 3, 4)
    x, tx = Tensor(a), torch.tensor(a)
    for ours, theirs in [(x.new_zeros(2, 3), tx.new_zeros(2, 3)), (x.new_ones((4,)), tx.new_ones((4,))),
                         (x.new_full((2, 2), 7.0), tx.new_full((2, 2), 7.0)),
                         (x.new_tensor([1, 2]), tx.new_tensor([1, 2])), (x.half(), tx.half()),
                         (x.int(), tx.int()), (x.gt(5).bool(), tx.gt(5).bool()),
                         (x[0].H, tx[0].H), (x.mH, tx.mH), (x.mT, tx.mT)]:
        assert ours.shape == tuple(theirs.shape)
        assert ours.dtype == np.dtype(str(theirs.dtype).removeprefix("torch."))
        np.testing.assert_array_equal(ours.data, theirs.numpy())
    assert x.nelement() == tx.nelement() == 24 and x.element_size() == tx.element_size() == 8
    assert x.stride() == tx.stride() == (12, 4, 1) and x.stride(1) == tx.stride(1) == 4
    assert x.is_contiguous() and tx.is_contiguous()
    assert x.permute(2, 0, 1).stride() == tx.permute(2, 0, 1).stride()
    assert x.equal(Tensor(a)) is True and x.equal(x + 1) is False
    assert x.allclose(x + 1e-12) and not x.allclose(x + 1)


def test_errors_say_what_to_do():
    x = Tensor(A, requires_grad=True)
    with pytest.raises(ValueError, match=r"split: sizes \[1, 1\] add up to 2, not to the size 3 of dim 0"):
        x.split([1, 1])
    with pytest.raises(ValueError, match="scatter: index writes some positions more than once.*use scatter_add"):
        x.scatter(0, IDX, Tensor(B))
    with pytest.raises(ValueError, match="scatter: reduce must be 'add' or 'multiply'.*got 'max'.*scatter_reduce"):
        x.scatter(0, IDX, Tensor(B), reduce="max")
    with pytest.raises(ValueError, match=r"mm: mat2 must be 2-D, got shape \(4,\); use matmul to broadcast"):
        x.mm(Tensor(V4))
    with pytest.raises(ValueError, match="bmm: batch sizes differ"):
        Tensor(BA).bmm(Tensor(BB[:1]))
    with pytest.raises(ValueError, match="div: rounding_mode must be None, 'trunc' or 'floor', got 'round'"):
        x.div(2.0, rounding_mode="round")
    with pytest.raises(IndexError, match="gather: index 4 is out of range for dim 1 of size 4"):
        x.gather(1, np.array([[4]] * 3))
    with pytest.raises(TypeError, match="gather: index must hold integers, got dtype float64"):
        x.gather(1, np.zeros((3, 1)))
    with pytest.raises(ValueError, match="topk: k=5 is out of range for dim -1 of size 4"):
        x.topk(5)
    with pytest.raises(IndexError, match="narrow: start 3 and length 2 do not fit dim 1 of size 4"):
        x.narrow(1, 3, 2)
    with pytest.raises(ValueError, match=r"cross: no dimension of size 3 in shape \(4,\); pass dim="):
        Tensor(V4).cross(Tensor(V4))
    with pytest.raises(ValueError, match="H: needs a matrix"):
        _ = Tensor(BA).H


def test_numpy_meanings_of_shared_names_are_kept():
    x = Tensor(np.array([4.0, 1.0, 3.0, 2.0]))
    assert float(np.median(x)) == 2.5  # NumPy's function: the mean of the middle two
    assert float(cr.median(x, axis=0)) == 2.5  # NumPy's keyword: NumPy's reading
    assert float(x.median()) == float(cr.median(x)) == 2.0  # PyTorch's method (and torch.median): the lower middle
    np.testing.assert_array_equal(x.repeat(2, axis=0).data, np.repeat(x.data, 2))  # ndarray's repeat with axis=
    np.testing.assert_array_equal(x.repeat(2, 1).data, np.tile(x.data, (2, 1)))  # only PyTorch reads it: a tile
    np.testing.assert_array_equal(x.repeat(2).data, np.tile(x.data, 2))  # both read it: the object API's, PyTorch's
    np.testing.assert_array_equal(Tensor(A).repeat(2, 1).data, np.tile(A, (2, 1)))  # (NumPy: axis 1)
    inside = cr.grad(lambda v: (v.repeat(2) * np.arange(8.0)).sum())(np.array([4.0, 1.0, 3.0, 2.0]))  # NumPy values
    np.testing.assert_array_equal(inside, [1.0, 5.0, 9.0, 13.0])
    np.testing.assert_allclose(float(x.std()), np.std(x.data, ddof=1))  # the object API: PyTorch's unbiased
    np.testing.assert_allclose(float(x.var(axis=0)), np.var(x.data))  # NumPy's axis=: ddof=0
    np.testing.assert_allclose(float(np.std(x)), np.std(x.data))  # NumPy's function on a Tensor: NumPy's meaning
    assert [p.shape for p in cr.split(Tensor(A), 3, axis=0)] == [(1, 4)] * 3  # numpy.split: 3 sections
    assert [p.shape for p in Tensor(A).split(3, dim=0)] == [(3, 4)]  # Tensor.split: pieces of size 3


def test_inside_vmap_the_shape_methods_batch_and_the_value_reading_ones_refuse():
    rows = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(cr.vmap(lambda r: r.sub(1.0, alpha=2.0))(rows).data, rows - 2.0)
    np.testing.assert_allclose(cr.vmap(lambda r: r.gather(0, np.array([3, 3])))(rows).data, rows[:, [3, 3]])
    np.testing.assert_allclose(cr.vmap(lambda r: r.narrow(0, 1, 2))(rows).data, rows[:, 1:3])
    np.testing.assert_allclose(cr.vmap(lambda r: r.reshape(2, 2).mv(Tensor(np.ones(2))))(rows).data,
                               rows.reshape(3, 2, 2).sum(-1))
    for name, fn in [("topk", lambda r: r.topk(2).values), ("median", lambda r: r.median()),
                     ("exp_", lambda r: r.exp_()), ("stride", lambda r: r.stride())]:
        with pytest.raises(TypeError, match=f"vmap: Tensor.{name} reads the values .* call it outside vmap"):
            cr.vmap(fn)(rows)
    with pytest.raises(TypeError, match=r"flip: give the dims to flip \(PyTorch's t.flip\(dims\)\)"):
        Tensor(rows).flip()


def test_nanmean_nanvar_and_quantile_keep_float32():
    # an int64 count or float64 quantile weights used to make float32 results float64 (NumPy and PyTorch keep it)
    x = Tensor(np.array([[1.0, np.nan, 3.0], [2.0, 4.0, 8.0]], dtype=np.float32), requires_grad=True)
    for out in (x.nanmean(dim=-1), x.nanmean(), cr.nanvar(x), x[1].quantile(0.3), x[1].quantile(0.3, dim=0)):
        assert out.dtype == np.float32
    np.testing.assert_allclose(x.nanmean(dim=-1).data, [2.0, 14.0 / 3.0], rtol=1e-6)
    assert cr.nanmean(Tensor(np.arange(3))).dtype == np.float64  # integers: float64, as NumPy
