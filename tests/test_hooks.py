"""Tensor.register_hook: called with the gradient once computed, may replace it, removable (as PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest

from chainrule import Tensor
from chainrule.autodiff.backprop import grad

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for hooks")

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.25]])


def _both(program):
    """Run ``program(x, lib)`` on chainrule and on torch; returns x.grad and the hook calls of each."""
    out = []
    for lib in ("cr", "torch"):
        x = Tensor(X, requires_grad=True) if lib == "cr" else torch.tensor(X, requires_grad=True)
        seen: list[np.ndarray] = []
        program(x, lib, seen)
        grad = x.grad.data if lib == "cr" else x.grad.numpy()
        out.append((np.array(grad), [np.array(s) for s in seen]))
    return out


def _record(seen, scale=None):
    def hook(g):
        seen.append(g.data if isinstance(g, Tensor) else g.detach().numpy().copy())
        return None if scale is None else g * scale
    return hook


@pytest.mark.oracle
def test_hooks_on_an_intermediate_and_a_leaf_match_pytorch():
    def program(x, lib, seen):
        tanh = np.tanh if lib == "cr" else torch.tanh
        y = x * x
        y.register_hook(_record(seen, 3.0))  # replaces the gradient flowing on
        z = tanh(y) + y
        z.register_hook(_record(seen))  # only looks
        x.register_hook(_record(seen, -1.0))
        (z * z).sum().backward()

    (g_cr, seen_cr), (g_t, seen_t) = _both(program)
    np.testing.assert_allclose(g_cr, g_t, rtol=1e-13)  # tanh's rule rounds 1 ulp apart from PyTorch's
    assert len(seen_cr) == len(seen_t) == 3
    for a, b in zip(seen_cr, seen_t):
        np.testing.assert_allclose(a, b, rtol=1e-13)


@pytest.mark.oracle
def test_a_removed_hook_is_not_called_and_a_hook_sees_the_summed_gradient():
    def program(x, lib, seen):
        y = x * 2
        handle = y.register_hook(_record(seen, 100.0))
        handle.remove()
        handle.remove()  # a second remove does nothing
        x.register_hook(_record(seen))
        (y + x * x).sum().backward()  # x gets two contributions: the hook sees their sum once

    (g_cr, seen_cr), (g_t, seen_t) = _both(program)
    np.testing.assert_array_equal(g_cr, g_t)
    assert len(seen_cr) == len(seen_t) == 1
    np.testing.assert_array_equal(seen_cr[0], seen_t[0])


def test_register_hook_refuses_a_tensor_without_grad_and_a_wrong_shape():
    with pytest.raises(RuntimeError, match="does not require grad"):
        Tensor([1.0]).register_hook(lambda g: g)
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: np.ones(3))
    with pytest.raises(ValueError, match=r"register_hook: the hook returned a gradient of shape \(3,\)"):
        y.sum().backward()


def test_a_hook_under_create_graph_gets_a_differentiable_tensor():
    x = Tensor(2.0, requires_grad=True)
    y = x**3
    y.register_hook(lambda g: g * x)  # d/dx of the hooked gradient includes the hook's own x
    (gx,) = grad(y, x, create_graph=True)
    assert float(gx.data) == 24.0  # 3 x^2 * x
    (ggx,) = grad(gx, x)
    assert float(ggx.data) == 36.0  # d(3 x^3)/dx


def test_a_leaf_whose_hook_refers_to_it_is_freed_with_its_hooks():
    # the hooks of leaves were held by a module-level table, so a hook closing over its leaf kept it alive forever
    import gc
    import weakref

    refs = []
    for _ in range(50):
        x = Tensor(np.ones(1000), requires_grad=True)
        x.register_hook(lambda g, x=x: g * x)
        refs.append(weakref.ref(x))
    del x
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


def test_a_copied_or_unpickled_leaf_starts_without_the_originals_hooks_as_in_pytorch():
    import copy
    import pickle

    w = Tensor([1.0], requires_grad=True)
    w.register_hook(lambda g: g * 3)
    (w * 2).sum().backward()
    assert w.grad.tolist() == [6.0]
    for u in (copy.deepcopy(w), pickle.loads(pickle.dumps(w))):
        u.grad = None
        (u * 2).sum().backward()
        assert u.grad.tolist() == [2.0]
