"""PyTorch's small utilities and aliases (chainrule.ops.pytorch.utilities, legacy_range and
chainrule.nn.functional.torch_toplevel), each against PyTorch where it has the twin."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import Tensor

RNG = np.random.default_rng(1)


def _torch():
    return pytest.importorskip("torch", reason="torch is not installed")


@pytest.mark.oracle
def test_facts_follow_pytorch():
    torch = _torch()
    for values in (np.ones((2, 3)), np.ones(4, dtype=np.float32), np.ones(3, dtype=np.int64), np.ones(2, dtype=bool),
                   np.ones(2, dtype=np.uint8)):
        t, tt = Tensor(values), torch.tensor(values)
        assert (t.is_cpu, t.itemsize, t.nbytes, t.is_signed(), t.get_device(), t.is_inference(), t.is_conj(),
                t.is_neg()) == (tt.is_cpu, tt.itemsize, tt.nbytes, tt.is_signed(), tt.get_device(),
                                tt.is_inference(), tt.is_conj(), tt.is_neg())
        assert cr.is_signed(t) == torch.is_signed(tt) and cr.get_device(t) == -1
    a, b = Tensor(np.ones((2, 3))), Tensor(np.zeros((2, 3)))
    assert a.is_same_size(b) and not a.is_same_size(Tensor(np.ones(3))) and cr.is_same_size(a, b)
    assert Tensor([2.0]).is_nonzero() and not Tensor(0.0).is_nonzero()
    for bad, says in [(Tensor([1.0, 2.0]), "more than one value"), (Tensor(np.zeros(0)), "no values")]:
        with pytest.raises(RuntimeError, match=f"is_nonzero: Boolean value of Tensor with {says} is ambiguous"):
            bad.is_nonzero()


@pytest.mark.oracle
def test_dtype_conversions_follow_pytorch():
    torch = _torch()
    x = np.array([-1.5, 0.5, 300.0])
    for name in ("byte", "char", "short", "cfloat", "cdouble"):
        got, expected = getattr(Tensor(x), name)(), getattr(torch.tensor(x), name)()
        assert str(got.dtype) == str(expected.dtype).replace("torch.", ""), name
        if name in ("cfloat", "cdouble", "short"):
            np.testing.assert_array_equal(got.data, expected.numpy())
    w = Tensor(x, requires_grad=True)
    w.cdouble().real.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]


def test_legacy_new_makes_a_size_or_values_in_this_dtype():
    t = Tensor(np.ones(2, dtype=np.float32))
    assert t.new(2, 3).shape == (2, 3) and t.new(2, 3).dtype == np.float32
    assert t.new([1, 2]).tolist() == [1.0, 2.0] and t.new([1, 2]).dtype == np.float32
    assert t.new().shape == (0,)


@pytest.mark.oracle
def test_spellings_of_existing_ops_follow_pytorch():
    torch = _torch()
    x = RNG.normal(size=(4, 6, 2))
    t, tt = Tensor(x), torch.tensor(x)
    for name, args in [("hsplit", (3,)), ("vsplit", (2,)), ("dsplit", (2,)), ("hsplit", ([1, 4],)),
                       ("split_with_sizes", ([1, 3],)), ("split_with_sizes", ([2, 4], 1))]:
        got, expected = getattr(t, name)(*args), getattr(tt, name)(*args)
        assert isinstance(got, tuple) and len(got) == len(expected), name
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.data, e.numpy())
    m, tm = Tensor(x[:, :, 0]), tt[:, :, 0]
    for name in ("corrcoef", "cov", "msort", "adjoint", "resolve_conj", "resolve_neg", "conj_physical"):
        np.testing.assert_allclose(getattr(m, name)().data, getattr(tm, name)().numpy(), rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(m.cov(correction=0).data, tm.cov(correction=0).numpy(), rtol=1e-12)
    v, tv = Tensor(x[0, :, 0]), tt[0, :, 0]
    np.testing.assert_array_equal(v.diagflat(1).data, tv.diagflat(1).numpy())
    np.testing.assert_array_equal(v.ger(v).data, tv.ger(tv).numpy())
    np.testing.assert_array_equal(cr.ger(v, v).data, torch.ger(tv, tv).numpy())
    np.testing.assert_array_equal(cr.row_stack([v, v]).data, torch.row_stack([tv, tv]).numpy())
    for name, args in [("unsafe_chunk", (2,)), ("unsafe_split", (3, 1)), ("unsafe_split_with_sizes", ([2, 4], 1))]:
        for g, e in zip(getattr(t, name)(*args), getattr(tt, name)(*args)):
            np.testing.assert_array_equal(g.data, e.numpy())
    z = np.array([1.0, 2.0 + 1e-3j, 3.0 + 0j])
    np.testing.assert_array_equal(Tensor(z).isreal().data, torch.tensor(z).isreal().numpy())
    np.testing.assert_array_equal(cr.isreal(Tensor(z)).data, torch.isreal(torch.tensor(z)).numpy())
    zc, tzc = Tensor(z.copy()), torch.tensor(z.copy())
    assert zc.conj_physical_() is zc
    np.testing.assert_array_equal(zc.data, tzc.conj_physical_().numpy())
    counts = np.array([0, 2, 2, 5])
    np.testing.assert_array_equal(Tensor(counts).bincount(minlength=7).data,
                                  torch.tensor(counts).bincount(minlength=7).numpy())
    np.testing.assert_array_equal(v.histc(4, -1.0, 1.0).data, tv.histc(4, -1.0, 1.0).numpy())


@pytest.mark.oracle
@pytest.mark.parametrize("shape, size", [((2, 3), (1, 3)), ((2, 3), (3,)), ((4, 2, 3), (2, 1)), ((2, 3), (2, 3))])
def test_sum_to_size_follows_pytorch_and_differentiates(shape, size):
    torch = _torch()
    x = RNG.normal(size=shape)
    t, tt = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = t.sum_to_size(*size), tt.sum_to_size(*size)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
    w = RNG.normal(size=tuple(tout.shape))
    (out * Tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(t.grad.data, tt.grad.numpy())
    with pytest.raises(RuntimeError, match="sum_to_size: size .* is not expandable"):
        t.sum_to_size(5)


@pytest.mark.oracle
def test_unique_consecutive_follows_pytorch():
    torch = _torch()
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    got = Tensor(x).unique_consecutive(return_inverse=True, return_counts=True)
    expected = torch.tensor(x).unique_consecutive(return_inverse=True, return_counts=True)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.data, e.numpy())
    rows = np.array([[1, 2], [1, 2], [3, 4], [1, 2]])
    got = cr.unique_consecutive(Tensor(rows), return_counts=True, dim=0)
    expected = torch.unique_consecutive(torch.tensor(rows), return_counts=True, dim=0)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.data, e.numpy())


@pytest.mark.parametrize("name, args, check", [
    ("bernoulli_", (0.3,), lambda v: set(np.unique(v)) <= {0.0, 1.0} and abs(v.mean() - 0.3) < 0.02),
    ("exponential_", (2.0,), lambda v: (v > 0).all() and abs(v.mean() - 0.5) < 0.02),
    ("geometric_", (0.25,), lambda v: (v >= 1).all() and (v == np.round(v)).all() and abs(v.mean() - 4) < 0.2),
    ("cauchy_", (1.0, 0.5), lambda v: abs(np.median(v) - 1.0) < 0.05),
    ("log_normal_", (0.0, 0.25), lambda v: (v > 0).all() and abs(np.log(v).std() - 0.25) < 0.01),
    ("random_", (3, 7), lambda v: set(np.unique(v)) == {3.0, 4.0, 5.0, 6.0}),
    ("random_", (5,), lambda v: set(np.unique(v)) == {0.0, 1.0, 2.0, 3.0, 4.0}),
])
def test_random_fills_draw_the_distribution_from_the_seeded_generator(name, args, check):
    cr.manual_seed(3)
    t = Tensor(np.zeros(20000))
    assert getattr(t, name)(*args) is t and check(t.numpy())
    cr.manual_seed(3)
    again = getattr(Tensor(np.zeros(20000)), name)(*args)
    np.testing.assert_array_equal(again.data, t.data)
    leaf = Tensor(np.zeros(3), requires_grad=True)
    with pytest.raises(RuntimeError, match=f"{name}: a leaf Tensor that requires grad"):
        getattr(leaf, name)(*args)


def test_bernoulli_method_and_random_fill_errors():
    cr.manual_seed(0)
    p = Tensor(np.array([0.0, 1.0, 1.0, 0.0]))
    assert p.bernoulli().tolist() == [0.0, 1.0, 1.0, 0.0]
    draws = Tensor(np.zeros(10000)).bernoulli(0.75)
    assert abs(float(draws.mean()) - 0.75) < 0.03
    with pytest.raises(RuntimeError, match=r"bernoulli_: p must be in \[0, 1\]"):
        Tensor(np.zeros(2)).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="exponential_: expects lambd > 0.0"):
        Tensor(np.zeros(2)).exponential_(0.0)
    with pytest.raises(RuntimeError, match="random_: expects 'from' to be less than 'to'"):
        Tensor(np.zeros(2)).random_(5, 2)


@pytest.mark.oracle
def test_hardshrink_and_prelu_methods_follow_pytorch_with_gradients():
    torch = _torch()
    x = RNG.normal(size=(2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    for name, args, targs in [("hardshrink", (0.5,), (0.5,)), ("prelu", (Tensor(w, requires_grad=True),),
                                                              (torch.tensor(w, requires_grad=True),))]:
        t, tt = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = getattr(t, name)(*args), getattr(tt, name)(*targs)
        np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
        g = RNG.normal(size=x.shape)
        (out * Tensor(g)).sum().backward()
        (tout * torch.tensor(g)).sum().backward()
        np.testing.assert_allclose(t.grad.data, tt.grad.numpy(), rtol=1e-12)
        if name == "prelu":
            np.testing.assert_allclose(args[0].grad.data, targs[0].grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(cr.prelu(Tensor(x), Tensor([0.25])).data,
                               torch.prelu(torch.tensor(x), torch.tensor([0.25], dtype=torch.float64)).numpy())


@pytest.mark.oracle
def test_top_level_dtype_and_shape_rules_follow_pytorch():
    torch = _torch()
    assert cr.broadcast_shapes((2, 1), (3,), (1, 1, 1)) == tuple(torch.broadcast_shapes((2, 1), (3,), (1, 1, 1)))
    assert cr.broadcast_shapes(3, (2, 1)) == tuple(torch.broadcast_shapes(3, (2, 1)))
    pairs = [(np.float64, np.float32), (np.float32, np.int64), (np.int64, np.float32), (np.int32, np.int64),
             (np.bool_, np.int32), (np.int64, np.bool_), (np.complex64, np.float64), (np.float64, np.complex64)]
    to_torch = {np.float64: torch.float64, np.float32: torch.float32, np.int64: torch.int64, np.int32: torch.int32,
                np.bool_: torch.bool, np.complex64: torch.complex64}
    for a, b in pairs:
        assert cr.can_cast(a, b) == torch.can_cast(to_torch[a], to_torch[b]), (a, b)
    assert cr.promote_types(np.int32, np.float32) == np.float64  # NumPy's promotion (PyTorch's: float32)
    s = cr.scalar_tensor(3)
    assert s.shape == () and s.dtype == np.float32 and float(s) == 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in [(1, 4), (0, 1, 0.25), (0, 5), (3, 1, -1), (0, 1, 0.3)]:
            np.testing.assert_allclose(cr.range(*args).data, torch.range(*args).numpy())
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        cr.range(0, 2)
    x = RNG.normal(size=(2, 3))
    np.testing.assert_allclose(cr.rsub(Tensor(x), 2.0, alpha=3).data, torch.rsub(torch.tensor(x), 2.0, alpha=3))


@pytest.mark.oracle
def test_trapz_and_cumulative_trapezoid_follow_pytorch_with_gradients():
    torch = _torch()
    y, xs = RNG.normal(size=(3, 5)), np.sort(RNG.normal(size=5))
    for kw, tkw in [({}, {}), ({"dx": 0.5}, {"dx": 0.5}), ({"dim": 0}, {"dim": 0})]:
        t, tt = Tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
        out, tout = cr.cumulative_trapezoid(t, **kw), torch.cumulative_trapezoid(tt, **tkw)
        np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12)
        out.sum().backward()
        tout.sum().backward()
        np.testing.assert_allclose(t.grad.data, tt.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(cr.trapz(Tensor(y), **kw).data, torch.trapz(tt, **tkw).detach().numpy())
    np.testing.assert_allclose(cr.cumulative_trapezoid(Tensor(y), Tensor(xs)).data,
                               torch.cumulative_trapezoid(torch.tensor(y), torch.tensor(xs)).numpy(), rtol=1e-12)
    cr.gradcheck(lambda v: cr.cumulative_trapezoid(cr.as_tensor(v), dx=0.3).sum(), y)


def test_generator_state_seed_and_threads():
    cr.manual_seed(7)
    assert cr.initial_seed() == 7
    state = cr.get_rng_state()
    first = cr.randn(4).numpy().copy()
    cr.set_rng_state(state)
    np.testing.assert_array_equal(cr.randn(4).numpy(), first)
    with pytest.raises(TypeError, match="set_rng_state: expected the state get_rng_state"):
        cr.set_rng_state(b"bytes")
    s = cr.seed()
    assert cr.initial_seed() == s
    cr.manual_seed(0)
    assert cr.get_num_threads() >= 1
    cr.set_num_threads(2)
    with pytest.raises(ValueError, match="set_num_threads: expects a positive integer"):
        cr.set_num_threads(0)


def test_set_printoptions_changes_the_repr():
    before = np.get_printoptions()
    try:
        cr.set_printoptions(precision=2)
        assert "3.14" in repr(Tensor([3.14159])) and "3.142" not in repr(Tensor([3.14159]))
        cr.set_printoptions(profile="default")
        assert np.get_printoptions()["precision"] == 4
        with pytest.raises(ValueError, match="set_printoptions: profile must be"):
            cr.set_printoptions(profile="long")
    finally:
        np.set_printoptions(**before)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
                                  "kaiser_window"])
def test_windows_follow_pytorch(name):
    torch = _torch()
    for n in (0, 1, 2, 7, 8):
        for periodic in (True, False):
            got = getattr(cr, name)(n, periodic, dtype=np.float64)
            expected = getattr(torch, name)(n, periodic, dtype=torch.float64)
            np.testing.assert_allclose(got.data, expected.numpy(), atol=1e-12, err_msg=f"{n} {periodic}")
    assert getattr(cr, name)(4).dtype == np.float32


@pytest.mark.oracle
def test_nn_functional_ops_at_the_top_level_follow_pytorch():
    torch = _torch()
    x, y = RNG.normal(size=(4, 6)), RNG.normal(size=(4, 6))
    target = np.array([1.0, -1.0, 1.0, -1.0])
    c = lambda a: Tensor(a)  # noqa: E731
    tc = torch.tensor
    cases = [
        (cr.embedding(c(x), c(np.array([2, 0]))), torch.embedding(tc(x), tc([2, 0]))),
        (cr.layer_norm(c(x), (6,)), torch.layer_norm(tc(x), (6,))),
        (cr.rms_norm(c(x), (6,)), torch.rms_norm(tc(x), (6,))),
        (cr.celu(c(x), 0.5), torch.celu(tc(x), 0.5)), (cr.selu(c(x)), torch.selu(tc(x))),
        (cr.rrelu(c(x)), torch.rrelu(tc(x))), (cr.threshold(c(x), 0.1, -2.0), torch.threshold(tc(x), 0.1, -2.0)),
        (cr.hardshrink(c(x), 0.3), torch.hardshrink(tc(x), 0.3)),
        (cr.cosine_similarity(c(x), c(y)), torch.cosine_similarity(tc(x), tc(y))),
        (cr.pairwise_distance(c(x), c(y)), torch.pairwise_distance(tc(x), tc(y))),
        (cr.pdist(c(x)), torch.pdist(tc(x))),
        (cr.kl_div(c(x), c(np.abs(y)), 2), torch.kl_div(tc(x), tc(np.abs(y)), 2)),
        (cr.margin_ranking_loss(c(x[:, 0]), c(y[:, 0]), c(target), 0.1, 0),
         torch.margin_ranking_loss(tc(x[:, 0]), tc(y[:, 0]), tc(target), 0.1, 0)),
        (cr.hinge_embedding_loss(c(x[:, 0]), c(target), 1.0, 1),
         torch.hinge_embedding_loss(tc(x[:, 0]), tc(target), 1.0, 1)),
        (cr.cosine_embedding_loss(c(x), c(y), c(target), 0.0, 2),
         torch.cosine_embedding_loss(tc(x), tc(y), tc(target), 0.0, 2)),
        (cr.triplet_margin_loss(c(x), c(y), c(x[::-1].copy())), torch.triplet_margin_loss(tc(x), tc(y),
                                                                                       tc(x[::-1].copy()))),
        (cr.poisson_nll_loss(c(x), c(np.abs(y)), True, False, 1e-8, 1),
         torch.poisson_nll_loss(tc(x), tc(np.abs(y)), True, False, 1e-8, 1)),
        (cr.binary_cross_entropy_with_logits(c(x), c((y > 0) * 1.0)),
         torch.binary_cross_entropy_with_logits(tc(x), tc((y > 0) * 1.0))),
        (cr.constant_pad_nd(c(x), (1, 2), 3.0), torch.constant_pad_nd(tc(x), (1, 2), 3.0)),
        (cr.pixel_shuffle(c(x.reshape(1, 4, 2, 3)), 2), torch.pixel_shuffle(tc(x.reshape(1, 4, 2, 3)), 2)),
        (cr.channel_shuffle(c(x.reshape(1, 4, 2, 3)), 2), torch.channel_shuffle(tc(x.reshape(1, 4, 2, 3)), 2)),
        (cr.dropout(c(x), 0.5, False), torch.dropout(tc(x), 0.5, False)),
    ]
    for i, (got, expected) in enumerate(cases):
        np.testing.assert_allclose(got.data, expected.numpy(), rtol=1e-10, atol=1e-12, err_msg=str(i))
    for got, expected in zip(cr.adaptive_max_pool1d(c(x[None]), 3), torch.adaptive_max_pool1d(tc(x[None]), 3)):
        np.testing.assert_array_equal(got.data, expected.numpy())
    for got, expected in zip(cr.max_pool1d_with_indices(c(x[None]), 2), torch.max_pool1d_with_indices(tc(x[None]),
                                                                                                       2)):
        np.testing.assert_array_equal(got.data, expected.numpy())
    with pytest.raises(ValueError, match=r"kl_div: reduction must be 0 \('none'\), 1 \('mean'\) or 2"):
        cr.kl_div(c(x), c(y), 5)


@pytest.mark.oracle
def test_nn_functional_in_place_ops_at_the_top_level_change_their_input():
    torch = _torch()
    x = RNG.normal(size=(3, 4))
    for name, args in [("celu_", (0.5,)), ("selu_", ()), ("threshold_", (0.1, -1.0)), ("dropout_", (0.5, False))]:
        t, tt = Tensor(x.copy()), torch.tensor(x.copy())
        assert getattr(cr, name)(t, *args) is t
        getattr(torch, name)(tt, *args)
        np.testing.assert_allclose(t.data, tt.numpy(), rtol=1e-12, err_msg=name)
        leaf, tleaf = Tensor(x.copy(), requires_grad=True), torch.tensor(x.copy(), requires_grad=True)
        h, th = leaf * 2, tleaf * 2
        getattr(cr, name)(h, *args).sum().backward()
        getattr(torch, name)(th, *args).sum().backward()
        np.testing.assert_allclose(leaf.grad.data, tleaf.grad.numpy(), rtol=1e-12, err_msg=name)
