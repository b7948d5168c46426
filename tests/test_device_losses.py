"""Losses and index checks on the device under test (the strict double of CuPy, or a GPU): ``cross_entropy`` in
every form gives the CPU's value and gradient through its device path (the reverse rule's in-place fast path
runs there too, with one scatter for the picked classes), and an index out of range is refused there as on the
CPU (the check is one reduction on the device and one scalar read)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from device_setup import NAME, backend, host, on_device, to_device

F = nn.functional
TOL = 1e-12 if NAME == "strict" else 1e-5
RNG = np.random.default_rng(3)
backend()  # registered before a layer is built with device=NAME

# (logits shape, target maker, keywords): the forms cross_entropy takes
CASES = {
    "mean": ((5, 4), lambda: np.array([0, 3, 1, 3, 2]), {}),
    "sum": ((5, 4), lambda: np.array([0, 3, 1, 3, 2]), {"reduction": "sum"}),
    "none": ((5, 4), lambda: np.array([0, 3, 1, 3, 2]), {"reduction": "none"}),
    "ignored_rows": ((5, 4), lambda: np.array([0, -100, 1, 3, -100]), {}),
    "ignore_index_class": ((5, 4), lambda: np.array([0, 2, 1, 3, 2]), {"ignore_index": 2, "reduction": "none"}),
    "all_ignored": ((3, 4), lambda: np.array([-100, -100, -100]), {"reduction": "sum"}),
    "smoothing": ((5, 4), lambda: np.array([0, 3, 1, 3, 2]), {"label_smoothing": 0.2}),
    "smoothing_ignored": ((5, 4), lambda: np.array([0, -100, 1, 3, 2]), {"label_smoothing": 0.1}),
    "probabilities": ((5, 4), lambda: RNG.dirichlet(np.ones(4), 5), {}),
    "one_row": ((4,), lambda: np.array(2), {}),
    "spatial": ((2, 4, 3), lambda: np.array([[0, 3, 1], [2, 2, 0]]), {}),
    "weighted": ((5, 4), lambda: np.array([0, 3, 1, 3, 2]), {"weight": np.array([1.0, 2.0, 0.5, 1.5])}),
}


@pytest.mark.parametrize("case", CASES)
def test_cross_entropy_on_device_equals_cpu(case):
    shape, make_target, kw = CASES[case]
    x = RNG.standard_normal(shape)
    target = make_target()
    dev_kw = {k: (cr.Tensor(to_device(v)) if k == "weight" else v) for k, v in kw.items()}
    want_x = cr.Tensor(x, requires_grad=True)
    want = F.cross_entropy(want_x, target, **kw)
    g = RNG.standard_normal(np.shape(want._data))
    want.backward(cr.Tensor(g))
    got_x = cr.Tensor(to_device(x), requires_grad=True)
    got = F.cross_entropy(got_x, cr.Tensor(to_device(target)), **dev_kw)
    got.backward(cr.Tensor(to_device(g)))
    assert on_device(got) and on_device(got_x.grad)
    np.testing.assert_allclose(host(got), want._data, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(host(got_x.grad), want_x.grad._data, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("kw", [{}, {"reduction": "none"}, {"weight": np.array([1.0, 2.0, 0.5, 1.5])},
                                {"ignore_index": 1, "reduction": "sum"}])
def test_nll_loss_on_device_equals_cpu(kw):
    logp = np.log(RNG.dirichlet(np.ones(4), 5))
    target = np.array([0, 3, 1, 3, 2])
    dev_kw = {k: (cr.Tensor(to_device(v)) if k == "weight" else v) for k, v in kw.items()}
    want_x = cr.Tensor(logp, requires_grad=True)
    F.nll_loss(want_x, target, **kw).sum().backward()
    got_x = cr.Tensor(to_device(logp), requires_grad=True)
    got = F.nll_loss(got_x, cr.Tensor(to_device(target)), **dev_kw)
    got.sum().backward()
    assert on_device(got) and on_device(got_x.grad)
    np.testing.assert_allclose(host(got_x.grad), want_x.grad._data, rtol=TOL, atol=TOL)


def test_cross_entropy_of_non_contiguous_logits_on_device():
    x = RNG.standard_normal((4, 5))
    target = np.array([0, 3, 1, 2, 2])
    want_x = cr.Tensor(x, requires_grad=True)
    F.cross_entropy(want_x.T, target, label_smoothing=0.1).backward()
    got_x = cr.Tensor(to_device(x), requires_grad=True)
    F.cross_entropy(got_x.T, cr.Tensor(to_device(target)), label_smoothing=0.1).backward()
    np.testing.assert_allclose(host(got_x.grad), want_x.grad._data, rtol=TOL, atol=TOL)


def test_cross_entropy_refuses_a_class_out_of_range_on_device():
    x = cr.Tensor(to_device(RNG.standard_normal((3, 4))), requires_grad=True)
    for bad in (4, -1):
        # the check is answered with the next read (a GPU need not wait for it)
        loss = F.cross_entropy(x, cr.Tensor(to_device(np.array([0, bad, 1]))))
        with pytest.raises(IndexError, match=f"class {bad}, outside .*ignore_index=-100"):
            loss.item()
        loss = F.cross_entropy(x, cr.Tensor(to_device(np.array([0, bad, 1]))), ignore_index=None)
        with pytest.raises(IndexError, match=f"class {bad}, outside .* no row is ignored"):
            loss.item()
    target = np.array([0, 3, 1])
    got = F.cross_entropy(x, cr.Tensor(to_device(target)), ignore_index=None)
    np.testing.assert_allclose(float(got), float(F.cross_entropy(cr.Tensor(host(x._data)), target)), rtol=TOL)


@pytest.mark.parametrize("bad", [10, -1])
def test_embedding_refuses_an_index_out_of_range_on_device(bad):
    layer = nn.Embedding(10, 3, device=NAME)
    out = layer(cr.Tensor(to_device(np.array([[1, bad]]))))  # (a device's check is answered with the next read)
    with pytest.raises(IndexError, match=f"index {bad} is out of range"):
        out.sum().item()
    assert on_device(layer(cr.Tensor(to_device(np.array([[0, 9]])))))


def test_gpt_refuses_token_ids_out_of_range_on_device():
    model = nn.GPT(nn.GPTConfig(vocab_size=10, context_length=4, d_model=8, n_heads=2, n_layers=1), seed=0,
                   device=NAME)
    logits = model(to_device(np.array([[3, -1]])))
    with pytest.raises(ValueError, match=r"token ids must be in \[0, 10\), got -1\.\.3"):
        print(logits)  # (any read: a device's check is answered then)


@pytest.mark.parametrize("index,message", [([0, 5], "index 5 is out of range"), ([-1, 2], "index -1 is out of range")])
def test_pytorch_gather_refuses_an_index_out_of_range_on_device(index, message):
    x = cr.Tensor(to_device(np.arange(10.0).reshape(2, 5)))
    with pytest.raises(IndexError, match=message):
        cr.gather(x, 1, cr.Tensor(to_device(np.array([index, index])))).tolist()


def test_index_fill_takes_negative_indices_from_the_end_on_device():
    x = cr.Tensor(to_device(np.zeros((2, 3))))
    got = cr.index_fill(x, 1, cr.Tensor(to_device(np.array([-1]))), 7.0)
    np.testing.assert_array_equal(host(got), [[0, 0, 7], [0, 0, 7]])
    with pytest.raises(IndexError, match="index -4 is out of range"):
        host(cr.index_fill(x, 1, cr.Tensor(to_device(np.array([-4]))), 7.0))


def test_device_under_test_is_registered():
    assert backend().name == NAME


def test_a_function_transform_answers_the_queued_checks_before_it_returns():
    """Its results are device arrays that the program may read without chainrule: the checks come first."""
    w = to_device(RNG.standard_normal((10, 3)))
    bad = to_device(np.array([2, 12]))
    with pytest.raises(IndexError, match="index 12 is out of range for an embedding table of 10 rows"):
        cr.grad(lambda w: F.embedding(bad, w).sum())(w)
    g = cr.grad(lambda w: F.embedding(to_device(np.array([2, 9])), w).sum())(w)  # nothing left queued
    assert host(g).sum() == 6.0


def test_synchronize_answers_the_queued_checks():
    table = cr.Tensor(to_device(np.eye(3)))
    F.embedding(cr.Tensor(to_device(np.array([5]))), table)
    with pytest.raises(IndexError, match="index 5 is out of range"):
        backend().synchronize()
    backend().synchronize()  # raised once, then gone
    picked = F.embedding(cr.Tensor(to_device(np.array([3]))), table)
    with pytest.raises(IndexError, match="index 3 is out of range"):
        bool(picked.sum() > 0)  # (a truth value is a read too)


@pytest.mark.skipif(NAME != "strict", reason="host reads are counted by the strict double")
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.1}, {"reduction": "none"}, {"ignore_index": 2}])
def test_cross_entropy_ignoring_rows_reads_nothing_on_the_host(kw):
    """PyTorch's default ignore_index: the rows to ignore, their count and the range check stay on the device
    (a read is a sync with a GPU); the values and gradients are the CPU's."""
    import strict_device

    x = RNG.standard_normal((5, 4))
    target = np.array([0, -100, 2, 3, -100])
    target[target == -100] = kw.get("ignore_index", -100)
    want_x = cr.Tensor(x, requires_grad=True)
    F.cross_entropy(want_x, target, **kw).sum().backward()
    got_x = cr.Tensor(to_device(x), requires_grad=True)
    dev_target = cr.Tensor(to_device(target))
    reads = strict_device.HOST_COPIES[0]
    F.cross_entropy(got_x, dev_target, **kw).sum().backward()
    assert strict_device.HOST_COPIES[0] == reads
    np.testing.assert_allclose(host(got_x.grad), want_x.grad._data, rtol=TOL, atol=TOL)


def test_cross_entropy_of_only_ignored_rows_on_device_is_nan_with_zero_gradient():
    x = cr.Tensor(to_device(RNG.standard_normal((2, 3))), requires_grad=True)
    with np.errstate(invalid="ignore"):  # (the double divides with NumPy, which warns of 0/0; CuPy does not)
        loss = F.cross_entropy(x, cr.Tensor(to_device(np.array([-100, -100]))))
    loss.backward()
    assert np.isnan(float(loss)) and not host(x.grad).any()
