"""chainrule.jit_step: a replayed training step gives bit-for-bit the eager step (loss, parameters, optimiser
state), and raises JitError (naming what differs) when a call does not match its trace. Also the ops a jit
replay writes out as NumPy calls (linear, relu, cross-entropy: ``Primitive.inline``) against eager."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import JitError, jit_step, nn, optim
from chainrule.nn import functional as F


def make_mlp(dtype, sizes=(6, 8, 3), seed=0):
    return nn.MLP(sizes[0], list(sizes[1:]), activation="relu", dtype=dtype, rng=seed)


def batch(dtype, n=5, nin=6, classes=3, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, nin)).astype(dtype), rng.integers(0, classes, size=n)


def eager_steps(model, opt, loss_fn, data):
    losses = []
    for args in data:
        opt.zero_grad()
        loss = loss_fn(*args)
        loss.backward()
        opt.step()
        losses.append(loss.data.copy())
    return losses


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def assert_same_state(opt_a, opt_b):
    sa, sb = opt_a.state_dict()["state"], opt_b.state_dict()["state"]
    assert sa.keys() == sb.keys()
    for i in sa:
        assert sa[i].keys() == sb[i].keys()
        for key in sa[i]:
            assert same(sa[i][key], sb[i][key]), (i, key)


OPTIMISERS = {
    "sgd": lambda ps: optim.SGD(ps, lr=0.1),
    "sgd-momentum-nesterov-wd": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "sgd-maximize-dampening": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.5, dampening=0.1, maximize=True),
    "adam": lambda ps: optim.Adam(ps, lr=0.01),
    "adamw-amsgrad": lambda ps: optim.AdamW(ps, lr=0.01, amsgrad=True),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPTIMISERS))
def test_replayed_step_is_bitwise_the_eager_step(name, dtype):
    data = [batch(dtype, seed=s) for s in range(4)]
    models, opts, losses = [], [], []
    for replayed in (False, True):
        model = make_mlp(dtype)
        opt = OPTIMISERS[name](model.parameters())

        def loss_fn(x, y, model=model):
            return F.cross_entropy(model(x), y)

        if replayed:
            step = jit_step(loss_fn, opt)
            losses.append([step(*args).data.copy() for args in data])
        else:
            losses.append(eager_steps(model, opt, loss_fn, data))
        models.append(model)
        opts.append(opt)
    assert all(same(a, b) for a, b in zip(*losses))
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        assert same(p.data, q.data)
    assert_same_state(*opts)
    assert all(p.grad is None for p in models[1].parameters())  # a replayed step leaves no .grad behind


def test_replayed_step_of_a_regression_with_a_frozen_and_an_unused_parameter():
    rng = np.random.default_rng(3)
    data = [(rng.normal(size=(7, 4)), rng.normal(size=(7, 2))) for _ in range(3)]
    results = []
    for replayed in (False, True):
        lin = nn.Linear(4, 2, dtype=np.float64, rng=0)
        scale = cr.Tensor(np.full(2, 0.5), requires_grad=True)
        unused = cr.Tensor(np.ones(3), requires_grad=True)
        frozen = cr.Tensor(np.array([0.1, -0.2]))  # read every call, no gradient

        def loss_fn(x, y, lin=lin, scale=scale, frozen=frozen):
            return (((cr.tanh(lin(x)) * scale + frozen) - y) ** 2).mean()

        opt = optim.Adam([*lin.parameters(), scale, unused], lr=0.05)
        if replayed:
            step = jit_step(loss_fn, opt)
            losses = [step(x, y).data.copy() for x, y in data]
        else:
            losses = eager_steps(lin, opt, loss_fn, data)
        results.append((losses, [p.data.copy() for p in (*lin.parameters(), scale, unused)]))
    (la, pa), (lb, pb) = results
    assert all(same(a, b) for a, b in zip(la, lb)) and all(same(a, b) for a, b in zip(pa, pb))
    assert same(pb[-1], np.ones(3))  # never reached by the loss: never moved


def test_a_returned_loss_is_not_overwritten_by_later_steps():
    model = make_mlp(np.float64)
    step = jit_step(lambda x, y: F.cross_entropy(model(x), y), optim.SGD(model.parameters(), lr=0.5))
    x, y = batch(np.float64)
    losses = [step(x, y) for _ in range(4)]
    kept = [float(loss.data) for loss in losses]
    step(x, y)
    assert [float(loss.data) for loss in losses] == kept and kept[-1] < kept[0]
    assert not losses[-1].requires_grad


def test_a_call_that_differs_from_the_trace_is_traced_again_or_raises():
    model = make_mlp(np.float32)
    step = jit_step(lambda x, y: F.cross_entropy(model(x), y), optim.SGD(model.parameters(), lr=0.1))
    x, y = batch(np.float32)
    step(x, y)
    step(x, y)
    assert np.isfinite(float(step(x[:4], y[:4])))  # another shape: a step of its own (it raised)
    assert len(step._by_arguments) == 1
    first = next(iter(model.parameters()))
    first.data = first.data.astype(np.float64)
    with pytest.raises(JitError, match="a tensor the function reads from outside changed"):
        step(x, y)


def test_value_dependent_control_flow_takes_an_eager_step_on_replay():
    """A branch on a value that answers otherwise: that step is traced again (an eager step: the right update)."""

    def steps(make_step):
        w = cr.Tensor([1.0, -1.0], requires_grad=True)

        def loss_fn(x):
            h = (w * x).sum()
            return h * h if float(h) > 0 else -h  # the branch reads a value

        step = make_step(loss_fn, optim.SGD([w], lr=0.01))
        losses = [float(step(np.array(x))) for x in ([2.0, 0.5], [0.5, 2.0], [2.0, 0.5], [0.5, 2.0])]
        return losses, w.tolist()

    def eager(loss_fn, opt):
        def step(x):
            opt.zero_grad()
            loss = loss_fn(x)
            loss.backward()
            opt.step()
            return loss

        return step

    assert steps(jit_step) == steps(eager)


def test_gradients_only_into_the_optimisers_parameters():
    w = cr.Tensor([1.0, 2.0], requires_grad=True)
    other = cr.Tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(JitError, match="an argument requires grad"):
        jit_step(lambda x: (w * x).sum(), optim.SGD([w], lr=0.1))(cr.Tensor([1.0, 1.0], requires_grad=True))
    step = jit_step(lambda x: (w * other * x).sum(), optim.SGD([w], lr=0.1))
    for _ in range(2):  # refused before any update, and again on the next call (never a replay without a plan)
        with pytest.raises(JitError, match=r"gradient to a tensor of shape \(2,\) that the optimiser does not hold"):
            step(np.ones(2))
        assert same(w.data, np.array([1.0, 2.0])) and w.grad is None
    with pytest.raises(JitError, match="must return one Tensor that requires grad"):
        jit_step(lambda x: (cr.Tensor(np.ones(2)) * x).sum(), optim.SGD([w], lr=0.1))(np.ones(2))
    with pytest.raises(TypeError, match="expected a chainrule optimiser"):
        jit_step(lambda x: (w * x).sum(), [w])

    class Custom(optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    with pytest.raises(JitError, match="Custom overrides step"):
        jit_step(lambda x: (w * x).sum(), Custom([w], lr=0.1))


def test_hooks_on_parameters_run_as_in_eager_and_a_new_group_is_updated():
    results = []
    for replayed in (False, True):
        w = cr.Tensor([1.0, -2.0], requires_grad=True)
        b = cr.Tensor([0.5], requires_grad=True)
        extra = cr.Tensor([1.0], requires_grad=True)
        seen = []
        w.register_hook(lambda g, seen=seen: (seen.append(g.data.copy()), g * 2)[1])
        opt = optim.SGD([w, b], lr=0.1)

        def loss_fn(x, w=w, b=b):
            return ((w * x).sum() + b.sum()) ** 2

        x = np.array([0.5, 0.25])
        run = jit_step(loss_fn, opt) if replayed else None
        for k in range(4):
            if k == 2:
                opt.add_param_group({"params": [extra], "lr": 0.01})  # the replay's plan is made again
            if replayed:
                run(x)
            else:
                eager_steps(None, opt, loss_fn, [(x,)])
        results.append((w.data.copy(), b.data.copy(), seen))
    (wa, ba, sa), (wb, bb, sb) = results
    assert same(wa, wb) and same(ba, bb) and len(sa) == len(sb) == 4
    assert all(same(a, b) for a, b in zip(sa, sb))
    assert not same(bb, np.array([0.5]))


# -- the ops written out as NumPy calls in a replay ----------------------------------------------
def replay_grads(fn, arrays, params, retain=False):
    """Eager gradients, and a replay's (twice when ``retain``: the second backward must see the same values)."""
    out = []
    jitted = cr.jit(fn)
    for call in range(2):
        for p in params:
            p.grad = None
        loss = jitted(*arrays)
        loss.backward(retain_graph=retain)
        grads = [p.grad.data.copy() for p in params]
        if retain and call == 1:
            for p in params:
                p.grad = None
            loss.backward()
            assert all(same(p.grad.data, g) for p, g in zip(params, grads))
        out.append((loss.data.copy(), grads))
    return jitted, out


@pytest.mark.parametrize("n, nin, nout, bias", [(5, 6, 3, True), (5, 6, 3, False), (130, 40, 4, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inlined_linear_relu_cross_entropy_match_eager(n, nin, nout, bias, dtype):
    rng = np.random.default_rng(0)
    w1 = cr.Tensor(rng.normal(size=(7, nin)).astype(dtype), requires_grad=True)
    b1 = cr.Tensor(rng.normal(size=7).astype(dtype), requires_grad=True)
    w2 = cr.Tensor(rng.normal(size=(nout, 7)).astype(dtype), requires_grad=True)
    x, y = rng.normal(size=(n, nin)).astype(dtype), rng.integers(0, nout, size=n)
    params = [w1, b1, w2]

    def fn(x, y):
        h = F.relu(F.linear(x, w1, b1 if bias else None))
        return F.cross_entropy(F.linear(h, w2), y)

    if not bias:
        params = [w1, w2]
    jitted, ((l1, g1), (l2, g2)) = replay_grads(fn, (x, y), params, retain=True)
    assert same(l1, l2) and all(same(a, b) for a, b in zip(g1, g2))
    assert "np.maximum(" in jitted.source and "f0(" not in jitted.source  # written out, not called


@pytest.mark.parametrize("kw", [dict(ignore_index=1), dict(label_smoothing=0.1), dict(reduction="sum")])
def test_cross_entropy_variants_a_replay_calls_still_match_eager(kw):
    rng = np.random.default_rng(2)
    w = cr.Tensor(rng.normal(size=(6, 4)), requires_grad=True)
    x, y = rng.normal(size=(9, 4)), rng.integers(0, 6, size=9)
    jitted, ((l1, g1), (l2, g2)) = replay_grads(lambda x, y: F.cross_entropy(F.linear(x, w), y, **kw), (x, y), [w])
    assert same(l1, l2) and same(g1[0], g2[0])
    assert "f1(" in jitted.source  # this cross-entropy is called, not written out


def test_docstring_examples_run():
    import doctest

    import chainrule.autodiff.inlined
    import chainrule.core.traces
    import chainrule.replay.guards
    import chainrule.replay.step

    for module in (chainrule.replay.step, chainrule.autodiff.inlined, chainrule.replay.guards, chainrule.core.traces):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


@pytest.mark.parametrize("kw", [dict(), dict(ignore_index=-1)])
def test_a_replay_refuses_targets_outside_the_classes(kw):
    # the call that traced had every target in range, so its replay looks no row up for ignore_index: a class
    # outside [0, c) (or a row to ignore) must raise, never pick a neighbouring row's logit
    w = cr.Tensor(np.ones((4, 3)), requires_grad=True)
    loss_fn = cr.jit(lambda x, y: F.cross_entropy(F.linear(x, w), y, **kw))
    x = np.arange(6.0).reshape(2, 3)
    loss_fn(x, np.array([0, 3]))
    loss_fn(x, np.array([1, 2]))
    for bad in (4, -1, -100):
        with pytest.raises(IndexError, match=f"target holds class {bad}, outside \\[0, 4\\)"):
            loss_fn(x, np.array([1, bad]))


def test_a_replayed_relu_sends_zero_not_nan_where_an_infinite_gradient_meets_its_cut_off_part():
    # relu's inlined rule takes the product for a finite gradient and where() otherwise, as selected() does eagerly
    x0 = np.array([[-1.0, 0.0, 4.0], [2.0, -3.0, 1.0]])
    f = cr.jit(lambda x: np.sqrt(F.relu(x)).sum())
    with np.errstate(divide="ignore"):
        grads = []
        for _ in range(3):  # traced, then replayed twice
            x = cr.Tensor(x0, requires_grad=True)
            f(x).backward()
            grads.append(x.grad.data)
    expected = np.where(x0 > 0, 0.5 / np.sqrt(np.maximum(x0, 1e-300)), 0.0)
    for g in grads:
        np.testing.assert_array_equal(g, expected)


def test_a_last_smaller_batch_gets_a_step_of_its_own_bit_for_bit_the_eager_steps():
    # a DataLoader without drop_last: the last batch (4 of 100) raised "argument 0 is a Tensor of shape (4, 4)"
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(100, 4)).astype(np.float32), rng.integers(0, 2, size=100)
    batches = [(cr.tensor(X[i:i + 32]), cr.tensor(y[i:i + 32])) for i in range(0, 100, 32)] * 2

    def run(jitted):
        model = nn.Sequential(nn.Linear(4, 8, rng=0), nn.ReLU(), nn.Linear(8, 2, rng=1))
        opt = optim.Adam(model.parameters(), lr=1e-2)

        def loss_fn(xb, yb):
            return nn.functional.cross_entropy(model(xb), yb)

        step = cr.jit_step(loss_fn, opt)
        losses = []
        for xb, yb in batches:
            if jitted:
                losses.append(float(step(xb, yb)))
            else:
                opt.zero_grad()
                loss = loss_fn(xb, yb)
                loss.backward()
                opt.step()
                losses.append(float(loss))
        return losses, [p.detach().numpy() for p in model.parameters()], step

    (eager, eager_params, _), (replayed, params, step) = run(False), run(True)
    assert replayed == eager and all(np.array_equal(a, b) for a, b in zip(params, eager_params))
    assert len(step._by_arguments) == 1  # the 4-example batch's step, replayed in the second epoch
