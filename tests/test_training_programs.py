"""Whole training programs a PyTorch user writes, run in chainrule and in PyTorch from the same weights and data
(float64): losses, gradients and parameters must agree after several steps."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim

torch = pytest.importorskip("torch", reason="torch is not installed (the oracle for these programs)")
pytestmark = pytest.mark.oracle


def _net(lib, dt):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 6, dtype=dt)
            self.blocks = lib.nn.ModuleList([lib.nn.Linear(6, 6, dtype=dt) for _ in range(2)])
            self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(6, 3, dtype=dt)})
            self.seq = lib.nn.Sequential(lib.nn.Tanh(), lib.nn.Linear(3, 3, dtype=dt))
            self.ln = lib.nn.LayerNorm(6, dtype=dt)

        def forward(self, x):
            h = self.fc1(x).relu()
            for b in self.blocks:
                h = h + b(h).tanh()
            return self.seq(self.heads["a"](self.ln(h)))

    return Net()


def _pair():
    tm, cm = _net(torch, torch.float64), _net(cr, np.float64)
    cm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return tm, cm


def _groups(m, **kw):
    ps = list(m.parameters())
    return [{"params": ps[:4], **kw}, {"params": ps[4:]}]


CONFIGS = {
    "sgd_nesterov_groups": (lambda L, m: L.optim.SGD(_groups(m, lr=0.05), lr=0.1, momentum=0.9, nesterov=True,
                                                     weight_decay=0.01), None),
    "sgd_dampening_steplr": (lambda L, m: L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, dampening=0.3),
                             lambda L, o: L.optim.lr_scheduler.StepLR(o, 2, 0.5)),
    "adam_amsgrad_multistep": (lambda L, m: L.optim.Adam(_groups(m, betas=(0.8, 0.99)), lr=0.01, amsgrad=True,
                                                         weight_decay=0.1),
                               lambda L, o: L.optim.lr_scheduler.MultiStepLR(o, [1, 2], 0.3)),
    "adamw_cosine": (lambda L, m: L.optim.AdamW(_groups(m, weight_decay=0.5), lr=0.01, eps=1e-6),
                     lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=2, eta_min=0.001)),
    "rmsprop_centered_lambda": (lambda L, m: L.optim.RMSprop(m.parameters(), lr=0.01, alpha=0.9, momentum=0.5,
                                                             centered=True, weight_decay=0.1),
                                lambda L, o: L.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1))),
    "adagrad_exponential": (lambda L, m: L.optim.Adagrad(m.parameters(), lr=0.1, lr_decay=0.01,
                                                         initial_accumulator_value=0.1),
                            lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, 0.9)),
    "sgd_onecycle": (lambda L, m: L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9),
                     lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=4)),
    "adam_onecycle_linear": (lambda L, m: L.optim.Adam(m.parameters(), lr=0.1),
                             lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=[0.5], total_steps=5,
                                                                          anneal_strategy="linear", pct_start=0.4)),
}


def _train(lib, m, make_opt, make_sched, x, y, steps=3):
    opt = make_opt(lib, m)
    sched = make_sched(lib, opt) if make_sched else None
    as_t = torch.tensor if lib is torch else cr.Tensor
    clip = torch.nn.utils.clip_grad_norm_ if lib is torch else optim.clip_grad_norm_
    losses, lrs, moms = [], [], []
    for _ in range(steps):
        opt.zero_grad()
        for mb in range(2):  # gradient accumulation over two micro-batches
            part = slice(4 * mb, 4 * mb + 4)
            loss = lib.nn.functional.cross_entropy(m(as_t(x[part])), as_t(y[part]), label_smoothing=0.1) / 2
            loss.backward()
            losses.append(float(loss.item()))
        clip(m.parameters(), 0.5)
        opt.step()
        if sched:
            sched.step()
            lrs.append(sched.get_last_lr())
        moms.append([g.get("momentum", g.get("betas")) for g in opt.param_groups])
    params = [p.detach().numpy() if lib is torch else p.data for p in m.parameters()]
    return losses, params, lrs, moms


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_training_program_matches_pytorch(config):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 4)), rng.integers(0, 3, size=8)
    tm, cm = _pair()
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in cm.named_parameters()]
    lt, pt, rt, mt = _train(torch, tm, *CONFIGS[config], x, y)
    lc, pc, rc, mc = _train(cr, cm, *CONFIGS[config], x, y)
    np.testing.assert_allclose(lc, lt, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(rc, rt, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.array(mc, dtype=float), np.array(mt, dtype=float), rtol=1e-12)
    for a, b in zip(pc, pt):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_attention_language_model_matches_pytorch():
    def build(lib, dt):
        class LM(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = lib.nn.Embedding(7, 8, padding_idx=0, dtype=dt)
                self.ln = lib.nn.LayerNorm(8, dtype=dt)
                self.att = lib.nn.MultiheadAttention(8, 2, batch_first=True, dtype=dt)
                self.head = lib.nn.Linear(8, 7, dtype=dt)

            def forward(self, idx, pad, causal):
                h = self.ln(self.emb(idx))
                a, w = self.att(h, h, h, key_padding_mask=pad, attn_mask=causal)
                return self.head(h + a), w

        return LM()

    rng = np.random.default_rng(3)
    idx, tgt = rng.integers(0, 7, size=(2, 4)), rng.integers(0, 7, size=(2, 4))
    pad, causal = np.zeros((2, 4), bool), np.triu(np.ones((4, 4), bool), 1)
    pad[0, 3] = True
    tm, cm = build(torch, torch.float64), build(cr, np.float64)
    cm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    to, co = torch.optim.AdamW(tm.parameters(), lr=0.01), optim.AdamW(cm.parameters(), lr=0.01)
    for _ in range(2):
        to.zero_grad()
        co.zero_grad()
        lt, wt = tm(torch.tensor(idx), torch.tensor(pad), torch.tensor(causal))
        lc, wc = cm(cr.Tensor(idx), pad, causal)
        a = torch.nn.functional.cross_entropy(lt.reshape(-1, 7), torch.tensor(tgt).reshape(-1), ignore_index=0)
        b = nn.functional.cross_entropy(lc.reshape(-1, 7), cr.Tensor(tgt).reshape(-1), ignore_index=0)
        a.backward()
        b.backward()
        np.testing.assert_allclose(float(b.item()), a.item(), rtol=1e-12)
        np.testing.assert_allclose(wc.data, wt.detach().numpy(), atol=1e-14)
        for p, q in zip(tm.parameters(), cm.parameters()):
            np.testing.assert_allclose(q.grad.data, p.grad.numpy(), atol=1e-13)
        to.step()
        co.step()
    assert not cm.emb.weight.grad.data[0].any()


def _functions(base):
    class ScaledSquare(base):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.save_for_backward(x, y)
            ctx.k = k
            return x * x * k * y.exp()

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            e = y.exp()
            return 2 * x * g * ctx.k * e, None, g * x * x * ctx.k * e

    class SinCos(base):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, ga, gb):
            (x,) = ctx.saved_tensors
            return ga * x.cos() - gb * x.sin()

    return ScaledSquare, SinCos


def test_autograd_function_matches_pytorch_to_second_order():
    (tsq, tsc), (csq, csc) = _functions(torch.autograd.Function), _functions(cr.autograd.Function)
    rng = np.random.default_rng(0)
    xv, yv = rng.normal(size=4), rng.normal(size=4)
    xt, yt = torch.tensor(xv, requires_grad=True), torch.tensor(yv, requires_grad=True)
    xc, yc = cr.Tensor(xv, requires_grad=True), cr.Tensor(yv, requires_grad=True)
    gt = torch.autograd.grad(tsq.apply(xt, 3.0, yt).sin().sum(), [xt, yt], create_graph=True)
    gc = cr.autograd.grad(csq.apply(xc, 3.0, yc).sin().sum(), [xc, yc], create_graph=True)
    for a, b in zip(gc, gt):
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-13)
    (ht,), (hc,) = torch.autograd.grad(gt[0].sum(), xt), cr.autograd.grad(gc[0].sum(), xc)
    np.testing.assert_allclose(hc.data, ht.numpy(), rtol=1e-12)
    a, b = tsc.apply(xt)
    c, d = csc.apply(xc)
    (a * 2 + b * 3).sum().backward()
    (c * 2 + d * 3).sum().backward()
    np.testing.assert_allclose(xc.grad.data, xt.grad.numpy(), rtol=1e-13)


def test_autograd_function_wrong_gradients_raise():
    class Bad(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = cr.Tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="Bad: backward returned 1 gradient.*2 forward input"):
        Bad.apply(x, 2.0).sum().backward()

    class Extra(Bad):
        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    with pytest.raises(TypeError, match="Extra: backward returned a gradient at position 1"):
        Extra.apply(x, 2.0).sum().backward()


@pytest.mark.parametrize("kw", [dict(total_steps=7, three_phase=True), dict(epochs=2, steps_per_epoch=3,
                                                                              anneal_strategy="linear")])
@pytest.mark.parametrize("opt_name", ["AdamW", "RMSprop"])
def test_onecycle_rates_and_momenta_match_pytorch_and_resume(kw, opt_name):
    def sched(lib):
        w = torch.zeros(1, requires_grad=True) if lib is torch else cr.Tensor([0.0], requires_grad=True)
        opt = getattr(lib.optim, opt_name)([w], lr=0.1, **({"momentum": 0.9} if opt_name == "RMSprop" else {}))
        return opt, lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, pct_start=0.4, base_momentum=0.8, **kw)

    (to, ts), (co, cs) = sched(torch), sched(cr)
    n = kw.get("total_steps") or 6
    key = "betas" if opt_name == "AdamW" else "momentum"
    for step in range(n):
        np.testing.assert_allclose(cs.get_last_lr(), ts.get_last_lr(), rtol=1e-13)
        np.testing.assert_allclose(co.param_groups[0][key], to.param_groups[0][key], rtol=1e-13)
        if step == 2:  # resume from the saved schedule in a fresh optimiser
            co, cs2 = sched(cr)
            cs2.load_state_dict(cs.state_dict())
            cs = cs2
            np.testing.assert_allclose(cs.get_last_lr(), ts.get_last_lr(), rtol=1e-13)
        to.step()
        ts.step()
        co.step()
        cs.step()
    with pytest.raises(ValueError, match=f"OneCycleLR: stepped {n + 1} times, but total_steps is {n}"):
        cs.step()


def test_onecycle_needs_momentum_or_cycle_momentum_false():
    opt = optim.Adagrad([cr.Tensor([0.0], requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="Adagrad has neither; pass cycle_momentum=False"):
        optim.OneCycleLR(opt, max_lr=0.3, total_steps=4)
    assert "max_lr" not in opt.param_groups[0]  # a refused scheduler leaves the optimiser as it was
    assert optim.OneCycleLR(opt, max_lr=0.3, total_steps=4, cycle_momentum=False).get_last_lr() == [
        pytest.approx(0.3 / 25, rel=1e-14)]


def test_parameter_containers_and_non_persistent_buffers_match_pytorch():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                mk = (lambda *s: torch.ones(*s, dtype=torch.float64)) if lib is torch else (lambda *s: np.ones(s))
                self.ws = lib.nn.ParameterList([lib.nn.Parameter(mk(3, 3)) for _ in range(2)])
                self.d = lib.nn.ParameterDict({"scale": lib.nn.Parameter(mk(3))})
                self.plain = [lib.nn.Parameter(mk(1))]  # a plain list is not registered, in either library
                self.register_buffer("steps", mk(1))
                self.register_buffer("cache", mk(2), persistent=False)

            def forward(self, x):
                for w in self.ws:
                    x = (x @ w).tanh()
                return (x * self.d["scale"]).sum()

        return M()

    tm, cm = build(torch), build(cr)
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tm.named_parameters()] == ["ws.0", "ws.1", "d.scale"]
    assert list(cm.state_dict()) == list(tm.state_dict()) == ["steps", "ws.0", "ws.1", "d.scale"]
    assert [n for n, _ in cm.named_buffers()] == [n for n, _ in tm.named_buffers()] == ["steps", "cache"]
    rng = np.random.default_rng(0)
    cm.load_state_dict({k: rng.normal(size=v.shape) for k, v in tm.state_dict().items()})
    tm.load_state_dict({k: torch.tensor(v) for k, v in cm.state_dict().items()})
    x = rng.normal(size=(2, 3))
    tm(torch.tensor(x)).backward()
    cm(cr.Tensor(x)).backward()
    for p, q in zip(tm.parameters(), cm.parameters()):
        np.testing.assert_allclose(q.grad.data, p.grad.numpy(), rtol=1e-13)


def test_deprecated_module_backward_hook_raises_with_the_alternative():
    with pytest.raises(NotImplementedError, match="Linear.register_backward_hook: .*register_full_backward_hook"):
        nn.Linear(2, 2).register_backward_hook(lambda m, gi, go: None)


class _DictSet:
    def __init__(self, lib, x, y):
        self.lib, self.x, self.y = lib, x, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        as_t = torch.tensor if self.lib is torch else np.asarray
        return {"x": as_t(self.x[i]), "y": int(self.y[i]), "pair": (as_t(self.x[i, 0]), as_t(self.x[i, 1]))}


def test_dataloader_batches_match_pytorch_and_train_alike():
    from chainrule import data

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(7, 4)), rng.integers(0, 3, size=7)
    for kw in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)]:
        tl = torch.utils.data.DataLoader(_DictSet(torch, x, y), **kw)
        cl = data.DataLoader(_DictSet(cr, x, y), **kw)
        assert len(cl) == len(tl)
        got, want = list(cl), list(tl)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert sorted(g) == sorted(w)
            np.testing.assert_array_equal(g["x"], w["x"].numpy())
            np.testing.assert_array_equal(g["y"], np.asarray(w["y"]))
            for a, b in zip(g["pair"], w["pair"]):
                np.testing.assert_array_equal(a, b.numpy())
    # a training loop over TensorDataset batches ends where PyTorch's does
    tm, cm = _pair()
    tl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=3)
    cl = data.DataLoader(data.TensorDataset(x, cr.Tensor(y)), batch_size=3)
    to, co = torch.optim.Adam(tm.parameters(), lr=0.01), optim.Adam(cm.parameters(), lr=0.01)
    for _ in range(2):
        for (tx, ty), (cx, cy) in zip(tl, cl, strict=True):
            to.zero_grad()
            co.zero_grad()
            torch.nn.functional.cross_entropy(tm(tx), ty).backward()
            nn.functional.cross_entropy(cm(cx), cy).backward()
            to.step()
            co.step()
    for p, q in zip(tm.parameters(), cm.parameters()):
        np.testing.assert_allclose(q.data, p.detach().numpy(), rtol=1e-10, atol=1e-13)


def test_dataloader_shuffle_is_seeded_and_reshuffles_each_epoch():
    from chainrule import data

    ds = data.TensorDataset(np.arange(10), np.arange(10) * 2)
    a, b = data.DataLoader(ds, batch_size=4, shuffle=True, seed=3), data.DataLoader(ds, batch_size=4, shuffle=True,
                                                                                     seed=3)
    epochs_a = [np.concatenate([xb for xb, _ in a]) for _ in range(2)]
    epochs_b = [np.concatenate([xb for xb, _ in b]) for _ in range(2)]
    for ea, eb in zip(epochs_a, epochs_b):
        np.testing.assert_array_equal(ea, eb)
        assert sorted(ea.tolist()) == list(range(10))
    assert epochs_a[0].tolist() != epochs_a[1].tolist()
    assert all((yb == xb * 2).all() for xb, yb in a)
    with pytest.raises(TypeError, match="DataLoader: generator must be a numpy.random.Generator, got Generator"):
        data.DataLoader(ds, shuffle=True, generator=torch.Generator())


def test_a_rate_changed_behind_a_schedulers_back_is_built_on_as_pytorch_or_raises_instead_of_being_overwritten():
    # PyTorch's chainable schedulers build on the current rate: two schedulers compose, and a rate set by hand
    # sticks. chainrule's chainable ones do so too (they raised, and before that overwrote such a change silently);
    # the schedules PyTorch computes from the base rates (LambdaLR, OneCycleLR, ...) refuse instead.
    def pair(lib):
        w = torch.zeros(1, requires_grad=True) if lib is torch else cr.Tensor([0.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=1.0)
        return opt, lib.optim.lr_scheduler.ExponentialLR(opt, 0.9), lib.optim.lr_scheduler.StepLR(opt, 2, 0.5)

    (topt, t1, t2), (copt, c1, c2) = pair(torch), pair(cr)
    for _ in range(5):
        for opt, first, second in ((topt, t1, t2), (copt, c1, c2)):
            opt.step()
            first.step()
            second.step()
        assert copt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"], rel=1e-12)
    assert c1.chained and c2.chained  # each built on the other's rate
    assert topt.param_groups[0]["lr"] == pytest.approx(0.9**5 * 0.5**2)
    for lib in (torch, cr):
        opt = lib.optim.SGD([cr.Tensor([0.0], requires_grad=True) if lib is cr else torch.zeros(1, requires_grad=True)],
                            lr=1.0)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step()
        sched.step()
        opt.param_groups[0]["lr"] = 10.0  # by hand: it sticks, and the schedule goes on from it
        opt.step()
        sched.step()
        assert sched.get_last_lr() == [5.0]
    opt = optim.SGD([cr.Tensor([0.0], requires_grad=True)], lr=1.0)
    sched = optim.lr_scheduler.LambdaLR(opt, lambda k: 0.5**k)
    sched.step()
    opt.param_groups[0]["lr"] = 10.0
    with pytest.raises(ValueError, match=r"LambdaLR.step: the learning rate of parameter group 0 is 10.0.*would "
                                         r"overwrite that change \(only StepLR, .* build on the current rate"):
        sched.step()
    opt.param_groups[0]["lr"] = sched.get_last_lr()[0]
    sched.base_lrs[0] = 10.0  # the supported way to change the rate under such a schedule
    sched.step()
    assert sched.get_last_lr() == [10.0 * 0.5**2]


@pytest.mark.parametrize("kw", [dict(patience=1, factor=0.5), dict(mode="max", threshold_mode="abs", threshold=0.1,
                                                                     patience=0, cooldown=2, min_lr=[0.2, 0.01])])
def test_reduce_lr_on_plateau_matches_pytorch_and_resumes(kw):
    metrics = [3.0, 2.0, 2.5, 2.4, 2.05, 2.6, 1.0, 1.5, 1.6, 1.7, 1.2, 0.9]

    def make(lib):
        ws = [torch.zeros(1, requires_grad=True) if lib is torch else cr.Tensor([0.0], requires_grad=True)
              for _ in range(2)]
        opt = lib.optim.SGD([{"params": ws[:1]}, {"params": ws[1:], "lr": 0.5}], lr=1.0)
        return opt, lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)

    (topt, ts), (copt, cs) = make(torch), make(cr)
    for i, m in enumerate(metrics):
        ts.step(m)
        cs.step(cr.Tensor(m) if i % 2 else m)
        np.testing.assert_allclose(cs.get_last_lr(), ts.get_last_lr(), rtol=1e-15)
        if i == 5:
            copt2, cs2 = make(cr)
            copt2.load_state_dict(copt.state_dict())
            cs2.load_state_dict(cs.state_dict())
            copt, cs = copt2, cs2
    assert [g["lr"] for g in copt.param_groups] == [g["lr"] for g in topt.param_groups]
