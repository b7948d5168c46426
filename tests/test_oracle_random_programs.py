"""Random programs, run by chainrule and by PyTorch side by side: values, gradients, second order.

Each program draws ops from a table and operands from a pool of live values (shapes (3, 4),
(4,), (3, 1) and scalars, so broadcasting is everywhere), reduces the pool to one number, and
compares the value, the gradient of every leaf, and Hessian-vector products: double backward
against PyTorch's, and forward over reverse against torch.func. About a quarter of the input
entries are exactly 0 (where rules that divide by the value, or are right at first order only,
go wrong; and where the kinks of abs, relu, clip and max sit, with PyTorch's conventions).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

F = torch.nn.functional

# name: (arity, chainrule fn, torch fn). Domains are made safe inside the op (no kinks hit,
# no log of negatives), identically on both sides.
UNARY = {
    "exp": (lambda x: cr.exp(x * 0.3), lambda x: torch.exp(x * 0.3)),
    "log": (lambda x: cr.log(x * x + 0.5), lambda x: torch.log(x * x + 0.5)),
    "log1p": (lambda x: cr.log1p(x * x), lambda x: torch.log1p(x * x)),
    "sqrt": (lambda x: cr.sqrt(x * x + 0.1), lambda x: torch.sqrt(x * x + 0.1)),
    "tanh": (cr.tanh, torch.tanh),
    "sigmoid": (cr.sigmoid, torch.sigmoid),
    "sin": (cr.sin, torch.sin),
    "cos": (cr.cos, torch.cos),
    "neg": (lambda x: -x, lambda x: -x),
    "square": (lambda x: x**2, lambda x: x**2),
    "cube": (lambda x: x**3.0, lambda x: x**3.0),
    "recip": (lambda x: 1.0 / (x * x + 1.0), lambda x: 1.0 / (x * x + 1.0)),
    "softmax": (lambda x: cr.softmax(x, axis=-1), lambda x: torch.softmax(x, -1)),
    "log_softmax": (lambda x: cr.log_softmax(x, axis=-1), lambda x: torch.log_softmax(x, -1)),
    "lse_keep": (lambda x: cr.logsumexp(x, axis=-1, keepdims=True), lambda x: torch.logsumexp(x, -1, keepdim=True)),
    "sum_keep": (lambda x: x.sum(axis=0, keepdims=True), lambda x: x.sum(0, keepdim=True)),
    "mean_keep": (lambda x: x.mean(axis=-1, keepdims=True), lambda x: x.mean(-1, keepdim=True)),
    "var": (lambda x: x.var(axis=-1, keepdims=True), lambda x: x.var(-1, keepdim=True, unbiased=False)),
    "flip": (lambda x: x[..., ::-1], lambda x: torch.flip(x, [-1])),
    "abs_shift": (lambda x: abs(x + 7.0), lambda x: torch.abs(x + 7.0)),
    "abs": (cr.abs, torch.abs),
    "relu": (cr.relu, torch.relu),
    "clip01": (lambda x: cr.clip(x, 0.0, 1.0), lambda x: torch.clamp(x, 0.0, 1.0)),
    "max_keep": (lambda x: x.max(axis=-1, keepdims=True), lambda x: torch.amax(x, -1, keepdim=True)),
    "min_keep": (lambda x: x.min(axis=0, keepdims=True), lambda x: torch.amin(x, 0, keepdim=True)),
    "prod_keep": (lambda x: np.prod(x, axis=-1, keepdims=True), lambda x: torch.prod(x, -1, keepdim=True)),
    "cumprod": (lambda x: np.cumprod(x, axis=-1), lambda x: torch.cumprod(x, -1)),
    "cumsum": (lambda x: np.cumsum(x, axis=0), lambda x: torch.cumsum(x, 0)),
}
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / (b * b + 1.0), lambda a, b: a / (b * b + 1.0)),
    # exponent shifted off 0: at an exponent of exactly 0 torch's pow drops the cross term d2/dx dy = 1/x
    # of its Hessian (its first derivative in x is masked to 0 there); chainrule's is right
    "pow": (lambda a, b: (a * a + 1.0) ** (b * 0.5 + 0.3), lambda a, b: (a * a + 1.0) ** (b * 0.5 + 0.3)),
    "maximum": (lambda a, b: cr.maximum(a, b + 0.01), lambda a, b: torch.maximum(a, b + 0.01)),
    "minimum": (lambda a, b: cr.minimum(a, b + 0.01), lambda a, b: torch.minimum(a, b + 0.01)),
    "where": (lambda a, b: cr.where(a.data > b.data, a, b * 2.0), lambda a, b: torch.where(a > b, a, b * 2.0)),
    "hypot": (lambda a, b: cr.hypot(a, b + 3.0), lambda a, b: torch.hypot(a, b + 3.0)),
}
SHAPES = [(3, 4), (4,), (3, 1), ()]


_NEEDS_AXIS = ("softmax", "log_softmax", "lse_keep", "sum_keep", "mean_keep", "var", "flip", "max_keep", "min_keep",
               "prod_keep", "cumprod", "cumsum")


def draw_program(seed: int):
    """Leaf values, a list of steps (name, operand indices) and output weights."""
    rng = np.random.default_rng(seed)
    leaves = [np.where(rng.random(s) < 0.25, 0.0, rng.normal(size=s)) for s in SHAPES]  # a quarter exact zeros
    ndims = [len(s) for s in SHAPES]
    steps = []
    for _ in range(8):
        if rng.random() < 0.5:
            name, i = rng.choice(list(UNARY)), int(rng.integers(len(ndims)))
            if ndims[i] == 0 and name in _NEEDS_AXIS:
                continue
            steps.append((name, (i,)))
            ndims.append(ndims[i])
        else:
            name, (i, j) = rng.choice(list(BINARY)), rng.integers(len(ndims), size=2)
            steps.append((name, (int(i), int(j))))
            ndims.append(max(ndims[i], ndims[j]))
    return leaves, steps, rng


def replay(steps, pool, side: int):
    """Run the steps on ``pool`` with chainrule (side 0) or torch (side 1) ops."""
    pool = list(pool)
    for name, idx in steps:
        fn = (UNARY if len(idx) == 1 else BINARY)[name][side]
        pool.append(fn(*[pool[i] for i in idx]))
    return pool


def run_program(seed: int):
    leaves, steps, rng = draw_program(seed)
    cr_leaves = [cr.Tensor(v, requires_grad=True) for v in leaves]
    t_leaves = [torch.tensor(v, requires_grad=True) for v in leaves]
    cr_pool, t_pool = replay(steps, cr_leaves, 0), replay(steps, t_leaves, 1)
    w = [rng.normal(size=np.shape(t.detach().numpy())) for t in t_pool]
    cr_out = sum((t * wi).sum() for t, wi in zip(cr_pool, w))
    t_out = sum((t * torch.tensor(wi)).sum() for t, wi in zip(t_pool, w))
    ops = [name for name, _ in steps]
    return ops, cr_leaves, t_leaves, cr_out, t_out


@pytest.mark.parametrize("seed", range(40))
def test_random_program_matches_torch(seed):
    ops, cr_leaves, t_leaves, cr_out, t_out = run_program(seed)
    np.testing.assert_allclose(cr_out.item(), t_out.item(), rtol=1e-10, err_msg=str(ops))
    cr_grads = cr.autograd.grad(cr_out, cr_leaves, create_graph=True)
    t_grads = torch.autograd.grad(t_out, t_leaves, create_graph=True)
    for cg, tg in zip(cr_grads, t_grads):
        np.testing.assert_allclose(cg.data, tg.detach().numpy(force=True), rtol=1e-9, atol=1e-12, err_msg=str(ops))
    # second order: the gradient of <grads, v> (a Hessian-vector product), by double backward
    rng = np.random.default_rng(seed + 1000)
    vs = [rng.normal(size=np.shape(t.detach().numpy())) for t in t_leaves]
    cr_hv = cr.autograd.grad(sum((g * v).sum() for g, v in zip(cr_grads, vs)), cr_leaves)
    t_dot = sum((g * torch.tensor(v)).sum() for g, v in zip(t_grads, vs))
    t_hv = torch.autograd.grad(t_dot, t_leaves, allow_unused=True) if t_dot.requires_grad else [None] * len(vs)
    for ch, th in zip(cr_hv, t_hv):
        expected = np.zeros_like(ch.data) if th is None else th.numpy(force=True)
        np.testing.assert_allclose(ch.data, expected, rtol=1e-8, atol=1e-10, err_msg=str(ops))


@pytest.mark.parametrize("seed", range(20))
def test_random_program_forward_mode_matches_torch_func_jvp(seed):
    leaves, steps, rng = draw_program(seed)
    w = None

    def program(side):
        def f(*xs):
            pool = replay(steps, xs, side)
            nonlocal w
            if w is None:
                w = [rng.normal(size=tuple(np.shape(p.data if side == 0 else p.detach()))) for p in pool]
            weights = w if side == 0 else [torch.tensor(x) for x in w]
            return sum((p * wi).sum() for p, wi in zip(pool, weights))

        return f

    tangents = [np.random.default_rng(seed + 7).normal(size=np.shape(v)) for v in leaves]
    value, tangent = cr.jvp(program(0), tuple(leaves), tuple(tangents))
    t_value, t_tangent = torch.func.jvp(
        program(1), tuple(torch.tensor(v) for v in leaves), tuple(torch.tensor(t) for t in tangents)
    )
    np.testing.assert_allclose(value, t_value.item(), rtol=1e-10)
    np.testing.assert_allclose(tangent, t_tangent.item(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_random_program_hvp_forward_over_reverse_matches_torch_func(seed):
    leaves, steps, rng = draw_program(seed)
    pool_shapes = [np.shape(p.detach()) for p in replay(steps, [torch.tensor(v) for v in leaves], 1)]
    w = [rng.normal(size=s) for s in pool_shapes]

    def program(side):
        def f(*xs):
            pool = replay(steps, xs, side)
            weights = w if side == 0 else [torch.tensor(x) for x in w]
            return sum((p * wi).sum() for p, wi in zip(pool, weights))

        return f

    vs = [np.random.default_rng(seed + 11).normal(size=np.shape(v)) for v in leaves]
    hv = cr.hvp(program(0), tuple(leaves), tuple(vs))
    nums = tuple(range(len(leaves)))
    _, t_hv = torch.func.jvp(torch.func.grad(program(1), argnums=nums), tuple(torch.tensor(v) for v in leaves),
                             tuple(torch.tensor(v) for v in vs))
    ops = [name for name, _ in steps]
    for ch, th in zip(hv, t_hv, strict=True):
        np.testing.assert_allclose(ch, th.numpy(force=True), rtol=1e-8, atol=1e-10, err_msg=str(ops))


def test_a_quarter_of_the_inputs_are_exact_zeros():
    zeros = sum(int(np.sum(v == 0.0)) for seed in range(40) for v in draw_program(seed)[0])
    total = 40 * sum(int(np.prod(s)) for s in SHAPES)
    assert 0.18 < zeros / total < 0.32
