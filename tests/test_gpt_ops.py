"""The GPT's fused ops beyond their generic op cases (tests/op_cases.py: finite differences both
modes to second order, PyTorch oracle): accuracy of the NumPy erf and normal CDF, float32 end to
end, saved arrays freed after backward, exact zeros and ties, dropout, and errors naming bad shapes."""

from __future__ import annotations

import math
import os
import signal

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.ops.special_functions.gauss import erf, gelu_f32, ndtr

R = np.random.default_rng(0)


def test_erf_matches_math_erf_to_float64_rounding():
    x = np.concatenate([np.linspace(-7, 7, 20001), np.geomspace(1e-300, 0.6, 300), [0.0, -0.0, 30.0]])
    want = np.array([math.erf(v) for v in x])
    assert np.abs(erf(x) - want).max() <= 2e-15
    small = np.abs(x) < 0.5  # relative accuracy near 0 (the Taylor branch)
    assert np.max(np.abs(erf(x[small]) - want[small]) / np.maximum(np.abs(want[small]), 1e-300)) <= 2e-15
    assert np.array_equal(erf(np.array([np.inf, -np.inf])), [1.0, -1.0]) and np.isnan(erf(np.array([np.nan])))[0]


def test_erf_keeps_float32_and_rounds_once():
    x = np.linspace(-5, 5, 4001, dtype=np.float32)
    out = erf(x)
    assert out.dtype == np.float32
    want = np.array([math.erf(float(v)) for v in x], dtype=np.float32)
    assert np.abs(out - want).max() <= np.float32(6e-8)


def test_erf_op_is_the_numpy_one_and_differentiable():
    x = cr.Tensor(np.array([0.3, -1.2]), requires_grad=True)
    cr.erf(x).sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 / np.sqrt(np.pi) * np.exp(-x.data**2), rtol=1e-15)


def test_normal_cdf_relative_accuracy_in_the_left_tail():
    x = np.array([-8.0, -5.0, -2.0, 0.0, 1.0])
    want = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    np.testing.assert_allclose(ndtr(x), want, rtol=1e-13)
    assert ndtr(0.0) == 0.5
    grid = np.linspace(-9, 9, 100001).astype(np.float32)  # the float32 GELU's CDF, in chunks
    exact = np.array([0.5 * math.erfc(-float(v) / math.sqrt(2)) for v in grid])
    y, cdf = gelu_f32(grid.reshape(1, -1))
    assert cdf.shape == (1, 100001) and cdf.dtype == np.float32
    assert np.abs(cdf[0] - exact).max() < 2e-7  # a few float32 ulps
    left = (grid < -3) & (grid > -8)  # relative accuracy where Phi is small (beyond -8.4 only its size)
    assert np.max(np.abs(cdf[0][left] - exact[left]) / exact[left]) < 1e-5
    np.testing.assert_array_equal(y, grid * cdf)


def test_fused_ops_stay_float32_end_to_end():
    x = cr.Tensor(R.normal(size=(2, 3, 8)).astype(np.float32), requires_grad=True)
    w = cr.Tensor(np.ones(8, np.float32), requires_grad=True)
    b = cr.Tensor(np.zeros(8, np.float32), requires_grad=True)
    outs = [F.gelu(x), F.layer_norm(x, (8,), w, b), F.rms_norm(x, (8,), w),
            F.scaled_dot_product_attention(x, x, x, is_causal=True), F.masked_softmax(x, np.ones(8, bool))]
    for out in outs:
        assert out.data.dtype == np.float32
        (out * out).sum().backward()
        assert x.grad.data.dtype == np.float32
        assert all(p.grad is None or p.grad.data.dtype == np.float32 for p in (w, b))
        x.grad = w.grad = b.grad = None


def test_gelu_exact_values_at_zero_and_far_out():
    x = cr.Tensor(np.array([0.0, -12.0, 12.0]), requires_grad=True)
    y = F.gelu(x)
    y.sum().backward()
    assert y.data[0] == 0.0 and abs(y.data[1]) < 1e-30 and y.data[2] == 12.0
    assert x.grad.data[0] == 0.5 and x.grad.data[2] == 1.0
    np.testing.assert_allclose(x.grad.data[1], -2.5566e-31, rtol=1e-4)  # Phi(-12) - 12 phi(-12): tiny, not 0


def test_attention_drops_its_probabilities_after_backward_and_recomputes_for_a_second():
    q, k, v = (cr.Tensor(R.normal(size=(2, 4, 3)), requires_grad=True) for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    saved = out._node.kw["saved"]
    assert set(saved.values) == {"p"}  # only the probabilities: no scores, no exponentials
    g = R.normal(size=out.shape)
    out.backward(g, retain_graph=True)
    assert saved.values == {}  # freed once q, k and v got their gradients
    first = [t.grad.data.copy() for t in (q, k, v)]
    out.backward(g)  # the same graph again: recomputed, same numbers
    for t, g1 in zip((q, k, v), first, strict=True):
        np.testing.assert_allclose(t.grad.data, 2 * g1, rtol=1e-14)


def test_layer_norm_saves_rows_not_copies_and_frees_them():
    x = cr.Tensor(R.normal(size=(3, 5)), requires_grad=True)
    y = F.layer_norm(x, (5,))
    saved = y._node.kw["saved"]
    assert set(saved.values) == {"xhat", "rstd"}
    assert y._node.ans is None  # the rules read x and the weight, not the output
    y.sum().backward()
    assert saved.values == {}


def test_nothing_is_saved_without_gradients():
    from chainrule.ops._saved import Saved

    q = cr.Tensor(R.normal(size=(2, 4, 3)), requires_grad=True)
    assert Saved(q, np.ones(3), q).wanted == (0, 2)
    with cr.no_grad():
        assert Saved(q, q).wanted == ()


def test_attention_with_dropout_is_seeded_and_its_gradient_checks():
    q, k, v = (R.normal(size=(1, 3, 2)) for _ in range(3))
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, rng=1)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, rng=1)
    np.testing.assert_array_equal(a, b)
    assert cr.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, rng=1), q, k, v,
                        modes=("rev", "fwd"), order=2)


@pytest.mark.oracle
@pytest.mark.parametrize("is_causal", [False, True])
def test_grouped_query_attention_matches_torch_and_its_gradient_checks(is_causal):
    torch = pytest.importorskip("torch")
    q, k, v = R.normal(size=(1, 4, 3, 2)), R.normal(size=(1, 2, 3, 2)), R.normal(size=(1, 2, 3, 2))
    ours = [cr.Tensor(a, requires_grad=True) for a in (q, k, v)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ours, is_causal=is_causal, enable_gqa=True)
    tout = torch.nn.functional.scaled_dot_product_attention(*theirs, is_causal=is_causal, enable_gqa=True)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12, atol=1e-14)
    (out**2).sum().backward()
    (tout**2).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=1e-10, atol=1e-13)
    assert cr.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True),
                        q, k, v, modes=("rev", "fwd"), order=2)
    with pytest.raises(ValueError, match="enable_gqa=True needs k and v with the same number of heads"):
        F.scaled_dot_product_attention(q, R.normal(size=(1, 3, 3, 2)), R.normal(size=(1, 3, 3, 2)), enable_gqa=True)



@pytest.mark.oracle
@pytest.mark.parametrize("mask", [None, "bool", "float"])
def test_one_query_against_many_keys_matches_torch(mask):
    """A single query row (sampling with a cache) scores as k (q scale)^T, without a transposed copy of the keys."""
    torch = pytest.importorskip("torch")
    q, k, v = R.normal(size=(2, 3, 1, 4)), R.normal(size=(2, 3, 6, 4)), R.normal(size=(2, 3, 6, 5))
    m = {None: None, "bool": (np.arange(6) < 4)[None, :], "float": R.normal(size=(3, 1, 6))}[mask]
    ours = [cr.Tensor(a, requires_grad=True) for a in (q, k, v)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ours, attn_mask=m, scale=0.7)
    tout = torch.nn.functional.scaled_dot_product_attention(*theirs, attn_mask=None if m is None else torch.tensor(m),
                                                            scale=0.7)
    np.testing.assert_allclose(out.data, tout.detach().numpy(), rtol=1e-12, atol=1e-14)
    (out**2).sum().backward()
    (tout**2).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.data, b.grad.numpy(), rtol=1e-10, atol=1e-13)
    assert cr.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=m), q, k, v,
                        modes=("rev", "fwd"), order=2)

@pytest.mark.oracle
def test_layer_norm_of_a_constant_row_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.array([[2.0, 2.0, 2.0], [1.0, -1.0, 3.0]])
    w, b = np.array([1.0, 2.0, -1.0]), np.array([0.5, 0.0, 0.0])
    xs = [cr.Tensor(a, requires_grad=True) for a in (x, w, b)]
    ts = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    F.layer_norm(xs[0], (3,), xs[1], xs[2]).sum().backward()
    torch.nn.functional.layer_norm(ts[0], (3,), ts[1], ts[2]).sum().backward()
    for a, t in zip(xs, ts, strict=True):
        np.testing.assert_allclose(a.grad.data, t.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.oracle
def test_gelu_float32_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.linspace(-9, 9, 10001, dtype=np.float32)
    xt = cr.Tensor(x, requires_grad=True)
    F.gelu(xt).sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.gelu(tx)
    y.sum().backward()
    exact = np.array([v * 0.5 * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    np.testing.assert_allclose(F.gelu(x), exact, rtol=3e-7, atol=1e-7)  # float32 accurate
    # torch computes 0.5 x (1 + erf(x / sqrt 2)) in float32: its error near the left tail is ~1e-6 absolute
    np.testing.assert_allclose(F.gelu(x), y.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(xt.grad.data, tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-7), (np.float64, 1e-15)])
def test_silu_matches_torch_far_out_and_on_large_arrays_split_in_blocks(dtype, rtol):
    """The blocked SiLU (ops.logistic): exp(-x) overflowing gives 0, not a warning; values and gradients
    as PyTorch's, including beyond one block (threads split those)."""
    torch = pytest.importorskip("torch")
    edges = [-1000.0, -745.5, -104.0, -88.8, -20.0, -1e-30, 0.0, 1e-30, 3.0, 40.0, 800.0, np.inf]
    x = np.concatenate([np.array(edges), R.normal(scale=6.0, size=200_000)]).astype(dtype).reshape(2, -1)
    xt = cr.Tensor(x, requires_grad=True)
    g = R.normal(size=x.shape).astype(dtype)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        y = F.silu(xt)
        y.backward(g)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.silu(tx)
    ty.backward(torch.tensor(g))
    assert y.data.dtype == dtype and xt.grad.data.dtype == dtype
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=4 * rtol, atol=1e-300)
    np.testing.assert_allclose(xt.grad.data, tx.grad.numpy(), rtol=8 * rtol, atol=8 * rtol * np.abs(g).max())
    with np.errstate(invalid="ignore"):  # the user's own non-finite values: NumPy would warn, as x * sigmoid(x)
        assert np.isnan(F.silu(np.array([np.nan, -np.inf], dtype=dtype))).all()  # as x * sigmoid(x), and torch


def test_masked_softmax_gives_zeros_for_an_empty_row_and_no_gradient_there():
    x = cr.Tensor(R.normal(size=(2, 3)), requires_grad=True)
    keep = np.array([[True, False, True], [False, False, False]])
    y = F.masked_softmax(x, keep)
    np.testing.assert_array_equal(y.data[1], 0.0)
    assert y.data[0, 1] == 0.0 and abs(y.data[0].sum() - 1) < 1e-15
    (y * R.normal(size=(2, 3))).sum().backward()
    assert x.grad.data[0, 1] == 0.0 and np.all(x.grad.data[1] == 0.0)


def test_masked_fill_as_function_and_method():
    x = cr.Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.masked_fill(np.array([True, False]), -np.inf)
    np.testing.assert_array_equal(y.data, [[-np.inf, 2.0], [-np.inf, 4.0]])
    cr.where(np.isfinite(y.data), y, 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[0.0, 1.0], [0.0, 1.0]])
    assert "masked_fill" in cr.autodiff.primitive.REGISTRY


@pytest.mark.parametrize("call, message", [
    (lambda: F.scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((2, 3, 5)), np.ones((2, 3, 4))),
     r"q \(2, 3, 4\) and k \(2, 3, 5\) must have the same last axis E"),
    (lambda: F.scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 5, 4))),
     r"k \(2, 3, 4\) and v \(2, 5, 4\) must have the same number of positions S"),
    (lambda: F.scaled_dot_product_attention(np.ones(4), np.ones((3, 4)), np.ones((3, 4))),
     r"need shape \(\.\.\., L, E\)"),
    (lambda: F.scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))),
     r"batch axes of q \(2, 3, 4\), k \(3, 3, 4\) and v \(3, 3, 4\) do not broadcast"),
    (lambda: F.scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)),
                                            attn_mask=np.ones((2, 3), bool)),
     r"attn_mask of shape \(2, 3\) does not broadcast to the scores' shape \(\.\.\., L=3, S=3\)"),
    (lambda: F.scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)),
                                            attn_mask=np.ones((3, 3), bool), is_causal=True),
     "either attn_mask or is_causal"),
    (lambda: F.layer_norm(np.ones((2, 3)), (4,)), r"input of shape \(2, 3\) does not end with normalized_shape \(4,\)"),
    (lambda: F.layer_norm(np.ones((2, 3)), (3,), np.ones(2)), r"weight must have shape normalized_shape \(3,\), got"),
    (lambda: F.rms_norm(np.ones((2, 3)), 3, np.ones((3, 1))), r"rms_norm: weight must have shape"),
    (lambda: F.masked_softmax(np.ones((2, 3)), np.ones((3, 3), bool)), r"mask of shape \(3, 3\) does not broadcast"),
    (lambda: cr.masked_fill(np.ones(3), np.ones(3), 0.0), "mask must be boolean"),
    (lambda: cr.masked_fill(np.ones(3), np.ones(3, bool), np.ones(2)), "value must be a single number"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_float32_gelu_gives_the_same_bits_on_any_number_of_threads(monkeypatch):
    monkeypatch.setattr(cr.ops.special_functions.gauss, "_CHUNK", 4096)
    x = R.normal(size=(3, 50001)).astype(np.float32)  # several chunks per thread, a ragged end
    results = []
    for threads in ("1", "3"):
        monkeypatch.setenv("CHAINRULE_NUM_THREADS", threads)
        y, cdf = gelu_f32(x)
        y2, slope = gelu_f32(x, slope=True)  # the derivative, kept by the forward pass for the reverse rule
        np.testing.assert_array_equal(y2, y)
        grad = cr.ops.special_functions.gauss.gelu_grad_f32(x, cdf, x)
        np.testing.assert_array_equal(cr.ops.special_functions.gauss.times_f32(x, slope), grad)  # same bits
        results.append((y, cdf, grad, slope))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)


def _fused_step(dtype):
    """Outputs and gradients of layer norm, RMS norm and packed attention on one input (the same every call)."""
    rng = np.random.default_rng(11)
    x = cr.Tensor(rng.normal(size=(5, 6, 16)).astype(dtype), requires_grad=True)
    w = cr.Tensor(rng.normal(size=16).astype(dtype), requires_grad=True)
    b = cr.Tensor(rng.normal(size=16).astype(dtype), requires_grad=True)
    qkv = cr.Tensor(rng.normal(size=(7, 6, 3, 2, 4)).astype(dtype), requires_grad=True)
    outs = [F.layer_norm(x, (16,), w, b), F.rms_norm(x, (16,), w), F.qkv_attention(qkv)]
    sum((o * o).sum() for o in outs).backward()
    return [o.data for o in outs] + [t.grad.data for t in (x, w, b, qkv)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_norms_and_attention_give_the_same_bits_on_any_number_of_threads(monkeypatch, dtype):
    from chainrule.ops.fused import attention_blocks, normalization

    monkeypatch.setattr(normalization, "_BLOCK_ELEMENTS", 48)  # 3 rows per block: 10 blocks, a ragged end
    monkeypatch.setattr(attention_blocks, "_BLOCK_SCORES", 2 * 36)  # 1 batch item per block: 7 blocks
    results = {}
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("CHAINRULE_NUM_THREADS", threads)
        results[threads] = _fused_step(dtype)
    for other in ("2", "3"):
        for a, b in zip(results["1"], results[other], strict=True):
            np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(normalization, "_BLOCK_ELEMENTS", 10**6)  # one block: the same up to rounding
    monkeypatch.setattr(attention_blocks, "_BLOCK_SCORES", 10**6)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(results["1"], _fused_step(dtype), strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_split_passes_work_in_a_forked_child(monkeypatch):
    monkeypatch.setenv("CHAINRULE_NUM_THREADS", "2")
    monkeypatch.setattr(cr.ops.special_functions.gauss, "_CHUNK", 4096)
    x = R.normal(size=50000).astype(np.float32)
    y = gelu_f32(x)[0]  # the parent's pool of threads exists now
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker threads are not here; a fresh pool must do the work
        signal.alarm(30)  # a hang ends the child (and fails the test) instead of the test run
        os._exit(0 if np.array_equal(gelu_f32(x)[0], y) else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("rows, count", [(7, 300), (300, 100)])  # few runs of equal indices / many runs
def test_embedding_gradient_adds_repeated_rows_as_add_at(rows, count):
    from chainrule.ops.shape import _scatter_fn

    idx = R.integers(-rows, rows, size=(count, 2))  # repeats and negative indices
    g = R.normal(size=(count, 2, 3, 2))
    want = np.zeros((rows, 3, 2))
    np.add.at(want, idx, g)
    got = _scatter_fn(g, idx, (rows, 3, 2))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    if rows == 7:  # one sum per run, in np.add.at's order: the same bits
        np.testing.assert_array_equal(got, want)
    w = cr.Tensor(R.normal(size=(rows, 3)), requires_grad=True)
    (F.embedding(idx % rows, w) ** 2).sum().backward()
    want = np.zeros((rows, 3))
    np.add.at(want, idx % rows, 2 * w.data[idx % rows])
    np.testing.assert_allclose(w.grad.data, want, rtol=1e-13)
    with pytest.raises(IndexError, match="out of bounds"):
        _scatter_fn(g, np.full((count, 2), -rows - 1), (rows, 3, 2))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_packed_attention_when_a_query_scores_far_below_the_block_maximum(dtype, tol):
    """The blocked softmax shifts by the block's largest score; a query whose scores all lie far below
    it (here: one batch item with scores ~1000x larger) must still get its exact softmax (the block is
    redone with each query's own maximum), forward and backward."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    qkv = rng.normal(size=(3, 9, 3, 2, 4))
    qkv[1, :, :2] *= 40.0  # batch item 1: scores ~1600x batch items 0 and 2's
    qkv = qkv.astype(dtype)
    g = rng.normal(size=(3, 9, 2, 4)).astype(dtype)
    x = cr.Tensor(qkv, requires_grad=True)
    y = F.qkv_attention(x)
    (y * g).sum().backward()
    t = torch.tensor(qkv, requires_grad=True)
    q, k, v = (t[:, :, i].transpose(1, 2) for i in range(3))
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)
    (want * torch.tensor(g)).sum().backward()
    scale = np.abs(want.detach().numpy()).max()
    np.testing.assert_allclose(y.data, want.detach().numpy(), rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=tol, atol=tol * np.abs(t.grad.numpy()).max())


def test_rotation_gives_the_same_bits_on_small_and_large_arrays():
    """Small arrays rotate on their two halves, large ones on whole rows: the same products and sums."""
    from chainrule.ops import rotary

    cos, sin = np.cos(R.normal(size=(5, 4))).astype(np.float32), np.sin(R.normal(size=(5, 4))).astype(np.float32)
    x = R.normal(size=(1000, 3, 5, 8)).astype(np.float32)  # 120k elements: whole rows
    assert x[:1].size <= rotary._SMALL < x.size
    one_at_a_time = np.concatenate([rotary.rotate(x[i:i + 1], cos, sin) for i in range(len(x))])
    np.testing.assert_array_equal(one_at_a_time, rotary.rotate(x, cos, sin))
