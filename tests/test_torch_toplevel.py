"""PyTorch's top-level functions that are neither a chainrule op nor a Tensor method (ops/pytorch/toplevel.py):
values, layouts and dtypes against PyTorch, gradients of the differentiable ones against PyTorch's, and the
random draws: seeded by manual_seed, drawn again by a jit replay."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _same(ours, theirs):
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-12, atol=1e-12)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)


@pytest.mark.parametrize("name,args", [
    ("tril_indices", (3, 4)), ("tril_indices", (4, 3, -1)), ("triu_indices", (3, 3, 1)), ("triu_indices", (2, 5)),
])
def test_index_builders(name, args):
    _same(getattr(cr, name)(*args), getattr(torch, name)(*args))


def test_bucketize_and_isin():
    values, bounds = [1.0, 3.0, 5.5, 9.0, 0.0], [1.0, 3.0, 5.0, 7.0, 9.0]
    for right in (False, True):
        _same(cr.bucketize(cr.tensor(values), cr.tensor(bounds), right=right),
              torch.bucketize(torch.tensor(values), torch.tensor(bounds), right=right))
    assert cr.bucketize(cr.tensor(values), cr.tensor(bounds), out_int32=True).dtype == np.int32
    _same(cr.isin(cr.tensor([1, 2, 3, 4]), cr.tensor([2, 4])), torch.isin(torch.tensor([1, 2, 3, 4]),
                                                                          torch.tensor([2, 4])))
    _same(cr.isin(cr.tensor([1, 2]), cr.tensor([2]), invert=True), torch.isin(torch.tensor([1, 2]), torch.tensor([2]),
                                                                             invert=True))


def _grads(fn_cr, fn_torch, *arrays):
    ours = [cr.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn_cr(*ours), fn_torch(*theirs)
    _same(out, tout)
    weights = np.random.default_rng(0).normal(size=tout.shape)
    (out * cr.tensor(weights)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


RNG = np.random.default_rng(3)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
def test_cdist_values_and_gradients(p):
    x1, x2 = RNG.normal(size=(2, 4, 3)), RNG.normal(size=(2, 5, 3))
    x2[0, 1] = x1[0, 2]  # a distance of exactly 0: gradient 0 there, as PyTorch's
    _grads(lambda a, b: cr.cdist(a, b, p=p), lambda a, b: torch.cdist(a, b, p=p), x1, x2)


def test_cartesian_prod_combinations_and_friends():
    a, b = RNG.normal(size=3), RNG.normal(size=2)
    _grads(cr.cartesian_prod, torch.cartesian_prod, a, b)
    _grads(lambda x: cr.combinations(x, 3), lambda x: torch.combinations(x, 3), RNG.normal(size=4))
    _grads(lambda x: cr.combinations(x, with_replacement=True), lambda x: torch.combinations(x, with_replacement=True),
           RNG.normal(size=3))
    _grads(lambda x: cr.msort(x), lambda x: torch.msort(x), RNG.normal(size=(4, 3)))
    _grads(lambda x, y: cr.chain_matmul(x, y, x.T), lambda x, y: torch.linalg.multi_dot([x, y, x.T]),
           RNG.normal(size=(2, 3)), RNG.normal(size=(3, 3)))
    _grads(lambda x, y: cr.broadcast_tensors(x, y)[0] * 2 + cr.broadcast_tensors(x, y)[1],
           lambda x, y: torch.broadcast_tensors(x, y)[0] * 2 + torch.broadcast_tensors(x, y)[1],
           RNG.normal(size=(2, 1)), RNG.normal(size=3))
    _same(cr.logspace(0, 2, 5, dtype=cr.float64), torch.logspace(0, 2, 5, dtype=torch.float64))
    _same(cr.logspace(-1, 1, 3, base=2.0, dtype=cr.float64), torch.logspace(-1, 1, 3, base=2.0, dtype=torch.float64))


def test_dtype_info_and_sizes():
    assert cr.finfo(cr.float32).eps == torch.finfo(torch.float32).eps
    assert cr.finfo().eps == torch.finfo().eps  # the default dtype, float32 for both
    assert cr.iinfo(cr.int64).max == torch.iinfo(torch.int64).max
    assert cr.is_nonzero(cr.tensor([2.0])) and not cr.is_nonzero(cr.tensor(0.0))
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        cr.is_nonzero(cr.tensor([1.0, 2.0]))
    assert cr.Size([2, 3]) == (2, 3) and isinstance(cr.zeros(2, 3).shape, cr.Size)


def test_random_draws_follow_manual_seed_and_their_shapes():
    cr.manual_seed(5)
    first = (cr.randperm(6), cr.normal(0.0, 2.0, (3,)), cr.bernoulli(cr.full((4,), 0.5)), cr.poisson(cr.ones(3)))
    cr.manual_seed(5)
    again = (cr.randperm(6), cr.normal(0.0, 2.0, (3,)), cr.bernoulli(cr.full((4,), 0.5)), cr.poisson(cr.ones(3)))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert sorted(first[0].tolist()) == list(range(6)) and first[0].dtype == np.int64
    assert first[1].dtype == np.float32 and first[2].dtype == np.float32
    assert set(first[2].tolist()) <= {0.0, 1.0}
    assert cr.normal(cr.zeros(2, dtype=cr.float64), cr.ones(2, dtype=cr.float64)).dtype == np.float64
    t = cr.randint_like(cr.zeros((2, 3)), 2, 5)
    assert t.shape == (2, 3) and ((t.numpy() >= 2) & (t.numpy() < 5)).all()
    with pytest.raises(RuntimeError, match="std must be >= 0"):
        cr.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match=r"bernoulli: the probabilities must be in \[0, 1\]"):
        cr.bernoulli(cr.tensor([1.5]))


def test_a_jit_replay_draws_again():
    @cr.jit
    def noisy(x):
        return x + cr.normal(0.0, 1.0, (3,)) + cr.bernoulli(cr.full((3,), 0.5)) + cr.randperm(3)

    x = np.zeros(3)
    cr.manual_seed(1)
    draws = [noisy(x).tolist() for _ in range(3)]
    assert len({tuple(d) for d in draws}) == 3
    cr.manual_seed(1)
    eager = [(x + cr.normal(0.0, 1.0, (3,)) + cr.bernoulli(cr.full((3,), 0.5)) + cr.randperm(3)).tolist()
             for _ in range(3)]
    np.testing.assert_allclose(draws, eager)  # the replay draws what eager draws, from the same generator


def test_a_random_index_under_jit_is_drawn_afresh_not_frozen():
    @cr.jit
    def shuffled(x):
        return x[cr.randperm(x.shape[0])]

    x = np.arange(50.0)
    with pytest.warns(cr.PerformanceWarning, match="runs the function as it is from now on"):
        orders = [shuffled(x).tolist() for _ in range(10)]  # each read differs: traced again, then run as it is
    assert all(sorted(o) == x.tolist() for o in orders) and len({tuple(o) for o in orders}) == 10


def test_complex_builders_and_views_are_differentiable_as_pytorchs():
    r, th = np.abs(RNG.normal(size=(3, 2))) + 0.5, RNG.normal(size=(3, 2))
    _grads(lambda a, b: cr.view_as_real(cr.polar(a, b)), lambda a, b: torch.view_as_real(torch.polar(a, b)), r, th)
    _grads(lambda a, b: cr.view_as_real(cr.complex(a, b) * cr.complex(b, a)),
           lambda a, b: torch.view_as_real(torch.complex(a, b) * torch.complex(b, a)), r, th)
    x = RNG.normal(size=(4, 2))
    _grads(lambda a: cr.view_as_real(cr.view_as_complex(a) ** 2), lambda a: torch.view_as_real(
        torch.view_as_complex(a) ** 2), x)
    with pytest.raises(RuntimeError, match="last dimension is 2"):
        cr.view_as_complex(cr.zeros(3))


def test_counting_functions():
    idx = [0, 3, 1, 1, 5]
    _same(cr.bincount(cr.tensor(idx)), torch.bincount(torch.tensor(idx)))
    _same(cr.bincount(cr.tensor(idx), minlength=8), torch.bincount(torch.tensor(idx), minlength=8))
    w = [0.5, 1.0, 2.0, 0.25, 1.0]
    _same(cr.bincount(cr.tensor(idx), cr.tensor(w, dtype=cr.float64)),
          torch.bincount(torch.tensor(idx), torch.tensor(w, dtype=torch.float64)))
    v = [1.0, 2.0, 1.0, 2.9, -1.0, 3.0]
    for kw in (dict(bins=4, min=0, max=3), dict(bins=3)):
        _same(cr.histc(cr.tensor(v), **kw), torch.histc(torch.tensor(v), **kw))


@pytest.mark.parametrize("name,args", [
    ("clamp_min", (0.1,)), ("clamp_max", (0.1,)), ("erfc", ()), ("absolute", ()), ("sgn", ()), ("asinh", ()),
    ("logcumsumexp", (1,)), ("swapdims", (0, 1)), ("tensor_split", (2,)), ("unflatten", (1, (1, 3))),
    ("is_floating_point", ()), ("diag_embed", ()),
])
def test_methods_as_torch_functions(name, args):
    x = RNG.normal(size=(2, 3))
    ours, theirs = getattr(cr, name)(cr.tensor(x), *args), getattr(torch, name)(torch.tensor(x), *args)
    if isinstance(theirs, bool):
        assert ours == theirs
        return
    for a, b in zip(ours if isinstance(ours, tuple) else [ours], theirs if isinstance(theirs, tuple) else [theirs],
                    strict=True):
        _same(a, b)


def test_median_of_a_tensor_is_pytorchs_and_axis_keeps_numpys():
    x = RNG.normal(size=(3, 4))
    _same(cr.median(cr.tensor(x)), torch.median(torch.tensor(x)))  # even count: the lower middle value
    ours, theirs = cr.median(cr.tensor(x), 1), torch.median(torch.tensor(x), 1)
    _same(ours.values, theirs.values)
    _same(ours.indices, theirs.indices)
    np.testing.assert_allclose(cr.median(cr.tensor(x), axis=1).numpy(), np.median(x, axis=1))
    np.testing.assert_allclose(np.median(cr.tensor(x)).numpy(), np.median(x))
    # NumPy values under a transform keep NumPy's meaning (the mean of the two middle values)
    np.testing.assert_allclose(cr.grad(lambda a: cr.median(a))(x[0]), cr.grad(lambda a: np.median(a))(x[0]))


def test_torch_func_transforms_return_tensors_given_tensors():
    from chainrule import func

    x, t = RNG.normal(size=3), torch.tensor(RNG.normal(size=3))
    ours = cr.tensor(t.numpy())
    f_cr, f_t = (lambda a: (a.sin() * a).sum()), (lambda a: (a.sin() * a).sum())
    for name in ("grad", "jacrev", "jacfwd", "hessian"):
        got, want = getattr(func, name)(f_cr)(ours), getattr(torch.func, name)(f_t)(t)
        assert isinstance(got, cr.Tensor), name
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    out, fn = func.vjp(lambda a: a.sin(), ours)
    (ct,) = fn(cr.ones(3, dtype=cr.float64))
    assert isinstance(out, cr.Tensor) and isinstance(ct, cr.Tensor)
    np.testing.assert_allclose(ct.numpy(), np.cos(t.numpy()))
    primal, tangent = func.jvp(lambda a: a.sin(), (ours,), (cr.ones(3, dtype=cr.float64),))
    assert isinstance(tangent, cr.Tensor)
    g, value = func.grad_and_value(f_cr)(ours)
    assert isinstance(g, cr.Tensor) and isinstance(value, cr.Tensor)
    assert isinstance(func.grad(lambda a: (a * a).sum())(x), np.ndarray)  # NumPy in, NumPy out (JAX's way)


def test_nanmedian_is_pytorchs_with_its_gradients():
    d = np.array([[1.0, np.nan, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0], [5.0, np.nan, np.nan, 2.0]])
    ours, theirs = cr.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    a, b = cr.nanmedian(ours), torch.nanmedian(theirs)  # 3 twice: the gradient shared, as PyTorch's
    _same(a, b)
    a.backward()
    b.backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    ours, theirs = cr.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    a, b = ours.nanmedian(1), torch.nanmedian(theirs, 1)
    _same(a.values, b.values)
    _same(a.indices, b.indices)
    (a.values * cr.tensor([1.0, 2.0, 3.0], dtype=cr.float64)).sum().backward()
    (b.values * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    np.testing.assert_allclose(cr.nanmedian(cr.tensor(d), axis=1).numpy(), np.nanmedian(d, axis=1))


def test_sort_nonzero_and_gradient_of_a_tensor_read_as_pytorchs():
    # through `import chainrule as torch`, NumPy's readings were silent: two rows unpack as (values, indices)
    x = np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0]])
    values, indices = cr.sort(cr.tensor(x))
    want = torch.sort(torch.tensor(x))
    _same(values, want.values)
    _same(indices, want.indices)
    np.testing.assert_array_equal(cr.sort(cr.tensor(x), axis=0).numpy(), np.sort(x, axis=0))  # NumPy's keyword
    _same(cr.nonzero(cr.tensor(x)), torch.nonzero(torch.tensor(x)))
    _same(cr.tensor(x).nonzero(), torch.tensor(x).nonzero())
    for a, b in zip(cr.tensor(x).nonzero(as_tuple=True), torch.tensor(x).nonzero(as_tuple=True), strict=True):
        np.testing.assert_array_equal(np.asarray(a), b.numpy())
    assert isinstance(np.nonzero(cr.tensor(x)), tuple)  # numpy.nonzero keeps NumPy's reading
    v = np.array([1.0, 4.0, 9.0, 16.0])
    for kw in ({}, {"spacing": 2.0}, {"spacing": [cr.tensor([0.0, 1.0, 3.0, 4.0], dtype=cr.float64)]}):
        tkw = {k: ([torch.tensor(s.numpy()) for s in w] if isinstance(w, list) else w) for k, w in kw.items()}
        (ours,), (theirs,) = cr.gradient(cr.tensor(v), **kw), torch.gradient(torch.tensor(v), **tkw)
        _same(ours, theirs)
    assert isinstance(cr.gradient(v), np.ndarray) and isinstance(cr.gradient(cr.tensor(v), 2.0), cr.Tensor)


def test_methods_as_functions_take_out():
    a, z = cr.tensor([1.0, 2.0]), cr.zeros(2)
    assert cr.mul(a, a, out=z) is z and z.tolist() == [1.0, 4.0]
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        cr.mul(cr.tensor([1.0], requires_grad=True), 2.0, out=cr.zeros(1))


def test_squeeze_of_a_dimension_of_another_size_keeps_it_as_pytorchs():
    x = RNG.normal(size=(2, 1, 3))
    for args, kw in [((0,), {}), ((1,), {}), (((0, 1),), {}), ((), {"dim": -1}), ((), {})]:
        _same(cr.tensor(x).squeeze(*args, **kw), torch.tensor(x).squeeze(*args, **kw))
    _same(cr.squeeze(cr.tensor(x), 0), torch.squeeze(torch.tensor(x), 0))
    with pytest.raises(ValueError, match="axis 0 has size 2, not 1"):
        np.squeeze(cr.tensor(x), axis=0)  # NumPy's reading raises, as NumPy's


def test_a_negative_order_norm_with_a_zero_entry_is_zero():
    v = np.array([1.0, 0.0, 2.0])
    ours, theirs = cr.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
    _same(ours.norm(-1), theirs.norm(-1))  # it ignored the zero: 2/3
    ours.norm(-1).backward()
    theirs.norm(-1).backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    with np.errstate(divide="ignore"):
        want = np.linalg.norm(v, -2)
    assert float(cr.linalg.norm(cr.tensor(v), -2)) == want == 0.0


@pytest.mark.parametrize("rcond", [1.0, 0.3, 1e-15])
def test_pinverse_rcond_cuts_small_singular_values_as_pytorchs(rcond):
    x = np.array([[1.0, 2.0, 2.0, 1.0], [3.0, 0.0, -1.0, 3.0]])  # singular values 4.5 and 2.3: rcond 1 cuts both
    _grads(lambda a: a.pinverse(rcond), lambda a: a.pinverse(rcond), x)
    np.testing.assert_allclose(np.linalg.pinv(cr.tensor(x), rcond=rcond).numpy(), np.linalg.pinv(x, rcond=rcond))


def test_equal_meshgrid_and_atleast_of_tensors_read_as_pytorchs():
    a, b = RNG.normal(size=2), RNG.normal(size=3)
    assert cr.equal(cr.tensor(a), cr.tensor(a)) is torch.equal(torch.tensor(a), torch.tensor(a)) is True
    assert cr.equal(cr.tensor(a), cr.tensor(b)) is torch.equal(torch.tensor(a), torch.tensor(b)) is False
    np.testing.assert_array_equal(np.equal(cr.tensor(a), cr.tensor(a)).numpy(), [True, True])  # numpy's: per entry
    for ours, theirs in zip(cr.meshgrid(cr.tensor(a), cr.tensor(b)),
                            torch.meshgrid(torch.tensor(a), torch.tensor(b), indexing="ij"), strict=True):
        _same(ours, theirs)  # PyTorch's default indexing, 'ij' (it was NumPy's 'xy': the grids transposed)
    assert [g.shape for g in cr.meshgrid([cr.tensor(a), cr.tensor(b)])] == [(2, 3), (2, 3)]
    assert [g.shape for g in cr.meshgrid(a, b)] == [g.shape for g in np.meshgrid(a, b)] == [(3, 2), (3, 2)]
    ours = cr.atleast_2d(cr.tensor(1.0), cr.tensor(a))
    assert [t.shape for t in ours] == [t.shape for t in torch.atleast_2d(torch.tensor(1.0), torch.tensor(a))]


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 5), (2, 3, 4, 4)])
def test_softmax_without_dim_chooses_as_pytorch(shape):
    from chainrule.nn import functional as F

    x = RNG.normal(size=shape)
    for name in ("softmax", "log_softmax"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's deprecation of the implicit choice
            want = getattr(torch.nn.functional, name)(torch.tensor(x))
        if len(shape) <= 2:
            _same(getattr(F, name)(cr.tensor(x)), want)
        else:  # the last axis would silently differ: PyTorch's choice, with its warning
            with pytest.warns(cr.ChainruleWarning, match="implicit dimension choice"):
                _same(getattr(F, name)(cr.tensor(x)), want)


def test_a_jit_replay_never_freezes_what_a_host_function_read():
    @cr.jit
    def f(x):
        return x * cr.bucketize(x, cr.tensor([0.5])).astype(np.float64)

    np.testing.assert_allclose(f(np.array([0.2, 0.9])), [0.0, 0.9])
    np.testing.assert_allclose(f(np.array([0.9, 0.2])), [0.9, 0.0])  # (it replayed the first call's buckets)


def test_chain_matmul_of_one_matrix_is_a_new_tensor():
    a = cr.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = cr.chain_matmul(a)
    assert out is not a and not np.shares_memory(out.numpy(), a.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's deprecation of chain_matmul
        _same(out, torch.chain_matmul(torch.tensor(a.numpy())))


def test_add_takes_alpha_as_pytorchs():
    """torch.add(input, other, alpha=a) is input + a * other (chainrule's add refused alpha=; the method took it)."""
    x, y = np.array([1.0, -2.0]), np.array([3.0, 0.5])
    for call in (lambda lib, a, b: lib.add(a, b, alpha=2.5), lambda lib, a, b: lib.add(input=a, other=b, alpha=-1),
                 lambda lib, a, b: lib.add(a, 3, alpha=0.5)):
        c, t = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        cb, tb = cr.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
        rc, rt = call(cr, c, cb), call(torch, t, tb)
        np.testing.assert_allclose(rc.detach().numpy(), rt.detach().numpy())
        rc.sum().backward()
        rt.sum().backward()
        for ours, theirs in ((c.grad, t.grad), (cb.grad, tb.grad)):
            assert (ours is None) == (theirs is None)
            if ours is not None:
                np.testing.assert_allclose(ours.numpy(), theirs.numpy())
