"""jit on fresh values equals eager for ops that read values outside their primitives: an integer Tensor that
chooses entries (gather, index_add, scatter_add, take_along_dim, ...), sorting, selecting, counting. Each read is
guarded, and a replay whose reads answer otherwise is traced again (an eager run): never the first call's choice
(gather, scatter_add and take_along_dim of a computed index, and cummax, gave the first call's entries), and no
JitError for an ordinary function (it raised on the second call of anything that sorts or branches on a value)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule as cr

WITH_INDEX = {  # an integer Tensor argument chooses entries
    "index_add": lambda x, i: (x.index_add(0, i, x[:2] * 2) ** 2).sum(),
    "index_fill": lambda x, i: (x.index_fill(0, i, 0.5) ** 2).sum(),
    "index_put_acc": lambda x, i: (x.index_put((i,), x[:2] * 3, accumulate=True) ** 2).sum(),
    "index_select": lambda x, i: (x.index_select(0, i) ** 2).sum(),
    "getitem": lambda x, i: (x[i] ** 2).sum(),
    "gather": lambda x, i: (x.gather(0, i[:, None].expand(2, 3)) ** 2).sum(),
    "gather_plain": lambda x, i: (x.gather(0, (i[:, None] * cr.ones(1, 3, dtype=i.dtype))) ** 2).sum(),
    "scatter_add": lambda x, i: (x.scatter_add(0, i[:, None].expand(2, 3), x[:2]) ** 2).sum(),
    "scatter":
        lambda x, i: (cr.zeros(4, 3, dtype=x.dtype).scatter(0, i[:1, None].expand(1, 3), x[:1]) ** 2).sum() + x.sum(),
    "scatter_reduce": lambda x, i: (x.scatter_reduce(0, i[:, None].expand(2, 3), x[:2], "amax") ** 2).sum(),
    "take": lambda x, i: (x.take(i) ** 2).sum(),
    "take_along_dim": lambda x, i: (x.take_along_dim(i[:, None].expand(2, 3), 0) ** 2).sum(),
    "take_along_dim_flat": lambda x, i: (x.take_along_dim(i) ** 2).sum(),
    "index_copy": lambda x, i: (x.index_copy(0, i[:1], x[:1] * 2) ** 2).sum(),
    "embedding": lambda x, i: (cr.nn.functional.embedding(i, x) ** 2).sum(),
    "one_hot": lambda x, i: (cr.nn.functional.one_hot(i, 4)[:, :3] * x[:2]).sum(),
    "unique": lambda x, i: (x * i.unique().numel()).sum(),
    "bincount": lambda x, i: (x[0, :2] * i.bincount(minlength=2)[:2]).sum(),
    "repeat_interleave": lambda x, i: (x[:2].repeat_interleave(i + 1, dim=0) ** 2).sum(),
    "roll": lambda x, i: (x.roll(int(i[0]), 0) * cr.arange(4.)[:, None]).sum(),
    "unique_consec": lambda x, i: (x * len(i.unique_consecutive())).sum(),
    "tolist in op": lambda x, i: sum(x[j].sum() for j in i.tolist()),
    "ce": lambda x, i: cr.nn.functional.cross_entropy(x[:2], i),
    "nll": lambda x, i: cr.nn.functional.nll_loss(x[:2], i),
    "masked_fill_i": lambda x, i: (x.masked_fill(cr.arange(4)[:, None] == i[0], 0.0) ** 2).sum(),
    "where_i": lambda x, i: cr.where(cr.arange(4)[:, None] > i[0], x, -x).sum(),
}

READING = {  # ops that read values to choose entries, or compute constants from them
    "cummax": lambda x: x.cummax(1)[0].sum(),
    "cummin": lambda x: (x.cummin(0).values ** 2).sum(),
    "count_nonzero": lambda x: (x * (x > 0).count_nonzero()).sum(),
    "masked_select": lambda x: (x.masked_select(x > 0) ** 2).sum(),
    "nonzero": lambda x: (x[(x > 0).nonzero(as_tuple=True)] ** 2).sum(),
    "bool mask": lambda x: (x[x > 0] ** 2).sum(),
    "kthvalue": lambda x: x.kthvalue(2, 1)[0].sum(),
    "mode": lambda x: x.round().mode(1)[0].sum(),
    "argmax-gather": lambda x: x.gather(1, x.argmax(1, keepdim=True)).sum(),
    "sort-idx": lambda x: (x[x[:, 0].argsort()] * cr.arange(4.)[:, None]).sum(),
    "nanmean": lambda x: cr.where(x > 0, x, cr.tensor(float('nan'))).nanmean(),
    "nansum": lambda x: cr.where(x > 0, x, cr.tensor(float('nan'))).nansum(),
    "histc": lambda x: (x * x.histc(4).sum()).sum(),
    "searchsorted": lambda x: (x[0] * cr.searchsorted(cr.tensor([-1., 0., 1.]), x[0])).sum(),
    "bucketize": lambda x: (x[0] * cr.bucketize(x[0], cr.tensor([-1., 0., 1.]))).sum(),
    "clamp tensors": lambda x: x.clamp(min=x[0], max=x[1] + 1).sum(),
    "topk": lambda x: x.topk(2, 1)[0].sum() + x.topk(1, 0)[1].float().sum(),
    "max dim": lambda x: x.max(1)[0].sum() + x.max(0).indices.float().sum(),
    "median": lambda x: x.median(1)[0].sum() + x.median(),
    "nanmedian": lambda x: x.nanmedian(1)[0].sum(),
    "quantile": lambda x: x.quantile(0.3, dim=1).sum(),
    "msort": lambda x: (x.msort() * cr.arange(4.)[:, None]).sum(),
    "unique x": lambda x: (x.round().unique() ** 2).sum(),
    "aminmax": lambda x: x.aminmax()[0] + x.aminmax(dim=0)[1].sum(),
    "argsort": lambda x: (x * x.argsort(1)).sum(),
    "sort stable": lambda x: x.sort(1, stable=True)[1].float().sum() + x.sort(0)[0][0].sum(),
    "isin": lambda x: (x * cr.isin(x.round(), cr.tensor([0., 1.]))).sum(),
    "logsumexp": lambda x: x.logsumexp(1).sum(),
    "logcumsumexp": lambda x: x.logcumsumexp(0).sum(),
    "renorm": lambda x: x.renorm(2, 0, 1.0).sum(),
    "nan_to_num": lambda x: x.log().nan_to_num(0.0, 1.0, -1.0).sum(),
    "tril_mask": lambda x: (x.tril(-1) ** 2).sum(),
    "heaviside": lambda x: (x * cr.heaviside(x, cr.tensor(0.5))).sum(),
    "sign": lambda x: (x * x.sign()).sum(),
    "maxpool": lambda x: cr.nn.functional.max_pool1d(x[None], 2).sum(),
    "prelu": lambda x: cr.nn.functional.prelu(x, cr.tensor([0.2])).sum(),
    "smooth_l1": lambda x: cr.nn.functional.smooth_l1_loss(x, x.detach() * 0.5),
    "huber": lambda x: cr.nn.functional.huber_loss(x, x.detach().round()),
    "softshrink": lambda x: cr.nn.functional.softshrink(x, 0.3).sum(),
    "remainder": lambda x: cr.remainder(x, x.detach().abs() + 0.5).sum(),
    "fmod": lambda x: cr.fmod(x, 0.7).sum(),
    "floor_divide": lambda x: (x * cr.floor_divide(x.detach(), 0.5)).sum(),
    "frac": lambda x: x.frac().sum(),
    "pdist": lambda x: cr.nn.functional.pdist(x).sum(),
    "cdist": lambda x: cr.cdist(x, x[:2] * 0.5).sum(),
    "norm inf": lambda x: x.norm(float('inf')) + x.norm(dim=1, p=1).sum(),
    "matrix_norm": lambda x: cr.linalg.matrix_norm(x, 2) + cr.linalg.matrix_norm(x, 'nuc'),
    "svd": lambda x: cr.linalg.svdvals(x).sum(),
    "eigh": lambda x: cr.linalg.eigvalsh(x.T @ x).sum(),
    "det": lambda x: cr.linalg.det(x[:3] + 3 * cr.eye(3, dtype=x.dtype)),
    "pinv": lambda x: cr.linalg.pinv(x).sum(),
    "lstsq": lambda x: cr.linalg.lstsq(x, x[:, :1] * 0.5 + 1).solution.sum(),
    "interpolate": lambda x: cr.nn.functional.interpolate(x[None], scale_factor=2, mode="linear").sum(),
    "grid_sample":
        lambda x: cr.nn.functional.grid_sample(x[None, None], x[None, :2, :2, None].expand(1, 2, 2, 2).tanh(),
                                               align_corners=False).sum(),
}


def _agrees_over_fresh_calls(f, make):
    jitted = cr.jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cr.PerformanceWarning)  # (traced again for other values: said once)
        warnings.simplefilter("ignore", RuntimeWarning)  # (log of 0 in nan_to_num's case)
        for _ in range(4):
            args = make()
            got, want = jitted(*args), f(*args)
            np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12, equal_nan=True)
            g_got = cr.autograd.grad(got, args[0], allow_unused=True)[0]
            g_want = cr.autograd.grad(want, args[0], allow_unused=True)[0]
            assert (g_got is None) == (g_want is None)
            if g_got is not None:
                np.testing.assert_allclose(g_got.numpy(), g_want.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("case", WITH_INDEX)
def test_jit_with_an_index_argument_equals_eager_on_fresh_indices(case):
    rng = np.random.default_rng(0)
    _agrees_over_fresh_calls(WITH_INDEX[case], lambda: (
        cr.tensor(rng.normal(size=(4, 3)), dtype=cr.float64, requires_grad=True),
        cr.tensor(rng.integers(0, 3, size=2))))


@pytest.mark.parametrize("case", READING)
def test_jit_of_ops_reading_values_equals_eager_on_fresh_values(case):
    rng = np.random.default_rng(1)
    _agrees_over_fresh_calls(READING[case], lambda: (cr.tensor(
        np.where(rng.random((4, 3)) < 0.2, 0.0, rng.normal(size=(4, 3))), dtype=cr.float64, requires_grad=True),))


def test_jax_jit_of_grad_on_tensors_runs_as_it_is():
    """jit(grad(f)) on Tensors (it raised JitError; on arrays it already ran as it is): the trace stops at the
    gradient and the function runs on to its end (nothing runs twice), then every call is eager."""
    calls = []

    def f(x):
        calls.append(1)
        return (x.sin() ** 2).sum()

    g = cr.jit(cr.grad(f))
    x = cr.tensor([0.3, 0.7], dtype=cr.float64)
    with pytest.warns(cr.PerformanceWarning, match="calls backward\\(\\) or a gradient transform"):
        first = g(x)
    np.testing.assert_allclose(np.asarray(first), np.sin(2 * x.numpy()))
    np.testing.assert_allclose(np.asarray(g(x * 2)), np.sin(4 * x.numpy()))
    assert len(calls) == 2
