"""PyTorch as the oracle for the NumPy functions chainrule covers: values, gradients and
second derivatives (Hessian-vector products, double backward in PyTorch) of every case in
tests/op_cases.py that has a PyTorch twin; and, for every case with a twin (the first ops
included), Hessian-vector products forward over reverse against torch.func. Needs torch (the
``oracle`` marker)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
from op_cases import CASES, draw_inputs

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.oracle

EXAMPLES = int(os.environ.get("CHAINRULE_ORACLE_EXAMPLES", "3"))
NEW_CASES = [c for c in CASES if c.torch is not None and "first_ops" not in c.tags]  # the first ops: test_oracle_torch


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def weights(shapes, seed, like=None):
    """Normal draws of these shapes; complex where the array at the same place in ``like`` is complex."""
    rng = np.random.default_rng(seed)
    like = like or [np.zeros(()) for _ in shapes]
    return [rng.normal(size=s) + (1j * rng.normal(size=s) if np.iscomplexobj(a) else 0) for s, a in zip(
        shapes, like, strict=True)]


def conj(a):
    """PyTorch's gradient (and HVP) at complex inputs is the conjugate of chainrule's (JAX's) convention:
    df/dx + i df/dy against df/dx - i df/dy."""
    return np.conj(a)


def chainrule_side(case, arrays, params, ws, vs):
    """Values, gradient of sum(w * out), and its derivative along vs (reverse over reverse; at a complex input,
    along (re v, im v), which is re(g v) in chainrule's convention)."""

    def loss(*xs):
        outs = as_list(case.fn(*xs, **params))
        return sum(np.sum(o * w) for o, w in zip(outs, ws, strict=True))

    outs = [np.asarray(o.data if isinstance(o, cr.Tensor) else o) for o in as_list(case.fn(*arrays, **params))]
    nums = tuple(range(len(arrays)))
    grads = cr.grad(loss, argnums=nums)(*arrays)
    directional = lambda *xs: sum(np.sum(np.real(g * v) if np.iscomplexobj(v) else g * v)
                                  for g, v in zip(cr.grad(loss, argnums=nums)(*xs), vs, strict=True))
    second = cr.grad(directional, argnums=nums)(*arrays)
    return outs, list(grads), list(second)


def torch_side(case, arrays, params, ws, vs):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]  # float64, or complex128
    outs = as_list(case.torch(*ts, **params))
    loss = sum((o * torch.as_tensor(w)).sum() for o, w in zip(outs, ws, strict=True))
    grads = [None] * len(ts)
    if loss.requires_grad:
        grads = torch.autograd.grad(loss, ts, create_graph=True, allow_unused=True)
    grads = [g if g is not None else torch.zeros_like(t) for g, t in zip(grads, ts, strict=True)]
    directional = sum((g.conj() * torch.as_tensor(v)).real.sum() for g, v in zip(grads, vs, strict=True))
    second = torch.autograd.grad(directional, ts, allow_unused=True) if directional.requires_grad else [None] * len(ts)
    second = [s.numpy(force=True) if s is not None else np.zeros(t.shape) for s, t in zip(second, ts, strict=True)]
    return [o.numpy(force=True) for o in outs], [conj(g.numpy(force=True)) for g in grads], [conj(s) for s in second]


@pytest.mark.parametrize("case", NEW_CASES, ids=str)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("CHAINRULE_TEST_RANDOM"), database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_matches_pytorch(case, data):
    arrays, params = draw_inputs(case, data)
    shapes = [np.shape(np.asarray(o.data if isinstance(o, cr.Tensor) else o))
              for o in as_list(case.fn(*[cr.Tensor(a) for a in arrays], **params))]
    ws, vs = weights(shapes, 1), weights([a.shape for a in arrays], 2, arrays)
    outs, grads, second = chainrule_side(case, arrays, params, ws, vs)
    t_outs, t_grads, t_second = torch_side(case, arrays, params, ws, vs)
    tol = dict(rtol=1e-8 * case.tol, atol=1e-9 * case.tol)
    for k, (o, t) in enumerate(zip(outs, t_outs, strict=True)):
        assert o.shape == t.shape, f"output {k}: shape {o.shape}, torch {t.shape}"
        np.testing.assert_allclose(o, t, **tol, err_msg=f"value of output {k}")
    for k, (g, t) in enumerate(zip(grads, t_grads, strict=True)):
        np.testing.assert_allclose(g, t, **tol, err_msg=f"gradient of input {k}")
    for k, (g, t) in enumerate(zip(second, t_second, strict=True)):
        np.testing.assert_allclose(g, t, **tol, err_msg=f"second derivative (Hessian-vector product) of input {k}")


HVP_EXAMPLES = int(os.environ.get("CHAINRULE_ORACLE_HVP_EXAMPLES", "1"))  # the double-backward test draws more
# (torch.func.jvp needs PyTorch's forward mode, which some twins lack: their second derivatives are checked above)
TWINS = [c for c in CASES if c.torch is not None and "torch_reverse_only" not in c.tags]


@pytest.mark.parametrize("case", TWINS, ids=str)
@settings(max_examples=HVP_EXAMPLES, deadline=None, derandomize=not os.environ.get("CHAINRULE_TEST_RANDOM"),
          database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hvp_matches_torch_func(case, data):
    """cr.hvp (forward over reverse) of sum(w * out) against torch.func.jvp of torch.func.grad."""
    arrays, params = draw_inputs(case, data)
    shapes = [np.shape(np.asarray(o.data if isinstance(o, cr.Tensor) else o))
              for o in as_list(case.fn(*[cr.Tensor(a) for a in arrays], **params))]
    ws, vs = weights(shapes, 3), weights([a.shape for a in arrays], 4, arrays)

    def loss(*xs):
        return sum(np.sum(o * w) for o, w in zip(as_list(case.fn(*xs, **params)), ws, strict=True))

    def t_loss(*ts):
        outs = as_list(case.torch(*ts, **params))
        return sum((o * torch.as_tensor(w)).sum() for o, w in zip(outs, ws, strict=True))

    hv = cr.hvp(loss, tuple(arrays), tuple(vs))
    hv = [hv] if len(arrays) == 1 else list(hv)
    nums = tuple(range(len(arrays)))
    _, t_hv = torch.func.jvp(torch.func.grad(t_loss, argnums=nums), tuple(torch.tensor(a) for a in arrays),
                             tuple(torch.tensor(v) for v in vs))
    for k, (h, t) in enumerate(zip(hv, t_hv, strict=True)):
        np.testing.assert_allclose(h, conj(t.numpy(force=True)), rtol=1e-8 * case.tol, atol=1e-9 * case.tol,
                                   err_msg=f"Hessian-vector product, input {k}")


def test_enough_cases_have_a_pytorch_twin():
    assert len(NEW_CASES) >= 80
