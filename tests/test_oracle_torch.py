"""PyTorch as the oracle: values and gradients of every op in the table, the tie and kink
conventions, and stability at +-1e4. Needs torch (the ``oracle`` marker; CI must not skip)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule import Tensor
from conftest import analytic_grads, weights_like
from op_specs import SPECS, as_list, call, draw_inputs

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

EXAMPLES = int(os.environ.get("CHAINRULE_TEST_EXAMPLES", "8"))


def test_the_oracle_is_the_pinned_pytorch():
    assert torch.__version__.split("+")[0] == "2.13.0", f"oracle tests expect torch 2.13.0, got {torch.__version__}"


def torch_values_and_grads(fn, arrays, seeds):
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    outs = as_list(fn(*ts))
    loss = sum(
        (o * torch.as_tensor(weights_like(o.detach().numpy(), s))).sum() for o, s in zip(outs, seeds, strict=True)
    )
    loss.backward()
    grads = [t.grad.numpy() if t.grad is not None else np.zeros(t.shape) for t in ts]
    return [o.detach().numpy() for o in outs], grads


def assert_matches_torch(fn, torch_fn, arrays, rtol=1e-10, atol=1e-12):
    outs, grads, seeds = analytic_grads(fn, arrays)
    t_outs, t_grads = torch_values_and_grads(torch_fn, arrays, seeds)
    assert len(outs) == len(t_outs)
    for k, (o, t) in enumerate(zip(outs, t_outs, strict=True)):
        assert o.shape == tuple(t.shape), f"output {k}: shape {o.shape}, torch {tuple(t.shape)}"
        assert o.dtype == t.dtype, f"output {k}: dtype {o.dtype}, torch {t.dtype}"
        np.testing.assert_allclose(o.data, t, rtol=rtol, atol=atol, err_msg=f"value of output {k}")
    for k, (g, t) in enumerate(zip(grads, t_grads, strict=True)):
        np.testing.assert_allclose(g, t, rtol=rtol, atol=atol, err_msg=f"gradient of input {k}")


@pytest.mark.parametrize("spec", [s for s in SPECS if s.torch is not None], ids=lambda s: s.name)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_values_and_gradients_match_torch(spec, data):
    arrays, params = draw_inputs(spec, data)
    assert_matches_torch(call(spec, params), lambda *ts: spec.torch(*ts, **params), arrays)


# -- ties, kinks and huge inputs: the same numbers as PyTorch ----------------------------------
TIE_CASES = {
    "maximum(x, x)": (lambda x: cr.maximum(x, x), lambda x: torch.maximum(x, x), [[-1.0, 0.0, 2.0]]),
    "minimum(x, x)": (lambda x: cr.minimum(x, x), lambda x: torch.minimum(x, x), [[-1.0, 0.0, 2.0]]),
    "maximum ties": (cr.maximum, torch.maximum, [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]]),
    "minimum ties": (cr.minimum, torch.minimum, [[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]]),
    "max ties": (lambda x: x.max(), torch.amax, [[1.0, 3.0, 3.0, 1.0]]),
    "min ties": (lambda x: x.min(), torch.amin, [[1.0, 3.0, 1.0, 1.0]]),
    "max ties axis": (
        lambda x: x.max(axis=1),
        lambda x: torch.amax(x, dim=1),
        [[[1.0, 4.0, 4.0], [2.0, 2.0, 2.0], [5.0, 0.0, 1.0]]],
    ),
    "abs at 0": (cr.abs, torch.abs, [[-2.0, 0.0, 3.0]]),
    "relu at 0": (cr.relu, torch.relu, [[-2.0, 0.0, 3.0]]),
    "sign": (cr.sign, torch.sign, [[-2.0, 0.0, 3.0]]),
    "clip at bounds": (
        lambda x: cr.clip(x, -1.0, 1.0),
        lambda x: torch.clamp(x, -1.0, 1.0),
        [[-3.0, -1.0, 0.0, 1.0, 3.0]],
    ),
    "clip with tensor bounds, ties and crossed bounds": (
        cr.clip,
        torch.clamp,
        [[-3.0, -1.0, 0.0, 1.0, 3.0, 0.5], [-1.0, -1.0, -1.0, -1.0, -1.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]],
    ),
    "sqrt at 0": (cr.sqrt, torch.sqrt, [[0.0, 4.0]]),
    "x**2 at 0": (lambda x: x**2, lambda x: x**2, [[0.0, -1.0]]),
    "x**y at x=0": (lambda x, y: x**y, torch.pow, [[0.0, 0.0], [2.0, 0.5]]),
    "prod with a zero": (lambda x: x.prod(), torch.prod, [[0.0, 2.0, 3.0]]),
    "prod with two zeros": (lambda x: x.prod(), torch.prod, [[0.0, 0.0, 3.0]]),
    # Tensor.median is PyTorch's: the lower middle entry of an even count, shared among its ties (no dim), or
    # the one its index picks (dim)
    "median, even count, ties": (lambda x: x.median(), torch.median, [[1.0, 3.0, 3.0, 1.0]]),
    "median dim, even count, ties": (
        lambda x: x.median(dim=1)[0],
        lambda x: torch.median(x, dim=1).values,
        [[[1.0, 4.0, 4.0, 2.0], [2.0, 2.0, 2.0, 2.0], [5.0, 0.0, 1.0, 0.0]]],
    ),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", list(TIE_CASES))
def test_ties_and_kinks_match_torch(name):
    fn, torch_fn, arrays = TIE_CASES[name]
    assert_matches_torch(fn, torch_fn, [np.array(a) for a in arrays], rtol=1e-14, atol=0)


HUGE = np.array([[1e4, -1e4, 0.0, 1e4], [-1e4, -1e4, -1e4, -1e4 + 1.0], [3.0, -1e4, 1e4 - 2.0, 2.0]])
HUGE_CASES = {
    "softmax": (lambda x: cr.softmax(x, axis=1), lambda x: torch.softmax(x, dim=1)),
    "softmax axis 0": (lambda x: cr.softmax(x, axis=0), lambda x: torch.softmax(x, dim=0)),
    "log_softmax": (lambda x: cr.log_softmax(x, axis=-1), lambda x: torch.log_softmax(x, dim=-1)),
    "logsumexp": (lambda x: cr.logsumexp(x, axis=1), lambda x: torch.logsumexp(x, dim=1)),
    "logsumexp all": (cr.logsumexp, lambda x: torch.logsumexp(x, dim=(0, 1))),
    "sigmoid": (cr.sigmoid, torch.sigmoid),
    "tanh": (cr.tanh, torch.tanh),
}


@pytest.mark.parametrize("name", list(HUGE_CASES))
def test_stable_at_1e4_like_torch(name):
    fn, torch_fn = HUGE_CASES[name]
    assert_matches_torch(fn, torch_fn, [HUGE], rtol=1e-12, atol=1e-12)


def test_float32_values_and_gradients_match_torch():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3)).astype(np.float32)
    w = rng.normal(size=(3, 2)).astype(np.float32)

    def model(x, w):
        return cr.log_softmax(cr.tanh(x @ w) * 2.0, axis=1).mean()

    xt, wt = Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)
    out = model(xt, wt)
    out.backward()
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tout = torch.log_softmax(torch.tanh(tx @ tw) * 2.0, dim=1).mean()
    tout.backward()
    assert out.dtype == np.float32 and xt.grad.dtype == np.float32 and wt.grad.dtype == np.float32
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-5)
    np.testing.assert_allclose(xt.grad.data, tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(wt.grad.data, tw.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_micrograd_style_scalar_program_matches_torch():
    """The Scalar engine against PyTorch on a program mixing every Scalar op."""
    from chainrule import Scalar

    def program(a, b, lib):
        c = a * b + a / (b - 3.0) - 2.0**a + b**a
        d = lib["tanh"](c) * lib["sigmoid"](a) + lib["exp"](b * 0.1) - lib["log"](b) + lib["sqrt"](b)
        e = lib["sin"](a) * lib["cos"](b) + lib["tan"](a * 0.3) + lib["relu"](c) + abs(a - b) - (-d)
        return e**2 / 3.0 + 1.0 / (1.0 + e**2)

    sa, sb = Scalar(0.7), Scalar(1.9)
    s_lib = {
        n: (lambda name: lambda v: getattr(v, name)())(n)
        for n in ("tanh", "sigmoid", "exp", "log", "sqrt", "sin", "cos", "tan", "relu")
    }
    out = program(sa, sb, s_lib)
    out.backward()
    ta = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(1.9, dtype=torch.float64, requires_grad=True)
    t_lib = {n: getattr(torch, n) for n in s_lib}
    tout = program(ta, tb, t_lib)
    tout.backward()
    assert out.data == pytest.approx(tout.item(), rel=1e-13)
    assert sa.grad == pytest.approx(ta.grad.item(), rel=1e-12)
    assert sb.grad == pytest.approx(tb.grad.item(), rel=1e-12)
