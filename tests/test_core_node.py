"""The core's node record: a node is not its output, keeps only what its rules read, frees it after
backward (unless retain_graph), and may have several outputs that share it."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import chainrule as cr
from chainrule.autodiff.primitive import Primitive
from chainrule.core.node import Node, unbroadcast


def leaf(values):
    return cr.Tensor(np.asarray(values, dtype=float), requires_grad=True)


# -- the record ----------------------------------------------------------------------------------
def test_a_computed_tensor_points_at_its_node_and_the_node_not_at_it():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    node = y._node
    assert isinstance(node, Node) and node.prim.name == "multiply" and node.n_outputs == 1
    assert [(e[0], e[1], e[2], e[3], e[4]) for e in node.parents] == [(0, x, None, (2,), np.dtype(float))]
    z = np.exp(y)
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None  # the graph does not hold the intermediate Tensor
    z.sum().backward()
    np.testing.assert_allclose(x.grad.data, 3.0 * np.exp(3.0 * np.array([1.0, 2.0])))


def test_a_node_keeps_only_what_its_rules_read():
    x, w = leaf(np.ones((2, 3))), leaf(np.ones((3, 4)))
    h = x @ w
    assert h._node.ans is None and h._node.args[0] is x._data and h._node.args[1] is w._data  # reads (0, 1)
    s = h + 1.0
    assert s._node.ans is None and s._node.args == [None, None]  # add reads nothing, constants included
    e = np.exp(s)
    assert e._node.ans is e._data and e._node.args == [None]  # exp reads its output only
    t = np.tanh(e).sum()
    assert t._node.ans is None and t._node.args[0] is None  # sum reads the shape only
    # the matmul's product is not held by anything once h and s are dropped
    product = weakref.ref(h.data)
    del h, s
    gc.collect()
    assert product() is None
    t.backward()
    expected = (1 - np.tanh(np.exp(4.0)) ** 2) * np.exp(4.0)
    np.testing.assert_allclose(x.grad.data, np.full((2, 3), 4 * expected))


def test_declared_reads_are_checked():
    with pytest.raises(ValueError, match=r"reads= takes argument positions, 'ans' and 'shapes', got \['x'\]"):
        Primitive("bad_reads_example", np.negative, register=False, reads=("x",))
    with pytest.raises(ValueError, match="n_outputs must be a positive int, got 0"):
        Primitive("bad_outputs_example", np.negative, register=False, n_outputs=0)


def test_a_rule_reading_shapes_gets_a_value_free_stand_in():
    seen = []

    def rule(g, ans, x):
        seen.append((x.shape, x.dtype, x.strides))
        return np.broadcast_to(g, x.shape)

    total = Primitive("total_example", np.sum, register=False, reads=("shapes",))
    total.defvjp(rule)
    x = leaf(np.arange(6.0).reshape(2, 3))
    y = total(x)
    assert y._node.args == [None]
    y.backward()
    assert seen == [((2, 3), np.dtype(float), (0, 0))]
    np.testing.assert_array_equal(x.grad.data, np.ones((2, 3)))


def test_second_order_is_exact_through_rules_that_read_the_output_only():
    # d2/dx2 exp(tanh(x)): the rules read their outputs, rebuilt as graph values linked to the same nodes
    f = lambda x: np.exp(np.tanh(x))  # noqa: E731
    x = 0.3
    t = np.tanh(x)
    d2 = np.exp(t) * ((1 - t * t) ** 2 - 2 * t * (1 - t * t))
    assert cr.grad(cr.grad(f))(x) == pytest.approx(d2, rel=1e-12)
    cr.gradcheck(lambda v: (np.exp(np.tanh(v)) * cr.relu(v) - v[::-1]).sum(), np.array([0.3, -0.7, 1.1]), order=2)


# -- freeing after backward ----------------------------------------------------------------------
def test_backward_frees_what_the_graph_kept_and_a_second_pass_names_retain_graph():
    x = leaf([1.0, 2.0])
    y = (np.sin(x) * x).sum()
    node = y._node.parents[0][1]  # the multiply
    assert not node.freed
    y.backward()
    assert node.freed and node.ans is None
    with pytest.raises(RuntimeError, match=r"second time \(at 'multiply'\).*Pass retain_graph=True"):
        y.backward()
    z = (np.sin(x) * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(x.grad.data, 3 * (np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0])))


def test_a_graph_that_keeps_nothing_can_be_swept_twice_and_create_graph_retains():
    x = leaf([1.0, 2.0])
    y = (x + 1.0).sum()  # add and sum keep no values, as in PyTorch nothing is freed
    y.backward()
    y.backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 2.0])
    x.grad = None
    z = (x * x * x).sum()
    (g,) = cr.autograd.grad(z, x, create_graph=True)
    (h,) = cr.autograd.grad(g.sum(), x)  # create_graph kept the first graph
    np.testing.assert_allclose(h.data, [6.0, 12.0])


def test_explain_after_backward_shows_structure_but_not_freed_values():
    x = leaf([1.0, 2.0])
    x.label = "x"
    h = np.exp(x)
    h.label = "h"
    loss = (h * 2.0).sum()
    loss.backward()
    parents = loss.parents[0].parents
    assert parents[0] is h  # a labelled intermediate is found through its node while it lives
    text = cr.graph.tree(loss)
    assert "h (exp)" in text and "(multiply)  (2,) float64  grad None" in text


# -- several outputs -----------------------------------------------------------------------------
def _sincos_vjp(g, ans, x):
    gs, gc = g
    out = 0.0
    if gs is not None:
        out = out + gs * np.cos(x)
    if gc is not None:
        out = out - gc * np.sin(x)
    return out


sincos = Primitive("sincos_example", lambda x: (np.sin(x), np.cos(x)), register=False, n_outputs=2, reads=(0,))
sincos.defvjp(_sincos_vjp)
sincos.defjvp(lambda t, ans, x: (t * np.cos(x), -t * np.sin(x)))


def test_a_two_output_primitive_shares_one_node():
    x = leaf([0.5, 1.5])
    s, c = sincos(x)
    assert s._node is c._node and (s._index, c._index) == (0, 1) and s._node.n_outputs == 2
    np.testing.assert_allclose(s.data, np.sin(x.data))
    (s * c).sum().backward()
    np.testing.assert_allclose(x.grad.data, np.cos(2 * x.data))
    assert sincos(np.array(0.0)) == (0.0, 1.0)  # no Tensor: NumPy values out


def test_an_output_without_gradient_gets_none_in_the_rule():
    x = leaf([0.5, 1.5])
    _, c = sincos(x)
    c.sum().backward()
    np.testing.assert_allclose(x.grad.data, -np.sin(x.data))


@pytest.mark.parametrize("f", [
    lambda x: (sincos(x)[0] * sincos(x)[1] ** 2).sum(),
    lambda x: np.exp(sincos(x)[1]).sum() + sincos(x)[0][0],
    lambda x: sincos(x)[1].sum(),
])
def test_a_two_output_primitive_passes_gradcheck_to_second_order_both_modes(f):
    assert cr.gradcheck(f, np.array([0.3, -1.1, 2.0]), order=2)


def test_grad_with_respect_to_one_output_of_a_multi_output_node():
    x = leaf([0.5, 1.5])
    s, c = sincos(x)
    (gs, gc) = cr.autograd.grad((s * c).sum(), [s, c])
    np.testing.assert_allclose(gs.data, c.data)
    np.testing.assert_allclose(gc.data, s.data)


def test_a_wrong_number_of_outputs_is_named():
    bad = Primitive("one_of_two_example", lambda x: np.sin(x), register=False, n_outputs=2)
    with pytest.raises(TypeError, match=r"one_of_two_example: declared n_outputs=2 but its function returned"):
        bad(leaf([1.0]))


def test_slogdet_is_one_node_with_two_outputs():
    a = cr.Tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
    sign, logabs = np.linalg.slogdet(a)
    assert logabs._node.prim.name == "slogdet" and logabs._node.n_outputs == 2
    assert not sign.requires_grad  # piecewise constant for a real matrix
    logabs.backward()
    np.testing.assert_allclose(a.grad.data, np.linalg.inv(a.data).T)
    assert cr.gradcheck(lambda m: np.linalg.slogdet(m)[1] * np.linalg.slogdet(m)[0], a.data, order=2)


def test_unbroadcast_reduces_and_names_a_bad_shape():
    np.testing.assert_array_equal(unbroadcast(np.ones((2, 3)), (1, 3), np.dtype(float)), [[2.0, 2.0, 2.0]])
    assert unbroadcast(np.array([1 + 2j]), (1,), np.dtype(float)).tolist() == [1.0]
    with pytest.raises(ValueError):
        unbroadcast(np.ones((2, 3)), (4,), np.dtype(float))


@pytest.mark.parametrize("n", [4, 100])  # written into a new array (small) or a broadcast view (large)
def test_unbroadcast_spreads_a_gradient_over_broadcast_axes_either_way(n):
    g = np.arange(n, dtype=np.float32).reshape(1, n)
    out = unbroadcast(g, (3, n), np.dtype(np.float64))
    assert out.shape == (3, n) and out.dtype == np.float64
    np.testing.assert_array_equal(out, np.broadcast_to(g, (3, n)))
    with pytest.raises(ValueError):
        unbroadcast(np.ones(3), (n, n), np.dtype(float))  # (3,) fits neither way


def test_pass_through_rules_are_skipped_and_their_gradients_still_reduced_and_summed():
    from chainrule.autodiff.primitive import REGISTRY
    from chainrule.core.sweep import passthrough

    assert REGISTRY["add"].fast_vjps == (passthrough, passthrough) and REGISTRY["subtract"].fast_vjps[0] is passthrough
    x, b = leaf(np.ones((3, 2))), leaf([1.0, 2.0])
    (x + b - b * 2.0 + (x + x)).sum().backward()
    np.testing.assert_array_equal(b.grad.data, [-3.0, -3.0])  # (3, 2) -> (2,): summed over the broadcast axis
    np.testing.assert_array_equal(x.grad.data, np.full((3, 2), 3.0))  # x + x: one array reaches x twice
    assert x.grad._data is not b.grad._data


# -- the unrolled forward (apply1 / apply2) builds the node apply builds ----------------------------
def _record(node):
    return (node.prim, [e[:1] + e[2:] for e in node.parents], [id(e[1]) for e in node.parents],
            node.ans is None, [None if a is None else id(a) for a in node.args], node.kw, node.outputs, node.lifted)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "arctan2"])
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_apply2_records_the_node_apply_records(name, grads):
    from chainrule.autodiff.primitive import REGISTRY, apply, apply2

    prim = REGISTRY[name]
    x = cr.Tensor(np.array([[1.0, 2.0]]), requires_grad=grads[0])
    y = cr.Tensor(np.array([[0.5], [3.0]]), requires_grad=grads[1])  # (one dtype: mixed ones promote first)
    fast, slow = apply2(prim, x, y), apply(prim, (x, y), None)
    np.testing.assert_array_equal(fast.data, slow.data)
    assert fast.dtype == slow.dtype and fast._index is None and fast._stamp == fast._node.stamp
    assert _record(fast._node) == _record(slow._node)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "arctan2", "power"])
@pytest.mark.parametrize("number", [0.5, 3])
def test_apply2_with_a_python_number_records_the_node_apply_records(name, number):
    from chainrule.autodiff.primitive import REGISTRY, apply, apply2

    prim = REGISTRY[name]
    x = cr.Tensor(np.array([[1.0, 2.0]], dtype=np.float32), requires_grad=True)
    for args in ((x, number), (number, x)):
        fast, slow = apply2(prim, *args), apply(prim, args, None)
        np.testing.assert_array_equal(fast.data, slow.data)
        assert fast.dtype == slow.dtype == np.float32 and fast._index is None and fast._stamp == fast._node.stamp
        assert _record(fast._node) == _record(slow._node)


@pytest.mark.parametrize("name", ["tanh", "exp", "negative", "sqrt"])
def test_apply1_records_the_node_apply_records(name):
    from chainrule.autodiff.primitive import REGISTRY, apply, apply1

    prim = REGISTRY[name]
    x = leaf([[1.0, 2.0]])
    h = x * 2.0  # a node parent, not a leaf
    fast, slow = apply1(prim, h), apply(prim, (h,), None)
    np.testing.assert_array_equal(fast.data, slow.data)
    assert _record(fast._node) == _record(slow._node)


def test_apply2_falls_back_to_apply_for_constants_no_grad_and_errors():
    from chainrule.autodiff.primitive import REGISTRY, apply2

    prim = REGISTRY["multiply"]
    assert isinstance(apply2(prim, np.ones(2), 3.0), np.ndarray)  # NumPy in, NumPy out
    x = leaf([1.0, 2.0])
    assert apply2(prim, x, 3.0)._node.parents[0][1] is x
    with cr.no_grad():
        assert apply2(prim, x, x)._node is None
    with pytest.raises(ValueError, match=r"multiply: cannot combine inputs of shapes \(2,\) and \(3,\)"):
        apply2(prim, x, leaf([1.0, 2.0, 3.0]))


def test_a_replay_of_a_two_output_primitive_gives_the_eager_gradients_exactly():
    f = lambda x: (sincos(x)[0] * np.exp(sincos(x)[1])).sum() + sincos(x)[1][0]  # noqa: E731
    jitted = cr.jit(f)
    grads = []
    for fn in (f, jitted, jitted):  # eager, traced, replayed
        x = leaf([0.3, -1.1, 2.0])
        out = fn(x)
        out.backward()
        grads.append((out.data.copy(), x.grad.data.copy()))
    for value, grad in grads[1:]:
        assert value == grads[0][0] and np.array_equal(grad, grads[0][1])
    assert "v" in jitted.source and "None" in jitted.source  # the sin output of the last call gets no cotangent


def test_vmap_of_a_two_output_primitive_batches_each_output():
    xs = np.array([[0.3, -1.1], [2.0, 0.5], [0.0, 1.0]])
    got = cr.vmap(lambda x: sincos(x)[0] * sincos(x)[1])(xs)
    np.testing.assert_allclose(got, np.sin(xs) * np.cos(xs), rtol=1e-15)


def test_custom_vjp_keeps_each_calls_residuals_on_its_node():
    @cr.custom_vjp
    def f(x):
        return np.sin(x)

    f.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (g * c,))
    x = leaf([0.1, 0.2])
    y1, y2 = f(x), f(x * 2)
    assert y1._node.prim is y2._node.prim  # one primitive; the residuals are per node
    np.testing.assert_array_equal(y1._node.kw["call"].residuals, np.cos([0.1, 0.2]))
    (y1 + y2).sum().backward()
    assert y1._node.kw is None  # let go with what the node kept
    np.testing.assert_allclose(x.grad.data, np.cos([0.1, 0.2]) + 2 * np.cos([0.2, 0.4]))
    with pytest.warns(cr.PerformanceWarning, match="per-call state"):  # a replay could not: it runs as it is
        out = cr.jit(lambda v: f(v).sum())(leaf([1.0]))
    out.backward()  # its residuals are its own call's
    np.testing.assert_allclose(float(out), np.sin(1.0))


# -- the sweep's order ---------------------------------------------------------------------------
def test_the_sweep_runs_each_node_once_children_first_and_ties_in_stamp_do_not_compare_nodes():
    from chainrule.core.sweep import backward_sweep

    ran = []

    def step(name, parents, stamp):  # a node made by hand: its rule notes when it ran and doubles g
        prim = Primitive(f"order_{name}", lambda x: x, register=False, reads=())
        prim.defvjp(lambda g, ans, x: (ran.append(name), g * 2.0)[1])
        return Node(prim, tuple((0, p, None, (2,), np.dtype(float)) for p in parents), None, [None], None, stamp)

    x = leaf([1.0, 2.0])
    a = step("a", [x], 10)
    b = step("b", [a], 20)
    c = step("c", [a], 20)  # the same stamp as b (made by hand): a tie, broken without comparing the nodes' values
    d = step("d", [b, c, a], 30)  # a diamond: a gets three gradients and runs once, after b and c
    found = dict(backward_sweep([(d, None), (b, None)], [np.ones(2), np.ones(2)], np.add))
    assert ran[:3] == ["d"] * 3 and sorted(ran[3:5]) == ["b", "c"] and ran[5:] == ["a"]
    np.testing.assert_array_equal(found[x], np.full(2, 2.0 * (2.0 + 2.0 * 3.0 + 4.0)))


@pytest.mark.parametrize("seed", range(6))
def test_the_sweep_runs_children_first_in_random_graphs(seed):
    # Random DAGs: a node may take any earlier nodes as parents (a chain's next node, a far one, twice), so the
    # sweep's heap and its shortcut for the newest pending node both get used; each node must run once, after
    # every child, and the leaf's gradient must be the sum over all paths (each node multiplies by its factor).
    from chainrule.core.sweep import backward_sweep

    rng = np.random.default_rng(seed)
    x = leaf([1.0])
    ran, nodes, factor = [], [], {}

    for k in range(40):
        f = float(rng.integers(1, 4))
        prim = Primitive(f"random_order_{k}", lambda v: v, register=False, reads=())
        prim.defvjp(lambda g, ans, v, k=k, f=f: (ran.append(k), g * f)[1])
        earlier = [x, *nodes]
        picks = [earlier[-1]] + [earlier[i] for i in rng.integers(0, len(earlier), size=rng.integers(0, 3))]
        node = Node(prim, tuple((0, p, None, (1,), np.dtype(float)) for p in picks), None, [None], None, 10 * k + 1)
        nodes.append(node)
        factor[node] = f
    found = dict(backward_sweep([(nodes[-1], None)], [np.ones(1)], np.add))

    # the reference: paths counted in reverse creation order
    paths = {nodes[-1]: 1.0}
    expected = 0.0
    for node in reversed(nodes):
        if node not in paths:
            continue
        for _, parent, *_ in node.parents:
            share = paths[node] * factor[node]
            if parent is x:
                expected += share
            else:
                paths[parent] = paths.get(parent, 0.0) + share
    order = [k for i, k in enumerate(ran) if i == 0 or ran[i - 1] != k]  # a node's rule runs once per edge, in a row
    assert len(order) == len(set(order))  # each node ran once
    assert order == sorted(order, reverse=True)  # children (made later) always ran first
    assert sorted(order) == sorted(nodes.index(n) for n in paths)
    np.testing.assert_allclose(found[x], [expected])
