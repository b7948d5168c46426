"""jit and jit_step freeze nothing that must change between calls (issue 23, item 3): random ops draw afresh at
each replay, from the generator (the same seed gives eager's values); a module's mode and settings, closed-over
values and rebound globals are guarded (a change traces the function again); a deep copy of a Dropout draws its
own masks."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import chainrule as cr
from chainrule import jit_step, nn, optim
from chainrule.nn import functional as F

X = np.array([0.5, -1.0, 2.0])

RANDOM_OPS = {
    "rand": lambda: cr.rand(3, dtype=np.float64),
    "randn": lambda: cr.randn(3, dtype=np.float64),
    "randint": lambda: cr.randint(0, 1000, (3,)).astype(np.float64),
    "rand_like": lambda: cr.rand_like(np.zeros(3)),
    "randn_like": lambda: cr.randn_like(np.zeros(3)),
    "randn(rng=)": lambda: cr.randn(3, dtype=np.float64, rng=GEN[0]),
    "dropout": lambda: F.dropout(cr.Tensor(np.ones(3)), 0.5, True, rng=GEN[0]),
    "dropout(seed)": lambda: F.dropout(cr.Tensor(np.ones(50)), 0.5, True, rng=7)[:3],  # a seed: one mask, as eager
}
GEN = [np.random.default_rng(0)]


def _runs(f, n=4):
    nn.manual_seed(0)
    GEN[0] = np.random.default_rng(0)
    w = cr.Tensor(X, requires_grad=True)
    out = []
    for _ in range(n):
        w.grad = None
        y = f(w)
        y.backward()
        out.append((float(y), w.grad.data.copy()))
    return out


@pytest.mark.parametrize("name", list(RANDOM_OPS))
def test_random_ops_draw_afresh_at_each_replay_as_eager(name):
    draw = RANDOM_OPS[name]

    def f(w):
        return (w * draw()).sum()

    eager, replayed = _runs(f), _runs(cr.jit(f))
    assert [v for v, _ in eager] == [v for v, _ in replayed]  # same seed, same values: eager's, bit for bit
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(eager, replayed, strict=True))
    if name != "dropout(seed)":
        assert len({v for v, _ in eager}) > 1  # the draws do change from call to call


def test_scaled_dot_product_attention_dropout_draws_afresh():
    q = np.random.default_rng(1).standard_normal((1, 2, 4, 3))

    def f(w):
        return F.scaled_dot_product_attention(w * q, q, q, dropout_p=0.5, rng=GEN[0]).sum()

    eager, replayed = _runs(f), _runs(cr.jit(f))
    assert [v for v, _ in eager] == [v for v, _ in replayed] and len({v for v, _ in eager}) > 1
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(eager, replayed, strict=True))


def _dropout_model():
    return nn.Sequential(nn.Linear(4, 16, dtype=np.float64, rng=0), nn.ReLU(), nn.Dropout(0.5, rng=3),
                         nn.Linear(16, 1, dtype=np.float64, rng=1))


def test_jit_step_with_dropout_draws_a_new_mask_each_step_as_eager():
    data = np.random.default_rng(2).standard_normal((8, 4))
    target = np.zeros((8, 1))
    eager_model, jit_model = _dropout_model(), _dropout_model()
    eager_opt = optim.SGD(eager_model.parameters(), lr=0.1)
    step = jit_step(lambda x, y: F.mse_loss(jit_model(x), y), optim.SGD(jit_model.parameters(), lr=0.1))
    eager, jitted = [], []
    for _ in range(5):
        eager_opt.zero_grad()
        loss = F.mse_loss(eager_model(data), target)
        loss.backward()
        eager_opt.step()
        eager.append(float(loss))
        jitted.append(float(step(data, target)))
    assert jitted == eager
    for a, b in zip(eager_model.parameters(), jit_model.parameters(), strict=True):
        assert np.array_equal(a.data, b.data)
    assert step.loss.traces == 1  # replayed, not traced again


def test_a_function_traced_in_train_mode_drops_no_entries_after_eval():
    model = _dropout_model()
    x = np.ones((2, 4))
    f = cr.jit(lambda x: model(x).sum())
    f(x), f(x)
    model.eval()
    with cr.no_grad():
        expected = float(model(x).sum())
    assert float(f(x)) == expected == float(f(x))
    model.train()
    assert float(f(x)) != expected  # dropout again (traced again in train mode)


def test_jit_step_traces_again_after_eval_and_train():
    model = _dropout_model()
    step = jit_step(lambda x: model(x).sum(), optim.SGD(model.parameters(), lr=0.0))
    x = np.ones((2, 4))
    step(x), step(x)
    model.eval()
    with cr.no_grad():
        expected = float(model(x).sum())
    assert float(step(x)) == expected
    assert step.loss.traces == 2


def test_a_closed_over_float_is_guarded():
    scale = 2.0
    f = cr.jit(lambda x: (x * scale).sum())
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    assert float(f(x)) == 6.0 and float(f(x)) == 6.0
    scale = 3.0
    assert float(f(x)) == 9.0
    assert float(f(x)) == 9.0 and f.traces == 2


def test_a_module_setting_is_guarded():
    drop = nn.Dropout(0.5, rng=0)
    f = cr.jit(lambda x: drop(x).sum())
    x = cr.Tensor(np.ones(50), requires_grad=True)
    f(x), f(x)
    drop.p = 0.0
    assert float(f(x)) == 50.0


W = cr.Tensor([1.0, 1.0])


def _uses_global(x):
    return (x * W).sum()


def test_a_rebound_global_tensor_is_guarded():
    global W
    f = cr.jit(_uses_global)
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    assert float(f(x)) == 3.0 and float(f(x)) == 3.0
    old = W
    try:
        W = cr.Tensor([10.0, 10.0])
        assert float(f(x)) == 30.0
    finally:
        W = old


def _helper(x):
    return x * W


def test_a_global_read_by_a_called_function_is_guarded():
    global W
    f = cr.jit(lambda x: _helper(x).sum())
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    f(x), f(x)
    old = W
    try:
        W = cr.Tensor([10.0, 10.0])
        assert float(f(x)) == 30.0
    finally:
        W = old


def test_a_deep_copied_dropout_draws_its_own_masks():
    drop = nn.Dropout(0.5, rng=0)
    twin = copy.deepcopy(drop)
    assert not np.array_equal(drop(np.ones(100)), twin(np.ones(100)))
    # jitted too: the copy's replay draws from the copy's generator
    a = cr.jit(lambda x: drop(x).sum())
    b = cr.jit(lambda x: twin(x).sum())
    x = cr.Tensor(np.ones(100), requires_grad=True)
    assert [float(a(x)) for _ in range(3)] != [float(b(x)) for _ in range(3)]
    # reproducible: the same seed and the same copies give the same masks
    again = copy.deepcopy(nn.Dropout(0.5, rng=0))
    fresh = copy.deepcopy(nn.Dropout(0.5, rng=0))
    assert np.array_equal(again(np.ones(100)), fresh(np.ones(100)))


def test_a_deep_copied_model_keeps_one_generator_shared_by_its_dropouts():
    mlp = nn.MLP(4, [8, 8, 1], activation="relu", dropout=0.5, rng=0, dtype=np.float64)
    drops = [m for m in mlp.modules() if isinstance(m, nn.Dropout)]
    twin = copy.deepcopy(mlp)
    twins = [m for m in twin.modules() if isinstance(m, nn.Dropout)]
    assert len(drops) == 2 and drops[0].rng is drops[1].rng
    assert twins[0].rng is twins[1].rng and twins[0].rng is not drops[0].rng


def test_a_value_that_changes_on_every_call_warns_once():
    x = cr.Tensor([1.0, 2.0], requires_grad=True)
    scale = 0.0
    f = cr.jit(lambda x: (x * scale).sum())
    with pytest.warns(cr.PerformanceWarning, match="traced 9 times: the variable 'scale'"):
        for k in range(12):
            scale = float(k)
            assert float(f(x)) == 3.0 * k


@pytest.mark.parametrize("name,fn", [
    ("rrelu", lambda x: cr.nn.functional.rrelu(x, training=True)),
    ("gumbel_softmax", lambda x: cr.nn.functional.gumbel_softmax(x, tau=0.5)),
    ("alpha_dropout", lambda x: cr.nn.functional.alpha_dropout(x, 0.5, training=True)),
    ("feature_alpha_dropout", lambda x: cr.nn.functional.feature_alpha_dropout(x, 0.5, training=True)),
])
def test_a_replay_draws_the_new_functions_random_values_afresh(name, fn):
    # (their draws were NumPy constants in the trace: frozen, or a JitError for a value read)
    cr.manual_seed(0)
    x = cr.Tensor(np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4), requires_grad=True)
    f = cr.jit(lambda x: (fn(x) * np.arange(24.0).reshape(2, 3, 4)).sum())
    outs = [float(f(x)) for _ in range(4)]
    assert len(set(outs[1:])) == 3, (name, outs)
