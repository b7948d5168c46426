"""checkpoint: the same gradients as without it, for closures over Tensors, nn blocks (with dropout),
nested checkpoints, pytree and non-array arguments, tuple/dict outputs, inside transforms and to
second order; a block that is not deterministic raises instead of giving wrong gradients."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn import functional as F


def leaf(values):
    return cr.Tensor(np.asarray(values, dtype=float), requires_grad=True)


def grads_with_and_without(block, make_inputs, params=()):
    """(.grad of every input and param with checkpoint, the same without)."""
    results = []
    for wrap in (cr.checkpoint, lambda f: f):
        for p in params:
            p.grad = None
        xs = make_inputs()
        out = wrap(block)(*xs)
        # kept: the second pass goes through the same nodes outside the block (e.g. a closed-over p * 3)
        (out if isinstance(out, cr.Tensor) else sum(np.sum(o) for o in out)).sum().backward(retain_graph=True)
        results.append([x.grad.data.copy() for x in xs] + [p.grad.data.copy() for p in params])
    return results


def test_closure_over_a_tensor_gets_its_gradient():
    w = leaf([2.0, 3.0])
    x = leaf([0.5, -1.0])
    cr.checkpoint(lambda x: np.sin(x * w))(x).sum().backward()
    np.testing.assert_allclose(w.grad.data, np.cos([1.0, -3.0]) * [0.5, -1.0])
    np.testing.assert_allclose(x.grad.data, np.cos([1.0, -3.0]) * [2.0, 3.0])


def test_closure_over_a_computed_tensor_sends_the_gradient_on():
    p = leaf([1.0, 2.0])
    w = p * 3.0  # not a leaf: its gradient must flow back to p
    with_ckpt, without = grads_with_and_without(lambda x: np.exp(x * w), lambda: [leaf([0.1, 0.2])], [p])
    for a, b in zip(with_ckpt, without, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_nn_sequential_gets_weight_gradients():
    model = nn.Sequential(nn.Linear(3, 4, rng=0), nn.Tanh(), nn.Linear(4, 2, rng=1)).to(np.float64)
    x = np.random.default_rng(0).normal(size=(5, 3))
    with_ckpt, without = grads_with_and_without(model, lambda: [leaf(x)], list(model.parameters()))
    assert len(with_ckpt) == 5
    for a, b in zip(with_ckpt, without, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_dropout_masks_are_replayed():
    model = nn.Sequential(nn.Linear(3, 8, rng=0), nn.Dropout(0.5, rng=5), nn.Linear(8, 1, rng=1)).to(np.float64)
    x = np.random.default_rng(1).normal(size=(6, 3))
    state = model[1].rng.bit_generator.state
    for block in (model, lambda v: model(v) * 2.0):
        grads = []
        for wrap in (cr.checkpoint, lambda f: f):
            model[1].rng.bit_generator.state = state
            for p in model.parameters():
                p.grad = None
            wrap(block)(cr.Tensor(x)).sum().backward()
            grads.append([p.grad.data.copy() for p in model.parameters()])
        for a, b in zip(*grads, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-13)


def test_dropout_from_the_default_generator_is_replayed_as_pytorchs_preserve_rng_state():
    """F.dropout without rng draws from the generator manual_seed resets; the recomputation draws the same mask
    (it raised, the block called not deterministic, when masks came from an unseeded generator)."""
    x = leaf(np.arange(1.0, 65.0))
    cr.manual_seed(0)
    cr.checkpoint(lambda v: F.dropout(v, 0.5) ** 2)(x).sum().backward()
    cr.manual_seed(0)
    expected = 2 * F.dropout(cr.Tensor(np.arange(1.0, 65.0)), 0.5).numpy() * 2
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_a_block_that_is_not_deterministic_raises():
    x = leaf(np.arange(1.0, 65.0))  # 64 entries: two independent masks agree with probability 2**-64
    out = cr.checkpoint(lambda v: F.dropout(v, 0.5, rng=np.random.default_rng()))(x)  # a generator it does not hold
    with pytest.raises(RuntimeError, match=r"checkpoint\(<lambda>\): running the block again in backward gave other"):
        out.sum().backward()


def test_nested_checkpoints():
    w = leaf([0.3, -0.4])
    inner = cr.checkpoint(lambda x: np.exp(x * w))
    outer = cr.checkpoint(lambda x: inner(x) * 2.0 + np.sin(x))
    with_ckpt, without = grads_with_and_without(outer, lambda: [leaf([0.1, 0.2])], [w])
    plain = grads_with_and_without(lambda x: np.exp(x * w) * 2.0 + np.sin(x), lambda: [leaf([0.1, 0.2])], [w])[1]
    for a, b in zip(with_ckpt, plain, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    for a, b in zip(without, plain, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_non_array_arguments_and_pytrees():
    def block(params, x, axis=None, mode="sum", scale=None):
        y = params["w"] * x + params["b"][0]
        out = np.sum(y, axis=axis) if mode == "sum" else np.mean(y, axis=axis)
        return out if scale is None else out * scale

    w, b = leaf([[1.0, 2.0], [3.0, 4.0]]), leaf([0.5])
    x = leaf([[0.1, 0.2], [0.3, 0.4]])
    out = cr.checkpoint(block)({"w": w, "b": [b, "tag"]}, x, axis=1, mode="mean", scale=None)
    np.testing.assert_allclose(out.data, [0.75, 1.75])
    (out * np.array([1.0, 2.0])).sum().backward()
    np.testing.assert_allclose(w.grad.data, [[0.05, 0.1], [0.3, 0.4]])
    np.testing.assert_allclose(x.grad.data, [[0.5, 1.0], [3.0, 4.0]])
    np.testing.assert_allclose(b.grad.data, [3.0])


def test_tuple_and_dict_outputs():
    x = leaf([0.1, 0.2])
    pair = cr.checkpoint(lambda v: (v * 2.0, {"s": np.sum(v**2), "c": np.ones(2)}))(x)
    assert isinstance(pair, tuple) and set(pair[1]) == {"s", "c"}
    (pair[0].sum() + pair[1]["s"]).backward()
    np.testing.assert_allclose(x.grad.data, [2.2, 2.4])


def test_inside_transforms_and_to_second_order():
    def block(x, w):
        return np.tanh(x @ w) * np.sin(x).sum()

    x, w = np.array([[0.3, -0.2, 0.5]]), np.array([[0.1, 0.4], [-0.3, 0.2], [0.5, -0.1]])

    def loss(f):
        return lambda x, w: np.sum(f(x, w) ** 2)

    ckpt = cr.checkpoint(block)
    np.testing.assert_allclose(cr.hessian(loss(ckpt), argnums=1)(x, w), cr.hessian(loss(block), argnums=1)(x, w),
                               rtol=1e-12)
    for a, b in zip(cr.hvp(loss(ckpt), (x, w), (x, w)), cr.hvp(loss(block), (x, w), (x, w)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)

    def with_closure(f_w):  # a closure over a traced value, differentiated from outside
        return lambda wv: cr.grad(lambda xv: np.sum(f_w(wv)(xv)))(np.array([0.3, 0.7])).sum()

    ck = with_closure(lambda wv: cr.checkpoint(lambda xv: np.sin(xv * wv)))
    plain = with_closure(lambda wv: (lambda xv: np.sin(xv * wv)))
    np.testing.assert_allclose(cr.grad(ck)(np.array([2.0, 3.0])), cr.grad(plain)(np.array([2.0, 3.0])), rtol=1e-13)


def test_create_graph_in_the_object_api():
    w = leaf([1.5, -0.5])
    x = leaf([1.0, 2.0])
    cr.checkpoint(lambda a: (a**3 * w).sum())(x).backward(create_graph=True)
    np.testing.assert_allclose(x.grad.data, 3 * np.array([1.0, 4.0]) * [1.5, -0.5])
    gx = x.grad
    x.grad = None
    w.grad = None
    gx.sum().backward()  # d/dx sum(3 x^2 w) = 6 x w, d/dw = 3 x^2
    np.testing.assert_allclose(x.grad.data, 6 * np.array([1.0, 2.0]) * [1.5, -0.5])
    np.testing.assert_allclose(w.grad.data, 3 * np.array([1.0, 4.0]))


def test_the_block_node_keeps_only_inputs_and_outside_tensors():
    w = leaf([2.0, 3.0])
    x = leaf([0.5, -1.0])
    y = cr.checkpoint(lambda v: np.exp(np.sin(np.cos(v * w))))(x)
    node = y._node
    while not node.prim.name.startswith("checkpoint"):
        node = node.parents[0][1]
    assert node.prim.name == "checkpoint(<lambda>)"
    assert [edge[1] for edge in node.parents] == [x, w]
    assert node.args[1] is None  # the outside value is not held by the block's node


def test_no_grad_and_constants_just_run_the_block():
    with cr.no_grad():
        out = cr.checkpoint(lambda v: v * 2.0)(leaf([1.0]))
    assert not out.requires_grad
    np.testing.assert_allclose(cr.checkpoint(lambda v: v * 2.0)(np.array([1.0])), [2.0])


def test_constant_outputs_come_back_as_they_are():
    x = leaf([0.1, 0.2])
    y, n, tag, const = cr.checkpoint(lambda v: (v * 3.0, 7, "tag", np.ones(2)))(x)
    assert n == 7 and tag == "tag" and isinstance(const, np.ndarray)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, [3.0, 3.0])
