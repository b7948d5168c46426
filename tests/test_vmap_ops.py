"""vmap against a Python loop over the batch, for every op case in the registry (values and gradients),
and the batching table: every primitive declares how it batches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule.batching import rules
from op_cases import CASES
from test_ops_registry import library_primitives  # noqa: F401  (fixture)

BATCH = 3
# Cases whose function reads concrete values of its inputs (Python control flow or np.asarray on them):
# vmap refuses them with a clear error, checked below.
CONCRETE = {
    "np_elementwise": "np.where(_vals(x) > 1, ...) reads the values",
    "select": "np.select([_vals(x) > 0.5, ...]) reads the values",
    "take_along_axis": "np.argsort(_vals(x)) reads the values",
    "special_logsumexp": "chainrule.special.logsumexp checks b >= 0 on its values",
    "nn_sdpa_float_mask": "nn.functional.scaled_dot_product_attention converts attn_mask with np.asarray",
    "nn_masked_softmax": "masked_softmax converts a non-Tensor input with np.asarray",
    "masked_fill_method": "the case makes a Tensor of its input",
    "median_method": "the case makes a Tensor of its input",
    "piecewise": "np.piecewise([_vals(x) < 0, ...]) reads the values",
    "piecewise_default": "np.piecewise([_vals(x) > 1], ...) reads the values",
    "nn_max_pool2d": "max_pool2d finds each window's maximum on the values",
    "nn_max_pool3d": "max_pool3d finds each window's maximum on the values",
    "nn_grid_sample": "grid_sample places each point's neighbours by the grid's values (a batched input alone works)",
    "nn_max_pool1d_ceil": "max_pool1d finds each window's maximum on the values",
    "lu_factor": "lu_factor chooses its pivots on the values",
    "lu_factors": "linalg.lu chooses its pivots on the values",
    "lu_solve": "lu_factor chooses its pivots on the values",
}
UNBATCHED: dict[str, str] = {}  # op cases whose op is declared with no batching rule (none today)


def _draw_batch(case, data):
    shapes, params = data.draw(case.shapes, label="shapes, params")
    seeds = [data.draw(st.integers(0, 2**32 - 1), label="seed") for _ in range(BATCH)]
    per_example = [[np.asarray(a, dtype=np.result_type(a, np.float64))  # float64, or complex128 kept
                    for a in case.make(np.random.default_rng(s), tuple(shapes), params)] for s in seeds]
    return per_example, dict(params)


def _leaves(out):
    return [np.asarray(o.data if isinstance(o, cr.Tensor) else o) for o in (out if isinstance(out, (list, tuple))
                                                                              else [out])]


def _scalar(case, params, weights):
    def f(*xs):
        outs = case.fn(*xs, **params)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        return sum(np.sum(o * w) for o, w in zip(outs, weights) if np.asarray(w).size)

    return f


def _number(a):
    a = np.asarray(a)
    return a if a.dtype.kind in "fc" else a.astype(float)  # (complex stays complex: both parts compared)


def _close(a, b):
    np.testing.assert_allclose(_number(a), _number(b), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in CONCRETE and c.name not in UNBATCHED], ids=str)
def test_vmap_equals_a_loop(case):
    @settings(max_examples=2, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        per_example, params = _draw_batch(case, data)
        n = len(per_example[0])
        fixed = data.draw(st.sampled_from([None] + list(range(n))), label="unbatched argument") if n > 1 else None
        in_axes = tuple(None if i == fixed else 0 for i in range(n))
        batched = [per_example[0][i] if i == fixed else np.stack([ex[i] for ex in per_example]) for i in range(n)]
        examples = [[per_example[0][i] if i == fixed else ex[i] for i in range(n)] for ex in per_example]
        if case.name.startswith("method_"):  # Tensor methods: the inputs are Tensors
            batched = [cr.Tensor(b) for b in batched]
            examples = [[cr.Tensor(a) for a in ex] for ex in examples]

        loop = [_leaves(case.fn(*ex, **params)) for ex in examples]
        got = _leaves(cr.vmap(lambda *xs: case.fn(*xs, **params), in_axes=in_axes)(*batched))
        assert len(got) == len(loop[0])
        for k, g in enumerate(got):
            _close(g, np.stack([row[k] for row in loop]))

        # gradients: per-example (vmap of grad) and through vmap (grad of a sum over the batch)
        rng = np.random.default_rng(0)
        weights = [rng.normal(size=np.shape(o)) if np.asarray(o).dtype.kind == "f" else np.zeros(0) for o in loop[0]]
        if not any(w.size for w in weights):
            return
        f = _scalar(case, params, weights)
        argnums = tuple(i for i in range(n) if i != fixed)
        per_grad = cr.vmap(cr.grad(f, argnums=argnums), in_axes=in_axes)(*batched)
        loop_grad = [cr.grad(f, argnums=argnums)(*ex) for ex in examples]
        for k in range(len(argnums)):
            _close(per_grad[k], np.stack([lg[k] for lg in loop_grad]))
        total = cr.grad(lambda *xs: np.sum(cr.vmap(f, in_axes=in_axes)(*xs)), argnums=argnums)(*batched)
        for k in range(len(argnums)):
            _close(total[k], np.stack([lg[k] for lg in loop_grad]))

    run()


@pytest.mark.parametrize("case", [c for c in CASES if c.name in CONCRETE], ids=str)
def test_cases_that_read_values_are_refused_clearly(case):
    from chainrule.batching.value import ConcreteValueError

    @settings(max_examples=1, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        per_example, params = _draw_batch(case, data)
        batched = [np.stack([ex[i] for ex in per_example]) for i in range(len(per_example[0]))]
        refused = (ConcreteValueError, TypeError)  # (a Tensor made of a batched value says so in a TypeError)
        with pytest.raises(refused, match="vmap: a batched value was converted to a NumPy array"):
            cr.vmap(lambda *xs: case.fn(*xs, **params))(*batched)

    run()


@pytest.mark.parametrize("case", [c for c in CASES if c.name in UNBATCHED], ids=str)
def test_ops_without_a_batching_rule_are_named(case):
    @settings(max_examples=1, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        per_example, params = _draw_batch(case, data)
        batched = [np.stack([ex[i] for ex in per_example]) for i in range(len(per_example[0]))]
        with pytest.raises(NotImplementedError, match=f"vmap: {UNBATCHED[case.name]} has no batching rule"):
            cr.vmap(lambda *xs: case.fn(*xs, **params))(*batched)

    run()


def test_every_primitive_declares_how_it_batches(library_primitives):  # noqa: F811
    table = cr.batching.table()
    missing = sorted(name for name in library_primitives if table.get(name, "none") == "none")
    assert not missing, f"primitives with no batching declaration in chainrule/batching/rules.py: {missing}"
    kinds = {table[name] for name in library_primitives}
    assert kinds <= {"elementwise", "reduction", "shape", "contraction", "linalg", "loop", "unbatched"}
    # the ops that still loop over the batch (no vectorized rule yet) are exactly these
    assert sorted(n for n in library_primitives if table[n] == "loop") == sorted(rules.LOOPED)
    assert sorted(n for n in library_primitives if table[n] == "unbatched") == sorted(rules.UNBATCHED)


def test_an_op_without_a_batching_rule_is_named():
    from chainrule.autodiff.primitive import REGISTRY, Primitive

    prim = Primitive("no_batch_rule_test_only", np.negative)
    try:
        with pytest.raises(NotImplementedError, match="vmap: no_batch_rule_test_only has no batching rule"):
            cr.vmap(lambda x: prim(x))(np.ones(3))
    finally:
        del REGISTRY["no_batch_rule_test_only"]


def test_lstsq_under_vmap_equals_the_loop_and_refuses_a_rank_deficient_example():
    """lstsq checks full rank with Python control flow: under vmap it checks every example of the batch."""
    a = np.random.default_rng(0).normal(size=(2, 3, 2))
    b = np.array([1.0, -2.0, 0.5])
    solve = lambda m: cr.linalg.lstsq(m, b)[0]  # noqa: E731
    np.testing.assert_allclose(cr.vmap(solve)(a), np.stack([np.linalg.lstsq(m, b)[0] for m in a]))
    loss = lambda m: cr.sum(solve(m) ** 2)  # noqa: E731
    np.testing.assert_allclose(cr.vmap(cr.grad(loss))(a), np.stack([cr.grad(loss)(m) for m in a]))
    a[1, :, 1] = a[1, :, 0]
    with pytest.raises(np.linalg.LinAlgError, match="lstsq: the 3x2 matrix is rank-deficient"):
        cr.vmap(solve)(a)


def test_an_integer_cast_and_a_comparison_with_a_tensor_batch_inside_vmap():
    # found by the distributions work: astype to an integer dtype recursed without end on a batched value, and a
    # comparison of a batched value with a Tensor tried to read the batch as one array
    np.testing.assert_array_equal(cr.vmap(lambda x: x.astype(np.int64))(np.arange(3)), [0, 1, 2])
    assert cr.vmap(lambda x: (x * 1.5).astype(np.int32))(np.arange(3.0)).dtype == np.int32
    np.testing.assert_array_equal(cr.vmap(cr.vmap(lambda x: x.astype(bool)))(np.eye(2)), np.eye(2, dtype=bool))
    t = cr.tensor([0.5, 1.5, 2.5])
    x = np.array([[0.5, 0.0, 2.5], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(cr.vmap(lambda v: v <= t)(x), x <= t.numpy())
    np.testing.assert_array_equal(cr.vmap(lambda v: (v == t).sum())(x), [2, 0])
    np.testing.assert_allclose(cr.vmap(lambda v: cr.where(v <= t, v, t))(x), np.where(x <= t.numpy(), x, t.numpy()))
