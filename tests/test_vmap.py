"""vmap: axes, pytrees, nesting, composition with every transform, per-example gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

RNG = np.random.default_rng(0)
XS = RNG.normal(size=(4, 3))
A = RNG.normal(size=(3, 3))


def f(x):
    return np.sum(np.sin(x) * x) + x @ A @ x


def vec(x):
    return np.tanh(A @ x) * x[0]


def loop(fn, *args):
    return np.stack([np.asarray(fn(*a)) for a in zip(*args)])


# -- axes and pytrees ---------------------------------------------------------------------------------------
def test_in_axes_none_negative_and_out_axes():
    w = np.array([1.0, 2.0, 3.0])
    got = cr.vmap(lambda x, w: x * w, in_axes=(-1, None), out_axes=1)(XS.T, w)
    np.testing.assert_array_equal(got, (XS * w).T)
    got = cr.vmap(lambda x: x, in_axes=1)(XS)
    np.testing.assert_array_equal(got, XS.T)


def test_pytrees_in_and_out():
    params = {"w": XS, "b": np.arange(4.0)}
    out = cr.vmap(lambda p, c: {"y": p["w"] * p["b"] + c, "n": [np.sum(p["w"]), c]},
                  in_axes=({"w": 0, "b": 0}, None))(params, 2.0)
    np.testing.assert_array_equal(out["y"], XS * np.arange(4.0)[:, None] + 2.0)
    np.testing.assert_array_equal(out["n"][0], XS.sum(axis=1))
    np.testing.assert_array_equal(out["n"][1], np.full(4, 2.0))  # unbatched results are repeated
    out = cr.vmap(lambda t: t[0] + t[1], in_axes=((0, None),))((XS, np.ones(3)))
    np.testing.assert_array_equal(out, XS + 1)


def test_kwargs_are_batched_over_axis_0():
    np.testing.assert_array_equal(cr.vmap(lambda x, y=None: x * y)(XS, y=XS), XS * XS)


def test_nested_vmap():
    X = RNG.normal(size=(2, 4, 3))
    got = cr.vmap(cr.vmap(f))(X)
    np.testing.assert_allclose(got, [[f(x) for x in row] for row in X], rtol=1e-13)
    # inner over the other axis, and a constant of the outer level used inside the inner one
    got = cr.vmap(lambda m: cr.vmap(lambda row: np.sum(row * m[0]), in_axes=0)(m))(X)
    np.testing.assert_allclose(got, [[np.sum(r * m[0]) for r in m] for m in X], rtol=1e-13)
    got = cr.vmap(cr.vmap(lambda a, b: a @ b, in_axes=(0, None)), in_axes=(None, 0))(XS, X[:, 0])
    np.testing.assert_allclose(got, np.einsum("bj,ij->bi", X[:, 0], XS), rtol=1e-13)


# -- composition with transforms ----------------------------------------------------------------------------
def test_vmap_of_each_transform_equals_the_loop():
    for t in (cr.grad, cr.hessian, cr.jacfwd, cr.jacrev, cr.elementwise_grad):
        g = t(f) if t is not cr.elementwise_grad else t(np.sin)
        np.testing.assert_allclose(cr.vmap(g)(XS), loop(g, XS), rtol=1e-12, atol=1e-12)
    for t in (cr.jacfwd, cr.jacrev):
        np.testing.assert_allclose(cr.vmap(t(vec))(XS), loop(t(vec), XS), rtol=1e-12, atol=1e-12)
    vg = cr.vmap(cr.value_and_grad(f))(XS)
    np.testing.assert_allclose(vg[0], loop(f, XS), rtol=1e-13)
    np.testing.assert_allclose(vg[1], loop(cr.grad(f), XS), rtol=1e-13)
    tangents = RNG.normal(size=XS.shape)
    out, tan = cr.vmap(lambda x, t: cr.jvp(vec, (x,), (t,)))(XS, tangents)
    np.testing.assert_allclose(tan, loop(lambda x, t: cr.jvp(vec, (x,), (t,))[1], XS, tangents), rtol=1e-12)
    np.testing.assert_allclose(out, loop(vec, XS), rtol=1e-13)
    ct = RNG.normal(size=XS.shape)
    got = cr.vmap(lambda x, c: cr.vjp(vec, x)[1](c)[0])(XS, ct)
    np.testing.assert_allclose(got, loop(lambda x, c: cr.vjp(vec, x)[1](c)[0], XS, ct), rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(lambda x, t: cr.hvp(f, (x,), (t,)))(XS, ct),
                               loop(lambda x, t: cr.hvp(f, (x,), (t,)), XS, ct), rtol=1e-12)


def test_each_transform_of_vmap():
    batched = cr.vmap(f)
    np.testing.assert_allclose(cr.grad(lambda x: batched(x).sum())(XS), loop(cr.grad(f), XS), rtol=1e-13)
    jf, jr = cr.jacfwd(batched)(XS), cr.jacrev(batched)(XS)
    np.testing.assert_allclose(jf, jr, rtol=1e-12)
    np.testing.assert_allclose(np.einsum("bbi->bi", jr), loop(cr.grad(f), XS), rtol=1e-12)
    h = cr.hessian(lambda x: batched(x).sum())(XS)
    np.testing.assert_allclose(np.einsum("bibj->bij", h), loop(cr.hessian(f), XS), rtol=1e-12, atol=1e-12)
    _, tan = cr.jvp(batched, (XS,), (np.ones_like(XS),))
    np.testing.assert_allclose(tan, loop(lambda x: cr.grad(f)(x).sum(), XS), rtol=1e-12)


def test_vmap_of_hessian_is_stacked_hessians_and_nests():
    H = cr.vmap(cr.hessian(f))(XS)
    np.testing.assert_allclose(H, loop(cr.hessian(f), XS), rtol=1e-12, atol=1e-12)
    X = RNG.normal(size=(2, 4, 3))
    np.testing.assert_allclose(cr.vmap(cr.vmap(cr.grad(f)))(X), [loop(cr.grad(f), m) for m in X], rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.jacfwd(cr.grad(f)))(XS), loop(cr.hessian(f), XS), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cr.grad(lambda x: cr.vmap(cr.grad(f))(x).sum())(XS),
                               loop(lambda x: cr.hessian(f)(x).sum(axis=0), XS), rtol=1e-12)


def test_grad_inside_vmap_of_a_closure_over_the_batch():
    w = np.array([0.5, -1.0, 2.0])
    got = cr.vmap(lambda x: cr.grad(lambda w: np.sum(np.tanh(w * x)))(w))(XS)
    np.testing.assert_allclose(got, loop(lambda x: cr.grad(lambda w: np.sum(np.tanh(w * x)))(w), XS), rtol=1e-13)


def test_vmap_of_a_pullback_made_outside():
    out, pullback = cr.vjp(vec, XS[0])
    cts = np.eye(3)
    np.testing.assert_allclose(cr.vmap(lambda c: pullback(c)[0])(cts), cr.jacrev(vec)(XS[0]), rtol=1e-13)


# -- per-example gradients of an MLP --------------------------------------------------------------------------
def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    return -np.sum(y * cr.log_softmax(logits))


def test_per_example_gradients_of_an_mlp_equal_the_loop():
    params = {"W1": RNG.normal(size=(5, 8)), "b1": np.zeros(8), "W2": RNG.normal(size=(8, 3)), "b2": np.zeros(3)}
    x = RNG.normal(size=(6, 5))
    y = np.eye(3)[RNG.integers(0, 3, 6)]
    per = cr.vmap(cr.grad(mlp_loss), in_axes=(None, 0, 0))(params, x, y)
    for k in params:
        np.testing.assert_allclose(per[k], np.stack([cr.grad(mlp_loss)(params, a, b)[k] for a, b in zip(x, y)]),
                                   rtol=1e-12, atol=1e-14)
    # the same with an nn.Linear-style functional layer
    import chainrule.nn.functional as F

    def layer_loss(w, x):
        return np.sum(np.tanh(F.linear(x, w)) ** 2)

    w = RNG.normal(size=(4, 5))
    np.testing.assert_allclose(cr.vmap(cr.grad(layer_loss), in_axes=(None, 0))(w, x),
                               np.stack([cr.grad(layer_loss)(w, a) for a in x]), rtol=1e-12)


def test_vmap_with_tensors_records_the_graph():
    w = cr.Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    out = cr.vmap(lambda x: np.sum(x * w))(XS)
    assert isinstance(out, cr.Tensor) and out.shape == (4,)
    out.sum().backward()
    np.testing.assert_allclose(w.grad, XS.sum(axis=0))


# -- errors ---------------------------------------------------------------------------------------------------
def test_python_control_flow_on_a_batched_value_is_refused():
    with pytest.raises(TypeError, match=r"vmap: bool\(\) of a batched value.*np\.where"):
        cr.vmap(lambda x: x if x[0] > 0 else -x)(XS)
    with pytest.raises(TypeError, match=r"vmap: float\(\) of a batched value"):
        cr.vmap(lambda x: float(x[0]))(XS)
    with pytest.raises(TypeError, match="vmap: a batched value was converted to a NumPy array"):
        cr.vmap(lambda x: np.asarray(x))(XS)


def test_bad_axes_and_sizes_are_named():
    with pytest.raises(ValueError, match=r"vmap: in_axes 2 is out of range for an argument of shape \(4, 3\)"):
        cr.vmap(f, in_axes=2)(XS)
    with pytest.raises(ValueError, match=r"different batch sizes \[3, 4\]"):
        cr.vmap(lambda a, b: a + b)(XS, XS[:3])
    with pytest.raises(ValueError, match="no argument is batched"):
        cr.vmap(f, in_axes=None)(XS)
    with pytest.raises(ValueError, match="in_axes has 2 entries but the function got 1 arguments"):
        cr.vmap(f, in_axes=(0, 0))(XS)
    with pytest.raises(ValueError, match="out_axes is None for a result that differs per example"):
        cr.vmap(f, out_axes=None)(XS)
    with pytest.raises(NotImplementedError, match=r"vmap: numpy\.add\.reduceat has no batching rule"):
        cr.vmap(lambda x: np.add.reduceat(x, [0]))(XS)
    with pytest.raises(TypeError, match="grad: the function must return a scalar.*per example"):
        cr.vmap(cr.grad(lambda x: x * 2))(XS)


def test_ops_that_loop_are_listed_and_still_right():
    table = cr.batching.table()
    assert table["matmul"] == "contraction" and table["sum"] == "reduction" and table["getitem"] == "shape"
    assert table["inv"] == "linalg" and table["sin"] == "elementwise"
    assert table["nn.cross_entropy"] == "loop"


def test_vmapped_functions_pass_gradcheck_both_modes_second_order():
    X = RNG.uniform(0.5, 1.5, size=(3, 4))
    for fn in (f, lambda x: np.prod(x) * np.linalg.norm(x), lambda x: cr.softmax(x) @ np.cumsum(x),
               lambda x: np.linalg.det(np.outer(x, x) + np.eye(4))):
        assert cr.gradcheck(cr.vmap(fn if fn is not f else (lambda x: f(x[:3]))), X)


def test_has_aux_and_inner_axes_inside_vmap():
    (value, aux), g = cr.vmap(cr.value_and_grad(lambda x: (np.sum(x**2), x * 2), has_aux=True))(XS)
    np.testing.assert_allclose(value, (XS**2).sum(axis=1))
    np.testing.assert_allclose(aux, XS * 2)
    np.testing.assert_allclose(g, 2 * XS)
    X = RNG.normal(size=(2, 3, 4))  # outer over axis 0, inner over the (per-example) axis 1
    got = cr.vmap(cr.vmap(lambda col: np.sum(col**2), in_axes=1))(X)
    np.testing.assert_allclose(got, (X**2).sum(axis=1), rtol=1e-13)


def test_indexing_with_batched_integers():
    table = RNG.normal(size=(5, 3))
    idx = np.array([4, 0, 2, 2])
    np.testing.assert_array_equal(cr.vmap(lambda i: cr.Tensor(table)[i])(idx).data, table[idx])
    # NumPy's own indexing of an ndarray cannot be intercepted: the error gives the fix
    with pytest.raises(TypeError, match=r"use chainrule\.Tensor\(a\)\[i\]"):
        cr.vmap(lambda i: table[i])(idx)
    picked = cr.vmap(lambda x, i: x[i])(XS, np.array([0, 2, 1, 1]))
    np.testing.assert_array_equal(picked, XS[np.arange(4), [0, 2, 1, 1]])
    g = cr.grad(lambda t: np.sum(cr.vmap(lambda i: t[i] ** 2)(idx)))(table)  # t is a Tensor here
    np.testing.assert_allclose(g, cr.grad(lambda t: np.sum(t[idx] ** 2))(table))
    # advanced indices apart (NumPy puts their axes first): the batch axis stays first
    M = RNG.normal(size=(4, 3, 5, 2))
    got = cr.vmap(lambda m: m[[0, 2], :, [1, 0]])(M)
    np.testing.assert_array_equal(got, np.stack([m[[0, 2], :, [1, 0]] for m in M]))


def test_transforms_outside_and_inside_vmap_at_once():
    g2 = loop(lambda x: cr.grad(lambda x: cr.jacrev(vec)(x).sum())(x), XS)
    for jac in (cr.jacrev, cr.jacfwd):
        np.testing.assert_allclose(cr.grad(lambda x: cr.vmap(jac(vec))(x).sum())(XS), g2, rtol=1e-12)
    e = lambda x: np.sum(vec(x) ** 2)  # noqa: E731
    tan = cr.jvp(cr.vmap(cr.grad(e)), (XS,), (np.ones_like(XS),))[1]
    np.testing.assert_allclose(tan, loop(lambda x: cr.hvp(e, (x,), (np.ones(3),)), XS), rtol=1e-12)
    np.testing.assert_allclose(cr.vmap(cr.deriv(np.sin, 2))(np.array([0.1, 0.2])), -np.sin([0.1, 0.2]), rtol=1e-14)


def test_vmap_in_two_threads_at_once():
    import threading

    results, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                xs = XS * (k + 1)
                got = cr.vmap(cr.grad(f))(xs)
                np.testing.assert_allclose(got, loop(cr.grad(f), xs), rtol=1e-12)
            results[k] = True
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == {0: True, 1: True}


def test_a_batched_value_that_escapes_its_vmap_is_refused():
    kept = []
    cr.vmap(lambda x: kept.append(x) or x)(XS)
    with pytest.raises(TypeError, match="vmap: a batched value was used after its vmap returned"):
        np.sin(kept[0])


def test_axis_size_when_no_argument_is_batched():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(cr.vmap(lambda a: a * 2, in_axes=None, axis_size=2)(x), np.stack([2 * x, 2 * x]))
    np.testing.assert_array_equal(cr.vmap(lambda a, b: a * b, in_axes=(None, 0), axis_size=2)(x, np.array([1.0, 2.0])),
                                  np.stack([x, 2 * x]))
    with pytest.raises(ValueError, match=r"vmap: axis_size=2 but the batched arguments have batch size\(s\) \[3\]"):
        cr.vmap(lambda a: a * 2, axis_size=2)(x)


NESTED = {
    "dot": lambda a, b: np.dot(a, b),
    "einsum": lambda a, b: np.einsum("i,i->", a, b),
    "matmul": lambda a, b: np.matmul(a, b),
    "where": lambda a, b: np.where(a > 0.5, a, b),
    "maximum": lambda a, b: np.maximum(a, b),
    "concatenate": lambda a, b: np.concatenate([a, b]),
    "add": lambda a, b: np.add(a, b),
    "outer": lambda a, b: np.outer(a, b),
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_vmap_over_values_of_two_levels_equals_a_double_loop(name):
    # NumPy asks only the first Batched argument; it answered NotImplemented when an inner level's value came
    # later, and NumPy raised its raw "no implementation found ... Batched"
    f = NESTED[name]
    rng = np.random.default_rng(0)
    A, B = rng.random((2, 4)), rng.random((3, 4))
    ours = cr.vmap(lambda a: cr.vmap(lambda b: f(a, b))(B))(A)
    np.testing.assert_allclose(ours, np.array([[f(a, b) for b in B] for a in A]), rtol=1e-14)
    grads = cr.vmap(lambda a: cr.vmap(cr.grad(lambda b: np.sum(f(a, b) ** 2)))(B))(A)
    loop = np.array([[cr.grad(lambda b: np.sum(f(a, b) ** 2))(b) for b in B] for a in A])
    np.testing.assert_allclose(grads, loop, rtol=1e-12)


@pytest.mark.oracle
def test_per_example_gradients_of_a_model_through_functional_call_match_torch_func():
    torch = pytest.importorskip("torch")
    from chainrule import nn
    from chainrule.func import functional_call, grad, vmap

    model = nn.Sequential(nn.Linear(3, 4, dtype=np.float64, rng=0), nn.Tanh(), nn.Linear(4, 2, dtype=np.float64, rng=1))
    theirs_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    theirs_model.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))

    def loss(p, x, y):
        return ((functional_call(model, p, (x,)) - y) ** 2).sum()

    def torch_loss(p, x, y):
        return ((torch.func.functional_call(theirs_model, p, (x,)) - y) ** 2).sum()

    ours = vmap(grad(loss), in_dims=(None, 0, 0))({k: v.detach() for k, v in model.named_parameters()}, X, Y)
    theirs = torch.func.vmap(torch.func.grad(torch_loss), in_dims=(None, 0, 0))(
        {k: v.detach() for k, v in theirs_model.named_parameters()}, torch.tensor(X), torch.tensor(Y))
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        np.testing.assert_allclose(np.asarray(ours[k]), theirs[k].numpy(), rtol=1e-12, atol=1e-14)
    before = model[0].weight.numpy().copy()
    out = cr.func.functional_call(model, {"0.weight": np.zeros((4, 3))}, np.ones((1, 3)))  # one argument as is
    assert out.shape == (1, 2) and np.array_equal(model[0].weight.numpy(), before)  # the model is unchanged
    with pytest.raises(ValueError, match=r"\['0.wieght'\] name no parameter or buffer"):
        functional_call(model, {"0.wieght": np.zeros((4, 3))}, (np.ones((1, 3)),))


def test_functional_call_ties_shared_weights_and_batches_embedding_indices():
    from chainrule import nn
    from chainrule.func import functional_call

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False, dtype=np.float64)
            self.b = nn.Linear(2, 2, bias=False, dtype=np.float64)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    tied = Tied()
    two = 2 * np.eye(2)
    np.testing.assert_array_equal(functional_call(tied, {"a.weight": two}, (np.ones((1, 2)),)), [[4.0, 4.0]])
    untied = functional_call(tied, {"a.weight": two}, (np.ones((1, 2)),), tie_weights=False)
    np.testing.assert_allclose(untied, 2 * np.ones((1, 2)) @ tied.a.weight.numpy().T)
    emb = nn.Embedding(5, 3, dtype=np.float64, rng=0)
    rows = cr.vmap(lambda i: emb(i))(np.array([[1, 2], [4, 0]]))
    np.testing.assert_array_equal(rows, emb.weight.numpy()[[[1, 2], [4, 0]]])
    with pytest.raises(IndexError, match="index -1 is out of range"):
        cr.vmap(lambda i: emb(i))(np.array([[1, -1]]))


def test_pytorch_methods_that_read_one_example_work_inside_vmap():
    """x.dim(), x.numel() and x.frac() read the tensor's array (AttributeError on a batched value), and remainder
    by a Tensor cast its constant quotient with NumPy's copy= (TypeError); each is one example's now, as in
    torch.func."""
    xs = np.array([[1.5, -2.25, 0.5], [3.75, -0.5, 2.0]])

    def f(x):
        rem = cr.remainder(x, cr.tensor([0.7, 1.5, 2.0]) + 0.5)
        return (x.frac() ** 2).sum() * x.dim() + x.numel() + (rem**2).sum()

    got = cr.func.vmap(cr.func.grad(f))(cr.tensor(xs))
    for x, g in zip(xs, got.numpy()):
        np.testing.assert_allclose(g, cr.func.grad(f)(cr.tensor(x)).numpy())
    frac, rem = xs - np.trunc(xs), np.remainder(xs, np.array([1.2, 2.0, 2.5], dtype=np.float32))
    np.testing.assert_allclose(got.numpy(), 2 * frac * 1 + 2 * rem, rtol=1e-6)


@pytest.mark.oracle
def test_masked_fill_inside_vmap_matches_torch_func():
    """``a.masked_fill(mask, v)`` per example (attention masks in per-example code): the method was set outside the
    registry, so vmap's values lacked it (AttributeError)."""
    torch = pytest.importorskip("torch")
    x = np.arange(6.0).reshape(2, 3)
    mask = x > 2.5
    for lib, make in ((torch, torch.tensor), (cr, cr.tensor)):
        f = lambda a, k: a.masked_fill(k, -1.5)  # noqa: E731
        both = lib.func.vmap(f)(make(x), make(mask))
        one_mask = lib.func.vmap(f, in_dims=(0, None))(make(x), make(np.array([True, False, True])))
        grad = lib.func.grad(lambda a, f=f, lib=lib, make=make: (lib.func.vmap(f, in_dims=(0, None))(
            a, make(np.array([False, True, False]))) ** 2).sum())(make(x))
        got = [np.asarray(t.detach().numpy() if lib is torch else t.numpy()) for t in (both, one_mask, grad)]
        if lib is torch:
            want = got
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b)
