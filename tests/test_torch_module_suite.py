"""PyTorch's own module database (``torch.testing._internal.common_modules.module_db``: nn.Linear, the convolutions,
pools, norms, losses, activations, recurrent layers, transformers, padding layers, ...) run through a thin adapter
onto chainrule: each float64 sample's module is built by ``chainrule.nn.<Name>`` with the same arguments (torch
tensors become chainrule's), PyTorch's parameters and buffers are loaded into it through ``load_state_dict``, and
the forward values, the state after the forward (BatchNorm's running statistics), the ``state_dict`` keys, the
gradients of a random cotangent in the inputs and every parameter, and the second-order gradients are compared.

Importing ``module_db`` freezes PyTorch's global flags (``torch.backends``) for the rest of the process, so a child
process draws the samples (seeded) and hands them over pickled. The focused tests below are the differences the
sweep found, each failing on the code before its fix."""

from __future__ import annotations

import functools
import pickle
import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

pytestmark = pytest.mark.oracle

SAMPLES_PER_MODULE = 4  # the first samples of each entry (and mode, where training and eval differ)
SECOND_ORDER_SAMPLES = 2  # of which the second-order gradients are compared for the first ones

# entries left out of the sweep, and why
LEFT_OUT: dict[str, str] = {}
# entries whose gradients are left out of the sweep (their values are compared), and why
VALUES_ONLY = {
    "CTCLoss": "PyTorch's kernel returns the gradient in the logits under log_softmax (exp(log_probs) more than the "
               "derivative in log_probs, which chainrule's is); equal through log_softmax (tests/test_ctc_loss.py)",
}


# -- the samples, drawn in a child process ---------------------------------------------------------------------
def _draw_samples() -> list[dict]:
    from torch.testing._internal.common_modules import module_db  # (freezes torch.backends: child process only)

    out = []
    for info in module_db:
        for training in (True, False) if info.train_and_eval_differ else (True,):
            torch.manual_seed(0)
            inputs = info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=True,
                                             training=training)
            for index, sample in enumerate(inputs[:SAMPLES_PER_MODULE]):
                out.append({"name": info.module_cls.__name__, "training": training, "index": index,
                            "desc": sample.desc, "lazy": info.is_lazy, "gradgrad": info.supports_gradgrad,
                            "constructor": (sample.constructor_input.args, sample.constructor_input.kwargs),
                            "forward": (sample.forward_input.args, sample.forward_input.kwargs)})
    return out


@functools.cache
def _samples() -> tuple[list[dict], str]:
    child = subprocess.run([sys.executable, __file__], capture_output=True, timeout=300, check=False)
    if child.returncode:
        return [], child.stderr.decode()[-5000:]
    return pickle.loads(child.stdout), ""  # noqa: S301  (our own child's output)


def _cases() -> list:
    if __name__ == "__main__":  # (the child draws the samples: it must not start another)
        return []
    samples, error = _samples()
    if error:
        return [pytest.param(None, id="module_db-unavailable")]
    cases = []
    for s in samples:
        name, id_ = s["name"], f"{s['name']}-{'train' if s['training'] else 'eval'}-{s['index']}"
        if name in LEFT_OUT:
            continue
        cases.append(pytest.param(s, id=id_))
    return cases


# -- the adapter ---------------------------------------------------------------------------------------------
_DTYPES = {torch.float64: cr.float64, torch.float32: cr.float32, torch.int64: cr.int64, torch.bool: cr.bool}


def _to_cr(x, leaves=None):
    """A sample's argument for chainrule: tensors become chainrule's (those requiring grad appended to ``leaves``),
    torch's dtypes, functions and layers chainrule's."""
    if isinstance(x, torch.Tensor):
        t = cr.tensor(x.detach().numpy().copy(), requires_grad=x.requires_grad)
        if leaves is not None and x.requires_grad:
            leaves.append(t)
        return t
    if isinstance(x, torch.dtype):
        return _DTYPES[x]
    if isinstance(x, torch.nn.TransformerEncoderLayer):  # rebuilt from its settings (its weights are loaded later)
        return cr.nn.TransformerEncoderLayer(
            x.self_attn.embed_dim, x.self_attn.num_heads, x.linear1.out_features, x.dropout.p, _to_cr(x.activation),
            x.norm1.eps, x.self_attn.batch_first, x.norm_first, x.linear1.bias is not None)
    if isinstance(x, torch.nn.Module):
        return getattr(cr.nn, type(x).__name__)()
    if isinstance(x, (tuple, list)):
        return type(x)(_to_cr(v, leaves) for v in x)
    if isinstance(x, dict):
        return {k: _to_cr(v, leaves) for k, v in x.items()}
    if callable(x) and not isinstance(x, type):
        return getattr(cr.nn.functional, x.__name__)
    return x


def _fresh(x, leaves):
    """A sample's argument for PyTorch: new leaves (appended to ``leaves``), so that each case starts clean."""
    if isinstance(x, torch.Tensor):
        t = x.detach().clone().requires_grad_(x.requires_grad)
        if x.requires_grad:
            leaves.append(t)
        return t
    if isinstance(x, (tuple, list)):
        return type(x)(_fresh(v, leaves) for v in x)
    if isinstance(x, dict):
        return {k: _fresh(v, leaves) for k, v in x.items()}
    return x


def _flat(out):
    return [o for part in out for o in _flat(part)] if isinstance(out, (tuple, list)) else [out]


def _array(x):
    if x is None:
        return None
    if isinstance(x, torch.Tensor):
        return np.zeros(tuple(x.shape)) if x._is_zerotensor() else x.detach().numpy()
    return np.asarray(x.detach().numpy() if isinstance(x, cr.Tensor) else x)


def _assert_same(what, ours, theirs, rtol, atol):
    assert len(ours) == len(theirs), f"{what}: {len(ours)} values, PyTorch {len(theirs)}"
    for i, (o, t) in enumerate(zip(ours, theirs)):
        a, b = _array(o), _array(t)
        if a is None or b is None:  # an unused leaf: None on one side is zeros on the other
            assert not np.any(a if b is None else b), f"{what}[{i}]: None against nonzero values"
            continue
        assert a.shape == b.shape, f"{what}[{i}]: shape {a.shape}, PyTorch {b.shape}"
        assert a.dtype == b.dtype, f"{what}[{i}]: dtype {a.dtype}, PyTorch {b.dtype}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{what}[{i}]")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{what}[{i}]")


def _pair(sample):
    """The PyTorch module and its chainrule twin, built alike and holding the same parameters and buffers."""
    name, training = sample["name"], sample["training"]
    (cargs, ckwargs), (fargs, fkwargs) = sample["constructor"], sample["forward"]
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*cargs, **ckwargs).to(torch.float64).train(training)
    ours = getattr(cr.nn, name)(*_to_cr(cargs), **_to_cr(ckwargs))
    ours.to(cr.float64).train(training)
    if sample["lazy"]:  # sized by a first forward, then loaded as every layer
        with torch.no_grad():
            theirs(*_fresh(fargs, []), **_fresh(fkwargs, []))
        with cr.no_grad():
            ours(*_to_cr(fargs), **_to_cr(fkwargs))
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict()), "state_dict keys"
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    return theirs, ours


@pytest.mark.filterwarnings("ignore")  # (the samples hold NaNs and deprecated settings: both libraries warn)
@pytest.mark.parametrize("sample", _cases())
def test_module_db_sample_agrees_with_pytorch(sample):
    """Values, state after the forward, gradients in the inputs and parameters (and second order on the first
    samples) agree with PyTorch's, to float64 rounding."""
    if sample is None:
        pytest.fail("the child process could not draw PyTorch's module_db samples:\n" + _samples()[1])
    theirs, ours = _pair(sample)
    fargs, fkwargs = sample["forward"]
    tleaves, cleaves = [], []
    with sdpa_kernel([SDPBackend.MATH]):  # (PyTorch's fused CPU attention has no second derivative)
        tout = _flat(theirs(*_fresh(fargs, tleaves), **_fresh(fkwargs, tleaves)))
    cout = _flat(ours(*_to_cr(fargs, cleaves), **_to_cr(fkwargs, cleaves)))
    _assert_same("forward", cout, tout, 1e-6, 1e-8)
    tstate, cstate = theirs.state_dict(), ours.state_dict()
    _assert_same("state after the forward", [cstate[k] for k in tstate], list(tstate.values()), 1e-6, 1e-8)
    if sample["name"] in VALUES_ONLY:
        return
    names = [n for n, _ in theirs.named_parameters()]
    cparams = dict(ours.named_parameters())
    tl, cl = tleaves + [p for _, p in theirs.named_parameters()], cleaves + [cparams[n] for n in names]
    live = [i for i, o in enumerate(tout) if isinstance(o, torch.Tensor) and o.requires_grad]
    if not live:
        return
    rng = np.random.default_rng(sample["index"])
    cots = [rng.normal(size=tuple(tout[i].shape)) for i in live]
    tg = torch.autograd.grad([tout[i] for i in live], tl, [torch.tensor(c) for c in cots], create_graph=True,
                             allow_unused=True)
    assert all(getattr(cout[i], "requires_grad", False) for i in live), "an output PyTorch differentiates is constant"
    cg = cr.autograd.grad([cout[i] for i in live], cl, [cr.tensor(c) for c in cots], create_graph=True,
                          allow_unused=True)
    _assert_same("gradient (inputs, then " + ", ".join(names) + ")", cg, tg, 1e-5, 1e-7)
    if sample["index"] >= SECOND_ORDER_SAMPLES or not sample["gradgrad"]:
        return
    second = [(i, rng.normal(size=tuple(g.shape))) for i, g in enumerate(tg) if g is not None and g.requires_grad]
    if not second:
        return
    try:
        tg2 = torch.autograd.grad(sum((tg[i] * torch.tensor(v)).sum() for i, v in second), tl, allow_unused=True)
    except RuntimeError:  # PyTorch's kernel has no second derivative (the multi-class margin losses)
        return
    # a chainrule gradient without a graph is constant in the leaves (PyTorch may still link it): it adds 0
    terms = [(cg[i] * cr.tensor(v)).sum() for i, v in second if cg[i] is not None and cg[i].requires_grad]
    cg2 = cr.autograd.grad(sum(terms[1:], terms[0]), cl, allow_unused=True) if terms else [None] * len(cl)
    _assert_same("second-order gradient", cg2, tg2, 1e-5, 1e-7)


def test_the_sweep_covers_module_db():
    """Every module_db entry but those LEFT_OUT has a chainrule twin, and the sweep checks most samples."""
    samples, error = _samples()
    assert not error, error
    names = {s["name"] for s in samples}
    assert len(names) >= 110
    assert {n for n in names if not hasattr(cr.nn, n)} == set(LEFT_OUT)
    assert len(_cases()) >= 380


# -- the differences the sweep found -----------------------------------------------------------------------------
def _both(build, *arrays, grad=True):
    """``build(lib)(*inputs)`` on PyTorch and chainrule: values, and gradients of the sum of squares."""
    results = []
    for lib in (torch, cr):
        xs = [lib.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out = build(lib)(*xs)
        value = out.detach().numpy()
        if grad:
            diff = [x for x in xs if x.requires_grad]
            grads = lib.autograd.grad((out * out).sum(), diff)
            value = (value, *[g.numpy() for g in grads])
        results.append(value)
    return results


def test_prelu_of_a_0d_input_is_0d():
    """PReLU's one slope has shape (1,): the output of a 0-d input broadcast to (1,) (PyTorch's stays 0-d)."""
    (tv, tg), (cv, cg) = _both(lambda lib: lib.nn.PReLU().double(), np.array(-2.0))
    assert cv.shape == tv.shape == () and cg.shape == ()
    np.testing.assert_allclose(cv, tv)
    np.testing.assert_allclose(cg, tg)


@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")
def test_kl_div_of_a_negative_or_nan_target_is_nan_as_pytorchs():
    """The target's log was taken where it is above 0 only: a negative target gave a finite loss, a NaN target a
    finite gradient (PyTorch's xlogy gives NaN in both); 0 log 0 stays 0."""
    x, t = np.array([0.3, -0.5, 0.7, 0.2]), np.array([0.0, -1.0, 0.5, np.nan])
    results = []
    for lib in (torch, cr):
        xs, ts = lib.tensor(x, requires_grad=True), lib.tensor(t, requires_grad=True)
        out = lib.nn.KLDivLoss(reduction="none")(xs, ts)
        results.append((out.detach().numpy(), lib.autograd.grad(out.sum(), ts)[0].numpy()))
    (tv, tg), (cv, cg) = results
    np.testing.assert_allclose(cv, tv, equal_nan=True)
    np.testing.assert_allclose(cg[1:], tg[1:], equal_nan=True)  # (at 0: PyTorch's 0/0, chainrule's -input)


@pytest.mark.parametrize("name,args", [("CrossEntropyLoss", ()), ("NLLLoss", ()), ("BCELoss", ()),
                                       ("BCEWithLogitsLoss", ()), ("MultiLabelSoftMarginLoss", ()),
                                       ("MultiMarginLoss", (1, 1.0))])
def test_a_loss_class_weight_is_a_buffer_as_pytorchs(name, args):
    """The class weight was a plain attribute: missing from state_dict (a PyTorch checkpoint did not load with
    strict=True) and not moved by to(); MultiMarginLoss refused weight= (its third argument in PyTorch)."""
    w = np.array([0.5, 2.0, 1.0])
    theirs = getattr(torch.nn, name)(*args, weight=torch.tensor(w))
    ours = getattr(cr.nn, name)(*args, weight=cr.tensor(w))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    ours.load_state_dict({"weight": 2 * w})
    np.testing.assert_array_equal(np.asarray(ours.weight), 2 * w)
    assert ours.to(cr.float32).weight.dtype == np.float32
    assert list(getattr(cr.nn, name)().state_dict()) == []


def test_multi_margin_loss_weight_agrees_with_pytorch():
    x, y, w = np.random.default_rng(0).normal(size=(4, 3)), np.array([0, 2, 1, 2]), np.array([0.5, 2.0, 1.0])
    (tv, tg), (cv, cg) = _both(lambda lib: lambda a, b: lib.nn.MultiMarginLoss(2, 0.5, lib.tensor(w))(a, b), x, y)
    np.testing.assert_allclose(cv, tv, rtol=1e-12)
    np.testing.assert_allclose(cg, tg, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated:UserWarning")
@pytest.mark.parametrize("build", [lambda lib: lib.nn.CrossEntropyLoss(None, None, 1),
                                   lambda lib: lib.nn.NLLLoss(size_average=False),
                                   lambda lib: lib.nn.CrossEntropyLoss(reduce=False)],
                         ids=["positional", "sum", "none"])
def test_weighted_losses_take_pytorchs_positional_order_and_legacy_reduction(build):
    """CrossEntropyLoss(weight, size_average, ignore_index, reduce, reduction, ...): chainrule's order was weight,
    ignore_index, reduction, so a positional call meant something else, and size_average= was refused."""
    x, y = np.random.default_rng(1).normal(size=(5, 3)), np.array([0, 2, 1, 1, 2])
    (tv, tg), (cv, cg) = _both(build, x, y)
    np.testing.assert_allclose(cv, tv, rtol=1e-12)
    np.testing.assert_allclose(cg, tg, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated:UserWarning")
@pytest.mark.parametrize("name,args,kwargs", [("MSELoss", (), {"size_average": False}), ("L1Loss", (None, False), {}),
                                              ("SmoothL1Loss", (None, None, "sum", 0.5), {}),
                                              ("KLDivLoss", (None, None, "batchmean", True), {}),
                                              ("HuberLoss", ("sum", 0.3), {})])
def test_pointwise_losses_take_pytorchs_positional_order_and_legacy_reduction(name, args, kwargs):
    """MSELoss, L1Loss, SmoothL1Loss and KLDivLoss refused size_average=/reduce= and read their first positional
    argument as reduction (PyTorch's is size_average): now PyTorch's order, and a reduction there raises."""
    rng = np.random.default_rng(12)
    x, t = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    theirs = getattr(torch.nn, name)(*args, **kwargs)(torch.tensor(x), torch.tensor(t)).numpy()
    ours = getattr(cr.nn, name)(*args, **kwargs)(cr.tensor(x), cr.tensor(t)).numpy()
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    if name != "HuberLoss":
        with pytest.raises(TypeError, match=rf"{name}: the first argument is size_average .* pass reduction='sum'"):
            getattr(cr.nn, name)("sum")


@pytest.mark.parametrize("layer", ["Softmax", "LogSoftmax", "Softmin"])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_of_a_0d_input_along_dim_0_or_minus_1(layer, dim):
    """It raised 'axis 0 is out of bounds'; PyTorch normalises the one entry (softmax 1, log_softmax 0)."""
    (tv, tg), (cv, cg) = _both(lambda lib: getattr(lib.nn, layer)(dim), np.array(0.7))
    assert cv.shape == ()
    np.testing.assert_allclose(cv, tv)
    np.testing.assert_allclose(cg, tg, atol=1e-15)


@pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")
@pytest.mark.parametrize("layer", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 2)])
def test_softmax_layer_without_dim_takes_pytorchs_implicit_dim(layer, shape):
    """nn.Softmax() normalised the last axis always; PyTorch's implicit choice (F.softmax's in chainrule too) is
    axis 0 of a 3-d input and 1 of a 4-d one: the layer silently differed there. Now it warns as F.softmax does."""
    x = np.random.default_rng(13).normal(size=shape)
    theirs = getattr(torch.nn, layer)()(torch.tensor(x)).numpy()
    if len(shape) > 2:
        with pytest.warns(UserWarning, match="implicit dimension choice"):
            ours = getattr(cr.nn, layer)()(cr.tensor(x)).numpy()
    else:
        ours = getattr(cr.nn, layer)()(cr.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_identity_ignores_its_arguments_as_pytorchs():
    """nn.Identity(54, unused_argument1=0.1) (PyTorch's documented example) raised TypeError."""
    assert cr.nn.Identity(54, unused_argument1=0.1, unused_argument2=False)(cr.tensor([1.0])).tolist() == [1.0]


def test_batch_norm_of_an_empty_batch_in_training():
    """It raised 'expected more than 1 value per channel'; PyTorch gives the empty output and keeps the running
    statistics (one value per channel still raises)."""
    for lib in (torch, cr):
        bn = lib.nn.BatchNorm1d(5).double()
        x = lib.tensor(np.zeros((0, 5, 9)), requires_grad=True)
        y = bn(x)
        y.sum().backward()
        assert tuple(y.shape) == (0, 5, 9) and tuple(x.grad.shape) == (0, 5, 9)
        np.testing.assert_array_equal(np.asarray(bn.running_mean), np.zeros(5))
        np.testing.assert_array_equal(np.asarray(bn.running_var), np.ones(5))
        with pytest.raises((ValueError, RuntimeError), match="more than 1 value per channel"):
            bn(lib.tensor(np.ones((1, 5))))


def test_group_norm_takes_bias_false():
    """GroupNorm(..., bias=False) (PyTorch's keyword: the weight alone) raised TypeError."""
    x = np.random.default_rng(2).normal(size=(2, 4, 3))
    (tv, tg), (cv, cg) = _both(lambda lib: lib.nn.GroupNorm(2, 4, bias=False).double(), x)
    assert cr.nn.GroupNorm(2, 4, bias=False).bias is None
    assert list(cr.nn.GroupNorm(2, 4, bias=False).state_dict()) == ["weight"]
    np.testing.assert_allclose(cv, tv, rtol=1e-10)
    np.testing.assert_allclose(cg, tg, rtol=1e-8, atol=1e-14)


def test_gaussian_nll_loss_var_with_a_size_1_dim_as_pytorchs():
    """var of shape (1, 3) for an input (4, 3) (one variance per feature, shared by the batch) raised; PyTorch
    takes a var with the input's shape but 1 in one dim."""
    rng = np.random.default_rng(3)
    x, t, v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.uniform(0.5, 2, size=(1, 3))
    (tv, *tg), (cv, *cg) = _both(lambda lib: lib.nn.GaussianNLLLoss(), x, t, v)
    np.testing.assert_allclose(cv, tv, rtol=1e-12)
    for c, g in zip(cg, tg):
        np.testing.assert_allclose(c, g, rtol=1e-12)
    with pytest.raises(ValueError, match="does not fit input"):
        cr.nn.GaussianNLLLoss()(cr.tensor(x), cr.tensor(t), cr.tensor(rng.uniform(0.5, 2, size=(1, 1))))


def test_a_layer_called_with_input_keyword():
    """layer(input=x) (PyTorch's name of every layer's first argument) raised 'unexpected keyword argument'."""
    x = np.random.default_rng(4).normal(size=(2, 3))
    torch.manual_seed(0)
    theirs = torch.nn.Linear(3, 2).double()
    ours = cr.nn.Linear(3, 2).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(ours(input=cr.tensor(x)).numpy(), theirs(input=torch.tensor(x)).detach().numpy())
    np.testing.assert_allclose(cr.nn.MSELoss()(input=cr.tensor(x), target=cr.tensor(x + 1)).numpy(), 1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'inputs'"):
        ours(inputs=cr.tensor(x))


@pytest.mark.parametrize("name,args,shape", [("LazyConv1d", (4, 3), (2, 3, 7)), ("LazyLinear", (4,), (2, 3)),
                                             ("LazyConvTranspose2d", (2, 3), (1, 3, 4, 4)),
                                             ("LazyBatchNorm1d", (), (4, 3))])
def test_a_lazy_layer_converted_before_its_first_input_keeps_the_dtype(name, args, shape):
    """lazy.to(float64) before the first forward was forgotten when the weights were made (float32): the float64
    input was then refused; PyTorch's placeholders keep the dtype they were moved to."""
    layer = getattr(cr.nn, name)(*args).to(cr.float64)
    y = layer(cr.tensor(np.random.default_rng(5).normal(size=shape)))
    assert y.dtype == cr.float64
    assert all(p.dtype == np.float64 for p in layer.parameters())
    assert all(b.dtype == np.float64 for _, b in layer.named_buffers() if b.dtype.kind == "f")


@pytest.mark.parametrize("out_features,bias,probabilities", [((), False, False), ((2, 3), True, False),
                                                              ((2,), True, True)])
def test_linear_cross_entropy_agrees_with_pytorch(out_features, bias, probabilities):
    """PyTorch 2.13's LinearCrossEntropyLoss and F.linear_cross_entropy were missing (module_db's largest entry)."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(4, 5))
    target = (rng.dirichlet(np.ones(3), size=(4, *out_features)).transpose(0, -1, *range(1, len(out_features) + 1))
              if probabilities else rng.integers(0, 3, size=(4, *out_features)))
    results, state = [], {}
    for lib in (torch, cr):
        torch.manual_seed(0)
        loss = lib.nn.LinearCrossEntropyLoss(5, 3, out_features=out_features, bias=bias, label_smoothing=0.1,
                                             weight=lib.tensor([1.0, 2.0, 0.5])).double()
        if lib is cr:
            loss.load_state_dict(state)
        state = {k: v.detach().numpy().copy() for k, v in loss.state_dict().items()}
        xs = lib.tensor(x, requires_grad=True)
        value = loss(xs, lib.tensor(target))
        params = [xs, *loss.parameters()]
        results.append([value.detach().numpy(), *[g.numpy() for g in lib.autograd.grad(value, params)]])
    for c, t in zip(*results[::-1]):
        np.testing.assert_allclose(c, t, rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="ignore_index cannot be given when target holds class probabilities"):
        cr.nn.functional.linear_cross_entropy(cr.tensor(x), cr.tensor(rng.normal(size=(3, 5))),
                                              cr.tensor(np.full((4, 3), 1 / 3)), ignore_index=0)


@pytest.mark.parametrize("add_bias_kv,add_zero_attn", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("need_weights", [True, False])
def test_attention_with_an_extra_key_and_value_agrees_with_pytorch(add_bias_kv, add_zero_attn, need_weights):
    """MultiheadAttention(add_bias_kv=True or add_zero_attn=True) raised NotImplementedError: PyTorch appends the
    learned bias_k/bias_v, then a zero key and value, after the projection, and pads the masks."""
    rng = np.random.default_rng(7)
    q, kv = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    mask, pad = rng.random((3, 5)) < 0.3, np.array([[False] * 4 + [True], [False] * 5])
    results, state = [], {}
    for lib in (torch, cr):
        torch.manual_seed(0)
        mha = lib.nn.MultiheadAttention(4, 2, batch_first=True, add_bias_kv=add_bias_kv,
                                        add_zero_attn=add_zero_attn).double()
        if lib is cr:
            mha.load_state_dict(state)
        state = {k: v.detach().numpy().copy() for k, v in mha.state_dict().items()}
        xs = [lib.tensor(a, requires_grad=True) for a in (q, kv)]
        out, weights = mha(xs[0], xs[1], xs[1], attn_mask=lib.tensor(mask), key_padding_mask=lib.tensor(pad),
                           need_weights=need_weights)
        grads = lib.autograd.grad((out * out).sum(), [*xs, *mha.parameters()])
        results.append([out.detach().numpy(), *(() if weights is None else (weights.detach().numpy(),)),
                        *[g.numpy() for g in grads]])
    for c, t in zip(*results[::-1]):
        np.testing.assert_allclose(c, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("bidirectional,batch_first,bias,state", [(False, False, True, False),
                                                                   (True, True, False, True)])
def test_projected_lstm_agrees_with_pytorch(bidirectional, batch_first, bias, state):
    """LSTM(proj_size=P) raised ValueError; PyTorch's projected LSTM multiplies each new state by weight_hr_l{k}
    (P, hidden_size): the output, h0 and h_n have P values, c0 and c_n hidden_size."""
    rng = np.random.default_rng(8)
    d = 2 if bidirectional else 1
    x = rng.normal(size=(2, 4, 3) if batch_first else (4, 2, 3))
    hx = (rng.normal(size=(2 * d, 2, 2)), rng.normal(size=(2 * d, 2, 5)))
    results, state_dict = [], {}
    for lib in (torch, cr):
        torch.manual_seed(0)
        lstm = lib.nn.LSTM(3, 5, num_layers=2, bias=bias, batch_first=batch_first, bidirectional=bidirectional,
                           proj_size=2).double()
        if lib is cr:
            lstm.load_state_dict(state_dict)
        state_dict = {k: v.detach().numpy().copy() for k, v in lstm.state_dict().items()}
        leaves = [lib.tensor(a, requires_grad=True) for a in (x, *hx)]
        out, (h, c) = lstm(leaves[0], tuple(leaves[1:]) if state else None)
        total = (out * out).sum() + (h * h).sum() + (c * c * c).sum()
        grads = lib.autograd.grad(total, [*leaves[:3 if state else 1], *lstm.parameters()])
        results.append([a.detach().numpy() for a in (out, h, c, *grads)])
    assert "weight_hr_l1" in state_dict and state_dict["weight_hr_l1"].shape == (2, 5)
    for ours, theirs in zip(*results[::-1]):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("d,shape,kernel,size", [(2, (2, 3, 7, 9), (2, 3), (4, 3)), (3, (2, 2, 6, 7, 8), (2, 2, 3),
                                                                                       (3, 4, 2)),
                                                 (2, (3, 5, 5), 2, None)])
def test_fractional_max_pool_agrees_with_pytorch(d, shape, kernel, size):
    """FractionalMaxPool2d/3d and their functions were missing. With PyTorch's samples (one per plane and axis,
    read width first in 2-d, time first in 3-d) the windows, values, indices and gradients are PyTorch's."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=shape)
    u = rng.random((1 if len(shape) == d + 1 else shape[0], shape[-d - 1], d))
    results = []
    for lib in (torch, cr):
        xs = lib.tensor(x, requires_grad=True)
        pool = getattr(lib.nn, f"FractionalMaxPool{d}d")(kernel, output_size=size, output_ratio=None if size else 0.5,
                                                          return_indices=True, _random_samples=lib.tensor(u))
        out, indices = pool(xs)
        (g,) = lib.autograd.grad((out * out * out).sum(), [xs])
        results.append([out.detach().numpy(), np.asarray(indices), g.numpy()])
        assert list(pool.state_dict()) == ["_random_samples"]
    for ours, theirs in zip(*results[::-1]):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_fractional_max_pool_draws_its_windows_without_samples():
    x = cr.tensor(np.random.default_rng(10).normal(size=(2, 3, 9, 9)), requires_grad=True)
    pool = cr.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.6), rng=0)
    out = pool(x)
    assert out.shape == (2, 3, 4, 5) and list(pool.state_dict()) == []
    out.sum().backward()
    assert x.grad.numpy().sum() == 2 * 3 * 4 * 5  # each output's gradient reaches one input
    with pytest.raises(ValueError, match="FractionalMaxPool2d: pass output_size or output_ratio"):
        cr.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="does not fit input"):
        cr.nn.functional.fractional_max_pool2d(x, 3, output_size=8)


@pytest.mark.parametrize("sparse", [False, True])
def test_embedding_takes_pytorchs_scale_grad_by_freq_sparse_weight_and_freeze(sparse):
    """Embedding(scale_grad_by_freq=, sparse=, _weight=, _freeze=) raised TypeError (F.embedding's two flags
    NotImplementedError): each row's gradient is divided by its index's count; sparse is PyTorch's storage of the
    same gradient (dense here)."""
    table, idx = np.random.default_rng(11).normal(size=(5, 3)), np.array([[0, 2, 2], [4, 2, 0]])
    grads = []
    for lib in (torch, cr):
        emb = lib.nn.Embedding(5, 3, padding_idx=4, scale_grad_by_freq=not sparse, sparse=sparse,
                               _weight=lib.tensor(table))
        out = emb(lib.tensor(idx))
        (out * out * lib.tensor(np.arange(3.0))).sum().backward()
        g = emb.weight.grad
        grads.append(g.to_dense().numpy() if getattr(g, "is_sparse", False) else g.numpy())
        np.testing.assert_array_equal(np.asarray(out.detach().numpy()), table[idx])
        assert not lib.nn.Embedding(5, 3, _weight=lib.tensor(table), _freeze=True).weight.requires_grad
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
    assert grads[1][2, 1] != 0 and not grads[1][4].any()  # (the padding row has no gradient)
    with pytest.raises(ValueError, match="scale_grad_by_freq is not supported with sparse gradients"):
        cr.nn.Embedding(5, 3, scale_grad_by_freq=True, sparse=True)(np.array([1, 1]))


@pytest.mark.parametrize("name,args", [("Linear", (3, 4, False, "cpu")), ("LayerNorm", (4, 1e-5, True, False, "cpu")),
                                       ("RMSNorm", (4, None, True, "cpu")),
                                       ("MultiheadAttention", (4, 2, 0.0, True, True, True, 3, 5, True, "cpu"))])
def test_layers_take_pytorchs_positional_order(name, args):
    """Linear's, LayerNorm's and RMSNorm's positional order had dtype where PyTorch has device, and
    MultiheadAttention's batch_first where PyTorch has add_bias_kv: MultiheadAttention(8, 2, 0.0, True, True) was
    silently batch-first."""
    theirs = getattr(torch.nn, name)(*args, torch.float64)
    ours = getattr(cr.nn, name)(*args, cr.float64)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert all(p.dtype == np.float64 for p in ours.parameters())
    if name == "MultiheadAttention":
        assert ours.batch_first and ours.add_zero_attn and (ours.kdim, ours.vdim) == (3, 5)


@pytest.mark.parametrize("kwargs", [{"scale_factor": 2}, {"scale_factor": 1.7}, {"size": (7, 3)},
                                    {"scale_factor": (2.5, 0.6)}, {"size": 1},
                                    {"scale_factor": 1.7, "recompute_scale_factor": True}],
                         ids=["x2", "x1.7", "size", "per_axis", "size_1", "recomputed"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_upsampling_agrees_with_pytorch(kwargs, align_corners):
    """interpolate(mode='bicubic') and Upsample(mode='bicubic') raised NotImplementedError: PyTorch's cubic kernel
    (a = -0.75, the neighbours clamped to the edge, source positions not clamped at 0) as one matrix per axis."""
    x = np.random.default_rng(14).normal(size=(2, 3, 5, 4))
    results = []
    for lib in (torch, cr):
        xs = lib.tensor(x, requires_grad=True)
        out = lib.nn.Upsample(mode="bicubic", align_corners=align_corners, **kwargs)(xs)
        (g,) = lib.autograd.grad((out * out).sum(), [xs], create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), [xs])
        results.append([out.detach().numpy(), g.detach().numpy(), h.numpy()])
    for ours, theirs in zip(*results[::-1]):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_containers_take_pytorchs_none_and_argument_names():
    """ModuleList(None) and ParameterList(None) raised TypeError (PyTorch's default is None), and
    ParameterDict(parameters=...) (PyTorch's keyword) was refused."""
    assert len(cr.nn.ModuleList(None)) == len(torch.nn.ModuleList(None)) == 0
    assert len(cr.nn.ParameterList(None)) == len(torch.nn.ParameterList(None)) == 0
    assert list(cr.nn.ParameterDict(parameters={"w": np.ones(2)})) == ["w"]


if __name__ == "__main__":  # the child process: module_db's samples, pickled to stdout
    sys.stdout.buffer.write(pickle.dumps(_draw_samples()))
