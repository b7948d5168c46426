"""Buffers are Tensors that do not require grad, as PyTorch's: BatchNorm's and InstanceNorm's running statistics
answer PyTorch's in-place methods, state_dict, load_state_dict, to(dtype) and reset_running_stats, and their values
after training steps equal PyTorch's (torch as the oracle)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

NORMS = [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (6, 3, 5)), ("BatchNorm2d", (4, 3, 5, 2)),
         ("BatchNorm3d", (3, 3, 2, 3, 2)), ("InstanceNorm1d", (4, 3, 5)), ("InstanceNorm2d", (4, 3, 3, 2)),
         ("InstanceNorm3d", (2, 3, 2, 3, 2))]


def _pair(cls, **kw):
    if cls.startswith("Instance"):
        kw = {"track_running_stats": True, "affine": True, **kw}
    return getattr(torch.nn, cls)(3, **kw).double(), getattr(nn, cls)(3, dtype=np.float64, **kw)


def _xs(shape, n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(2.0, 3.0, size=shape) for _ in range(n)]


@pytest.mark.parametrize("cls, shape", NORMS)
@pytest.mark.parametrize("momentum", [0.1, 0.7, None])
def test_running_statistics_after_training_steps_and_eval_outputs_equal_pytorchs(cls, shape, momentum):
    tm, cm = _pair(cls, momentum=momentum)
    xs = _xs(shape, 4)
    for x in xs:
        cm(x), tm(torch.tensor(x))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        c, t = getattr(cm, name), getattr(tm, name)
        assert isinstance(c, cr.Tensor) and not c.requires_grad, name
        assert c.dtype == np.dtype(str(t.dtype).removeprefix("torch.")), name
        np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
    cm.eval(), tm.eval()
    np.testing.assert_allclose(cm(xs[0]).numpy(), tm(torch.tensor(xs[0])).detach().numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("cls, shape", NORMS[:4])
def test_pytorch_in_place_methods_on_running_statistics(cls, shape):
    tm, cm = _pair(cls)
    cm.running_mean.copy_(cr.tensor([1.0, 2.0, 3.0], dtype=np.float64))
    tm.running_mean.copy_(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    cm.running_var.fill_(2.0), tm.running_var.fill_(2.0)
    cm.eval(), tm.eval()
    x = _xs(shape, 1)[0]
    np.testing.assert_allclose(cm(x).numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    assert bool(cr.allclose(cm.running_mean.clone(), cr.tensor([1.0, 2.0, 3.0], dtype=np.float64)))
    cm.running_mean.zero_()
    assert not cm.running_mean.numpy().any()
    cm.train(), tm.train()
    for x in _xs(shape, 2, seed=1):
        cm(x), tm(torch.tensor(x))
    cm.reset_running_stats(), tm.reset_running_stats()
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_array_equal(getattr(cm, name).numpy(), getattr(tm, name).numpy(), err_msg=name)


def test_an_update_writes_into_the_buffers_array_in_place():
    bn = nn.BatchNorm1d(3, dtype=np.float64)
    mean, arrays = bn.running_mean, [bn.running_mean._data, bn.running_var._data, bn.num_batches_tracked._data]
    version = mean._version
    bn(np.random.default_rng(0).normal(size=(5, 3)))
    assert bn.running_mean is mean and mean._version > version
    assert [bn.running_mean._data, bn.running_var._data, bn.num_batches_tracked._data] == arrays  # same objects
    assert all(a is b for a, b in zip([bn.running_mean._data, bn.running_var._data, bn.num_batches_tracked._data],
                                      arrays, strict=True))


def test_state_dict_named_buffers_and_load_state_dict_are_pytorchs():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)).double()
    cm = nn.Sequential(nn.Linear(3, 3, dtype=np.float64), nn.BatchNorm1d(3, dtype=np.float64))
    assert list(cm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in cm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert all(isinstance(b, cr.Tensor) for b in cm.buffers())
    sd = cm.state_dict()
    assert all(isinstance(v, cr.Tensor) for v in sd.values())
    assert sd["1.num_batches_tracked"].dtype == np.int64 and sd["1.num_batches_tracked"].shape == ()
    sd["1.running_mean"].fill_(4.0)  # a state dict shares the buffers' memory, as PyTorch's
    np.testing.assert_array_equal(cm[1].running_mean.numpy(), [4.0, 4.0, 4.0])
    tsd = {k: v.clone() for k, v in tm.state_dict().items()}
    tsd["1.running_var"].fill_(3.0)
    tsd["1.num_batches_tracked"].fill_(7)
    mean = cm[1].running_mean
    cm.load_state_dict({k: v.numpy() for k, v in tsd.items()})
    assert cm[1].running_mean is mean  # loaded in place
    for k, v in cm.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), tsd[k].numpy(), err_msg=k)


def test_to_dtype_converts_floating_buffers_and_keeps_the_count():
    tm, cm = torch.nn.BatchNorm2d(3), nn.BatchNorm2d(3)
    tm.double(), cm.double()
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        c, t = getattr(cm, name), getattr(tm, name)
        assert isinstance(c, cr.Tensor) and c.dtype == np.dtype(str(t.dtype).removeprefix("torch.")), name
        assert cm._buffers[name] is c
    x = _xs((2, 3, 2, 2), 1)[0]
    np.testing.assert_allclose(cm(x).numpy(), tm(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(cm.running_var.numpy(), tm.running_var.numpy(), rtol=1e-12)


def test_register_buffer_keeps_a_tensor_and_wraps_an_array():
    m = nn.Module()
    t = cr.tensor([1.0, 2.0])
    m.register_buffer("t", t)
    assert m.t is t and m._buffers["t"] is t
    arr = np.zeros(2)
    m.register_buffer("a", arr)
    assert isinstance(m.a, cr.Tensor) and not m.a.requires_grad and m.a._data is arr
    m.a = np.ones(3)  # assigning to a buffer's name replaces the buffer
    assert isinstance(m.a, cr.Tensor) and m._buffers["a"] is m.a and m.a.shape == (3,)
    m.t = None
    assert m._buffers["t"] is None and [n for n, _ in m.named_buffers()] == ["a"]


def test_copies_and_pickles_keep_tensor_buffers_and_modules_pickled_with_arrays_still_load():
    bn = nn.BatchNorm1d(3, dtype=np.float64)
    bn(np.random.default_rng(0).normal(size=(5, 3)))
    for other in (copy.deepcopy(bn), pickle.loads(pickle.dumps(bn))):
        assert isinstance(other.running_mean, cr.Tensor) and other.running_mean._data is not bn.running_mean._data
        np.testing.assert_array_equal(other.running_mean.numpy(), bn.running_mean.numpy())
    old = nn.BatchNorm1d(3, dtype=np.float64)  # as an earlier version pickled it: the buffers plain arrays
    state = dict(old.__dict__)
    state["_buffers"] = {k: v._data.copy() for k, v in old._buffers.items()}
    state.update(state["_buffers"])
    restored = nn.BatchNorm1d.__new__(nn.BatchNorm1d)
    restored.__setstate__(state)
    assert isinstance(restored.running_mean, cr.Tensor) and restored._buffers["running_mean"] is restored.running_mean
    restored(np.ones((2, 3)))
    assert int(restored.num_batches_tracked) == 1


def test_checkpoints_round_trip_the_buffers(tmp_path):
    bn = nn.BatchNorm1d(3, dtype=np.float64)
    bn(np.random.default_rng(0).normal(size=(5, 3)))
    path = tmp_path / "bn.npz"
    cr.save(bn.state_dict(), path)
    fresh = nn.BatchNorm1d(3, dtype=np.float64)
    fresh.load_state_dict(cr.load(path))
    for k, v in bn.state_dict().items():
        np.testing.assert_array_equal(fresh.state_dict()[k].numpy(), v.numpy(), err_msg=k)
    np.savez(tmp_path / "plain.npz", **{k: v.numpy() for k, v in bn.state_dict().items()})  # plain arrays
    fresh = nn.BatchNorm1d(3, dtype=np.float64)
    fresh.load_state_dict(cr.load(tmp_path / "plain.npz"))
    assert int(fresh.num_batches_tracked) == 1 and isinstance(fresh.num_batches_tracked, cr.Tensor)


def test_functional_batch_norm_takes_tensor_running_statistics_and_updates_them_in_place():
    x = _xs((5, 3), 1)[0]
    mean, var = cr.zeros(3, dtype=np.float64), cr.ones(3, dtype=np.float64)
    tmean, tvar = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    y = cr.nn.functional.batch_norm(cr.tensor(x), mean, var, training=True, momentum=0.3)
    ty = torch.nn.functional.batch_norm(torch.tensor(x), tmean, tvar, training=True, momentum=0.3)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10)
    np.testing.assert_allclose(mean.numpy(), tmean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), tvar.numpy(), rtol=1e-12)


def test_batch_norm_gradients_unchanged_and_buffers_never_get_a_grad():
    tm, cm = _pair("BatchNorm1d")
    x = _xs((6, 3), 1)[0]
    cx, tx = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (cm(cx) ** 3).sum().backward()
    (tm(tx) ** 3).sum().backward()
    np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(cm.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-9)
    assert all(b.grad is None and not b.requires_grad for b in cm.buffers())


def test_jit_replays_an_eval_batch_norm_reading_the_running_statistics_as_they_are_now():
    bn = nn.BatchNorm1d(3, dtype=np.float64)
    for x in _xs((8, 3), 3):
        bn(x)
    bn.eval()
    f = cr.jit(lambda x: (bn(x) ** 2).sum())
    x = cr.tensor(_xs((8, 3), 1, seed=4)[0])
    assert float(f(x)) == pytest.approx(float((bn(x) ** 2).sum()))  # traced
    bn.running_mean.fill_(1.0), bn.running_var.mul_(2.0)  # changed in place between calls
    assert float(f(x)) == pytest.approx(float((bn(x) ** 2).sum()), rel=1e-12)  # replayed
