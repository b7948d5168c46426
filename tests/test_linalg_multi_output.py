"""eigh, svd, qr and eig are one primitive each with several outputs on one graph node: no module-level
factorisation cache, each call its own factorisation, rules that receive every output's cotangent.
(The gradchecks to second order in both modes and the PyTorch oracle are the cases in tests/op_cases.py.)"""

from __future__ import annotations

import importlib
import inspect
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.core.node import Node

LINALG_MODULES = ["chainrule.ops.linear_algebra", "chainrule.ops.linear_algebra.common",
                  "chainrule.ops.linear_algebra.decompositions", "chainrule.ops.linear_algebra.solve",
                  "chainrule.ops.linear_algebra.norms", "chainrule.ops.linear_algebra.eig"]
RNG = np.random.default_rng(7)


def _symmetric(n, rng=RNG):
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return q @ np.diag(np.arange(1.0, n + 1) * 1.5) @ q.T


@pytest.mark.parametrize("name", LINALG_MODULES)
def test_no_linalg_module_keeps_a_cache_or_other_mutable_state(name):
    module = importlib.import_module(name)
    source = inspect.getsource(module)
    assert "_CACHE" not in source and "hashlib" not in source and "lru_cache" not in source
    mutable = {k: type(v).__name__ for k, v in vars(module).items()
               if isinstance(v, (dict, list, set)) and not k.startswith("__")}
    assert mutable == {}, f"{name} holds module-level mutable state: {mutable}"


CALLS = {
    "eigh": (lambda a: np.linalg.eigh(a), 2, _symmetric(3)),
    "svd": (lambda a: np.linalg.svd(a, full_matrices=False), 3, RNG.normal(size=(4, 3))),
    "qr": (lambda a: np.linalg.qr(a), 2, RNG.normal(size=(4, 3))),
    "eig": (lambda a: np.linalg.eig(a), 2, _symmetric(3) + np.triu(np.ones((3, 3)), 1)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_outputs_share_one_node_that_keeps_the_outputs_only(name):
    fn, k, a = CALLS[name]
    x = cr.Tensor(a, requires_grad=True)
    outs = fn(x)
    node = outs[0]._node
    assert isinstance(node, Node) and node.prim.name == name and node.n_outputs == k
    assert all(o._node is node for o in outs) and [o._index for o in outs] == list(range(k))
    assert node.args == [None]  # the input is not kept: the rules read the outputs
    for kept, out, expected in zip(node.ans, outs, fn(a)):
        assert kept is out._data
        np.testing.assert_allclose(out.data, expected)


def _on_lower(g):
    return np.tril(g + g.T, -1) + np.diag(np.diag(g))


def test_two_arrays_never_share_a_factorisation():
    a, b = _symmetric(3), _symmetric(3)
    b[0, 0] += 0.5
    b[1, 1] -= 0.25
    ta, tb = cr.Tensor(a, requires_grad=True), cr.Tensor(b, requires_grad=True)
    wa, wb = np.linalg.eigh(ta)[0], np.linalg.eigh(tb)[0]
    assert wa._node is not wb._node
    np.testing.assert_allclose(wb.data, np.linalg.eigvalsh(b))
    (wa[2] + 2 * wb[2]).backward()
    _, v_a = np.linalg.eigh(a)
    _, v_b = np.linalg.eigh(b)
    # eigh reads the lower triangle only (as NumPy's): d w / d a is v v.T folded onto it
    np.testing.assert_allclose(ta.grad.data, _on_lower(np.outer(v_a[:, 2], v_a[:, 2])), atol=1e-12)
    np.testing.assert_allclose(tb.grad.data, 2 * _on_lower(np.outer(v_b[:, 2], v_b[:, 2])), atol=1e-12)


def test_an_array_changed_in_place_is_factorised_again():
    a = RNG.normal(size=(3, 3))
    t = cr.Tensor(a.copy())
    first = np.linalg.svd(t, compute_uv=False).data.copy()
    t.data[0, 0] += 3.0  # the same buffer, other values: a cache keyed by the array would answer the old ones
    np.testing.assert_allclose(first, np.linalg.svd(a, compute_uv=False))
    np.testing.assert_allclose(np.linalg.svd(t, compute_uv=False).data, np.linalg.svd(t.data, compute_uv=False))
    for fn in (lambda m: np.linalg.eigh(m)[0], lambda m: np.linalg.qr(m)[1], lambda m: np.linalg.eig(m)[0]):
        before = np.asarray(fn(cr.Tensor(a)).data)
        np.testing.assert_allclose(fn(cr.Tensor(a + np.eye(3))).data, fn(a + np.eye(3)))
        np.testing.assert_allclose(fn(cr.Tensor(a)).data, before)


def test_one_output_alone_gets_its_exact_gradient_in_both_modes():
    a = _symmetric(3)
    np.testing.assert_allclose(cr.grad(lambda m: np.linalg.eigh(m).eigenvalues.sum())(a), np.eye(3), atol=1e-12)
    t = RNG.normal(size=(3, 3))
    _, tangent = cr.jvp(lambda m: np.linalg.eigh(m).eigenvalues.sum(), (a,), (t,))
    np.testing.assert_allclose(tangent, np.trace(t), rtol=1e-12)
    m = RNG.normal(size=(4, 3))
    u, s, vh = np.linalg.svd(m, full_matrices=False)
    np.testing.assert_allclose(cr.grad(lambda x: np.linalg.svd(x, compute_uv=False).sum())(m), u @ vh, atol=1e-12)


def test_repeated_eigenvalues_keep_the_values_gradient_and_give_non_finite_vector_gradients():
    a = np.diag([1.0, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the values alone: exact, and no warning from the unused vectors
        np.testing.assert_allclose(cr.grad(lambda m: np.linalg.eigvalsh(m).sum())(a), np.eye(3))
        _, tangent = cr.jvp(lambda m: np.linalg.eigvalsh(m), (a,), (np.eye(3),))
    np.testing.assert_allclose(tangent, [1.0, 1.0, 1.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        g = cr.grad(lambda m: np.sum(np.linalg.eigh(m).eigenvectors * np.arange(9.0).reshape(3, 3)))(a)
    assert not np.all(np.isfinite(g))  # the eigenvectors are not unique there: never a finite wrong answer


def test_extra_columns_get_nan_tangents_and_the_unique_ones_exact_tangents():
    m = RNG.normal(size=(4, 2))
    t = RNG.normal(size=(4, 2))
    (u, s, vh), (du, ds, dvh) = cr.jvp(lambda x: tuple(np.linalg.svd(x)), (m,), (t,))
    reduced = cr.jvp(lambda x: tuple(np.linalg.svd(x, full_matrices=False)), (m,), (t,))[1]
    assert u.shape == du.shape == (4, 4) and np.all(np.isnan(du[:, 2:]))
    np.testing.assert_allclose(du[:, :2], reduced[0])
    np.testing.assert_allclose(ds, reduced[1])
    (q, r), (dq, dr) = cr.jvp(lambda x: tuple(np.linalg.qr(x, mode="complete")), (m,), (t,))
    assert dq.shape == (4, 4) and np.all(np.isnan(dq[:, 2:])) and np.all(dr[2:] == 0)
    np.testing.assert_allclose(dq[:, :2], cr.jvp(lambda x: np.linalg.qr(x).Q, (m,), (t,))[1])


@pytest.mark.parametrize("fn", [lambda m: np.linalg.eigh(m), lambda m: np.linalg.svd(m),
                                lambda m: np.linalg.qr(m), lambda m: np.linalg.eig(m)])
def test_results_keep_their_numpy_named_fields(fn):
    a = _symmetric(3)
    ours, theirs = fn(cr.Tensor(a)), fn(a)
    assert type(ours).__name__ == type(theirs).__name__ and ours._fields == theirs._fields


def test_vmap_runs_the_decomposition_once_on_the_batch():
    a = np.stack([_symmetric(3, np.random.default_rng(i)) for i in range(2)])
    got = cr.vmap(lambda m: np.linalg.svd(m, full_matrices=True).U ** 2)(a)
    np.testing.assert_allclose(got, np.linalg.svd(a)[0] ** 2)


def test_a_replay_of_the_decompositions_gives_the_eager_gradient_exactly():
    m = RNG.normal(size=(4, 3))

    def f(x):
        return (np.linalg.svd(x).U[:, :3] ** 2).sum() + np.linalg.qr(x).R.sum() + np.linalg.eigh(x.T @ x)[0][0]

    jitted = cr.jit(f)
    grads = []
    for fn in (f, jitted, jitted):  # eager, traced, replayed
        x = cr.Tensor(m, requires_grad=True)
        fn(x).backward()
        grads.append(x.grad.data.copy())
    assert all(np.array_equal(g, grads[0]) for g in grads[1:])
