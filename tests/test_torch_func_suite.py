"""chainrule.func against torch.func 2.13 on the spellings of PyTorch's functorch tests and tutorials.

Each program is written once over ``(T, F, nn)``: run with ``(torch, torch.func, torch.nn)`` it gives the
oracle, with ``(chainrule, chainrule.func, chainrule.nn)`` the result checked (values, shapes, and that
Tensors come back where PyTorch returns Tensors).
"""

import copy

import numpy as np
import pytest

import chainrule as cr
import chainrule.func
import chainrule.nn

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal(3), RNG.standard_normal(3)
X, Y = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 3))


def t(T, a):
    return T.tensor(np.asarray(a, dtype=np.float64))


def plain(v):
    """A result as NumPy arrays (tagged, so that an array where PyTorch gives a Tensor is caught) and Python values."""
    if isinstance(v, torch.Tensor):
        return ("Tensor", v.detach().numpy())
    if isinstance(v, cr.Tensor):
        return ("Tensor", np.asarray(v.detach()._data))
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return ("array", v)
    return v


def assert_same(expected, got, where="result"):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and got[0] == expected[0], f"{where}: {expected[0]} expected, got {got!r:.60}"
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-7, atol=1e-9, err_msg=where)
        assert got[1].shape == expected[1].shape, where
    elif isinstance(expected, dict):
        assert sorted(got) == sorted(expected), where
        for k in expected:
            assert_same(expected[k], got[k], f"{where}[{k!r}]")
    elif isinstance(expected, list):
        assert len(got) == len(expected), where
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_same(e, g, f"{where}[{i}]")
    else:
        assert got == expected, where


def linear(T, nn, n_in=3, n_out=2, seed=1):
    m = nn.Linear(n_in, n_out).double()
    with T.no_grad():
        m.weight.copy_(t(T, np.sin(np.arange(n_in * n_out) + seed).reshape(n_out, n_in)))
        m.bias.copy_(t(T, np.cos(np.arange(n_out) + seed)))
    return m


def per_sample_gradients(T, F, nn):
    """The per-sample-gradients tutorial: vmap(grad(compute_loss), in_dims=(None, None, 0, 0))."""
    model = nn.Sequential(linear(T, nn, 3, 4, 1), nn.Tanh(), linear(T, nn, 4, 2, 2))
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = F.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return nn.functional.cross_entropy(predictions, target.unsqueeze(0))

    targets = T.tensor(np.array([0, 1, 1, 0, 1]))
    return F.vmap(F.grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, t(T, X), targets)


def model_ensembling(T, F, nn):
    """The model-ensembling tutorial: stack_module_state + functional_call + vmap, same and different minibatches."""
    models = [nn.Sequential(linear(T, nn, 3, 4, i), nn.ReLU(), linear(T, nn, 4, 2, 10 + i)) for i in range(3)]
    params, buffers = F.stack_module_state(models)
    base = copy.deepcopy(models[0])
    if T is torch:
        base = base.to("meta")

    def fmodel(params, buffers, x):
        return F.functional_call(base, (params, buffers), (x,))

    same_batch = F.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, t(T, X))
    own_batches = F.vmap(fmodel)(params, buffers, t(T, np.stack([X, Y, 2 * X])))
    return same_batch, own_batches, params["0.weight"].requires_grad, params["0.weight"].is_leaf


def batchnorm_ensemble(T, F, nn):
    """An ensemble whose buffers differ (BatchNorm's running statistics, eval mode): vmap over stacked buffers
    (batch_norm read batched running statistics as a NumPy array and raised)."""
    models = []
    for i in range(3):
        m = nn.BatchNorm1d(3).double().eval()
        with T.no_grad():  # [:] = rather than copy_: chainrule's running statistics are NumPy arrays
            m.running_mean[:] = t(T, X[i])
            m.running_var[:] = t(T, np.abs(Y[i]) + 1)
        models.append(m)
    params, buffers = F.stack_module_state(models)
    return F.vmap(lambda p, b, x: F.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, t(T, X))


PROGRAMS = {
    "batchnorm_ensemble": batchnorm_ensemble,
    "per_sample_gradients_tutorial": per_sample_gradients,
    "model_ensembling_tutorial": model_ensembling,
    # vmap results are Tensors when given Tensors (they came back as NumPy arrays)
    "vmap_returns_tensors": lambda T, F, nn: F.vmap(T.sin)(t(T, X)),
    "vmap_grad": lambda T, F, nn: F.vmap(F.grad(lambda x: x.sin().sum()))(t(T, X)),
    "vmap_out_dims_tuple": lambda T, F, nn: F.vmap(lambda x: (x * 2, x.sum()), out_dims=(1, 0))(t(T, X)),
    # keyword arguments are passed unbatched (they were batched along axis 0, JAX's rule)
    "vmap_kwargs_unbatched": lambda T, F, nn: F.vmap(lambda x, scale=1.0: x * scale)(t(T, X), scale=t(T, 3.0)),
    "vmap_kwarg_with_batch_sized_dim": lambda T, F, nn: F.vmap(lambda x, w: x * w.sum())(t(T, X), w=t(T, Y)),
    "vmap_chunk_size": lambda T, F, nn: F.vmap(T.sin, chunk_size=2)(t(T, X)),
    "vmap_randomness_same_without_random": lambda T, F, nn: F.vmap(T.sin, randomness="same")(t(T, X)),
    # index_put under vmap (it read the batched value's ._data and raised AttributeError)
    "vmap_index_put": lambda T, F, nn: F.vmap(lambda x, v: x.index_put((T.tensor([0, 2]),), v))(
        t(T, X), t(T, A[:1].repeat(5) + np.arange(5))),
    # vjp's aux output is Tensors (it was NumPy arrays)
    "vjp_has_aux": lambda T, F, nn: (lambda o, fn, aux: (o, fn(t(T, B)), aux))(
        *F.vjp(lambda x: (x.sin(), {"c": x.cos()}), t(T, A), has_aux=True)),
    # spellings that crashed: jacrev(chunk_size=), jacfwd(randomness=), linearize, stack_module_state
    "jacrev_chunk_size": lambda T, F, nn: F.jacrev(lambda x: x.outer(x), chunk_size=1)(t(T, A)),
    "jacfwd_randomness": lambda T, F, nn: F.jacfwd(T.sin, randomness="error")(t(T, A)),
    "linearize": lambda T, F, nn: (lambda out, fn: (out, fn(t(T, B), t(T, A))))(
        *F.linearize(lambda x, y: x * y.sin(), t(T, A), t(T, B))),
    "grad_argnums_has_aux": lambda T, F, nn: F.grad(lambda x, y: ((x * y).sum(), y.cos()), argnums=(1, 0),
                                                    has_aux=True)(t(T, A), t(T, B)),
}


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node")  # torch.func.linearize's own tracing
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_matches_torch_func(name):
    program = PROGRAMS[name]
    expected = plain(program(torch, torch.func, torch.nn))
    assert_same(expected, plain(program(cr, chainrule.func, chainrule.nn)))


def draws_under_vmap(T, F, **options):
    return F.vmap(lambda x: x * 0 + T.rand(3, dtype=T.float64), **options)(t(T, X))


@pytest.mark.oracle
def test_random_draw_under_vmap_is_refused_by_default():
    with pytest.raises(RuntimeError):
        draws_under_vmap(torch, torch.func)
    # it silently gave every example the same numbers
    with pytest.raises(RuntimeError, match=r"vmap: a random function .* randomness='same'"):
        draws_under_vmap(cr, chainrule.func)
    with pytest.raises(RuntimeError, match="vmap"):
        chainrule.func.vmap(lambda x: nn_dropout()(x))(cr.ones(4, 3))


def nn_dropout():
    return chainrule.nn.Dropout(0.5)


@pytest.mark.oracle
def test_randomness_same_shares_one_draw():
    torch_out, cr_out = draws_under_vmap(torch, torch.func, randomness="same"), draws_under_vmap(
        cr, chainrule.func, randomness="same")
    assert tuple(cr_out.shape) == tuple(torch_out.shape) == (5, 3)
    assert bool((cr_out == cr_out[0]).all()) and bool((torch_out == torch_out[0]).all())


def test_randomness_different_is_refused_with_the_fix():
    with pytest.raises(NotImplementedError, match=r"vmap\(randomness='different'\).*outside vmap"):
        chainrule.func.vmap(cr.sin, randomness="different")
    with pytest.raises(ValueError, match="randomness must be"):
        chainrule.func.vmap(cr.sin, randomness="sometimes")
    with pytest.raises(ValueError, match="chunk_size"):
        chainrule.func.jacrev(cr.sin, chunk_size=0)


@pytest.mark.oracle
@pytest.mark.parametrize("values, strict", [({"bias": B[:2]}, True), ({"bias": B[:2], "weight": A[:2]}, False)])
def test_functional_call_refusals_are_runtime_errors(values, strict):
    """PyTorch raises RuntimeError for a missing name under strict=True (chainrule raised a bare ValueError).
    A name the module lacks PyTorch sets as an unused attribute; chainrule refuses it (a misspelt name
    would silently leave the module's own value in use), also as a RuntimeError."""
    values = dict(values)
    if not strict:
        values = {"bias": B[:2], "nope": A}
        torch.func.functional_call(linear(torch, torch.nn), {k: t(torch, v) for k, v in values.items()}, t(torch, X))
    else:
        with pytest.raises(RuntimeError):
            torch.func.functional_call(linear(torch, torch.nn), {k: t(torch, v) for k, v in values.items()},
                                       t(torch, X), strict=True)
    with pytest.raises(RuntimeError, match="nope" if not strict else "strict=True"):
        chainrule.func.functional_call(linear(cr, chainrule.nn), {k: t(cr, v) for k, v in values.items()},
                                       t(cr, X), strict=strict)


@pytest.mark.oracle
@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd", "hessian"])
def test_integer_input_is_refused_as_torch_func_does(transform):
    """chainrule's transforms (JAX's rules) gave an integer input a floating gradient; torch.func refuses it."""
    def f(x, y):
        return (x * y).sum()

    with pytest.raises((RuntimeError, ValueError)):  # grad and jacrev raise the one, jacfwd and hessian the other
        getattr(torch.func, transform)(f)(torch.tensor([1, 2]), torch.ones(2))
    with pytest.raises(TypeError, match=rf"{transform}: argument 0 holds a Tensor of dtype int64.*\.double\(\)"):
        getattr(chainrule.func, transform)(f)(cr.tensor([1, 2]), cr.ones(2))
    # an integer argument left out of argnums is fine
    assert getattr(chainrule.func, transform)(f, argnums=1)(cr.tensor([1, 2]), cr.ones(2)).shape[0] == 2


@pytest.mark.parametrize("body, message", [
    (lambda y: y.__setitem__(0, 0.0), r"x\[\.\.\.\] = value .* x = x\.at\[index\]\.set\(value\)"),
    (lambda y: y.mul_(2.0), r"mul_ changes a batched value in place.* x = x\.mul\(\.\.\.\)"),
])
def test_in_place_under_vmap_is_refused_with_the_fix(body, message):
    """torch.func allows these; chainrule's vmap keeps no views, so it refuses them clearly (an AttributeError or
    'does not support item assignment' before)."""
    def f(x):
        y = x * 1.0
        body(y)
        return y

    with pytest.raises(TypeError, match=message):
        chainrule.func.vmap(f)(cr.ones(4, 3))
    assert chainrule.func.vmap(lambda x: x.at[0].set(0.0))(cr.ones(2, 3)).tolist() == [[0.0, 1.0, 1.0]] * 2


def test_element_of_a_vector_is_a_view_as_in_pytorch():
    """t[0] of a vector is a 0-d view in PyTorch: an in-place change of it writes into t. NumPy gives a copy (a
    scalar), so y[0].sin_() left y unchanged, and PyTorch's test_inplace_on_view got a silently wrong gradient."""
    y = cr.tensor(np.array([0.3, -1.2, 0.8]))
    y[0].sin_()
    assert y.tolist() == [np.sin(0.3), -1.2, 0.8]
    y[1].zero_()
    assert y.tolist()[1] == 0.0

    def foo(x):  # PyTorch's test_inplace_on_view: in the graph the change of a view rebases y's history
        y = x.clone()
        y[0].sin_()
        return y.sum()

    np.testing.assert_allclose(chainrule.func.grad(foo)(cr.tensor([0.3, -1.2, 0.8])).numpy(), [np.cos(0.3), 1, 1],
                               rtol=1e-6)
