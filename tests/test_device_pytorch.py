"""PyTorch's spellings on the device under test (the strict double of CuPy, or a GPU): each call gives the CPU's
values and gradients, on the device, with no hidden host copy. Found by running a PyTorch user's usual calls on
the double: each of these failed there (a host array made inside, or a host 0-d constant mixed in)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from device_setup import NAME, backend, host, on_device

F = nn.functional
TOL = 1e-12 if NAME == "strict" else 1e-5
backend()


def _inputs(device):
    rng = np.random.default_rng(0)

    def t(*shape):
        return cr.tensor(rng.standard_normal(shape), device=device, requires_grad=True)

    def ints(values):
        return cr.tensor(np.array(values), device=device)

    return t, ints


# name -> call(t, ints): t(*shape) a float64 Tensor that requires grad, ints(values) an int64 Tensor
CALLS = {
    "topk": lambda t, i: t(3, 4).topk(2, dim=1),
    "kthvalue": lambda t, i: t(3, 4).kthvalue(2, dim=1),
    "cummax": lambda t, i: t(3, 4).cummax(1),
    "cummin": lambda t, i: t(3, 4).cummin(0),
    "scatter_value": lambda t, i: t(3, 4).scatter(1, i([[0], [1], [2]]), 0.5),
    "scatter_src": lambda t, i: t(3, 4).scatter(1, i([[0, 1], [1, 2], [2, 3]]), t(3, 2)),
    "scatter_add": lambda t, i: t(3, 4).scatter_add(1, i([[0], [1], [1]]), t(3, 1)),
    "index_add": lambda t, i: t(3, 4).index_add(0, i([0, 2]), t(2, 4)),
    "diag_embed": lambda t, i: t(2, 3).diag_embed(),
    "diag_embed_offset": lambda t, i: t(2, 3).diag_embed(offset=1),
    "one_hot": lambda t, i: F.one_hot(i([0, 2, 1]), 4),
    "hardtanh": lambda t, i: F.hardtanh(t(3, 4) * 2),
    "elu": lambda t, i: F.elu(t(3, 4)),
    "celu": lambda t, i: F.celu(t(3, 4), 0.5),
    "kl_div": lambda t, i: F.kl_div(t(3, 4).log_softmax(1), t(3, 4).softmax(1), reduction="batchmean"),
    "cosine_embedding": lambda t, i: F.cosine_embedding_loss(t(3, 4), t(3, 4), i([1, -1, 1])),
    "host_scalar_tensor": lambda t, i: t(3) * cr.tensor(2.0) + cr.tensor(np.float64(1.5)),
    "scatter_reduce_prod": lambda t, i: t(3, 4).scatter_reduce(1, i([[0, 0], [1, 2], [3, 3]]), t(3, 2), "prod"),
    "scatter_reduce_amax": lambda t, i: t(3, 4).scatter_reduce(0, i([[0, 1, 1, 2]]), t(1, 4), "amax",
                                                               include_self=False),
    "index_reduce_mean": lambda t, i: t(3, 4).index_reduce(0, i([0, 2, 0]), t(3, 4), "mean"),
    "index_copy": lambda t, i: t(3, 4).index_copy(1, i([3, 0]), t(3, 2)),
    "masked_scatter": lambda t, i: t(3, 4).masked_scatter(t(3, 4) > 0, t(12)),
    "unfold": lambda t, i: t(3, 5).unfold(1, 2, 2),
    "diagonal_scatter": lambda t, i: t(3, 4).diagonal_scatter(t(3), 1),
    "slice_scatter": lambda t, i: t(3, 4).slice_scatter(t(3, 2), 1, 0, None, 2),
    "renorm": lambda t, i: t(3, 4).renorm(2, 0, 1.0),
    "block_diag": lambda t, i: cr.block_diag(t(2, 2), t(3)),
    "matrix_exp": lambda t, i: t(2, 3, 3).matrix_exp(),
    # (the exponential of a small matrix: invertible, its triangles too)
    "lu_solve": lambda t, i: (lambda a: cr.linalg.lu_solve(*cr.linalg.lu_factor(a), t(3, 2)))(
        (t(3, 3) * 0.1).matrix_exp()),
    "solve_triangular": lambda t, i: cr.linalg.solve_triangular((t(3, 3) * 0.1).matrix_exp(), t(3, 2), upper=False),
    "cholesky_inverse": lambda t, i: cr.cholesky_inverse((t(3, 3) * 0.1).matrix_exp().tril()),
    "svd_older": lambda t, i: t(3, 2).svd()[1],
    "linalg_lu": lambda t, i: cr.linalg.lu((t(2, 3, 3) * 0.1).matrix_exp()),
    "inv_ex": lambda t, i: cr.linalg.inv_ex((t(3, 3) * 0.1).matrix_exp()),
    "cholesky_solve": lambda t, i: cr.cholesky_solve(t(3, 2), (t(3, 3) * 0.1).matrix_exp().tril()),
    "triangular_solve": lambda t, i: cr.triangular_solve(t(3, 2), (t(3, 3) * 0.1).matrix_exp()),
    "select_scatter": lambda t, i: t(3, 4).select_scatter(t(4), 0, 1),
    "histogram": lambda t, i: t(10).detach().histogram(4),
    "gcd_shift": lambda t, i: (i([12, 18]).gcd(i([8, 27])), i([1, 2]) << i([2, 1])),
    "unravel_index": lambda t, i: cr.unravel_index(i([5, 7]), (2, 4)),
}


def _outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, cr.Tensor)]


def _run(call, device):
    cr.manual_seed(0)
    t, ints = _inputs(device)
    made = []

    def tracked(*shape):
        made.append(t(*shape))
        return made[-1]

    outs = _outputs(call(tracked, ints))
    live = [o for o in outs if o.requires_grad]
    if live:
        total = sum((o * o).sum() for o in live)
        total.backward()
    return outs, [m.grad for m in made]


@pytest.mark.parametrize("name", CALLS)
def test_a_pytorch_call_on_the_device_equals_the_cpu(name):
    want, want_grads = _run(CALLS[name], "cpu")
    got, got_grads = _run(CALLS[name], NAME)
    for g, w in zip(got, want, strict=True):
        assert on_device(g), name
        assert g.dtype == w.dtype, name
        np.testing.assert_allclose(host(g), w.numpy(), rtol=TOL, atol=TOL, err_msg=name)
    for g, w in zip(got_grads, want_grads, strict=True):
        if w is None:
            assert g is None
            continue
        assert on_device(g), name
        np.testing.assert_allclose(host(g), w.numpy(), rtol=TOL, atol=TOL, err_msg=name)


def test_new_tensor_is_on_the_tensors_device_as_pytorchs():
    x = cr.tensor(np.ones(2), device=NAME)
    y = x.new_tensor([1.0, 2.0])
    assert on_device(y) and y.dtype == x.dtype and host(y).tolist() == [1.0, 2.0]
    assert x.new_tensor([1, 2], device="cpu").device == "cpu"


def test_in_place_draws_fill_a_device_tensor_there():
    x = cr.tensor(np.zeros(1000), device=NAME)
    x.uniform_(2.0, 3.0)
    assert on_device(x) and 2.0 <= host(x).min() and host(x).max() < 3.0
    x.normal_(5.0, 0.1)
    assert abs(host(x).mean() - 5.0) < 0.05


def test_embedding_max_norm_renormalises_a_device_table_in_place():
    cpu = nn.Embedding(5, 3, max_norm=1.0)
    cpu.weight.data = cr.tensor(np.arange(15.0).reshape(5, 3))
    dev = nn.Embedding(5, 3, max_norm=1.0, device=NAME)
    dev.weight.data = cr.tensor(np.arange(15.0).reshape(5, 3), device=NAME)
    idx = np.array([0, 2, 2])
    want = cpu(cr.tensor(idx))
    got = dev(cr.tensor(idx, device=NAME))
    np.testing.assert_allclose(host(got), want.numpy(), rtol=TOL)
    np.testing.assert_allclose(host(dev.weight), cpu.weight.numpy(), rtol=TOL)
